//! CPU inner loops written for the compiler to vectorize, compiled for AVX2 (and AVX-512 for
//! the element-wise maps, whose `exp` is most of a Swish net's time) on x86-64 and NEON on
//! aarch64 next to the baseline and picked at run time (`multiversion`): a portable build
//! targets SSE2 only, where ncnn dispatches to AVX2 itself. Callers split work across threads;
//! these run one chunk.

use multiversion::multiversion;

const LOG2E: f32 = std::f32::consts::LOG2_E;
/// ln 2 in two parts, so that `x - n ln2` loses no bits for the n that fp32 exp meets.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// 1.5·2^23: adding it rounds an |x| < 2^22 to an integer, ties to even, held in the low bits.
const ROUND_MAGIC: f32 = 12_582_912.0;

/// e^x, branch-free so that loops over it vectorize (libm's `expf` is one call per value):
/// x = n·ln2 + r with |r| ≤ ln2/2, e^r by its Taylor series to r^6 (relative error below
/// 2e-7), 2^n through the exponent bits. Inputs are clamped to [-87, 88], where e^x stays a
/// normal number; NaN stays NaN. Written in fused multiply-adds, which the compiler does not
/// form from `a * b + c` on its own (Swish's 20 layers of 56²·144, one thread: 7.8 → 4.5 ms on
/// this project's 2-core AVX2 machine): call it from the multiversioned loops of this module,
/// compiled with FMA, since code compiled without it makes each `mul_add` a library call.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    // n = round(x log2 e) ties to even, and n itself in the low mantissa bits, by adding
    // 1.5·2^23: float-to-int `as` saturates lane by lane and would keep this loop scalar
    let shifted = x.mul_add(LOG2E, ROUND_MAGIC);
    let n = shifted - ROUND_MAGIC;
    let r = (-n).mul_add(LN2_LO, (-n).mul_add(LN2_HI, x));
    let p = [1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0]
        .iter()
        .fold(1.0 / 720.0, |acc: f32, c| acc.mul_add(r, *c));
    let n_bits = shifted.to_bits().wrapping_sub(ROUND_MAGIC.to_bits());
    f32::from_bits(n_bits.wrapping_add(127) << 23) * p
}

/// √½: the mantissa range [√½, √2) keeps ln's polynomial argument within ±0.29.
const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// ln x for positive normal `x`, branch-free so that loops over it vectorize: x = m·2^e with
/// m in [√½, √2), ln(1 + f) for f = m − 1 by Cephes' minimax polynomial (relative error
/// below 3e-7), e·ln 2 in two parts, in fused multiply-adds as [`exp`]. Zero, negative,
/// subnormal, infinite and NaN inputs give meaningless values: callers check their range first.
#[inline(always)]
pub fn ln(x: f32) -> f32 {
    let bits = x.to_bits();
    // m in [0.5, 1) and the matching exponent
    let m = f32::from_bits((bits & 0x007f_ffff) | 0x3f00_0000);
    let e = ((bits >> 23) & 0xff) as i32 - 126;
    let low = m < SQRT_HALF;
    let e = (e - i32::from(low)) as f32;
    let f = if low { m + m - 1.0 } else { m - 1.0 };
    let z = f * f;
    let p = [
        -1.151_461e-1,
        1.167_699_9e-1,
        -1.242_014_1e-1,
        1.424_932_3e-1,
        -1.666_805_8e-1,
        2.000_071_4e-1,
        -2.499_999_4e-1,
        3.333_333e-1,
    ]
    .iter()
    .fold(7.037_683_6e-2, |acc: f32, c| acc.mul_add(f, *c))
        * f
        * z;
    let y = e.mul_add(LN2_LO, p) - 0.5 * z;
    e.mul_add(LN2_HI, f + y)
}

/// `1 / (1 + e^-x)`.
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + exp(-x))
}

/// erf(x) without branches, so that a loop over it vectorizes (libm's `erff` is a call per
/// value): Abramowitz and Stegun 7.1.26, `1 − (a₁t + … + a₅t⁵)·e^(−x²)` with `t = 1/(1 +
/// p|x|)`, its sign from `x`; absolute error at most 1.5e-7 (plus [`exp`]'s 2e-7 relative).
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / a.mul_add(0.327_591_1, 1.0);
    let poly = [-1.453_152, 1.421_413_8, -0.284_496_72, 0.254_829_6]
        .iter()
        .fold(1.061_405_4, |acc: f32, c| acc.mul_add(t, *c))
        * t;
    (-poly).mul_add(exp(-a * a), 1.0).copysign(x)
}

/// tanh(x) without branches (through [`exp`]): `1 − 2/(e^(2x) + 1)`, which saturates to ±1
/// where e^(2x) over- or underflows.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    1.0 - 2.0 / (exp(2.0 * x) + 1.0)
}

/// The sum of `f` over `v`.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
pub fn sum_of<F: Fn(f32) -> f32>(v: &[f32], f: F) -> f32 {
    v.iter().fold(0.0, |a, x| a + f(*x))
}

/// Applies `f` to every value of `v` (see [`leaky`](crate::layer::activation::fused::leaky) for
/// closures that leave some values unchanged).
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
pub fn map<F: Fn(f32) -> f32>(v: &mut [f32], f: F) {
    for x in v.iter_mut() {
        *x = f(*x);
    }
}

/// `acc[i] = f(acc[i], b[i])` over the common length.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
pub fn zip_with<F: Fn(f32, f32) -> f32>(acc: &mut [f32], b: &[f32], f: F) {
    for (x, y) in acc.iter_mut().zip(b) {
        *x = f(*x, *y);
    }
}

/// `out[i] = f(a[i], b[i])` over the common length: a binary operation into a fresh output,
/// one pass, where copying `a` first and combining in place takes two.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
pub fn zip_into<F: Fn(f32, f32) -> f32>(out: &mut [f32], a: &[f32], b: &[f32], f: F) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = f(*x, *y);
    }
}

/// Whether the CPU has 256-bit SIMD (AVX): where the net gives pack8 fp32 blobs to CPU layers
/// that take packing (`net::convert::cpu_elempack`), pack4 elsewhere.
pub fn has_256bit_simd() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the CPU converts fp16 to fp32 in hardware (x86's F16C, every aarch64): where
/// ncnn's `use_fp16_storage` keeps weights as fp16 on the CPU, halving what a memory-bound
/// layer reads.
pub fn has_fp16_conversion() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("f16c")
    }
    #[cfg(target_arch = "aarch64")]
    {
        true
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// The dot product of fp16 `a` and fp32 `b` (their common length). On x86 with F16C, eight
/// weights widened per instruction inside the FMA loop; elsewhere `a` is widened a block at a
/// time into a buffer that stays in L1 (the `half` crate's conversion), then [`dot`].
pub fn dot_f16(a: &[half::f16], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("f16c")
    {
        // SAFETY: the features it is compiled for were just detected, and it reads only
        // within the slices (equal lengths).
        return unsafe { dot_f16_f16c(a, b) };
    }
    use half::slice::HalfFloatSliceExt;
    const BLOCK: usize = 256;
    let mut wide = [0.0f32; BLOCK];
    a.chunks(BLOCK)
        .zip(b.chunks(BLOCK))
        .map(|(a, b)| {
            let wide = &mut wide[..a.len()];
            a.convert_to_f32_slice(wide);
            dot(wide, b)
        })
        .sum()
}

/// [`dot_f16`] with F16C conversions and four FMA accumulators of eight lanes.
///
/// # Safety
/// The CPU must have AVX2, FMA and F16C, and `a` and `b` must have the same length.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn dot_f16_f16c(a: &[half::f16], b: &[f32]) -> f32 {
    use std::arch::x86_64::*;
    const STEP: usize = 32;
    let n = a.len();
    let whole = n - n % STEP;
    let mut acc = [_mm256_setzero_ps(); 4];
    for i in (0..whole).step_by(STEP) {
        for (k, acc) in acc.iter_mut().enumerate() {
            let at = i + 8 * k;
            // SAFETY: at + 8 <= whole <= n for both slices
            let (w, x) = unsafe {
                (
                    _mm256_cvtph_ps(_mm_loadu_si128(a.as_ptr().add(at).cast::<__m128i>())),
                    _mm256_loadu_ps(b.as_ptr().add(at)),
                )
            };
            *acc = _mm256_fmadd_ps(w, x, *acc);
        }
    }
    let sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
    let mut lanes = [0.0f32; 8];
    // SAFETY: lanes holds eight values
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), sum) };
    let tail: f32 = a[whole..]
        .iter()
        .zip(&b[whole..])
        .map(|(w, x)| w.to_f32() * x)
        .sum();
    lanes.iter().sum::<f32>() + tail
}

/// The dot product of `a` and `b` (their common length), in 16 running sums so that the
/// loop vectorizes without reassociating one sum.
#[multiversion(targets("x86_64+avx2+fma", "aarch64+neon"))]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut tail = 0.0;
    for (x, y) in ra.iter().zip(rb) {
        tail += x * y;
    }
    acc.iter().sum::<f32>() + tail
}

/// The maximum of `v` (−∞ when empty), in 16 running maxima.
#[multiversion(targets("x86_64+avx2+fma", "aarch64+neon"))]
pub fn max(v: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; 16];
    let chunks = v.chunks_exact(16);
    let tail = chunks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |m, x| m.max(*x));
    for c in chunks {
        for i in 0..16 {
            acc[i] = acc[i].max(c[i]);
        }
    }
    acc.iter().fold(tail, |m, x| m.max(*x))
}

/// The sum of `v`, in 16 running sums.
#[multiversion(targets("x86_64+avx2+fma", "aarch64+neon"))]
pub fn sum(v: &[f32]) -> f32 {
    let mut acc = [0.0f32; 16];
    let chunks = v.chunks_exact(16);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for i in 0..16 {
            acc[i] += c[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Splits `row` into its `s` phases (every `s`-th value from offsets 0..s), phase `p` written
/// at `at(p)` in `dst`, `width` (`⌈len / s⌉`) values each; a short phase leaves its last value
/// as it was. Strided windows (pooling, depthwise convolution) then read contiguous runs.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
pub fn split_phases<F: Fn(usize) -> usize>(
    row: &[f32],
    s: usize,
    at: F,
    width: usize,
    dst: &mut [f32],
) {
    match s {
        // the common cases, as groups (which vectorize as shuffles)
        2 => return split_fixed::<2>(row, at, dst),
        4 => return split_fixed::<4>(row, at, dst),
        _ => {}
    }
    for p in 0..s {
        let at = at(p);
        let end = (at + width).min(dst.len());
        for (d, v) in dst[at..end].iter_mut().zip(row.iter().skip(p).step_by(s)) {
            *d = *v;
        }
    }
}

/// [`split_phases`] for a stride known at compile time: phase by phase over whole groups of
/// `S` (a contiguous write from a fixed-stride read, which vectorizes), then the tail.
#[inline(always)]
fn split_fixed<const S: usize>(row: &[f32], at: impl Fn(usize) -> usize, dst: &mut [f32]) {
    let (n, tail) = (row.len() / S, &row[row.len() / S * S..]);
    for p in 0..S {
        let start = at(p);
        let phase = &mut dst[start..start + n + usize::from(p < tail.len())];
        for (d, group) in phase.iter_mut().zip(row.chunks_exact(S)) {
            *d = group[p];
        }
        if let Some(v) = tail.get(p) {
            phase[n] = *v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_and_tanh_follow_libm() {
        for i in -2000..=2000 {
            let x = i as f32 * 0.005;
            let (e, want) = (erf(x), libm::erff(x));
            assert!((e - want).abs() <= 5e-7, "erf({x}) = {e}, libm {want}");
            let (t, want) = (tanh(x), x.tanh());
            assert!((t - want).abs() <= 1e-6, "tanh({x}) = {t}, std {want}");
        }
        for x in [-100.0f32, -20.0, 20.0, 100.0] {
            assert_eq!(erf(x), x.signum());
            assert_eq!(tanh(x), x.signum());
        }
        assert!(erf(f32::NAN).is_nan() && tanh(f32::NAN).is_nan());
    }

    #[test]
    fn phases_hold_every_strided_value() {
        for s in 1..=5 {
            for len in 0..19usize {
                let row: Vec<f32> = (0..len).map(|i| i as f32).collect();
                let width = len.div_ceil(s);
                let mut dst = vec![-1.0f32; s * width];
                split_phases(&row, s, |p| p * width, width, &mut dst);
                for p in 0..s {
                    for i in 0..width {
                        let want = if p + i * s < len {
                            (p + i * s) as f32
                        } else {
                            -1.0
                        };
                        assert_eq!(dst[p * width + i], want, "s {s} len {len} phase {p} at {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn exp_is_within_fp32_rounding_of_libm() {
        let (mut worst, mut at) = (0.0f32, 0.0f32);
        for i in -86_990..87_990 {
            let x = i as f32 * 1e-3;
            let (got, want) = (exp(x), x.exp());
            let e = (got - want).abs() / want;
            if e > worst {
                worst = e;
                at = x;
            }
        }
        assert!(worst < 5e-7, "relative error {worst} at {at}");
        assert!(exp(f32::NAN).is_nan());
        assert_eq!(exp(-1000.0), exp(-87.0));
        assert_eq!(exp(1000.0), exp(88.0));
    }

    #[test]
    fn ln_is_within_fp32_rounding_of_libm() {
        let (mut worst, mut at) = (0.0f32, 0.0f32);
        let mut x = f32::MIN_POSITIVE;
        while x < f32::MAX / 1.01 {
            let (got, want) = (ln(x), x.ln());
            let e = (got - want).abs() / want.abs().max(1e-3);
            if e > worst {
                worst = e;
                at = x;
            }
            x *= 1.000_37;
        }
        assert!(worst < 5e-7, "relative error {worst} at {at}");
    }

    #[test]
    fn dot_f16_widens_every_weight() {
        let a: Vec<half::f16> = (0..600)
            .map(|i| half::f16::from_f32(i as f32 * 0.5))
            .collect();
        let b = vec![2.0f32; 600];
        let want: f32 = (0..600).map(|i| i as f32).sum();
        assert_eq!(dot_f16(&a, &b), want);
    }

    #[test]
    fn dot_sums_every_value() {
        let a: Vec<f32> = (0..37).map(|i| i as f32).collect();
        let b = vec![2.0f32; 37];
        assert_eq!(dot(&a, &b), (0..37).map(|i| 2.0 * i as f32).sum::<f32>());
    }
}
