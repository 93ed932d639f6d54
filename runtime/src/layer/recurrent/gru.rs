//! GRU: per unit the reset and update gates `r, u = σ(W_x · x_t + b + W_h · h_{t-1})`, the new
//! gate `n = tanh(W_xn · x_t + b_wn + r · (W_hn · h_{t-1} + b_bn))`, then
//! `h_t = (1 - u) · n + u · h_{t-1}`; weights per direction `W_xc [3 · num_output][size]` (reset,
//! update, new), the bias `[4][num_output]` (reset, update, new's input and hidden parts), then
//! `W_hc [3 · num_output][num_output]` (int8: the matrices as levels, then their per-row
//! scales). Inputs: the sequence and optionally the initial hidden state; outputs: the sequence
//! and, with two tops, the final hidden state.

use super::layer::{Cell, RecurrentLayer};
use super::{Recurrent, sigmoid};

/// A gated recurrent unit layer.
pub type Gru = RecurrentLayer<GruCell>;

/// GRU's cell.
pub struct GruCell;

impl Cell for GruCell {
    const SHADER: i32 = 2;
    const GATES: usize = 3;
    const BIAS_ROWS: usize = 4;
    const HIDDEN_ID: Option<u32> = None;
    const CELL_STATE: bool = false;

    fn step(r: &Recurrent, d: usize, xs: &[f32], h: &mut [f32], _c: &mut [f32], out: &mut [f32]) {
        let n = r.num_output;
        let mut hs = vec![0.0f32; 3 * n];
        r.hidden_sums(d, h, &mut hs);
        let b = &r.dirs[d].bias;
        for (q, o) in out.iter_mut().enumerate() {
            let reset = sigmoid(b[q] + xs[q] + hs[q]);
            let update = sigmoid(b[n + q] + xs[n + q] + hs[n + q]);
            let hidden_part = b[3 * n + q] + hs[2 * n + q];
            let new = (b[2 * n + q] + reset * hidden_part + xs[2 * n + q]).tanh();
            *o = (1.0 - update) * new + update * h[q];
        }
        h.copy_from_slice(out);
    }
}
