//! ncnn's `.param` text: `7767517`, `layer_count blob_count`, then one line per layer:
//! `Type name bottom_count top_count bottoms… tops… id=value…`.

use crate::error::{Error, Result};
use crate::layer::{ParamDict, ParamValue};

/// One layer line.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerLine {
    /// The layer type.
    pub kind: String,
    /// The layer name.
    pub name: String,
    /// Input blob names.
    pub bottoms: Vec<String>,
    /// Output blob names.
    pub tops: Vec<String>,
    /// Its parameters.
    pub params: ParamDict,
    /// The 1-based line it came from.
    pub line: usize,
}

/// A parsed `.param`.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamFile {
    /// The layers, in file order (which ncnn requires to be topological).
    pub layers: Vec<LayerLine>,
    /// The blob count the header declares.
    pub blob_count: usize,
}

const MAGIC: &str = "7767517";
/// Header counts beyond this are refused rather than allocated.
const MAX_COUNT: usize = 1 << 20;

fn value(text: &str) -> std::result::Result<ParamValue, String> {
    if let Some(s) = text.strip_prefix('"') {
        return s
            .strip_suffix('"')
            .map(|s| ParamValue::Str(s.to_string()))
            .ok_or_else(|| format!("unterminated string {text}"));
    }
    let is_float = text.contains(['.', 'e', 'E']) && !text.starts_with("0x");
    if is_float {
        text.parse::<f32>()
            .map(ParamValue::Float)
            .map_err(|_| format!("bad float `{text}`"))
    } else {
        text.parse::<i32>()
            .map(ParamValue::Int)
            .map_err(|_| format!("bad integer `{text}`"))
    }
}

/// Parses `.param` text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<ParamFile> {
    let fail = |line: usize, message: String| Error::Param {
        file: file.to_string(),
        location: format!("line {line}"),
        message,
    };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (n, magic) = lines
        .next()
        .ok_or_else(|| fail(1, "empty file; expected the magic 7767517".into()))?;
    if magic != MAGIC {
        return Err(fail(
            n,
            format!("magic `{magic}`; expected {MAGIC} (is this an ncnn .param?)"),
        ));
    }
    let (n, counts) = lines
        .next()
        .ok_or_else(|| fail(n + 1, "missing `layer_count blob_count`".into()))?;
    let counts: Vec<usize> = counts
        .split_whitespace()
        .map(|t| t.parse::<usize>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| fail(n, format!("bad counts `{counts}`")))?;
    let [layer_count, blob_count] = counts[..] else {
        return Err(fail(n, "expected `layer_count blob_count`".into()));
    };
    if layer_count > MAX_COUNT || blob_count > MAX_COUNT {
        return Err(fail(
            n,
            format!("implausible counts {layer_count} {blob_count}"),
        ));
    }
    let mut layers = Vec::with_capacity(layer_count);
    for (n, line) in lines {
        if layers.len() == layer_count {
            return Err(fail(
                n,
                format!("more than the {layer_count} layers declared"),
            ));
        }
        let mut tokens = line.split_whitespace();
        let mut next = |what: &str| {
            tokens
                .next()
                .ok_or_else(|| fail(n, format!("missing {what}")))
        };
        let kind = next("layer type")?.to_string();
        let name = next("layer name")?.to_string();
        let count = |t: &str, what: &str| {
            t.parse::<usize>()
                .ok()
                .filter(|c| *c <= MAX_COUNT)
                .ok_or_else(|| fail(n, format!("bad {what} `{t}`")))
        };
        let bottom_count = count(next("bottom count")?, "bottom count")?;
        let top_count = count(next("top count")?, "top count")?;
        let mut names = |k: usize, what: &str| -> Result<Vec<String>> {
            (0..k).map(|_| next(what).map(str::to_string)).collect()
        };
        let bottoms = names(bottom_count, "bottom blob name")?;
        let tops = names(top_count, "top blob name")?;
        let mut params = ParamDict::new();
        for kv in tokens {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| fail(n, format!("`{kv}` is not id=value")))?;
            let id: i32 = k
                .parse()
                .map_err(|_| fail(n, format!("bad parameter id `{k}`")))?;
            if id <= -23300 {
                let id = -id - 23300;
                let (count, rest) = v.split_once(',').unwrap_or((v, ""));
                let count: usize = count
                    .parse()
                    .map_err(|_| fail(n, format!("bad array length in `{kv}`")))?;
                let items: Vec<&str> = rest.split(',').filter(|s| !s.is_empty()).collect();
                if items.len() != count {
                    return Err(fail(
                        n,
                        format!("array {id} declares {count} values, has {}", items.len()),
                    ));
                }
                let values = items
                    .iter()
                    .map(|t| value(t))
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(|m| fail(n, m))?;
                params.set(id as u32, ParamValue::Array(values));
            } else if (0..32).contains(&id) {
                params.set(id as u32, value(v).map_err(|m| fail(n, m))?);
            } else {
                return Err(fail(n, format!("parameter id {id} out of range 0..32")));
            }
        }
        layers.push(LayerLine {
            kind,
            name,
            bottoms,
            tops,
            params,
            line: n,
        });
    }
    if layers.len() != layer_count {
        return Err(fail(
            text.lines().count(),
            format!(
                "the header declares {layer_count} layers, the file has {}",
                layers.len()
            ),
        ));
    }
    Ok(ParamFile { layers, blob_count })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NET: &str = "7767517\n3 3\nInput data 0 1 data 0=4 1=1 2=2\n\
        ReLU relu 1 1 data r 0=0.1\nReshape rs 1 1 r out -23300=2,3,4 1=1e-2 2=\"x\"\n";

    #[test]
    fn parses_values_arrays_and_strings() {
        let p = parse("t", NET).unwrap();
        assert_eq!(p.layers.len(), 3);
        assert_eq!(p.layers[1].params.float(0, 0.0), 0.1);
        assert_eq!(p.layers[2].params.ints(0), [3, 4]);
        assert_eq!(p.layers[2].params.float(1, 0.0), 0.01);
        assert_eq!(
            p.layers[2].params.get(2),
            Some(&ParamValue::Str("x".into()))
        );
        assert_eq!(p.layers[2].line, 5);
    }

    #[test]
    fn every_truncation_and_mutation_is_an_error_or_a_parse_never_a_panic() {
        for cut in 0..NET.len() {
            let _ = parse("t", &NET[..cut]);
        }
        let bytes = NET.as_bytes();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..5000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut b = bytes.to_vec();
            let at = (seed % b.len() as u64) as usize;
            b[at] = (seed >> 32) as u8;
            let _ = parse("t", &String::from_utf8_lossy(&b));
        }
        assert!(matches!(parse("t", "7767518\n"), Err(Error::Param { .. })));
        let e = parse("t", "7767517\n1 1\nReLU r 1 1 a\n").unwrap_err();
        assert!(e.to_string().contains("line 3"), "{e}");
    }
}
