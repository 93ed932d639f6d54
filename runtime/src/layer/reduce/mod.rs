//! Reductions over windows, axes and sequences: Pooling, SPP, StatisticsPooling, Reduction,
//! ArgMax and CumulativeSum.

pub mod argmax;
pub mod cumulativesum;
pub mod pooling;
pub mod reduction;
pub mod spp;
pub mod statisticspooling;
