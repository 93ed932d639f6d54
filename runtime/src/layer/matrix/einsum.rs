//! Einsum: `0=equation` (its characters as an int array, as pnnx writes it); as many inputs as
//! the equation has operands. ncnn's set of equations, the form pnnx normalizes them to: the
//! trace `ii`, or operands lettered from `i` to `x` and an output lettered `i`, `ij`, `ijk` or
//! `ijkl`; every letter not in the output is summed over. A letter repeated within an
//! operand takes its diagonal. Operands are 1-D to 4-D blobs, their axes outermost first.
//! Both sides read each operand at two precomputed offsets added (one per output index, one
//! per summed index): the CPU over the dense values, the GPU (`shaders/einsum.comp`, up to
//! four operands, pack1 buffers) over the stored ones, its tables uploaded with the work.

use rayon::prelude::*;

use crate::error::{Error, InputError, Result};
use crate::gpu::recorder::Resource;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::grain::min_items;
use crate::layer::shared::pipelines::{
    DeviceSide, expect_pack1_buffer, index_word, workgroup_rows,
};
use crate::layer::shared::strided_copy::alloc_numpy;
use crate::layer::shared::view::{dense_values, numpy_shape};
use crate::tensor::{GpuMat, Mat};
use std::sync::Arc;

/// Letters an operand may use: `i` to `x`.
const LETTERS: usize = 16;

/// A sum of products over lettered axes.
#[derive(Default)]
pub struct Einsum {
    /// Each operand's letters (0 for `i`).
    operands: Vec<Vec<usize>>,
    /// How many leading letters the output has (`i`, `ij`, …).
    out_dims: usize,
    gpu: Option<Arc<Pipeline>>,
}

/// The operands the shader binds.
const GPU_OPERANDS: usize = 4;
/// Invocations per workgroup of the shader (its `local_size_x`).
const LOCAL: usize = 64;

/// What an Einsum of some operands computes: each operand's offsets at every output index
/// and at every summed index (in the strides it was planned with), the output's numpy shape
/// and its letters' sizes and strides.
struct Plan {
    out_at: Vec<Vec<usize>>,
    sum_at: Vec<Vec<usize>>,
    shape: Vec<usize>,
    sizes: [usize; LETTERS],
}

/// An equation outside ncnn's set.
fn bad_equation(equation: &str, why: &'static str) -> Error {
    Error::BadParam {
        id: 0,
        value: format!("{equation:?}"),
        allowed: why,
    }
}

impl Einsum {
    fn parse(equation: &str) -> Result<Einsum> {
        if equation == "ii" {
            // the trace: the diagonal summed
            return Ok(Einsum {
                operands: vec![vec![0, 0]],
                out_dims: 0,
                gpu: None,
            });
        }
        let (lhs, rhs) = equation.split_once("->").ok_or_else(|| {
            bad_equation(equation, "an equation with \"->\" (or \"ii\", the trace)")
        })?;
        let out_dims = rhs.len();
        if out_dims == 0 || out_dims > 4 || "ijkl"[..out_dims] != *rhs {
            return Err(bad_equation(
                equation,
                "an output of i, ij, ijk or ijkl (ncnn's set, as pnnx writes einsum)",
            ));
        }
        let operands = lhs
            .split(',')
            .map(|token| {
                let letters: Option<Vec<usize>> = token
                    .bytes()
                    .map(|b| (b'i'..=b'x').contains(&b).then(|| usize::from(b - b'i')))
                    .collect();
                letters
                    .filter(|l| (1..=4).contains(&l.len()))
                    .ok_or_else(|| bad_equation(equation, "operands of 1 to 4 letters from i to x"))
            })
            .collect::<Result<Vec<_>>>()?;
        for out in 0..out_dims {
            if !operands.iter().any(|o| o.contains(&out)) {
                return Err(bad_equation(
                    equation,
                    "output letters that some operand has",
                ));
            }
        }
        Ok(Einsum {
            operands,
            out_dims,
            gpu: None,
        })
    }

    /// The plan for operands of these numpy shapes, whose values lie at these strides per
    /// axis, or why they do not fit the equation.
    fn plan(&self, operands: &[(Vec<usize>, Vec<usize>)]) -> Result<Plan> {
        if operands.len() != self.operands.len() {
            return Err(InputError::Count {
                got: operands.len(),
                expected: "one per operand of the equation",
            }
            .into());
        }
        // each letter's size, and each operand's stride per letter (a repeated letter's
        // strides add up: its diagonal)
        let mut sizes = [0usize; LETTERS];
        let mut strides = vec![[0usize; LETTERS]; operands.len()];
        for (b, ((shape, axis_strides), letters)) in operands.iter().zip(&self.operands).enumerate()
        {
            if shape.len() != letters.len() || axis_strides.len() != letters.len() {
                return Err(InputError::Dims {
                    got: shape.len().min(255) as u8,
                    takes: "as many axes as its operand has letters",
                }
                .into());
            }
            for ((&axis, &stride), &letter) in shape.iter().zip(axis_strides).zip(letters) {
                if sizes[letter] != 0 && sizes[letter] != axis {
                    return Err(InputError::Mismatch {
                        a: shape.clone(),
                        b: operands[0].0.clone(),
                        why: "are operands whose axes of one letter differ in size",
                    }
                    .into());
                }
                sizes[letter] = axis;
                strides[b][letter] += stride;
            }
        }
        let summed: Vec<usize> = (self.out_dims..LETTERS).filter(|&l| sizes[l] > 0).collect();
        let out_letters: Vec<usize> = (0..self.out_dims).collect();
        // every operand's offset at each output index and at each summed index
        let offsets = |letters: &[usize]| -> Vec<Vec<usize>> {
            strides
                .iter()
                .map(|s| odometer(letters, &sizes, s))
                .collect()
        };
        let shape = if self.out_dims == 0 {
            vec![1]
        } else {
            out_letters.iter().map(|&l| sizes[l]).collect()
        };
        Ok(Plan {
            out_at: offsets(&out_letters),
            sum_at: offsets(&summed),
            shape,
            sizes,
        })
    }

    /// The positions of the output's values, in order, in a blob of numpy strides `strides`.
    fn out_positions(&self, plan: &Plan, strides: &[usize]) -> Vec<usize> {
        let mut stride = [0usize; LETTERS];
        for (l, &s) in strides.iter().enumerate().take(self.out_dims) {
            stride[l] = s;
        }
        let letters: Vec<usize> = (0..self.out_dims).collect();
        odometer(&letters, &plan.sizes, &stride)
    }
}

/// Row-major strides of a dense array of `shape`.
fn dense_strides(shape: &[usize]) -> Vec<usize> {
    crate::tensor::contiguous_strides(shape)
        .into_iter()
        .map(|s| s as usize)
        .collect()
}

impl Layer for Einsum {
    fn support(&self) -> Support {
        Support::MANY.gpu_pack1(self.gpu.is_some()).gpu_4d()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        let chars = pd.ints(0);
        let equation: String = chars
            .iter()
            .map(|&c| u8::try_from(c).map_or('?', char::from))
            .collect();
        *self = Einsum::parse(&equation)?;
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(g) if self.operands.len() <= GPU_OPERANDS => {
                Some(g.pipeline(crate::shaders::Shader::Einsum.module(), &[])?)
            }
            _ => None,
        };
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let shapes: Vec<(Vec<usize>, Vec<usize>)> = bottoms
            .iter()
            .map(|m| {
                let shape = m.numpy_shape();
                let strides = dense_strides(&shape);
                (shape, strides)
            })
            .collect();
        let plan = self.plan(&shapes)?;
        let values: Vec<_> = bottoms.iter().map(dense_values).collect();
        let (out_at, sum_at) = (&plan.out_at, &plan.sum_at);
        let n_out = out_at[0].len();
        let n_sum = sum_at[0].len();
        let mut out = vec![0.0f32; n_out];
        out.par_iter_mut()
            .enumerate()
            .with_min_len(min_items(n_sum * values.len()))
            .for_each(|(o, y)| {
                *y = (0..n_sum)
                    .map(|r| {
                        values
                            .iter()
                            .enumerate()
                            .map(|(b, v)| v[out_at[b][o] + sum_at[b][r]])
                            .product::<f32>()
                    })
                    .sum();
            });
        Ok(vec![Mat::from_numpy(&plan.shape, &out)?])
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let pipeline = self.gpu.ready()?;
        let shapes: Vec<(Vec<usize>, Vec<usize>)> = bottoms
            .iter()
            .map(|m| (numpy_shape(m.dims, m.shape()), m.numpy_strides()))
            .collect();
        let plan = self.plan(&shapes)?;
        for m in bottoms {
            expect_pack1_buffer(pipeline, m)?;
        }
        let top = alloc_numpy(rec, &plan.shape, &bottoms[0])?;
        let (n_out, n_sum) = (plan.out_at[0].len(), plan.sum_at[0].len());
        if n_out == 0 {
            return Ok(vec![top]);
        }
        // the output's positions, then each operand's output offsets, then its summed ones
        let table: Vec<u32> = self
            .out_positions(&plan, &top.numpy_strides())
            .iter()
            .chain(plan.out_at.iter().flatten())
            .chain(plan.sum_at.iter().flatten())
            .map(|&v| index_word(pipeline, v as isize, "an offset"))
            .collect::<Result<_>>()?;
        let table = rec.context().upload(bytemuck::cast_slice(&table))?;
        let mut resources: Vec<Resource<'_>> = (0..GPU_OPERANDS)
            .map(|b| bottoms.get(b).unwrap_or(&bottoms[0]).resource())
            .collect();
        resources.push(Resource::Buffer(&table));
        resources.push(top.resource());
        let words = [n_out, n_sum, bottoms.len()]
            .map(|v| index_word(pipeline, v as isize, "a count"))
            .into_iter()
            .collect::<Result<Vec<u32>>>()?;
        let grid = workgroup_rows(rec.context(), n_out.div_ceil(LOCAL), LOCAL);
        rec.dispatch(pipeline, &resources, &words, grid)?;
        Ok(vec![top])
    }
}

/// The offsets `stride · index` over every index of `letters` (sizes `sizes`), the last
/// letter fastest.
fn odometer(letters: &[usize], sizes: &[usize; LETTERS], stride: &[usize; LETTERS]) -> Vec<usize> {
    let mut offsets = vec![0usize];
    for &l in letters {
        offsets = offsets
            .iter()
            .flat_map(|&base| (0..sizes[l]).map(move |i| base + i * stride[l]))
            .collect();
    }
    offsets
}
