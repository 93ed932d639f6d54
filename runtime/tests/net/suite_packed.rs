//! Packed CPU blobs through the convolution family, against ncnn's wheel.

use super::suite::*;
use super::suite_conv::{FORWARD_KDSP, cpu_algo, family, forward_cases, loaded_layer};
use super::*;
use fpshader::layer::convolution::CpuAlgo;

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

/// Whether a case's layer is grouped and not depthwise (`7=` groups of more than one channel).
fn grouped(case: &Case) -> bool {
    let value = |key: &str| {
        case.params
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.parse::<usize>().ok())
    };
    let (group, outch) = (value("7=").unwrap_or(1), value("0=").unwrap_or(0));
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
    #[cfg(target_arch = "x86_64")]
    let (dense, lanes) = (
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
        is_x86_feature_detected!("avx"),
    );
    #[cfg(target_arch = "aarch64")]
    let (dense, lanes) = (true, true);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let (dense, lanes) = (false, false);
    // by the algorithm each takes (strided 1×1 layers apart: the pointwise kernel's walk)
    let mut by_class: std::collections::BTreeMap<String, Vec<Case>> = Default::default();
    for case in cases
        .into_iter()
        .filter(|c| loaded_layer(c).support().packing)
    {
        let algo = cpu_algo(&case);
        let class = match algo {
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
