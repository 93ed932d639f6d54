//! `OpSMod` made exact for the naga path. naga's SPIR-V reader turns `OpSMod(x, y)` (what
//! glslang writes for GLSL's `%` on signed integers) into `x - y * int(floor(float(x) /
//! float(y)))`: wrong past 2^24, and wrong at exact multiples on drivers whose float division
//! is not correctly rounded (the NVIDIA driver gives `6 / 3 = 1.99…`, so `6 % 3 = 3`). Every
//! `OpSMod` becomes `OpSRem`, which naga reads as its integer remainder. The two agree wherever
//! either is defined in Vulkan: both are undefined there for negative operands (GLSL leaves
//! them undefined too; lavapipe truncates), and naga's remainder is defined for those as well.
//! (A rewrite keeping the floored sign, `OpSRem(OpSRem(x, y) + y, y)` in fresh ids, came out
//! wrong through naga in `reduce.comp`'s affine index; the plain retag keeps every id.)

use fpshader_build::spv::{self, Editor, Op, SpvError};

/// `words` with every `OpSMod` made an `OpSRem`, or `None` when it has none (nothing to copy).
pub fn exact(words: &[u32]) -> Result<Option<Vec<u32>>, SpvError> {
    let module = spv::Module::new(words)?;
    let insts = module.parse()?;
    if !insts.iter().any(|i| i.is(Op::SMod)) {
        return Ok(None);
    }
    let mut out = Editor::new(&module);
    for i in &insts {
        if i.is(Op::SMod) {
            // result type, result, the operands: the same for both opcodes
            i.need(4)?;
            out.retag(i, Op::SRem);
        } else {
            out.copy(i);
        }
    }
    Ok(Some(out.finish()))
}
