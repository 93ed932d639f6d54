//! The integration crate's own shaders, through the build.rs helper.

fn main() -> Result<(), fpshader_build::Error> {
    fpshader_build::Builder::new()
        .dir("tests/shaders")
        .include_dir("tests/shaders/include")
        .options(&["fp16p", "fp16s", "fp16a"])
        .shader_options("copy.comp", &["fp16s", "fp16a"])
        .compile()?;
    Ok(())
}
