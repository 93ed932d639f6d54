//! `fpshader upscale MODEL.param MODEL.bin IN.png OUT.png`: super-resolution with an ncnn
//! upscaler (waifu2x, Real-CUGAN, Real-ESRGAN and models like them) on any picture size.
//!
//! The picture goes through in tiles of `--tile` pixels. Each tile is read with `--prepadding`
//! pixels of its neighbours around it (the picture's edge pixels repeated outside it, as
//! waifu2x-ncnn-vulkan does) and padded on the right and bottom to a multiple of `--align`; of
//! the output, the part that belongs to the tile is kept. With a prepadding at least the model's
//! receptive radius every output pixel sees all the input it depends on, so the seams are exact
//! and the size of a picture is bounded only by the host's memory for it. The published models'
//! prepadding, alignment and scale are recognized from the file name; for others the scale is
//! measured on the first tile and the flags give the rest. Pixels go in as RGB in [0, 1].

use std::path::{Path, PathBuf};
use std::time::Instant;

use fpshader::Mat;
use fpshader::net::Net;

use crate::run::{device, load_net, parse_opt, with_threads};
use crate::{CliError, print};

/// Arguments of `fpshader upscale`.
#[derive(clap::Args)]
pub struct UpscaleArgs {
    /// The model's `.param`.
    param: PathBuf,
    /// Its weights (`.bin`).
    bin: PathBuf,
    /// The picture to upscale (PNG or JPEG).
    image: PathBuf,
    /// Where the result goes (its extension picks the format: `.png`, `.jpg`).
    out: PathBuf,
    /// Tile side in input pixels; 0: the whole picture in one run.
    #[arg(long, default_value_t = 256)]
    tile: usize,
    /// Pixels of context read around each tile (default: the known model's, else 10).
    #[arg(long)]
    prepadding: Option<usize>,
    /// Each padded tile's sides are made a multiple of this (default: the known model's, else 1).
    #[arg(long)]
    align: Option<usize>,
    /// Output pixels per input pixel (default: the known model's, else measured).
    #[arg(long)]
    scale: Option<usize>,
    /// The input blob (default: the `Input` layer's).
    #[arg(long)]
    input: Option<String>,
    /// The output blob (default: the last one no layer reads).
    #[arg(long)]
    output: Option<String>,
    /// Run on the CPU.
    #[arg(long)]
    cpu: bool,
    /// Precision, as `fpshader run` takes it (default: everything the device allows).
    #[arg(long, value_name = "fp32|fp16p,fp16s,…")]
    opt: Option<String>,
    /// CPU threads (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

/// What a published upscaler needs around and under its tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tiling {
    prepadding: usize,
    align: usize,
    /// `None`: measured on the first tile.
    scale: Option<usize>,
}

/// The settings of the published models, from the model's file name (the names their
/// projects and PyPI packages use): waifu2x's upconv_7 and cunet, Real-CUGAN, Real-ESRGAN.
fn known(param: &Path) -> Option<(&'static str, Tiling)> {
    let name = param.to_string_lossy().to_lowercase();
    let has = |s: &str| name.contains(s);
    let scale = |s: usize| Some(s);
    let t = |prepadding, align, scale| Tiling {
        prepadding,
        align,
        scale,
    };
    Some(if has("upconv_7") {
        // the noise-only models keep the size
        let s = if has("scale2") { 2 } else { 1 };
        ("waifu2x upconv_7", t(7, 1, scale(s)))
    } else if has("cunet") {
        if has("scale2") {
            ("waifu2x cunet 2x", t(18, 4, scale(2)))
        } else {
            ("waifu2x cunet 1x", t(28, 4, scale(1)))
        }
    } else if has("realcugan") || has("up2x") || has("up3x") || has("up4x") {
        match () {
            () if has("up4x") => ("Real-CUGAN 4x", t(19, 4, scale(4))),
            () if has("up3x") => ("Real-CUGAN 3x", t(14, 4, scale(3))),
            () => ("Real-CUGAN 2x", t(18, 4, scale(2))),
        }
    } else if has("realesr") || has("esrgan") || has("x4plus") {
        let s = ["x2", "x3"]
            .iter()
            .zip([2, 3])
            .find(|(k, _)| has(&format!("-{k}")) || has(&format!("_{k}")))
            .map_or(4, |(_, s)| s);
        ("Real-ESRGAN", t(10, 1, scale(s)))
    } else {
        return None;
    })
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
    ) -> Result<Mat, CliError> {
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
        Ok(Mat::from_values(iw, ih, 3, &values)?)
    }
}

fn usage(message: String) -> CliError {
    CliError::Usage(message)
}

/// The input and output blobs: the flags', else the `Input` layer's and the last unread one.
fn blobs(net: &Net, args: &UpscaleArgs) -> Result<(String, String), CliError> {
    let input = args
        .input
        .clone()
        .or_else(|| {
            let l = net.layers().iter().find(|l| l.kind == "Input")?;
            Some(net.blobs()[*l.tops.first()?].name.clone())
        })
        .ok_or_else(|| usage("the model has no Input layer; give --input".into()))?;
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
        .ok_or_else(|| usage("the model has no output blob; give --output".into()))?;
    Ok((input, output))
}

/// Runs `fpshader upscale`.
pub fn upscale(args: UpscaleArgs) -> Result<(), CliError> {
    let img = image::open(&args.image)
        .map_err(|e| usage(format!("{}: {e}", args.image.display())))?
        .to_rgb8();
    let pic = Picture {
        w: img.width() as usize,
        h: img.height() as usize,
        rgb: img.into_raw(),
    };
    if pic.w == 0 || pic.h == 0 {
        return Err(usage(format!("{}: an empty picture", args.image.display())));
    }
    let model = known(&args.param);
    let tiling = Tiling {
        prepadding: args
            .prepadding
            .or_else(|| model.map(|m| m.1.prepadding))
            .unwrap_or(10),
        align: args
            .align
            .or_else(|| model.map(|m| m.1.align))
            .unwrap_or(1)
            .max(1),
        scale: args.scale.or_else(|| model.and_then(|m| m.1.scale)),
    };
    if tiling.scale == Some(0) {
        return Err(usage("--scale 0: expected 1 or more".into()));
    }
    let mut opt = parse_opt(args.opt.as_deref())?;
    if let Some(n) = args.threads {
        opt.num_threads = n.max(1);
    }
    with_threads(args.threads, || {
        let ctx = device(args.cpu, None)?;
        let place = ctx
            .as_ref()
            .map_or_else(|| "CPU".to_string(), |c| c.describe());
        let net = load_net(&args.param, Some(&args.bin), ctx, opt)?;
        let (input, output) = blobs(&net, &args)?;
        eprintln!(
            "fpshader: {} on {place}: prepadding {}, align {}, scale {}",
            model.map_or("a model not recognized by name", |m| m.0),
            tiling.prepadding,
            tiling.align,
            tiling
                .scale
                .map_or_else(|| "measured".to_string(), |s| s.to_string())
        );
        let started = Instant::now();
        let done = run_tiles(&net, &pic, &args, tiling, &input, &output)?;
        let took = started.elapsed();
        let (ow, oh) = (done.w, done.h);
        image::save_buffer(
            &args.out,
            &done.rgb,
            u32::try_from(ow).map_err(|_| usage(format!("an output {ow} pixels wide")))?,
            u32::try_from(oh).map_err(|_| usage(format!("an output {oh} pixels high")))?,
            image::ColorType::Rgb8,
        )
        .map_err(|e| usage(format!("{}: {e}", args.out.display())))?;
        print(&format!(
            "upscaled {}×{} to {ow}×{oh} in {} tile(s) of up to {}²: {:.1} ms → {}\n",
            pic.w,
            pic.h,
            done.tiles,
            done.tile,
            took.as_secs_f64() * 1e3,
            args.out.display()
        ));
        Ok(())
    })
}

/// An upscaled picture.
struct Upscaled {
    /// RGB bytes, row-major.
    rgb: Vec<u8>,
    w: usize,
    h: usize,
    /// How many tiles went through, and their side.
    tiles: usize,
    tile: usize,
}

/// The picture through the net, tile by tile.
fn run_tiles(
    net: &Net,
    pic: &Picture,
    args: &UpscaleArgs,
    tiling: Tiling,
    input: &str,
    output: &str,
) -> Result<Upscaled, CliError> {
    let tile = if args.tile == 0 {
        pic.w.max(pic.h)
    } else {
        args.tile
    };
    let p = tiling.prepadding;
    let mut scale = tiling.scale;
    let mut out: Vec<u8> = Vec::new();
    let mut tiles = 0;
    // every tile goes in at one padded size (the picture's last row and column of tiles get
    // more repeated edge pixels): the GPU's pipelines, specialized per shape, are made once
    // for the whole picture instead of once per edge shape (on an H100, ~2 s per shape for
    // cunet against ~40 ms per tile)
    let (tile_w, tile_h) = (tile.min(pic.w), tile.min(pic.h));
    let padded = |t: usize| (t + 2 * p).div_ceil(tiling.align) * tiling.align;
    for y0 in (0..pic.h).step_by(tile_h) {
        for x0 in (0..pic.w).step_by(tile_w) {
            let (tw, th) = (tile_w.min(pic.w - x0), tile_h.min(pic.h - y0));
            let extra = (padded(tile_w) - tw - 2 * p, padded(tile_h) - th - 2 * p);
            let x = pic.padded_tile((x0, y0), (tw, th), p, extra)?;
            let (iw, ih) = (x.w, x.h);
            let mut ex = net.create_extractor()?;
            ex.input(input, x)?;
            let y = ex.extract(output)?;
            let [yw, yh, _, yc] = y.shape();
            if yc != 3 {
                return Err(usage(format!(
                    "the output `{output}` has {yc} channels, not 3"
                )));
            }
            // the first tile tells the scale of a model not known by name
            let s = *scale.get_or_insert_with(|| ((yw as f64 / iw as f64).round() as usize).max(1));
            let (ow, oh) = (pic.w * s, pic.h * s);
            if out.is_empty() {
                let bytes = ow
                    .checked_mul(oh)
                    .and_then(|n| n.checked_mul(3))
                    .ok_or_else(|| usage(format!("a {ow}×{oh} output")))?;
                out = vec![0u8; bytes];
            }
            // the model shrinks its input symmetrically: input pixel u lands at s * u + shift
            let origin = |yn: usize, n: usize| -> Result<usize, CliError> {
                let shift = (yn as isize - (s * n) as isize) / 2;
                usize::try_from((s * p) as isize + shift).map_err(|_| {
                    usage(format!(
                        "a {n}-pixel input gave {yn}: raise --prepadding or check --scale"
                    ))
                })
            };
            let (ox, oy) = (origin(yw, iw)?, origin(yh, ih)?);
            if ox + s * tw > yw || oy + s * th > yh {
                return Err(usage(format!(
                    "a {iw}×{ih} input gave {yw}×{yh}, too small for a {tw}×{th} tile at scale {s}"
                )));
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
    let s = scale.unwrap_or(1);
    Ok(Upscaled {
        rgb: out,
        w: pic.w * s,
        h: pic.h * s,
        tiles,
        tile,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_models_are_recognized_by_name() {
        let of = |n: &str| known(Path::new(n)).map(|m| m.1);
        let t = |prepadding, align, scale| {
            Some(Tiling {
                prepadding,
                align,
                scale: Some(scale),
            })
        };
        assert_eq!(
            of("models/waifu2x_upconv_7_photo_scale2x.param"),
            t(7, 1, 2)
        );
        assert_eq!(
            of("models-upconv_7_anime_style_art_rgb/noise1_model.param"),
            t(7, 1, 1)
        );
        assert_eq!(of("models-cunet/noise0_scale2.0x_model.param"), t(18, 4, 2));
        assert_eq!(of("waifu2x_cunet_noise0_scale2x.param"), t(18, 4, 2));
        assert_eq!(of("models-cunet/noise2_model.param"), t(28, 4, 1));
        assert_eq!(of("realcugan_se_up2x_no_denoise.param"), t(18, 4, 2));
        assert_eq!(of("models-se/up4x-conservative.param"), t(19, 4, 4));
        assert_eq!(of("realesrgan-x4plus.param"), t(10, 1, 4));
        assert_eq!(of("realesr-animevideov3-x2.param"), t(10, 1, 2));
        assert_eq!(of("my_net.param"), None);
    }
}
