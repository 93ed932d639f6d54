//! DeformableConv2D: `0=num_output 1=kernel_w 11=kernel_h 2=dilation_w 12=dilation_h 3=stride_w
//! 13=stride_h 4=pad_left 15=pad_right 14=pad_top 16=pad_bottom 5=bias_term 6=weight_data_size
//! 9=activation_type 10=activation_params`; weights `[num_output][channels][kernel_h][kernel_w]`,
//! then the bias. Inputs: the 3-D image, the offsets (`2 · kernel taps` channels over the
//! output's positions: per tap its dy, then its dx) and optionally the mask (one channel per
//! tap). Each tap samples the image at its window position plus its offset, bilinearly over the
//! four neighbours inside the image (zero past the edges, nothing a whole pixel or more
//! outside), times the mask, as ncnn (and torchvision's `deform_conv2d`) do.
//!
//! CPU and GPU alike: the samples as columns (a deformable im2col: `deformable_columns` on the
//! device, from a pack4 image where the offsets and the mask are not themselves whole blocks:
//! no unpacking of the image first), then one GEMM with the weights, the bias and the
//! activation (the matrix layers' GEMM on the device, tensor cores where they take them; an
//! activation layer after it folded into that GEMM where it has none of its own).

use rayon::prelude::*;

use crate::error::{Error, InputError, Result};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::activation::fused::activate_all;
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::conv::window::Window;
use crate::layer::epilogue::FusedActivation;
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::cpu_gemm::{MatMut, MatRef, gemm};
use crate::layer::shared::gpu_gemm::{self, Addend, Form, Operand, Pipelines, Sizes};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::channels;
use crate::layer::weights::Weights;
use crate::shaders::Shader;
use crate::tensor::{BlobShape, GpuMat, Mat};
use std::sync::{Arc, Mutex};

/// A deformable convolution (one offset group, as ncnn's).
#[derive(Default)]
pub struct DeformableConv2D {
    window: Window,
    weights: Vec<f32>,
    bias: Vec<f32>,
    gpu: Option<GpuDeformable>,
}

struct GpuDeformable {
    /// The columns' shader without and with a mask, from a pack1 and from a pack4 image.
    columns: [[Arc<Pipeline>; 2]; 2],
    gemm: Pipelines,
    /// The options the GEMM's engine was chosen for, and the GEMM with the activation the net
    /// last fused into it (made at its first forward, as the net fuses per run).
    opt: RunOptions,
    fused: Mutex<Option<(FusedActivation, Arc<Pipelines>)>>,
    weights: Option<GpuMat>,
    bias: Option<GpuMat>,
}

/// One forward's shapes: the image's `[w, h, c]` and the output's `[w, h]`.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    image: [usize; 3],
    out: [usize; 2],
}

impl DeformableConv2D {
    /// The output over an image of `w × h` (ncnn's: pads as given, no "same" modes).
    fn out_size(&self, w: usize, h: usize) -> Result<[usize; 2]> {
        let ([kw, kh], [dw, dh], [sw, sh]) = self.window.taps();
        let [l, r, t, b] = self.window.pad.map(|p| p.max(0) as usize);
        let (ew, eh) = (dw * (kw - 1) + 1, dh * (kh - 1) + 1);
        let (pw, ph) = (w + l + r, h + t + b);
        crate::layer::shared::view::kernel_fits("dilated kernel", [ew, eh], [pw, ph])?;
        Ok([(pw - ew) / sw + 1, (ph - eh) / sh + 1])
    }

    /// Checks the inputs' shapes (`[w, h, d, c]` each, as blobs give them).
    fn geometry(&self, shapes: &[(u8, [usize; 4])]) -> Result<Geometry> {
        let (image, rest) = match shapes {
            [image, rest @ ..] if (1..=2).contains(&rest.len()) => (image, rest),
            _ => {
                return Err(InputError::Count {
                    got: shapes.len(),
                    expected: "2 or 3: the image, the offsets and optionally the mask",
                }
                .into());
            }
        };
        let (dims, [w, h, _, c]) = *image;
        crate::layer::shared::view::planar(dims)?;
        self.window.check_input(dims, c)?;
        let out = self.out_size(w, h)?;
        let taps = self.window.kernel[0] * self.window.kernel[1];
        for (k, &(dims, [ow, oh, _, oc])) in rest.iter().enumerate() {
            let channels = if k == 0 { 2 * taps } else { taps };
            if dims != 3 || [ow, oh] != out || oc != channels {
                return Err(InputError::Mismatch {
                    a: vec![out[0], out[1], 1, channels],
                    b: vec![ow, oh, 1, oc],
                    why: if k == 0 {
                        "DeformableConv2D's offsets: 2 x kernel taps channels over the output's positions"
                    } else {
                        "DeformableConv2D's mask: kernel taps channels over the output's positions"
                    },
                }
                .into());
            }
        }
        Ok(Geometry {
            image: [w, h, c],
            out,
        })
    }

    /// The columns on the CPU: row `c · taps + k`, the image's channel `c` at tap `k` of each
    /// output position.
    fn columns(
        &self,
        geo: Geometry,
        x: &[f32],
        offsets: &[f32],
        mask: Option<&[f32]>,
    ) -> Result<Vec<f32>> {
        let ([kw, kh], [dw, dh], [sw, sh]) = self.window.taps();
        let [w, h, c] = geo.image;
        let [ow, oh] = geo.out;
        let (pl, pt) = (
            self.window.pad[0].max(0) as f32,
            self.window.pad[2].max(0) as f32,
        );
        let (taps, positions) = (kw * kh, ow * oh);
        let mut cols = vec![0.0f32; crate::host::values(&[c, taps, positions])?];
        cols.par_chunks_mut(positions.max(1))
            .enumerate()
            .for_each(|(r, row)| {
                let (ch, k) = (r / taps, r % taps);
                let (i, j) = (k / kw, k % kw);
                let plane = &x[ch * w * h..(ch + 1) * w * h];
                for (n, v) in row.iter_mut().enumerate() {
                    let (oy, ox) = (n / ow, n % ow);
                    let dy = offsets[2 * k * positions + n];
                    let dx = offsets[(2 * k + 1) * positions + n];
                    let m = mask.map_or(1.0, |m| m[k * positions + n]);
                    let y = (oy * sh) as f32 - pt + (i * dh) as f32 + dy;
                    let xf = (ox * sw) as f32 - pl + (j * dw) as f32 + dx;
                    *v = bilinear(plane, [w, h], y, xf) * m;
                }
            });
        Ok(cols)
    }
}

/// ncnn's sample of a `w × h` plane at `(y, x)`: the four neighbours inside it, weighted
/// bilinearly; 0 where the point lies a whole pixel or more outside.
fn bilinear(plane: &[f32], [w, h]: [usize; 2], y: f32, x: f32) -> f32 {
    if !(y > -1.0 && x > -1.0 && y < h as f32 && x < w as f32) {
        return 0.0;
    }
    let (y0, x0) = (y.floor(), x.floor());
    let (ly, lx) = (y - y0, x - x0);
    let (y0, x0) = (y0 as i64, x0 as i64);
    let at = |yy: i64, xx: i64| {
        let inside = yy >= 0 && xx >= 0 && yy < h as i64 && xx < w as i64;
        if inside {
            plane[yy as usize * w + xx as usize]
        } else {
            0.0
        }
    };
    (1.0 - ly) * (1.0 - lx) * at(y0, x0)
        + (1.0 - ly) * lx * at(y0, x0 + 1)
        + ly * (1.0 - lx) * at(y0 + 1, x0)
        + ly * lx * at(y0 + 1, x0 + 1)
}

impl Layer for DeformableConv2D {
    fn support(&self) -> Support {
        Support::MANY.gpu(self.gpu.is_some())
    }

    /// The image packed where the net packs it, if the offsets and the mask then stay pack1
    /// (the columns' shader reads them so): not whole blocks of 4 channels (a 3×3 kernel's 18
    /// and 9), else every input pack1.
    fn gpu_packs(&self, bottoms: &[BlobShape]) -> Option<Packs> {
        let blocks = |b: &BlobShape| channels(b.dims, b.shape).is_multiple_of(4);
        let packed = bottoms
            .get(1..)
            .is_some_and(|rest| !rest.iter().any(blocks));
        Some(if packed { Packs::UP_TO_4 } else { Packs::ONE })
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        // ncnn's DeformableConv2D has one group and no dynamic weights (id 19 unused)
        self.window.load(pd, 19)?;
        if self.window.dynamic {
            return Err(Error::BadParam {
                id: 19,
                value: "1".into(),
                allowed: "0: DeformableConv2D takes no weights as inputs",
            });
        }
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.weights = weights.load(self.window.weight_data_size, 0)?;
        if self.window.bias_term {
            self.bias = weights.load(self.window.num_output, 1)?;
        }
        Ok(())
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(gpu) => {
                let columns = |module| {
                    let [plain, masked] =
                        [0, 1].map(|m| gpu.pipeline(module, &[(0, SpecValue::I32(m))]));
                    Ok::<_, Error>([plain?, masked?])
                };
                let pack1 = columns(Shader::DeformableColumns.module())?;
                let pack4 = columns(Shader::DeformableColumnsPack4.module())?;
                let w = &self.window;
                let p = |i: usize| w.activation_params.get(i).copied().unwrap_or(0.0);
                let form = Form {
                    activation: (w.activation, [p(0), p(1)]),
                    ..Form::PLAIN
                };
                Some(GpuDeformable {
                    columns: [pack1, pack4],
                    gemm: form.pipeline(gpu, opt)?,
                    opt: *opt,
                    fused: Mutex::new(None),
                    weights: None,
                    bias: None,
                })
            }
            None => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        if let Some(state) = self.gpu.as_mut() {
            state.weights = Some(gpu.upload_values(&self.weights, 1)?);
            if self.window.bias_term {
                state.bias = Some(gpu.upload_values(&self.bias, 1)?);
            }
        }
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        let shapes: Vec<(u8, [usize; 4])> = bottoms.iter().map(|b| (b.dims, b.shape)).collect();
        self.geometry(&shapes).is_ok()
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let shapes: Vec<(u8, [usize; 4])> = bottoms.iter().map(|m| (m.dims, m.shape())).collect();
        let geo = self.geometry(&shapes)?;
        // positions back to back per channel (the values without channel padding)
        let x = bottoms[0].to_values();
        let offsets = bottoms[1].to_values();
        let mask = bottoms.get(2).map(Mat::to_values);
        let cols = self.columns(geo, &x, &offsets, mask.as_deref())?;
        let [ow, oh] = geo.out;
        let (outc, positions) = (self.window.num_output, ow * oh);
        let steps = cols.len() / positions.max(1);
        let mut top = Mat::new_3d(ow, oh, outc, 1)?;
        let cstep = top.cstep;
        let out = top.f32_mut()?;
        gemm(
            MatRef::rows(&self.weights, outc, steps, steps),
            MatRef::rows(&cols, steps, positions, positions),
            MatMut::rows(out, outc, positions, cstep),
            false,
        );
        let (act, params) = (self.window.activation, &self.window.activation_params);
        out.par_chunks_mut(cstep.max(1))
            .enumerate()
            .for_each(|(p, plane)| {
                let plane = &mut plane[..positions];
                let b = self.bias.get(p).copied().unwrap_or(0.0);
                plane.iter_mut().for_each(|v| *v += b);
                activate_all(act, params, plane);
            });
        Ok(vec![top])
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let state = self.gpu.ready()?;
        self.forward_gpu_with(bottoms, &state.gemm, rec)
            .map(|top| vec![top])
    }

    /// The net's activation after it in its GEMM's epilogue, where it has none of its own.
    fn forward_gpu_activated(
        &self,
        bottoms: &[GpuMat],
        act: FusedActivation,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        let (state, Some(image)) = (self.gpu.ready()?, bottoms.first()) else {
            return Ok(None);
        };
        if self.window.activation != 0 {
            return Ok(None);
        }
        let cached = (state.fused.lock().ok()).and_then(|f| {
            f.as_ref()
                .filter(|(a, _)| *a == act)
                .map(|(_, p)| p.clone())
        });
        let gemm = match cached {
            Some(p) => p,
            None => {
                let gpu = GpuSetup {
                    ctx: rec.context(),
                    options: image.options,
                };
                let form = Form {
                    activation: (act.kind, act.params),
                    ..Form::PLAIN
                };
                let p = Arc::new(form.pipeline(gpu, &state.opt)?);
                if let Ok(mut f) = state.fused.lock() {
                    *f = Some((act, p.clone()));
                }
                p
            }
        };
        self.forward_gpu_with(bottoms, &gemm, rec).map(Some)
    }
}

impl DeformableConv2D {
    /// The device forward: the columns, then `gemm` (the layer's, or one with a fused
    /// activation) with the weights and the bias.
    fn forward_gpu_with(
        &self,
        bottoms: &[GpuMat],
        gemm: &Pipelines,
        rec: &mut Recorder<'_>,
    ) -> Result<GpuMat> {
        let state = self.gpu.ready()?;
        let shapes: Vec<(u8, [usize; 4])> = bottoms.iter().map(|m| (m.dims, m.shape())).collect();
        let geo = self.geometry(&shapes)?;
        let (Some(weights), image, offsets) = (&state.weights, &bottoms[0], &bottoms[1]) else {
            return Err(Error::NotLoaded {
                what: "the weights on the device",
            });
        };
        let mask = bottoms.get(2);
        // the shader reads the offsets and the mask as pack1 (gpu_packs keeps them so)
        if let Some(m) = std::iter::once(offsets)
            .chain(mask)
            .find(|m| m.elempack != 1)
        {
            return Err(Error::NoShader {
                elempack: m.elempack,
            });
        }
        let [ow, oh] = geo.out;
        let [_, _, c] = geo.image;
        let taps = self.window.kernel[0] * self.window.kernel[1];
        let (positions, steps) = (ow * oh, c * taps);
        let ctx = rec.context();
        // the columns: one row of positions per (channel, tap)
        let cols = GpuMat::alloc(ctx, 2, [positions, 1, steps], 1, image.options)?;
        let ([kw, kh], [dw, dh], [sw, sh]) = self.window.taps();
        let words: Vec<u32> = [
            image.w,
            image.h,
            c,
            image.cstep,
            offsets.cstep,
            mask.map_or(0, |m| m.cstep),
            positions,
            ow,
            kw,
            kh,
            dw,
            dh,
            sw,
            sh,
            self.window.pad[0].max(0) as usize,
            self.window.pad[2].max(0) as usize,
        ]
        .map(|v| v as u32)
        .to_vec();
        let packed = match image.elempack {
            1 => 0,
            4 => 1,
            elempack => return Err(Error::NoShader { elempack }),
        };
        let pipeline = &state.columns[packed][usize::from(mask.is_some())];
        // a (position, tap) per invocation over a group of 8 channels (the shader's CHANNELS)
        let grid = [positions as u32, taps as u32, c.div_ceil(8) as u32];
        rec.dispatch(
            pipeline,
            &[image, offsets, mask.unwrap_or(offsets), &cols],
            &words,
            grid,
        )?;
        let outc = self.window.num_output;
        let top = GpuMat::alloc(ctx, 3, [ow, oh, outc], 1, image.options)?;
        let bias = state.bias.as_ref().map(|b| Addend {
            mat: b,
            broadcast: 1,
            rs: 0,
        });
        gpu_gemm::record(
            rec,
            gemm,
            Sizes::batched(outc, positions, steps, 1),
            Operand::dense(weights, steps),
            Operand::dense(&cols, positions),
            bias,
            Operand::rows(&top),
            None,
        )?;
        Ok(top)
    }
}
