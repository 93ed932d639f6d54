//! What PixelShuffle (depth to space) and Reorg (space to depth) both read: the factor and
//! the channel order of their params, and a 3-D blob's extents.

use crate::error::{Error, InputError, Result};
use crate::layer::params::ParamDict;

/// The upscale or stride factor `0=` of PixelShuffle and Reorg, and their `1=mode` (0 or 1).
pub(crate) fn factor_and_mode(pd: &ParamDict) -> Result<(usize, bool)> {
    let factor = pd.int(0, 1);
    let mode = pd.int(1, 0);
    if factor < 1 {
        return Err(Error::BadParam {
            id: 0,
            value: factor.to_string(),
            allowed: "a factor of at least 1",
        });
    }
    if !(0..=1).contains(&mode) {
        return Err(Error::BadParam {
            id: 1,
            value: mode.to_string(),
            allowed: "mode 0 or 1",
        });
    }
    Ok((factor as usize, mode == 1))
}

/// The `[c, h, w]` of a 3-D blob.
pub(crate) fn planes(np: &[usize]) -> Result<[usize; 3]> {
    match *np {
        [c, h, w] => Ok([c, h, w]),
        _ => Err(InputError::Dims {
            got: np.len().min(255) as u8,
            takes: "3-D blobs",
        }
        .into()),
    }
}
