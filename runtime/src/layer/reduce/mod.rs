//! Reductions over windows, axes and sequences: Pooling, Pooling1D, SPP, StatisticsPooling,
//! Reduction, ArgMax and CumulativeSum.

pub mod argmax;
pub mod cumulativesum;
pub mod pooling;
pub mod pooling1d;
pub mod reduction;
pub mod spp;
pub mod statisticspooling;
