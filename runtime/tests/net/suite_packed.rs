//! Packed CPU blobs through the convolution family, against ncnn's wheel.

use super::suite::*;
use super::suite_conv::{FORWARD_KDSP, cpu_algo, family, forward_cases, loaded_layer};
use super::*;
use fpshader::layer::conv::convolution::CpuAlgo;

/// Grouped layers shaped as RegNet's (groups of 8 and 16 channels; ncnn's own grouped cases
/// have 1 to 8 channels per group, none a whole pack8 on each side), templated over
/// test_convolutiondepthwise's kernel, dilation, stride and pad table, and one whose groups
/// (64 channels) are too wide for the packed taps; in the order of [`family`]'s calls.
const GROUPED_CALLS: &[[i32; 15]] = &[
    [15, 7, 48, 48, 0, 0, 0, 0, 1, 6, 0, 0, 0, 0, 1],
    [18, 17, 32, 32, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1],
    [11, 10, 16, 32, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1],
    [9, 7, 128, 128, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1],
];

/// The CPU's packing of fp32 blobs: eight lanes on x86 (AVX), four on aarch64.
const PACK: usize = if cfg!(target_arch = "aarch64") { 4 } else { 8 };

/// `(dense, lanes)`: whether this CPU runs the products' kernel on packed blobs (AVX2 with FMA,
/// aarch64) and the packed depthwise and grouped taps (AVX, aarch64).
fn packed_kernels() -> (bool, bool) {
    #[cfg(target_arch = "x86_64")]
    return (
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
        is_x86_feature_detected!("avx"),
    );
    #[cfg(target_arch = "aarch64")]
    return (true, true);
    #[allow(unreachable_code)]
    (false, false)
}

/// Whether a case is a stem's convolution that writes `pack` outputs (`pack` > 1): dense,
/// through im2col, its input channels filling no pack (pack1 as the net gives them), its
/// outputs whole packs.
fn stem(case: &Case, pack: usize) -> bool {
    let channels = case.inputs[0].shape[2];
    pack > 1
        && !loaded_layer(case).support().packing
        && param(case, "7=").unwrap_or(1) == 1
        && cpu_algo(case) == CpuAlgo::Im2col
        && !channels.is_multiple_of(pack)
        && param(case, "0=").is_some_and(|outch| outch.is_multiple_of(pack))
}

/// A case's integer param `key` (`"7="`), if it has one.
fn param(case: &Case, key: &str) -> Option<usize> {
    case.params
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.parse::<usize>().ok())
}

/// A stem convolution (three input channels, sixteen outputs, 3×3 stride 2) hands the layer
/// after it, which takes any packing, a packed output on CPUs with the products' kernel
/// (pack8 with AVX2 and FMA, pack4 on aarch64), as ncnn's pack1-to-pack8 convolutions do; a
/// pack1 output elsewhere and without packing.
#[test]
fn a_stem_convolution_writes_packed_outputs() {
    let (dense, _) = packed_kernels();
    let param = "7767517\n3 3\nInput data 0 1 data\n\
                 Convolution stem 1 1 data x 0=16 1=3 3=2 4=1 5=1 6=432 9=1\n\
                 Probe p 1 1 x out\n";
    let (mut support, implements) = super::contract::one_blob(false);
    support.packing = true;
    support.any_packing = true;
    for packing in [false, true] {
        let (mut net, seen) = super::contract::probe_net(support, implements, param);
        net.opt = RunOptions::fp32();
        net.opt.use_packing_layout = packing;
        net.load_model_zeros().unwrap();
        let mut ex = net.create_extractor().unwrap();
        ex.input("data", Mat::new_3d(9, 7, 3, 1).unwrap()).unwrap();
        ex.extract("out").unwrap();
        let want = if packing && dense { PACK } else { 1 };
        assert_eq!(seen.lock().unwrap()[0].elempack, want, "packing {packing}");
    }
}

/// Whether a case's layer is grouped and not depthwise (`7=` groups of more than one channel).
fn grouped(case: &Case) -> bool {
    let (group, outch) = (
        param(case, "7=").unwrap_or(1),
        param(case, "0=").unwrap_or(0),
    );
    group > 1 && group != outch
}

/// Packed CPU blobs through the convolution algorithms that take them: the packed kernels
/// (pointwise, strided too, through the products' kernel; depthwise a pack of channels to a
/// vector; grouped a pack of output channels from its group's packs) and Winograd gathering
/// packed rows and storing packed outputs take the cases of test_convolution,
/// test_convolution_2 and test_convolutiondepthwise (and [`GROUPED_CALLS`]) whose channels come
/// in whole packs (Winograd's from 32 inputs), on CPUs that run them (pack8 with AVX2 and FMA
/// for the dense layers, AVX for depthwise and grouped; pack4 on aarch64, run under qemu by
/// `cargo xtask test`), and none elsewhere; those cases (and any that fall to im2col on their
/// map) match ncnn's wheel with packing on (the suite's fp32 packed run) as without.
#[test]
fn the_packed_kernels_match_ncnn() {
    let mut rng = Rng(614);
    let mut cases = forward_cases(&mut rng);
    let wide = family(
        &mut rng,
        "ConvolutionDepthWise",
        FORWARD_KDSP,
        GROUPED_CALLS,
    );
    // the wide groups' cases stay pack1
    assert!(
        wide.iter()
            .filter(|c| c.params.contains("0=128 "))
            .all(|c| !loaded_layer(c).support().packing),
        "groups of 64 channels take packed blobs"
    );
    cases.extend(wide);
    let (dense, lanes) = packed_kernels();
    // by the algorithm each takes (strided 1×1 layers apart: the pointwise kernel's walk)
    let mut by_class: std::collections::BTreeMap<String, Vec<Case>> = Default::default();
    let pack = if dense { PACK } else { 1 };
    for case in cases
        .into_iter()
        .filter(|c| loaded_layer(c).support().packing || stem(c, pack))
    {
        let algo = cpu_algo(&case);
        let class = match algo {
            _ if !loaded_layer(&case).support().packing => "Stem".to_string(),
            CpuAlgo::Im2col if case.params.contains(" 1=1 ") && case.params.contains(" 3=2 ") => {
                "strided pointwise".to_string()
            }
            _ if grouped(&case) => "Grouped".to_string(),
            CpuAlgo::DepthwiseLanes => format!("{:?}", CpuAlgo::Depthwise),
            algo => format!("{algo:?}"),
        };
        by_class.entry(class).or_default().push(case);
    }
    let want: &[(&str, bool)] = &[
        ("Pointwise", dense),
        ("strided pointwise", dense),
        ("Winograd(4)", dense),
        ("Winograd(2)", dense),
        ("Depthwise", lanes),
        ("Grouped", lanes),
        ("Stem", dense),
    ];
    for (class, expected) in want {
        assert_eq!(
            by_class.contains_key(*class),
            *expected,
            "{class}: cases taking packed blobs ({:?})",
            by_class.keys().collect::<Vec<_>>()
        );
    }
    // up to six of each, every other: spread over shapes, strides and pads
    let picked: Vec<Case> = by_class
        .into_values()
        .flat_map(|cases| cases.into_iter().step_by(2).take(6))
        .collect();
    if !picked.is_empty() {
        check_suite_cpu_only(picked);
    }
}
