//! Gemm: `0=alpha 1=beta 2=transA 3=transB 4=constantA 5=constantB 6=constantC 7=constantM
//! 8=constantN 9=constantK 10=constant_broadcast_type_C 11=output_N1M 12=output_elempack
//! 13=output_elemtype 14=output_transpose 18=int8_scale_term 20-22=constant_TILE_M/N/K`;
//! weights the constant A (`M×K`, or `K×M` with transA), B (`K×N`, or `N×K` with transB) and C
//! in that order, each only where constant.
//!
//! `Y = alpha · (A·B + beta · C)` (ncnn scales the C term by alpha too), `M×N`, or `N×M` with
//! output_transpose, as `N×1×M` / `M×1×N` 3-D blobs with output_N1M. A 2-D blob is a matrix of
//! its rows, a 3-D blob of height 1 one of its channels (pnnx's `N×1×M` layout), a 1-D blob one
//! row. C broadcasts as ncnn's types: 0 a scalar, 1/2 one value per row of Y (`M` values or an
//! `M×1` blob), 3 the whole `M×N`, 4 one value per column (`N` or `1×N`); an input C's
//! type comes from its shape, checked in ncnn's order (a 1-D C of `M == N` values is per column).
//! The tiles (20-22) and output layout hints (12, 13) are ncnn's CPU tuning and are read only.
//! On the CPU through the project's GEMM ([`crate::layer::cpu_gemm`]), on the net's threads.

use std::borrow::Cow;

use crate::error::{Error, InputError, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::cpu_gemm::{MatMut, MatRef, gemm};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::weights::Weights;
use crate::tensor::Mat;

/// How C spreads over the output (ncnn's `broadcast_type_C`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Broadcast {
    /// One value.
    Scalar,
    /// One value per row of `M×N` (types 1 and 2).
    Rows,
    /// The whole `M×N` (type 3).
    Full,
    /// One value per column (type 4).
    Columns,
}

impl Broadcast {
    fn from_type(t: i32) -> Option<Broadcast> {
        match t {
            0 => Some(Broadcast::Scalar),
            1 | 2 => Some(Broadcast::Rows),
            3 => Some(Broadcast::Full),
            4 => Some(Broadcast::Columns),
            _ => None,
        }
    }

    /// How many values C holds with this broadcast over an `M×N` output.
    fn len(self, m: usize, n: usize) -> usize {
        match self {
            Broadcast::Scalar => 1,
            Broadcast::Rows => m,
            Broadcast::Columns => n,
            Broadcast::Full => m * n,
        }
    }

    /// The type of an input C of `dims` and `[w, h]` against an `M×N` output, as ncnn infers it
    /// (later matches win, so a 1-D C of `M == N` values is per column).
    fn infer(dims: u8, [w, h]: [usize; 2], m: usize, n: usize) -> Option<Broadcast> {
        let mut t = None;
        if dims == 1 && w == 1 {
            t = Some(Broadcast::Scalar);
        }
        if dims == 1 && w == m {
            t = Some(Broadcast::Rows);
        }
        if dims == 1 && w == n {
            t = Some(Broadcast::Columns);
        }
        if dims == 2 && w == 1 && h == m {
            t = Some(Broadcast::Rows);
        }
        if dims == 2 && w == n && h == m {
            t = Some(Broadcast::Full);
        }
        if dims == 2 && w == n && h == 1 {
            t = Some(Broadcast::Columns);
        }
        t
    }
}

/// A matrix operand: its values row after row.
#[derive(Clone)]
struct Operand {
    values: Vec<f32>,
    rows: usize,
    cols: usize,
}

impl Operand {
    /// A blob as a matrix: 1-D one row, 2-D its rows, 3-D of height 1 its channels.
    fn of(m: &Mat, what: &'static str) -> Result<Operand> {
        let [w, h, _, c] = m.shape();
        let rows = match m.dims {
            1 => 1,
            2 => h,
            3 if h == 1 => c,
            _ => {
                return Err(InputError::Dims {
                    got: m.dims,
                    takes: what,
                }
                .into());
            }
        };
        Ok(Operand {
            values: m.to_values(),
            rows,
            cols: w,
        })
    }

    /// The model's constant operand where there is one, else the next of `inputs` as one.
    fn held_or_input<'a>(
        held: &'a Option<Operand>,
        inputs: &mut std::slice::Iter<'_, &Mat>,
        what: &'static str,
    ) -> Result<Cow<'a, Operand>> {
        match held {
            Some(op) => Ok(Cow::Borrowed(op)),
            None => Ok(Cow::Owned(Operand::of(
                inputs.next().expect("counted"),
                what,
            )?)),
        }
    }

    /// This matrix, or its transpose when `t`, as the GEMM reads it.
    fn view(&self, t: bool) -> MatRef<'_> {
        let m = MatRef::rows(&self.values, self.rows, self.cols, self.cols);
        if t { m.t() } else { m }
    }
}

/// General matrix multiplication (ONNX's Gemm, pnnx's `nn.Linear` on 2-D and 3-D inputs).
#[derive(Default)]
pub struct Gemm {
    alpha: f32,
    beta: f32,
    trans_a: bool,
    trans_b: bool,
    constant_a: bool,
    constant_b: bool,
    constant_c: bool,
    m: usize,
    n: usize,
    k: usize,
    /// The constant C's broadcast (`None`: no constant C, or type -1).
    constant_c_type: Option<Broadcast>,
    output_n1m: bool,
    output_transpose: bool,
    a: Option<Operand>,
    b: Option<Operand>,
    c: Vec<f32>,
}

impl Gemm {
    /// `Y` from the inputs the model does not hold, in ncnn's order (A, B, C).
    fn run(&self, bottoms: &[&Mat]) -> Result<Mat> {
        let wanted = usize::from(!self.constant_a) + usize::from(!self.constant_b);
        let takes_c = !self.constant_c;
        if bottoms.len() < wanted || bottoms.len() > wanted + usize::from(takes_c) {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "A and B where not constant, then C where not constant (optional)",
            }
            .into());
        }
        let mut next = bottoms.iter();
        let a = Operand::held_or_input(&self.a, &mut next, "A: 1-D, 2-D or N×1×M")?;
        let b = Operand::held_or_input(&self.b, &mut next, "B: 1-D, 2-D or N×1×K")?;
        let (av, bv) = (a.view(self.trans_a), b.view(self.trans_b));
        let (m, k, n) = (av.rows, av.cols, bv.cols);
        if bv.rows != k {
            return Err(InputError::Mismatch {
                a: vec![m, k],
                b: vec![bv.rows, n],
                why: "are A and B as multiplied (transA/transB applied): the inner sizes differ",
            }
            .into());
        }
        let (c, broadcast) = match next.next() {
            Some(c) => {
                let [w, h, ..] = c.shape();
                let t = Broadcast::infer(c.dims, [w, h], m, n).ok_or_else(|| {
                    Error::from(InputError::Mismatch {
                        a: vec![m, n],
                        b: c.numpy_shape(),
                        why: "are the output and C: C is not 1, M, N, M×1, 1×N or M×N",
                    })
                })?;
                (Cow::Owned(c.to_values()), Some(t))
            }
            None => (Cow::Borrowed(&self.c[..]), self.constant_c_type),
        };
        let needed = broadcast.map_or(0, |t| t.len(m, n));
        if c.len() != needed {
            return Err(InputError::Values {
                what: "values of the constant C",
                got: c.len(),
                expected: needed,
            }
            .into());
        }
        // Y (i, j) at i·N + j, or at j·M + i when transposed
        let (rs, cs) = if self.output_transpose {
            (1, m)
        } else {
            (n, 1)
        };
        let mut y = vec![0.0f32; m * n];
        if let Some(t) = broadcast {
            for i in 0..m {
                for j in 0..n {
                    let v = match t {
                        Broadcast::Scalar => c[0],
                        Broadcast::Rows => c[i],
                        Broadcast::Columns => c[j],
                        Broadcast::Full => c[i * n + j],
                    };
                    y[i * rs + j * cs] = self.beta * v;
                }
            }
        }
        let out = MatMut {
            data: &mut y,
            rows: m,
            cols: n,
            rs,
            cs,
        };
        gemm(av, bv, out, true);
        if self.alpha != 1.0 {
            y.iter_mut().for_each(|v| *v *= self.alpha);
        }
        let (rows, cols) = if self.output_transpose {
            (n, m)
        } else {
            (m, n)
        };
        if self.output_n1m {
            Mat::from_numpy(&[rows, 1, cols], &y)
        } else {
            Mat::from_numpy(&[rows, cols], &y)
        }
    }
}

impl Layer for Gemm {
    fn support(&self) -> Support {
        // ncnn's one_blob_only: two of A, B and C in the model
        let constants =
            u8::from(self.constant_a) + u8::from(self.constant_b) + u8::from(self.constant_c);
        if constants == 2 {
            Support::ONE_BLOB
        } else {
            Support::MANY
        }
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.alpha = pd.float(0, 1.0);
        self.beta = pd.float(1, 1.0);
        self.trans_a = pd.int_in(2, 0, 0..=1, "0 or 1")? == 1;
        self.trans_b = pd.int_in(3, 0, 0..=1, "0 or 1")? == 1;
        self.constant_a = pd.int_in(4, 0, 0..=1, "0 or 1")? == 1;
        self.constant_b = pd.int_in(5, 0, 0..=1, "0 or 1")? == 1;
        self.constant_c = pd.int_in(6, 0, 0..=1, "0 or 1")? == 1;
        self.constant_c_type = if self.constant_c {
            Broadcast::from_type(pd.int_in(10, 0, -1..=4, "-1 (no C) or 0-4")?)
        } else {
            None
        };
        let size = |id: u32, needed: bool| -> Result<usize> {
            let allowed = "a size, at least 1 where a constant operand has it";
            Ok(pd.int_in(id, 0, i32::from(needed)..=i32::MAX, allowed)? as usize)
        };
        let c_has = |types: &[Broadcast]| self.constant_c_type.is_some_and(|t| types.contains(&t));
        self.m = size(
            7,
            self.constant_a || c_has(&[Broadcast::Rows, Broadcast::Full]),
        )?;
        self.n = size(
            8,
            self.constant_b || c_has(&[Broadcast::Columns, Broadcast::Full]),
        )?;
        self.k = size(9, self.constant_a || self.constant_b)?;
        self.output_n1m = pd.int_in(11, 0, 0..=1, "0 or 1")? == 1;
        pd.int_in(13, 0, 0..=1, "0 (auto) or 1 (fp32)")?;
        self.output_transpose = pd.int_in(14, 0, 0..=1, "0 or 1")? == 1;
        let q = pd.int(18, 0);
        if q != 0 {
            return Err(Error::BadParam {
                id: 18,
                value: q.to_string(),
                allowed: "0: int8 and weight-quantized Gemm are not supported yet",
            });
        }
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        let (m, n, k) = (self.m, self.n, self.k);
        if self.constant_a {
            let (rows, cols) = if self.trans_a { (k, m) } else { (m, k) };
            let values = weights.load(m * k, 0)?;
            self.a = Some(Operand { values, rows, cols });
        }
        if self.constant_b {
            let (rows, cols) = if self.trans_b { (n, k) } else { (k, n) };
            let values = weights.load(n * k, 0)?;
            self.b = Some(Operand { values, rows, cols });
        }
        if let Some(t) = self.constant_c_type {
            self.c = weights.load(t.len(m, n), 0)?;
        }
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        self.run(&[bottom])
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let refs: Vec<&Mat> = bottoms.iter().collect();
        Ok(vec![self.run(&refs)?])
    }
}
