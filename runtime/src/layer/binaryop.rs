//! BinaryOp: `0=op_type 1=with_scalar 2=b`: broadcasting, scalar and reversed ops. On the
//! GPU for scalars, equal shapes and broadcasts along w, h or per channel.

use crate::error::{Error, InputError, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::activation::map_inplace;
use crate::layer::contract::{GpuSetup, Implements, Layer, Support};
use crate::layer::flat::dispatch_flat;
use crate::layer::params::ParamDict;
use crate::layer::pipelines::{DeviceSide, PackPipelines, slot};
use crate::layer::run_options::RunOptions;
use crate::shaders::Shader;
use crate::tensor::{GpuMat, Mat};
use rayon::prelude::*;

/// ncnn's BinaryOp `op_type` on two values.
pub fn binary(op: i32, x: f32, y: f32) -> f32 {
    match op {
        0 => x + y,
        1 => x - y,
        2 => x * y,
        3 => x / y,
        4 => x.max(y),
        5 => x.min(y),
        6 => x.powf(y),
        7 => y - x,
        8 => y / x,
        9 => y.powf(x),
        10 => x.atan2(y),
        11 => y.atan2(x),
        _ => f32::NAN,
    }
}

/// `[c, d, h, w]` of a mat in unpacked values (numpy order).
fn nchw(m: &Mat) -> [usize; 4] {
    let [w, h, d, c] = m.shape();
    [c, d, h, w]
}

/// `a`'s and `b`'s extents (`[c, d, h, w]`, 1 where broadcast), the output's, its dims.
type Broadcast = ([usize; 4], [usize; 4], [usize; 4], u8);

/// The broadcast shape of `a` and `b` as ncnn's BinaryOp forms it: a 1-D operand whose length
/// is the other's outermost extent broadcasts along that axis (per channel), other 1-D ones
/// align with the innermost axis like numpy's; a lower-rank operand of 2 or more dims aligns
/// with the other's outermost axes; extents of 1 stretch.
fn broadcast(a: &Mat, b: &Mat) -> Result<Broadcast> {
    let (mut sa, mut sb) = (nchw(a), nchw(b));
    // the index of a mat's outermost extent in `[c, d, h, w]`
    let outer = |m: &Mat| match m.dims {
        1 => 3,
        2 => 2,
        _ => 0,
    };
    if a.dims != b.dims && a.dims > 1 && b.dims == 1 && b.w * b.elempack == sa[outer(a)] {
        sb = [1; 4];
        sb[outer(a)] = b.w * b.elempack;
    } else if a.dims != b.dims && b.dims > 1 && a.dims == 1 && a.w * a.elempack == sb[outer(b)] {
        sa = [1; 4];
        sa[outer(b)] = a.w * a.elempack;
    } else if a.dims != b.dims && a.dims.min(b.dims) >= 2 {
        // ncnn aligns the lower-rank operand with the other's outer axes (a 2-D [h, w] against
        // a 3-D [c, h, w] pairs its h with c), where numpy aligns the inner ones
        let rank = usize::from(a.dims.max(b.dims));
        let left_aligned = |m: &Mat| {
            let mut v = m.numpy_shape();
            v.resize(rank, 1);
            match v[..] {
                [c, h, w] => [c, 1, h, w],
                [c, d, h, w] => [c, d, h, w],
                _ => nchw(m),
            }
        };
        if a.dims < b.dims {
            sa = left_aligned(a);
        } else {
            sb = left_aligned(b);
        }
    }
    let mut out = [1; 4];
    for i in 0..4 {
        out[i] = match (sa[i], sb[i]) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(InputError::Mismatch {
                    a: sa.to_vec(),
                    b: sb.to_vec(),
                    why: "do not broadcast (NCHW, numpy's rules)",
                }
                .into());
            }
        };
    }
    Ok((sa, sb, out, a.dims.max(b.dims)))
}

/// BinaryOp: `0=op_type 1=with_scalar 2=b`.
#[derive(Default)]
pub struct BinaryOp {
    op: i32,
    scalar: Option<f32>,
    gpu: Option<PackPipelines>,
    /// The scalar as a one-element mat per elempack (1, 4, 8), every lane the scalar.
    gpu_scalar: [Option<GpuMat>; 3],
}

/// A mat's 3-D view in unpacked values (`[w, h, c]`), as GPU mats lay 1-D and 2-D blobs out.
fn view3(dims: u8, [w, h, _, c]: [usize; 4]) -> [usize; 3] {
    match dims {
        1 => [1, 1, w],
        2 => [w, 1, h],
        _ => [w, h, c],
    }
}

/// The output view when the GPU shaders can compute `a op b` directly: channels equal (so
/// both have the same packing), w and h equal or 1 on one side, the output as large as one
/// input; a 1-D operand only as ncnn's per-channel broadcast.
fn gpu_out_view(a: (u8, [usize; 4]), b: (u8, [usize; 4])) -> Option<[usize; 3]> {
    let (va, vb) = (view3(a.0, a.1), view3(b.0, b.1));
    if a.0 > 3 || b.0 > 3 || va[2] != vb[2] {
        return None;
    }
    if a.0 != b.0 && a.0 != 1 && b.0 != 1 {
        return None;
    }
    let mut out = [0; 3];
    for i in 0..2 {
        out[i] = match (va[i], vb[i]) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    out[2] = va[2];
    (out == va || out == vb).then_some(out)
}

impl BinaryOp {
    /// `a * b` of two blobs: what Scale with a second blob computes.
    pub(crate) fn multiply() -> Self {
        BinaryOp {
            op: 2,
            ..BinaryOp::default()
        }
    }

    fn pipelines(&self) -> Result<&PackPipelines> {
        self.gpu.ready()
    }

    /// Records `top = a op b` over `top`'s elements (`a`, `b` broadcast where an extent is 1):
    /// flat over the buffers when `a`, `b` and `top` share one layout, or `b` is the scalar.
    fn dispatch(&self, rec: &mut Recorder<'_>, a: &GpuMat, b: &GpuMat, top: &GpuMat) -> Result<()> {
        let pipelines = self.pipelines()?;
        let flat = match self.scalar {
            // the pack8 scalar's first 16 bytes are the scalar in every flat lane
            Some(_) => pipelines
                .flat_for(&[a, top])
                .zip(self.gpu_scalar[slot(8)].as_ref())
                .filter(|(_, s)| s.format == a.format),
            None => pipelines.flat_for(&[a, b, top]).map(|p| (p, b)),
        };
        if let Some((flat, b)) = flat {
            let flat = flat.clone();
            return dispatch_flat(rec, &flat, &[a, b, top], &[]);
        }
        let pipeline = pipelines.for_mat(top)?.clone();
        let mut words = [0u32; 12];
        words[..4].copy_from_slice(&a.shape_words());
        words[4..8].copy_from_slice(&b.shape_words());
        words[8..].copy_from_slice(&top.shape_words());
        rec.dispatch(&pipeline, &[a, b, top], &words, top.grid())
    }
}

/// `out[i] = f(x[i], y[i])` in parallel chunks, written so the compiler vectorizes the body.
fn zip_map(out: &mut [f32], x: &[f32], y: &[f32], f: impl Fn(f32, f32) -> f32 + Sync + Send) {
    const CHUNK: usize = 1 << 14;
    out.par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK).zip(y.par_chunks(CHUNK)))
        .for_each(|(o, (x, y))| {
            for ((o, x), y) in o.iter_mut().zip(x).zip(y) {
                *o = f(*x, *y);
            }
        });
}

impl BinaryOp {
    /// `a op b` straight over the stored values when both are fp32 with the same shape and
    /// layout (any packing): no broadcast, no unpacking.
    fn same_layout(&self, a: &Mat, b: &Mat) -> Option<Mat> {
        if !a.same_shape(b) || a.elempack != b.elempack || a.cstep != b.cstep {
            return None;
        }
        let (x, y) = (a.f32().ok()?, b.f32().ok()?);
        let mut out = a.zeros_like();
        let o = out.f32_mut().ok()?;
        match self.op {
            0 => zip_map(o, x, y, |x, y| x + y),
            1 => zip_map(o, x, y, |x, y| x - y),
            2 => zip_map(o, x, y, |x, y| x * y),
            3 => zip_map(o, x, y, |x, y| x / y),
            4 => zip_map(o, x, y, f32::max),
            5 => zip_map(o, x, y, f32::min),
            7 => zip_map(o, x, y, |x, y| y - x),
            8 => zip_map(o, x, y, |x, y| y / x),
            op => zip_map(o, x, y, move |x, y| binary(op, x, y)),
        }
        Some(out)
    }
}

impl Layer for BinaryOp {
    fn support(&self) -> Support {
        Support {
            one_blob_only: self.scalar.is_some(),
            inplace: self.scalar.is_some(),
            vulkan: true,
            vulkan_packing: true,
            vulkan_images: true,
            // equal layouts run over the stored values; broadcasts unpack
            packing: true,
            any_packing: true,
            ..Support::default()
        }
    }

    fn implements(&self) -> Implements {
        Implements {
            forward_many: true,
            forward_inplace: true,
            forward_gpu_many: true,
            forward_gpu_inplace: true,
            ..Implements::default()
        }
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(gpu) => Some(
                PackPipelines::create(
                    gpu,
                    &[
                        (1, Shader::Binaryop.module()),
                        (4, Shader::BinaryopPack4.module()),
                        (8, Shader::BinaryopPack8.module()),
                    ],
                    &[(0, SpecValue::I32(self.op))],
                )?
                .with_flat(
                    gpu,
                    Shader::BinaryopFlat.module(),
                    &[
                        (0, SpecValue::I32(self.op)),
                        (1, SpecValue::I32(i32::from(self.scalar.is_some()))),
                    ],
                )?,
            ),
            None => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        if let Some(s) = self.scalar {
            for pack in [1, 4, 8] {
                let m = Mat::from_values(1, 1, pack, &vec![s; pack])?.to_packing(pack)?;
                self.gpu_scalar[slot(pack)] = Some(GpuMat::upload(gpu.ctx, &m, gpu.options)?);
            }
        }
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[(u8, [usize; 4])]) -> bool {
        match bottoms {
            [_] => self.scalar.is_some(),
            [a, b] => gpu_out_view(*a, *b).is_some(),
            _ => false,
        }
    }

    fn forward_gpu_inplace(&self, blob: &mut GpuMat, rec: &mut Recorder<'_>) -> Result<()> {
        let b = self.gpu_scalar[slot(blob.elempack)]
            .as_ref()
            .ok_or(Error::NotLoaded {
                what: "the scalar b on the device",
            })?;
        // a new mat: one binding cannot be both read-only and written in a dispatch
        let top = blob.alloc_like(rec.context())?;
        self.dispatch(rec, blob, b, &top)?;
        *blob = top;
        Ok(())
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let [a, b] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "2",
            }
            .into());
        };
        let out = gpu_out_view((a.dims, a.shape()), (b.dims, b.shape())).ok_or_else(|| {
            InputError::Mismatch {
                a: a.shape().to_vec(),
                b: b.shape().to_vec(),
                why: "have no GPU broadcast",
            }
        })?;
        let like = if view3(a.dims, a.shape()) == out {
            a
        } else {
            b
        };
        let top = like.alloc_like(rec.context())?;
        self.dispatch(rec, a, b, &top)?;
        Ok(vec![top])
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.op = pd.int_in(0, 0, 0..=11, "op_type 0 to 11")?;
        self.scalar = (pd.int(1, 0) != 0).then(|| pd.float(2, 0.0));
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &RunOptions) -> Result<()> {
        let (op, b) = (self.op, self.scalar.unwrap_or(0.0));
        map_inplace(blob, move |x| binary(op, x, b));
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let [a, b] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "2",
            }
            .into());
        };
        if let Some(out) = self.same_layout(a, b) {
            return Ok(vec![out]);
        }
        let (sa, sb, out, dims) = broadcast(a, b)?;
        let (va, vb) = (a.to_values(), b.to_values());
        let strides = |s: [usize; 4]| {
            let st = [s[1] * s[2] * s[3], s[2] * s[3], s[3], 1];
            [0, 1, 2, 3].map(|i| if s[i] == 1 { 0 } else { st[i] })
        };
        let (ta, tb) = (strides(sa), strides(sb));
        let plane = out[1] * out[2] * out[3];
        let mut values = vec![0.0f32; out[0] * plane];
        values
            .par_chunks_mut(plane.max(1))
            .enumerate()
            .for_each(|(q, chunk)| {
                let mut i = 0;
                for z in 0..out[1] {
                    for y in 0..out[2] {
                        for x in 0..out[3] {
                            let ia = q * ta[0] + z * ta[1] + y * ta[2] + x * ta[3];
                            let ib = q * tb[0] + z * tb[1] + y * tb[2] + x * tb[3];
                            chunk[i] = binary(self.op, va[ia], vb[ib]);
                            i += 1;
                        }
                    }
                }
            });
        let shape = [out[3], out[2], out[1], out[0]];
        let shape = match dims {
            1 => [out[3], 1, 1, 1],
            2 => [out[3], out[2], 1, 1],
            3 => [out[3], out[2], 1, out[0]],
            _ => shape,
        };
        Ok(vec![Mat::from_shape_values(dims, shape, &values)?])
    }
}
