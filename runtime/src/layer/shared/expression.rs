//! ncnn's shape expressions (Crop `19/20/21`, Reshape `6`, Interp `9`): comma-separated
//! prefix calls over the inputs' extents, e.g. `//(0w,2),*(0h,2),0c`. `0w` is input 0's w (also
//! `h`, `d`, `c`, `n`); values are integers until a float enters (`*(0c,0.3)`), and each list
//! item is truncated to an integer at the end.

use crate::error::ExpressionError;

/// An input's extents as ncnn's `Mat` has them: `[w, h, d, c]` (1 where the dims lack one).
pub type Extents = [usize; 4];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Value {
    Int(i32),
    Float(f32),
}

impl Value {
    fn f(self) -> f32 {
        match self {
            Value::Int(i) => i as f32,
            Value::Float(f) => f,
        }
    }

    fn truncated(self) -> i32 {
        match self {
            Value::Int(i) => i,
            Value::Float(f) => f as i32,
        }
    }
}

/// How many inputs an expression reads (`1w` needs two): 0 for one that reads none.
pub fn inputs_read(expr: &str) -> usize {
    tokens(expr)
        .filter_map(extent_ref)
        .map(|(i, _)| i + 1)
        .max()
        .unwrap_or(0)
}

fn tokens(expr: &str) -> impl Iterator<Item = &str> {
    expr.split(['(', ')', ',']).filter(|t| !t.is_empty())
}

/// `(input, axis letter)` of a token like `0w`.
fn extent_ref(t: &str) -> Option<(usize, u8)> {
    match t.as_bytes() {
        [d @ b'0'..=b'9', a @ (b'w' | b'h' | b'd' | b'c' | b'n')] => {
            Some((usize::from(d - b'0'), *a))
        }
        _ => None,
    }
}

/// The longest prefix of `t` C's `sscanf("%d")` reads.
fn int_prefix(t: &str) -> Option<i32> {
    let b = t.as_bytes();
    let sign = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = b[sign..].iter().take_while(|c| c.is_ascii_digit()).count();
    (digits > 0)
        .then(|| t[..sign + digits].parse().ok())
        .flatten()
}

/// The longest prefix of `t` C's `sscanf("%f")` reads (decimal forms).
fn float_prefix(t: &str) -> Option<f32> {
    let b = t.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let int = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    i += int;
    let mut frac = 0;
    if b.get(i) == Some(&b'.') {
        frac = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if int + frac > 0 {
            i += 1 + frac;
        }
    }
    if int + frac == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1 + usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let exp = b
            .get(j..)
            .map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
        if exp > 0 {
            j += exp;
            i = j;
        }
    }
    t[..i].parse().ok()
}

/// Evaluates `expr` over `inputs`: the list of integers it gives.
pub fn eval_list(expr: &str, inputs: &[Extents]) -> Result<Vec<i32>, ExpressionError> {
    let err_operand = |op: &str| ExpressionError::Operand {
        expr: expr.to_string(),
        op: op.to_string(),
    };
    let toks: Vec<&str> = tokens(expr).collect();
    let mut stack: Vec<Value> = Vec::new();
    for &t in toks.iter().rev() {
        if let Some((index, axis)) = extent_ref(t) {
            let e = inputs.get(index).ok_or_else(|| ExpressionError::Blob {
                expr: expr.to_string(),
                token: t.to_string(),
                index,
                inputs: inputs.len(),
            })?;
            let n = match axis {
                b'w' => e[0],
                b'h' => e[1],
                b'd' => e[2],
                b'c' => e[3],
                _ => 1,
            };
            stack.push(Value::Int(n as i32));
            continue;
        }
        let arity = match t {
            "+" | "-" | "*" | "//" | "max" | "min" | "/" | "atan2" | "fmod" | "pow"
            | "remainder" | "logaddexp" | "and" | "or" | "xor" | "lshift" | "rshift" => 2,
            "abs" | "neg" | "sign" | "square" | "trunc" | "ceil" | "floor" | "round" | "acos"
            | "acosh" | "asin" | "asinh" | "atan" | "atanh" | "cos" | "cosh" | "erf" | "exp"
            | "log" | "log10" | "reciprocal" | "rsqrt" | "sin" | "sinh" | "sqrt" | "tan"
            | "tanh" => 1,
            _ => {
                let value = match (int_prefix(t), float_prefix(t)) {
                    (Some(i), Some(f)) if i as f32 == f => Value::Int(i),
                    (_, Some(f)) => Value::Float(f),
                    _ => {
                        return Err(ExpressionError::Token {
                            expr: expr.to_string(),
                            token: t.to_string(),
                        });
                    }
                };
                stack.push(value);
                continue;
            }
        };
        let a = stack.pop().ok_or_else(|| err_operand(t))?;
        let value = if arity == 1 {
            unary(t, a)
        } else {
            let b = stack.pop().ok_or_else(|| err_operand(t))?;
            binary(t, a, b).ok_or_else(|| ExpressionError::DivideByZero {
                expr: expr.to_string(),
            })?
        };
        stack.push(value);
    }
    if stack.is_empty() {
        return Err(ExpressionError::Empty {
            expr: expr.to_string(),
        });
    }
    Ok(stack.iter().rev().map(|v| v.truncated()).collect())
}

fn unary(op: &str, a: Value) -> Value {
    use Value::{Float, Int};
    match (op, a) {
        ("abs", Int(i)) => Int(i.wrapping_abs()),
        ("neg", Int(i)) => Int(i.wrapping_neg()),
        ("sign", Int(i)) => Int(i.signum()),
        ("square", Int(i)) => Int(i.wrapping_mul(i)),
        ("trunc" | "ceil" | "floor" | "round", Int(i)) => Int(i),
        ("trunc", Float(f)) => Int(f.trunc() as i32),
        ("ceil", Float(f)) => Int(f.ceil() as i32),
        ("floor", Float(f)) => Int(f.floor() as i32),
        ("round", Float(f)) => Int(f.round() as i32),
        ("abs", Float(f)) => Float(f.abs()),
        ("neg", Float(f)) => Float(-f),
        ("sign", Float(f)) => Float(if f > 0.0 {
            1.0
        } else if f == 0.0 {
            0.0
        } else {
            -1.0
        }),
        ("square", Float(f)) => Float(f * f),
        (op, a) => {
            let a = a.f();
            Float(match op {
                "acos" => a.acos(),
                "acosh" => a.acosh(),
                "asin" => a.asin(),
                "asinh" => a.asinh(),
                "atan" => a.atan(),
                "atanh" => a.atanh(),
                "cos" => a.cos(),
                "cosh" => a.cosh(),
                "erf" => libm::erff(a),
                "exp" => a.exp(),
                "log" => a.ln(),
                "log10" => a.log10(),
                "reciprocal" => 1.0 / a,
                "rsqrt" => 1.0 / a.sqrt(),
                "sin" => a.sin(),
                "sinh" => a.sinh(),
                "sqrt" => a.sqrt(),
                "tan" => a.tan(),
                _ => a.tanh(),
            })
        }
    }
}

/// `op(a, b)`; `None` for an integer division by zero.
fn binary(op: &str, a: Value, b: Value) -> Option<Value> {
    use Value::{Float, Int};
    Some(match (op, a, b) {
        ("+", Int(x), Int(y)) => Int(x.wrapping_add(y)),
        ("-", Int(x), Int(y)) => Int(x.wrapping_sub(y)),
        ("*", Int(x), Int(y)) => Int(x.wrapping_mul(y)),
        ("//", Int(x), Int(y)) => Int(x.checked_div(y)?),
        ("max", Int(x), Int(y)) => Int(x.max(y)),
        ("min", Int(x), Int(y)) => Int(x.min(y)),
        ("and" | "or" | "xor" | "lshift" | "rshift", a, b) => {
            let (x, y) = (a.truncated(), b.truncated());
            Int(match op {
                "and" => x & y,
                "or" => x | y,
                "xor" => x ^ y,
                "lshift" => x.wrapping_shl(y as u32),
                _ => x.wrapping_shr(y as u32),
            })
        }
        (op, a, b) => {
            let (x, y) = (a.f(), b.f());
            Float(match op {
                "+" => x + y,
                "-" => x - y,
                "*" => x * y,
                "//" => (x / y).floor(),
                "max" => x.max(y),
                "min" => x.min(y),
                "/" => x / y,
                "atan2" => x.atan2(y),
                "fmod" => x % y,
                "pow" => x.powf(y),
                "remainder" => {
                    let r = x % y;
                    if x * y < 0.0 { r + y } else { r }
                }
                _ => (x.exp() + y.exp()).ln(),
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncnn_expressions_evaluate_like_ncnn() {
        let a = [13, 12, 25, 48];
        let b = [8, 5, 3, 4];
        let eval = |e: &str| eval_list(e, &[a, b]).unwrap();
        assert_eq!(eval("2"), vec![2]);
        assert_eq!(eval("-2"), vec![-2]);
        assert_eq!(eval("16,//(0d,4),2,3"), vec![16, 6, 2, 3]);
        assert_eq!(eval("32,-1,-(0w,2)"), vec![32, -1, 11]);
        // sscanf reads the leading 0 of `0h//2`
        assert_eq!(eval("-(0w,3),0h//2,floor(*(0c,0.3))"), vec![10, 0, 14]);
        assert_eq!(eval("-1,0h,ceil(*(0c,0.9))"), vec![-1, 12, 44]);
        assert_eq!(eval("*(1c,4)"), vec![16]);
        // `neg` takes one operand: the 3 stays a list item of its own
        assert_eq!(eval("neg(1h,3)"), vec![-5, 3]);
        assert_eq!(eval("//(100,0h),round(fmod(100,0c))"), vec![8, 4]);
        assert_eq!(eval("-233,min(1c,0c)"), vec![-233, 4]);
        assert_eq!(inputs_read("//(1h,15)"), 2);
        assert_eq!(inputs_read("2"), 0);
    }

    #[test]
    fn bad_expressions_are_errors() {
        let a = [4, 4, 1, 1];
        assert!(matches!(
            eval_list("+(0w)", &[a]),
            Err(ExpressionError::Operand { .. })
        ));
        assert!(matches!(
            eval_list("2w", &[a]),
            Err(ExpressionError::Blob { index: 2, .. })
        ));
        assert!(matches!(
            eval_list("//(0w,0)", &[a]),
            Err(ExpressionError::DivideByZero { .. })
        ));
        assert!(matches!(
            eval_list("x", &[a]),
            Err(ExpressionError::Token { .. })
        ));
        assert!(matches!(
            eval_list("", &[a]),
            Err(ExpressionError::Empty { .. })
        ));
    }
}
