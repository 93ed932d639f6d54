//! The integration crate's own shaders, through the build.rs helper: the tests' (`tests/shaders`)
//! and the examples' (`examples/shaders`: the relu, sigmoid and clip families, in every variant
//! the built-in layer shaders have).

fn main() -> Result<(), fpshader_build::Error> {
    fpshader_build::Builder::new()
        .dir("tests/shaders")
        .include_dir("tests/shaders/include")
        .options(&["fp16p", "fp16s", "fp16a"])
        .shader_options("copy.comp", &["fp16s", "fp16a"])
        .compile()?;
    fpshader_build::Builder::new()
        .dir("examples/shaders")
        .options(&["fp16p", "fp16s", "fp16a", "fp16u", "image", "lmem"])
        .out_file("example_shaders.rs")
        .compile()?;
    Ok(())
}
