//! Axes and shapes: numpy axes of a blob, their place in a GPU mat's 3-D view, extents.

use std::borrow::Cow;

use crate::error::{InputError, Result};
use crate::tensor::BlobShape;
use crate::tensor::{Mat, MatData};

/// The axis of a GPU mat's 3-D view (0 = w, 1 = h, 2 = c) that numpy axis `axis` of a
/// `dims`-D blob lies along: 1-D blobs lie along c, 2-D ones as c rows of w.
pub(crate) fn view_axis(dims: u8, axis: usize) -> Option<usize> {
    match (dims, axis) {
        (1..=3, 0) => Some(2),
        (2, 1) | (3, 2) => Some(0),
        (3, 1) => Some(1),
        _ => None,
    }
}

/// The axis of the four axes of GPU mats (0 = w, 1 = h, 2 = d, 3 = c, as
/// [`GpuMat::space`](crate::tensor::GpuMat::space) gives their extents) that numpy axis
/// `axis` of a `dims`-D blob lies along.
pub(crate) fn space_axis(dims: u8, axis: usize) -> Option<usize> {
    match (dims, axis) {
        (1..=4, 0) => Some(3),
        (2, 1) | (3, 2) | (4, 3) => Some(0),
        (3, 1) | (4, 2) => Some(1),
        (4, 1) => Some(2),
        _ => None,
    }
}

/// Values per numpy axis of a `dims`-D blob placed at their axes of the four GPU mat axes
/// ([`space_axis`]), `fill` at the axes the blob does not have.
pub(crate) fn to_space<T: Copy>(dims: u8, per_axis: &[T], fill: T) -> [T; 4] {
    let mut out = [fill; 4];
    for (k, v) in per_axis.iter().enumerate() {
        if let Some(a) = space_axis(dims, k) {
            out[a] = *v;
        }
    }
    out
}

/// The numpy shape (outermost first) of a blob of `dims` and `[w, h, d, c]`.
pub(crate) fn numpy_shape(dims: u8, [w, h, d, c]: [usize; 4]) -> Vec<usize> {
    match dims {
        1 => vec![w],
        2 => vec![h, w],
        3 => vec![c, h, w],
        _ => vec![c, d, h, w],
    }
}

/// The dims and `[w, h, d, c]` of a numpy shape of 1 to 4 axes (outermost first).
pub(crate) fn from_numpy_shape(np: &[usize]) -> Result<BlobShape> {
    match *np {
        [w] => Ok(BlobShape {
            dims: 1,
            shape: [w, 1, 1, 1],
        }),
        [h, w] => Ok(BlobShape {
            dims: 2,
            shape: [w, h, 1, 1],
        }),
        [c, h, w] => Ok(BlobShape {
            dims: 3,
            shape: [w, h, 1, c],
        }),
        [c, d, h, w] => Ok(BlobShape {
            dims: 4,
            shape: [w, h, d, c],
        }),
        _ => Err(InputError::Dims {
            got: np.len().min(255) as u8,
            takes: "blobs of 1 to 4 dims",
        }
        .into()),
    }
}

/// `axis` (negative counts from the end) as an index into a `dims`-axis numpy shape.
pub(crate) fn positive_axis(axis: i32, dims: usize) -> Result<usize> {
    let a = if axis < 0 { axis + dims as i32 } else { axis };
    if (0..dims as i32).contains(&a) {
        Ok(a as usize)
    } else {
        Err(InputError::Axis { axis, dims }.into())
    }
}

/// [`positive_axis`], except that a 1-D blob takes any axis as its only one (ncnn's GLU and
/// CumulativeSum ignore the axis there).
pub(crate) fn positive_axis_or_only(axis: i32, dims: usize) -> Result<usize> {
    if dims == 1 {
        Ok(0)
    } else {
        positive_axis(axis, dims)
    }
}

/// Checks that a blob is 3-D, as the layers over planes (pooling, LRN, the convolutions)
/// take them.
pub(crate) fn planar(dims: u8) -> Result<()> {
    if dims == 3 {
        Ok(())
    } else {
        Err(InputError::Dims {
            got: dims,
            takes: "3-D blobs",
        }
        .into())
    }
}

/// A mat's values in unpacked ncnn order without padding: borrowed where the storage already
/// is that (fp32, pack 1, channels back to back), else copied.
pub(crate) fn dense_values(m: &Mat) -> Cow<'_, [f32]> {
    let n = m.outer() * m.inner() * m.elempack;
    match m.f32() {
        Ok(v)
            if m.elempack == 1
                && (m.dims <= 2 || m.outer() <= 1 || m.cstep == m.inner())
                && v.len() >= n =>
        {
            Cow::Borrowed(&v[..n])
        }
        _ => Cow::Owned(m.to_values()),
    }
}

/// The fp32 values of each channel of `m` and the step between channels: its own storage
/// where it is fp32 pack1 (what the net gives), else a copy of its values.
pub(crate) fn channel_planes(m: &Mat) -> (Cow<'_, [f32]>, usize) {
    match m.f32() {
        Ok(data) if m.elempack == 1 => (Cow::Borrowed(data), m.cstep),
        // a packed fp32 map unpacked in parallel, its channels as that layout has them
        Ok(_) if m.dims >= 3 => match m.to_packing(1) {
            Ok(mut u) => {
                let values = match &mut u.data {
                    MatData::F32(v) => std::mem::take(v),
                    _ => u.to_values(),
                };
                (Cow::Owned(values), u.cstep)
            }
            _ => (Cow::Owned(m.to_values()), m.w * m.h * m.d),
        },
        _ => (Cow::Owned(m.to_values()), m.w * m.h * m.d),
    }
}

/// A fp32 pack1 mat of `c` channels, each plane shaped as `like`'s (3-D or 4-D), channel `q`
/// a copy of channel `pick(q).1` of input `pick(q).0` (from [`channel_planes`]): the channel
/// moves of Concat, Slice and ShuffleChannel as one plane copy each, in parallel over channels
/// where there is enough to copy.
pub(crate) fn gather_channels(
    like: &Mat,
    c: usize,
    inputs: &[(Cow<'_, [f32]>, usize)],
    pick: impl Fn(usize) -> (usize, usize) + Sync,
) -> Result<Mat> {
    use rayon::prelude::*;
    let [w, h, d, _] = like.shape();
    let plane = w * h * d;
    let mut top = Mat::for_writing(like.dims, [w, h, d, c], 1, crate::tensor::ElemType::F32)?;
    let cstep = top.cstep.max(1);
    top.f32_mut()?
        .par_chunks_mut(cstep)
        .with_min_len(crate::layer::shared::grain::min_items(plane))
        .enumerate()
        .for_each(|(q, dst)| {
            let (i, ch) = pick(q);
            let (src, step) = &inputs[i];
            dst[..plane].copy_from_slice(&src[ch * step..ch * step + plane]);
        });
    Ok(top)
}

/// The tops of a layer that only moves channels ([`crate::layer::Layer::channel_moves`]), fp32
/// pack1, each plane shaped as the first input's.
pub(crate) fn move_channels(
    bottoms: &[Mat],
    moves: &crate::layer::contract::ChannelMoves,
) -> Result<Vec<Mat>> {
    let first = first_input(bottoms)?;
    let inputs: Vec<_> = bottoms.iter().map(channel_planes).collect();
    moves
        .iter()
        .map(|top| gather_channels(first, top.len(), &inputs, |q| top[q]))
        .collect()
}

/// Checks that a `kernel` (`[w, h]`, counted as `what`) fits the `padded` input plane.
pub(crate) fn kernel_fits(
    what: &'static str,
    kernel: [usize; 2],
    padded: [usize; 2],
) -> Result<()> {
    if padded[0] < kernel[0] || padded[1] < kernel[1] {
        return Err(InputError::Window {
            what,
            kernel,
            input: padded,
        }
        .into());
    }
    Ok(())
}

/// The first of a layer's inputs, which must have at least one.
pub(crate) fn first_input<T>(bottoms: &[T]) -> Result<&T> {
    bottoms.first().ok_or_else(|| {
        InputError::Count {
            got: 0,
            expected: "at least 1",
        }
        .into()
    })
}

/// Values of a blob of `[w, h, d, c]` (the extents a blob lacks are 1).
pub(crate) fn count(shape: [usize; 4]) -> usize {
    shape.iter().product()
}

/// The values along the packed axis of a blob of `dims` and `[w, h, d, c]`: w for 1-D, h for
/// 2-D, c otherwise.
pub fn channels(dims: u8, [w, h, _, c]: [usize; 4]) -> usize {
    match dims {
        1 => w,
        2 => h,
        _ => c,
    }
}
