static S: () = { fpshader_macro::shader!("does_not_exist.comp", fp16s); };

fn main() {}
