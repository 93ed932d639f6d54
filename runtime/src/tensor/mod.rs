//! Tensors: the host [`Mat`] (fp32, fp16, bf16 or int8 elements, elempack 1/4/8, ncnn's layout),
//! the device [`GpuMat`], element encodings, and conversions between them (casts and repacking,
//! on the CPU and on the GPU through the built-in shaders).

pub(crate) mod bands;
pub(crate) mod channels;
pub(crate) mod elem;
pub(crate) mod gpu_mat;
pub(crate) mod mat;
pub(crate) mod packing;
pub(crate) mod pool;
pub(crate) mod repack;
pub(crate) mod reshape;
pub(crate) mod rows;
pub(crate) mod runs;
pub(crate) mod storage;
pub mod strided;
pub(crate) mod texture;
pub(crate) mod transfer;

pub use bands::{BandPart, Bands};
pub use channels::{CHANNEL_GATHER_MATS, channel_gather_table};
pub use gpu_mat::{GpuData, GpuMat, PendingDownload, gpu_cstep};
pub use mat::{ElemType, Mat, MatData};
pub use pool::{pooled_bytes, release_pooled_buffers};
pub use storage::StorageFormat;
pub use strided::{Strided, contiguous_strides};
pub use texture::{download_texture, upload_texture};

/// A blob's shape as layers are asked about it: its dims (1 to 4) and `[w, h, d, c]` in
/// unpacked values ([`Mat::shape`], [`GpuMat::shape`]).
pub type BlobShape = (u8, [usize; 4]);

/// Values per parallel task of a copy or gather: 128 KiB, a copy's worth waking a thread for.
pub(crate) const COPY_GRAIN: usize = 1 << 15;
