//! The one Layer implementation the recurrent types share, over their [`Cell`]: params, weights,
//! the inputs and outputs of states, the device side.

use std::marker::PhantomData;

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

/// What sets one recurrent type apart: its gates, its bias and its cell.
pub trait Cell: Send + Sync + 'static {
    /// `recurrent.comp`'s cell constant (0 RNN, 1 LSTM, 2 GRU).
    const SHADER: i32;
    /// Gate rows per unit.
    const GATES: usize;
    /// Bias rows per direction.
    const BIAS_ROWS: usize;
    /// The hidden-size param, if the type has one (LSTM's `3=`).
    const HIDDEN_ID: Option<u32>;
    /// States besides the hidden one (LSTM's cell).
    const CELL_STATE: bool;

    /// One step of direction `d` on the CPU: the input's sums `xs` (every gate row), the hidden
    /// state `h` and the cell state `c` updated, the output row written.
    fn step(r: &Recurrent, d: usize, xs: &[f32], h: &mut [f32], c: &mut [f32], out: &mut [f32]);
}

/// A recurrent layer of cell `C`.
pub struct RecurrentLayer<C> {
    r: Recurrent,
    tops: usize,
    gpu: Option<GpuRecurrent>,
    cell: PhantomData<C>,
}

impl<C> Default for RecurrentLayer<C> {
    fn default() -> Self {
        RecurrentLayer {
            r: Recurrent::default(),
            tops: 1,
            gpu: None,
            cell: PhantomData,
        }
    }
}

impl<C: Cell> Layer for RecurrentLayer<C> {
    fn support(&self) -> Support {
        Support::MANY.gpu_pack1(self.gpu.is_some())
    }

    fn set_top_count(&mut self, count: usize) {
        self.tops = count;
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.r.load_param(pd, C::HIDDEN_ID, C::GATES)
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.r.load_model(weights, C::GATES, C::BIAS_ROWS)
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = self.r.create_gpu(C::SHADER, gpu, opt)?;
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        match self.gpu.as_mut() {
            Some(state) => self.r.upload_gpu(state, gpu),
            None => Ok(()),
        }
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        self.r.gpu_accepts(bottoms, 1 + usize::from(C::CELL_STATE))
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        self.r
            .forward_gpu(self.gpu.ready()?, self.tops, bottoms, rec)
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let r = &self.r;
        let hidden = r.initial(bottoms.get(1), r.num_output, "initial hidden state values")?;
        let cells = match C::CELL_STATE {
            true => r.initial(bottoms.get(2), r.hidden, "initial cell state values")?,
            false => vec![Vec::new(); r.directions()],
        };
        let (top, hidden, cells) =
            r.run(first_input(bottoms)?, hidden, cells, |d, xs, h, c, out| {
                C::step(r, d, xs, h, c, out)
            })?;
        let mut tops = vec![top];
        if self.tops > 1 {
            tops.push(Recurrent::state_blob(&hidden)?);
            if C::CELL_STATE {
                tops.push(Recurrent::state_blob(&cells)?);
            }
        }
        Ok(tops)
    }
}
