//! The layer contract: ncnn's `Layer` with its `support_*` flags, in Rust.

use crate::OptionSet;
use crate::error::{Error, Result};
use crate::tensor::BlobShape;
use std::sync::Arc;

use crate::gpu::specialize::{SpecValue, Specialization};
use crate::gpu::{Context, Pipeline, Recorder};
use crate::layer::epilogue::FusedActivation;
use crate::layer::params::ParamDict;
use crate::layer::rows::Rows;
use crate::layer::run_options::RunOptions;
use crate::layer::weights::Weights;
use crate::meta::ShaderModule;
use crate::tensor::{GpuMat, Mat};

/// The elempacks a GPU forward takes (a set of 1, 4 and 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packs(u8);

impl Packs {
    /// Every elempack.
    pub const ALL: Packs = Packs(1 | 4 | 8);
    /// pack1 and pack4: pack8 blobs come as pack4.
    pub const UP_TO_4: Packs = Packs(1 | 4);
    /// pack1 only.
    pub const ONE: Packs = Packs(1);

    /// Whether `elempack` is in the set.
    pub fn contains(self, elempack: usize) -> bool {
        matches!(elempack, 1 | 4 | 8) && self.0 & (elempack as u8) != 0
    }
}

/// What a layer declares it can take (ncnn's `support_*` fields and `one_blob_only`, and the
/// GPU flags the net needs to convert every input itself). The net calls only the forward
/// methods these promise, and converts inputs to what they allow: a layer never repacks or
/// converts its own inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Support {
    /// One input, one output: the single-mat forward methods are called.
    pub one_blob_only: bool,
    /// Output written over the input: the in-place forward methods are called.
    pub inplace: bool,
    /// A GPU implementation exists.
    pub vulkan: bool,
    /// CPU inputs may be packed (elempack 4/8) when the channels allow.
    pub packing: bool,
    /// CPU inputs may have any elempack; none is forced.
    pub any_packing: bool,
    /// With `any_packing`, CPU inputs in one elempack: the largest any of them has, for every
    /// input whose channels it divides (a broadcast operand keeps its own), so that inputs of
    /// one shape meet in one layout.
    pub same_packing: bool,
    /// GPU inputs may be pack4 (pack8 with `use_shader_pack8`) when the channels allow.
    pub vulkan_packing: bool,
    /// GPU inputs may have any elempack.
    pub vulkan_any_packing: bool,
    /// The elempacks the GPU forward has shaders for: the net gives the largest the channels
    /// and options allow within the set ([`Layer::gpu_packs`] may narrow it per shape).
    pub vulkan_packs: Packs,
    /// GPU inputs whose channels are not a multiple of 4 come as pack4 with zero channels
    /// added (ncnn's Packing `use_padding`), buffers only.
    pub vulkan_pad_to_pack4: bool,
    /// All GPU inputs in one elempack (the smallest the net would give any of them).
    pub vulkan_same_packing: bool,
    /// The GPU forward takes image mats: in nets with image storage a layer without it runs
    /// on the CPU. Read before `create_pipeline`, which gets no device then.
    pub vulkan_images: bool,
    /// The GPU forward takes 4-D blobs, which shaders see as 3-D (`w × h·d × c`, the rows of
    /// the `d` slabs one after another): elementwise layers as they are, the others reading
    /// [`GpuMat::space`]. Without it a layer runs 4-D blobs on the CPU.
    pub vulkan_4d: bool,
    /// The in-place GPU forward leaves its input as it was and hands back a new mat (its shader
    /// reads one binding and writes another): the net gives it a blob others still read
    /// without copying it first.
    pub vulkan_inplace_new: bool,
    /// The layer names a blob the user sets (ncnn's Input): the net never runs it, and a
    /// missing input is an error naming the blob.
    pub user_input: bool,
    /// Every output is the input itself (ncnn's Split): the net hands the blob on where it is,
    /// host or device, without running the layer or waiting for the device.
    pub alias: bool,
    /// CPU inputs may be bf16.
    pub bf16_storage: bool,
    /// CPU inputs may be fp16.
    pub fp16_storage: bool,
    /// CPU inputs may be int8.
    pub int8_storage: bool,
}

impl Default for Support {
    /// Many blobs in, new blobs out, fp32 pack1 on the CPU, no GPU.
    fn default() -> Self {
        Support::MANY
    }
}

impl Support {
    /// Many blobs in, new blobs out, fp32 pack1 on the CPU, no GPU.
    pub const MANY: Support = Support {
        one_blob_only: false,
        inplace: false,
        vulkan: false,
        packing: false,
        any_packing: false,
        same_packing: false,
        vulkan_packing: false,
        vulkan_any_packing: false,
        vulkan_packs: Packs::ALL,
        vulkan_pad_to_pack4: false,
        vulkan_same_packing: false,
        vulkan_images: false,
        vulkan_4d: false,
        vulkan_inplace_new: false,
        user_input: false,
        alias: false,
        bf16_storage: false,
        fp16_storage: false,
        int8_storage: false,
    };
    /// One blob in, one new blob out, fp32 pack1 on the CPU.
    pub const ONE_BLOB: Support = Support {
        one_blob_only: true,
        ..Support::MANY
    };
    /// One blob, overwritten, fp32 pack1 on the CPU.
    pub const ONE_BLOB_INPLACE: Support = Support {
        inplace: true,
        ..Support::ONE_BLOB
    };

    /// These flags with a GPU forward when `on`, taking packed inputs (`vulkan_packing`).
    pub const fn gpu(self, on: bool) -> Support {
        Support {
            vulkan: on,
            vulkan_packing: true,
            ..self
        }
    }

    /// These flags with a GPU forward when `on`, on pack1 inputs only.
    pub const fn gpu_pack1(self, on: bool) -> Support {
        Support {
            vulkan: on,
            vulkan_packing: false,
            ..self
        }
    }

    /// These flags with GPU inputs limited to `packs`.
    pub const fn packs(self, packs: Packs) -> Support {
        Support {
            vulkan_packs: packs,
            ..self
        }
    }

    /// These flags with GPU inputs in whatever elempack they come (`vulkan_any_packing`): a
    /// layer with a shader for every pack, which gains nothing from a conversion.
    pub const fn gpu_any_packing(self) -> Support {
        Support {
            vulkan_any_packing: true,
            ..self
        }
    }

    /// These flags with image mats taken on the GPU.
    pub const fn images(self) -> Support {
        Support {
            vulkan_images: true,
            ..self
        }
    }

    /// These flags with 4-D blobs taken on the GPU.
    pub const fn gpu_4d(self) -> Support {
        Support {
            vulkan_4d: true,
            ..self
        }
    }

    /// These flags with an in-place GPU forward that writes a new mat (`vulkan_inplace_new`).
    pub const fn gpu_writes_new(self) -> Support {
        Support {
            vulkan_inplace_new: true,
            ..self
        }
    }

    /// These flags with CPU inputs in any elempack and fp32/fp16/bf16 as they come.
    pub const fn any_cpu_layout(self) -> Support {
        Support {
            packing: true,
            any_packing: true,
            bf16_storage: true,
            fp16_storage: true,
            ..self
        }
    }

    /// One blob overwritten in place, CPU inputs in any layout (the activations).
    pub const fn any_layout_inplace() -> Support {
        Support::ONE_BLOB_INPLACE.any_cpu_layout()
    }

    /// One blob in and out, every layout and storage as it comes on both sides, int8 too
    /// (Packing, Cast): on the GPU when `gpu`.
    pub const fn any_layout(gpu: bool) -> Support {
        Support {
            int8_storage: true,
            vulkan_any_packing: true,
            vulkan_4d: true,
            ..Support::ONE_BLOB.any_cpu_layout().gpu(gpu)
        }
    }
}

/// Which forward methods a layer implements; checked against its [`Support`] when the net
/// creates pipelines, so a flag without its method is an error then, not later.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Implements {
    /// [`Layer::forward`].
    pub forward: bool,
    /// [`Layer::forward_many`].
    pub forward_many: bool,
    /// [`Layer::forward_inplace`].
    pub forward_inplace: bool,
    /// [`Layer::forward_many_inplace`].
    pub forward_many_inplace: bool,
    /// [`Layer::forward_gpu`].
    pub forward_gpu: bool,
    /// [`Layer::forward_gpu_many`].
    pub forward_gpu_many: bool,
    /// [`Layer::forward_gpu_inplace`].
    pub forward_gpu_inplace: bool,
}

impl Implements {
    const NONE: Implements = Implements {
        forward: false,
        forward_many: false,
        forward_inplace: false,
        forward_many_inplace: false,
        forward_gpu: false,
        forward_gpu_many: false,
        forward_gpu_inplace: false,
    };
    /// Exactly the methods `support` calls for: the CPU forward of its blob count and in-place
    /// flag, and the GPU forward with them where it runs on the device.
    pub const fn called_for(support: Support) -> Implements {
        let mut i = Implements::NONE;
        match (support.one_blob_only, support.inplace) {
            (true, true) => i.forward_inplace = true,
            (true, false) => i.forward = true,
            (false, true) => i.forward_many_inplace = true,
            (false, false) => i.forward_many = true,
        }
        if support.vulkan {
            match (support.one_blob_only, support.inplace) {
                (true, true) => i.forward_gpu_inplace = true,
                (true, false) => i.forward_gpu = true,
                (false, _) => i.forward_gpu_many = true,
            }
        }
        i
    }
}

/// The device side a layer creates pipelines and uploads weights for.
#[derive(Clone, Copy)]
pub struct GpuSetup<'a> {
    /// The device.
    pub ctx: &'a Context,
    /// The shader variant options the net's GPU mats use for this layer.
    pub options: OptionSet,
}

impl GpuSetup<'_> {
    /// The pipeline of `module` in this layer's variant options, specialized with `values`
    /// (`constant_id`, value): how a layer builds a shader it has one of.
    pub fn pipeline(
        &self,
        module: &'static ShaderModule,
        values: &[(u32, SpecValue)],
    ) -> Result<Arc<Pipeline>> {
        let spec = Specialization {
            values: values.to_vec(),
            local_size: None,
        };
        self.ctx.pipeline(module, self.options, &spec)
    }

    /// Uploads `values` as a 1-D weight mat of `elempack` in this layer's storage: how a
    /// layer's weights and biases reach its shaders.
    pub fn upload_values(&self, values: &[f32], elempack: usize) -> Result<GpuMat> {
        let flat = Mat::from_shape_values(1, [values.len(), 1, 1, 1], values)?;
        GpuMat::upload(self.ctx, &flat.to_packing(elempack)?, self.options)
    }
}

/// Per top, the `(bottom, channel)` each of its channels is a copy of
/// ([`Layer::channel_moves`]).
pub type ChannelMoves = Vec<Vec<(usize, usize)>>;

/// The error a forward method's default gives.
fn missing(method: &'static str) -> Error {
    Error::NotImplemented { method }
}

/// One layer: its parameters, weights, pipelines and forward methods.
pub trait Layer: Send + Sync {
    /// What inputs it can take (may change in `load_param`, `load_model` or
    /// `create_pipeline`, as the seed's "dynamically").
    fn support(&self) -> Support;

    /// Which forward methods it implements. The default is the methods its [`Support`] calls
    /// for, as ncnn picks the forward from the same flags; a layer overrides it where it has more
    /// than one (its flags change with its parameters), and the net checks the flags against it.
    fn implements(&self) -> Implements {
        Implements::called_for(self.support())
    }

    /// Reads its parameters.
    fn load_param(&mut self, _pd: &ParamDict) -> Result<()> {
        Ok(())
    }

    /// Reads its weights in ncnn's load order.
    fn load_model(&mut self, _weights: &mut Weights<'_>) -> Result<()> {
        Ok(())
    }

    /// Prepares to run with `opt`; `gpu` is set when the net runs this layer on a device.
    fn create_pipeline(&mut self, _opt: &RunOptions, _gpu: Option<GpuSetup<'_>>) -> Result<()> {
        Ok(())
    }

    /// Moves its weights to the device, once per net.
    fn upload_model(&mut self, _gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        Ok(())
    }

    /// How many outputs the net gives it (ncnn's `Layer::tops`), told before `load_param`: a
    /// layer whose output count is a parameter of its forward (Slice) reads it here.
    fn set_top_count(&mut self, _count: usize) {}

    /// Whether the GPU path takes inputs of these shapes (`(dims, [w, h, d, c])` per input).
    /// A layer with shaders for only some shapes declines the others, and the net runs its CPU
    /// path for that forward instead; asked before anything is recorded.
    fn gpu_accepts(&self, _bottoms: &[BlobShape]) -> bool {
        true
    }

    /// The elempacks the GPU forward takes for inputs of these shapes, where a layer's shaders
    /// depend on the shape; `None`: [`Support::vulkan_packs`]. The net converts to the largest
    /// allowed.
    fn gpu_packs(&self, _bottoms: &[BlobShape]) -> Option<Packs> {
        None
    }

    /// Where the layer only moves whole channels of 3-D or 4-D inputs of these shapes (Concat,
    /// Slice and ShuffleChannel along the channels): per top, the `(bottom, channel)` each of
    /// its channels copies. The net runs a chain of such layers as one gather (light mode,
    /// each link read by the next alone); `None` (the default) where the layer computes, or
    /// declines these shapes.
    fn channel_moves(&self, _bottoms: &[BlobShape]) -> Option<ChannelMoves> {
        None
    }

    /// Where the layer only reorders the channels of its one 3-D or 4-D input by an order
    /// their count alone sets (ShuffleChannel): for `channels` channels, output channel `q` is
    /// input channel `order[q]`. `None` (the default) otherwise, or for a count it refuses.
    /// The net absorbs such an order into the layer before it ([`Layer::reorder_outputs`]).
    fn channel_order(&self, _channels: usize) -> Option<Vec<usize>> {
        None
    }

    /// Makes a layer with a [`Layer::channel_order`] apply that order's inverse (or, called
    /// again, the order itself): what the net runs where the blob before an absorbed order
    /// is asked for. `false` (the default) where it cannot.
    fn invert_channel_order(&mut self) -> bool {
        false
    }

    /// The channels of its output, where its parameters set them whatever the input
    /// (a convolution's `num_output`); `None` (the default) otherwise.
    fn output_channels(&self) -> Option<usize> {
        None
    }

    /// After `load_model`, before `create_pipeline`: reorders its output channels so that
    /// output `q` is what output `order[q]` was (a grouped convolution becomes a dense one
    /// whose weights are zero outside each output's group), so that a channel order after it
    /// needs no pass of its own. `false` (the default) where it cannot; nothing changed then.
    /// `load_model` again restores the form of its parameters.
    fn reorder_outputs(&mut self, _order: &[usize]) -> bool {
        false
    }

    /// How the GPU forward's output rows read the rows of a 3-D input of this shape, where it
    /// can run on bands of rows, each a forward of its own (a window with fixed padding, an
    /// integral upscale, an elementwise function); `None` (the default) where an output row
    /// may read any input row, or the padding or the steps depend on the input's height. The
    /// net runs a blob past a buffer of the device through such layers in bands.
    fn gpu_rows(&self, _bottom: BlobShape) -> Option<Rows> {
        None
    }

    /// The scale at which the GPU forward reads an input of int8 storage
    /// ([`StorageFormat::Int8`](crate::tensor::StorageFormat::Int8)) as its levels: an int8
    /// layer whose shaders quantize their input with that scale. `None` (the default): the
    /// net hands it values.
    fn gpu_int8_input(&self) -> Option<f32> {
        None
    }

    /// The scale at which the GPU forward can write its output as int8 storage (a
    /// requantizing int8 layer); `None` (the default) where it cannot.
    fn gpu_int8_output(&self) -> Option<f32> {
        None
    }

    /// Told once by the net after `create_pipeline`: whether every reader of the output takes
    /// int8 storage at [`Layer::gpu_int8_output`]'s scale, so that the GPU forward writes it
    /// (where its shaders run; elsewhere values, which those readers take too).
    fn set_gpu_int8_output(&mut self, _on: bool) {}

    /// Where this layer is an activation the layer before it can apply in its epilogue on
    /// the device: that activation. `None` (the default) otherwise.
    fn gpu_activation(&self) -> Option<FusedActivation> {
        None
    }

    /// The GPU forward (of one input or many, as its flags say) with `act` applied to each
    /// value of its one output as it is written, in place of the activation layer after it
    /// (the net asks only where nothing else reads the blob between them); `None` (the
    /// default) where this layer cannot for these inputs, and has recorded nothing.
    fn forward_gpu_activated(
        &self,
        _bottoms: &[GpuMat],
        _act: FusedActivation,
        _rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        Ok(None)
    }

    /// Whether this layer adds its two inputs, value by value, into one output (Eltwise's
    /// plain sum, BinaryOp's add of two blobs): the layer before one of them may add the
    /// other in its epilogue ([`Layer::forward_gpu_residual`]). `false` (the default)
    /// otherwise.
    fn gpu_residual_sum(&self) -> bool {
        false
    }

    /// The GPU forward with `residual` added to each value of its one output, then `act`
    /// where given, in place of the sum layer after it (and of the activation after that):
    /// the net asks only where nothing else reads the blobs between. `None` (the default)
    /// where this layer cannot for these inputs (an output not of the residual's shape and
    /// layout among them), and has recorded nothing.
    fn forward_gpu_residual(
        &self,
        _bottoms: &[GpuMat],
        _residual: &GpuMat,
        _act: Option<FusedActivation>,
        _rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        Ok(None)
    }

    /// Whether the GPU forward can write its output into its first input's buffer, past that
    /// input's values, where the net hands that buffer over ([`Layer::forward_gpu_appended`]):
    /// a Concat along the channels appends its other inputs there. `false` (the default)
    /// otherwise.
    fn gpu_appends_to_first(&self) -> bool {
        false
    }

    /// Told once by the net after `create_pipeline`: whether the output is the first input of
    /// a layer that appends to it ([`Layer::gpu_appends_to_first`]), so that the GPU forward
    /// leaves room past it in its buffer (a chain of concats then copies each input once).
    fn set_gpu_output_appended(&mut self, _on: bool) {}

    /// The GPU forward where the first input's buffer is the layer's to write past that
    /// input's values (no other reader, no alias, not the blob asked for); the output may be
    /// a mat of that buffer. `None` (the default) where it cannot for these inputs (too little
    /// room, another layout), with nothing recorded: the net then calls the plain forward.
    fn forward_gpu_appended(
        &self,
        _bottoms: &[GpuMat],
        _rec: &mut Recorder<'_>,
    ) -> Result<Option<Vec<GpuMat>>> {
        Ok(None)
    }

    /// One input, one new output.
    fn forward(&self, _bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        Err(missing("forward"))
    }

    /// Many inputs, new outputs.
    fn forward_many(&self, _bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        Err(missing("forward_many"))
    }

    /// One blob, overwritten.
    fn forward_inplace(&self, _blob: &mut Mat, _opt: &RunOptions) -> Result<()> {
        Err(missing("forward_inplace"))
    }

    /// Many blobs, overwritten.
    fn forward_many_inplace(&self, _blobs: &mut [Mat], _opt: &RunOptions) -> Result<()> {
        Err(missing("forward_many_inplace"))
    }

    /// One GPU input, one new GPU output, recorded into `rec`.
    fn forward_gpu(&self, _bottom: &GpuMat, _rec: &mut Recorder<'_>) -> Result<GpuMat> {
        Err(missing("forward_gpu"))
    }

    /// Many GPU inputs, new GPU outputs.
    fn forward_gpu_many(
        &self,
        _bottoms: &[GpuMat],
        _rec: &mut Recorder<'_>,
    ) -> Result<Vec<GpuMat>> {
        Err(missing("forward_gpu_many"))
    }

    /// One GPU blob, overwritten.
    fn forward_gpu_inplace(&self, _blob: &mut GpuMat, _rec: &mut Recorder<'_>) -> Result<()> {
        Err(missing("forward_gpu_inplace"))
    }
}

/// Checks that every method `support` promises is in `implements`: the flag and method that
/// do not match, if any.
/// The GPU methods count only when the layer runs on a device (`gpu`).
pub fn check_contract(
    support: Support,
    implements: Implements,
    gpu: bool,
) -> core::result::Result<(), (&'static str, &'static str)> {
    let cpu = match (support.one_blob_only, support.inplace) {
        (true, true) => (
            implements.forward_inplace,
            "support_inplace",
            "forward_inplace",
        ),
        (true, false) => (implements.forward, "one_blob_only", "forward"),
        (false, true) => (
            implements.forward_many_inplace,
            "support_inplace",
            "forward_many_inplace",
        ),
        (false, false) => (
            implements.forward_many,
            "one_blob_only = false",
            "forward_many",
        ),
    };
    if !cpu.0 {
        return Err((cpu.1, cpu.2));
    }
    if support.vulkan && gpu {
        let gpu = match (support.one_blob_only, support.inplace) {
            (true, true) => (implements.forward_gpu_inplace, "forward_gpu_inplace"),
            (true, false) => (implements.forward_gpu, "forward_gpu"),
            (false, _) => (implements.forward_gpu_many, "forward_gpu_many"),
        };
        if !gpu.0 {
            return Err(("support_vulkan", gpu.1));
        }
    }
    Ok(())
}
