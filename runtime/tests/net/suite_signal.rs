//! ncnn's test_spectrogram.cpp and test_inversespectrogram.cpp through the suite (CPU against
//! ncnn's wheel, the GPU against the CPU), with more shapes of the same params (every power,
//! window, pad type and normalization, one- and two-sided); inputs that do not fit as typed
//! errors.

use super::suite::*;
use super::*;

/// `(size, n_fft, power, hoplen, winlen, window_type, center, pad_type, normalized,
/// onesided)`: test_spectrogram()'s arguments.
const SPECTROGRAMS: [[usize; 10]; 9] = [
    [17, 1, 0, 1, 1, 0, 1, 0, 0, 0],
    [39, 17, 0, 7, 15, 0, 0, 0, 1, 0],
    [128, 10, 0, 2, 7, 1, 1, 1, 1, 1],
    [255, 17, 1, 14, 17, 2, 0, 0, 0, 1],
    [124, 55, 2, 12, 55, 1, 1, 2, 2, 0],
    // beyond the file: a speech front end's shape, power spectra of every window
    [1600, 400, 2, 160, 400, 1, 1, 2, 0, 1],
    [300, 64, 1, 16, 48, 2, 1, 0, 2, 0],
    [96, 32, 0, 8, 32, 1, 0, 2, 1, 1],
    [50, 16, 2, 4, 16, 0, 1, 1, 0, 1],
];

/// `(frames, freqs, n_fft, returns, hoplen, winlen, window_type, center, normalized)`:
/// test_inversespectrogram()'s arguments.
const INVERSES: [[usize; 9]; 8] = [
    [17, 1, 1, 0, 1, 1, 0, 1, 0],
    [39, 9, 17, 0, 7, 15, 0, 0, 1],
    [128, 6, 10, 0, 2, 7, 1, 1, 1],
    [255, 17, 17, 1, 14, 17, 2, 0, 0],
    [124, 28, 55, 2, 12, 55, 1, 1, 2],
    // beyond the file: two-sided spectra, a speech shape
    [20, 16, 16, 1, 4, 16, 1, 1, 0],
    [33, 10, 10, 0, 5, 8, 2, 0, 2],
    [11, 201, 400, 1, 160, 400, 1, 1, 0],
];

#[test]
fn ncnn_spectrogram_tests() {
    let mut rng = Rng(2401);
    let mut cases = Vec::new();
    for [size, n, power, hop, win, ty, center, pad, norm, one] in SPECTROGRAMS {
        let params =
            format!("0={n} 1={power} 2={hop} 3={win} 4={ty} 5={center} 6={pad} 7={norm} 8={one}");
        cases.push(unary_case(
            &mut rng,
            "Spectrogram",
            &params,
            &[size],
            RANDOM,
        ));
    }
    for [frames, freqs, n, returns, hop, win, ty, center, norm] in INVERSES {
        let params = format!("0={n} 1={returns} 2={hop} 3={win} 4={ty} 5={center} 7={norm}");
        let sizes = [2, frames, freqs];
        cases.push(unary_case(
            &mut rng,
            "InverseSpectrogram",
            &params,
            &sizes,
            RANDOM,
        ));
    }
    check_suite(cases, false);
}

#[test]
fn spectrograms_refuse_what_does_not_fit() {
    // (numpy shapes) a 2-D signal, a signal shorter than a frame, a window past n_fft, a
    // spectrum of neither n_fft nor n_fft / 2 + 1 frequencies
    let planes = layer_error("Spectrogram", "0=8", &[("x", &[2, 20])]);
    assert!(planes.contains("1-D"), "{planes}");
    let short = layer_error("Spectrogram", "0=16 5=0", &[("x", &[10])]);
    assert!(short.contains("frame"), "{short}");
    let window = load_error("Spectrogram", &["x"], "0=8 3=9");
    assert!(window.contains("window"), "{window}");
    let freqs = layer_error("InverseSpectrogram", "0=8", &[("x", &[6, 4, 2])]);
    assert!(freqs.contains("frequencies"), "{freqs}");
}
