use super::*;

/// Levels in ±127 from a small generator (the extremes included).
fn levels(n: usize, seed: u32) -> Vec<i8> {
    let mut s = seed.wrapping_mul(2654435761).max(1);
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            match i % 11 {
                0 => 127,
                1 => -127,
                _ => (s % 255) as i32 as i8 as i32 as i8,
            }
        })
        .map(|v: i8| v.max(-127))
        .collect()
}

fn reference(a: &[i8], b: &[i8], (rows, k, n): (usize, usize, usize)) -> Vec<i64> {
    let mut c = vec![0i64; rows * n];
    for r in 0..rows {
        for kk in 0..k {
            for j in 0..n {
                c[r * n + j] += a[r * k + kk] as i64 * b[kk * n + j] as i64;
            }
        }
    }
    c
}

#[test]
fn every_kernel_sums_products_exactly_on_ragged_shapes() {
    // rows, k and n off every multiple the kernels block by, and a long k at full scale
    for (rows, k, n) in [
        (1, 1, 1),
        (9, 5, 33),
        (16, 8, 64),
        (13, 147, 70),
        (3, 2000, 40),
    ] {
        let a = levels(rows * k, 1);
        let b = levels(k * n, 2);
        let want = reference(&a, &b, (rows, k, n));
        let af: Vec<f32> = a.iter().map(|&v| v as f32).collect();
        let w = Int8Rows::new(&af, rows, k);
        for kernel in Int8Kernel::available() {
            let c = gemm(kernel, &w, &b, n, n);
            let mut row = vec![0f32; n];
            for r in 0..rows {
                c.row_into(r, &mut row);
                let want: Vec<f32> = want[r * n..(r + 1) * n].iter().map(|&v| v as f32).collect();
                assert_eq!(row, want, "{kernel:?} {rows}×{k}×{n}, row {r}");
            }
            let mut y = vec![0i32; rows];
            gemv(kernel, &w, &b[..k], &mut y);
            let col0: Vec<i64> = (0..rows)
                .map(|r| (0..k).map(|kk| a[r * k + kk] as i64 * b[kk] as i64).sum())
                .collect();
            let y: Vec<i64> = y.iter().map(|&v| v as i64).collect();
            assert_eq!(y, col0, "{kernel:?} gemv {rows}×{k}");
        }
    }
}
