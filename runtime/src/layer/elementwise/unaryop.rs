//! UnaryOp: `0=op_type`, one of ncnn's 28 elementwise operations (`abs` … `log1p`, numbered as
//! ncnn's `UnaryOp::OperationType`); an unknown op type is refused at load.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::params::ParamDict;

/// ncnn's operation names, by op type.
pub const OPERATIONS: [&str; 28] = [
    "abs",
    "neg",
    "floor",
    "ceil",
    "square",
    "sqrt",
    "rsqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "reciprocal",
    "tanh",
    "log10",
    "round",
    "trunc",
    "sign",
    "expm1",
    "sinh",
    "asinh",
    "cosh",
    "acosh",
    "atanh",
    "log1p",
];

/// Where UnaryOp's operations start among `unary_op.comp`'s op codes.
const SHADER_BASE: i32 = 32;

/// One of ncnn's elementwise operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnaryOp {
    /// The op type (index into [`OPERATIONS`]).
    pub op_type: u8,
}

impl Activation for UnaryOp {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        let last = OPERATIONS.len() as i32 - 1;
        let op = pd.int_in(0, 0, 0..=last, "an op type 0 (abs) to 27 (log1p)")?;
        Ok(UnaryOp { op_type: op as u8 })
    }

    fn apply(self, x: f32) -> f32 {
        match self.op_type {
            0 => x.abs(),
            1 => -x,
            2 => x.floor(),
            3 => x.ceil(),
            4 => x * x,
            5 => x.sqrt(),
            6 => 1.0 / x.sqrt(),
            7 => x.exp(),
            8 => x.ln(),
            9 => x.sin(),
            10 => x.cos(),
            11 => x.tan(),
            12 => x.asin(),
            13 => x.acos(),
            14 => x.atan(),
            15 => 1.0 / x,
            16 => x.tanh(),
            17 => x.log10(),
            // nearbyint in the default rounding mode: halves to even
            18 => x.round_ties_even(),
            19 => x.trunc(),
            20 => {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
            21 => x.exp_m1(),
            22 => x.sinh(),
            23 => x.asinh(),
            24 => x.cosh(),
            25 => x.acosh(),
            26 => x.atanh(),
            _ => x.ln_1p(),
        }
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (SHADER_BASE + i32::from(self.op_type), [0.0; 3])
    }
}
