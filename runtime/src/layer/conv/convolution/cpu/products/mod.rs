//! The n² products of a chunk of tiles, `[cout][cin] × [cin][tiles]` into `[tiles][cout]`: on
//! x86 a kernel of our own over weights laid out once in panels of output channels (AVX-512 or
//! AVX2 with FMA), elsewhere the `gemm` crate. The same kernel (and on aarch64 its NEON form)
//! multiplies a pointwise layer's weights by a packed blob in place (its positions are the
//! tiles, a pack's input channels interleaved), which the crate, taking one stride per
//! dimension, cannot read.
//!
//! Why a kernel of our own: the crate reads the weights in place (a column-major left-hand
//! side, each element's 1 MiB at 512 → 512 channels read at a 2 KiB stride) and packs the tiles
//! into panels on every call. On the small maps where Winograd's products are few tiles wide
//! (16 for a 7² map in F(2,3)) the products stream the weights and are bound by memory; here
//! they stream once, in the order the kernel reads them, and the tiles are read in place.

use super::sink::Shared;
use crate::layer::shared::cpu_gemm::{MatMut, MatRef, gemm_serial};

#[cfg(target_arch = "aarch64")]
mod neon;
#[cfg(target_arch = "x86_64")]
mod x86;

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
    /// NEON: panels of 16 output channels (four vectors), up to 6 tiles a block; pack4.
    #[cfg(target_arch = "aarch64")]
    Neon,
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

    /// The kernel that reads packed blobs on this CPU, if any: the x86 kernels (pack8) where
    /// [`Kernel::detect`] gives one, NEON (pack4) on aarch64. Winograd's unpacked products
    /// stay with [`Kernel::detect`]'s choice there (the crate's NEON kernels, not measured
    /// against ours on an ARM core).
    pub(crate) fn packed() -> Option<Kernel> {
        #[cfg(target_arch = "aarch64")]
        {
            Some(Kernel::Neon)
        }
        #[cfg(not(target_arch = "aarch64"))]
        {
            Some(Kernel::detect()).filter(|k| *k != Kernel::Crate)
        }
    }

    /// The elempack of the blobs the kernel reads and writes: a vector's lanes.
    pub(crate) fn pack(self) -> usize {
        match self {
            Kernel::Crate => 1,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 | Kernel::Avx512 => 8,
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => 4,
        }
    }

    /// Every kernel this CPU runs (the tests compare them).
    #[cfg(test)]
    pub(crate) fn available() -> Vec<Kernel> {
        #[allow(unused_mut)]
        let mut all = vec![Kernel::Crate];
        #[cfg(target_arch = "aarch64")]
        all.push(Kernel::Neon);
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
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => Some([16, 6]),
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
        // the output's groups of `pack` channels side by side: rows of `cout`
        let ops = Operands {
            group: 1,
            vrs,
            its: 1,
            ots: cout,
            ogs: self.kernel.pack(),
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

    /// The panels of output channels our kernel reads (none for the crate).
    pub(super) fn panels(&self) -> usize {
        self.kernel
            .blocking()
            .map_or(0, |[width, _]| self.cout.div_ceil(width))
    }

    /// The input channels (rows) the weights take.
    pub(super) fn cin(&self) -> usize {
        self.cin
    }

    /// The elempack of the blobs our kernel reads and writes (1 for the crate).
    pub(super) fn pack(&self) -> usize {
        self.kernel.pack()
    }

    /// `[output channels per panel, most tiles per block]` of our kernel; `None` for the
    /// crate.
    pub(super) fn blocking(&self) -> Option<[usize; 2]> {
        self.kernel.blocking()
    }

    /// Panel `p` of element `xi` by `n` tiles: the kernel's block over this panel's weights.
    ///
    /// # Safety
    /// As the kernel's `block` (`x86::block`, `neon::block`) for `v`, `bias` (null or the
    /// panel's `width` values) and `out`; `n` at most the kernel's block, `p` a panel of `xi`.
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
        let w = &self.data[(xi * self.panels() + p) * self.cin * width..][..self.cin * width];
        let valid = width.min(self.cout - p * width);
        let operands = [w.as_ptr(), v, bias, out.cast_const()];
        // SAFETY: the panel holds cin · width values (sliced above); the rest the caller's
        match self.kernel {
            Kernel::Crate => unreachable!("the crate has no blocks"),
            #[cfg(target_arch = "x86_64")]
            kernel => unsafe { x86::block(kernel, n, operands, self.cin, ops, valid) },
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => unsafe { neon::block(n, operands, self.cin, ops, valid) },
        }
    }

    /// Panel `p` of element `xi`'s output channels (whole packs of the kernel's
    /// [`Kernel::pack`]; a pointwise layer's one element is 0) for output positions `t0..t1`, from the bias (`cout` values, or empty), into packed `out` (groups
    /// `ogs` values apart) from `v` read as `walk` says: a packed blob (`group` the pack, its
    /// groups `vrs` apart; a pointwise layer) or rows of one input each (`group` 1, `vrs`
    /// apart; im2col's columns). `cout` and a packed `cin` are whole packs; this is our kernel.
    pub(super) fn packed_panel(
        &self,
        [xi, p]: [usize; 2],
        (v, vrs, group): (&[f32], usize, usize),
        [t0, t1]: [usize; 2],
        bias: &[f32],
        (out, ogs): (Shared, usize),
        walk: Walk,
    ) {
        let Some([width, most]) = self.kernel.blocking() else {
            unreachable!("packed pointwise runs on our kernel only")
        };
        let pack = self.kernel.pack();
        assert!(
            (group == 1 || group == pack)
                && self.cin.is_multiple_of(group)
                && self.cout.is_multiple_of(pack)
                && p * width < self.cout
                && t1 >= t0,
            "packed pointwise panel"
        );
        let valid = width.min(self.cout - p * width);
        let last = (p * width + valid) / pack - 1;
        assert!(out.len >= last * ogs + t1 * pack, "packed pointwise output");
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
                group,
                vrs,
                its: group * sw,
                ots: pack,
                ogs,
            };
            assert!(
                v.len() >= (self.cin / group - 1) * vrs + (first + (end - t - 1) * sw + 1) * group,
                "packed pointwise input"
            );
            for [i, n] in blocks(end - t, most) {
                // SAFETY: the input's groups 0..cin/group at the block's positions and the
                // output's groups of this panel at t + i..t + i + n ≤ t1 lie inside (asserted
                // above); tasks write disjoint panels or positions
                unsafe {
                    self.block(
                        xi,
                        p,
                        n,
                        [v.as_ptr().add((first + i * sw) * group), b.as_ptr()],
                        out.ptr.add(p * width / pack * ogs + (t + i) * pack),
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

impl Walk {
    /// `n` positions read in order, each its own input (one row of `n`).
    pub(super) fn along(n: usize) -> Walk {
        Walk {
            ow: n,
            w: n,
            stride: [1, 1],
        }
    }
}

/// How one block's operands lie: the right-hand side's value `(ci, t)` at
/// `(ci / group) · vrs + t · its + ci % group` (`group` 1: one row per input channel; the
/// kernel's pack: a packed blob, whose positions are `its` = pack · stride apart), the output
/// `(t, oc)` at `t · ots + (oc / pack) · ogs + oc % pack` (`pack` the kernel's: 8 on x86, 4 on
/// NEON).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::shared::cpu_gemm::test_values;

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
