//! The device side of a binary op (`shaders/binaryop*.comp`): `a op b` with broadcast, for
//! BinaryOp and for Scale's second-blob multiply. The shaders take scalars, equal shapes and
//! broadcasts along w, h or per channel in every packing; every other broadcast ncnn allows
//! runs on pack1 buffers, the operands first stretched to the output's shape by the strided
//! copy shader.

use crate::OptionSet;
use crate::error::{Error, InputError, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::contract::{GpuSetup, Packs, Support};
use crate::layer::elementwise::broadcast_rule::{Broadcast, Operand, broadcast_of, paired};
use crate::layer::epilogue::FusedActivation;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::flat::dispatch_flat;
use crate::layer::shared::pipelines::{ActivatedPipelines, DeviceSide, PackPipelines, slot};
use crate::layer::shared::strided_copy::{CopyExtras, CopyMode, StridedCopy, alloc_numpy};
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat, Strided, contiguous_strides};

/// The pipelines of one `op_type`, with `b` a scalar or a second blob.
pub(crate) struct BinaryGpu {
    op: i32,
    pipelines: PackPipelines,
    /// The options the pipelines were made with.
    options: OptionSet,
    /// The pipelines with the activation the net fused after the op.
    activated: ActivatedPipelines,
    /// Stretches an operand to the output's shape for the broadcasts the shaders lack
    /// (buffer nets, two blobs).
    stretch: Option<StridedCopy>,
    /// The scalar `b`, if any; on the device as a one-element mat per elempack (1, 4, 8),
    /// every lane the scalar, once uploaded.
    scalar: Option<f32>,
    gpu_scalar: [Option<GpuMat>; 3],
}

/// What a binary op supports: one blob in place with a scalar `b`, two otherwise; every
/// packing, operands of one packing (the net repacks a broadcast operand to the larger one's
/// pack, not the map to the operand's), images, 4-D blobs.
pub(crate) fn binary_support(scalar: bool) -> Support {
    Support {
        one_blob_only: scalar,
        inplace: scalar,
        // the scalar form's shader writes a new mat
        vulkan_inplace_new: true,
        vulkan: true,
        vulkan_packing: true,
        vulkan_any_packing: true,
        vulkan_same_packing: true,
        vulkan_images: true,
        vulkan_4d: true,
        // equal layouts run over the stored values; broadcasts unpack
        packing: true,
        any_packing: true,
        same_packing: true,
        ..Support::default()
    }
}

/// A mat's 3-D view in unpacked values (`[w, h, c]`), as GPU mats lay 1-D and 2-D blobs out.
fn view3(dims: u8, [w, h, d, c]: [usize; 4]) -> [usize; 3] {
    match dims {
        1 => [1, 1, w],
        2 => [w, 1, h],
        _ => [w, h * d, c],
    }
}

/// The output view when the GPU shaders can compute `a op b` directly: channels equal (so
/// both have the same packing), w and h equal or 1 on one side, the output as large as one
/// input; a 1-D operand only as ncnn's per-channel broadcast. 4-D operands broadcast along
/// the rows of their 3-D view only where h and d both do (or neither).
fn gpu_out_view(a: BlobShape, b: BlobShape) -> Option<[usize; 3]> {
    let (va, vb) = (view3(a.dims, a.shape), view3(b.dims, b.shape));
    let slabs = |BlobShape {
                     dims,
                     shape: [_, h, d, _],
                 }: BlobShape| if dims == 4 { (h, d) } else { (1, 1) };
    let (sa, sb) = (slabs(a), slabs(b));
    if va[2] != vb[2] || (sa != sb && sa != (1, 1) && sb != (1, 1)) {
        return None;
    }
    if a.dims != b.dims && a.dims != 1 && b.dims != 1 {
        return None;
    }
    let mut out = [0; 3];
    for i in 0..2 {
        out[i] = paired(va[i], vb[i])?;
    }
    out[2] = va[2];
    (out == va || out == vb).then_some(out)
}

impl BinaryGpu {
    /// The pipelines of `op` (BinaryOp's `op_type`) with `b` the scalar given, or a blob.
    pub(crate) fn create(
        gpu: GpuSetup<'_>,
        opt: &RunOptions,
        op: i32,
        scalar: Option<f32>,
    ) -> Result<BinaryGpu> {
        // the strided copy reads and writes buffers
        let stretch = match scalar {
            None if !opt.use_image_storage => Some(StridedCopy::create(gpu, CopyMode::Copy)?),
            _ => None,
        };
        let none = FusedActivation::new(0, [0.0; 2]);
        Ok(BinaryGpu {
            op,
            pipelines: pipelines(gpu, (op, scalar.is_some()), none)?,
            options: gpu.options,
            activated: ActivatedPipelines::default(),
            stretch,
            scalar,
            gpu_scalar: Default::default(),
        })
    }

    /// Uploads the scalar `b`, if any, in every packing.
    pub(crate) fn upload(&mut self, gpu: GpuSetup<'_>) -> Result<()> {
        if let Some(s) = self.scalar {
            for pack in [1, 4, 8] {
                let m = Mat::from_values(1, 1, pack, &vec![s; pack])?.to_packing(pack)?;
                self.gpu_scalar[slot(pack)] = Some(GpuMat::upload(gpu.ctx, &m, gpu.options)?);
            }
        }
        Ok(())
    }

    /// Whether the device takes inputs of these shapes.
    pub(crate) fn accepts(&self, bottoms: &[BlobShape]) -> bool {
        match bottoms {
            [_] => self.scalar.is_some(),
            [a, b] => gpu_out_view(*a, *b).is_some() || self.stretched(*a, *b).is_some(),
            _ => false,
        }
    }

    /// The packings two blobs must come in: pack1 where they are stretched.
    pub(crate) fn packs(&self, bottoms: &[BlobShape]) -> Option<Packs> {
        match bottoms {
            [a, b] if gpu_out_view(*a, *b).is_none() => Some(Packs::ONE),
            _ => None,
        }
    }

    /// `blob op scalar`, into a new mat: one binding cannot be both read-only and written in a
    /// dispatch.
    pub(crate) fn forward_scalar(&self, blob: &mut GpuMat, rec: &mut Recorder<'_>) -> Result<()> {
        let b = self.gpu_scalar[slot(blob.elempack)]
            .as_ref()
            .ok_or(Error::NotLoaded {
                what: "the scalar b on the device",
            })?;
        let top = blob.alloc_like(rec.context())?;
        self.dispatch(&self.pipelines, rec, (blob, b, &top))?;
        *blob = top;
        Ok(())
    }

    /// `a op b` of two blobs.
    pub(crate) fn forward_pair(
        &self,
        bottoms: &[GpuMat],
        rec: &mut Recorder<'_>,
    ) -> Result<GpuMat> {
        self.forward_pair_with(&self.pipelines, bottoms, rec)
    }

    /// `act(a op b)` of two blobs: the activation layer after the op, fused by the net.
    pub(crate) fn forward_pair_activated(
        &self,
        bottoms: &[GpuMat],
        act: FusedActivation,
        rec: &mut Recorder<'_>,
    ) -> Result<GpuMat> {
        let gpu = GpuSetup {
            ctx: rec.context(),
            options: self.options,
        };
        let scalar = self.scalar.is_some();
        let activated = (self.activated).get(act, |a| pipelines(gpu, (self.op, scalar), a))?;
        self.forward_pair_with(&activated, bottoms, rec)
    }

    /// [`BinaryGpu::forward_pair`] with `pipelines`.
    fn forward_pair_with(
        &self,
        pipelines: &PackPipelines,
        bottoms: &[GpuMat],
        rec: &mut Recorder<'_>,
    ) -> Result<GpuMat> {
        let [a, b] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "2",
            }
            .into());
        };
        let Some(out) = gpu_out_view(a.blob_shape(), b.blob_shape()) else {
            return self.stretch_and_dispatch(pipelines, rec, a, b);
        };
        // the output has the larger operand's dims ([31] against [31, 1, 1] is 3-D)
        let a_fits = view3(a.dims, a.shape()) == out;
        let b_fits = view3(b.dims, b.shape()) == out;
        let like = if a_fits && (!b_fits || a.dims >= b.dims) {
            a
        } else {
            b
        };
        let top = like.alloc_like(rec.context())?;
        self.dispatch(pipelines, rec, (a, b, &top))?;
        Ok(top)
    }

    /// Records `top = a op b` over `top`'s elements (`a`, `b` broadcast where an extent is 1):
    /// flat over the buffers when `a`, `b` and `top` share one layout, or `b` is the scalar.
    fn dispatch(
        &self,
        pipelines: &PackPipelines,
        rec: &mut Recorder<'_>,
        (a, b, top): (&GpuMat, &GpuMat, &GpuMat),
    ) -> Result<()> {
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

    /// The broadcast of `a` and `b` when the stretching path takes it (a buffer net, a
    /// broadcast ncnn allows).
    fn stretched(&self, a: BlobShape, b: BlobShape) -> Option<Broadcast> {
        self.stretch.as_ref()?;
        let (a, b) = (
            Operand {
                dims: a.dims,
                shape: a.shape,
            },
            Operand {
                dims: b.dims,
                shape: b.shape,
            },
        );
        broadcast_of(&a, &b).ok()
    }

    /// `a op b` for a broadcast the shaders lack: each operand not of the output's shape
    /// copied to it (stride 0 along its stretched axes), then the equal-shape shader.
    fn stretch_and_dispatch(
        &self,
        pipelines: &PackPipelines,
        rec: &mut Recorder<'_>,
        a: &GpuMat,
        b: &GpuMat,
    ) -> Result<GpuMat> {
        let copy = self.stretch.ready()?;
        let (sa, sb, out, dims) =
            self.stretched(a.blob_shape(), b.blob_shape())
                .ok_or_else(|| InputError::Mismatch {
                    a: a.shape().to_vec(),
                    b: b.shape().to_vec(),
                    why: "do not broadcast (ncnn's rules)",
                })?;
        let [c, d, h, w] = out;
        let out_np = crate::layer::shared::view::numpy_shape(dims, [w, h, d, c]);
        let stretch = |rec: &mut Recorder<'_>, m: &GpuMat, s: [usize; 4]| -> Result<GpuMat> {
            if s == out {
                return Ok(m.clone());
            }
            let strides = contiguous_strides(&s)
                .into_iter()
                .zip(s)
                .map(|(st, n)| if n == 1 { 0 } else { st })
                .collect();
            let from = Strided {
                offset: 0,
                shape: out.to_vec(),
                strides,
            };
            let top = alloc_numpy(rec, &out_np, m)?;
            copy.record(
                rec,
                (m, &from),
                (&top, &Strided::contiguous(&out)),
                CopyExtras::default(),
            )?;
            Ok(top)
        };
        let a = stretch(rec, a, sa)?;
        let b = stretch(rec, b, sb)?;
        let top = alloc_numpy(rec, &out_np, &a)?;
        self.dispatch(pipelines, rec, (&a, &b, &top))?;
        Ok(top)
    }
}

/// The binary shaders of `op` (with `b` a scalar where `scalar`) with the activation `act`
/// after the op (type 0: none), one per elempack and the flat ones.
fn pipelines(
    gpu: GpuSetup<'_>,
    (op, scalar): (i32, bool),
    act: FusedActivation,
) -> Result<PackPipelines> {
    let activation = [
        (30, SpecValue::I32(act.kind)),
        (31, SpecValue::F32(act.params[0])),
        (32, SpecValue::F32(act.params[1])),
    ];
    let mut values = vec![(0, SpecValue::I32(op))];
    values.extend(activation);
    let mut flat = vec![
        (0, SpecValue::I32(op)),
        (1, SpecValue::I32(i32::from(scalar))),
    ];
    flat.extend(activation);
    PackPipelines::create(
        gpu,
        &[
            (1, Shader::Binaryop.module()),
            (4, Shader::BinaryopPack4.module()),
            (8, Shader::BinaryopPack8.module()),
        ],
        &values,
    )?
    .with_flat(gpu, Shader::BinaryopFlat.module(), &flat)
}
