//! Support for fpshader's cross-crate integration tests and examples (not published).

/// The shaders of `tests/shaders`, compiled by this package's build script.
pub mod generated {
    include!(concat!(env!("OUT_DIR"), "/fpshader_shaders.rs"));
}
