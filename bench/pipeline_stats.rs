//! The driver's own figures for pipelines written by `FPSHADER_DUMP_SPIRV` (or
//! `ContextOptions::spirv_dump`): registers, workgroup memory, spills, as
//! VK_KHR_pipeline_executable_properties reports them. wgpu creates its pipelines without
//! asking for these, so each file is compiled again here, on the first discrete GPU (else the
//! first device), with every feature the device has enabled.
//!
//! ```text
//! FPSHADER_DUMP_SPIRV=/tmp/spv fpshader bench model.param --loops 1
//! cargo run --release --example pipeline_stats -- /tmp/spv/*.spv
//! ```
//! One line per file: its name, every statistic the driver reports (`name=value`), and where
//! the driver is NVIDIA's, the workgroups a multiprocessor holds by registers (64 Ki 32-bit
//! registers, allocated 256 per warp), the figure a tile's register count decides. The
//! workgroup size comes from the `.txt` beside the file (`local_size X Y Z`), else 128.

use std::error::Error;
use std::ffi::CStr;
use std::path::Path;

use ash::vk;

type Res<T> = Result<T, Box<dyn Error>>;

/// NVIDIA's driver (580) reports "Local Memory Size" with bit 36 set: the bytes are below it.
const LOCAL_MEMORY_FLAG: u64 = 1 << 36;

fn main() -> Res<()> {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        return Err("usage: pipeline_stats FILE.spv...".into());
    }
    // SAFETY: the loader is the system's Vulkan loader; every handle made below is used on
    // the device it came from and destroyed before the device.
    unsafe { run(&files) }
}

/// The instance, the device and the pipeline layout every file is compiled against.
struct Device {
    device: ash::Device,
    stats: ash::khr::pipeline_executable_properties::Device,
    layout: vk::PipelineLayout,
    nvidia: bool,
}

unsafe fn run(files: &[String]) -> Res<()> {
    let entry = unsafe { ash::Entry::load()? };
    let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
    let info = vk::InstanceCreateInfo::default().application_info(&app);
    let instance = unsafe { entry.create_instance(&info, None)? };
    let device = unsafe { open(&instance)? };
    for file in files {
        match unsafe { statistics(&device, Path::new(file)) } {
            Ok(line) => println!("{line}"),
            Err(e) => println!("{file}: {e}"),
        }
    }
    unsafe {
        device.device.destroy_pipeline_layout(device.layout, None);
        device.device.destroy_device(None);
        instance.destroy_instance(None);
    }
    Ok(())
}

/// A device with VK_KHR_pipeline_executable_properties, the cooperative-matrix extensions
/// where offered, and every feature of Vulkan 1.1-1.3 and of KHR cooperative matrices it has.
unsafe fn open(instance: &ash::Instance) -> Res<Device> {
    let physical = unsafe { instance.enumerate_physical_devices()? };
    let props = |p: vk::PhysicalDevice| unsafe { instance.get_physical_device_properties(p) };
    let pd = *physical
        .iter()
        .find(|&&p| props(p).device_type == vk::PhysicalDeviceType::DISCRETE_GPU)
        .or_else(|| physical.first())
        .ok_or("no Vulkan device")?;
    let p = props(pd);
    let name = unsafe { CStr::from_ptr(p.device_name.as_ptr()) }.to_string_lossy();
    eprintln!("{name}");
    let offered: Vec<String> = unsafe { instance.enumerate_device_extension_properties(pd)? }
        .iter()
        .map(|e| {
            unsafe { CStr::from_ptr(e.extension_name.as_ptr()) }
                .to_string_lossy()
                .into()
        })
        .collect();
    let has = |n: &CStr| offered.iter().any(|o| o.as_bytes() == n.to_bytes());
    if !has(ash::khr::pipeline_executable_properties::NAME) {
        return Err(format!("{name} has no VK_KHR_pipeline_executable_properties").into());
    }
    // VK_NV_cooperative_matrix2 by name alone: ash 0.38 has no structure for its features,
    // and NVIDIA's driver (580) compiles gemm_cm2 with the extension enabled so
    let wanted = [
        ash::khr::pipeline_executable_properties::NAME,
        ash::khr::cooperative_matrix::NAME,
        c"VK_NV_cooperative_matrix2",
    ];
    let extensions: Vec<_> = wanted
        .iter()
        .filter(|n| has(n))
        .map(|n| n.as_ptr())
        .collect();
    let mut exe = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
    let mut coop = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
    let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut v13 = vk::PhysicalDeviceVulkan13Features::default();
    let mut features = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut exe)
        .push_next(&mut v11)
        .push_next(&mut v12)
        .push_next(&mut v13);
    if has(ash::khr::cooperative_matrix::NAME) {
        features = features.push_next(&mut coop);
    }
    unsafe { instance.get_physical_device_features2(pd, &mut features) };
    let priority = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(0)
        .queue_priorities(&priority)];
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&extensions)
        .push_next(&mut features);
    let device = unsafe { instance.create_device(pd, &info, None)? };
    // the dumped shaders bind storage buffers in set 0 and take push constants
    let bindings: Vec<_> = (0..16)
        .map(|b| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(b)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        })
        .collect();
    let set_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
    let set = unsafe { device.create_descriptor_set_layout(&set_info, None)? };
    let push = [vk::PushConstantRange::default()
        .stage_flags(vk::ShaderStageFlags::COMPUTE)
        .size(p.limits.max_push_constants_size)];
    let sets = [set];
    let layout_info = vk::PipelineLayoutCreateInfo::default()
        .set_layouts(&sets)
        .push_constant_ranges(&push);
    let layout = unsafe { device.create_pipeline_layout(&layout_info, None)? };
    // a pipeline layout keeps what it needs of its set layouts
    unsafe { device.destroy_descriptor_set_layout(set, None) };
    let stats = ash::khr::pipeline_executable_properties::Device::new(instance, &device);
    Ok(Device {
        device,
        stats,
        layout,
        nvidia: p.vendor_id == 0x10de,
    })
}

/// One file's line: its statistics as the driver names them.
unsafe fn statistics(d: &Device, file: &Path) -> Res<String> {
    let bytes = std::fs::read(file)?;
    if bytes.len() % 4 != 0 {
        return Err("not whole 32-bit words".into());
    }
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let module_info = vk::ShaderModuleCreateInfo::default().code(&words);
    let module = unsafe { d.device.create_shader_module(&module_info, None)? };
    let stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module)
        .name(c"main");
    let info = [vk::ComputePipelineCreateInfo::default()
        .stage(stage)
        .layout(d.layout)
        .flags(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR)];
    let created = unsafe {
        d.device
            .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
    };
    unsafe { d.device.destroy_shader_module(module, None) };
    let pipeline = created.map_err(|(_, e)| e)?[0];
    let line = unsafe { describe(d, pipeline, file) };
    unsafe { d.device.destroy_pipeline(pipeline, None) };
    line
}

unsafe fn describe(d: &Device, pipeline: vk::Pipeline, file: &Path) -> Res<String> {
    let name = file.file_stem().unwrap_or_default().to_string_lossy();
    let mut line = name.to_string();
    let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
    let executables = unsafe { d.stats.get_pipeline_executable_properties(&info)? };
    let mut registers = None;
    for index in 0..executables.len() as u32 {
        let info = vk::PipelineExecutableInfoKHR::default()
            .pipeline(pipeline)
            .executable_index(index);
        for s in unsafe { d.stats.get_pipeline_executable_statistics(&info)? } {
            let stat = unsafe { CStr::from_ptr(s.name.as_ptr()) }.to_string_lossy();
            let value = match s.format {
                vk::PipelineExecutableStatisticFormatKHR::BOOL32 => unsafe { s.value.b32 as u64 },
                vk::PipelineExecutableStatisticFormatKHR::INT64 => unsafe { s.value.i64 as u64 },
                vk::PipelineExecutableStatisticFormatKHR::UINT64 => unsafe { s.value.u64 },
                _ => unsafe { s.value.f64 as u64 },
            };
            let value = match stat.as_ref() {
                "Local Memory Size" if d.nvidia => value & (LOCAL_MEMORY_FLAG - 1),
                _ => value,
            };
            if stat == "Register Count" {
                registers = Some(value);
            }
            line += &format!(" [{stat}={value}]");
        }
    }
    if let (true, Some(r)) = (d.nvidia, registers) {
        let invocations = local_size(file);
        let per_warp = (r * 32).div_ceil(256) * 256;
        let warps = invocations.div_ceil(32);
        line += &format!(
            " [workgroups per SM by registers={}]",
            65536 / (per_warp * warps).max(1)
        );
    }
    Ok(line)
}

/// The invocations per workgroup from the `.txt` beside `file`, else 128.
fn local_size(file: &Path) -> u64 {
    let text = std::fs::read_to_string(file.with_extension("txt")).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("local_size "))
        .map(|s| s.split(' ').filter_map(|v| v.parse::<u64>().ok()).product())
        .unwrap_or(128)
}
