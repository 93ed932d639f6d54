static S: () = { fpshader_macro::shader!("include_missing.comp"); };

fn main() {}
