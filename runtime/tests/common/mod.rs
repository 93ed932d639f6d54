//! What the net and model tests share: a deterministic generator, inputs, `.bin` writing, ncnn's
//! wheel as the oracle, the GPU contexts and ncnn's comparison rule.
#![allow(dead_code)] // each test binary uses its own part

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fpshader::layer::RunOptions;
use fpshader::net::Net;
use fpshader::{Context, ContextOptions, Error, Mat, ShaderPath, wgpu};

/// A small deterministic generator (xorshift) for inputs and weights.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
    pub fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.next()).collect()
    }
    /// A whole number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.next();
        (self.0 % n.max(1) as u64) as usize
    }
}

/// One input: blob name, dims, `[w, h, d, c]`, values in ncnn order.
#[derive(Clone)]
pub struct Input {
    pub name: &'static str,
    pub dims: u8,
    pub shape: [usize; 4],
    pub values: Vec<f32>,
    /// Integers (indices): ncnn's wheel gets them as an int32 mat.
    pub int: bool,
}

impl Input {
    pub fn new(rng: &mut Rng, name: &'static str, dims: u8, shape: [usize; 4]) -> Input {
        let [w, h, d, c] = shape;
        let n = match dims {
            1 => w,
            2 => w * h,
            3 => w * h * c,
            _ => w * h * d * c,
        };
        Input {
            name,
            dims,
            shape,
            values: rng.vec(n),
            int: false,
        }
    }

    pub fn mat(&self) -> Mat {
        Mat::from_shape_values(self.dims, self.shape, &self.values).unwrap()
    }

    /// numpy's (c, d, h, w) shape for the same dims.
    pub fn numpy_shape(&self) -> Vec<usize> {
        let [w, h, d, c] = self.shape;
        match self.dims {
            1 => vec![w],
            2 => vec![h, w],
            3 => vec![c, h, w],
            _ => vec![c, d, h, w],
        }
    }
}

/// `.bin` bytes: each part raw fp32, tagged (type 0 loads) or not (type 1).
pub fn bin(parts: &[(&[f32], bool)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (values, tagged) in parts {
        if *tagged {
            out.extend(0u32.to_le_bytes());
        }
        out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    }
    out
}

/// A folder of its own under the temp dir, removed with what it holds when dropped (a failed
/// test's too, as the panic unwinds).
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A new, empty [`Scratch`] folder.
pub fn scratch() -> Scratch {
    static N: Mutex<u32> = Mutex::new(0);
    let mut n = N.lock().unwrap();
    *n += 1;
    let dir = std::env::temp_dir().join(format!("fpshader-net-{}-{}", std::process::id(), *n));
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// ncnn's output for `output`, or `None` when the oracle is explicitly skipped.
pub fn ncnn(param: &str, weights: &[u8], inputs: &[Input], output: &str) -> Option<Vec<f32>> {
    ncnn_with(("m.param", param.as_bytes()), weights, inputs, output)
}

/// ncnn's output for a model whose param file is `(file name, bytes)`; a `.param.bin` is
/// loaded as one, and its blob names are their indices.
pub fn ncnn_with(
    param: (&str, &[u8]),
    weights: &[u8],
    inputs: &[Input],
    output: &str,
) -> Option<Vec<f32>> {
    ncnn_outputs(param, weights, inputs, &[output]).map(|mut v| v.remove(0))
}

/// ncnn's outputs for `outputs`, extracted from one extractor in one run of the wheel.
pub fn ncnn_outputs(
    param: (&str, &[u8]),
    weights: &[u8],
    inputs: &[Input],
    outputs: &[&str],
) -> Option<Vec<Vec<f32>>> {
    ncnn_outputs_shaped(param, weights, inputs, outputs).map(|(values, _)| values)
}

/// [`ncnn_outputs`] with each output's numpy shape as ncnn gives it.
#[allow(clippy::type_complexity)]
pub fn ncnn_outputs_shaped(
    (param_name, param): (&str, &[u8]),
    weights: &[u8],
    inputs: &[Input],
    outputs: &[&str],
) -> Option<(Vec<Vec<f32>>, Vec<Vec<usize>>)> {
    if std::env::var_os("FPSHADER_SKIP_NCNN").is_some() {
        return None;
    }
    let python = std::env::var_os("FPSHADER_NCNN_PYTHON").unwrap_or_else(|| {
        panic!(
            "FPSHADER_NCNN_PYTHON is not set: run the tests through `cargo xtask test`, which \
             installs ncnn's wheel, or set FPSHADER_SKIP_NCNN=1"
        )
    });
    let dir = scratch();
    std::fs::write(dir.join(param_name), param).unwrap();
    std::fs::write(dir.join("m.bin"), weights).unwrap();
    let mut ins = Vec::new();
    for i in inputs {
        let f = dir.join(format!("{}.raw", i.name));
        let bytes: Vec<u8> = i.values.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&f, bytes).unwrap();
        ins.push(format!(
            r#"{{"name": "{}", "file": "{}", "shape": {:?}, "int": {}}}"#,
            i.name,
            f.display(),
            i.numpy_shape(),
            i.int
        ));
    }
    let outs: Vec<String> = outputs
        .iter()
        .enumerate()
        .map(|(k, o)| {
            format!(
                r#"{{"name": "{o}", "file": "{}"}}"#,
                dir.join(format!("out{k}.raw")).display()
            )
        })
        .collect();
    let spec = format!(
        r#"{{"param": "{}", "bin": "{}", "inputs": [{}], "outputs": [{}]}}"#,
        dir.join(param_name).display(),
        dir.join("m.bin").display(),
        ins.join(", "),
        outs.join(", ")
    );
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracle/ncnn_run.py");
    let spec_file = dir.join("spec.json");
    std::fs::write(&spec_file, &spec).unwrap();
    let run = std::process::Command::new(python)
        .arg(script)
        .arg(format!("@{}", spec_file.display()))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "ncnn failed ({}) on\n{}\n{}",
        run.status,
        String::from_utf8_lossy(param),
        String::from_utf8_lossy(&run.stderr)
    );
    let values = (0..outputs.len())
        .map(|k| {
            let bytes = std::fs::read(dir.join(format!("out{k}.raw"))).unwrap();
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
        .collect();
    // the script prints the outputs' shapes as its last line
    let stdout = String::from_utf8_lossy(&run.stdout);
    let shapes = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no output shapes from ncnn's wheel in {stdout:?}"));
    Some((values, shapes))
}

/// A net of `param` and `weights` with options `opt`, on `ctx` when given.
pub fn load_net(
    param: &str,
    weights: &[u8],
    opt: RunOptions,
    ctx: Option<Arc<Context>>,
) -> Result<Net, Error> {
    let mut net = Net::new();
    net.opt = opt;
    if let Some(ctx) = ctx {
        net.set_context(ctx);
    }
    net.load_param_str("test.param", param)?;
    net.load_model_bytes(weights)?;
    Ok(net)
}

pub fn run_net(
    param: &str,
    weights: &[u8],
    inputs: &[Input],
    output: &str,
    opt: RunOptions,
    ctx: Option<Arc<Context>>,
) -> Result<Mat, Error> {
    run_net_recorded(param, weights, inputs, output, opt, ctx).map(|(m, _)| m)
}

/// [`run_net`], with where its layers ran.
pub fn run_net_recorded(
    param: &str,
    weights: &[u8],
    inputs: &[Input],
    output: &str,
    opt: RunOptions,
    ctx: Option<Arc<Context>>,
) -> Result<(Mat, fpshader::net::RunRecord), Error> {
    let net = load_net(param, weights, opt, ctx)?;
    let mut ex = net.create_extractor()?;
    for i in inputs {
        ex.input(i.name, i.mat())?;
    }
    let out = ex.extract(output)?;
    Ok((out, ex.record().clone()))
}

/// ncnn's test rule: |a - b| <= eps, or relative error below eps (and NaN where ncnn has NaN).
pub fn assert_close(got: &[f32], want: &[f32], eps: f32, what: &str) {
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: {} values, ncnn has {}",
        got.len(),
        want.len()
    );
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        // equal infinities (a max pool over padding only) are equal
        let ok = a == b
            || (a - b).abs() <= eps
            || (a - b).abs() / a.abs().max(b.abs()) < eps
            || (a.is_nan() && b.is_nan());
        assert!(ok, "{what}: value {i}: fpshader {a}, ncnn {b}");
    }
}

pub fn gpu_contexts() -> Vec<Arc<Context>> {
    if std::env::var_os("FPSHADER_SKIP_GPU").is_some() {
        eprintln!("FPSHADER_SKIP_GPU set: skipping GPU tests");
        return Vec::new();
    }
    [ShaderPath::Passthrough, ShaderPath::Naga]
        .into_iter()
        .map(|path| {
            Arc::new(
                Context::new(ContextOptions {
                    backends: Some(wgpu::Backends::VULKAN),
                    path: Some(path),
                    // lavapipe in CI
                    allow_cpu_adapter: true,
                    // allow image mats too; each net's options choose
                    options: Some(fpshader::Options {
                        use_image_storage: true,
                        ..Default::default()
                    }),
                    ..Default::default()
                })
                .unwrap_or_else(|e| panic!("no Vulkan device ({e}); set FPSHADER_SKIP_GPU=1")),
            )
        })
        .collect()
}
