//! Padding: borders around w and h (and before/after channels, or depth for 4-D blobs) filled
//! with a constant (one per channel when the model stores them), the edge value, or a
//! reflection.

use rayon::prelude::*;

use crate::error::{Error, InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shape::gather::{Border, Gather, GatherMap};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::{numpy_shape, to_space};
use crate::layer::weights::Weights;
use crate::tensor::{BlobShape, GpuMat, Mat};

/// How border values are made (param 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Mode {
    #[default]
    Constant,
    Replicate,
    Reflect,
}

/// Padding: `0=top 1=bottom 2=left 3=right 4=type 5=value 6=per_channel_pad_data_size
/// 7=front 8=behind`.
#[derive(Default)]
pub struct Padding {
    top: usize,
    bottom: usize,
    left: usize,
    right: usize,
    front: usize,
    behind: usize,
    mode: Mode,
    value: f32,
    per_channel: Vec<f32>,
    per_channel_size: usize,
    /// The gathers writing pack1 and pack4 outputs (blazeface pads pack4 blobs between pack4
    /// layers: each took a repacking pass before and after).
    gpu: Option<[Gather; 2]>,
}

/// The input index for output index `i` along an axis of `n` with `before` padding, or `None`
/// for a constant.
fn source(i: usize, before: usize, n: usize, mode: Mode) -> Option<usize> {
    let x = i as i64 - before as i64;
    let n = n as i64;
    if (0..n).contains(&x) {
        return Some(x as usize);
    }
    match mode {
        Mode::Constant => None,
        Mode::Replicate => Some(x.clamp(0, n - 1) as usize),
        Mode::Reflect => {
            // mirror without repeating the edge; n == 1 has nothing to mirror
            let period = (2 * (n - 1)).max(1);
            let m = x.rem_euclid(period);
            Some(if m < n { m } else { period - m } as usize)
        }
    }
}

impl Padding {
    /// `(before, after)` per numpy axis of a blob of `shape`, checked for reflection.
    fn pads(&self, shape: &[usize]) -> Result<Vec<(usize, usize)>> {
        let pads: Vec<(usize, usize)> = match shape.len() {
            1 => vec![(self.left, self.right)],
            2 => vec![(self.top, self.bottom), (self.left, self.right)],
            3 => vec![
                (self.front, self.behind),
                (self.top, self.bottom),
                (self.left, self.right),
            ],
            _ => vec![
                (0, 0),
                (self.front, self.behind),
                (self.top, self.bottom),
                (self.left, self.right),
            ],
        };
        if self.mode == Mode::Reflect
            && shape
                .iter()
                .zip(&pads)
                .any(|(&n, &(b, a))| b.max(a) >= n && b.max(a) > 0)
        {
            let pad = pads.iter().map(|&(b, a)| b.max(a)).max().unwrap_or(0);
            return Err(InputError::Mismatch {
                a: shape.to_vec(),
                b: vec![pad],
                why: "(shape, largest pad): reflect padding needs more values than the pad",
            }
            .into());
        }
        Ok(pads)
    }
}

impl Layer for Padding {
    fn support(&self) -> Support {
        Support::ONE_BLOB
            .gpu(self.gpu.is_some())
            .packs(Packs::UP_TO_4)
            .gpu_4d()
    }

    fn gpu_packs(&self, bottoms: &[BlobShape]) -> Option<Packs> {
        // pack4 where the channels' pads keep whole blocks (4-D blobs pad their depth) and
        // the storage has scalar views, which the gathers read and write packed mats through
        let blocks = match bottoms {
            [BlobShape { dims: 3, .. }] => {
                self.front.is_multiple_of(4) && self.behind.is_multiple_of(4)
            }
            [BlobShape { dims: 4, .. }] => true,
            _ => false,
        };
        let views = self.gpu.as_ref().is_some_and(|[g, _]| g.takes_packed());
        Some(if blocks && views {
            Packs::UP_TO_4
        } else {
            Packs::ONE
        })
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let border = match self.mode {
            Mode::Constant if !self.per_channel.is_empty() => Border::PerChannel,
            Mode::Constant => Border::Constant,
            Mode::Replicate => Border::Replicate,
            Mode::Reflect => Border::Reflect,
        };
        let map = GatherMap::shift([0; 4]);
        self.gpu = gpu
            .map(|gpu| -> Result<[Gather; 2]> {
                let constants = &self.per_channel;
                Ok([
                    Gather::create_with_constants(gpu, map, border, constants)?,
                    Gather::create_packed(gpu, (map, border), constants, 4)?,
                ])
            })
            .transpose()?;
        Ok(())
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let [gather, packed] = self.gpu.ready()?;
        let dims = bottom.dims;
        let shape = numpy_shape(dims, bottom.shape());
        let pads = self.pads(&shape)?;
        let out: Vec<usize> = shape
            .iter()
            .zip(&pads)
            .map(|(n, (b, a))| n + b + a)
            .collect();
        let before: Vec<i64> = pads.iter().map(|p| -(p.0 as i64)).collect();
        let map = GatherMap::Shift {
            perm: [0, 1, 2, 3],
            offset: to_space(dims, &before, 0),
            value: self.value,
        };
        let space = to_space(dims, &out, 1);
        if bottom.elempack == 4
            && let Some(top) = packed.record_packed(rec, bottom, (dims, space), map)?
        {
            return Ok(top);
        }
        gather.record(rec, bottom, dims, space, map)
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        let side = |id| {
            let v = pd.int(id, 0);
            if v < 0 {
                Err(Error::BadParam {
                    id,
                    value: v.to_string(),
                    allowed: "a pad of at least 0",
                })
            } else {
                Ok(v as usize)
            }
        };
        self.top = side(0)?;
        self.bottom = side(1)?;
        self.left = side(2)?;
        self.right = side(3)?;
        self.front = side(7)?;
        self.behind = side(8)?;
        self.mode = match pd.int(4, 0) {
            0 => Mode::Constant,
            1 => Mode::Replicate,
            2 => Mode::Reflect,
            t => {
                return Err(Error::BadParam {
                    id: 4,
                    value: t.to_string(),
                    allowed: "type 0 (constant), 1 (replicate) or 2 (reflect)",
                });
            }
        };
        self.value = pd.float(5, 0.0);
        self.per_channel_size = side(6)?;
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        if self.per_channel_size > 0 {
            self.per_channel = weights.load(self.per_channel_size, 1)?;
        }
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let shape = bottom.numpy_shape();
        let dims = shape.len();
        let pads = self.pads(&shape)?;
        // pads of any size: a sum past a number of values is no shape
        let out_shape: Vec<usize> = shape
            .iter()
            .zip(&pads)
            .map(|(n, (b, a))| n.checked_add(*b)?.checked_add(*a))
            .collect::<Option<_>>()
            .ok_or_else(|| Error::BadParam {
                id: 0,
                value: format!("{pads:?}"),
                allowed: "pads whose sums with the input's extents are numbers of values",
            })?;
        let values = bottom.to_values();
        let row = out_shape[dims - 1];
        let mut out = vec![0.0f32; crate::host::values(&out_shape)?];
        if out.is_empty() {
            return Mat::from_numpy(&out_shape, &out);
        }
        let in_strides = crate::tensor::strided::contiguous_strides(&shape);
        // the output channel of a 3-D or 4-D blob picks a per-channel constant
        let channel_axis = (dims >= 3).then_some(0);
        out.par_chunks_mut(row).enumerate().for_each(|(r, dst)| {
            let mut rest = r;
            let mut index = vec![0usize; dims - 1];
            for a in (0..dims - 1).rev() {
                index[a] = rest % out_shape[a];
                rest /= out_shape[a];
            }
            let constant = match channel_axis {
                Some(a) => self
                    .per_channel
                    .get(index[a])
                    .copied()
                    .unwrap_or(self.value),
                None => self.value,
            };
            let mut base = Some(0usize);
            for a in 0..dims - 1 {
                base = match (base, source(index[a], pads[a].0, shape[a], self.mode)) {
                    (Some(b), Some(s)) => Some(b + s * in_strides[a] as usize),
                    _ => None,
                };
            }
            let last = dims - 1;
            for (x, d) in dst.iter_mut().enumerate() {
                *d = match (base, source(x, pads[last].0, shape[last], self.mode)) {
                    (Some(b), Some(s)) => values[b + s],
                    _ => constant,
                };
            }
        });
        Mat::from_numpy(&out_shape, &out)
    }
}
