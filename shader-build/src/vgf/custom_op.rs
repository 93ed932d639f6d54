//! The `implementation_attrs` of a `com.arm.VulkanCustomShader` operation (Arm's
//! `vkshader-custom-op-encoding`), validated strictly: where Arm's converter maps an unknown
//! enum name to -1 or drops a malformed field, this refuses with an [`AttrError`] naming the op
//! and the field. Unknown keys (`input_0_type`, `is_vkshader`, …) are ignored, as the schema allows.

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::{Map, Value};

use super::file::format::{SamplerConfig, descriptor_type_value, format_value};

/// The domain name that makes a TOSA custom operation a Vulkan compute shader.
pub use super::tosa::SHADER_DOMAIN as DOMAIN;

/// Optional fpshader key: the workgroup count, overriding the one derived from output 0.
pub const WORKGROUP_COUNT_KEY: &str = "fpshader_workgroup_count";

/// A malformed attribute of one shader operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("custom shader op `{op}`: {field}: {problem}")]
pub struct AttrError {
    /// The operation's `operator_name`.
    pub op: String,
    /// The attribute (`workgroup_sizes`, `input_1_vkformat`, …).
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

/// The shader's code as the attributes carry it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShaderCode {
    /// SPIR-V words (decoded from base64).
    Spirv(Vec<u32>),
    /// GLSL source (the ncnn extension is available).
    Glsl(String),
    /// HLSL source.
    Hlsl(String),
}

/// One operand's or result's resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceAttr {
    /// Binding number.
    pub binding: u32,
    /// Descriptor set.
    pub set: u32,
    /// `VkDescriptorType` value.
    pub descriptor_type: u32,
    /// `VkFormat` value.
    pub format: u32,
    /// Sampler state, for sampled images.
    pub sampler: Option<SamplerConfig>,
}

/// A validated shader operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShaderAttrs {
    /// The entry point.
    pub entry_point: String,
    /// The local workgroup size (`workgroup_sizes`; see the README for why local, not count).
    pub workgroup_size: [u32; 3],
    /// An explicit workgroup count (`fpshader_workgroup_count`), if given.
    pub workgroup_count: Option<[u32; 3]>,
    /// The code, or `None` for a placeholder the application supplies by operator name.
    pub code: Option<ShaderCode>,
    /// One per operand, in operand order.
    pub inputs: Vec<ResourceAttr>,
    /// One per result, in result order.
    pub outputs: Vec<ResourceAttr>,
}

const RESOURCE_FIELDS: [&str; 4] = ["binding", "descriptorset", "vkdescriptortype", "vkformat"];

/// Parses and validates `implementation_attrs` of the op `op` with `operands` operands and
/// `results` results.
pub fn parse(
    op: &str,
    json: &str,
    operands: usize,
    results: usize,
) -> Result<ShaderAttrs, AttrError> {
    let err = |field: &str, problem: String| AttrError {
        op: op.to_string(),
        field: field.to_string(),
        problem,
    };
    let value: Value = serde_json::from_str(json)
        .map_err(|e| err("implementation_attrs", format!("not valid JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(err("implementation_attrs", "expected a JSON object".into()));
    };
    let entry_point = match map.get("entry_point") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(other) => {
            return Err(err(
                "entry_point",
                format!("expected a non-empty string, found {other}"),
            ));
        }
        None => return Err(err("entry_point", "required".into())),
    };
    let workgroup_size = triple(&map, "workgroup_sizes", &err)?
        .ok_or_else(|| err("workgroup_sizes", "required".into()))?;
    let workgroup_count = triple(&map, WORKGROUP_COUNT_KEY, &err)?;
    let code = shader_code(&map, &err)?;
    let inputs = resources(&map, "input", operands, &err)?;
    let outputs = resources(&map, "output", results, &err)?;

    let mut used: BTreeMap<(u32, u32), String> = BTreeMap::new();
    let all = inputs
        .iter()
        .enumerate()
        .map(|(i, r)| (format!("input_{i}"), r))
        .chain(
            outputs
                .iter()
                .enumerate()
                .map(|(i, r)| (format!("output_{i}"), r)),
        );
    for (name, r) in all {
        if let Some(first) = used.insert((r.set, r.binding), name.clone()) {
            return Err(err(
                &format!("{name}_binding"),
                format!(
                    "set {} binding {} is already used by {first}",
                    r.set, r.binding
                ),
            ));
        }
    }
    Ok(ShaderAttrs {
        entry_point,
        workgroup_size,
        workgroup_count,
        code,
        inputs,
        outputs,
    })
}

fn triple(
    map: &Map<String, Value>,
    key: &str,
    err: &impl Fn(&str, String) -> AttrError,
) -> Result<Option<[u32; 3]>, AttrError> {
    let Some(v) = map.get(key) else {
        return Ok(None);
    };
    let bad = || err(key, format!("expected 3 integers >= 1, found {v}"));
    let Value::Array(items) = v else {
        return Err(bad());
    };
    if items.len() != 3 {
        return Err(bad());
    }
    let mut out = [0u32; 3];
    for (o, item) in out.iter_mut().zip(items) {
        *o = item
            .as_u64()
            .filter(|&n| n >= 1)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(bad)?;
    }
    Ok(Some(out))
}

fn shader_code(
    map: &Map<String, Value>,
    err: &impl Fn(&str, String) -> AttrError,
) -> Result<Option<ShaderCode>, AttrError> {
    let string = |key: &str| match map.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(err(key, format!("expected a string, found {other}"))),
    };
    let language = string("shader_language")?.filter(|l| !l.is_empty());
    let code = string("shader_code")?.filter(|c| !c.is_empty());
    match (language, code) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(err(
            "shader_code",
            "shader_language is given without shader_code (give both, or neither for a placeholder)"
                .into(),
        )),
        (None, Some(_)) => Err(err(
            "shader_language",
            "shader_code is given without shader_language (SPIR-V, GLSL or HLSL)".into(),
        )),
        (Some(language), Some(code)) => match language.as_str() {
            "GLSL" => Ok(Some(ShaderCode::Glsl(code))),
            "HLSL" => Ok(Some(ShaderCode::Hlsl(code))),
            "SPIR-V" => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(code.trim())
                    .map_err(|e| err("shader_code", format!("not valid base64: {e}")))?;
                let words = crate::meta::le_words(&bytes)
                    .filter(|w| w.len() >= 5)
                    .ok_or_else(|| {
                        err(
                            "shader_code",
                            format!("{} bytes of SPIR-V is not a whole module", bytes.len()),
                        )
                    })?;
                if words[0] != 0x0723_0203 {
                    return Err(err(
                        "shader_code",
                        format!("SPIR-V magic {:#010x}, expected 0x07230203", words[0]),
                    ));
                }
                Ok(Some(ShaderCode::Spirv(words)))
            }
            other => Err(err(
                "shader_language",
                format!("`{other}` is not one of SPIR-V, GLSL, HLSL"),
            )),
        },
    }
}

/// The indices that keys `<prefix>_<i>_<field>` name, with leading zeros refused.
fn indices(
    map: &Map<String, Value>,
    prefix: &str,
    err: &impl Fn(&str, String) -> AttrError,
) -> Result<Vec<usize>, AttrError> {
    let mut found = std::collections::BTreeSet::new();
    for key in map.keys() {
        let Some(rest) = key.strip_prefix(prefix).and_then(|r| r.strip_prefix('_')) else {
            continue;
        };
        let Some((index, field)) = rest.split_once('_') else {
            continue;
        };
        if !RESOURCE_FIELDS.contains(&field) && field != "sampler" {
            continue;
        }
        let valid = !index.is_empty()
            && index.bytes().all(|b| b.is_ascii_digit())
            && (index == "0" || !index.starts_with('0'));
        let n = index.parse::<usize>().ok().filter(|_| valid);
        let Some(n) = n else {
            return Err(err(
                key,
                format!("`{index}` is not a valid index (no leading zeros)"),
            ));
        };
        found.insert(n);
    }
    Ok(found.into_iter().collect())
}

fn resources(
    map: &Map<String, Value>,
    prefix: &str,
    expected: usize,
    err: &impl Fn(&str, String) -> AttrError,
) -> Result<Vec<ResourceAttr>, AttrError> {
    let found = indices(map, prefix, err)?;
    for (want, &have) in found.iter().enumerate() {
        if want != have {
            return Err(err(
                &format!("{prefix}_{have}"),
                format!("indices must be 0, 1, 2, …: {prefix}_{want} is missing"),
            ));
        }
    }
    let what = if prefix == "input" {
        "operands"
    } else {
        "results"
    };
    if found.len() != expected {
        return Err(err(
            &format!("{prefix}_*"),
            format!(
                "the op has {expected} {what} but the attributes describe {}",
                found.len()
            ),
        ));
    }
    (0..expected)
        .map(|i| {
            let key = |f: &str| format!("{prefix}_{i}_{f}");
            let get = |f: &str| {
                map.get(&key(f))
                    .ok_or_else(|| err(&key(f), "required for every operand and result".into()))
            };
            let number = |f: &str| {
                let v = get(f)?;
                v.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| err(&key(f), format!("expected an integer >= 0, found {v}")))
            };
            let name = |f: &str, lookup: fn(&str) -> Option<u32>| {
                let v = get(f)?;
                let s = v
                    .as_str()
                    .ok_or_else(|| err(&key(f), format!("expected a string, found {v}")))?;
                lookup(s).ok_or_else(|| err(&key(f), format!("unknown Vulkan name `{s}`")))
            };
            Ok(ResourceAttr {
                binding: number("binding")?,
                set: number("descriptorset")?,
                descriptor_type: name("vkdescriptortype", descriptor_type_value)?,
                format: name("vkformat", format_value)?,
                sampler: map
                    .get(&key("sampler"))
                    .map(|v| sampler(v, &key("sampler"), err))
                    .transpose()?,
            })
        })
        .collect()
}

/// `VkFilter` names and values (sampler attributes, `vgf_dump`'s `sampler_config`).
pub(super) const FILTERS: &[(&str, u32)] = &[
    ("VK_FILTER_NEAREST", 0),
    ("VK_FILTER_LINEAR", 1),
    ("VK_FILTER_CUBIC_IMG", 1_000_015_000),
];
/// `VkSamplerAddressMode` names and values (sampler attributes, `vgf_dump`'s `sampler_config`).
pub(super) const ADDRESS_MODES: &[(&str, u32)] = &[
    ("VK_SAMPLER_ADDRESS_MODE_REPEAT", 0),
    ("VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT", 1),
    ("VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE", 2),
    ("VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER", 3),
    ("VK_SAMPLER_ADDRESS_MODE_MIRROR_CLAMP_TO_EDGE", 4),
];
/// `VkBorderColor` names and values (sampler attributes, `vgf_dump`'s `sampler_config`).
pub(super) const BORDER_COLORS: &[(&str, u32)] = &[
    ("VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK", 0),
    ("VK_BORDER_COLOR_INT_TRANSPARENT_BLACK", 1),
    ("VK_BORDER_COLOR_FLOAT_OPAQUE_BLACK", 2),
    ("VK_BORDER_COLOR_INT_OPAQUE_BLACK", 3),
    ("VK_BORDER_COLOR_FLOAT_OPAQUE_WHITE", 4),
    ("VK_BORDER_COLOR_INT_OPAQUE_WHITE", 5),
    ("VK_BORDER_COLOR_FLOAT_CUSTOM_EXT", 1_000_287_003),
    ("VK_BORDER_COLOR_INT_CUSTOM_EXT", 1_000_287_004),
];

fn sampler(
    v: &Value,
    key: &str,
    err: &impl Fn(&str, String) -> AttrError,
) -> Result<SamplerConfig, AttrError> {
    let Value::Object(obj) = v else {
        return Err(err(key, format!("expected an object, found {v}")));
    };
    if let Some(extra) = obj.keys().find(|k| {
        ![
            "min_filter",
            "mag_filter",
            "address_mode_u",
            "address_mode_v",
            "border_color",
        ]
        .contains(&k.as_str())
    }) {
        return Err(err(&format!("{key}.{extra}"), "not a sampler field".into()));
    }
    let field = |f: &str, table: &[(&str, u32)]| {
        let name = obj
            .get(f)
            .ok_or_else(|| err(&format!("{key}.{f}"), "required".into()))?;
        let s = name.as_str().unwrap_or_default();
        table
            .iter()
            .find(|(n, _)| *n == s)
            .map(|e| e.1)
            .ok_or_else(|| err(&format!("{key}.{f}"), format!("unknown Vulkan name {name}")))
    };
    Ok(SamplerConfig {
        min_filter: field("min_filter", FILTERS)?,
        mag_filter: field("mag_filter", FILTERS)?,
        address_mode_u: field("address_mode_u", ADDRESS_MODES)?,
        address_mode_v: field("address_mode_v", ADDRESS_MODES)?,
        border_color: field("border_color", BORDER_COLORS)?,
    })
}

/// Why `implementation_attrs` cannot be written for a shader.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FromShaderError {
    /// The SPIR-V does not reflect.
    #[error("the shader does not reflect: {0}")]
    Reflect(#[from] crate::reflect::ReflectError),
    /// The shader declares no local size (`layout(local_size_x = …) in;`).
    #[error("the shader declares no local size")]
    NoLocalSize,
    /// A binding the attributes cannot describe from reflection alone.
    #[error("set {set} binding {binding} `{name}`: {problem}")]
    Binding {
        /// Descriptor set.
        set: u32,
        /// Binding number.
        binding: u32,
        /// The block's or variable's name.
        name: String,
        /// Why.
        problem: String,
    },
}

/// The `implementation_attrs` JSON of a compiled compute shader, from its reflection, so that
/// it drops into a `com.arm.VulkanCustomShader` op without hand-written attributes: the code as
/// base64 SPIR-V, its entry point and local size, its read-only buffers as the op's operands
/// and its writable ones as its results (each in binding order), with their descriptor types
/// and the `VkFormat` of their elements (`float` → `VK_FORMAT_R32_SFLOAT`, fp16 storage →
/// `VK_FORMAT_R16_SFLOAT`, …).
pub fn implementation_attrs(spirv: &[u32]) -> Result<String, FromShaderError> {
    use crate::meta::{Access, DescriptorKind, Scalar};
    let r = crate::reflect::reflect(spirv)?;
    let scalars = crate::reflect::buffer_scalars(spirv)?;
    let size = r
        .local_size
        .default_size()
        .ok_or(FromShaderError::NoLocalSize)?;
    let mut attrs = Map::new();
    attrs.insert("entry_point".into(), r.entry_point.to_string().into());
    attrs.insert("workgroup_sizes".into(), size.to_vec().into());
    attrs.insert("shader_language".into(), "SPIR-V".into());
    let bytes: Vec<u8> = spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
    attrs.insert(
        "shader_code".into(),
        base64::engine::general_purpose::STANDARD
            .encode(bytes)
            .into(),
    );
    let (mut inputs, mut outputs) = (0, 0);
    for b in r.bindings.iter() {
        let err = |problem: &str| FromShaderError::Binding {
            set: b.set,
            binding: b.binding,
            name: b.name.to_string(),
            problem: problem.into(),
        };
        let descriptor = match b.kind {
            DescriptorKind::StorageBuffer => "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
            DescriptorKind::UniformBuffer => "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER",
            _ => {
                return Err(err(
                    "only buffers are described from reflection (images need a format and \
                     sampler state written by hand)",
                ));
            }
        };
        let scalar = scalars
            .iter()
            .find(|(set, binding, _)| (*set, *binding) == (b.set, b.binding))
            .map(|s| s.2);
        let format = match scalar {
            Some(Scalar::Float(32)) => "VK_FORMAT_R32_SFLOAT",
            Some(Scalar::Float(16)) => "VK_FORMAT_R16_SFLOAT",
            Some(Scalar::Int(32)) => "VK_FORMAT_R32_SINT",
            Some(Scalar::Uint(32)) => "VK_FORMAT_R32_UINT",
            Some(Scalar::Int(16)) => "VK_FORMAT_R16_SINT",
            Some(Scalar::Uint(16)) => "VK_FORMAT_R16_UINT",
            Some(Scalar::Int(8)) => "VK_FORMAT_R8_SINT",
            Some(Scalar::Uint(8)) => "VK_FORMAT_R8_UINT",
            _ => return Err(err("its element type has no tensor VkFormat")),
        };
        let key = if b.access == Access::ReadOnly {
            inputs += 1;
            format!("input_{}", inputs - 1)
        } else {
            outputs += 1;
            format!("output_{}", outputs - 1)
        };
        attrs.insert(format!("{key}_binding"), b.binding.into());
        attrs.insert(format!("{key}_descriptorset"), b.set.into());
        attrs.insert(format!("{key}_vkdescriptortype"), descriptor.into());
        attrs.insert(format!("{key}_vkformat"), format.into());
    }
    Ok(Value::Object(attrs).to_string())
}

impl crate::meta::ShaderVariant {
    /// The `implementation_attrs` JSON that makes this variant a TOSA
    /// `com.arm.VulkanCustomShader` op (see [`implementation_attrs`]).
    pub fn implementation_attrs(&self) -> Result<String, FromShaderError> {
        implementation_attrs(&self.spirv)
    }
}
