//! Deconvolution3D and DeconvolutionDepthWise3D (transposed 3-D convolution): `0=num_output
//! 1=kernel_w 11=kernel_h 21=kernel_d 2=dilation_w 12=dilation_h 22=dilation_d 3=stride_w
//! 13=stride_h 23=stride_d 4=pad_left 15=pad_right 14=pad_top 16=pad_bottom 24=pad_front
//! 17=pad_behind 18=output_pad_right 19=output_pad_bottom 20=output_pad_behind 25=output_w
//! 26=output_h 27=output_d 5=bias_term 6=weight_data_size 7=group` (depthwise)
//! `9=activation_type 10=activation_params`, over 4-D blobs; weights
//! `[num_output][channels / group][kernel_d][kernel_h][kernel_w]`, then the bias. The full
//! result is `(n - 1) · stride + kernel extent + output pad` along each axis; positive pads are
//! cut from it, else with all three output sizes and pads -233 / -234 the excess is cut evenly
//! (the odd one after / before), as ncnn does.
//!
//! CPU: per group and input slab, every (output, tap) row of the weights times the input in
//! one GEMM, each row's products then added at its tap's offset (col2im). GPU: the direct pack1
//! shader `deconvolution`, each output gathering the inputs whose footprint covers it, over
//! the depth taps too (`convolution_head.comp`'s depth constants).

use std::sync::OnceLock;

use rayon::prelude::*;

use crate::OptionSet;
use crate::error::{Error, InputError, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::activation::fused::activate;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::conv::implicit_gemm::shaped;
use crate::layer::conv::window::{Pack4Kind, Rank, Window, of_rank};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::cpu_gemm::{MatMut, MatRef, gemm};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::channel_planes;
use crate::layer::weights::Weights;
use crate::shaders::Shader;
use crate::tensor::{BlobShape, GpuMat, Mat};

/// A transposed 3-D convolution (dense, grouped or depthwise).
#[derive(Default)]
pub struct Deconvolution3D {
    window: Window,
    /// Output pads after the full result, `[w, h, d]`.
    output_pad: [usize; 3],
    /// The output size the "same" pads cut to, `[w, h, d]` (0: none).
    output_size: [usize; 3],
    weights: Vec<f32>,
    bias: Vec<f32>,
    /// Per group, the weights as the CPU GEMM reads them: `[output][tap][input]` (made on first
    /// use).
    weights_gemm: OnceLock<Vec<f32>>,
    gpu: Option<GpuDeconvolution3D>,
}

struct GpuDeconvolution3D {
    options: OptionSet,
    weights: Option<GpuMat>,
    bias: Option<GpuMat>,
}

/// One forward's output extent and where it starts in the full result, `[w, h, d]`.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    full: [usize; 3],
    out: [usize; 3],
    before: [usize; 3],
}

impl AsMut<Window> for Deconvolution3D {
    fn as_mut(&mut self) -> &mut Window {
        &mut self.window
    }
}

impl Deconvolution3D {
    /// A Deconvolution3D layer.
    pub fn dense() -> Self {
        of_rank(Rank::Three, false)
    }

    /// A DeconvolutionDepthWise3D layer (the form that reads `7=group`).
    pub fn depthwise() -> Self {
        of_rank(Rank::Three, true)
    }

    fn geometry(&self, size: [usize; 3]) -> Result<Geometry> {
        if size.contains(&0) {
            return Err(InputError::Output {
                what: "an empty input",
                shape: size.to_vec(),
            }
            .into());
        }
        let [kernel, dilation, stride] = self.window.axes3();
        let full = [0, 1, 2].map(|i| {
            (size[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 + self.output_pad[i]
        });
        let [l, r, t, b] = self.window.pad;
        let [f, k] = self.window.depth.pad;
        let pads = [l, r, t, b, f, k];
        let cut: [[usize; 2]; 3] = if pads.iter().any(|p| *p > 0) {
            let p = |v: i32| v.max(0) as usize;
            [[p(l), p(r)], [p(t), p(b)], [p(f), p(k)]]
        } else if !self.output_size.contains(&0) && pads.iter().any(|p| matches!(p, -233 | -234)) {
            let excess = [0, 1, 2].map(|i| full[i].saturating_sub(self.output_size[i]));
            excess.map(|e| match pads.contains(&-233) {
                true => [e / 2, e - e / 2],
                false => [e - e / 2, e / 2],
            })
        } else if !self.output_size.contains(&0) {
            // ncnn cuts nothing and makes no output here (its forward fails)
            return Err(InputError::Output {
                what: "output_w/h/d (25=/26=/27=) without positive or -233/-234 pads",
                shape: self.output_size.to_vec(),
            }
            .into());
        } else {
            [[0, 0]; 3]
        };
        if (0..3).any(|i| cut[i][0] + cut[i][1] >= full[i]) {
            return Err(InputError::Output {
                what: "the pads cut all of it",
                shape: full.to_vec(),
            }
            .into());
        }
        Ok(Geometry {
            full,
            out: [0, 1, 2].map(|i| full[i] - cut[i][0] - cut[i][1]),
            before: cut.map(|c| c[0]),
        })
    }
}

impl Layer for Deconvolution3D {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some()).gpu_4d()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.window.load(pd, 28)?;
        if self.window.dynamic {
            return Err(Error::BadParam {
                id: 28,
                value: "1".into(),
                allowed: "0: the 3-D transposed convolutions take no weights as inputs",
            });
        }
        let opr = pd.int(18, 0).max(0);
        let pads = [opr, pd.int(19, opr).max(0), pd.int(20, opr).max(0)];
        self.output_pad = pads.map(|p| p as usize);
        let ow = pd.int(25, 0).max(0);
        let sizes = [ow, pd.int(26, ow).max(0), pd.int(27, ow).max(0)];
        self.output_size = sizes.map(|s| s as usize);
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.weights = weights.load(self.window.weight_data_size, 0)?;
        // the CPU's GEMM rows were laid out from the weights a second load replaces
        self.weights_gemm = OnceLock::new();
        if self.window.bias_term {
            self.bias = weights.load(self.window.num_output, 1)?;
        }
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(gpu) => {
                gpu.ctx
                    .fitting_variants(Shader::Deconvolution.module(), gpu.options)?;
                Some(GpuDeconvolution3D {
                    options: gpu.options,
                    weights: None,
                    bias: None,
                })
            }
            None => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        let bias = self.window.bias_or_zeros(&self.bias);
        if let Some(state) = self.gpu.as_mut() {
            state.weights = Some(gpu.upload_values(&self.weights, 1)?);
            state.bias = Some(gpu.upload_values(&bias, 1)?);
        }
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms.iter().all(|b| {
            let [w, h, d, c] = b.shape;
            b.dims == 4 && c == self.window.channels() && self.geometry([w, h, d]).is_ok()
        })
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let state = self.gpu.ready()?;
        if bottom.elempack != 1 {
            return Err(Error::NoShader {
                elempack: bottom.elempack,
            });
        }
        self.window.check_volume(bottom.dims, bottom.c)?;
        let [w, h, d, _] = bottom.space();
        let geo = self.geometry([w, h, d])?;
        let (Some(weights), Some(bias)) = (&state.weights, &state.bias) else {
            return Err(Error::NotLoaded {
                what: "the weights on the device",
            });
        };
        let ctx = rec.context();
        let [ow, oh, od] = geo.out;
        let top = GpuMat::alloc_space(
            ctx,
            4,
            [ow, oh, od, self.window.num_output],
            1,
            bottom.options,
        )?;
        let mut words = bottom.shape_words().to_vec();
        words.extend(top.shape_words());
        words.extend([geo.before[0] as u32, geo.before[1] as u32, 0]);
        let int = |v: usize| SpecValue::I32(v as i32);
        let mut values = self.window.spec(Pack4Kind::None);
        values.extend([(33, int(geo.before[2])), (34, int(d)), (35, int(od))]);
        let pipeline = ctx.pipeline(
            Shader::Deconvolution.module(),
            state.options,
            &shaped(values, &words),
        )?;
        rec.dispatch(
            &pipeline,
            &[bottom, &top, weights, bias],
            &words,
            top.grid(),
        )?;
        Ok(top)
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let [w, h, d, c] = bottom.shape();
        self.window.check_volume(bottom.dims, c)?;
        let geo = self.geometry([w, h, d])?;
        let win = &self.window;
        let [[kw, kh, _], [dw, dh, dd], [sw, sh, sd]] = self.window.axes3();
        let (group, cin_g) = (win.group, win.channels_per_group());
        let cout_g = win.num_output / group;
        let taps = win.taps_count();
        let [fw, fh, fd] = geo.full;
        // the padded output's size follows the params: refused past the host's memory
        let full_plane = crate::host::values(&[fw, fh, fd])?;
        let weights = self.weights_gemm.get_or_init(|| {
            // [output][input][tap] → [output][tap][input], per output across the groups
            let mut t = vec![0.0f32; self.weights.len()];
            for (p, wp) in self.weights.chunks_exact((cin_g * taps).max(1)).enumerate() {
                for (q, wq) in wp.chunks_exact(taps.max(1)).enumerate() {
                    for (k, v) in wq.iter().enumerate() {
                        t[(p * taps + k) * cin_g + q] = *v;
                    }
                }
            }
            t
        });
        let (x, step) = channel_planes(bottom);
        let slab = w * h;
        let mut full = vec![0.0f32; crate::host::values(&[win.num_output, full_plane])?];
        full.par_chunks_mut(full_plane.max(1))
            .enumerate()
            .for_each(|(p, plane)| plane.fill(self.bias.get(p).copied().unwrap_or(0.0)));
        let mut cols = vec![0.0f32; crate::host::values(&[cout_g, taps, slab])?];
        for g in 0..group {
            let wg = &weights[g * cout_g * taps * cin_g..(g + 1) * cout_g * taps * cin_g];
            for z in 0..d {
                gemm(
                    MatRef::rows(wg, cout_g * taps, cin_g, cin_g),
                    MatRef::rows(&x[g * cin_g * step + z * slab..], cin_g, slab, step),
                    MatMut::rows(&mut cols, cout_g * taps, slab, slab),
                    false,
                );
                // each output adds its taps' rows at their offsets in the full result
                let outputs = &mut full[g * cout_g * full_plane..(g + 1) * cout_g * full_plane];
                outputs
                    .par_chunks_mut(full_plane.max(1))
                    .zip(cols.par_chunks(taps * slab))
                    .for_each(|(plane, rows)| {
                        for (k, row) in rows.chunks_exact(slab.max(1)).enumerate() {
                            let (kz, ky, kx) = (k / (kw * kh), k / kw % kh, k % kw);
                            let fz = z * sd + kz * dd;
                            for iy in 0..h {
                                let fy = iy * sh + ky * dh;
                                let line = &mut plane[(fz * fh + fy) * fw..];
                                for (ix, v) in row[iy * w..(iy + 1) * w].iter().enumerate() {
                                    line[ix * sw + kx * dw] += v;
                                }
                            }
                        }
                    });
            }
        }
        let [ow, oh, od] = geo.out;
        let [bw, bh, bd] = geo.before;
        let mut top = Mat::new_4d(ow, oh, od, win.num_output, 1)?;
        let cstep = top.cstep;
        let (act, params) = (win.activation, &win.activation_params);
        top.f32_mut()?
            .par_chunks_mut(cstep.max(1))
            .zip(full.par_chunks(full_plane.max(1)))
            .for_each(|(dst, src)| {
                for z in 0..od {
                    for y in 0..oh {
                        let from = ((z + bd) * fh + y + bh) * fw + bw;
                        let to = (z * oh + y) * ow;
                        for (o, v) in dst[to..to + ow].iter_mut().zip(&src[from..from + ow]) {
                            *o = activate(act, params, *v);
                        }
                    }
                }
            });
        Ok(top)
    }
}
