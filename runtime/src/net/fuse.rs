//! Activations folded into the layer before them on the device, per run: a GPU layer whose
//! only output is read by an activation layer alone (not the blob asked for) runs with that
//! activation in its epilogue ([`Layer::forward_gpu_activated`]), and the activation layer
//! does not run: one dispatch and one blob fewer (efficientnetv2's 55 convolutions each
//! followed by a Swish, resnet's and shufflenet's ReLU after each residual Eltwise). The blob
//! between them is never made; an extract that asks for it runs its layer again, unfused.
//!
//! [`Layer::forward_gpu_activated`]: crate::layer::Layer::forward_gpu_activated

use super::extractor::Extractor;
use crate::layer::FusedActivation;

impl Extractor<'_> {
    /// The activation layer after GPU layer `i` that `i` may apply in its epilogue this run,
    /// and its activation: the one reader of `i`'s one output, which is not `target`, on the
    /// device with the same options, reading that blob alone into one output of its own.
    pub(super) fn fusable_activation(
        &self,
        i: usize,
        needed: &[bool],
        target: usize,
    ) -> Option<(usize, FusedActivation)> {
        let net = self.net;
        let l = &net.layers[i];
        let [t] = l.tops[..] else {
            return None;
        };
        let [j] = net.blobs[t].consumers[..] else {
            return None;
        };
        let next = &net.layers[j];
        let fits = t != target
            && needed[j]
            && !l.support.inplace
            && next.on_gpu
            && !next.support.alias
            && next.bottoms == [t]
            && next.tops.len() == 1
            && next.gpu_options == l.gpu_options;
        Some((j, fits.then(|| next.layer.gpu_activation()).flatten()?))
    }
}
