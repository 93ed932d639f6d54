//! What several layer families share: the shader families per elempack and the flat
//! dispatch, axes and views, strided copies, the CPU and GPU GEMM engines, group reductions,
//! int8 quantization, shape expressions, thread grain and the CPU inner loops.

pub(crate) mod channel_affine;
pub(crate) mod cpu_gemm;
pub mod expression;
pub mod flat;
pub(crate) mod gpu_gemm;
pub(crate) mod grain;
pub mod group_pipeline;
pub mod groups;
pub(crate) mod int8;
pub(crate) mod int8_gemm;
pub(crate) mod int8_scales;
pub(crate) mod kernels;
pub(crate) mod normalize_vec4;
pub(crate) mod phase_planes;
pub mod pipelines;
pub mod strided_copy;
pub mod view;
