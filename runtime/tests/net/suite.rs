//! ncnn's own test cases (`tests/test_<type>.cpp` in Tencent/ncnn): their shapes, parameters
//! and input ranges, many cases per net. Each batch is one net of independent one-layer
//! branches, run once in fpshader (CPU fp32, CPU with ncnn's default options, every GPU
//! context in ncnn's option tuples) and once in ncnn's wheel, so that hundreds of cases cost a
//! few net loads and one Python start.
//!
//! CI runs a deterministic sample of each parameter set's shapes ([`sample`], spread over the
//! list); `FPSHADER_NCNN_SUITE=all` runs every case.

use super::*;

/// One case: a layer type with its params over its inputs.
#[derive(Clone)]
pub struct Case {
    /// The layer type.
    pub kind: &'static str,
    /// Its params, as a `.param` line gives them.
    pub params: String,
    /// Its inputs.
    pub inputs: Vec<Input>,
    /// The layer's weights, raw fp32 as `load(n, 1)` reads them.
    pub weights: Vec<f32>,
    /// How many outputs the layer has (Slice's parts).
    pub tops: usize,
}

impl Case {
    fn what(&self) -> String {
        let shapes: Vec<String> = self
            .inputs
            .iter()
            .map(|i| format!("{:?}", i.numpy_shape()))
            .collect();
        format!("{} {} on {}", self.kind, self.params, shapes.join(" "))
    }
}

/// ncnn's `RandomMat(w [, h [, d], c])`: dims from the number of sizes, values in `range`,
/// rounded to bf16 precision so that fp16 and bf16 storage hold them exactly: a step function
/// (floor, round, sign, Threshold) then gives every precision the same result.
pub fn random_mat(rng: &mut Rng, name: &'static str, sizes: &[usize], range: (f32, f32)) -> Input {
    let (dims, shape) = match *sizes {
        [w] => (1, [w, 1, 1, 1]),
        [w, h] => (2, [w, h, 1, 1]),
        [w, h, c] => (3, [w, h, 1, c]),
        [w, h, d, c] => (4, [w, h, d, c]),
        _ => panic!("RandomMat takes 1 to 4 sizes, not {sizes:?}"),
    };
    let mut input = Input::new(rng, name, dims, shape);
    let (lo, hi) = range;
    for v in &mut input.values {
        *v = bf16_within(lo + (*v + 1.0) * 0.5 * (hi - lo), lo, hi);
    }
    input
}

/// The bf16 value nearest `v` that is inside `[lo, hi]` (a range's ends may round out of it,
/// out of a function's domain).
fn bf16_within(v: f32, lo: f32, hi: f32) -> f32 {
    use half::bf16;
    let mut q = bf16::from_f32(v);
    // a step of one unit in the last place, up or down the number line
    let step = |q: bf16, up: bool| {
        let bits = q.to_bits();
        bf16::from_bits(if (q.to_f32() >= 0.0) == up {
            bits + 1
        } else {
            bits - 1
        })
    };
    while q.to_f32() < lo {
        q = step(q, true);
    }
    while q.to_f32() > hi {
        q = step(q, false);
    }
    q.to_f32()
}

/// ncnn's default `RandomMat` range.
pub const RANDOM: (f32, f32) = (-1.2, 1.2);

/// ncnn's `RandomMat(n)` values, as weights.
pub fn random_values(rng: &mut Rng, n: usize, range: (f32, f32)) -> Vec<f32> {
    random_mat(rng, "w", &[n], range).values
}

/// Weights as the convolution family and InnerProduct load them: `load(n, 0)` (a tag saying
/// raw fp32, then `n` random values), then a raw bias of `bias` values (none for 0).
pub fn tagged_weights(rng: &mut Rng, n: usize, bias: usize) -> Vec<f32> {
    let mut w = vec![0.0];
    w.extend(random_values(rng, n, RANDOM));
    if bias > 0 {
        w.extend(random_values(rng, bias, RANDOM));
    }
    w
}

/// ncnn's `RandomS8Mat(n)` as a type-0 load: the int8 tag, then `n` levels in -127..=127
/// padded to whole words (the bytes ride in the fp32 words' bits).
pub fn s8_weights(rng: &mut Rng, n: usize) -> Vec<f32> {
    let mut w = vec![f32::from_bits(0x000D_4B38)];
    let bytes: Vec<u8> = (0..n.div_ceil(4) * 4)
        .map(|i| {
            if i < n {
                (rng.next() * 127.0).round() as i8 as u8
            } else {
                0
            }
        })
        .collect();
    w.extend(
        bytes
            .chunks(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    w
}

/// How the int8 tests' operands share their absmax: per stored row, per stored column
/// (A transposed: a row of A is a column of what is stored) or all together (B).
#[derive(Clone, Copy)]
pub enum Absmax {
    Rows,
    Columns,
    All,
}

/// ncnn's int8 tests' operands (test_gemm_3.cpp's RandomizeA/RandomizeB, test_multiheadattention_1's
/// RandomDynamicQuantMat): a stored `rows × cols` operand whose groups each take an absmax from
/// `[max / 2, max]` (hit once each way) and whose values never lie within 0.05 of half a level
/// under ncnn's dynamic scale, so that every implementation rounds them alike. Values are
/// bf16, held exactly by every storage.
pub fn int8_operand(rng: &mut Rng, (rows, cols): (usize, usize), by: Absmax, max: f32) -> Vec<f32> {
    let bf16 = |v: f32| half::bf16::from_f32(v).to_f32();
    let groups = match by {
        Absmax::Rows => rows,
        Absmax::Columns => cols,
        Absmax::All => 1,
    };
    let absmax: Vec<f32> = (0..groups)
        .map(|_| bf16(max * (0.75 + 0.25 * rng.next())))
        .collect();
    let group = |i: usize, j: usize| match by {
        Absmax::Rows => i,
        Absmax::Columns => j,
        Absmax::All => 0,
    };
    let mut values = vec![0.0f32; rows * cols];
    for i in 0..rows {
        for j in 0..cols {
            let a = absmax[group(i, j)];
            values[i * cols + j] = loop {
                let v = bf16(a * rng.next()).clamp(-a, a);
                let level = (v * (127.0 / a)).abs();
                if !(0.45..=0.55).contains(&level.fract()) {
                    break v;
                }
            };
        }
    }
    // each group's absmax at two of its places
    let pick = |rng: &mut Rng, n: usize| ((rng.next() + 1.0) * 0.5 * n as f32) as usize % n;
    for (g, &a) in absmax.iter().enumerate() {
        for sign in [-1.0, 1.0] {
            let (i, j) = match by {
                Absmax::Rows => (g, pick(rng, cols)),
                Absmax::Columns => (pick(rng, rows), g),
                Absmax::All => (pick(rng, rows), pick(rng, cols)),
            };
            values[i * cols + j] = sign * a;
        }
    }
    values
}

/// The fused activations (`9=` with its `10=` params) the convolution and InnerProduct cases
/// cycle through, as ncnn's tests pick from them.
pub const ACTIVATIONS: [&str; 7] = [
    "9=0",
    "9=1",
    "9=2 -23310=1,0.1",
    "9=3 -23310=2,-0.5,0.5",
    "9=4",
    "9=5",
    "9=6 -23310=2,0.2,0.5",
];

/// The shapes ncnn's elementwise tests (`test_elu.cpp`, `test_unaryop.cpp`, …) run every
/// function on: 4-D, 3-D, 2-D and 1-D, with channel counts that pack by 8, 4 and not at all.
pub const ELEMENTWISE_SHAPES: &[&[usize]] = &[
    &[7, 6, 5, 32],
    &[5, 6, 7, 24],
    &[7, 8, 9, 12],
    &[3, 4, 5, 13],
    &[4, 7, 32],
    &[5, 7, 24],
    &[7, 9, 12],
    &[3, 5, 13],
    &[13, 32],
    &[15, 24],
    &[17, 12],
    &[19, 15],
    &[128],
    &[124],
    &[127],
    &[120],
];

/// A one-input case over a fresh `RandomMat` of `sizes`.
pub fn unary_case(
    rng: &mut Rng,
    kind: &'static str,
    params: &str,
    sizes: &[usize],
    range: (f32, f32),
) -> Case {
    Case {
        kind,
        params: params.to_string(),
        inputs: vec![random_mat(rng, "x", sizes, range)],
        weights: Vec::new(),
        tops: 1,
    }
}

/// A net holding every case as its own branch (inputs `c{i}_{k}`, outputs `o{i}_{t}`), its
/// weights (each layer's in turn), inputs, and outputs with the case each belongs to.
struct Batch {
    param: String,
    weights: Vec<u8>,
    pub inputs: Vec<Input>,
    outputs: Vec<&'static str>,
    owners: Vec<usize>,
}

fn batch(cases: &[&Case]) -> Batch {
    let mut lines = Vec::new();
    let weights = cases
        .iter()
        .flat_map(|c| c.weights.iter().flat_map(|v| v.to_le_bytes()))
        .collect();
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let mut owners = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let mut bottoms = Vec::new();
        for (k, input) in case.inputs.iter().enumerate() {
            let name: &'static str = Box::leak(format!("c{i}_{k}").into_boxed_str());
            lines.push(format!("Input in{i}_{k} 0 1 {name}"));
            bottoms.push(name);
            inputs.push(Input {
                name,
                ..input.clone()
            });
        }
        let tops: Vec<&'static str> = (0..case.tops)
            .map(|t| &*Box::leak(format!("o{i}_{t}").into_boxed_str()))
            .collect();
        lines.push(format!(
            "{} l{i} {} {} {} {} {}",
            case.kind,
            bottoms.len(),
            tops.len(),
            bottoms.join(" "),
            tops.join(" "),
            case.params
        ));
        owners.extend(tops.iter().map(|_| i));
        outputs.extend(tops);
    }
    let param = format!(
        "7767517\n{} {}\n{}\n",
        lines.len(),
        inputs.len() + outputs.len(),
        lines.join("\n")
    );
    Batch {
        param,
        weights,
        inputs,
        outputs,
        owners,
    }
}

/// Every output of a batch net in fpshader: its numpy shape and values; and where the
/// layers ran.
fn run_batch(
    b: &Batch,
    opt: RunOptions,
    ctx: Option<Arc<fpshader::Context>>,
) -> (Net, Vec<Result<Output, Error>>, fpshader::net::RunRecord) {
    let net = load_net(&b.param, &b.weights, opt, ctx).unwrap_or_else(|e| panic!("{}", e.report()));
    let (got, record) = {
        let mut ex = net.create_extractor().unwrap();
        for i in &b.inputs {
            ex.input(i.name, i.mat()).unwrap();
        }
        let got = b
            .outputs
            .iter()
            .map(|o| ex.extract(o).map(|m| (m.numpy_shape(), m.to_values())))
            .collect();
        (got, ex.record().clone())
    };
    (net, got, record)
}

/// Runs `cases` against ncnn's wheel on the CPU, then on every GPU against the CPU
/// in ncnn's option tuples; every layer of a GPU net must run on the GPU (in image nets too
/// where `images`; layers without image shaders run on the CPU there).
pub fn check_suite(cases: Vec<Case>, images: bool) -> Vec<Output> {
    check_suite_tuples(cases, images, |_| true)
}

/// [`check_suite`] for a test that passes ncnn's `test_layer` an `epsilon` other than its
/// default 0.001: the GPU tolerances scale with it, as ncnn's `test_layer_opt` scales its fp16
/// ones (×100 with fp16 storage, ×1000 with fp16 arithmetic).
pub fn check_suite_epsilon(cases: Vec<Case>, images: bool, epsilon: f32) -> Vec<Output> {
    let cpu = check_suite_cpu_outputs(&cases);
    check_suite_gpu(&cases, &cpu, images, epsilon / 1e-3, |_| true);
    cpu
}

/// The GPU half of [`check_suite`] alone, against CPU outputs a test has checked otherwise (where
/// the wheel cannot judge the cases).
pub fn check_suite_gpu_against(cases: &[Case], cpu: &[Output], images: bool) {
    check_suite_gpu(cases, cpu, images, 1.0, |_| true);
}

/// [`check_suite`] for layers ncnn runs on the CPU only (dynamic weights: ncnn's Vulkan layers
/// turn themselves off): fpshader's CPU against the wheel; the fp32 outputs.
pub fn check_suite_cpu_only(cases: Vec<Case>) -> Vec<Output> {
    check_suite_cpu_outputs(&cases)
}

/// fpshader's CPU fp32 outputs of `cases`, unchecked: for cases a test checks against others
/// that the wheel checks.
pub fn cpu_outputs(cases: &[Case]) -> Vec<Output> {
    let b = batch(&cases.iter().collect::<Vec<_>>());
    let (_, fp32, _) = run_batch(&b, RunOptions::fp32(), None);
    fp32.into_iter()
        .zip(&b.owners)
        .map(|(o, &i)| o.unwrap_or_else(|e| panic!("{}: {}", cases[i].what(), e.report())))
        .collect()
}

/// [`check_suite`] in the GPU option tuples `tuple` accepts (by name): ops whose result
/// jumps (floor, fmod) compare with the CPU only where the GPU holds the inputs exactly.
pub fn check_suite_tuples(
    cases: Vec<Case>,
    images: bool,
    tuple: impl Fn(&str) -> bool,
) -> Vec<Output> {
    let cpu = check_suite_cpu_outputs(&cases);
    check_suite_gpu(&cases, &cpu, images, 1.0, tuple);
    cpu
}

/// [`check_suite_cpu_only`] for ncnn's int8 attention at the test's `epsilon` (0.01, 0.1). Its
/// intermediate values (projections, probabilities) are quantized again, and one that lies
/// within rounding of half a level goes to either level depending on the order of an fp32 sum
/// (ncnn's reference and its x86 layer differ so too): up to one output value in a thousand may
/// lie beyond epsilon, by at most ten times it.
pub fn check_suite_cpu_only_int8(cases: Vec<Case>, epsilon: f32) -> Vec<Output> {
    check_suite_cpu_outputs_at(&cases, epsilon, true)
}

/// Runs `cases` against ncnn's wheel on the CPU (fp32, and ncnn's default options against
/// fp32); the fp32 outputs, in the batch's output order.
fn check_suite_cpu_outputs(cases: &[Case]) -> Vec<Output> {
    check_suite_cpu_outputs_at(cases, 1e-3, false)
}

/// [`check_suite_cpu_outputs`] with the wheel's outputs matched at `epsilon` (with `level_flips`,
/// as [`check_suite_cpu_only_int8`] allows).
fn check_suite_cpu_outputs_at(cases: &[Case], epsilon: f32, level_flips: bool) -> Vec<Output> {
    let b = batch(&cases.iter().collect::<Vec<_>>());
    let want = ncnn_outputs_shaped(
        ("m.param", b.param.as_bytes()),
        &b.weights,
        &b.inputs,
        &b.outputs,
    );
    let (_, fp32, _) = run_batch(&b, RunOptions::fp32(), None);
    // fp32 with packed layouts where layers take them (pack8 on AVX CPUs): ncnn's tolerance
    let fp32_packed = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    let (_, fp32_packed, _) = run_batch(&b, fp32_packed, None);
    let (_, packed, _) = run_batch(&b, RunOptions::default(), None);
    let mut cpu = Vec::new();
    for (j, &i) in b.owners.iter().enumerate() {
        let what = format!("{} (output {})", cases[i].what(), b.outputs[j]);
        let (shape, got) = fp32[j]
            .as_ref()
            .unwrap_or_else(|e| panic!("{what}: {}", e.report()));
        if let Some((values, shapes)) = &want {
            assert_eq!(shape, &shapes[j], "{what}: output shape");
            let (packed_shape, packed_got) = fp32_packed[j]
                .as_ref()
                .unwrap_or_else(|e| panic!("{what}, fp32 packed: {}", e.report()));
            assert_eq!(packed_shape, shape, "{what}, fp32 packed: output shape");
            let packed_what = format!("{what}, fp32 packed");
            if level_flips {
                assert_close_but_flips(got, &values[j], epsilon, &what);
                assert_close_but_flips(packed_got, &values[j], epsilon, &packed_what);
            } else {
                assert_close(got, &values[j], epsilon, &what);
                assert_close(packed_got, &values[j], epsilon, &packed_what);
            }
        }
        let (default_shape, default) = packed[j]
            .as_ref()
            .unwrap_or_else(|e| panic!("{what}, default options: {}", e.report()));
        assert_eq!(
            default_shape, shape,
            "{what}, default options: output shape"
        );
        assert_close(default, got, 0.1, &format!("{what}, default options"));
        cpu.push((shape.clone(), got.clone()));
    }
    cpu
}

/// [`assert_close`], but for up to one value in a thousand (at least one) beyond `eps` by at
/// most ten times it.
fn assert_close_but_flips(got: &[f32], want: &[f32], eps: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: value count");
    let off: Vec<(usize, f32, f32)> = (got.iter().zip(want).enumerate())
        .filter(|(_, (a, b))| {
            let d = (*a - *b).abs();
            !(d <= eps || d / a.abs().max(b.abs()) < eps)
        })
        .map(|(i, (a, b))| (i, *a, *b))
        .collect();
    let allowed = (got.len() / 1000).max(1);
    assert!(
        off.len() <= allowed && off.iter().all(|(_, a, b)| (a - b).abs() <= 10.0 * eps),
        "{what}: {} values beyond {eps} (at most {allowed}, each within {}): {:?}",
        off.len(),
        10.0 * eps,
        &off[..off.len().min(8)]
    );
}

/// An output: its numpy shape and values.
pub type Output = (Vec<usize>, Vec<f32>);

/// The GPU half of [`check_suite`]: every case against the CPU's fp32 outputs. Every layer must run on the GPU, placed there at load and
/// taking its inputs at run time (the extractor's record). Each option tuple's tolerance is
/// scaled by `scale`.
fn check_suite_gpu(
    cases: &[Case],
    cpu: &[Output],
    images: bool,
    scale: f32,
    tuple: impl Fn(&str) -> bool,
) {
    let gpu_cases: Vec<&Case> = cases.iter().collect();
    let want: Vec<&Output> = cpu.iter().collect();
    if gpu_cases.is_empty() {
        return;
    }
    let b = batch(&gpu_cases);
    for ctx in gpu_contexts() {
        for (name, opt, eps) in gpu_option_tuples(&ctx).into_iter().filter(|t| tuple(t.0)) {
            let label = format!("{name}, {}", ctx.describe());
            let (net, got, record) = run_batch(&b, opt, Some(ctx.clone()));
            let placed = images || !opt.use_image_storage;
            // a layer's case and whether it may run on the CPU by design
            let known = |name: &str| {
                let index = name[1..].parse::<usize>().ok();
                let case = index.map(|c| gpu_cases[c]);
                // its outputs, as the CPU made them
                let outputs: Vec<&Output> = (b.owners.iter().zip(&want))
                    .filter(|(o, _)| Some(**o) == index)
                    .map(|(_, w)| *w)
                    .collect();
                let known = case.is_some_and(|c| known_cpu(c, &outputs, opt));
                (case.map_or(name.to_string(), Case::what), known)
            };
            for layer in net.layers().iter().filter(|l| placed && l.kind != "Input") {
                let (what, known) = known(&layer.name);
                assert!(
                    layer.on_gpu() || known,
                    "{label}: {what} is not placed on the GPU",
                );
            }
            for i in record.cpu_layers() {
                let (what, known) = known(&net.layers()[i].name);
                assert!(
                    !placed || known,
                    "{label}: {what} declined its inputs and ran on the CPU",
                );
            }
            for ((j, got), want) in got.into_iter().enumerate().zip(&want) {
                let what = format!(
                    "{} (output {}), {label}",
                    gpu_cases[b.owners[j]].what(),
                    b.outputs[j]
                );
                let (shape, got) = got.unwrap_or_else(|e| panic!("{what}: {}", e.report()));
                assert_eq!(&shape, &want.0, "{what}: output shape");
                assert_close(&got, &want.1, eps * scale, &what);
            }
        }
    }
}

/// The cases a GPU net runs on the CPU by design, each for its reason: image nets hold 3-D
/// blobs (other inputs or outputs there); Packing to elempack 16 is a CPU layout.
fn known_cpu(case: &Case, outputs: &[&Output], opt: RunOptions) -> bool {
    let small_image = opt.use_image_storage
        && (case.inputs.iter().any(|i| i.dims != 3) || outputs.iter().any(|o| o.0.len() != 3));
    let pack16 = case.kind == "Packing" && case.params.contains("0=16");
    small_image || pack16
}

#[test]
fn ncnn_activation_tests() {
    let mut rng = Rng(101);
    let mut cases = Vec::new();
    let mut each = |kind: &'static str, params: &str, range: (f32, f32), rng: &mut Rng| {
        let group = ELEMENTWISE_SHAPES
            .iter()
            .map(|sizes| unary_case(rng, kind, params, sizes, range))
            .collect();
        cases.extend(sample(group, 6));
    };
    // test_elu.cpp, test_selu.cpp, test_mish.cpp, test_softplus.cpp, test_erf.cpp,
    // test_absval.cpp, test_bnll.cpp
    each("ELU", "0=0.1", RANDOM, &mut rng);
    each("SELU", "0=1.673264 1=1.050700", RANDOM, &mut rng);
    each("Mish", "", RANDOM, &mut rng);
    each("Softplus", "", RANDOM, &mut rng);
    each("Erf", "", RANDOM, &mut rng);
    each("AbsVal", "", RANDOM, &mut rng);
    each("BNLL", "", RANDOM, &mut rng);
    // test_exp.cpp, test_log.cpp, test_power.cpp: (base, scale, shift) tuples and ranges
    for params in ["0=-1 1=1 2=0", "0=-1 1=0.75 2=-0.25", "0=2 1=0.5 2=0.125"] {
        each("Exp", params, (-1.0, 1.0), &mut rng);
    }
    for params in ["0=-1 1=1 2=0", "0=-1 1=0.75 2=0.25", "0=2 1=0.5 2=0.125"] {
        each("Log", params, (0.001, 2.0), &mut rng);
    }
    each("Power", "0=1.1 1=1.5 2=2", RANDOM, &mut rng);
    // test_threshold.cpp, test_shrink.cpp
    for params in ["0=0", "0=0.3"] {
        each("Threshold", params, RANDOM, &mut rng);
    }
    for params in ["0=0 1=5", "0=0.3 1=0.3", "0=4.5 1=6.1", "0=0.5 1=0.5"] {
        each("Shrink", params, RANDOM, &mut rng);
    }
    // the activations fpshader had before: test_relu.cpp, test_clip.cpp, test_hardswish.cpp,
    // test_hardsigmoid.cpp, test_gelu.cpp, test_dropout.cpp, test_swish.cpp, test_sigmoid.cpp,
    // test_tanh.cpp
    for (kind, params) in [
        ("ReLU", "0=0"),
        ("ReLU", "0=0.1"),
        ("Clip", "0=-1 1=1"),
        ("HardSwish", "0=0.2 1=0.5"),
        ("HardSigmoid", "0=0.5 1=0.5"),
        ("GELU", "0=0"),
        ("GELU", "0=1"),
        ("Dropout", "0=0.1"),
        ("Dropout", "0=0.5"),
        ("Dropout", "0=1"),
        ("Swish", ""),
        ("Sigmoid", ""),
        ("TanH", ""),
    ] {
        each(kind, params, RANDOM, &mut rng);
    }
    check_suite(cases, true);
}

/// test_unaryop.cpp: every op type on every shape, with the ranges the test gives the ops
/// that need them (scaled by 1000 for floor and ceil, positive for roots and logarithms, …).
#[test]
fn ncnn_unaryop_tests() {
    let mut rng = Rng(102);
    let mut cases = Vec::new();
    for op in 0..fpshader::layer::elementwise::unaryop::OPERATIONS.len() {
        let range = match op {
            2 | 3 => (-1200.0, 1200.0),
            5 | 6 | 8 | 17 => (0.001, 2.0),
            25 => (1.001, 2.0),
            11..=13 => (-1.0, 1.0),
            26 => (-0.99, 0.99),
            27 => (-0.999, 2.0),
            _ => RANDOM,
        };
        let group = ELEMENTWISE_SHAPES
            .iter()
            .map(|sizes| unary_case(&mut rng, "UnaryOp", &format!("0={op}"), sizes, range))
            .collect();
        cases.extend(sample(group, 4));
    }
    check_suite(cases, true);
}

/// `n` of `cases` spread evenly, or all of them with `FPSHADER_NCNN_SUITE=all`.
pub fn sample(cases: Vec<Case>, n: usize) -> Vec<Case> {
    let all = std::env::var("FPSHADER_NCNN_SUITE").is_ok_and(|v| v == "all");
    let len = cases.len();
    if all || len <= n {
        return cases;
    }
    cases
        .into_iter()
        .enumerate()
        .filter(|(i, _)| (i * n) / len != ((i + 1) * n) / len)
        .map(|(_, c)| c)
        .collect()
}

/// test_prelu.cpp (per-channel and shared slopes on every dims) and test_bias.cpp.
#[test]
fn ncnn_prelu_and_bias_tests() {
    let mut rng = Rng(103);
    let mut cases = Vec::new();
    let prelu: &[(&[usize], usize)] = &[
        (&[5, 7, 24], 24),
        (&[5, 7, 24], 1),
        (&[5, 7, 32], 32),
        (&[5, 7, 32], 1),
        (&[7, 9, 12], 12),
        (&[7, 9, 12], 1),
        (&[3, 5, 13], 13),
        (&[3, 5, 13], 1),
        (&[15, 24], 24),
        (&[15, 24], 1),
        (&[15, 32], 32),
        (&[15, 32], 1),
        (&[17, 12], 12),
        (&[17, 12], 1),
        (&[19, 15], 15),
        (&[19, 15], 1),
        (&[128], 128),
        (&[128], 1),
        (&[124], 124),
        (&[124], 1),
        (&[120], 120),
        (&[120], 1),
        (&[127], 127),
        (&[127], 1),
        (&[5, 3, 2, 24], 24),
        (&[5, 3, 2, 24], 1),
        (&[3, 5, 3, 13], 13),
        (&[3, 5, 3, 13], 1),
    ];
    for (sizes, slopes) in prelu {
        let mut case = unary_case(&mut rng, "PReLU", &format!("0={slopes}"), sizes, RANDOM);
        case.weights = random_mat(&mut rng, "w", &[*slopes], RANDOM).values;
        cases.push(case);
    }
    for sizes in [
        &[5, 6, 7, 24][..],
        &[7, 8, 9, 12],
        &[3, 4, 5, 13],
        &[5, 7, 24],
        &[7, 9, 12],
        &[3, 5, 13],
    ] {
        let channels = *sizes.last().unwrap();
        let mut case = unary_case(&mut rng, "Bias", &format!("0={channels}"), sizes, RANDOM);
        case.weights = random_mat(&mut rng, "w", &[channels], RANDOM).values;
        cases.push(case);
    }
    // the channel_affine family has no image variants yet
    check_suite(cases, false);
}

/// Every subset of up to four axes, as test_squeeze.cpp and test_expanddims.cpp list them.
const AXES: &[&str] = &[
    "0", "1", "2", "3", "0,1", "0,2", "0,3", "1,2", "1,3", "2,3", "0,1,2", "0,1,3", "0,2,3",
    "1,2,3", "0,1,2,3",
];

/// An ncnn array parameter `id` of `values` (`-23300-id=n,v0,v1,…`).
pub fn array_param(id: u32, values: &[i32]) -> String {
    let list: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    format!("-{}={},{}", 23300 + id, values.len(), list.join(","))
}

/// `3=axes` as an ncnn array parameter, from a list like `"0,2"`.
pub fn axes_param(axes: &str) -> String {
    let axes: Vec<i32> = axes.split(',').map(|a| a.parse().unwrap()).collect();
    array_param(3, &axes)
}

/// test_squeeze.cpp (every flag combination and axis set on shapes with ones in every place)
/// and test_expanddims.cpp (every axis set).
#[test]
fn ncnn_squeeze_and_expanddims_tests() {
    let mut rng = Rng(104);
    let mut cases = Vec::new();
    let squeeze_shapes: &[&[usize]] = &[
        &[4, 5, 7, 16],
        &[4, 5, 1, 15],
        &[4, 1, 7, 12],
        &[1, 5, 7, 16],
        &[1, 5, 1, 15],
        &[1, 1, 7, 12],
        &[6, 1, 1, 16],
        &[1, 1, 1, 15],
        &[4, 5, 7, 1],
        &[4, 5, 1, 1],
        &[4, 1, 7, 1],
        &[1, 5, 7, 1],
        &[1, 5, 1, 1],
        &[1, 1, 7, 1],
        &[1, 1, 1, 1],
        &[3, 12, 16],
        &[3, 1, 16],
        &[1, 33, 15],
        &[1, 14, 1],
        &[12, 13, 1],
        &[1, 1, 1],
        &[14, 16],
        &[1, 14],
        &[11, 1],
        &[1, 1],
        &[120],
        &[1],
    ];
    for sizes in squeeze_shapes {
        let mut params: Vec<String> = (0..16)
            .map(|f| {
                format!(
                    "0={} 1={} 11={} 2={}",
                    f >> 3 & 1,
                    f >> 2 & 1,
                    f >> 1 & 1,
                    f & 1
                )
            })
            .collect();
        params.extend(AXES.iter().map(|a| axes_param(a)));
        let group = params
            .iter()
            .map(|p| unary_case(&mut rng, "Squeeze", p, sizes, RANDOM))
            .collect();
        cases.extend(sample(group, 6));
    }
    for sizes in squeeze_shapes.iter().filter(|s| s.len() <= 3) {
        let group = AXES
            .iter()
            .map(|a| unary_case(&mut rng, "ExpandDims", &axes_param(a), sizes, RANDOM))
            .collect();
        cases.extend(sample(group, 6));
    }
    // the gather family (Reshape, Flatten, these) has no image variants yet
    check_suite(cases, false);
}

/// Parameters out of ncnn's range are refused at load, naming the layer and the value.
#[test]
fn out_of_range_unaryop_is_a_typed_error_naming_the_layer() {
    for op in ["28", "-1"] {
        let mut net = Net::new();
        let e = net
            .load_param_str(
                "t.param",
                &one_layer("UnaryOp", &["data"], &format!("0={op}")),
            )
            .unwrap_err();
        let report = e.report();
        assert!(report.contains("layer `layer` (UnaryOp)"), "{report}");
        let Error::Model(fpshader::ModelError::LayerParam { source, .. }) = &e else {
            panic!("not a layer's parameter error: {report}");
        };
        let bad_param = matches!(source.as_ref(), Error::Layer { source, .. }
            if matches!(source.as_ref(), Error::BadParam { id: 0, value, .. } if value == op));
        assert!(bad_param, "{report}");
    }
}

/// Runs one layer over `inputs` (numpy shapes, filled with 0.5); its error report.
pub fn layer_error(kind: &str, params: &str, inputs: &[(&str, &[usize])]) -> String {
    let names: Vec<&str> = inputs.iter().map(|i| i.0).collect();
    let mut net = Net::new();
    net.load_param_str("t.param", &one_layer(kind, &names, params))
        .unwrap();
    net.load_model_zeros().unwrap();
    let mut ex = net.create_extractor().unwrap();
    for &(name, shape) in inputs {
        let n = shape.iter().product();
        ex.input(name, Mat::from_numpy(shape, &vec![0.5; n]).unwrap())
            .unwrap();
    }
    ex.extract("out").unwrap_err().report()
}

/// Loads a one-layer model of `kind` over `bottoms`; its error report.
pub fn load_error(kind: &str, bottoms: &[&str], params: &str) -> String {
    Net::new()
        .load_param_str("t.param", &one_layer(kind, bottoms, params))
        .unwrap_err()
        .report()
}
