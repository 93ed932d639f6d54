//! `fpshader`: run ncnn models on any wgpu GPU (or the CPU) from the command line.
//!
//! `fpshader run MODEL.param [MODEL.bin] --input NAME=FILE.npy … [--output NAME …] [-o OUT]
//! [--cpu] [--opt fp32|fp16p,fp16s,…] [--path naga|passthrough] [--threads N] [--time]`
//!
//! `fpshader bench MODEL.param [--loops N] [--cpu] [--threads N] [--opt …] [--path …]
//! [--shape W[,H[,C]] | --shape NAME=W[,H[,C]] …]`, or `--all DIR`: ncnn's benchncnn (zero
//! weights, min/median/max ms).
//!
//! `fpshader upscale MODEL.param MODEL.bin IN.png OUT.png [--tile N] [--prepadding P]
//! [--align A] [--scale S] [--cpu]`: super-resolution in tiles, any picture size.

mod bench;
mod concurrent;
mod llm;
mod npy;
mod run;
mod upscale;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// What can go wrong, with the file or name it concerns.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The library refused (model, device, shapes).
    #[error(transparent)]
    Fpshader(#[from] fpshader::Error),
    /// A `.npy` file could not be read or written.
    #[error("{path}: {message}")]
    Npy {
        /// The file.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// The arguments do not fit the model.
    #[error("{0}")]
    Usage(String),
}

#[derive(Parser)]
#[command(
    name = "fpshader",
    version,
    about = "Run ncnn models on any wgpu GPU, or the CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a model on inputs from .npy files and write or print its outputs.
    Run(run::RunArgs),
    /// Time models like ncnn's benchncnn (zero weights unless --bin).
    Bench(bench::BenchArgs),
    /// Upscale a picture with an ncnn super-resolution model (waifu2x, Real-CUGAN, Real-ESRGAN),
    /// in tiles, whatever its size.
    Upscale(upscale::UpscaleArgs),
}

/// Writes `text` to stdout; a reader that went away (`| head`) is not an error.
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Bench(args) => bench::bench(args),
        Command::Upscale(args) => upscale::upscale(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fpshader: {}", fpshader::report(&e));
            ExitCode::FAILURE
        }
    }
}
