//! Strided windows over a channel as contiguous runs, shared by depthwise convolution and
//! pooling: the channel's padded plane is laid out once as `sh × sw` phase planes (every
//! `s`-th row and column from each offset), which makes every tap of the window one contiguous
//! run over the *whole* output plane at any stride. The plane is computed in the phase width
//! (a few wasted columns per row) as one long vector loop, and its rows are copied out. Row by
//! row, a 7- or 14-wide map left most lanes of each vector idle in scalar tails, and the
//! per-row calls cost as much as the arithmetic (googlenet's 3×3 poolings took 1.7× ncnn's).

use multiversion::multiversion;

use crate::layer::shared::kernels;

/// Lanes per step of the tap loops: one AVX-512 register, two AVX2 or four NEON ones.
const LANES: usize = 16;

/// How a window's taps fold into its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Combine {
    /// `out + weight · tap` (convolution).
    MulAdd,
    /// `max(out, tap)` (max pooling; weights unread).
    Max,
    /// `out + tap` (average pooling; weights unread).
    Add,
}

/// Where the phase planes of one padded channel lie: phase `(py, px)` holds padded row
/// `y·sh + py`, column `x·sw + px` at `(py·sw + px)·w·h + y·w + x`.
pub(crate) struct Phases {
    /// Width and height of each phase plane.
    w: usize,
    h: usize,
    stride: [usize; 2],
}

impl Phases {
    /// The phases of a padded plane of `padded` (`[w, h]`) read at `stride` (`[sw, sh]`).
    /// A stride past the plane's extent reads one window along that axis, whose phases are
    /// the extent's: laying out a phase per stride step (65536² of them for a pooling stride
    /// of 65536) would size the layout by the stride, not the data.
    pub fn new(padded: [usize; 2], stride: [usize; 2]) -> Self {
        let [sw, sh] = [0, 1].map(|i| stride[i].clamp(1, padded[i].max(1)));
        Phases {
            w: padded[0].div_ceil(sw),
            h: padded[1].div_ceil(sh),
            stride: [sw, sh],
        }
    }

    /// The width of each phase plane: one output row to the next, in a flat output.
    pub fn width(&self) -> usize {
        self.w
    }

    /// Values in all phase planes.
    pub fn len(&self) -> usize {
        self.stride[0] * self.stride[1] * self.w * self.h
    }

    /// The index of padded row `y`, column `x`.
    fn at(&self, y: usize, x: usize) -> usize {
        let [sw, sh] = self.stride;
        ((y % sh) * sw + x % sw) * self.w * self.h + (y / sh) * self.w + x / sw
    }

    /// Where each tap of a `kernel` (`[kw, kh]`) window dilated by `dilation` starts, row by
    /// row: output `(oy, ox)` reads tap `t` at `taps[t] + oy·w + ox`.
    pub fn taps(&self, [kw, kh]: [usize; 2], [dw, dh]: [usize; 2]) -> Vec<usize> {
        (0..kh)
            .flat_map(|ky| (0..kw).map(move |kx| (ky * dh, kx * dw)))
            .map(|(y, x)| self.at(y, x))
            .collect()
    }

    /// How far a window read at `stride` (a multiple of the layout's own) moves in the layout
    /// from one output column and one output row to the next, `[x, y]`: `[1, w]` where the
    /// layout's phases are the stride's, `[sw, sh·w]` in a plain plane (stride-1 layout).
    pub fn output_steps(&self, [sw, sh]: [usize; 2]) -> [usize; 2] {
        let [lw, lh] = self.stride;
        debug_assert!(
            sw % lw == 0 && sh % lh == 0,
            "a window stride the layout divides"
        );
        [sw / lw, sh / lh * self.w]
    }

    /// Values of the flat output of `[ow, oh]`: rows in the phase width, the last one short.
    pub fn flat_len(&self, [ow, oh]: [usize; 2]) -> usize {
        (oh.max(1) - 1) * self.w + ow
    }

    /// Lays channel `src` (`w × h`) out into `dst`, its top-left value at padded `[left,
    /// top]`, the rest `value`. Rows and columns past the padded plane are left out (windows
    /// that stop short of the data's far edge never read them). Every value of `dst` is
    /// written once: the data split into its phases, the padding of each phase row around it
    /// (a fill of the whole layout first wrote every data value twice).
    pub fn fill(
        &self,
        src: &[f32],
        [w, h]: [usize; 2],
        [left, top]: [usize; 2],
        value: f32,
        dst: &mut [f32],
    ) {
        let [sw, sh] = self.stride;
        let (pw, ph) = (self.w * sw, self.h * sh);
        let cols = w.min(pw.saturating_sub(left));
        let rows = h.min(ph.saturating_sub(top));
        // each phase's run of data columns: x with left <= x·sw + p < left + cols
        let first = |c: usize, p: usize| c.saturating_sub(p).div_ceil(sw).min(self.w);
        let spans: Vec<[usize; 2]> = (0..sw)
            .map(|p| [first(left, p), first(left + cols, p)])
            .collect();
        // the phase planes row by row, their starts by multiplication (`at`'s divisions per
        // row and phase were the layout's hottest instructions in a pooling's profile)
        let plane = self.w * self.h;
        for py in 0..sh {
            for y in 0..self.h {
                let start = |px: usize| (py * sw + px) * plane + y * self.w;
                let data = (y * sh + py).checked_sub(top).filter(|r| *r < rows);
                if let Some(r) = data {
                    let row = &src[r * w..r * w + cols];
                    if sw == 1 {
                        dst[start(0) + left..][..cols].copy_from_slice(row);
                    } else {
                        let phase = |q: usize| start((q + left) % sw) + (q + left) / sw;
                        kernels::split_phases(row, sw, phase, cols.div_ceil(sw), dst);
                    }
                }
                for (px, &[x0, x1]) in spans.iter().enumerate() {
                    let line = &mut dst[start(px)..][..self.w];
                    if data.is_some() {
                        line[..x0].fill(value);
                        line[x1..].fill(value);
                    } else {
                        line.fill(value);
                    }
                }
            }
        }
    }

    /// The output rows of `flat` (`[ow, oh]` in the phase width) into `plane` (`ow · oh`).
    pub fn copy_out(&self, flat: &[f32], [ow, oh]: [usize; 2], plane: &mut [f32]) {
        for (oy, row) in plane.chunks_exact_mut(ow.max(1)).take(oh).enumerate() {
            let at = oy * self.w;
            row.copy_from_slice(&flat[at..at + ow]);
        }
    }
}

/// `out[i] = combine(out[i], src[at[t] + i], weights[t])` over every tap `t` in order, over
/// all of `out`: 2×2, 3×3 and 5×5 windows with their taps unrolled, others in a loop.
/// `weights` holds a weight per tap for [`Combine::MulAdd`] and is not read otherwise.
pub(crate) fn accumulate(
    out: &mut [f32],
    src: &[f32],
    at: &[usize],
    weights: &[f32],
    combine: Combine,
) {
    match combine {
        Combine::MulAdd => by_taps(out, src, at, weights, |acc, x, w| w.mul_add(x, acc)),
        Combine::Max => by_taps(out, src, at, &unread(at.len()), |acc, x, _| acc.max(x)),
        Combine::Add => by_taps(out, src, at, &unread(at.len()), |acc, x, _| acc + x),
    }
}

/// Weights for the combines that do not read them, one per tap: borrowed for windows up to
/// 5×5, so that a pooling's per-channel calls allocate nothing.
fn unread(taps: usize) -> std::borrow::Cow<'static, [f32]> {
    static ONES: [f32; 25] = [1.0; 25];
    match ONES.get(..taps) {
        Some(ones) => std::borrow::Cow::Borrowed(ones),
        None => std::borrow::Cow::Owned(vec![1.0; taps]),
    }
}

/// [`accumulate`] for one combine, by tap count.
fn by_taps<F: Fn(f32, f32, f32) -> f32 + Copy>(
    out: &mut [f32],
    src: &[f32],
    at: &[usize],
    weights: &[f32],
    f: F,
) {
    match at.len() {
        4 => taps_k::<4, F>(out, src, at, weights, f),
        9 => taps_k::<9, F>(out, src, at, weights, f),
        25 => taps_k::<25, F>(out, src, at, weights, f),
        _ => taps_any(out, src, at, weights, f),
    }
}

/// The tap loop for any number of taps, [`LANES`] outputs at a time.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn taps_any<F: Fn(f32, f32, f32) -> f32 + Copy>(
    out: &mut [f32],
    src: &[f32],
    at: &[usize],
    weights: &[f32],
    f: F,
) {
    let n = out.len();
    let taps: Vec<&[f32]> = at.iter().map(|&a| &src[a..a + n]).collect();
    let whole = n - n % LANES;
    for x in (0..whole).step_by(LANES) {
        let mut acc = [0.0f32; LANES];
        acc.copy_from_slice(&out[x..x + LANES]);
        for (tap, &w) in taps.iter().zip(weights) {
            let tap = &tap[x..x + LANES];
            for i in 0..LANES {
                acc[i] = f(acc[i], tap[i], w);
            }
        }
        out[x..x + LANES].copy_from_slice(&acc);
    }
    for x in whole..n {
        out[x] = taps
            .iter()
            .zip(weights)
            .fold(out[x], |s, (tap, &w)| f(s, tap[x], w));
    }
}

/// The tap loop for `K` taps: the weights in registers and a fixed trip count, so the loop
/// has no bounds checks.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn taps_k<const K: usize, F: Fn(f32, f32, f32) -> f32 + Copy>(
    out: &mut [f32],
    src: &[f32],
    at: &[usize],
    weights: &[f32],
    f: F,
) {
    let n = out.len();
    let taps: [&[f32]; K] = std::array::from_fn(|t| &src[at[t]..at[t] + n]);
    let w: [f32; K] = std::array::from_fn(|t| weights[t]);
    let whole = n - n % LANES;
    for x in (0..whole).step_by(LANES) {
        let mut acc = [0.0f32; LANES];
        acc.copy_from_slice(&out[x..x + LANES]);
        for t in 0..K {
            let tap = &taps[t][x..x + LANES];
            for i in 0..LANES {
                acc[i] = f(acc[i], tap[i], w[t]);
            }
        }
        out[x..x + LANES].copy_from_slice(&acc);
    }
    for x in whole..n {
        let mut s = out[x];
        for t in 0..K {
            s = f(s, taps[t][x], w[t]);
        }
        out[x] = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A max pooling's output by its definition: every tap read from the padded plane directly.
    fn max_pool(
        src: &[f32],
        [w, h]: [usize; 2],
        [left, top]: [usize; 2],
        [kw, kh]: [usize; 2],
        [sw, sh]: [usize; 2],
        [ow, oh]: [usize; 2],
    ) -> Vec<f32> {
        let at = |y: usize, x: usize| {
            let (y, x) = (y as isize - top as isize, x as isize - left as isize);
            if y < 0 || x < 0 || y >= h as isize || x >= w as isize {
                f32::NEG_INFINITY
            } else {
                src[y as usize * w + x as usize]
            }
        };
        (0..oh)
            .flat_map(|oy| (0..ow).map(move |ox| (oy, ox)))
            .map(|(oy, ox)| {
                (0..kh)
                    .flat_map(|ky| (0..kw).map(move |kx| (ky, kx)))
                    .fold(f32::NEG_INFINITY, |m, (ky, kx)| {
                        m.max(at(oy * sh + ky, ox * sw + kx))
                    })
            })
            .collect()
    }

    #[test]
    fn every_window_reads_its_taps_at_every_stride_and_crop() {
        // (input, pad, kernel, stride): odd and even maps, strides 1–3, windows that stop
        // short of the far edge (the padded plane narrower than the data)
        let cases = [
            ([7, 5], [1, 1], [3, 3], [1, 1]),
            ([8, 8], [0, 0], [3, 3], [2, 2]),
            ([9, 6], [2, 1], [5, 5], [2, 1]),
            ([10, 7], [0, 1], [2, 2], [2, 2]),
            ([11, 11], [1, 0], [4, 3], [3, 2]),
            ([3, 3], [0, 0], [3, 3], [1, 1]),
        ];
        for ([w, h], pad, [kw, kh], [sw, sh]) in cases {
            let src: Vec<f32> = (0..w * h).map(|i| ((i * 37) % 101) as f32 - 50.0).collect();
            let (ow, oh) = ((w + pad[0] - kw) / sw + 1, (h + pad[1] - kh) / sh + 1);
            let padded = [(ow - 1) * sw + kw, (oh - 1) * sh + kh];
            let phases = Phases::new(padded, [sw, sh]);
            let mut planes = vec![0.0; phases.len()];
            phases.fill(&src, [w, h], pad, f32::NEG_INFINITY, &mut planes);
            let at = phases.taps([kw, kh], [1, 1]);
            let mut flat = vec![f32::NEG_INFINITY; phases.flat_len([ow, oh])];
            accumulate(&mut flat, &planes, &at, &[], Combine::Max);
            let mut got = vec![0.0; ow * oh];
            phases.copy_out(&flat, [ow, oh], &mut got);
            let want = max_pool(&src, [w, h], pad, [kw, kh], [sw, sh], [ow, oh]);
            assert_eq!(
                got, want,
                "input {w}×{h}, pad {pad:?}, kernel {kw}×{kh}, stride {sw}×{sh}"
            );
        }
    }

    #[test]
    fn every_combine_folds_each_tap_once() {
        let src: Vec<f32> = (0..64).map(|i| i as f32 * 0.5 - 7.0).collect();
        let at = [0, 3, 9, 20];
        let weights = [0.5, -1.0, 2.0, 0.25];
        for combine in [Combine::MulAdd, Combine::Max, Combine::Add] {
            let mut out = vec![1.0f32; 40];
            accumulate(&mut out, &src, &at, &weights, combine);
            for (i, &o) in out.iter().enumerate() {
                let want = at
                    .iter()
                    .zip(weights)
                    .fold(1.0f32, |s, (&a, w)| match combine {
                        Combine::MulAdd => w.mul_add(src[a + i], s),
                        Combine::Max => s.max(src[a + i]),
                        Combine::Add => s + src[a + i],
                    });
                assert_eq!(o, want, "{combine:?} at {i}");
            }
        }
    }
}
