//! Arithmetic on whole blobs: BinaryOp (broadcasting, scalar, reversed ops) and Eltwise.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::layer::activation::map_inplace;
use crate::layer::contract::{Implements, Layer, Support};
use crate::layer::option::Option;
use crate::layer::params::ParamDict;
use crate::tensor::Mat;

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

/// The broadcast shape of `a` and `b` as ncnn's BinaryOp forms it: a 1-D `b` whose length is
/// `a`'s outermost extent broadcasts along that axis (per channel), otherwise shapes align from
/// the innermost axis like numpy's and extents of 1 stretch.
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
    }
    let mut out = [1; 4];
    for i in 0..4 {
        out[i] = match (sa[i], sb[i]) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            (x, y) => {
                return Err(Error::Shape(format!(
                    "BinaryOp cannot broadcast {sa:?} with {sb:?} (axis {i}: {x} vs {y})"
                )));
            }
        };
    }
    Ok((sa, sb, out, a.dims.max(b.dims)))
}

/// BinaryOp: `0=op_type 1=with_scalar 2=b`.
#[derive(Default)]
pub struct BinaryOp {
    op: i32,
    scalar: core::option::Option<f32>,
}

impl Layer for BinaryOp {
    fn support(&self) -> Support {
        Support {
            one_blob_only: self.scalar.is_some(),
            inplace: self.scalar.is_some(),
            ..Support::default()
        }
    }

    fn implements(&self) -> Implements {
        Implements {
            forward_many: true,
            forward_inplace: true,
            ..Implements::default()
        }
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.op = pd.int(0, 0);
        if !(0..=11).contains(&self.op) {
            return Err(Error::Shape(format!("BinaryOp op_type {}", self.op)));
        }
        self.scalar = (pd.int(1, 0) != 0).then(|| pd.float(2, 0.0));
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &Option) -> Result<()> {
        let (op, b) = (self.op, self.scalar.unwrap_or(0.0));
        map_inplace(blob, move |x| binary(op, x, b));
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &Option) -> Result<Vec<Mat>> {
        let [a, b] = bottoms else {
            return Err(Error::Shape(format!(
                "BinaryOp takes 2 inputs, got {}",
                bottoms.len()
            )));
        };
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

/// Eltwise: `0=op_type` (0 product, 1 sum, 2 max), `1=coeffs` for sums.
#[derive(Default)]
pub struct Eltwise {
    op: i32,
    coeffs: Vec<f32>,
}

impl Layer for Eltwise {
    fn support(&self) -> Support {
        Support::default()
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_MANY
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.op = pd.int(0, 0);
        self.coeffs = pd.floats(1);
        if !(0..=2).contains(&self.op) {
            return Err(Error::Shape(format!("Eltwise op_type {}", self.op)));
        }
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &Option) -> Result<Vec<Mat>> {
        let first = bottoms
            .first()
            .ok_or_else(|| Error::Shape("Eltwise needs inputs".into()))?;
        if let Some(b) = bottoms.iter().find(|b| !b.same_shape(first)) {
            return Err(Error::Shape(format!(
                "Eltwise inputs differ: {:?} and {:?}",
                first.shape(),
                b.shape()
            )));
        }
        if !self.coeffs.is_empty() && self.coeffs.len() != bottoms.len() {
            return Err(Error::Shape(format!(
                "Eltwise has {} coefficients for {} inputs",
                self.coeffs.len(),
                bottoms.len()
            )));
        }
        let coeff = |i: usize| self.coeffs.get(i).copied().unwrap_or(1.0);
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
