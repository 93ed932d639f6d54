//! ncnn's `convert_packing` on the CPU: [`Mat::to_packing`].

use rayon::prelude::*;

use super::COPY_GRAIN;
use super::mat::{ElemType, Mat, MatData, check_pack};
use crate::error::{Result, TensorError};

impl Mat {
    /// The same values repacked to `elempack` (ncnn's `convert_packing`) on the CPU.
    pub fn to_packing(&self, elempack: usize) -> Result<Mat> {
        check_pack(elempack)?;
        if elempack == self.elempack {
            return Ok(self.clone());
        }
        let channels = self.outer() * self.elempack;
        if !channels.is_multiple_of(elempack) {
            return Err(TensorError::Packing {
                channels,
                from: self.elempack,
                to: elempack,
            }
            .into());
        }
        let outer = channels / elempack;
        let shape = match self.dims {
            1 => [outer, 1, 1, 1],
            2 => [self.w, outer, 1, 1],
            _ => [self.w, self.h, self.d, outer],
        };
        let inner = self.inner();
        let (from, to) = (self.elempack, elempack);
        if let (MatData::F32(src), 3 | 4) = (&self.data, self.dims) {
            // the net's conversions between packed and unpacked layers: each destination
            // channel group in parallel, written in order (a serial strided copy per channel
            // took as long as the 1×1 layer beside it)
            let mut out = Mat::for_writing(self.dims, shape, elempack, ElemType::F32)?;
            let (sg, dg) = (self.cstep * from, out.cstep * to);
            let min_len = |n: usize| COPY_GRAIN.div_ceil(n.max(1));
            if from == 1 || to == 1 {
                // units of `p` channels: `p` planes on the unpacked side, one block on the
                // packed one, each side's unit contiguous; every value read and written once
                let p = from.max(to);
                let (sp, dp, dstep) = (self.cstep * p, out.cstep * p, out.cstep.max(1));
                out.f32_mut()?
                    .par_chunks_mut(dp.max(1))
                    .with_min_len(min_len(inner * p))
                    .enumerate()
                    .for_each(|(u, o)| {
                        let s = &src[u * sp..];
                        if to == p {
                            let planes: Vec<&[f32]> =
                                (0..p).map(|k| &s[k * self.cstep..][..inner]).collect();
                            for (i, px) in o[..inner * p].chunks_exact_mut(p).enumerate() {
                                for (v, plane) in px.iter_mut().zip(&planes) {
                                    *v = plane[i];
                                }
                            }
                        } else {
                            for (k, plane) in o.chunks_mut(dstep).enumerate() {
                                for (v, px) in plane[..inner].iter_mut().zip(s.chunks_exact(p)) {
                                    *v = px[k];
                                }
                            }
                        }
                    });
                return Ok(out);
            }
            out.f32_mut()?
                .par_chunks_mut(dg.max(1))
                .with_min_len(min_len(inner * to))
                .enumerate()
                .for_each(|(dq, o)| {
                    let starts: Vec<usize> = (dq * to..dq * to + to)
                        .map(|ch| ch / from * sg + ch % from)
                        .collect();
                    for (i, px) in o[..inner * to].chunks_exact_mut(to).enumerate() {
                        for (v, s) in px.iter_mut().zip(&starts) {
                            *v = src[s + i * from];
                        }
                    }
                });
            return Ok(out);
        }
        let mut out = Mat::zeros(self.dims, shape, elempack, self.elemtype())?;
        for ch in 0..channels {
            let (sq, sk) = (ch / from, ch % from);
            let (dq, dk) = (ch / to, ch % to);
            let (so, dst_o) = (self.outer_offset(sq), out.outer_offset(dq));
            copy_strided(
                &self.data,
                so + sk,
                from,
                &mut out.data,
                dst_o + dk,
                to,
                inner,
            );
        }
        Ok(out)
    }
}

/// Copies `count` values from every `sstride`-th of `src` to every `dstride`-th of `dst`.
fn copy_strided(
    src: &MatData,
    so: usize,
    sstride: usize,
    dst: &mut MatData,
    dso: usize,
    dstride: usize,
    count: usize,
) {
    macro_rules! strided {
        ($s:expr, $d:expr) => {
            for i in 0..count {
                $d[dso + i * dstride] = $s[so + i * sstride];
            }
        };
    }
    match (src, dst) {
        (MatData::F32(s), MatData::F32(d)) => strided!(s, d),
        (MatData::F16(s), MatData::F16(d)) => strided!(s, d),
        (MatData::Bf16(s), MatData::Bf16(d)) => strided!(s, d),
        (MatData::I8(s), MatData::I8(d)) => strided!(s, d),
        // both come from the same mat's element type
        _ => unreachable!("to_packing keeps the element type"),
    }
}
