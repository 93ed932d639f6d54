//! LSTM: per unit the gates `i, f, o = σ(·)` and `g = tanh(·)` of `W_xc · x_t + b + W_hc ·
//! h_{t-1}`, the cell `c_t = f · c_{t-1} + i · g` and `h_t = o · tanh(c_t)`, projected to
//! `num_output` by `W_hr` where `3=hidden_size` differs from it; weights per direction
//! `W_xc [4 · hidden][size]` (gates i, f, o, g), the bias `[4][hidden]`, `W_hc [4 · hidden]
//! [num_output]`, then `W_hr [num_output][hidden]` where projected (int8: the first matrices
//! as levels, then their per-row scales). Inputs: the sequence and optionally the initial hidden
//! and cell states; outputs: the sequence and, with three tops, the final hidden and cell
//! states.

use super::layer::{Cell, RecurrentLayer};
use super::{Recurrent, sigmoid};

/// A long short-term memory layer.
pub type Lstm = RecurrentLayer<LstmCell>;

/// LSTM's cell.
pub struct LstmCell;

impl Cell for LstmCell {
    const SHADER: i32 = 1;
    const GATES: usize = 4;
    const BIAS_ROWS: usize = 4;
    const HIDDEN_ID: Option<u32> = Some(3);
    const CELL_STATE: bool = true;

    fn step(r: &Recurrent, d: usize, xs: &[f32], h: &mut [f32], c: &mut [f32], out: &mut [f32]) {
        let hs_n = r.hidden;
        let mut sums = vec![0.0f32; 4 * hs_n];
        r.hidden_sums(d, h, &mut sums);
        let dw = &r.dirs[d];
        let b = &dw.bias;
        let gate = |k: usize, q: usize| b[k * hs_n + q] + xs[k * hs_n + q] + sums[k * hs_n + q];
        let units: Vec<f32> = (0..hs_n)
            .map(|q| {
                let (i, f) = (sigmoid(gate(0, q)), sigmoid(gate(1, q)));
                let (o, g) = (sigmoid(gate(2, q)), gate(3, q).tanh());
                c[q] = f * c[q] + i * g;
                o * c[q].tanh()
            })
            .collect();
        if dw.hr.is_empty() {
            out.copy_from_slice(&units);
        } else {
            for (p, o) in out.iter_mut().enumerate() {
                let w = &dw.hr[p * hs_n..(p + 1) * hs_n];
                *o = w.iter().zip(&units).map(|(a, v)| a * v).sum();
            }
        }
        h.copy_from_slice(out);
    }
}
