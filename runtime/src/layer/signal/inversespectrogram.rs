//! InverseSpectrogram: `0=n_fft 1=returns` (0 complex, 1 real, 2 imaginary parts) `2=hoplen
//! 3=winlen 4=window_type 5=center 7=normalized`, over a `[freq][frame][re, im]` spectrum (a
//! 3-D blob `2 × frames × freqs`, `freqs` either `n_fft` or the one-sided `n_fft / 2 + 1`, whose
//! missing half is the conjugate mirror): each frame's inverse DFT (scaled by `sqrt(n_fft)` or
//! `‖w‖` where normalized, over `n_fft`) windowed and added at `frame · hoplen` (less `n_fft / 2`
//! where centred), then divided by the frames' summed squared window wherever that is not 0
//! (librosa's and torch.istft's overlap-add, as ncnn). `(frames - 1) · hoplen + n_fft` samples,
//! or where centred `(frames - 1) · hoplen + n_fft mod 2`, as ncnn counts them. Output:
//! `[sample][re, im]` (2-D, `2 × samples`) for returns 0, else the 1-D part.
//!
//! CPU: each frame's inverse in parallel, then the overlap-add in frame order. GPU:
//! `inversespectrogram`, one invocation per output sample summing the frames that cover it.

use std::sync::Arc;

use rayon::prelude::*;

use super::{Frames, twiddle};
use crate::error::{Error, InputError, Result};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::pipelines::DeviceSide;
use crate::shaders::Shader;
use crate::tensor::{BlobShape, GpuMat, Mat};

/// An inverse short-time Fourier transform.
/// The GPU pipelines: each frame's windowed values, per one-sidedness (false, true), then the
/// overlap-add.
struct GpuStages {
    frames: [Arc<Pipeline>; 2],
    overlap: Arc<Pipeline>,
}

#[derive(Default)]
pub struct InverseSpectrogram {
    frames: Frames,
    returns: i32,
    window: Vec<f32>,
    /// The spectrum's scale (the normalization undone).
    scale: f32,
    /// The frames' values per one-sidedness (false, true) and the overlap-add (the shader's
    /// stages 0 and 1); the window on the device.
    gpu: Option<(GpuStages, Option<GpuMat>)>,
}

impl InverseSpectrogram {
    /// Whether a spectrum of `[2, frames, freqs]` is one-sided, its frames, the output samples.
    fn shape(&self, dims: u8, [w, frames, _, freqs]: [usize; 4]) -> Result<(bool, usize, usize)> {
        let n = self.frames.n_fft;
        if dims != 3 || w != 2 || frames == 0 {
            return Err(InputError::Shape {
                what: "InverseSpectrogram's spectrum",
                shape: vec![w, frames, freqs],
                expected: "3-D, 2 x frames x freqs ([freq][frame][re, im])",
            }
            .into());
        }
        let onesided = freqs == n / 2 + 1;
        if !onesided && freqs != n {
            return Err(InputError::Values {
                what: "frequencies (n_fft, or n_fft / 2 + 1 one-sided)",
                got: freqs,
                expected: n / 2 + 1,
            }
            .into());
        }
        let tail = if self.frames.center { n % 2 } else { n };
        // a mutated hop makes any length: refused past the host's memory (the output's two
        // values a sample)
        let outsize = ((frames - 1).checked_mul(self.frames.hoplen))
            .and_then(|v| v.checked_add(tail))
            .unwrap_or(usize::MAX);
        crate::host::values(&[outsize, 2])?;
        Ok((onesided, frames, outsize))
    }
}

impl Layer for InverseSpectrogram {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.frames = Frames::load(pd)?;
        self.returns = pd.int_in(1, 0, 0..=2, "0 complex, 1 real or 2 imaginary parts")?;
        let (window, norm) = self.frames.window();
        self.window = window;
        self.scale = match self.frames.normalized {
            1 => (self.frames.n_fft as f32).sqrt(),
            2 => norm,
            _ => 1.0,
        };
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let i = SpecValue::I32;
        let spec = |onesided: bool, stage: i32| {
            [
                (0, i(self.frames.n_fft as i32)),
                (1, i(self.returns)),
                (2, i(self.frames.hoplen as i32)),
                (3, i(i32::from(self.frames.center))),
                (4, i(i32::from(onesided))),
                (5, SpecValue::F32(self.scale)),
                (6, i(stage)),
            ]
        };
        self.gpu = match gpu {
            Some(g) => {
                let module = Shader::Inversespectrogram.module();
                let stages = GpuStages {
                    frames: [
                        g.pipeline(module, &spec(false, 0))?,
                        g.pipeline(module, &spec(true, 0))?,
                    ],
                    overlap: g.pipeline(module, &spec(false, 1))?,
                };
                Some((stages, None))
            }
            None => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        if let Some(state) = self.gpu.as_mut() {
            state.1 = Some(gpu.upload_values(&self.window, 1)?);
        }
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        matches!(bottoms, [b] if self.shape(b.dims, b.shape).is_ok())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let (onesided, frames, outsize) = self.shape(bottom.dims, bottom.shape())?;
        let n = self.frames.n_fft;
        let freqs = bottom.shape()[3];
        let x = bottom.to_values();
        // value (k, j) of the full spectrum, one-sided ones mirrored
        let at = |k: usize, j: usize| {
            let (kk, sign) = match onesided && k > n / 2 {
                true => (n - k, -1.0),
                false => (k, 1.0),
            };
            let base = (kk * frames + j) * 2;
            debug_assert!(kk < freqs);
            (x[base] * self.scale, x[base + 1] * self.scale * sign)
        };
        let inverses: Vec<Vec<(f32, f32)>> = (0..frames)
            .into_par_iter()
            .map(|j| {
                (0..n)
                    .map(|i| {
                        let (mut re, mut im) = (0.0f32, 0.0f32);
                        for k in 0..n {
                            let (sr, si) = at(k, j);
                            let (c, s) = twiddle(i, k, n);
                            re += sr * c - si * s;
                            im += sr * s + si * c;
                        }
                        (
                            re / n as f32 * self.window[i],
                            im / n as f32 * self.window[i],
                        )
                    })
                    .collect()
            })
            .collect();
        let half = if self.frames.center { n / 2 } else { 0 };
        let mut out = vec![(0.0f32, 0.0f32); outsize];
        let mut sumsquare = vec![0.0f32; outsize];
        for (j, frame) in inverses.iter().enumerate() {
            for (i, (re, im)) in frame.iter().enumerate() {
                let Some(o) = (j * self.frames.hoplen + i).checked_sub(half) else {
                    continue;
                };
                if o < outsize {
                    sumsquare[o] += self.window[i] * self.window[i];
                    out[o].0 += re;
                    out[o].1 += im;
                }
            }
        }
        let values: Vec<f32> = out
            .iter()
            .zip(&sumsquare)
            .flat_map(|(&(re, im), &s)| {
                let (re, im) = if s != 0.0 { (re / s, im / s) } else { (re, im) };
                match self.returns {
                    0 => vec![re, im],
                    1 => vec![re],
                    _ => vec![im],
                }
            })
            .collect();
        match self.returns {
            0 => Mat::from_shape_values(2, [2, outsize, 1, 1], &values),
            _ => Mat::from_shape_values(1, [outsize, 1, 1, 1], &values),
        }
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let (pipelines, window) = self.gpu.ready()?;
        let window = window.as_ref().ok_or(Error::NotLoaded {
            what: "the window on the device",
        })?;
        let (onesided, frames, outsize) = self.shape(bottom.dims, bottom.shape())?;
        let ctx = rec.context();
        let top = match self.returns {
            0 => GpuMat::alloc(ctx, 2, [2, 1, outsize], 1, bottom.options)?,
            _ => GpuMat::alloc(ctx, 1, [1, 1, outsize], 1, bottom.options)?,
        };
        // each frame's n_fft complex values, a row per frame
        let n = self.frames.n_fft;
        let scratch = GpuMat::alloc(ctx, 2, [2 * n, 1, frames], 1, bottom.options)?;
        let words = [frames, bottom.cstep, outsize, scratch.cstep].map(|v| v as u32);
        // 64 values by one frame a workgroup; the shader strides over frames past the grid's
        // height
        let high = ctx.limits().max_compute_workgroups_per_dimension;
        rec.dispatch(
            &pipelines.frames[usize::from(onesided)],
            &[bottom, window, &scratch],
            &words,
            [n as u32, (frames as u32).min(high), 1],
        )?;
        rec.dispatch(
            &pipelines.overlap,
            &[&scratch, window, &top],
            &words,
            [outsize as u32, 1, 1],
        )?;
        Ok(top)
    }
}
