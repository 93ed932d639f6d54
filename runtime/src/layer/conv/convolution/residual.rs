//! Convolution's forward with a residual sum in its epilogue (the net's fusion of the Eltwise
//! or BinaryOp sum after it, [`crate::layer::Layer::forward_gpu_residual`]): the implicit
//! GEMM's, Winograd's output transform, or the direct pack4 shaders' where the layer is
//! grouped or depthwise.

use super::Convolution;
use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::conv::window::Pack4Kind;
use crate::layer::epilogue::{Epilogue, FusedActivation};
use crate::layer::shared::pipelines::DeviceSide;
use crate::shaders::Shader;
use crate::tensor::GpuMat;

impl Convolution {
    /// The forward of pack4 `bottom` with `residual` added to each output value before `act`
    /// (the layer has no activation of its own), where this input takes the implicit GEMM,
    /// Winograd (its output transform adds it) or a direct pack4 shader of one output per
    /// block, and the output has the
    /// residual's shape and layout; `None`, with nothing recorded, otherwise.
    pub(super) fn forward_residual(
        &self,
        bottom: &GpuMat,
        residual: &GpuMat,
        act: Option<FusedActivation>,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        let state = self.gpu.ready()?;
        let (Some(weights), Some(bias), Some(shader)) =
            (&state.weights4, &state.bias4, state.pack4)
        else {
            return Ok(None);
        };
        let Ok(geo) = self.geometry(bottom.w, bottom.h) else {
            return Ok(None);
        };
        let whole_blocks = (bottom.dims, bottom.elempack) == (3, 4)
            && bottom.c * 4 == self.window.channels()
            && self.window.num_output.is_multiple_of(4);
        let kind = self.pack4_kind();
        let gemm = state.gemm.is_some() && kind == Pack4Kind::Blocks;
        let direct = matches!(shader, Shader::ConvolutionPack4 | Shader::ConvolutionDwTile)
            && matches!(kind, Pack4Kind::Blocks | Pack4Kind::Depthwise);
        let winograd = gemm && self.winograd_on(state, geo.out);
        if !whole_blocks || !(gemm || direct) {
            return Ok(None);
        }
        let blocks = self.window.num_output / 4;
        let (top, words) = self.gpu_output(
            rec.context(),
            bottom,
            geo,
            (self.out_dims(), blocks, 4),
            None,
        )?;
        let layout = |m: &GpuMat| (m.dims, [m.w, m.h, m.d, m.c, m.elempack, m.cstep], m.format);
        if layout(residual) != layout(&top) || residual.options != top.options {
            return Ok(None);
        }
        let epilogue = Epilogue {
            act,
            residual: Some(residual),
        };
        let buffers = [bottom, &top, weights, bias];
        if winograd {
            self.dispatch_winograd(state, rec, [bottom, &top, bias], (&words, epilogue))?;
        } else if gemm {
            self.dispatch_gemm(state, rec, buffers, (&words, epilogue))?;
        } else {
            self.dispatch_direct(state, rec, shader, buffers, (&words, [None; 2], epilogue))?;
        }
        Ok(Some(top))
    }
}
