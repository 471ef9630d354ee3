//! Issue 24, item 2: reading a cassette costs memory at the scale of its bounds
//! (`wfx_schemas::cassette::MAX_VALUES`, `MAX_DEPTH`, `MAX_INTERACTIONS`), not of its
//! text (docs/cassettes.md, "The format"; docs/security.md, bounded work).
//!
//! The attacker's input: a 16 MiB cassette whose one tool call's `arguments` is
//! `[0,0,…]` (8.4 million JSON values). `parse` read the file into a `serde_json::Value`
//! (for the version) and then again into the types, each value 72 bytes: 1.2 GB live for
//! `check` and for a run's replay alike. Now one pass reads the types, each list, map and
//! free-form value charged to one budget, and stops at the value that crossed it.
//!
//! A counting global allocator measures the bytes live at once on the test's thread. An
//! allocation that would take a thread past [`REFUSE_ABOVE`] live bytes is refused (the
//! binary aborts) so an unbounded parse cannot exhaust the machine.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The counting allocator below is the one `unsafe` here: a `GlobalAlloc` cannot be written
// without it, and it only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use wfx_schemas::cassette::{
    CassetteErrorKind, MAX_BYTES, MAX_DEPTH, MAX_INTERACTIONS, MAX_VALUES, Secrets, parse, to_json,
};
use wfx_schemas::check::check_file;
use wfx_schemas::files::MemFiles;

/// Live bytes past which this binary's allocator refuses an allocation (an abort): above
/// what the unbounded parse took (1.2 GB), so without the bound the assertions below fail
/// with the figure rather than the binary aborting.
const REFUSE_ABOVE: usize = 3 << 30;

/// Peak live bytes a parse may add on top of its text (the bound asserted): at most
/// [`MAX_VALUES`] JSON values of 72 bytes, in a list that doubles as it grows (38 MB for
/// 500,000), plus the strings and structs of a cassette's small parts.
const PEAK_BOUND: usize = 64 << 20;

struct Counting;

thread_local! {
    /// (live bytes, peak live bytes) allocated by this thread; frees are counted on the
    /// freeing thread (a parse runs on one thread).
    static LIVE: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

fn on_alloc(size: usize) -> bool {
    LIVE.try_with(|c| {
        let (live, peak) = c.get();
        let live = live.saturating_add(size);
        if live > REFUSE_ABOVE {
            return false;
        }
        c.set((live, peak.max(live)));
        true
    })
    .unwrap_or(true)
}

fn on_free(size: usize) {
    let _ = LIVE.try_with(|c| {
        let (live, peak) = c.get();
        c.set((live.saturating_sub(size), peak));
    });
}

// SAFETY: forwards to `System`; the bookkeeping allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !on_alloc(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        on_free(layout.size());
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() && !on_alloc(new_size - layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's pointer and layout, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if new_size < layout.size() {
            on_free(layout.size() - new_size);
        } else if p.is_null() {
            on_free(new_size - layout.size());
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak live bytes `f` adds on this thread, and its result.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(|c| {
        let (live, _) = c.get();
        c.set((live, live));
        live
    });
    let out = f();
    let peak = LIVE.with(|c| c.get().1);
    (out, peak.saturating_sub(base))
}

const CASE: &str = "title: t\nsteps:\n  - send: hi\n";
const WF: &str = "title: W\nstates:\n  a:\n    triggers: { manual: }\n";
const PATH: &str = "workflows/w/tests/a.cassette.json";

/// A version-1 cassette whose fields before `interactions` are valid, with `interactions`
/// as given (the JSON text of the list).
fn cassette(interactions: &str) -> String {
    format!(
        r#"{{
  "version": 1,
  "recordedWith": "wfx-lsp 0.1.0",
  "recordedAt": "2026-12-03T08:52:53Z",
  "clock": {{ "startMs": 0, "stepMs": 1, "zone": "UTC" }},
  "model": "m",
  "endpoint": "127.0.0.1:9",
  "case": "a",
  "inputs": {{ "case": "{}", "workflow": "{}" }},
  "interactions": {interactions}
}}
"#,
        wfx_schemas::cassette::digest(CASE),
        wfx_schemas::cassette::digest(WF)
    )
}

/// One interaction whose one tool call has `arguments` as given.
fn with_arguments(arguments: &str) -> String {
    cassette(&format!(
        r#"[ {{ "seq": 0, "role": "agent", "run": 0, "call": 0,
    "request": {{ "model": "m", "messagesFrom": 0, "messages": [] }},
    "response": {{ "toolCalls": [ {{ "id": "c", "name": "t", "arguments": {arguments} }} ] }} }} ]"#
    ))
}

/// `[0,0,…]` with `n` zeros.
fn zeros(n: usize) -> String {
    let mut s = String::with_capacity(2 * n + 2);
    s.push('[');
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push('0');
    }
    s.push(']');
    s
}

/// The cassette of the finding: as many zeros as fit in [`MAX_BYTES`].
fn sixteen_mib_of_zeros() -> String {
    let overhead = with_arguments("[]").len();
    let text = with_arguments(&zeros((MAX_BYTES - overhead) / 2));
    assert!(
        text.len() <= MAX_BYTES && text.len() > MAX_BYTES - 8,
        "{}",
        text.len()
    );
    text
}

#[test]
fn a_16_mib_cassette_of_zeros_is_refused_at_the_value_bound_at_its_scale() {
    let text = sixteen_mib_of_zeros();
    let (got, peak) = peak_of(|| parse(&text));
    eprintln!("parse: {peak} bytes at once");
    assert!(
        peak < PEAK_BOUND,
        "parse held {peak} bytes at once (bound {PEAK_BOUND})"
    );
    let e = got.unwrap_err();
    assert_eq!(e.kind, CassetteErrorKind::Invalid, "{}", e.message);
    assert!(
        e.message
            .contains(&format!("more than {MAX_VALUES} JSON values")),
        "{}",
        e.message
    );
    // The error is at the value that crossed the bound: about MAX_VALUES zeros in.
    let at = e.offset.unwrap();
    let start = text.find("\"arguments\": [").unwrap();
    assert!(
        at > start + 2 * (MAX_VALUES - 10) && at < start + 2 * (MAX_VALUES + 10),
        "offset {at}, arguments at {start}"
    );

    // `check` (WFX450) reads it through the same one parse: its own copy of the text (16
    // MiB) on top of the bound.
    let mut fs = MemFiles::new();
    fs.insert("workflows/w/workflow.yaml", WF);
    fs.insert("workflows/w/tests/a.test.yaml", CASE);
    fs.insert(PATH, text.into_bytes());
    let (found, peak) = peak_of(|| check_file(&fs, PATH));
    eprintln!("check: {peak} bytes at once");
    assert!(
        peak < PEAK_BOUND + 2 * MAX_BYTES,
        "check held {peak} bytes at once (bound {})",
        PEAK_BOUND + 2 * MAX_BYTES
    );
    assert!(
        found
            .iter()
            .any(|d| d.code.code == "WFX450" && d.message.contains("JSON values")),
        "{:?}",
        found.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
}

#[test]
fn a_cassette_just_under_the_value_bound_parses_at_the_scale_of_the_bound() {
    // The interactions list, the tool calls list and the `arguments` array itself are three
    // values; the rest are zeros.
    let text = with_arguments(&zeros(MAX_VALUES - 3));
    let (got, peak) = peak_of(|| parse(&text));
    eprintln!("parse: {peak} bytes at once");
    let c = got.unwrap();
    assert!(
        peak < PEAK_BOUND,
        "parse held {peak} bytes at once (bound {PEAK_BOUND})"
    );
    let args = &c.interactions[0].response.tool_calls[0].arguments;
    assert_eq!(args.as_array().map(Vec::len), Some(MAX_VALUES - 3));
    // One more value is over.
    let e = parse(&with_arguments(&zeros(MAX_VALUES - 2))).unwrap_err();
    assert_eq!(e.kind, CassetteErrorKind::Invalid, "{}", e.message);
    // The written form round-trips through the bounded parse.
    assert_eq!(parse(&to_json(&c, &Secrets::default()).0).unwrap(), c);
}

#[test]
fn a_long_list_of_small_messages_is_refused_at_the_value_bound_too() {
    // `{"role":"user"}` is 15 bytes of text and 80 bytes parsed (a `RecordedMessage`): the typed lists are
    // charged like free-form values.
    let n = (MAX_BYTES - 2_000) / 16;
    let messages = vec![r#"{"role":"user"}"#; n].join(",");
    let text = cassette(&format!(
        r#"[ {{ "seq": 0, "role": "agent", "run": 0, "call": 0,
    "request": {{ "model": "m", "messagesFrom": 0, "messages": [{messages}] }},
    "response": {{}} }} ]"#
    ));
    assert!(text.len() <= MAX_BYTES);
    let (got, peak) = peak_of(|| parse(&text));
    eprintln!("parse: {peak} bytes at once");
    assert!(
        peak < PEAK_BOUND,
        "parse held {peak} bytes at once (bound {PEAK_BOUND})"
    );
    let e = got.unwrap_err();
    assert_eq!(e.kind, CassetteErrorKind::Invalid, "{}", e.message);
    assert!(e.message.contains("JSON values"), "{}", e.message);
}

#[test]
fn nesting_is_bounded_by_the_one_pass() {
    // The outer object, `interactions`, the interaction, `response`, `toolCalls` and the
    // call are six levels: `arguments` may nest MAX_DEPTH - 6 arrays deep.
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert!(parse(&with_arguments(&nested(MAX_DEPTH - 6))).is_ok());
    let e = parse(&with_arguments(&nested(MAX_DEPTH - 5))).unwrap_err();
    assert_eq!(e.kind, CassetteErrorKind::Syntax, "{}", e.message);
    assert!(
        e.message.contains("recursion limit exceeded"),
        "{}",
        e.message
    );
    // 16 MiB of `[[[…` stops at the limit, having built nothing.
    let deep = with_arguments(&"[".repeat(MAX_BYTES - 1_000));
    let (got, peak) = peak_of(|| parse(&deep));
    assert_eq!(got.unwrap_err().kind, CassetteErrorKind::Syntax);
    assert!(peak < 1 << 20, "parse held {peak} bytes at once");
}

#[test]
fn interactions_past_the_limit_are_refused_while_the_list_is_read() {
    let one = |i: usize| {
        format!(
            r#"{{ "seq": {i}, "role": "agent", "run": 0, "call": {i}, "request": {{ "model": "m", "messagesFrom": 0, "messages": [] }}, "response": {{}} }}"#
        )
    };
    let list = |n: usize| format!("[{}]", (0..n).map(one).collect::<Vec<_>>().join(",\n"));
    assert_eq!(
        parse(&cassette(&list(MAX_INTERACTIONS)))
            .unwrap()
            .interactions
            .len(),
        MAX_INTERACTIONS
    );
    // One more is refused where it starts (the rest of the list is skipped unbuilt).
    let over = cassette(&list(MAX_INTERACTIONS + 1));
    let e = parse(&over).unwrap_err();
    assert_eq!(e.kind, CassetteErrorKind::Invalid, "{}", e.message);
    assert!(
        e.message
            .contains(&format!("more than {MAX_INTERACTIONS} interactions")),
        "{}",
        e.message
    );
}

#[test]
fn the_order_of_errors_is_kept_syntax_then_version_then_shape_and_bounds() {
    let huge = sixteen_mib_of_zeros();
    // A newer version says so, even past a bound or with unknown keys.
    let v2 = huge.replacen("\"version\": 1", "\"version\": 2", 1);
    let (got, peak) = peak_of(|| parse(&v2));
    assert_eq!(got.unwrap_err().kind, CassetteErrorKind::Version(Some(2)));
    assert!(peak < PEAK_BOUND, "{peak}");
    let unknown = with_arguments("{}").replacen("\"model\": \"m\",", "\"by\": 1,", 1);
    let v3 = unknown.replacen("\"version\": 1", "\"version\": 3", 1);
    assert_eq!(
        parse(&v3).unwrap_err().kind,
        CassetteErrorKind::Version(Some(3))
    );
    let none = with_arguments("{}").replacen("\"version\": 1", "\"version\": -1", 1);
    assert_eq!(
        parse(&none).unwrap_err().kind,
        CassetteErrorKind::Version(None)
    );
    // A syntax error after an unknown key is the syntax error, at its position.
    let broken = format!("{}{{", unknown.trim_end());
    let e = parse(&broken).unwrap_err();
    assert_eq!(e.kind, CassetteErrorKind::Syntax, "{}", e.message);
    assert_eq!(e.offset, Some(broken.len() - 1), "{}", e.message);
    // With the syntax right, the unknown key.
    let e = parse(&unknown).unwrap_err();
    assert_eq!(e.kind, CassetteErrorKind::Syntax, "{}", e.message);
    assert!(e.message.contains("unknown field `by`"), "{}", e.message);
}

#[test]
fn a_secret_set_over_its_bounds_builds_an_automaton_at_the_scale_of_the_bounds() {
    // Issue 24, item 3: a `.env` of 10,000 values of 1,000 bytes built a 477 MB automaton.
    let value = |i: usize| format!("{i:08}-{}", "v".repeat(991));
    let key = format!("model-key-{}", "k".repeat(20));
    let (s, peak) = peak_of(|| {
        let s = Secrets::from_env(
            (0..10_000)
                .map(|i| (format!("K{i}_TOKEN"), value(i)))
                .chain([("ARCHMAX_API_KEY".to_owned(), key.clone())]),
        );
        // The automaton is built on first use.
        assert_eq!(
            s.redact(&format!("a {key} b")).0,
            "a <ENV:ARCHMAX_API_KEY> b"
        );
        s
    });
    eprintln!("secrets: {peak} bytes at once");
    assert!(
        peak < PEAK_BOUND,
        "the secret set held {peak} bytes at once (bound {PEAK_BOUND})"
    );
    let over = s.overflow().expect("over the bounds");
    assert_eq!(
        (over.values, over.bytes),
        (10_001, 10_000 * 1_000 + key.len())
    );
    // The model key is kept first, then the others in order while they fit.
    let (_, n) = s.redact(&format!("{} {}", value(0), value(400)));
    assert_eq!(n, 1, "value 0 fits, value 400 does not");
    assert!(over.to_string().contains(&format!(
        "more than the {} values or {} KiB",
        Secrets::MAX_VALUES,
        Secrets::MAX_BYTES / 1024
    )));
    // The overflow is sticky: adding a value does not make the set whole.
    let mut more = s.clone();
    more.add("ONE_MORE_KEY", "another-secret");
    assert_eq!(more.overflow(), Some(over));

    // At the bounds exactly: no overflow.
    let at = Secrets::from_env((0..Secrets::MAX_VALUES).map(|i| {
        (
            format!("K{i}_TOKEN"),
            format!(
                "{i:08}-{}",
                "w".repeat(Secrets::MAX_BYTES / Secrets::MAX_VALUES - 9)
            ),
        )
    }));
    assert_eq!(at.overflow(), None);
}
