//! TOSA MLIR text: one `func.func` (optionally inside `module { … }`) of `tosa.*` operations in
//! generic (`"tosa.const"() <{…}> : () -> …`) or pretty (`tosa.add %a, %b : (…) -> …`) form.
//! Errors name line and column.

use std::collections::{BTreeMap, HashMap};

use super::{Attr, Elem, Graph, Loc, Op, TensorType, Value, ValueId};

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

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    file: &'a str,
}

type PResult<T> = Result<T, ParseError>;

impl<'a> Cursor<'a> {
    fn loc_at(&self, pos: usize) -> Loc {
        let before = &self.text[..pos];
        let line = before.matches('\n').count() + 1;
        let column = pos - before.rfind('\n').map_or(0, |p| p + 1) + 1;
        Loc::Text { line, column }
    }

    fn error<T>(&self, message: impl Into<String>) -> PResult<T> {
        Err(ParseError {
            file: self.file.to_string(),
            loc: self.loc_at(self.pos),
            message: message.into(),
        })
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn skip_ws(&mut self) {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with("//") {
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
            } else {
                break;
            }
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.rest().chars().next()
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> PResult<()> {
        if self.eat(token) {
            Ok(())
        } else {
            let found: String = self.rest().chars().take(24).collect();
            self.error(format!("expected `{token}`, found `{found}`"))
        }
    }

    /// An identifier: letters, digits, `_`, `.`, `$`, `-` (after the first character).
    fn ident(&mut self) -> PResult<&'a str> {
        self.skip_ws();
        let rest = self.rest();
        let len = rest
            .char_indices()
            .find(|&(i, c)| {
                !(c.is_ascii_alphanumeric()
                    || c == '_'
                    || c == '.'
                    || c == '$'
                    || (i > 0 && c == '-'))
            })
            .map_or(rest.len(), |(i, _)| i);
        if len == 0 {
            let found: String = rest.chars().take(24).collect();
            return self.error(format!("expected a name, found `{found}`"));
        }
        self.pos += len;
        Ok(&rest[..len])
    }

    /// `%name` or `@name`.
    fn sigil_name(&mut self, sigil: char) -> PResult<String> {
        self.skip_ws();
        if !self.rest().starts_with(sigil) {
            let found: String = self.rest().chars().take(24).collect();
            return self.error(format!("expected `{sigil}name`, found `{found}`"));
        }
        self.pos += 1;
        Ok(format!("{sigil}{}", self.ident()?))
    }

    /// A string literal, escapes resolved (`\22`, `\"`, `\\`, `\n`).
    fn string(&mut self) -> PResult<String> {
        self.expect("\"")?;
        let mut bytes = Vec::new();
        let raw = self.rest().as_bytes();
        let mut i = 0;
        while i < raw.len() {
            match raw[i] {
                b'"' => {
                    self.pos += i + 1;
                    return String::from_utf8(bytes)
                        .or_else(|_| self.error("string is not valid UTF-8"));
                }
                b'\\' if i + 1 < raw.len() => {
                    let next = raw[i + 1];
                    let hex = |b: u8| (b as char).to_digit(16);
                    match next {
                        b'n' => bytes.push(b'\n'),
                        b't' => bytes.push(b'\t'),
                        b'"' | b'\\' => bytes.push(next),
                        _ if i + 2 < raw.len()
                            && hex(next).is_some()
                            && hex(raw[i + 2]).is_some() =>
                        {
                            let value = hex(next).unwrap_or(0) * 16 + hex(raw[i + 2]).unwrap_or(0);
                            bytes.push(value as u8);
                            i += 1;
                        }
                        _ => {
                            self.pos += i;
                            return self.error(format!("unknown escape `\\{}`", next as char));
                        }
                    }
                    i += 2;
                }
                b => {
                    bytes.push(b);
                    i += 1;
                }
            }
        }
        self.error("unterminated string")
    }

    /// Text up to the matching close of the bracket at the cursor, brackets and strings balanced.
    fn balanced(&mut self) -> PResult<&'a str> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut depth = 0i32;
        let mut i = start;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                }
                b'(' | b'[' | b'{' | b'<' => depth += 1,
                b'>' if i > 0 && bytes[i - 1] == b'-' => {}
                b')' | b']' | b'}' | b'>' => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos = i + 1;
                        return Ok(&self.text[start..=i]);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        self.error("unbalanced brackets")
    }

    /// A value of an attribute: everything up to the next `,` or closing bracket at this level.
    fn attr_text(&mut self) -> PResult<&'a str> {
        self.skip_ws();
        let start = self.pos;
        loop {
            match self.peek() {
                None => return self.error("unexpected end of input in an attribute"),
                Some(',' | '}' | ']' | ')') => break,
                Some('(' | '[' | '{' | '<' | '"') => {
                    if self.peek() == Some('"') {
                        self.string()?;
                    } else {
                        self.balanced()?;
                    }
                }
                Some(_) => {
                    let c = self.rest().chars().next().map_or(1, char::len_utf8);
                    self.pos += c;
                }
            }
        }
        Ok(self.text[start..self.pos].trim())
    }

    fn tensor_type(&mut self) -> PResult<TensorType> {
        self.skip_ws();
        let at = self.pos;
        if self.eat("!tosa.shape") {
            let inner = self.balanced()?;
            let rank: i64 = inner[1..inner.len() - 1]
                .trim()
                .parse()
                .or_else(|_| self.error(format!("bad shape type `!tosa.shape{inner}`")))?;
            return Ok(TensorType {
                shape: vec![rank],
                elem: Elem::I64,
            });
        }
        if !self.eat("tensor") {
            let found: String = self.rest().chars().take(24).collect();
            return self.error(format!("expected a tensor type, found `{found}`"));
        }
        let inner = self.balanced()?;
        let inner = &inner[1..inner.len() - 1];
        // dimensions are `<n>x` prefixes: the element type may contain an `x` (`index`)
        let mut parts = Vec::new();
        let mut elem_text = inner.trim();
        loop {
            let end = elem_text
                .find(|c: char| !(c.is_ascii_digit() || c == '?'))
                .unwrap_or(elem_text.len());
            match elem_text[end..].strip_prefix('x') {
                Some(rest) if end > 0 => {
                    parts.push(&elem_text[..end]);
                    elem_text = rest.trim_start();
                }
                _ => break,
            }
        }
        let elem = match elem_text.split(',').next().unwrap_or_default().trim() {
            "f32" => Elem::F32,
            "f16" => Elem::F16,
            "i1" => Elem::Bool,
            "i8" => Elem::I8,
            "i16" => Elem::I16,
            "i32" => Elem::I32,
            "i64" | "index" => Elem::I64,
            other => {
                self.pos = at;
                return self.error(format!("element type `{other}` is not supported"));
            }
        };
        let mut shape = Vec::new();
        for d in parts {
            match d.parse::<i64>() {
                Ok(n) if n >= 0 => shape.push(n),
                _ => {
                    self.pos = at;
                    return self.error(format!(
                        "dimension `{d}` of tensor<{inner}> is not static (fpshader needs static shapes)"
                    ));
                }
            }
        }
        Ok(TensorType { shape, elem })
    }

    /// `{ key = value, … }` into `attrs`.
    fn attr_dict(&mut self, attrs: &mut BTreeMap<String, Attr>) -> PResult<()> {
        self.expect("{")?;
        if self.eat("}") {
            return Ok(());
        }
        loop {
            let key = if self.peek() == Some('"') {
                self.string()?
            } else {
                self.ident()?.to_string()
            };
            let value = if self.eat("=") {
                let start = self.pos;
                let text = self.attr_text()?;
                parse_attr(text).map_err(|message| ParseError {
                    file: self.file.to_string(),
                    loc: self.loc_at(start),
                    message: format!("attribute `{key}`: {message}"),
                })?
            } else {
                Attr::Bool(true)
            };
            attrs.insert(key, value);
            if self.eat("}") {
                return Ok(());
            }
            self.expect(",")?;
        }
    }

    fn skip_loc(&mut self) -> PResult<()> {
        self.skip_ws();
        if self.rest().starts_with("loc(") {
            self.pos += 3;
            self.balanced()?;
        }
        Ok(())
    }
}

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
