//! Diag: `0=diagonal`. A 1-D blob becomes the square matrix with it on that diagonal (above
//! the main one when positive), zeros elsewhere; a 2-D blob gives that diagonal as 1-D.

use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::strided_copy::{CopyExtras, CopyMode, StridedCopy, alloc_numpy};
use crate::layer::shared::view::numpy_shape;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat, Strided};

/// A diagonal, to or from a matrix.
#[derive(Default)]
pub struct Diag {
    diagonal: i32,
    /// The fill and the copy (buffer nets).
    gpu: Option<(StridedCopy, StridedCopy)>,
}

/// Where a blob of numpy shape `np` goes: the output's numpy shape and the view of the
/// diagonal in whichever of input and output is the matrix.
fn plan(diagonal: i32, np: &[usize]) -> Result<(Vec<usize>, Strided)> {
    let k = diagonal as isize;
    let (row, col) = ((-k).max(0) as usize, k.max(0) as usize);
    match *np {
        [w] => {
            let n = w + k.unsigned_abs();
            let view = Strided {
                offset: row * n + col,
                shape: vec![w],
                strides: vec![n as isize + 1],
            };
            Ok((vec![n, n], view))
        }
        [h, w] => {
            let len = h.saturating_sub(row).min(w.saturating_sub(col));
            if len == 0 {
                return Err(InputError::Output {
                    what: "a diagonal outside the matrix",
                    shape: vec![0],
                }
                .into());
            }
            let view = Strided {
                offset: row * w + col,
                shape: vec![len],
                strides: vec![w as isize + 1],
            };
            Ok((vec![len], view))
        }
        _ => Err(InputError::Dims {
            got: np.len().min(255) as u8,
            takes: "1-D and 2-D blobs",
        }
        .into()),
    }
}

impl Layer for Diag {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.diagonal = pd.int(0, 0);
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(g) => Some((
                StridedCopy::create(g, CopyMode::Fill)?,
                StridedCopy::create(g, CopyMode::Copy)?,
            )),
            None => None,
        };
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms.iter().all(|BlobShape { dims, shape: s }| {
            plan(self.diagonal, &numpy_shape(*dims, *s)).is_ok()
        })
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let np = bottom.numpy_shape();
        let (out, view) = plan(self.diagonal, &np)?;
        let values = bottom.to_values();
        if np.len() == 2 {
            return Mat::from_numpy(&out, &view.gather(&values)?);
        }
        let mut matrix = vec![0.0; out.iter().product()];
        view.scatter(&mut matrix, &values)?;
        Mat::from_numpy(&out, &matrix)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let (fill, copy) = self.gpu.ready()?;
        let np = numpy_shape(bottom.dims, bottom.shape());
        let (out, view) = plan(self.diagonal, &np)?;
        if np.len() == 2 {
            return copy.gather(rec, bottom, &view, &out);
        }
        let top = alloc_numpy(rec, &out, bottom)?;
        let all = Strided::contiguous(&out);
        fill.record(rec, (bottom, &all), (&top, &all), CopyExtras::default())?;
        let src = Strided::contiguous(&np);
        copy.record(rec, (bottom, &src), (&top, &view), CopyExtras::default())?;
        Ok(top)
    }
}
