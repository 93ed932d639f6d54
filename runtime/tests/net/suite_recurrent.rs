//! ncnn's test_rnn.cpp, test_lstm.cpp and test_gru.cpp through the suite (CPU against ncnn's
//! wheel, the GPU against the CPU): every shape of their tables in each direction, with the
//! initial states as inputs, the final ones as outputs, both or neither; LSTM's projected
//! cells; their int8 cases; inputs that do not fit as typed errors.

use super::suite::*;
use super::*;

/// `(size, T, num_output, hidden_size)`: the plain tests' shapes (test_*_0, _2, _3).
const PLAIN: [(usize, usize, usize, usize); 10] = [
    (4, 1, 2, 0),
    (8, 2, 2, 0),
    (16, 8, 7, 0),
    (17, 8, 8, 0),
    (19, 15, 8, 0),
    (5, 16, 16, 0),
    (3, 16, 8, 0),
    (8, 16, 16, 0),
    (31, 3, 31, 0),
    (2, 5, 17, 15),
];

/// The state tests' shapes (test_*_1): the last one's LSTM projects 33 cells to 79 outputs
/// in two directions, 15 to 17 in the forward one.
const WITH_STATES: [(usize, usize, usize, usize); 8] = [
    (4, 4, 1, 0),
    (8, 2, 2, 0),
    (16, 8, 7, 0),
    (17, 8, 8, 0),
    (19, 15, 8, 0),
    (5, 16, 16, 0),
    (3, 16, 8, 0),
    (2, 5, 79, 33),
];

/// Gate rows per unit and bias rows of each type.
fn cell(kind: &str) -> (usize, usize) {
    match kind {
        "RNN" => (1, 1),
        "GRU" => (3, 4),
        _ => (4, 4),
    }
}

/// One layer: `(size, T, num_output, hidden)` in `direction`; `states_in` feeds the initial
/// states, `states_out` asks for the final ones.
fn case(
    rng: &mut Rng,
    kind: &'static str,
    (size, t, outch, hidden): (usize, usize, usize, usize),
    direction: usize,
    (states_in, states_out): (bool, bool),
) -> Case {
    let lstm = kind == "LSTM";
    let hidden = if lstm && hidden > 0 { hidden } else { outch };
    let dirs = if direction == 2 { 2 } else { 1 };
    let (gates, bias_rows) = cell(kind);
    let xc = gates * hidden * size * dirs;
    let mut params = format!("0={outch} 1={xc} 2={direction}");
    if lstm {
        params += &format!(" 3={hidden}");
    }
    let mut sizes: Vec<Vec<usize>> = vec![vec![size, t]];
    let states = if lstm { 3 } else { 2 };
    if states_in {
        sizes.push(vec![outch, dirs]);
        if lstm {
            sizes.push(vec![hidden, dirs]);
        }
    }
    let refs: Vec<&[usize]> = sizes.iter().map(Vec::as_slice).collect();
    let tops = if states_out { states } else { 1 };
    let mut case = case_of(rng, kind, params, &refs, RANDOM, tops);
    let mut weights = tagged_weights(rng, xc, 0);
    weights.extend(tagged_weights(rng, bias_rows * hidden * dirs, 0));
    weights.extend(tagged_weights(rng, gates * hidden * outch * dirs, 0));
    if lstm && hidden != outch {
        weights.extend(tagged_weights(rng, hidden * outch * dirs, 0));
    }
    case.weights = weights;
    case
}

fn cases_of(rng: &mut Rng, kind: &'static str) -> Vec<Case> {
    let mut cases = Vec::new();
    for direction in [2, 0, 1] {
        for shape in PLAIN {
            cases.push(case(rng, kind, shape, direction, (false, false)));
        }
    }
    for states in [(true, true), (true, false), (false, true)] {
        for direction in [2, 1, 0] {
            for shape in WITH_STATES {
                cases.push(case(rng, kind, shape, direction, states));
            }
        }
    }
    cases
}

#[test]
fn ncnn_recurrent_tests() {
    let mut rng = Rng(1901);
    let mut cases = Vec::new();
    for kind in ["RNN", "LSTM", "GRU"] {
        cases.extend(sample(cases_of(&mut rng, kind), 24));
    }
    check_suite(cases, false);
}

/// Layers of at least 64 × 64 weights per gate run a dispatch per step on the device (LSTM's
/// projection a second one), and larger ones their CPU sums across the threads: each type,
/// both directions, states in and out, a projected LSTM.
/// Their weights are scaled to ±0.18, as a trained layer's (about 1 / sqrt(units)): at
/// RandomMat's ±1.2 over 72 units the gates saturate and the sequence is chaotic, so that fp16
/// storage's rounding of one step's sums grows past any tolerance a few steps on.
#[test]
fn large_recurrent_layers_match_a_dispatch_per_step() {
    let mut rng = Rng(1903);
    let mut cases = Vec::new();
    for kind in ["RNN", "LSTM", "GRU"] {
        cases.push(case(&mut rng, kind, (24, 7, 72, 0), 2, (true, true)));
        cases.push(case(&mut rng, kind, (9, 5, 64, 0), 1, (false, false)));
    }
    cases.push(case(&mut rng, "LSTM", (8, 6, 72, 80), 2, (true, true)));
    cases.push(case(&mut rng, "LSTM", (8, 6, 72, 80), 0, (false, true)));
    // from 65536 weights a step the CPU's hidden sums run across the threads
    // (counts no thread count divides)
    cases.push(case(&mut rng, "LSTM", (16, 3, 137, 0), 2, (true, true)));
    cases.push(case(&mut rng, "GRU", (16, 3, 161, 0), 0, (false, false)));
    cases.push(case(&mut rng, "RNN", (16, 3, 263, 0), 1, (false, true)));
    for case in &mut cases {
        // (the zero tags stay zero)
        case.weights.iter_mut().for_each(|w| *w *= 0.15);
    }
    check_suite(cases, false);
}

#[test]
fn recurrent_layers_refuse_what_does_not_fit() {
    // (numpy shapes) a 3-D sequence, steps of another width, a hidden state of another size,
    // a weight count that fits no input width
    let params = "0=4 1=48 2=0";
    let planes = layer_error("RNN", params, &[("x", &[2, 3, 12])]);
    assert!(planes.contains("2-D"), "{planes}");
    let width = layer_error("GRU", "0=4 1=144 2=0", &[("x", &[3, 11])]);
    assert!(
        width.contains("values per time step") && width.contains("11"),
        "{width}"
    );
    let state = layer_error("RNN", params, &[("x", &[3, 12]), ("h", &[1, 5])]);
    assert!(state.contains("hidden state"), "{state}");
    let weights = load_error("LSTM", &["x"], "0=4 1=50 2=0");
    assert!(weights.contains("weight_data_size"), "{weights}");
    let direction = load_error("LSTM", &["x"], "0=4 1=64 2=3");
    assert!(
        direction.contains("direction") || direction.contains("2"),
        "{direction}"
    );
}

/// test_rnn/test_lstm/test_gru.cpp's int8 cases (`8=2`): int8 matrices with per-row scales
/// in [100, 200], the input `RandomizeA(a, 10)`'s (no value near half a level under its step's
/// scale); on the CPU against the wheel at the int8 tolerance (the hidden state is quantized
/// again each step, so a value within rounding of half a level may go either way).
#[test]
fn ncnn_recurrent_int8_tests() {
    let mut rng = Rng(1902);
    let mut cases = Vec::new();
    for kind in ["RNN", "LSTM", "GRU"] {
        let lstm = kind == "LSTM";
        let (gates, bias_rows) = cell(kind);
        for (direction, &(size, t, outch, hidden)) in [2, 0, 1].iter().cycle().zip(&PLAIN) {
            let hidden = if lstm && hidden > 0 { hidden } else { outch };
            let dirs = if *direction == 2 { 2 } else { 1 };
            let rows = gates * hidden * dirs;
            let mut params = format!("0={outch} 1={} 2={direction} 8=2", rows * size);
            if lstm {
                params += &format!(" 3={hidden}");
            }
            let mut x = random_mat(&mut rng, "x", &[size, t], RANDOM);
            x.values = int8_operand(&mut rng, (t, size), Absmax::Rows, 10.0);
            let mut weights = s8_weights(&mut rng, rows * size);
            weights.extend(tagged_weights(&mut rng, bias_rows * hidden * dirs, 0));
            weights.extend(s8_weights(&mut rng, rows * outch));
            if lstm && hidden != outch {
                weights.extend(tagged_weights(&mut rng, hidden * outch * dirs, 0));
            }
            weights.extend(random_values(&mut rng, 2 * rows, (100.0, 200.0)));
            cases.push(case_with(kind, params, vec![x], vec![weights]));
        }
    }
    check_suite_cpu_only_int8(cases, 0.01);
}
