//! Faults of a net's blobs: names it does not have, blobs not produced.

/// A blob asked for that the net or the extractor cannot give.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    /// A name no blob of the net has.
    #[error("no blob named `{name}` in this net")]
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// A blob no layer writes (and no input gives).
    #[error("blob `{name}` has no producer")]
    NoProducer {
        /// The blob.
        name: String,
    },
    /// A blob the run should have made and did not hold when read.
    #[error("blob `{name}` is missing")]
    Missing {
        /// The blob.
        name: String,
    },
    /// A net whose weights were never loaded.
    #[error("the net has no model loaded: call load_model (or load_model_zeros) first")]
    NotLoaded,
}
