//! Fold (col2im): `1=kernel_w 11=kernel_h 2=dilation_w 12=dilation_h 3=stride_w 13=stride_h
//! 4=pad_left 15=pad_right 14=pad_top 16=pad_bottom 20=output_w 21=output_h`. Unfold's
//! inverse: a 2-D blob of `c · kernel_h · kernel_w` rows of one value per window position
//! over the padded `output_w × output_h` map gives the 3-D map of `c` channels, each value the
//! sum of the rows' values whose tap lands on it (PyTorch's `nn.Fold` of one image).

use crate::error::{Error, InputError, Result};
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

/// col2im.
#[derive(Default)]
pub struct Fold {
    window: Window,
    /// `[w, h]` of the output.
    output: [usize; 2],
    gpu: Option<Arc<Pipeline>>,
}

impl Fold {
    /// The output's channels and the window positions `[w, h]` for a 2-D input of `rows` rows
    /// of `len` values.
    fn geometry(&self, dims: u8, [len, rows]: [usize; 2]) -> Result<(usize, [usize; 2])> {
        if dims != 2 {
            return Err(InputError::Dims {
                got: dims,
                takes: "2-D blobs (rows of window positions)",
            }
            .into());
        }
        let taps = self.window.taps();
        if !rows.is_multiple_of(taps) {
            return Err(InputError::Values {
                what: "rows (channels × kernel taps)",
                got: rows,
                expected: rows / taps * taps,
            }
            .into());
        }
        let [l, r, t, b] = self.window.pad.map(|p| p as usize);
        let [w, h] = self.output;
        let [pw, ph] = self.window.positions([w + l + r, h + t + b])?;
        if len != pw * ph {
            return Err(InputError::Values {
                what: "values per row (window positions)",
                got: len,
                expected: pw * ph,
            }
            .into());
        }
        Ok((rows / taps, [pw, ph]))
    }
}

impl Layer for Fold {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.window = Window::load(pd, false)?;
        let w = pd.int(20, 0);
        let h = pd.int(21, w);
        for (id, v) in [(20, w), (21, h)] {
            if v < 1 {
                return Err(Error::BadParam {
                    id,
                    value: v.to_string(),
                    allowed: "an output side of at least 1",
                });
            }
        }
        self.output = [w as usize, h as usize];
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(g) => Some(g.pipeline(crate::shaders::Shader::Fold.module(), &[])?),
            None => None,
        };
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        (bottoms.iter()).all(|b| self.geometry(b.dims, [b.shape[0], b.shape[1]]).is_ok())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let [len, rows, ..] = bottom.shape();
        let (c, [pw, ph]) = self.geometry(bottom.dims, [len, rows])?;
        let x = bottom.to_values();
        let wd = &self.window;
        let [kw, kh] = wd.kernel;
        let [w, h] = self.output;
        let [left, _, top, _] = wd.pad.map(|p| p as usize);
        // the window position whose tap at `offset` lands on padded coordinate `at`
        let position = |at: usize, offset: usize, stride: usize, n: usize| {
            let s = at.checked_sub(offset)?;
            (s % stride == 0 && s / stride < n).then_some(s / stride)
        };
        // the output size is the params': refused past the host's memory
        let plane = crate::host::values(&[w, h])?;
        let mut out = vec![0.0; crate::host::values(&[c, plane])?];
        out.par_chunks_mut(plane)
            .enumerate()
            .for_each(|(q, plane)| {
                for (n, o) in plane.iter_mut().enumerate() {
                    let (y, xx) = (n / w + top, n % w + left);
                    // the taps in ncnn's order, so that the sums round alike
                    let mut sum = 0.0;
                    for u in 0..kh {
                        let Some(i) = position(y, u * wd.dilation[1], wd.stride[1], ph) else {
                            continue;
                        };
                        for v in 0..kw {
                            if let Some(j) = position(xx, v * wd.dilation[0], wd.stride[0], pw) {
                                sum += x[((q * kh + u) * kw + v) * len + i * pw + j];
                            }
                        }
                    }
                    *o = sum;
                }
            });
        Mat::from_numpy(&[c, h, w], &out)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let pipeline = self.gpu.ready()?;
        let (c, [pw, ph]) = self.geometry(bottom.dims, [bottom.w, bottom.c])?;
        let [w, h] = self.output;
        let top = GpuMat::alloc(rec.context(), 3, [w, h, c], 1, bottom.options)?;
        let mut words = bottom.shape_words().to_vec();
        words.extend(top.shape_words());
        words.extend(self.window.words(self.window.pad.map(|p| p as usize)));
        words.extend([pw as u32, ph as u32]);
        let grid = [w as u32, h as u32, c as u32];
        rec.dispatch(pipeline, &[bottom, &top], &words, grid)?;
        Ok(top)
    }
}
