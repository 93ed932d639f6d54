//! Shaders ahead of time: a custom op's GLSL (through fpshader's compiler, so the ncnn extension
//! works), HLSL (shaderc's HLSL front end) or SPIR-V is turned into SPIR-V and checked against
//! its attributes by reflection; for `--compute-only`, each TOSA operation of an ML partition is
//! lowered to a generated compute shader with its shapes folded in as constants.

use std::fmt::Write as _;

use crate::meta::{DescriptorKind, LocalSize};
use crate::{Compiler, OptionSet, reflect};

use super::custom_op::{ShaderAttrs, ShaderCode};
use super::format::{DESCRIPTOR_TYPE_TENSOR_ARM, descriptor_type_name};
use super::tosa::{Attr, Elem, Graph, Op};

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
    #[error("{loc}: `{name}` cannot be lowered to a compute shader: {problem}")]
    Unsupported {
        /// `line:column` of the op.
        loc: String,
        /// The op's name.
        name: String,
        /// Why.
        problem: String,
    },
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
                OptionSet::parse("fp16s").map_err(compile_err)?
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
    let declared = match &r.local_size {
        LocalSize::Literal { size, .. }
        | LocalSize::Id { size, .. }
        | LocalSize::BuiltIn { size, .. } => Some(*size),
        LocalSize::Absent => None,
    };
    if let Some(size) = declared.filter(|s| *s != attrs.workgroup_size) {
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

/// Invocations per workgroup of the lowered ML shaders.
pub const LOWERED_LOCAL_SIZE: u32 = 64;

/// A lowered ML operation: GLSL reading `operands` (bindings 0…) and writing the result
/// (the last binding), dispatched over `invocations` in x.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lowered {
    /// The generated GLSL.
    pub glsl: String,
    /// Which of the op's operands the shader binds, in binding order.
    pub operands: Vec<usize>,
    /// Invocations in x (one per output element).
    pub invocations: u32,
}

fn unsupported(op: &Op, problem: impl Into<String>) -> MaterializeError {
    MaterializeError::Unsupported {
        loc: op.loc.to_string(),
        name: op.name.clone(),
        problem: problem.into(),
    }
}

/// The index into an input of `in_shape` for output element `i` of `out_shape`, broadcasting
/// dimensions of size 1 (TOSA's rule: equal ranks).
fn broadcast_index(in_shape: &[i64], out_shape: &[i64]) -> String {
    if in_shape == out_shape {
        return "i".into();
    }
    let mut terms = Vec::new();
    let (mut out_stride, mut in_stride) = (1i64, 1i64);
    for d in (0..out_shape.len()).rev() {
        let (o, n) = (out_shape[d], in_shape.get(d).copied().unwrap_or(1));
        if n != 1 {
            terms.push(format!("((i / {out_stride}u) % {o}u) * {in_stride}u"));
        }
        out_stride *= o;
        in_stride *= n;
    }
    if terms.is_empty() {
        "0u".into()
    } else {
        terms.join(" + ")
    }
}

fn float_attr(op: &Op, name: &str) -> Result<f64, MaterializeError> {
    match op.attrs.get(name) {
        Some(Attr::Number(n)) => Ok(*n),
        _ => Err(unsupported(
            op,
            format!("attribute `{name}` is missing or not a number"),
        )),
    }
}

/// Lowers one ML op of `graph` (not a constant) to a compute shader.
pub fn lower(graph: &Graph, op: &Op) -> Result<Lowered, MaterializeError> {
    let out = &graph.values[op.results[0]].ty;
    if op.results.len() != 1 {
        return Err(unsupported(op, "more than one result"));
    }
    let ty = |v: usize| &graph.values[op.operands[v]].ty;
    for v in op.operands.iter().chain(&op.results) {
        let t = &graph.values[*v].ty;
        let shape_operand = t.elem == Elem::I64 && matches!(op.kind(), "reshape");
        if t.elem != Elem::F32 && !shape_operand && !matches!(op.kind(), "mul" | "negate") {
            return Err(unsupported(op, "only f32 tensors are lowered"));
        }
    }
    let n = out.elements();
    let unary = |expr: &str| (vec![0usize], expr.replace('X', "a0[i]"));
    let binary = |f: &dyn Fn(&str, &str) -> String| {
        let a = format!("a0[{}]", broadcast_index(&ty(0).shape, &out.shape));
        let b = format!("a1[{}]", broadcast_index(&ty(1).shape, &out.shape));
        (vec![0usize, 1], f(&a, &b))
    };
    let (operands, expr) = match op.kind() {
        "abs" => unary("abs(X)"),
        "exp" => unary("exp(X)"),
        "log" => unary("log(X)"),
        "negate" => unary("-(X)"),
        "reciprocal" => unary("1.0 / X"),
        "rsqrt" => unary("inversesqrt(X)"),
        "sigmoid" => unary("1.0 / (1.0 + exp(-(X)))"),
        "tanh" => unary("tanh(X)"),
        "floor" => unary("floor(X)"),
        "ceil" => unary("ceil(X)"),
        "sin" => unary("sin(X)"),
        "cos" => unary("cos(X)"),
        "erf" => return Err(unsupported(op, "erf has no GLSL built-in")),
        "identity" | "cast" | "reshape" => unary("X"),
        "clamp" => {
            let (lo, hi) = (float_attr(op, "min_val")?, float_attr(op, "max_val")?);
            unary(&format!("clamp(X, {lo:?}, {hi:?})"))
        }
        "add" => binary(&|a, b| format!("{a} + {b}")),
        "sub" => binary(&|a, b| format!("{a} - {b}")),
        "mul" => binary(&|a, b| format!("{a} * {b}")),
        "maximum" => binary(&|a, b| format!("max({a}, {b})")),
        "minimum" => binary(&|a, b| format!("min({a}, {b})")),
        "pow" => binary(&|a, b| format!("pow({a}, {b})")),
        "transpose" => {
            let perms = match op.attrs.get("perms") {
                Some(Attr::Numbers(p)) => p.iter().map(|&x| x as usize).collect::<Vec<_>>(),
                _ => return Err(unsupported(op, "attribute `perms` is missing")),
            };
            let ins = &ty(0).shape;
            if perms.len() != ins.len() || perms.iter().any(|&p| p >= ins.len()) {
                return Err(unsupported(op, "perms do not fit the input's rank"));
            }
            // output dim d is input dim perms[d]
            let mut in_strides = vec![1i64; ins.len()];
            for d in (0..ins.len().saturating_sub(1)).rev() {
                in_strides[d] = in_strides[d + 1] * ins[d + 1];
            }
            let mut terms = Vec::new();
            let mut out_stride = 1i64;
            for d in (0..out.shape.len()).rev() {
                terms.push(format!(
                    "((i / {out_stride}u) % {}u) * {}u",
                    out.shape[d], in_strides[perms[d]]
                ));
                out_stride *= out.shape[d];
            }
            (vec![0], format!("a0[{}]", terms.join(" + ")))
        }
        "matmul" => {
            // [n, h, c] x [n, c, w] -> [n, h, w]
            let (a, b) = (&ty(0).shape, &ty(1).shape);
            if a.len() != 3 || b.len() != 3 || a[2] != b[1] {
                return Err(unsupported(op, "matmul needs [N,H,C] x [N,C,W]"));
            }
            let (h, c, w) = (a[1], a[2], b[2]);
            let glsl_expr = format!("dot_row(i / {w}u / {h}u, (i / {w}u) % {h}u, i % {w}u)");
            let helper = format!(
                "float dot_row(uint n, uint y, uint x) {{ float s = 0.0; \
                 for (uint k = 0u; k < {c}u; k++) s += a0[(n * {h}u + y) * {c}u + k] * \
                 a1[(n * {c}u + k) * {w}u + x]; return s; }}\n"
            );
            return Ok(generated(&[0, 1], &glsl_expr, &helper, n));
        }
        other => {
            return Err(unsupported(
                op,
                format!("`{other}` has no compute lowering yet (see the README's VGF section)"),
            ));
        }
    };
    Ok(generated(&operands, &expr, "", n))
}

fn generated(operands: &[usize], expr: &str, helper: &str, n: usize) -> Lowered {
    let mut glsl = String::from("#version 450\n");
    writeln!(glsl, "layout(local_size_x = {LOWERED_LOCAL_SIZE}) in;").ok();
    for (b, _) in operands.iter().enumerate() {
        writeln!(
            glsl,
            "layout(binding = {b}) readonly buffer In{b} {{ float a{b}[]; }};"
        )
        .ok();
    }
    let out = operands.len();
    writeln!(
        glsl,
        "layout(binding = {out}) writeonly buffer Out {{ float r[]; }};"
    )
    .ok();
    glsl.push_str(helper);
    writeln!(
        glsl,
        "void main() {{ uint i = gl_GlobalInvocationID.x; if (i >= {n}u) return; r[i] = {expr}; }}"
    )
    .ok();
    Lowered {
        glsl,
        operands: operands.to_vec(),
        invocations: n as u32,
    }
}
