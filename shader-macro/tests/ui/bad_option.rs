static S: () = { fpshader_macro::shader!("ok.comp", fp16s, fp16x); };

fn main() {}
