//! Spectrogram: `0=n_fft 1=power` (0 complex, 1 magnitude, 2 power) `2=hoplen 3=winlen
//! 4=window_type 5=center 6=pad_type` (the centring's padding: 0 zeros, 1 replicate, 2 reflect)
//! `7=normalized 8=onesided`, over a 1-D signal (torchaudio's `spectrogram`, `torch.stft`).
//! Frames of `n_fft` values `hoplen` apart (the signal padded by `n_fft / 2` each side where
//! centred), windowed, each transformed: `Σ_k v_k · w_k · e^{-2πi f k / n}` per frequency `f`
//! (`n_fft / 2 + 1` of them one-sided, else `n_fft`, the rest mirrored conjugates), scaled by
//! `1 / sqrt(n_fft)` or `1 / ‖w‖` where normalized. Output: `[freqs][frames][re, im]` (a 3-D
//! blob `2 × frames × freqs`) for power 0, else the `freqs × frames` 2-D blob.
//!
//! CPU: the frames' sums per frequency in parallel. GPU: `spectrogram`, one invocation per
//! frequency and frame, the padding read as indices into the signal.

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

/// A short-time Fourier transform.
#[derive(Default)]
pub struct Spectrogram {
    frames: Frames,
    power: i32,
    pad_type: i32,
    onesided: bool,
    window: Vec<f32>,
    /// The scale of each sum (the normalization).
    scale: f32,
    gpu: Option<(Arc<Pipeline>, Option<GpuMat>)>,
}

impl Spectrogram {
    /// Frequencies (one-sided or all) and frames over a signal of `size`.
    fn shape(&self, size: usize) -> Result<(usize, usize)> {
        let n = self.frames.n_fft;
        let half = if self.frames.center { n / 2 } else { 0 };
        if self.frames.center && self.pad_type == 2 && half >= size.max(1) {
            return Err(InputError::Values {
                what: "signal values (reflecting n_fft / 2 of them takes more)",
                got: size,
                expected: half + 1,
            }
            .into());
        }
        let padded = size + 2 * half;
        if padded < n {
            return Err(InputError::Values {
                what: "signal values (padded) for one frame of n_fft",
                got: padded,
                expected: n,
            }
            .into());
        }
        let freqs = if self.onesided { n / 2 + 1 } else { n };
        Ok((freqs, (padded - n) / self.frames.hoplen + 1))
    }

    /// Signal value `i` of the padded signal (`i` counted from the padding's start).
    fn sample(&self, x: &[f32], i: usize) -> f32 {
        let half = if self.frames.center {
            self.frames.n_fft / 2
        } else {
            0
        };
        let j = i as i64 - half as i64;
        let last = x.len() as i64 - 1;
        let at = match self.pad_type {
            _ if (0..=last).contains(&j) => j,
            0 => return 0.0,
            1 => j.clamp(0, last),
            _ => {
                if j < 0 {
                    -j
                } else {
                    2 * last - j
                }
            }
        };
        x[at as usize]
    }
}

impl Layer for Spectrogram {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.frames = Frames::load(pd)?;
        self.power = pd.int_in(1, 0, 0..=2, "0 complex, 1 magnitude or 2 power")?;
        self.pad_type = pd.int_in(6, 2, 0..=2, "0 zeros, 1 replicate or 2 reflect")?;
        self.onesided = pd.int_in(8, 1, 0..=1, "0 or 1")? == 1;
        let (window, norm) = self.frames.window();
        self.window = window;
        self.scale = match self.frames.normalized {
            1 => 1.0 / (self.frames.n_fft as f32).sqrt(),
            2 => 1.0 / norm,
            _ => 1.0,
        };
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let i = SpecValue::I32;
        let values = [
            (0, i(self.frames.n_fft as i32)),
            (1, i(self.power)),
            (2, i(self.frames.hoplen as i32)),
            (3, i(i32::from(self.frames.center))),
            (4, i(self.pad_type)),
            (5, SpecValue::F32(self.scale)),
        ];
        self.gpu = match gpu {
            Some(g) => Some((g.pipeline(Shader::Spectrogram.module(), &values)?, None)),
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
        matches!(bottoms, [b] if b.dims == 1 && self.shape(b.shape[0]).is_ok())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        if bottom.dims != 1 {
            return Err(InputError::Dims {
                got: bottom.dims,
                takes: "1-D blobs (a signal)",
            }
            .into());
        }
        let x = bottom.to_values();
        let (freqs, frames) = self.shape(x.len())?;
        let n = self.frames.n_fft;
        let half_freqs = n / 2 + 1;
        // per frequency, its frames as (re, im)
        let spectra: Vec<Vec<(f32, f32)>> = (0..half_freqs.min(freqs))
            .into_par_iter()
            .map(|f| {
                let twiddles: Vec<(f32, f32)> = (0..n).map(|k| twiddle(f, k, n)).collect();
                (0..frames)
                    .map(|t| {
                        let (mut re, mut im) = (0.0f32, 0.0f32);
                        for (k, (c, s)) in twiddles.iter().enumerate() {
                            let v = self.sample(&x, t * self.frames.hoplen + k) * self.window[k];
                            re += v * c;
                            im -= v * s;
                        }
                        (re * self.scale, im * self.scale)
                    })
                    .collect()
            })
            .collect();
        // a two-sided transform's upper half: the conjugates of the lower
        let at = |f: usize, t: usize| match f < half_freqs {
            true => spectra[f][t],
            false => {
                let (re, im) = spectra[n - f][t];
                (re, -im)
            }
        };
        let mut out = Vec::with_capacity(freqs * frames * 2);
        for f in 0..freqs {
            for t in 0..frames {
                let (re, im) = at(f, t);
                match self.power {
                    0 => out.extend([re, im]),
                    1 => out.push((re * re + im * im).sqrt()),
                    _ => out.push(re * re + im * im),
                }
            }
        }
        match self.power {
            0 => Mat::from_shape_values(3, [2, frames, 1, freqs], &out),
            _ => Mat::from_shape_values(2, [frames, freqs, 1, 1], &out),
        }
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let (pipeline, window) = self.gpu.ready()?;
        let window = window.as_ref().ok_or(Error::NotLoaded {
            what: "the window on the device",
        })?;
        if bottom.dims != 1 {
            return Err(InputError::Dims {
                got: bottom.dims,
                takes: "1-D blobs (a signal)",
            }
            .into());
        }
        let size = bottom.c * bottom.elempack;
        let (freqs, frames) = self.shape(size)?;
        let ctx = rec.context();
        let top = match self.power {
            0 => GpuMat::alloc(ctx, 3, [2, frames, freqs], 1, bottom.options)?,
            _ => GpuMat::alloc(ctx, 2, [frames, 1, freqs], 1, bottom.options)?,
        };
        let words = [size, frames, freqs, top.cstep].map(|v| v as u32);
        // 64 frequencies by one frame a workgroup; the shader strides over frames past the
        // grid's height
        let high = rec.context().limits().max_compute_workgroups_per_dimension;
        let grid = [freqs as u32, (frames as u32).min(high), 1];
        rec.dispatch(pipeline, &[bottom, window, &top], &words, grid)?;
        Ok(top)
    }
}
