//! Combined image-samplers (`sampler3D` …, what ncnn's image shaders read from) split into a
//! texture and a sampler: wgpu has no combined binding, so each such variable keeps its binding
//! for the texture and gains a sampler variable at a fresh binding; every load of it becomes two
//! loads joined by `OpSampledImage`, which both Vulkan and naga accept.

use std::collections::HashMap;

use fpshader_build::spv::{self, Editor};
use spirv::{Decoration, Op, StorageClass};

use crate::gpu::specialize::SpecializeError;

/// A module whose combined image-samplers were split.
#[derive(Debug)]
pub struct Split {
    /// The rewritten module.
    pub words: Vec<u32>,
    /// (texture binding, its sampler's binding), all in descriptor set 0.
    pub samplers: Vec<(u32, u32)>,
}

fn unsupported_sampler(problem: &'static str) -> SpecializeError {
    SpecializeError::Unsupported {
        op: "combined image-samplers".into(),
        problem,
    }
}

fn malformed(what: &'static str) -> SpecializeError {
    SpecializeError::Malformed { what, at: 0 }
}

/// Splits every combined image-sampler variable of `words`; new sampler bindings start at
/// `first_free` (one past the module's highest binding, so the texture keeps its number).
pub fn split(words: &[u32], first_free: u32) -> Result<Split, SpecializeError> {
    let module = spv::Module::new(words)?;
    let insts = module.parse()?;

    // sampled-image type -> image type; pointers to each in UniformConstant
    let mut sampled: HashMap<u32, u32> = HashMap::new();
    let mut sampler_type = None;
    let mut pointers: HashMap<u32, u32> = HashMap::new(); // pointee -> UniformConstant pointer
    let mut pointer_to_sampled: HashMap<u32, u32> = HashMap::new(); // pointer -> sampled type
    for i in &insts {
        let w = i.words();
        if i.is(Op::TypeSampledImage) && w.len() == 3 {
            sampled.insert(w[1], w[2]);
        } else if i.is(Op::TypeSampler) && w.len() == 2 {
            sampler_type = Some(w[1]);
        } else if i.is(Op::TypePointer)
            && w.len() == 4
            && w[2] == StorageClass::UniformConstant as u32
        {
            pointers.entry(w[3]).or_insert(w[1]);
            if sampled.contains_key(&w[3]) {
                pointer_to_sampled.insert(w[1], w[3]);
            }
        } else if (i.is(Op::TypeArray) || i.is(Op::TypeRuntimeArray))
            && w.len() >= 3
            && sampled.contains_key(&w[2])
        {
            return Err(unsupported_sampler("an array of combined image-samplers"));
        }
    }
    // combined variables -> (sampled type, image type)
    let mut combined: Vec<(u32, u32, u32)> = Vec::new();
    for i in insts.iter().filter(|i| i.is(Op::Variable)) {
        if let (Some(&st), Some(&var)) = (
            i.words().get(1).and_then(|p| pointer_to_sampled.get(p)),
            i.words().get(2),
        ) {
            combined.push((var, st, sampled[&st]));
        }
    }
    if combined.is_empty() {
        return Ok(Split {
            words: words.to_vec(),
            samplers: Vec::new(),
        });
    }

    let mut out = Editor::new(&module);
    // new types as (op, operands), emitted where the globals end
    let mut new_types: Vec<(Op, Vec<u32>)> = Vec::new();
    let sampler_type = sampler_type.unwrap_or_else(|| {
        let id = out.fresh();
        new_types.push((Op::TypeSampler, vec![id]));
        id
    });
    let mut pointer_to = |pointee: u32, new_types: &mut Vec<(Op, Vec<u32>)>, out: &mut Editor| {
        *pointers.entry(pointee).or_insert_with(|| {
            let id = out.fresh();
            let class = StorageClass::UniformConstant as u32;
            new_types.push((Op::TypePointer, vec![id, class, pointee]));
            id
        })
    };
    let sampler_pointer = pointer_to(sampler_type, &mut new_types, &mut out);
    // variable -> (image pointer, image type, sampler variable)
    let mut rewrite: HashMap<u32, (u32, u32, u32)> = HashMap::new();
    for &(var, _, image) in &combined {
        let image_pointer = pointer_to(image, &mut new_types, &mut out);
        rewrite.insert(var, (image_pointer, image, out.fresh()));
    }

    // bindings and sets of the combined variables
    let mut binding_of: HashMap<u32, u32> = HashMap::new();
    let mut set_of: HashMap<u32, u32> = HashMap::new();
    for i in insts
        .iter()
        .filter(|i| i.is(Op::Decorate) && i.words().len() >= 4)
    {
        let (target, deco, value) = (i.words()[1], i.words()[2], i.words()[3]);
        if rewrite.contains_key(&target) {
            if deco == Decoration::Binding as u32 {
                binding_of.insert(target, value);
            } else if deco == Decoration::DescriptorSet as u32 {
                set_of.insert(target, value);
            }
        }
    }
    let mut samplers = Vec::new();
    let mut sampler_binding: HashMap<u32, u32> = HashMap::new();
    for (k, &(var, _, _)) in combined.iter().enumerate() {
        let binding = *binding_of
            .get(&var)
            .ok_or_else(|| malformed("combined image-sampler without a binding"))?;
        if set_of.get(&var).copied().unwrap_or(0) != 0 {
            return Err(unsupported_sampler(
                "an image-sampler outside descriptor set 0",
            ));
        }
        let s = first_free + k as u32;
        samplers.push((binding, s));
        sampler_binding.insert(var, s);
    }

    let version = module.version_word();
    let mut types_done = false;
    for i in &insts {
        let w = i.words();
        if !types_done && i.is(Op::Function) {
            // every new type and variable goes at the end of the global section, where all
            // the types they refer to exist
            types_done = true;
            for (op, operands) in &new_types {
                out.emit(*op, operands);
            }
            for (var, _, _) in &combined {
                let (image_pointer, _, sampler_var) = rewrite[var];
                let class = StorageClass::UniformConstant as u32;
                out.emit(Op::Variable, &[image_pointer, *var, class]);
                out.emit(Op::Variable, &[sampler_pointer, sampler_var, class]);
            }
        }
        if i.is(Op::EntryPoint) && version >= 0x0001_0400 {
            // from SPIR-V 1.4 the interface lists every global the entry point uses
            let samplers: Vec<u32> = combined.iter().map(|(var, _, _)| rewrite[var].2).collect();
            out.extend(i, &samplers);
        } else if i.is(Op::Decorate) && w.len() >= 4 && w[2] == Decoration::Binding as u32 {
            out.copy(i);
            if let Some((_, _, sampler_var)) = rewrite.get(&w[1]) {
                let var = *sampler_var;
                out.emit(Op::Decorate, &[var, Decoration::DescriptorSet as u32, 0]);
                let binding = sampler_binding[&w[1]];
                out.emit(Op::Decorate, &[var, Decoration::Binding as u32, binding]);
            }
        } else if i.is(Op::Variable) && w.get(2).is_some_and(|v| rewrite.contains_key(v)) {
            // declared again below, after the pointer type it now needs
        } else if i.is(Op::Load) && w.len() >= 4 && rewrite.contains_key(&w[3]) {
            let (_, image, sampler_var) = rewrite[&w[3]];
            let (texture, sampler) = (out.fresh(), out.fresh());
            out.emit(Op::Load, &[image, texture, w[3]]);
            out.emit(Op::Load, &[sampler_type, sampler, sampler_var]);
            out.emit(Op::SampledImage, &[w[1], w[2], texture, sampler]);
        } else if (i.is(Op::FunctionCall)
            && w.get(4..)
                .is_some_and(|args| args.iter().any(|a| rewrite.contains_key(a))))
            || ((i.is(Op::AccessChain) || i.is(Op::InBoundsAccessChain) || i.is(Op::CopyObject))
                && w.len() >= 4
                && rewrite.contains_key(&w[3]))
        {
            return Err(unsupported_sampler(
                "a combined image-sampler used other than by loading it (passed to a function?)",
            ));
        } else {
            out.copy(i);
        }
    }
    if !types_done {
        return Err(malformed("no function in the module"));
    }
    Ok(Split {
        words: out.finish(),
        samplers,
    })
}
