//! Output channels reordered at load ([`Layer::reorder_outputs`]): a channel shuffle after a
//! grouped convolution (shufflenet's 1×1 group convolutions, each followed by a
//! ShuffleChannel) becomes part of the convolution's weights, so the shuffle needs no pass of
//! its own. Reordered across groups, an output no longer reads its own group's inputs only:
//! the layer becomes a dense one whose weights are zero outside each output's group (group
//! times the products, which the GEMM engines take at a fraction of a separate pass's time
//! on the small maps these run over). The same form, in the identity order, lets a layer of a
//! few large groups take the device's implicit GEMM ([`Convolution::few_large_groups`]).
//!
//! [`Layer::reorder_outputs`]: crate::layer::Layer::reorder_outputs

use super::Convolution;
use crate::layer::conv::window::Rank;

/// The most groups a grouped layer may have to run as a dense one on the device.
const MAX_DENSE_GROUPS: usize = 4;
/// The fewest products per output (channels per group × kernel taps) for that.
const MIN_DENSE_PRODUCTS: usize = 256;

/// The group and weight count a reordered layer's parameters gave (`load_model` reads weights
/// in that form again).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ParamsForm {
    group: usize,
    weight_data_size: usize,
}

impl Convolution {
    /// Whether the device runs this grouped layer as a dense one (zero weights outside each
    /// output's group): a few groups of whole blocks of 4 channels whose outputs each sum at
    /// least [`MIN_DENSE_PRODUCTS`] products, as alexnet's 2-group 5×5 and 3×3 layers. The
    /// implicit GEMM does group times the products and still beats the direct grouped shader
    /// by far there (on an H200, alexnet's three took 95 us instead of 418); shufflenet's
    /// 3-group 1×1 layers of 40 channels a group took 13 us instead of 10, and many small
    /// groups (ResNeXt's, RegNet's) would multiply the work further.
    pub(super) fn few_large_groups(&self) -> bool {
        let w = &self.window;
        let cin_g = w.channels_per_group();
        (2..=MAX_DENSE_GROUPS).contains(&w.group)
            && !self.is_depthwise()
            && cin_g * w.taps_count() >= MIN_DENSE_PRODUCTS
            && cin_g.is_multiple_of(4)
            && (w.num_output / w.group).is_multiple_of(4)
    }

    /// [`Layer::reorder_outputs`](crate::layer::Layer::reorder_outputs): dense and grouped 2-D
    /// float layers with their weights loaded (not depthwise ones, whose outputs are their
    /// inputs' channels, nor int8 or dynamic-weight ones).
    pub(super) fn reorder(&mut self, order: &[usize]) -> bool {
        let w = &self.window;
        let outs = w.num_output;
        let taps = w.taps_count();
        let cin_g = w.channels_per_group();
        let fits = w.rank == Rank::Two
            && !w.dynamic
            && self.int8_scale_term == 0
            && !self.is_depthwise()
            && w.group > 0
            && outs.is_multiple_of(w.group)
            && self.weights.len() == outs * cin_g * taps
            && self.weights.len() == w.weight_data_size
            && order.len() == outs
            && order.iter().all(|&o| o < outs)
            && (self.bias.is_empty() || self.bias.len() == outs);
        if !fits {
            return false;
        }
        let (group, per_group) = (w.group, outs / w.group);
        let cin = cin_g * group;
        let row = cin_g * taps;
        let mut dense = vec![0.0; outs * cin * taps];
        for (q, &o) in order.iter().enumerate() {
            // output o reads input channels g · cin_g .. (g + 1) · cin_g of its group g
            let g = o / per_group;
            let at = (q * cin + g * cin_g) * taps;
            dense[at..at + row].copy_from_slice(&self.weights[o * row..(o + 1) * row]);
        }
        if !self.bias.is_empty() {
            self.bias = order.iter().map(|&o| self.bias[o]).collect();
        }
        self.params_form.get_or_insert(ParamsForm {
            group,
            weight_data_size: w.weight_data_size,
        });
        self.window.group = 1;
        self.window.weight_data_size = dense.len();
        self.weights = dense;
        true
    }

    /// Before weights are read (again): puts back the group and weight count of the
    /// parameters, and drops the CPU's layouts of the last weights (made on first use, they
    /// would outlive a reload).
    pub(super) fn reset_for_load(&mut self) {
        if let Some(form) = self.params_form.take() {
            self.window.group = form.group;
            self.window.weight_data_size = form.weight_data_size;
        }
        self.winograd = Default::default();
        self.lane_weights = Default::default();
        self.packed_panels = Default::default();
        self.packed_taps = Default::default();
    }
}
