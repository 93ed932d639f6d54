//! GLSL compiled at load time with naga (parse, validate, write SPIR-V): the lowered ops of
//! graph segments, and the GLSL modules Arm's converter stores as source. The runtime links no
//! shaderc; naga comes with wgpu.

/// SPIR-V for a GLSL compute shader (entry point `main`).
///
/// naga refuses `writeonly` on storage buffers, so that qualifier is dropped from buffer
/// declarations first: it only restricts, and the SPIR-V stays valid without it.
pub(super) fn compile(glsl: &str) -> Result<Vec<u32>, String> {
    use naga::{ShaderStage, back::spv, front::glsl, valid};
    let text: String = glsl
        .lines()
        .map(|line| {
            if line.contains("buffer") && line.contains("writeonly") {
                line.replace("writeonly", "")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let module = glsl::Frontend::default()
        .parse(&glsl::Options::from(ShaderStage::Compute), &text)
        .map_err(|e| e.emit_to_string(&text))?;
    let info = valid::Validator::new(valid::ValidationFlags::all(), valid::Capabilities::all())
        .validate(&module)
        .map_err(|e| e.emit_to_string(&text))?;
    let pipeline = spv::PipelineOptions {
        shader_stage: ShaderStage::Compute,
        entry_point: "main".into(),
    };
    spv::write_vec(&module, &info, &spv::Options::default(), Some(&pipeline))
        .map_err(|e| e.to_string())
}
