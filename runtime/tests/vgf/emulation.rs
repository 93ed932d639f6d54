//! Arm's emulation layer and scenario runner next to fpshader, on the same files and inputs.

use super::*;

/// Environment for Arm's scenario runner with Arm's emulation layer (VK_ARM_tensors and
/// VK_ARM_data_graph on any Vulkan device). The graph layer must sit above the tensor layer;
/// Debian 12's loader (1.3.239) orders explicit layers by where it finds their manifests, not
/// by `VK_INSTANCE_LAYERS`, so each manifest gets a folder of its own, graph first.
pub(crate) fn emulation_layer_env(
    python: &std::path::Path,
    dir: &std::path::Path,
) -> Vec<(String, String)> {
    let out = Command::new(python)
        .args([
            "-c",
            "import emulation_layer, os; print(os.path.join(os.path.dirname(emulation_layer.__file__), 'deploy'))",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the emulation layer is missing from the oracle venv: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deploy = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let mut paths = Vec::new();
    for layer in ["Graph", "Tensor"] {
        let manifest = deploy.join(format!(
            "share/vulkan/explicit_layer.d/VkLayer_{layer}.json"
        ));
        let mut json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
        let lib = deploy.join(format!("lib/libVkLayer_{layer}.so"));
        json["layer"]["library_path"] = lib.to_string_lossy().into_owned().into();
        let folder = dir.join(format!("layer-{layer}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("manifest.json"), json.to_string()).unwrap();
        paths.push(folder.to_string_lossy().into_owned());
    }
    vec![
        ("VK_LAYER_PATH".into(), paths.join(":")),
        (
            "VK_INSTANCE_LAYERS".into(),
            "VK_LAYER_ML_Graph_Emulation:VK_LAYER_ML_Tensor_Emulation".into(),
        ),
    ]
}

/// Runs [`NUMPY_CHECK`] in `mode` for `model` over the folder `dir`.
pub(crate) fn numpy(
    python: &std::path::Path,
    dir: &std::path::Path,
    model: &str,
    mode: &str,
    args: &[String],
) -> String {
    run_ok(
        Command::new(python)
            .arg("-c")
            .arg(NUMPY_CHECK.replace("MATMUL_B", MATMUL_B))
            .args([dir.to_str().unwrap(), model, mode])
            .args(args),
        &format!("{model}: numpy {mode}"),
    )
}

pub(crate) fn run_ok(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed:\n{text}");
    text
}

/// Points a scenario's `input_<i>_ref`/`output_<j>_ref` resources at `input_<i>.npy` and
/// `<run>.out<j>.npy`, and its `shader_<m>_ref` substitutions at module m's code as `dump`
/// (`vgf_dump`, run in `dir` on `vgf`) writes it.
pub(crate) fn fill_scenario(
    scenario: &mut serde_json::Value,
    run: &str,
    dump: &std::path::Path,
    dir: &std::path::Path,
    vgf: &str,
) {
    for r in scenario["resources"].as_array_mut().unwrap() {
        let Some((_, body)) = r.as_object_mut().unwrap().iter_mut().next() else {
            continue;
        };
        let uid = body["uid"].as_str().unwrap_or_default().to_string();
        let index = |prefix: &str| {
            uid.strip_prefix(prefix)
                .and_then(|s| s.strip_suffix("_ref"))
                .map(str::to_string)
        };
        if let Some(i) = index("input_") {
            body["src"] = format!("input_{i}.npy").into();
        } else if let Some(j) = index("output_") {
            body["dst"] = format!("{run}.out{j}.npy").into();
        } else if let Some(m) = index("shader_") {
            let flag = match body["type"].as_str() {
                Some("SPIR-V") => "--dump-spirv",
                Some("HLSL") => "--dump-hlsl",
                _ => "--dump-glsl",
            };
            let file = format!("{vgf}.module{m}");
            run_ok(
                Command::new(dump)
                    .current_dir(dir)
                    .args(["-i", vgf, "-o", &file, flag, &m]),
                "vgf_dump --dump-…",
            );
            body["src"] = file.into();
        }
    }
    let text = scenario.to_string();
    assert!(!text.contains("TEMPLATE_PATH"), "unfilled template: {text}");
}

/// Arm's tools for running models: its converter, the oracle virtualenv's Python (numpy, the
/// emulation layer), its scenario runner and `vgf_dump`.
pub(crate) struct ArmTools {
    pub converter: PathBuf,
    pub python: PathBuf,
    pub runner: PathBuf,
    pub dump: PathBuf,
}

/// [`ArmTools`], or `None` where `FPSHADER_SKIP_ARM` is set.
pub(crate) fn arm_tools() -> Option<ArmTools> {
    Some(ArmTools {
        converter: arm_tool("model-converter")?,
        python: arm_tool("python")?,
        runner: arm_tool("scenario_runner")?,
        dump: arm_tool("vgf_dump")?,
    })
}

/// Arm's converter's `arm.vgf` of `dir/m.mlir`, and `arm.json`: vgf_dump's scenario template
/// for it, filled for the run `arms-arm-runner`.
pub(crate) fn arm_file_and_scenario(
    converter: &std::path::Path,
    dump: &std::path::Path,
    dir: &std::path::Path,
) {
    arm_vgf(
        converter,
        &dir.join("m.mlir"),
        &dir.join("arm.vgf"),
        "m.mlir",
    );
    run_ok(
        Command::new(dump).current_dir(dir).args([
            "-i",
            "arm.vgf",
            "-o",
            "template.json",
            "--scenario-template",
        ]),
        "vgf_dump --scenario-template",
    );
    let mut scenario: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("template.json")).unwrap()).unwrap();
    fill_scenario(&mut scenario, "arms-arm-runner", dump, dir, "arm.vgf");
    std::fs::write(dir.join("arm.json"), scenario.to_string()).unwrap();
}

/// `model` written as `dir/{file}.vgf` with our scenario `{file}.json` for the run
/// `{run}-arm-runner`.
pub(crate) fn our_file_and_scenario(
    model: &vgf::Vgf,
    dump: &std::path::Path,
    dir: &std::path::Path,
    file: &str,
    run: &str,
) {
    let vgf_name = format!("{file}.vgf");
    std::fs::write(dir.join(&vgf_name), vgf::write(model)).unwrap();
    let mut scenario = vgf::scenario::scenario(model, &vgf_name);
    fill_scenario(
        &mut scenario,
        &format!("{run}-arm-runner"),
        dump,
        dir,
        &vgf_name,
    );
    std::fs::write(dir.join(format!("{file}.json")), scenario.to_string()).unwrap();
}

/// numpy's inputs for `graph` in `dir` (`input_<i>.raw`/`.npy`, by [`NUMPY_CHECK`]'s
/// `prepare`), read back.
pub(crate) fn prepared_inputs(
    python: &std::path::Path,
    dir: &std::path::Path,
    name: &str,
    graph: &tosa::Graph,
) -> Vec<Vec<u8>> {
    let shapes: Vec<&Vec<i64>> = (graph.inputs.iter())
        .map(|&v| &graph.values[v].ty.shape)
        .collect();
    numpy(
        python,
        dir,
        name,
        "prepare",
        &[serde_json::to_string(&shapes).unwrap()],
    );
    (0..shapes.len())
        .map(|i| std::fs::read(dir.join(format!("input_{i}.raw"))).unwrap())
        .collect()
}

/// Arm's scenario runner, with the emulation layers, on each of `scenarios` in `dir`.
pub(crate) fn run_scenarios(
    (runner, python): (&std::path::Path, &std::path::Path),
    dir: &std::path::Path,
    name: &str,
    scenarios: &[&str],
) {
    let layers = emulation_layer_env(python, dir);
    for file in scenarios {
        run_ok(
            Command::new(runner)
                .current_dir(dir)
                .envs(layers.iter().cloned())
                .args(["--scenario", file]),
            &format!("{name}: Arm's scenario runner on {file}"),
        );
    }
}

/// Each of `files` (`<file>.vgf` in `dir`) run by fpshader on every context of `contexts` with
/// `inputs`, its outputs written as `<file>-fpshader-<k>.out<j>.raw`; the runs, context by
/// context.
pub(crate) fn run_in_fpshader(
    contexts: &[std::sync::Arc<fpshader::Context>],
    dir: &std::path::Path,
    name: &str,
    files: &[&str],
    inputs: &[Vec<u8>],
) -> Vec<String> {
    let views: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let mut runs = Vec::new();
    for (k, ctx) in contexts.iter().enumerate() {
        for file in files {
            let bytes = std::fs::read(dir.join(format!("{file}.vgf"))).unwrap();
            let model = unsafe { VgfModel::load(ctx, &bytes, &Default::default()) }
                .unwrap_or_else(|e| panic!("{name}: {file}.vgf on {}: {e}", ctx.describe()));
            let outputs = model.run(ctx, &views).unwrap();
            let run = format!("{file}-fpshader-{k}");
            for (j, out) in outputs.iter().enumerate() {
                std::fs::write(dir.join(format!("{run}.out{j}.raw")), out).unwrap();
            }
            runs.push(run);
        }
    }
    runs
}

#[test]
fn vgfs_run_in_arms_runner_and_fpshader_as_numpy_computes() {
    let Some(ArmTools {
        converter,
        python,
        runner,
        dump,
    }) = arm_tools()
    else {
        return;
    };
    let contexts = common::gpu_contexts();
    let mut models = ml_models();
    models.extend(shader_models());
    // the models side by side: each is mostly Arm's tools and numpy in processes of their own
    models.into_par_iter().for_each(|(name, mlir)| {
        let dir = common::scratch();
        std::fs::write(dir.join("m.mlir"), &mlir).unwrap();
        let graph = tosa::mlir::parse(name, &mlir).unwrap();
        let inputs = prepared_inputs(&python, &dir, name, &graph);
        // ours: compute-only, and with graph segments, each with our scenario file
        let ours = compute_only(&graph);
        our_file_and_scenario(&ours, &dump, &dir, "ours", "ours");
        our_file_and_scenario(&with_graphs(&graph), &dump, &dir, "graphs", "graphs");
        // the `.tosa` twin converts to the same file
        let converter_tosa = to_tosa(&converter, &dir.join("m.mlir"));
        let twin = tosa::flatbuffer::parse("m.tosa", &converter_tosa).unwrap();
        assert!(
            vgf::write(&compute_only(&twin)) == vgf::write(&ours),
            "{name}: the .tosa twin converts differently"
        );
        // Arm's: graph segments, with vgf_dump's scenario template
        arm_file_and_scenario(&converter, &dump, &dir);
        // Arm's converter keeps HLSL as source, which Arm's runner compiles only on Windows
        // ("HLSL shaders are not supported on this platform") and fpshader only ahead of time
        let arm_runs = name != "hlsl";
        // a model input returned as an output does not run in Arm's tools, its own file
        // included: vgf_dump's scenario template makes the OUTPUT tensor that aliases the input
        // memory of its own, bound at the input's binding and never written; that model runs
        // in fpshader only. Nor does a graph where an fft2d result feeds another op: Arm's
        // emulation layer ends in SIGSEGV on it (its own file too; fft2d results that are model
        // outputs run)
        let scenarios: &[&str] = if name == "passthrough" || name == "fft_chain" {
            &[]
        } else if arm_runs {
            &["ours.json", "graphs.json", "arm.json"]
        } else {
            &["ours.json", "graphs.json"]
        };
        run_scenarios((&runner, &python), &dir, name, scenarios);
        // the files in fpshader, on every GPU context (Arm's HLSL one refused by name)
        let mut runs: Vec<String> = ["ours", "graphs", "arms"][..scenarios.len()]
            .iter()
            .map(|r| format!("{r}-arm-runner"))
            .collect();
        let files: &[&str] = if arm_runs {
            &["ours", "graphs", "arm"]
        } else {
            for ctx in &contexts {
                let bytes = std::fs::read(dir.join("arm.vgf")).unwrap();
                let err = unsafe { VgfModel::load(ctx, &bytes, &Default::default()) }
                    .err()
                    .unwrap()
                    .to_string();
                assert!(err.contains("HLSL source"), "{err}");
            }
            &["ours", "graphs"]
        };
        runs.extend(run_in_fpshader(&contexts, &dir, name, files, &inputs));
        // and Arm's file through the command line, as a user runs it
        if arm_runs {
            let out = dir.join("cli");
            let mut cli = Command::new(env!("CARGO_BIN_EXE_fpshader"));
            cli.current_dir(&dir)
                .args(["run", "arm.vgf", "-o"])
                .arg(&out);
            for i in 0..inputs.len() {
                cli.args(["--input", &format!("input_{i}.npy")]);
            }
            run_ok(&mut cli, &format!("{name}: fpshader run arm.vgf"));
            let outputs = graph.outputs.len();
            for j in 0..outputs {
                let from = if outputs == 1 {
                    out.clone()
                } else {
                    out.join(format!("output_{j}.npy"))
                };
                std::fs::rename(from, dir.join(format!("arm-cli.out{j}.npy"))).unwrap();
            }
            runs.push("arm-cli".into());
        }
        let report = numpy(&python, &dir, name, "check", &runs);
        println!("{name}:\n{report}");
    });
}
