//! Malformed models and misuse: typed errors, never a panic.

use super::*;

#[test]
fn malformed_models_and_misuse_are_typed_errors() {
    let mut net = Net::new();
    for (text, needle) in [
        ("", "magic"),
        ("7767518\n1 1\n", "magic"),
        ("7767517\n1\n", "layer_count"),
        ("7767517\n2 2\nInput data 0 1 data\n", "declares 2 layers"),
        ("7767517\n1 1\nNoSuchLayer x 0 1 y\n", "unknown layer type"),
        (
            "7767517\n1 1\nReLU r 1 1 nowhere out\n",
            "before any layer writes it",
        ),
        ("7767517\n1 1\nReLU r 0 1 out 0=1bc\n", "bad integer"),
        (
            "7767517\n1 1\nReLU r 0 1 out -23300=3,1,2\n",
            "declares 3 values",
        ),
    ] {
        let e = net.load_param_str("bad.param", text).unwrap_err();
        assert!(e.to_string().contains(needle), "{text:?}: {e}");
    }
    // weights too short for the declared InnerProduct
    let param = "7767517\n2 2\nInput data 0 1 data\nInnerProduct fc 1 1 data out 0=4 1=1 2=32\n";
    net.load_param_str("fc", param).unwrap();
    let e = net
        .load_model_bytes(&bin(&[(&[0.0; 31], true)]))
        .unwrap_err();
    assert!(
        matches!(e, Error::Model(ModelError::Weights { ref layer, .. }) if layer == "fc"),
        "{e}"
    );
    for cut in 0..140 {
        let full = bin(&[(&[0.5; 32], true), (&[0.0; 4], false)]);
        let r = net.load_model_bytes(&full[..cut.min(full.len())]);
        assert_eq!(r.is_ok(), cut >= full.len(), "cut {cut}");
    }
    // an input no one fed (an empty mat, as in ncnn: the layer reading it refuses it), unknown
    // blob, wrong input shape
    net.load_model_bytes(&bin(&[(&[0.5; 32], true), (&[0.0; 4], false)]))
        .unwrap();
    let mut ex = net.create_extractor().unwrap();
    let e = ex.extract("out").unwrap_err();
    assert!(
        matches!(e, Error::Layer { ref layer, .. } if layer == "fc"),
        "{e}"
    );
    assert!(matches!(ex.extract("nope"), Err(Error::Blob(_))));
    ex.input("data", Mat::new_3d(3, 3, 1, 1).unwrap()).unwrap();
    let e = ex.extract("out").unwrap_err();
    assert!(
        matches!(e, Error::Layer { ref layer, .. } if layer == "fc"),
        "{e}"
    );
    let _ = ParamDict::new();
}

/// An empty blob (a key/value cache before its first step) goes through a GPU net's upload and
/// fp16 cast without a panic: the net's answer, a result or a typed error, is the CPU's.
#[test]
fn an_empty_input_on_the_gpu_is_not_a_panic() {
    let param = one_layer("ReLU", &["data"], "");
    let input = Input {
        name: "data",
        dims: 3,
        shape: [4, 0, 1, 3],
        values: Vec::new(),
        int: false,
    };
    let input = std::slice::from_ref(&input);
    let cpu = run_net(&param, &[], input, "out", RunOptions::fp32(), None);
    for ctx in gpu_contexts() {
        for opt in [RunOptions::fp32(), RunOptions::default()] {
            let got = run_net(&param, &[], input, "out", opt, Some(ctx.clone()));
            assert_eq!(
                got.as_ref()
                    .map(|m| m.to_values())
                    .map_err(|e| e.to_string()),
                cpu.as_ref()
                    .map(|m| m.to_values())
                    .map_err(|e| e.to_string()),
                "{opt:?}, {}",
                ctx.describe()
            );
        }
    }
}
