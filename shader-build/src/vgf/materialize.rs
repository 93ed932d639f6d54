//! Shaders ahead of time: a custom op's GLSL (through fpshader's compiler, so the ncnn extension
//! works), HLSL (shaderc's HLSL front end) or SPIR-V is turned into SPIR-V and checked against
//! its attributes by reflection. The ML operations' generated shaders ([`super::lower`]) are
//! compiled here too, for `--compute-only`.

use crate::meta::DescriptorKind;
use crate::{Compiler, OptionSet, reflect};

use super::custom_op::{ShaderAttrs, ShaderCode};
use super::format::{DESCRIPTOR_TYPE_TENSOR_ARM, descriptor_type_name};
use super::lower::LowerError;

/// Why a shader cannot be materialized or an ML operation lowered.
#[derive(Debug, thiserror::Error)]
pub enum MaterializeError {
    /// The shader does not compile.
    #[error("custom shader op `{op}`: {source}")]
    Compile {
        /// The operator name.
        op: String,
        /// The compiler's error (GLSL errors name the line in the op's source).
        source: Box<crate::Error>,
    },
    /// The SPIR-V contradicts the attributes.
    #[error("custom shader op `{op}`: the shader {problem}")]
    Mismatch {
        /// The operator name.
        op: String,
        /// What disagrees.
        problem: String,
    },
    /// An ML operation the compute lowering does not have.
    #[error(transparent)]
    Lower(#[from] LowerError),
}

/// The SPIR-V of a custom op's shader, validated against `attrs`; `None` for a placeholder.
pub fn shader(
    compiler: &Compiler,
    op: &str,
    attrs: &ShaderAttrs,
) -> Result<Option<Vec<u32>>, MaterializeError> {
    let compile_err = |e: crate::Error| MaterializeError::Compile {
        op: op.to_string(),
        source: Box::new(e),
    };
    let words = match &attrs.code {
        None => return Ok(None),
        Some(ShaderCode::Spirv(words)) => words.clone(),
        Some(ShaderCode::Glsl(text)) => {
            // sfp/afp follow the tensors: fp16 storage when the op's buffers are R16_SFLOAT
            let fp16 = attrs
                .inputs
                .iter()
                .chain(&attrs.outputs)
                .any(|r| r.format == 76);
            let set = if fp16 {
                OptionSet::parse("fp16s").map_err(|e| compile_err(e.into()))?
            } else {
                OptionSet::default()
            };
            compiler.compile_str(op, text, set).map_err(compile_err)?
        }
        Some(ShaderCode::Hlsl(text)) => compiler
            .compile_hlsl(op, text, &attrs.entry_point)
            .map_err(compile_err)?,
    };
    validate(op, &words, attrs)?;
    Ok(Some(words))
}

fn validate(op: &str, words: &[u32], attrs: &ShaderAttrs) -> Result<(), MaterializeError> {
    let mismatch = |problem: String| MaterializeError::Mismatch {
        op: op.to_string(),
        problem,
    };
    let r = reflect::reflect(words).map_err(|e| mismatch(format!("is not valid SPIR-V: {e}")))?;
    if attrs
        .code
        .as_ref()
        .is_some_and(|c| !matches!(c, ShaderCode::Hlsl(_)))
        && r.entry_point != attrs.entry_point
    {
        return Err(mismatch(format!(
            "entry point is `{}`, the attributes say `{}`",
            r.entry_point, attrs.entry_point
        )));
    }
    if let Some(size) = r
        .local_size
        .default_size()
        .filter(|s| *s != attrs.workgroup_size)
    {
        return Err(mismatch(format!(
            "declares local size {size:?}, the attributes' workgroup_sizes is {:?}",
            attrs.workgroup_size
        )));
    }
    let described: Vec<_> = attrs
        .inputs
        .iter()
        .enumerate()
        .map(|(i, r)| (format!("input_{i}"), r))
        .chain(
            attrs
                .outputs
                .iter()
                .enumerate()
                .map(|(i, r)| (format!("output_{i}"), r)),
        )
        .collect();
    for (name, res) in &described {
        if res.descriptor_type == DESCRIPTOR_TYPE_TENSOR_ARM {
            return Err(mismatch(format!(
                "{name} is a VK_DESCRIPTOR_TYPE_TENSOR_ARM: tensor descriptors (SPV_ARM_tensors) \
                 are not supported by fpshader; use VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"
            )));
        }
        let Some(b) = r
            .bindings
            .iter()
            .find(|b| b.set == res.set && b.binding == res.binding)
        else {
            return Err(mismatch(format!(
                "declares nothing at set {} binding {} ({name})",
                res.set, res.binding
            )));
        };
        let expected = match res.descriptor_type {
            0 => DescriptorKind::Sampler,
            1 => DescriptorKind::CombinedImageSampler,
            2 => DescriptorKind::SampledImage,
            3 => DescriptorKind::StorageImage,
            4 => DescriptorKind::UniformTexelBuffer,
            5 => DescriptorKind::StorageTexelBuffer,
            6 | 8 => DescriptorKind::UniformBuffer,
            _ => DescriptorKind::StorageBuffer,
        };
        if b.kind != expected {
            return Err(mismatch(format!(
                "declares {:?} at set {} binding {}, the attributes say {} ({name})",
                b.kind,
                res.set,
                res.binding,
                descriptor_type_name(res.descriptor_type).unwrap_or("?")
            )));
        }
    }
    if let Some(b) = r.bindings.iter().find(|b| {
        !described
            .iter()
            .any(|(_, res)| res.set == b.set && res.binding == b.binding)
    }) {
        return Err(mismatch(format!(
            "declares set {} binding {} `{}` that no input or output attribute describes",
            b.set, b.binding, b.name
        )));
    }
    Ok(())
}
