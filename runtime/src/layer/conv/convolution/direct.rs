//! The direct shaders: `convolution` (pack1, any groups), `convolution_pack4` (dense and
//! grouped pack4), `convolution_pack4to1` (dense, pack4 in, pack1 out) and the depthwise pack4 ones (`convolution_dw_tile` staging its window in
//! shared memory where the reach allows, else `convolution_pack4` in its depthwise mode).

use crate::error::Result;
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::contract::GpuSetup;
use crate::layer::conv::window::Pack4Kind;
use crate::layer::epilogue::Epilogue;
use crate::layer::shared::pipelines::block_grid;
use crate::shaders::Shader;
use crate::tensor::GpuMat;

use super::{Convolution, GpuConvolution};
use crate::layer::conv::implicit_gemm::shaped;

/// The fewest output positions for which a pack1 output of one block of 4 channels takes the
/// direct shader (`convolution_pack4to1`) over the GEMM.
const DIRECT_TO_PACK1_POSITIONS: usize = 1 << 16;

/// Output positions along x per invocation of `convolution_pack4to1` (its PX).
const PACK4_TO_1_PX: u32 = 4;

impl Convolution {
    /// The direct shader's weights where a pack4 input's forward to a pack1 output of
    /// `ow × oh` takes it rather than the GEMM into blocks: one block of outputs (an
    /// upscaler's RGB) over a map large enough to fill the device with one invocation per
    /// position. The GEMM's tiles there run 1/16 full and gather each window once per tile:
    /// 64 → 3 channels at 1024² took 1.16 ms through it on an H200, 0.28 ms direct.
    pub(super) fn direct_to_pack1<'a>(
        &self,
        state: &'a GpuConvolution,
        bottom: &GpuMat,
        [ow, oh]: [usize; 2],
    ) -> Option<&'a GpuMat> {
        let large = ow.saturating_mul(oh) >= DIRECT_TO_PACK1_POSITIONS;
        state
            .to_pack1
            .as_ref()
            .filter(|_| bottom.elempack == 4 && large)
    }

    /// Uploads `convolution_pack4to1`'s weights for a GEMM layer of one block of pack1
    /// outputs ([`Self::direct_to_pack1`]); `None` for other layers.
    pub(super) fn upload_to_pack1(&self, gpu: GpuSetup<'_>) -> Result<Option<GpuMat>> {
        let one_block = self.uses_gemm()
            && self.pack4_kind() == Pack4Kind::ToPack1
            && self.window.num_output <= 4;
        if !one_block {
            return Ok(None);
        }
        let module = Shader::ConvolutionPack4to1.module();
        gpu.ctx.fitting_variants(module, gpu.options)?;
        Ok(Some(gpu.upload_values(&self.weights_pack4(), 4)?))
    }

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
        let grid = match (bottom.elempack, shader) {
            // PX positions per invocation along x
            (4, Shader::ConvolutionPack4to1) => {
                let [w, h, blocks] = block_grid(top);
                [w.div_ceil(PACK4_TO_1_PX), h, blocks]
            }
            (4, _) => block_grid(top),
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
