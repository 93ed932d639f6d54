//! A TOSA graph into a [`Vgf`]: partitions become segments, values crossing them become
//! resources, shaders are compiled ahead of time.
//!
//! With `compute_only` every ML partition is lowered to fpshader's compute shaders (one segment
//! per operation), so the file runs on any Vulkan GPU; without it ML partitions are
//! `SPV_ARM_graph` segments, as Arm's converter writes them.

mod resources;
mod segments;

use std::collections::BTreeMap;

use crate::Compiler;

use super::custom_op;
use super::file::format::{
    BindingSlot, FormatVersion, ModelSequence, Module, ModuleCode, ModuleType, Segment, Vgf,
};
use super::lower::{self, LOWERED_LOCAL_SIZE};
use super::materialize::{self, MaterializeError, Reading};
use super::partition::{self, Kind};
use super::tosa::{Graph, ValueId, spirv_write};
use resources::{Builder, View, outputs_last};
use segments::{groups, sets_list, shader_attrs, shader_dispatch, shader_views};

/// How to convert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvertOptions {
    /// Lower ML partitions to compute shaders instead of graph segments.
    pub compute_only: bool,
    /// The header version to write.
    pub version: FormatVersion,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            compute_only: true,
            version: FormatVersion::V0_4_3,
        }
    }
}

/// Why a graph cannot be converted (beyond attribute and shader errors).
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// An ML partition that cannot be written as a graph segment.
    #[error("{0} (--compute-only lowers ML partitions to compute shaders instead)")]
    Graph(spirv_write::SpirvWriteError),
    /// A shader or a lowering failed.
    #[error(transparent)]
    Materialize(#[from] MaterializeError),
    /// A constant whose values do not fill its type.
    #[error("constant `{value}`: {problem}")]
    Constant {
        /// The value's name.
        value: String,
        /// What is wrong.
        problem: String,
    },
    /// Too many invocations for one dispatch.
    #[error("`{op}` needs {groups} workgroups in one dimension (at most 65535)")]
    Dispatch {
        /// The op.
        op: String,
        /// Workgroups asked for.
        groups: u64,
    },
}

/// A converted model and what the conversion wants the user told.
#[derive(Debug)]
pub struct Converted {
    /// The model.
    pub vgf: Vgf,
    /// One line per custom op whose `workgroup_sizes` was not read as its declared local size
    /// ([`materialize::Reading`]), for stderr.
    pub notes: Vec<String>,
}

/// Converts `graph`; `compiler` compiles GLSL and HLSL.
pub fn convert(
    graph: &Graph,
    compiler: &Compiler,
    options: ConvertOptions,
) -> Result<Converted, super::VgfError> {
    let partitions = partition::partition(graph);
    let mut b = Builder {
        graph,
        compiler,
        compute_only: options.compute_only,
        constant_of: BTreeMap::new(),
        constant_segments: Vec::new(),
        vgf: Vgf {
            version: options.version,
            vk_header_version: 0,
            modules: Vec::new(),
            sequence: ModelSequence::default(),
            resources: Vec::new(),
            constants: Vec::new(),
        },
        resource_of: BTreeMap::new(),
        notes: Vec::new(),
        passed_out: BTreeMap::new(),
    };
    // the view a model input or output has in the partition that first reads or writes it
    let first_view = |v: ValueId| {
        partitions
            .iter()
            .find(|p| p.inputs.contains(&v) || p.outputs.contains(&v))
            .map_or(View::Buffer, |p| {
                if p.kind == Kind::Ml {
                    return if options.compute_only {
                        View::Buffer
                    } else {
                        View::Tensor
                    };
                }
                // a shader partition: as the shader binds it
                let shader = p
                    .ops
                    .iter()
                    .map(|&o| &graph.ops[o])
                    .find(|op| op.is_shader());
                shader
                    .and_then(|op| {
                        let (ins, outs) = shader_views(&shader_attrs(op)?);
                        let at = |values: &[ValueId], views: &[View]| {
                            values
                                .iter()
                                .position(|&x| x == v)
                                .and_then(|i| views.get(i).copied())
                        };
                        at(&op.operands, &ins).or_else(|| at(&op.results, &outs))
                    })
                    .unwrap_or(View::Buffer)
            })
    };
    // the graph modules first: their constants lead the resource table, as in Arm's files
    let mut graphs = BTreeMap::new();
    for (p, part) in partitions.iter().enumerate() {
        if part.kind == Kind::Ml && !options.compute_only {
            let name = format!("graph_partition_{p}");
            let written = spirv_write::write(graph, &part.ops, &part.inputs, &part.outputs, &name)
                .map_err(ConvertError::Graph)?;
            for &v in &written.constants {
                b.graph_constant(v)?;
            }
            graphs.insert(p, (name, written));
        }
    }
    // then the model inputs, so that they are resources 0, 1, … after the constants
    for &v in &graph.inputs {
        let r = b.view(v, first_view(v))?;
        if graph.outputs.contains(&v) {
            b.group_passed_out(r);
        }
    }
    for (p, part) in partitions.iter().enumerate() {
        if let Some((name, written)) = graphs.remove(&p) {
            b.graph_segment(name, written, part)?;
            continue;
        }
        for &o in &part.ops {
            let op = &graph.ops[o];
            if matches!(op.kind(), "const" | "const_shape") {
                continue;
            }
            let segment = b.vgf.sequence.segments.len();
            let (module, set_infos, (ins, outs), dispatch) = if op.is_shader() {
                let name = op.str_attr("operator_name").unwrap_or("custom").to_string();
                let json = op.str_attr("implementation_attrs").unwrap_or("");
                let attrs = custom_op::parse(&name, json, op.operands.len(), op.results.len())?;
                let made =
                    materialize::shader(compiler, &name, &attrs).map_err(ConvertError::from)?;
                b.notes
                    .extend(made.reading.note(&name, attrs.workgroup_size));
                let mut sets: BTreeMap<u32, Vec<BindingSlot>> = BTreeMap::new();
                let (in_views, out_views) = shader_views(&attrs);
                let viewed_in: Vec<(ValueId, View)> =
                    op.operands.iter().copied().zip(in_views).collect();
                let viewed_out: Vec<(ValueId, View)> =
                    op.results.iter().copied().zip(out_views).collect();
                for (res, &(v, view)) in attrs
                    .inputs
                    .iter()
                    .zip(&viewed_in)
                    .chain(attrs.outputs.iter().zip(&viewed_out))
                {
                    // resource i is operand i (Arm's converter binds the i-th deduplicated input)
                    let mrt_index = b.view(v, view)?;
                    sets.entry(res.set).or_default().push(BindingSlot {
                        binding: res.binding,
                        mrt_index,
                    });
                }
                let out_shape = &graph.values[op.results[0]].ty.shape;
                let dispatch = match made.reading {
                    Reading::DispatchCount { .. } => attrs.workgroup_size.to_vec(),
                    Reading::LocalSize { .. } => shader_dispatch(&name, &attrs, out_shape)?,
                };
                let module = Module {
                    ty: ModuleType::Compute,
                    name,
                    entry_point: attrs.entry_point.clone(),
                    code: made.words.map_or(ModuleCode::None, ModuleCode::Spirv),
                };
                (module, sets, (viewed_in, viewed_out), dispatch)
            } else {
                let lowered = lower::lower(graph, op)
                    .map_err(|e| ConvertError::from(MaterializeError::from(e)))?;
                let name = format!("partition_{p}_{}_{}", op.kind(), segment);
                let words = b.compile_lowered(&name, &lowered.glsl)?;
                let operands: Vec<ValueId> =
                    lowered.operands.iter().map(|&i| op.operands[i]).collect();
                let mut bindings = Vec::new();
                for (binding, &v) in operands.iter().chain(&op.results).enumerate() {
                    bindings.push(BindingSlot {
                        binding: binding as u32,
                        mrt_index: b.resource(v)?,
                    });
                }
                let dispatch = vec![
                    groups(&name, u64::from(lowered.invocations), LOWERED_LOCAL_SIZE)?,
                    1,
                    1,
                ];
                let module = Module {
                    ty: ModuleType::Compute,
                    name,
                    entry_point: "main".into(),
                    code: ModuleCode::Spirv(words),
                };
                let buffers = |values: &[ValueId]| -> Vec<(ValueId, View)> {
                    values.iter().map(|&v| (v, View::Buffer)).collect()
                };
                let viewed = (buffers(&operands), buffers(&op.results));
                (module, BTreeMap::from([(0, bindings)]), viewed, dispatch)
            };
            let inputs = b.slots_viewed(&ins)?;
            let outputs = b.slots_viewed(&outs)?;
            b.vgf.sequence.segments.push(Segment {
                ty: ModuleType::Compute,
                name: format!("compute_segment_{segment}"),
                module_index: b.vgf.modules.len() as u32,
                set_infos: sets_list(set_infos),
                inputs,
                outputs,
                constants: Vec::new(),
                dispatch_shape: dispatch,
                push_constant_ranges: Vec::new(),
            });
            b.vgf.modules.push(module);
        }
    }
    // bindings numbered across inputs and outputs: the scenario runner binds by this number
    let mut interface = Vec::with_capacity(graph.inputs.len() + graph.outputs.len());
    for (i, &v) in graph.inputs.iter().chain(&graph.outputs).enumerate() {
        let mut mrt_index = b.view(v, first_view(v))?;
        if i >= graph.inputs.len() && graph.inputs.contains(&v) {
            mrt_index = b.passed_out(v, mrt_index);
        }
        interface.push(BindingSlot {
            binding: i as u32,
            mrt_index,
        });
    }
    b.vgf.sequence.outputs = interface.split_off(graph.inputs.len());
    b.vgf.sequence.inputs = interface;
    // the constants' segments run first; names follow the final order
    let constants = std::mem::take(&mut b.constant_segments);
    for s in &mut b.vgf.sequence.segments {
        s.module_index += constants.len() as u32;
    }
    let (modules, segments): (Vec<_>, Vec<_>) = constants
        .into_iter()
        .enumerate()
        .map(|(i, (m, mut s))| {
            s.module_index = i as u32;
            (m, s)
        })
        .unzip();
    b.vgf.modules.splice(0..0, modules);
    b.vgf.sequence.segments.splice(0..0, segments);
    // named as Arm's converter names them: a count per kind
    let mut counts = [0usize; 2];
    for s in &mut b.vgf.sequence.segments {
        let (kind, n) = match s.ty {
            ModuleType::Compute => ("compute", &mut counts[0]),
            ModuleType::Graph => ("graph", &mut counts[1]),
        };
        s.name = format!("{kind}_segment_{n}");
        *n += 1;
    }
    b.vgf.sequence.input_names = graph.input_names.clone();
    b.vgf.sequence.output_names = graph.output_names.clone();
    let outputs: Vec<u32> = b.vgf.sequence.outputs.iter().map(|s| s.mrt_index).collect();
    outputs_last(&mut b.vgf, &outputs);
    Ok(Converted {
        vgf: b.vgf,
        notes: b.notes,
    })
}
