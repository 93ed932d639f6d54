//! The input planes the CPU algorithms read: the input's own channels where no padding is
//! needed, else a padded copy made once per forward.

use std::borrow::Cow;

use rayon::prelude::*;

use super::super::Geometry;
use crate::layer::shared::grain::min_items;
use crate::layer::shared::phase_planes::Phases;
use crate::layer::shared::view::channel_planes;
use crate::tensor::Mat;
use crate::tensor::pool;

/// Channel planes: channel `q`'s row `y` starts at `q * step + y * w`.
pub(super) struct Planes<'a> {
    pub data: Cow<'a, [f32]>,
    /// The row length (the padded width).
    pub w: usize,
    /// Values from one channel to the next.
    pub step: usize,
}

/// A padded copy's memory goes back to the buffer pool.
impl Drop for Planes<'_> {
    fn drop(&mut self) {
        if let Cow::Owned(v) = &mut self.data {
            pool::give(std::mem::take(v));
        }
    }
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
        Planes::padded_to(m, geo, value, geo.padded)
    }

    /// [`Planes::padded`] in planes of `extent` (at least the padded size): past the padding,
    /// zeros.
    pub fn padded_to(m: &'a Mat, geo: &Geometry, value: f32, [ew, eh]: [usize; 2]) -> Self {
        let (w, h) = (m.w, m.h);
        if [ew, eh] == [w, h] {
            return Planes::of(m);
        }
        let [pw, ph] = geo.padded;
        // a packed blob read in place, not unpacked whole first
        let (src, step, pack) = match m.f32() {
            Ok(v) if m.elempack > 1 => (Cow::Borrowed(v), m.cstep * m.elempack, m.elempack),
            _ => {
                let (src, step) = channel_planes(m);
                (src, step, 1)
            }
        };
        let plane = ew * eh;
        // every value written by its block's task (a zeroed buffer first was one thread's
        // `memset` over the whole padded input): a block is a channel, or a packed blob's pack of
        // channels, whose rows are read once and scattered to their planes
        let mut padded = pool::any(m.c * m.elempack * plane);
        let (top, left) = (geo.pad_top, geo.pad_left);
        padded
            .par_chunks_mut((pack * plane).max(1))
            .with_min_len(min_items(pack * plane))
            .enumerate()
            .for_each(|(b, block)| {
                for dst in block.chunks_mut(plane.max(1)) {
                    for (y, row) in dst.chunks_mut(ew.max(1)).enumerate() {
                        // the padding frame holds `value`, past it (whole tiles) zeros; the
                        // data below
                        let (frame, rest) = row.split_at_mut(pw.min(ew));
                        rest.fill(0.0);
                        if y >= ph {
                            frame.fill(0.0);
                        } else if (top..top + h).contains(&y) {
                            let (l, r) = frame.split_at_mut(left);
                            l.fill(value);
                            r[w..].fill(value);
                        } else {
                            frame.fill(value);
                        }
                    }
                }
                let ch = &src[(b * step).min(src.len())..];
                for (y, line) in ch.chunks(w * pack).take(h).enumerate() {
                    let at = (top + y) * ew + left;
                    if pack == 1 {
                        block[at..at + w].copy_from_slice(line);
                        continue;
                    }
                    for (x, px) in line.chunks_exact(pack).enumerate() {
                        for (k, v) in px.iter().enumerate() {
                            block[k * plane + at + x] = *v;
                        }
                    }
                }
            });
        Planes {
            data: Cow::Owned(padded),
            w: ew,
            step: plane,
        }
    }

    /// The input with `geo`'s padding (`value`) as each channel's `phases`: rows
    /// [`Phases::width`] long, channels [`Phases::len`] apart.
    pub fn phased(m: &'a Mat, geo: &Geometry, value: f32, phases: &Phases) -> Self {
        let (w, h) = (m.w, m.h);
        let (src, step) = channel_planes(m);
        let plane = phases.len();
        // every value written by `fill`
        let mut data = pool::any(m.c * m.elempack * plane);
        let pad = [geo.pad_left, geo.pad_top];
        data.par_chunks_mut(plane.max(1))
            .with_min_len(min_items(plane))
            .enumerate()
            .for_each(|(q, dst)| {
                phases.fill(&src[q * step..q * step + w * h], [w, h], pad, value, dst);
            });
        Planes {
            data: Cow::Owned(data),
            w: phases.width(),
            step: plane,
        }
    }
}
