//! Tile shapes of the tensor-core GEMM on this device (`bench/probes/gemm_tile.comp`):
//! an `M = N = K` fp16 product with fp32 sums, by subgroups per workgroup, accumulators per
//! subgroup, depth per stage and shared-memory stages, each checked against the CPU on
//! sampled entries. What `gemm_cm`'s shape is chosen by.
//!
//! `cargo run --release --example gemm_tile [-- SIZE [REPEATS]]` (defaults 4096, 10).
//! One line per variant: `gemm_tile NAME tile TMxTN threads T ms X TFLOPs Y maxerr E`; then
//! the runtime's `gemm_cm` on the same product, specialized as the Gemm layer has it and with
//! those constants as literals.

use fpshader::meta::ShaderModule;
use fpshader::specialize::{SpecValue, Specialization};
use fpshader::{ContextOptions, OptionSet, ShaderPath, shader};

/// One variant: (SGM, SGN, FM, FN, DEPTH, STAGES, BT, BAND) as the shader's defines.
macro_rules! tile {
    ($sgm:literal, $sgn:literal, $fm:literal, $fn_:literal, $depth:literal, $stages:literal, $bt:literal, $band:literal $(, $k:literal = $v:literal)*) => {
        (
            concat!(
                $sgm, "x", $sgn, "_", $fm, "x", $fn_, "_d", $depth, "_s", $stages, "_bt", $bt, "_b",
                $band $(, "_", $k, $v)*
            ),
            [$sgm, $sgn, $fm, $fn_, $depth, $stages],
            $bt,
            shader!(
                "bench/probes/gemm_tile.comp",
                define: [
                    ("SGM", $sgm),
                    ("SGN", $sgn),
                    ("FM", $fm),
                    ("FN", $fn_),
                    ("DEPTH", $depth),
                    ("STAGES", $stages),
                    ("BT", $bt),
                    ("BAND", $band)
                    $(, ($k, $v))*
                ],
                target_env: "vulkan1.3",
            ),
        )
    };
}

type Variant = (
    &'static str,
    [&'static str; 6],
    &'static str,
    &'static ShaderModule,
);

/// fp16 bits of a few exact values: -0.5, -0.25, 0, 0.25, 0.5 by index.
const HALVES: [u16; 5] = [0xb800, 0xb400, 0x0000, 0x3400, 0x3800];

fn half_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f32::from(h & 0x3ff);
    sign * match exp {
        0 => frac * 2f32.powi(-24),
        31 => f32::NAN,
        _ => (1.0 + frac / 1024.0) * 2f32.powi(exp - 15),
    }
}

/// The best of runs over at least a second: the SM clock rises only under load.
fn best_seconds(
    mut run: impl FnMut() -> Result<f64, fpshader::Error>,
) -> Result<f64, fpshader::Error> {
    let start = std::time::Instant::now();
    let mut secs = f64::MAX;
    while start.elapsed().as_secs_f64() < 1.0 {
        secs = secs.min(run()?);
    }
    Ok(secs)
}

/// The largest difference between the sampled outputs (`value(i)` of the row-major n × n
/// output) and the CPU's sums.
fn max_error(
    samples: &[(usize, usize)],
    wanted: &[f32],
    value: impl Fn(usize) -> f32,
    n: usize,
) -> f32 {
    samples
        .iter()
        .zip(wanted)
        .map(|(&(r, c), w)| (value(r * n + c) - w).abs())
        .fold(0f32, f32::max)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let size: u32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(4096);
    let repeats: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(10);
    let ctx = fpshader::Context::new(ContextOptions {
        path: Some(ShaderPath::Passthrough),
        ..ContextOptions::default()
    })?;
    println!(
        "device {} shared_limit {}",
        ctx.describe().replace(' ', "_"),
        ctx.limits().max_compute_workgroup_storage_size
    );
    let variants: Vec<Variant> = vec![
        tile!("2", "2", "4", "4", "64", "1", "1", "8"),
        tile!("2", "2", "4", "4", "32", "1", "1", "8"),
        tile!("2", "2", "4", "4", "32", "2", "1", "8"),
        tile!("2", "4", "4", "2", "64", "1", "1", "8"),
        tile!("2", "4", "4", "4", "32", "1", "1", "8"),
        tile!("4", "2", "4", "4", "32", "1", "1", "8"),
        tile!("2", "2", "4", "4", "64", "1", "0", "8"),
        tile!("2", "2", "4", "4", "32", "1", "0", "8"),
        tile!("2", "2", "4", "4", "32", "2", "0", "8"),
        tile!("2", "2", "4", "4", "64", "1", "1", "8", "ASTREAM" = "1"),
        tile!("2", "2", "4", "4", "64", "1", "1", "8", "SAME" = "0"),
    ];
    let n = size as usize;
    // A (n × n, rows along K), B stored N × K (BT) or K × N: the same values either way, read
    // through the matching index
    let value = |i: usize| (i.wrapping_mul(2654435761) >> 7) % HALVES.len();
    let a_idx: Vec<usize> = (0..n * n).map(value).collect();
    let b_idx: Vec<usize> = (0..n * n).map(|i| value(i + 12345)).collect();
    let bytes =
        |idx: &[usize]| -> Vec<u8> { idx.iter().flat_map(|&v| HALVES[v].to_le_bytes()).collect() };
    let a = ctx.upload(&bytes(&a_idx))?;
    let b_nk = ctx.upload(&bytes(&b_idx))?;
    // the same B stored K × N: element (k, j) of the product is b_idx[j * n + k]
    let b_kn_idx: Vec<usize> = (0..n * n).map(|i| b_idx[(i % n) * n + i / n]).collect();
    let b_kn = ctx.upload(&bytes(&b_kn_idx))?;
    // room for fp32 outputs: the runtime's gemm_cm below writes fp32 where the variant the
    // context picks has no fp16 storage
    let out = ctx.storage_buffer((n * n * 4) as u64)?;
    let val = |v: usize| half_to_f32(HALVES[v]);
    let expected = |r: usize, c: usize| -> f32 {
        (0..n)
            .map(|k| val(a_idx[r * n + k]) * val(b_idx[c * n + k]))
            .sum()
    };
    let samples: Vec<(usize, usize)> = (0..64)
        .map(|s| ((s * 7919 + 13) % n, (s * 104729 + 71) % n))
        .collect();
    let wanted: Vec<f32> = samples.iter().map(|&(r, c)| expected(r, c)).collect();
    let flops = 2.0 * (n as f64).powi(3);
    for (name, shape, bt, module) in variants {
        let [sgm, sgn, fm, fn_, depth, stages] = shape.map(|v| v.parse::<u32>().unwrap_or(1));
        let (tm, tn) = (sgm * 16 * fm, sgn * 16 * fn_);
        // the shader's shared arrays, checked before the pipeline is made: more than the
        // device allows does not fail creation on every driver (NVIDIA's hung)
        let row = depth / 8 + 1;
        let b_stage = if bt == "1" {
            tn * row
        } else {
            depth * (tn / 8 + 1)
        };
        let shared = (tm * row + b_stage) * 16 * stages;
        if shared > ctx.limits().max_compute_workgroup_storage_size {
            println!("gemm_tile {name} skipped: {shared} bytes of shared memory");
            continue;
        }
        let spec = Specialization {
            values: vec![],
            local_size: None,
        };
        let pipeline = match ctx.pipeline(module, OptionSet::FP32, &spec) {
            Ok(p) => p,
            Err(e) => {
                println!("gemm_tile {name} error {e}");
                continue;
            }
        };
        let threads = 32 * sgm * sgn;
        let global = [size / tn * threads, size / tm, 1];
        let b = if bt == "1" { &b_nk } else { &b_kn };
        let secs = best_seconds(|| {
            fpshader_tests::seconds_per_dispatch(
                &ctx,
                &pipeline,
                &[&a, b, &out],
                &[size, size, size],
                global,
                repeats,
            )
        })?;
        let got = ctx.download(&out)?;
        let err = max_error(
            &samples,
            &wanted,
            |i| half_to_f32(u16::from_le_bytes([got[2 * i], got[2 * i + 1]])),
            n,
        );
        println!(
            "gemm_tile {name} tile {tm}x{tn} threads {threads} ms {:.3} TFLOPs {:.1} maxerr {err}",
            secs * 1e3,
            flops / secs / 1e12
        );
    }
    // the runtime's gemm_cm as the Gemm layer runs it on aligned operands with K a multiple
    // of its depth (constant 10 = 2): A · Bᵀ, 128 × 128 tiles, no C; in the variant the
    // runtime takes (the device's options: fp16 storage and arithmetic), then with those
    // constants as literals (`LITERAL_FORM`), against what specializing costs
    let constants = Specialization {
        values: vec![
            (1, SpecValue::I32(1)),
            (5, SpecValue::I32(4)),
            (10, SpecValue::I32(2)),
        ],
        local_size: None,
    };
    let literal = Specialization {
        values: vec![],
        local_size: None,
    };
    let forms: [(&str, &'static ShaderModule, &Specialization); 2] = [
        (
            "specialized",
            shader!("shaders/gemm_cm.comp", fp16s, fp16a, include: ["shaders/include"]),
            &constants,
        ),
        (
            "literal",
            shader!(
                "shaders/gemm_cm.comp",
                fp16s,
                fp16a,
                include: ["shaders/include"],
                define: [("LITERAL_FORM", "1")],
            ),
            &literal,
        ),
    ];
    let push = [
        size,
        size,
        size,
        size,
        size,
        0,
        size,
        0,
        0,
        0,
        u32::MAX,
        1,
        0,
        0,
        0,
    ];
    for (name, module, spec) in forms {
        let pipeline = match ctx.pipeline(module, ctx.allowed_options(), spec) {
            Ok(p) => p,
            Err(e) => {
                println!("gemm_tile gemm_cm {name} error {e}");
                continue;
            }
        };
        let secs = best_seconds(|| {
            fpshader_tests::seconds_per_dispatch(
                &ctx,
                &pipeline,
                &[&a, &b_nk, &a, &out, &a, &a],
                &push,
                [size, size / 128, 1],
                repeats,
            )
        })?;
        // the variant's storage: fp16 where it has fp16 storage, else fp32
        let half = pipeline.options.contains(fpshader::Opt::Fp16Storage);
        let got = ctx.download(&out)?;
        let err = max_error(
            &samples,
            &wanted,
            |i| {
                if half {
                    half_to_f32(u16::from_le_bytes([got[2 * i], got[2 * i + 1]]))
                } else {
                    f32::from_le_bytes([got[4 * i], got[4 * i + 1], got[4 * i + 2], got[4 * i + 3]])
                }
            },
            n,
        );
        println!(
            "gemm_tile gemm_cm {name} options {:?} ms {:.3} TFLOPs {:.1} maxerr {err}",
            pipeline.options,
            secs * 1e3,
            flops / secs / 1e12
        );
    }
    Ok(())
}
