//! The direct shaders: `convolution` (pack1, any groups), `convolution_pack4` (dense and
//! grouped pack4), `convolution_pack4to1` (dense, pack4 in, pack1 out) and the depthwise pack4 ones (`convolution_dw_tile` staging its window in
//! shared memory where the reach allows, else `convolution_pack4` in its depthwise mode).

use crate::error::Result;
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::conv::window::Pack4Kind;
use crate::layer::epilogue::Epilogue;
use crate::layer::shared::pipelines::block_grid;
use crate::shaders::Shader;
use crate::tensor::GpuMat;

use super::{Convolution, GpuConvolution};
use crate::layer::conv::implicit_gemm::shaped;

impl Convolution {
    /// Records `shader` from `bottom` into `top`, one invocation per output value (block);
    /// with an int8 layer's input and output scales in `quant`, its input and output
    /// fake-quantized in the same dispatch; with the epilogue's activation in place of the
    /// layer's own, and its residual added before it (the pack4 shaders of one output per
    /// block: `convolution_pack4`, `convolution_dw_tile`).
    pub(super) fn dispatch_direct(
        &self,
        state: &GpuConvolution,
        rec: &mut Recorder<'_>,
        shader: Shader,
        [bottom, top, weights, bias]: [&GpuMat; 4],
        (words, quant, epilogue): (&[u32], [Option<f32>; 2], Epilogue<'_>),
    ) -> Result<()> {
        let kind = if bottom.elempack == 4 {
            self.pack4_kind()
        } else {
            Pack4Kind::None
        };
        let mut values = self.window.spec_with(kind, epilogue.act);
        let residual = matches!(shader, Shader::ConvolutionPack4 | Shader::ConvolutionDwTile);
        if residual {
            values.push((16, SpecValue::I32(i32::from(epilogue.residual.is_some()))));
        }
        // (the float layers' pipelines keep their constants)
        let scales = (28..).zip(quant).filter_map(|(id, s)| Some((id, s?)));
        values.extend(scales.map(|(id, s)| (id, SpecValue::F32(s))));
        let spec = shaped(values, words);
        let pipeline = rec
            .context()
            .pipeline(shader.module(), state.options, &spec)?;
        let grid = match bottom.elempack {
            4 => block_grid(top),
            _ => top.grid(),
        };
        if residual {
            // the residual's binding, or a stand-in (read-only, as the bias)
            let added = epilogue.residual.unwrap_or(bias);
            return rec.dispatch(&pipeline, &[bottom, top, weights, bias, added], words, grid);
        }
        rec.dispatch(&pipeline, &[bottom, top, weights, bias], words, grid)
    }
}
