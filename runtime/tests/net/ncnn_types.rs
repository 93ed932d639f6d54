//! Every layer type ncnn's wheel registers against fpshader's registry: the 110 names of
//! ncnn's `src/CMakeLists.txt` (`ncnn_add_layer`) in the order of the type index `.param.bin`
//! stores ([`LAYER_TYPE_INDEX`]), each at its index in the wheel
//! (`ncnn.layer_to_index(name)`), and each creatable by fpshader.

use fpshader::layer::Registry;
use fpshader::net::param::LAYER_TYPE_INDEX;

#[test]
fn every_type_ncnn_registers_is_in_the_registry() {
    // the list is the wheel's: each name registered there
    if std::env::var_os("FPSHADER_SKIP_NCNN").is_none() {
        let python = std::env::var_os("FPSHADER_NCNN_PYTHON")
            .expect("FPSHADER_NCNN_PYTHON (cargo xtask test sets it), or FPSHADER_SKIP_NCNN=1");
        // the names whose index in the wheel is not their place in the list
        let script = "import sys, ncnn\n\
                      print(' '.join(n for i, n in enumerate(sys.argv[1:]) \
                      if ncnn.layer_to_index(n) != i))";
        let out = std::process::Command::new(python)
            .arg("-c")
            .arg(script)
            .args(LAYER_TYPE_INDEX)
            .output()
            .expect("the oracle's python runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let unknown = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(
            unknown.is_empty(),
            "not at their index in ncnn's wheel: {unknown}"
        );
    }
    assert_eq!(LAYER_TYPE_INDEX.len(), 110, "ncnn 1.0.20261020's types");
    let registry = Registry::default();
    let missing: Vec<&str> = (LAYER_TYPE_INDEX.iter().copied())
        .filter(|name| registry.create(name).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "types fpshader cannot create: {missing:?}"
    );
}
