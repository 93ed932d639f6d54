//! The GEMM's engines on one device: the workgroup matrices (VK_NV_cooperative_matrix2), the
//! subgroup tiles (VK_KHR_cooperative_matrix) and the FMA tiles, each where the device and
//! the product's shape say, against the CPU.

use super::*;

/// Gemm and MatMul run on tensor cores exactly where the context has cooperative matrices and
/// the blobs are fp16 storage (`gemm_cm2` where it has workgroup matrices and the product has
/// enough tiles for them, else `gemm_cm`), on the FMA GEMM everywhere else, checked against
/// the CPU: on workgroup matrices, batched products of 192 128 × 256 tiles and of 192 128 × 128
/// ones, wholly inside the operands with K a multiple of 64, 192 128 × 256 tiles with edges on
/// every side, and a Gemm with a transposed B in 192 64 × 64 tiles, 512 deep (steps of 4 × 64);
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
                Input::new(&mut rng, "a", 3, [64, 128, 1, 192]),
                Input::new(&mut rng, "b", 3, [256, 64, 1, 192]),
            ],
            true,
        ),
        (
            matmul.clone(),
            vec![
                Input::new(&mut rng, "a", 3, [64, 128, 1, 96]),
                Input::new(&mut rng, "b", 3, [256, 64, 1, 96]),
            ],
            true,
        ),
        (
            matmul.clone(),
            vec![
                Input::new(&mut rng, "a", 3, [70, 130, 1, 96]),
                Input::new(&mut rng, "b", 3, [136, 70, 1, 96]),
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
    for (param, inputs, workgroup) in &models {
        let want = run_net(param, &[], inputs, "out", RunOptions::fp32(), None)
            .unwrap()
            .to_values();
        check_tensor_core_choice(param, inputs, &want, ("gemm", true, *workgroup), 0.1);
    }
}
