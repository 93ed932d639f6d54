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
pub use storage::{Int8Scale, StorageFormat};
pub use strided::{Strided, contiguous_strides};
pub use texture::{download_texture, upload_texture};

/// A blob's shape as layers are asked about it, before it exists ([`Mat::blob_shape`],
/// [`GpuMat::blob_shape`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlobShape {
    /// 1 to 4.
    pub dims: u8,
    /// `[w, h, d, c]` in unpacked values, 1 past `dims` ([`Mat::shape`]).
    pub shape: [usize; 4],
}

impl BlobShape {
    /// The shape of a `dims`-D blob of extents `shape` (`[w, h, d, c]`).
    pub const fn new(dims: u8, shape: [usize; 4]) -> BlobShape {
        BlobShape { dims, shape }
    }

    /// How many values it holds.
    pub fn values(&self) -> usize {
        self.shape.iter().product()
    }
}

/// Values per parallel task of a copy or gather: 128 KiB, a copy's worth waking a thread for.
pub(crate) const COPY_GRAIN: usize = 1 << 15;
