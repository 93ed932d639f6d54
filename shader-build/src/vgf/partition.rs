//! Splitting a TOSA graph into partitions the way Arm's converter does (its
//! `model-partition-marking` pass), so that the segment structure of our VGF files matches
//! theirs: one pass in program order, where a shader op opens a new partition, an ML op joins
//! the highest partition among its producers (the next one after a shader producer), and an ML
//! op fed only by graph inputs or constants joins the trailing ML partition. Constants are placed
//! afterwards: in their first ML user's partition (and cloned into every other ML partition using
//! them), or, when a shader uses them first, in an ML partition right before that shader.

use std::collections::BTreeMap;

use super::tosa::{Graph, ValueId};

/// Whether a partition holds ML operations or one shader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// TOSA operations (a graph segment, or compute shaders with `--compute-only`).
    Ml,
    /// One `com.arm.VulkanCustomShader` operation.
    Shader,
}

/// One partition, in execution order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// ML or shader.
    pub kind: Kind,
    /// Indices into [`Graph::ops`], in program order; constants cloned into it included.
    pub ops: Vec<usize>,
    /// Values it reads that it does not compute: graph inputs and other partitions' results,
    /// in order of first use.
    pub inputs: Vec<ValueId>,
    /// Values it computes that other partitions or the model's outputs read, in definition order.
    pub outputs: Vec<ValueId>,
}

fn is_constant(graph: &Graph, op: usize) -> bool {
    matches!(graph.ops[op].kind(), "const" | "const_shape")
}

struct Plan {
    of: Vec<Option<i64>>,
    kinds: BTreeMap<i64, Kind>,
}

impl Plan {
    fn record(&mut self, op: usize, id: i64, kind: Kind) {
        self.of[op] = Some(id);
        self.kinds.entry(id).or_insert(kind);
    }

    fn highest(&self) -> i64 {
        self.kinds.keys().next_back().copied().unwrap_or(-1)
    }

    fn shift_from(&mut self, first: i64) {
        for p in self.of.iter_mut().flatten() {
            if *p >= first {
                *p += 1;
            }
        }
        self.kinds = std::mem::take(&mut self.kinds)
            .into_iter()
            .map(|(id, k)| (if id >= first { id + 1 } else { id }, k))
            .collect();
    }

    fn ml_before(&mut self, id: i64) -> i64 {
        if id > 0 && self.kinds.get(&(id - 1)) == Some(&Kind::Ml) {
            return id - 1;
        }
        self.shift_from(id);
        self.kinds.insert(id, Kind::Ml);
        id
    }

    fn trailing_ml(&mut self) -> i64 {
        let highest = self.highest();
        if highest >= 0 && self.kinds.get(&highest) == Some(&Kind::Ml) {
            return highest;
        }
        self.kinds.insert(highest + 1, Kind::Ml);
        highest + 1
    }
}

/// An ML op after a shader partition must not share it: the next partition id at least.
fn after_shader(candidate: i64, highest: i64, highest_kind: Kind) -> i64 {
    if highest < 0 {
        return candidate.max(0);
    }
    let safe = if highest_kind == Kind::Shader {
        highest + 1
    } else {
        highest
    };
    candidate.max(safe)
}

/// The partitions of `graph`, in execution order.
pub fn partition(graph: &Graph) -> Vec<Partition> {
    let n = graph.ops.len();
    let producer: BTreeMap<ValueId, usize> = graph
        .ops
        .iter()
        .enumerate()
        .flat_map(|(i, op)| op.results.iter().map(move |&v| (v, i)))
        .collect();
    // the ops reading each op's results, once (the constants' placement asks repeatedly)
    let mut readers = vec![Vec::new(); n];
    for (u, op) in graph.ops.iter().enumerate() {
        for v in &op.operands {
            if let Some(&p) = producer.get(v)
                && !readers[p].contains(&u)
            {
                readers[p].push(u);
            }
        }
    }
    let users = |op: usize| readers[op].clone();
    let mut plan = Plan {
        of: vec![None; n],
        kinds: BTreeMap::new(),
    };
    let (mut highest, mut highest_kind) = (-1i64, Kind::Ml);
    for (i, op) in graph.ops.iter().enumerate() {
        if is_constant(graph, i) {
            continue;
        }
        let (id, kind) = if op.is_shader() {
            (highest + 1, Kind::Shader)
        } else {
            let mut id = -1;
            for v in &op.operands {
                let Some(&def) = producer.get(v) else {
                    continue;
                };
                let Some(mut parent) = plan.of[def].filter(|_| !is_constant(graph, def)) else {
                    continue;
                };
                if graph.ops[def].is_shader() {
                    parent = after_shader(parent + 1, highest, highest_kind);
                }
                id = id.max(parent);
            }
            if id < 0 {
                id = after_shader(id, highest, highest_kind);
            }
            (id, Kind::Ml)
        };
        plan.record(i, id, kind);
        if id > highest {
            (highest, highest_kind) = (id, kind);
        } else if id == highest && kind == Kind::Ml {
            highest_kind = Kind::Ml;
        }
    }
    for i in (0..n).filter(|&i| is_constant(graph, i)) {
        let user_parts = |shader: bool| {
            users(i)
                .into_iter()
                .filter(|&u| graph.ops[u].is_shader() == shader)
                .filter_map(|u| plan.of[u])
                .min()
        };
        let (ml, shader) = (user_parts(false), user_parts(true));
        let id = match (ml, shader) {
            (ml, Some(s)) if ml.is_none_or(|m| s < m) => plan.ml_before(s),
            (Some(m), _) => m,
            _ => match plan.kinds.iter().rev().find(|(_, k)| **k == Kind::Ml) {
                Some((&id, _))
                    if !graph
                        .outputs
                        .iter()
                        .any(|v| graph.ops[i].results.contains(v)) =>
                {
                    id
                }
                _ => plan.trailing_ml(),
            },
        };
        plan.record(i, id, Kind::Ml);
    }

    // members: every op in its partition, constants also in each other ML partition using them
    let mut members: BTreeMap<i64, Vec<usize>> =
        plan.kinds.keys().map(|&k| (k, Vec::new())).collect();
    for i in 0..n {
        let Some(home) = plan.of[i] else { continue };
        let mut parts = vec![home];
        if is_constant(graph, i) {
            parts.extend(
                users(i)
                    .into_iter()
                    .filter(|&u| !graph.ops[u].is_shader())
                    .filter_map(|u| plan.of[u]),
            );
        }
        parts.sort_unstable();
        parts.dedup();
        for p in parts {
            members.entry(p).or_default().push(i);
        }
    }
    members
        .into_iter()
        .filter(|(_, ops)| !ops.is_empty())
        .map(|(id, ops)| {
            let kind = plan.kinds.get(&id).copied().unwrap_or(Kind::Ml);
            let defined: Vec<ValueId> = ops
                .iter()
                .flat_map(|&o| graph.ops[o].results.clone())
                .collect();
            let mut inputs = Vec::new();
            for &o in &ops {
                for &v in &graph.ops[o].operands {
                    if !defined.contains(&v) && !inputs.contains(&v) {
                        inputs.push(v);
                    }
                }
            }
            let outside_users = |v: ValueId| {
                graph.outputs.contains(&v)
                    || graph.ops.iter().enumerate().any(|(u, op)| {
                        !ops.contains(&u)
                            && op.operands.contains(&v)
                            // a cloned constant is read from the user's own copy
                            && (!producer.get(&v).is_some_and(|&p| is_constant(graph, p))
                                || op.is_shader())
                    })
            };
            let outputs = defined
                .iter()
                .copied()
                .filter(|&v| outside_users(v))
                .collect();
            Partition {
                kind,
                ops,
                inputs,
                outputs,
            }
        })
        .collect()
}
