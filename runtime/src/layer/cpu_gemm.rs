//! The CPU GEMM the matrix layers share (convolution, deconvolution, InnerProduct): the `gemm`
//! crate's f32 kernels (AVX2/FMA, AVX-512 or NEON, picked at run time), threaded on the rayon
//! pool the net runs the layer in.

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
/// size warrants ([`gemm_threads`](crate::layer::grain::gemm_threads)).
///
/// Panics if the shapes disagree or a view runs past its slice: callers derive every extent
/// from shapes they checked, so a mismatch is a bug, and the kernels read raw pointers.
pub(crate) fn gemm(a: MatRef<'_>, b: MatRef<'_>, c: MatMut<'_>, accumulate: bool) {
    let macs = a.rows * a.cols * b.cols;
    let parallelism = match crate::layer::grain::gemm_threads(macs) {
        1 => Parallelism::None,
        n => Parallelism::Rayon(n),
    };
    gemm_with(a, b, c, accumulate, parallelism);
}

/// [`gemm`] on the calling thread alone: for callers that already run many GEMMs in parallel,
/// where splitting each one again only adds scheduling.
pub(crate) fn gemm_serial(a: MatRef<'_>, b: MatRef<'_>, c: MatMut<'_>, accumulate: bool) {
    gemm_with(a, b, c, accumulate, Parallelism::None);
}

fn gemm_with(
    a: MatRef<'_>,
    b: MatRef<'_>,
    c: MatMut<'_>,
    accumulate: bool,
    parallelism: Parallelism,
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
        return;
    }
    // SAFETY: the asserts above keep every index the kernel forms, (i·rs + j·cs) for i, j
    // within the shapes, inside its slice; `c` is borrowed mutably, the inputs shared.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.data.as_mut_ptr(),
            c.cs as isize,
            c.rs as isize,
            accumulate,
            a.data.as_ptr(),
            a.cs as isize,
            a.rs as isize,
            b.data.as_ptr(),
            b.cs as isize,
            b.rs as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        );
    }
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
        let vals = |n: usize, s: u32| -> Vec<f32> {
            (0..n)
                .map(|i| (((i as u32).wrapping_mul(2_654_435_761) ^ s) % 1000) as f32 / 500.0 - 1.0)
                .collect()
        };
        for (m, k, n) in [(1, 1, 1), (7, 13, 5), (33, 70, 129), (64, 3, 1)] {
            // a with padded rows, b stored transposed
            let a = vals(m * (k + 3), 1);
            let bt = vals(n * k, 2);
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
}
