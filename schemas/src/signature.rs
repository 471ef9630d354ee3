//! Trigger signatures at run time (FORMAT §A.5 `signatureValueIssues`, §E.4 seeding): the
//! one implementation both the runner's simulator (`wfx_runner::sim`, when a `send` starts
//! a turn) and the static case check (`rules::case_cross`, `WFX310`/`WFX311`) call, so the
//! editor's verdict on a case's `variables` cannot drift from what a run refuses.
//!
//! Values are `serde_json::Value`s, as the runner holds them; nothing is coerced.

use indexmap::IndexMap;
use serde_json::Value;

use crate::model::workflow::SigEntry;
use crate::rules::case::is_variable_name;

/// Why a signature entry refuses a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SigIssue {
    /// The name is not set (the value is absent; `null` counts as set).
    NotSet,
    /// The entry is typed and the value is not of that type (`null` included).
    WrongType {
        /// The declared type (`string`, `integer`, …).
        expected: String,
    },
}

/// `signatureValueIssues` for one entry (FORMAT §A.5): `None` when `value` conforms.
/// An untyped entry accepts any set value, `null` included; a typed one never accepts
/// `null`; `integer` is `Number.isInteger`, `number` finite; `date` and `date-time` as
/// [`is_date`] and [`is_date_time`]. An unknown type accepts nothing (the workflow rules
/// report the type itself).
pub fn sig_issue(entry: &SigEntry, value: Option<&Value>) -> Option<SigIssue> {
    let Some(v) = value else {
        return Some(SigIssue::NotSet);
    };
    let ty = entry.ty.as_deref()?;
    let ok = match (ty, v) {
        (_, Value::Null) => false,
        ("string", Value::String(_)) => true,
        ("integer", Value::Number(n)) => {
            n.as_i64().is_some()
                || n.as_u64().is_some()
                || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        ("number", Value::Number(n)) => n.as_f64().is_some_and(f64::is_finite),
        ("boolean", Value::Bool(_)) => true,
        ("date", Value::String(s)) => is_date(s),
        ("date-time", Value::String(s)) => is_date_time(s),
        ("object", Value::Object(_)) => true,
        ("array", Value::Array(_)) => true,
        _ => false,
    };
    (!ok).then(|| SigIssue::WrongType {
        expected: ty.to_owned(),
    })
}

/// [`sig_issue`] as the runner's message text: `'<name>' was not set` or
/// `'<name>' must be <type>, got <compact JSON>`.
pub fn signature_issue(entry: &SigEntry, value: Option<&Value>) -> Option<String> {
    let name = &entry.name.value;
    Some(match sig_issue(entry, value)? {
        SigIssue::NotSet => format!("'{name}' was not set"),
        SigIssue::WrongType { expected } => {
            let got = value.map(Value::to_string).unwrap_or_default();
            format!("'{name}' must be {expected}, got {got}")
        }
    })
}

/// Every entry of `entries` that `vars` does not satisfy, in declaration order, with its
/// issue. This is the check a `send` makes of the trigger's `requires` before the turn
/// starts (FORMAT §A.5, §B.2 `send`) and a finished run makes of its `returns`.
pub fn unmet<'e>(
    entries: &'e [SigEntry],
    vars: &IndexMap<String, Value>,
) -> Vec<(&'e SigEntry, SigIssue)> {
    entries
        .iter()
        .filter_map(|e| sig_issue(e, vars.get(&e.name.value)).map(|i| (e, i)))
        .collect()
}

/// The trimmed `title` check of seeding (FORMAT §E.4): non-empty, one line, at most 200
/// characters (Unicode scalar values). `None` when the title passes.
pub fn title_issue(v: &str) -> Option<&'static str> {
    let t = v.trim();
    if t.is_empty() {
        Some("must not be empty")
    } else if t.contains('\n') {
        Some("must be a single line")
    } else if t.chars().count() > 200 {
        Some("must be at most 200 characters")
    } else {
        None
    }
}

/// The value a case variable is stored as when a `send` seeds it (FORMAT §E.4 `reseed`):
/// the value itself, except `title`, which is stored trimmed (a non-string title reads as
/// empty). `Err` carries the runner's refusal text: a name that is not a variable name, or
/// a `title` that fails [`title_issue`].
pub fn seed_value(name: &str, value: &Value) -> Result<Value, String> {
    if !is_variable_name(name) {
        return Err(format!(
            "`{name}` is not a valid variable name (seeded): use lowercase letters, digits and underscores, starting with a letter"
        ));
    }
    if name == "title" {
        let s = value.as_str().unwrap_or_default();
        if let Some(why) = title_issue(s) {
            return Err(format!("the seeded `title` {why}"));
        }
        return Ok(Value::String(s.trim().to_owned()));
    }
    Ok(value.clone())
}

/// The run variables when a case's first `send` checks its trigger's `requires`: the case's
/// `variables` seeded in order ([`seed_value`]), then the locked built-in `trigger` set to
/// the trigger id (replacing a case value of that name), as the runner's `send` does.
/// `Err` when seeding refuses a variable (the run dies before any `requires` check).
pub fn start_variables(
    case_vars: &[(String, Value)],
    trigger_id: &str,
) -> Result<IndexMap<String, Value>, String> {
    let mut vars = IndexMap::new();
    for (name, value) in case_vars {
        vars.insert(name.clone(), seed_value(name, value)?);
    }
    vars.insert("trigger".to_owned(), Value::String(trigger_id.to_owned()));
    Ok(vars)
}

/// `date`: `^\d{4}-\d{2}-\d{2}$` naming a real calendar day, leap years included (FORMAT §A.5).
pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return false;
    }
    let num = |r: std::ops::Range<usize>| {
        s.get(r)
            .filter(|p| p.bytes().all(|c| c.is_ascii_digit()))
            .and_then(|p| p.parse::<u32>().ok())
    };
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `date-time`: a [`is_date`] date, `T`/`t`, `hh:mm:ss` (hour ≤ 23, minute ≤ 59, second
/// ≤ 60), optional `.fraction`, and a mandatory `Z`/`z` or `±hh:mm` offset (FORMAT §A.5).
pub fn is_date_time(s: &str) -> bool {
    let (Some(date), Some(rest)) = (s.get(..10), s.get(10..)) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let Some(rest) = rest.strip_prefix(['T', 't']) else {
        return false;
    };
    let hms = rest.get(..8).unwrap_or_default();
    let parts: Vec<Option<u32>> = hms
        .split(':')
        .map(|p| if p.len() == 2 { p.parse().ok() } else { None })
        .collect();
    let [Some(h), Some(mi), Some(sec)] = parts.as_slice() else {
        return false;
    };
    if *h > 23 || *mi > 59 || *sec > 60 {
        return false;
    }
    let mut tail = rest.get(8..).unwrap_or_default();
    if let Some(frac) = tail.strip_prefix('.') {
        let n = frac.chars().take_while(char::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        tail = frac.get(n..).unwrap_or_default();
    }
    if tail == "Z" || tail == "z" {
        return true;
    }
    let b = tail.as_bytes();
    b.len() == 6
        && matches!(b.first(), Some(b'+') | Some(b'-'))
        && b.get(3) == Some(&b':')
        && tail
            .get(1..3)
            .and_then(|h| h.parse::<u32>().ok())
            .is_some_and(|h| h <= 23)
        && tail
            .get(4..6)
            .and_then(|m| m.parse::<u32>().ok())
            .is_some_and(|m| m <= 59)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Spanned;
    use crate::text::TextRange;
    use serde_json::json;

    fn entry(name: &str, ty: Option<&str>) -> SigEntry {
        SigEntry {
            name: Spanned::new(name.to_owned(), TextRange::empty(0)),
            ty: ty.map(str::to_owned),
            description: None,
        }
    }

    #[test]
    fn dates_and_date_times() {
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2023-02-29"));
        assert!(!is_date("2023-13-01"));
        assert!(is_date_time("2024-01-01T10:00:00Z"));
        assert!(is_date_time("2024-01-01t10:00:00.5+02:00"));
        assert!(!is_date_time("2024-01-01T10:00:00"));
        assert!(!is_date_time("2024-01-01T24:00:00Z"));
    }

    #[test]
    fn conformance_follows_signature_value_issues() {
        let untyped = entry("a", None);
        assert_eq!(sig_issue(&untyped, None), Some(SigIssue::NotSet));
        assert_eq!(sig_issue(&untyped, Some(&Value::Null)), None);
        let int = entry("n", Some("integer"));
        assert_eq!(sig_issue(&int, Some(&json!(3))), None);
        assert_eq!(sig_issue(&int, Some(&json!(3.0))), None);
        assert!(sig_issue(&int, Some(&json!(3.5))).is_some());
        assert!(sig_issue(&int, Some(&json!("3"))).is_some());
        assert!(sig_issue(&int, Some(&Value::Null)).is_some());
        assert_eq!(
            signature_issue(&entry("d", Some("date")), Some(&json!("2023-02-29"))).as_deref(),
            Some("'d' must be date, got \"2023-02-29\"")
        );
    }

    #[test]
    fn start_variables_seed_title_and_trigger_like_send() {
        let vars = start_variables(
            &[
                ("title".into(), json!("  Refund  ")),
                ("trigger".into(), json!(7)),
            ],
            "email",
        );
        let vars = vars.unwrap_or_default();
        assert_eq!(vars.get("title"), Some(&json!("Refund")));
        assert_eq!(vars.get("trigger"), Some(&json!("email")));
        assert!(start_variables(&[("title".into(), json!(1))], "manual").is_err());
        assert!(start_variables(&[("Bad".into(), json!(1))], "manual").is_err());
    }
}
