//! Gemm's shape rules, as ncnn infers them: which blob shapes are matrix operands, and how C
//! spreads over the output (`broadcast_type_C`).

use crate::tensor::BlobShape;

/// How C spreads over the output (ncnn's `broadcast_type_C`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Broadcast {
    /// One value.
    Scalar,
    /// One value per row of `M×N` (types 1 and 2).
    Rows,
    /// The whole `M×N` (type 3).
    Full,
    /// One value per column (type 4).
    Columns,
}

impl Broadcast {
    pub(crate) fn from_type(t: i32) -> Option<Broadcast> {
        match t {
            0 => Some(Broadcast::Scalar),
            1 | 2 => Some(Broadcast::Rows),
            3 => Some(Broadcast::Full),
            4 => Some(Broadcast::Columns),
            _ => None,
        }
    }

    /// The shader's broadcast type (`gemm.comp`'s `c_type`).
    pub(crate) fn shader_type(self) -> i32 {
        match self {
            Broadcast::Scalar => 0,
            Broadcast::Rows => 1,
            Broadcast::Full => 3,
            Broadcast::Columns => 4,
        }
    }

    /// How many values C holds with this broadcast over an `M×N` output.
    pub(crate) fn len(self, m: usize, n: usize) -> usize {
        match self {
            Broadcast::Scalar => 1,
            Broadcast::Rows => m,
            Broadcast::Columns => n,
            Broadcast::Full => m * n,
        }
    }

    /// The type of an input C of `dims` and `[w, h]` against an `M×N` output, as ncnn infers it
    /// (later matches win, so a 1-D C of `M == N` values is per column).
    pub(crate) fn infer(dims: u8, [w, h]: [usize; 2], m: usize, n: usize) -> Option<Broadcast> {
        let mut t = None;
        if dims == 1 && w == 1 {
            t = Some(Broadcast::Scalar);
        }
        if dims == 1 && w == m {
            t = Some(Broadcast::Rows);
        }
        if dims == 1 && w == n {
            t = Some(Broadcast::Columns);
        }
        if dims == 2 && w == 1 && h == m {
            t = Some(Broadcast::Rows);
        }
        if dims == 2 && w == n && h == m {
            t = Some(Broadcast::Full);
        }
        if dims == 2 && w == n && h == 1 {
            t = Some(Broadcast::Columns);
        }
        t
    }
}

/// A blob's rows and columns as a matrix operand: 1-D one row, 2-D its rows, 3-D of height 1
/// its channels (pnnx's `N×1×M`); `None` for other shapes.
pub(crate) fn matrix_of(blob: BlobShape) -> Option<(usize, usize)> {
    let (dims, [w, h, _, c]) = (blob.dims, blob.shape);
    match dims {
        1 => Some((1, w)),
        2 => Some((h, w)),
        3 if h == 1 => Some((c, w)),
        _ => None,
    }
}
