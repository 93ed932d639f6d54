//! Whole models: the binary `.param` against the text one, and a branching net.

use super::*;

/// `text` as ncnn2mem writes it to `.param.bin`: type indices, blob indices by first
/// appearance, raw words; with the index of each blob name.
fn to_param_bin(text: &str) -> (Vec<u8>, std::collections::HashMap<String, usize>) {
    use fpshader::net::param::LAYER_TYPE_INDEX;
    let mut lines = text.lines().skip(2).filter(|l| !l.trim().is_empty());
    let mut blobs = std::collections::HashMap::new();
    let mut body = Vec::new();
    let word = |out: &mut Vec<u8>, w: i32| out.extend(w.to_le_bytes());
    let value = |t: &str| -> i32 {
        if t.contains(['.', 'e']) {
            t.parse::<f32>().unwrap().to_bits() as i32
        } else {
            t.parse().unwrap()
        }
    };
    let mut layer_count = 0;
    for line in lines.by_ref() {
        layer_count += 1;
        let t: Vec<&str> = line.split_whitespace().collect();
        let kind = LAYER_TYPE_INDEX.iter().position(|k| *k == t[0]).unwrap();
        let (nb, nt): (usize, usize) = (t[2].parse().unwrap(), t[3].parse().unwrap());
        word(&mut body, kind as i32);
        word(&mut body, nb as i32);
        word(&mut body, nt as i32);
        for name in &t[4..4 + nb + nt] {
            let n = blobs.len();
            let id = *blobs.entry(name.to_string()).or_insert(n);
            word(&mut body, id as i32);
        }
        for kv in &t[4 + nb + nt..] {
            let (k, v) = kv.split_once('=').unwrap();
            let k: i32 = k.parse().unwrap();
            word(&mut body, k);
            if k <= -23300 {
                let items: Vec<&str> = v.split(',').collect();
                for item in items {
                    word(&mut body, value(item));
                }
            } else {
                word(&mut body, value(v));
            }
        }
        word(&mut body, -233);
    }
    let mut out = Vec::new();
    word(&mut out, 7767517);
    word(&mut out, layer_count);
    word(&mut out, blobs.len() as i32);
    out.extend(body);
    (out, blobs)
}

#[test]
fn param_bin_runs_like_the_text_param_in_ncnn_and_fpshader() {
    let mut rng = Rng(43);
    let param = BRANCHY.replace("0=4\n", "0=8\n");
    let mem = rng.vec(8);
    let weights = bin(&[(&mem, false)]);
    let x = Input::new(&mut rng, "data", 3, [6, 5, 1, 8]);
    let (param_bin, index) = to_param_bin(&param);
    let named = |name: &'static str| Input { name, ..x.clone() };
    let want = run_net(
        &param,
        &weights,
        &[named("data")],
        "out",
        RunOptions::fp32(),
        None,
    )
    .unwrap();
    let data = index["data"].to_string().leak();
    let out = index["out"].to_string();
    let mut net = Net::new();
    net.opt = RunOptions::fp32();
    net.load_param_bin_bytes("branchy.param.bin", &param_bin)
        .unwrap();
    net.load_model_bytes(&weights).unwrap();
    let mut ex = net.create_extractor().unwrap();
    ex.input(data, named("data").mat()).unwrap();
    let got = ex.extract(&out).unwrap();
    assert_eq!(got.to_values(), want.to_values());
    if let Some(oracle) = ncnn_with(("m.param.bin", &param_bin), &weights, &[named(data)], &out) {
        assert_close(&got.to_values(), &oracle, 1e-3, "branchy .param.bin");
    }
    // every truncation is a typed error naming a byte offset
    for cut in 0..param_bin.len() {
        let e = net
            .load_param_bin_bytes("cut.param.bin", &param_bin[..cut])
            .unwrap_err();
        assert!(e.to_string().contains("byte"), "cut {cut}: {e}");
    }
}

#[test]
fn multi_layer_net_with_branches_matches_ncnn() {
    let mut rng = Rng(21);
    let x = Input::new(&mut rng, "data", 3, [6, 5, 1, 4]);
    let mem = rng.vec(4);
    let weights = bin(&[(&mem, false)]);
    for lightmode in [true, false] {
        let opt = RunOptions {
            lightmode,
            ..RunOptions::fp32()
        };
        let got = run_net(
            BRANCHY,
            &weights,
            std::slice::from_ref(&x),
            "out",
            opt,
            None,
        )
        .unwrap();
        if let Some(want) = ncnn(BRANCHY, &weights, std::slice::from_ref(&x), "out") {
            assert_close(
                &got.to_values(),
                &want,
                1e-3,
                &format!("branchy net, light mode {lightmode}"),
            );
        }
    }
}
