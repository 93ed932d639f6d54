//! ncnn's `ParamDict`: a layer's parameters by id, as a `.param` line gives them.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use crate::error::{Error, Result};
use crate::tensor::ElemType;

/// One parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// An integer (`0=3`).
    Int(i32),
    /// A float (`1=0.5`, written with `.` or `e`).
    Float(f32),
    /// An array (`-23303=3,1,2,3`).
    Array(Vec<ParamValue>),
    /// A string (`19="2,-2"`, or unquoted when it starts with a letter, in newer ncnn).
    Str(String),
    /// A 32-bit word from a `.param.bin`, which does not say whether it is an int or a float:
    /// the reader's getter decides, as ncnn's does.
    Word(u32),
}

impl ParamValue {
    fn as_f32(&self) -> Option<f32> {
        match self {
            ParamValue::Int(i) => Some(*i as f32),
            ParamValue::Float(f) => Some(*f),
            ParamValue::Word(w) => Some(f32::from_bits(*w)),
            _ => None,
        }
    }

    fn as_i32(&self) -> Option<i32> {
        match self {
            ParamValue::Int(i) => Some(*i),
            ParamValue::Float(f) => Some(*f as i32),
            ParamValue::Word(w) => Some(*w as i32),
            _ => None,
        }
    }
}

/// A layer's parameters, by id (0..=31 in ncnn).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamDict {
    values: BTreeMap<u32, ParamValue>,
}

impl ParamDict {
    /// An element type as ncnn's cast type codes give it at `id`: 1 fp32, 2 fp16, 3 int8,
    /// 4 bf16 (0 or absent: unchanged).
    pub fn cast_type(&self, id: u32) -> Result<Option<ElemType>> {
        let code = self.int(id, 0);
        Ok(match code {
            0 => None,
            1 => Some(ElemType::F32),
            2 => Some(ElemType::F16),
            3 => Some(ElemType::I8),
            4 => Some(ElemType::Bf16),
            t => {
                return Err(Error::BadParam {
                    id,
                    value: t.to_string(),
                    allowed: "cast type 0 to 4",
                });
            }
        })
    }

    /// An empty dict (every parameter at its default).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets parameter `id`.
    pub fn set(&mut self, id: u32, value: ParamValue) -> &mut Self {
        self.values.insert(id, value);
        self
    }

    /// Builder form of [`ParamDict::set`].
    #[must_use]
    pub fn with(mut self, id: u32, value: ParamValue) -> Self {
        self.set(id, value);
        self
    }

    /// Whether `id` was given.
    pub fn has(&self, id: u32) -> bool {
        self.values.contains_key(&id)
    }

    /// The raw value of `id`.
    pub fn get(&self, id: u32) -> Option<&ParamValue> {
        self.values.get(&id)
    }

    /// Integer parameter `id`, or `default` (a float given where an int is meant truncates).
    pub fn int(&self, id: u32, default: i32) -> i32 {
        self.values
            .get(&id)
            .and_then(ParamValue::as_i32)
            .unwrap_or(default)
    }

    /// Integer parameter `id` (or `default`) checked against `range`: out of it, a
    /// [`Error::BadParam`] naming the id, the value and `allowed`.
    pub fn int_in(
        &self,
        id: u32,
        default: i32,
        range: RangeInclusive<i32>,
        allowed: &'static str,
    ) -> Result<i32> {
        let v = self.int(id, default);
        if range.contains(&v) {
            Ok(v)
        } else {
            Err(Error::BadParam {
                id,
                value: v.to_string(),
                allowed,
            })
        }
    }

    /// Float parameter `id`, or `default` (an int given where a float is meant converts).
    pub fn float(&self, id: u32, default: f32) -> f32 {
        self.values
            .get(&id)
            .and_then(ParamValue::as_f32)
            .unwrap_or(default)
    }

    /// String parameter `id` (ncnn's shape expressions), or `None` if absent or not a string.
    pub fn string(&self, id: u32) -> Option<&str> {
        match self.values.get(&id) {
            Some(ParamValue::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// Integer array `id` (empty if absent).
    pub fn ints(&self, id: u32) -> Vec<i32> {
        match self.values.get(&id) {
            Some(ParamValue::Array(v)) => v.iter().filter_map(ParamValue::as_i32).collect(),
            _ => Vec::new(),
        }
    }

    /// Float array `id` (empty if absent), as ncnn's layers read one: each element's 32 bits as
    /// a float, so that an element written as an integer gives the float of its bit pattern
    /// (converters write some float arrays so: Yolov3DetectionOutput's masks, `1077936128` for
    /// 3.0).
    pub fn floats(&self, id: u32) -> Vec<f32> {
        let bits = |v: &ParamValue| match v {
            ParamValue::Int(i) => Some(f32::from_bits(*i as u32)),
            v => v.as_f32(),
        };
        match self.values.get(&id) {
            Some(ParamValue::Array(v)) => v.iter().filter_map(bits).collect(),
            _ => Vec::new(),
        }
    }

    /// Every `(id, value)`, by id.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &ParamValue)> {
        self.values.iter().map(|(k, v)| (*k, v))
    }
}

/// The error of parameter `id` given `value` where the layer takes `allowed`.
pub(crate) fn bad_param(id: u32, value: impl ToString, allowed: &'static str) -> Error {
    Error::BadParam {
        id,
        value: value.to_string(),
        allowed,
    }
}
