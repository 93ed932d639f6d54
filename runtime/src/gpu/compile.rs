//! Compiling GLSL with the extension at run time (cargo feature `runtime-compile`), for shaders
//! known only then: ncnn's `compile_spirv_module` from a string, in every variant.

use std::borrow::Cow;

use fpshader_build::{Compiler, Settings, Source};

use crate::OptionSet;
use crate::error::Result;
use crate::gpu::context::Context;
use crate::meta::{ShaderModule, ShaderVariant};

impl Context {
    /// Compiles `glsl` in every valid permutation of `supported` and returns the module, for
    /// [`Context::pipeline`]. The module lives as long as the program (like the built-in ones):
    /// compile each run-time shader once and keep the reference.
    pub fn compile_module(
        &self,
        name: &str,
        glsl: &str,
        supported: OptionSet,
        settings: Settings,
    ) -> Result<&'static ShaderModule> {
        let compiler = Compiler::new(settings)?;
        let set = compiler.compile_variants(&Source::from_str(name, glsl)?, supported)?;
        let mut variants = Vec::with_capacity(set.variants.len());
        for v in &set.variants {
            let words = &set.blobs[v.blob].words;
            variants.push(ShaderVariant {
                options: v.options,
                reflection: fpshader_build::reflect::reflect(words)
                    .map_err(fpshader_build::Error::from)?,
                spirv: Cow::Owned(words.clone()),
            });
        }
        Ok(Box::leak(Box::new(ShaderModule {
            name: Cow::Owned(name.to_string()),
            supported,
            variants: Cow::Owned(variants),
        })))
    }
}
