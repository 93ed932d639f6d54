//! Host-side specialization of every built-in shader variant: valid SPIR-V after patching and
//! freezing, and (for what naga supports) accepted by naga, the portable wgpu path.
#![cfg(not(fpshader_emulated))]

use std::io::Write;
use std::process::{Command, Stdio};

use fpshader::meta::{DescriptorKind, LocalSize, Scalar, ShaderVariant};
use fpshader::samplers;
use fpshader::shaders::SHADERS;
use fpshader::specialize::{SpecValue, Specialization, SpecializeError, freeze, patch};
use rayon::prelude::*;

#[path = "common/example_shaders.rs"]
mod example_shaders;
use example_shaders::RELU;

fn spirv_val(words: &[u32], what: &str) {
    if std::env::var_os("FPSHADER_SKIP_SPIRV_VAL").is_some() {
        return;
    }
    // xtask's spirv-val, of the SPIRV-Tools shaderc vendors: the system's may predate
    // cooperative matrices; the module goes through its standard input (no file for
    // checks running side by side to share)
    let tool = std::env::var_os("FPSHADER_SPIRV_VAL").unwrap_or_else(|| "spirv-val".into());
    // the target of the module's SPIR-V version: 1.3 for the default target, 1.6 where a
    // shader's extension needs it (VK_NV_cooperative_matrix2)
    let env = fpshader_build::TargetEnv::of_module(words)
        .unwrap_or_default()
        .max(fpshader_build::TargetEnv::Vulkan1_1)
        .name();
    let mut child = Command::new(&tool)
        .args(["--target-env", env, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{tool:?} not runnable ({e}): run `cargo xtask deps`"));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    // spirv-val reads all of its input before it writes anything, so one pipe at a time
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn naga_accepts(words: &[u32]) -> Result<(), String> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let module = naga::front::spv::parse_u8_slice(&bytes, &naga::front::spv::Options::default())
        .map_err(|e| format!("parse: {e}"))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| format!("validate: {e:?}"))?;
    Ok(())
}

/// Every spec constant set to a non-zero value of its type, so psc() takes the constant branch.
fn nonzero(v: &ShaderVariant) -> Specialization {
    Specialization {
        values: v
            .reflection
            .spec_constants
            .iter()
            .map(|s| {
                let value = match s.ty {
                    Scalar::Float(_) => SpecValue::F32(0.5),
                    Scalar::Bool => SpecValue::Bool(true),
                    Scalar::Uint(_) => SpecValue::U32(3),
                    _ => SpecValue::I32(3),
                };
                (s.id, value)
            })
            .collect(),
        local_size: match v.reflection.local_size {
            LocalSize::Literal { .. } => Some([8, 4, 2]),
            _ => None,
        },
    }
}

#[test]
fn frozen_builtin_variants_are_valid_and_constant_free() {
    // the built-in shaders and the examples' relu, whose image variants read a sampler; each
    // variant with no values and with non-zero ones, spread over the cores (each check runs
    // spirv-val four times)
    let jobs: Vec<(&str, &ShaderVariant, Specialization)> = (SHADERS.iter().copied())
        .chain([RELU])
        .flat_map(|m| m.variants.iter().map(move |v| (&*m.name, v)))
        .flat_map(|(name, v)| [Specialization::default(), nonzero(v)].map(|spec| (name, v, spec)))
        .collect();
    let naga: Vec<Result<(), String>> = jobs
        .par_iter()
        .map(|(name, v, spec)| check_frozen(name, v, spec))
        .collect();
    let naga_ok = naga.iter().filter(|r| r.is_ok()).count();
    let naga_failed: Vec<&String> = naga.iter().filter_map(|r| r.as_ref().err()).collect();
    eprintln!(
        "naga accepted {naga_ok} frozen variants, rejected {}",
        naga_failed.len()
    );
    for f in &naga_failed {
        eprintln!("  {f}");
    }
    assert!(naga_ok > 0);
}

/// One variant of shader `name` patched, split and frozen with `spec`: valid SPIR-V at each
/// step, no spec constants left; then naga's verdict on the frozen module (a rejection is
/// returned only where naga 30 is known to lack what the variant uses).
fn check_frozen(name: &str, v: &ShaderVariant, spec: &Specialization) -> Result<(), String> {
    let what = format!("{name} {}", v.options.name());
    let patched = patch(&v.spirv, &v.reflection, spec).unwrap();
    spirv_val(&patched, &format!("{what} patched"));
    let first_free = v.reflection.bindings.len() as u32;
    let split = samplers::split(&patched, first_free).unwrap();
    let combined = v
        .reflection
        .bindings
        .iter()
        .filter(|b| b.kind == DescriptorKind::CombinedImageSampler)
        .count();
    assert_eq!(split.samplers.len(), combined, "{what}");
    spirv_val(&split.words, &format!("{what} patched, samplers split"));
    let frozen = freeze(&v.spirv, &v.reflection, spec).unwrap_or_else(|e| panic!("{what}: {e}"));
    spirv_val(&frozen, &format!("{what} frozen"));
    let frozen = samplers::split(&frozen, first_free).unwrap().words;
    spirv_val(&frozen, &format!("{what} frozen, samplers split"));
    let r = fpshader_build::reflect::reflect(&frozen).unwrap();
    assert!(r.spec_constants.is_empty(), "{what}: spec constants left");
    if let Some(size) = spec.local_size {
        assert!(matches!(r.local_size, LocalSize::Literal { size: s, .. } if s == size));
    }
    naga_accepts(&frozen).map_err(|e| {
        // known naga 30 gaps: unpackFloat2x16 (fp16pa) and the uint64 lfpvec4 conversions of
        // fp16sa local memory; images pass once samplers are split
        let class = v.options.float_class().name();
        // (and cooperative matrices and int8 dot products, which only the passthrough path
        // takes)
        let features = v.reflection.features;
        let known = class == "fp16pa"
            || (class == "fp16sa" && v.options.contains(fpshader::Opt::LocalMemory))
            || features.contains(fpshader::meta::Features::COOPERATIVE_MATRIX)
            || features.contains(fpshader::meta::Features::INTEGER_DOT_PRODUCT);
        assert!(known, "naga rejects {what}: {e}");
        format!("{what}: {e}")
    })
}

#[test]
fn unfrozen_psc_shaders_are_what_naga_cannot_read() {
    // the reason freezing exists: psc() compiles to OpSpecConstantOp
    let relu = RELU;
    let v = relu.variant(fpshader::OptionSet::FP32).unwrap();
    assert!(naga_accepts(&v.spirv).is_err());
    let frozen = freeze(&v.spirv, &v.reflection, &Specialization::default()).unwrap();
    naga_accepts(&frozen).unwrap();
}

#[test]
fn patch_writes_values_where_reflection_says() {
    let relu = RELU;
    let v = relu.variant(fpshader::OptionSet::FP32).unwrap();
    let spec = Specialization {
        values: vec![(0, SpecValue::F32(0.25)), (1, SpecValue::I32(7))],
        local_size: Some([64, 1, 1]),
    };
    let patched = patch(&v.spirv, &v.reflection, &spec).unwrap();
    let r = fpshader_build::reflect::reflect(&patched).unwrap();
    assert_eq!(r.spec_constants[0].default, u64::from(0.25f32.to_bits()));
    assert_eq!(r.spec_constants[1].default, 7);
    assert!(matches!(
        r.local_size,
        LocalSize::Literal {
            size: [64, 1, 1],
            ..
        }
    ));
}

#[test]
fn bad_specializations_are_errors() {
    let relu = RELU;
    let v = relu.variant(fpshader::OptionSet::FP32).unwrap();
    let unknown = Specialization {
        values: vec![(99, SpecValue::I32(1))],
        local_size: None,
    };
    assert_eq!(
        patch(&v.spirv, &v.reflection, &unknown),
        Err(SpecializeError::UnknownId(99))
    );
    let zero = Specialization {
        values: vec![],
        local_size: Some([0, 1, 1]),
    };
    assert!(matches!(
        freeze(&v.spirv, &v.reflection, &zero),
        Err(SpecializeError::ZeroLocalSize(_))
    ));
    // innerproduct's local-memory path declares its own size
    let ip = fpshader::shaders::Shader::Innerproduct.module();
    let v = ip
        .variant(fpshader::OptionSet::parse("lmem").unwrap())
        .unwrap();
    let other = Specialization {
        values: vec![],
        local_size: Some([32, 1, 1]),
    };
    assert!(matches!(
        patch(&v.spirv, &v.reflection, &other),
        Err(SpecializeError::FixedLocalSize(..))
    ));
    let same = Specialization {
        values: vec![],
        local_size: Some([64, 1, 1]),
    };
    assert!(patch(&v.spirv, &v.reflection, &same).is_ok());
}

/// Splitting samplers and freezing are given whatever a variant holds: damaged modules are
/// errors, never panics, and modules with no combined image-sampler come back unchanged.
#[test]
fn sampler_split_survives_damaged_modules() {
    let relu = RELU;
    let v = relu
        .variant(fpshader::OptionSet::FP32.with(fpshader::Opt::Image))
        .unwrap();
    let words: Vec<u32> = v.spirv.to_vec();
    for len in 0..words.len() {
        let _ = samplers::split(&words[..len], 2);
        let _ = freeze(&words[..len], &v.reflection, &Specialization::default());
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..3000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut damaged = words.clone();
        let at = 5 + (state as usize) % (words.len() - 5);
        damaged[at] = (state >> 32) as u32 & if state & 1 == 0 { 0xffff } else { u32::MAX };
        let _ = samplers::split(&damaged, 2);
        let _ = freeze(&damaged, &v.reflection, &Specialization::default());
    }
    let buffers = relu.variant(fpshader::OptionSet::FP32).unwrap();
    let same = samplers::split(&buffers.spirv, 2).unwrap();
    assert!(same.samplers.is_empty());
    assert_eq!(same.words, buffers.spirv.to_vec());
}
