//! int8 × int8 products summed in int32, ncnn's int8 inference arithmetic: a weight matrix of
//! levels ([`Int8Rows`], laid out once at load) times a matrix of activation levels
//! ([`gemm`], the im2col columns of a convolution) or a vector ([`gemv`], an InnerProduct's
//! input). Integer sums are exact at any length, where fp32 over levels stops being exact past
//! 2^24 (a 25088-input layer at full scale reaches 4·10^8).
//!
//! One strategy per instruction set ([`Int8Kernel`], chosen at run time): AVX-512 VNNI's
//! `vpdpbusd` sums 64 products per instruction, Arm's `sdot` 16; elsewhere int32 loops the
//! compiler vectorizes (the matrix-vector product too on Arm).
//! `vpdpbusd` multiplies unsigned bytes by signed ones, so activations enter as `x + 128`
//! (`x ^ 0x80` as a byte) and each row's `128 · Σ w` comes off its sums after.

#[cfg(target_arch = "aarch64")]
mod neon;
mod scalar;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod vnni;

use std::sync::OnceLock;

use rayon::prelude::*;

use crate::layer::shared::grain::min_items;

/// Output columns per panel: one kernel call covers [`BLOCK`] rows × `PANEL` columns.
pub(crate) const PANEL: usize = 32;
/// Weight rows per block.
pub(crate) const BLOCK: usize = 8;

/// How the CPU multiplies int8 matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Int8Kernel {
    /// AVX-512 VNNI (`vpdpbusd`): 8 rows × 32 columns of int32 sums in 16 registers.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx512Vnni,
    /// Arm's dot products (`sdot` by element): 8 rows × 8 columns in 16 registers.
    #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
    NeonDot,
    /// int32 loops over the plain rows (any CPU).
    Scalar,
}

impl Int8Kernel {
    /// The fastest kernel this CPU runs (detected once).
    pub fn best() -> Int8Kernel {
        static BEST: OnceLock<Int8Kernel> = OnceLock::new();
        *BEST.get_or_init(|| {
            Int8Kernel::available()
                .into_iter()
                .next()
                .unwrap_or(Int8Kernel::Scalar)
        })
    }

    /// Every kernel this CPU runs, fastest first.
    pub fn available() -> Vec<Int8Kernel> {
        let mut v = Vec::new();
        #[cfg(target_arch = "x86_64")]
        if vnni::detected() {
            v.push(Int8Kernel::Avx512Vnni);
        }
        #[cfg(target_arch = "aarch64")]
        if neon::detected() {
            v.push(Int8Kernel::NeonDot);
        }
        v.push(Int8Kernel::Scalar);
        v
    }
}

/// A weight matrix's int8 levels (`rows × k`), as stored and laid out for the kernels.
#[derive(Clone, Debug, Default)]
pub(crate) struct Int8Rows {
    pub(crate) rows: usize,
    pub(crate) k: usize,
    /// The rows as stored (the scalar kernel's).
    levels: Vec<i8>,
    /// Blocks of [`BLOCK`] rows (the last padded with zero rows): for each group of four `k`
    /// (`k4`, padded with zeros to an even count), the block's rows' four levels as one word.
    packed: Vec<i32>,
    /// Each row's sum of levels (VNNI's offset taken back).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    sums: Vec<i32>,
}

impl Int8Rows {
    /// The rows of `levels` (whole numbers in ±127, `rows × k` of them).
    pub(crate) fn new(levels: &[f32], rows: usize, k: usize) -> Int8Rows {
        let levels: Vec<i8> = levels[..rows * k].iter().map(|&v| v as i8).collect();
        let k4 = k4_of(k);
        let blocks = rows.div_ceil(BLOCK);
        let mut packed = vec![0i32; blocks * k4 * BLOCK];
        for (r, row) in levels.chunks(k.max(1)).enumerate().take(rows) {
            let (block, lane) = (r / BLOCK, r % BLOCK);
            for (t, four) in row.chunks(4).enumerate() {
                let mut word = [0u8; 4];
                for (b, &v) in word.iter_mut().zip(four) {
                    *b = v as u8;
                }
                packed[(block * k4 + t) * BLOCK + lane] = i32::from_le_bytes(word);
            }
        }
        let sums = (levels.chunks(k.max(1)).take(rows))
            .map(|row| row.iter().map(|&v| v as i32).sum())
            .collect();
        Int8Rows {
            rows,
            k,
            levels,
            packed,
            sums,
        }
    }

    /// The rows as stored, `k` levels each.
    pub(crate) fn levels(&self) -> &[i8] {
        &self.levels
    }

    /// Block `b`'s packed words.
    fn block(&self, b: usize) -> &[i32] {
        let len = k4_of(self.k) * BLOCK;
        &self.packed[b * len..(b + 1) * len]
    }

    /// Block `b`'s rows' sums, zeros past the last row.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn block_sums(&self, b: usize) -> [i32; BLOCK] {
        let mut s = [0; BLOCK];
        for (i, v) in s.iter_mut().enumerate() {
            *v = self.sums.get(b * BLOCK + i).copied().unwrap_or(0);
        }
        s
    }
}

/// Groups of four `k`, padded to an even count (the matrix-vector kernel takes two at a time).
fn k4_of(k: usize) -> usize {
    k.div_ceil(8) * 2
}

/// A product `rows × n` of int32 sums, by panels of [`PANEL`] columns: panel `p`'s rows
/// (padded to whole blocks) of `PANEL` sums each.
pub(crate) struct Int8Product {
    rows: usize,
    n: usize,
    data: Vec<i32>,
}

impl Int8Product {
    /// Row `r`'s sums, as fp32 (ncnn's conversion before its scales), into `out` (`n` long).
    pub(crate) fn row_into(&self, r: usize, out: &mut [f32]) {
        let stride = self.rows.div_ceil(BLOCK) * BLOCK * PANEL;
        for (p, dst) in out[..self.n].chunks_mut(PANEL).enumerate() {
            let src = &self.data[p * stride + r * PANEL..][..dst.len()];
            dst.iter_mut().zip(src).for_each(|(d, &s)| *d = s as f32);
        }
    }
}

/// `a` times the `k × n` levels `b` (rows `ldb` apart).
pub(crate) fn gemm(
    kernel: Int8Kernel,
    a: &Int8Rows,
    b: &[i8],
    ldb: usize,
    n: usize,
) -> Int8Product {
    let blocks = a.rows.div_ceil(BLOCK);
    let panels = n.div_ceil(PANEL);
    let mut data = vec![0i32; panels * blocks * BLOCK * PANEL];
    #[cfg(target_arch = "x86_64")]
    let packed = (kernel == Int8Kernel::Avx512Vnni && vnni::detected())
        .then(|| vnni::pack_panels(a.k, (b, ldb), n));
    #[cfg(target_arch = "aarch64")]
    let packed = (kernel == Int8Kernel::NeonDot && neon::detected())
        .then(|| neon::pack_panels(a.k, (b, ldb), n));
    // every (panel, block of rows) its own task, a panel's blocks next to each other: a
    // late layer's few columns still spread over every thread, as an early one's many
    let work = a.k * BLOCK * PANEL;
    data.par_chunks_mut(BLOCK * PANEL)
        .with_min_len(min_items(work))
        .enumerate()
        .for_each(|(i, out)| {
            let (p, block) = (i / blocks, i % blocks);
            let (n0, cols) = (p * PANEL, (n - p * PANEL).min(PANEL));
            #[cfg(target_arch = "x86_64")]
            if let Some(packed) = &packed {
                let len = packed.len() / panels;
                let panel = &packed[p * len..(p + 1) * len];
                // SAFETY: `detected()` held for the panels to be packed
                return unsafe {
                    vnni::block_8x32(a.block(block), panel, a.block_sums(block), out)
                };
            }
            #[cfg(target_arch = "aarch64")]
            if let Some(packed) = &packed {
                let len = packed.len() / panels;
                let panel = &packed[p * len..(p + 1) * len];
                // SAFETY: `detected()` held for the panels to be packed
                return unsafe { neon::block_8x32(a.block(block), panel, out) };
            }
            scalar::block(a, block, (b, ldb), (n0, cols), out);
        });
    Int8Product {
        rows: a.rows,
        n,
        data,
    }
}

/// The `k × n` levels `b` (rows `ldb` apart) as the vector kernels read them, a panel of
/// [`PANEL`] columns after another: for each four k, the columns' four bytes together, each
/// XOR `offset` (VNNI's 0x80 makes them unsigned, `x + 128`; padding is the offset itself, an
/// activation 0, against zero weights); `four_rows` lays out a whole group of four rows where
/// the kernel has a faster way than the byte loop.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code)
)]
fn pack_panels(
    k: usize,
    (b, ldb): (&[i8], usize),
    n: usize,
    offset: u8,
    four_rows: Option<&FourRows>,
) -> Vec<u8> {
    let len = k4_of(k) * 4 * PANEL;
    // zeroed lazily by the allocator, the offset written by each panel's task: the fill on
    // every thread, not one
    let mut packed = vec![0u8; n.div_ceil(PANEL) * len];
    packed
        .par_chunks_mut(len.max(1))
        .enumerate()
        .for_each(|(p, panel)| {
            panel.fill(offset);
            let (n0, cols) = (p * PANEL, (n - p * PANEL).min(PANEL));
            for (t, dst) in panel.chunks_mut(4 * PANEL).enumerate() {
                let k0 = 4 * t;
                if let Some(four_rows) = four_rows.filter(|_| k0 + 4 <= k && cols == PANEL) {
                    four_rows(
                        [0, 1, 2, 3].map(|i| &b[(k0 + i) * ldb + n0..][..PANEL]),
                        dst,
                    );
                    continue;
                }
                for kk in 0..4.min(k.saturating_sub(k0)) {
                    let src = &b[(k0 + kk) * ldb + n0..][..cols];
                    for (j, &x) in src.iter().enumerate() {
                        dst[j * 4 + kk] = x as u8 ^ offset;
                    }
                }
            }
        });
    packed
}

/// A kernel's own layout of four rows of [`PANEL`] levels into a packed group.
type FourRows = dyn Fn([&[i8]; 4], &mut [u8]) + Sync;

/// `a` times the `k` levels `x`: each row's sum, into `y` (`rows` long).
pub(crate) fn gemv(kernel: Int8Kernel, a: &Int8Rows, x: &[i8], y: &mut [i32]) {
    y[..a.rows]
        .par_chunks_mut(BLOCK)
        .enumerate()
        .for_each(|(block, y)| match kernel {
            #[cfg(target_arch = "x86_64")]
            Int8Kernel::Avx512Vnni if vnni::detected() => vnni::dot_block(a, block, x, y),
            _ => scalar::dot_block(a, block, x, y),
        });
}
