//! The resource table: a resource per value and view, alias groups where a value is seen both
//! ways, model outputs numbered last as Arm's converter numbers them.

use std::collections::BTreeMap;

use crate::Compiler;

use super::super::file::format::{
    BindingSlot, Constant, DESCRIPTOR_TYPE_STORAGE_BUFFER, DESCRIPTOR_TYPE_TENSOR_ARM, Module,
    Resource, ResourceCategory, SamplerConfig, Segment, Vgf,
};
use super::super::tosa::{Attr, Graph, TensorType, ValueId};
use super::ConvertError;

/// How a segment sees a value: a storage buffer (compute), a tensor (graph), or an image a
/// custom shader binds (its descriptor type, texel format and sampler, as its attributes say).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum View {
    Buffer,
    Tensor,
    Image {
        descriptor_type: u32,
        format: u32,
        sampler: Option<SamplerConfig>,
    },
}

/// One conversion in progress: the graph, the file being written and which resource each
/// value has.
pub(super) struct Builder<'g> {
    pub(super) graph: &'g Graph,
    pub(super) compiler: &'g Compiler,
    pub(super) compute_only: bool,
    pub(super) vgf: Vgf,
    /// The resource of each value in each view it is seen in.
    pub(super) resource_of: BTreeMap<(ValueId, View), u32>,
    /// The VGF constant of each value a graph reads as a graph constant.
    pub(super) constant_of: BTreeMap<ValueId, u32>,
    /// Segments (with their modules) that write constants, run before everything else.
    pub(super) constant_segments: Vec<(Module, Segment)>,
    /// Readings worth telling the user (see [`Converted::notes`]).
    pub(super) notes: Vec<String>,
    /// The OUTPUT resource of each model input the model also returns.
    pub(super) passed_out: BTreeMap<ValueId, u32>,
}

impl Builder<'_> {
    pub(super) fn resource(&mut self, v: ValueId) -> Result<u32, ConvertError> {
        self.view(v, View::Buffer)
    }

    /// The next free alias group.
    pub(super) fn next_alias_group(&self) -> u32 {
        (self.vgf.resources.iter())
            .filter_map(|r| r.alias_group)
            .max()
            .map_or(0, |g| g + 1)
    }

    /// The model input `v`'s resource `input` joins an alias group of its own now, for the
    /// OUTPUT resource that returns it (Arm's converter numbers these groups first).
    pub(super) fn group_passed_out(&mut self, input: u32) {
        if self.vgf.resources[input as usize].alias_group.is_none() {
            let next = self.next_alias_group();
            self.vgf.resources[input as usize].alias_group = Some(next);
        }
    }

    /// The OUTPUT resource of model input `v` returned as a model output, as Arm's converter
    /// writes it: a tensor in the input's alias group (one memory, nothing copied).
    pub(super) fn passed_out(&mut self, v: ValueId, input: u32) -> u32 {
        if let Some(&r) = self.passed_out.get(&v) {
            return r;
        }
        self.group_passed_out(input);
        let of = &self.vgf.resources[input as usize];
        let resource = Resource {
            vk_descriptor_type: Some(DESCRIPTOR_TYPE_TENSOR_ARM),
            category: ResourceCategory::Output,
            ..of.clone()
        };
        let index = self.vgf.resources.len() as u32;
        self.vgf.resources.push(resource);
        self.passed_out.insert(v, index);
        index
    }

    /// The resource of `v` seen as `view`; a value seen both ways gets an entry per view,
    /// the two sharing an alias group (one memory, as Arm's converter writes it).
    pub(super) fn view(&mut self, v: ValueId, view: View) -> Result<u32, ConvertError> {
        if let Some(&r) = self.resource_of.get(&(v, view)) {
            return Ok(r);
        }
        let graph = self.graph;
        let ty = &graph.values[v].ty;
        let category = if graph.inputs.contains(&v) {
            ResourceCategory::Input
        } else if graph.outputs.contains(&v) {
            ResourceCategory::Output
        } else {
            ResourceCategory::Intermediate
        };
        let index = self.vgf.resources.len() as u32;
        let constant = graph
            .producer(v)
            .map(|p| &graph.ops[p])
            .filter(|op| op.kind() == "const");
        if let Some(op) = constant.filter(|_| self.compute_only) {
            // VGF constants feed graph segments only (Arm's runtime resolves a compute
            // segment's bindings among inputs, outputs and intermediates): a compute-only file
            // writes each constant into an intermediate with a shader that holds its bits
            // (with graph segments, an ML partition before the shader passes it on)
            let name = &graph.values[v].name;
            let data = constant_bytes(name, op.attrs.get("values"), ty)?;
            self.constant_segment(name, &data, index)?;
        }
        // a value seen in several views: one alias group (one memory, as Arm's converter
        // writes it)
        let other = (self.resource_of.iter())
            .find(|((value, seen), _)| *value == v && *seen != view)
            .map(|(_, &r)| r);
        let alias_group = other.map(|r| {
            let next = self.next_alias_group();
            *self.vgf.resources[r as usize]
                .alias_group
                .get_or_insert(next)
        });
        let (descriptor_type, format, sampler) = match view {
            View::Buffer => (DESCRIPTOR_TYPE_STORAGE_BUFFER, ty.elem.vk_format(), None),
            View::Tensor => (DESCRIPTOR_TYPE_TENSOR_ARM, ty.elem.vk_format(), None),
            View::Image {
                descriptor_type,
                format,
                sampler,
            } => (descriptor_type, format, sampler),
        };
        self.vgf.resources.push(Resource {
            vk_descriptor_type: Some(descriptor_type),
            vk_format: format,
            category,
            shape: ty.shape.clone(),
            strides: Vec::new(),
            sampler,
            alias_group,
        });
        self.resource_of.insert((v, view), index);
        Ok(index)
    }

    /// The VGF constant (and its CONSTANT resource) holding the data of value `v`.
    pub(super) fn graph_constant(&mut self, v: ValueId) -> Result<u32, ConvertError> {
        if let Some(&c) = self.constant_of.get(&v) {
            return Ok(c);
        }
        let graph = self.graph;
        let ty = &graph.values[v].ty;
        let values = graph
            .producer(v)
            .and_then(|p| graph.ops[p].attrs.get("values"));
        let data = constant_bytes(&graph.values[v].name, values, ty)?;
        let mrt_index = self.vgf.resources.len() as u32;
        self.vgf.resources.push(Resource {
            vk_descriptor_type: None,
            vk_format: ty.elem.vk_format(),
            category: ResourceCategory::Constant,
            shape: ty.shape.clone(),
            strides: Vec::new(),
            sampler: None,
            alias_group: None,
        });
        let c = self.vgf.constants.len() as u32;
        self.vgf.constants.push(Constant {
            mrt_index,
            sparsity_dimension: -1,
            data,
        });
        self.constant_of.insert(v, c);
        Ok(c)
    }

    /// Segment input or output slots of `values` seen as `view`, each resource once (a value
    /// an op takes twice is one input of its segment, as in Arm's files).
    pub(super) fn slots(
        &mut self,
        values: &[ValueId],
        view: View,
    ) -> Result<Vec<BindingSlot>, ConvertError> {
        let viewed: Vec<(ValueId, View)> = values.iter().map(|&v| (v, view)).collect();
        self.slots_viewed(&viewed)
    }

    /// [`Builder::slots`] with a view per value.
    pub(super) fn slots_viewed(
        &mut self,
        values: &[(ValueId, View)],
    ) -> Result<Vec<BindingSlot>, ConvertError> {
        let mut slots: Vec<BindingSlot> = Vec::with_capacity(values.len());
        for &(v, view) in values {
            let mrt_index = self.view(v, view)?;
            if slots.iter().all(|s| s.mrt_index != mrt_index) {
                slots.push(BindingSlot {
                    binding: mrt_index,
                    mrt_index,
                });
            }
        }
        Ok(slots)
    }
}

/// Renumbers the resources so that the model outputs' come after all others, in output order,
/// as Arm's converter numbers them. Descriptor bindings stay (they name the modules'
/// declarations); a segment's input and output slots, numbered by resource, follow.
pub(super) fn outputs_last(vgf: &mut Vgf, outputs: &[u32]) {
    let n = vgf.resources.len() as u32;
    let mut order: Vec<u32> = (0..n).filter(|r| !outputs.contains(r)).collect();
    for &r in outputs {
        if !order.contains(&r) {
            order.push(r);
        }
    }
    let mut new_of = vec![0u32; n as usize];
    for (new, &old) in order.iter().enumerate() {
        new_of[old as usize] = new as u32;
    }
    vgf.resources = order
        .iter()
        .map(|&old| vgf.resources[old as usize].clone())
        .collect();
    let seq = &mut vgf.sequence;
    for s in &mut seq.segments {
        for slot in s.inputs.iter_mut().chain(s.outputs.iter_mut()) {
            slot.mrt_index = new_of[slot.mrt_index as usize];
            slot.binding = slot.mrt_index;
        }
    }
    let sets = (seq.segments.iter_mut())
        .flat_map(|s| s.set_infos.iter_mut().flat_map(|d| d.bindings.iter_mut()));
    for slot in seq
        .inputs
        .iter_mut()
        .chain(seq.outputs.iter_mut())
        .chain(sets)
    {
        slot.mrt_index = new_of[slot.mrt_index as usize];
    }
    for c in &mut vgf.constants {
        c.mrt_index = new_of[c.mrt_index as usize];
    }
}

/// A constant's values (`values = dense<…>`) as the bytes of its tensor type.
pub(super) fn constant_bytes(
    name: &str,
    values: Option<&Attr>,
    ty: &TensorType,
) -> Result<Vec<u8>, ConvertError> {
    let err = |problem: String| ConvertError::Constant {
        value: name.to_string(),
        problem,
    };
    let Some(Attr::Dense(values, _)) = values else {
        return Err(err("expected `values = dense<…>`".into()));
    };
    ty.bytes(values).ok_or_else(|| {
        err(format!(
            "{} values for {} elements",
            values.len(),
            ty.elements()
        ))
    })
}
