//! Pooling1D: `0=pooling_type` (0 max, 1 average) `1=kernel_w 2=stride_w 3=pad_left
//! 14=pad_right 4=global_pooling 5=pad_mode` (0 full: the tail padded to a whole stride,
//! 1 valid, 2 / 3 "same" upper / lower) `6=avgpool_count_include_pad 7=adaptive_pooling
//! 8=out_w`, over each row of a 2-D blob (a sequence of `w` steps per channel row). Global
//! pooling gives a 1-D blob of one value per row; adaptive pooling `out_w` windows
//! `[⌊w·j/out_w⌋, ⌈w·(j+1)/out_w⌉)`. An average that leaves out the padding counts the steps
//! between the params' pads (and the full mode's tail), as ncnn.

use crate::error::{Error, InputError, Result};
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::reduce::pool_window::{Axis, AxisParams, axes, spec_values};
use crate::layer::run_options::RunOptions;
use crate::layer::shared::pipelines::DeviceSide;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};
use rayon::prelude::*;
use std::sync::Arc;

/// Max or average pooling along rows.
#[derive(Default)]
pub struct Pooling1D {
    average: bool,
    kernel: usize,
    stride: usize,
    /// The params' left and right padding.
    pad: [usize; 2],
    global: bool,
    pad_mode: i32,
    include_pad: bool,
    /// Adaptive pooling's output width.
    adaptive: Option<usize>,
    gpu: Option<Arc<Pipeline>>,
}

impl Pooling1D {
    /// The windows along a row of `w`.
    fn windows(&self, w: usize) -> Result<Axis> {
        let params = AxisParams {
            kernel: self.kernel,
            stride: self.stride,
            pad: self.pad,
            lower_first: true,
        };
        Ok(axes(&[w], &[params], self.pad_mode)?[0])
    }

    /// The output width (`None`: global, one value per row) for rows of `w`.
    fn out_width(&self, w: usize) -> Result<Option<usize>> {
        match (self.global, self.adaptive) {
            (true, _) => Ok(None),
            (false, Some(n)) => Ok(Some(n)),
            (false, None) => Ok(Some(self.windows(w)?.out)),
        }
    }

    fn check(dims: u8) -> Result<()> {
        match dims {
            2 => Ok(()),
            got => Err(InputError::Dims {
                got,
                takes: "2-D blobs (rows of steps)",
            }
            .into()),
        }
    }

    /// One output value of a row: window `j` of `outw`.
    fn pool(&self, row: &[f32], j: usize, outw: usize) -> f32 {
        let w = row.len();
        let reduce = |from: usize, to: usize| {
            let vals = &row[from..to];
            if self.average {
                vals.iter().fold(0.0, |s, v| s + v) / (to - from) as f32
            } else {
                vals.iter().fold(vals[0], |m, &v| m.max(v))
            }
        };
        if self.global {
            return reduce(0, w);
        }
        if self.adaptive.is_some() {
            return reduce(w * j / outw, (w * (j + 1)).div_ceil(outw));
        }
        let Ok(win) = self.windows(w) else {
            return 0.0;
        };
        let value = |sx: usize| match usize::try_from(sx as i64 - win.left) {
            Ok(i) if i < w => row[i],
            _ if self.average => 0.0,
            _ => f32::MIN,
        };
        let start = j * self.stride;
        let taps = start..start + self.kernel;
        if !self.average {
            return taps.fold(value(start), |m, sx| m.max(value(sx)));
        }
        if self.include_pad {
            return taps.fold(0.0, |s, sx| s + value(sx)) / self.kernel as f32;
        }
        let [from, to] = win.counted;
        let kept = taps.filter(|&sx| (from..to).contains(&(sx as i64)));
        let (sum, area) = kept.fold((0.0, 0), |(s, n), sx| (s + value(sx), n + 1));
        sum / area as f32
    }
}

impl Layer for Pooling1D {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.average = pd.int_in(0, 0, 0..=1, "0 max or 1 average")? == 1;
        self.global = pd.int(4, 0) != 0;
        let adaptive = pd.int(7, 0) != 0;
        let positive = |id: u32, default: i32, what: &'static str| {
            pd.int_in(id, default, 1..=i32::MAX, what)
                .map(|v| v as usize)
        };
        let pads = [pd.int(3, 0), pd.int(14, pd.int(3, 0))];
        if let Some(p) = pads.iter().find(|p| **p < 0) {
            return Err(Error::BadParam {
                id: if *p == pads[0] { 3 } else { 14 },
                value: p.to_string(),
                allowed: "padding of at least 0",
            });
        }
        self.pad = pads.map(|p| p as usize);
        self.pad_mode = pd.int_in(5, 0, 0..=3, "pad_mode 0 to 3")?;
        self.include_pad = pd.int(6, 0) != 0;
        self.adaptive = None;
        if !self.global && adaptive {
            self.adaptive = Some(positive(8, 0, "an adaptive output width of at least 1")?);
        }
        if !self.global && !adaptive {
            self.kernel = positive(1, 0, "a kernel of at least 1")?;
            self.stride = positive(2, 1, "a stride of at least 1")?;
        }
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let (a, g, pad) = (self.average, self.global, self.include_pad);
        let values = spec_values(a, g, self.adaptive.is_some(), pad);
        let module = crate::shaders::Shader::Pooling1d.module();
        self.gpu = gpu.map(|g| g.pipeline(module, &values)).transpose()?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        (bottoms.iter()).all(|b| b.dims == 2 && self.out_width(b.shape[0]).is_ok())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        Self::check(bottom.dims)?;
        let [w, h, ..] = bottom.shape();
        let outw = self.out_width(w)?;
        let n = outw.unwrap_or(1);
        let x = bottom.to_values();
        let mut out = vec![0.0; crate::host::values(&[n, h])?];
        out.par_chunks_mut(n).enumerate().for_each(|(q, row)| {
            let input = &x[q * w..][..w];
            for (j, o) in row.iter_mut().enumerate() {
                *o = self.pool(input, j, n);
            }
        });
        match outw {
            Some(n) => Mat::from_numpy(&[h, n], &out),
            None => Mat::from_numpy(&[h], &out),
        }
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let pipeline = self.gpu.ready()?;
        Self::check(bottom.dims)?;
        let (w, h) = (bottom.w, bottom.c);
        let outw = self.out_width(w)?;
        let n = outw.unwrap_or(1);
        let top = match outw {
            Some(n) => GpuMat::alloc(rec.context(), 2, [n, 1, h], 1, bottom.options)?,
            None => GpuMat::alloc(rec.context(), 1, [1, 1, h], 1, bottom.options)?,
        };
        let win = match outw.is_some() && self.adaptive.is_none() {
            true => self.windows(w)?,
            false => Axis {
                left: 0,
                out: n,
                counted: [0, w as i64],
            },
        };
        let mut words = bottom.shape_words().to_vec();
        words.extend(top.shape_words());
        let [from, to] = win.counted;
        let fields = [
            self.kernel as i64,
            self.stride as i64,
            win.left,
            n as i64,
            from,
            to,
        ];
        words.extend(fields.map(|v| v as i32 as u32));
        rec.dispatch(pipeline, &[bottom, &top], &words, [n as u32, h as u32, 1])?;
        Ok(top)
    }
}
