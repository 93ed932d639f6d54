//! int8 storage between int8 layers on the device: a requantizing int8 layer writes its levels
//! (a byte each, [`StorageFormat::Int8`](crate::tensor::StorageFormat::Int8)) instead of their
//! values where every layer reading its output, through any Splits, is an int8 layer on the
//! device that quantizes its input with that same scale (as ncnn's converter writes a
//! requantized blob's scales). Any other reader (a pooling, a concat, the CPU) would need the
//! values, so its producer keeps writing them; a blob the user extracts is downloaded as its
//! values either way.

use super::Net;

impl Net {
    /// Tells each layer that can write int8 storage whether its readers take it.
    pub(super) fn plan_int8_storage(&mut self) {
        for i in 0..self.layers.len() {
            let l = &self.layers[i];
            let on = l.on_gpu
                && !l.gpu_options.contains(crate::Opt::Image)
                && l.tops.len() == 1
                && (l.layer.gpu_int8_output())
                    .is_some_and(|s| self.readers_take_int8(l.tops[0], s));
            self.layers[i].layer.set_gpu_int8_output(on);
        }
    }

    /// Whether blob `b` has readers and each reads int8 storage at `scale` on the device
    /// (through layers whose outputs are their input, whose own readers must).
    fn readers_take_int8(&self, b: usize, scale: f32) -> bool {
        let readers = &self.blobs[b].consumers;
        !readers.is_empty()
            && readers.iter().all(|&r| {
                let l = &self.layers[r];
                if l.support.alias {
                    return l.tops.iter().all(|&t| self.readers_take_int8(t, scale));
                }
                let takes = l.layer.gpu_int8_input();
                l.on_gpu
                    && l.bottoms.len() == 1
                    && takes.is_some_and(|s| s.to_bits() == scale.to_bits())
            })
    }
}
