//! Split: one input shared by several outputs.

use crate::error::{Error, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::run_options::RunOptions;
use crate::tensor::Mat;

/// One input shared by several outputs (each consumer gets the same values).
#[derive(Default)]
pub struct Split;

impl Layer for Split {
    fn support(&self) -> Support {
        Support {
            int8_storage: true,
            alias: true,
            ..Support::MANY.any_cpu_layout()
        }
    }

    fn forward_many(&self, _bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        // the net knows how many tops there are and clones the one bottom into each
        Err(Error::NotImplemented {
            method: "forward_many (the net aliases Split's tops)",
        })
    }
}
