//! A compute shader's descriptor sets folded into set 0: VGF custom shaders may spread their
//! resources over several sets, while fpshader's pipelines bind one group.

use std::collections::HashMap;

use crate::spv::{self, Editor, Op};

const DECORATION_BINDING: u32 = 33;
const DECORATION_DESCRIPTOR_SET: u32 = 34;

/// `words` with every descriptor binding moved into set 0, numbered by its place in `order`
/// (`(set, binding)` pairs; bindings not in it follow, in the module's order): how a shader
/// that spreads its resources over several sets runs where one bind group is used.
pub fn flatten_sets(words: &[u32], order: &[(u32, u32)]) -> Result<Vec<u32>, spv::SpvError> {
    let module = spv::Module::new(words)?;
    let insts = module.parse()?;
    let mut set_of: HashMap<u32, u32> = HashMap::new();
    let mut binding_of: HashMap<u32, u32> = HashMap::new();
    for inst in &insts {
        if let (Some(Op::Decorate), &[id, d, value, ..]) = (inst.op(), inst.operands) {
            match d {
                DECORATION_DESCRIPTOR_SET => {
                    set_of.insert(id, value);
                }
                DECORATION_BINDING => {
                    binding_of.insert(id, value);
                }
                _ => {}
            }
        }
    }
    let mut extra = order.len() as u32;
    let mut new_binding: HashMap<u32, u32> = HashMap::new();
    let mut ids: Vec<u32> = binding_of.keys().copied().collect();
    ids.sort_unstable();
    for id in ids {
        let key = (set_of.get(&id).copied().unwrap_or(0), binding_of[&id]);
        let at = match order.iter().position(|&k| k == key) {
            Some(i) => i as u32,
            None => {
                extra += 1;
                extra - 1
            }
        };
        new_binding.insert(id, at);
    }
    let mut ed = Editor::new(&module);
    for inst in &insts {
        match (inst.op(), inst.operands) {
            (Some(Op::Decorate), &[id, DECORATION_DESCRIPTOR_SET, _]) => {
                ed.emit(Op::Decorate, &[id, DECORATION_DESCRIPTOR_SET, 0]);
            }
            (Some(Op::Decorate), &[id, DECORATION_BINDING, _]) => {
                ed.emit(Op::Decorate, &[id, DECORATION_BINDING, new_binding[&id]]);
            }
            _ => ed.copy(inst),
        }
    }
    Ok(ed.finish())
}
