//! Activations folded into the layer before them on the device, per run: a GPU layer whose
//! only output is read by an activation layer alone (not the blob asked for) runs with that
//! activation in its epilogue ([`Layer::forward_gpu_activated`]), and the activation layer
//! does not run: one dispatch and one blob fewer (efficientnetv2's 55 convolutions each
//! followed by a Swish, resnet's and shufflenet's ReLU after each residual Eltwise). The blob
//! between them is never made; an extract that asks for it runs its layer again, unfused.
//!
//! A convolution whose output is read only by a sum of two blobs (Eltwise, BinaryOp add:
//! resnet's shortcuts) adds the other blob in its epilogue where that one is on the device
//! already, and applies the activation after the sum too
//! ([`Layer::forward_gpu_residual`]): resnet50's block is one dispatch fewer, two where a
//! ReLU follows.
//!
//! [`Layer::forward_gpu_activated`]: crate::layer::Layer::forward_gpu_activated
//! [`Layer::forward_gpu_residual`]: crate::layer::Layer::forward_gpu_residual

use super::extractor::Extractor;
use crate::layer::FusedActivation;
use crate::tensor::StorageFormat;

/// What a GPU layer's epilogue takes in from the layers after it this run.
#[derive(Clone, Copy, Debug)]
pub(super) enum Fusion {
    /// The activation layer of this index.
    Activation(usize, FusedActivation),
    /// The sum layer `sum` adding blob `other` to the layer's output, and the activation
    /// layer after the sum where there is one.
    Residual {
        sum: usize,
        other: usize,
        act: Option<(usize, FusedActivation)>,
    },
}

impl Fusion {
    /// The layers it folds in, in order.
    pub(super) fn layers(&self) -> [Option<usize>; 2] {
        match *self {
            Fusion::Activation(j, _) => [Some(j), None],
            Fusion::Residual { sum, act, .. } => [Some(sum), act.map(|(k, _)| k)],
        }
    }
}

impl Extractor<'_> {
    /// What GPU layer `i` may fold in this run: a residual sum (and the activation after it)
    /// where one follows, else an activation.
    pub(super) fn fusion(&self, i: usize, needed: &[bool], target: usize) -> Option<Fusion> {
        match self.fusable_residual(i, needed, target) {
            Some(f) => Some(f),
            None => (self.fusable_activation(i, needed, target))
                .map(|(j, act)| Fusion::Activation(j, act)),
        }
    }

    /// GPU layer `i`'s one output and the one layer this run reads it with, where the net may
    /// fold that reader into `i`'s dispatch this run: the output is not `target`, `i` does not write in
    /// place, and the reader is needed, on the device with `i`'s options, not an alias, with
    /// one output.
    fn sole_reader(&self, i: usize, needed: &[bool], target: usize) -> Option<(usize, usize)> {
        let net = self.net;
        let l = &net.layers[i];
        let [t] = l.tops[..] else {
            return None;
        };
        // readers this run does not need do not read it (an absorbed channel order's inverse)
        let mut readers = net.blobs[t].consumers.iter().filter(|&&r| needed[r]);
        let (Some(&j), None) = (readers.next(), readers.next()) else {
            return None;
        };
        let next = &net.layers[j];
        let fits = t != target
            && needed[j]
            && !l.support.inplace
            && next.on_gpu
            && !next.support.alias
            && next.tops.len() == 1
            && next.gpu_options == l.gpu_options;
        fits.then_some((t, j))
    }

    /// The sum after GPU layer `i` that `i` may add in its epilogue this run: its sole reader
    /// ([`Self::sole_reader`]), a sum of that blob and another one on the device now in the
    /// storage the options give (what the sum would read as it is).
    fn fusable_residual(&self, i: usize, needed: &[bool], target: usize) -> Option<Fusion> {
        let (t, j) = self.sole_reader(i, needed, target)?;
        let options = self.net.layers[i].gpu_options;
        let sum = &self.net.layers[j];
        let other = match sum.bottoms[..] {
            [a, b] if a == t && b != t => b,
            [a, b] if b == t && a != t => a,
            _ => return None,
        };
        let ready = (self.gpu[other].as_ref()).is_some_and(|g| {
            g.format == StorageFormat::of(options, g.elempack)
                && g.options.contains(crate::Opt::Image) == options.contains(crate::Opt::Image)
        });
        let fits = ready && self.bands[other].is_none() && sum.layer.gpu_residual_sum();
        fits.then(|| Fusion::Residual {
            sum: j,
            other,
            act: self.fusable_activation(j, needed, target),
        })
    }

    /// The activation layer after GPU layer `i` that `i` may apply in its epilogue this run,
    /// and its activation: its sole reader ([`Self::sole_reader`]), reading that blob alone.
    fn fusable_activation(
        &self,
        i: usize,
        needed: &[bool],
        target: usize,
    ) -> Option<(usize, FusedActivation)> {
        let (t, j) = self.sole_reader(i, needed, target)?;
        let next = &self.net.layers[j];
        let act = (next.bottoms == [t]).then(|| next.layer.gpu_activation());
        Some((j, act.flatten()?))
    }
}
