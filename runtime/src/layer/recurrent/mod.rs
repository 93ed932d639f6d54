//! Recurrent layers: RNN, LSTM and GRU over a 2-D blob of `T` rows (time steps) of `size`
//! values, `0=num_output 1=weight_data_size 2=direction` (0 forward, 1 reverse, 2 both, their
//! outputs side by side) `8=int8_scale_term`; LSTM's `3=hidden_size` too. Inputs: the sequence,
//! and optionally the initial hidden state (and LSTM's cell state), one row per direction;
//! outputs: the `T × (num_output · directions)` sequence, and with two (three) tops the final
//! states. What they share is here ([`Recurrent`]): the weights per direction, the input's
//! products for every step at once (one GEMM), the hidden state's per step, and ncnn's int8
//! inference (weights as int8 levels with per-row scales; the input and the hidden state
//! quantized dynamically per step, `127 / absmax`, their level products summed exactly and
//! descaled). Each type's file holds its cell; `layer` the Layer all three are, over it; `gpu`
//! the device side they share.

mod gpu;
pub mod gru;
pub mod layer;
pub mod lstm;
pub mod rnn;

pub(crate) use gpu::GpuRecurrent;

use crate::error::{Error, InputError, Result};
use crate::layer::params::ParamDict;
use crate::layer::shared::cpu_gemm::{MatMut, MatRef, gemm};
use crate::layer::shared::int8::scale_for;
use crate::layer::shared::int8_scales::level;
use crate::layer::weights::Weights;
use crate::tensor::Mat;
use rayon::prelude::*;

/// A state per direction (hidden or cell).
pub(crate) type States = Vec<Vec<f32>>;

/// One direction's weights: the input's `[rows][size]`, the bias `[bias rows][hidden]`, the
/// hidden state's `[rows][num_output]`, LSTM's projection `[num_output][hidden]` (empty
/// without one); int8: the two products' per-row scales.
#[derive(Default)]
pub(crate) struct DirectionWeights {
    pub xc: Vec<f32>,
    pub bias: Vec<f32>,
    pub hc: Vec<f32>,
    pub hr: Vec<f32>,
    pub scales: Option<[Vec<f32>; 2]>,
}

/// The params and weights of a recurrent layer, and the products its cells take (opaque outside
/// the crate: what a [`layer::Cell`] reads).
#[derive(Default)]
pub struct Recurrent {
    pub(crate) num_output: usize,
    /// The cell's width (LSTM's `3=hidden_size`; the others' `num_output`).
    pub(crate) hidden: usize,
    pub(crate) weight_data_size: usize,
    pub(crate) direction: i32,
    pub(crate) int8: bool,
    /// Input values per step, from the weights.
    pub(crate) size: usize,
    pub(crate) dirs: Vec<DirectionWeights>,
}

impl Recurrent {
    /// Reads the params of a cell of `gates` gate rows per hidden unit; `hidden_id` the type's
    /// hidden-size param, if any. The weight count must fit the directions and gate rows.
    pub(crate) fn load_param(
        &mut self,
        pd: &ParamDict,
        hidden_id: Option<u32>,
        gates: usize,
    ) -> Result<()> {
        let positive = |id: u32, v: i32| match v {
            1.. => Ok(v as usize),
            _ => Err(Error::BadParam {
                id,
                value: v.to_string(),
                allowed: "a positive count",
            }),
        };
        self.num_output = positive(0, pd.int(0, 0))?;
        self.weight_data_size = positive(1, pd.int(1, 0))?;
        self.direction = pd.int_in(2, 0, 0..=2, "0 forward, 1 reverse or 2 both")?;
        self.hidden = match hidden_id {
            Some(id) => positive(id, pd.int(id, self.num_output as i32))?,
            None => self.num_output,
        };
        self.int8 = pd.int(8, 0) != 0;
        let rows = self.directions() * gates * self.hidden;
        if !self.weight_data_size.is_multiple_of(rows) {
            return Err(Error::BadParam {
                id: 1,
                value: self.weight_data_size.to_string(),
                allowed: "a weight_data_size of directions x gates x hidden x input size",
            });
        }
        self.size = self.weight_data_size / rows;
        Ok(())
    }

    /// Directions: 2 for `direction` 2, else 1.
    pub(crate) fn directions(&self) -> usize {
        if self.direction == 2 { 2 } else { 1 }
    }

    /// Reads the weights in ncnn's order for a cell of `gates` gate rows per hidden unit (as
    /// given to `load_param`) and `bias_rows` bias rows, with LSTM's projection where `hidden`
    /// differs from the outputs.
    pub(crate) fn load_model(
        &mut self,
        w: &mut Weights<'_>,
        gates: usize,
        bias_rows: usize,
    ) -> Result<()> {
        let dirs = self.directions();
        let rows = gates * self.hidden;
        let split = |v: Vec<f32>, n: usize| -> Vec<Vec<f32>> {
            v.chunks_exact(n.max(1)).map(<[f32]>::to_vec).collect()
        };
        let xc = split(w.load(self.size * rows * dirs, 0)?, self.size * rows);
        let bias = split(
            w.load(self.hidden * bias_rows * dirs, 0)?,
            self.hidden * bias_rows,
        );
        let hc = split(
            w.load(self.num_output * rows * dirs, 0)?,
            self.num_output * rows,
        );
        let hr = match self.num_output != self.hidden {
            true => split(
                w.load(self.hidden * self.num_output * dirs, 0)?,
                self.hidden * self.num_output,
            ),
            false => vec![Vec::new(); dirs],
        };
        let scales = match self.int8 {
            true => {
                let x = split(w.load(rows * dirs, 1)?, rows);
                let h = split(w.load(rows * dirs, 1)?, rows);
                x.into_iter().zip(h).map(|(x, h)| Some([x, h])).collect()
            }
            false => vec![None; dirs],
        };
        self.dirs = (0..dirs)
            .map(|d| DirectionWeights {
                xc: xc[d].clone(),
                bias: bias[d].clone(),
                hc: hc[d].clone(),
                hr: hr[d].clone(),
                scales: scales[d].clone(),
            })
            .collect();
        Ok(())
    }

    /// Checks the sequence (2-D, `size` wide) and gives its steps.
    pub(crate) fn steps(&self, x: &Mat) -> Result<usize> {
        if x.dims != 2 {
            return Err(InputError::Dims {
                got: x.dims,
                takes: "2-D blobs (one row of input values per time step)",
            }
            .into());
        }
        if x.w != self.size {
            return Err(InputError::Values {
                what: "values per time step (the input weights' width)",
                got: x.w,
                expected: self.size,
            }
            .into());
        }
        Ok(x.h)
    }

    /// The initial state of `width` per direction: the given blob's rows (one per direction,
    /// `what` naming it for errors), or zeros.
    pub(crate) fn initial(
        &self,
        given: Option<&Mat>,
        width: usize,
        what: &'static str,
    ) -> Result<Vec<Vec<f32>>> {
        let dirs = self.directions();
        let Some(m) = given else {
            return Ok(vec![vec![0.0; width]; dirs]);
        };
        let v = m.to_values();
        if v.len() != width * dirs {
            return Err(InputError::Values {
                what,
                got: v.len(),
                expected: width * dirs,
            }
            .into());
        }
        Ok(v.chunks_exact(width).map(<[f32]>::to_vec).collect())
    }

    /// The input's gate sums for every step of direction `d`: `[T][rows]`, `W_xc · x_t` (int8:
    /// the levels' exact sums, descaled by the step's and the row's scales).
    pub(crate) fn input_sums(&self, d: usize, x: &[f32], steps: usize) -> Vec<f32> {
        let dw = &self.dirs[d];
        let rows = dw.xc.len() / self.size.max(1);
        let mut out = vec![0.0f32; steps * rows];
        match &dw.scales {
            None => gemm(
                MatRef::rows(x, steps, self.size, self.size),
                MatRef::rows(&dw.xc, rows, self.size, self.size).t(),
                MatMut::rows(&mut out, steps, rows, rows),
                false,
            ),
            Some([xs, _]) => {
                for (t, o) in out.chunks_exact_mut(rows.max(1)).enumerate() {
                    let row = &x[t * self.size..(t + 1) * self.size];
                    int8_products(&dw.xc, row, xs, o);
                }
            }
        }
        out
    }

    /// The hidden state's gate sums of direction `d`: `W_hc · h` per row (int8: `h` quantized
    /// with its own scale, 1 where it is all zero).
    pub(crate) fn hidden_sums(&self, d: usize, h: &[f32], out: &mut [f32]) {
        let dw = &self.dirs[d];
        let n = self.num_output;
        match &dw.scales {
            None => {
                let row = |(r, o): (usize, &mut f32)| *o = dot(&dw.hc[r * n..(r + 1) * n], h);
                // a step of a large layer across the threads (an LSTM of 512 units: 2048 rows
                // of 512), a small one on this thread (a task costs more than its sums)
                if out.len() * n >= 1 << 16 {
                    out.par_iter_mut().enumerate().for_each(row);
                } else {
                    out.iter_mut().enumerate().for_each(row);
                }
            }
            Some([_, hs]) => int8_products(&dw.hc, h, hs, out),
        }
    }

    /// Runs every direction: `step(d, xs_t, h, state, out_t)` advances one step of direction
    /// `d` given its input sums (updating `h`, its own `state` and writing the output row
    /// `out_t`), forward for direction 0 (unless `direction` is 1) and reverse for the second.
    /// The output `[T][num_output · directions]`, and the final hidden states and states.
    pub(crate) fn run(
        &self,
        x: &Mat,
        mut hidden: Vec<Vec<f32>>,
        mut state: Vec<Vec<f32>>,
        step: impl Fn(usize, &[f32], &mut Vec<f32>, &mut Vec<f32>, &mut [f32]),
    ) -> Result<(Mat, States, States)> {
        let steps = self.steps(x)?;
        let values = x.to_values();
        let dirs = self.directions();
        let width = self.num_output * dirs;
        let mut out = vec![0.0f32; steps * width];
        for d in 0..dirs {
            let sums = self.input_sums(d, &values, steps);
            let rows = sums.len() / steps.max(1);
            let reverse = self.direction == 1 || d == 1;
            let mut row = vec![0.0f32; self.num_output];
            for t in 0..steps {
                let ti = if reverse { steps - 1 - t } else { t };
                step(
                    d,
                    &sums[ti * rows..(ti + 1) * rows],
                    &mut hidden[d],
                    &mut state[d],
                    &mut row,
                );
                out[ti * width + d * self.num_output..][..self.num_output].copy_from_slice(&row);
            }
        }
        let top = Mat::from_shape_values(2, [width, steps, 1, 1], &out)?;
        Ok((top, hidden, state))
    }

    /// The final states as blobs of one row per direction.
    pub(crate) fn state_blob(rows: &[Vec<f32>]) -> Result<Mat> {
        let w = rows.first().map_or(0, Vec::len);
        Mat::from_shape_values(2, [w, rows.len(), 1, 1], &rows.concat())
    }
}

/// ncnn's int8 products of one vector (the step's input or the hidden state): `v` quantized
/// with its own scale (`127 / absmax`, 1 where all are zero), each row of the int8 `weights`
/// (levels, `v.len()` a row) summed exactly with those levels, descaled by both scales.
fn int8_products(weights: &[f32], v: &[f32], row_scales: &[f32], out: &mut [f32]) {
    let n = v.len();
    let s = scale_for(v.iter().fold(0.0f32, |m, x| m.max(x.abs())));
    let q: Vec<f32> = v.iter().map(|x| level(x * s)).collect();
    for (r, o) in out.iter_mut().enumerate() {
        let w = &weights[r * n..(r + 1) * n];
        let sum: f32 = w.iter().zip(&q).map(|(a, b)| a * b).sum();
        *o = sum * (1.0 / s * (1.0 / row_scales[r]));
    }
}

/// `a · b` in eight running sums (which the compiler keeps in vector registers: one sum in order
/// is a chain of dependent additions).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ac.zip(bc) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// The logistic function, as ncnn's cells take it.
pub(crate) fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}
