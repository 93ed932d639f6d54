//! Softmax: `0=axis` (ncnn's axis order, `c, d, h, w` of the dims a blob has). CPU in tiles
//! of columns per thread; GPU per axis of the 3-D view (pack1/pack4).

use crate::error::Result;
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::kernels;
use crate::layer::shared::pipelines::{DeviceSide, PackPipelines};
use crate::layer::shared::view::{positive_axis, view_axis};
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};
use rayon::prelude::*;

/// Softmax over the `n` rows of an `n × inner` block (rows `stride` values apart), along the
/// rows (each column is one line). Passes run along rows, so that they vectorize.
fn softmax_block(block: &mut [f32], n: usize, inner: usize, stride: usize) {
    if inner == 1 && stride == 1 {
        let block = &mut block[..n];
        let m = kernels::max(block);
        kernels::map(block, |x| kernels::exp(x - m));
        let inv = 1.0 / kernels::sum(block);
        kernels::map(block, |x| x * inv);
        return;
    }
    // tiles of COLUMNS columns × all rows, split across threads: each tile's three passes
    // (max, exp and sum, scale) run over data its core has just read (256 rows of 256 columns
    // stay in L2), so memory sees one read and one write per value
    const COLUMNS: usize = 256;
    let mut tiles: Vec<Vec<&mut [f32]>> = (0..inner.div_ceil(COLUMNS))
        .map(|_| Vec::with_capacity(n))
        .collect();
    for row in block.chunks_mut(stride).take(n) {
        for (tile, piece) in tiles.iter_mut().zip(row[..inner].chunks_mut(COLUMNS)) {
            tile.push(piece);
        }
    }
    tiles.into_par_iter().for_each(|mut rows| {
        let width = rows.first().map_or(0, |r| r.len());
        let mut max = vec![f32::NEG_INFINITY; width];
        for r in &rows {
            kernels::zip_with(&mut max, r, f32::max);
        }
        let mut sum = vec![0.0f32; width];
        for r in rows.iter_mut() {
            kernels::zip_with(r, &max, |x, m| kernels::exp(x - m));
            kernels::zip_with(&mut sum, r, |a, b| a + b);
        }
        kernels::map(&mut sum, |s| 1.0 / s);
        for r in rows.iter_mut() {
            kernels::zip_with(r, &sum, |x, s| x * s);
        }
    });
}

/// Softmax: `0=axis`.
#[derive(Default)]
pub struct Softmax {
    axis: i32,
    /// pack1 and pack4 buffer pipelines per axis of the 3-D view (pack8 goes through pack4),
    /// and for c when it is the only line (the shader's `axis` 3).
    gpu: Option<[PackPipelines; 4]>,
}

impl Layer for Softmax {
    fn support(&self) -> Support {
        Support::ONE_BLOB_INPLACE
            .gpu(self.gpu.is_some())
            .packs(Packs::UP_TO_4)
            .gpu_4d()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.axis = pd.int(0, 0);
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(gpu) => {
                let along = |axis: i32| {
                    PackPipelines::create(
                        gpu,
                        &[
                            (1, Shader::Softmax.module()),
                            (4, Shader::SoftmaxPack4.module()),
                        ],
                        &[(0, SpecValue::I32(axis))],
                    )
                };
                Some([along(0)?, along(1)?, along(2)?, along(3)?])
            }
            _ => None,
        };
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms
            .iter()
            .all(|&BlobShape { dims, .. }| positive_axis(self.axis, usize::from(dims)).is_ok())
    }

    fn forward_gpu_inplace(&self, blob: &mut GpuMat, rec: &mut Recorder<'_>) -> Result<()> {
        let pipelines = self.gpu.ready()?;
        let axis = positive_axis(self.axis, usize::from(blob.dims))?;
        let [w, hs, d, c] = blob.space();
        // the lines' view: a 4-D blob's d as the rows of slabs `w·h` wide, its h as the rows
        // of each of its `d` slabs
        let ([w, h, c], d, along) = match (blob.dims, axis) {
            (4, 1) => ([w * hs, d, c], 1, 1),
            (4, 2) => ([w, hs * d, c], d, 1),
            (4, 3) => ([w, hs * d, c], 1, 0),
            (4, _) => ([w, hs * d, c], 1, 2),
            (dims, a) => (
                blob.grid().map(|n| n as usize),
                1,
                view_axis(dims, a).unwrap_or(2),
            ),
        };
        // along c with a single line, the whole workgroup takes it
        let along = if along == 2 && w == 1 && h == 1 {
            3
        } else {
            along
        };
        let pipeline = pipelines[along].for_mat(blob)?.clone();
        // the shader's 256 invocations per row along w or the single line; one per line
        // otherwise
        let grid = match along {
            0 => [256, h, c],
            1 => [w, 1, c * d],
            2 => [w, h, 1],
            _ => [256, 1, 1],
        }
        .map(|n| n as u32);
        let words = [w, h, c, blob.cstep, d].map(|n| n as u32);
        rec.dispatch(&pipeline, &[&*blob], &words, grid)
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &RunOptions) -> Result<()> {
        let e = blob.numpy_shape();
        let axis = positive_axis(self.axis, e.len())?;
        let (outer, n, inner): (usize, usize, usize) = (
            e[..axis].iter().product(),
            e[axis],
            e[axis + 1..].iter().product(),
        );
        if n == 0 || inner == 0 {
            return Ok(());
        }
        let (dims, cstep) = (blob.dims, blob.cstep);
        let Ok(data) = blob.f32_mut() else {
            // the net hands this layer fp32 pack1 mats; anything else goes through values
            let mut v = blob.to_values();
            v.par_chunks_mut(n * inner)
                .for_each(|block| softmax_block(block, n, inner, inner));
            *blob = Mat::from_numpy(&e, &v)?;
            return Ok(());
        };
        // in the storage itself: channels of 3-D and 4-D blobs lie `cstep` apart
        if dims >= 3 && axis == 0 {
            softmax_block(data, n, inner, cstep);
        } else if dims >= 3 {
            let plane: usize = e[1..].iter().product();
            data.par_chunks_mut(cstep).for_each(|ch| {
                ch[..plane]
                    .chunks_mut(n * inner)
                    .for_each(|block| softmax_block(block, n, inner, inner))
            });
        } else {
            data[..outer * n * inner]
                .par_chunks_mut(n * inner)
                .for_each(|block| softmax_block(block, n, inner, inner));
        }
        Ok(())
    }
}
