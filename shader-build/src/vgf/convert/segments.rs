//! Segments: an ML partition as a graph segment, a lowered or custom shader op as a compute
//! segment, and a constant written by a shader of its own.

use std::collections::BTreeMap;

use super::super::custom_op;
use super::super::file::format::{
    BindingSlot, DescriptorSetInfo, Module, ModuleCode, ModuleType, Segment,
};
use super::super::file::format::{DESCRIPTOR_TYPE_TENSOR_ARM, is_image_descriptor};
use super::super::lower::{self, LOWERED_LOCAL_SIZE};
use super::super::materialize::MaterializeError;
use super::super::partition;
use super::super::tosa::{Op, spirv_write};
use super::ConvertError;
use super::resources::{Builder, View};

impl Builder<'_> {
    /// An ML partition as one graph segment, its module `written` (named `name`).
    pub(super) fn graph_segment(
        &mut self,
        name: String,
        written: spirv_write::GraphSpirv,
        part: &partition::Partition,
    ) -> Result<(), ConvertError> {
        let mut bindings = Vec::new();
        for (binding, &v) in part.inputs.iter().chain(&part.outputs).enumerate() {
            bindings.push(BindingSlot {
                binding: binding as u32,
                mrt_index: self.view(v, View::Tensor)?,
            });
        }
        let constants = written
            .constants
            .iter()
            .map(|&v| self.graph_constant(v))
            .collect::<Result<_, _>>()?;
        let inputs = self.slots(&part.inputs, View::Tensor)?;
        let outputs = self.slots(&part.outputs, View::Tensor)?;
        self.vgf.sequence.segments.push(Segment {
            ty: ModuleType::Graph,
            name: String::new(),
            module_index: self.vgf.modules.len() as u32,
            set_infos: sets_list(BTreeMap::from([(0, bindings)])),
            inputs,
            outputs,
            constants,
            dispatch_shape: vec![0, 0, 0],
            push_constant_ranges: Vec::new(),
        });
        self.vgf.modules.push(Module {
            ty: ModuleType::Graph,
            name: name.clone(),
            entry_point: name,
            code: ModuleCode::Spirv(written.words),
        });
        Ok(())
    }

    /// SPIR-V of a generated shader ([`lower`]).
    pub(super) fn compile_lowered(&self, name: &str, glsl: &str) -> Result<Vec<u32>, ConvertError> {
        self.compiler
            .compile_str(name, glsl, crate::OptionSet::default())
            .map_err(|e| {
                ConvertError::from(MaterializeError::Compile {
                    op: name.to_string(),
                    source: Box::new(e),
                })
            })
    }

    /// A segment writing `data` into resource `mrt_index`.
    pub(super) fn constant_segment(
        &mut self,
        name: &str,
        data: &[u8],
        mrt_index: u32,
    ) -> Result<(), ConvertError> {
        let words = crate::meta::le_words(data).ok_or_else(|| ConvertError::Constant {
            value: name.to_string(),
            problem: format!(
                "{} bytes: a constant a compute shader reads must be whole 32-bit words",
                data.len()
            ),
        })?;
        let lowered = lower::constant(&words);
        let module_name = format!("constant_{}", self.constant_segments.len());
        let code = self.compile_lowered(&module_name, &lowered.glsl)?;
        let slot = BindingSlot {
            binding: 0,
            mrt_index,
        };
        let segment = Segment {
            ty: ModuleType::Compute,
            name: String::new(),
            module_index: 0,
            set_infos: sets_list(BTreeMap::from([(0, vec![slot])])),
            inputs: Vec::new(),
            outputs: vec![BindingSlot {
                binding: mrt_index,
                mrt_index,
            }],
            constants: Vec::new(),
            dispatch_shape: vec![
                groups(name, u64::from(lowered.invocations), LOWERED_LOCAL_SIZE)?,
                1,
                1,
            ],
            push_constant_ranges: Vec::new(),
        };
        let module = Module {
            ty: ModuleType::Compute,
            name: module_name,
            entry_point: "main".into(),
            code: ModuleCode::Spirv(code),
        };
        self.constant_segments.push((module, segment));
        Ok(())
    }
}

pub(super) fn groups(op: &str, invocations: u64, local: u32) -> Result<u32, ConvertError> {
    let g = invocations.div_ceil(u64::from(local)).max(1);
    u32::try_from(g)
        .ok()
        .filter(|&g| g <= 65535)
        .ok_or_else(|| ConvertError::Dispatch {
            op: op.to_string(),
            groups: g,
        })
}

/// The workgroup count of a shader op: the explicit one, else one invocation per element of
/// its first result (innermost dimension in x, the next in y, the rest in z).
pub(super) fn shader_dispatch(
    op: &str,
    attrs: &custom_op::ShaderAttrs,
    out: &[i64],
) -> Result<Vec<u32>, ConvertError> {
    if let Some(count) = attrs.workgroup_count {
        return Ok(count.to_vec());
    }
    let dims: Vec<u64> = out.iter().rev().map(|&d| d.max(1) as u64).collect();
    let global = [
        dims.first().copied().unwrap_or(1),
        dims.get(1).copied().unwrap_or(1),
        dims.iter().skip(2).product::<u64>().max(1),
    ];
    (0..3)
        .map(|i| groups(op, global[i], attrs.workgroup_size[i]))
        .collect()
}

/// How a custom shader op sees its operands and results: a tensor where the attributes bind a
/// `VK_DESCRIPTOR_TYPE_TENSOR_ARM` (one resource with the graph's view, as Arm's converter
/// writes it), an image where they bind one (its own resource, of the attributes' format and
/// sampler), else a buffer.
pub(super) fn shader_views(attrs: &custom_op::ShaderAttrs) -> (Vec<View>, Vec<View>) {
    let view = |r: &custom_op::ResourceAttr| match r.descriptor_type {
        DESCRIPTOR_TYPE_TENSOR_ARM => View::Tensor,
        ty if is_image_descriptor(ty) => View::Image {
            descriptor_type: ty,
            format: r.format,
            sampler: r.sampler,
        },
        _ => View::Buffer,
    };
    (
        attrs.inputs.iter().map(view).collect(),
        attrs.outputs.iter().map(view).collect(),
    )
}

/// The parsed attributes of shader op `op` (`None` where they do not parse: the op's own
/// conversion reports that).
pub(super) fn shader_attrs(op: &Op) -> Option<custom_op::ShaderAttrs> {
    let name = op.str_attr("operator_name").unwrap_or("custom");
    let json = op.str_attr("implementation_attrs").unwrap_or("");
    custom_op::parse(name, json, op.operands.len(), op.results.len()).ok()
}

pub(super) fn sets_list(sets: BTreeMap<u32, Vec<BindingSlot>>) -> Vec<DescriptorSetInfo> {
    sets.into_iter()
        .map(|(set, bindings)| DescriptorSetInfo {
            set_index: Some(set),
            bindings,
        })
        .collect()
}
