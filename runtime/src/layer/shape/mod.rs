//! Layers that move values without computing them, and resizing: Concat, Slice, Crop, Permute,
//! the reshapes, Padding, Tile, Flip, the shuffles, Unfold and Fold (im2col and col2im), GridSample,
//! Packing, Input, MemoryData and Interp.

pub mod concat;
pub mod copyto;
pub mod crop;
pub mod deepcopy;
pub mod depth_space;
pub mod diag;
pub mod expanddims;
pub mod flatten;
pub mod flip;
pub mod fold;
pub mod gather;
pub mod glu;
pub mod gridsample;
pub(crate) mod im2col;
pub mod input;
pub mod interp;
pub mod memorydata;
pub mod packing;
pub mod padding;
pub mod permute;
pub mod pixelshuffle;
pub mod reorg;
pub mod reshape;
pub mod reshape_rule;
pub mod shufflechannel;
pub mod slice;
pub mod split;
pub mod squeeze;
pub mod tile;
pub mod unfold;
pub mod view_rule;
