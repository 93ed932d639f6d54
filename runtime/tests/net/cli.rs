//! The `fpshader` CLI on `.npy` files against ncnn.

use super::*;

/// Writes `values` of numpy `shape` as a float32 `.npy`.
fn write_npy(path: &std::path::Path, shape: &[usize], values: &[f32]) {
    use npyz::WriterBuilder;
    let shape: Vec<u64> = shape.iter().map(|&n| n as u64).collect();
    let mut bytes = Vec::new();
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&shape)
        .writer(&mut bytes)
        .begin_nd()
        .unwrap();
    w.extend(values.iter().copied()).unwrap();
    w.finish().unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// The CLI run of `args` failed with exit status 1 and a message naming `needle`, no panic.
pub(crate) fn assert_refused(run: &std::process::Output, args: &[&str], needle: &str) {
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{args:?}: {err}");
    assert!(
        err.contains(needle) && !err.contains("panicked"),
        "{args:?}: {err}"
    );
}

fn read_npy(path: &std::path::Path) -> (Vec<u64>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap();
    let file = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = file.shape().to_vec();
    (shape, file.into_vec().unwrap())
}

/// `fpshader run` on the branchy model: .npy in, .npy out in numpy's axis order, on the CPU
/// and on the GPU through both paths, against ncnn; bad arguments are messages, not panics.
#[test]
#[cfg_attr(
    fpshader_emulated,
    ignore = "spawns the CLI, an aarch64 binary the emulator does not follow into"
)]
fn cli_runs_a_model_from_npy_files_like_ncnn() {
    let exe = env!("CARGO_BIN_EXE_fpshader");
    let mut rng = Rng(47);
    let param = BRANCHY.replace("0=4\n", "0=8\n");
    let mem = rng.vec(8);
    let weights = bin(&[(&mem, false)]);
    let x = Input::new(&mut rng, "data", 3, [6, 5, 1, 8]);
    let dir = scratch();
    std::fs::write(dir.join("m.param"), &param).unwrap();
    std::fs::write(dir.join("m.bin"), &weights).unwrap();
    write_npy(&dir.join("x.npy"), &x.numpy_shape(), &x.values);
    let want = ncnn(&param, &weights, &[x], "out");
    let mut runs = vec![vec!["--cpu", "--opt", "fp32"], vec!["--cpu"]];
    if std::env::var_os("FPSHADER_SKIP_GPU").is_none() {
        runs.push(vec!["--opt", "fp32", "--path", "passthrough"]);
        runs.push(vec!["--path", "naga"]);
    }
    for extra in runs {
        let out = dir.join("out.npy");
        let _ = std::fs::remove_file(&out);
        let run = std::process::Command::new(exe)
            .current_dir(&dir)
            .args(["run", "m.param", "m.bin", "--input", "data=x.npy"])
            .args(["--output", "out", "-o", "out.npy", "--threads", "2"])
            .args(&extra)
            .env("WGPU_BACKEND", "vulkan")
            // lavapipe, named: an emulated GPU is never the default for a model
            .env("FPSHADER_ADAPTER", "llvmpipe")
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let (shape, got) = read_npy(&out);
        // global pooling leaves a 1-D blob of the 8 channels
        assert_eq!(shape, [8], "{extra:?}");
        let eps = if extra.contains(&"fp32") { 1e-3 } else { 0.1 };
        if let Some(want) = &want {
            assert_close(&got, want, eps, &format!("fpshader run {extra:?}"));
        }
    }
    // the summary on stdout, to a reader that goes away at once (`| head -0`)
    let mut child = std::process::Command::new(exe)
        .current_dir(&dir)
        .args([
            "run", "m.param", "m.bin", "--input", "x.npy", "--cpu", "--time",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(
        done.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    for (args, needle) in [
        (
            vec!["run", "m.param", "m.bin", "--input", "nope.npy", "--cpu"],
            "nope.npy",
        ),
        (
            vec![
                "run", "m.param", "m.bin", "--input", "x.npy", "--opt", "fp17",
            ],
            "fp17",
        ),
        (vec!["run", "missing.param", "--cpu"], "missing.param"),
        (
            vec!["run", "m.param", "m.bin", "--input", "m.bin", "--cpu"],
            "m.bin",
        ),
        (
            vec![
                "run", "m.param", "m.bin", "--input", "x.npy", "--output", "zz", "--cpu",
            ],
            "zz",
        ),
    ] {
        let run = std::process::Command::new(exe)
            .current_dir(&dir)
            .args(&args)
            .output()
            .unwrap();
        assert_refused(&run, &args, needle);
    }
}

/// `fpshader bench` takes the input the `Input` layer declares in 1 to 3 dims (a Gemm on a
/// 2-D blob) or as `--shape W[,H[,C]]` (`W,H,D,C` for 4-D); other shapes are messages, not
/// panics.
#[test]
#[cfg_attr(
    fpshader_emulated,
    ignore = "spawns the CLI, an aarch64 binary the emulator does not follow into"
)]
fn bench_takes_1d_to_4d_inputs_and_refuses_bad_shapes() {
    let exe = env!("CARGO_BIN_EXE_fpshader");
    let dir = scratch();
    let gemm = |input: &str| {
        format!(
            "7767517\n2 2\nInput in0 0 1 in0 {input}\nGemm g 1 1 in0 out0 10=4 2=0 3=1 4=0 5=1 \
             6=1 7=8 8=12 9=16\n"
        )
    };
    std::fs::write(dir.join("g.param"), gemm("0=16 1=8")).unwrap();
    std::fs::write(dir.join("none.param"), gemm("")).unwrap();
    std::fs::write(
        dir.join("row.param"),
        "7767517\n2 2\nInput in0 0 1 in0 0=16\nReLU r 1 1 in0 out0\n",
    )
    .unwrap();
    let bench = |args: &[&str]| {
        std::process::Command::new(exe)
            .current_dir(&dir)
            .arg("bench")
            .args(args)
            .args(["--cpu", "--loops", "1", "--threads", "1"])
            .output()
            .unwrap()
    };
    for args in [
        vec!["g.param"],
        vec!["none.param", "--shape", "16,8"],
        vec!["row.param"],
        vec!["row.param", "--shape", "4,2,3"],
        vec!["row.param", "--shape", "4,3,2,2"],
    ] {
        let run = bench(&args);
        let (out, err) = (
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr),
        );
        assert!(run.status.success(), "{args:?}: {err}");
        assert!(out.contains("min ="), "{args:?}: {out}");
    }
    for (args, needle) in [
        (vec!["none.param"], "--shape"),
        (vec!["g.param", "--shape", "16,8,1,1,1"], "16,8,1,1,1"),
        (vec!["g.param", "--shape", "0,8"], "0,8"),
        (vec!["g.param", "--shape", "a,b"], "a,b"),
    ] {
        assert_refused(&bench(&args), &args, needle);
    }
}
