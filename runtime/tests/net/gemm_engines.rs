//! The GEMM's engines on one device: the workgroup matrices (VK_NV_cooperative_matrix2), the
//! subgroup tiles (VK_KHR_cooperative_matrix) and the FMA tiles, each where the device and
//! the product's shape say, against the CPU.

use super::*;
use crate::suite::{RANDOM, random_values};

/// Gemm and MatMul run on tensor cores exactly where the context has cooperative matrices and
/// the blobs are fp16 storage (`gemm_cm2` where it has workgroup matrices and the product has
/// enough tiles for them, else `gemm_cm`), on the FMA GEMM everywhere else, checked against
/// the CPU: on workgroup matrices, batched products of 256 128 × 256 tiles and of 400 128 × 128
/// ones, wholly inside the operands with K a multiple of 64, 256 128 × 256 tiles with edges on
/// every side, a Gemm with a transposed B in 192 64 × 64 tiles, 512 deep (steps of 4 × 64),
/// and the same with beta times a C of each broadcast (a column's, a row's, a whole, one value);
/// on subgroup ones, a batched product of 128 64 × 64 tiles, a Gemm with every transpose, alpha, beta and a whole C in
/// one tile and one whose operands load 8 values at a time. `FPSHADER_REQUIRE_COOPMAT`
/// (set on machines that have them) makes a passthrough context without them fail the test,
/// `FPSHADER_REQUIRE_MATRIX2` one without workgroup matrices.
#[test]
fn gemm_takes_cooperative_matrices_where_the_device_has_them() {
    let mut rng = Rng(2611);
    let matmul = one_layer("MatMul", &["a", "b"], "0=0");
    let gemm = one_layer("Gemm", &["a", "b", "c"], "0=1.3 1=0.7 2=1 3=1 14=1");
    let gemm_nt = one_layer("Gemm", &["a", "b"], "3=1");
    // the shader loads 8 values at once where an operand's rows allow (A of gemm_nt, both its
    // operands; B of the MatMul, along its rows) and one at a time elsewhere; gemm_nt takes
    // the pipeline compiled without the one-at-a-time path (both operands aligned)
    let models = [
        (
            matmul.clone(),
            vec![
                Input::new(&mut rng, "a", 3, [64, 128, 1, 256]),
                Input::new(&mut rng, "b", 3, [256, 64, 1, 256]),
            ],
            true,
        ),
        (
            matmul.clone(),
            vec![
                Input::new(&mut rng, "a", 3, [64, 128, 1, 200]),
                Input::new(&mut rng, "b", 3, [256, 64, 1, 200]),
            ],
            true,
        ),
        (
            matmul.clone(),
            vec![
                Input::new(&mut rng, "a", 3, [70, 130, 1, 128]),
                Input::new(&mut rng, "b", 3, [136, 70, 1, 128]),
            ],
            true,
        ),
        (
            matmul,
            vec![
                Input::new(&mut rng, "a", 3, [64, 128, 1, 32]),
                Input::new(&mut rng, "b", 3, [128, 64, 1, 32]),
            ],
            false,
        ),
        (
            gemm,
            vec![
                Input::new(&mut rng, "a", 2, [100, 77, 1, 1]),
                Input::new(&mut rng, "b", 2, [77, 90, 1, 1]),
                Input::new(&mut rng, "c", 2, [90, 100, 1, 1]),
            ],
            false,
        ),
        (
            gemm_nt.clone(),
            vec![
                Input::new(&mut rng, "a", 2, [96, 40, 1, 1]),
                Input::new(&mut rng, "b", 2, [96, 64, 1, 1]),
            ],
            false,
        ),
        (
            gemm_nt,
            vec![
                Input::new(&mut rng, "a", 2, [512, 1024, 1, 1]),
                Input::new(&mut rng, "b", 2, [512, 768, 1, 1]),
            ],
            true,
        ),
    ];
    let mut models = models.to_vec();
    // C through gemm_cm2's epilogue: beta times a column's, a row's, a whole or one value
    // added to 192 64 × 64 tiles with a transposed B
    let gemm_c = one_layer("Gemm", &["a", "b", "c"], "1=0.7 3=1");
    for (dims, c) in [
        (1, [768, 1, 1, 1]),
        (2, [1, 1024, 1, 1]),
        (2, [768, 1024, 1, 1]),
        (1, [1, 1, 1, 1]),
    ] {
        let inputs = vec![
            Input::new(&mut rng, "a", 2, [512, 1024, 1, 1]),
            Input::new(&mut rng, "b", 2, [512, 768, 1, 1]),
            Input::new(&mut rng, "c", dims, c),
        ];
        models.push((gemm_c.clone(), inputs, true));
    }
    for (param, inputs, workgroup) in &models {
        let want = run_net(param, &[], inputs, "out", RunOptions::fp32(), None)
            .unwrap()
            .to_values();
        check_tensor_core_choice(
            (param, &[]),
            inputs,
            &want,
            ("gemm", true, *workgroup),
            (RunOptions::fp32(), 0.1),
        );
    }
}

/// Grouped convolutions of a few groups whose outputs each sum at least 256 products
/// (alexnet's 2-group 5×5 and 3×3 layers) run on the device as one dense implicit GEMM, zero
/// weights outside each output's group: on tensor cores where fp16 blobs and the device
/// allow, else the FMA tiles, against the CPU's grouped convolution, each with its bias and a
/// ReLU. A 3-group 1×1 layer of 40 channels a group (shufflenet's) keeps the direct shader.
#[test]
fn few_large_groups_take_the_convolution_gemm() {
    let mut rng = Rng(2612);
    let packed = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    // (channels, outputs, kernel, pad, groups, width)
    for (c, outch, k, p, group, w) in [
        (96, 256, 5, 2, 2, 13),
        (64, 96, 3, 1, 2, 9),
        (128, 64, 3, 1, 4, 7),
    ] {
        let size = outch * (c / group) * k * k;
        let params = format!("0={outch} 1={k} 4={p} 5=1 6={size} 7={group} 9=1");
        let param = one_layer("ConvolutionDepthWise", &["data"], &params);
        let weights = random_values(&mut rng, size, RANDOM);
        let bias = random_values(&mut rng, outch, RANDOM);
        let weights = bin(&[(&weights, true), (&bias, false)]);
        let inputs = [Input::new(&mut rng, "data", 3, [w, w, 1, c])];
        let want = run_net(&param, &weights, &inputs, "out", RunOptions::fp32(), None)
            .unwrap()
            .to_values();
        let family = ("convolution_gemm", true, false);
        check_tensor_core_choice((&param, &weights), &inputs, &want, family, (packed, 0.1));
    }
    let (c, outch, group) = (120, 240, 3);
    let size = outch * c / group;
    let params = format!("0={outch} 1=1 5=0 6={size} 7={group}");
    let param = one_layer("ConvolutionDepthWise", &["data"], &params);
    let weights = bin(&[(&random_values(&mut rng, size, RANDOM), true)]);
    let inputs = [Input::new(&mut rng, "data", 3, [14, 14, 1, c])];
    for ctx in gpu_contexts() {
        time_tensor_core_context(&ctx);
        run_net(&param, &weights, &inputs, "out", packed, Some(ctx.clone())).unwrap();
        let shaders: Vec<String> = ctx.take_timings().into_iter().map(|t| t.shader).collect();
        assert_eq!(shaders, ["convolution_pack4"], "{}", ctx.describe());
        ctx.set_timing(false);
    }
}

/// The dense convolutions' implicit GEMM (its windows read through the table of tap offsets
/// and each window's bits of taps inside the input) on tensor cores, the FMA tiles and fp32,
/// against the CPU: positions and outputs that fill no tile (143 positions, 20 outputs),
/// steps that fill no stage (3 input blocks × 9 taps), a strided window, 25 and 49 taps (past
/// the 32 of the first word of bits), 3-D windows of 27 taps over depth slabs, and
/// layers of 128 outputs or more over few positions (in 3-D, the tall tensor-core tile).
#[test]
fn convolution_gemm_tiles_match_the_cpu() {
    let mut rng = Rng(2613);
    // (the GEMM itself: the 3-D layers of 3×3 across would take Winograd)
    let packed = RunOptions {
        use_packing_layout: true,
        use_winograd_convolution: false,
        ..RunOptions::fp32()
    };
    // (type, channels, outputs, kernel taps, extra params, input w, h, d)
    let cases = [
        ("Convolution", 12, 20, 9, "1=3 4=1", [13, 11, 1]),
        ("Convolution", 32, 48, 9, "1=3 3=2 4=1", [17, 17, 1]),
        ("Convolution", 64, 64, 25, "1=5 4=2", [40, 36, 1]),
        // 49 taps: past the 32 of the first word of bits
        ("Convolution", 8, 12, 49, "1=7 4=3", [15, 13, 1]),
        ("Convolution3D", 16, 64, 27, "1=3 4=1", [10, 10, 6]),
        ("Convolution3D", 64, 64, 27, "1=3 4=1", [20, 18, 4]),
        // at least 128 outputs over few positions: in 3-D the tall tile
        ("Convolution", 32, 136, 9, "1=3 4=1", [12, 10, 1]),
        ("Convolution3D", 64, 128, 27, "1=3 4=1", [5, 5, 4]),
    ];
    for (kind, c, outch, taps, extra, [w, h, d]) in cases {
        let size = outch * c * taps;
        let params = format!("0={outch} {extra} 5=1 6={size} 9=1");
        let param = one_layer(kind, &["data"], &params);
        let weights = random_values(&mut rng, size, RANDOM);
        let bias = random_values(&mut rng, outch, RANDOM);
        let weights = bin(&[(&weights, true), (&bias, false)]);
        let inputs = match d {
            1 => [Input::new(&mut rng, "data", 3, [w, h, 1, c])],
            _ => [Input::new(&mut rng, "data", 4, [w, h, d, c])],
        };
        let want = run_net(&param, &weights, &inputs, "out", RunOptions::fp32(), None)
            .unwrap()
            .to_values();
        let family = ("convolution_gemm", true, false);
        check_tensor_core_choice((&param, &weights), &inputs, &want, family, (packed, 0.1));
    }
}
