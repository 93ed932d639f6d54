//! Rust source for compiled shaders: `static` [`ShaderModule`](crate::meta::ShaderModule) data.
//!
//! Blobs are embedded as aligned byte arrays, either `include_bytes!` of files the build script
//! wrote to `OUT_DIR` or byte-string literals (the proc-macro, which has no `OUT_DIR`). Both are far
//! cheaper for rustc than literal `u32` arrays. Output is deterministic: two builds of the same
//! input generate the same bytes.

use std::fmt::Write as _;

use crate::error::Result;
use crate::meta::{
    Access, Binding, DescriptorKind, ImageDim, LocalSize, MemberType, PushConstants, Reflection,
    Scalar, SpecConstant,
};
use crate::options::OptionSet;
use crate::reflect::reflect;
use crate::variants::VariantSet;

/// How blob bytes get into the generated code.
#[derive(Clone, Copy, Debug)]
pub enum Embed<'a> {
    /// `include_bytes!(concat!(<dir_expr>, "/<hash>.spv"))`, e.g. `env!("OUT_DIR")` plus a folder.
    IncludeBytes {
        /// A Rust expression for the folder holding `<hash>.spv` files.
        dir_expr: &'a str,
    },
    /// `b"…"` literals in the code itself.
    ByteString,
}

/// Generates the expression of one shader module (a block usable as a `static` initializer).
///
/// `krate` is the path of the crate that exports `meta` (`::fpshader`).
pub fn module_expr(set: &VariantSet, name: &str, krate: &str, embed: Embed<'_>) -> Result<String> {
    let meta = format!("{krate}::meta");
    let mut out = String::from("{\n");
    for (i, blob) in set.blobs.iter().enumerate() {
        let bytes = blob.words.len() * 4;
        let data = match embed {
            Embed::IncludeBytes { dir_expr } => format!(
                "*::core::include_bytes!(::core::concat!({dir_expr}, \"/{}.spv\"))",
                blob.hash
            ),
            Embed::ByteString => byte_string(&crate::words_as_bytes(&blob.words)),
        };
        writeln!(
            out,
            "    static __FPSHADER_BLOB_{i}: {meta}::Aligned<[u8; {bytes}]> = {meta}::Aligned({data});"
        )
        .ok();
    }
    let reflections = set
        .blobs
        .iter()
        .map(|b| reflect(&b.words))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    // one constant per blob: variants sharing a blob share its reflection text too
    for (i, r) in reflections.iter().enumerate() {
        writeln!(
            out,
            "    const __FPSHADER_REFLECTION_{i}: {meta}::Reflection = {};",
            reflection(&meta, r)
        )
        .ok();
    }
    writeln!(out, "    {meta}::ShaderModule {{").ok();
    writeln!(out, "        name: ::std::borrow::Cow::Borrowed({name:?}),").ok();
    writeln!(
        out,
        "        supported: {},",
        option_set(&meta, set.supported)
    )
    .ok();
    writeln!(out, "        variants: ::std::borrow::Cow::Borrowed(&[").ok();
    for v in &set.variants {
        writeln!(out, "            {meta}::ShaderVariant {{").ok();
        writeln!(
            out,
            "                options: {},",
            option_set(&meta, v.options)
        )
        .ok();
        writeln!(
            out,
            "                spirv: ::std::borrow::Cow::Borrowed({meta}::words(&__FPSHADER_BLOB_{})),",
            v.blob
        )
        .ok();
        writeln!(
            out,
            "                reflection: __FPSHADER_REFLECTION_{},",
            v.blob
        )
        .ok();
        writeln!(out, "            }},").ok();
    }
    writeln!(out, "        ]),").ok();
    writeln!(out, "    }}").ok();
    out.push('}');
    Ok(out)
}

fn option_set(meta: &str, set: OptionSet) -> String {
    format!("{meta}::OptionSet::from_bits({})", set.bits())
}

fn cow_str(s: &str) -> String {
    format!("::std::borrow::Cow::Borrowed({s:?})")
}

fn cow_list(items: impl IntoIterator<Item = String>) -> String {
    let items: Vec<String> = items.into_iter().collect();
    format!("::std::borrow::Cow::Borrowed(&[{}])", items.join(", "))
}

fn reflection(meta: &str, r: &Reflection) -> String {
    let push = match &r.push_constants {
        Some(pc) => format!("Some({})", push_constants(meta, pc)),
        None => "None".to_string(),
    };
    format!(
        "{meta}::Reflection {{ spirv_version: ({}, {}), entry_point: {}, local_size: {}, bindings: {}, push_constants: {push}, spec_constants: {}, features: {meta}::Features({}) }}",
        r.spirv_version.0,
        r.spirv_version.1,
        cow_str(&r.entry_point),
        local_size(meta, &r.local_size),
        cow_list(r.bindings.iter().map(|b| binding(meta, b))),
        cow_list(r.spec_constants.iter().map(|s| spec_constant(meta, s))),
        r.features.0,
    )
}

fn local_size(meta: &str, l: &LocalSize) -> String {
    let ids = |ids: &[Option<u32>; 3]| {
        let parts: Vec<String> = ids
            .iter()
            .map(|i| match i {
                Some(i) => format!("Some({i})"),
                None => "None".to_string(),
            })
            .collect();
        format!("[{}]", parts.join(", "))
    };
    match l {
        LocalSize::Absent => format!("{meta}::LocalSize::Absent"),
        LocalSize::Literal { size, word_offset } => {
            format!("{meta}::LocalSize::Literal {{ size: {size:?}, word_offset: {word_offset} }}")
        }
        LocalSize::Id { size, spec_ids } => format!(
            "{meta}::LocalSize::Id {{ size: {size:?}, spec_ids: {} }}",
            ids(spec_ids)
        ),
        LocalSize::BuiltIn { size, spec_ids } => format!(
            "{meta}::LocalSize::BuiltIn {{ size: {size:?}, spec_ids: {} }}",
            ids(spec_ids)
        ),
    }
}

fn binding(meta: &str, b: &Binding) -> String {
    let kind = match b.kind {
        DescriptorKind::StorageBuffer => "StorageBuffer",
        DescriptorKind::UniformBuffer => "UniformBuffer",
        DescriptorKind::CombinedImageSampler => "CombinedImageSampler",
        DescriptorKind::SampledImage => "SampledImage",
        DescriptorKind::StorageImage => "StorageImage",
        DescriptorKind::Sampler => "Sampler",
        DescriptorKind::UniformTexelBuffer => "UniformTexelBuffer",
        DescriptorKind::StorageTexelBuffer => "StorageTexelBuffer",
        DescriptorKind::Tensor => "Tensor",
    };
    let access = match b.access {
        Access::ReadOnly => "ReadOnly",
        Access::WriteOnly => "WriteOnly",
        Access::ReadWrite => "ReadWrite",
    };
    let dim = match b.image_dim {
        None => "None".to_string(),
        Some(d) => format!(
            "Some({meta}::ImageDim::{})",
            match d {
                ImageDim::D1 => "D1",
                ImageDim::D2 => "D2",
                ImageDim::D3 => "D3",
                ImageDim::Cube => "Cube",
                ImageDim::Buffer => "Buffer",
            }
        ),
    };
    let format = match &b.image_format {
        None => "None".to_string(),
        Some(f) => format!("Some({})", cow_str(f)),
    };
    format!(
        "{meta}::Binding {{ set: {}, binding: {}, kind: {meta}::DescriptorKind::{kind}, count: {}, access: {meta}::Access::{access}, image_dim: {dim}, image_format: {format}, name: {} }}",
        b.set,
        b.binding,
        b.count,
        cow_str(&b.name)
    )
}

fn scalar(meta: &str, s: Scalar) -> String {
    match s {
        Scalar::Bool => format!("{meta}::Scalar::Bool"),
        Scalar::Int(b) => format!("{meta}::Scalar::Int({b})"),
        Scalar::Uint(b) => format!("{meta}::Scalar::Uint({b})"),
        Scalar::Float(b) => format!("{meta}::Scalar::Float({b})"),
    }
}

fn member_type(meta: &str, t: &MemberType) -> String {
    format!(
        "{meta}::MemberType {{ scalar: {}, components: {}, columns: {}, array: {} }}",
        scalar(meta, t.scalar),
        t.components,
        t.columns,
        t.array
    )
}

fn push_constants(meta: &str, pc: &PushConstants) -> String {
    let members = pc.members.iter().map(|m| {
        format!(
            "{meta}::PushConstantMember {{ name: {}, offset: {}, size: {}, ty: {} }}",
            cow_str(&m.name),
            m.offset,
            m.size,
            member_type(meta, &m.ty)
        )
    });
    format!(
        "{meta}::PushConstants {{ size: {}, members: {} }}",
        pc.size,
        cow_list(members)
    )
}

fn spec_constant(meta: &str, s: &SpecConstant) -> String {
    format!(
        "{meta}::SpecConstant {{ id: {}, name: {}, ty: {}, default: {}, word_offset: {} }}",
        s.id,
        cow_str(&s.name),
        scalar(meta, s.ty),
        s.default,
        s.word_offset
    )
}

/// A `b"…"` literal for `bytes`, escaping everything outside printable ASCII.
fn byte_string(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3 + 3);
    s.push_str("*b\"");
    for &b in bytes {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                write!(s, "\\x{b:02x}").ok();
            }
        }
    }
    s.push('"');
    s
}

/// A Rust identifier in `SCREAMING_SNAKE_CASE` for a shader name (`relu_pack4` → `RELU_PACK4`).
pub fn static_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// A Rust identifier in `CamelCase` for a shader name (`relu_pack4` → `ReluPack4`).
pub fn variant_name(name: &str) -> String {
    let mut s = String::new();
    for part in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            s.push(first.to_ascii_uppercase());
            s.extend(chars);
        }
    }
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'S');
    }
    s
}
