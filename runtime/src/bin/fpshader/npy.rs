//! `.npy` files as `Mat`s: numpy's `(c, h, w)` is ncnn's `w/h/c`, `(c, d, h, w)` its 4-D.

use fpshader::Mat;
use npyz::{DType, TypeChar, WriterBuilder};

use crate::CliError;

fn npy_error(path: &str, message: impl ToString) -> CliError {
    CliError::Npy {
        path: path.to_string(),
        message: message.to_string(),
    }
}

/// Reads a 1- to 4-axis array of floats or integers (converted to fp32) as a mat.
pub fn read(path: &str) -> Result<Mat, CliError> {
    let (shape, values) = read_values(path)?;
    Mat::from_numpy(&shape, &values).map_err(|e| npy_error(path, e))
}

/// Reads an array of floats or integers of any shape as its shape and fp32 values.
pub fn read_values(path: &str) -> Result<(Vec<usize>, Vec<f32>), CliError> {
    let bytes = std::fs::read(path).map_err(|e| npy_error(path, e))?;
    let file = npyz::NpyFile::new(&bytes[..]).map_err(|e| npy_error(path, e))?;
    let shape: Vec<usize> = file.shape().iter().map(|&n| n as usize).collect();
    let DType::Plain(ty) = file.dtype() else {
        return Err(npy_error(path, "structured arrays are not tensors"));
    };
    // a header's shape is checked against the bytes there are before anything is allocated
    // for it (a mutated header may claim 10^18 values)
    let values = (shape.iter()).try_fold(1usize, |n, &e| n.checked_mul(e));
    let needed = values.and_then(|n| n.checked_mul(ty.size_field().max(1) as usize));
    if needed.is_none_or(|b| b > bytes.len()) {
        return Err(npy_error(
            path,
            format!(
                "its header's shape {shape:?} needs more bytes than the file's {}",
                bytes.len()
            ),
        ));
    }
    // every dtype widened (or, for 64-bit ones, rounded) to f32
    fn widen<T: npyz::Deserialize>(
        file: npyz::NpyFile<&[u8]>,
        f: impl Fn(T) -> f32,
    ) -> std::io::Result<Vec<f32>> {
        Ok(file.into_vec::<T>()?.into_iter().map(f).collect())
    }
    let values = match (ty.type_char(), ty.size_field()) {
        (TypeChar::Float, 4) => file.into_vec::<f32>(),
        (TypeChar::Float, 2) => widen(file, |v: half::f16| v.to_f32()),
        (TypeChar::Float, 8) => widen(file, |v: f64| v as f32),
        (TypeChar::Int, 8) => widen(file, |v: i64| v as f32),
        (TypeChar::Int, 4) => widen(file, |v: i32| v as f32),
        (TypeChar::Int, 2) => widen(file, |v: i16| f32::from(v)),
        (TypeChar::Int, 1) => widen(file, |v: i8| f32::from(v)),
        (TypeChar::Uint, 1) => widen(file, |v: u8| f32::from(v)),
        _ => {
            return Err(npy_error(
                path,
                format!("dtype {ty} (float16/32/64, int8/16/32/64 and uint8 are read)"),
            ));
        }
    }
    .map_err(|e| npy_error(path, e))?;
    Ok((shape, values))
}

/// Writes `m` as float32 in numpy's axis order.
pub fn write(path: &str, m: &Mat) -> Result<(), CliError> {
    let shape: Vec<u64> = m.numpy_shape().iter().map(|&n| n as u64).collect();
    write_values(path, &shape, m.to_values())
}

/// Writes float32 `values` with `shape`.
pub fn write_values(
    path: &str,
    shape: &[u64],
    values: impl IntoIterator<Item = f32>,
) -> Result<(), CliError> {
    let mut bytes = Vec::new();
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(&mut bytes)
        .begin_nd()
        .map_err(|e| npy_error(path, e))?;
    w.extend(values).map_err(|e| npy_error(path, e))?;
    w.finish().map_err(|e| npy_error(path, e))?;
    std::fs::write(path, bytes).map_err(|e| npy_error(path, e))
}
