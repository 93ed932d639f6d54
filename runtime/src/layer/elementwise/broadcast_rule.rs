//! BinaryOp's broadcast rules, as ncnn forms them: which extents of two operands pair up, and
//! the output's shape.

use crate::error::{InputError, Result};
use crate::tensor::Mat;

/// `[c, d, h, w]` of `[w, h, d, c]` (numpy order).
fn shape_nchw([w, h, d, c]: [usize; 4]) -> [usize; 4] {
    [c, d, h, w]
}

/// A mat's numpy shape and dims from `(dims, [w, h, d, c])`, as the broadcast rules read it.
pub(crate) struct Operand {
    /// Its dims (1 to 4).
    pub(crate) dims: u8,
    /// `[w, h, d, c]`.
    pub(crate) shape: [usize; 4],
}

impl Operand {
    /// `m`'s dims and shape.
    pub(crate) fn of(m: &Mat) -> Self {
        Operand {
            dims: m.dims,
            shape: m.shape(),
        }
    }

    fn numpy_shape(&self) -> Vec<usize> {
        crate::layer::shared::view::numpy_shape(self.dims, self.shape)
    }
}

/// `a`'s and `b`'s extents (`[c, d, h, w]`, 1 where broadcast), the output's, its dims.
pub(crate) type Broadcast = ([usize; 4], [usize; 4], [usize; 4], u8);

/// The broadcast shape of `a` and `b` as ncnn's BinaryOp forms it: a 1-D operand whose length
/// is the other's outermost extent broadcasts along that axis (per channel), other 1-D ones
/// align with the innermost axis like numpy's; a lower-rank operand of 2 or more dims aligns
/// with the other's outermost axes; extents of 1 stretch.
pub(crate) fn broadcast(a: &Mat, b: &Mat) -> Result<Broadcast> {
    broadcast_of(&Operand::of(a), &Operand::of(b))
}

pub(crate) fn broadcast_of(a: &Operand, b: &Operand) -> Result<Broadcast> {
    let (mut sa, mut sb) = (shape_nchw(a.shape), shape_nchw(b.shape));
    // the index of a mat's outermost extent in `[c, d, h, w]`
    let outer = |m: &Operand| match m.dims {
        1 => 3,
        2 => 2,
        _ => 0,
    };
    if a.dims != b.dims && a.dims > 1 && b.dims == 1 && b.shape[0] == sa[outer(a)] {
        sb = [1; 4];
        sb[outer(a)] = b.shape[0];
    } else if a.dims != b.dims && b.dims > 1 && a.dims == 1 && a.shape[0] == sb[outer(b)] {
        sa = [1; 4];
        sa[outer(b)] = a.shape[0];
    } else if a.dims != b.dims && a.dims.min(b.dims) >= 2 {
        // ncnn aligns the lower-rank operand with the other's outer axes (a 2-D [h, w] against
        // a 3-D [c, h, w] pairs its h with c), where numpy aligns the inner ones
        let rank = usize::from(a.dims.max(b.dims));
        let left_aligned = |m: &Operand| {
            let mut v = m.numpy_shape();
            v.resize(rank, 1);
            match v[..] {
                [c, h, w] => [c, 1, h, w],
                [c, d, h, w] => [c, d, h, w],
                _ => shape_nchw(m.shape),
            }
        };
        if a.dims < b.dims {
            sa = left_aligned(a);
        } else {
            sb = left_aligned(b);
        }
    }
    let mut out = [1; 4];
    for i in 0..4 {
        out[i] = paired(sa[i], sb[i]).ok_or_else(|| InputError::Mismatch {
            a: sa.to_vec(),
            b: sb.to_vec(),
            why: "do not broadcast (NCHW, numpy's rules)",
        })?;
    }
    Ok((sa, sb, out, a.dims.max(b.dims)))
}

/// The output extent of two operand extents under numpy's rule (equal, or one of them 1).
pub(crate) fn paired(x: usize, y: usize) -> Option<usize> {
    match (x, y) {
        (x, y) if x == y => Some(x),
        (1, y) => Some(y),
        (x, 1) => Some(x),
        _ => None,
    }
}
