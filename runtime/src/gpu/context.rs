//! The device a program runs on: adapter choice, requested features, the options the device
//! allows, and which wgpu path takes the SPIR-V.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::OptionSet;
use crate::error::{DeviceError, Error, Result};
use crate::gpu::health::{self, Health};
use crate::gpu::options::Options;
use crate::gpu::pipeline::{Pipeline, PipelineKey};
use crate::gpu::pool::BufferPool;
use crate::gpu::stats::StatCounters;
use crate::gpu::submitter::Submitter;
use crate::gpu::timing::{DispatchTime, Timings};
use crate::meta::Features;

/// How SPIR-V reaches the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShaderPath {
    /// Vulkan only: raw SPIR-V, explicit layouts, specialization patched into the defaults.
    Passthrough,
    /// Any backend: naga translates frozen SPIR-V (specialization folded on the host).
    Naga,
}

impl std::str::FromStr for ShaderPath {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "passthrough" => Ok(ShaderPath::Passthrough),
            "naga" => Ok(ShaderPath::Naga),
            _ => Err(DeviceError::Config {
                setting: "the shader path",
                value: s.to_string(),
                expected: "`passthrough` or `naga`",
            }
            .into()),
        }
    }
}

/// How to pick and open a device.
#[derive(Clone, Debug, Default)]
pub struct ContextOptions {
    /// Backends to search; default: `WGPU_BACKEND`, else Vulkan/Metal/DX12, and GL only if
    /// those have no (matching) adapter.
    pub backends: Option<wgpu::Backends>,
    /// Only adapters whose name contains this (case-insensitive); default: `FPSHADER_ADAPTER`.
    pub adapter_name: Option<String>,
    /// Force a shader path; default: `FPSHADER_PATH`, else passthrough on Vulkan, naga elsewhere.
    pub path: Option<ShaderPath>,
    /// Narrow the options below what the device allows (ncnn's `Option`).
    pub options: Option<Options>,
    /// Whether an adapter that emulates a GPU on the CPU (wgpu's `DeviceType::Cpu`: lavapipe,
    /// llvmpipe, SwiftShader) may be picked when no real GPU matches. Default: only when the
    /// adapter is asked for by name ([`adapter_name`](Self::adapter_name) or
    /// `FPSHADER_ADAPTER`): for models fpshader's own CPU path is many times faster than an
    /// emulated GPU, and tests that want the emulation say so.
    pub allow_cpu_adapter: bool,
    /// How long a wait for the device may take before it is a [`DeviceError::Timeout`];
    /// default: `FPSHADER_WAIT_TIMEOUT` (seconds), else
    /// [`DEFAULT_WAIT_TIMEOUT`](crate::gpu::DEFAULT_WAIT_TIMEOUT).
    pub wait_timeout: Option<std::time::Duration>,
    /// How long a wait for the device polls it before blocking in the driver (CUDA's
    /// `cudaDeviceScheduleSpin`, then its blocking sync): a blocked waiter wakes tens of
    /// microseconds after the device finished. One waiter of a context polls at a time, the
    /// others block. Default: `FPSHADER_SPIN_WAIT` (microseconds),
    /// else [`DEFAULT_SPIN_WAIT`](crate::gpu::DEFAULT_SPIN_WAIT) on a real GPU and none on an
    /// emulated one, whose work runs on the cores a spinning waiter would take.
    pub spin_wait: Option<std::time::Duration>,
    /// Bytes of device memory the context's buffers may hold; an allocation past it is
    /// [`Error::OutOfMemory`]. Default: `FPSHADER_MEMORY_BUDGET` (bytes), else the host's
    /// available memory on an emulated GPU and no budget on a real one (its driver's refusal
    /// is reported the same way).
    pub memory_budget: Option<u64>,
    /// The limits to open the device with, each at most the adapter's; default: the
    /// adapter's. Lower ones run a model as a smaller device would (fewer workgroups per
    /// dimension, smaller bindings).
    pub limits: Option<wgpu::Limits>,
    /// Whether int8 layers may use the device's int8 arithmetic: dot products
    /// ([`Context::integer_dot_product`]) and int8 matrices
    /// ([`Context::int8_cooperative_matrix`]); default: wherever the device has them. `false`
    /// runs the exact fallback shaders, as a device without them would.
    pub int8_arithmetic: Option<bool>,
    /// Whether to open a Vulkan device with VK_NV_cooperative_matrix2 (workgroup-scope
    /// matrices loaded as tensors: the GEMMs' fastest tiles on NVIDIA) where the adapter
    /// offers it; default: `FPSHADER_MATRIX2` (`0` or `1`), else yes. wgpu has no feature for
    /// the extension, so the device is opened through wgpu-hal (`open_with_callback`) with
    /// everything wgpu would enable plus the extension; a device of the program's own
    /// ([`Context::from_wgpu`]) never takes these shaders. Where the adapter also offers the
    /// extension's reductions and conversions they are enabled too, for the attention's flash
    /// form ([`Context::workgroup_attention`]). `false` opens it as wgpu alone would, and the
    /// GEMMs and the attention take VK_KHR_cooperative_matrix's subgroup tiles.
    pub workgroup_matrices: Option<bool>,
    /// A folder to write each pipeline's SPIR-V into as the driver receives it, with its
    /// specialization beside it, for `bench/pipeline_stats.rs` to read the driver's register
    /// and workgroup-memory figures; default: `FPSHADER_DUMP_SPIRV`, else none.
    pub spirv_dump: Option<std::path::PathBuf>,
}

/// A wgpu device plus what fpshader knows about it.
pub struct Context {
    /// The adapter's description.
    pub adapter_info: wgpu::AdapterInfo,
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    features: wgpu::Features,
    limits: wgpu::Limits,
    path: ShaderPath,
    allowed: OptionSet,
    pub(crate) pipelines: Mutex<HashMap<PipelineKey, Arc<Pipeline>>>,
    /// The pipelines by what was asked for (the options a layer passes, not the variant's):
    /// layers ask again for every dispatch whose pipeline depends on shapes, and choosing the
    /// variant each time (sorting the candidates) took 15% of a shufflenet run's recording.
    pub(crate) requested: Mutex<HashMap<PipelineKey, Arc<Pipeline>>>,
    /// Storage buffers no mat holds any more, for [`Context::storage_buffer`] to hand out
    /// again (ncnn's blob allocator).
    pub(crate) pool: Arc<BufferPool>,
    /// Readback buffers read and unmapped, for [`Recorder::record_readback`] to take again:
    /// a new one per download cost about 1 ms per 1.5 MB on the NVIDIA driver (its fresh
    /// mapping faults its pages in as the host reads them).
    pub(crate) readbacks: Mutex<Vec<wgpu::Buffer>>,
    /// The thread that submits recorders' chunks, in order.
    pub(crate) submitter: Submitter,
    pub(crate) dummy: wgpu::Buffer,
    /// Whether cooperative-matrix variants can run ([`Context::cooperative_matrix`]).
    cooperative_matrix: bool,
    /// What a device opened with VK_NV_cooperative_matrix2 offers of it, where its shaders
    /// can run ([`Context::workgroup_matrices`], [`Context::workgroup_attention`]).
    matrix2: Option<super::matrix2::Matrix2Caps>,
    /// The device's int8 abilities (passthrough path only; its dot products and matrices off
    /// where [`ContextOptions::int8_arithmetic`] is `false`).
    int8: super::vulkan_caps::Int8Caps,
    pub(crate) timings: Timings,
    pub(crate) stats: StatCounters,
    /// Bound where a shader's `sampler*D` was split: loads are texel fetches, so nearest.
    pub(crate) sampler: wgpu::Sampler,
    /// What the device's callbacks reported ([`crate::gpu::health`]).
    pub(crate) health: Arc<Health>,
    pub(crate) wait_timeout: std::time::Duration,
    pub(crate) spin_wait: std::time::Duration,
    /// Whether a waiter is polling now ([`ContextOptions::spin_wait`]).
    pub(crate) spinning: std::sync::atomic::AtomicBool,
    pub(crate) memory_budget: Option<u64>,
    /// Where pipelines' SPIR-V is written ([`ContextOptions::spirv_dump`]).
    pub(crate) spirv_dump: Option<std::path::PathBuf>,
}

/// The adapters of `backends`, from an instance that initializes only those backends.
fn enumerate(backends: wgpu::Backends) -> Vec<wgpu::Adapter> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = backends;
    let instance = wgpu::Instance::new(desc);
    pollster::block_on(instance.enumerate_adapters(backends))
}

/// Features fpshader variants can use, requested whenever the adapter offers them.
fn wanted_features() -> wgpu::Features {
    wgpu::Features::SHADER_F16
        | wgpu::Features::IMMEDIATES
        | wgpu::Features::PASSTHROUGH_SHADERS
        | wgpu::Features::SUBGROUP
        | wgpu::Features::SHADER_INT64
        | wgpu::Features::SHADER_I16
        | wgpu::Features::SHADER_F64
        // device time per dispatch for `fpshader bench --profile`
        | wgpu::Features::TIMESTAMP_QUERY
        // r16f storage images (fp16-storage image variants) are not a WebGPU storage format
        | wgpu::Features::TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES
        // VK_KHR_cooperative_matrix for the tensor-core GEMM (passthrough SPIR-V only)
        | wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX
        // VGF custom shaders' samplers: linear filtering of fp32 images, clamp to border
        | wgpu::Features::FLOAT32_FILTERABLE
        | wgpu::Features::ADDRESS_MODE_CLAMP_TO_BORDER
}

impl Context {
    /// Picks an adapter (honouring `WGPU_BACKEND`, `FPSHADER_ADAPTER`, `FPSHADER_PATH`) and opens it.
    pub fn new(opts: ContextOptions) -> Result<Context> {
        let filter = opts
            .adapter_name
            .clone()
            .or_else(|| std::env::var("FPSHADER_ADAPTER").ok())
            .filter(|f| !f.is_empty());
        let matches = |a: &wgpu::Adapter| {
            filter
                .as_ref()
                .is_none_or(|f| a.get_info().name.to_lowercase().contains(&f.to_lowercase()))
        };
        let (backends, adapters) = match opts.backends.or_else(wgpu::Backends::from_env) {
            Some(backends) => (backends, enumerate(backends)),
            // GL only when no primary backend has a matching adapter: Vulkan is preferred
            // anyway, and initializing EGL probes display platforms for nothing
            None => match enumerate(wgpu::Backends::PRIMARY) {
                found if found.iter().any(matches) => (wgpu::Backends::PRIMARY, found),
                _ => (wgpu::Backends::all(), enumerate(wgpu::Backends::all())),
            },
        };
        let names: Vec<String> = adapters
            .iter()
            .map(|a| {
                let i = a.get_info();
                format!("{} ({:?})", i.name, i.backend)
            })
            .collect();
        // prefer Vulkan (both paths work there), then real GPUs
        let rank = |a: &wgpu::Adapter| {
            let i = a.get_info();
            let backend = u8::from(i.backend != wgpu::Backend::Vulkan);
            let kind = match i.device_type {
                wgpu::DeviceType::DiscreteGpu => 0,
                wgpu::DeviceType::IntegratedGpu => 1,
                wgpu::DeviceType::VirtualGpu => 2,
                wgpu::DeviceType::Cpu => 3,
                wgpu::DeviceType::Other => 4,
            };
            (backend, kind)
        };
        let adapter = adapters
            .into_iter()
            .filter(matches)
            .min_by_key(rank)
            .ok_or_else(|| DeviceError::NoAdapter {
                backends: format!("{backends:?}"),
                filter: filter.clone(),
                available: if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                },
            })?;
        let emulated = adapter.get_info().device_type == wgpu::DeviceType::Cpu;
        if emulated && !opts.allow_cpu_adapter && filter.is_none() {
            return Err(DeviceError::OnlyCpuAdapters {
                available: names.join(", "),
            }
            .into());
        }
        let features = adapter.features() & wanted_features();
        let desc = wgpu::DeviceDescriptor {
            label: Some("fpshader"),
            required_features: features,
            required_limits: opts.limits.clone().unwrap_or_else(|| adapter.limits()),
            // SAFETY: the one experimental feature requested is cooperative matrices, which
            // only reach the device as passthrough SPIR-V that glslang wrote and the
            // Vulkan driver validates; wgpu's own (naga) code for them is never used
            experimental_features: if features
                .contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
            {
                unsafe { wgpu::ExperimentalFeatures::enabled() }
            } else {
                wgpu::ExperimentalFeatures::disabled()
            },
            ..Default::default()
        };
        let wanted = match opts.workgroup_matrices {
            Some(on) => on,
            None => env_flag("FPSHADER_MATRIX2")?.unwrap_or(true),
        } && features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
        let caps = wanted.then(|| super::matrix2::probe(&adapter)).flatten();
        // a device the extension could not open with is opened as wgpu alone would
        let opened = caps.and_then(|c| super::matrix2::open(&adapter, &desc, c).ok());
        let matrix2 = caps.filter(|_| opened.is_some());
        let (device, queue) = match opened {
            Some(pair) => pair,
            None => pollster::block_on(adapter.request_device(&desc))
                .map_err(DeviceError::RequestDevice)?,
        };
        Context::open(&adapter, device, queue, opts, matrix2)
    }

    /// Wraps a device the program already has; features fpshader needs must have been requested
    /// on it (those missing narrow the options and the path).
    pub fn from_wgpu(
        adapter: &wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
        opts: ContextOptions,
    ) -> Result<Context> {
        Context::open(adapter, device, queue, opts, None)
    }

    /// [`from_wgpu`](Self::from_wgpu) for a device opened with VK_NV_cooperative_matrix2
    /// (`matrix2`: what it enabled) or not.
    fn open(
        adapter: &wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
        opts: ContextOptions,
        matrix2: Option<super::matrix2::Matrix2Caps>,
    ) -> Result<Context> {
        let adapter_info = adapter.get_info();
        let features = device.features();
        let limits = device.limits();
        let env_path = match std::env::var("FPSHADER_PATH") {
            Ok(p) if !p.is_empty() => Some(p.parse::<ShaderPath>()?),
            _ => None,
        };
        let passthrough_ok = adapter_info.backend == wgpu::Backend::Vulkan
            && features.contains(wgpu::Features::PASSTHROUGH_SHADERS);
        let path = match opts.path.or(env_path) {
            Some(ShaderPath::Passthrough) if !passthrough_ok => {
                return Err(DeviceError::NoPassthrough {
                    adapter: adapter_info.name.clone(),
                    backend: adapter_info.backend,
                }
                .into());
            }
            Some(p) => p,
            None if passthrough_ok => ShaderPath::Passthrough,
            None => ShaderPath::Naga,
        };
        let mut device_allows = Options::for_device(features);
        // wgpu 30's GL backend binds a 3-D storage image as one layer (glBindImageTexture with
        // layered = false), so only slice 0 of an image mat would be written: no image variants
        if adapter_info.backend == wgpu::Backend::Gl {
            device_allows.use_image_storage = false;
        }
        let health = Health::watch(&device);
        let wait_timeout = match opts.wait_timeout {
            Some(t) => t,
            None => health::wait_timeout_from_env()?,
        };
        let spin_wait = match opts.spin_wait {
            Some(t) => t,
            None => health::spin_wait_from_env(&adapter_info)?,
        };
        let memory_budget = match opts.memory_budget {
            Some(b) => Some(b),
            None => health::env_setting("FPSHADER_MEMORY_BUDGET", "a number of bytes", |s| {
                s.parse::<u64>().ok()
            })?
            .or_else(|| health::default_budget(&adapter_info)),
        };
        let spirv_dump = super::dump::folder(opts.spirv_dump.as_deref())?;
        let cooperative_matrix = path == ShaderPath::Passthrough
            && features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
            && cooperative_matrix_fits(adapter);
        let matrix2 = matrix2.filter(|_| cooperative_matrix);
        // passthrough only: naga reads no integer dot products, int8 types or matrices
        let mut int8 = match path {
            ShaderPath::Passthrough => super::vulkan_caps::int8_caps(adapter),
            ShaderPath::Naga => Default::default(),
        };
        if opts.int8_arithmetic == Some(false) {
            int8.dot_product = false;
            int8.cooperative_matrix_16x16x32 = false;
        }
        let user = opts.options.unwrap_or_default();
        let allowed = device_allows.intersect(&user).to_option_set();
        let dummy = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("fpshader binding-gap filler"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("fpshader nearest"),
            ..Default::default()
        });
        Ok(Context {
            sampler,
            adapter_info,
            device,
            queue,
            features,
            limits,
            path,
            allowed,
            pipelines: Mutex::new(HashMap::new()),
            requested: Mutex::new(HashMap::new()),
            pool: Arc::default(),
            readbacks: Mutex::default(),
            submitter: Submitter::default(),
            timings: Default::default(),
            stats: StatCounters::default(),
            dummy,
            cooperative_matrix,
            matrix2,
            int8,
            health,
            wait_timeout,
            spin_wait,
            spinning: Default::default(),
            memory_budget,
            spirv_dump,
        })
    }

    /// The path SPIR-V takes on this context.
    pub fn path(&self) -> ShaderPath {
        self.path
    }

    /// The options this device and the user's options allow.
    pub fn allowed_options(&self) -> OptionSet {
        self.allowed
    }

    /// The most bytes one mat may take to be both allocated and bound: the smaller of
    /// `max_buffer_size` and `max_storage_buffer_binding_size`.
    pub fn largest_mat_bytes(&self) -> u64 {
        let l = &self.limits;
        l.max_buffer_size.min(l.max_storage_buffer_binding_size)
    }

    /// The device's wgpu features.
    pub fn features(&self) -> wgpu::Features {
        self.features
    }

    /// The device's limits.
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// Whether the device can run a module that needs `needed`.
    pub fn supports(&self, needed: Features) -> bool {
        let int8_matrices = Features::COOPERATIVE_MATRIX.union(Features::INT8);
        (self.cooperative_matrix || !needed.contains(Features::COOPERATIVE_MATRIX))
            && (self.matrix2.is_some() || !needed.contains(Features::COOPERATIVE_MATRIX2))
            && (self.int8.int8 || !needed.contains(Features::INT8))
            && (self.int8_cooperative_matrix() || !needed.contains(int8_matrices))
            && (self.int8.dot_product || !needed.contains(Features::INTEGER_DOT_PRODUCT))
            && required_wgpu_features(needed).is_some_and(|f| self.features.contains(f))
    }

    /// Whether the built-in cooperative-matrix shaders run here: the passthrough path (naga
    /// reads no cooperative matrices), VK_KHR_cooperative_matrix with 16 × 16 × 16 fp16
    /// products summed in fp32, and subgroups of exactly 32 invocations (the shaders give each
    /// subgroup a fixed share of a workgroup).
    pub fn cooperative_matrix(&self) -> bool {
        self.cooperative_matrix
    }

    /// Whether the GEMMs' VK_NV_cooperative_matrix2 shaders run here: those of
    /// [`cooperative_matrix`](Self::cooperative_matrix), on a device [`Context::new`] opened
    /// with the extension ([`ContextOptions::workgroup_matrices`]).
    pub fn workgroup_matrices(&self) -> bool {
        self.matrix2.is_some()
    }

    /// Whether the attention's VK_NV_cooperative_matrix2 shader runs here: a device of
    /// [`workgroup_matrices`](Self::workgroup_matrices) that also offered the extension's row
    /// reductions and conversions (enabled when opened).
    pub fn workgroup_attention(&self) -> bool {
        self.matrix2.is_some_and(|c| c.attention)
    }

    /// Whether the built-in int8 dot-product shaders run here: the passthrough path on a
    /// Vulkan device with `shaderIntegerDotProduct` (core in Vulkan 1.3, which wgpu enables
    /// wherever the adapter has it), unless [`ContextOptions::int8_arithmetic`] said no.
    /// Elsewhere int8 layers take shaders that sum the same products without them.
    pub fn integer_dot_product(&self) -> bool {
        self.int8.dot_product
    }

    /// Whether the built-in int8 cooperative-matrix shaders run here: those of
    /// [`cooperative_matrix`](Self::cooperative_matrix), with `shaderInt8` and 16 × 16 × 32
    /// int8 products summed in int32 (NVIDIA's int8 tensor cores).
    pub fn int8_cooperative_matrix(&self) -> bool {
        self.cooperative_matrix && self.int8.cooperative_matrix_16x16x32
    }

    /// A workgroup size like ncnn's `set_optimal_local_size_xyz`: up to 64 invocations spread over
    /// the dimensions the work has, clamped to the device limits.
    pub fn optimal_local_size(&self, global: [u32; 3]) -> [u32; 3] {
        let l = &self.limits;
        let max = [
            l.max_compute_workgroup_size_x,
            l.max_compute_workgroup_size_y,
            l.max_compute_workgroup_size_z,
        ];
        let budget = l.max_compute_invocations_per_workgroup.min(64);
        let mut size = match global {
            [_, 1, 1] => [64, 1, 1],
            [_, _, 1] => [8, 8, 1],
            _ => [4, 4, 4],
        };
        for i in 0..3 {
            size[i] = size[i]
                .min(max[i])
                .min(global[i].max(1).next_power_of_two())
                .max(1);
        }
        while size.iter().product::<u32>() > budget {
            let i = (0..3).max_by_key(|i| size[*i]).unwrap_or(0);
            size[i] /= 2;
        }
        size
    }

    /// Turns per-dispatch device timing on or off; whether it is on (it needs timestamp
    /// queries, which not every adapter has).
    pub fn set_timing(&self, on: bool) -> bool {
        let on = on && self.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        self.timings.set(on);
        on
    }

    /// The dispatch times measured since the last call, in recording order.
    pub fn take_timings(&self) -> Vec<DispatchTime> {
        self.timings.take()
    }

    /// Whether dispatches are timed.
    pub(crate) fn timing(&self) -> bool {
        self.timings.is_on()
    }

    /// A short description for logs: adapter, backend, path, options.
    pub fn describe(&self) -> String {
        format!(
            "{} ({:?}, {:?} path, options {}{}{})",
            self.adapter_info.name,
            self.adapter_info.backend,
            self.path,
            self.allowed.name(),
            match (self.matrix2.is_some(), self.cooperative_matrix) {
                (true, _) => ", workgroup cooperative matrices",
                (false, true) => ", cooperative matrices",
                _ => "",
            },
            match (self.int8_cooperative_matrix(), self.int8.dot_product) {
                (true, _) => ", int8 matrices",
                (false, true) => ", int8 dot products",
                _ => "",
            }
        )
    }
}

/// An on/off environment variable: `0` or `1`, unset or empty for none.
fn env_flag(name: &'static str) -> Result<Option<bool>> {
    health::env_setting(name, "0 or 1", |v| match v {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    })
}

/// Whether `adapter` multiplies 16 × 16 fp16 matrices into fp32 on subgroups of 32.
fn cooperative_matrix_fits(adapter: &wgpu::Adapter) -> bool {
    let info = adapter.get_info();
    info.subgroup_min_size == 32
        && info.subgroup_max_size == 32
        && adapter.cooperative_matrix_properties().iter().any(|p| {
            [p.m_size, p.n_size, p.k_size] == [16, 16, 16]
                && p.ab_type == wgpu::CooperativeScalarType::F16
                && p.cr_type == wgpu::CooperativeScalarType::F32
        })
}

/// The wgpu features a module's needs map to, or `None` if wgpu cannot enable one of them.
pub fn required_wgpu_features(needed: Features) -> Option<wgpu::Features> {
    let mut f = wgpu::Features::empty();
    for (need, feature) in [
        (Features::FLOAT16, wgpu::Features::SHADER_F16),
        (Features::STORAGE_16BIT, wgpu::Features::SHADER_F16),
        (Features::INT16, wgpu::Features::SHADER_I16),
        (Features::INT64, wgpu::Features::SHADER_INT64),
        (Features::FLOAT64, wgpu::Features::SHADER_F64),
        (Features::SUBGROUP, wgpu::Features::SUBGROUP),
        (
            Features::COOPERATIVE_MATRIX,
            wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX,
        ),
    ] {
        if needed.contains(need) {
            f |= feature;
        }
    }
    // int8 arithmetic has no wgpu feature: `Context::supports` asks the device
    let impossible = Features::PUSH_CONSTANT_16BIT
        .union(Features::STORAGE_8BIT)
        .union(Features::STORAGE_IMAGE_WITHOUT_FORMAT);
    if needed.0 & impossible.0 != 0 {
        return None;
    }
    Some(f)
}
