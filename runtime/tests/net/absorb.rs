//! Channel shuffles absorbed into the convolution before them on the device (shufflenet's
//! blocks: a grouped 1×1 convolution, then ShuffleChannel): the convolution writes the
//! shuffled channels and no gather runs, with the CPU's outputs (where nothing is absorbed);
//! the blob between them, asked for, is the convolution's own output (the shuffle's inverse
//! runs); a second `load_model` (other weights) reads the parameters' form again, and on the
//! CPU drops the layouts made of the first weights.

use super::*;

/// Input `x` (24 channels of 9 × 7) → a 1×1 convolution of group `group` to 12 with a ReLU
/// (`y`) → ShuffleChannel of group 3 (`s`, reversed or not) → a depthwise 3×3 (`z`).
fn param(group: usize, reverse: u8) -> String {
    let kind = match group {
        1 => "Convolution",
        _ => "ConvolutionDepthWise",
    };
    let n = 12 * 24 / group;
    format!(
        "7767517\n4 4\nInput in 0 1 x\n\
         {kind} conv 1 1 x y 0=12 1=1 5=1 6={n} 7={group} 9=1\n\
         ShuffleChannel shuffle 1 1 y s 0=3 1={reverse}\n\
         ConvolutionDepthWise dw 1 1 s z 0=12 1=3 4=1 5=1 6=108 7=12\n"
    )
}

/// Random weights for [`param`] of `group`.
fn weights(rng: &mut Rng, group: usize) -> Vec<u8> {
    let n = 12 * 24 / group;
    bin(&[
        (&rng.vec(n), true),
        (&rng.vec(12), false),
        (&rng.vec(108), true),
        (&rng.vec(12), false),
    ])
}

/// Whether `shaders` has a channel gather (the shuffle's pass).
fn gathered(shaders: &[String]) -> bool {
    shaders.iter().any(|s| s.contains("gather"))
}

#[test]
fn shuffles_after_convolutions_run_in_their_weights() {
    let mut rng = Rng(6907);
    let classes = [
        ("fp32", RunOptions::fp32(), 1e-4),
        ("fp16", RunOptions::default(), 2e-2),
    ];
    for ctx in gpu_contexts() {
        ctx.set_timing(true);
        for (group, reverse) in [(3, 0), (3, 1), (2, 0), (1, 1)] {
            let param = param(group, reverse);
            let weights = weights(&mut rng, group);
            let x = [Input::new(&mut rng, "x", 3, [9, 7, 1, 24])];
            for (name, opt, eps) in classes {
                for out in ["z", "s", "y"] {
                    let what = format!(
                        "group {group}, reverse {reverse}, {name}, {out}, {}",
                        ctx.describe()
                    );
                    let want = run_net(&param, &weights, &x, out, opt, None).unwrap();
                    ctx.take_timings();
                    let got = run_net(&param, &weights, &x, out, opt, Some(ctx.clone()))
                        .unwrap_or_else(|e| panic!("{what}: {}", e.report()));
                    assert_close(&got.to_values(), &want.to_values(), eps, &what);
                    let shaders: Vec<String> =
                        ctx.take_timings().into_iter().map(|t| t.shader).collect();
                    // only the convolution's own output takes the shuffle's inverse
                    assert_eq!(gathered(&shaders), out == "y", "{what}: {shaders:?}");
                }
            }
        }
    }
}

#[test]
fn a_second_load_model_reads_the_parameters_form() {
    let mut rng = Rng(6911);
    let param = param(3, 0);
    let (first, second) = (weights(&mut rng, 3), weights(&mut rng, 3));
    let x = [Input::new(&mut rng, "x", 3, [9, 7, 1, 24])];
    let opt = RunOptions::fp32();
    let run = |net: &fpshader::net::Net, out: &str| {
        let mut ex = net.create_extractor().unwrap();
        ex.input("x", x[0].mat()).unwrap();
        ex.extract(out).unwrap()
    };
    // the CPU too: a forward before the reload makes its layouts of the first weights
    let devices = gpu_contexts().into_iter().map(Some).chain([None]);
    for ctx in devices {
        let mut net = load_net(&param, &first, opt, ctx.clone()).unwrap();
        run(&net, "z");
        net.load_model_bytes(&second).unwrap();
        for out in ["z", "y"] {
            let want = run_net(&param, &second, &x, out, opt, None).unwrap();
            let got = run(&net, out);
            let on = ctx
                .as_ref()
                .map_or_else(|| "the CPU".to_string(), |c| c.describe());
            let what = format!("reloaded, {out}, {on}");
            assert_close(&got.to_values(), &want.to_values(), 1e-4, &what);
        }
    }
}
