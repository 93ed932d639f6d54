//! The n² products of a chunk of tiles, `[cout][cin] × [cin][tiles]` into `[tiles][cout]`: on
//! x86 a kernel of our own over weights laid out once in panels of output channels (AVX-512 or
//! AVX2 with FMA), elsewhere the `gemm` crate.
//!
//! Why a kernel of our own: the crate reads the weights in place (a column-major left-hand
//! side, each element's 1 MiB at 512 → 512 channels read at a 2 KiB stride) and packs the tiles
//! into panels on every call. On the small maps where Winograd's products are few tiles wide
//! (16 for a 7² map in F(2,3)) the products stream the weights and are bound by memory; here
//! they stream once, in the order the kernel reads them, and the tiles are read in place.

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
        // blocks of nearly equal size: 16 tiles go as 8 and 8, not 12 and 4 (a short block
        // reads the panel again for a third of the work)
        let blocks = tc.div_ceil(most);
        let block_len = |b: usize| tc / blocks + usize::from(b < tc % blocks);
        assert!(v.len() >= (cin - 1) * vrs + tc, "Winograd product input");
        let panels = cout.div_ceil(width);
        for p in 0..panels {
            let w = &self.data[(xi * panels + p) * cin * width..][..cin * width];
            let valid = width.min(cout - p * width);
            let mut t0 = 0;
            for b in 0..blocks {
                let n = block_len(b);
                // SAFETY: the weights' panel holds cin · width values (sliced above); the tiles
                // read are rows 0..cin of `v` at t0..t0 + n < tc (asserted inside `v`); the
                // outputs written are rows t0..t0 + n < tc of `out`, columns p · width +
                // 0..valid < cout (asserted inside `out`)
                unsafe {
                    let (vp, op) = (
                        v.as_ptr().add(t0),
                        out.as_mut_ptr().add(t0 * cout + p * width),
                    );
                    x86::block(
                        self.kernel,
                        n,
                        [w.as_ptr(), vp, op],
                        [cin, vrs, cout, valid],
                    );
                }
                t0 += n;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::Kernel;

    /// One block of `n` tiles by one panel: `out[t · ldo + j] = Σ_ci w[ci · width + j] ·
    /// v[ci · vrs + t]` for `t < n`, `j < valid`.
    ///
    /// # Safety
    /// `w` holds `cin · width` values, `v` rows `0..cin` (`vrs` apart) of `n` values each,
    /// `out` rows `0..n` (`ldo` apart) of `valid` values each; `kernel` runs on this CPU and
    /// `n` is at most its block.
    pub(super) unsafe fn block(
        kernel: Kernel,
        n: usize,
        [w, v, out]: [*const f32; 3],
        dims: [usize; 4],
    ) {
        let out = out.cast_mut();
        macro_rules! by_count {
            ($f:ident, $($n:literal)*) => {
                match n {
                    $($n => unsafe { $f::<$n>(w, v, out, dims) },)*
                    _ => unreachable!("a block of {n} tiles"),
                }
            };
        }
        match kernel {
            Kernel::Avx512 => by_count!(avx512, 1 2 3 4 5 6 7 8 9 10 11 12),
            Kernel::Avx2 => by_count!(avx2, 1 2 3 4 5 6),
            Kernel::Crate => unreachable!("the crate has no blocks"),
        }
    }

    /// [`block`] on AVX-512: 32 output channels as two vectors, `T` tiles broadcast.
    #[target_feature(enable = "avx512f")]
    unsafe fn avx512<const T: usize>(
        w: *const f32,
        v: *const f32,
        out: *mut f32,
        [cin, vrs, ldo, valid]: [usize; 4],
    ) {
        let mask = |from: usize| -> __mmask16 {
            let lanes = valid.saturating_sub(from).min(16);
            ((1u32 << lanes) - 1) as __mmask16
        };
        let (m0, m1) = (mask(0), mask(16));
        let mut acc = [[_mm512_setzero_ps(); 2]; T];
        for ci in 0..cin {
            // SAFETY: inside the panel and the rows, as the caller promises
            unsafe {
                let a0 = _mm512_loadu_ps(w.add(ci * 32));
                let a1 = _mm512_loadu_ps(w.add(ci * 32 + 16));
                let row = v.add(ci * vrs);
                for (t, acc) in acc.iter_mut().enumerate() {
                    let x = _mm512_set1_ps(*row.add(t));
                    acc[0] = _mm512_fmadd_ps(a0, x, acc[0]);
                    acc[1] = _mm512_fmadd_ps(a1, x, acc[1]);
                }
            }
        }
        for (t, acc) in acc.iter().enumerate() {
            // SAFETY: masked stores touch only the `valid` columns of row t
            unsafe {
                let o = out.wrapping_add(t * ldo);
                _mm512_mask_storeu_ps(o, m0, acc[0]);
                _mm512_mask_storeu_ps(o.wrapping_add(16), m1, acc[1]);
            }
        }
    }

    /// [`block`] on AVX2: 16 output channels as two vectors, `T` tiles broadcast.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn avx2<const T: usize>(
        w: *const f32,
        v: *const f32,
        out: *mut f32,
        [cin, vrs, ldo, valid]: [usize; 4],
    ) {
        let mut acc = [[_mm256_setzero_ps(); 2]; T];
        for ci in 0..cin {
            // SAFETY: inside the panel and the rows, as the caller promises
            unsafe {
                let a0 = _mm256_loadu_ps(w.add(ci * 16));
                let a1 = _mm256_loadu_ps(w.add(ci * 16 + 8));
                let row = v.add(ci * vrs);
                for (t, acc) in acc.iter_mut().enumerate() {
                    let x = _mm256_set1_ps(*row.add(t));
                    acc[0] = _mm256_fmadd_ps(a0, x, acc[0]);
                    acc[1] = _mm256_fmadd_ps(a1, x, acc[1]);
                }
            }
        }
        for (t, acc) in acc.iter().enumerate() {
            let o = out.wrapping_add(t * ldo);
            if valid == 16 {
                // SAFETY: row t's 16 columns lie inside the output
                unsafe {
                    _mm256_storeu_ps(o, acc[0]);
                    _mm256_storeu_ps(o.add(8), acc[1]);
                }
            } else {
                let mut lanes = [0.0f32; 16];
                // SAFETY: a local array of 16
                unsafe {
                    _mm256_storeu_ps(lanes.as_mut_ptr(), acc[0]);
                    _mm256_storeu_ps(lanes.as_mut_ptr().add(8), acc[1]);
                }
                // SAFETY: row t's `valid` columns lie inside the output
                unsafe { std::ptr::copy_nonoverlapping(lanes.as_ptr(), o, valid) };
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod x86 {
    use super::Kernel;

    /// No kernel of our own off x86: [`Kernel::detect`] gives the crate there.
    pub(super) unsafe fn block(_: Kernel, _: usize, _: [*const f32; 3], _: [usize; 4]) {
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
