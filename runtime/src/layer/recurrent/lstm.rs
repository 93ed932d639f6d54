//! LSTM: per unit the gates `i, f, o = σ(·)` and `g = tanh(·)` of `W_xc · x_t + b + W_hc ·
//! h_{t-1}`, the cell `c_t = f · c_{t-1} + i · g` and `h_t = o · tanh(c_t)`, projected to
//! `num_output` by `W_hr` where `3=hidden_size` differs from it; weights per direction
//! `W_xc [4 · hidden][size]` (gates i, f, o, g), the bias `[4][hidden]`, `W_hc [4 · hidden]
//! [num_output]`, then `W_hr [num_output][hidden]` where projected (int8: the first matrices
//! as levels, then their per-row scales). Inputs: the sequence and optionally the initial hidden
//! and cell states; outputs: the sequence and, with three tops, the final hidden and cell
//! states.

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

/// A long short-term memory layer.
#[derive(Default)]
pub struct Lstm {
    r: Recurrent,
    tops: usize,
    gpu: Option<GpuRecurrent>,
}

impl Layer for Lstm {
    fn support(&self) -> Support {
        Support::MANY.gpu_pack1(self.gpu.is_some())
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = self.r.create_gpu(1, gpu, opt)?;
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        match self.gpu.as_mut() {
            Some(state) => self.r.upload_gpu(state, gpu),
            None => Ok(()),
        }
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        self.r.gpu_accepts(bottoms, 2)
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        self.r
            .forward_gpu(self.gpu.ready()?, self.tops, bottoms, rec)
    }

    fn set_top_count(&mut self, count: usize) {
        self.tops = count;
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.r.load_param(pd, Some(3), 4)
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.r.load_model(weights, 4, 4)
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let r = &self.r;
        let (n, hs_n) = (r.num_output, r.hidden);
        let hidden = r.initial(bottoms.get(1), n, "initial hidden state values")?;
        let cells = r.initial(bottoms.get(2), hs_n, "initial cell state values")?;
        let (top, hidden, cells) =
            r.run(first_input(bottoms)?, hidden, cells, |d, xs, h, c, out| {
                let mut sums = vec![0.0f32; 4 * hs_n];
                r.hidden_sums(d, h, &mut sums);
                let dw = &r.dirs[d];
                let b = &dw.bias;
                let gate =
                    |k: usize, q: usize| b[k * hs_n + q] + xs[k * hs_n + q] + sums[k * hs_n + q];
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
            })?;
        let mut tops = vec![top];
        if self.tops > 1 {
            tops.push(Recurrent::state_blob(&hidden)?);
            tops.push(Recurrent::state_blob(&cells)?);
        }
        Ok(tops)
    }
}
