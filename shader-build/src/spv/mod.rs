//! The one model of a SPIR-V module that every pass over SPIR-V words shares: a checked header,
//! an iterator over instructions with bounds checked once, literal strings, and an [`Editor`]
//! that writes a rewritten module. Reflection, the runtime's specialization and sampler split,
//! and the VGF graph reader and writer all read and write SPIR-V through it, so a malformed
//! module is refused the same way (and never panics) wherever it enters.
//!
//! vulkano's `shader/spirv` is the model: instructions are views into the words (no copy), and
//! a rewrite copies the instructions it keeps and emits the ones it adds.

mod edit;

pub use edit::Editor;
pub use spirv::Op;

/// The first word of every SPIR-V module.
pub const MAGIC: u32 = 0x0723_0203;
/// Words in the header: magic, version, generator, id bound, schema.
pub const HEADER_WORDS: usize = 5;
/// The header word holding the id bound.
pub const BOUND_WORD: usize = 3;

/// Why words are not a SPIR-V module this model can walk.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpvError {
    /// Fewer words than a header.
    #[error("{len} words; a SPIR-V header alone has {HEADER_WORDS}")]
    Short {
        /// How many words there are.
        len: usize,
    },
    /// The first word is not [`MAGIC`].
    #[error("bad magic number {0:#010x}")]
    BadMagic(u32),
    /// An instruction whose word count is zero (the walk could not advance).
    #[error("word {word}: instruction with word count 0")]
    ZeroCount {
        /// Index of the instruction's first word.
        word: usize,
    },
    /// An instruction longer than what is left of the module.
    #[error("word {word}: instruction {opcode} of {count} words runs past the end ({len} words)")]
    PastEnd {
        /// Index of the instruction's first word.
        word: usize,
        /// Its opcode.
        opcode: u16,
        /// Its declared word count.
        count: usize,
        /// The module's length in words.
        len: usize,
    },
    /// An instruction with fewer operands than its opcode needs.
    #[error("word {word}: instruction {opcode} has {has} operands, needs {need}")]
    Operands {
        /// Index of the instruction's first word.
        word: usize,
        /// Its opcode.
        opcode: u16,
        /// Operands needed.
        need: usize,
        /// Operands present.
        has: usize,
    },
}

impl SpvError {
    /// The word the fault is at (0 for faults of the module as a whole).
    pub fn word(&self) -> usize {
        match self {
            SpvError::Short { .. } | SpvError::BadMagic(_) => 0,
            SpvError::ZeroCount { word }
            | SpvError::PastEnd { word, .. }
            | SpvError::Operands { word, .. } => *word,
        }
    }
}

/// A module's words with a checked header.
#[derive(Clone, Copy, Debug)]
pub struct Module<'a> {
    words: &'a [u32],
}

impl<'a> Module<'a> {
    /// Checks the header of `words`; instructions are checked as they are walked.
    pub fn new(words: &'a [u32]) -> Result<Self, SpvError> {
        if words.len() < HEADER_WORDS {
            return Err(SpvError::Short { len: words.len() });
        }
        if words[0] != MAGIC {
            return Err(SpvError::BadMagic(words[0]));
        }
        Ok(Module { words })
    }

    /// All the words, header included.
    pub fn words(&self) -> &'a [u32] {
        self.words
    }

    /// The five header words.
    pub fn header(&self) -> &'a [u32] {
        &self.words[..HEADER_WORDS]
    }

    /// The version word (`0x00MMmm00`).
    pub fn version_word(&self) -> u32 {
        self.words[1]
    }

    /// The (major, minor) version.
    pub fn version(&self) -> (u8, u8) {
        let v = self.version_word();
        (((v >> 16) & 0xff) as u8, ((v >> 8) & 0xff) as u8)
    }

    /// One past the highest id the module may use.
    pub fn bound(&self) -> u32 {
        self.words[BOUND_WORD]
    }

    /// The instructions in order; the walk stops after the first malformed one.
    pub fn instructions(&self) -> Instructions<'a> {
        Instructions {
            words: self.words,
            at: HEADER_WORDS,
        }
    }

    /// Every instruction, or the first fault.
    pub fn parse(&self) -> Result<Vec<Instruction<'a>>, SpvError> {
        self.instructions().collect()
    }
}

/// The walk over a module's instructions.
#[derive(Clone, Debug)]
pub struct Instructions<'a> {
    words: &'a [u32],
    at: usize,
}

impl<'a> Iterator for Instructions<'a> {
    type Item = Result<Instruction<'a>, SpvError>;

    fn next(&mut self) -> Option<Self::Item> {
        let word = self.at;
        let first = *self.words.get(word)?;
        let count = (first >> 16) as usize;
        let opcode = (first & 0xffff) as u16;
        let fault = if count == 0 {
            Some(SpvError::ZeroCount { word })
        } else if word + count > self.words.len() {
            Some(SpvError::PastEnd {
                word,
                opcode,
                count,
                len: self.words.len(),
            })
        } else {
            None
        };
        if let Some(e) = fault {
            self.at = self.words.len(); // nothing after a malformed instruction can be trusted
            return Some(Err(e));
        }
        self.at += count;
        let words = &self.words[word..word + count];
        Some(Ok(Instruction {
            word,
            opcode,
            words,
            operands: &words[1..],
        }))
    }
}

/// One instruction: a view into the module's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instruction<'a> {
    /// Index of its first word in the module.
    pub word: usize,
    /// Its opcode (the low half of the first word).
    pub opcode: u16,
    /// The words after the first.
    pub operands: &'a [u32],
    words: &'a [u32],
}

impl<'a> Instruction<'a> {
    /// The opcode as the `spirv` crate knows it; `None` for opcodes newer than the crate.
    pub fn op(&self) -> Option<Op> {
        Op::from_u32(u32::from(self.opcode))
    }

    /// Whether this is an `op`.
    pub fn is(&self, op: Op) -> bool {
        u32::from(self.opcode) == op as u32
    }

    /// The whole instruction, first word included.
    pub fn words(&self) -> &'a [u32] {
        self.words
    }

    /// The operands when there are at least `n`.
    pub fn need(&self, n: usize) -> Result<&'a [u32], SpvError> {
        if self.operands.len() < n {
            return Err(SpvError::Operands {
                word: self.word,
                opcode: self.opcode,
                need: n,
                has: self.operands.len(),
            });
        }
        Ok(self.operands)
    }

    /// Operand `i`, if present.
    pub fn operand(&self, i: usize) -> Option<u32> {
        self.operands.get(i).copied()
    }
}

/// The first word of an instruction of `operands + 1` words.
pub fn first_word(opcode: u16, operands: usize) -> u32 {
    ((operands as u32 + 1) << 16) | u32::from(opcode)
}

/// Appends one instruction to `out`.
pub fn push(out: &mut Vec<u32>, opcode: u16, operands: &[u32]) {
    out.push(first_word(opcode, operands.len()));
    out.extend_from_slice(operands);
}

/// Decodes a literal string (UTF-8, NUL-terminated, packed little-endian into words): the
/// string and how many words it took, or `None` when it has no NUL or is not UTF-8.
pub fn string(words: &[u32]) -> Option<(String, usize)> {
    let (bytes, used, terminated) = string_bytes(words);
    if !terminated {
        return None;
    }
    Some((String::from_utf8(bytes).ok()?, used))
}

/// [`string`] for readers that keep going: invalid UTF-8 is replaced, a missing NUL ends the
/// string at the end of `words`.
pub fn string_lossy(words: &[u32]) -> (String, usize) {
    let (bytes, used, _) = string_bytes(words);
    (String::from_utf8_lossy(&bytes).into_owned(), used)
}

fn string_bytes(words: &[u32]) -> (Vec<u8>, usize, bool) {
    let mut bytes = Vec::new();
    for (i, w) in words.iter().enumerate() {
        for b in w.to_le_bytes() {
            if b == 0 {
                return (bytes, i + 1, true);
            }
            bytes.push(b);
        }
    }
    (bytes, words.len(), false)
}

/// Encodes `s` as a literal string: NUL-terminated, padded to whole words.
pub fn encode_string(s: &str) -> Vec<u32> {
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(0);
    bytes.resize(bytes.len().next_multiple_of(4), 0);
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(body: &[u32]) -> Vec<u32> {
        let mut w = vec![MAGIC, 0x0001_0300, 0, 10, 0];
        w.extend_from_slice(body);
        w
    }

    #[test]
    fn walks_instructions_and_refuses_malformed_ones_without_panicking() {
        let mut body = Vec::new();
        push(&mut body, Op::Capability as u16, &[1]);
        push(&mut body, Op::TypeInt as u16, &[2, 32, 1]);
        let words = module(&body);
        let m = Module::new(&words).unwrap();
        assert_eq!(m.version(), (1, 3));
        let insts = m.parse().unwrap();
        assert_eq!(insts.len(), 2);
        assert!(insts[1].is(Op::TypeInt));
        assert_eq!((insts[1].word, insts[1].operands), (7, &[2, 32, 1][..]));
        assert!(matches!(
            insts[1].need(4),
            Err(SpvError::Operands {
                word: 7,
                need: 4,
                has: 3,
                ..
            })
        ));

        assert_eq!(
            Module::new(&[MAGIC]).unwrap_err(),
            SpvError::Short { len: 1 }
        );
        assert_eq!(
            Module::new(&[1, 0, 0, 0, 0]).unwrap_err(),
            SpvError::BadMagic(1)
        );
        let zero = module(&[0]);
        assert_eq!(
            Module::new(&zero).unwrap().parse().unwrap_err(),
            SpvError::ZeroCount { word: 5 }
        );
        let long = module(&[first_word(17, 4), 1]);
        let mut walk = Module::new(&long).unwrap().instructions();
        assert!(matches!(
            walk.next(),
            Some(Err(SpvError::PastEnd {
                word: 5,
                count: 5,
                ..
            }))
        ));
        assert!(walk.next().is_none());
    }

    #[test]
    fn strings_round_trip() {
        for s in ["", "main", "four", "TOSA.001000.1"] {
            let mut w = encode_string(s);
            let used = w.len();
            w.push(0xdead_beef);
            assert_eq!(string(&w), Some((s.to_string(), used)));
        }
        assert_eq!(string(&[u32::from_le_bytes(*b"abcd")]), None);
        assert_eq!(
            string_lossy(&[u32::from_le_bytes(*b"abcd")]),
            ("abcd".to_string(), 1)
        );
    }
}
