//! JavaScript regular expressions as the reference reads them in case files (FORMAT §B.2
//! "Regex syntax"): a string is a regex exactly when it matches `/^\/(.*)\/([a-z]*)$/s`, and
//! the body compiles with ECMAScript semantics (the `regress` engine), so lookbehind, named
//! groups and backreferences work. Without `u`/`v` the pattern runs over UTF-16 code units,
//! as in JavaScript.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A compiled `/body/flags` token.
#[derive(Debug)]
pub struct JsRegex {
    re: regress::Regex,
    unicode: bool,
}

/// Splits `"/body/flags"` into `(body, flags)` when the string has the regex shape: it
/// starts with `/`, ends with `/` plus zero or more lowercase ASCII letters. `"//"` is an
/// empty regex; `"/a/b/"` has body `a/b`.
pub fn regex_token(s: &str) -> Option<(&str, &str)> {
    let rest = s.strip_prefix('/')?;
    let flags_start = rest
        .trim_end_matches(|c: char| c.is_ascii_lowercase())
        .len();
    let (head, flags) = rest.split_at(flags_start);
    let body = head.strip_suffix('/')?;
    Some((body, flags))
}

/// Checks the flags as JavaScript's `RegExp` does: only `d g i m s u v y`, each at most
/// once, not both `u` and `v`. The error names the problem.
pub fn check_flags(flags: &str) -> Result<(), String> {
    let mut seen = String::new();
    for c in flags.chars() {
        if !"dgimsuvy".contains(c) {
            return Err(format!(
                "invalid flag `{c}` (flags are d, g, i, m, s, u, v, y)"
            ));
        }
        if seen.contains(c) {
            return Err(format!("flag `{c}` is repeated"));
        }
        seen.push(c);
    }
    if seen.contains('u') && seen.contains('v') {
        return Err("flags `u` and `v` cannot be combined".into());
    }
    Ok(())
}

/// Most `|` alternatives a pattern may have, counted over the whole body (an escaped `\|`
/// counts too, erring on the safe side): 1,000. Over it, [`compile`] fails with a message,
/// which `check` reports on the token and the runner as a failed assertion, instead of
/// overflowing the stack in regress's recursive compiler.
pub const MAX_ALTERNATIVES: usize = 1_000;

/// Compiles a body and flags. Errors carry the engine's message.
pub fn compile(body: &str, flags: &str) -> Result<JsRegex, String> {
    check_flags(flags)?;
    // Bounded work: regress builds and walks alternations recursively, so 100,000
    // alternatives overflow the stack of the thread compiling them.
    let bars = body.bytes().filter(|b| *b == b'|').count();
    if bars >= MAX_ALTERNATIVES {
        return Err(format!(
            "the pattern has {} alternatives; at most {MAX_ALTERNATIVES} are allowed (bounded work)",
            bars + 1
        ));
    }
    let engine_flags: String = flags.chars().filter(|c| "imsuv".contains(*c)).collect();
    let re = regress::Regex::with_flags(body, engine_flags.as_str()).map_err(|e| e.to_string())?;
    Ok(JsRegex {
        re,
        unicode: flags.contains('u') || flags.contains('v'),
    })
}

/// Most distinct tokens [`compile_token`] remembers; the memo is emptied when it fills, so
/// memory stays bounded whatever a file holds.
const MEMO_CAPACITY: usize = 256;

type Compiled = Result<Arc<JsRegex>, String>;

/// Compiles `s` if it has the regex shape: `None` for a literal, `Some(Err)` for a
/// malformed regex. Memoized process-wide by the token's text (at most
/// 256 entries): compiling a case-insensitive pattern costs tens of
/// microseconds, and a long case repeats the same tokens on every step.
pub fn compile_token(s: &str) -> Option<Compiled> {
    let (body, flags) = regex_token(s)?;
    static MEMO: OnceLock<Mutex<HashMap<String, Compiled>>> = OnceLock::new();
    let memo = MEMO.get_or_init(Mutex::default);
    let lock = || {
        memo.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    if let Some(hit) = lock().get(s) {
        return Some(hit.clone());
    }
    // Compile outside the lock; two threads racing on one token both compile it once.
    let compiled = compile(body, flags).map(Arc::new);
    let mut map = lock();
    if map.len() >= MEMO_CAPACITY {
        map.clear();
    }
    map.insert(s.to_owned(), compiled.clone());
    Some(compiled)
}

/// Most units of work one [`JsRegex::test`] may do (bounded work, docs/security.md): one
/// unit per instruction the backtracking engine executes, per character a repetition of a
/// single character examines, and per character a backreference compares. Each unit is a
/// constant amount of work (at most the pattern's capture-group count for a lookaround
/// entry), so no subject or pattern makes one test run longer than about this many steps —
/// a few tens of milliseconds. A million units decide any sane pattern against a subject of
/// hundreds of thousands of characters; `/(a+)+$/` against 40 `a`s and a `b` needs about
/// 2^40 and gives up.
pub const MAX_MATCH_WORK: u64 = 1_000_000;

/// Most units of work all the [`JsRegex::test`] calls of one case may do together while a
/// [`MatchBudget`] is armed (the runner arms one per case): twenty tests' worth, a few
/// hundred milliseconds. Once spent, every further test of the case gives up at once
/// (`WorkExceeded`, failing closed), so 2,000 catastrophic tokens cost what 20 do (bounded
/// work, docs/security.md §3).
pub const MAX_CASE_MATCH_WORK: u64 = 20 * MAX_MATCH_WORK;

thread_local! {
    /// The armed budget of the case running on this thread; `None` when unarmed.
    static MATCH_LEFT: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Arms [`MAX_CASE_MATCH_WORK`] for the regex tests on this thread until dropped (the
/// previous state then returns). Unarmed, each test is held to [`MAX_MATCH_WORK`] only.
#[derive(Debug)]
pub struct MatchBudget {
    prev: Option<u64>,
}

impl MatchBudget {
    /// Arms a fresh budget.
    pub fn arm() -> Self {
        let prev = MATCH_LEFT.with(|c| c.replace(Some(MAX_CASE_MATCH_WORK)));
        Self { prev }
    }
}

impl Drop for MatchBudget {
    fn drop(&mut self) {
        MATCH_LEFT.with(|c| c.set(self.prev));
    }
}

/// [`JsRegex::test`] gave up after [`MAX_MATCH_WORK`] units of work (or the case's
/// [`MAX_CASE_MATCH_WORK`] ran out), before deciding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkExceeded;

impl std::fmt::Display for WorkExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the regex gave up after {MAX_MATCH_WORK} steps without deciding (bounded work: \
             catastrophic backtracking, e.g. a nested quantifier such as `(a+)+`); simplify the pattern"
        )
    }
}

impl JsRegex {
    /// `regex.test(text)`, over UTF-16 code units (`u`/`v`) or UCS-2 units (otherwise), as
    /// JavaScript. `Err(WorkExceeded)` when the search needs more than [`MAX_MATCH_WORK`]
    /// units: the caller must treat that as neither match nor non-match (fail closed).
    /// With a [`MatchBudget`] armed, the test may use at most what is left of it, and what
    /// it used is charged.
    pub fn test(&self, text: &str) -> Result<bool, WorkExceeded> {
        let left = MATCH_LEFT.with(std::cell::Cell::get);
        let budget = left.map_or(MAX_MATCH_WORK, |l| l.min(MAX_MATCH_WORK));
        if budget == 0 {
            return Err(WorkExceeded);
        }
        let units: Vec<u16> = text.encode_utf16().collect();
        let (found, work) = if self.unicode {
            self.re.find_from_utf16_metered(&units, 0, budget)
        } else {
            self.re.find_from_ucs2_metered(&units, 0, budget)
        };
        if let Some(l) = left {
            // A search that gave up spent its whole allowance.
            let spent = if found.is_err() {
                budget
            } else {
                work.min(budget)
            };
            MATCH_LEFT.with(|c| c.set(Some(l.saturating_sub(spent))));
        }
        found.map(|m| m.is_some()).map_err(|_| WorkExceeded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_shares_one_match_budget() {
        // Bounded work per case: catastrophic tokens spend the case's budget, after which
        // even a trivial test gives up (fails closed) instead of running.
        let bad = compile("(a+)+$", "").unwrap();
        let subject = format!("{}b", "a".repeat(40));
        let easy = compile("b", "").unwrap();
        assert_eq!(easy.test("b"), Ok(true));
        let budget = MatchBudget::arm();
        for _ in 0..(MAX_CASE_MATCH_WORK / MAX_MATCH_WORK) {
            assert_eq!(bad.test(&subject), Err(WorkExceeded));
        }
        assert_eq!(easy.test("b"), Err(WorkExceeded));
        drop(budget);
        assert_eq!(easy.test("b"), Ok(true));
        // Cheap tests barely dent a budget.
        let _again = MatchBudget::arm();
        for _ in 0..10_000 {
            assert_eq!(easy.test("ab"), Ok(true));
        }
    }

    #[test]
    fn alternatives_are_bounded_and_the_bound_fits_a_small_stack() {
        let alts = |n: usize| {
            (0..n)
                .map(|i| format!("a{i}"))
                .collect::<Vec<_>>()
                .join("|")
        };
        // The most allowed compiles and matches on a thread with a 2 MiB stack (tokio's
        // blocking threads, where the server analyses documents).
        let ok = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || compile(&alts(MAX_ALTERNATIVES), "").map(|re| re.test("xa999y")))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(ok, Ok(Ok(true)));
        let err = compile(&alts(100_000), "").err().unwrap();
        assert!(err.contains("100000 alternatives"), "{err}");
    }

    #[test]
    fn token_shape() {
        assert_eq!(regex_token("/a/i"), Some(("a", "i")));
        assert_eq!(regex_token("//"), Some(("", "")));
        assert_eq!(regex_token("/a/b/"), Some(("a/b", "")));
        assert_eq!(regex_token("/a/B"), None);
        assert_eq!(regex_token("a/"), None);
        assert_eq!(regex_token("/"), None);
        assert_eq!(regex_token("/x\ny/s"), Some(("x\ny", "s")));
    }

    #[test]
    fn ecmascript_features_compile_and_match() {
        assert!(
            compile_token("/(?<=a)b/")
                .unwrap()
                .unwrap()
                .test("ab")
                .unwrap()
        );
        assert!(
            compile_token(r"/(?<w>x)\k<w>/")
                .unwrap()
                .unwrap()
                .test("xx")
                .unwrap()
        );
        assert!(
            compile_token(r"/(a)\1/")
                .unwrap()
                .unwrap()
                .test("aa")
                .unwrap()
        );
        assert!(
            compile_token("/APPROV/i")
                .unwrap()
                .unwrap()
                .test("approved")
                .unwrap()
        );
        assert!(compile_token("/(/").unwrap().is_err());
        assert!(compile_token("/a/gg").unwrap().is_err());
        assert!(compile_token("/a/uv").unwrap().is_err());
        assert!(compile_token("/a/x").unwrap().is_err());
        assert!(compile_token("/a/dgimsy").unwrap().is_ok());
    }

    #[test]
    fn astral_characters_depend_on_the_u_flag() {
        // Without `u`, `.` matches one UTF-16 unit, so `^.$` does not match an emoji.
        assert!(!compile_token("/^.$/").unwrap().unwrap().test("😀").unwrap());
        assert!(
            compile_token("/^.$/u")
                .unwrap()
                .unwrap()
                .test("😀")
                .unwrap()
        );
    }

    #[test]
    fn catastrophic_backtracking_gives_up_instead_of_running_for_ever() {
        let subject = format!("{}b", "a".repeat(40));
        for token in [
            "/(a+)+$/",
            "/(a|a)*$/",
            "/(a|aa)+$/u",
            "/^(a*)*$/i",
            r"/(a+)+\1$/",
        ] {
            let re = compile_token(token).unwrap().unwrap();
            assert_eq!(re.test(&subject), Err(WorkExceeded), "{token}");
        }
        // The same patterns still decide short subjects, both ways.
        let re = compile_token("/(a+)+$/").unwrap().unwrap();
        assert_eq!(re.test("baaa"), Ok(true));
        assert_eq!(re.test("aaab"), Ok(false));
    }

    #[test]
    fn a_long_subject_under_a_linear_pattern_is_decided() {
        // 200,000 characters scanned by an unanchored literal search: well inside the budget.
        let subject = format!("{}needle", "x".repeat(200_000));
        let re = compile_token("/needle$/").unwrap().unwrap();
        assert_eq!(re.test(&subject), Ok(true));
        let re = compile_token(r"/^x+\w*needle$/").unwrap().unwrap();
        assert_eq!(re.test(&subject), Ok(true));
        assert_eq!(
            compile_token("/absent/").unwrap().unwrap().test(&subject),
            Ok(false)
        );
    }
}
