//! Nets: ncnn models loaded from `.param`/`.bin`, the graph of layers and blobs, layout
//! conversion per layer flags, and execution on the GPU with CPU fallback ([`Extractor`]).

mod absorb;
mod append;
mod bands;
mod chain;
pub mod convert;
mod extractor;
mod fuse;
mod int8;
mod load;
pub mod param;
mod placement;
mod record;
mod threads;

pub use extractor::Extractor;
pub use record::{CpuTime, Placed, RunRecord};

use std::sync::Arc;

use crate::OptionSet;
use crate::error::{BlobError, Error, InputError, ModelError, Result};
use crate::gpu::Context;
use crate::layer::{FeatureMask, Layer, Registry, RunOptions, Support};

/// What the extractor's `forward_gpu` (in `placement`) did.
enum Forwarded {
    /// Recorded its forward.
    Ran,
    /// Recorded its forward with the layers of these indices in its epilogue.
    Fused([Option<usize>; 2]),
    /// Met a limit of the device; nothing recorded.
    DeviceLimit,
}

/// One layer of a net, with what the net decided about it.
pub struct NetLayer {
    /// The ncnn type.
    pub kind: String,
    /// The name.
    pub name: String,
    /// Input blobs.
    pub bottoms: Vec<usize>,
    /// Output blobs.
    pub tops: Vec<usize>,
    layer: Box<dyn Layer>,
    featmask: FeatureMask,
    support: Support,
    /// The variant options its pipelines were made with (the net's, less its feature mask).
    gpu_options: OptionSet,
    on_gpu: bool,
}

impl NetLayer {
    /// Its flags after `create_pipeline`.
    pub fn support(&self) -> Support {
        self.support
    }

    /// Whether it runs on the device.
    pub fn on_gpu(&self) -> bool {
        self.on_gpu
    }
}

/// One blob: who makes it and who reads it.
#[derive(Clone, Debug)]
pub struct Blob {
    /// Its name.
    pub name: String,
    /// The layer writing it.
    pub producer: Option<usize>,
    /// The layers reading it (once per use).
    pub consumers: Vec<usize>,
}

/// An ncnn model: layers and blobs, options, and the device it runs on.
pub struct Net {
    /// How it runs; set before `load_model` (pipelines are made for it).
    pub opt: RunOptions,
    layers: Vec<NetLayer>,
    blobs: Vec<Blob>,
    registry: Registry,
    ctx: Option<Arc<Context>>,
    gpu_options: OptionSet,
    ready: bool,
    /// The channel gathers' tables on the device ([`chain`]).
    tables: chain::Tables,
    /// The channel orders absorbed into the layers before them ([`absorb`]).
    absorbed: Vec<absorb::Absorbed>,
}

impl Default for Net {
    fn default() -> Self {
        Self::new()
    }
}

/// The input of a one-blob layer: the first, as ncnn takes `bottoms[0]`.
fn single_input<T>(bottoms: Vec<T>) -> Result<T> {
    bottoms.into_iter().next().ok_or_else(no_input)
}

/// What a one-blob layer given no input is.
fn no_input() -> Error {
    InputError::Count {
        got: 0,
        expected: "1",
    }
    .into()
}

/// Checks that a layer gave an output for each of its tops.
fn check_tops(got: usize, tops: usize) -> Result<()> {
    if got < tops {
        return Err(InputError::Values {
            what: "outputs for its tops",
            got,
            expected: tops,
        }
        .into());
    }
    Ok(())
}

fn err_layer(l: &NetLayer, e: Error) -> Error {
    match e {
        // these name their layer already
        e @ (Error::Layer { .. }
        | Error::Model(
            ModelError::Weights { .. }
            | ModelError::Unimplemented { .. }
            | ModelError::LayerParam { .. },
        )) => e,
        other => Error::Layer {
            layer: l.name.clone(),
            kind: l.kind.clone(),
            source: Box::new(other),
        },
    }
}

impl Net {
    /// An empty CPU net with ncnn's default options.
    pub fn new() -> Self {
        Net {
            opt: RunOptions::default(),
            layers: Vec::new(),
            blobs: Vec::new(),
            registry: Registry::default(),
            ctx: None,
            gpu_options: OptionSet::FP32,
            ready: false,
            tables: chain::Tables::default(),
            absorbed: Vec::new(),
        }
    }

    /// Runs GPU-capable layers on `ctx` (when `opt.use_vulkan_compute`).
    pub fn set_context(&mut self, ctx: Arc<Context>) {
        self.ctx = Some(ctx);
    }

    /// The device, if any.
    pub fn context(&self) -> Option<&Arc<Context>> {
        self.ctx.as_ref()
    }

    /// Registers a user layer type (before `load_param`).
    pub fn register_layer(
        &mut self,
        kind: &str,
        creator: impl Fn() -> Box<dyn Layer> + Send + Sync + 'static,
    ) {
        self.registry.register(kind, Arc::new(creator));
    }

    /// The layers.
    pub fn layers(&self) -> &[NetLayer] {
        &self.layers
    }

    /// The blobs.
    pub fn blobs(&self) -> &[Blob] {
        &self.blobs
    }

    /// The index of blob `name`.
    pub fn blob_index(&self, name: &str) -> Result<usize> {
        self.blobs
            .iter()
            .position(|b| b.name == name)
            .ok_or_else(|| {
                BlobError::Unknown {
                    name: name.to_string(),
                }
                .into()
            })
    }

    /// A session for inputs and outputs.
    pub fn create_extractor(&self) -> Result<Extractor<'_>> {
        if !self.ready {
            return Err(BlobError::NotLoaded.into());
        }
        Ok(Extractor {
            net: self,
            opt: self.opt,
            cpu: vec![None; self.blobs.len()],
            gpu: vec![None; self.blobs.len()],
            bands: vec![None; self.blobs.len()],
            shared: vec![false; self.blobs.len()],
            remaining: self.blobs.iter().map(|b| b.consumers.len()).collect(),
            record: RunRecord::default(),
        })
    }
}
