//! The jobs people bring to the `fpshader` CLI: a folder of models benchmarked past the ones it
//! cannot run, several inputs by name, pictures upscaled in tiles, and ncnn's own params loaded
//! as leniently as ncnn loads them.

use super::*;

fn fpshader(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_fpshader"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// `bench --all` reports a model it cannot run on its row, runs the rest and exits non-zero;
/// `--shape NAME=…` gives each of several inputs its shape.
#[test]
#[cfg_attr(
    fpshader_emulated,
    ignore = "spawns the CLI, an aarch64 binary the emulator does not follow into"
)]
fn bench_all_goes_past_a_model_it_cannot_run_and_shapes_inputs_by_name() {
    let dir = scratch();
    let models = dir.join("models");
    std::fs::create_dir_all(&models).unwrap();
    let write = |name: &str, text: &str| std::fs::write(models.join(name), text).unwrap();
    write(
        "a_relu.param",
        "7767517\n2 2\nInput in0 0 1 in0 0=8 1=4\nReLU r 1 1 in0 out0\n",
    );
    write(
        "b_unknown.param",
        "7767517\n2 2\nInput in0 0 1 in0 0=8\nFrobnicate f 1 1 in0 out0\n",
    );
    write(
        "c_sigmoid.param",
        "7767517\n2 2\nInput in0 0 1 in0 0=8 1=4 2=2\nSigmoid s 1 1 in0 out0\n",
    );
    let run = fpshader(
        &dir,
        &[
            "bench",
            "--all",
            "models",
            "--cpu",
            "--loops",
            "1",
            "--threads",
            "1",
        ],
    );
    let (out, err) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert_eq!(run.status.code(), Some(1), "{out}{err}");
    assert_eq!(out.matches("min =").count(), 2, "{out}");
    assert!(
        out.contains("b_unknown  cannot run") && out.contains("Frobnicate"),
        "{out}"
    );
    assert!(
        err.contains("1 of 3 models") && !err.contains("panicked"),
        "{err}"
    );

    // two inputs: each shape by name; a bare shape or an unknown name is refused
    std::fs::write(
        dir.join("two.param"),
        "7767517\n3 3\nInput a 0 1 a 0=6 1=3\nInput b 0 1 b\nBinaryOp add 2 1 a b out 0=0\n",
    )
    .unwrap();
    let bench = |extra: &[&'static str]| {
        let mut args: Vec<&'static str> = vec![
            "bench",
            "two.param",
            "--cpu",
            "--loops",
            "1",
            "--threads",
            "1",
        ];
        args.extend_from_slice(extra);
        (fpshader(&dir, &args), args)
    };
    let (ok, args) = bench(&["--shape", "b=6,3"]);
    assert!(
        ok.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
    for (extra, needle) in [
        (vec![], "--shape b="),
        (vec!["--shape", "6,3"], "2 inputs"),
        (vec!["--shape", "c=6,3"], "no input `c`"),
    ] {
        let (run, args) = bench(&extra);
        super::cli::assert_refused(&run, &args, needle);
    }
}

/// ncnn's benchmark/nanodet_m.param declares 179 layers and holds 180 lines of them; ncnn reads
/// the declared ones, and so does fpshader (it refused the file before).
#[test]
fn a_param_with_lines_after_its_declared_layers_loads_as_in_ncnn() {
    let path = format!(
        "{}/../tests/zoo/nanodet_m.param",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut net = Net::new();
    net.load_param(&path).unwrap();
    assert_eq!(net.layers().len(), 179);
    assert!(net.layers().iter().all(|l| l.name != "Output"));
    net.load_model_zeros().unwrap();
}

/// `fpshader upscale` on a nearest-neighbour 2× model: any picture size, tiles smaller than
/// the picture and not dividing it, the scale measured from the first tile; the result is
/// the picture with every pixel doubled, exactly, whatever the tiling.
#[test]
#[cfg_attr(
    fpshader_emulated,
    ignore = "spawns the CLI, an aarch64 binary the emulator does not follow into"
)]
fn upscale_tiles_any_picture_exactly() {
    let dir = scratch();
    std::fs::write(
        dir.join("nearest2x.param"),
        "7767517\n2 2\nInput data 0 1 data\nInterp up 1 1 data out 0=1 1=2.0 2=2.0\n",
    )
    .unwrap();
    std::fs::write(dir.join("nearest2x.bin"), b"").unwrap();
    let (w, h) = (37u32, 23u32);
    let mut rng = Rng(5);
    let pixels: Vec<u8> = (0..w * h * 3)
        .map(|_| (rng.next().abs() * 255.0) as u8)
        .collect();
    image::save_buffer(dir.join("in.png"), &pixels, w, h, image::ColorType::Rgb8).unwrap();
    let mut runs = vec![vec!["--cpu", "--tile", "16"], vec!["--cpu", "--tile", "0"]];
    if std::env::var_os("FPSHADER_SKIP_GPU").is_none() {
        runs.push(vec!["--tile", "10", "--opt", "fp32"]);
    }
    for extra in runs {
        let mut args = vec![
            "upscale",
            "nearest2x.param",
            "nearest2x.bin",
            "in.png",
            "out.png",
        ];
        args.extend_from_slice(&extra);
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_fpshader"))
            .current_dir(&*dir)
            .args(&args)
            .env("FPSHADER_ADAPTER", "llvmpipe")
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let out = image::open(dir.join("out.png")).unwrap().to_rgb8();
        assert_eq!(out.dimensions(), (2 * w, 2 * h), "{args:?}");
        for (x, y, px) in out.enumerate_pixels() {
            let at = 3 * ((y / 2) * w + x / 2) as usize;
            assert_eq!(px.0, pixels[at..at + 3], "{args:?}: pixel {x},{y}");
        }
    }
    let args = [
        "upscale",
        "nearest2x.param",
        "nearest2x.bin",
        "missing.png",
        "o.png",
        "--cpu",
    ];
    super::cli::assert_refused(&fpshader(&dir, &args), &args, "missing.png");
}
