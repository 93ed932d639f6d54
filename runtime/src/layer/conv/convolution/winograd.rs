//! Convolution's Winograd F(4×4, 3×3) on the GPU (`conv::winograd_gpu` records it): which
//! layers and shapes take it, and their transformed weights.

use super::{Convolution, GpuConvolution};
use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::layer::contract::GpuSetup;
use crate::layer::conv::window::Pack4Kind;
use crate::layer::conv::winograd_gpu::{self, GpuWinograd, WinogradCall};
use crate::layer::epilogue::Epilogue;
use crate::layer::run_options::RunOptions;
use crate::tensor::GpuMat;

impl Convolution {
    /// Whether this layer can take Winograd on the GPU at all (per shape: [`Self::winograd_on`]).
    fn winograd_fits(&self) -> bool {
        // a pack1 output's layer (outputs not in blocks of 4) takes the plain GEMM
        self.uses_gemm()
            && self.pack4_kind() == Pack4Kind::Blocks
            && !self.gemm_pads_input()
            && winograd_gpu::fits_window(&self.window)
    }

    /// The device side of Winograd for this layer, where it fits and `opt` allows it.
    pub(super) fn winograd_state(
        &self,
        gpu: GpuSetup<'_>,
        opt: &RunOptions,
    ) -> Result<Option<GpuWinograd>> {
        if !(opt.use_winograd_convolution && self.winograd_fits()) {
            return Ok(None);
        }
        winograd_gpu::check_shaders(gpu.ctx, gpu.options)?;
        Ok(Some(GpuWinograd::default()))
    }

    /// Whether a forward onto an output of `ow × oh` takes Winograd.
    pub(super) fn winograd_on(&self, state: &GpuConvolution, out: [usize; 2]) -> bool {
        state.winograd.is_some() && winograd_gpu::large_enough(out, 1)
    }

    /// Records the three steps from pack4 `bottom` into `top` ([`WinogradCall`]).
    pub(super) fn dispatch_winograd(
        &self,
        state: &GpuConvolution,
        rec: &mut Recorder<'_>,
        [bottom, top, bias]: [&GpuMat; 3],
        (words, epilogue): (&[u32], Epilogue<'_>),
    ) -> Result<()> {
        let (Some(winograd), Some(gemm), Some(no_partials)) =
            (&state.winograd, state.gemm, &state.no_partials)
        else {
            return Err(Error::NotLoaded {
                what: "the Winograd weights on the device",
            });
        };
        let gpu = GpuSetup {
            ctx: rec.context(),
            options: state.options,
        };
        let (cin, cout) = (self.window.channels(), self.window.num_output);
        let weights = winograd.weights(gpu, &self.weights, [cin, cout, 1])?;
        let call = WinogradCall {
            gemm,
            options: state.options,
            weights,
            no_partials,
            window: &self.window,
            depth: None,
        };
        call.record(rec, [bottom, top, bias], (words, epilogue))
    }
}
