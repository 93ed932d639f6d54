//! Writing a rewritten module: the header of the module it came from, the instructions kept
//! and the ones added, and the id bound raised for every fresh id taken.

use super::{BOUND_WORD, Instruction, Module, Op, first_word, push};

/// Builds a module from another's header: copy what stays, emit what is new, take fresh ids.
#[derive(Clone, Debug)]
pub struct Editor {
    words: Vec<u32>,
    bound: u32,
}

impl Editor {
    /// An editor writing after `module`'s header.
    pub fn new(module: &Module<'_>) -> Self {
        let mut words = Vec::with_capacity(module.words().len() + 16);
        words.extend_from_slice(module.header());
        Editor {
            words,
            bound: module.bound(),
        }
    }

    /// An id no instruction uses yet.
    pub fn fresh(&mut self) -> u32 {
        self.bound += 1;
        self.bound - 1
    }

    /// Appends a new instruction.
    pub fn emit(&mut self, op: Op, operands: &[u32]) {
        push(&mut self.words, op as u16, operands);
    }

    /// Appends an instruction of the old module unchanged.
    pub fn copy(&mut self, inst: &Instruction<'_>) {
        self.words.extend_from_slice(inst.words());
    }

    /// Appends `inst`'s operands under another opcode (a spec constant made a constant).
    pub fn retag(&mut self, inst: &Instruction<'_>, op: Op) {
        self.words.push(first_word(op as u16, inst.operands.len()));
        self.words.extend_from_slice(inst.operands);
    }

    /// Appends `inst` with `extra` operands after its own (an entry point's interface grown).
    pub fn extend(&mut self, inst: &Instruction<'_>, extra: &[u32]) {
        self.words
            .push(first_word(inst.opcode, inst.operands.len() + extra.len()));
        self.words.extend_from_slice(inst.operands);
        self.words.extend_from_slice(extra);
    }

    /// The module, its id bound covering every fresh id.
    pub fn finish(mut self) -> Vec<u32> {
        self.words[BOUND_WORD] = self.bound;
        self.words
    }
}
