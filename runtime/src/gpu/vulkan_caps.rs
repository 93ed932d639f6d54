//! What a Vulkan device can run beyond wgpu's feature flags, read from the adapter wgpu
//! opened: wgpu-hal 30 enables `shaderIntegerDotProduct` at device creation wherever the
//! adapter offers it (Vulkan 1.3, or `VK_KHR_shader_integer_dot_product`: `adapter.rs`'s
//! `PhysicalDeviceFeatures::from_extensions_and_requested_features`), but has no
//! `wgpu::Features` flag for it, so passthrough SPIR-V with the `DotProduct` capabilities
//! needs this query to know that it may run.

/// Whether `adapter`'s Vulkan device has `shaderIntegerDotProduct` (false on other backends).
pub(crate) fn integer_dot_product(adapter: &wgpu::Adapter) -> bool {
    #[cfg(any(windows, target_os = "linux", target_os = "android"))]
    {
        use ash::vk;
        use wgpu::hal::api::Vulkan;
        // SAFETY: the physical device and instance stay alive while the adapter guard is
        // held; the query writes only into the structures passed
        unsafe {
            let Some(hal) = adapter.as_hal::<Vulkan>() else {
                return false;
            };
            let instance = hal.shared_instance().raw_instance();
            let phd = hal.raw_physical_device();
            let version = instance.get_physical_device_properties(phd).api_version;
            let has_extension = instance
                .enumerate_device_extension_properties(phd)
                .unwrap_or_default()
                .iter()
                .any(|e| {
                    e.extension_name_as_c_str() == Ok(ash::khr::shader_integer_dot_product::NAME)
                });
            if version < vk::API_VERSION_1_3 && !has_extension {
                return false;
            }
            let mut dot = vk::PhysicalDeviceShaderIntegerDotProductFeatures::default();
            let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut dot);
            instance.get_physical_device_features2(phd, &mut features);
            dot.shader_integer_dot_product == vk::TRUE
        }
    }
    #[cfg(not(any(windows, target_os = "linux", target_os = "android")))]
    {
        let _ = adapter;
        false
    }
}
