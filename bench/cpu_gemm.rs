//! The CPU GEMM candidates on the shapes the matrix layers give them: the `gemm` crate (what
//! the runtime uses), `matrixmultiply`, and plain row-update loops (the runtime's former
//! im2col GEMM). GFLOP/s, best of the runs, on 1 thread and on THREADS (default: all cores;
//! gemm only, the others have no pool of the same kind: "gemm Nt" the crate's own rayon
//! split, "tiles Nt" one rectangle of the output per thread, as the runtime runs it), with
//! numpy's OpenBLAS on THREADS in the same run as the baseline (`bench/numpy_gemm.py`
//! through `$FPSHADER_NCNN_PYTHON` or `python3`; "n/a" where that Python has no numpy).
//!
//! `cargo run --release --example cpu_gemm -p fpshader-tests [RUNS [THREADS]]`

use std::time::Instant;

/// `(m, k, n, what)`: output rows, inner size, columns.
const SHAPES: &[(usize, usize, usize, &str)] = &[
    (64, 576, 3136, "resnet 3x3, 56x56x64 (im2col)"),
    (256, 64, 3136, "resnet 1x1, 56x56 64->256"),
    (512, 4608, 49, "resnet 3x3, 7x7x512 (im2col)"),
    (144, 24, 3136, "mobilenet_v2 expand 1x1"),
    (64, 32, 12544, "mobilenet 1x1, 112x112 32->64"),
    (256, 256, 784, "mobilenet 1x1, 28x28 256->256"),
    (1024, 256, 196, "resnet50 1x1, 14x14 256->1024"),
    (256, 1024, 196, "resnet50 1x1, 14x14 1024->256"),
    (2048, 512, 49, "resnet50 1x1, 7x7 512->2048"),
    (128, 512, 784, "resnet50 1x1, 28x28 512->128"),
    (1024, 1024, 1024, "square 1024"),
];

/// `c = a × b` through `gemm::gemm` for an `m × n` block of row-major operands whose rows are
/// `lda`, `ldb` and `ldc` values long.
///
/// # Safety
/// Every row of the block must lie inside the memory behind each pointer.
#[allow(clippy::too_many_arguments)]
unsafe fn sgemm(
    [m, n, k]: [usize; 3],
    c: *mut f32,
    ldc: usize,
    a: *const f32,
    lda: usize,
    b: *const f32,
    ldb: usize,
    par: gemm::Parallelism,
) {
    // SAFETY: as the caller promises
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c,
            1,
            ldc as isize,
            false,
            a,
            1,
            lda as isize,
            b,
            1,
            ldb as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            par,
        )
    }
}

fn gemm_crate(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32], threads: usize) {
    let par = if threads > 1 {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: row-major a (m×k), b (k×n), c (m×n), each exactly that long
    unsafe {
        sgemm(
            [m, n, k],
            c.as_mut_ptr(),
            n,
            a.as_ptr(),
            k,
            b.as_ptr(),
            n,
            par,
        )
    }
}

fn matrixmultiply(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    // SAFETY: as above
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        )
    }
}

/// A raw output pointer shared by the tiles, each of which writes its own rectangle.
#[derive(Clone, Copy)]
struct OutPtr(*mut f32);
// SAFETY: the tiles of one call write disjoint rectangles of the output
unsafe impl Send for OutPtr {}
unsafe impl Sync for OutPtr {}

impl OutPtr {
    /// The pointer, through the whole struct (a closure naming the field would capture the
    /// bare pointer, which is not `Send`).
    fn get(self) -> *mut f32 {
        self.0
    }
}

/// The output cut into one rectangle per thread (rows in blocks of 64, then columns), each a
/// single-threaded `gemm` call: a static split, as ncnn's OpenMP loops make (the runtime's
/// `cpu_gemm` picks its rectangles by a cost rule; this is the simplest form of it).
fn gemm_tiles(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32], threads: usize) {
    use rayon::prelude::*;
    let pm = threads.min(m.div_ceil(64)).max(1);
    let pn = threads.div_ceil(pm).min(n.div_ceil(32)).max(1);
    let mb = m.div_ceil(pm).div_ceil(16) * 16;
    let nb = n.div_ceil(pn).div_ceil(8) * 8;
    let out = OutPtr(c.as_mut_ptr());
    (0..pm * pn).into_par_iter().for_each(|t| {
        let (i0, j0) = ((t / pn) * mb, (t % pn) * nb);
        if i0 >= m || j0 >= n {
            return;
        }
        let (mi, nj) = (mb.min(m - i0), nb.min(n - j0));
        // SAFETY: row-major a, b, c as above; the tile (i0.., j0..) lies inside each
        unsafe {
            sgemm(
                [mi, nj, k],
                out.get().add(i0 * n + j0),
                n,
                a.as_ptr().add(i0 * k),
                k,
                b.as_ptr().add(j0),
                n,
                gemm::Parallelism::None,
            )
        }
    });
}

/// Each output row as a weight × input-row update per inner index (vectorizes over n).
fn row_updates(k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    for (row, wrow) in c.chunks_mut(n).zip(a.chunks(k)) {
        row.fill(0.0);
        for (w, brow) in wrow.iter().zip(b.chunks(n)) {
            for (o, x) in row.iter_mut().zip(brow) {
                *o += w * x;
            }
        }
    }
}

fn best_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    f();
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

/// numpy's GFLOP/s on the shape at `threads` threads, as the script prints it.
fn numpy(m: usize, k: usize, n: usize, runs: usize, threads: usize) -> Option<String> {
    let python = std::env::var("FPSHADER_NCNN_PYTHON").unwrap_or_else(|_| "python3".into());
    // the checkout it was built in, else the working directory's (a binary carried elsewhere)
    let built = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/numpy_gemm.py");
    let script = if std::path::Path::new(built).exists() {
        built
    } else {
        "bench/numpy_gemm.py"
    };
    let out = std::process::Command::new(python)
        .arg(script)
        .args([m, k, n, runs].map(|v| v.to_string()))
        .env("OPENBLAS_NUM_THREADS", threads.to_string())
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "numpy baseline: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let cores = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    println!("GFLOP/s, best of {runs}; gemm and numpy on {cores} threads");
    println!(
        "{:<34} {:>10} {:>10} {:>10} {:>10} {:>14} {:>12}",
        "shape (m x k x n)",
        "gemm 1t",
        "gemm Nt",
        "tiles Nt",
        "numpy Nt",
        "matrixmult 1t",
        "loops 1t"
    );
    for &(m, k, n, what) in SHAPES {
        let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 * 0.1).collect();
        let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.1).collect();
        let mut c = vec![0.0f32; m * n];
        let flop = 2.0 * (m * k * n) as f64;
        let rate = |ms: f64| flop / ms / 1e6;
        let g1 = best_ms(runs, || gemm_crate(m, k, n, &a, &b, &mut c, 1));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(cores)
            .build()
            .expect("a thread pool");
        let gn = pool.install(|| best_ms(runs, || gemm_crate(m, k, n, &a, &b, &mut c, cores)));
        let tn = pool.install(|| best_ms(runs, || gemm_tiles(m, k, n, &a, &b, &mut c, cores)));
        let mm = best_ms(runs, || matrixmultiply(m, k, n, &a, &b, &mut c));
        let rl = best_ms(runs.min(3), || row_updates(k, n, &a, &b, &mut c));
        let np = numpy(m, k, n, runs, cores).unwrap_or_else(|| "n/a".into());
        println!(
            "{:<34} {:>10.1} {:>10.1} {:>10.1} {:>10} {:>14.1} {:>12.1}",
            format!("{what} ({m}x{k}x{n})"),
            rate(g1),
            rate(gn),
            rate(tn),
            np,
            rate(mm),
            rate(rl)
        );
    }
}
