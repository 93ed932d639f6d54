//! The CPU GEMM the matrix layers share (convolution, deconvolution, InnerProduct): the `gemm`
//! crate's f32 kernels (AVX2/FMA, AVX-512 or NEON, picked at run time), threaded on the rayon
//! pool the net runs the layer in, one rectangle of the output per thread.

use gemm::Parallelism;

/// A matrix view over a slice: `rows × cols` values, value `(i, j)` at `i * rs + j * cs`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MatRef<'a> {
    pub data: &'a [f32],
    pub rows: usize,
    pub cols: usize,
    /// Row stride.
    pub rs: usize,
    /// Column stride.
    pub cs: usize,
}

impl<'a> MatRef<'a> {
    /// A row-major view: rows `stride` values apart.
    pub fn rows(data: &'a [f32], rows: usize, cols: usize, stride: usize) -> Self {
        MatRef {
            data,
            rows,
            cols,
            rs: stride,
            cs: 1,
        }
    }

    /// Its values, row after row.
    pub fn to_dense(self) -> Vec<f32> {
        (0..self.rows)
            .flat_map(|i| (0..self.cols).map(move |j| self.data[i * self.rs + j * self.cs]))
            .collect()
    }

    /// The transpose (no copy).
    pub fn t(self) -> Self {
        MatRef {
            rows: self.cols,
            cols: self.rows,
            rs: self.cs,
            cs: self.rs,
            ..self
        }
    }
}

/// A mutable matrix view over a slice, strided as [`MatRef`].
#[derive(Debug)]
pub(crate) struct MatMut<'a> {
    pub data: &'a mut [f32],
    pub rows: usize,
    pub cols: usize,
    /// Row stride.
    pub rs: usize,
    /// Column stride.
    pub cs: usize,
}

impl<'a> MatMut<'a> {
    /// A row-major view: rows `stride` values apart.
    pub fn rows(data: &'a mut [f32], rows: usize, cols: usize, stride: usize) -> Self {
        MatMut {
            data,
            rows,
            cols,
            rs: stride,
            cs: 1,
        }
    }
}

/// The highest index a `rows × cols` view with strides `rs`, `cs` touches, plus one.
fn extent(rows: usize, cols: usize, rs: usize, cs: usize) -> usize {
    if rows == 0 || cols == 0 {
        0
    } else {
        (rows - 1) * rs + (cols - 1) * cs + 1
    }
}

/// `c = a × b`, or `c += a × b` with `accumulate`, on as many of the pool's threads as its
/// size warrants ([`gemm_threads`](crate::layer::shared::grain::gemm_threads)).
///
/// Panics if the shapes disagree or a view runs past its slice: callers derive every extent
/// from shapes they checked, so a mismatch is a bug, and the kernels read raw pointers.
pub(crate) fn gemm(a: MatRef<'_>, b: MatRef<'_>, c: MatMut<'_>, accumulate: bool) {
    let macs = a.rows * a.cols * b.cols;
    gemm_with(
        a,
        b,
        c,
        accumulate,
        crate::layer::shared::grain::gemm_threads(macs),
        None,
    );
}

/// What a GEMM applies to each part of an output row once the product is in it: `(row, values)`
/// while they are still in the thread's cache (a layer's bias and activation), instead of a
/// pass of its own over the whole output afterwards.
pub(crate) type RowEpilogue<'a> = &'a (dyn Fn(usize, &mut [f32]) + Sync);

/// [`gemm`], then `epilogue` over every row of `c` (whose rows must be contiguous, `cs == 1`),
/// each rectangle's rows by the thread that computed them.
pub(crate) fn gemm_then(
    a: MatRef<'_>,
    b: MatRef<'_>,
    c: MatMut<'_>,
    accumulate: bool,
    epilogue: RowEpilogue<'_>,
) {
    assert_eq!(c.cs, 1, "a GEMM epilogue takes contiguous output rows");
    let macs = a.rows * a.cols * b.cols;
    let threads = crate::layer::shared::grain::gemm_threads(macs);
    gemm_with(a, b, c, accumulate, threads, Some(epilogue));
}

/// [`gemm`] on the calling thread alone: for callers that already run many GEMMs in parallel,
/// where splitting each one again only adds scheduling.
pub(crate) fn gemm_serial(a: MatRef<'_>, b: MatRef<'_>, c: MatMut<'_>, accumulate: bool) {
    gemm_with(a, b, c, accumulate, 1, None);
}

/// How a GEMM's output is cut for `threads` threads: `[row blocks, column blocks]` and the
/// block sizes `[rows, columns]`. One rectangle per thread, each a single-threaded product
/// (a static split, as ncnn's OpenMP loops make): the `gemm` crate's own rayon split left
/// 16 threads waiting on each other on the convolutions' shapes (1×1 at 14×14, 1024 → 256:
/// 287 GFLOP/s against 716 split this way; `bench/cpu_gemm.rs` on a 16-core host). Of the
/// exact factorizations of `threads`, the one whose largest rectangle costs least: its
/// multiply-adds per inner index plus what packing its operands' panels costs (rows and
/// columns, weighted as a few multiply-adds each), so squarish rectangles on square products
/// and whole-height ones on a thin left-hand side.
fn split(m: usize, n: usize, threads: usize) -> ([usize; 2], [usize; 2]) {
    const PACK_COST: usize = 8;
    (1..=threads)
        .filter(|pm| threads.is_multiple_of(*pm))
        .map(|pm| {
            let pn = threads / pm;
            // rows in whole register blocks of 16, columns in 8s
            let mb = m.div_ceil(pm).next_multiple_of(16).min(m);
            let nb = n.div_ceil(pn).next_multiple_of(8).min(n);
            ([m.div_ceil(mb), n.div_ceil(nb)], [mb, nb])
        })
        .min_by_key(|(_, [mb, nb])| mb * nb + PACK_COST * (mb + nb))
        .unwrap_or(([1, 1], [m, n]))
}

/// A raw operand pointer the rectangles of one product share.
#[derive(Clone, Copy)]
struct Ptr<T>(T);
// SAFETY: the rectangles read the shared operands and write disjoint parts of the output
unsafe impl<T> Send for Ptr<T> {}
unsafe impl<T> Sync for Ptr<T> {}

fn gemm_with(
    a: MatRef<'_>,
    b: MatRef<'_>,
    c: MatMut<'_>,
    accumulate: bool,
    threads: usize,
    epilogue: Option<RowEpilogue<'_>>,
) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    assert_eq!(b.rows, k, "GEMM inner dimensions");
    assert_eq!([c.rows, c.cols], [m, n], "GEMM output shape");
    assert!(extent(m, k, a.rs, a.cs) <= a.data.len(), "GEMM lhs extent");
    assert!(extent(k, n, b.rs, b.cs) <= b.data.len(), "GEMM rhs extent");
    assert!(
        extent(m, n, c.rs, c.cs) <= c.data.len(),
        "GEMM output extent"
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            for i in 0..m {
                for j in 0..n {
                    c.data[i * c.rs + j * c.cs] = 0.0;
                }
            }
        }
        if let Some(f) = epilogue {
            for i in 0..m {
                f(i, &mut c.data[i * c.rs..i * c.rs + n]);
            }
        }
        return;
    }
    let ([pm, pn], [mb, nb]) = split(m, n, threads);
    let (ap, bp, cp) = (
        Ptr(a.data.as_ptr()),
        Ptr(b.data.as_ptr()),
        Ptr(c.data.as_mut_ptr()),
    );
    let block = |t: usize| {
        let (ap, bp, cp) = (ap, bp, cp);
        let (i0, j0) = ((t / pn) * mb, (t % pn) * nb);
        let (mi, nj) = (mb.min(m - i0), nb.min(n - j0));
        // SAFETY: the asserts above keep every index of the whole product, (i·rs + j·cs) for
        // i, j within the shapes, inside its slice, so each rectangle's are too; the
        // rectangles of the output are disjoint (`c` is borrowed mutably), the inputs shared.
        unsafe {
            gemm::gemm(
                mi,
                nj,
                k,
                cp.0.add(i0 * c.rs + j0 * c.cs),
                c.cs as isize,
                c.rs as isize,
                accumulate,
                ap.0.add(i0 * a.rs),
                a.cs as isize,
                a.rs as isize,
                bp.0.add(j0 * b.cs),
                b.cs as isize,
                b.rs as isize,
                1.0,
                1.0,
                false,
                false,
                false,
                Parallelism::None,
            );
        }
        if let Some(f) = epilogue {
            for i in i0..i0 + mi {
                // SAFETY: row i's columns j0..j0 + nj (cs == 1, checked by `gemm_then`) lie
                // inside the output as above and belong to this rectangle alone
                let row = unsafe { std::slice::from_raw_parts_mut(cp.0.add(i * c.rs + j0), nj) };
                f(i, row);
            }
        }
    };
    if pm * pn == 1 {
        block(0);
    } else {
        use rayon::prelude::*;
        (0..pm * pn).into_par_iter().for_each(block);
    }
}

/// `n` values in [-1, 1) that differ with `seed`: test operands with no structure a wrong
/// index could hide behind.
#[cfg(test)]
pub(crate) fn test_values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| (((i as u32).wrapping_mul(2_654_435_761) ^ seed) % 1000) as f32 / 500.0 - 1.0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: MatRef<'_>, b: MatRef<'_>) -> Vec<f32> {
        let mut c = vec![0.0; a.rows * b.cols];
        for i in 0..a.rows {
            for j in 0..b.cols {
                c[i * b.cols + j] = (0..a.cols)
                    .map(|p| a.data[i * a.rs + p * a.cs] * b.data[p * b.rs + j * b.cs])
                    .sum();
            }
        }
        c
    }

    #[test]
    fn strided_and_transposed_views_multiply_as_a_loop_does() {
        for (m, k, n) in [(1, 1, 1), (7, 13, 5), (33, 70, 129), (64, 3, 1)] {
            // a with padded rows, b stored transposed
            let a = test_values(m * (k + 3), 1);
            let bt = test_values(n * k, 2);
            let (av, bv) = (
                MatRef::rows(&a, m, k, k + 3),
                MatRef::rows(&bt, n, k, k).t(),
            );
            let want = naive(av, bv);
            for accumulate in [false, true] {
                let mut c = vec![1.0; m * (n + 1)];
                gemm(av, bv, MatMut::rows(&mut c, m, n, n + 1), accumulate);
                for i in 0..m {
                    for j in 0..n {
                        let w = want[i * n + j] + if accumulate { 1.0 } else { 0.0 };
                        let got = c[i * (n + 1) + j];
                        assert!((got - w).abs() <= 1e-4 * (1.0 + w.abs()), "{m}x{k}x{n}");
                    }
                    assert_eq!(c[i * (n + 1) + n], 1.0, "past the row");
                }
            }
        }
    }

    #[test]
    fn every_split_of_the_output_gives_the_same_product() {
        for (m, k, n) in [(70, 33, 301), (3, 5, 200), (129, 17, 9), (16, 8, 8)] {
            let (a, b) = (test_values(m * k, 3), test_values(k * n, 4));
            let (av, bv) = (MatRef::rows(&a, m, k, k), MatRef::rows(&b, k, n, n));
            let want = naive(av, bv);
            for threads in [1, 2, 3, 4, 6, 16] {
                // an output stored transposed, as Winograd's products are
                let mut c = vec![f32::NAN; m * n];
                let cv = MatMut {
                    data: &mut c,
                    rows: m,
                    cols: n,
                    rs: 1,
                    cs: m,
                };
                gemm_with(av, bv, cv, false, threads, None);
                for i in 0..m {
                    for j in 0..n {
                        let (got, w) = (c[j * m + i], want[i * n + j]);
                        assert!(
                            (got - w).abs() <= 1e-4 * (1.0 + w.abs()),
                            "{m}x{k}x{n} on {threads}: ({i}, {j}) {got} vs {w}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_split_fills_the_threads_with_squarish_rectangles() {
        // a square product in a 4 × 4 grid
        assert_eq!(split(1024, 1024, 16), ([4, 4], [256, 256]));
        // a thin left-hand side keeps whole rows
        assert_eq!(split(64, 3136, 16).0, [1, 16]);
        // few columns: cut along rows
        assert_eq!(split(2048, 49, 16).0, [16, 1]);
        // one thread: the whole product
        assert_eq!(split(100, 100, 1), ([1, 1], [100, 100]));
    }

    #[test]
    fn the_epilogue_sees_every_output_row_once_after_its_product() {
        let (m, k, n) = (37, 11, 150);
        let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 - 2.0).collect();
        let (av, bv) = (MatRef::rows(&a, m, k, k), MatRef::rows(&b, k, n, n));
        let want = naive(av, bv);
        for threads in [1, 4, 16] {
            let mut c = vec![f32::NAN; m * (n + 2)];
            // row i plus i, then doubled: wrong if a row is visited twice or before its product
            let epilogue = |i: usize, row: &mut [f32]| {
                row.iter_mut().for_each(|x| *x = (*x + i as f32) * 2.0);
            };
            let cv = MatMut::rows(&mut c, m, n, n + 2);
            gemm_with(av, bv, cv, false, threads, Some(&epilogue));
            for i in 0..m {
                for j in 0..n {
                    let w = (want[i * n + j] + i as f32) * 2.0;
                    assert_eq!(c[i * (n + 2) + j], w, "({i}, {j}) on {threads}");
                }
                assert!(c[i * (n + 2) + n].is_nan(), "past the row");
            }
        }
    }
}
