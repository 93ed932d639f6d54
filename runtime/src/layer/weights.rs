//! ncnn's `ModelBin`: reading a layer's weights from a `.bin` in load order.
//!
//! A "type 0" load starts with a 4-byte tag: zero for raw fp32, `0x01306B47` for fp16,
//! `0x000D4B38` for int8, anything else means a 256-entry fp32 quantization table followed by
//! one index byte per value; the data is padded to 4 bytes. A "type 1" load is raw fp32.

use half::f16;

use crate::error::{Error, ModelError, Result};

const TAG_FP16: u32 = 0x0130_6B47;
const TAG_INT8: u32 = 0x000D_4B38;

/// Where weights come from.
#[derive(Debug)]
enum Source<'a> {
    /// A `.bin` in memory, read front to back.
    Bytes { data: &'a [u8], offset: usize },
    /// Zeros of any size (ncnn's `DataReaderFromEmpty`, for benchmarks).
    Zeros,
}

/// Reads weights for one layer after another.
#[derive(Debug)]
pub struct Weights<'a> {
    source: Source<'a>,
    /// The layer whose weights are read now (for errors).
    pub(crate) layer: String,
}

impl<'a> Weights<'a> {
    /// Weights read from `data` in order.
    pub fn from_bytes(data: &'a [u8]) -> Self {
        Weights {
            source: Source::Bytes { data, offset: 0 },
            layer: String::new(),
        }
    }

    /// All-zero weights of whatever size layers ask for.
    pub fn zeros() -> Weights<'static> {
        Weights {
            source: Source::Zeros,
            layer: String::new(),
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> usize {
        match self.source {
            Source::Bytes { offset, .. } => offset,
            Source::Zeros => 0,
        }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        match self.source {
            Source::Bytes { data, offset } => data.len() - offset,
            Source::Zeros => usize::MAX,
        }
    }

    fn fail(&self, message: String) -> Error {
        ModelError::Weights {
            layer: self.layer.clone(),
            offset: self.offset(),
            message,
        }
        .into()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let Source::Bytes { data, offset } = &mut self.source else {
            return Ok(&[]);
        };
        let (data, start) = (*data, *offset);
        match start.checked_add(n).filter(|e| *e <= data.len()) {
            Some(end) => {
                *offset = end;
                Ok(&data[start..end])
            }
            None => Err(self.fail(format!(
                "{n} more bytes needed, {} left: the .bin is too short for this model",
                data.len() - start
            ))),
        }
    }

    fn take_u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// `n` zero weights (a model loaded without its `.bin`), refused past the host's memory:
    /// their count is the params', which nothing else bounds.
    fn zero_values(&self, n: usize) -> Result<Vec<f32>> {
        crate::host::values(&[n]).map_err(|e| self.fail(format!("{n} zero weights: {e}")))?;
        Ok(written_zeros(n))
    }

    fn f32s(&mut self, n: usize) -> Result<Vec<f32>> {
        let bytes = n
            .checked_mul(4)
            .ok_or_else(|| self.fail(format!("{n} weights is too many")))?;
        let b = self.take(bytes)?;
        if b.is_empty() {
            return self.zero_values(n);
        }
        Ok(b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// `n` weights of ncnn load type `ty` (0: tagged, 1: raw fp32), as fp32.
    pub fn load(&mut self, n: usize, ty: i32) -> Result<Vec<f32>> {
        Ok(self.load_stored(n, ty)?.0)
    }

    /// [`Weights::load`], and whether the values were stored as int8 (ncnn's `elemsize == 1`:
    /// an int8 layer takes such values with their scales, and quantizes fp32 ones itself).
    pub fn load_stored(&mut self, n: usize, ty: i32) -> Result<(Vec<f32>, bool)> {
        match ty {
            1 => Ok((self.f32s(n)?, false)),
            0 => {
                if matches!(self.source, Source::Zeros) {
                    return Ok((self.zero_values(n)?, false));
                }
                let tag = self.take_u32()?;
                let values = match tag {
                    0 => self.f32s(n),
                    TAG_FP16 => {
                        let b = self.take(n.saturating_mul(2))?;
                        let v = b
                            .chunks_exact(2)
                            .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32())
                            .collect();
                        self.take(((2 * n).div_ceil(4) * 4) - 2 * n)?;
                        Ok(v)
                    }
                    TAG_INT8 => {
                        let b = self.take(n)?;
                        let v = b.iter().map(|x| f32::from(*x as i8)).collect();
                        self.take(n.div_ceil(4) * 4 - n)?;
                        Ok(v)
                    }
                    first => {
                        // no tag: the word is the first entry of a 256-entry quantization
                        // table, and one index byte per value follows the table
                        let mut table = vec![f32::from_bits(first)];
                        table.extend(self.f32s(255)?);
                        let idx = self.take(n)?;
                        let v = idx.iter().map(|i| table[*i as usize]).collect();
                        self.take(n.div_ceil(4) * 4 - n)?;
                        Ok(v)
                    }
                };
                Ok((values?, tag == TAG_INT8))
            }
            other => Err(self.fail(format!("unknown weight load type {other}"))),
        }
    }
}

/// `n` zeros in pages of their own, written as ncnn's `DataReaderFromEmpty` writes its buffer:
/// a `vec![0.0; n]` comes from calloc, whose untouched pages all map the kernel's one zero page,
/// so a benchmark's 400 MB InnerProduct read its weights from cache and looked free.
fn written_zeros(n: usize) -> Vec<f32> {
    let mut v: Vec<f32> = Vec::with_capacity(n);
    // opaque to the optimizer, which would otherwise fold the fill into a calloc
    std::hint::black_box(&mut v);
    v.resize(n, 0.0);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn every_tag_reads_back() {
        let mut data = bytes(&[0, 1.5f32.to_bits(), (-2.0f32).to_bits()]);
        data.extend(TAG_FP16.to_le_bytes());
        data.extend(f16::from_f32(0.25).to_le_bytes());
        data.extend([0, 0]); // padding
        data.extend(TAG_INT8.to_le_bytes());
        data.extend([3u8, 0xfd, 0, 0]);
        let table: Vec<u32> = (0..256).map(|i| (i as f32 * 0.5).to_bits()).collect();
        let mut quant = bytes(&table);
        quant[0..4].copy_from_slice(&7.0f32.to_bits().to_le_bytes());
        data.extend(&quant);
        data.extend([0u8, 4, 0, 0]);
        data.extend(bytes(&[9.0f32.to_bits()]));
        let mut w = Weights::from_bytes(&data);
        assert_eq!(w.load_stored(2, 0).unwrap(), (vec![1.5, -2.0], false));
        assert_eq!(w.load(1, 0).unwrap(), [0.25]);
        assert_eq!(w.load_stored(2, 0).unwrap(), (vec![3.0, -3.0], true));
        assert_eq!(w.load(2, 0).unwrap(), [7.0, 2.0]);
        assert_eq!(w.load(1, 1).unwrap(), [9.0]);
        assert_eq!(w.remaining(), 0);
        assert!(matches!(
            w.load(1, 1),
            Err(Error::Model(ModelError::Weights { .. }))
        ));
    }

    #[test]
    fn truncations_are_errors_not_panics() {
        let data = bytes(&[0, 1, 2, 3, 4]);
        for cut in 0..data.len() {
            let mut w = Weights::from_bytes(&data[..cut]);
            assert!(w.load(4, 0).is_err(), "cut {cut}");
        }
        assert!(Weights::from_bytes(&data).load(usize::MAX, 1).is_err());
        assert!(Weights::from_bytes(&data).load(1, 7).is_err());
    }
}
