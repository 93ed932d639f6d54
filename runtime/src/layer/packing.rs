//! Layout and precision changes as layers: Packing (elempack, with an optional cast) and Cast
//! (element type). Both take any layout and storage the net has, and the net converts their
//! outputs for whatever reads them next.

use crate::error::{Error, Result};
use crate::layer::contract::{Implements, Layer, Support};
use crate::layer::option::Option;
use crate::layer::params::ParamDict;
use crate::tensor::{ElemType, Mat};

/// ncnn's cast type codes: 1 fp32, 2 fp16, 3 int8, 4 bf16 (0: unchanged).
fn elemtype(code: i32) -> Result<core::option::Option<ElemType>> {
    Ok(match code {
        0 => None,
        1 => Some(ElemType::F32),
        2 => Some(ElemType::F16),
        3 => Some(ElemType::I8),
        4 => Some(ElemType::Bf16),
        t => return Err(Error::Shape(format!("cast type {t} (0..=4)"))),
    })
}

/// Takes every layout and storage as it comes.
const ANY: Support = Support {
    packing: true,
    any_packing: true,
    bf16_storage: true,
    fp16_storage: true,
    int8_storage: true,
    ..Support::ONE_BLOB
};

/// Packing: `0=out_elempack 1=use_padding 2=cast_type_from 3=cast_type_to`. Channels that do
/// not divide by `out_elempack` stay as they are, or with `use_padding` grow with zeros.
#[derive(Default)]
pub struct Packing {
    out_elempack: usize,
    use_padding: bool,
    cast_to: core::option::Option<ElemType>,
}

impl Layer for Packing {
    fn support(&self) -> Support {
        ANY
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.out_elempack = match pd.int(0, 1) {
            p @ (1 | 4 | 8) => p as usize,
            p => return Err(Error::Shape(format!("Packing out_elempack {p}"))),
        };
        self.use_padding = pd.int(1, 0) != 0;
        elemtype(pd.int(2, 0))?;
        self.cast_to = elemtype(pd.int(3, 0))?;
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &Option) -> Result<Mat> {
        let m = match self.cast_to {
            Some(t) => bottom.cast(t),
            None => bottom.clone(),
        };
        let channels = m.outer() * m.elempack;
        if channels.is_multiple_of(self.out_elempack) {
            return m.to_packing(self.out_elempack);
        }
        if !self.use_padding {
            return Ok(m);
        }
        // zero channels up to the next multiple, as ncnn's padded packing does
        let mut shape = m.numpy_shape();
        let padded = channels.next_multiple_of(self.out_elempack);
        let mut values = m.to_values();
        values.resize(values.len() / channels * padded, 0.0);
        shape[0] = padded;
        Mat::from_numpy(&shape, &values)?
            .cast(m.elemtype())
            .to_packing(self.out_elempack)
    }
}

/// Cast: `0=type_from 1=type_to` (1 fp32, 2 fp16, 3 int8, 4 bf16). The source is whatever
/// the blob holds, so a model's `type_from` that the net has already changed still works.
#[derive(Default)]
pub struct Cast {
    to: core::option::Option<ElemType>,
}

impl Layer for Cast {
    fn support(&self) -> Support {
        ANY
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        elemtype(pd.int(0, 0))?;
        self.to = elemtype(pd.int(1, 0))?;
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &Option) -> Result<Mat> {
        Ok(match self.to {
            Some(t) => bottom.cast(t),
            None => bottom.clone(),
        })
    }
}
