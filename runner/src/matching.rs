//! The reference's matchers over JSON values: [`partial_match`] (FORMAT §B.3, used by mock
//! `whenInput`, the tool assertions' `input` and `raised.reason`), [`deep_equal`] (the
//! `variables` assertion, §B.3/§B.4) and [`resolve_path`] (the `${{…}}` path grammar, §A.3).
//!
//! Pure functions; no IO. Regex strings (`/body/flags`) compile through
//! `wfx_schemas::jsregex` so they have ECMAScript semantics.

use serde_json::Value;
use wfx_schemas::jsregex;

/// JavaScript's `String(v)` for a JSON value, with `null` read as `""` (the reference
/// tests a regex against `String(actual ?? "")`).
pub fn js_string(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => js_number(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| {
                if i.is_null() {
                    String::new()
                } else {
                    js_string(i)
                }
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}

/// A number the way JavaScript prints it: `1.0` is `1`.
pub fn js_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
        Some(f) => f.to_string(),
        None => n.to_string(),
    }
}

/// Deepest nesting [`partial_match`] and [`deep_equal`] follow, in levels of arrays and
/// objects (bounded work): as deep as the YAML depth limit, so every value a case can spell
/// is compared in full; deeper, `partial_match` gives up with [`MatchGaveUp::TooDeep`] and
/// `deep_equal` answers "not equal".
pub const MAX_MATCH_DEPTH: usize = 256;

/// Why a [`partial_match`] could not decide. The caller fails what it was judging (a
/// failed assertion, a failed tool call) with this message: deciding either way would let a
/// hostile pattern choose the outcome (fail closed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchGaveUp {
    /// A `/body/flags` token ran out of `jsregex::MAX_MATCH_WORK`; the token.
    Regex(String),
    /// The expected value nests deeper than [`MAX_MATCH_DEPTH`].
    TooDeep,
}

impl std::fmt::Display for MatchGaveUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatchGaveUp::Regex(token) => write!(f, "regex `{token}`: {}", jsregex::WorkExceeded),
            MatchGaveUp::TooDeep => write!(
                f,
                "the expected value nests deeper than {MAX_MATCH_DEPTH} levels (bounded work)"
            ),
        }
    }
}

/// Whether the scalar `expected` matches `actual`: a `/body/flags` string tests
/// `String(actual ?? "")`; anything else is strict equality. A string with the regex shape
/// that does not compile falls back to a literal, as the reference's `scalarMatches` does.
/// `Err` when the regex gave up (`jsregex::MAX_MATCH_WORK`).
pub fn scalar_matches(expected: &Value, actual: Option<&Value>) -> Result<bool, MatchGaveUp> {
    if let Value::String(s) = expected
        && let Some(Ok(re)) = jsregex::compile_token(s)
    {
        return re
            .test(&actual.map(js_string).unwrap_or_default())
            .map_err(|_| MatchGaveUp::Regex(s.clone()));
    }
    Ok(match actual {
        Some(a) => strict_equal(expected, a),
        None => false,
    })
}

/// JavaScript `===` on scalars (numbers by value, so `1` and `1.0` are equal); collections
/// are never `===` unless identical, which JSON values cannot be, so they compare false.
fn strict_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        _ => false,
    }
}

/// `partialMatch(expected, actual)` exactly as FORMAT §B.3: arrays need the same length
/// and match element-wise in order; objects need every expected key present (extra keys
/// ignored at every depth); scalars are regex-or-strict-equality. `actual` is `None` for
/// JavaScript `undefined`. `Err` when a regex gave up or `expected` nests deeper than
/// [`MAX_MATCH_DEPTH`] (bounded work); the first such problem in document order.
pub fn partial_match(expected: &Value, actual: Option<&Value>) -> Result<bool, MatchGaveUp> {
    partial_match_at(expected, actual, 0)
}

fn partial_match_at(
    expected: &Value,
    actual: Option<&Value>,
    depth: usize,
) -> Result<bool, MatchGaveUp> {
    if depth > MAX_MATCH_DEPTH {
        return Err(MatchGaveUp::TooDeep);
    }
    match expected {
        Value::Array(exp) => match actual {
            Some(Value::Array(act)) if exp.len() == act.len() => {
                for (e, a) in exp.iter().zip(act) {
                    if !partial_match_at(e, Some(a), depth + 1)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            _ => Ok(false),
        },
        Value::Object(exp) => match actual {
            Some(Value::Object(act)) => {
                for (k, e) in exp {
                    if !act.contains_key(k) || !partial_match_at(e, act.get(k), depth + 1)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            _ => Ok(false),
        },
        scalar => scalar_matches(scalar, actual),
    }
}

/// `deepEqual` of the `variables` assertion (FORMAT §B.3): strict on scalars, ordered
/// arrays of equal length, objects with the same key count and equal values in any order.
/// Values nested deeper than [`MAX_MATCH_DEPTH`] compare unequal (bounded work).
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    deep_equal_at(a, b, 0)
}

fn deep_equal_at(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > MAX_MATCH_DEPTH {
        return false;
    }
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| deep_equal_at(p, q, depth + 1))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal_at(v, w, depth + 1)))
        }
        _ => strict_equal(a, b),
    }
}

/// `resolvePath(value, segments)` (FORMAT §A.3): arrays take canonical indices
/// (`^(0|[1-9][0-9]*)$`) or from-end indices (`^-[1-9][0-9]*$`, `-1` is the last), objects
/// take own keys; anything else is `None` (JavaScript `undefined`).
pub fn resolve_path<'v>(value: &'v Value, segments: &[&str]) -> Option<&'v Value> {
    let mut cur = value;
    for seg in segments {
        cur = match cur {
            Value::Array(items) => {
                let idx = array_index(seg, items.len())?;
                items.get(idx)?
            }
            Value::Object(map) => map.get(*seg)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn array_index(seg: &str, len: usize) -> Option<usize> {
    let canonical = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
    };
    if let Some(rest) = seg.strip_prefix('-') {
        if canonical(rest) && rest != "0" {
            let back: usize = rest.parse().ok()?;
            return len.checked_sub(back);
        }
        return None;
    }
    if canonical(seg) {
        seg.parse().ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn partial_match_edge_cases_of_format_b3() {
        // Arrays: same length, element-wise, in order.
        assert_eq!(
            Ok(true),
            partial_match(&json!([1, 2]), Some(&json!([1, 2])))
        );
        assert_eq!(Ok(false), partial_match(&json!([1]), Some(&json!([1, 2]))));
        assert_eq!(
            Ok(false),
            partial_match(&json!([2, 1]), Some(&json!([1, 2])))
        );
        assert_eq!(Ok(false), partial_match(&json!([]), Some(&json!({}))));
        // Objects: extra keys ignored at every depth; presence is required even for null.
        assert_eq!(
            Ok(true),
            partial_match(
                &json!({"a": {"b": 1}}),
                Some(&json!({"a": {"b": 1, "c": 2}, "d": 3}))
            )
        );
        assert_eq!(
            Ok(false),
            partial_match(&json!({"a": null}), Some(&json!({})))
        );
        assert_eq!(
            Ok(true),
            partial_match(&json!({"a": null}), Some(&json!({"a": null})))
        );
        assert_eq!(Ok(false), partial_match(&json!({}), Some(&json!([]))));
        assert_eq!(Ok(true), partial_match(&json!({}), Some(&json!({"x": 1}))));
        // Scalars: strict, no coercion.
        assert_eq!(Ok(false), partial_match(&json!("1"), Some(&json!(1))));
        assert_eq!(Ok(true), partial_match(&json!(1), Some(&json!(1.0))));
        assert_eq!(Ok(false), partial_match(&json!(true), Some(&json!("true"))));
        assert_eq!(Ok(false), partial_match(&json!(1), None));
        // Regex strings test String(actual ?? "").
        assert_eq!(
            Ok(true),
            partial_match(&json!("/^4\\d$/"), Some(&json!(42)))
        );
        assert_eq!(
            Ok(true),
            partial_match(&json!("/^true$/"), Some(&json!(true)))
        );
        assert_eq!(Ok(true), partial_match(&json!("/^$/"), Some(&json!(null))));
        assert_eq!(Ok(true), partial_match(&json!("/^$/"), None));
        assert_eq!(
            Ok(true),
            partial_match(&json!("//"), Some(&json!("anything")))
        );
        assert_eq!(
            Ok(true),
            partial_match(&json!("/a/b/"), Some(&json!("xa/by")))
        );
        assert_eq!(
            Ok(true),
            partial_match(&json!("/ORDERS/i"), Some(&json!("skills/orders.json")))
        );
        assert_eq!(
            Ok(false),
            partial_match(&json!("/ORDERS/"), Some(&json!("orders")))
        );
        // A malformed regex falls back to a literal.
        assert_eq!(Ok(true), partial_match(&json!("/(/"), Some(&json!("/(/"))));
        // JS number printing: 1.0 is "1".
        assert_eq!(Ok(true), partial_match(&json!("/^1$/"), Some(&json!(1.0))));
    }

    #[test]
    fn deep_equal_ignores_key_order_and_number_spelling() {
        assert!(deep_equal(
            &json!({"a": 1, "b": [1, 2]}),
            &json!({"b": [1.0, 2], "a": 1})
        ));
        assert!(!deep_equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!deep_equal(&json!([1, 2]), &json!([2, 1])));
        assert!(!deep_equal(&json!("1"), &json!(1)));
        assert!(deep_equal(&json!(null), &json!(null)));
    }

    #[test]
    fn resolve_path_grammar() {
        let v = json!({"items": [{"sku": "a"}, {"sku": "b"}], "n": 1});
        assert_eq!(resolve_path(&v, &["items", "-1", "sku"]), Some(&json!("b")));
        assert_eq!(resolve_path(&v, &["items", "0", "sku"]), Some(&json!("a")));
        assert_eq!(resolve_path(&v, &["items", "-0"]), None);
        assert_eq!(resolve_path(&v, &["items", "01"]), None);
        assert_eq!(resolve_path(&v, &["items", "-3"]), None);
        assert_eq!(resolve_path(&v, &["items", "length"]), None);
        assert_eq!(resolve_path(&v, &["n", "x"]), None);
    }

    #[test]
    fn partial_match_gives_up_on_a_catastrophic_regex_and_on_depth() {
        let evil = json!({"q": "/^(a+)+$/"});
        let subject = json!({"q": format!("{}b", "a".repeat(40))});
        assert_eq!(
            partial_match(&evil, Some(&subject)),
            Err(MatchGaveUp::Regex("/^(a+)+$/".into()))
        );
        // A decidable subject still decides.
        assert_eq!(partial_match(&evil, Some(&json!({"q": "aaa"}))), Ok(true));
        // Nesting one level past the bound, on both sides, gives up rather than recursing.
        let mut deep = json!(1);
        for _ in 0..=MAX_MATCH_DEPTH {
            deep = json!([deep]);
        }
        assert_eq!(partial_match(&deep, Some(&deep)), Err(MatchGaveUp::TooDeep));
        assert!(!deep_equal(&deep, &deep));
        let mut ok = json!(1);
        for _ in 0..MAX_MATCH_DEPTH {
            ok = json!([ok]);
        }
        assert_eq!(partial_match(&ok, Some(&ok)), Ok(true));
        assert!(deep_equal(&ok, &ok));
    }
}
