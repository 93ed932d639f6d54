//! The input planes the CPU algorithms read: the input's own channels where no padding is
//! needed, else a padded copy made once per forward.

use std::borrow::Cow;

use rayon::prelude::*;

use super::super::Geometry;
use crate::layer::view::channel_planes;
use crate::tensor::Mat;

/// Channel planes: channel `q`'s row `y` starts at `q * step + y * w`.
pub(super) struct Planes<'a> {
    pub data: Cow<'a, [f32]>,
    /// The row length (the padded width).
    pub w: usize,
    /// Values from one channel to the next.
    pub step: usize,
}

impl<'a> Planes<'a> {
    /// The input's channels as they are.
    pub fn of(m: &'a Mat) -> Self {
        let (data, step) = channel_planes(m);
        Planes { data, w: m.w, step }
    }

    /// The input with `geo`'s padding around each channel, filled with `value`; the input
    /// itself where there is none.
    pub fn padded(m: &'a Mat, geo: &Geometry, value: f32) -> Self {
        let [pw, ph] = geo.padded;
        let (w, h) = (m.w, m.h);
        if [pw, ph] == [w, h] {
            return Planes::of(m);
        }
        let (src, step) = channel_planes(m);
        let plane = pw * ph;
        let mut padded = vec![value; m.c * plane];
        padded
            .par_chunks_mut(plane.max(1))
            .enumerate()
            .for_each(|(q, dst)| {
                let ch = &src[q * step..q * step + w * h];
                for (y, row) in ch.chunks(w.max(1)).enumerate() {
                    let at = (y + geo.pad_top) * pw + geo.pad_left;
                    dst[at..at + w].copy_from_slice(row);
                }
            });
        Planes {
            data: Cow::Owned(padded),
            w: pw,
            step: plane,
        }
    }
}
