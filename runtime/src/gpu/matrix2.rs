//! VK_NV_cooperative_matrix2: workgroup-scope cooperative matrices whose loads and stores are
//! addressed as tensors (`coopMatLoadTensorNV`), NVIDIA's fastest way to its tensor cores
//! from Vulkan. wgpu has no feature for it, so [`open`] creates the device through wgpu-hal's
//! `open_with_callback`, which adds the extension and its feature structure to what wgpu
//! itself enables, and wraps the result as an ordinary `wgpu::Device`
//! (`Adapter::create_device_from_hal`). ash 0.38 predates the extension: its three structures
//! are declared here from the Vulkan registry (`VkPhysicalDeviceCooperativeMatrix2FeaturesNV`,
//! `…PropertiesNV`, `VkCooperativeMatrixFlexibleDimensionsPropertiesNV`).

/// The extension's name.
pub(crate) const EXTENSION: &std::ffi::CStr = c"VK_NV_cooperative_matrix2";

/// Invocations per workgroup of the built-in shaders that take the extension's workgroup-scope
/// matrices (`gemm_cm2.comp`; `sdpa_cm2.comp` takes its operations on subgroup matrices).
pub(crate) const WORKGROUP: u32 = 256;

/// The largest tile side those shaders use: each flexible size's granularity must divide the
/// smallest side (64), and the driver must allow this many along a dimension.
const SMALLEST_SIDE: u32 = 64;
const LARGEST_SIDE: u32 = 256;

#[cfg(any(windows, target_os = "linux", target_os = "android"))]
mod vk_structs {
    use ash::vk;

    /// `VkPhysicalDeviceCooperativeMatrix2FeaturesNV`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub(super) struct Features {
        pub s_type: vk::StructureType,
        pub p_next: *mut std::ffi::c_void,
        pub workgroup_scope: vk::Bool32,
        pub flexible_dimensions: vk::Bool32,
        pub reductions: vk::Bool32,
        pub conversions: vk::Bool32,
        pub per_element_operations: vk::Bool32,
        pub tensor_addressing: vk::Bool32,
        pub block_loads: vk::Bool32,
    }

    /// `VkPhysicalDeviceCooperativeMatrix2PropertiesNV`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub(super) struct Properties {
        pub s_type: vk::StructureType,
        pub p_next: *mut std::ffi::c_void,
        pub workgroup_scope_max_workgroup_size: u32,
        pub flexible_dimensions_max_dimension: u32,
        pub workgroup_scope_reserved_shared_memory: u32,
    }

    /// `VkCooperativeMatrixFlexibleDimensionsPropertiesNV`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub(super) struct FlexibleDimensions {
        pub s_type: vk::StructureType,
        pub p_next: *mut std::ffi::c_void,
        pub m_granularity: u32,
        pub n_granularity: u32,
        pub k_granularity: u32,
        pub a_type: vk::ComponentTypeKHR,
        pub b_type: vk::ComponentTypeKHR,
        pub c_type: vk::ComponentTypeKHR,
        pub result_type: vk::ComponentTypeKHR,
        pub saturating_accumulation: vk::Bool32,
        pub scope: vk::ScopeKHR,
        pub workgroup_invocations: u32,
    }

    impl Features {
        pub fn new() -> Self {
            Features {
                s_type: vk::StructureType::from_raw(1_000_593_000),
                p_next: std::ptr::null_mut(),
                workgroup_scope: 0,
                flexible_dimensions: 0,
                reductions: 0,
                conversions: 0,
                per_element_operations: 0,
                tensor_addressing: 0,
                block_loads: 0,
            }
        }
    }

    impl Properties {
        pub fn new() -> Self {
            Properties {
                s_type: vk::StructureType::from_raw(1_000_593_002),
                p_next: std::ptr::null_mut(),
                workgroup_scope_max_workgroup_size: 0,
                flexible_dimensions_max_dimension: 0,
                workgroup_scope_reserved_shared_memory: 0,
            }
        }
    }

    impl FlexibleDimensions {
        pub fn new() -> Self {
            FlexibleDimensions {
                s_type: vk::StructureType::from_raw(1_000_593_001),
                p_next: std::ptr::null_mut(),
                m_granularity: 0,
                n_granularity: 0,
                k_granularity: 0,
                a_type: vk::ComponentTypeKHR::FLOAT16,
                b_type: vk::ComponentTypeKHR::FLOAT16,
                c_type: vk::ComponentTypeKHR::FLOAT16,
                result_type: vk::ComponentTypeKHR::FLOAT16,
                saturating_accumulation: 0,
                scope: vk::ScopeKHR::SUBGROUP,
                workgroup_invocations: 0,
            }
        }
    }

    // SAFETY: each begins with sType and pNext as Vulkan's structures do, and extends these
    // structures in the Vulkan registry
    unsafe impl vk::ExtendsPhysicalDeviceFeatures2 for Features {}
    unsafe impl vk::ExtendsDeviceCreateInfo for Features {}
    unsafe impl vk::ExtendsPhysicalDeviceProperties2 for Properties {}

    /// `vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV`.
    pub(super) type GetFlexibleDimensions = unsafe extern "system" fn(
        vk::PhysicalDevice,
        *mut u32,
        *mut FlexibleDimensions,
    ) -> vk::Result;
}

/// What the adapter offers of the extension, as the built-in shaders need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Matrix2Caps {
    /// Shared memory the driver keeps for workgroup-scope matrices, bytes.
    pub reserved_shared_memory: u32,
    /// Whether row reductions and accumulator-to-operand conversions are offered too (and
    /// enabled by [`open`]): what `sdpa_cm2.comp` adds to the GEMM's needs.
    pub attention: bool,
}

/// Whether `adapter` offers VK_NV_cooperative_matrix2 with what `gemm_cm2.comp` uses:
/// workgroup scope, flexible dimensions, tensor addressing and per-element operations, fp16
/// products summed in fp32 on [`WORKGROUP`] invocations in sizes whose granularity divides 64,
/// 256 along a side. `None` on other backends and adapters.
pub(crate) fn probe(adapter: &wgpu::Adapter) -> Option<Matrix2Caps> {
    #[cfg(any(windows, target_os = "linux", target_os = "android"))]
    // SAFETY: the physical device and instance stay alive while the adapter guard is held;
    // the queries write only into the structures passed, which are sized as Vulkan declares
    unsafe {
        use ash::vk;
        use vk_structs::{FlexibleDimensions, GetFlexibleDimensions, Properties};
        use wgpu::hal::api::Vulkan;
        let hal = adapter.as_hal::<Vulkan>()?;
        let shared = hal.shared_instance();
        let instance = shared.raw_instance();
        let phd = hal.raw_physical_device();
        let offered = instance
            .enumerate_device_extension_properties(phd)
            .unwrap_or_default()
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(EXTENSION));
        if !offered {
            return None;
        }
        let mut features = vk_structs::Features::new();
        let mut all = vk::PhysicalDeviceFeatures2::default().push_next(&mut features);
        instance.get_physical_device_features2(phd, &mut all);
        let needed = [
            features.workgroup_scope,
            features.flexible_dimensions,
            features.tensor_addressing,
            features.per_element_operations,
        ];
        if needed.iter().any(|f| *f != vk::TRUE) {
            return None;
        }
        let mut props = Properties::new();
        let mut all = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
        instance.get_physical_device_properties2(phd, &mut all);
        if props.workgroup_scope_max_workgroup_size < WORKGROUP
            || props.flexible_dimensions_max_dimension < LARGEST_SIDE
        {
            return None;
        }
        let name = c"vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV";
        let get = shared
            .entry()
            .get_instance_proc_addr(instance.handle(), name.as_ptr())?;
        let get: GetFlexibleDimensions = std::mem::transmute(get);
        let mut count = 0u32;
        if get(phd, &mut count, std::ptr::null_mut()) != vk::Result::SUCCESS {
            return None;
        }
        let mut sizes = vec![FlexibleDimensions::new(); count as usize];
        if get(phd, &mut count, sizes.as_mut_ptr()) != vk::Result::SUCCESS {
            return None;
        }
        sizes.truncate(count as usize);
        let fits = sizes.iter().any(|s| {
            s.a_type == vk::ComponentTypeKHR::FLOAT16
                && s.b_type == vk::ComponentTypeKHR::FLOAT16
                && s.c_type == vk::ComponentTypeKHR::FLOAT32
                && s.result_type == vk::ComponentTypeKHR::FLOAT32
                && s.saturating_accumulation == vk::FALSE
                && s.scope == vk::ScopeKHR::WORKGROUP
                && s.workgroup_invocations == WORKGROUP
                && [s.m_granularity, s.n_granularity, s.k_granularity]
                    .iter()
                    .all(|g| *g > 0 && SMALLEST_SIDE.is_multiple_of(*g))
        });
        fits.then_some(Matrix2Caps {
            reserved_shared_memory: props.workgroup_scope_reserved_shared_memory,
            attention: features.reductions == vk::TRUE && features.conversions == vk::TRUE,
        })
    }
    #[cfg(not(any(windows, target_os = "linux", target_os = "android")))]
    {
        let _ = adapter;
        None
    }
}

/// Opens `adapter` as `desc` asks, with VK_NV_cooperative_matrix2 and the features
/// [`probe`] found (`caps`) enabled as well.
pub(crate) fn open(
    adapter: &wgpu::Adapter,
    desc: &wgpu::DeviceDescriptor<'_>,
    caps: Matrix2Caps,
) -> Result<(wgpu::Device, wgpu::Queue), String> {
    #[cfg(any(windows, target_os = "linux", target_os = "android"))]
    {
        use wgpu::hal::api::Vulkan;
        let mut features = vk_structs::Features::new();
        features.workgroup_scope = ash::vk::TRUE;
        features.flexible_dimensions = ash::vk::TRUE;
        features.tensor_addressing = ash::vk::TRUE;
        features.per_element_operations = ash::vk::TRUE;
        if caps.attention {
            features.reductions = ash::vk::TRUE;
            features.conversions = ash::vk::TRUE;
        }
        let features_ref = &mut features;
        // SAFETY: the callback only adds an extension the adapter offers and its feature
        // structure, with features the adapter reported (`probe`); the structure outlives
        // the call, which is where Vulkan reads it
        let open = unsafe {
            let hal = adapter
                .as_hal::<Vulkan>()
                .ok_or_else(|| "not a Vulkan adapter".to_string())?;
            hal.open_with_callback(
                desc.required_features,
                &desc.required_limits,
                &desc.memory_hints,
                Some(Box::new(move |args| {
                    args.extensions.push(EXTENSION);
                    let info = std::mem::take(args.create_info);
                    *args.create_info = info.push_next(features_ref);
                })),
            )
        }
        .map_err(|e| e.to_string())?;
        // SAFETY: the device was opened from this adapter with `desc`'s features and limits
        unsafe { adapter.create_device_from_hal::<Vulkan>(open, desc) }.map_err(|e| e.to_string())
    }
    #[cfg(not(any(windows, target_os = "linux", target_os = "android")))]
    {
        let _ = (adapter, desc, caps);
        Err("VK_NV_cooperative_matrix2 needs Vulkan".to_string())
    }
}
