//! ncnn's attention layer tests against the wheel: test_sdpa.cpp and test_sdpa_kvcache.cpp
//! (grouped heads, masks, scales, the key/value cache), test_rotaryembed.cpp and
//! test_multiheadattention.cpp / _kvcache.cpp (self, key-value and cross attention, kdim/vdim,
//! masks, the cache in prefill, decode and cross-attention). SDPA, MultiHeadAttention (both
//! with and without the cache) and RotaryEmbed also on every GPU against the CPU.

use super::suite::*;
use super::*;

/// `(q, k, v sizes, attn_mask, scale, past length)`.
type SdpaCase = ([usize; 3], [usize; 3], [usize; 3], u8, f32, usize);

/// test_sdpa.cpp's cases: `(q, k, v sizes, attn_mask, scale)`, then test_sdpa_kvcache.cpp's
/// past lengths for the same shapes.
const SDPA: &[SdpaCase] = &[
    ([32, 66, 8], [32, 66, 8], [20, 66, 8], 0, 0.0, 11),
    ([26, 64, 8], [26, 61, 8], [18, 61, 8], 1, 0.0, 11),
    ([40, 62, 7], [40, 61, 7], [24, 61, 7], 0, 0.0, 9),
    ([24, 22, 6], [24, 19, 6], [16, 19, 6], 1, 0.0, 9),
    ([64, 128, 12], [64, 128, 2], [64, 128, 2], 0, 0.0, 1),
    ([64, 122, 12], [64, 127, 2], [48, 127, 2], 1, 0.0, 1),
    ([44, 128, 4], [44, 123, 4], [55, 123, 4], 0, 1.0, 0),
    ([12, 127, 4], [12, 127, 4], [55, 127, 4], 1, 1.0, 0),
    ([28, 17, 15], [28, 127, 5], [32, 127, 5], 0, 0.1, 3),
    ([28, 17, 15], [28, 32, 5], [11, 32, 5], 1, -0.4, 5),
];

/// An SDPA case over `q`, `k`, `v` (with their mask); with `past`, a kv-cache case whose
/// past keys and values are the first `past` rows of `k` and `v` and whose current ones the
/// rest.
fn sdpa_case(
    q: &Input,
    k: &Input,
    v: &Input,
    mask: Option<&Input>,
    scale: f32,
    past: Option<usize>,
) -> Case {
    // rows `from..to` of each channel of a 3-D input
    let rows = |m: &Input, from: usize, to: usize, name: &'static str| {
        let [w, h, _, c] = m.shape;
        let mut part = m.clone();
        part.name = name;
        part.shape = [w, to - from, 1, c];
        part.values = (0..c)
            .flat_map(|ch| m.values[(ch * h + from) * w..(ch * h + to) * w].to_vec())
            .collect();
        part
    };
    let p = past.unwrap_or(0);
    let mut inputs = vec![
        q.clone(),
        rows(k, p, k.shape[1], "k"),
        rows(v, p, v.shape[1], "v"),
    ];
    inputs.extend(mask.cloned());
    let mut params = format!("5={} 6={scale}", u8::from(mask.is_some()));
    if past.is_some() {
        params.push_str(" 7=1");
        inputs.push(rows(k, 0, p, "past_k"));
        inputs.push(rows(v, 0, p, "past_v"));
    }
    Case {
        kind: "SDPA",
        params,
        inputs,
        weights: Vec::new(),
        tops: if past.is_some() { 3 } else { 1 },
    }
}

/// test_sdpa.cpp's shapes (the keys and values longer by test_sdpa_kvcache.cpp's past
/// lengths) against the wheel, and the same split into past and current against those:
/// a cached step over keys split into past and current must give the uncached result and
/// hand out the whole keys and values. (The wheel of 2026-10 returns garbage for its own
/// cached SDPA on x86, so it cannot judge the cached form itself.) The cached cases then run on
/// every GPU against those CPU outputs, the cache blobs too.
#[test]
fn ncnn_sdpa_tests() {
    let mut rng = Rng(2511);
    let mut plain = Vec::new();
    let mut cached = Vec::new();
    for &(q, k, v, mask, scale, past) in SDPA {
        // the kv-cache test's keys: the past and the current ones together
        let q = random_mat(&mut rng, "q", &q, RANDOM);
        let k = random_mat(&mut rng, "k", &[k[0], k[1] + past, k[2]], RANDOM);
        let v = random_mat(&mut rng, "v", &[v[0], v[1] + past, v[2]], RANDOM);
        let dst_src = [k.shape[1], q.shape[1]];
        let mask = (mask == 1).then(|| random_mat(&mut rng, "mask", &dst_src, RANDOM));
        plain.push(sdpa_case(&q, &k, &v, mask.as_ref(), scale, None));
        cached.push(sdpa_case(&q, &k, &v, mask.as_ref(), scale, Some(past)));
    }
    let want = check_suite(plain.clone(), false);
    let got = cpu_outputs(&cached);
    for (i, case) in cached.iter().enumerate() {
        let what = format!("SDPA {} with a cache", case.params);
        let (out, cache) = (&got[3 * i], &got[3 * i + 1..3 * i + 3]);
        assert_eq!(out.0, want[i].0, "{what}: output shape");
        assert_close(&out.1, &want[i].1, 1e-5, &what);
        for (got, whole) in cache.iter().zip(&plain[i].inputs[1..3]) {
            assert_eq!(
                got.1, whole.values,
                "{what}: the cache out is not the whole {}",
                whole.name
            );
        }
    }
    check_suite_gpu_against(&cached, &got, false);
}

/// `(q, k, v sizes, masked, whether sdpa_cm takes the shapes)`.
type CmCase = ([usize; 3], [usize; 3], [usize; 3], bool, bool);

/// SDPA runs on tensor cores exactly where the context has cooperative matrices, the blobs are
/// fp16 storage and the heads fit the tiles (widths in 16s up to 128): `sdpa_cm2` where the
/// context has workgroup matrices with their reductions, else `sdpa_cm`; on `sdpa` everywhere
/// else, checked against the CPU: 64-wide heads in 64-key blocks with grouped heads and query
/// and key counts off the block sizes, 96 → 32 (32-key blocks) with a mask, 128 → 128 with a
/// scale, 64-wide heads whose queries and keys fill whole blocks, with a mask, 32 → 48 over
/// whole blocks without one (`sdpa_cm2`'s scale in the exponent), and 20-wide heads that take
/// `sdpa` even there.
/// `FPSHADER_REQUIRE_COOPMAT` (set on machines that have them) makes a passthrough context
/// without them fail the test.
#[test]
fn sdpa_takes_cooperative_matrices_where_the_device_has_them() {
    let mut rng = Rng(2614);
    // (q, k, v sizes, mask, the shapes sdpa_cm takes)
    let cases: [CmCase; 6] = [
        ([64, 77, 4], [64, 130, 2], [64, 130, 2], false, true),
        ([96, 40, 3], [96, 33, 3], [32, 33, 3], true, true),
        ([128, 64, 2], [128, 70, 1], [128, 70, 1], false, true),
        ([64, 128, 4], [64, 192, 4], [64, 192, 4], true, true),
        ([32, 96, 2], [32, 128, 2], [48, 128, 2], false, true),
        ([20, 30, 2], [20, 30, 2], [20, 30, 2], false, false),
    ];
    for (q, k, v, masked, fits) in cases {
        let mut inputs = vec![
            random_mat(&mut rng, "q", &q, RANDOM),
            random_mat(&mut rng, "k", &k, RANDOM),
            random_mat(&mut rng, "v", &v, RANDOM),
        ];
        let mut bottoms = vec!["q", "k", "v"];
        if masked {
            inputs.push(random_mat(&mut rng, "mask", &[k[1], q[1]], RANDOM));
            bottoms.push("mask");
        }
        let param = one_layer("SDPA", &bottoms, &format!("5={} 6=0.3", u8::from(masked)));
        let want = run_net(&param, &[], &inputs, "out", RunOptions::fp32(), None)
            .unwrap()
            .to_values();
        check_tensor_core_choice(
            (&param, &[]),
            &inputs,
            &want,
            ("sdpa", fits, true),
            (RunOptions::fp32(), 0.05),
        );
    }
}

/// test_sdpa.cpp's test_sdpa_int8 (`18=2`) on its shapes (one of which gives the query another
/// width than the key, which ncnn reads past; the fp32 test's shape stands in for it): on the
/// CPU against the wheel at the test's epsilon 0.01 ([`check_suite_cpu_only_int8`]). ncnn's Vulkan SDPA leaves int8 to the CPU,
/// as fpshader's does.
#[test]
fn ncnn_sdpa_int8_tests() {
    let mut rng = Rng(2515);
    let mut cases = Vec::new();
    for &(q, k, v, mask, scale, _) in SDPA {
        let q = random_mat(&mut rng, "q", &q, RANDOM);
        let k = random_mat(&mut rng, "k", &k, RANDOM);
        let v = random_mat(&mut rng, "v", &v, RANDOM);
        let dst_src = [k.shape[1], q.shape[1]];
        let mask = (mask == 1).then(|| random_mat(&mut rng, "mask", &dst_src, RANDOM));
        let mut case = sdpa_case(&q, &k, &v, mask.as_ref(), scale, None);
        case.params.push_str(" 18=2");
        cases.push(case);
    }
    check_suite_cpu_only_int8(cases, 0.01);
}

/// test_rotaryembed.cpp: `(RandomMat sizes, interleaved)`.
#[test]
fn ncnn_rotaryembed_tests() {
    let mut rng = Rng(2512);
    let cases = [
        ([32, 66, 8], 0),
        ([26, 64, 8], 1),
        ([64, 28, 12], 0),
        ([48, 22, 12], 1),
        ([44, 28, 64], 0),
        ([12, 27, 64], 1),
        ([28, 17, 15], 0),
        ([28, 17, 15], 1),
    ]
    .into_iter()
    .map(|(a, interleaved)| {
        let half = [a[0] / 2, a[1]];
        Case {
            kind: "RotaryEmbed",
            params: format!("0={interleaved}"),
            inputs: vec![
                random_mat(&mut rng, "a", &a, RANDOM),
                random_mat(&mut rng, "cos", &half, RANDOM),
                random_mat(&mut rng, "sin", &half, RANDOM),
            ],
            weights: Vec::new(),
            tops: 1,
        }
    })
    .collect();
    check_suite(cases, false);
}

/// A MultiHeadAttention layer's params and weights: `embed`, `heads`, the three input widths,
/// the mask flag, an explicit scale and kv_cache.
pub(super) fn mha(
    rng: &mut Rng,
    [qdim, kdim, vdim]: [usize; 3],
    embed: usize,
    heads: usize,
    mask: u8,
    scale: Option<f32>,
    kv_cache: bool,
) -> (String, Vec<f32>) {
    let mut params = format!(
        "0={embed} 1={heads} 2={} 3={kdim} 4={vdim} 5={mask}",
        embed * qdim
    );
    if let Some(s) = scale {
        params.push_str(&format!(" 6={s}"));
    }
    if kv_cache {
        params.push_str(" 7=1");
    }
    let mut weights = tagged_weights(rng, embed * qdim, embed);
    weights.extend(tagged_weights(rng, embed * kdim, embed));
    weights.extend(tagged_weights(rng, embed * vdim, embed));
    weights.extend(tagged_weights(rng, qdim * embed, qdim));
    (params, weights)
}

/// [`mha`]'s int8 twin (test_multiheadattention_1.cpp, `18=2`): RandomS8Mat projections with
/// fp32 biases, then the query, key and value scales per output row and the output's one
/// (160-200); the scale `1/√head_dim` as the test sets it.
fn mha_int8(
    rng: &mut Rng,
    [qdim, kdim, vdim]: [usize; 3],
    embed: usize,
    heads: usize,
    mask: u8,
) -> (String, Vec<f32>) {
    let scale = 1.0 / ((embed / heads) as f32).sqrt();
    let params = format!(
        "0={embed} 1={heads} 2={} 3={kdim} 4={vdim} 5={mask} 6={scale} 18=2",
        embed * qdim
    );
    let mut weights = Vec::new();
    for (n, bias) in [
        (embed * qdim, embed),
        (embed * kdim, embed),
        (embed * vdim, embed),
        (qdim * embed, qdim),
    ] {
        weights.extend(s8_weights(rng, n));
        weights.extend(random_values(rng, bias, RANDOM));
    }
    for n in [embed, embed, embed, 1] {
        weights.extend(random_values(rng, n, (160.0, 200.0)));
    }
    (params, weights)
}

/// test_multiheadattention_1.cpp: int8 attention with separate q/k/v (masks), same k-v and
/// same q-k-v over RandomDynamicQuantMat inputs, on the CPU against the wheel at the test's
/// epsilon 0.1 ([`check_suite_cpu_only_int8`]). ncnn's Vulkan MultiHeadAttention leaves int8 to the CPU, as fpshader's does.
#[test]
fn ncnn_multiheadattention_int8_tests() {
    let mut rng = Rng(2516);
    let quant = |rng: &mut Rng, name: &'static str, [w, h]: [usize; 2]| {
        let mut m = random_mat(rng, name, &[w, h], RANDOM);
        m.values = int8_operand(rng, (h, w), Absmax::Rows, 1.2);
        m
    };
    let mut cases = Vec::new();
    for &(q, k, v, embed, heads, mask) in MHA {
        let p = mha_int8(&mut rng, [q[0], k[0], v[0]], embed, heads, mask);
        let mut inputs = vec![
            quant(&mut rng, "q", q),
            quant(&mut rng, "k", k),
            quant(&mut rng, "v", v),
        ];
        if mask == 1 {
            inputs.push(random_mat(&mut rng, "mask", &[k[1], q[1]], RANDOM));
        }
        cases.push(mha_case(p, inputs, 1));
    }
    for (q, kv, embed, heads) in [
        ([64, 128], [64, 128], 64, 4),
        ([48, 127], [64, 127], 64, 16),
        ([12, 17], [11, 32], 12, 3),
    ] {
        let p = mha_int8(&mut rng, [q[0], kv[0], kv[0]], embed, heads, 0);
        let inputs = vec![quant(&mut rng, "q", q), quant(&mut rng, "kv", kv)];
        cases.push(mha_case(p, inputs, 1));
    }
    for (a, embed, heads) in [([64, 128], 64, 4), ([48, 127], 64, 8)] {
        let p = mha_int8(&mut rng, [a[0]; 3], embed, heads, 0);
        cases.push(mha_case(p, vec![quant(&mut rng, "a", a)], 1));
    }
    check_suite_cpu_only_int8(cases, 0.1);
}

/// A MultiHeadAttention case's query, key and value (2-D, RandomMat sizes), then its mask
/// (key length × query length) where `mask` is 1.
fn qkv_inputs(rng: &mut Rng, q: [usize; 2], k: [usize; 2], v: [usize; 2], mask: u8) -> Vec<Input> {
    let mut inputs = vec![
        random_mat(rng, "q", &q, RANDOM),
        random_mat(rng, "k", &k, RANDOM),
        random_mat(rng, "v", &v, RANDOM),
    ];
    if mask == 1 {
        inputs.push(random_mat(rng, "mask", &[k[1], q[1]], RANDOM));
    }
    inputs
}

fn mha_case(params: (String, Vec<f32>), inputs: Vec<Input>, tops: usize) -> Case {
    Case {
        kind: "MultiHeadAttention",
        params: params.0,
        inputs,
        weights: params.1,
        tops,
    }
}

/// `(q, k, v sizes, embed_dim, num_heads, attn_mask)`.
type MhaCase = ([usize; 2], [usize; 2], [usize; 2], usize, usize, u8);

/// test_multiheadattention.cpp's `(q, k, v RandomMat sizes, embed_dim, num_heads, attn_mask)`
/// (its _kvcache twin crosses the same shapes with a cache).
const MHA: &[MhaCase] = &[
    ([62, 66], [32, 66], [20, 66], 62, 2, 0),
    ([26, 64], [32, 64], [18, 64], 26, 2, 1),
    ([64, 128], [64, 128], [64, 128], 64, 4, 0),
    ([48, 127], [64, 127], [64, 127], 64, 16, 1),
    ([16, 128], [44, 128], [55, 128], 16, 2, 0),
    ([12, 128], [44, 127], [55, 127], 16, 4, 1),
    ([12, 17], [28, 127], [32, 127], 12, 3, 0),
    ([12, 17], [28, 32], [11, 32], 12, 3, 1),
];

/// test_multiheadattention.cpp: separate q/k/v, same k-v, same q-k-v.
#[test]
fn ncnn_multiheadattention_tests() {
    let mut rng = Rng(2513);
    let mut cases = Vec::new();
    for &(q, k, v, embed, heads, mask) in MHA {
        let p = mha(
            &mut rng,
            [q[0], k[0], v[0]],
            embed,
            heads,
            mask,
            None,
            false,
        );
        cases.push(mha_case(p, qkv_inputs(&mut rng, q, k, v, mask), 1));
    }
    // test_multiheadattention_samekv
    for (q, kv, embed, heads) in [
        ([64, 128], [64, 128], 64, 4),
        ([48, 127], [64, 127], 64, 16),
        ([16, 128], [44, 128], 16, 2),
        ([12, 128], [22, 127], 16, 4),
        ([12, 17], [28, 127], 12, 3),
        ([12, 17], [11, 32], 12, 3),
    ] {
        let p = mha(&mut rng, [q[0], kv[0], kv[0]], embed, heads, 0, None, false);
        let inputs = vec![
            random_mat(&mut rng, "q", &q, RANDOM),
            random_mat(&mut rng, "kv", &kv, RANDOM),
        ];
        cases.push(mha_case(p, inputs, 1));
    }
    // test_multiheadattention_sameqkv, with its scale
    for (a, embed, heads) in [([64, 128], 64, 4), ([48, 127], 64, 8)] {
        let scale = 0.7 / ((embed / heads) as f32).sqrt();
        let p = mha(&mut rng, [a[0]; 3], embed, heads, 0, Some(scale), false);
        cases.push(mha_case(p, vec![random_mat(&mut rng, "a", &a, RANDOM)], 1));
    }
    // test_multiheadattention.cpp's epsilon
    check_suite_epsilon(cases, false, 0.005);
}

/// test_multiheadattention_kvcache.cpp: cross-attention with and without a cache, self-attention
/// prefill (an empty cache, a causal mask) and decode (one or more steps after a cache).
#[test]
fn ncnn_multiheadattention_kvcache_tests() {
    let mut rng = Rng(2514);
    let mut cases = Vec::new();
    for &(q, k, v, embed, heads, mask) in MHA {
        for cached in [false, true] {
            let scale = 1.0 / ((embed / heads) as f32).sqrt();
            let p = mha(
                &mut rng,
                [q[0], k[0], v[0]],
                embed,
                heads,
                mask,
                Some(scale),
                true,
            );
            let mut inputs = qkv_inputs(&mut rng, q, k, v, mask);
            let past = if cached { k[1] } else { 0 };
            let cache = [embed / heads, past, heads];
            inputs.push(random_mat(&mut rng, "ck", &cache, RANDOM));
            inputs.push(random_mat(&mut rng, "cv", &cache, RANDOM));
            cases.push(mha_case(p, inputs, 3));
        }
    }
    for (q, embed, heads) in [([64, 128], 64, 4), ([48, 127], 64, 8)] {
        let scale = 0.7 / ((embed / heads) as f32).sqrt();
        let p = mha(&mut rng, [q[0]; 3], embed, heads, 1, Some(scale), true);
        let n = q[1];
        let mut causal = random_mat(&mut rng, "mask", &[n, n], RANDOM);
        for (i, row) in causal.values.chunks_exact_mut(n).enumerate() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = if j > i { -60000.0 } else { 0.0 };
            }
        }
        let inputs = vec![
            random_mat(&mut rng, "q", &q, RANDOM),
            causal,
            random_mat(&mut rng, "ck", &[embed / heads, 0, heads], RANDOM),
            random_mat(&mut rng, "cv", &[embed / heads, 0, heads], RANDOM),
        ];
        cases.push(mha_case(p, inputs, 3));
    }
    for (q, embed, heads, cur) in [
        ([64, 128], 64, 4, 1),
        ([48, 127], 64, 8, 1),
        ([64, 128], 64, 4, 32),
    ] {
        let scale = 0.7 / ((embed / heads) as f32).sqrt();
        let p = mha(&mut rng, [q[0]; 3], embed, heads, 0, Some(scale), true);
        let inputs = vec![
            random_mat(&mut rng, "q", &[q[0], cur], RANDOM),
            random_mat(&mut rng, "ck", &[embed / heads, q[1], heads], RANDOM),
            random_mat(&mut rng, "cv", &[embed / heads, q[1], heads], RANDOM),
        ];
        cases.push(mha_case(p, inputs, 3));
    }
    check_suite_epsilon(cases, false, 0.005);
}

/// A bad-input case: layer, params, inputs (numpy shapes), what the report names.
type BadInput = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static [usize])],
    &'static [&'static str],
);

/// Heads that do not divide the embedding, keys that do not fit the query, a cache of
/// another shape, a cos/sin cache shorter than the sequence: typed errors naming the layer
/// and the values.
#[test]
fn attention_bad_input_is_a_typed_error_naming_the_layer_and_shapes() {
    let e = load_error("MultiHeadAttention", &["q"], "0=10 1=3 2=100");
    assert!(
        e.contains("MultiHeadAttention") && e.contains('3') && e.contains("divisor"),
        "{e}"
    );
    // ncnn's unused quantize terms 4-6 and weight-block quantization (4xx) are refused by name
    for (kind, params) in [
        ("MultiHeadAttention", "0=8 1=2 2=64 18=5"),
        ("Gemm", "18=4"),
        ("Gemm", "18=401"),
    ] {
        let e = load_error(kind, &["q"], params);
        assert!(
            e.contains(kind) && e.contains("18") && e.contains("int8"),
            "{kind} {params}: {e}"
        );
    }
    let cases: &[BadInput] = &[
        (
            "SDPA",
            "",
            &[("q", &[2, 5, 8]), ("k", &[2, 6, 7]), ("v", &[2, 6, 4])],
            &["(SDPA)", "[2, 5, 8]", "[2, 6, 7]"],
        ),
        (
            "SDPA",
            "",
            &[("q", &[3, 5, 8]), ("k", &[2, 6, 8]), ("v", &[2, 6, 4])],
            &["(SDPA)", "groups"],
        ),
        (
            "MultiHeadAttention",
            "0=8 1=2 2=64 7=1",
            &[("q", &[3, 8]), ("ck", &[2, 5, 3]), ("cv", &[2, 5, 4])],
            &["(MultiHeadAttention)", "[2, 5, 3]"],
        ),
        (
            "RotaryEmbed",
            "",
            &[("x", &[2, 6, 8]), ("cos", &[5, 4]), ("sin", &[5, 4])],
            &["(RotaryEmbed)", "[5, 4]"],
        ),
    ];
    for &(kind, params, inputs, names) in cases {
        let e = layer_error(kind, params, inputs);
        assert!(names.iter().all(|n| e.contains(n)), "{e}");
    }
}
