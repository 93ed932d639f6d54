//! Outputs appended to in place: a layer that can make its output by writing its other inputs
//! past its first input's values in that input's buffer ([`Layer::gpu_appends_to_first`]: a
//! Concat along the channels) is handed that buffer where nothing else reads the blob or shares
//! the buffer, and the layer producing such a first input leaves room past it
//! ([`Layer::set_gpu_output_appended`]). Real-ESRGAN's dense blocks chain their concats, each
//! the first input of the next: each new input is then copied once, where every concat copied
//! all the channels so far.
//!
//! [`Layer::gpu_appends_to_first`]: crate::layer::Layer::gpu_appends_to_first
//! [`Layer::set_gpu_output_appended`]: crate::layer::Layer::set_gpu_output_appended

use super::Net;
use super::extractor::Extractor;

impl Net {
    /// After `create_pipeline`: tells each GPU layer of one output whether that output is the
    /// first input of a GPU layer that appends to it, directly or through Splits.
    pub(super) fn plan_appends(&mut self) {
        for i in 0..self.layers.len() {
            let l = &self.layers[i];
            let on = l.on_gpu && l.tops.len() == 1 && self.appended_to(l.tops[0]);
            self.layers[i].layer.set_gpu_output_appended(on);
        }
    }

    /// Whether blob `b` is the first input of a GPU layer that appends to it (through the
    /// tops of layers whose outputs are their input).
    fn appended_to(&self, b: usize) -> bool {
        self.blobs[b].consumers.iter().any(|&r| {
            let reader = &self.layers[r];
            if reader.support.alias {
                return reader.tops.iter().any(|&t| self.appended_to(t));
            }
            reader.on_gpu
                && reader.bottoms.first() == Some(&b)
                && reader.layer.gpu_appends_to_first()
        })
    }
}

impl Extractor<'_> {
    /// Whether blob `b`, about to be read for the last time by a layer that appends to it, is
    /// that layer's alone: light mode, not the blob asked for, on the device (not in bands),
    /// and its buffer held by no other mat. (A Split's top qualifies once the other tops are
    /// gone: the buffer's handles count them, where the extractor's `shared` flag stays set;
    /// Real-ESRGAN's concats each reach the next through a Split.)
    pub(super) fn handed_over(&self, b: usize, remaining: &[usize], target: usize) -> bool {
        self.opt.lightmode
            && remaining[b] == 1
            && b != target
            && self.bands[b].is_none()
            && self.gpu[b].as_ref().is_some_and(|g| !g.buffer_is_shared())
    }
}
