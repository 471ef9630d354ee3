//! The vendored QuickJS's bounds on compiling a regular expression and on single slow
//! builtin calls (vendor/rquickjs-sys/PATCH.md, docs/security.md "One builtin call"):
//!
//! - a regular-expression literal compiles in linear time: forward named references,
//!   alternatives and lookbehinds were quadratic and unpolled (a 1 MiB hook cost `check`
//!   311 s although its compile-only syntax check, `WFX503`, stops after 1,000 ms);
//! - a compile that is slow anyway (a class of many Unicode property escapes) polls the
//!   interrupt handler, so `check` stops at its deadline and a hook at its `timeoutMs`
//!   (FORMAT §A.1);
//! - BigInt radix conversion, `join` (arrays and typed arrays), `replace`/`replaceAll` with
//!   a string pattern and `JSON.stringify`/`JSON.parse` poll once per step, so one call
//!   stops at the time budget;
//! - Unicode normalization (`normalize`, `localeCompare`) orders a long run of combining
//!   marks in linear time (it was an insertion sort: hours for one call).
//!
//! The time bounds are generous: each is a third or less of the unbounded cost measured on
//! the test build (opt-level 1) before the fix, never a speed target.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wfx_runner::sandbox::{
    Bridge, BudgetKind, Budgets, SandboxError, Verdict, check_syntax, run_hook, run_script,
};

/// The bound on a script's size that `check` reads (`wfx_schemas::check::MAX_SCRIPT_BYTES`,
/// 1 MiB): the hooks below are as large as a workflow may make them.
const SCRIPT_BYTES: usize = wfx_schemas::check::MAX_SCRIPT_BYTES as usize;

/// The ceiling of `memoryLimitBytes` (256 MiB), so a builtin gets the largest input a
/// script can build.
const CEILING_BYTES: u64 = wfx_runner::sandbox::MAX_SANDBOX_MEMORY_LIMIT_BYTES;

/// A bridge with no tools: every call fails.
struct NoTools;

impl Bridge for NoTools {
    fn call_tool(&mut self, name: &str, _input: Value) -> Result<String, String> {
        Err(format!("no tool `{name}` in this test"))
    }
}

fn hook_input() -> Value {
    json!({
        "state": "s",
        "phase": "before",
        "trigger": "manual",
        "variables": {},
        "messages": [{ "role": "user", "text": "hi" }],
    })
}

/// Runs the hook `source` (as `hooks/t.js`) under `budgets`: its verdict, its console lines
/// and the wall time until the verdict.
fn run_timed(
    source: &str,
    budgets: &Budgets,
) -> (Result<Verdict, SandboxError>, Vec<String>, Duration) {
    let start = Instant::now();
    let out = run_hook(source, "hooks/t.js", &hook_input(), &mut NoTools, budgets);
    (out.verdict, out.logs, start.elapsed())
}

/// A hook of at most [`SCRIPT_BYTES`] whose default export tests one regular-expression
/// literal: `head`, then `unit` as many times as fits, then `tail`.
fn regex_hook(head: &str, unit: &str, tail: &str) -> String {
    let n = (SCRIPT_BYTES - head.len() - tail.len()) / unit.len();
    let src = format!("{head}{}{tail}", unit.repeat(n));
    assert!(src.len() <= SCRIPT_BYTES && src.len() > SCRIPT_BYTES - unit.len() - 1);
    src
}

/// The three shapes whose compile was quadratic, each a 1 MiB hook that passes when its
/// literal matches as it should: forward named references (`\k<a>` before the group `a`:
/// upstream rescanned the whole pattern twice per reference, 311 s `check`), alternatives
/// (`a|a|…`: each `|` moved everything parsed so far) and a lookbehind of literal characters
/// (each term moved everything parsed so far).
fn quadratic_shapes() -> Vec<(&'static str, String)> {
    vec![
        (
            "forward named references",
            regex_hook(
                "export default () => (/",
                "\\k<a>",
                "(?<a>x)/.test('x') ? ok() : veto('no match'));\n",
            ),
        ),
        (
            "alternatives",
            regex_hook(
                "export default () => (/^(?:",
                "a|",
                "b)$/.test('b') ? ok() : veto('no match'));\n",
            ),
        ),
        (
            "lookbehind",
            regex_hook(
                "export default () => (/(?<=",
                "a",
                ")b/.test('ab') ? veto('matched') : ok());\n",
            ),
        ),
    ]
}

/// `check`'s compile-only syntax check (`WFX503`) of each 1 MiB shape passes, in well
/// under `BOUND`. Before the fix each compile ran unpolled for minutes (release build:
/// forward references 187 CPU s, alternatives 54 s, lookbehind 86 s; more in the test
/// build) and, as few polls followed it, the check did not even notice its deadline.
#[test]
fn regex_literals_that_were_quadratic_pass_the_syntax_check_quickly() {
    const BOUND: Duration = Duration::from_secs(20);
    for (name, src) in quadratic_shapes() {
        let start = Instant::now();
        assert_eq!(check_syntax(&src, true), None, "{name}");
        let took = start.elapsed();
        assert!(took < BOUND, "{name}: {took:?}");
    }
}

/// The same hooks run: each compiles and returns `ok()` within a 1,000 ms `timeoutMs`
/// (before the fix: the deadline's error after the unpolled compile, minutes later).
#[test]
fn regex_literals_that_were_quadratic_run_within_the_time_budget() {
    let budgets = Budgets {
        timeout_ms: 1_000,
        ..Budgets::default()
    };
    for (name, src) in quadratic_shapes() {
        let (verdict, _, _) = run_timed(&src, &budgets);
        assert_eq!(verdict, Ok(Verdict::Ok), "{name}");
    }
}

/// A forward named reference numbers the groups as the capture count does. Upstream's scan
/// stepped over the character after each `<name>`, so a group opening right there was not
/// counted: `\k<b>` referred to the group before `b` (a lookbehind matched the wrong text)
/// or was "not defined". The expected values are ECMAScript's (V8 gives the same).
#[test]
fn forward_named_references_number_groups_like_the_capture_count() {
    let out = run_script(
        r"return [
            /(?<=\k<b>(?<a>(x))(?<b>y))z/.exec('yxyz')?.index ?? null,
            /(?<=\k<b>(?<a>(x))(?<b>y))z/.exec('xxyz')?.index ?? null,
            (() => { try { return /\k<b>(?<a>(?<b>x))/u.exec('x')[0]; } catch (e) { return String(e); } })(),
            /(?:(?<n0>([^a]+)+(?:(?<=b\k<n2>)(?<n2>.))))/.exec('xbxb')[0],
        ];",
        "skills/s/scripts/t.js",
        &json!({}),
        &mut NoTools,
        &Budgets::default(),
    );
    assert_eq!(out.result, Ok(json!([3, null, "x", "xbx"])));
}

/// The compile rewrites (alternatives emitted one split per alternative, lookbehind terms
/// reversed in one pass) keep ECMAScript's results: ordered choice, captures in and after
/// alternatives, lookbehinds with groups and backreferences, named groups shared by
/// alternatives. Expected values are ECMAScript's (V8 gives the same, except for the
/// duplicate named groups of ES2025, which its version here lacks).
#[test]
fn alternatives_and_lookbehinds_keep_their_meaning() {
    let out = run_script(
        r"const m = (re, s) => { const r = re.exec(s); return r ? [r.index, ...r] : null; };
        return [
            m(/a|ab|abc/, 'abc'),
            m(/(a)|(b)|(c)/, 'c'),
            m(/x(?:a|b|c|)y/, 'xy'),
            m(/^(?:a|b|c)+$/, 'abcba'),
            m(/(?:(a)|b)+/, 'ab'),
            m(/(?<=ab|cd|e)f/, 'cdf'),
            m(/(?<=a(b)c)d/, 'abcd'),
            m(/(?<=(\d+)(\d+))$/, '1053'),
            m(/(?<=\1(a))b/, 'aab'),
            m(/(?<!ab|cd)f/, 'cdf xf'),
            m(/(?<y>\d{4})-\d\d|\d\d-(?<y>\d{4})/, '12-2024'),
            m(/(?<=x(?:a|bb|ccc))z/i, 'XBBZ'),
            m(/(?:a|b)*?c|(?:a|b)+/, 'abab'),
            m(/(|a)+b/, 'aab'),
        ];",
        "skills/s/scripts/t.js",
        &json!({}),
        &mut NoTools,
        &Budgets::default(),
    );
    assert_eq!(
        out.result,
        Ok(json!([
            [0, "a"],
            [0, "c", null, null, "c"],
            [0, "xy"],
            [0, "abcba"],
            [0, "ab", null],
            [2, "f"],
            [3, "d", "b"],
            [4, "", "1", "053"],
            [2, "b", "a"],
            [5, "f"],
            [0, "12-2024", null, "2024"],
            [3, "Z"],
            [0, "abab"],
            [0, "aab", "a"],
        ]))
    );
}

/// A class of many Unicode property escapes compiles in linear time but slowly (each
/// escape builds its property's ranges: about 4 s per MiB of pattern in a release build).
/// The compiler polls the interrupt handler once per term, class item and alternative, so
/// `check` stops at its 1,000 ms deadline with the deadline's message. An 8 MiB literal
/// (the syntax check takes any size; `check` reads at most 1 MiB of a file) cost
/// `UNBOUNDED_CHECK` (test build) before the fix, and the check then passed it: the
/// deadline was never looked at again.
#[test]
fn a_slow_regex_literal_stops_the_syntax_check_at_its_deadline() {
    const UNBOUNDED_CHECK: Duration = Duration::from_secs(35);
    let src = format!(
        "export default () => (/[{}]/u.test('x') ? ok() : veto('no'));\n",
        "\\p{L}".repeat((8 << 20) / 5)
    );
    let start = Instant::now();
    let got = check_syntax(&src, true);
    let took = start.elapsed();
    let (_, message) = got.unwrap();
    assert!(message.contains("took longer than"), "{message}");
    assert!(took < UNBOUNDED_CHECK / 3, "{took:?}");
}

/// A hook that builds such a pattern at run time (10 MiB, within the memory budget) and
/// compiles it with `new RegExp` stops at its `timeoutMs` (200 ms) with the time budget,
/// not after the whole compile (`UNBOUNDED_RUN`, test build, before the fix).
#[test]
fn a_slow_regex_compile_stops_the_hook_at_its_time_budget() {
    const UNBOUNDED_RUN: Duration = Duration::from_secs(44);
    let budgets = Budgets {
        timeout_ms: 200,
        memory_limit_bytes: Some(CEILING_BYTES),
        ..Budgets::default()
    };
    let (verdict, logs, took) = run_timed(
        "const p = '[' + '\\\\p{L}'.repeat(1 << 21) + ']';\nconsole.log('built');\nnew RegExp(p, 'u');\nexport default () => ok();\n",
        &budgets,
    );
    assert_eq!(
        verdict,
        Err(SandboxError::Budget {
            which: BudgetKind::Timeout,
            limit: 200
        })
    );
    assert_eq!(logs, ["built"], "the deadline fell before the compile");
    assert!(took < UNBOUNDED_RUN / 3, "{took:?}");
}

/// One call of each slow builtin, on an input built first (and logged, so the deadline is
/// known to fall inside the call), stops at its time budget (300 ms; 1,000 ms where the
/// input takes longer than that to build) and overruns it by less than a third of what the
/// call alone cost before the fix (seconds: each loop was unpolled). The inputs are near
/// the largest the 256 MiB ceiling allows.
#[test]
fn slow_builtin_calls_stop_at_the_time_budget() {
    // (name, body, budget in ms, the call's cost before the fix in ms: test build, the
    // lowest seen)
    let cases: [(&str, &str, u64, u64); 8] = [
        (
            "BigInt toString(3) of 1 Mibit",
            "const x = BigInt('0x' + 'f'.repeat(262_140)); console.log('built'); x.toString(3);",
            300,
            4_000,
        ),
        (
            "BigInt toString() of 1 Mibit",
            "const x = BigInt('0x' + 'f'.repeat(262_140)); console.log('built'); String(x);",
            300,
            4_000,
        ),
        (
            // A typed array's elements are read unpolled like a fast array's, and it is
            // built in tens of ms (an Array of 2^23 numbers takes longer than the budget).
            "Array.prototype.join over 2^23 numbers",
            "const t = new Float64Array(1 << 23).fill(0.1); console.log('built'); Array.prototype.join.call(t);",
            300,
            3_000,
        ),
        (
            "TypedArray join of 2^23 numbers",
            "const t = new Float64Array(1 << 23).fill(0.1); console.log('built'); t.join();",
            300,
            3_000,
        ),
        (
            "replaceAll of the empty string over 2^25 characters",
            "const s = 'a'.repeat(1 << 25); console.log('built'); s.replaceAll('', 'x');",
            300,
            3_000,
        ),
        (
            "replaceAll of a one-character string over 2^25 characters",
            "const s = 'a'.repeat(1 << 25); console.log('built'); s.replaceAll('a', 'bc');",
            300,
            3_000,
        ),
        (
            // A flat Array (nested ones were polled already, in the cycle check).
            "JSON.stringify of 2^23 numbers",
            "const a = new Array(1 << 23).fill(0.1); console.log('built'); JSON.stringify(a);",
            1_000,
            3_000,
        ),
        (
            // 96 MiB of text built by doubling (ropes: no copy until the call).
            "JSON.parse of 2^24 duplicate keys",
            "let p = ',\"a\":0'; for (let i = 0; i < 24; i++) p += p; const s = '{\"a\":0' + p + '}'; console.log('built'); JSON.parse(s);",
            300,
            2_400,
        ),
    ];
    for (name, body, first_budget_ms, unbounded_ms) in cases {
        // Under a heavy load the input may take longer to build than the budget; the budget is
        // then doubled (up to 8x) until the deadline falls inside the call, which is what the
        // overrun below measures.
        let mut budget_ms = first_budget_ms;
        let (verdict, logs, took) = loop {
            let budgets = Budgets {
                timeout_ms: budget_ms,
                memory_limit_bytes: Some(CEILING_BYTES),
                ..Budgets::default()
            };
            let run = run_timed(&format!("{body}\nexport default () => ok();\n"), &budgets);
            if run.1 == ["built"] || budget_ms >= first_budget_ms * 8 {
                break run;
            }
            budget_ms *= 2;
        };
        assert_eq!(
            verdict,
            Err(SandboxError::Budget {
                which: BudgetKind::Timeout,
                limit: budget_ms
            }),
            "{name}"
        );
        assert_eq!(logs, ["built"], "{name}: the deadline fell before the call");
        let overrun = took.saturating_sub(Duration::from_millis(budget_ms));
        assert!(
            overrun < Duration::from_millis(unbounded_ms / 3),
            "{name}: {took:?} for a budget of {budget_ms} ms"
        );
    }
}

/// Normalizing a long run of combining marks of alternating classes was quadratic (the
/// canonical ordering was an insertion sort): 2^16 pairs took 9.7 s in a release build,
/// 2^17 about four times that, all in one unpolled call. Now linear: the three calls end well
/// inside the 5,000 ms default budget, with the marks in canonical order (class 220 before
/// class 230, each class in its original order; NFC then composes `a` with the first
/// U+0301, which the class-220 marks do not block) and `localeCompare` agreeing.
#[test]
fn a_long_run_of_combining_marks_normalizes_in_linear_time() {
    let out = run_script(
        r"const n = 1 << 17;
        const s = 'a' + '\u0301\u0316'.repeat(n);
        const d = s.normalize('NFD');
        const c = s.normalize('NFC');
        return [
            d === 'a' + '\u0316'.repeat(n) + '\u0301'.repeat(n),
            c === '\u00e1' + '\u0316'.repeat(n) + '\u0301'.repeat(n - 1),
            s.localeCompare(d),
        ];",
        "skills/s/scripts/t.js",
        &json!({}),
        &mut NoTools,
        &Budgets::default(),
    );
    assert_eq!(out.result, Ok(json!([true, true, 0])));
}
