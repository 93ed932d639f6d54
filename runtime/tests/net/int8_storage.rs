//! int8 storage between int8 layers on the device: a requantizing int8 convolution whose
//! readers (through a Split) are all int8 convolutions quantizing with its output scale writes
//! its levels, a byte each, and they read them as their levels; with any other reader (a
//! pooling) it writes values. Either way the int8 readers' outputs are the CPU's (ncnn's), on
//! every engine of the int8 GEMM (the device's int8 matrices or dot products, the exact
//! shader, naga's path).

use super::suite_int8_gpu::contexts;
use super::*;
use fpshader::StorageFormat;

/// 127 over the largest magnitude of `values`: ncnn's absmax scale.
fn absmax_scale(values: &[f32]) -> f32 {
    127.0 / values.iter().fold(1e-6f32, |m, v| m.max(v.abs()))
}

/// A dense int8 convolution of `c` channels to `outc` with a `k × k` window: its param line's
/// tail and its weights (fp32 kernel, bias, per-output weight scales, the input scale and,
/// requantizing, the output scale).
fn int8_conv(
    rng: &mut Rng,
    (c, outc, k): (usize, usize, usize),
    scales: (f32, Option<f32>),
) -> (String, Vec<u8>) {
    let per = c * k * k;
    let kernel = rng.vec(outc * per);
    let bias: Vec<f32> = rng.vec(outc).iter().map(|v| v * 0.5).collect();
    let weight_scales: Vec<f32> = kernel.chunks(per).map(absmax_scale).collect();
    let mut tail = vec![scales.0];
    tail.extend(scales.1);
    let weights = bin(&[
        (&kernel, true),
        (&bias, false),
        (&weight_scales, false),
        (&tail, false),
    ]);
    let term = if scales.1.is_some() { 101 } else { 1 };
    let pad = k / 2;
    let params = format!("0={outc} 1={k} 4={pad} 5=1 6={} 8={term} 9=1", outc * per);
    (params, weights)
}

/// Input → int8 convolution `a` (requantizing) → Split → int8 convolution `b`, and `c` (an
/// int8 convolution, or with `pooling` a max pooling): the param, the weights, the input.
fn net(rng: &mut Rng, pooling: bool) -> (String, Vec<u8>, Input) {
    let x = Input::new(rng, "x", 3, [13, 11, 1, 8]);
    let x_scale = absmax_scale(&x.values);
    // the requantized blob's scale: a few levels saturate, as real ones do
    let y_scale = 9.5;
    let (a, mut weights) = int8_conv(rng, (8, 16, 3), (x_scale, Some(y_scale)));
    let (b, wb) = int8_conv(rng, (16, 12, 1), (y_scale, None));
    let (c, wc) = int8_conv(rng, (16, 8, 3), (y_scale, None));
    weights.extend(wb);
    let c = match pooling {
        true => "Pooling c 1 1 y1 w 0=0 1=2 2=2".to_string(),
        false => {
            weights.extend(wc);
            format!("Convolution c 1 1 y1 w {c}")
        }
    };
    let param = format!(
        "7767517\n5 6\nInput in 0 1 x\nConvolution a 1 1 x y {a}\nSplit sp 1 2 y y0 y1\n\
         Convolution b 1 1 y0 z {b}\n{c}\n"
    );
    (param, weights, x)
}

/// Both nets on every int8 engine, fp32 and fp16: the outputs against the CPU's int8 ones,
/// and the requantized blob in int8 storage exactly where every reader is an int8 GEMM.
#[test]
fn int8_layers_pass_int8_storage_where_every_reader_takes_it() {
    let mut rng = Rng(907);
    for pooling in [false, true] {
        let (param, weights, x) = net(&mut rng, pooling);
        let int8 = RunOptions {
            use_int8_inference: true,
            use_packing_layout: true,
            ..RunOptions::fp32()
        };
        let cpu = |out: &str| {
            run_net(&param, &weights, std::slice::from_ref(&x), out, int8, None)
                .unwrap_or_else(|e| panic!("CPU: {}", e.report()))
                .to_values()
        };
        // a pooling of a requantized blob is no graph ncnn's converter writes: the CPU pools
        // the levels (ncnn's int8 → fp32 cast), a GPU net its values; only `z` is compared
        let mut want = vec![("z", cpu("z"))];
        if !pooling {
            want.push(("w", cpu("w")));
        }
        let fp16 = RunOptions {
            use_fp16_packed: true,
            use_fp16_storage: true,
            ..int8
        };
        for ctx in contexts() {
            for (name, opt) in [("fp32", int8), ("fp16", fp16)] {
                let what = format!("pooling {pooling}, {name}, {}", ctx.describe());
                let net = load_net(&param, &weights, opt, Some(ctx.clone()))
                    .unwrap_or_else(|e| panic!("{what}: {}", e.report()));
                for (out, want) in &want {
                    let mut ex = net.create_extractor().unwrap();
                    ex.input("x", x.mat()).unwrap();
                    let got = ex
                        .extract(out)
                        .unwrap_or_else(|e| panic!("{what}: {}", e.report()));
                    assert!(
                        ex.record().stayed_on_gpu(),
                        "{what}: a layer ran on the CPU"
                    );
                    let largest = want.iter().fold(1f32, |m, v| m.max(v.abs()));
                    let eps = if name == "fp16" { 0.3 * largest } else { 1e-3 };
                    assert_close(&got.to_values(), want, eps, &format!("{what}: {out}"));
                }
                // the blob between them, on the device as the readers get it
                let mut ex = net.create_extractor().unwrap();
                ex.input("x", x.mat()).unwrap();
                let y = ex.extract_gpu("y").unwrap();
                let int8_storage = matches!(y.format, StorageFormat::Int8(_));
                assert_eq!(int8_storage, !pooling, "{what}: y is {:?}", y.format);
                // extracted to the host, int8 storage is its values: the CPU's levels over
                // the scale
                let mut ex = net.create_extractor().unwrap();
                ex.input("x", x.mat()).unwrap();
                let host = ex.extract("y").unwrap().to_values();
                let levels = run_net(&param, &weights, std::slice::from_ref(&x), "y", int8, None)
                    .unwrap()
                    .to_values();
                let values: Vec<f32> = levels.iter().map(|l| l / 9.5).collect();
                if name == "fp32" {
                    assert_close(&host, &values, 1.01 / 9.5, &format!("{what}: y"));
                }
            }
        }
    }
}

/// On a device of 1 MiB buffers, a requantizing int8 convolution whose input passes a buffer
/// runs in bands, its int8 storage output put together on the device; the int8 convolution
/// after it, whose output passes a buffer too, reads that blob (in bands where it can, else on
/// the CPU, through its values). The outputs are the CPU's.
#[test]
fn int8_storage_survives_bands_of_rows() {
    let Some(ctx) = super::limits::small_device(65535, 1 << 20, None) else {
        return;
    };
    let mut rng = Rng(911);
    // 200 × 200 × 8 fp32 input: 1.28 MB; the 16-channel int8 output 640 KB
    let x = Input::new(&mut rng, "x", 3, [200, 200, 1, 8]);
    let x_scale = absmax_scale(&x.values);
    let (a, mut weights) = int8_conv(&mut rng, (8, 16, 3), (x_scale, Some(9.5)));
    let (b, wb) = int8_conv(&mut rng, (16, 8, 1), (9.5, None));
    weights.extend(wb);
    let param = format!(
        "7767517\n3 3\nInput in 0 1 x\nConvolution a 1 1 x y {a}\nConvolution b 1 1 y z {b}\n"
    );
    let opt = RunOptions {
        use_int8_inference: true,
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    let inputs = std::slice::from_ref(&x);
    let want = run_net(&param, &weights, inputs, "z", opt, None).unwrap();
    let (got, record) = run_net_recorded(&param, &weights, inputs, "z", opt, Some(ctx.clone()))
        .unwrap_or_else(|e| panic!("{}", e.report()));
    let banded = record.banded_layers();
    assert!(
        banded.contains(&1),
        "the first convolution: {:?}",
        record.layers
    );
    assert_close(&got.to_values(), &want.to_values(), 1e-3, "int8 in bands");
}
