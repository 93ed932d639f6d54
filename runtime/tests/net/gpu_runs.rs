//! The net on the GPU across layers and runs: in-place layers beside shared blobs, the buffer
//! pool under repeated runs, CPU fallback between GPU layers, chains of channel moves run as
//! one gather.

use super::*;
use fpshader::GpuMat;

/// MemoryData on the GPU hands out its uploaded blob; an in-place GPU layer after it (Softmax)
/// must copy it first, or the second run would see the first run's output as its data.
#[test]
fn memorydata_stays_unchanged_under_in_place_gpu_layers() {
    let mut rng = Rng(83);
    let values = rng.vec(7 * 5 * 8);
    let param = "7767517\n3 3\nMemoryData mem 0 1 m 0=7 1=5 2=8\nSoftmax soft 1 1 m s 0=0\nReLU r 1 1 s out\n";
    let weights = bin(&[(&values, false)]);
    let want = run_net(param, &weights, &[], "out", RunOptions::fp32(), None)
        .unwrap()
        .to_values();
    // pack1 fp32: no repacking between them that would copy the blob anyway
    for (ctx, opt) in gpu_contexts()
        .into_iter()
        .flat_map(|c| [(c.clone(), RunOptions::fp32()), (c, RunOptions::default())])
    {
        let net = load_net(param, &weights, opt, Some(ctx.clone())).unwrap();
        for kind in ["MemoryData", "Softmax"] {
            assert!(
                net.layers().iter().any(|l| l.kind == kind && l.on_gpu()),
                "{kind} did not run on the GPU"
            );
        }
        for run in 0..2 {
            let got = net.create_extractor().unwrap().extract("out").unwrap();
            assert_close(
                &got.to_values(),
                &want,
                0.1,
                &format!("run {run} on {}", ctx.describe()),
            );
        }
    }
}

/// Spent GPU blobs go back to the context's pool and are handed out again: repeated extracts
/// on a chain of GPU layers (each reusing the last run's buffers) stay right.
#[test]
fn pooled_buffers_are_reused_without_corrupting_later_runs() {
    let mut rng = Rng(67);
    let param = "7767517\n6 7\nInput a_in 0 1 a\nInput b_in 0 1 b\nReLU r 1 1 a r 0=0.1\n\
                 BinaryOp add 2 1 r b s 0=0\nSigmoid sig 1 1 s t\nBinaryOp mul 2 1 t b out 0=2\n";
    let ins = [
        Input::new(&mut rng, "a", 3, [9, 7, 1, 8]),
        Input::new(&mut rng, "b", 3, [9, 7, 1, 8]),
    ];
    let want = run_net(param, &[], &ins, "out", RunOptions::fp32(), None).unwrap();
    for ctx in gpu_contexts() {
        let net = load_net(param, &[], RunOptions::fp32(), Some(ctx.clone())).unwrap();
        for run in 0..4 {
            let mut ex = net.create_extractor().unwrap();
            for i in &ins {
                ex.input(i.name, i.mat()).unwrap();
            }
            let got = ex.extract("out").unwrap();
            assert_close(
                &got.to_values(),
                &want.to_values(),
                1e-3,
                &format!("run {run}, {}", ctx.describe()),
            );
        }
    }
}

/// Buffers go back to the context's pool when the last mat holding them drops, the user's
/// outputs included: from the second run on, a GPU net allocates nothing, and the pool holds
/// the same bytes after every run.
#[test]
fn a_second_run_allocates_nothing_and_dropped_outputs_return_to_the_pool() {
    let mut rng = Rng(71);
    let param = "7767517\n6 7\nInput a_in 0 1 a\nInput b_in 0 1 b\nReLU r 1 1 a r 0=0.1\n\
                 BinaryOp add 2 1 r b s 0=0\nSigmoid sig 1 1 s t\nBinaryOp mul 2 1 t b out 0=2\n";
    let ins = [
        Input::new(&mut rng, "a", 3, [16, 8, 1, 8]),
        Input::new(&mut rng, "b", 3, [16, 8, 1, 8]),
    ];
    for ctx in gpu_contexts() {
        let net = load_net(param, &[], RunOptions::fp32(), Some(ctx.clone())).unwrap();
        let opts = net.opt.variant_options(ctx.allowed_options());
        let inputs: Vec<_> = ins
            .iter()
            .map(|i| GpuMat::upload(&ctx, &i.mat(), opts).unwrap())
            .collect();
        let mut pooled = Vec::new();
        for run in 0..3 {
            let stats = ctx.submission_stats();
            let mut ex = net.create_extractor().unwrap();
            for (i, m) in ins.iter().zip(&inputs) {
                ex.input_gpu(i.name, m.clone()).unwrap();
            }
            let out = ex.extract_gpu("out").unwrap();
            drop(ex);
            let before = ctx.pooled_bytes();
            drop(out);
            assert!(
                ctx.pooled_bytes() > before,
                "a dropped output goes back to the pool ({})",
                ctx.describe()
            );
            pooled.push(ctx.pooled_bytes());
            // the same buffers for the same blobs every run: their bind groups are cached
            let d = ctx.submission_stats() - stats;
            if run > 0 {
                assert_eq!((d.new_buffers, d.bind_groups), (0, 0), "{}", ctx.describe());
            }
        }
        assert!(pooled[0] > 0, "{}", ctx.describe());
        assert_eq!(pooled[1], pooled[0], "{}", ctx.describe());
        assert_eq!(pooled[2], pooled[0], "{}", ctx.describe());
    }
}

/// GPU layers (ReLU, Sigmoid, BinaryOp, MemoryData, Pooling, Eltwise) around CPU layers
/// (Split, Scale by a blob kept off the GPU by ncnn's featmask bit 4): each run of GPU layers in one submission, downloads where a CPU layer
/// follows; fp32 and fp16.
#[test]
fn gpu_layers_with_cpu_fallback_match_ncnn() {
    let mut rng = Rng(23);
    let x = Input::new(&mut rng, "data", 3, [6, 5, 1, 8]);
    let mem = rng.vec(8);
    // Scale by a second blob, on the CPU (`31=16`: ncnn's no-Vulkan featmask bit), between GPU
    // layers Pooling and Eltwise
    let param = BRANCHY
        .replace("0=4\n", "0=8\n")
        .replace("8 10\n", "10 13\n")
        .replace(
            "Eltwise mul 2 1 g m out",
            "Split msp 1 2 m m1 m2\nScale sc 2 1 g m1 g2 0=-233 31=16\nEltwise mul 2 1 g2 m2 out",
        );
    let weights = bin(&[(&mem, false)]);
    let input = || x.clone();
    let want = ncnn(&param, &weights, &[input()], "out");
    let cpu = run_net(
        &param,
        &weights,
        &[input()],
        "out",
        RunOptions::fp32(),
        None,
    )
    .unwrap();
    for ctx in gpu_contexts() {
        for (opt, eps) in [(RunOptions::fp32(), 1e-3), (RunOptions::default(), 0.1)] {
            let net = load_net(&param, &weights, opt, Some(ctx.clone())).unwrap();
            let on_gpu: Vec<&str> = net
                .layers()
                .iter()
                .filter(|l| l.on_gpu())
                .map(|l| l.kind.as_str())
                .collect();
            assert_eq!(
                on_gpu,
                [
                    "ReLU",
                    "Sigmoid",
                    "BinaryOp",
                    "MemoryData",
                    "Pooling",
                    "Eltwise"
                ],
                "{}",
                ctx.describe()
            );
            let mut ex = net.create_extractor().unwrap();
            // keep intermediates, so `s` can be extracted after the run
            ex.set_light_mode(false);
            ex.input("data", input().mat()).unwrap();
            let got = ex.extract("out").unwrap().to_values();
            let what = format!("{} {opt:?}", ctx.describe());
            assert_close(&got, &cpu.to_values(), eps, &what);
            if let Some(want) = &want {
                assert_close(&got, want, eps, &what);
            }
            // an intermediate GPU blob, extracted after the run
            let s = ex.extract("s").unwrap();
            assert_eq!(s.shape(), [6, 5, 1, 8]);
        }
    }
}

/// Concat → ShuffleChannel → Slice along the channels (shufflenet's blocks) runs as one
/// `channel_gather` dispatch in light mode, in every packing the channels give, on 3-D and 4-D
/// blobs, equal to the CPU; chains that must not fuse (light mode off, a link that is the
/// output) run layer by layer.
#[test]
fn channel_moving_chains_run_as_one_gather() {
    let mut rng = Rng(4242);
    let chain = |tail: &str| {
        let layers = format!(
            "Input a_in 0 1 a\nInput b_in 0 1 b\n\
             Concat cat 2 1 a b joined 0=0\n\
             ShuffleChannel shuf 1 1 joined shuffled 0=2\n{tail}"
        );
        let lines: Vec<&str> = layers.lines().collect();
        // every blob is some layer's top
        let blobs: usize = lines
            .iter()
            .filter_map(|l| l.split_whitespace().nth(3)?.parse::<usize>().ok())
            .sum();
        format!("7767517\n{} {blobs}\n{layers}", lines.len())
    };
    let slice = "Slice parts 1 3 shuffled p0 p1 out -23300=3,4,-233,-233\n\
                 Noop keep 1 1 p1 kept\n";
    let split = "Split two 1 2 shuffled s0 s1\nBinaryOp out 2 1 s0 s1 out 0=0\n";
    // (model, blob extracted, whether the chain fuses, inputs' dims and shape per channel count)
    let cases: Vec<(String, &str, bool, u8, [usize; 3])> = vec![
        (chain(slice), "out", true, 3, [5, 3, 1]),
        (chain(slice), "out", true, 4, [3, 2, 2]),
        (chain(split), "out", true, 3, [4, 4, 1]),
        // Concat and ShuffleChannel end at the output: a chain of two
        (chain(slice), "shuffled", true, 3, [5, 3, 1]),
        // the first link is the output: Concat alone, no chain
        (chain(slice), "joined", false, 3, [5, 3, 1]),
    ];
    for ctx in gpu_contexts() {
        assert!(
            ctx.set_timing(true),
            "{} has no timestamp queries",
            ctx.describe()
        );
        for (param, out, fuses, dims, [w, h, d]) in &cases {
            // channels: packs of 8, of 4 and none at all
            for (ca, cb) in [(8, 16), (12, 4), (7, 5)] {
                let inputs = [
                    Input::new(&mut rng, "a", *dims, [*w, *h, *d, ca]),
                    Input::new(&mut rng, "b", *dims, [*w, *h, *d, cb]),
                ];
                let want = run_net(param, &[], &inputs, out, RunOptions::fp32(), None)
                    .unwrap_or_else(|e| panic!("{param} on the CPU: {e}"))
                    .to_values();
                let fp16 = RunOptions::default();
                let packed = RunOptions {
                    use_packing_layout: true,
                    ..RunOptions::fp32()
                };
                let heavy = RunOptions {
                    lightmode: false,
                    ..packed
                };
                for (opt, light, eps) in [
                    (packed, true, 1e-6),
                    (fp16, true, 1e-2),
                    (heavy, false, 1e-6),
                ] {
                    let what = format!(
                        "{out} of\n{param}{ca}+{cb} channels, {opt:?}, {}",
                        ctx.describe()
                    );
                    let got = run_net(param, &[], &inputs, out, opt, Some(ctx.clone()))
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_close(&got.to_values(), &want, eps, &what);
                    let shaders: Vec<String> =
                        ctx.take_timings().into_iter().map(|t| t.shader).collect();
                    let gathered = shaders.iter().any(|s| s == "channel_gather");
                    let layered = shaders.iter().any(|s| {
                        [
                            "concat",
                            "concat_pack4",
                            "concat_flat",
                            "gather",
                            "slice_pair",
                        ]
                        .contains(&s.as_str())
                    });
                    let fused = *fuses && light;
                    assert!(
                        gathered == fused && layered != fused,
                        "{what}: ran {shaders:?}, expected {}",
                        if fused {
                            "one channel_gather"
                        } else {
                            "the layers' own shaders"
                        }
                    );
                }
            }
        }
        ctx.set_timing(false);
    }
}

/// A host input that a Split hands to several GPU layers goes up once a run, all of them
/// sharing the buffer (an SSD's image feeds its first convolution and six PriorBoxes: it went
/// up seven times); the in-place reader (ReLU) works on a copy, the others still see the
/// input.
#[test]
fn an_input_split_to_many_gpu_readers_is_uploaded_once() {
    let mut rng = Rng(89);
    let param = "7767517\n7 10\nInput in 0 1 a\nSplit sp 1 4 a a0 a1 a2 a3\n\
                 ReLU r 1 1 a0 r 0=0.1\nSigmoid sig 1 1 a1 s\nTanH th 1 1 a2 t\n\
                 Eltwise sum 3 1 r s t e 0=1\nEltwise out 2 1 e a3 out 0=1\n";
    let ins = [Input::new(&mut rng, "a", 3, [9, 7, 1, 8])];
    let want = run_net(param, &[], &ins, "out", RunOptions::fp32(), None)
        .unwrap()
        .to_values();
    for ctx in gpu_contexts() {
        let net = load_net(param, &[], RunOptions::fp32(), Some(ctx.clone())).unwrap();
        for run in 0..2 {
            let stats = ctx.submission_stats();
            let mut ex = net.create_extractor().unwrap();
            ex.input("a", ins[0].mat()).unwrap();
            let got = ex.extract("out").unwrap();
            let what = format!("run {run} on {}", ctx.describe());
            assert_close(&got.to_values(), &want, 1e-5, &what);
            let d = ctx.submission_stats() - stats;
            assert_eq!(
                d.uploads, 1,
                "{what}: the input went up {} times",
                d.uploads
            );
        }
    }
}

/// An in-place layer after a 1-D blob that changes packing for it (alexnet's Softmax after its
/// last InnerProduct: pack1 out, pack4 in, one buffer seen two ways) writes that buffer
/// itself, with no copy first, and the result still matches the CPU.
#[test]
fn an_in_place_layer_after_a_repacked_vector_takes_no_copy() {
    let mut rng = Rng(90);
    let (k, n) = (64, 1000);
    let param = format!(
        "7767517\n3 3\nInput in 0 1 a\nInnerProduct fc 1 1 a f 0={n} 1=1 2={}\n\
         Softmax out 1 1 f out\n",
        k * n
    );
    let weights = bin(&[(&rng.vec(k * n), true), (&rng.vec(n), false)]);
    let ins = [Input::new(&mut rng, "a", 1, [k, 1, 1, 1])];
    let want = run_net(&param, &weights, &ins, "out", RunOptions::fp32(), None)
        .unwrap()
        .to_values();
    let packed = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    for ctx in gpu_contexts() {
        assert!(ctx.set_timing(true), "{}", ctx.describe());
        let got = run_net(&param, &weights, &ins, "out", packed, Some(ctx.clone())).unwrap();
        let what = ctx.describe();
        assert_close(&got.to_values(), &want, 1e-5, &what);
        let shaders: Vec<String> = ctx.take_timings().into_iter().map(|t| t.shader).collect();
        assert!(
            shaders.last().is_some_and(|s| s == "softmax_pack4")
                && !shaders.iter().any(|s| s == "concat_flat"),
            "{what}: ran {shaders:?}"
        );
        ctx.set_timing(false);
    }
}
