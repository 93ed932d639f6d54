//! Unfold (im2col): `1=kernel_w 11=kernel_h 2=dilation_w 12=dilation_h 3=stride_w 13=stride_h
//! 4=pad_left 15=pad_right 14=pad_top 16=pad_bottom (-233 / -234: "same") 18=pad_value`. A
//! 3-D blob of `c` channels gives a 2-D one of `c · kernel_h · kernel_w` rows of `outh · outw`
//! values: row `(q · kernel_h + u) · kernel_w + v` holds channel `q` at each window position
//! `(i, j)`, tap `(u, v)`, outside the input the pad value (PyTorch's `nn.Unfold` of one
//! image).

use crate::error::{InputError, Result};
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shape::im2col::Window;
use crate::layer::shared::pipelines::DeviceSide;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};
use rayon::prelude::*;
use std::sync::Arc;

/// im2col.
#[derive(Default)]
pub struct Unfold {
    window: Window,
    pad_value: f32,
    gpu: Option<Arc<Pipeline>>,
}

impl Unfold {
    /// The padding and the window positions `[w, h]` over a 3-D `w × h` input.
    fn geometry(&self, dims: u8, [w, h]: [usize; 2]) -> Result<([usize; 4], [usize; 2])> {
        if dims != 3 {
            return Err(InputError::Dims {
                got: dims,
                takes: "3-D blobs",
            }
            .into());
        }
        let pad = self.window.padding([w, h]);
        let positions = self
            .window
            .positions([w + pad[0] + pad[1], h + pad[2] + pad[3]])?;
        Ok((pad, positions))
    }
}

impl Layer for Unfold {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.window = Window::load(pd, true)?;
        self.pad_value = pd.float(18, 0.0);
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(g) => Some(g.pipeline(crate::shaders::Shader::Unfold.module(), &[])?),
            None => None,
        };
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        (bottoms.iter()).all(|b| self.geometry(b.dims, [b.shape[0], b.shape[1]]).is_ok())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let [w, h, _, c] = bottom.shape();
        let ([left, _, top, _], [ow, oh]) = self.geometry(bottom.dims, [w, h])?;
        let x = bottom.to_values();
        let wd = &self.window;
        let [kw, kh] = wd.kernel;
        // a mutated pad makes any number of positions: refused past the host's memory
        let size = crate::host::values(&[ow, oh])?;
        let mut out = vec![0.0; crate::host::values(&[c, wd.taps(), size])?];
        // one output row per channel and tap: the tap's value at each window position
        out.par_chunks_mut(size.max(1))
            .enumerate()
            .for_each(|(r, row)| {
                let (q, k) = (r / (kw * kh), r % (kw * kh));
                let (u, v) = (k / kw, k % kw);
                for (n, o) in row.iter_mut().enumerate() {
                    let (i, j) = (n / ow, n % ow);
                    let y = (i * wd.stride[1] + u * wd.dilation[1]).checked_sub(top);
                    let xx = (j * wd.stride[0] + v * wd.dilation[0]).checked_sub(left);
                    *o = match (y, xx) {
                        (Some(y), Some(xx)) if y < h && xx < w => x[(q * h + y) * w + xx],
                        _ => self.pad_value,
                    };
                }
            });
        Mat::from_numpy(&[c * wd.taps(), size], &out)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let pipeline = self.gpu.ready()?;
        let (pad, [ow, oh]) = self.geometry(bottom.dims, [bottom.w, bottom.h])?;
        let rows = bottom.c * self.window.taps();
        let top = GpuMat::alloc(rec.context(), 2, [ow * oh, 1, rows], 1, bottom.options)?;
        let mut words = bottom.shape_words().to_vec();
        words.extend(top.shape_words());
        words.extend(self.window.words(pad));
        words.extend([ow as u32, self.pad_value.to_bits()]);
        let grid = [(ow * oh) as u32, rows as u32, 1];
        rec.dispatch(pipeline, &[bottom, &top], &words, grid)?;
        Ok(top)
    }
}
