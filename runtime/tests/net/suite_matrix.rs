//! ncnn's matrix layer tests against the wheel: test_gemm_0*.cpp (transposes, constant A/B,
//! output_transpose, output_N1M), test_gemm_2*.cpp (C in every broadcast, constant or input,
//! alpha and beta), test_matmul.cpp (every dims pairing, broadcast batches, transB) and
//! test_einsum.cpp (every equation).
//! All of them also on every GPU against the CPU.

use super::suite::*;
use super::*;

/// A Gemm case whose operands `(constant, RandomMat sizes, name)` are weights where constant
/// (type-0 tag, then the values, in ncnn's load order) and inputs otherwise.
fn gemm_case(rng: &mut Rng, params: String, operands: &[(u8, &[usize], &'static str)]) -> Case {
    let mut weights = Vec::new();
    let mut inputs = Vec::new();
    for &(constant, sizes, name) in operands {
        let mat = random_mat(rng, name, sizes, RANDOM);
        if constant == 1 {
            weights.push(0.0);
            weights.extend(mat.values);
        } else {
            inputs.push(mat);
        }
    }
    Case {
        kind: "Gemm",
        params,
        inputs,
        weights,
        tops: 1,
    }
}

/// One test_gemm_0 case: `(alpha, transA, transB, output_transpose, constantA, constantB,
/// output_N1M)`, as its `test_gemm` arguments.
type Gemm0 = (f32, u8, u8, u8, u8, u8, u8);

/// test_gemm_0.h's 40 calls of `test_gemm` per M, N, K.
const GEMM_0: &[Gemm0] = &[
    (2.1, 0, 0, 0, 0, 0, 0),
    (3.1, 0, 1, 0, 0, 0, 0),
    (4.1, 1, 0, 0, 0, 0, 0),
    (2.4, 1, 1, 0, 0, 0, 0),
    (2.1, 0, 0, 1, 0, 0, 0),
    (3.1, 0, 1, 1, 0, 0, 0),
    (4.1, 1, 0, 1, 0, 0, 0),
    (2.4, 1, 1, 1, 0, 0, 0),
    (1.7, 0, 1, 0, 0, 0, 1),
    (1.7, 1, 1, 0, 1, 0, 1),
    (1.9, 0, 0, 0, 0, 1, 1),
    (1.9, 1, 0, 0, 1, 1, 1),
    (1.7, 0, 1, 1, 1, 0, 1),
    (1.7, 1, 1, 1, 0, 1, 1),
    (1.9, 0, 0, 1, 1, 1, 1),
    (1.9, 1, 0, 1, 0, 0, 1),
    (2.1, 0, 0, 0, 1, 0, 0),
    (3.1, 0, 1, 0, 1, 0, 0),
    (4.1, 1, 0, 0, 1, 0, 0),
    (2.4, 1, 1, 0, 1, 0, 0),
    (2.1, 0, 0, 1, 1, 0, 0),
    (3.1, 0, 1, 1, 1, 0, 0),
    (4.1, 1, 0, 1, 1, 0, 0),
    (2.4, 1, 1, 1, 1, 0, 0),
    (2.1, 0, 0, 0, 0, 1, 0),
    (3.1, 0, 1, 0, 0, 1, 0),
    (4.1, 1, 0, 0, 0, 1, 0),
    (2.4, 1, 1, 0, 0, 1, 0),
    (2.1, 0, 0, 1, 0, 1, 0),
    (3.1, 0, 1, 1, 0, 1, 0),
    (4.1, 1, 0, 1, 0, 1, 0),
    (2.4, 1, 1, 1, 0, 1, 0),
    (2.1, 0, 0, 0, 1, 1, 0),
    (3.1, 0, 1, 0, 1, 1, 0),
    (4.1, 1, 0, 0, 1, 1, 0),
    (2.4, 1, 1, 0, 1, 1, 0),
    (2.1, 0, 0, 1, 1, 1, 0),
    (3.1, 0, 1, 1, 1, 1, 0),
    (4.1, 1, 0, 1, 1, 1, 0),
    (2.4, 1, 1, 1, 1, 1, 0),
];

/// M, N, K from test_gemm_0a-0f.cpp.
const GEMM_0_MNK: &[[usize; 3]] = &[
    [1, 1, 1],
    [3, 3, 3],
    [8, 8, 8],
    [15, 15, 15],
    [1, 1, 23],
    [1, 31, 1],
    [23, 1, 1],
    [12, 31, 12],
    [1, 35, 47],
    [23, 31, 1],
    [31, 7, 3],
    [28, 20, 7],
    [44, 19, 7],
    [47, 35, 48],
];

/// An operand of test_gemm's shapes: `rows × cols` as ncnn's `Mat(cols, rows)`, or
/// `Mat(cols, 1, rows)` with output_N1M.
fn operand_sizes(rows: usize, cols: usize, n1m: bool) -> Vec<usize> {
    if n1m {
        vec![cols, 1, rows]
    } else {
        vec![cols, rows]
    }
}

/// test_gemm_0*.cpp: Gemm without C.
#[test]
fn ncnn_gemm_tests() {
    let mut rng = Rng(2501);
    let mut cases = Vec::new();
    for &[m, n, k] in GEMM_0_MNK {
        for &(alpha, ta, tb, ot, ca, cb, n1m) in GEMM_0 {
            let n1m = n1m == 1;
            let a = if ta == 1 {
                operand_sizes(k, m, n1m)
            } else {
                operand_sizes(m, k, n1m)
            };
            let b = if tb == 1 {
                operand_sizes(n, k, n1m)
            } else {
                operand_sizes(k, n, n1m)
            };
            let params = format!(
                "0={alpha} 1=1.0 2={ta} 3={tb} 4={ca} 5={cb} 6=1 7={m} 8={n} 9={k} 10=-1 11={} 14={ot}",
                u8::from(n1m)
            );
            cases.push(gemm_case(&mut rng, params, &[(ca, &a, "a"), (cb, &b, "b")]));
        }
    }
    check_suite(sample(cases, 160), false);
}

/// C's broadcast type as test_gemm_bias infers it from C's RandomMat sizes (later matches win).
fn c_broadcast(c: &[usize], m: usize, n: usize) -> i32 {
    let dims = c.len();
    let [w, h] = [c[0], c.get(1).copied().unwrap_or(1)];
    let mut bt = 0;
    if dims == 1 && w == m {
        bt = 1;
    }
    if dims == 1 && w == n {
        bt = 4;
    }
    if dims == 2 && w == 1 && h == m {
        bt = 2;
    }
    if dims == 2 && w == n && h == m {
        bt = 3;
    }
    if dims == 2 && w == n && h == 1 {
        bt = 4;
    }
    bt
}

/// test_gemm_2*.cpp: C as a scalar, M, M×1, M×N, 1×N and N values, constant or an input, with
/// alpha and beta, over the transposes and constant A/B of test_gemm_2.h's calls.
#[test]
fn ncnn_gemm_bias_tests() {
    let mut rng = Rng(2502);
    let mut cases = Vec::new();
    for &[m, n, k] in &[[1, 1, 1], [5, 7, 3], [12, 12, 23], [24, 35, 24], [8, 8, 8]] {
        let cs: [Vec<usize>; 6] = [
            vec![1],
            vec![m],
            vec![1, m],
            vec![n, m],
            vec![n, 1],
            vec![n],
        ];
        let abc = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)];
        let constant_c = [0u8, 1];
        let mut i = 0usize;
        for &cc in &constant_c {
            for &(ca, cb, _) in &abc {
                for (j, c) in cs.iter().enumerate() {
                    // test_gemm_2.h's parameters cycle with the C shape
                    let (alpha, beta) = [(2.1, 0.5), (3.1, 0.6), (4.1, 0.7), (5.1, 0.8)][j % 4];
                    let (ta, tb) = [(0, 0), (0, 1), (1, 0), (1, 1)][(i + j) % 4];
                    let ot = u8::from(j == 2 || j == 3);
                    i += 1;
                    let bt = c_broadcast(c, m, n);
                    let a = if ta == 1 { vec![m, k] } else { vec![k, m] };
                    let b = if tb == 1 { vec![k, n] } else { vec![n, k] };
                    let params = format!(
                        "0={alpha} 1={beta} 2={ta} 3={tb} 4={ca} 5={cb} 6={cc} 7={m} 8={n} 9={k} 10={bt} 14={ot}"
                    );
                    let operands = [(ca, &a[..], "a"), (cb, &b[..], "b"), (cc, &c[..], "c")];
                    cases.push(gemm_case(&mut rng, params, &operands));
                }
            }
        }
    }
    check_suite(sample(cases, 120), false);
}

/// One call of test_gemm_3.cpp's `test_gemm_int8` or `test_gemm_int8_bias`: `(alpha, beta,
/// transA, transB, output_transpose, constantA, constantB, output_N1M)` and C (its RandomMat
/// sizes and whether constant) where it has one.
type Int8Call = (f32, f32, u8, u8, u8, u8, u8, u8);

/// An int8 Gemm case (`18=2`): constant A and B as ncnn's RandomS8Mat with their scales after
/// every other weight (A's per row, B's one), input A and B as [`int8_operand`]s.
fn gemm_int8_case(
    rng: &mut Rng,
    [m, n, k]: [usize; 3],
    call: Int8Call,
    c: Option<(&[usize], u8)>,
) -> Case {
    let (alpha, beta, ta, tb, ot, ca, cb, n1m) = call;
    let (cc, bt) = c.map_or((1, -1), |(sizes, cc)| (cc, c_broadcast(sizes, m, n)));
    let params = format!(
        "0={alpha} 1={beta} 2={ta} 3={tb} 4={ca} 5={cb} 6={cc} 7={m} 8={n} 9={k} 10={bt} 11={n1m} \
         14={ot} 18=2"
    );
    let mut weights = Vec::new();
    let mut inputs = Vec::new();
    let (a_stored, a_by) = if ta == 1 {
        ((k, m), Absmax::Columns)
    } else {
        ((m, k), Absmax::Rows)
    };
    let b_stored = if tb == 1 { (n, k) } else { (k, n) };
    for (constant, (rows, cols), by, name) in
        [(ca, a_stored, a_by, "a"), (cb, b_stored, Absmax::All, "b")]
    {
        if constant == 1 {
            weights.extend(s8_weights(rng, rows * cols));
        } else {
            let mut input = random_mat(rng, name, &operand_sizes(rows, cols, n1m == 1), RANDOM);
            input.values = int8_operand(rng, (rows, cols), by, 10.0);
            inputs.push(input);
        }
    }
    if let Some((sizes, cc)) = c {
        let mat = random_mat(rng, "c", sizes, RANDOM);
        if cc == 1 {
            weights.push(0.0);
            weights.extend(mat.values);
        } else {
            inputs.push(mat);
        }
    }
    if ca == 1 {
        weights.extend(random_values(rng, m, (10.0, 20.0)));
    }
    if cb == 1 {
        weights.extend(random_values(rng, 1, (10.0, 20.0)));
    }
    Case {
        kind: "Gemm",
        params,
        inputs,
        weights,
        tops: 1,
    }
}

/// test_gemm_3.cpp's `test_gemm_0` calls (output_elemtype dropped: the CPU output is fp32),
/// its two fp16-storage ones included.
const GEMM_INT8: &[Int8Call] = &[
    (2.1, 1.0, 0, 1, 0, 0, 0, 0),
    (3.1, 1.0, 1, 1, 0, 0, 0, 0),
    (4.1, 1.0, 0, 0, 0, 0, 0, 1),
    (5.1, 1.0, 1, 0, 0, 0, 0, 1),
    (0.2, 1.0, 0, 1, 0, 1, 0, 1),
    (0.3, 1.0, 1, 1, 0, 1, 0, 1),
    (0.4, 1.0, 0, 0, 0, 0, 1, 0),
    (0.5, 1.0, 0, 1, 0, 0, 1, 0),
    (1.2, 1.0, 0, 1, 0, 1, 1, 0),
    (1.3, 1.0, 1, 1, 0, 1, 1, 1),
    (1.4, 1.0, 0, 0, 0, 1, 0, 0),
    (1.5, 1.0, 1, 0, 0, 1, 0, 1),
    (-1.2, 1.0, 0, 1, 1, 1, 1, 0),
    (-1.3, 1.0, 1, 1, 1, 1, 1, 0),
    (-1.4, 1.0, 0, 0, 1, 1, 1, 1),
    (-1.5, 1.0, 1, 0, 1, 1, 1, 1),
    (-2.0, 1.0, 0, 1, 1, 0, 1, 1),
    (-3.0, 1.0, 1, 1, 1, 0, 1, 1),
    (-4.0, 1.0, 0, 0, 1, 1, 0, 0),
    (-5.0, 1.0, 0, 1, 1, 1, 0, 0),
    (-2.1, 1.0, 0, 1, 1, 0, 0, 0),
    (-3.1, 1.0, 1, 1, 1, 0, 0, 1),
    (-4.1, 1.0, 0, 0, 1, 0, 1, 0),
    (-5.1, 1.0, 1, 0, 1, 0, 1, 1),
    (1.0, 1.0, 0, 1, 0, 0, 0, 0),
    (1.0, 1.0, 1, 0, 1, 0, 0, 0),
];

/// C's RandomMat sizes in test_gemm_3.cpp's `test_gemm_1` calls: 1, M, 1×M, N×M, N×1, N.
fn int8_c_sizes(kind: u8, m: usize, n: usize) -> Vec<usize> {
    match kind {
        0 => vec![1],
        1 => vec![m],
        2 => vec![1, m],
        3 => vec![n, m],
        4 => vec![n, 1],
        _ => vec![n],
    }
}

/// test_gemm_3.cpp's `test_gemm_1` calls: C's kind (as [`int8_c_sizes`]), then the call,
/// then constantC.
const GEMM_INT8_BIAS: &[(u8, Int8Call, u8)] = &[
    (0, (2.1, 0.5, 0, 0, 0, 0, 0, 0), 0),
    (0, (2.1, 0.5, 0, 0, 1, 0, 0, 0), 0),
    (1, (3.1, 0.6, 0, 1, 0, 0, 0, 0), 0),
    (1, (3.1, 0.6, 0, 1, 1, 0, 0, 0), 0),
    (2, (4.1, 0.7, 1, 0, 0, 0, 0, 0), 0),
    (2, (4.1, 0.7, 1, 0, 1, 0, 0, 0), 0),
    (3, (5.1, -0.8, 1, 1, 0, 0, 0, 0), 0),
    (3, (5.1, -0.8, 1, 1, 1, 0, 0, 0), 0),
    (3, (1.0, 1.0, 1, 1, 0, 0, 0, 0), 0),
    (3, (1.0, 1.0, 1, 1, 1, 0, 0, 0), 0),
    (4, (2.1, -0.5, 0, 0, 0, 0, 0, 0), 0),
    (4, (2.1, -0.5, 0, 0, 1, 0, 0, 0), 0),
    (4, (0.8, 1.0, 0, 0, 0, 0, 0, 0), 0),
    (5, (0.8, 1.0, 0, 0, 1, 0, 0, 0), 0),
    (5, (3.1, -0.6, 0, 1, 0, 0, 0, 0), 0),
    (5, (3.1, -0.6, 0, 1, 1, 0, 0, 0), 0),
    (0, (1.7, -0.4, 0, 0, 0, 0, 0, 1), 0),
    (1, (-1.3, 0.6, 1, 0, 1, 0, 0, 1), 0),
    (3, (0.8, 0.5, 0, 1, 0, 0, 0, 1), 0),
    (0, (-2.1, 0.5, 0, 0, 0, 1, 1, 0), 1),
    (0, (-2.1, 0.5, 0, 0, 1, 1, 1, 0), 1),
    (1, (-3.1, 0.6, 0, 1, 0, 1, 1, 0), 1),
    (1, (-3.1, 0.6, 0, 1, 1, 1, 1, 0), 1),
    (2, (-4.1, 0.7, 1, 0, 0, 1, 1, 0), 1),
    (2, (-4.1, 0.7, 1, 0, 1, 1, 1, 0), 1),
    (3, (-5.1, -0.8, 1, 1, 0, 1, 1, 0), 1),
    (3, (-5.1, -0.8, 1, 1, 1, 1, 1, 0), 1),
    (3, (1.0, 1.0, 1, 1, 0, 1, 1, 0), 1),
    (3, (1.0, 1.0, 1, 1, 1, 1, 1, 0), 1),
    (4, (-2.1, -0.5, 0, 0, 0, 1, 1, 0), 1),
    (4, (-2.1, -0.5, 0, 0, 1, 1, 1, 0), 1),
    (4, (0.8, 1.0, 0, 0, 0, 1, 1, 0), 1),
    (5, (0.8, 1.0, 0, 0, 1, 1, 1, 0), 1),
    (5, (-3.1, -0.6, 0, 1, 0, 1, 1, 0), 1),
    (5, (-3.1, -0.6, 0, 1, 1, 1, 1, 0), 1),
];

/// test_gemm_3.cpp: int8 Gemm (`18=2`) with every transpose, constant A/B (int8 weights with
/// their scales) or inputs (dynamically quantized), output_transpose, output_N1M and C in
/// every broadcast, over a spread of its M, N, K (and N, M, K); against the wheel's int8
/// Gemm, and on every GPU against the CPU.
#[test]
fn ncnn_gemm_int8_tests() {
    let mut rng = Rng(2504);
    let mut cases = Vec::new();
    let mnk = [
        [1, 1, 23],
        [1, 35, 47],
        [5, 5, 5],
        [7, 31, 3],
        [12, 23, 12],
        [19, 44, 7],
        [24, 47, 24],
        [35, 48, 47],
        [40, 40, 40],
    ];
    for [m, n, k] in mnk {
        let shapes = if m == n {
            vec![[m, n, k]]
        } else {
            vec![[m, n, k], [n, m, k]]
        };
        for s in shapes {
            for &call in GEMM_INT8 {
                cases.push(gemm_int8_case(&mut rng, s, call, None));
            }
            for &(kind, call, cc) in GEMM_INT8_BIAS {
                let c = int8_c_sizes(kind, s[0], s[1]);
                cases.push(gemm_int8_case(&mut rng, s, call, Some((&c, cc))));
            }
        }
    }
    check_suite(sample(cases, 160), false);
}

/// test_matmul.cpp: `(transB, A's RandomMat sizes, B's)`.
const MATMUL: &[(u8, &[usize], &[usize])] = &[
    (0, &[124], &[124]),
    (0, &[127], &[127]),
    (0, &[5], &[6, 5]),
    (0, &[16], &[12, 16]),
    (1, &[5], &[5, 6]),
    (1, &[11], &[11, 16]),
    (0, &[13], &[7, 13, 12]),
    (1, &[24], &[24, 6, 16]),
    (0, &[13], &[7, 13, 5, 12]),
    (1, &[20], &[20, 8, 3, 19]),
    (0, &[5, 6], &[5]),
    (0, &[11, 16], &[11]),
    (0, &[32, 3, 10], &[32]),
    (0, &[28, 5, 28], &[28]),
    (0, &[32, 3, 4, 10], &[32]),
    (0, &[18, 5, 6, 28], &[18]),
    (0, &[14, 10], &[5, 14]),
    (0, &[14, 28], &[9, 14]),
    (1, &[16, 16], &[16, 10]),
    (0, &[5, 4], &[4, 5, 12]),
    (1, &[5, 24], &[5, 6, 19]),
    (0, &[5, 14], &[5, 5, 3, 16]),
    (1, &[5, 4], &[5, 4, 2, 12]),
    (0, &[14, 23, 10], &[5, 14]),
    (1, &[14, 20, 28], &[14, 9]),
    (0, &[14, 13, 2, 10], &[5, 14]),
    (1, &[16, 12, 3, 16], &[16, 10]),
    (0, &[14, 23, 10], &[5, 14, 10]),
    (1, &[16, 22, 16], &[16, 10, 16]),
    (0, &[14, 23, 10], &[5, 14, 1, 16]),
    (1, &[14, 20, 8], &[14, 9, 1, 18]),
    (0, &[16, 22, 9, 1], &[10, 16, 1, 17]),
    (1, &[14, 23, 10, 1], &[14, 5, 1, 16]),
    (0, &[14, 23, 10, 16], &[5, 14, 10, 16]),
    (1, &[14, 20, 8, 18], &[14, 9, 8, 18]),
];

/// test_matmul.cpp, one or two calls of each of its groups.
#[test]
fn ncnn_matmul_tests() {
    let mut rng = Rng(2503);
    // and four larger than one tile of the shader, over several 16-deep slices: two in its
    // 32 × 32 tiles, two (of 256 or more 64 × 64 tiles with their batches) in its 64 × 64 ones
    let tiles: &[(u8, &[usize], &[usize])] = &[
        (0, &[70, 130], &[90, 70]),
        (1, &[33, 65, 3], &[33, 70, 3]),
        (0, &[36, 100, 70], &[70, 36, 70]),
        (1, &[40, 130, 64], &[40, 130, 64]),
    ];
    let cases = MATMUL
        .iter()
        .chain(tiles)
        .map(|&(tb, a, b)| Case {
            kind: "MatMul",
            params: format!("0={tb}"),
            inputs: vec![
                random_mat(&mut rng, "a", a, RANDOM),
                random_mat(&mut rng, "b", b, RANDOM),
            ],
            weights: Vec::new(),
            tops: 1,
        })
        .collect();
    check_suite(cases, false);
}

/// Operands that do not multiply are a typed error naming the layer and both shapes.
#[test]
fn mismatched_inner_sizes_are_a_typed_error_naming_the_layer_and_shapes() {
    for (kind, params) in [("MatMul", "0=0"), ("Gemm", "0=1.0")] {
        let report = layer_error(kind, params, &[("a", &[3, 5]), ("b", &[4, 2])]);
        assert!(report.contains(&format!("({kind})")), "{report}");
        assert!(
            report.contains("[3, 5]") && report.contains("[4, 2]"),
            "{report}"
        );
    }
}

/// test_einsum.cpp: every call, `(equation, operands' RandomMat sizes)`.
const EINSUM: &[(&str, &[&[usize]])] = &[
    ("ii", &[&[32, 32]]),
    ("ij->i", &[&[27, 32]]),
    ("ji->i", &[&[27, 32]]),
    ("ijk->i", &[&[17, 14, 32]]),
    ("jik->i", &[&[17, 14, 32]]),
    ("jki->i", &[&[17, 14, 32]]),
    ("ikj->ij", &[&[17, 14, 32]]),
    ("kij->ij", &[&[17, 14, 32]]),
    ("ijk->ij", &[&[17, 14, 32]]),
    ("jkli->i", &[&[17, 14, 9, 32]]),
    ("jkil->i", &[&[17, 14, 9, 32]]),
    ("jikl->i", &[&[17, 14, 9, 32]]),
    ("ijkl->i", &[&[17, 14, 9, 32]]),
    ("iklj->ij", &[&[17, 14, 9, 32]]),
    ("klij->ij", &[&[17, 14, 9, 32]]),
    ("kijl->ij", &[&[17, 14, 9, 32]]),
    ("ijkl->ij", &[&[17, 14, 9, 32]]),
    ("ijlk->ijk", &[&[17, 14, 9, 32]]),
    ("lijk->ijk", &[&[17, 14, 9, 32]]),
    ("ijkl->ijk", &[&[17, 14, 9, 32]]),
    ("ij,j->i", &[&[12, 28], &[12]]),
    ("k,ijk->ij", &[&[14], &[14, 7, 16]]),
    ("i,j->ij", &[&[27], &[32]]),
    ("i,j,k,l->ijkl", &[&[7], &[2], &[11], &[16]]),
    ("ijl,ilk->ijk", &[&[5, 2, 3], &[4, 5, 3]]),
    ("ilk,ijl->ijk", &[&[4, 5, 3], &[5, 2, 3]]),
    ("ik,jkl,il->ij", &[&[15, 12], &[24, 15, 13], &[24, 12]]),
    ("imnj,kmln->ijkl", &[&[7, 5, 3, 2], &[5, 17, 3, 11]]),
];

/// Einsum's `0=` parameter: the equation's characters as an int array, as pnnx writes it.
fn einsum_param(equation: &str) -> String {
    let chars: Vec<i32> = equation.bytes().map(i32::from).collect();
    array_param(0, &chars)
}

/// test_einsum.cpp against the wheel, and on every GPU against the CPU.
#[test]
fn ncnn_einsum_tests() {
    let mut rng = Rng(2504);
    let names = ["a", "b", "c", "d"];
    let cases = EINSUM
        .iter()
        .map(|&(equation, operands)| Case {
            kind: "Einsum",
            params: einsum_param(equation),
            inputs: operands
                .iter()
                .zip(names)
                .map(|(sizes, name)| random_mat(&mut rng, name, sizes, RANDOM))
                .collect(),
            weights: Vec::new(),
            tops: 1,
        })
        .collect();
    check_suite(cases, false);
}

/// Equations outside ncnn's set and operands that do not fit them are typed errors naming
/// the layer and the equation or shapes.
#[test]
fn einsum_bad_equations_and_operands_are_typed_errors() {
    for equation in ["ij->ji", "ij", "ab->a", "ij,jk->ik", "ijklm->i"] {
        let e = load_error("Einsum", &["a"], &einsum_param(equation));
        assert!(
            e.contains("Einsum") && e.contains(equation),
            "{equation}: {e}"
        );
    }
    let e = layer_error(
        "Einsum",
        &einsum_param("ij,j->i"),
        &[("a", &[3, 5]), ("b", &[4])],
    );
    assert!(
        e.contains("(Einsum)") && e.contains("[4]") && e.contains("[3, 5]"),
        "{e}"
    );
}
