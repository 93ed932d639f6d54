//! `convert_layout`: what a layer's flags allow, applied to a blob before it runs.

use std::sync::Arc;

use crate::error::Result;
use crate::layer::{Packs, RunOptions, Support};
use crate::tensor::{ElemType, Mat};

/// Whether the CPU has 256-bit SIMD (fp32 pack8 pays off there).
pub fn cpu_has_256bit_simd() -> bool {
    crate::layer::shared::kernels::has_256bit_simd()
}

/// Whether the CPU computes in fp16 natively (ARMv8.2's FP16 arithmetic): where ncnn's
/// `use_fp16_storage` applies to CPU layers. Elsewhere (x86) fp16 blobs on the CPU would only
/// add a conversion on each side of every layer that takes them.
pub fn cpu_has_fp16_arithmetic() -> bool {
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("fp16")
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        false
    }
}

/// The element type a layer with `support` receives for `m` under `opt`: bf16 before fp16
/// when both are allowed (fp16 only on CPUs with fp16 arithmetic, as ncnn's `convert_layout`),
/// fp32 for any 16-bit or int8 mat the layer does not declare.
pub fn cpu_elemtype(m: &Mat, support: Support, opt: &RunOptions) -> ElemType {
    if m.elemtype() == ElemType::I8 && support.int8_storage && opt.use_int8_inference {
        return ElemType::I8;
    }
    if support.bf16_storage && opt.use_bf16_storage {
        ElemType::Bf16
    } else if support.fp16_storage && opt.use_fp16_storage && cpu_has_fp16_arithmetic() {
        ElemType::F16
    } else {
        ElemType::F32
    }
}

/// The elempack a layer with `support` receives for `channels` values of `elemtype`.
pub fn cpu_elempack(
    current: usize,
    channels: usize,
    elemtype: ElemType,
    support: Support,
    opt: &RunOptions,
) -> usize {
    if !(opt.use_packing_layout && support.packing) {
        return 1;
    }
    if support.any_packing {
        return current;
    }
    let eight = match elemtype {
        ElemType::F32 => cpu_has_256bit_simd(),
        ElemType::F16 | ElemType::I8 => true,
        ElemType::Bf16 => false,
    };
    if eight && channels.is_multiple_of(8) {
        8
    } else if channels.is_multiple_of(4) {
        4
    } else {
        1
    }
}

/// The elempack a GPU layer with `support` receives for `channels` channels: the largest of
/// `packs` (its shaders) that the channels and options allow.
pub fn gpu_elempack(
    current: usize,
    channels: usize,
    support: Support,
    packs: Packs,
    opt: &RunOptions,
) -> usize {
    if !(opt.use_packing_layout && support.vulkan_packing) {
        return 1;
    }
    if support.vulkan_any_packing {
        return current;
    }
    let eight = opt.use_shader_pack8 && packs.contains(8);
    if eight && channels.is_multiple_of(8) {
        8
    } else if packs.contains(4) && channels.is_multiple_of(4) {
        4
    } else {
        1
    }
}

/// `m` in the layout a CPU layer with `support` takes under `opt` (ncnn's `convert_layout`):
/// the blob itself, shared, where it already is.
pub fn to_cpu_layout(m: Arc<Mat>, support: Support, opt: &RunOptions) -> Result<Arc<Mat>> {
    let ty = cpu_elemtype(&m, support, opt);
    let channels = m.outer() * m.elempack;
    let pack = cpu_elempack(m.elempack, channels, ty, support, opt);
    // repack in the wider type, then narrow: int8 and 16-bit repack the same way
    let m = if m.elemtype() != ty {
        Arc::new(m.cast(ty))
    } else {
        m
    };
    if m.elempack != pack {
        Ok(Arc::new(m.to_packing(pack)?))
    } else {
        Ok(m)
    }
}

/// `bottoms` in one elempack for a layer with `same_packing` (each already in the layout
/// [`to_cpu_layout`] gives): the largest any of them has, for those of its dims whose channels
/// it divides (a broadcast operand of fewer dims keeps its own).
pub fn to_same_cpu_packing(bottoms: &mut [Arc<Mat>]) -> Result<()> {
    let Some((dims, pack)) = bottoms
        .iter()
        .map(|m| (m.dims, m.elempack))
        .max_by_key(|d| d.1)
    else {
        return Ok(());
    };
    for m in bottoms.iter_mut() {
        let divides = (m.outer() * m.elempack).is_multiple_of(pack);
        if m.elempack != pack && m.dims == dims && divides {
            *m = Arc::new(m.to_packing(pack)?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs of one dims meet in the largest packing where their channels allow it; a
    /// broadcast operand of other dims and channels it does not divide keep their own, and the
    /// values stay where they were.
    #[test]
    fn same_packing_meets_in_the_largest_pack_the_channels_allow() {
        let values: Vec<f32> = (0..3 * 2 * 16).map(|v| v as f32).collect();
        let plain = Mat::from_values(3, 2, 16, &values).unwrap();
        let packed = plain.to_packing(8).unwrap();
        let mut bottoms = vec![
            Arc::new(plain.clone()),
            Arc::new(packed),
            Arc::new(Mat::new_1d(16, 1).unwrap()),
            Arc::new(Mat::new_3d(3, 2, 12, 1).unwrap()),
        ];
        to_same_cpu_packing(&mut bottoms).unwrap();
        let packs: Vec<usize> = bottoms.iter().map(|m| m.elempack).collect();
        assert_eq!(packs, [8, 8, 1, 1]);
        assert_eq!(bottoms[0].to_values(), values);
    }
}
