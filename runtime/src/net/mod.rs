//! Nets: ncnn models loaded from `.param`/`.bin`, the graph of layers and blobs, layout
//! conversion per layer flags, and execution on the GPU with CPU fallback ([`Extractor`]).

pub mod convert;
pub mod param;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::OptionSet;
use crate::error::{Error, Result};
use crate::gpu::{Context, Recorder};
use crate::layer::{
    FeatureMask, GpuSetup, Layer, Option, Registry, Support, Weights, check_contract,
};
use crate::tensor::{ElemType, GpuMat, Mat, PendingDownload, StorageFormat};

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
    pub producer: core::option::Option<usize>,
    /// The layers reading it (once per use).
    pub consumers: Vec<usize>,
}

/// An ncnn model: layers and blobs, options, and the device it runs on.
pub struct Net {
    /// How it runs; set before `load_model` (pipelines are made for it).
    pub opt: Option,
    layers: Vec<NetLayer>,
    blobs: Vec<Blob>,
    registry: Registry,
    ctx: core::option::Option<Arc<Context>>,
    gpu_options: OptionSet,
    ready: bool,
}

impl Default for Net {
    fn default() -> Self {
        Self::new()
    }
}

fn err_layer(l: &NetLayer, e: Error) -> Error {
    match e {
        Error::Unimplemented { flag, method, .. } => Error::Unimplemented {
            layer: l.name.clone(),
            kind: l.kind.clone(),
            flag,
            method,
        },
        Error::Shape(message) => Error::Layer {
            layer: l.name.clone(),
            kind: l.kind.clone(),
            message,
        },
        Error::Layer { layer, message, .. } if layer.is_empty() => Error::Layer {
            layer: l.name.clone(),
            kind: l.kind.clone(),
            message,
        },
        other => other,
    }
}

impl Net {
    /// An empty CPU net with ncnn's default options.
    pub fn new() -> Self {
        Net {
            opt: Option::default(),
            layers: Vec::new(),
            blobs: Vec::new(),
            registry: Registry::default(),
            ctx: None,
            gpu_options: OptionSet::FP32,
            ready: false,
        }
    }

    /// Runs GPU-capable layers on `ctx` (when `opt.use_vulkan_compute`).
    pub fn set_context(&mut self, ctx: Arc<Context>) {
        self.ctx = Some(ctx);
    }

    /// The device, if any.
    pub fn context(&self) -> core::option::Option<&Arc<Context>> {
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

    /// Reads a `.param` file.
    pub fn load_param(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::Param {
            file: path.display().to_string(),
            location: "open".into(),
            message: e.to_string(),
        })?;
        self.load_param_str(&path.display().to_string(), &text)
    }

    /// Reads `.param` text (`file` names it in errors).
    pub fn load_param_str(&mut self, file: &str, text: &str) -> Result<()> {
        self.load_parsed(file, param::parse(file, text)?)
    }

    /// Reads a `.param.bin` file (blobs are named by their index: `"0"`, `"1"`, …).
    pub fn load_param_bin(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| Error::Param {
            file: file.clone(),
            location: "open".into(),
            message: e.to_string(),
        })?;
        self.load_param_bin_bytes(&file, &bytes)
    }

    /// Reads `.param.bin` bytes (`file` names it in errors).
    pub fn load_param_bin_bytes(&mut self, file: &str, bytes: &[u8]) -> Result<()> {
        self.load_parsed(file, param::parse_bin(file, bytes)?)
    }

    fn load_parsed(&mut self, file: &str, parsed: param::ParamFile) -> Result<()> {
        let fail = |location: &str, message: String| Error::Param {
            file: file.to_string(),
            location: location.to_string(),
            message,
        };
        let mut layers = Vec::with_capacity(parsed.layers.len());
        let mut blobs: Vec<Blob> = Vec::new();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for (i, l) in parsed.layers.iter().enumerate() {
            let mut layer = self.registry.create(&l.kind).ok_or_else(|| {
                fail(
                    &l.location,
                    format!("unknown layer type `{}` (layer `{}`)", l.kind, l.name),
                )
            })?;
            let mut bottoms = Vec::new();
            for b in &l.bottoms {
                let &id = by_name.get(b).ok_or_else(|| {
                    fail(
                        &l.location,
                        format!(
                            "layer `{}` reads blob `{b}` before any layer writes it",
                            l.name
                        ),
                    )
                })?;
                blobs[id].consumers.push(i);
                bottoms.push(id);
            }
            let mut tops = Vec::new();
            for t in &l.tops {
                if let Some(&id) = by_name.get(t)
                    && blobs[id].producer.is_some()
                    && !l.bottoms.contains(t)
                {
                    return Err(fail(&l.location, format!("blob `{t}` is written twice")));
                }
                let id = blobs.len();
                blobs.push(Blob {
                    name: t.clone(),
                    producer: Some(i),
                    consumers: Vec::new(),
                });
                by_name.insert(t.clone(), id);
                tops.push(id);
            }
            layer.load_param(&l.params).map_err(|e| match e {
                Error::Shape(m) => fail(&l.location, format!("layer `{}`: {m}", l.name)),
                other => other,
            })?;
            layers.push(NetLayer {
                kind: l.kind.clone(),
                name: l.name.clone(),
                bottoms,
                tops,
                featmask: FeatureMask(l.params.int(31, 0).max(0) as u32),
                support: layer.support(),
                layer,
                on_gpu: false,
            });
        }
        self.layers = layers;
        self.blobs = blobs;
        self.ready = false;
        Ok(())
    }

    /// Reads weights from a `.bin` file, then prepares every layer (pipelines, uploads).
    pub fn load_model(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::Weights {
            layer: String::new(),
            offset: 0,
            message: format!("{}: {e}", path.display()),
        })?;
        self.load_model_bytes(&bytes)
    }

    /// Reads weights from `.bin` bytes, then prepares every layer.
    pub fn load_model_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        self.load_weights(Weights::from_bytes(bytes))
    }

    /// Zero weights for every layer (ncnn's `DataReaderFromEmpty`, for benchmarks).
    pub fn load_model_zeros(&mut self) -> Result<()> {
        self.load_weights(Weights::zeros())
    }

    fn load_weights(&mut self, mut weights: Weights<'_>) -> Result<()> {
        for l in &mut self.layers {
            weights.layer = l.name.clone();
            l.layer
                .load_model(&mut weights)
                .map_err(|e| err_layer(l, e))?;
        }
        self.create_pipelines()
    }

    fn create_pipelines(&mut self) -> Result<()> {
        let ctx = self.ctx.clone().filter(|_| self.opt.use_vulkan_compute);
        self.gpu_options = ctx.as_ref().map_or(OptionSet::FP32, |c| {
            self.opt.variant_options(c.allowed_options())
        });
        for l in &mut self.layers {
            let opt = self.opt.masked(l.featmask);
            let gpu = ctx
                .as_deref()
                .filter(|_| opt.use_vulkan_compute)
                .map(|ctx| GpuSetup {
                    ctx,
                    options: opt.variant_options(self.gpu_options),
                });
            // the device goes to every layer: flags may be set in create_pipeline (the seed's
            // "dynamically"), and support_vulkan is read afterwards, as ncnn does
            l.layer
                .create_pipeline(&opt, gpu)
                .map_err(|e| err_layer(l, e))?;
            l.support = l.layer.support();
            let wants_gpu = gpu.is_some() && l.support.vulkan;
            check_contract(l.support, l.layer.implements(), wants_gpu).map_err(
                |(flag, method)| Error::Unimplemented {
                    layer: l.name.clone(),
                    kind: l.kind.clone(),
                    flag,
                    method,
                },
            )?;
            l.on_gpu = wants_gpu;
            if let (true, Some(gpu)) = (l.on_gpu, gpu) {
                l.layer
                    .upload_model(gpu, &opt)
                    .map_err(|e| err_layer(l, e))?;
            }
        }
        self.ready = true;
        Ok(())
    }

    /// The index of blob `name`.
    pub fn blob_index(&self, name: &str) -> Result<usize> {
        self.blobs
            .iter()
            .position(|b| b.name == name)
            .ok_or_else(|| Error::Blob(format!("no blob named `{name}` in this net")))
    }

    /// A session for inputs and outputs.
    pub fn create_extractor(&self) -> Result<Extractor<'_>> {
        if !self.ready {
            return Err(Error::Blob(
                "the net has no model loaded: call load_model (or load_model_zeros) first".into(),
            ));
        }
        Ok(Extractor {
            net: self,
            opt: self.opt,
            cpu: vec![None; self.blobs.len()],
            gpu: vec![None; self.blobs.len()],
            shared: vec![false; self.blobs.len()],
            remaining: self.blobs.iter().map(|b| b.consumers.len()).collect(),
        })
    }
}

/// Inputs in, outputs out, running only the layers a requested blob needs.
pub struct Extractor<'n> {
    net: &'n Net,
    opt: Option,
    cpu: Vec<core::option::Option<Mat>>,
    gpu: Vec<core::option::Option<GpuMat>>,
    /// GPU blobs whose buffer another blob shares (Split), so in place needs a copy.
    shared: Vec<bool>,
    /// Readers of each blob that have not read it yet: a blob is released (light mode) or
    /// handed to an in-place layer without a copy only when no other reader is left.
    remaining: Vec<usize>,
}

impl Extractor<'_> {
    /// Keeps intermediate blobs (light mode off) or releases them after their last reader.
    pub fn set_light_mode(&mut self, on: bool) {
        self.opt.lightmode = on;
    }

    /// Sets input blob `name`.
    pub fn input(&mut self, name: &str, mat: Mat) -> Result<()> {
        let id = self.net.blob_index(name)?;
        self.cpu[id] = Some(mat);
        self.gpu[id] = None;
        Ok(())
    }

    fn available(&self, id: usize) -> bool {
        self.cpu[id].is_some() || self.gpu[id].is_some()
    }

    /// Computes blob `name` (fp32, elempack 1), running what it needs.
    pub fn extract(&mut self, name: &str) -> Result<Mat> {
        let (target, pending) = self.compute(name, true)?;
        let out = match (&self.cpu[target], pending) {
            (Some(m), _) => m.clone(),
            (None, Some(pending)) => self
                .net
                .ctx
                .as_deref()
                .ok_or_else(|| Error::Gpu("no device".into()))?
                .finish_download(pending)?,
            (None, None) => return Err(Error::Blob(format!("blob `{name}` was not produced"))),
        };
        let out = if out.elemtype() == ElemType::F32 {
            out
        } else {
            out.cast(ElemType::F32)
        };
        out.to_packing(1)
    }

    /// Sets input blob `name` from a device mat (ncnn's `input(VkMat)`): no upload.
    pub fn input_gpu(&mut self, name: &str, mat: GpuMat) -> Result<()> {
        let id = self.net.blob_index(name)?;
        self.gpu[id] = Some(mat);
        self.cpu[id] = None;
        self.shared[id] = true;
        Ok(())
    }

    /// Computes blob `name` and leaves it on the device as the last layer made it (ncnn's
    /// `extract(VkMat)`): packed and in the net's storage format; a CPU result is uploaded.
    pub fn extract_gpu(&mut self, name: &str) -> Result<GpuMat> {
        let (target, _) = self.compute(name, false)?;
        let ctx = self
            .net
            .ctx
            .clone()
            .ok_or_else(|| Error::Gpu("the net has no device".into()))?;
        match (&self.gpu[target], &self.cpu[target]) {
            (Some(g), _) => Ok(g.clone()),
            (None, Some(m)) => ctx.upload_mat(m, self.net.gpu_options),
            (None, None) => Err(Error::Blob(format!("blob `{name}` was not produced"))),
        }
    }

    /// Runs what blob `name` needs; its index. With `download`, a target left on the device
    /// is also read back in the same submission: the pending download.
    fn compute(
        &mut self,
        name: &str,
        download: bool,
    ) -> Result<(usize, core::option::Option<PendingDownload>)> {
        let target = self.net.blob_index(name)?;
        // the layers to run: producers of missing blobs, back from the target
        let mut needed = vec![false; self.net.layers.len()];
        let mut stack = vec![target];
        while let Some(b) = stack.pop() {
            if self.available(b) {
                continue;
            }
            let Some(p) = self.net.blobs[b].producer else {
                return Err(Error::Blob(format!(
                    "blob `{}` has no producer",
                    self.net.blobs[b].name
                )));
            };
            let l = &self.net.layers[p];
            if l.kind == "Input" {
                return Err(Error::Blob(format!(
                    "input `{}` was not given (Extractor::input)",
                    self.net.blobs[b].name
                )));
            }
            if !needed[p] {
                needed[p] = true;
                stack.extend(l.bottoms.iter().copied());
            }
        }
        let mut remaining = std::mem::take(&mut self.remaining);
        let ctx = self.net.ctx.clone();
        let mut rec: core::option::Option<Recorder<'_>> = None;
        let net = self.net;
        for (i, l) in net.layers.iter().enumerate() {
            if !needed[i] {
                continue;
            }
            let result = if l.kind == "Split" {
                self.split(i, &mut remaining, target)
            } else if l.on_gpu && self.gpu_takes(l) {
                let ctx = ctx
                    .as_deref()
                    .ok_or_else(|| Error::Gpu("no device".into()))?;
                let r = rec.get_or_insert_with(|| ctx.recorder());
                r.set_label(&l.name);
                self.forward_gpu(i, r, &mut remaining, target)
            } else {
                // the CPU needs whatever GPU work came before
                if let Some(r) = rec.take() {
                    r.submit_and_wait()?;
                }
                self.forward_cpu(i, &mut remaining, target)
            };
            if let Err(e) = result {
                self.remaining = remaining;
                return Err(err_layer(l, e));
            }
        }
        self.remaining = remaining;
        let pending = match (&self.cpu[target], &self.gpu[target], ctx.as_deref()) {
            (None, Some(g), Some(ctx)) if download => {
                let r = rec.get_or_insert_with(|| ctx.recorder());
                r.set_label("(download)");
                Some(ctx.record_download(r, g)?)
            }
            _ => None,
        };
        if let Some(r) = rec.take() {
            r.submit_and_wait()?;
        }
        Ok((target, pending))
    }

    /// Whether GPU layer `l` runs on the device for the blobs it has now: GPU mats are at most
    /// 3-D (image mats exactly 3-D), and a layer may decline shapes it has no shader for; then
    /// it runs on the CPU this time.
    fn gpu_takes(&self, l: &NetLayer) -> bool {
        let shapes: Vec<(u8, [usize; 4])> = l
            .bottoms
            .iter()
            .map(|&b| match (&self.cpu[b], &self.gpu[b]) {
                (Some(m), _) => (m.dims, m.shape()),
                (None, Some(g)) => (g.dims, g.shape()),
                (None, None) => (0, [0; 4]),
            })
            .collect();
        let image = self
            .opt
            .masked(l.featmask)
            .variant_options(self.net.gpu_options)
            .contains(crate::Opt::Image);
        let min_dims = if image { 3 } else { 1 };
        shapes.iter().all(|(dims, _)| (min_dims..=3).contains(dims)) && l.layer.gpu_accepts(&shapes)
    }

    /// The CPU mat of blob `b` for a reader: taken if nothing else reads it later (light mode)
    /// or `inplace` is false and it is kept, else a copy. Downloads GPU-only blobs.
    fn cpu_bottom(&mut self, b: usize, remaining: &mut [usize], target: usize) -> Result<Mat> {
        if self.cpu[b].is_none() {
            let g = self.gpu[b].as_ref().ok_or_else(|| {
                Error::Blob(format!("blob `{}` is missing", self.net.blobs[b].name))
            })?;
            let ctx = self
                .net
                .ctx
                .as_deref()
                .ok_or_else(|| Error::Gpu("no device".into()))?;
            let m = ctx.download_mat(g)?;
            self.cpu[b] = Some(m);
            if self.opt.lightmode {
                self.gpu[b] = None;
            }
        }
        remaining[b] = remaining[b].saturating_sub(1);
        let last = remaining[b] == 0 && self.opt.lightmode && b != target;
        if last {
            self.cpu[b]
                .take()
                .ok_or_else(|| Error::Blob("blob vanished".into()))
        } else {
            self.cpu[b]
                .clone()
                .ok_or_else(|| Error::Blob("blob vanished".into()))
        }
    }

    /// Split: every top is the bottom, where it is. A device blob stays on the device (its
    /// tops share the buffer, so an in-place reader copies while another top still holds it)
    /// and nothing waits for the recorded work.
    fn split(&mut self, i: usize, remaining: &mut [usize], target: usize) -> Result<()> {
        let l = &self.net.layers[i];
        let b = *l
            .bottoms
            .first()
            .ok_or_else(|| Error::Shape("Split has no input".into()))?;
        remaining[b] = remaining[b].saturating_sub(1);
        let last = remaining[b] == 0 && self.opt.lightmode && b != target;
        let (cpu, gpu) = if last {
            (self.cpu[b].take(), self.gpu[b].take())
        } else {
            (self.cpu[b].clone(), self.gpu[b].clone())
        };
        if cpu.is_none() && gpu.is_none() {
            return Err(Error::Blob(format!(
                "blob `{}` is missing",
                self.net.blobs[b].name
            )));
        }
        let shared = self.shared[b];
        for &t in &l.tops {
            self.cpu[t] = cpu.clone();
            self.gpu[t] = gpu.clone();
            self.shared[t] = shared;
        }
        Ok(())
    }

    fn forward_cpu(&mut self, i: usize, remaining: &mut [usize], target: usize) -> Result<()> {
        let net = self.net;
        let l = &net.layers[i];
        let opt = self.opt.masked(l.featmask);
        let s = l.support;
        let mut bottoms = Vec::with_capacity(l.bottoms.len());
        for b in &l.bottoms {
            let m = self.cpu_bottom(*b, remaining, target)?;
            bottoms.push(convert::to_cpu_layout(m, s, &opt)?);
        }
        let tops = match (s.one_blob_only, s.inplace) {
            (true, true) => {
                let mut m = bottoms
                    .pop()
                    .ok_or_else(|| Error::Shape("no input".into()))?;
                l.layer.forward_inplace(&mut m, &opt)?;
                vec![m]
            }
            (true, false) => {
                let m = bottoms
                    .first()
                    .ok_or_else(|| Error::Shape("no input".into()))?;
                vec![l.layer.forward(m, &opt)?]
            }
            (false, true) => {
                l.layer.forward_many_inplace(&mut bottoms, &opt)?;
                bottoms
            }
            (false, false) => l.layer.forward_many(&bottoms, &opt)?,
        };
        if tops.len() < l.tops.len() {
            return Err(Error::Shape(format!(
                "produced {} outputs for {} tops",
                tops.len(),
                l.tops.len()
            )));
        }
        for (t, m) in l.tops.iter().zip(tops) {
            self.cpu[*t] = Some(m);
            self.gpu[*t] = None;
        }
        Ok(())
    }

    /// The GPU mat of blob `b` in the layout layer `l` takes: uploaded if it is only on the
    /// host, repacked, and copied when an in-place layer must not touch a shared buffer. The
    /// blob's last reader takes the mat out of the extractor (light mode).
    #[allow(clippy::too_many_arguments)] // one blob, one layer's needs, the run's bookkeeping
    fn gpu_bottom(
        &mut self,
        rec: &mut Recorder<'_>,
        b: usize,
        support: Support,
        opt: &Option,
        options: OptionSet,
        inplace: bool,
        remaining: &mut [usize],
        target: usize,
    ) -> Result<GpuMat> {
        let ctx = rec.context();
        if self.gpu[b].is_none() {
            let m = self.cpu[b].as_ref().ok_or_else(|| {
                Error::Blob(format!("blob `{}` is missing", self.net.blobs[b].name))
            })?;
            let channels = m.outer() * m.elempack;
            let pack = convert::gpu_elempack(m.elempack, channels, support, opt);
            let m = if m.elempack == pack {
                m.clone()
            } else {
                m.to_packing(pack)?
            };
            self.gpu[b] = Some(ctx.record_upload(rec, &m, options)?);
            if self.opt.lightmode {
                self.cpu[b] = None;
            }
        }
        remaining[b] = remaining[b].saturating_sub(1);
        let last = remaining[b] == 0 && self.opt.lightmode && b != target;
        let g = if last {
            self.gpu[b].take()
        } else {
            self.gpu[b].clone()
        }
        .ok_or_else(|| Error::Blob("blob vanished".into()))?;
        // another storage layout (a feature mask): through the host
        let g = if StorageFormat::of(options, g.elempack) != g.format
            || g.options.contains(crate::Opt::Image) != options.contains(crate::Opt::Image)
        {
            let mut flush = ctx.recorder();
            std::mem::swap(rec, &mut flush);
            flush.submit_and_wait()?;
            let host = ctx.download_mat(&g)?;
            ctx.record_upload(rec, &host, options)?
        } else {
            g
        };
        let channels = g.c * g.elempack;
        let pack = convert::gpu_elempack(g.elempack, channels, support, opt);
        let g = if g.elempack == pack {
            g
        } else {
            ctx.record_packing(rec, &g, pack)?
        };
        // the reader may write the blob only when no one else can see it (the mat taken out
        // of the extractor is the only handle unless another blob or the user aliases it)
        let exclusive = last && !self.shared[b] && !g.buffer_is_shared();
        if inplace && !exclusive {
            return ctx.record_copy(rec, &g);
        }
        Ok(g)
    }

    fn forward_gpu(
        &mut self,
        i: usize,
        rec: &mut Recorder<'_>,
        remaining: &mut [usize],
        target: usize,
    ) -> Result<()> {
        let net = self.net;
        let l = &net.layers[i];
        let opt = self.opt.masked(l.featmask);
        let options = opt.variant_options(net.gpu_options);
        let s = l.support;
        // blobs this layer reads last leave the extractor here: their buffers go back to the
        // pool when `bottoms` drops
        let mut bottoms = Vec::with_capacity(l.bottoms.len());
        for b in &l.bottoms {
            bottoms.push(self.gpu_bottom(rec, *b, s, &opt, options, s.inplace, remaining, target)?);
        }
        let tops = match (s.one_blob_only, s.inplace) {
            (true, true) => {
                let mut m = bottoms
                    .pop()
                    .ok_or_else(|| Error::Shape("no input".into()))?;
                l.layer.forward_gpu_inplace(&mut m, rec, &opt)?;
                vec![m]
            }
            (true, false) => {
                let m = bottoms
                    .first()
                    .ok_or_else(|| Error::Shape("no input".into()))?;
                vec![l.layer.forward_gpu(m, rec, &opt)?]
            }
            (false, _) => l.layer.forward_gpu_many(&bottoms, rec, &opt)?,
        };
        for (t, m) in l.tops.iter().zip(tops) {
            self.gpu[*t] = Some(m);
            self.cpu[*t] = None;
            self.shared[*t] = false;
        }
        Ok(())
    }
}
