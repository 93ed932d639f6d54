//! How a layer's output rows read its input rows ([`Rows`], what
//! [`Layer::gpu_rows`](crate::layer::contract::Layer::gpu_rows) declares): what lets the net
//! run a layer whose blobs pass a buffer of the device on bands of rows, each band a forward
//! of its own on the rows it reads.

use std::ops::Range;

/// The rows of a 3-D input that each output row of a layer reads, and the output's extents.
///
/// Output row `o` reads the input rows from `o·down/up − before` to `o·down/up + after`
/// (rounded down), clamped to the input. A forward on input rows `lo..hi` gives output rows
/// as the whole forward would from output row `lo·up/down` on, wherever an output row reads
/// only rows of the band or lies on the true edge of the input (where the band's edge is the
/// input's, so padding and clamping are the same); the rows between are discarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rows {
    /// Input rows per output row step (a stride).
    pub down: usize,
    /// Output rows per input row (an integral upscale).
    pub up: usize,
    /// Rows read above the row an output row falls on (a kernel's top padding).
    pub before: isize,
    /// Rows read below it.
    pub after: isize,
    /// The output's width, height and channels (unpacked) for the whole input.
    pub out: [usize; 3],
}

/// One band of a banded forward: the input rows to run on, and which rows of its output are
/// output rows `out` of the whole forward.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Band {
    /// Input rows of the band.
    pub input: Range<usize>,
    /// The band's output rows that are kept (rows of the band's own output).
    pub keep: Range<usize>,
    /// The output rows of the whole forward they are.
    pub out: Range<usize>,
}

impl Rows {
    /// Rows mapped one to one (an elementwise layer) over an output of `out`.
    pub fn same(out: [usize; 3]) -> Rows {
        Rows {
            down: 1,
            up: 1,
            before: 0,
            after: 0,
            out,
        }
    }

    /// A kernel window along the rows: `extent` rows (dilation included) `stride` apart,
    /// `pad_top` of them above the input, over an output of `out`.
    pub fn window(extent: usize, stride: usize, pad_top: usize, out: [usize; 3]) -> Rows {
        Rows {
            down: stride,
            up: 1,
            before: pad_top as isize,
            after: extent as isize - 1 - pad_top as isize,
            out,
        }
    }

    /// The band making output rows `out` of an input of `height` rows: the input rows they
    /// read, started where an output row falls (a whole stride), and where they lie in the
    /// band's output. `None` where up- and downscaling mix, which no band start lines up.
    pub fn band(&self, out: Range<usize>, height: usize) -> Option<Band> {
        if out.is_empty() || height == 0 || self.down == 0 || self.up == 0 {
            return None;
        }
        if self.down > 1 && self.up > 1 {
            return None;
        }
        let at = |o: usize| (o * self.down / self.up) as isize;
        let first = (at(out.start) - self.before).max(0) as usize;
        let last = (at(out.end - 1) + self.after + 1).clamp(0, height as isize) as usize;
        // a band starts on a stride so that its output rows are the whole forward's
        let lo = first.min(height - 1) / self.down * self.down;
        let hi = last.max(lo + 1);
        let base = lo * self.up / self.down;
        Some(Band {
            input: lo..hi,
            keep: out.start - base..out.end - base,
            out,
        })
    }

    /// Output rows per band so that a band's input (`in_row` bytes a row) and output
    /// (`out_row` bytes a row) each stay within `limit` bytes; `None` where not even one row
    /// fits.
    pub fn band_height(&self, in_row: u64, out_row: u64, limit: u64) -> Option<usize> {
        // the input rows `n` output rows read, at most, and the rows a band's output has
        // besides the kept ones (made from the band's halo)
        let reach = (self.before.max(0) + self.after.max(0)) as u64 + self.down as u64;
        let extra = reach * self.up as u64 / self.down as u64 + self.up as u64;
        let out_rows = (limit / out_row.max(1)).checked_sub(extra)?;
        let in_rows = (limit / in_row.max(1)).checked_sub(reach)?;
        let by_input = in_rows * self.up as u64 / self.down as u64;
        let n = out_rows.min(by_input);
        (n > 0).then(|| usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// The bands covering the whole output, `rows` output rows each (the last one fewer).
    pub fn bands(&self, rows: usize, height: usize) -> Option<Vec<Band>> {
        let total = self.out[1];
        (0..total)
            .step_by(rows.max(1))
            .map(|a| self.band(a..(a + rows).min(total), height))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3×3 convolution padded by 1: output rows 10..20 read input rows 9..21.
    #[test]
    fn a_padded_window_reads_its_halo() {
        let r = Rows::window(3, 1, 1, [64, 100, 8]);
        let b = r.band(10..20, 100).unwrap();
        assert_eq!((b.input, b.keep), (9..21, 1..11));
        // the first band starts at the input's top, where the padding is the input's
        let b = r.band(0..10, 100).unwrap();
        assert_eq!((b.input, b.keep), (0..11, 0..10));
        let b = r.band(90..100, 100).unwrap();
        assert_eq!((b.input, b.keep), (89..100, 1..11));
    }

    /// Stride 2: a band starts on an even row, so its output row 0 is a whole output row.
    #[test]
    fn a_strided_band_starts_on_a_stride() {
        let r = Rows::window(3, 2, 1, [32, 50, 8]);
        let b = r.band(10..20, 100).unwrap();
        // output row 10 reads input rows 19..=21; the band starts at 18, output row 9
        assert_eq!((b.input, b.keep), (18..40, 1..11));
    }

    /// Upscaling by 2 with one row of context (bilinear): output rows 10..20 read input
    /// rows 4..=10.
    #[test]
    fn an_upscale_reads_its_neighbours() {
        let r = Rows {
            down: 1,
            up: 2,
            before: 1,
            after: 1,
            out: [64, 100, 8],
        };
        let b = r.band(10..20, 50).unwrap();
        assert_eq!((b.input, b.keep), (4..11, 2..12));
    }

    /// Band heights keep both sides within the limit, and none is given where one row
    /// does not fit.
    #[test]
    fn band_heights_fit_the_limit() {
        let r = Rows::window(3, 1, 1, [64, 100, 8]);
        // 3 rows of reach on the input side; 4 more rows on the output's
        assert_eq!(r.band_height(100, 200, 10_000), Some(46));
        assert_eq!(r.band_height(100, 100, 10_000), Some(96));
        assert_eq!(r.band_height(6000, 100, 10_000), None);
        let bands = r.bands(30, 100).unwrap();
        let outs: Vec<_> = bands.iter().map(|b| b.out.clone()).collect();
        assert_eq!(outs, [0..30, 30..60, 60..90, 90..100]);
    }
}
