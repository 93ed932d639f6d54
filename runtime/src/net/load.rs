//! Loading: `.param` (text or binary) into layers and blobs, `.bin` weights, then each
//! layer's pipelines and uploads, with its placement decided from its flags.

use std::collections::HashMap;
use std::path::Path;

use super::{Blob, Net, NetLayer, err_layer, param};
use crate::OptionSet;
use crate::error::{Error, ModelError, Result};
use crate::layer::{FeatureMask, GpuSetup, Weights, check_contract};

impl Net {
    /// Reads a `.param` file.
    pub fn load_param(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::Param {
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
        let bytes = std::fs::read(path).map_err(|e| ModelError::Param {
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
        let fail = |location: &str, message: String| ModelError::Param {
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
                    return Err(fail(&l.location, format!("blob `{t}` is written twice")).into());
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
            layer.set_top_count(tops.len());
            layer
                .load_param(&l.params)
                .map_err(|e| ModelError::LayerParam {
                    file: file.to_string(),
                    location: l.location.clone(),
                    source: Box::new(Error::Layer {
                        layer: l.name.clone(),
                        kind: l.kind.clone(),
                        source: Box::new(e),
                    }),
                })?;
            layers.push(NetLayer {
                kind: l.kind.clone(),
                name: l.name.clone(),
                bottoms,
                tops,
                featmask: FeatureMask(l.params.int(31, 0).max(0) as u32),
                support: layer.support(),
                layer,
                gpu_options: OptionSet::FP32,
                on_gpu: false,
            });
        }
        self.layers = layers;
        self.blobs = blobs;
        self.absorbed.clear();
        self.ready = false;
        Ok(())
    }

    /// Reads weights from a `.bin` file, then prepares every layer (pipelines, uploads).
    pub fn load_model(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| ModelError::Weights {
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
        self.absorb_channel_orders();
        self.create_pipelines()
    }

    fn create_pipelines(&mut self) -> Result<()> {
        let ctx = self.ctx.clone().filter(|_| self.opt.use_vulkan_compute);
        self.gpu_options = ctx.as_ref().map_or(OptionSet::FP32, |c| {
            self.opt.variant_options(c.allowed_options())
        });
        for l in &mut self.layers {
            let opt = self.opt.masked(l.featmask);
            let options = opt.variant_options(self.gpu_options);
            l.gpu_options = options;
            // image nets run a layer that takes no images on the CPU (vulkan_images is read
            // before create_pipeline, which then gets no device)
            let images = !options.contains(crate::Opt::Image) || l.layer.support().vulkan_images;
            let gpu = ctx
                .as_deref()
                .filter(|_| opt.use_vulkan_compute && images)
                .map(|ctx| GpuSetup { ctx, options });
            // the device goes to every other layer: flags may be set in create_pipeline (the
            // seed's "dynamically"), and support_vulkan is read afterwards, as ncnn does
            l.layer
                .create_pipeline(&opt, gpu)
                .map_err(|e| err_layer(l, e))?;
            l.support = l.layer.support();
            let wants_gpu = gpu.is_some() && l.support.vulkan;
            check_contract(l.support, l.layer.implements(), wants_gpu).map_err(
                |(flag, method)| ModelError::Unimplemented {
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
        self.plan_int8_storage();
        self.plan_appends();
        self.ready = true;
        Ok(())
    }
}
