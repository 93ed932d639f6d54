//! Eltwise: `0=op_type` (0 product, 1 sum, 2 max), `1=coeffs` for sums, over inputs of one
//! shape.

use crate::OptionSet;
use crate::error::{Error, InputError, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::epilogue::FusedActivation;
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::flat::dispatch_flat;
use crate::layer::shared::grain::GRAIN;
use crate::layer::shared::kernels;
use crate::layer::shared::pipelines::{ActivatedPipelines, DeviceSide, PackPipelines};
use crate::layer::shared::view::first_input;
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::{ElemType, GpuMat, Mat, MatData};
use rayon::prelude::*;

/// Eltwise: `0=op_type` (0 product, 1 sum, 2 max), `1=coeffs` for sums.
#[derive(Default)]
pub struct Eltwise {
    op: i32,
    coeffs: Vec<f32>,
    /// The flat pipeline: buffer mats, one layout for every input.
    gpu: Option<PackPipelines>,
    /// The options its pipelines were made with.
    options: OptionSet,
    /// The flat pipelines with the activation the net fused into the last step.
    activated: ActivatedPipelines,
}

impl Eltwise {
    /// The flat pipelines for `op` with the activation `act` (type 0: none).
    fn flat_pipelines(&self, gpu: GpuSetup<'_>, act: FusedActivation) -> Result<PackPipelines> {
        let values = [
            (0, SpecValue::I32(self.op)),
            (1, SpecValue::I32(act.kind)),
            (2, SpecValue::F32(act.params[0])),
            (3, SpecValue::F32(act.params[1])),
        ];
        PackPipelines::default().with_flat(gpu, Shader::EltwiseFlat.module(), &values)
    }

    /// The steps folding `bottoms` into one output, the last with `last`'s pipelines.
    fn forward_steps(
        &self,
        bottoms: &[GpuMat],
        last: Option<&PackPipelines>,
        rec: &mut Recorder<'_>,
    ) -> Result<GpuMat> {
        let pipelines = self.gpu.ready()?;
        let [first, rest @ ..] = bottoms else {
            return Err(InputError::Count {
                got: 0,
                expected: "at least 1",
            }
            .into());
        };
        let coeff = |i: usize| self.coeffs.get(i).copied().unwrap_or(1.0);
        let ctx = rec.context();
        let mut acc = first.clone();
        for (i, b) in rest.iter().enumerate() {
            let top = first.alloc_like(ctx)?;
            let step = match last {
                Some(last) if i + 1 == rest.len() => last,
                _ => pipelines,
            };
            let flat = step
                .flat_for(&[&acc, b, &top])
                .ok_or_else(|| InputError::Mismatch {
                    a: first.shape().to_vec(),
                    b: b.shape().to_vec(),
                    why: "are not buffer mats of one layout",
                })?
                .clone();
            // the first step scales the first input too
            let ca = if i == 0 { coeff(0) } else { 1.0 };
            let extra = [ca.to_bits(), coeff(i + 1).to_bits()];
            dispatch_flat(rec, &flat, &[&acc, b, &top], &extra)?;
            acc = top;
        }
        Ok(acc)
    }
}

impl Layer for Eltwise {
    fn support(&self) -> Support {
        // the net packs every input alike (same shapes): one layout for the flat shader; on
        // the CPU in one packing (`same_packing`), combined as stored
        Support {
            packing: true,
            any_packing: true,
            same_packing: true,
            ..Support::MANY.gpu(self.gpu.is_some()).gpu_4d()
        }
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        // flat shaders only: image nets run Eltwise on the CPU
        self.gpu = match gpu {
            Some(gpu) => {
                self.options = gpu.options;
                Some(self.flat_pipelines(gpu, FusedActivation::new(0, [0.0; 2]))?)
            }
            _ => None,
        };
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms.len() >= 2
            && bottoms.iter().all(|b| *b == bottoms[0])
            && (self.coeffs.is_empty() || self.coeffs.len() == bottoms.len())
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        Ok(vec![self.forward_steps(bottoms, None, rec)?])
    }

    fn gpu_residual_sum(&self) -> bool {
        self.op == 1 && self.coeffs.iter().all(|&c| c == 1.0)
    }

    fn forward_gpu_activated(
        &self,
        bottoms: &[GpuMat],
        act: FusedActivation,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        if bottoms.len() < 2 {
            return Ok(None);
        }
        let gpu = GpuSetup {
            ctx: rec.context(),
            options: self.options,
        };
        let last = self.activated.get(act, |a| self.flat_pipelines(gpu, a))?;
        self.forward_steps(bottoms, Some(&last), rec).map(Some)
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.op = pd.int(0, 0);
        self.coeffs = pd.floats(1);
        if !(0..=2).contains(&self.op) {
            return Err(Error::BadParam {
                id: 0,
                value: self.op.to_string(),
                allowed: "op_type 0 (product), 1 (sum) or 2 (max)",
            });
        }
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let first = first_input(bottoms)?;
        if let Some(b) = bottoms.iter().find(|b| !b.same_shape(first)) {
            return Err(InputError::Mismatch {
                a: first.shape().to_vec(),
                b: b.shape().to_vec(),
                why: "differ",
            }
            .into());
        }
        if !self.coeffs.is_empty() && self.coeffs.len() != bottoms.len() {
            return Err(InputError::Values {
                what: "inputs for the coefficients",
                got: bottoms.len(),
                expected: self.coeffs.len(),
            }
            .into());
        }
        let coeff = |i: usize| self.coeffs.get(i).copied().unwrap_or(1.0);
        // fp32 inputs of one layout: their storage combined in place, padding and all
        fn raw<'m>(m: &'m Mat, first: &Mat) -> Option<&'m [f32]> {
            m.f32().ok().filter(|_| m.same_layout(first))
        }
        if first.f32().is_ok() && bottoms.iter().all(|b| raw(b, first).is_some()) {
            let a = raw(first, first).unwrap_or_default();
            let mut top = first.with_data(MatData::for_writing(ElemType::F32, a.len()));
            let acc = top.f32_mut()?;
            let op = self.op;
            // `x·cx ⊕ y·cy` (the coefficients only for sums; times 1 is exact)
            let combine = move |cx: f32, cy: f32| {
                move |x: f32, y: f32| match op {
                    0 => x * y,
                    1 => x * cx + y * cy,
                    _ => x.max(y),
                }
            };
            let c0 = if op == 1 { coeff(0) } else { 1.0 };
            // the first pair straight into the output, later inputs onto it
            match bottoms.get(1) {
                Some(b) => {
                    let (v, f) = (raw(b, first).unwrap_or_default(), combine(c0, coeff(1)));
                    acc.par_chunks_mut(GRAIN)
                        .zip(a.par_chunks(GRAIN))
                        .zip(v.par_chunks(GRAIN))
                        .for_each(|((o, x), y)| kernels::zip_into(o, x, y, f));
                }
                None => acc
                    .par_chunks_mut(GRAIN)
                    .zip(a.par_chunks(GRAIN))
                    .for_each(|(o, x)| {
                        o.copy_from_slice(x);
                        kernels::map(o, |v| v * c0);
                    }),
            }
            for (i, b) in bottoms.iter().enumerate().skip(2) {
                let (v, f) = (raw(b, first).unwrap_or_default(), combine(1.0, coeff(i)));
                acc.par_chunks_mut(GRAIN)
                    .zip(v.par_chunks(GRAIN))
                    .for_each(|(o, y)| kernels::zip_with(o, y, f));
            }
            return Ok(vec![top]);
        }
        let mut acc: Vec<f32> = first.to_values();
        if self.op == 1 {
            acc.iter_mut().for_each(|x| *x *= coeff(0));
        }
        for (i, b) in bottoms.iter().enumerate().skip(1) {
            let v = b.to_values();
            let c = coeff(i);
            acc.iter_mut().zip(v).for_each(|(x, y)| {
                *x = match self.op {
                    0 => *x * y,
                    1 => *x + y * c,
                    _ => x.max(y),
                }
            });
        }
        Ok(vec![Mat::from_shape_values(
            first.dims,
            first.shape(),
            &acc,
        )?])
    }
}
