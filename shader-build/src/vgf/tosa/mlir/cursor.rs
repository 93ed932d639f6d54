//! The lexer over MLIR text: a position with line and column, tokens, types and balanced
//! skipping; its errors name where they happen.

use std::collections::BTreeMap;

use super::super::{Attr, Elem, Loc, TensorType};
use super::{ParseError, parse_attr};

pub(super) struct Cursor<'a> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
    pub(super) file: &'a str,
}

pub(super) type PResult<T> = Result<T, ParseError>;

impl<'a> Cursor<'a> {
    pub(super) fn loc_at(&self, pos: usize) -> Loc {
        let before = &self.text[..pos];
        let line = before.matches('\n').count() + 1;
        let column = pos - before.rfind('\n').map_or(0, |p| p + 1) + 1;
        Loc::Text { line, column }
    }

    pub(super) fn error<T>(&self, message: impl Into<String>) -> PResult<T> {
        Err(ParseError {
            file: self.file.to_string(),
            loc: self.loc_at(self.pos),
            message: message.into(),
        })
    }

    pub(super) fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    pub(super) fn skip_ws(&mut self) {
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

    pub(super) fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.rest().chars().next()
    }

    pub(super) fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, token: &str) -> PResult<()> {
        if self.eat(token) {
            Ok(())
        } else {
            let found: String = self.rest().chars().take(24).collect();
            self.error(format!("expected `{token}`, found `{found}`"))
        }
    }

    /// An identifier: letters, digits, `_`, `.`, `$`, `-` (after the first character).
    pub(super) fn ident(&mut self) -> PResult<&'a str> {
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
    pub(super) fn sigil_name(&mut self, sigil: char) -> PResult<String> {
        self.skip_ws();
        if !self.rest().starts_with(sigil) {
            let found: String = self.rest().chars().take(24).collect();
            return self.error(format!("expected `{sigil}name`, found `{found}`"));
        }
        self.pos += 1;
        Ok(format!("{sigil}{}", self.ident()?))
    }

    /// A string literal, escapes resolved (`\22`, `\"`, `\\`, `\n`).
    pub(super) fn string(&mut self) -> PResult<String> {
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
    pub(super) fn balanced(&mut self) -> PResult<&'a str> {
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
    pub(super) fn attr_text(&mut self) -> PResult<&'a str> {
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

    pub(super) fn tensor_type(&mut self) -> PResult<TensorType> {
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
    pub(super) fn attr_dict(&mut self, attrs: &mut BTreeMap<String, Attr>) -> PResult<()> {
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

    pub(super) fn skip_loc(&mut self) -> PResult<()> {
        self.skip_ws();
        if self.rest().starts_with("loc(") {
            self.pos += 3;
            self.balanced()?;
        }
        Ok(())
    }
}
