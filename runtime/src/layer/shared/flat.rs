//! Elementwise dispatch: flat shaders over buffer mats of one layout (any packing), and the
//! one-in one-out elementwise forward every activation shares.

use crate::error::Result;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::shared::pipelines::{FLAT_BYTES, PackPipelines};
use crate::tensor::GpuMat;
use std::sync::Arc;

/// Records a flat shader over `bindings` (the last written, whose byte size sets the
/// count), in rows of at most 2^20 invocations so that no grid dimension passes the dispatch
/// limit; `extra` push constant words follow the shader's two (`FLAT_PUSH_EXTRA`).
pub fn dispatch_flat(
    rec: &mut Recorder<'_>,
    pipeline: &Arc<Pipeline>,
    bindings: &[&GpuMat],
    extra: &[u32],
) -> Result<()> {
    let bytes = bindings.last().map_or(0, |m| m.byte_size());
    let n = bytes / FLAT_BYTES;
    // rows of 4096 workgroups of 256 (fewer where the device allows fewer per dimension)
    let limit = rec.context().limits().max_compute_workgroups_per_dimension;
    let row = n.clamp(1, u64::from(limit.clamp(1, 4096)) * 256);
    let mut words = vec![n as u32, row as u32];
    words.extend_from_slice(extra);
    rec.dispatch(
        pipeline,
        bindings,
        &words,
        [row as u32, n.div_ceil(row) as u32, 1],
    )
}

/// Runs an elementwise `bottom → top` shader over a new mat like `bottom`: the flat one over
/// buffers, else the packing's (push constants `w, h, c, cstep`). The net gives only the
/// elempacks the layer declares (`Support::vulkan_packs`).
pub fn unary(rec: &mut Recorder<'_>, pipelines: &PackPipelines, bottom: &GpuMat) -> Result<GpuMat> {
    let top = bottom.alloc_like(rec.context())?;
    if let Some(flat) = pipelines.flat_for(&[bottom, &top]) {
        let flat = flat.clone();
        dispatch_flat(rec, &flat, &[bottom, &top], &[])?;
        return Ok(top);
    }
    let pipeline = pipelines.for_mat(bottom)?.clone();
    per_element(rec, &pipeline, bottom, top)
}

/// Records `pipeline` from `bottom` into `top`, one invocation per element of `bottom` (the
/// built-in shaders' push constants `w, h, c, cstep`).
pub(crate) fn per_element(
    rec: &mut Recorder<'_>,
    pipeline: &Arc<Pipeline>,
    bottom: &GpuMat,
    top: GpuMat,
) -> Result<GpuMat> {
    let words = bottom.shape_words();
    rec.dispatch(pipeline, &[bottom, &top], &words, bottom.grid())?;
    Ok(top)
}
