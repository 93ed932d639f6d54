//! ShuffleChannel: `0=group 1=reverse`: channels seen as `group × (c / group)` come out
//! transposed (reversed: seen as `(c / group) × group`).

use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{ChannelMoves, GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shape::gather::{Border, Gather, GatherMap, record_shuffle};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::move_channels;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat, StorageFormat, Strided};

/// ShuffleChannel: `0=group`, `1=reverse`. Channels seen as `group × (c / group)` come out
/// transposed (reversed: seen as `(c / group) × group`).
#[derive(Default)]
pub struct ShuffleChannel {
    group: usize,
    reverse: bool,
    gpu: Option<Gather>,
    /// The GPU forward takes packed blobs (their scalar views are the layout's).
    packed: bool,
}

impl ShuffleChannel {
    /// The groups the channels are seen as (`reverse` swaps the two factors), checked.
    fn groups(&self, dims: u8, channels: usize) -> Result<usize> {
        if dims < 3 {
            return Err(InputError::Dims {
                got: dims,
                takes: "3-D or 4-D blobs",
            }
            .into());
        }
        // no channels would make a group of none (reversed)
        if channels == 0 || !channels.is_multiple_of(self.group) {
            return Err(InputError::Values {
                what: "channels",
                got: channels,
                expected: self.group,
            }
            .into());
        }
        Ok(if self.reverse {
            channels / self.group
        } else {
            self.group
        })
    }
}

impl Layer for ShuffleChannel {
    fn support(&self) -> Support {
        // blobs stay in the packing they come in: a pack1 ShuffleChannel between pack4 layers
        // cost shufflenet two conversions per block, a pack4 one between pack1 layers as many
        let on = self.gpu.is_some();
        let s = if self.packed {
            Support {
                vulkan_any_packing: true,
                ..Support::ONE_BLOB.gpu(on)
            }
        } else {
            Support::ONE_BLOB.gpu_pack1(on)
        };
        s.gpu_4d()
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let map = GatherMap::Shuffle { group: 1, pack: 1 };
        self.gpu = match gpu {
            Some(gpu) => Some(Gather::create(gpu, map, Border::Constant)?),
            None => None,
        };
        self.packed = gpu.is_some_and(|g| StorageFormat::scalar_views(g.options));
        Ok(())
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let gather = self.gpu.ready()?;
        let group = self.groups(bottom.dims, bottom.c * bottom.elempack)?;
        record_shuffle(rec, gather, bottom, group)
    }

    fn channel_moves(&self, bottoms: &[BlobShape]) -> Option<ChannelMoves> {
        let &[
            BlobShape {
                dims,
                shape: [.., c],
            },
        ] = bottoms
        else {
            return None;
        };
        self.groups(dims, c).ok()?;
        let order = self.channel_order(c)?;
        Some(vec![order.into_iter().map(|i| (0, i)).collect()])
    }

    fn channel_order(&self, channels: usize) -> Option<Vec<usize>> {
        // output channel q * group + i is input channel i * (c / group) + q
        let group = self.groups(3, channels).ok()?;
        let per = channels / group;
        Some(
            (0..channels)
                .map(|q| (q % group) * per + q / group)
                .collect(),
        )
    }

    fn invert_channel_order(&mut self) -> bool {
        // channels seen as g × (c / g) and transposed come back seen as (c / g) × g
        self.reverse = !self.reverse;
        true
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.group = pd.int_in(0, 1, 1..=i32::MAX, "group of at least 1")? as usize;
        self.reverse = pd.int(1, 0) != 0;
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let shape = bottom.numpy_shape();
        let c = shape[0];
        let group = self.groups(bottom.dims, c)?;
        let plane: usize = shape[1..].iter().product();
        // output channel j * group + i is input channel i * (c / group) + j
        if let Some(moves) = self.channel_moves(&[bottom.blob_shape()]) {
            return move_channels(std::slice::from_ref(bottom), &moves)?
                .pop()
                .ok_or(InputError::Count {
                    got: 0,
                    expected: "1",
                })
                .map_err(Into::into);
        }
        let view = Strided {
            offset: 0,
            shape: vec![c / group, group, plane],
            strides: vec![plane as isize, ((c / group) * plane) as isize, 1],
        };
        Mat::from_numpy(&shape, &view.gather(&bottom.to_values())?)
    }
}
