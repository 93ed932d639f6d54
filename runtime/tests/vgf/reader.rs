//! The VGF reader under truncation and mutation.

use super::*;

#[test]
fn reader_refuses_every_truncation_and_mutation_without_panicking() {
    let graph = tosa::mlir::parse("m", &cases()[4].1).unwrap();
    let bytes = vgf::write(&compute_only(&graph));
    assert_eq!(vgf::read(&bytes).unwrap(), compute_only(&graph));
    for len in 0..bytes.len() {
        let _ = vgf::read(&bytes[..len]);
    }
    let mut rng = common::Rng(0x5eed);
    for _ in 0..20_000 {
        let mut m = bytes.clone();
        for _ in 0..1 + (rng.next().abs() * 4.0) as usize {
            let at = ((rng.next().abs() * m.len() as f32) as usize).min(m.len() - 1);
            m[at] = (rng.next() * 255.0) as i32 as u8;
        }
        let _ = vgf::read(&m);
    }
    assert!(matches!(
        vgf::read(&bytes[..100]),
        Err(vgf::ReadError::TruncatedHeader { len: 100 })
    ));

    // the graph SPIR-V reader (and the lowering of what it reads), on our graph modules
    for (name, mlir) in ml_models() {
        let model = with_graphs(&tosa::mlir::parse(name, &mlir).unwrap());
        let vgf::ModuleCode::Spirv(words) = &model.modules[0].code else {
            panic!("{name}: no SPIR-V");
        };
        let entry = &model.modules[0].entry_point;
        let lower_all = |g: &tosa::Graph| {
            for op in g.ops.iter().filter(|op| op.kind() != "const") {
                let _ = vgf::lower::lower(g, op);
            }
        };
        for len in 0..words.len() {
            assert!(
                tosa::spirv::read(&words[..len], entry).is_err(),
                "{name}: cut at {len}"
            );
        }
        for _ in 0..5_000 {
            let mut m = words.clone();
            for _ in 0..1 + (rng.next().abs() * 3.0) as usize {
                let at = ((rng.next().abs() * m.len() as f32) as usize).min(m.len() - 1);
                let bits = (rng.next().abs() * 32.0) as u32 % 32;
                m[at] ^= 1 << bits;
            }
            if let Ok(module) = tosa::spirv::read(&m, entry) {
                lower_all(&module.graph);
            }
        }
    }

    // the TOSA flatbuffer reader, on a file Arm's converter wrote
    let Some(converter) = arm_tool("model-converter") else {
        return;
    };
    let dir = common::scratch();
    let mlir = dir.join("m.mlir");
    std::fs::write(&mlir, &ml_models()[0].1).unwrap();
    let bytes = to_tosa(&converter, &mlir);
    let whole = tosa::flatbuffer::parse("m.tosa", &bytes).unwrap();
    for len in 0..bytes.len() {
        // a cut into trailing padding still reads, and reads the same
        match tosa::flatbuffer::parse("m.tosa", &bytes[..len]) {
            Ok(graph) => assert_eq!(graph, whole, "cut at {len}"),
            Err(err) => assert!(err.to_string().starts_with("m.tosa: byte "), "{err}"),
        }
    }
    for _ in 0..20_000 {
        let mut m = bytes.clone();
        for _ in 0..1 + (rng.next().abs() * 4.0) as usize {
            let at = ((rng.next().abs() * m.len() as f32) as usize).min(m.len() - 1);
            m[at] = (rng.next() * 255.0) as i32 as u8;
        }
        let _ = tosa::flatbuffer::parse("m.tosa", &m);
    }
}
