//! RNN: `h_t = tanh(W_xc · x_t + b + W_hc · h_{t-1})`, `num_output` units; weights per direction
//! `W_xc [num_output][size]`, then `b [num_output]`, then `W_hc [num_output][num_output]` (int8:
//! the two matrices as levels, then their per-row scales). Inputs: the sequence and optionally
//! the initial hidden state; outputs: the sequence and, with two tops, the final hidden state.

use super::Recurrent;
use super::layer::{Cell, RecurrentLayer};

/// A plain recurrent layer.
pub type Rnn = RecurrentLayer<RnnCell>;

/// RNN's cell.
pub struct RnnCell;

impl Cell for RnnCell {
    const SHADER: i32 = 0;
    const GATES: usize = 1;
    const BIAS_ROWS: usize = 1;
    const HIDDEN_ID: Option<u32> = None;
    const CELL_STATE: bool = false;

    fn step(r: &Recurrent, d: usize, xs: &[f32], h: &mut [f32], _c: &mut [f32], out: &mut [f32]) {
        let mut hs = vec![0.0f32; r.num_output];
        r.hidden_sums(d, h, &mut hs);
        let bias = &r.dirs[d].bias;
        for (q, o) in out.iter_mut().enumerate() {
            *o = (bias[q] + xs[q] + hs[q]).tanh();
        }
        h.copy_from_slice(out);
    }
}
