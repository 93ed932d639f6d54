//! Layers, one file per ncnn layer type (named for it, as ncnn's `src/layer/`), in a folder per
//! family: `activation`, `elementwise`, `shape`, `norm`, `matrix`, `conv`, `reduce`, `detection`,
//! `quant`. A type's
//! file holds its parameters, weights, [`Support`] flags, CPU math and GPU forward; the pieces
//! only its family uses sit beside it, those several families use in `shared`. Beside them the
//! contract ([`Layer`], [`Support`]), the run options ([`RunOptions`]), parameters and weights
//! as a model stores them, a layer's row map ([`rows`]) and the registry. A layer knows its math
//! and its flags; layouts, precision and placement are the net's.

// the contract and what a model stores
pub mod contract;
pub mod epilogue;
pub mod params;
pub mod registry;
pub mod rows;
pub mod run_options;
pub mod weights;

// layer families, each a folder of its types (one file each, named for the ncnn type)
pub mod activation;
pub mod conv;
pub mod detection;
pub mod elementwise;
pub mod matrix;
pub mod norm;
pub mod quant;
pub mod recurrent;
pub mod reduce;
pub mod shape;
pub mod signal;

// what several families share
pub mod shared;

pub use contract::{ChannelMoves, GpuSetup, Implements, Layer, Packs, Support, check_contract};
pub use epilogue::FusedActivation;
pub use params::{ParamDict, ParamValue};
pub use registry::{BUILTIN, Creator, Registry};
pub use run_options::{FeatureMask, RunOptions};
pub use weights::Weights;
