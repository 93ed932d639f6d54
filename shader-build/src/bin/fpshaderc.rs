//! `fpshaderc`: a glslc-like command line for shaders written with the ncnn GLSL extension.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use fpshader_build::manifest::Manifest;
use fpshader_build::meta::Reflection;
use fpshader_build::{
    Compiler, Define, Error, Optimization, OptionSet, Settings, Source, TargetEnv, reflect, vgf,
};

/// Compile GLSL compute shaders written with the ncnn GLSL extension.
#[derive(Parser)]
#[command(name = "fpshaderc", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the shader with the extension preamble for one option set inserted.
    Expand {
        /// The `.comp` file.
        file: PathBuf,
        /// Option set, comma separated (`fp16s,fp16a`); empty means fp32.
        #[arg(long, default_value = "")]
        opt: String,
        /// Print the preprocessed text (macros applied, includes inlined) instead.
        #[arg(long)]
        preprocess: bool,
        /// Write to this file instead of standard output.
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Reflect a `.spv` file, or a `.comp` file compiled for `--opt`: bindings, push constants,
    /// specialization constants, local size, required features.
    Reflect {
        /// A `.spv` file, or a `.comp` file to compile first.
        file: PathBuf,
        /// Option set when `file` is GLSL.
        #[arg(long, default_value = "")]
        opt: String,
        /// Print JSON instead of a summary.
        #[arg(long)]
        json: bool,
        /// Print the `implementation_attrs` JSON that makes the shader a TOSA
        /// `com.arm.VulkanCustomShader` op (read-only buffers are its operands, writable ones
        /// its results, in binding order; the code goes in as base64 SPIR-V).
        #[arg(long, conflicts_with = "json")]
        vgf_attrs: bool,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Compile one option set, or every variant, to `.spv` files plus `manifest.json`.
    Compile {
        /// The `.comp` file.
        file: PathBuf,
        /// Option set for a single variant, comma separated; empty means fp32.
        #[arg(long, default_value = "", conflicts_with = "all_variants")]
        opt: String,
        /// Compile every valid permutation of the options given by `--opts`.
        #[arg(long, requires = "opts")]
        all_variants: bool,
        /// Options the shader supports, for `--all-variants` (`fp16p,fp16s,fp16a,image,lmem`).
        #[arg(long)]
        opts: Option<String>,
        /// Output folder.
        #[arg(short = 'o', long)]
        output: PathBuf,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Compile every `.comp` of a folder in all its variants into Rust code that embeds them, as
    /// the build.rs helper does (`fpshader_build::Builder`): a `.rs` file plus `.spv` blobs, for
    /// a crate that ships compiled shaders instead of compiling them when it builds.
    Embed {
        /// The folder of `.comp` files.
        dir: PathBuf,
        /// Options every shader supports (`fp16p,fp16s,fp16a,fp16u,image,lmem`); fp32 always.
        #[arg(long, default_value = "")]
        opts: String,
        /// Output folder of the `.rs` file.
        #[arg(short = 'o', long)]
        output: PathBuf,
        /// The `.rs` file's name.
        #[arg(long, default_value = fpshader_build::DEFAULT_OUT_FILE)]
        file: String,
        /// Folder of the `.spv` blobs (default: `fpshader/` in the output folder).
        #[arg(long, requires = "blob_expr")]
        blobs: Option<PathBuf>,
        /// How the generated code finds `--blobs`: a Rust expression `concat!` takes, e.g.
        /// `::core::env!("CARGO_MANIFEST_DIR"), "/builtin/spirv"`.
        #[arg(long, requires = "blobs")]
        blob_expr: Option<String>,
        /// The path of the runtime crate in the generated code.
        #[arg(long, default_value = "::fpshader")]
        crate_path: String,
        /// Compiled-blob cache folder (default: `$FPSHADER_CACHE_DIR`, else none kept).
        #[arg(long)]
        cache: Option<PathBuf>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Convert a TOSA model (MLIR text) with Vulkan custom shader ops into a VGF file.
    Vgf {
        /// The model: TOSA MLIR text (`.mlir`) or a TOSA 1.0 flatbuffer (`.tosa`).
        input: PathBuf,
        /// The VGF file to write.
        #[arg(short = 'o', long)]
        output: PathBuf,
        /// Also write a scenario file for Arm's scenario runner (inputs/outputs as NAME.npy).
        #[arg(long, value_name = "OUT.json")]
        scenario: Option<PathBuf>,
        /// Lower ML partitions to compute shaders (runs on any Vulkan GPU).
        #[arg(long)]
        compute_only: bool,
        /// Write format 0.5.0 (read only by VGF library 0.11) instead of 0.4.3.
        #[arg(long)]
        format_0_5: bool,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Print a VGF file as JSON, with the fields Arm's `vgf_dump` prints.
    VgfDump {
        /// The `.vgf` file.
        file: PathBuf,
        /// Also write the file back through fpshader's writer (format 0.4.3) to this path.
        #[arg(long, value_name = "OUT.vgf")]
        rewrite: Option<PathBuf>,
    },
}

#[derive(Args)]
struct CommonArgs {
    /// Add an include folder.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Define a macro, `NAME` or `NAME=VALUE`.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,
    /// Target environment: vulkan1.0, vulkan1.1 (default), vulkan1.2, vulkan1.3.
    #[arg(long, default_value = "vulkan1.1")]
    target_env: String,
    /// Optimization: `-O0` (default), `-Os`, `-O`.
    #[arg(short = 'O', value_name = "LEVEL", num_args = 0..=1, default_value = "0", default_missing_value = "performance")]
    optimization: String,
}

impl CommonArgs {
    fn settings(&self) -> Result<Settings, Error> {
        let mut settings = Settings::default()
            .target_env(self.target_env.parse::<TargetEnv>()?)
            .optimization(self.optimization.parse::<Optimization>()?);
        settings.include_dirs = self.include.clone();
        settings.defines = self
            .define
            .iter()
            .map(|d| d.parse::<Define>())
            .collect::<Result<_, _>>()?;
        Ok(settings)
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(text) => {
            // a reader that closed the pipe early (`fpshaderc … | head`) is no error
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    eprintln!("fpshaderc: cannot write to standard output: {e}");
                    ExitCode::FAILURE
                }
                _ => ExitCode::SUCCESS,
            }
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the command; returns what goes to standard output.
fn run(cli: Cli) -> Result<String, Error> {
    match cli.command {
        Command::Expand {
            file,
            opt,
            preprocess,
            output,
            common,
        } => {
            let compiler = Compiler::new(common.settings()?)?;
            let source = Source::from_file(&file)?;
            let set = OptionSet::parse(&opt)?;
            let text = if preprocess {
                compiler.preprocess(&source, set)?.text
            } else {
                compiler.expand(&source, set)?
            };
            match output {
                Some(path) => write_file(&path, text.as_bytes()).map(|()| String::new()),
                None => Ok(text),
            }
        }
        Command::Reflect {
            file,
            opt,
            json,
            vgf_attrs,
            common,
        } => {
            let words = if file.extension().is_some_and(|e| e == "spv") {
                let bytes = read_file(&file)?;
                // validates the length and the header before the words are taken
                reflect::reflect_bytes(&bytes)?;
                fpshader_build::meta::le_words(&bytes).unwrap_or_default()
            } else {
                let compiler = Compiler::new(common.settings()?)?;
                compiler
                    .compile(&Source::from_file(&file)?, OptionSet::parse(&opt)?)?
                    .words
            };
            if vgf_attrs {
                let attrs =
                    vgf::custom_op::implementation_attrs(&words).map_err(vgf::VgfError::from)?;
                return Ok(attrs + "\n");
            }
            let reflection = reflect::reflect(&words)?;
            if json {
                let text = serde_json::to_string_pretty(&reflection)
                    .map_err(|e| json_error("a reflection", e))?;
                Ok(text + "\n")
            } else {
                Ok(describe_reflection(&reflection))
            }
        }
        Command::Compile {
            file,
            opt,
            all_variants,
            opts,
            output,
            common,
        } => {
            let settings = common.settings()?;
            let compiler = Compiler::new(settings.clone())?;
            let source = Source::from_file(&file)?;
            let set = if all_variants {
                let supported = OptionSet::parse(opts.as_deref().unwrap_or_default())?;
                compiler.compile_variants(&source, supported)?
            } else {
                compiler.compile_single(&source, OptionSet::parse(&opt)?)?
            };
            let manifest = Manifest::write(&set, &settings, &output)?;
            eprintln!(
                "{}: {} variants, {} unique blobs -> {}",
                file.display(),
                manifest.variants.len(),
                set.blobs.len(),
                output.display()
            );
            Ok(String::new())
        }
        Command::Embed {
            dir,
            opts,
            output,
            file,
            blobs,
            blob_expr,
            crate_path,
            cache,
            common,
        } => {
            let settings = common.settings()?;
            let mut builder = fpshader_build::Builder::new()
                .dir(&dir)
                .options(
                    &opts
                        .split(',')
                        .filter(|o| !o.is_empty())
                        .collect::<Vec<_>>(),
                )
                .target_env(settings.target_env)
                .optimization(settings.optimization)
                .out_dir(&output)
                .out_file(&file)
                .crate_path(&crate_path)
                .cargo_directives(false);
            for inc in &common.include {
                builder = builder.include_dir(inc);
            }
            for d in &settings.defines {
                builder = builder.define(&d.name, d.value.as_deref());
            }
            if let (Some(blobs), Some(expr)) = (blobs, blob_expr) {
                builder = builder.blobs_at(blobs, &expr);
            }
            // without a cache folder, a scratch one that goes when the command ends
            let scratch =
                std::env::temp_dir().join(format!("fpshaderc-cache-{}", std::process::id()));
            let kept = cache.or_else(|| std::env::var_os("FPSHADER_CACHE_DIR").map(PathBuf::from));
            let report = builder
                .cache_dir(kept.as_ref().unwrap_or(&scratch))
                .compile();
            if kept.is_none() {
                let _ = std::fs::remove_dir_all(&scratch);
            }
            let report = report?;
            eprintln!(
                "{}: {} shaders, {} variants, {} unique blobs ({} compiled) -> {}",
                dir.display(),
                report.shaders,
                report.variants,
                report.blobs,
                report.cache_misses,
                report.out_file.display()
            );
            Ok(String::new())
        }
        Command::VgfDump { file, rewrite } => vgf_dump(&file, rewrite.as_deref()),
        Command::Vgf {
            input,
            output,
            scenario,
            compute_only,
            format_0_5,
            common,
        } => {
            let name = input.display().to_string();
            let bytes = read_file(&input)?;
            let graph = if input.extension().is_some_and(|e| e == "tosa") {
                vgf::tosa::flatbuffer::parse(&name, &bytes).map_err(|e| Error::Vgf(e.into()))?
            } else {
                let text = String::from_utf8(bytes).map_err(|_| Error::Usage {
                    argument: name.clone(),
                    problem: "not UTF-8 MLIR text",
                })?;
                vgf::tosa::mlir::parse(&name, &text).map_err(|e| Error::Vgf(e.into()))?
            };
            let compiler = Compiler::new(common.settings()?)?;
            let options = vgf::convert::ConvertOptions {
                compute_only,
                version: if format_0_5 {
                    vgf::FormatVersion::V0_5_0
                } else {
                    vgf::FormatVersion::V0_4_3
                },
            };
            let converted = vgf::convert::convert(&graph, &compiler, options)?;
            for note in &converted.notes {
                eprintln!("fpshaderc: {note}");
            }
            let model = converted.vgf;
            write_file(&output, &vgf::write(&model))?;
            if let Some(path) = scenario {
                let relative = output
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                let json = vgf::scenario::scenario(&model, &relative);
                let text = serde_json::to_string_pretty(&json)
                    .map_err(|e| json_error("the scenario", e))?;
                write_file(&path, text.as_bytes())?;
            }
            eprintln!(
                "{}: {} segments, {} resources -> {}",
                input.display(),
                model.sequence.segments.len(),
                model.resources.len(),
                output.display()
            );
            Ok(String::new())
        }
    }
}

fn read_file(path: &std::path::Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn write_file(path: &std::path::Path, bytes: &[u8]) -> Result<(), Error> {
    std::fs::write(path, bytes).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn vgf_dump(file: &std::path::Path, rewrite: Option<&std::path::Path>) -> Result<String, Error> {
    let mut model = vgf::read(&read_file(file)?).map_err(|e| Error::Vgf(e.into()))?;
    let text = serde_json::to_string_pretty(&vgf::file::dump::dump(&model))
        .map_err(|e| json_error("the dump", e))?;
    if let Some(out) = rewrite {
        model.version = vgf::FormatVersion::V0_4_3;
        write_file(out, &vgf::write(&model))?;
    }
    Ok(text + "\n")
}

fn describe_reflection(r: &Reflection) -> String {
    let mut out = String::new();
    writeln!(
        out,
        "SPIR-V {}.{}, entry point `{}`",
        r.spirv_version.0, r.spirv_version.1, r.entry_point
    )
    .ok();
    writeln!(out, "local size: {:?}", r.local_size).ok();
    for b in r.bindings.iter() {
        writeln!(
            out,
            "binding set={} binding={} {:?} count={} {:?} {}",
            b.set, b.binding, b.kind, b.count, b.access, b.name
        )
        .ok();
    }
    if let Some(pc) = &r.push_constants {
        writeln!(out, "push constants: {} bytes", pc.size).ok();
        for m in pc.members.iter() {
            writeln!(
                out,
                "  +{} {} bytes {} {}",
                m.offset, m.size, m.ty.scalar, m.name
            )
            .ok();
        }
    }
    for s in r.spec_constants.iter() {
        writeln!(
            out,
            "spec constant id={} {} {} default={:#x} word={}",
            s.id, s.ty, s.name, s.default, s.word_offset
        )
        .ok();
    }
    writeln!(out, "features: {}", r.features).ok();
    out
}

/// `what` that serde_json could not write.
fn json_error(what: &'static str, e: serde_json::Error) -> Error {
    Error::Json {
        what,
        source: std::sync::Arc::new(e),
    }
}
