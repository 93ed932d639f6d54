//! The transforms of each tile size, from their interpolation points.

/// One tile size's transforms: `M` outputs per side from `N = M + 2` inputs.
pub(super) struct Transform<const M: usize, const N: usize> {
    pub(super) at: [[f32; N]; M],
    pub(super) g: [[f32; 3]; N],
    pub(super) bt: [[f32; N]; N],
}

/// The transforms through the `N - 1` finite points `pts`.
const fn transform<const M: usize, const N: usize>(pts: &[f64]) -> Transform<M, N> {
    let mut at = [[0.0f32; N]; M];
    let mut g = [[0.0f32; 3]; N];
    let mut bt = [[0.0f32; N]; N];
    let mut j = 0;
    while j < N {
        // the coefficients of Π(x − p_l) over l ≠ j (all l for the point at infinity)
        let mut poly = [0.0f64; N];
        poly[0] = 1.0;
        let mut deg = 0;
        let mut f = 1.0f64;
        let mut l = 0;
        while l < N - 1 {
            if l != j {
                let mut d = deg + 1;
                while d > 0 {
                    poly[d] = poly[d - 1] - pts[l] * poly[d];
                    d -= 1;
                }
                poly[0] *= -pts[l];
                deg += 1;
                if j < N - 1 {
                    f *= pts[j] - pts[l];
                }
            }
            l += 1;
        }
        let mut i = 0;
        while i < N {
            bt[j][i] = poly[i] as f32;
            i += 1;
        }
        if j < N - 1 {
            let mut p = 1.0f64;
            let mut i = 0;
            while i < M || i < 3 {
                if i < M {
                    at[i][j] = p as f32;
                }
                if i < 3 {
                    g[j][i] = (p / f) as f32;
                }
                p *= pts[j];
                i += 1;
            }
        }
        j += 1;
    }
    at[M - 1][N - 1] = 1.0;
    g[N - 1][2] = 1.0;
    Transform { at, g, bt }
}

pub(super) const F23: Transform<2, 4> = transform(&[0.0, 1.0, -1.0]);
pub(super) const F43: Transform<4, 6> = transform(&[0.0, 1.0, -1.0, 2.0, -2.0]);
/// F(4,3) through 0, ±√2, ±√2/2: transformed values within about 20× the input's (100× with
/// 0, ±1, ±2), for the GPU, whose fp16 storage rounds them (ncnn's Vulkan points).
pub(super) const F43_BALANCED: Transform<4, 6> = transform(&[
    0.0,
    std::f64::consts::SQRT_2,
    -std::f64::consts::SQRT_2,
    std::f64::consts::FRAC_1_SQRT_2,
    -std::f64::consts::FRAC_1_SQRT_2,
]);

#[cfg(test)]
mod tests {
    use super::*;

    /// 1-D: `Aᵀ[(G g) ⊙ (Bᵀ d)]` is the correlation of `d` with `g`.
    fn check<const M: usize, const N: usize>(t: &Transform<M, N>) {
        let g = [0.7f32, -1.3, 0.4];
        let d: Vec<f32> = (0..N).map(|i| (i as f32 * 0.37).sin()).collect();
        let gg: Vec<f32> = (0..N)
            .map(|i| (0..3).map(|k| t.g[i][k] * g[k]).sum())
            .collect();
        let bd: Vec<f32> = (0..N)
            .map(|i| (0..N).map(|k| t.bt[i][k] * d[k]).sum())
            .collect();
        for i in 0..M {
            let y: f32 = (0..N).map(|j| t.at[i][j] * gg[j] * bd[j]).sum();
            let want: f32 = (0..3).map(|k| g[k] * d[i + k]).sum();
            assert!(
                (y - want).abs() < 1e-4,
                "F({M},3) output {i}: {y} vs {want}"
            );
        }
    }

    #[test]
    fn the_transforms_compute_a_correlation() {
        check(&F23);
        check(&F43);
        check(&F43_BALANCED);
    }
}
