//! Layers along an axis (in ncnn's order: `c, d, h, w` of the dims the mat has): Softmax,
//! Concat, BatchNorm and Scale (per "channel": w for 1-D, h for 2-D, c otherwise).

use crate::error::{Error, Result};
use crate::layer::contract::{Implements, Layer, Support};
use crate::layer::option::Option;
use crate::layer::params::ParamDict;
use crate::layer::weights::Weights;
use crate::tensor::Mat;

/// Extents outermost first (`[w]`, `[h, w]`, `[c, h, w]`, `[c, d, h, w]`).
fn extents(m: &Mat) -> Vec<usize> {
    let [w, h, d, c] = m.shape();
    match m.dims {
        1 => vec![w],
        2 => vec![h, w],
        3 => vec![c, h, w],
        _ => vec![c, d, h, w],
    }
}

fn from_extents(e: &[usize], values: &[f32]) -> Result<Mat> {
    let (dims, shape) = match e {
        [w] => (1, [*w, 1, 1, 1]),
        [h, w] => (2, [*w, *h, 1, 1]),
        [c, h, w] => (3, [*w, *h, 1, *c]),
        [c, d, h, w] => (4, [*w, *h, *d, *c]),
        _ => return Err(Error::Shape(format!("{} dims", e.len()))),
    };
    Mat::from_shape_values(dims, shape, values)
}

fn positive_axis(axis: i32, dims: usize) -> Result<usize> {
    let a = if axis < 0 { axis + dims as i32 } else { axis };
    if (0..dims as i32).contains(&a) {
        Ok(a as usize)
    } else {
        Err(Error::Shape(format!("axis {axis} of a {dims}-D blob")))
    }
}

/// Softmax: `0=axis`.
#[derive(Default)]
pub struct Softmax {
    axis: i32,
}

impl Layer for Softmax {
    fn support(&self) -> Support {
        Support::ONE_BLOB_INPLACE
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_INPLACE
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.axis = pd.int(0, 0);
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &Option) -> Result<()> {
        let e = extents(blob);
        let axis = positive_axis(self.axis, e.len())?;
        let (outer, n, inner): (usize, usize, usize) = (
            e[..axis].iter().product(),
            e[axis],
            e[axis + 1..].iter().product(),
        );
        let mut v = blob.to_values();
        for o in 0..outer {
            for i in 0..inner {
                let at = |k: usize| (o * n + k) * inner + i;
                let max = (0..n).map(|k| v[at(k)]).fold(f32::NEG_INFINITY, f32::max);
                let mut sum = 0.0;
                for k in 0..n {
                    let x = (v[at(k)] - max).exp();
                    v[at(k)] = x;
                    sum += x;
                }
                for k in 0..n {
                    v[at(k)] /= sum;
                }
            }
        }
        *blob = from_extents(&e, &v)?;
        Ok(())
    }
}

/// Concat: `0=axis`.
#[derive(Default)]
pub struct Concat {
    axis: i32,
}

impl Layer for Concat {
    fn support(&self) -> Support {
        Support::default()
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_MANY
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.axis = pd.int(0, 0);
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &Option) -> Result<Vec<Mat>> {
        let first = bottoms
            .first()
            .ok_or_else(|| Error::Shape("Concat needs inputs".into()))?;
        let e0 = extents(first);
        let axis = positive_axis(self.axis, e0.len())?;
        let mut total = 0;
        for b in bottoms {
            let e = extents(b);
            let same_rest = e.len() == e0.len() && (0..e.len()).all(|i| i == axis || e[i] == e0[i]);
            if !same_rest {
                return Err(Error::Shape(format!(
                    "Concat on axis {axis}: {e:?} does not fit {e0:?}"
                )));
            }
            total += e[axis];
        }
        let outer: usize = e0[..axis].iter().product();
        let inner: usize = e0[axis + 1..].iter().product();
        let parts: Vec<(Vec<f32>, usize)> = bottoms
            .iter()
            .map(|b| (b.to_values(), extents(b)[axis]))
            .collect();
        let mut out = Vec::with_capacity(outer * total * inner);
        for o in 0..outer {
            for (v, n) in &parts {
                out.extend_from_slice(&v[o * n * inner..(o + 1) * n * inner]);
            }
        }
        let mut e = e0;
        e[axis] = total;
        Ok(vec![from_extents(&e, &out)?])
    }
}

/// `y = x * scale[ch] + bias[ch]` over the channel axis, in place.
fn per_channel(blob: &mut Mat, scale: &[f32], bias: &[f32]) -> Result<()> {
    let e = extents(blob);
    let channels = e[0];
    if scale.len() != channels || (!bias.is_empty() && bias.len() != channels) {
        return Err(Error::Shape(format!(
            "{} per-channel values for {channels} channels",
            scale.len()
        )));
    }
    let inner: usize = e[1..].iter().product();
    let mut v = blob.to_values();
    for (ch, chunk) in v.chunks_mut(inner.max(1)).enumerate() {
        let b = bias.get(ch).copied().unwrap_or(0.0);
        chunk.iter_mut().for_each(|x| *x = *x * scale[ch] + b);
    }
    *blob = from_extents(&e, &v)?;
    Ok(())
}

/// BatchNorm: `0=channels 1=eps`; weights slope, mean, var, bias.
#[derive(Default)]
pub struct BatchNorm {
    channels: usize,
    eps: f32,
    a: Vec<f32>,
    b: Vec<f32>,
}

impl Layer for BatchNorm {
    fn support(&self) -> Support {
        Support::ONE_BLOB_INPLACE
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_INPLACE
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.channels = pd.int(0, 0).max(0) as usize;
        self.eps = pd.float(1, 0.0);
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        let n = self.channels;
        let slope = weights.load(n, 1)?;
        let mean = weights.load(n, 1)?;
        let var = weights.load(n, 1)?;
        let bias = weights.load(n, 1)?;
        // y = (x - mean) / sqrt(var + eps) * slope + bias, folded into x * a + b
        self.a = (0..n)
            .map(|i| slope[i] / (var[i] + self.eps).sqrt())
            .collect();
        self.b = (0..n).map(|i| bias[i] - mean[i] * self.a[i]).collect();
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &Option) -> Result<()> {
        per_channel(blob, &self.a, &self.b)
    }
}

/// Scale: `0=scale_data_size 1=bias_term`; with `0=-233` the scale is a second input.
#[derive(Default)]
pub struct Scale {
    size: i32,
    bias_term: bool,
    scale: Vec<f32>,
    bias: Vec<f32>,
}

impl Layer for Scale {
    fn support(&self) -> Support {
        Support {
            one_blob_only: self.size != -233,
            inplace: true,
            ..Support::default()
        }
    }

    fn implements(&self) -> Implements {
        Implements {
            forward_inplace: true,
            forward_many_inplace: true,
            ..Implements::default()
        }
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.size = pd.int(0, 0);
        self.bias_term = pd.int(1, 0) != 0;
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        if self.size != -233 {
            self.scale = weights.load(self.size.max(0) as usize, 1)?;
        }
        if self.bias_term {
            let n = if self.size == -233 {
                0
            } else {
                self.size.max(0) as usize
            };
            self.bias = weights.load(n, 1)?;
        }
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &Option) -> Result<()> {
        per_channel(blob, &self.scale, &self.bias)
    }

    fn forward_many_inplace(&self, blobs: &mut [Mat], _opt: &Option) -> Result<()> {
        let [blob, scale] = blobs else {
            return Err(Error::Shape("Scale with -233 takes 2 inputs".into()));
        };
        let s = scale.to_values();
        per_channel(blob, &s, &self.bias)
    }
}
