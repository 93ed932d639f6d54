//! Faults of a layer's inputs: blobs that do not fit its parameters or each other.

/// Inputs a layer cannot take, with the offending values.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// Another number of inputs than the layer takes.
    #[error("{got} inputs, {expected}")]
    Count {
        /// How many came.
        got: usize,
        /// How many it takes.
        expected: &'static str,
    },
    /// An axis a blob does not have.
    #[error("axis {axis} of a {dims}-D blob")]
    Axis {
        /// The axis asked for (negative counts from the end).
        axis: i32,
        /// The blob's dims.
        dims: usize,
    },
    /// A blob of dims the layer does not take.
    #[error("a {got}-D blob; the layer takes {takes}")]
    Dims {
        /// The blob's dims.
        got: u8,
        /// What the layer takes.
        takes: &'static str,
    },
    /// Blobs whose shapes do not fit each other (`[w, h, d, c]`).
    #[error("{a:?} and {b:?} {why}")]
    Mismatch {
        /// The first shape.
        a: Vec<usize>,
        /// The shape that does not fit it.
        b: Vec<usize>,
        /// How they must fit.
        why: &'static str,
    },
    /// A count of values that does not match what the layer has for it.
    #[error("{got} {what}; {expected} fit")]
    Values {
        /// What is counted.
        what: &'static str,
        /// How many there are.
        got: usize,
        /// How many fit.
        expected: usize,
    },
    /// A range along an axis that leaves the axis.
    #[error("{what} of {len} from {start} on an axis of {extent}")]
    Range {
        /// The operation.
        what: &'static str,
        /// Where it starts.
        start: i64,
        /// How long it is.
        len: i64,
        /// The axis' extent.
        extent: usize,
    },
    /// A kernel larger than the (padded) plane it slides over.
    #[error("{what} {kernel:?} is larger than the padded input {input:?}")]
    Window {
        /// The kernel and how it is counted.
        what: &'static str,
        /// Its extents (`[w, h]`).
        kernel: [usize; 2],
        /// The padded input plane (`[w, h]`).
        input: [usize; 2],
    },
    /// A blob whose shape (`[w, h, d, c]`) the layer's parameters do not fit.
    #[error("a {shape:?} blob; {what} takes {expected}")]
    Shape {
        /// The layer type, or what of it.
        what: &'static str,
        /// The blob's extents.
        shape: Vec<usize>,
        /// What fits.
        expected: &'static str,
    },
    /// An output with nothing in it, or too large to index.
    #[error("{what}: a {shape:?} output")]
    Output {
        /// Why.
        what: &'static str,
        /// Its extents.
        shape: Vec<usize>,
    },
}
