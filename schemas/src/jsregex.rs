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

/// Most units of matcher a pattern may build (bounded work, docs/security.md): 100,000,
/// counted by the parser (a patch to regress, `vendor/regress/PATCH.md`) as it builds. A unit
/// is one node of regress's IR (a character, an anchor, a group, a loop), one code point of
/// a character set or string set, or one interval of a character class, so a class costs
/// what it holds after case folding; folding a class under `i` costs 32 more (it walks the
/// whole fold table). `/\p{L}/u` is 685 units, `/\p{L}/ui` 718, a 1,000-character literal
/// 1,000. A named backreference to a name that N groups share lowers to N backreferences
/// tried in turn: 2N - 1 units, counted before it is built. Over the budget, [`compile`]
/// fails with a message (`WFX117` on the token in `check`, a failed assertion in a run) and
/// nothing more is built: 990 groups named `a` and 4,900 `\k<a>` (a 32 KB token) would
/// have built 9.7 million units, about 1 GB, and 13,000 `\p{L}` under `ui` 9 million.
/// Everything compiled is proportional to the units (the optimizer copies a loop body of at
/// most 256 nodes up to five times): a token at the budget peaks at about 15 MB while it
/// compiles and keeps about 8 MB (schemas/tests/regex_budget.rs).
pub const MAX_IR_UNITS: u64 = 100_000;

/// Compiles a body and flags. Errors carry the engine's message, or say which bound
/// ([`MAX_ALTERNATIVES`], [`MAX_IR_UNITS`]) the pattern passes.
pub fn compile(body: &str, flags: &str) -> Result<JsRegex, String> {
    compile_measured(body, flags).map(|(re, _)| re)
}

/// [`compile`], also returning the units of matcher built ([`MAX_IR_UNITS`]).
fn compile_measured(body: &str, flags: &str) -> Result<(JsRegex, u64), String> {
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
    let (re, units) =
        regress::Regex::with_flags_bounded(body, engine_flags.as_str(), MAX_IR_UNITS).map_err(
            |e| {
                if e.text == regress::IR_BUDGET_EXCEEDED {
                    format!(
                        "the pattern builds more than {MAX_IR_UNITS} units of matcher (one per character, group and class range; `\\k<name>` tries every group of that name); at most {MAX_IR_UNITS} are allowed (bounded work)"
                    )
                } else {
                    e.to_string()
                }
            },
        )?;
    Ok((
        JsRegex {
            re,
            unicode: flags.contains('u') || flags.contains('v'),
        },
        units,
    ))
}

/// Most distinct tokens [`compile_token`] remembers; the memo is emptied when it fills, so
/// memory stays bounded whatever a file holds.
const MEMO_CAPACITY: usize = 256;

/// Most weight the memo of [`compile_token`] holds: each entry weighs its token's bytes
/// plus the units of matcher it built ([`MAX_IR_UNITS`]) or its error's bytes. 250,000:
/// thousands of everyday tokens (tens of units each) or two at the unit budget — a compiled
/// token keeps about 85 bytes per unit, so the memo holds at most about 20 MiB however many
/// distinct large tokens a session meets. An entry heavier than this is compiled but not
/// remembered.
const MEMO_MAX_WEIGHT: u64 = 250_000;

type Compiled = Result<Arc<JsRegex>, String>;

/// The process-wide memo: entries by token text, and their total weight.
#[derive(Default)]
struct Memo {
    map: HashMap<String, Compiled>,
    weight: u64,
}

/// Compiles `s` if it has the regex shape: `None` for a literal, `Some(Err)` for a
/// malformed regex. Memoized process-wide by the token's text (at most 256 entries and
/// `MEMO_MAX_WEIGHT` together; emptied when either would be passed): compiling a
/// case-insensitive pattern costs tens of microseconds, and a long case repeats the same
/// tokens on every step.
pub fn compile_token(s: &str) -> Option<Compiled> {
    let (body, flags) = regex_token(s)?;
    static MEMO: OnceLock<Mutex<Memo>> = OnceLock::new();
    let memo = MEMO.get_or_init(Mutex::default);
    let lock = || {
        memo.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    if let Some(hit) = lock().map.get(s) {
        return Some(hit.clone());
    }
    // Compile outside the lock; two threads racing on one token both compile it once.
    let (compiled, weight) = match compile_measured(body, flags) {
        Ok((re, units)) => (Ok(Arc::new(re)), units),
        Err(e) => {
            let w = e.len() as u64;
            (Err(e), w)
        }
    };
    lock().remember(s, &compiled, weight.saturating_add(s.len() as u64));
    Some(compiled)
}

impl Memo {
    /// Remembers `compiled` for `token` with its `weight` (see [`MEMO_MAX_WEIGHT`]): emptied
    /// first when the entry would pass [`MEMO_CAPACITY`] or the weight bound; an entry heavier
    /// than the bound alone is not remembered.
    fn remember(&mut self, token: &str, compiled: &Compiled, weight: u64) {
        if weight > MEMO_MAX_WEIGHT {
            return;
        }
        if self.map.len() >= MEMO_CAPACITY || self.weight.saturating_add(weight) > MEMO_MAX_WEIGHT {
            self.map.clear();
            self.weight = 0;
        }
        if self
            .map
            .insert(token.to_owned(), compiled.clone())
            .is_none()
        {
            self.weight = self.weight.saturating_add(weight);
        }
    }
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

    /// Issue 24: 990 alternatives each defining `(?<a>x)` stay under [`MAX_ALTERNATIVES`],
    /// and every `\k<a>` lowers to 990 backreferences; 4,900 of them (a 32 KB token) built
    /// 9.7 million units of IR, about 1 GB, in `check` (and the server's memo kept it). The
    /// lowering now counts against [`MAX_IR_UNITS`] before it is built.
    #[test]
    fn named_backreferences_count_every_group_of_their_name_against_the_budget() {
        let groups = vec!["(?<a>x)"; 990].join("|");
        let attack = format!("{groups}{}", r"\k<a>".repeat(4_900));
        assert!(attack.len() > 32_000);
        let err = compile(&attack, "").err().unwrap();
        assert!(err.contains("more than 100000 units of matcher"), "{err}");
        assert!(err.contains("bounded work"), "{err}");
        // The token API gives the same refusal (WFX117 in `check`, a failed step in a run).
        let token = format!("/{attack}/");
        assert_eq!(compile_token(&token).unwrap().err(), Some(err));
        // Each `\k<a>` is 2 × 990 − 1 units; 49 fit beside the groups and still compile,
        // within the budget, and keep ECMAScript's meaning (the group that took part).
        let (re, units) =
            compile_measured(&format!("{groups}{}", r"\k<a>".repeat(49)), "").unwrap();
        assert!(units <= MAX_IR_UNITS, "{units}");
        assert!(units >= 49 * (2 * 990 - 1), "{units}");
        assert_eq!(re.test("xx"), Ok(true));
        assert!(compile(&format!("{groups}{}", r"\k<a>".repeat(50)), "").is_err());
        // A name used once lowers to one backreference: a unit per `\k<a>`.
        let (re, units) =
            compile_measured(&format!("(?<a>x){}", r"\k<a>".repeat(1_000)), "").unwrap();
        assert!(units < 2_100, "{units}");
        assert_eq!(re.test(&"x".repeat(1_001)), Ok(true));
    }

    /// Classes cost what they hold after case folding, plus the fold itself: 13,000
    /// `\p{L}` under `ui` (65 KB) took 6 s and 200 MB, 49,000 `[\s\S]` a second.
    #[test]
    fn classes_count_their_ranges_and_their_case_fold() {
        let (_, one) = compile_measured(r"\p{L}", "ui").unwrap();
        assert!((600..1_000).contains(&one), "{one}");
        let err = compile(&r"\p{L}".repeat(13_000), "ui").err().unwrap();
        assert!(err.contains("units of matcher"), "{err}");
        // Without `i` a two-range class is three units; with it, the fold counts too.
        let (_, plain) = compile_measured(&r"[\s\S]".repeat(4_000), "u").unwrap();
        assert!(plain <= 3 * 4_000, "{plain}");
        let err = compile(&r"[\s\S]".repeat(4_000), "ui").err().unwrap();
        assert!(err.contains("units of matcher"), "{err}");
        // Everyday patterns are far below the budget.
        for (body, flags) in [
            (r"^(approved|rejected): order ORD-\d{4}\b", "i"),
            (r"\p{L}+ \p{N}*", "ui"),
            (r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}", "i"),
        ] {
            let (_, units) = compile_measured(body, flags).unwrap();
            assert!(units < 2_000, "{body}: {units}");
        }
    }

    #[test]
    fn the_memo_is_bounded_by_weight_as_well_as_entries() {
        let re = |b: &str| -> Compiled { compile(b, "").map(Arc::new) };
        let mut m = Memo::default();
        // Heavier than the whole memo: compiled, not remembered.
        m.remember("/heavy/", &re("heavy"), MEMO_MAX_WEIGHT + 1);
        assert!(m.map.is_empty());
        for i in 0..25 {
            m.remember(&format!("/t{i}/"), &re("t"), MAX_IR_UNITS);
            assert!(m.weight <= MEMO_MAX_WEIGHT, "{}", m.weight);
        }
        assert!(m.map.len() <= 2, "{}", m.map.len());
        // Light entries fill up to the entry count.
        let mut m = Memo::default();
        for i in 0..(MEMO_CAPACITY + 5) {
            m.remember(&format!("/t{i}/"), &re("t"), 10);
        }
        assert!(m.map.len() <= MEMO_CAPACITY);
        assert_eq!(m.weight, 10 * m.map.len() as u64);
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
