//! What the convolution family shares: the params of a kernel sliding over a blob
//! (`0=num_output 1=kernel_w 11=kernel_h 2=dilation_w 12=dilation_h 3=stride_w 13=stride_h
//! 4=pad_left 15=pad_right 14=pad_top 16=pad_bottom 5=bias_term 6=weight_data_size 7=group
//! 9=activation_type 10=activation_params`; the 1-D forms read only the `_w` ones and the left
//! and right pads, the 3-D forms `21=kernel_d 22=dilation_d 23=stride_d 24=pad_front
//! 17=pad_behind` too), the channels its weights fit, and the specialization constants of
//! `convolution_head.comp`.

use crate::error::{Error, InputError, Result};
use crate::gpu::specialize::SpecValue;
use crate::layer::epilogue::FusedActivation;
use crate::layer::params::ParamDict;
use crate::layer::shared::view::planar;
use crate::tensor::BlobShape;
use crate::tensor::Mat;

/// How many axes a window slides along: the 1-D, 2-D and 3-D forms of a type
/// (Convolution1D, Convolution, Convolution3D).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Rank {
    /// Along the width of a 2-D blob (its rows the channels).
    One,
    /// Along the width and height of a 3-D blob.
    #[default]
    Two,
    /// Along the width, height and depth of a 4-D blob.
    Three,
}

/// A 3-D window's depth axis (kernel 1, no padding for the others).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DepthAxis {
    pub kernel: usize,
    pub dilation: usize,
    pub stride: usize,
    /// Front and behind, as the params give them (-233 / -234: "same").
    pub pad: [i32; 2],
}

impl DepthAxis {
    /// `convolution_head.comp`'s constants of it: the kernel, dilation and stride (30–32).
    pub fn spec(&self) -> [(u32, SpecValue); 3] {
        let i = |v: usize| SpecValue::I32(v as i32);
        [
            (30, i(self.kernel)),
            (31, i(self.dilation)),
            (32, i(self.stride)),
        ]
    }
}

impl Default for DepthAxis {
    fn default() -> Self {
        DepthAxis {
            kernel: 1,
            dilation: 1,
            stride: 1,
            pad: [0, 0],
        }
    }
}

/// A kernel window's params, as Convolution and Deconvolution (and their depthwise, 1-D and 3-D
/// forms) read them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Window {
    /// The axes it slides along.
    pub rank: Rank,
    /// The depthwise forms: `7=group` is read (the plain ones have one group).
    pub grouped: bool,
    pub num_output: usize,
    /// `[w, h]`; a 1-D window's height is 1.
    pub kernel: [usize; 2],
    pub dilation: [usize; 2],
    pub stride: [usize; 2],
    /// left, right, top, bottom as the params give them (-233 / -234: "same").
    pub pad: [i32; 4],
    pub bias_term: bool,
    pub weight_data_size: usize,
    pub group: usize,
    pub activation: i32,
    pub activation_params: Vec<f32>,
    /// Dynamic weights (Convolution's `19=1`, Deconvolution's `28=1`): the weights (and the
    /// bias) come as the second (and third) input, and give the kernel and the outputs.
    pub dynamic: bool,
    /// The depth axis of a 3-D window.
    pub depth: DepthAxis,
}

/// Which pack4 shader a convolution's blocks of 4 channels go through: the `kind`
/// specialization constant of `convolution_head.comp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pack4Kind {
    /// None fits: pack1 throughout.
    None = 0,
    /// Dense or grouped in whole blocks of 4 (dense ones through the implicit GEMM), or one
    /// group whose input the GEMM pads to blocks of 4.
    Blocks = 1,
    /// Depthwise, outputs in blocks of 4.
    Depthwise = 2,
    /// Dense from blocks of 4 input channels to outputs that are not (a pack1 output: an
    /// upscaler's RGB).
    ToPack1 = 3,
}

/// The depthwise form of a windowed layer type: the one that reads `7=group`.
pub(crate) fn depthwise<L: Default + AsMut<Window>>() -> L {
    of_rank(Rank::Two, true)
}

/// A windowed layer type of `rank`, its depthwise form where `grouped`.
pub(crate) fn of_rank<L: Default + AsMut<Window>>(rank: Rank, grouped: bool) -> L {
    let mut layer = L::default();
    layer.as_mut().rank = rank;
    layer.as_mut().grouped = grouped;
    layer
}

impl Window {
    /// Kernel, dilation and stride (`[w, h]` each).
    pub fn taps(&self) -> ([usize; 2], [usize; 2], [usize; 2]) {
        (self.kernel, self.dilation, self.stride)
    }

    /// Reads the shared params (`dynamic_id`: the type's dynamic-weight flag) and checks that
    /// the weight count fits the outputs, kernel and groups.
    pub fn load(&mut self, pd: &ParamDict, dynamic_id: u32) -> Result<()> {
        self.dynamic = pd.int_in(dynamic_id, 0, 0..=1, "0, or 1: weights as inputs")? == 1;
        // dynamic weights leave the outputs and the kernel to the weight input
        let dynamic = self.dynamic;
        let positive = |id: u32, v: i32| {
            if v > 0 || dynamic && v == 0 && id != 7 {
                Ok(v as usize)
            } else {
                Err(Error::BadParam {
                    id,
                    value: v.to_string(),
                    allowed: "a value of at least 0",
                })
            }
        };
        self.num_output = positive(0, pd.int(0, 0))?;
        let kw = pd.int(1, 0);
        let (dw, sw, pl) = (pd.int(2, 1), pd.int(3, 1), pd.int(4, 0));
        if self.rank == Rank::One {
            self.kernel = [positive(1, kw)?, 1];
            self.dilation = [positive(2, dw)?, 1];
            self.stride = [positive(3, sw)?, 1];
            self.pad = [pl, pd.int(15, pl), 0, 0];
        } else {
            self.kernel = [positive(1, kw)?, positive(11, pd.int(11, kw))?];
            self.dilation = [positive(2, dw)?, positive(12, pd.int(12, dw))?];
            self.stride = [positive(3, sw)?, positive(13, pd.int(13, sw))?];
            let pt = pd.int(14, pl);
            self.pad = [pl, pd.int(15, pl), pt, pd.int(16, pt)];
        }
        if self.rank == Rank::Three {
            let front = pd.int(24, pl);
            self.depth = DepthAxis {
                kernel: positive(21, pd.int(21, kw))?,
                dilation: positive(22, pd.int(22, dw))?,
                stride: positive(23, pd.int(23, sw))?,
                pad: [front, pd.int(17, front)],
            };
        }
        self.bias_term = pd.int(5, 0) != 0;
        self.weight_data_size = pd.int(6, 0).max(0) as usize;
        self.group = if self.grouped {
            positive(7, pd.int(7, 1))?
        } else {
            1
        };
        // ncnn makes no activation of another type (7, swish, is the net's own fusion)
        self.activation = match pd.int(9, 0) {
            a @ 0..=6 => a,
            _ => 0,
        };
        self.activation_params = pd.floats(10);
        // a kernel or output count whose products overflow fits no weights either
        let per_output = self.kernel[0]
            .checked_mul(self.kernel[1])
            .and_then(|k| k.checked_mul(self.depth.kernel));
        let per_input = per_output.and_then(|k| k.checked_mul(self.num_output));
        if dynamic {
            return match per_output {
                Some(_) => Ok(()),
                None => Err(Error::BadParam {
                    id: 1,
                    value: format!("{:?}", self.kernel),
                    allowed: "a kernel whose area is a number of values",
                }),
            };
        }
        if !self.num_output.is_multiple_of(self.group)
            || self.weight_data_size == 0
            || !per_input.is_some_and(|n| self.weight_data_size.is_multiple_of(n))
        {
            return Err(Error::BadParam {
                id: 6,
                value: self.weight_data_size.to_string(),
                allowed: "a weight_data_size that fits num_output x kernel x input channels per group",
            });
        }
        Ok(())
    }

    /// The window of one forward with dynamic weights: `kernel`, `num_output` and `len`
    /// weights from the weight input.
    pub fn with_weights(
        &self,
        kernel: [usize; 2],
        num_output: usize,
        len: usize,
    ) -> Result<Window> {
        let w = Window {
            kernel,
            num_output,
            weight_data_size: len,
            dynamic: false,
            ..self.clone()
        };
        let per_output = num_output * kernel[0] * kernel[1];
        if per_output == 0 || !len.is_multiple_of(per_output) || !num_output.is_multiple_of(w.group)
        {
            return Err(InputError::Values {
                what: "weights of the weight input (outputs x kernel x input channels)",
                got: len,
                expected: per_output,
            }
            .into());
        }
        Ok(w)
    }

    /// Kernel, dilation and stride along w, h and d (a 3-D window's).
    pub fn axes3(&self) -> [[usize; 3]; 3] {
        let d = self.depth;
        [
            [self.kernel[0], self.kernel[1], d.kernel],
            [self.dilation[0], self.dilation[1], d.dilation],
            [self.stride[0], self.stride[1], d.stride],
        ]
    }

    /// Checks a `c`-channel `dims`-D input of a 3-D window (4-D blobs) against the weights.
    pub fn check_volume(&self, dims: u8, c: usize) -> Result<()> {
        if dims != 4 {
            return Err(InputError::Dims {
                got: dims,
                takes: "4-D blobs",
            }
            .into());
        }
        self.check_input(3, c)
    }

    /// Kernel taps: its width × height × depth.
    pub fn taps_count(&self) -> usize {
        self.kernel[0] * self.kernel[1] * self.depth.kernel
    }

    /// Input channels per group, from the weight count.
    pub fn channels_per_group(&self) -> usize {
        self.weight_data_size / (self.num_output * self.taps_count()).max(1)
    }

    /// The input channels the weights fit.
    pub fn channels(&self) -> usize {
        self.channels_per_group() * self.group
    }

    /// The channels of a GPU input of `c` blocks of `elempack`: where the layer `pads` its
    /// input (vulkan_pad_to_pack4), the up to 3 zero channels past the weights' are not counted.
    pub(crate) fn unpadded_channels(&self, c: usize, elempack: usize, pads: bool) -> usize {
        let channels = c * elempack;
        let padded = elempack == 4 && pads && channels == self.channels().next_multiple_of(4);
        if padded { self.channels() } else { channels }
    }

    /// `gpu_accepts` of the convolution family: 3-D blobs of the window's channels whose
    /// output `geometry` can place.
    pub(crate) fn accepts<T>(
        &self,
        bottoms: &[BlobShape],
        geometry: impl Fn(usize, usize) -> Result<T>,
    ) -> bool {
        bottoms.iter().all(
            |&BlobShape {
                 dims,
                 shape: [w, h, _, c],
             }| { dims == 3 && c == self.channels() && geometry(w, h).is_ok() },
        )
    }

    /// Checks a `c`-channel `dims`-D input against the weights.
    pub fn check_input(&self, dims: u8, c: usize) -> Result<()> {
        planar(dims)?;
        if c != self.channels() {
            return Err(InputError::Values {
                what: "input channels",
                got: c,
                expected: self.channels(),
            }
            .into());
        }
        Ok(())
    }

    /// `convolution_head.comp`'s specialization constants (ids 0–11, and a 3-D window's depth
    /// axis, 30–32), with `kind` its pack4 shader's algorithm.
    pub fn spec(&self, kind: Pack4Kind) -> Vec<(u32, SpecValue)> {
        let p = |i: usize| self.activation_params.get(i).copied().unwrap_or(0.0);
        let i = |v: usize| SpecValue::I32(v as i32);
        let mut values = vec![
            (0, SpecValue::I32(i32::from(self.bias_term))),
            (1, SpecValue::I32(self.activation)),
            (2, SpecValue::F32(p(0))),
            (3, SpecValue::F32(p(1))),
            (4, i(self.kernel[0])),
            (5, i(self.kernel[1])),
            (6, i(self.dilation[0])),
            (7, i(self.dilation[1])),
            (8, i(self.stride[0])),
            (9, i(self.stride[1])),
            (10, i(self.group)),
            (11, SpecValue::I32(kind as i32)),
        ];
        // (only the shaders 3-D windows take read the depth axis: the others' optimized
        // modules have no such constants)
        if self.rank == Rank::Three {
            values.extend(self.depth.spec());
        }
        values
    }

    /// [`Window::spec`] with the activation `act` in place of the layer's own, where the net
    /// fused the activation layer after it.
    pub fn spec_with(
        &self,
        kind: Pack4Kind,
        act: Option<FusedActivation>,
    ) -> Vec<(u32, SpecValue)> {
        let mut values = self.spec(kind);
        if let Some(a) = act {
            values[1..4].copy_from_slice(&[
                (1, SpecValue::I32(a.kind)),
                (2, SpecValue::F32(a.params[0])),
                (3, SpecValue::F32(a.params[1])),
            ]);
        }
        values
    }

    /// `bias`, or zeros when the layer has none (the shaders always bind one).
    pub fn bias_or_zeros(&self, bias: &[f32]) -> Vec<f32> {
        if bias.is_empty() {
            vec![0.0; self.num_output]
        } else {
            bias.to_vec()
        }
    }

    /// [`Window::bias_or_zeros`] in whole blocks of 4 (zeros past the outputs): what the
    /// pack4-input shaders read, those with a pack1 output too.
    pub fn bias_blocks(&self, bias: &[f32]) -> Vec<f32> {
        let mut b = self.bias_or_zeros(bias);
        b.resize(b.len().next_multiple_of(4), 0.0);
        b
    }
}

/// The input, the weight input and the bias input of a dynamic-weight forward.
pub(crate) fn dynamic_inputs(
    bottoms: &[Mat],
    bias_term: bool,
) -> Result<(&Mat, &Mat, Option<&Mat>)> {
    match (bottoms, bias_term) {
        ([x, w], false) => Ok((x, w, None)),
        ([x, w, b], true) => Ok((x, w, Some(b))),
        _ => Err(crate::error::InputError::Count {
            got: bottoms.len(),
            expected: "the input, the weights, and the bias with bias_term",
        }
        .into()),
    }
}
