//! VGF: custom-op attributes, partitioning against Arm's own converter, our files read by Arm's
//! `vgf_dump`, the reader under truncation and mutation, and compute-only VGFs run on the GPU
//! (lavapipe in CI, both shader paths) against a CPU reference.
//!
//! Arm's tools come from the oracle virtualenv that `cargo xtask test` fills (next to
//! `FPSHADER_NCNN_PYTHON`); without it the oracle tests fail unless `FPSHADER_SKIP_ARM=1`.
//! Every VGF loaded here carries SPIR-V from glslang or Arm's converter, which is what
//! `VgfModel::load`'s safety promise asks for.
#![cfg(not(fpshader_emulated))]

mod common;

use std::path::PathBuf;
use std::process::Command;

use fpshader::vgf::VgfModel;
use fpshader_build::vgf::{self, ModuleType, convert, custom_op, partition, tosa};
use fpshader_build::{Compiler, Settings};
use rayon::prelude::*;

#[path = "vgf/arm.rs"]
mod arm;
#[path = "vgf/attributes.rs"]
mod attributes;
#[path = "vgf/builders.rs"]
mod builders;
#[path = "vgf/emulation.rs"]
mod emulation;
#[path = "vgf/images.rs"]
mod images;
#[path = "vgf/models_ml.rs"]
mod models_ml;
#[path = "vgf/models_ops.rs"]
mod models_ops;
#[path = "vgf/partitions.rs"]
mod partitions;
#[path = "vgf/reader.rs"]
mod reader;
#[path = "vgf/reflection.rs"]
mod reflection;
#[path = "vgf/run.rs"]
mod run;
#[path = "vgf/segments.rs"]
mod segments;
#[path = "vgf/tensors.rs"]
mod tensors;

#[allow(unused_imports)]
pub(crate) use arm::*;
#[allow(unused_imports)]
pub(crate) use attributes::*;
#[allow(unused_imports)]
pub(crate) use builders::*;
#[allow(unused_imports)]
pub(crate) use emulation::*;
#[allow(unused_imports)]
pub(crate) use images::*;
#[allow(unused_imports)]
pub(crate) use models_ml::*;
#[allow(unused_imports)]
pub(crate) use models_ops::*;
#[allow(unused_imports)]
pub(crate) use partitions::*;
#[allow(unused_imports)]
pub(crate) use reader::*;
#[allow(unused_imports)]
pub(crate) use reflection::*;
#[allow(unused_imports)]
pub(crate) use run::*;
#[allow(unused_imports)]
pub(crate) use segments::*;
#[allow(unused_imports)]
pub(crate) use tensors::*;
