//! Every layer on the GPU (both shader paths, every option tuple) against ncnn and the CPU.

use super::*;

/// Pooling on the GPU (buffer nets; image nets pool on the CPU): max and average, kernels,
/// strides, explicit pads with and without counting them, every pad mode, global and adaptive,
/// channel counts for pack1, pack4 and pack8.
#[test]
fn pooling_runs_on_the_gpu_in_every_mode() {
    let mut rng = Rng(59);
    for params in [
        "0=0 1=2 2=2",
        "0=1 1=3 2=2 3=1",
        "0=1 1=3 2=1 3=1 6=1",
        "0=0 1=3 11=2 2=2 12=1 3=1 13=0 14=2 15=1",
        "0=1 1=3 2=2 5=0",
        "0=1 1=3 2=2 5=1 3=1",
        "0=0 1=3 2=2 5=2",
        "0=1 1=3 2=2 5=3",
        "0=1 1=2 2=2 5=2",
        "0=0 4=1",
        "0=1 4=1",
        "0=0 7=1 8=3 18=2",
        "0=1 7=1 8=4",
    ] {
        for c in [3, 8, 16] {
            let x = Input::new(&mut rng, "data", 3, [9, 7, 1, c]);
            let param = one_layer("Pooling", &["data"], params);
            check_gpu_with(
                &format!("Pooling {params} c={c}"),
                &param,
                &[],
                &[x],
                &["Pooling"],
                true,
            );
        }
    }
}

/// Eltwise on the GPU (buffer nets): product, sum with and without coefficients, max, over
/// two and three inputs, channel counts for pack1, pack4 and pack8.
#[test]
fn eltwise_runs_on_the_gpu() {
    let mut rng = Rng(61);
    for (n, params) in [
        (2, "0=0"),
        (2, "0=1"),
        (3, "0=1 -23301=3,0.5,-2,1.5"),
        (2, "0=1 -23301=2,-1,0.25"),
        (3, "0=2"),
        (3, "0=0"),
    ] {
        for c in [3, 8, 16] {
            let names = ["a", "b", "c"];
            let ins: Vec<Input> = names[..n]
                .iter()
                .map(|&name| Input::new(&mut rng, name, 3, [7, 5, 1, c]))
                .collect();
            let mut param = format!("7767517\n{} {}\n", n + 1, n + 1);
            for name in &names[..n] {
                param += &format!("Input {name}_in 0 1 {name}\n");
            }
            param += &format!("Eltwise e {n} 1 {} out {params}\n", names[..n].join(" "));
            check_gpu_with(
                &format!("Eltwise {params} n={n} c={c}"),
                &param,
                &[],
                &ins,
                &["Eltwise"],
                true,
            );
        }
    }
}

/// Concat on the GPU (buffer nets): 1-, 2- and 3-D blobs along every axis (negative ones too),
/// inputs that pack alike (pack4, pack8) and inputs that do not (back to pack1).
#[test]
fn concat_runs_on_the_gpu_on_every_axis() {
    let mut rng = Rng(63);
    // (dims, axis, the two inputs' shapes)
    let cases: [(u8, i32, [[usize; 4]; 2]); 10] = [
        (1, 0, [[8, 1, 1, 1], [12, 1, 1, 1]]),
        (1, 0, [[5, 1, 1, 1], [8, 1, 1, 1]]),
        (2, 0, [[6, 8, 1, 1], [6, 16, 1, 1]]),
        (2, 1, [[5, 8, 1, 1], [7, 8, 1, 1]]),
        (2, -1, [[5, 3, 1, 1], [2, 3, 1, 1]]),
        (3, 0, [[5, 4, 1, 8], [5, 4, 1, 16]]),
        (3, 0, [[5, 4, 1, 3], [5, 4, 1, 8]]),
        (3, 1, [[5, 4, 1, 8], [5, 6, 1, 8]]),
        (3, 2, [[5, 4, 1, 16], [3, 4, 1, 16]]),
        (3, -3, [[5, 4, 1, 16], [5, 4, 1, 16]]),
    ];
    for (dims, axis, [sa, sb]) in cases {
        let ins = [
            Input::new(&mut rng, "a", dims, sa),
            Input::new(&mut rng, "b", dims, sb),
        ];
        let param = format!(
            "7767517\n3 3\nInput a_in 0 1 a\nInput b_in 0 1 b\nConcat cat 2 1 a b out 0={axis}\n"
        );
        check_gpu_with(
            &format!("Concat {dims}-D axis {axis} {sa:?} {sb:?}"),
            &param,
            &[],
            &ins,
            &["Concat"],
            true,
        );
    }
}

/// Softmax on the GPU (buffer nets): every axis of 1-, 2- and 3-D blobs, the packed one
/// included, rows shorter and longer than the shader keeps in registers, channels for pack1,
/// pack4, pack8.
#[test]
fn softmax_runs_on_the_gpu_along_every_axis() {
    let mut rng = Rng(67);
    let mut cases: Vec<(u8, [usize; 4], i32)> = vec![
        (1, [200, 1, 1, 1], 0),
        (1, [7, 1, 1, 1], -1),
        // a classifier's line, one workgroup on it; longer than it keeps in registers
        (1, [1000, 1, 1, 1], 0),
        (1, [9000, 1, 1, 1], 0),
        (3, [1, 1, 1, 24], 0),
        (2, [150, 8, 1, 1], 0),
        (2, [150, 8, 1, 1], 1),
        // longer than the rows the shader keeps in registers
        (2, [2100, 3, 1, 1], 1),
        (2, [5, 3, 1, 1], -1),
    ];
    for c in [3, 8, 16] {
        for axis in [0, 1, 2, -1] {
            cases.push((3, [70, 5, 1, c], axis));
        }
    }
    for (dims, shape, axis) in cases {
        // values far apart, so that exp overflows unless the line's true maximum comes off
        let mut x = Input::new(&mut rng, "data", dims, shape);
        x.values.iter_mut().for_each(|v| *v *= 60.0);
        check_gpu_with(
            &format!("Softmax {dims}-D {shape:?} axis {axis}"),
            &one_layer("Softmax", &["data"], &format!("0={axis} 1=1")),
            &[],
            &[x],
            &["Softmax"],
            true,
        );
    }
}

/// BatchNorm and Scale on the GPU (buffer nets), in place over the channel axis of 1-, 2- and
/// 3-D blobs; channels for pack1, pack4 and pack8; Scale with and without bias.
#[test]
fn batchnorm_and_scale_run_on_the_gpu() {
    let mut rng = Rng(71);
    for (dims, c) in [(3, 3), (3, 8), (3, 16), (2, 8), (1, 12)] {
        let shape = match dims {
            1 => [c, 1, 1, 1],
            2 => [9, c, 1, 1],
            _ => [9, 5, 1, c],
        };
        let (slope, mean, bias) = (rng.vec(c), rng.vec(c), rng.vec(c));
        let var: Vec<f32> = rng.vec(c).iter().map(|v| v.abs() + 0.1).collect();
        let weights = bin(&[
            (&slope, false),
            (&mean, false),
            (&var, false),
            (&bias, false),
        ]);
        check_gpu_with(
            &format!("BatchNorm {dims}-D c={c}"),
            &one_layer("BatchNorm", &["data"], &format!("0={c} 1=0.001")),
            &weights,
            &[Input::new(&mut rng, "data", dims, shape)],
            &["BatchNorm"],
            true,
        );
        for bias_term in [0, 1] {
            let (scale, sbias) = (rng.vec(c), rng.vec(c));
            let parts: Vec<(&[f32], bool)> = if bias_term == 1 {
                vec![(&scale, false), (&sbias, false)]
            } else {
                vec![(&scale, false)]
            };
            check_gpu_with(
                &format!("Scale {dims}-D c={c} bias {bias_term}"),
                &one_layer("Scale", &["data"], &format!("0={c} 1={bias_term}")),
                &bin(&parts),
                &[Input::new(&mut rng, "data", dims, shape)],
                &["Scale"],
                true,
            );
        }
    }
}

/// The copy layers on the GPU (buffer nets), in the cases their ncnn tests use: Flatten and
/// Reshape (sharing the buffer where both layouts have no gaps, gathering where they do),
/// Slice, Crop, Permute in every order, ShuffleChannel and Padding in every mode.
#[test]
fn copy_layers_run_on_the_gpu() {
    let mut rng = Rng(73);
    let one = |kind: &str, dims: u8, shape: [usize; 4], params: &str, rng: &mut Rng| {
        let x = Input::new(rng, "data", dims, shape);
        check_gpu_with(
            &format!("{kind} {dims}-D {shape:?} {params}"),
            &one_layer(kind, &["data"], params),
            &[],
            &[x],
            &[kind],
            true,
        );
    };
    for (kind, dims, shape, params) in [
        ("Flatten", 3, [5, 4, 1, 6], ""),
        ("Flatten", 3, [4, 4, 1, 6], ""),
        ("Flatten", 2, [5, 3, 1, 1], ""),
        ("Reshape", 3, [5, 4, 1, 6], "0=12 1=10"),
        ("Reshape", 3, [5, 4, 1, 6], "0=-1 1=5 2=2"),
        ("Reshape", 3, [4, 4, 1, 6], "0=8 1=2 2=6"),
        ("Reshape", 3, [5, 4, 1, 6], "0=120"),
        ("Reshape", 1, [24, 1, 1, 1], "0=3 1=2 2=4"),
        ("Reshape", 2, [6, 4, 1, 1], "0=4 1=6"),
    ] {
        one(kind, dims, shape, params, &mut rng);
    }
    for (dims, shape, params) in [
        (3, [7, 6, 1, 5], "0=1 1=2 2=1 3=4 4=3 5=2"),
        (3, [7, 6, 1, 5], "0=1 1=1 6=2 7=1 3=-233 4=-233 5=-233"),
        (
            3,
            [7, 6, 1, 5],
            "-23309=2,1,-3 -23310=2,-233,5 -23311=2,0,2",
        ),
        (3, [7, 6, 1, 5], "-23309=3,1,2,0 -23310=3,-1,5,-2"),
        (2, [7, 6, 1, 1], "0=2 1=1 3=3 4=4"),
        (1, [9, 1, 1, 1], "0=2 3=5"),
    ] {
        one("Crop", dims, shape, params, &mut rng);
    }
    for (dims, shape, n) in [(2, [5, 3, 1, 1], 2), (3, [5, 4, 1, 3], 6)] {
        for o in 0..n {
            one("Permute", dims, shape, &format!("0={o}"), &mut rng);
        }
    }
    for params in ["0=2", "0=3", "0=2 1=1", "0=4 1=1"] {
        one("ShuffleChannel", 3, [5, 4, 1, 12], params, &mut rng);
    }
    for (dims, shape, params) in [
        (3, [5, 4, 1, 3], "0=1 1=2 2=3 3=1 4=0 5=0.5"),
        (3, [5, 4, 1, 3], "0=1 1=2 2=3 3=1 4=1"),
        (3, [5, 4, 1, 3], "0=1 1=2 2=3 3=1 4=2"),
        (3, [5, 4, 1, 8], "0=1 2=1 7=1 8=2 5=-1"),
        (2, [5, 4, 1, 1], "0=2 1=1 2=1 3=2 4=2"),
        (1, [6, 1, 1, 1], "2=2 3=3 4=1"),
    ] {
        one("Padding", dims, shape, params, &mut rng);
    }
    for (dims, shape, params) in [
        (3, [7, 6, 1, 9], "-23300=3,2,-233,-233 1=0"),
        (3, [7, 6, 1, 9], "-23302=2,1,4 1=1"),
        (3, [7, 6, 1, 9], "-23300=3,3,-233,2 1=-1"),
        (2, [8, 5, 1, 1], "-23300=3,-233,-233,-233 1=1"),
        (1, [10, 1, 1, 1], "-23302=2,3,-2"),
    ] {
        let x = Input::new(&mut rng, "data", dims, shape);
        let param = format!(
            "7767517\n2 4\nInput data_in 0 1 data\nSlice slice 1 3 data out0 out1 out2 {params}\n"
        );
        check_gpu_outputs(
            &format!("Slice {dims}-D {params}"),
            &param,
            &[],
            &[x],
            &["Slice"],
            true,
            &["out0", "out1", "out2"],
        );
    }
    let ins = [
        Input::new(&mut rng, "a", 3, [7, 6, 1, 5]),
        Input::new(&mut rng, "b", 3, [4, 3, 1, 2]),
    ];
    check_gpu_with(
        "Crop to a reference",
        &one_layer("Crop", &["a", "b"], "0=1 1=2 2=1"),
        &[],
        &ins,
        &["Crop"],
        true,
    );
}

/// Cast (rounding to fp16 and bf16) and Packing on the GPU between GPU layers, in every
/// option tuple (image nets too: Cast is elementwise; Packing is buffers only).
#[test]
fn cast_and_packing_run_on_the_gpu() {
    let mut rng = Rng(79);
    for (to, code) in [("fp16", 2), ("bf16", 4)] {
        let x = Input::new(&mut rng, "data", 3, [7, 5, 1, 8]);
        let param = format!(
            "7767517\n4 4\nInput data_in 0 1 data\nReLU r 1 1 data a\nCast narrow 1 1 a h 0=1 1={code}\nCast widen 1 1 h out 0={code} 1=1\n"
        );
        check_gpu(
            &format!("Cast fp32 → {to} → fp32"),
            &param,
            &[],
            &[x],
            &["Cast"],
        );
    }
    for (from, to) in [(1, 4), (4, 8), (8, 1), (4, 1)] {
        let x = Input::new(&mut rng, "data", 3, [7, 5, 1, 16]);
        let param = format!(
            "7767517\n4 4\nInput data_in 0 1 data\nPacking p 1 1 data a 0={from}\nPacking q 1 1 a b 0={to}\nSigmoid s 1 1 b out\n"
        );
        check_gpu_with(
            &format!("Packing {from} → {to}"),
            &param,
            &[],
            &[x],
            &["Packing"],
            true,
        );
    }
}

#[test]
fn every_activation_runs_on_the_gpu_in_every_option_tuple() {
    let mut rng = Rng(53);
    for (kind, params) in [
        ("ReLU", ""),
        ("ReLU", "0=0.2"),
        ("Sigmoid", ""),
        ("TanH", ""),
        ("Clip", "0=-0.3 1=0.4"),
        ("Swish", ""),
        ("HardSwish", "0=0.25 1=0.4"),
        ("HardSigmoid", ""),
        ("GELU", ""),
        ("GELU", "0=1"),
        ("Dropout", "0=0.5"),
        ("Noop", ""),
    ] {
        for c in [16, 3] {
            let x = Input::new(&mut rng, "data", 3, [7, 5, 1, c]);
            let param = one_layer(kind, &["data"], params);
            check_gpu(
                &format!("{kind} {params} c={c}"),
                &param,
                &[],
                &[x],
                &[kind],
            );
        }
    }
}

#[test]
fn binaryop_runs_on_the_gpu_for_every_op_and_broadcast() {
    let mut rng = Rng(59);
    let positive = |mut i: Input| {
        i.values.iter_mut().for_each(|v| *v = v.abs() + 0.1);
        i
    };
    // 12 to 18 jump where x / y is whole, which fp16 storage moves: the suite checks them
    for op in 0..=11 {
        for c in [16, 3] {
            let ins = vec![
                positive(Input::new(&mut rng, "a", 3, [7, 5, 1, c])),
                positive(Input::new(&mut rng, "b", 3, [7, 5, 1, c])),
            ];
            let param = one_layer("BinaryOp", &["a", "b"], &format!("0={op}"));
            check_gpu(
                &format!("BinaryOp {op} c={c}"),
                &param,
                &[],
                &ins,
                &["BinaryOp"],
            );
            let a = positive(Input::new(&mut rng, "a", 3, [7, 5, 1, c]));
            let param = one_layer("BinaryOp", &["a"], &format!("0={op} 1=1 2=0.7"));
            check_gpu(
                &format!("BinaryOp {op} scalar c={c}"),
                &param,
                &[],
                &[a],
                &["BinaryOp"],
            );
        }
    }
    // broadcasts: per channel (either side), along w, along h, 2-D, and one the GPU declines
    for (a, b) in [
        ((3, [7, 5, 1, 16]), (1, [16, 1, 1, 1])),
        ((1, [16, 1, 1, 1]), (3, [7, 5, 1, 16])),
        ((3, [7, 5, 1, 16]), (3, [1, 5, 1, 16])),
        ((3, [7, 1, 1, 8]), (3, [7, 5, 1, 8])),
        ((2, [7, 12, 1, 1]), (2, [7, 12, 1, 1])),
        ((2, [7, 12, 1, 1]), (1, [12, 1, 1, 1])),
        ((3, [7, 5, 1, 16]), (3, [7, 5, 1, 1])),
    ] {
        let ins = vec![
            Input::new(&mut rng, "a", a.0, a.1),
            Input::new(&mut rng, "b", b.0, b.1),
        ];
        let param = one_layer("BinaryOp", &["a", "b"], "0=2");
        check_gpu(
            &format!("BinaryOp {a:?} * {b:?}"),
            &param,
            &[],
            &ins,
            &["BinaryOp"],
        );
    }
}

#[test]
fn innerproduct_runs_on_the_gpu_for_flat_inputs_with_every_activation() {
    let mut rng = Rng(61);
    for activation in 0..=6 {
        // inputs that are not a multiple of 4 (squeeze-excitation's) take the 1×1 convolution
        for (num_input, num_output, bias) in [(64, 10, 1), (32, 7, 0), (6, 144, 1), (10, 5, 0)] {
            let w = rng.vec(num_input * num_output);
            let b = rng.vec(num_output);
            let params = format!(
                "0={num_output} 1={bias} 2={} 9={activation} -23310=2,0.1,0.6",
                w.len()
            );
            let weights = if bias == 1 {
                bin(&[(&w, true), (&b, false)])
            } else {
                bin(&[(&w, true)])
            };
            // 1-D, and 3-D of 1×1 per channel (after a non-global pooling to 1×1)
            let x = if num_input % 20 == 4 || num_input == 6 {
                Input::new(&mut rng, "data", 1, [num_input, 1, 1, 1])
            } else {
                Input::new(&mut rng, "data", 3, [1, 1, 1, num_input])
            };
            check_gpu_with(
                &format!("InnerProduct {params}"),
                &one_layer("InnerProduct", &["data"], &params),
                &weights,
                &[x],
                &["InnerProduct"],
                true,
            );
        }
    }
    // 3-D inputs (vgg's and alexnet's first fully connected layers) are flattened on the GPU,
    // channel blocks of 4 and 8 and a ragged channel count
    for c in [8, 16, 5] {
        let w = rng.vec(4 * 3 * c * 5);
        let param = one_layer(
            "InnerProduct",
            &["data"],
            &format!("0=5 1=1 2={} 9=1", w.len()),
        );
        let x = Input::new(&mut rng, "data", 3, [4, 3, 1, c]);
        let b = rng.vec(5);
        check_gpu_with(
            "InnerProduct of a 3-D blob",
            &param,
            &bin(&[(&w, true), (&b, false)]),
            &[x],
            &["InnerProduct"],
            true,
        );
    }
}

/// Cast on the GPU rounds to fp16 and bf16 exactly as the host cast does (fp32 nets, where
/// nothing else rounds).
#[test]
fn cast_rounds_on_the_gpu_exactly_as_on_the_cpu() {
    let mut rng = Rng(89);
    let mut x = Input::new(&mut rng, "data", 1, [64, 1, 1, 1]);
    x.values.iter_mut().for_each(|v| *v *= 300.0);
    // fp16's edges: ties to even, the largest finite value and past it, subnormals, zero
    let edges = [
        2049.0, 2051.0, 65519.0, 65520.0, -1e5, 1e-7, -3e-6, 6.1e-5, 0.0, -0.0,
    ];
    x.values[..edges.len()].copy_from_slice(&edges);
    for code in [2, 4] {
        let param = format!(
            "7767517\n2 2\nInput data_in 0 1 data\nCast narrow 1 1 data out 0=1 1={code}\n"
        );
        let input = std::slice::from_ref(&x);
        let cpu = run_net(&param, &[], input, "out", RunOptions::fp32(), None).unwrap();
        assert_ne!(cpu.to_values(), x.values, "type {code} rounds on the CPU");
        for ctx in gpu_contexts() {
            let gpu = run_net(
                &param,
                &[],
                input,
                "out",
                RunOptions::fp32(),
                Some(ctx.clone()),
            );
            assert_eq!(
                gpu.unwrap().to_values(),
                cpu.to_values(),
                "type {code}, {}",
                ctx.describe()
            );
        }
    }
}
