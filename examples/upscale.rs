//! Super-resolution with an ncnn upscaler (waifu2x, Real-CUGAN, Real-ESRGAN style models) on any
//! GPU, in tiles so that pictures larger than the device allows still go through.
//!
//! ```sh
//! cargo run --release --example upscale -- scale2.0x_model.param scale2.0x_model.bin in.png out.png
//! cargo run --release --example upscale -- cunet.param cunet.bin in.png out.png --prepadding 18 --align 4
//! ```
//!
//! Each tile of `--tile` pixels (default 256; 0: the whole picture in one run) is read with
//! `--prepadding` pixels of its neighbours around it (the picture's edge pixels repeated
//! outside it, as waifu2x-ncnn-vulkan does), padded on the right and bottom to a multiple of
//! `--align`, and run; of the output, the part that belongs to the tile is kept. With a
//! prepadding at least the model's receptive radius every output pixel sees all the input it
//! depends on, so the seams are exact. Defaults fit waifu2x's upconv_7 (prepadding 7, scale
//! 2); cunet and Real-CUGAN 2× take `--prepadding 18 --align 4`. Pixels go in as RGB in
//! [0, 1] (`--input`/`--output` name the blobs; default: the `Input` layer's and the last).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use fpshader::layer::RunOptions;
use fpshader::net::Net;
use fpshader::{Context, ContextOptions, Mat};

struct Args {
    param: String,
    bin: String,
    image: String,
    out: String,
    tile: usize,
    prepadding: usize,
    align: usize,
    scale: usize,
    cpu: bool,
    input: Option<String>,
    output: Option<String>,
}

fn parse() -> Result<Args, String> {
    let mut positional = Vec::new();
    let mut args = Args {
        param: String::new(),
        bin: String::new(),
        image: String::new(),
        out: String::new(),
        tile: 256,
        prepadding: 7,
        align: 1,
        scale: 2,
        cpu: false,
        input: None,
        output: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |flag: &str| it.next().ok_or_else(|| format!("{flag} needs a value"));
        let mut number = |flag: &str| -> Result<usize, String> {
            let v = value(flag)?;
            v.parse().map_err(|e| format!("{flag} {v}: {e}"))
        };
        match a.as_str() {
            "--tile" => args.tile = number("--tile")?,
            "--prepadding" => args.prepadding = number("--prepadding")?,
            "--align" => args.align = number("--align")?.max(1),
            "--scale" => args.scale = number("--scale")?.max(1),
            "--cpu" => args.cpu = true,
            "--input" => args.input = Some(value("--input")?),
            "--output" => args.output = Some(value("--output")?),
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ => positional.push(a),
        }
    }
    let [param, bin, image, out]: [String; 4] = positional.try_into().map_err(|_| {
        "usage: upscale MODEL.param MODEL.bin IN.png OUT.png [--tile N] [--prepadding P] \
         [--align A] [--scale S] [--cpu]"
            .to_string()
    })?;
    (args.param, args.bin, args.image, args.out) = (param, bin, image, out);
    Ok(args)
}

/// The picture as RGB bytes, row-major.
struct Picture {
    w: usize,
    h: usize,
    rgb: Vec<u8>,
}

impl Picture {
    /// The tile at `(x0, y0)` of `tw × th` with `pad` pixels around it and `extra` more on the
    /// right and bottom, edge pixels repeated: planar RGB in [0, 1].
    fn padded_tile(
        &self,
        (x0, y0): (usize, usize),
        (tw, th): (usize, usize),
        pad: usize,
        extra: (usize, usize),
    ) -> Result<Mat, String> {
        let (iw, ih) = (tw + 2 * pad + extra.0, th + 2 * pad + extra.1);
        let plane = iw * ih;
        let mut values = vec![0.0f32; 3 * plane];
        for y in 0..ih {
            let sy = (y0 + y).saturating_sub(pad).min(self.h - 1);
            for x in 0..iw {
                let sx = (x0 + x).saturating_sub(pad).min(self.w - 1);
                let px = &self.rgb[3 * (sy * self.w + sx)..][..3];
                for (c, &v) in px.iter().enumerate() {
                    values[c * plane + y * iw + x] = f32::from(v) / 255.0;
                }
            }
        }
        Mat::from_values(iw, ih, 3, &values).map_err(|e| e.to_string())
    }
}

/// The net on the default adapter (or the CPU), its input and output blobs.
fn load(args: &Args) -> Result<(Net, String, String), String> {
    let mut net = Net::new();
    net.opt = RunOptions::default();
    if !args.cpu {
        match Context::new(ContextOptions::default()) {
            Ok(ctx) => {
                println!("device: {}", ctx.describe());
                net.set_context(Arc::new(ctx));
            }
            Err(e) => println!("no GPU ({e}); running on the CPU"),
        }
    }
    net.load_param(&args.param).map_err(|e| e.report())?;
    net.load_model(&args.bin).map_err(|e| e.report())?;
    let input = args
        .input
        .clone()
        .or_else(|| {
            let l = net.layers().iter().find(|l| l.kind == "Input")?;
            Some(net.blobs()[*l.tops.first()?].name.clone())
        })
        .ok_or("the model has no Input layer; give --input")?;
    let output = args
        .output
        .clone()
        .or_else(|| {
            let b = net
                .blobs()
                .iter()
                .rev()
                .find(|b| b.producer.is_some() && b.consumers.is_empty())?;
            Some(b.name.clone())
        })
        .ok_or("the model has no output blob; give --output")?;
    Ok((net, input, output))
}

fn run() -> Result<(), String> {
    let args = parse()?;
    let img = image::open(&args.image)
        .map_err(|e| format!("{}: {e}", args.image))?
        .to_rgb8();
    let pic = Picture {
        w: img.width() as usize,
        h: img.height() as usize,
        rgb: img.into_raw(),
    };
    if pic.w == 0 || pic.h == 0 {
        return Err(format!("{}: an empty picture", args.image));
    }
    let (net, input, output) = load(&args)?;
    let s = args.scale;
    let tile = if args.tile == 0 {
        pic.w.max(pic.h)
    } else {
        args.tile
    };
    let (ow, oh) = (pic.w * s, pic.h * s);
    let mut out = vec![0u8; 3 * ow * oh];
    let start = Instant::now();
    let mut tiles = 0;
    for y0 in (0..pic.h).step_by(tile) {
        for x0 in (0..pic.w).step_by(tile) {
            let (tw, th) = (tile.min(pic.w - x0), tile.min(pic.h - y0));
            let p = args.prepadding;
            let align = |n: usize| n.div_ceil(args.align) * args.align - n;
            let extra = (align(tw + 2 * p), align(th + 2 * p));
            let x = pic.padded_tile((x0, y0), (tw, th), p, extra)?;
            let (iw, ih) = (x.w, x.h);
            let mut ex = net.create_extractor().map_err(|e| e.report())?;
            ex.input(&input, x).map_err(|e| e.report())?;
            let y = ex.extract(&output).map_err(|e| e.report())?;
            let [yw, yh, _, yc] = y.shape();
            if yc != 3 {
                return Err(format!("the output `{output}` has {yc} channels, not 3"));
            }
            // the model shrinks its input symmetrically: input pixel u lands at s * u + shift
            let origin = |yn: usize, n: usize| -> Result<usize, String> {
                let shift = (yn as isize - (s * n) as isize) / 2;
                usize::try_from((s * p) as isize + shift).map_err(|_| {
                    format!("a {n}-pixel input gave {yn}: raise --prepadding or check --scale")
                })
            };
            let (ox, oy) = (origin(yw, iw)?, origin(yh, ih)?);
            if ox + s * tw > yw || oy + s * th > yh {
                return Err(format!(
                    "a {iw}×{ih} input gave {yw}×{yh}, too small for a {tw}×{th} tile at scale {s}"
                ));
            }
            let v = y.to_values();
            for ty in 0..s * th {
                for tx in 0..s * tw {
                    let at = 3 * ((s * y0 + ty) * ow + s * x0 + tx);
                    for c in 0..3 {
                        let value = v[c * yw * yh + (oy + ty) * yw + ox + tx];
                        out[at + c] = (value * 255.0).round().clamp(0.0, 255.0) as u8;
                    }
                }
            }
            tiles += 1;
        }
    }
    let took = start.elapsed();
    image::save_buffer(
        &args.out,
        &out,
        ow as u32,
        oh as u32,
        image::ColorType::Rgb8,
    )
    .map_err(|e| format!("{}: {e}", args.out))?;
    println!(
        "upscaled {}×{} to {ow}×{oh} in {tiles} tile(s) of up to {tile}²: {:.1} ms → {}",
        pic.w,
        pic.h,
        took.as_secs_f64() * 1e3,
        args.out
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("upscale: {e}");
            ExitCode::FAILURE
        }
    }
}
