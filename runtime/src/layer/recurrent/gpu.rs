//! The recurrent layers on the device: the input's gate sums for every step and direction in
//! one GEMM (the matrix layers', bias added per column), then the steps ([`Steps`]): small
//! layers in one dispatch (`recurrent`: a workgroup per direction steps through the sequence,
//! the state in shared memory), larger ones a dispatch per step spread over the device
//! (`recurrent_step`: the dependency between steps allows no fewer without a device-wide
//! barrier, which Vulkan has only between dispatches). On an H200 an LSTM of 512 units over 256
//! steps took 140 ms in the one workgroup, 1.9 ms a dispatch per step (torch.nn.LSTM: 3.1). Layers of more than `MAX_UNITS` (512) units, and int8
//! ones (whose per-step dynamic quantization ncnn runs on the CPU), stay on the CPU.

use std::sync::Arc;

use super::Recurrent;
use crate::OptionSet;
use crate::error::{Error, InputError, Result};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::GpuSetup;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::gpu_gemm::{self, Addend, Form, Operand, Pipelines, Sizes};
use crate::shaders::Shader;
use crate::tensor::{BlobShape, GpuMat};

/// The most units (outputs or cells) the shader's shared arrays hold.
const MAX_UNITS: usize = 512;

/// From this many weights per gate (units × outputs) a layer takes a dispatch per step.
const PER_STEP_WEIGHTS: usize = 64 * 64;

/// How a layer's steps run on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Steps {
    /// `recurrent`: one workgroup per direction through the whole sequence.
    OneDispatch,
    /// `recurrent_step`: a dispatch per step (two with LSTM's projection) over the device.
    PerStep,
}

/// Units a workgroup of `recurrent_step` updates (its `UNITS`).
const STEP_UNITS: usize = 2;

/// The device side: the GEMM's and the steps' pipelines (without and with initial states),
/// and the weights.
pub(crate) struct GpuRecurrent {
    gemm: Pipelines,
    plan: Steps,
    /// `recurrent` without and with initial states, or `recurrent_step`'s two stages.
    steps: [Arc<Pipeline>; 2],
    weights: Option<[GpuMat; 5]>,
}

impl Recurrent {
    /// Whether the device takes this layer.
    fn fits_device(&self) -> bool {
        !self.int8 && self.num_output <= MAX_UNITS && self.hidden <= MAX_UNITS
    }

    /// The pipelines of cell `cell` (0 RNN, 1 LSTM, 2 GRU), where the device takes the layer.
    pub(crate) fn create_gpu(
        &self,
        cell: i32,
        gpu: Option<GpuSetup<'_>>,
        opt: &RunOptions,
    ) -> Result<Option<GpuRecurrent>> {
        let Some(gpu) = gpu.filter(|_| self.fits_device()) else {
            return Ok(None);
        };
        let i = |v: usize| SpecValue::I32(v as i32);
        let spec = |init: usize| {
            [
                (0, SpecValue::I32(cell)),
                (1, i(self.num_output)),
                (2, i(self.hidden)),
                (3, SpecValue::I32(self.direction)),
                (4, i(init)),
            ]
        };
        let plan = match self.hidden * self.num_output >= PER_STEP_WEIGHTS {
            true => Steps::PerStep,
            false => Steps::OneDispatch,
        };
        // constant 4: the initial states given, or recurrent_step's stage
        let module = match plan {
            Steps::OneDispatch => Shader::Recurrent.module(),
            Steps::PerStep => Shader::RecurrentStep.module(),
        };
        let form = Form {
            trans_b: true,
            ..Form::PLAIN
        };
        Ok(Some(GpuRecurrent {
            gemm: form.pipeline(gpu, opt)?,
            plan,
            steps: [
                gpu.pipeline(module, &spec(0))?,
                gpu.pipeline(module, &spec(1))?,
            ],
            weights: None,
        }))
    }

    /// Uploads the weights of every direction: W_xc, the input sums' bias (per row of W_xc),
    /// W_hc, W_hr (or a stand-in) and the whole bias.
    pub(crate) fn upload_gpu(&self, state: &mut GpuRecurrent, gpu: GpuSetup<'_>) -> Result<()> {
        let cat = |f: &dyn Fn(&super::DirectionWeights) -> &[f32]| -> Vec<f32> {
            self.dirs
                .iter()
                .flat_map(|d| f(d).iter().copied())
                .collect()
        };
        let rows = self
            .dirs
            .first()
            .map_or(0, |d| d.xc.len() / self.size.max(1));
        let xbias: Vec<f32> = self
            .dirs
            .iter()
            .flat_map(|d| d.bias[..rows].iter().copied())
            .collect();
        let mut hr = cat(&|d| &d.hr);
        if hr.is_empty() {
            hr.push(0.0);
        }
        state.weights = Some([
            gpu.upload_values(&cat(&|d| &d.xc), 1)?,
            gpu.upload_values(&xbias, 1)?,
            gpu.upload_values(&cat(&|d| &d.hc), 1)?,
            gpu.upload_values(&hr, 1)?,
            gpu.upload_values(&cat(&|d| &d.bias), 1)?,
        ]);
        Ok(())
    }

    /// Whether the device takes these inputs: the sequence, and the initial states (`states`
    /// of them: 1, or LSTM's 2) of their sizes.
    pub(crate) fn gpu_accepts(&self, bottoms: &[BlobShape], states: usize) -> bool {
        let dirs = self.directions();
        let count = |b: &BlobShape| b.shape.iter().product::<usize>();
        match bottoms {
            [x, rest @ ..] => {
                x.dims == 2
                    && x.shape[0] == self.size
                    && (rest.is_empty() || rest.len() == states)
                    && rest.iter().enumerate().all(|(k, b)| {
                        let width = if k == 0 { self.num_output } else { self.hidden };
                        count(b) == width * dirs
                    })
            }
            [] => false,
        }
    }

    /// The forward on the device: the output sequence, and with `tops` above 1 the final
    /// hidden state (and with 3, LSTM's cell state).
    pub(crate) fn forward_gpu(
        &self,
        state: &GpuRecurrent,
        tops: usize,
        bottoms: &[GpuMat],
        rec: &mut Recorder<'_>,
    ) -> Result<Vec<GpuMat>> {
        let Some([xc, xbias, hc, hr, bias]) = &state.weights else {
            return Err(Error::NotLoaded {
                what: "the weights on the device",
            });
        };
        let Some(x) = bottoms.first() else {
            return Err(InputError::Count {
                got: 0,
                expected: "the sequence, and optionally the initial states",
            }
            .into());
        };
        let steps = x.c * x.elempack;
        let dirs = self.directions();
        let rows = xbias.c * xbias.elempack / dirs;
        let width = dirs * rows;
        let ctx = rec.context();
        // every step's input sums, [T][direction · rows]
        let xs = GpuMat::alloc(ctx, 2, [width, 1, steps], 1, x.options)?;
        gpu_gemm::record(
            rec,
            &state.gemm,
            Sizes::batched(steps, width, self.size, 1),
            Operand::rows(x),
            Operand::dense(xc, self.size),
            Some(Addend {
                mat: xbias,
                broadcast: 4,
                rs: 0,
            }),
            Operand::rows(&xs),
            None,
        )?;
        let top = GpuMat::alloc(ctx, 2, [self.num_output * dirs, 1, steps], 1, x.options)?;
        let finals = tops > 1;
        let alloc_final = |n: usize| match finals {
            true => GpuMat::alloc(ctx, 2, [n, 1, dirs], 1, x.options),
            // writable stand-ins the shader does not write
            false => scratch(ctx, 4),
        };
        let final_h = alloc_final(self.num_output)?;
        let final_c = alloc_final(self.hidden)?;
        let init = bottoms.len() > 1;
        let init_h = bottoms.get(1).unwrap_or(x);
        let init_c = bottoms.get(2).unwrap_or(x);
        match state.plan {
            Steps::OneDispatch => rec.dispatch(
                &state.steps[usize::from(init)],
                &[&xs, hc, hr, bias, init_h, init_c, &top, &final_h, &final_c],
                &[steps as u32, u32::from(finals)],
                [256 * dirs as u32, 1, 1],
            )?,
            Steps::PerStep => {
                // the state in fp32: h in a pair of buffers (read one, write the other), c and
                // LSTM's units before their projection
                let h = [
                    scratch(ctx, dirs * self.num_output)?,
                    scratch(ctx, dirs * self.num_output)?,
                ];
                let c = scratch(ctx, dirs * self.hidden)?;
                let units = scratch(ctx, dirs * self.hidden)?;
                let projected = hr.c * hr.elempack > 1;
                let groups = |n: usize| (256 * n.div_ceil(STEP_UNITS)) as u32;
                for t in 0..steps {
                    let (prev, next) = (&h[t % 2], &h[(t + 1) % 2]);
                    let buffers = [
                        &xs, hc, bias, prev, next, &c, &top, &final_h, &final_c, init_h, init_c,
                        &units, hr,
                    ];
                    let push = [
                        t,
                        steps,
                        usize::from(init),
                        usize::from(finals && t + 1 == steps),
                    ]
                    .map(|v| v as u32);
                    let grid = [groups(self.hidden), dirs as u32, 1];
                    rec.dispatch(&state.steps[0], &buffers, &push, grid)?;
                    if projected {
                        let grid = [groups(self.num_output), dirs as u32, 1];
                        rec.dispatch(&state.steps[1], &buffers, &push, grid)?;
                    }
                }
            }
        }
        let mut out = vec![top];
        if finals {
            out.push(final_h);
            if tops > 2 {
                out.push(final_c);
            }
        }
        Ok(out)
    }
}

/// A writable fp32 buffer of `n` values for the state between steps (or a stand-in).
fn scratch(ctx: &crate::gpu::Context, n: usize) -> Result<GpuMat> {
    GpuMat::alloc(ctx, 1, [1, 1, n.max(4)], 1, OptionSet::FP32)
}
