//! The seed's flag sentences, one probe layer each: packing, storage, in place, the flag-method contract, feature masks.

use super::*;

/// Records what a layer received, to check the engine keeps each flag's promise.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Seen {
    pub(super) elempack: usize,
    elemtype: Option<ElemType>,
}

struct Probe {
    support: Support,
    implements: Implements,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Layer for Probe {
    fn support(&self) -> Support {
        self.support
    }
    fn implements(&self) -> Implements {
        self.implements
    }
    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> fpshader::Result<Mat> {
        self.seen.lock().unwrap().push(Seen {
            elempack: bottom.elempack,
            elemtype: Some(bottom.elemtype()),
        });
        Ok(bottom.clone())
    }
    fn forward_inplace(&self, blob: &mut Mat, _opt: &RunOptions) -> fpshader::Result<()> {
        self.seen.lock().unwrap().push(Seen {
            elempack: blob.elempack,
            elemtype: Some(blob.elemtype()),
        });
        // a mutation no other reader of the input may see
        *blob = blob.zeros_like();
        Ok(())
    }
}

pub(super) fn probe_net(
    support: Support,
    implements: Implements,
    param: &str,
) -> (Net, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut net = Net::new();
    let s = seen.clone();
    net.register_layer("Probe", move || {
        Box::new(Probe {
            support,
            implements,
            seen: s.clone(),
        })
    });
    net.load_param_str("probe", param).unwrap();
    (net, seen)
}

const PROBE: &str = "7767517\n2 2\nInput data 0 1 data\nProbe p 1 1 data out\n";

pub(super) fn one_blob(inplace: bool) -> (Support, Implements) {
    (
        Support {
            one_blob_only: true,
            inplace,
            ..Support::default()
        },
        Implements {
            forward: !inplace,
            forward_inplace: inplace,
            ..Implements::default()
        },
    )
}

#[test]
fn without_support_packing_a_layer_gets_elempack_1() {
    let (support, implements) = one_blob(false);
    let (mut net, seen) = probe_net(support, implements, PROBE);
    net.load_model_zeros().unwrap();
    let mut ex = net.create_extractor().unwrap();
    ex.input("data", Mat::new_3d(2, 2, 2, 4).unwrap()).unwrap();
    ex.extract("out").unwrap();
    assert_eq!(seen.lock().unwrap()[0].elempack, 1);
}

#[test]
fn with_support_packing_a_layer_gets_the_widest_packing_the_channels_allow() {
    let (mut support, implements) = one_blob(false);
    support.packing = true;
    let eight = fpshader::net::convert::cpu_has_256bit_simd();
    for (channels, want) in [(16, if eight { 8 } else { 4 }), (12, 4), (6, 1)] {
        let (mut net, seen) = probe_net(support, implements, PROBE);
        net.opt = RunOptions::fp32();
        net.opt.use_packing_layout = true;
        net.load_model_zeros().unwrap();
        let mut ex = net.create_extractor().unwrap();
        ex.input("data", Mat::new_3d(3, 2, channels, 1).unwrap())
            .unwrap();
        ex.extract("out").unwrap();
        assert_eq!(
            seen.lock().unwrap()[0].elempack,
            want,
            "{channels} channels"
        );
    }
    // any_packing: the input's packing as it is
    support.any_packing = true;
    let (mut net, seen) = probe_net(support, implements, PROBE);
    net.load_model_zeros().unwrap();
    let mut ex = net.create_extractor().unwrap();
    ex.input("data", Mat::new_3d(3, 2, 4, 4).unwrap()).unwrap();
    ex.extract("out").unwrap();
    assert_eq!(seen.lock().unwrap()[0].elempack, 4);
}

#[test]
fn storage_flags_choose_bf16_over_fp16_and_never_give_16_bit_to_others() {
    let (support, implements) = one_blob(false);
    let fp16_input = Mat::new_3d(2, 2, 1, 1).unwrap().cast(ElemType::F16);
    // fp16 on the CPU only where it computes in fp16 (ARMv8.2), as ncnn's convert_layout
    let fp16 = match fpshader::net::convert::cpu_has_fp16_arithmetic() {
        true => ElemType::F16,
        false => ElemType::F32,
    };
    for (flags, bf16, want) in [
        ((false, false), true, ElemType::F32),
        ((true, true), true, ElemType::Bf16),
        ((true, true), false, fp16),
        ((false, true), true, fp16),
    ] {
        let s = Support {
            bf16_storage: flags.0,
            fp16_storage: flags.1,
            ..support
        };
        let (mut net, seen) = probe_net(s, implements, PROBE);
        net.opt.use_bf16_storage = bf16;
        net.load_model_zeros().unwrap();
        let mut ex = net.create_extractor().unwrap();
        ex.input("data", fp16_input.clone()).unwrap();
        ex.extract("out").unwrap();
        assert_eq!(
            seen.lock().unwrap()[0].elemtype,
            Some(want),
            "{flags:?} bf16 {bf16}"
        );
    }
}

/// In-place GPU layers write a blob nothing else holds without copying it: a ReLU's output
/// through three Softmax layers asks for one buffer (the ReLU's), where a copy per layer would
/// ask for four.
#[test]
fn in_place_gpu_layers_copy_only_what_others_hold() {
    let mut rng = Rng(97);
    let x = Input::new(&mut rng, "data", 3, [64, 8, 1, 4]);
    let param = "7767517\n5 5\nInput data_in 0 1 data\nReLU r 1 1 data a 0=0.1\nSoftmax s0 1 1 a b 0=2\nSoftmax s1 1 1 b c 0=1\nSoftmax s2 1 1 c out 0=0\n";
    for ctx in gpu_contexts() {
        let net = load_net(param, &[], RunOptions::fp32(), Some(ctx.clone())).unwrap();
        let before = ctx.storage_requests();
        let mut ex = net.create_extractor().unwrap();
        ex.input("data", x.mat()).unwrap();
        ex.extract("out").unwrap();
        assert_eq!(ctx.storage_requests() - before, 1, "{}", ctx.describe());
    }
}

#[test]
fn in_place_layers_never_change_what_another_reader_sees() {
    let (support, implements) = one_blob(true);
    let param = "7767517\n3 3\nInput data 0 1 data\nProbe p 1 1 data out\nReLU r 1 1 data other\n";
    for lightmode in [true, false] {
        let (mut net, _) = probe_net(support, implements, param);
        net.opt.lightmode = lightmode;
        net.load_model_zeros().unwrap();
        let mut ex = net.create_extractor().unwrap();
        let x = Mat::from_values(4, 1, 1, &[1.0, 2.0, 3.0, 4.0]).unwrap();
        ex.input("data", x).unwrap();
        assert_eq!(ex.extract("out").unwrap().to_values(), [0.0; 4]);
        assert_eq!(
            ex.extract("other").unwrap().to_values(),
            [1.0, 2.0, 3.0, 4.0],
            "light {lightmode}"
        );
    }
}

#[test]
fn a_flag_without_its_method_is_an_error_at_load_model() {
    let (support, _) = one_blob(true);
    let (mut net, _) = probe_net(
        support,
        Implements {
            forward: true,
            ..Implements::default()
        },
        PROBE,
    );
    let e = net.load_model_zeros().unwrap_err();
    assert!(
        matches!(
            e,
            Error::Model(ModelError::Unimplemented {
                method: "forward_inplace",
                ..
            })
        ),
        "{e}"
    );
    let (support, implements) = one_blob(false);
    let (mut net, _) = probe_net(
        Support {
            vulkan: true,
            ..support
        },
        implements,
        PROBE,
    );
    // without a device nothing runs on the GPU, so the CPU contract is what counts
    net.load_model_zeros().unwrap();
}

#[test]
fn feature_mask_switches_storage_off_for_one_layer() {
    let (mut support, implements) = one_blob(false);
    support.fp16_storage = true;
    let param = "7767517\n2 2\nInput data 0 1 data\nProbe p 1 1 data out 31=2\n";
    let (mut net, seen) = probe_net(support, implements, param);
    net.load_model_zeros().unwrap();
    let mut ex = net.create_extractor().unwrap();
    ex.input("data", Mat::new_3d(2, 2, 1, 1).unwrap()).unwrap();
    ex.extract("out").unwrap();
    assert_eq!(seen.lock().unwrap()[0].elemtype, Some(ElemType::F32));
}
