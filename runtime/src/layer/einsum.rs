//! Einsum: `0=equation` (its characters as an int array, as pnnx writes it); as many inputs as
//! the equation has operands. ncnn's set of equations, the form pnnx normalizes them to: the
//! trace `ii`, or operands lettered from `i` to `x` and an output lettered `i`, `ij`, `ijk` or
//! `ijkl`; every letter not in the output is summed over. A letter repeated within an
//! operand takes its diagonal. Operands are 1-D to 4-D blobs, their axes outermost first.

use rayon::prelude::*;

use crate::error::{Error, InputError, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::grain::min_items;
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::view::dense_values;
use crate::tensor::Mat;

/// Letters an operand may use: `i` to `x`.
const LETTERS: usize = 16;

/// A sum of products over lettered axes.
#[derive(Default)]
pub struct Einsum {
    /// Each operand's letters (0 for `i`).
    operands: Vec<Vec<usize>>,
    /// How many leading letters the output has (`i`, `ij`, …).
    out_dims: usize,
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
        Ok(Einsum { operands, out_dims })
    }
}

impl Layer for Einsum {
    fn support(&self) -> Support {
        Support::MANY
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

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        if bottoms.len() != self.operands.len() {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "one per operand of the equation",
            }
            .into());
        }
        // each letter's size, and each operand's stride per letter (a repeated letter's
        // strides add up: its diagonal)
        let mut sizes = [0usize; LETTERS];
        let mut strides = vec![[0usize; LETTERS]; bottoms.len()];
        for (b, (m, letters)) in bottoms.iter().zip(&self.operands).enumerate() {
            let shape = m.numpy_shape();
            if shape.len() != letters.len() {
                return Err(InputError::Dims {
                    got: m.dims,
                    takes: "as many axes as its operand has letters",
                }
                .into());
            }
            let mut stride = 1;
            for (&axis, &letter) in shape.iter().zip(letters).rev() {
                if sizes[letter] != 0 && sizes[letter] != axis {
                    return Err(InputError::Mismatch {
                        a: shape.clone(),
                        b: bottoms[0].numpy_shape(),
                        why: "are operands whose axes of one letter differ in size",
                    }
                    .into());
                }
                sizes[letter] = axis;
                strides[b][letter] += stride;
                stride *= axis;
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
        let (out_at, sum_at) = (offsets(&out_letters), offsets(&summed));
        let values: Vec<_> = bottoms.iter().map(dense_values).collect();
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
        let shape: Vec<usize> = if self.out_dims == 0 {
            vec![1]
        } else {
            out_letters.iter().map(|&l| sizes[l]).collect()
        };
        Ok(vec![Mat::from_numpy(&shape, &out)?])
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
