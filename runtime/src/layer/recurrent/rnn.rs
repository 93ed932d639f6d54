//! RNN: `h_t = tanh(W_xc · x_t + b + W_hc · h_{t-1})`, `num_output` units; weights per direction
//! `W_xc [num_output][size]`, then `b [num_output]`, then `W_hc [num_output][num_output]` (int8:
//! the two matrices as levels, then their per-row scales). Inputs: the sequence and optionally
//! the initial hidden state; outputs: the sequence and, with two tops, the final hidden state.

use super::{GpuRecurrent, Recurrent};
use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::first_input;
use crate::layer::weights::Weights;
use crate::tensor::{BlobShape, GpuMat, Mat};

/// A plain recurrent layer.
#[derive(Default)]
pub struct Rnn {
    r: Recurrent,
    tops: usize,
    gpu: Option<GpuRecurrent>,
}

impl Layer for Rnn {
    fn support(&self) -> Support {
        Support::MANY.gpu_pack1(self.gpu.is_some())
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = self.r.create_gpu(0, gpu, opt)?;
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
        self.r.load_param(pd, None, 1)
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.r.load_model(weights, 1, 1)
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let r = &self.r;
        let n = r.num_output;
        let hidden = r.initial(bottoms.get(1), n, "initial hidden state values")?;
        let states = vec![Vec::new(); r.directions()];
        let (top, hidden, _) =
            r.run(first_input(bottoms)?, hidden, states, |d, xs, h, _, out| {
                let mut hs = vec![0.0f32; n];
                r.hidden_sums(d, h, &mut hs);
                let bias = &r.dirs[d].bias;
                for (q, o) in out.iter_mut().enumerate() {
                    *o = (bias[q] + xs[q] + hs[q]).tanh();
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
