//! Signal layers: Spectrogram (a short-time Fourier transform) and InverseSpectrogram (its
//! overlap-add inverse), `0=n_fft 2=hoplen 3=winlen 4=window_type 5=center 7=normalized`, with
//! the window ncnn builds: `winlen` values of ones (0), Hann (1) or Hamming (2), centred in
//! `n_fft` with zeros either side (its `window` module). Both are direct DFTs, as ncnn's: each frequency
//! and frame (each output sample) sums its `n_fft` terms, with the angle `2π · (f · k mod n) / n`
//! reduced before its cosine so that fp32 shaders keep the precision the CPU has.

pub mod inversespectrogram;
pub mod spectrogram;

use crate::error::{Error, Result};
use crate::layer::params::ParamDict;

/// The params both read: `n_fft`, `hoplen`, `winlen`, `window_type`, `center`, `normalized`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Frames {
    pub n_fft: usize,
    pub hoplen: usize,
    pub winlen: usize,
    pub window_type: i32,
    pub center: bool,
    pub normalized: i32,
}

impl Frames {
    /// Reads and checks them.
    pub fn load(pd: &ParamDict) -> Result<Frames> {
        let positive = |id: u32, v: i32, allowed: &'static str| match v {
            1.. => Ok(v as usize),
            _ => Err(Error::BadParam {
                id,
                value: v.to_string(),
                allowed,
            }),
        };
        let n_fft = positive(0, pd.int(0, 0), "an n_fft of at least 1")?;
        let hoplen = positive(2, pd.int(2, n_fft as i32 / 4), "a hop of at least 1")?;
        let winlen = positive(3, pd.int(3, n_fft as i32), "a window of 1 to n_fft values")?;
        // its window is allocated at load: an n_fft past the host's memory is refused
        crate::host::values(&[n_fft])?;
        if winlen > n_fft {
            return Err(Error::BadParam {
                id: 3,
                value: winlen.to_string(),
                allowed: "a window of 1 to n_fft values",
            });
        }
        Ok(Frames {
            n_fft,
            hoplen,
            winlen,
            window_type: pd.int_in(4, 0, 0..=2, "0 ones, 1 Hann or 2 Hamming")?,
            center: pd.int_in(5, 1, 0..=1, "0 or 1")? == 1,
            normalized: pd.int_in(7, 0, 0..=2, "0 none, 1 by sqrt(n_fft), 2 by the window")?,
        })
    }

    /// The window over `n_fft` values, and its norm `sqrt(Σ w²)`.
    pub fn window(&self) -> (Vec<f32>, f32) {
        let w = window(self.n_fft, self.winlen, self.window_type);
        let norm = w.iter().map(|v| v * v).sum::<f32>().sqrt();
        (w, norm)
    }
}

/// ncnn's window: `winlen` values of the type, `(n_fft - winlen) / 2` zeros before them and
/// the rest after.
pub(crate) fn window(n_fft: usize, winlen: usize, window_type: i32) -> Vec<f32> {
    let before = (n_fft - winlen) / 2;
    let mut w = vec![0.0f32; n_fft];
    for i in 0..winlen {
        // the angle in double, its cosine in float, as ncnn's cosf(2 * M_PI * i / winlen)
        let c = ((2.0 * std::f64::consts::PI * i as f64 / winlen as f64) as f32).cos();
        w[before + i] = match window_type {
            1 => 0.5 * (1.0 - c),
            2 => 0.54 - 0.46 * c,
            _ => 1.0,
        };
    }
    w
}

/// `cos` and `sin` of `2π · (a · b mod n) / n`: the DFT's twiddle with its angle reduced.
pub(crate) fn twiddle(a: usize, b: usize, n: usize) -> (f32, f32) {
    let angle = (2.0 * std::f64::consts::PI * ((a * b) % n) as f64 / n as f64) as f32;
    (angle.cos(), angle.sin())
}
