//! Data-graph segments (`SPV_ARM_graph`, as Arm's converter writes them) run without the ARM
//! extensions: the graph's SPIR-V is read back into TOSA operations, each lowered to a compute
//! shader by the same lowering `fpshaderc vgf --compute-only` uses, compiled here with naga's
//! GLSL front end (the runtime links no shaderc) and dispatched in program order.

use std::collections::HashMap;
use std::sync::Arc;

use fpshader_build::vgf::lower::{self, Lowered};
use fpshader_build::vgf::tosa::spirv::{self, GRAPH_CONSTANT_ID};
use fpshader_build::vgf::tosa::{Attr, Graph, Loc, Op, Value, ValueId};
use fpshader_build::vgf::{Segment, Vgf};

use super::glsl::compile;
use super::{Slot, Step, problem};
use crate::error::{Error, Result};
use crate::gpu::{Context, DeviceBuffer, Pipeline};

/// Pipelines of lowered ops, by their GLSL: ops of one shape share one.
pub(super) type PipelineCache = HashMap<String, Arc<Pipeline>>;

/// The steps of one graph segment; its constants and intermediate values get buffers in
/// `locals` (made once, at load).
pub(super) fn steps(
    ctx: &Context,
    vgf: &Vgf,
    segment: &Segment,
    words: &[u32],
    entry_point: &str,
    locals: &mut Vec<DeviceBuffer>,
    cache: &mut PipelineCache,
) -> Result<Vec<Step>> {
    let what = format!("segment `{}`", segment.name);
    let module = spirv::read(words, entry_point).map_err(|source| Error::VgfGraph {
        what: what.clone(),
        source,
    })?;
    let g = &with_copies(module.graph.clone());
    // (set, binding) → resource, from the segment's descriptor sets
    let mut resource_at = HashMap::new();
    for (i, set) in segment.set_infos.iter().enumerate() {
        let index = set.set_index.unwrap_or(i as u32);
        for b in &set.bindings {
            resource_at.insert((index, b.binding), b.mrt_index);
        }
    }
    let mut slot_of: HashMap<ValueId, Slot> = HashMap::new();
    let interface = g
        .inputs
        .iter()
        .zip(&module.input_bindings)
        .chain(g.outputs.iter().zip(&module.output_bindings));
    for (&v, &(set, binding)) in interface {
        let mrt = resource_at.get(&(set, binding)).ok_or_else(|| {
            problem(
                &what,
                format!(
                    "the graph binds set {set} binding {binding}, the segment has no resource there"
                ),
            )
        })?;
        slot_of.insert(v, Slot::Resource(*mrt));
    }
    let mut steps = Vec::new();
    for op in &g.ops {
        if op.kind() == "const" {
            continue;
        }
        let lowered = lower::lower(g, op).map_err(|source| Error::VgfLower {
            what: what.clone(),
            source,
        })?;
        let Lowered {
            glsl,
            operands,
            invocations,
        } = lowered;
        let pipeline = match cache.get(&glsl) {
            Some(p) => p.clone(),
            None => {
                let words = compile(&glsl).map_err(|e| {
                    problem(
                        &what,
                        format!("the lowered `{}` does not compile: {e}", op.name),
                    )
                })?;
                let name = format!("{}_{}", segment.name, op.kind());
                // SAFETY: glslang compiled this from the GLSL fpshader lowered the operator to
                let p = unsafe { ctx.pipeline_from_spirv(&name, &words)? };
                cache.insert(glsl, p.clone());
                p
            }
        };
        let mut bindings = Vec::with_capacity(operands.len() + op.results.len());
        for &i in &operands {
            let v = op.operands[i];
            let slot = match slot_of.get(&v) {
                Some(s) => *s,
                None => {
                    let data = constant_data(vgf, segment, g, v).map_err(|p| problem(&what, p))?;
                    locals.push(ctx.upload(&data)?);
                    let s = Slot::Local(locals.len() - 1);
                    slot_of.insert(v, s);
                    s
                }
            };
            bindings.push(slot);
        }
        for &result in &op.results {
            let out = match slot_of.get(&result) {
                Some(s) => *s,
                None => {
                    let ty = &g.values[result].ty;
                    let bytes = ty.elements().saturating_mul(ty.elem.size()).max(4) as u64;
                    let limit = ctx.limits().max_storage_buffer_binding_size;
                    if bytes > limit {
                        return Err(problem(
                            &what,
                            format!(
                                "`{}` needs {bytes} bytes; the device binds at most {limit}",
                                g.values[result].name
                            ),
                        ));
                    }
                    locals.push(ctx.storage_buffer(bytes)?);
                    let s = Slot::Local(locals.len() - 1);
                    slot_of.insert(result, s);
                    s
                }
            };
            bindings.push(out);
        }
        steps.push(Step {
            label: format!("{}: {}", segment.name, op.name),
            pipeline,
            bindings,
            global: [invocations, 1, 1],
            images_in: Vec::new(),
            images_out: Vec::new(),
        });
    }
    Ok(steps)
}

/// `g` with a `tosa.identity` op before every output no op computes (a constant passed on to
/// a shader, or an input), so that every output is some op's result and lowers like the rest.
fn with_copies(mut g: Graph) -> Graph {
    for j in 0..g.outputs.len() {
        let v = g.outputs[j];
        let computed = g.producer(v).is_some_and(|p| g.ops[p].kind() != "const");
        if computed && !g.inputs.contains(&v) {
            continue;
        }
        let copy = g.values.len();
        g.values.push(Value {
            name: format!("{}_copy", g.values[v].name),
            ty: g.values[v].ty.clone(),
        });
        g.ops.push(Op {
            name: "tosa.identity".into(),
            operands: vec![v],
            results: vec![copy],
            attrs: Default::default(),
            loc: Loc::Word(0),
        });
        g.outputs[j] = copy;
    }
    g
}

/// The bytes of constant value `v`: inline values, or the VGF constant its graph constant
/// id names through the segment.
fn constant_data(
    vgf: &Vgf,
    segment: &Segment,
    g: &Graph,
    v: ValueId,
) -> std::result::Result<Vec<u8>, String> {
    let name = &g.values[v].name;
    let producer = g
        .producer(v)
        .map(|p| &g.ops[p])
        .filter(|op| op.kind() == "const")
        .ok_or_else(|| format!("value `{name}` is read before any op writes it"))?;
    match (
        producer.attrs.get("values"),
        producer.attrs.get(GRAPH_CONSTANT_ID),
    ) {
        (Some(Attr::Dense(values, _)), _) => g.values[v]
            .ty
            .bytes(values)
            .ok_or_else(|| format!("constant `{name}` has too few values")),
        (_, Some(Attr::Number(id))) => {
            let constant = segment
                .constants
                .get(*id as usize)
                .and_then(|&c| vgf.constants.get(c as usize))
                .ok_or_else(|| format!("graph constant {id} is not bound to a constant"))?;
            let ty = &g.values[v].ty;
            let resource = vgf.resources.get(constant.mrt_index as usize);
            if resource.map(|r| r.vk_format) != Some(ty.elem.vk_format()) {
                return Err(format!(
                    "graph constant {id}'s format is not its tensor's ({:?})",
                    ty.elem
                ));
            }
            let want = ty.elements() * ty.elem.size();
            if constant.data.len() != want {
                return Err(format!(
                    "graph constant {id} has {} bytes, its tensor {:?} needs {want}",
                    constant.data.len(),
                    g.values[v].ty.shape
                ));
            }
            Ok(constant.data.clone())
        }
        _ => Err(format!("constant `{name}` has no values")),
    }
}
