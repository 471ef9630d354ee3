//! Issue 24, item 1: the `WFX313` path search (`wfx_schemas::satisfy`) is bounded in memory,
//! not only in its count of expansions (security promise "bounded work", docs/security.md).
//!
//! The attacker's input: a fully connected 50-state workflow and a case with one `send` and
//! 50 `reachedState` steps (one counter per state, so a model run's situations are the
//! (state, visited set) pairs: exponentially many). The search used to queue one cloned
//! counter vector per edge of every expanded situation and to count only expansions, so
//! `check` (and the server's closed-file pass, the same function) allocated gigabytes
//! before its 200,000-expansion bound fired.
//!
//! A counting global allocator measures the bytes live at once on the test's thread; the
//! search must stay at the scale of its bound (a few tens of MiB) and give no verdict
//! (`Unknown`, so no `WFX313`: FORMAT §B.5, "no false claims"). An allocation that would
//! take a thread past [`REFUSE_ABOVE`] live bytes is refused, so an unbounded search
//! aborts this test binary at once instead of exhausting the machine.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The counting allocator below is the one `unsafe` here: a `GlobalAlloc` cannot be written
// without it, and it only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use wfx_schemas::check::{check_file, check_workflow_dir};
use wfx_schemas::files::MemFiles;
use wfx_schemas::model::case::Case;
use wfx_schemas::model::workflow::Workflow;
use wfx_schemas::satisfy::{Satisfiability, Verdict, analyse, verdict};
use wfx_schemas::workspace::WorkflowDir;

/// Live bytes past which this binary's allocator refuses an allocation (an abort): well
/// above the bound asserted, far below what the unbounded search took.
const REFUSE_ABOVE: usize = 1 << 30;

/// Peak live bytes the search may add (the bound asserted): [`satisfy::MAX_WORK`] units
/// hold a few tens of MiB at most.
const PEAK_BOUND: usize = 64 << 20;

struct Counting;

thread_local! {
    /// (live bytes, peak live bytes) allocated by this thread; frees are counted on the
    /// freeing thread (the search runs on one thread).
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

const STATES: usize = 50;

/// `workflow.yaml`: states `s00`..`s49`, `s00` the `manual` start, each with a described
/// transition to every other state (FORMAT §A.2): a spec that loads, so `check` runs the
/// search (about 120 KB).
fn mesh_workflow() -> String {
    let names: Vec<String> = (0..STATES).map(|i| format!("s{i:02}")).collect();
    let mut y = String::from("instructions: A fully connected mesh.\nstates:\n");
    for (i, s) in names.iter().enumerate() {
        y.push_str(&format!("  {s}:\n    instructions: Work in {s}.\n"));
        if i == 0 {
            y.push_str("    triggers:\n      manual:\n");
        }
        y.push_str("    transitions:\n");
        for t in names.iter().filter(|t| *t != s) {
            y.push_str(&format!(
                "      - to: {t}\n        description: Go to {t}.\n"
            ));
        }
    }
    y
}

/// A case with one `send` and 50 `reachedState` steps (every state but the start, then
/// `s01` again): 49 counters (FORMAT §B.2).
fn mesh_case() -> String {
    let mut y = String::from("title: visit all\ndescription: every state\nsteps:\n  - send: hi\n");
    for i in (1..STATES).chain([1]) {
        y.push_str(&format!("  - reachedState: s{i:02}\n"));
    }
    y
}

fn models() -> (Workflow, Case) {
    let wf = wfx_schemas::yaml::parse(&mesh_workflow());
    let c = wfx_schemas::yaml::parse(&mesh_case());
    (
        Workflow::from_node(wf.documents.first().unwrap()),
        Case::from_node(c.documents.first().unwrap()),
    )
}

#[test]
fn the_verdict_on_a_mesh_is_unknown_within_the_memory_bound() {
    let (wf, case) = models();
    let (v, peak) = peak_of(|| verdict(&wf, &case));
    assert!(matches!(v, Verdict::Unknown(_)), "{v:?}");
    assert!(peak < PEAK_BOUND, "verdict held {peak} bytes at once");
}

#[test]
fn the_plan_search_on_a_mesh_is_unknown_within_the_memory_bound() {
    // `analyse` (`wfx-lsp scaffold`) also records moves: the same bound.
    let (wf, case) = models();
    let (a, peak) = peak_of(|| analyse(&wf, &case));
    assert!(matches!(a, Satisfiability::Unknown(_)), "{a:?}");
    assert!(peak < PEAK_BOUND, "analyse held {peak} bytes at once");
}

#[test]
fn check_reports_no_wfx313_on_a_mesh_within_the_memory_bound() {
    // What `wfx-lsp check` and the server's closed-file pass run on the case.
    let files = MemFiles::new()
        .with("workflows/mesh/workflow.yaml", mesh_workflow())
        .with("workflows/mesh/tests/all.test.yaml", mesh_case());
    let dir = WorkflowDir {
        root: String::new(),
        slug: "mesh".into(),
    };
    // The spec loads (no diagnostic at all), so nothing withholds the search.
    assert!(check_workflow_dir(&files, &dir).is_empty());
    let (d, peak) = peak_of(|| check_file(&files, "workflows/mesh/tests/all.test.yaml"));
    assert!(d.is_empty(), "{d:#?}");
    assert!(peak < PEAK_BOUND, "check held {peak} bytes at once");
}
