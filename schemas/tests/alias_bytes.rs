//! Alias expansion is bounded in bytes as well as in nodes (docs/security.md, alias bombs;
//! FORMAT "The YAML library"). Attack pass 5, F1: one 7.9 MB scalar anchored once and
//! aliased 99 times in a case's `variables` is within the reference's `maxAliasCount`
//! (100 uses) and was 790 MB of tree, 3.87 GB at the peak of `check`, with no diagnostic.
//! The builder now charges every copy it makes for an anchor or an alias (the anchored
//! subtree's string bytes, measured once when the anchor is defined) against
//! `yaml::MAX_ALIAS_BYTES` before making it, and refuses past it with `WFX004`.
//!
//! The allocator counts the whole process (`check` may run jobs on other threads); the
//! tests of this binary take `SERIAL` so they do not disturb each other's figures.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The counting allocator below is the one `unsafe` here: a `GlobalAlloc` cannot be written
// without it, and it only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use wfx_schemas::check::check_workspace;
use wfx_schemas::files::MemFiles;
use wfx_schemas::yaml::{self, MAX_ALIAS_BYTES, YamlIssueKind};

/// Live bytes past which this binary's allocator refuses an allocation (an abort): above
/// what the unbounded parse of the largest document below takes (about 2 GB), so without
/// the bound the assertions fail with the figure rather than exhausting the machine.
const REFUSE_ABOVE: usize = 3 << 30;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static SERIAL: Mutex<()> = Mutex::new(());

struct Counting;

fn on_alloc(size: usize) -> bool {
    let live = LIVE.fetch_add(size, Ordering::Relaxed).saturating_add(size);
    if live > REFUSE_ABOVE {
        LIVE.fetch_sub(size, Ordering::Relaxed);
        return false;
    }
    PEAK.fetch_max(live, Ordering::Relaxed);
    true
}

fn on_free(size: usize) {
    LIVE.fetch_sub(size, Ordering::Relaxed);
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

/// Peak live bytes `f` adds to the process, and its result.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

const MIB: usize = 1024 * 1024;

/// The attack's case file (`/tmp/attack5/gen_alias.py`): a scalar of `bytes` bytes
/// anchored in `variables` and aliased `aliases` times there.
fn case(bytes: usize, aliases: usize) -> String {
    let mut text = format!(
        "title: y\ndescription: y\nvariables:\n  a: &x {}\n",
        "y".repeat(bytes)
    );
    for i in 0..aliases {
        text.push_str(&format!("  b{i}: *x\n"));
    }
    text.push_str("steps:\n  - send: hi\n  - succeeded: true\n");
    text
}

#[test]
fn a_large_scalar_aliased_within_the_count_is_refused_by_its_bytes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 2 MB × 99 aliases: 99 uses are within the reference's count, 200 MB unbounded.
    let text = case(2_000_000, 99);
    let (parsed, peak) = peak_during(|| yaml::parse(&text));
    let issue = parsed
        .issues
        .iter()
        .find(|i| i.kind == YamlIssueKind::AliasExpansion)
        .expect("WFX004's issue");
    assert!(issue.message.contains("8 MiB"), "{}", issue.message);
    // Refused at the alias that would pass the bound: the anchor and 3 copies fit in 8 MiB.
    let at = text.find("  b3: *x").unwrap() + "  b3: ".len();
    assert_eq!(issue.range.start as usize, at);
    // The text's 2 MB in the tree, the anchor's copy and at most MAX_ALIAS_BYTES of copies.
    assert!(peak < 4 * MIB + MAX_ALIAS_BYTES + 8 * MIB, "{peak} bytes");
    let vars = parsed.documents[0].get_value("variables").unwrap();
    assert!(vars.get_value("b2").unwrap().as_str().is_some());
    assert_eq!(vars.get_value("b98").unwrap().value, yaml::Value::Null);
}

#[test]
fn check_reports_wfx004_within_a_bounded_peak() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut fs = MemFiles::new();
    fs.insert(
        "workflows/y/workflow.yaml",
        "instructions: Go.\nskills: { allow_always: [] }\ntests: { caseTimeoutMs: 20000 }\nstates:\n  start:\n    triggers: { manual: }\n    instructions: Do.\n",
    );
    fs.insert("workflows/y/tests/c.test.yaml", case(2_000_000, 99));
    fs.insert("workflows/y/tests/c.agent.yaml", "turns:\n  - - say: ok\n");
    let (diags, peak) = peak_during(|| check_workspace(&fs, ""));
    let wfx004: Vec<_> = diags.iter().filter(|d| d.code.code == "WFX004").collect();
    assert_eq!(wfx004.len(), 1, "{diags:?}");
    assert!(wfx004[0].message.contains("8 MiB"), "{}", wfx004[0].message);
    // Unbounded, the passes over 200 MB of tree took about 1 GB (82 MB with 16 MiB of copies).
    assert!(peak < 64 * MIB, "{peak} bytes");
}

#[test]
fn nested_anchors_are_charged_for_their_copies() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Each anchored collection is kept whole for its aliases: 250 anchors nested around one
    // 2 MB scalar were 250 copies of it (500 MB) without a single alias.
    let mut text = String::new();
    for i in 0..250 {
        text.push_str(&format!("&a{i} ["));
    }
    text.push_str(&"y".repeat(2_000_000));
    text.push_str(&"]".repeat(250));
    text.push('\n');
    let (parsed, peak) = peak_during(|| yaml::parse(&text));
    assert!(
        parsed
            .issues
            .iter()
            .any(|i| i.kind == YamlIssueKind::AliasExpansion),
        "{:?}",
        parsed.issues
    );
    assert!(peak < 4 * MIB + MAX_ALIAS_BYTES + 8 * MIB, "{peak} bytes");
}

#[test]
fn aliases_within_the_bounds_expand() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 500 KB aliased 10 times: 5.5 MB of copies, under the bound; no issue, copies whole.
    let text = case(500_000, 10);
    let parsed = yaml::parse(&text);
    assert!(parsed.issues.is_empty(), "{:?}", parsed.issues);
    let vars = parsed.documents[0].get_value("variables").unwrap();
    for i in 0..10 {
        let b = vars.get_value(&format!("b{i}")).unwrap();
        assert_eq!(b.as_str().map(str::len), Some(500_000));
    }
}
