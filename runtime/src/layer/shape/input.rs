//! Input: names the net's inputs and passes them through, in any layout.

use crate::error::Result;
use crate::layer::contract::{Layer, Support};
use crate::layer::run_options::RunOptions;
use crate::tensor::Mat;

/// Names the net's inputs; passes them through.
#[derive(Default)]
pub struct Input;

impl Layer for Input {
    fn support(&self) -> Support {
        Support {
            int8_storage: true,
            user_input: true,
            ..Support::any_layout_inplace()
        }
    }

    fn forward_inplace(&self, _blob: &mut Mat, _opt: &RunOptions) -> Result<()> {
        Ok(())
    }
}
