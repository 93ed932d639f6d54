//! Compiles the built-in layer shaders of `shaders/` in every variant.

fn main() -> Result<(), fpshader_build::Error> {
    fpshader_build::Builder::new()
        .dir("../shaders")
        .include_dir("../shaders/include")
        .options(&["fp16p", "fp16s", "fp16a", "fp16u", "image", "lmem"])
        .compile()?;
    Ok(())
}
