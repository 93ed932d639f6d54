//! Faults of tensors themselves: shapes, packing, storage and transfers.

/// A mat, GPU mat or texture that cannot be made, converted or read as asked.
#[derive(Debug, thiserror::Error)]
pub enum TensorError {
    /// Dims outside what the container holds (`1..=4` for mats, `1..=3` on the GPU, 3 for
    /// images).
    #[error("a {dims}-D mat; {takes}")]
    Dims {
        /// The dims asked for.
        dims: usize,
        /// What the container takes.
        takes: &'static str,
    },
    /// An elempack other than 1, 4 or 8.
    #[error("elempack {elempack}; expected 1, 4 or 8")]
    Elempack {
        /// The elempack asked for.
        elempack: usize,
    },
    /// Extents whose product overflows.
    #[error("a {shape:?} (w, h, d, c) mat is too large")]
    TooLarge {
        /// `[w, h, d, c]`.
        shape: [usize; 4],
    },
    /// A value count that does not fill the shape.
    #[error("{got} values for a {dims}-D {shape:?} mat ({expected} needed)")]
    Values {
        /// Values given.
        got: usize,
        /// Values the shape holds.
        expected: usize,
        /// The dims.
        dims: u8,
        /// `[w, h, d, c]`.
        shape: [usize; 4],
    },
    /// A mat of another element type than the operation reads.
    #[error("a {expected} mat was expected, this one holds {got}")]
    ElemType {
        /// What the operation reads.
        expected: &'static str,
        /// What the mat holds.
        got: String,
    },
    /// Channels that do not split into blocks of the elempack asked for.
    #[error("{channels} channels of elempack {from} cannot become elempack {to}")]
    Packing {
        /// Channels (unpacked).
        channels: usize,
        /// The mat's elempack.
        from: usize,
        /// The elempack asked for.
        to: usize,
    },
    /// An operation on unpacked mats given a packed one.
    #[error("{operation} takes elempack 1 mats, not elempack {elempack}")]
    Packed {
        /// The operation.
        operation: &'static str,
        /// The mat's elempack.
        elempack: usize,
    },
    /// A reshape to another number of values.
    #[error("cannot reshape {values} values to {dims}-D {shape:?}")]
    Reshape {
        /// Values in the mat.
        values: usize,
        /// Target dims.
        dims: u8,
        /// Target `[w, h, d, c]` (or view extents on the GPU).
        shape: Vec<usize>,
    },
    /// A strided view reaching past its values.
    #[error("a view of {shape:?} reaches value {extent} of {len}")]
    View {
        /// The view's extents.
        shape: Vec<usize>,
        /// How far it reaches.
        extent: usize,
        /// Values there are.
        len: usize,
    },
    /// A buffer where an image is needed or the other way round (each with its article).
    #[error("a mat backed by {got} where {needed} is needed")]
    Backing {
        /// What the operation needs.
        needed: &'static str,
        /// What the mat is.
        got: &'static str,
    },
    /// A channel gather the shader cannot do: too many mats, planes that differ, a channel
    /// that is not there.
    #[error("channel gather: {problem}")]
    ChannelGather {
        /// What is wrong, with the offending values.
        problem: String,
    },
    /// An int8 storage mat (levels at a scale) given to a shader that reads values.
    #[error("an int8 storage mat at scale {scale} reached {reader}, which reads values")]
    Int8Storage {
        /// The mat's scale.
        scale: f32,
        /// What it reached.
        reader: &'static str,
    },
    /// A storage format with no texel of that many channels, or no texture at all.
    #[error("no {format} texel of {channels} channels (textures hold 16- and 32-bit floats)")]
    TexelFormat {
        /// The storage or texture format.
        format: String,
        /// Channels per texel.
        channels: usize,
    },
    /// Texel data of another size than the texture.
    #[error("{values} values for {texels} texels of {channels} channels")]
    Texels {
        /// Values given.
        values: usize,
        /// Texels in the texture.
        texels: usize,
        /// Channels per texel.
        channels: usize,
    },
    /// A texture beyond the device's limits.
    #[error("a {sides:?} {dimension} texture (the device allows 1..={max} per side)")]
    TextureSize {
        /// Width, height, depth.
        sides: [u32; 3],
        /// `D1`, `D2` or `D3`.
        dimension: String,
        /// The device's limit.
        max: u32,
    },
    /// A GPU mat whose size does not match the host layout it downloads to.
    #[error(
        "a GPU mat of {values} values (cstep {cstep}) does not match its host layout ({host} values)"
    )]
    HostLayout {
        /// Values on the device.
        values: usize,
        /// The GPU mat's cstep.
        cstep: usize,
        /// Values of the host layout.
        host: usize,
    },
    /// Rows copied between mats that do not line up (other widths, channels, packing or
    /// format), past a mat's rows, or at offsets the transfer commands cannot address.
    #[error("rows {start}..{end} of a {height}-row mat: {problem}")]
    Rows {
        /// The first row.
        start: usize,
        /// The end row.
        end: usize,
        /// The rows the mat has.
        height: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// A pipeline variant storing another format than the mats it is given (a variant chosen
    /// for other options: a bug in the caller).
    #[error("`{shader}` variant {variant} stores {stores}, the mats are {mats}")]
    VariantStorage {
        /// The shader.
        shader: String,
        /// The variant's option name.
        variant: String,
        /// What it stores.
        stores: String,
        /// What the mats are.
        mats: String,
    },
}
