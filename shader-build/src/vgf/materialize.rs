//! Shaders ahead of time: a custom op's GLSL (through fpshader's compiler, so the ncnn extension
//! works), HLSL (shaderc's HLSL front end) or SPIR-V is turned into SPIR-V and checked against
//! its attributes by reflection. The ML operations' generated shaders ([`super::lower`]) are
//! compiled here too, for `--compute-only`.

use crate::meta::{DescriptorKind, LocalSize};
use crate::{Compiler, OptionSet, reflect};

use super::custom_op::{ShaderAttrs, ShaderCode};
use super::file::format::{DESCRIPTOR_TYPE_TENSOR_ARM, descriptor_type_name};
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

/// How a custom op's `workgroup_sizes` is read. Arm's runtime passes it to `vkCmdDispatch` as
/// the workgroup count; its attribute docs and producers (ExecuTorch) write the local size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// The local size: the shader declares that size, none of its own, or a specializable one
    /// (`local_size_x_id`, whose defaults are set to it). The count comes from result 0 (or
    /// `fpshader_workgroup_count`).
    LocalSize {
        /// The specializable size was set to `workgroup_sizes` (its defaults were others).
        specialized: bool,
    },
    /// The workgroup count, as Arm's runtime dispatches it: the shader declares another local
    /// size.
    DispatchCount {
        /// The local size the shader declares.
        declared: [u32; 3],
    },
}

/// A custom op's shader made ready: its SPIR-V (`None` for a placeholder) and how its
/// `workgroup_sizes` reads.
#[derive(Debug)]
pub struct Materialized {
    /// The module.
    pub words: Option<Vec<u32>>,
    /// The reading of `workgroup_sizes`.
    pub reading: Reading,
}

impl Reading {
    /// A line for stderr where the reading is not the plain local size.
    pub fn note(&self, op: &str, workgroup_sizes: [u32; 3]) -> Option<String> {
        match self {
            Reading::LocalSize { specialized: false } => None,
            Reading::LocalSize { specialized: true } => Some(format!(
                "custom shader op `{op}`: workgroup_sizes {workgroup_sizes:?} read as the local \
                 size, written into the shader's specializable local_size_x_id defaults"
            )),
            Reading::DispatchCount { declared } => Some(format!(
                "custom shader op `{op}`: workgroup_sizes {workgroup_sizes:?} differs from the \
                 local size {declared:?} the shader declares: read as the workgroup count, as \
                 Arm's runtime dispatches it"
            )),
        }
    }
}

/// The SPIR-V of a custom op's shader, validated against `attrs`, and the reading of its
/// `workgroup_sizes`.
pub fn shader(
    compiler: &Compiler,
    op: &str,
    attrs: &ShaderAttrs,
) -> Result<Materialized, MaterializeError> {
    let compile_err = |e: crate::Error| MaterializeError::Compile {
        op: op.to_string(),
        source: Box::new(e),
    };
    let mut words = match &attrs.code {
        None => {
            return Ok(Materialized {
                words: None,
                reading: Reading::LocalSize { specialized: false },
            });
        }
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
    let reading = validate(op, &mut words, attrs)?;
    Ok(Materialized {
        words: Some(words),
        reading,
    })
}

/// Checks `words` against `attrs`; the reading of `workgroup_sizes`, a specializable local
/// size set to it in `words`.
fn validate(op: &str, words: &mut [u32], attrs: &ShaderAttrs) -> Result<Reading, MaterializeError> {
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
    let wanted = attrs.workgroup_size;
    let reading = match &r.local_size {
        LocalSize::Absent => Reading::LocalSize { specialized: false },
        LocalSize::Literal { size, .. } if *size == wanted => {
            Reading::LocalSize { specialized: false }
        }
        LocalSize::Id { size, spec_ids } | LocalSize::BuiltIn { size, spec_ids }
            if *size != wanted && (0..3).all(|i| size[i] == wanted[i] || spec_ids[i].is_some()) =>
        {
            for (i, id) in spec_ids.iter().enumerate() {
                let Some(sc) = id.and_then(|id| r.spec_constants.iter().find(|c| c.id == id))
                else {
                    continue;
                };
                let at = sc.word_offset as usize;
                *words.get_mut(at).ok_or_else(|| {
                    mismatch(format!(
                        "is malformed: spec constant word {at} out of range"
                    ))
                })? = wanted[i];
            }
            Reading::LocalSize { specialized: true }
        }
        LocalSize::Id { size, .. } | LocalSize::BuiltIn { size, .. } if *size == wanted => {
            Reading::LocalSize { specialized: false }
        }
        LocalSize::Literal { size, .. }
        | LocalSize::Id { size, .. }
        | LocalSize::BuiltIn { size, .. } => {
            if attrs.workgroup_count.is_some() {
                return Err(mismatch(format!(
                    "declares local size {size:?}: workgroup_sizes {wanted:?} would be the \
                     workgroup count, which fpshader_workgroup_count also gives"
                )));
            }
            Reading::DispatchCount { declared: *size }
        }
    };
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
            DESCRIPTOR_TYPE_TENSOR_ARM => DescriptorKind::Tensor,
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
    Ok(reading)
}
