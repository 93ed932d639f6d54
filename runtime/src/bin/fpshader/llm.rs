//! `fpshader bench --llm`: an ncnn LLM decoder run as ncnn's `benchncnn_llm` runs it. A prefill
//! of `--tokens` tokens (embeddings of 0.01, a causal mask, a RoPE cache of cos 1 and sin 0)
//! with the key/value caches unfed (empty mats), then one decode step over the caches the
//! prefill made, kept where they are (on the device for a GPU net); each step ends in the
//! output projection (the `_proj_out` param beside the decoder, if there) of the last token.
//! Zero weights. Prints each case's min and average ms and tokens per second.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use fpshader::layer::RunOptions;
use fpshader::net::{Extractor, Net};
use fpshader::{Context, GpuMat, Mat};

use crate::run::load_net;
use crate::{CliError, print};

/// A decoder's shape as its param gives it, and its cache blobs.
struct Decoder {
    net: Net,
    proj: Option<Net>,
    hidden: usize,
    /// RoPE's cache width: half a head.
    half: usize,
    /// The SDPA layers' past key/value inputs and their present key/value outputs.
    cache_in: Vec<String>,
    cache_out: Vec<String>,
}

/// A cache blob as one step leaves it for the next.
enum Cache {
    Host(Mat),
    Device(GpuMat),
}

/// `k=v`'s integer value on the first line of `kind` in a param's text.
fn first_param(text: &str, kind: &str, key: &str) -> Option<usize> {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(kind))?;
    let prefix = format!("{key}=");
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(&prefix))
        .and_then(|v| v.parse().ok())
}

impl Decoder {
    fn load(param: &Path, ctx: Option<Arc<Context>>, opt: RunOptions) -> Result<Self, CliError> {
        let text = std::fs::read_to_string(param).map_err(|e| CliError::Npy {
            path: param.display().to_string(),
            message: e.to_string(),
        })?;
        let usage = |what: &str| {
            CliError::Usage(format!(
                "{}: {what} (an ncnn LLM decoder?)",
                param.display()
            ))
        };
        // the hidden size: the first norm's width; a head: the first Reshape's rows
        let hidden = first_param(&text, "RMSNorm", "0")
            .or_else(|| first_param(&text, "LayerNorm", "0"))
            .ok_or_else(|| usage("no RMSNorm or LayerNorm gives the hidden size"))?;
        let head = first_param(&text, "Reshape", "0")
            .ok_or_else(|| usage("no Reshape gives the head size"))?;
        let net = load_net(param, None, ctx.clone(), opt)?;
        let name = |i: &usize| net.blobs()[*i].name.clone();
        let (mut cache_in, mut cache_out) = (Vec::new(), Vec::new());
        for l in net
            .layers()
            .iter()
            .filter(|l| l.kind == "SDPA" && l.tops.len() == 3)
        {
            cache_in.extend(l.bottoms[l.bottoms.len() - 2..].iter().map(name));
            cache_out.extend(l.tops[1..].iter().map(name));
        }
        if cache_in.is_empty() {
            return Err(usage("no SDPA layer with a key/value cache"));
        }
        let proj_path = PathBuf::from(param.to_string_lossy().replace("_decoder", "_proj_out"));
        let proj = (proj_path != param && proj_path.exists())
            .then(|| load_net(&proj_path, None, ctx, opt))
            .transpose()?;
        Ok(Decoder {
            net,
            proj,
            hidden,
            half: head / 2,
            cache_in,
            cache_out,
        })
    }

    /// One step of `tokens` tokens after `past` cached ones: the caches it leaves.
    fn step(&self, tokens: usize, past: usize, cache: &[Cache]) -> Result<Vec<Cache>, CliError> {
        let total = past + tokens;
        let embeds = Mat::from_shape_values(
            2,
            [self.hidden, tokens, 1, 1],
            &vec![0.01; self.hidden * tokens],
        )?;
        // row i sees the past and tokens up to i
        let mask: Vec<f32> = (0..tokens)
            .flat_map(|i| {
                (0..total).map(move |j| if j > past + i { f32::NEG_INFINITY } else { 0.0 })
            })
            .collect();
        let mask = Mat::from_shape_values(2, [total, tokens, 1, 1], &mask)?;
        let rope = |v: f32| {
            Mat::from_shape_values(2, [self.half, tokens, 1, 1], &vec![v; self.half * tokens])
        };
        let mut ex = self.net.create_extractor()?;
        ex.input("in0", embeds)?;
        ex.input("in1", mask)?;
        ex.input("in2", rope(1.0)?)?;
        ex.input("in3", rope(0.0)?)?;
        for (name, c) in self.cache_in.iter().zip(cache) {
            match c {
                Cache::Host(m) => ex.input(name, m.clone())?,
                Cache::Device(g) => ex.input_gpu(name, g.clone())?,
            }
        }
        let out = self
            .cache_out
            .iter()
            .map(|n| take(&mut ex, n, self.net.context().is_some()))
            .collect::<Result<Vec<_>, _>>()?;
        let hidden = ex.extract("out0")?;
        if let Some(proj) = &self.proj {
            // the last token's row
            let values = hidden.to_values();
            let last = &values[values.len().saturating_sub(self.hidden)..];
            let mut ex = proj.create_extractor()?;
            ex.input(
                "in0",
                Mat::from_shape_values(2, [self.hidden, 1, 1, 1], last)?,
            )?;
            ex.extract("out0")?;
        }
        Ok(out)
    }
}

/// Cache blob `name` of a step, left on the device for a GPU net.
fn take(ex: &mut Extractor<'_>, name: &str, gpu: bool) -> Result<Cache, CliError> {
    Ok(if gpu {
        Cache::Device(ex.extract_gpu(name)?)
    } else {
        Cache::Host(ex.extract(name)?)
    })
}

/// Runs `fpshader bench --llm` on `param`: prefill, then decode, `loops` timed runs each.
pub fn bench_llm(
    param: &Path,
    tokens: usize,
    loops: usize,
    ctx: Option<Arc<Context>>,
    opt: RunOptions,
) -> Result<(), CliError> {
    let tokens = tokens.max(1);
    let d = Decoder::load(param, ctx, opt)?;
    let stem = param.file_stem().map_or(String::new(), |s| {
        s.to_string_lossy().replace("_decoder.ncnn", "")
    });
    // the caches a prefill leaves: the decode steps' past
    let past = d.step(tokens, 0, &[])?;
    let cases: [(String, usize, usize, &[Cache], f64); 2] = [
        (
            format!("{stem}_{tokens}_prefill"),
            tokens,
            0,
            &[],
            tokens as f64,
        ),
        (format!("{stem}_{tokens}_decode"), 1, tokens, &past, 1.0),
    ];
    for (name, n, before, cache, rate) in cases {
        for _ in 0..2 {
            d.step(n, before, cache)?;
        }
        let mut times = Vec::new();
        for _ in 0..loops.max(1) {
            let t = Instant::now();
            d.step(n, before, cache)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let min = times.iter().copied().fold(f64::INFINITY, f64::min);
        let avg = times.iter().sum::<f64>() / times.len() as f64;
        print(&format!(
            "{name:>30}  min = {min:8.2}  avg = {avg:8.2}  tokens/s = {:9.2}  (at min {:9.2})\n",
            rate * 1e3 / avg,
            rate * 1e3 / min
        ));
    }
    Ok(())
}
