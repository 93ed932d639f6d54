//! Normalizations: BatchNorm, the group-reduction norms (LayerNorm, GroupNorm, InstanceNorm,
//! RMSNorm, MVN, Normalize), LRN and Softmax.

pub mod batchnorm;
pub mod groupnorm;
pub mod instancenorm;
pub mod layernorm;
pub mod lrn;
pub mod mvn;
pub mod norm_rule;
pub mod normalize;
pub mod rmsnorm;
pub mod softmax;
