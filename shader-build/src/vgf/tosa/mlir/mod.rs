//! TOSA MLIR text: one `func.func` (optionally inside `module { … }`) of `tosa.*` operations in
//! generic (`"tosa.const"() <{…}> : () -> …`) or pretty (`tosa.add %a, %b : (…) -> …`) form.
//! Errors name line and column.
//!
//! `cursor` is the lexer (positions, tokens, types, balanced skipping); this file the
//! attributes, the value table and the op builder.

mod cursor;

use std::collections::{BTreeMap, HashMap};

use super::{Attr, Graph, Loc, Op, TensorType, Value, ValueId};

/// A syntax or type error in MLIR text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{loc}: {message}")]
pub struct ParseError {
    /// The file's name as given.
    pub file: String,
    /// Where.
    pub loc: Loc,
    /// What was expected or found.
    pub message: String,
}

use cursor::{Cursor, PResult};

fn number(text: &str) -> Option<f64> {
    let text = text.split(':').next()?.trim();
    match text {
        "true" => Some(1.0),
        "false" => Some(0.0),
        _ if text.starts_with("0x") => u64::from_str_radix(&text[2..], 16).ok().map(|v| v as f64),
        _ => text.parse().ok(),
    }
}

fn numbers(list: &str) -> Result<Vec<f64>, String> {
    list.split([',', '[', ']'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| number(s).ok_or_else(|| format!("`{s}` is not a number")))
        .collect()
}

fn parse_attr(text: &str) -> Result<Attr, String> {
    if let Some(rest) = text.strip_prefix("dense<") {
        let close = rest
            .rfind("> :")
            .or_else(|| rest.rfind(">:"))
            .ok_or("dense without type")?;
        let values = numbers(&rest[..close])?;
        let ty_text = rest[close + 1..].trim_start_matches([' ', ':']).trim();
        let file = "";
        let mut c = Cursor {
            text: ty_text,
            pos: 0,
            file,
        };
        let ty = c.tensor_type().map_err(|e| e.message)?;
        return Ok(Attr::Dense(values, ty));
    }
    if let Some(rest) = text.strip_prefix("array<") {
        let body = rest.trim_end_matches('>');
        let values = body.split_once(':').map_or("", |(_, v)| v);
        return Ok(Attr::Numbers(numbers(values)?));
    }
    if text.starts_with('"') {
        let mut c = Cursor {
            text,
            pos: 0,
            file: "",
        };
        return c.string().map(Attr::Str).map_err(|e| e.message);
    }
    if text.starts_with('[')
        && !text.contains('"')
        && let Ok(v) = numbers(text)
    {
        return Ok(Attr::Numbers(v));
    }
    match text {
        "true" => return Ok(Attr::Bool(true)),
        "false" => return Ok(Attr::Bool(false)),
        _ => {}
    }
    Ok(number(text).map_or_else(|| Attr::Raw(text.to_string()), Attr::Number))
}

struct Builder {
    graph: Graph,
    names: HashMap<String, ValueId>,
}

impl Builder {
    fn define(
        &mut self,
        c: &Cursor<'_>,
        name: String,
        ty: TensorType,
        at: usize,
    ) -> PResult<ValueId> {
        if self.names.contains_key(&name) {
            return Err(ParseError {
                file: c.file.to_string(),
                loc: c.loc_at(at),
                message: format!("`{name}` is defined twice"),
            });
        }
        let id = self.graph.values.len();
        self.graph.values.push(Value {
            name: name.clone(),
            ty,
        });
        self.names.insert(name, id);
        Ok(id)
    }

    fn lookup(&self, c: &Cursor<'_>, name: &str, at: usize) -> PResult<ValueId> {
        self.names.get(name).copied().ok_or_else(|| ParseError {
            file: c.file.to_string(),
            loc: c.loc_at(at),
            message: format!("`{name}` is used before it is defined"),
        })
    }
}

/// The name in `{tf_saved_model.index_path = ["name"]}`, if the argument attributes carry one.
fn index_path(attrs: &BTreeMap<String, Attr>) -> Option<String> {
    match attrs.get("tf_saved_model.index_path")? {
        Attr::Raw(raw) => Some(raw.trim_matches(['[', ']', '"', ' ']).to_string()),
        _ => None,
    }
}

/// Parses MLIR text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Graph, ParseError> {
    let mut c = Cursor { text, pos: 0, file };
    let mut b = Builder {
        graph: Graph::default(),
        names: HashMap::new(),
    };
    let in_module = c.eat("module");
    if in_module {
        if c.eat("attributes") {
            c.balanced()?;
        }
        c.expect("{")?;
    }
    c.expect("func.func")?;
    if c.peek() != Some('@') {
        c.ident()?; // visibility
    }
    b.graph.name = c.sigil_name('@')?[1..].to_string();
    c.expect("(")?;
    if !c.eat(")") {
        loop {
            let at = c.pos;
            let name = c.sigil_name('%')?;
            c.expect(":")?;
            let ty = c.tensor_type()?;
            let mut attrs = BTreeMap::new();
            if c.peek() == Some('{') {
                c.attr_dict(&mut attrs)?;
            }
            let id = b.define(&c, name, ty, at)?;
            let index = b.graph.inputs.len();
            b.graph.inputs.push(id);
            b.graph
                .input_names
                .push(index_path(&attrs).unwrap_or_else(|| format!("input_{index}")));
            if c.eat(")") {
                break;
            }
            c.expect(",")?;
        }
    }
    let mut result_names = Vec::new();
    if c.eat("->") {
        let parens = c.eat("(");
        loop {
            c.tensor_type()?;
            let mut attrs = BTreeMap::new();
            if c.peek() == Some('{') && parens {
                c.attr_dict(&mut attrs)?;
            }
            result_names.push(index_path(&attrs));
            if !parens || c.eat(")") {
                break;
            }
            c.expect(",")?;
        }
    }
    if c.eat("attributes") {
        c.balanced()?;
    }
    c.expect("{")?;
    loop {
        c.skip_ws();
        let at = c.pos;
        if c.eat("}") {
            return c.error("the function ends without `return`");
        }
        if c.eat("func.return") || c.eat("return") {
            if c.peek() == Some('%') {
                loop {
                    let at = c.pos;
                    let name = c.sigil_name('%')?;
                    let id = b.lookup(&c, &name, at)?;
                    b.graph.outputs.push(id);
                    if !c.eat(",") {
                        break;
                    }
                }
                c.expect(":")?;
                for i in 0..b.graph.outputs.len() {
                    if i > 0 {
                        c.expect(",")?;
                    }
                    c.tensor_type()?;
                }
            }
            c.skip_loc()?;
            c.expect("}")?;
            if in_module {
                c.expect("}")?;
            }
            break;
        }
        let mut results = Vec::new();
        loop {
            let name = c.sigil_name('%')?;
            results.push(name);
            if !c.eat(",") {
                break;
            }
        }
        c.expect("=")?;
        let op_at = c.pos;
        let generic = c.peek() == Some('"');
        let name = if generic {
            c.string()?
        } else {
            c.ident()?.to_string()
        };
        let mut operands = Vec::new();
        let mut read_operands = |c: &mut Cursor<'_>, b: &Builder| -> PResult<()> {
            while c.peek() == Some('%') {
                let at = c.pos;
                let name = c.sigil_name('%')?;
                operands.push(b.lookup(c, &name, at)?);
                if !c.eat(",") {
                    break;
                }
            }
            Ok(())
        };
        if generic {
            c.expect("(")?;
            read_operands(&mut c, &b)?;
            c.expect(")")?;
        } else {
            read_operands(&mut c, &b)?;
        }
        let mut attrs = BTreeMap::new();
        if c.eat("<") {
            c.attr_dict(&mut attrs)?;
            c.expect(">")?;
        }
        if c.peek() == Some('{') {
            c.attr_dict(&mut attrs)?;
        }
        c.expect(":")?;
        let mut result_types = Vec::new();
        if c.eat("(") {
            if !c.eat(")") {
                loop {
                    c.tensor_type()?;
                    if c.eat(")") {
                        break;
                    }
                    c.expect(",")?;
                }
            }
            c.expect("->")?;
            let parens = c.eat("(");
            loop {
                result_types.push(c.tensor_type()?);
                if !parens || c.eat(")") {
                    break;
                }
                c.expect(",")?;
            }
        } else {
            // the short form `: type` gives the one type of operands and result
            let ty = c.tensor_type()?;
            result_types = vec![ty; results.len()];
        }
        c.skip_loc()?;
        if result_types.len() != results.len() {
            c.pos = at;
            return c.error(format!(
                "{} results are named but the type gives {}",
                results.len(),
                result_types.len()
            ));
        }
        let results = results
            .into_iter()
            .zip(result_types)
            .map(|(n, t)| b.define(&c, n, t, at))
            .collect::<PResult<Vec<_>>>()?;
        b.graph.ops.push(Op {
            name,
            operands,
            results,
            attrs,
            loc: c.loc_at(op_at),
        });
    }
    if b.graph.outputs.is_empty() {
        return c.error("the function returns nothing");
    }
    b.graph.output_names = (0..b.graph.outputs.len())
        .map(|i| {
            result_names
                .get(i)
                .cloned()
                .flatten()
                .unwrap_or_else(|| format!("output_{i}"))
        })
        .collect();
    Ok(b.graph)
}
