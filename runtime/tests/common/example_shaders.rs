//! ncnn's relu and sigmoid shaders, the examples' own (`examples/shaders`), in the variants the
//! built-in layer shaders have: what the GPU tests run when they need a plain elementwise shader.
#![allow(dead_code)] // each test binary uses its own part

use fpshader::meta::ShaderModule;

macro_rules! example_shader {
    ($file:literal) => {
        fpshader_macro::shader!($file, fp16p, fp16s, fp16a, fp16u, image, lmem)
    };
}

pub static RELU: &ShaderModule = example_shader!("../examples/shaders/relu.comp");
pub static RELU_PACK4: &ShaderModule = example_shader!("../examples/shaders/relu_pack4.comp");
pub static RELU_PACK8: &ShaderModule = example_shader!("../examples/shaders/relu_pack8.comp");
pub static SIGMOID: &ShaderModule = example_shader!("../examples/shaders/sigmoid.comp");
pub static SIGMOID_PACK4: &ShaderModule = example_shader!("../examples/shaders/sigmoid_pack4.comp");
