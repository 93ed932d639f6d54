//! What Unfold (im2col) and Fold (col2im) both read: the kernel window's params (`1=kernel_w
//! 11=kernel_h 2=dilation_w 12=dilation_h 3=stride_w 13=stride_h 4=pad_left 15=pad_right
//! 14=pad_top 16=pad_bottom`, ncnn's defaults: each `_h` its `_w`, right as left, top as left,
//! bottom as top) and the window positions over a padded map, with the words their shaders
//! take.

use crate::error::{Error, InputError, Result};
use crate::layer::params::ParamDict;

/// A kernel window sliding over a padded map.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Window {
    /// `[w, h]` each.
    pub kernel: [usize; 2],
    pub dilation: [usize; 2],
    pub stride: [usize; 2],
    /// left, right, top, bottom (-233 / -234 on all four: "same", upper / lower, Unfold's).
    pub pad: [i32; 4],
}

impl Window {
    /// Reads the params; a kernel, dilation or stride below 1, or padding below 0 (but the
    /// "same" modes where `same` allows them) is an error naming its id.
    pub fn load(pd: &ParamDict, same: bool) -> Result<Window> {
        let positive = |id: u32, v: i32| match v {
            1.. => Ok(v as usize),
            _ => Err(Error::BadParam {
                id,
                value: v.to_string(),
                allowed: "a value of at least 1",
            }),
        };
        let pair = |w_id: u32, h_id: u32, default: i32| -> Result<[usize; 2]> {
            let w = pd.int(w_id, default);
            Ok([positive(w_id, w)?, positive(h_id, pd.int(h_id, w))?])
        };
        let left = pd.int(4, 0);
        let top = pd.int(14, left);
        let pad = [left, pd.int(15, left), top, pd.int(16, top)];
        let same_mode = same && (pad == [-233; 4] || pad == [-234; 4]);
        if let Some((i, &p)) = (pad.iter().enumerate()).find(|(_, p)| **p < 0 && !same_mode) {
            return Err(Error::BadParam {
                id: [4, 15, 14, 16][i],
                value: p.to_string(),
                allowed: "padding of at least 0 (or -233 / -234 on all four sides: same)",
            });
        }
        let window = Window {
            kernel: pair(1, 11, 0)?,
            dilation: pair(2, 12, 1)?,
            stride: pair(3, 13, 1)?,
            pad,
        };
        // the taps and the reach in an i32, as ncnn checks them
        let fits = |v: Option<usize>| v.is_some_and(|v| v <= i32::MAX as usize);
        let [kw, kh] = window.kernel;
        let reach = |a: usize| (window.kernel[a] - 1).checked_mul(window.dilation[a]);
        if !fits(kw.checked_mul(kh)) || !fits(reach(0)) || !fits(reach(1)) {
            return Err(Error::BadParam {
                id: 1,
                value: format!("{kw}x{kh}"),
                allowed: "a kernel whose taps and reach fit an i32",
            });
        }
        Ok(window)
    }

    /// `[w, h]` of the kernel's reach, `dilation · (kernel - 1) + 1`.
    pub fn extent(&self) -> [usize; 2] {
        [0, 1].map(|a| self.dilation[a] * (self.kernel[a] - 1) + 1)
    }

    /// Kernel positions.
    pub fn taps(&self) -> usize {
        self.kernel[0] * self.kernel[1]
    }

    /// The padding `[left, right, top, bottom]` of a `w × h` map ("same" resolved as ncnn:
    /// the padding the stride needs, split with the odd one after (-233) or before (-234)).
    pub fn padding(&self, [w, h]: [usize; 2]) -> [usize; 4] {
        let ext = self.extent();
        let need = |a: usize, n: usize| {
            let s = self.stride[a];
            (ext[a] + (n.max(1) - 1) / s * s).saturating_sub(n)
        };
        let split = |total: usize| match self.pad[0] {
            -233 => [total / 2, total - total / 2],
            _ => [total - total / 2, total / 2],
        };
        match self.pad {
            [-233 | -234, ..] => {
                let [l, r] = split(need(0, w));
                let [t, b] = split(need(1, h));
                [l, r, t, b]
            }
            p => p.map(|v| v as usize),
        }
    }

    /// The window positions `[w, h]` over a padded map of `[w, h]`, or the error naming the
    /// map the kernel does not fit.
    pub fn positions(&self, padded: [usize; 2]) -> Result<[usize; 2]> {
        let ext = self.extent();
        if padded[0] < ext[0] || padded[1] < ext[1] {
            return Err(InputError::Mismatch {
                a: padded.to_vec(),
                b: ext.to_vec(),
                why: "(the padded map) is smaller than the kernel's reach",
            }
            .into());
        }
        Ok([0, 1].map(|a| (padded[a] - ext[a]) / self.stride[a] + 1))
    }

    /// The words the shaders read after the two shapes: kernel, dilation, stride (w then h),
    /// the left and top padding.
    pub fn words(&self, [left, _, top, _]: [usize; 4]) -> [u32; 8] {
        let [kw, kh] = self.kernel;
        let [dw, dh] = self.dilation;
        let [sw, sh] = self.stride;
        [kw, kh, dw, dh, sw, sh, left, top].map(|v| v as u32)
    }
}
