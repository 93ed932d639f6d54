//! Channel orders absorbed into the layer before them, at load: where a layer only reorders
//! its one input's channels ([`Layer::channel_order`]: ShuffleChannel) and that input is the
//! one output of a layer that can reorder its own outputs ([`Layer::reorder_outputs`]: a dense
//! or grouped convolution) and is read by nothing else, the producer writes the reordered
//! channels straight into the order's output blob, and shufflenet's 15 shuffles need no pass.
//! The order's layer stays, inverted, making the blob between them from that output where an
//! extract asks for it (the net runs only what a target needs). Done for nets with a device
//! only: on the CPU a grouped layer made dense costs more than the shuffle's copy.
//!
//! [`Layer::channel_order`]: crate::layer::Layer::channel_order
//! [`Layer::reorder_outputs`]: crate::layer::Layer::reorder_outputs

use super::Net;

/// One absorbed order: the producer, the order's layer, the blob between them and the
/// order's output.
#[derive(Clone, Copy, Debug)]
pub(super) struct Absorbed {
    producer: usize,
    order: usize,
    between: usize,
    out: usize,
}

impl Net {
    /// After every layer's `load_model`: puts back the graph of the last absorption (a reload
    /// restored the producers' parameters), then absorbs each order it can.
    pub(super) fn absorb_channel_orders(&mut self) {
        for a in std::mem::take(&mut self.absorbed).into_iter().rev() {
            self.rewire(a, false);
        }
        let on_device = self.ctx.is_some() && self.opt.use_vulkan_compute;
        if !on_device {
            return;
        }
        for j in 0..self.layers.len() {
            let found = self.absorbable(j).and_then(|a| {
                let channels = self.layers[a.producer].layer.output_channels()?;
                Some((a, channels))
            });
            let Some((a, channels)) = found else {
                continue;
            };
            let Some(order) = self.layers[j].layer.channel_order(channels) else {
                continue;
            };
            // the order's layer inverted first, so that a producer that declines leaves
            // nothing half done (the inversion is undone)
            if self.layers[j].layer.invert_channel_order() {
                if self.layers[a.producer].layer.reorder_outputs(&order) {
                    self.rewire(a, true);
                    self.absorbed.push(a);
                } else {
                    self.layers[j].layer.invert_channel_order();
                }
            }
        }
    }

    /// Layer `j` and its input's producer where `j` has one input and one output, and the
    /// producer one output that only `j` reads, not in place.
    fn absorbable(&self, j: usize) -> Option<Absorbed> {
        let l = &self.layers[j];
        let (&[between], &[out]) = (&l.bottoms[..], &l.tops[..]) else {
            return None;
        };
        let producer = self.blobs[between].producer?;
        let p = &self.layers[producer];
        let fits = producer < j
            && p.tops == [between]
            && self.blobs[between].consumers == [j]
            && !p.support.inplace
            && !l.support.inplace;
        fits.then_some(Absorbed {
            producer,
            order: j,
            between,
            out,
        })
    }

    /// Absorbed (`on`): the producer writes `out`, and the order's layer (inverted) reads it
    /// and writes `between`, which nothing reads; else the graph as the model gave it.
    fn rewire(&mut self, a: Absorbed, on: bool) {
        let (written, made) = if on {
            (a.out, a.between)
        } else {
            (a.between, a.out)
        };
        self.layers[a.producer].tops = vec![written];
        self.layers[a.order].bottoms = vec![written];
        self.layers[a.order].tops = vec![made];
        self.blobs[written].producer = Some(a.producer);
        self.blobs[made].producer = Some(a.order);
        if on {
            // the model's readers of `out` read the producer's output now, after the order
            let readers = std::mem::take(&mut self.blobs[a.out].consumers);
            self.blobs[a.out].consumers = std::iter::once(a.order).chain(readers).collect();
        } else {
            self.blobs[a.out].consumers.retain(|&r| r != a.order);
            self.layers[a.order].layer.invert_channel_order();
        }
        self.blobs[a.between].consumers = if on { Vec::new() } else { vec![a.order] };
    }
}
