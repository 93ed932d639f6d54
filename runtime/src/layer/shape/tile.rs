//! Tile: `0=axis 1=tiles` (one axis repeated), or `2=repeats` (numpy's `tile`: one count per
//! trailing axis, more counts than axes add outer axes). Repeats count along ncnn's `w, h, d,
//! c`, so that a 3-D blob tiled with four counts keeps its channels outermost as ncnn does.

use crate::error::{Error, Result};
use crate::layer::params::ParamDict;
use crate::layer::shape::view_rule::ViewRule;
use crate::layer::shared::view::from_numpy_shape;
use crate::tensor::BlobShape;
use crate::tensor::Strided;

/// Repeats along axes.
#[derive(Default)]
pub struct Tile {
    axis: i32,
    tiles: usize,
    repeats: Vec<usize>,
}

impl ViewRule for Tile {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        let tiles = pd.int(1, 1);
        let repeats = pd.ints(2);
        if tiles < 1 || repeats.len() > 4 || repeats.iter().any(|r| *r < 1) {
            return Err(Error::BadParam {
                id: if tiles < 1 { 1 } else { 2 },
                value: format!("tiles {tiles}, repeats {repeats:?}"),
                allowed: "counts of at least 1, at most 4 of them",
            });
        }
        Ok(Tile {
            axis: pd.int(0, 0),
            tiles: tiles as usize,
            repeats: repeats.iter().map(|r| *r as usize).collect(),
        })
    }

    fn view(&self, np: &[usize]) -> Result<(Strided, Vec<usize>)> {
        let BlobShape {
            dims,
            shape: [w, h, d, c],
        } = from_numpy_shape(np)?;
        let dims = usize::from(dims);
        // repeats of c, d, h, w
        let mut rep = [1usize; 4];
        if self.repeats.is_empty() {
            // the numpy axis as a place in (c, d, h, w)
            let at: &[usize] = match dims {
                1 => &[3],
                2 => &[2, 3],
                3 => &[0, 2, 3],
                _ => &[0, 1, 2, 3],
            };
            if dims == 1 {
                rep[3] = self.tiles;
            } else if let Some(k) = usize::try_from(self.axis).ok().and_then(|a| at.get(a)) {
                rep[*k] = self.tiles;
            }
        } else {
            let r = &self.repeats;
            let places: &[usize] = match (r.len(), dims) {
                (1, _) => &[3],
                (2, _) => &[2, 3],
                (3, 4) => &[1, 2, 3],
                (3, _) => &[0, 2, 3],
                _ => &[0, 1, 2, 3],
            };
            for (k, n) in places.iter().zip(r) {
                rep[*k] = *n;
            }
        }
        let outdims = dims.max(self.repeats.len());
        let full = [c, d, h, w];
        // each axis of (c, d, h, w) after a stride-0 axis of its repeats
        let mut view = Strided::contiguous(&full);
        for k in (0..4).rev() {
            view = view.repeat(k, rep[k]);
        }
        let out: Vec<usize> = (0..4).map(|k| full[k] * rep[k]).collect();
        let out = match outdims {
            1 => vec![out[3]],
            2 => vec![out[2], out[3]],
            3 => vec![out[0], out[2], out[3]],
            _ => out,
        };
        Ok((view, out))
    }
}
