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
    pub(crate) fn what(&self) -> String {
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
pub(crate) struct Batch {
    param: String,
    weights: Vec<u8>,
    pub inputs: Vec<Input>,
    pub outputs: Vec<&'static str>,
    pub owners: Vec<usize>,
}

pub(crate) fn batch(cases: &[&Case]) -> Batch {
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
pub(crate) fn run_batch(
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
    check_suite_cpu_outputs_at(&cases, epsilon, true, false)
}

/// Runs `cases` against ncnn's wheel on the CPU (fp32, and ncnn's default options against
/// fp32); the fp32 outputs, in the batch's output order.
fn check_suite_cpu_outputs(cases: &[Case]) -> Vec<Output> {
    check_suite_cpu_outputs_at(cases, 1e-3, false, false)
}

/// [`check_suite_cpu_outputs`] with the wheel's outputs matched at `epsilon` (with `level_flips`,
/// as [`check_suite_cpu_only_int8`] allows; with `int8`, every run under `use_int8_inference`).
pub(crate) fn check_suite_cpu_outputs_at(
    cases: &[Case],
    epsilon: f32,
    level_flips: bool,
    int8: bool,
) -> Vec<Output> {
    let b = batch(&cases.iter().collect::<Vec<_>>());
    let want = ncnn_outputs_shaped(
        ("m.param", b.param.as_bytes()),
        &b.weights,
        &b.inputs,
        &b.outputs,
    );
    let plain = RunOptions {
        use_int8_inference: int8,
        ..RunOptions::fp32()
    };
    let (_, fp32, _) = run_batch(&b, plain, None);
    // fp32 with packed layouts where layers take them (pack8 on AVX CPUs): ncnn's tolerance
    let fp32_packed = RunOptions {
        use_packing_layout: true,
        ..plain
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
                (case.map_or_else(|| name.to_string(), Case::what), known)
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

/// An ncnn array parameter `id` of `values` (`-23300-id=n,v0,v1,…`).
pub fn array_param(id: u32, values: &[i32]) -> String {
    let list: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    format!("-{}={},{}", 23300 + id, values.len(), list.join(","))
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

/// A case over several fresh `RandomMat`s.
pub(crate) fn case_of(
    rng: &mut Rng,
    kind: &'static str,
    params: String,
    sizes: &[&[usize]],
    range: (f32, f32),
    tops: usize,
) -> Case {
    Case {
        kind,
        params,
        inputs: sizes
            .iter()
            .map(|s| random_mat(rng, "x", s, range))
            .collect(),
        weights: Vec::new(),
        tops,
    }
}

/// A case over several inputs with raw fp32 weights.
pub(crate) fn case_with(
    kind: &'static str,
    params: String,
    inputs: Vec<Input>,
    weights: Vec<Vec<f32>>,
) -> Case {
    Case {
        kind,
        params,
        inputs,
        weights: weights.concat(),
        tops: 1,
    }
}

/// ncnn's channels of a `RandomMat` of `sizes`: c of 3-D and 4-D, h of 2-D, w of 1-D.
pub(crate) fn channels(sizes: &[usize]) -> usize {
    match sizes.len() {
        1 => sizes[0],
        2 => sizes[1],
        _ => sizes[sizes.len() - 1],
    }
}
