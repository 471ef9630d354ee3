//! The cross-file workflow rules do work linear in the number of states (docs/security.md:
//! `check` stays within about 1 s per file; FORMAT §D.2 steps 7–9: governance probes and
//! the sub-workflow walk over the states reachable from a trigger).
//!
//! Finding: `reachable_states` found each visited state by a linear scan of every state,
//! building its key's text per comparison, and the governance probe rebuilt the set of all
//! state slugs once per state with a `tools.allow`: a 20,000-state chain (state `s<i>`
//! transitions to `s<i+1>`) took `check` 8.7 s (35 s with a `tools.allow` per state). The
//! names are now a map (name → index) and a set, each built once per pass.
//!
//! The measure is work, not time: the bytes `check` allocates in total (every allocation,
//! freed or not). A pass linear in the states allocates about 4× for 4× the states; the
//! quadratic one allocated about 16× (each scan built a `String` per state compared). The
//! allocator counts the whole process (`check` may run jobs on other threads); the tests of
//! this binary take `SERIAL` so they do not disturb each other's figures.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The counting allocator below is the one `unsafe` here: a `GlobalAlloc` cannot be written
// without it, and it only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use wfx_schemas::check::check_workspace;
use wfx_schemas::files::MemFiles;

/// Bytes allocated since the process started (a running total: frees do not lower it).
static ALLOCATED: AtomicU64 = AtomicU64::new(0);
static SERIAL: Mutex<()> = Mutex::new(());

struct Counting;

fn count(bytes: usize) {
    ALLOCATED.fetch_add(bytes as u64, Ordering::Relaxed);
}

// SAFETY: forwards to `System`; the bookkeeping allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size.saturating_sub(layout.size()));
        // SAFETY: the caller's pointer and layout, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A workspace with one workflow `chain` of `n` states: `s0` declares the `manual` trigger,
/// `s<i>` transitions to `s<i+1>`, the last state is terminal (no transitions, FORMAT §A).
/// With `allow`, every state allows `read` (so each runs the governance probes).
fn chain(n: usize, allow: bool) -> MemFiles {
    let mut y = String::from("title: Chain\ninstructions: walk the chain\nstates:\n");
    for i in 0..n {
        writeln!(y, "  s{i}:\n    title: State {i}").unwrap();
        if i == 0 {
            y.push_str("    triggers:\n      manual: {}\n");
        }
        if allow {
            y.push_str("    tools:\n      allow: [read]\n");
        }
        if i + 1 < n {
            writeln!(
                y,
                "    transitions:\n      - to: s{}\n        description: when step {i} is done",
                i + 1
            )
            .unwrap();
        }
    }
    MemFiles::new().with("workflows/chain/workflow.yaml", y)
}

/// Total bytes `check` allocates on the `n`-state chain; the chain must check clean (so
/// every rule ran over all of it, none stopped early at a finding).
fn check_bytes(n: usize, allow: bool) -> u64 {
    workspace_bytes(&chain(n, allow), &format!("the {n}-state chain"))
}

/// Total bytes `check` allocates on the workspace `fs`, which must check clean.
fn workspace_bytes(fs: &MemFiles, what: &str) -> u64 {
    let before = ALLOCATED.load(Ordering::Relaxed);
    let diags = check_workspace(fs, "");
    let bytes = ALLOCATED.load(Ordering::Relaxed) - before;
    assert!(
        diags.is_empty(),
        "{what} should check clean: {:?}",
        diags
            .iter()
            .take(3)
            .map(|d| format!("{} {}", d.code.code, d.message))
            .collect::<Vec<_>>()
    );
    bytes
}

/// 4× the states must cost under 6× the bytes (linear: about 4×; the quadratic scans: about
/// 16×, and 5 GB at 20,000 states).
fn assert_linear(allow: bool) {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let small = check_bytes(5_000, allow);
    let large = check_bytes(20_000, allow);
    let ratio = large as f64 / small as f64;
    assert!(
        ratio < 6.0,
        "check allocated {small} bytes for 5,000 states and {large} for 20,000 (×{ratio:.1}); linear work is about ×4"
    );
}

/// `reachable_states` (the sub-workflow walk's start, FORMAT §D.2 step 9): one map lookup
/// per transition, not a scan of every state.
#[test]
fn reachability_of_a_long_chain_is_linear() {
    assert_linear(false);
}

/// The governance probes (FORMAT §D.2 step 8) of a state with a `tools.allow`: the state
/// slugs and `tools.forbid_always` are built once per file, not once per state.
#[test]
fn governance_of_a_long_chain_is_linear() {
    assert_linear(true);
}

/// The sub-workflow walk (FORMAT §D.2 step 9, §E.9) derives what it needs of a target once
/// per walk: `grants` grants of `archmax_workflow_chain` (a 5,000-state workflow) in one
/// state used to clone the target's tree and derive its model and reachable states once
/// per grant (2,000 grants of a 20,000-state target: over 5 minutes). Now the grants add
/// their own YAML's cost, not a walk of the target each.
#[test]
fn delegating_many_times_to_a_large_workflow_walks_it_once() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let with_grants = |grants: usize| {
        let mut y = String::from(
            "title: Root\ninstructions: delegate\nstates:\n  start:\n    title: Start\n    triggers:\n      manual: {}\n    tools:\n      allow:\n",
        );
        for _ in 0..grants {
            y.push_str("        - archmax_workflow_chain\n");
        }
        chain(5_000, false).with("workflows/root/workflow.yaml", y)
    };
    let one = workspace_bytes(&with_grants(1), "one grant");
    let many = workspace_bytes(&with_grants(400), "400 grants");
    let ratio = many as f64 / one as f64;
    assert!(
        ratio < 2.0,
        "check allocated {one} bytes with one grant of the 5,000-state workflow and {many} with 400 (×{ratio:.1}); the grants' own YAML is a small fraction of the target's"
    );
}
