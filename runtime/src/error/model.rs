//! Faults of a model's files and of a net's structure.

/// A model that cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A malformed `.param` model (text: `line` is 1-based; binary: the byte offset).
    #[error("{file}: {location}: {message}")]
    Param {
        /// The file (or `<bytes>`).
        file: String,
        /// `line N` or `byte N`.
        location: String,
        /// What is wrong.
        message: String,
    },
    /// A layer refused its parameters (the source is the layer's error, naming it).
    #[error("{file}: {location}")]
    LayerParam {
        /// The file (or `<bytes>`).
        file: String,
        /// `line N` or `byte N`.
        location: String,
        /// The layer's error.
        #[source]
        source: Box<crate::error::Error>,
    },
    /// Weights (`.bin`) that do not fit what a layer needs.
    #[error("weights of layer `{layer}` at byte {offset}: {message}")]
    Weights {
        /// The layer reading them.
        layer: String,
        /// Where in the weight data.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// A layer claims a support flag whose forward method it does not implement.
    #[error("layer `{layer}` ({kind}) claims `{flag}` but does not implement {method}")]
    Unimplemented {
        /// The layer's name.
        layer: String,
        /// Its type.
        kind: String,
        /// The support flag.
        flag: &'static str,
        /// The missing method.
        method: &'static str,
    },
}
