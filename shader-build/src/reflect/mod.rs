//! SPIR-V reflection for compute modules, one walk over [`crate::spv`]'s instructions.
//!
//! `spirv-reflect` 0.2.3 aborts on every module in debug builds, returns no bindings for SPIR-V 1.3,
//! asserts on 1.5/1.6 and has no specialization-constant or workgroup-size API; `rspirv-reflect`
//! fails on SPIR-V 1.6 (FACTS §2). This reflector reads one pass of instructions with the `spirv`
//! crate's enums and reports malformed input as [`ReflectError`], never by panicking.
//!
//! The files: `reader` (the one pass over the instructions into ids, types, decorations and
//! constants), `interface` (what the entry point binds and declares), `types` (scalars,
//! member types and sizes; the features the module needs).

mod interface;
mod reader;
mod types;

use std::collections::HashMap;

use spirv::Dim;

use crate::meta::{ImageDim, Reflection, Scalar};

/// Why a module could not be reflected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReflectError {
    /// Fewer than the five header words, or a byte length that is not a multiple of four.
    #[error("not SPIR-V: {len} {unit}, not {expected}")]
    NotSpirv {
        /// The length given.
        len: usize,
        /// Its unit (`bytes` or `words`).
        unit: &'static str,
        /// What SPIR-V has.
        expected: &'static str,
    },
    /// The first word is not the SPIR-V magic number.
    #[error("not SPIR-V: bad magic number {0:#010x}")]
    BadMagic(u32),
    /// An instruction runs past the end of the module or has a zero word count.
    #[error("malformed SPIR-V at word {word}: {problem}")]
    Malformed {
        /// Index of the offending instruction's first word.
        word: usize,
        /// What is wrong.
        problem: String,
    },
    /// No `OpEntryPoint GLCompute`.
    #[error("no GLCompute entry point")]
    NoComputeEntryPoint,
}

use crate::spv::MAGIC;

/// Reflects SPIR-V given as bytes (either byte order).
pub fn reflect_bytes(bytes: &[u8]) -> Result<Reflection, ReflectError> {
    let le = crate::meta::le_words(bytes).ok_or(ReflectError::NotSpirv {
        len: bytes.len(),
        unit: "bytes",
        expected: "a whole number of 4-byte words",
    })?;
    if le.first() == Some(&MAGIC.swap_bytes()) {
        let be: Vec<u32> = le.iter().map(|w| w.swap_bytes()).collect();
        return reflect(&be);
    }
    reflect(&le)
}

/// Reflects a SPIR-V module given as words in host order.
pub fn reflect(words: &[u32]) -> Result<Reflection, ReflectError> {
    Module::parse(words)?.reflection()
}

/// Bytes of workgroup (shared) memory the module declares: the sizes of its `Workgroup`
/// variables, arrays at their lengths as the module gives them (a specialized module's, the
/// specialized ones), `None` where a length is computed by `OpSpecConstantOp` and cannot be
/// known without evaluating it. A device bounds it by `maxComputeSharedMemorySize`; a pipeline
/// over the bound may hang a driver instead of failing, so the runtime checks it first.
pub fn workgroup_memory(words: &[u32]) -> Result<Option<u64>, ReflectError> {
    const WORKGROUP: u32 = spirv::StorageClass::Workgroup as u32;
    let m = Module::parse(words)?;
    let mut total = 0u64;
    for &(_, ptr_ty, class) in &m.variables {
        if class != WORKGROUP {
            continue;
        }
        let Some(Type::Pointer { pointee }) = m.types.get(&ptr_ty) else {
            continue;
        };
        match m.size_of(*pointee, None) {
            Some(size) if size > 0 => total += u64::from(size),
            _ => return Ok(None),
        }
    }
    Ok(Some(total))
}

/// The element scalar of each storage buffer, as `(set, binding, scalar)`: the component type
/// of the block's last member (its data array, through arrays and vectors). This is what a
/// TOSA custom op's `_vkformat` describes.
pub fn buffer_scalars(words: &[u32]) -> Result<Vec<(u32, u32, Scalar)>, ReflectError> {
    let m = Module::parse(words)?;
    let mut out = Vec::new();
    for &(id, ptr_ty, _) in &m.variables {
        let Some(Type::Pointer { pointee }) = m.types.get(&ptr_ty) else {
            continue;
        };
        let Some((set, binding)) = m.set_binding(id) else {
            continue;
        };
        let Some(Type::Struct { members }) = m.types.get(pointee) else {
            continue;
        };
        let mut ty = members.last().copied();
        for _ in 0..8 {
            match ty.and_then(|t| m.types.get(&t)) {
                Some(Type::Array { element, .. } | Type::RuntimeArray { element }) => {
                    ty = Some(*element)
                }
                Some(Type::Vector { component, .. }) => ty = Some(*component),
                _ => break,
            }
        }
        if let Some(scalar) = ty.and_then(|t| m.scalar(t)) {
            out.push((set, binding, scalar));
        }
    }
    out.sort_by_key(|&(set, binding, _)| (set, binding));
    Ok(out)
}

#[derive(Clone, Debug)]
enum Type {
    Bool,
    Int {
        width: u32,
        signed: bool,
    },
    Float {
        width: u32,
    },
    Vector {
        component: u32,
        count: u32,
    },
    Matrix {
        column: u32,
        count: u32,
    },
    Array {
        element: u32,
        length: u32,
    },
    RuntimeArray {
        element: u32,
    },
    Struct {
        members: Vec<u32>,
    },
    Pointer {
        pointee: u32,
    },
    Image {
        dim: u32,
        sampled: u32,
        format: u32,
    },
    SampledImage {
        image: u32,
    },
    Sampler,
    /// `OpTypeTensorARM`.
    Tensor,
    Other,
}

#[derive(Clone, Copy, Debug)]
struct Constant {
    ty: u32,
    value: u64,
    spec: bool,
    word_offset: usize,
}

/// (decoration, its literal operands) pairs.
type Decorations = Vec<(u32, Vec<u32>)>;

#[derive(Default)]
struct Module {
    version: (u8, u8),
    capabilities: Vec<u32>,
    entry: Option<(u32, String)>,
    local_size: Option<([u32; 3], usize)>,
    local_size_ids: Option<[u32; 3]>,
    names: HashMap<u32, String>,
    member_names: HashMap<(u32, u32), String>,
    decorations: HashMap<u32, Decorations>,
    member_decorations: HashMap<(u32, u32), Decorations>,
    types: HashMap<u32, Type>,
    constants: HashMap<u32, Constant>,
    composites: HashMap<u32, Vec<u32>>,
    variables: Vec<(u32, u32, u32)>,
}

fn image_dimension(dim: u32) -> Option<ImageDim> {
    match Dim::from_u32(dim)? {
        Dim::Dim1D => Some(ImageDim::D1),
        Dim::Dim2D => Some(ImageDim::D2),
        Dim::Dim3D => Some(ImageDim::D3),
        Dim::DimCube => Some(ImageDim::Cube),
        Dim::DimBuffer => Some(ImageDim::Buffer),
        _ => None,
    }
}

fn malformed(word: usize, problem: &str) -> ReflectError {
    ReflectError::Malformed {
        word,
        problem: problem.to_string(),
    }
}

/// Decodes a SPIR-V literal string.
fn string(words: &[u32]) -> Option<String> {
    crate::spv::string(words).map(|(s, _)| s)
}

impl From<crate::spv::SpvError> for ReflectError {
    fn from(e: crate::spv::SpvError) -> Self {
        use crate::spv::SpvError;
        match e {
            SpvError::Short { len } => ReflectError::NotSpirv {
                len,
                unit: "words",
                expected: "the five words of a header at least",
            },
            SpvError::BadMagic(m) => ReflectError::BadMagic(m),
            _ => ReflectError::Malformed {
                word: e.word(),
                problem: e.to_string(),
            },
        }
    }
}
