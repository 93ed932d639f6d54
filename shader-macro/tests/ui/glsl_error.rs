static S: () = { fpshader_macro::shader!("glsl_error.comp", fp16s, fp16a); };

fn main() {}
