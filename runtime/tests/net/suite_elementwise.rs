//! ncnn's tests of the elementwise layers with several inputs through the suite: test_binaryop_1.cpp
//! (every op over every broadcast of its shapes), test_eltwise.cpp and test_scale.cpp.

use super::suite::*;
use super::*;

/// test_binaryop_1.cpp's shapes (each extent or 1, every pair) under every op type, with
/// the test's ranges for pow, div and atan2.
#[test]
fn ncnn_binaryop_tests() {
    let mut rng = Rng(303);
    let mut shapes: Vec<Vec<usize>> = Vec::new();
    for (w, h, c) in [(7, 3, 31), (6, 4, 28), (5, 5, 24)] {
        for mask in 0..8 {
            let pick = |bit: usize, n: usize| if mask & bit == 0 { n } else { 1 };
            shapes.push(vec![pick(1, w), pick(2, h), pick(4, c)]);
        }
        for (ws, hs) in [(w, h), (w, 1), (1, h)] {
            shapes.push(vec![ws + 8, hs + 20]);
        }
        shapes.push(vec![c]);
        shapes.push(vec![1]);
    }
    let (mut cases, mut rounding) = (Vec::new(), Vec::new());
    for op in 0..=18 {
        let range = match op {
            6 | 9 => (0.001, 2.0),
            3 | 8 | 12..=18 => (0.1, 10.0),
            _ => RANDOM,
        };
        // fmod, floor_divide and remainder jump where x / y is whole, which the suite's
        // bf16-exact inputs hit often (6.75 / 1.125) and where ncnn's x86 division by an
        // approximate reciprocal is off by one step: plain f32 inputs for these
        let cases = if op >= 12 { &mut rounding } else { &mut cases };
        let mut group = Vec::new();
        for a in &shapes {
            for b in &shapes {
                let case = case_of(&mut rng, "BinaryOp", format!("0={op}"), &[a, b], range, 1);
                group.push(unrounded(&mut rng, case, op, range));
            }
        }
        // the pairs ncnn broadcasts (the wheel refuses the others)
        group.retain(|c| broadcasts(&c.inputs[0].numpy_shape(), &c.inputs[1].numpy_shape()));
        cases.extend(sample(group, 8));
        let scalar = format!("0={op} 1=1 2=0.2");
        let case = case_of(&mut rng, "BinaryOp", scalar, &[&[7, 3, 31]], range, 1);
        cases.push(unrounded(&mut rng, case, op, range));
    }
    check_suite(cases, false);
    check_suite_tuples(rounding, false, |name| name.starts_with("fp32"));
}

/// For the rounding ops (12 to 18), `case` with fresh plain f32 inputs in `range`.
fn unrounded(rng: &mut Rng, mut case: Case, op: i32, (lo, hi): (f32, f32)) -> Case {
    if op >= 12 {
        for input in &mut case.inputs {
            *input = Input::new(rng, "x", input.dims, input.shape);
            input
                .values
                .iter_mut()
                .for_each(|v| *v = lo + (*v + 1.0) * 0.5 * (hi - lo));
        }
    }
    case
}

/// Whether numpy broadcasts `a` and `b` (aligned at the inner end), or a 1-D one is per
/// channel (ncnn's rule for a 1-D operand as long as the other's outer extent).
fn broadcasts(a: &[usize], b: &[usize]) -> bool {
    let numpy = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .all(|(x, y)| x == y || *x == 1 || *y == 1);
    let per_channel = |x: &[usize], y: &[usize]| x.len() == 1 && y.len() > 1 && x[0] == y[0];
    (a.len() == b.len() && numpy) || per_channel(a, b) || per_channel(b, a)
}

/// test_eltwise.cpp: product, sum and max of two to five blobs, with and without coefficients.
#[test]
fn ncnn_eltwise_tests() {
    let mut rng = Rng(406);
    let mut cases = Vec::new();
    let sets: [(usize, &[&[usize]]); 7] = [
        (2, &[&[16, 12, 12], &[15, 11, 24], &[9, 5, 7]]),
        (3, &[&[15, 11, 16]]),
        (4, &[&[7, 3, 5]]),
        (5, &[&[12, 4, 16]]),
        (2, &[&[16, 12], &[11, 24], &[9, 7]]),
        (2, &[&[128], &[124], &[127]]),
        (3, &[&[13, 9, 7, 16]]),
    ];
    let mut group = Vec::new();
    for (n, shapes) in sets {
        for sizes in shapes {
            for op in 0..3 {
                for coeffs in [false, true] {
                    let inputs: Vec<Input> = (0..n)
                        .map(|_| random_mat(&mut rng, "x", sizes, RANDOM))
                        .collect();
                    let mut params = format!("0={op}");
                    if coeffs {
                        let c = random_values(&mut rng, n, RANDOM);
                        let list: Vec<String> = c.iter().map(|v| v.to_string()).collect();
                        params += &format!(" -23301={n},{}", list.join(","));
                    }
                    group.push(case_with("Eltwise", params, inputs, vec![]));
                }
            }
        }
    }
    cases.extend(sample(group, 24));
    check_suite(cases, false);
}

/// test_scale.cpp: a scale (and bias) per channel from the weights, and from a second blob
/// (`0=-233`, as in attention blocks).
#[test]
fn ncnn_scale_tests() {
    let mut rng = Rng(408);
    let mut group = Vec::new();
    let shapes: [&[usize]; 14] = [
        &[5, 3, 48],
        &[5, 7, 24],
        &[7, 9, 12],
        &[3, 5, 13],
        &[13, 48],
        &[15, 24],
        &[17, 12],
        &[19, 15],
        &[128],
        &[124],
        &[127],
        &[5, 6, 48],
        &[25, 48],
        &[6, 5, 4, 16],
    ];
    for sizes in shapes {
        let c = channels(sizes);
        for bias in [0, 1] {
            let inputs = vec![random_mat(&mut rng, "x", sizes, RANDOM)];
            let mut weights = vec![random_values(&mut rng, c, RANDOM)];
            if bias == 1 {
                weights.push(random_values(&mut rng, c, RANDOM));
            }
            group.push(case_with(
                "Scale",
                format!("0={c} 1={bias}"),
                inputs,
                weights,
            ));
        }
        let inputs = vec![
            random_mat(&mut rng, "x", sizes, RANDOM),
            random_mat(&mut rng, "s", &[c], RANDOM),
        ];
        group.push(case_with("Scale", "0=-233".into(), inputs, vec![]));
    }
    check_suite(sample(group, 18), false);
}
