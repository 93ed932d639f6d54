//! What a Vulkan device can run beyond wgpu's feature flags, read from the adapter wgpu
//! opened. wgpu-hal 30 enables, wherever the adapter offers them and whatever features were
//! requested (`adapter.rs`'s `PhysicalDeviceFeatures::from_extensions_and_requested_features`):
//! `shaderIntegerDotProduct` (Vulkan 1.3, or VK_KHR_shader_integer_dot_product) and
//! `shaderInt8` (Vulkan 1.2, or VK_KHR_shader_float16_int8); VK_KHR_cooperative_matrix comes
//! with `EXPERIMENTAL_COOPERATIVE_MATRIX`, but wgpu lists only its fp16, fp32 and 32-bit
//! integer products. None of these has a `wgpu::Features` flag, so passthrough SPIR-V that
//! needs them asks here whether it may run.

/// The device's int8 abilities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Int8Caps {
    /// `shaderIntegerDotProduct`: `dotPacked4x8EXT` and friends.
    pub dot_product: bool,
    /// `shaderInt8`: 8-bit integer types in shaders.
    pub int8: bool,
    /// Subgroup-scope cooperative matrices multiplying 16 × 32 by 32 × 16 int8 matrices into
    /// int32 (NVIDIA's int8 tensor cores).
    pub cooperative_matrix_16x16x32: bool,
}

/// What `adapter`'s Vulkan device offers (nothing on other backends).
pub(crate) fn int8_caps(adapter: &wgpu::Adapter) -> Int8Caps {
    #[cfg(any(windows, target_os = "linux", target_os = "android"))]
    // SAFETY: the physical device and instance stay alive while the adapter guard is held;
    // the queries write only into the structures passed
    unsafe {
        use ash::vk;
        use wgpu::hal::api::Vulkan;
        let Some(hal) = adapter.as_hal::<Vulkan>() else {
            return Int8Caps::default();
        };
        let shared = hal.shared_instance();
        let instance = shared.raw_instance();
        let phd = hal.raw_physical_device();
        let version = instance.get_physical_device_properties(phd).api_version;
        let extensions = instance
            .enumerate_device_extension_properties(phd)
            .unwrap_or_default();
        let has = |name: &std::ffi::CStr| {
            extensions
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(name))
        };
        let dot_ext =
            version >= vk::API_VERSION_1_3 || has(ash::khr::shader_integer_dot_product::NAME);
        let int8_ext = version >= vk::API_VERSION_1_2 || has(ash::khr::shader_float16_int8::NAME);
        let mut dot = vk::PhysicalDeviceShaderIntegerDotProductFeatures::default();
        let mut int8 = vk::PhysicalDeviceShaderFloat16Int8Features::default();
        let mut features = vk::PhysicalDeviceFeatures2::default();
        if dot_ext {
            features = features.push_next(&mut dot);
        }
        if int8_ext {
            features = features.push_next(&mut int8);
        }
        instance.get_physical_device_features2(phd, &mut features);
        let khr = ash::khr::cooperative_matrix::Instance::new(shared.entry(), instance);
        let matrices = match has(ash::khr::cooperative_matrix::NAME) {
            true => khr
                .get_physical_device_cooperative_matrix_properties(phd)
                .unwrap_or_default(),
            false => Vec::new(),
        };
        let int8_matrices = matrices.iter().any(|p| {
            [p.m_size, p.n_size, p.k_size] == [16, 16, 32]
                && p.a_type == vk::ComponentTypeKHR::SINT8
                && p.b_type == vk::ComponentTypeKHR::SINT8
                && p.c_type == vk::ComponentTypeKHR::SINT32
                && p.result_type == vk::ComponentTypeKHR::SINT32
                && p.scope == vk::ScopeKHR::SUBGROUP
        });
        let shader_int8 = int8_ext && int8.shader_int8 == vk::TRUE;
        Int8Caps {
            dot_product: dot_ext && dot.shader_integer_dot_product == vk::TRUE,
            int8: shader_int8,
            cooperative_matrix_16x16x32: shader_int8 && int8_matrices,
        }
    }
    #[cfg(not(any(windows, target_os = "linux", target_os = "android")))]
    {
        let _ = adapter;
        Int8Caps::default()
    }
}
