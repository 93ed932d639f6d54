//! The n² products of a chunk of tiles, `[cout][cin] × [cin][tiles]` into `[tiles][cout]`: on
//! x86 a kernel of our own over weights laid out once in panels of output channels (AVX-512 or
//! AVX2 with FMA), elsewhere the `gemm` crate. The same kernel multiplies a pointwise layer's
//! weights by a pack8 blob in place (its positions are the tiles, eight input channels
//! interleaved), which the crate, taking one stride per dimension, cannot read.
//!
//! Why a kernel of our own: the crate reads the weights in place (a column-major left-hand
//! side, each element's 1 MiB at 512 → 512 channels read at a 2 KiB stride) and packs the tiles
//! into panels on every call. On the small maps where Winograd's products are few tiles wide
//! (16 for a 7² map in F(2,3)) the products stream the weights and are bound by memory; here
//! they stream once, in the order the kernel reads them, and the tiles are read in place.

use super::sink::Shared;
use crate::layer::cpu_gemm::{MatMut, MatRef, gemm_serial};

/// Which kernel computes the products: fixed per process by the CPU's features.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// The `gemm` crate, on `[n²][cin][cout]` weights.
    Crate,
    /// AVX2 with FMA: panels of 16 output channels (two vectors), up to 6 tiles a block.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512: panels of 32 output channels (two vectors), up to 12 tiles a block.
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Kernel {
    /// The fastest kernel this CPU runs.
    pub(crate) fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Kernel::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Kernel::Avx2;
            }
        }
        Kernel::Crate
    }

    /// Every kernel this CPU runs (the tests compare them).
    #[cfg(test)]
    pub(crate) fn available() -> Vec<Kernel> {
        let mut all = vec![Kernel::Crate];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                all.push(Kernel::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                all.push(Kernel::Avx512);
            }
        }
        all
    }

    /// `[output channels per panel, most tiles per block]`; `None` for the crate.
    fn blocking(self) -> Option<[usize; 2]> {
        match self {
            Kernel::Crate => None,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => Some([16, 6]),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => Some([32, 12]),
        }
    }
}

/// A tile size's transformed weights, laid out for the kernel that multiplies them:
/// `[n²][cin][cout]` for the crate, `[n²][panels][cin][panel]` (the last panel's missing
/// channels zero) for ours.
pub(crate) struct ProductWeights {
    data: Vec<f32>,
    kernel: Kernel,
    cin: usize,
    cout: usize,
}

impl ProductWeights {
    /// `u` (`[nn][cin][cout]`) laid out for `kernel`.
    pub(super) fn new(u: Vec<f32>, nn: usize, [cin, cout]: [usize; 2], kernel: Kernel) -> Self {
        assert_eq!(u.len(), nn * cin * cout, "transformed weights");
        let data = match kernel.blocking() {
            None => u,
            Some([width, _]) => {
                let panels = cout.div_ceil(width);
                let mut data = vec![0.0f32; nn * panels * cin * width];
                for (xi, plane) in u.chunks_exact((cin * cout).max(1)).enumerate() {
                    for (p, oc0) in (0..cout).step_by(width).enumerate() {
                        let valid = width.min(cout - oc0);
                        let panel = &mut data[(xi * panels + p) * cin * width..][..cin * width];
                        for (dst, src) in panel.chunks_exact_mut(width).zip(plane.chunks(cout)) {
                            dst[..valid].copy_from_slice(&src[oc0..oc0 + valid]);
                        }
                    }
                }
                data
            }
        };
        ProductWeights {
            data,
            kernel,
            cin,
            cout,
        }
    }

    /// Element `xi`'s product for `tc` tiles: `out[t · cout + oc] = Σ_ci u[ci][oc] ·
    /// v[ci · vrs + t]`, every one of `out`'s first `tc · cout` values written.
    pub(super) fn product(&self, xi: usize, v: &[f32], vrs: usize, tc: usize, out: &mut [f32]) {
        let (cin, cout) = (self.cin, self.cout);
        if tc == 0 || cout == 0 {
            return;
        }
        assert!(out.len() >= tc * cout, "Winograd product output");
        let Some([width, most]) = self.kernel.blocking() else {
            let a = MatRef::rows(&self.data[xi * cin * cout..], cin, cout, cout).t();
            let b = MatRef::rows(v, cin, tc, vrs);
            let c = MatMut {
                data: out,
                rows: cout,
                cols: tc,
                rs: 1,
                cs: cout,
            };
            gemm_serial(a, b, c, false);
            return;
        };
        if cin == 0 {
            out[..tc * cout].fill(0.0);
            return;
        }
        assert!(v.len() >= (cin - 1) * vrs + tc, "Winograd product input");
        let ops = Operands {
            group: 1,
            vrs,
            its: 1,
            ots: cout,
            ogs: 8,
        };
        for p in 0..cout.div_ceil(width) {
            for [t0, n] in blocks(tc, most) {
                // SAFETY: the tiles read are rows 0..cin of `v` at t0..t0 + n ≤ tc (asserted
                // inside `v`); the outputs written rows t0..t0 + n of `out`, channels
                // p · width + 0..valid < cout (asserted inside `out`)
                unsafe {
                    self.block(
                        xi,
                        p,
                        n,
                        [v.as_ptr().add(t0), std::ptr::null()],
                        out.as_mut_ptr().add(t0 * cout + p * width),
                        ops,
                    );
                }
            }
        }
    }

    /// `[output channels per panel, most tiles per block]` of our kernel; `None` for the
    /// crate.
    pub(super) fn blocking(&self) -> Option<[usize; 2]> {
        self.kernel.blocking()
    }

    /// Panel `p` of element `xi` by `n` tiles: [`x86::block`] over this panel's weights.
    ///
    /// # Safety
    /// As [`x86::block`] for `v`, `bias` (null or the panel's `width` values) and `out`; `n`
    /// at most the kernel's block, `p` a panel of `xi`.
    unsafe fn block(
        &self,
        xi: usize,
        p: usize,
        n: usize,
        [v, bias]: [*const f32; 2],
        out: *mut f32,
        ops: Operands,
    ) {
        let Some([width, _]) = self.kernel.blocking() else {
            unreachable!("the crate has no panels")
        };
        let panels = self.cout.div_ceil(width);
        let w = &self.data[(xi * panels + p) * self.cin * width..][..self.cin * width];
        let valid = width.min(self.cout - p * width);
        // SAFETY: the panel holds cin · width values (sliced above); the rest the caller's
        unsafe {
            x86::block(
                self.kernel,
                n,
                [w.as_ptr(), v, bias, out],
                self.cin,
                ops,
                valid,
            )
        }
    }

    /// A pointwise layer on pack8 blobs: panel `p`'s output channels (whole groups of 8) for
    /// output positions `t0..t1`, from the bias (`cout` values, or empty), into pack8 `out`
    /// (groups `ogs` values apart) from pack8 `v` (groups `vrs` apart) read as `walk` says.
    /// `cin` and `cout` are multiples of 8, and this is our kernel.
    pub(super) fn packed_panel(
        &self,
        p: usize,
        (v, vrs): (&[f32], usize),
        [t0, t1]: [usize; 2],
        bias: &[f32],
        (out, ogs): (Shared, usize),
        walk: Walk,
    ) {
        let Some([width, most]) = self.kernel.blocking() else {
            unreachable!("pack8 pointwise runs on our kernel only")
        };
        assert!(
            self.cin.is_multiple_of(8)
                && self.cout.is_multiple_of(8)
                && p * width < self.cout
                && t1 >= t0,
            "pack8 pointwise panel"
        );
        let valid = width.min(self.cout - p * width);
        let last = (p * width + valid) / 8 - 1;
        assert!(out.len >= last * ogs + t1 * 8, "pack8 pointwise output");
        let mut b = [0.0f32; 32];
        for (x, y) in b.iter_mut().zip(bias.iter().skip(p * width).take(valid)) {
            *x = *y;
        }
        let Walk {
            ow,
            w,
            stride: [sw, sh],
        } = walk;
        let mut t = t0;
        while t < t1 {
            // stride 1 reads the positions in order, rows and all; a stride reads each output
            // row's positions `sw` apart
            let (row, col) = (t / ow.max(1), t % ow.max(1));
            let end = if [sw, sh] == [1, 1] {
                t1
            } else {
                t1.min((row + 1) * ow)
            };
            let first = row * sh * w + col * sw;
            let ops = Operands {
                group: 8,
                vrs,
                its: 8 * sw,
                ots: 8,
                ogs,
            };
            assert!(
                v.len() >= (self.cin / 8 - 1) * vrs + (first + (end - t - 1) * sw + 1) * 8,
                "pack8 pointwise input"
            );
            for [i, n] in blocks(end - t, most) {
                // SAFETY: the input's groups 0..cin/8 at the block's positions and the
                // output's groups of this panel at t + i..t + i + n ≤ t1 lie inside (asserted
                // above); tasks write disjoint panels or positions
                unsafe {
                    self.block(
                        0,
                        p,
                        n,
                        [v.as_ptr().add((first + i * sw) * 8), b.as_ptr()],
                        out.ptr.add(p * width / 8 * ogs + (t + i) * 8),
                        ops,
                    );
                }
            }
            t = end;
        }
    }
}

/// How a pointwise layer's output positions read its input: `ow` outputs and `w` inputs to a
/// row, output `(y, x)` from input `(y·sh, x·sw)`.
#[derive(Clone, Copy)]
pub(super) struct Walk {
    pub(super) ow: usize,
    pub(super) w: usize,
    pub(super) stride: [usize; 2],
}

/// How one block's operands lie: the right-hand side's value `(ci, t)` at `(ci / group) · vrs
/// + t · its + ci % group` (`group` 1: one row per input channel; 8: a pack8 blob, whose
/// positions are `its` = 8 · stride apart), the output `(t, oc)` at `t · ots + (oc / 8) · ogs
/// + oc % 8`.
#[derive(Clone, Copy)]
pub(super) struct Operands {
    group: usize,
    vrs: usize,
    its: usize,
    ots: usize,
    ogs: usize,
}

/// `[first, length]` of the blocks `tc` tiles split into, at most `most` each and of nearly
/// equal length: 16 tiles go as 8 and 8, not 12 and 4 (a short block reads the panel again
/// for a third of the work).
fn blocks(tc: usize, most: usize) -> impl Iterator<Item = [usize; 2]> {
    let count = tc.div_ceil(most);
    (0..count).scan(0, move |first, b| {
        let len = tc / count + usize::from(b < tc % count);
        let block = [*first, len];
        *first += len;
        Some(block)
    })
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Kernel, Operands};

    /// One block of `n` tiles by one panel: `out[t · ots + (j / 8) · ogs + j % 8] =
    /// bias[j] + Σ_ci w[ci · width + j] · v[(ci / G) · vrs + t · its + ci % G]` for `t < n`,
    /// `j < valid` (`G` = `ops.group`; a null `bias` is zero).
    ///
    /// # Safety
    /// `w` holds `cin · width` values, `bias` (unless null) `width`, `v` every value the sum
    /// reads, `out` every value written; `kernel` runs on this CPU, `n` is at most its block,
    /// `ops.group` is 1 or 8 and divides `cin`.
    pub(super) unsafe fn block(
        kernel: Kernel,
        n: usize,
        [w, v, bias, out]: [*const f32; 4],
        cin: usize,
        ops: Operands,
        valid: usize,
    ) {
        let out = out.cast_mut();
        macro_rules! by_count {
            ($f:ident, $g:literal, $($n:literal)*) => {
                match n {
                    $($n => unsafe { $f::<$n, $g>(w, v, bias, out, cin, ops, valid) },)*
                    _ => unreachable!("a block of {n} tiles"),
                }
            };
        }
        match (kernel, ops.group) {
            (Kernel::Avx512, 1) => by_count!(avx512, 1, 1 2 3 4 5 6 7 8 9 10 11 12),
            (Kernel::Avx512, _) => by_count!(avx512, 8, 1 2 3 4 5 6 7 8 9 10 11 12),
            (Kernel::Avx2, 1) => by_count!(avx2, 1, 1 2 3 4 5 6),
            (Kernel::Avx2, _) => by_count!(avx2, 8, 1 2 3 4 5 6),
            (Kernel::Crate, _) => unreachable!("the crate has no blocks"),
        }
    }

    /// Output channels `8g..8g + 8` of one tile at `o`, the first `valid - 8g` of them.
    ///
    /// # Safety
    /// `o` holds those channels' values; AVX runs on this CPU.
    #[target_feature(enable = "avx")]
    unsafe fn store8(o: *mut f32, x: __m256, lanes: usize) {
        if lanes >= 8 {
            // SAFETY: the caller's eight values
            unsafe { _mm256_storeu_ps(o, x) };
        } else if lanes > 0 {
            let mut tmp = [0.0f32; 8];
            // SAFETY: a local array of 8, then the caller's `lanes` values
            unsafe {
                _mm256_storeu_ps(tmp.as_mut_ptr(), x);
                std::ptr::copy_nonoverlapping(tmp.as_ptr(), o, lanes);
            }
        }
    }

    /// [`block`] on AVX-512: 32 output channels as two vectors, `T` tiles broadcast.
    #[target_feature(enable = "avx512f")]
    unsafe fn avx512<const T: usize, const G: usize>(
        w: *const f32,
        v: *const f32,
        bias: *const f32,
        out: *mut f32,
        cin: usize,
        ops: Operands,
        valid: usize,
    ) {
        let init = if bias.is_null() {
            [_mm512_setzero_ps(); 2]
        } else {
            // SAFETY: the panel's bias, `width` values
            unsafe { [_mm512_loadu_ps(bias), _mm512_loadu_ps(bias.add(16))] }
        };
        let mut acc = [init; T];
        for cg in 0..cin / G {
            // SAFETY: inside the panel and the tiles, as the caller promises
            unsafe {
                let group = v.add(cg * ops.vrs);
                for k in 0..G {
                    let ci = cg * G + k;
                    let a0 = _mm512_loadu_ps(w.add(ci * 32));
                    let a1 = _mm512_loadu_ps(w.add(ci * 32 + 16));
                    for (t, acc) in acc.iter_mut().enumerate() {
                        let x = _mm512_set1_ps(*group.add(t * ops.its + k));
                        acc[0] = _mm512_fmadd_ps(a0, x, acc[0]);
                        acc[1] = _mm512_fmadd_ps(a1, x, acc[1]);
                    }
                }
            }
        }
        let mask = |from: usize| -> __mmask16 {
            let lanes = valid.saturating_sub(from).min(16);
            ((1u32 << lanes) - 1) as __mmask16
        };
        for (t, acc) in acc.iter().enumerate() {
            let o = out.wrapping_add(t * ops.ots);
            if ops.ogs == 8 {
                // SAFETY: masked stores touch only the `valid` channels of tile t
                unsafe {
                    _mm512_mask_storeu_ps(o, mask(0), acc[0]);
                    _mm512_mask_storeu_ps(o.wrapping_add(16), mask(16), acc[1]);
                }
                continue;
            }
            for (h, x) in acc.iter().enumerate() {
                // SAFETY: the halves of a 512-bit vector; each group's values of tile t
                unsafe {
                    let lo = _mm512_castps512_ps256(*x);
                    let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(*x), 1));
                    for (k, half) in [lo, hi].into_iter().enumerate() {
                        let g = 2 * h + k;
                        let o = o.wrapping_add(g * ops.ogs);
                        store8(o, half, valid.saturating_sub(8 * g));
                    }
                }
            }
        }
    }

    /// [`block`] on AVX2: 16 output channels as two vectors, `T` tiles broadcast.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn avx2<const T: usize, const G: usize>(
        w: *const f32,
        v: *const f32,
        bias: *const f32,
        out: *mut f32,
        cin: usize,
        ops: Operands,
        valid: usize,
    ) {
        let init = if bias.is_null() {
            [_mm256_setzero_ps(); 2]
        } else {
            // SAFETY: the panel's bias, `width` values
            unsafe { [_mm256_loadu_ps(bias), _mm256_loadu_ps(bias.add(8))] }
        };
        let mut acc = [init; T];
        for cg in 0..cin / G {
            // SAFETY: inside the panel and the tiles, as the caller promises
            unsafe {
                let group = v.add(cg * ops.vrs);
                for k in 0..G {
                    let ci = cg * G + k;
                    let a0 = _mm256_loadu_ps(w.add(ci * 16));
                    let a1 = _mm256_loadu_ps(w.add(ci * 16 + 8));
                    for (t, acc) in acc.iter_mut().enumerate() {
                        let x = _mm256_set1_ps(*group.add(t * ops.its + k));
                        acc[0] = _mm256_fmadd_ps(a0, x, acc[0]);
                        acc[1] = _mm256_fmadd_ps(a1, x, acc[1]);
                    }
                }
            }
        }
        for (t, acc) in acc.iter().enumerate() {
            let o = out.wrapping_add(t * ops.ots);
            for (g, x) in acc.iter().enumerate() {
                // SAFETY: each group's values of tile t, as the caller promises
                unsafe { store8(o.wrapping_add(g * ops.ogs), *x, valid.saturating_sub(8 * g)) };
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod x86 {
    use super::{Kernel, Operands};

    /// No kernel of our own off x86: [`Kernel::detect`] gives the crate there.
    pub(super) unsafe fn block(
        _: Kernel,
        _: usize,
        _: [*const f32; 4],
        _: usize,
        _: Operands,
        _: usize,
    ) {
        unreachable!("the crate has no blocks")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::cpu_gemm::test_values;

    /// Every kernel on this CPU gives the loop's products, on channel counts that fill no
    /// whole panel, tile counts that split into blocks of every length, rows with slack.
    #[test]
    fn every_kernel_multiplies_as_the_loop_does() {
        for (nn, cin, cout, tc) in [
            (16, 7, 19, 16),
            (36, 33, 70, 49),
            (4, 1, 1, 1),
            (9, 64, 32, 13),
        ] {
            let vrs = tc + 16 + 3;
            let u = test_values(nn * cin * cout, 1);
            let v = test_values(cin * nn * vrs, 2);
            for kernel in Kernel::available() {
                let weights = ProductWeights::new(u.clone(), nn, [cin, cout], kernel);
                for xi in [0, nn - 1] {
                    let mut out = vec![f32::NAN; tc * cout + 5];
                    // element xi's rows as the forward lays them out: [nn][cin][vrs]
                    let rows = &v[xi * cin * vrs..(xi + 1) * cin * vrs];
                    weights.product(xi, rows, vrs, tc, &mut out);
                    for t in 0..tc {
                        for oc in 0..cout {
                            let want: f32 = (0..cin)
                                .map(|ci| {
                                    u[(xi * cin + ci) * cout + oc] * v[(xi * cin + ci) * vrs + t]
                                })
                                .sum();
                            let got = out[t * cout + oc];
                            assert!(
                                (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                                "{kernel:?} {nn}/{cin}/{cout}/{tc} element {xi} ({t}, {oc}): \
                                 {got} vs {want}"
                            );
                        }
                    }
                    assert!(
                        out[tc * cout..].iter().all(|x| x.is_nan()),
                        "past the output"
                    );
                }
            }
        }
    }
}
