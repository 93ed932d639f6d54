//! Reductions over windows, axes and sequences: Pooling, Pooling1D, Pooling3D, SPP, StatisticsPooling,
//! Reduction, ArgMax and CumulativeSum.

pub mod argmax;
pub mod cumulativesum;
pub(crate) mod pool_window;
pub mod pooling;
pub mod pooling1d;
pub mod pooling3d;
pub mod reduction;
pub mod spp;
pub mod statisticspooling;
