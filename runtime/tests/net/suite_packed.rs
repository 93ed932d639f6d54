//! Packed CPU blobs through the convolution family, against ncnn's wheel.

use super::suite::*;
use super::suite_conv::{cpu_algo, forward_cases, loaded_layer};
use super::*;
use fpshader::layer::convolution::CpuAlgo;

/// Packed CPU blobs through the convolution algorithms that take them: the packed kernels
/// (pointwise, strided too, through the products' kernel; depthwise a pack of channels to a
/// vector) and Winograd gathering packed rows and storing packed outputs take the cases of
/// test_convolution, test_convolution_2 and test_convolutiondepthwise whose channels come in
/// whole packs (Winograd's from 32 inputs), on CPUs that run them (pack8 with AVX2 and FMA for
/// the dense layers, AVX for depthwise; pack4 on aarch64, run under qemu by `cargo xtask
/// test`), and none elsewhere; those cases (and any that fall to im2col on their map) match
/// ncnn's wheel with packing on (the suite's fp32 packed run) as without.
#[test]
fn the_packed_kernels_match_ncnn() {
    let cases = forward_cases(&mut Rng(614));
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
