//! Host-side encoding of fp32 values into the storage layout a variant's buffers use.
//!
//! fp32 stores `float`; fp16 storage stores `float16_t`; fp16 packed stores scalars (`sfp`) as
//! `float` but vectors (`sfpvec2/4/8`) as fp16 pairs packed into `uint`s, which have the same bytes
//! as `float16_t` pairs. int8 storage (between int8 layers on the device) stores each value's
//! int8 level at a scale: four channels of a pack4 element are one `int`.

use half::f16;

use crate::OptionSet;
use crate::gpu::options::Options;

/// The buffer layout of `sfp*` data in a variant, or of int8 storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StorageFormat {
    /// 4 bytes per value.
    Fp32,
    /// 2 bytes per value.
    Fp16,
    /// 1 byte per value: its int8 level at a scale (ncnn's float2int8 of `value · scale`), the
    /// value being the level over the scale. An int8 layer's output on the device where every
    /// reader is an int8 layer quantizing its input with that scale; no variant's `sfp*` type.
    Int8(Int8Scale),
}

/// The scale of an int8 storage mat (its `f32` bits, so that formats compare exactly).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Int8Scale(u32);

impl Int8Scale {
    /// The scale `scale` (a level is `value · scale` rounded).
    pub fn new(scale: f32) -> Int8Scale {
        Int8Scale(scale.to_bits())
    }

    /// The scale.
    pub fn get(self) -> f32 {
        f32::from_bits(self.0)
    }
}

impl StorageFormat {
    /// The format of `elempack`-packed data in a variant with `options`.
    pub fn of(options: OptionSet, elempack: usize) -> StorageFormat {
        let o = Options::from_option_set(options.canonicalize().unwrap_or(options));
        if o.use_fp16_storage || (o.use_fp16_packed && elempack > 1) {
            StorageFormat::Fp16
        } else {
            StorageFormat::Fp32
        }
    }

    /// Whether mats made with `options` hold scalars alike at every elempack (fp32, or fp16
    /// storage; not fp16 packed without it, whose pack1 mats are fp32): where packed mats can
    /// be read and written through their scalar views.
    pub fn scalar_views(options: OptionSet) -> bool {
        Self::of(options, 1) == Self::of(options, 4)
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            StorageFormat::Fp32 => 4,
            StorageFormat::Fp16 => 2,
            StorageFormat::Int8(_) => 1,
        }
    }

    /// The int8 storage scale, where this is int8 storage.
    pub fn int8_scale(self) -> Option<f32> {
        match self {
            StorageFormat::Int8(s) => Some(s.get()),
            _ => None,
        }
    }

    /// `values` in this format.
    pub fn encode(self, values: &[f32]) -> Vec<u8> {
        match self {
            StorageFormat::Fp32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            StorageFormat::Fp16 => values
                .iter()
                .flat_map(|v| f16::from_f32(*v).to_le_bytes())
                .collect(),
            StorageFormat::Int8(s) => values.iter().map(|v| int8_level(*v, s)).collect(),
        }
    }

    /// `values` in this format written into `dst` (the rest of `dst` zeroed): straight into a
    /// buffer's staging memory, converted a block at a time in cache where fp16. A large
    /// upload is written by several threads, in chunks: the staging memory is write-combined
    /// (on a discrete GPU often its own memory, across the bus), which one core fills at a
    /// few GB/s; an H200's 1 MB input took 0.22 ms on one.
    pub fn encode_into(self, values: &[f32], mut dst: wgpu::WriteOnly<'_, [u8]>) {
        use rayon::prelude::*;
        /// Bytes per task of a parallel upload.
        const BYTES: usize = 1 << 16;
        let n = values.len().min(dst.len() / self.size());
        dst.slice(n * self.size()..).fill(0);
        let dst = dst.into_slice(..n * self.size());
        let per = BYTES / self.size();
        if n < 4 * per {
            return self.encode_chunk(&values[..n], dst);
        }
        // whole chunks (views of arrays, which may cross threads) and what is left
        let (chunks, last) = dst.into_chunks::<BYTES>();
        let whole = chunks.len();
        let tasks: Vec<_> = values.chunks(per).zip(chunks).collect();
        tasks
            .into_par_iter()
            .for_each(|(v, d)| self.encode_chunk(v, d.into()));
        self.encode_chunk(&values[whole * per..n], last);
    }

    /// `values` in this format into `dst`, which holds exactly their bytes.
    fn encode_chunk(self, values: &[f32], mut dst: wgpu::WriteOnly<'_, [u8]>) {
        const BLOCK: usize = 2048;
        match self {
            StorageFormat::Fp32 if cfg!(target_endian = "little") => {
                dst.copy_from_slice(bytemuck::cast_slice(values));
            }
            StorageFormat::Fp32 => {
                for (i, v) in values.iter().enumerate() {
                    dst.slice(i * 4..i * 4 + 4)
                        .copy_from_slice(&v.to_le_bytes());
                }
            }
            StorageFormat::Int8(s) => {
                let bytes: Vec<u8> = values.iter().map(|v| int8_level(*v, s)).collect();
                dst.copy_from_slice(&bytes);
            }
            StorageFormat::Fp16 => {
                use half::slice::HalfFloatSliceExt;
                let mut block = [f16::ZERO; BLOCK];
                for (i, chunk) in values.chunks(BLOCK).enumerate() {
                    let b = &mut block[..chunk.len()];
                    // F16C or NEON conversions where the CPU has them
                    b.convert_from_f32_slice(chunk);
                    let at = i * BLOCK * 2;
                    if cfg!(target_endian = "little") {
                        let bytes: &[u8] = bytemuck::cast_slice(b.reinterpret_cast());
                        dst.slice(at..at + bytes.len()).copy_from_slice(bytes);
                    } else {
                        let bytes: Vec<u8> = b.iter().flat_map(|h| h.to_le_bytes()).collect();
                        dst.slice(at..at + bytes.len()).copy_from_slice(&bytes);
                    }
                }
            }
        }
    }

    /// [`StorageFormat::decode`] in chunks over the threads into a new vector.
    pub fn decode_parallel(self, bytes: &[u8], count: usize) -> Vec<f32> {
        let count = count.min(bytes.len() / self.size());
        let mut out = vec![0.0f32; count];
        self.decode_parallel_into(bytes, &mut out);
        out
    }

    /// [`StorageFormat::decode`] of the first `out.len()` values of `bytes` (fewer where
    /// `bytes` holds fewer: the count decoded is returned) into `out`, in chunks over the
    /// threads: what a download reads out of the mapped readback buffer.
    pub fn decode_parallel_into(self, bytes: &[u8], out: &mut [f32]) -> usize {
        use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
        use rayon::prelude::*;
        const CHUNK: usize = 1 << 16;
        let count = out.len().min(bytes.len() / self.size());
        let (out, bytes) = (&mut out[..count], &bytes[..count * self.size()]);
        match self {
            StorageFormat::Fp32 if cfg!(target_endian = "little") => out
                .par_chunks_mut(CHUNK)
                .zip(bytes.par_chunks(CHUNK * 4))
                .for_each(|(o, b)| bytemuck::cast_slice_mut::<f32, u8>(o).copy_from_slice(b)),
            StorageFormat::Fp16 => out
                .par_chunks_mut(CHUNK)
                .zip(bytes.par_chunks(CHUNK * 2))
                .for_each(|(o, b)| match bytemuck::try_cast_slice::<u8, u16>(b) {
                    // F16C or NEON conversions where the CPU has them
                    Ok(bits) => bits.reinterpret_cast::<f16>().convert_to_f32_slice(o),
                    Err(_) => o.copy_from_slice(&self.decode(b, o.len())),
                }),
            StorageFormat::Fp32 | StorageFormat::Int8(_) => {
                out.copy_from_slice(&self.decode(bytes, count))
            }
        }
        count
    }

    /// The first `count` values of `bytes` in this format.
    pub fn decode(self, bytes: &[u8], count: usize) -> Vec<f32> {
        match self {
            StorageFormat::Fp32 if cfg!(target_endian = "little") => {
                let n = (bytes.len() / 4).min(count) * 4;
                bytemuck::pod_collect_to_vec(&bytes[..n])
            }
            StorageFormat::Fp32 => bytes
                .chunks_exact(4)
                .take(count)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            StorageFormat::Fp16 => bytes
                .chunks_exact(2)
                .take(count)
                .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
            StorageFormat::Int8(s) => {
                // a zero scale (a model of zero weights) has zero levels, as the shaders'
                // fake quantization gives
                let inverse = if s.get() == 0.0 { 0.0 } else { 1.0 / s.get() };
                let levels = &bytes[..bytes.len().min(count)];
                levels.iter().map(|&b| b as i8 as f32 * inverse).collect()
            }
        }
    }
}

/// `value`'s int8 level at scale `s` as a byte: ncnn's float2int8 (rounded half away from
/// zero, clamped to ±127), as the shaders' `int8_levels`.
fn int8_level(value: f32, s: Int8Scale) -> u8 {
    let v = value * s.get();
    (v + 0.5f32.copysign(v)).trunc().clamp(-127.0, 127.0) as i8 as u8
}

#[cfg(test)]
mod tests {
    use super::StorageFormat;

    /// Encoding into a padded staging view and decoding back gives the values (rounded to
    /// fp16 where that is the format) and zeros after them, across block boundaries, and
    /// across the chunks of a parallel upload (a count that fills none exactly).
    #[test]
    fn encode_into_round_trips_and_zero_pads() {
        for (count, format) in [5000, 300_001]
            .into_iter()
            .flat_map(|n| [(n, StorageFormat::Fp32), (n, StorageFormat::Fp16)])
        {
            let values: Vec<f32> = (0..count)
                .map(|i| (i as f32 * 0.37).sin() * 100.0)
                .collect();
            let mut bytes = vec![0xAAu8; values.len() * format.size() + 64];
            format.encode_into(&values, (&mut bytes[..]).into());
            let back = format.decode(&bytes, values.len());
            for (v, b) in values.iter().zip(&back) {
                let want = match format {
                    StorageFormat::Fp32 => *v,
                    _ => half::f16::from_f32(*v).to_f32(),
                };
                assert_eq!(want, *b, "{format:?}");
            }
            assert!(
                bytes[values.len() * format.size()..]
                    .iter()
                    .all(|b| *b == 0)
            );
        }
    }

    /// int8 storage holds each value's level at its scale (rounded half away from zero,
    /// clamped to ±127) and decodes to the level over the scale; a zero scale to zeros.
    #[test]
    fn int8_storage_holds_levels_and_decodes_to_values() {
        let format = StorageFormat::Int8(super::Int8Scale::new(4.0));
        let values = [0.0, 0.124, 0.125, -0.125, 1.0, -31.7, 40.0, -40.0];
        let levels = [0i8, 0, 1, -1, 4, -127, 127, -127];
        let bytes = format.encode(&values);
        assert_eq!(bytes, levels.map(|l| l as u8));
        let mut staged = vec![0xAAu8; 300_001 + 7];
        let many: Vec<f32> = (0..300_001)
            .map(|i| (i % 509) as f32 * 0.25 - 63.5)
            .collect();
        format.encode_into(&many, (&mut staged[..]).into());
        let back = format.decode_parallel(&staged, many.len());
        for (v, b) in many.iter().zip(&back) {
            assert_eq!(*b, (v * 4.0).round().clamp(-127.0, 127.0) / 4.0, "{v}");
        }
        assert!(staged[many.len()..].iter().all(|b| *b == 0));
        let zero = StorageFormat::Int8(super::Int8Scale::new(0.0));
        assert_eq!(zero.decode(&zero.encode(&values), values.len()), [0.0; 8]);
    }
}
