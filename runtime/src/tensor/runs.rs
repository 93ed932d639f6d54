//! Copies between runs of values laid out with steps: what reshapes and channel-aligned
//! layouts are made of on the host.

use rayon::prelude::*;

use super::COPY_GRAIN;

/// Copies the values of `src` (runs of `slen` values, `sstep` apart) in order into `dst`'s
/// runs (`dlen` values, `dstep` apart; both counts of values equal), in parallel pieces.
pub(super) fn copy_runs(
    src: &[f32],
    [slen, sstep]: [usize; 2],
    dst: &mut [f32],
    [dlen, dstep]: [usize; 2],
) {
    if dlen == 0 || slen == 0 {
        return;
    }
    dst.par_chunks_mut(dstep)
        .enumerate()
        .flat_map_iter(|(q, run)| {
            run[..dlen]
                .chunks_mut(COPY_GRAIN)
                .enumerate()
                .map(move |(k, piece)| (q * dlen + k * COPY_GRAIN, piece))
        })
        .for_each(|(first, piece)| {
            let (mut f, mut done) = (first, 0);
            while done < piece.len() {
                let (r, o) = (f / slen, f % slen);
                let n = (slen - o).min(piece.len() - done);
                piece[done..done + n].copy_from_slice(&src[r * sstep + o..][..n]);
                done += n;
                f += n;
            }
        });
}
