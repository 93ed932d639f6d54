//! GRU: per unit the reset and update gates `r, u = σ(W_x · x_t + b + W_h · h_{t-1})`, the new
//! gate `n = tanh(W_xn · x_t + b_wn + r · (W_hn · h_{t-1} + b_bn))`, then
//! `h_t = (1 - u) · n + u · h_{t-1}`; weights per direction `W_xc [3 · num_output][size]` (reset,
//! update, new), the bias `[4][num_output]` (reset, update, new's input and hidden parts), then
//! `W_hc [3 · num_output][num_output]` (int8: the matrices as levels, then their per-row
//! scales). Inputs: the sequence and optionally the initial hidden state; outputs: the sequence
//! and, with two tops, the final hidden state.

use super::{GpuRecurrent, Recurrent, sigmoid};
use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::first_input;
use crate::layer::weights::Weights;
use crate::tensor::{BlobShape, GpuMat, Mat};

/// A gated recurrent unit layer.
#[derive(Default)]
pub struct Gru {
    r: Recurrent,
    tops: usize,
    gpu: Option<GpuRecurrent>,
}

impl Layer for Gru {
    fn support(&self) -> Support {
        Support::MANY.gpu_pack1(self.gpu.is_some())
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = self.r.create_gpu(2, gpu, opt)?;
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        match self.gpu.as_mut() {
            Some(state) => self.r.upload_gpu(state, gpu),
            None => Ok(()),
        }
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        self.r.gpu_accepts(bottoms, 1)
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        self.r
            .forward_gpu(self.gpu.ready()?, self.tops, bottoms, rec)
    }

    fn set_top_count(&mut self, count: usize) {
        self.tops = count;
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.r.load_param(pd, None, 3)
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.r.load_model(weights, 3, 4)
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let r = &self.r;
        let n = r.num_output;
        let hidden = r.initial(bottoms.get(1), n, "initial hidden state values")?;
        let states = vec![Vec::new(); r.directions()];
        let (top, hidden, _) =
            r.run(first_input(bottoms)?, hidden, states, |d, xs, h, _, out| {
                let mut hs = vec![0.0f32; 3 * n];
                r.hidden_sums(d, h, &mut hs);
                let b = &r.dirs[d].bias;
                for (q, o) in out.iter_mut().enumerate() {
                    let reset = sigmoid(b[q] + xs[q] + hs[q]);
                    let update = sigmoid(b[n + q] + xs[n + q] + hs[n + q]);
                    let new =
                        (b[2 * n + q] + reset * (b[3 * n + q] + hs[2 * n + q]) + xs[2 * n + q])
                            .tanh();
                    *o = (1.0 - update) * new + update * h[q];
                }
                h.copy_from_slice(out);
            })?;
        let mut tops = vec![top];
        if self.tops > 1 {
            tops.push(Recurrent::state_blob(&hidden)?);
        }
        Ok(tops)
    }
}
