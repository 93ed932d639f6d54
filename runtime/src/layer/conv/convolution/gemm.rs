//! Convolution's implicit GEMM forward (dense pack4 layers): [`GemmCall`] with its state.

use super::{Convolution, GpuConvolution};
use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::layer::conv::implicit_gemm::GemmCall;
use crate::layer::epilogue::Epilogue;
use crate::tensor::GpuMat;

impl Convolution {
    /// Records the implicit GEMM (and, when it splits its steps, the pass that adds the
    /// slices) from pack4 `bottom` into `top`, with the residual and activation the net fused
    /// into its epilogue.
    pub(super) fn dispatch_gemm(
        &self,
        state: &GpuConvolution,
        rec: &mut Recorder<'_>,
        buffers: [&GpuMat; 4],
        (words, epilogue): (&[u32], Epilogue<'_>),
    ) -> Result<()> {
        let (Some(no_partials), Some(gemm)) = (&state.no_partials, state.gemm) else {
            return Err(Error::NotLoaded {
                what: "the GEMM's partial-sum buffer on the device",
            });
        };
        let call = GemmCall {
            gemm,
            options: state.options,
            no_partials,
            window: &self.window,
            shape: Vec::new(),
        };
        call.record(rec, buffers, (words, epilogue))
    }
}
