//! Reading a VGF file (ours or Arm's converter's) into a [`Vgf`], refusing anything truncated,
//! out of range or not verifiable with a [`ReadError`] that names the byte offset or section.

use super::fb;
use super::format::{
    Constant, DescriptorSetInfo, FormatVersion, ModelSequence, Module, ModuleCode, ModuleType,
    Resource, ResourceCategory, Segment, Vgf,
};
use super::writer::{CONSTANT_RECORD, CONSTANTS_TAG, HEADER_SIZE, MAGIC};

/// Why a VGF file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Shorter than the header.
    #[error("VGF file of {len} bytes is shorter than its {HEADER_SIZE}-byte header")]
    TruncatedHeader {
        /// The file's length.
        len: usize,
    },
    /// The first four bytes are not `VGF1`.
    #[error("not a VGF file: magic {found:02x?} at byte 0, expected `VGF1`")]
    BadMagic {
        /// The bytes found.
        found: [u8; 4],
    },
    /// A format version this reader does not know.
    #[error("VGF format version {found} is not supported (this reader knows 0.4.x and 0.5.x)")]
    Version {
        /// The header's version.
        found: FormatVersion,
    },
    /// A section that does not lie inside the file.
    #[error(
        "VGF {section} section (offset {offset}, size {size}) lies outside the {len}-byte file"
    )]
    SectionRange {
        /// Which section.
        section: &'static str,
        /// Its offset.
        offset: u64,
        /// Its size.
        size: u64,
        /// The file's length.
        len: usize,
    },
    /// A FlatBuffers section that fails verification.
    #[error("VGF {section} section at byte {offset} is corrupt: {message}")]
    Corrupt {
        /// Which section.
        section: &'static str,
        /// The section's offset in the file.
        offset: u64,
        /// The verifier's message.
        message: String,
    },
    /// A constants section that is cut short or points outside itself.
    #[error("VGF constants section at byte {offset}: {message}")]
    Constants {
        /// The byte offset in the file of the problem.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// An enum value the schema does not define.
    #[error("VGF {what} has unknown {field} value {value}")]
    Enum {
        /// The table entry (e.g. `segment 2`).
        what: String,
        /// The field.
        field: &'static str,
        /// The value found.
        value: u32,
    },
    /// A reference between sections that points nowhere.
    #[error("VGF {what}: {field} {value} is out of range (there are {len})")]
    Reference {
        /// The table entry.
        what: String,
        /// The field.
        field: &'static str,
        /// The index found.
        value: u32,
        /// How many entries exist.
        len: usize,
    },
}

const SECTIONS: [&str; 4] = [
    "module table",
    "model sequence",
    "resource table",
    "constants",
];

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(b)
}

/// Reads a whole VGF file.
pub fn read(bytes: &[u8]) -> Result<Vgf, ReadError> {
    if bytes.len() < HEADER_SIZE {
        return Err(ReadError::TruncatedHeader { len: bytes.len() });
    }
    if &bytes[..4] != MAGIC {
        return Err(ReadError::BadMagic {
            found: [bytes[0], bytes[1], bytes[2], bytes[3]],
        });
    }
    let version = FormatVersion(bytes[8], bytes[9], bytes[10]);
    if version.0 != 0 || !(4..=5).contains(&version.1) {
        return Err(ReadError::Version { found: version });
    }
    let vk_header_version = u16::from_le_bytes([bytes[4], bytes[5]]);
    let mut sections: [(&[u8], u64); 4] = [(&[], 0); 4];
    for (i, name) in SECTIONS.iter().enumerate() {
        let offset = u64_at(bytes, 16 + 16 * i);
        let size = u64_at(bytes, 24 + 16 * i);
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(o, s)| Some(o..o.checked_add(s)?))
            .filter(|r| r.end <= bytes.len());
        let Some(range) = range else {
            return Err(ReadError::SectionRange {
                section: name,
                offset,
                size,
                len: bytes.len(),
            });
        };
        sections[i] = (&bytes[range], offset);
    }
    let corrupt = |i: usize| {
        move |e: flatbuffers::InvalidFlatbuffer| ReadError::Corrupt {
            section: SECTIONS[i],
            offset: sections[i].1,
            message: e.to_string(),
        }
    };
    let opts = flatbuffers::VerifierOptions::default();
    let modules =
        flatbuffers::root_with_opts::<fb::ModuleTable>(&opts, sections[0].0).map_err(corrupt(0))?;
    let sequence = flatbuffers::root_with_opts::<fb::ModelSequenceTable>(&opts, sections[1].0)
        .map_err(corrupt(1))?;
    let resources = flatbuffers::root_with_opts::<fb::ModelResourceTable>(&opts, sections[2].0)
        .map_err(corrupt(2))?;

    let modules = modules
        .modules()
        .iter()
        .enumerate()
        .map(|(i, m)| read_module(i, m))
        .collect::<Result<Vec<_>, _>>()?;
    let resources = resources
        .entries()
        .iter()
        .enumerate()
        .map(|(i, r)| read_resource(i, r))
        .collect::<Result<Vec<_>, _>>()?;
    let sequence = read_sequence(&sequence, modules.len(), resources.len())?;
    let constants = read_constants(sections[3].0, sections[3].1, resources.len())?;
    Ok(Vgf {
        version,
        vk_header_version,
        modules,
        sequence,
        resources,
        constants,
    })
}

fn module_type(what: impl Fn() -> String, value: u8) -> Result<ModuleType, ReadError> {
    ModuleType::from_value(value).ok_or_else(|| ReadError::Enum {
        what: what(),
        field: "type",
        value: value.into(),
    })
}

fn read_module(i: usize, m: &fb::Module<'_>) -> Result<Module, ReadError> {
    let code = match m.code_type() {
        0 => ModuleCode::None,
        1 => ModuleCode::Spirv(m.spirv().map(|s| s.words()).unwrap_or_default()),
        2 => ModuleCode::Glsl(m.source().map(|s| s.code().to_string()).unwrap_or_default()),
        3 => ModuleCode::Hlsl(m.source().map(|s| s.code().to_string()).unwrap_or_default()),
        v => {
            return Err(ReadError::Enum {
                what: format!("module {i}"),
                field: "code_type",
                value: v.into(),
            });
        }
    };
    Ok(Module {
        ty: module_type(|| format!("module {i}"), m.ty())?,
        name: m.name().to_string(),
        entry_point: m.entry_point().to_string(),
        code,
    })
}

fn read_resource(i: usize, r: &fb::ResourceEntry<'_>) -> Result<Resource, ReadError> {
    let category = ResourceCategory::from_value(r.category()).ok_or_else(|| ReadError::Enum {
        what: format!("resource {i}"),
        field: "category",
        value: r.category().into(),
    })?;
    let description = r.description();
    Ok(Resource {
        vk_descriptor_type: Some(r.descriptor_type()).filter(|&d| d != u32::MAX),
        vk_format: r.format(),
        category,
        shape: description.map(|d| d.shape()).unwrap_or_default(),
        strides: description.map(|d| d.strides()).unwrap_or_default(),
        sampler: r.sampler().map(|s| s.read()),
        alias_group: Some(r.alias_group()).filter(|&a| a != u32::MAX),
    })
}

fn check_index(what: &str, field: &'static str, value: u32, len: usize) -> Result<(), ReadError> {
    if (value as usize) < len {
        Ok(())
    } else {
        Err(ReadError::Reference {
            what: what.to_string(),
            field,
            value,
            len,
        })
    }
}

fn read_sequence(
    seq: &fb::ModelSequenceTable<'_>,
    modules: usize,
    resources: usize,
) -> Result<ModelSequence, ReadError> {
    let mut segments = Vec::new();
    for (i, s) in seq.segments().iter().enumerate() {
        let what = format!("segment {i} `{}`", s.name());
        check_index(&what, "module_index", s.module_index(), modules)?;
        let set_infos: Vec<DescriptorSetInfo> = s
            .set_infos()
            .iter()
            .map(|d| DescriptorSetInfo {
                set_index: Some(d.set_index()).filter(|&x| x != u32::MAX),
                bindings: d.bindings(),
            })
            .collect();
        let segment = Segment {
            ty: module_type(|| what.clone(), s.ty())?,
            name: s.name().to_string(),
            module_index: s.module_index(),
            set_infos,
            inputs: s.inputs(),
            outputs: s.outputs(),
            constants: s.constants(),
            dispatch_shape: s.dispatch_shape(),
            push_constant_ranges: s.push_constant_ranges(),
        };
        let slots = segment
            .set_infos
            .iter()
            .flat_map(|d| d.bindings.iter())
            .chain(&segment.inputs)
            .chain(&segment.outputs);
        for slot in slots {
            check_index(&what, "mrt_index", slot.mrt_index, resources)?;
        }
        segments.push(segment);
    }
    let sequence = ModelSequence {
        segments,
        inputs: seq.inputs(),
        outputs: seq.outputs(),
        input_names: seq.input_names(),
        output_names: seq.output_names(),
    };
    for slot in sequence.inputs.iter().chain(&sequence.outputs) {
        check_index("model sequence", "mrt_index", slot.mrt_index, resources)?;
    }
    Ok(sequence)
}

fn read_constants(section: &[u8], base: u64, resources: usize) -> Result<Vec<Constant>, ReadError> {
    let err = |at: usize, message: String| ReadError::Constants {
        offset: base + at as u64,
        message,
    };
    if section.is_empty() {
        return Ok(Vec::new());
    }
    if section.len() < 16 || &section[..8] != CONSTANTS_TAG {
        return Err(err(
            0,
            "expected the `CONST00` layout (the legacy FlatBuffers layout is not read)".into(),
        ));
    }
    let count = u64_at(section, 8);
    let records_end = usize::try_from(count)
        .ok()
        .and_then(|c| c.checked_mul(CONSTANT_RECORD)?.checked_add(16))
        .filter(|&end| end <= section.len())
        .ok_or_else(|| err(8, format!("{count} records do not fit the section")))?;
    let payload = &section[records_end..];
    let mut constants = Vec::new();
    for (i, at) in (16..records_end).step_by(CONSTANT_RECORD).enumerate() {
        let mrt_index = u32_at(section, at);
        let sparsity_dimension = u32_at(section, at + 4) as i32;
        let size = u64_at(section, at + 8);
        let offset = u64_at(section, at + 16);
        if mrt_index as usize >= resources {
            return Err(err(
                at,
                format!("constant {i} names resource {mrt_index} of {resources}"),
            ));
        }
        if sparsity_dimension < -1 {
            return Err(err(
                at + 4,
                format!("constant {i} has sparsity dimension {sparsity_dimension}"),
            ));
        }
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(o, s)| Some(o..o.checked_add(s)?))
            .filter(|r| r.end <= payload.len())
            .ok_or_else(|| {
                err(
                    at + 8,
                    format!(
                        "constant {i} ({size} bytes at payload offset {offset}) lies outside the \
                         {}-byte payload",
                        payload.len()
                    ),
                )
            })?;
        constants.push(Constant {
            mrt_index,
            sparsity_dimension,
            data: payload[range].to_vec(),
        });
    }
    Ok(constants)
}
