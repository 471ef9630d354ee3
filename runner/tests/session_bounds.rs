//! Issue 24, item 3: what a session keeps is bounded at the scale of the session's bounds,
//! whatever a hook or the agent sends (docs/security.md, bounded work):
//!
//! * runtime notes (a veto's or a correction's reason, FORMAT §E.6) and trail reasons
//!   (FORMAT §E.2) count against the session's 4 MiB text budget with its tool results
//!   (`sim::MAX_SESSION_TOOL_OUTPUT_BYTES`); before, 12 sends vetoed with 60 MB reasons
//!   kept 1.5 GB;
//! * the run variables (FORMAT §E.4) count against the session folder's 64 MiB bound with
//!   its files (`session_fs::MAX_SESSION_DISK_BYTES`); a change past it is refused whole;
//! * a tool call reads the store in place: before, each call copied it twice (one send of
//!   100 calls storing 4 MiB each: 788 MB, 24 s).
//!
//! The attacker inputs are built smaller than the issue's (1 MiB reasons and values), at
//! a scale where each bound still shows. A counting global allocator measures the bytes
//! this test's thread allocates; an allocation that would take a thread past
//! [`REFUSE_ABOVE`] live bytes is refused (the binary aborts) so a regression cannot
//! exhaust the machine.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The counting allocator below is the one `unsafe` here: a `GlobalAlloc` cannot be written
// without it, and it only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use serde_json::{Value, json};
use wfx_runner::agent::{AgentAction, ScriptedAgent};
use wfx_runner::clock::FixedClock;
use wfx_runner::grade::GradePolicy;
use wfx_runner::script_host::{
    HookRequest, HookVerdict, ScriptError, ScriptHost, ScriptRequest, ToolBridge,
};
use wfx_runner::session_fs::MAX_SESSION_DISK_BYTES;
use wfx_runner::sim::{
    MAX_SESSION_TOOL_OUTPUT_BYTES, Msg, Session, SimConfig, Simulator, TEXT_CUT_MARKER,
};
use wfx_schemas::files::MemFiles;
use wfx_schemas::model::workflow::Workflow;
use wfx_schemas::workspace::WorkflowDir;
use wfx_schemas::yaml;

/// Live bytes past which this binary's allocator refuses an allocation (an abort).
const REFUSE_ABOVE: usize = 4 << 30;

struct Counting;

thread_local! {
    /// (live bytes, bytes allocated in all) by this thread.
    static COUNT: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

fn on_alloc(size: usize) -> bool {
    COUNT
        .try_with(|c| {
            let (live, total) = c.get();
            let live = live.saturating_add(size);
            if live > REFUSE_ABOVE {
                return false;
            }
            c.set((live, total.saturating_add(size)));
            true
        })
        .unwrap_or(true)
}

fn on_free(size: usize) {
    let _ = COUNT.try_with(|c| {
        let (live, total) = c.get();
        c.set((live.saturating_sub(size), total));
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
        if !on_alloc(new_size) {
            return std::ptr::null_mut();
        }
        on_free(layout.size());
        // SAFETY: as `alloc` and `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Bytes this thread has allocated in all so far.
fn allocated() -> usize {
    COUNT.with(|c| c.get().1)
}

const MIB: usize = 1 << 20;

/// One state with one `before` hook, and a terminal state.
const WF: &str = "states:\n  start:\n    triggers: { manual: }\n    before:\n      - script: hooks/h.js\n    transitions:\n      - { to: done, description: d }\n  done: {}\n";

/// A host whose hooks veto with a reason of `reason_bytes` bytes, or pass (`None`).
struct Vetoes {
    reason_bytes: Option<usize>,
}

impl ScriptHost for Vetoes {
    fn run_hook(
        &mut self,
        _req: HookRequest,
        _bridge: &mut dyn ToolBridge,
    ) -> Result<HookVerdict, ScriptError> {
        Ok(match self.reason_bytes {
            Some(n) => HookVerdict::Veto("r".repeat(n)),
            None => HookVerdict::Ok,
        })
    }

    fn run_script(
        &mut self,
        _req: ScriptRequest,
        _bridge: &mut dyn ToolBridge,
    ) -> Result<Value, ScriptError> {
        Ok(Value::Null)
    }
}

/// Runs `f` with a simulator over [`WF`] whose agent plays `turns`, hooks run by `host`.
fn with_sim(
    turns: Vec<Vec<AgentAction>>,
    host: &mut dyn ScriptHost,
    f: impl FnOnce(&mut Simulator<'_, '_>),
) {
    let fs = MemFiles::new().with("workflows/w/hooks/h.js", "export default () => ok();\n");
    let wf = Workflow::from_node(yaml::parse(WF).documents.first().unwrap());
    let clock = FixedClock::default();
    let cfg = SimConfig {
        workspace: &fs,
        dir: WorkflowDir {
            root: String::new(),
            slug: "w".into(),
        },
        workflow: &wf,
        clock: &clock,
        grades: GradePolicy {
            skip: true,
            model: None,
        },
    };
    let mut session = Session::new(cfg, Vec::new()).unwrap();
    session.open("manual").unwrap();
    let mut agent = ScriptedAgent::from_turns("t.agent.yaml", turns);
    let mut sim = Simulator::new(session, &mut agent, host, None);
    f(&mut sim);
}

/// Bytes of runtime-note text the session keeps.
fn note_bytes(sim: &Simulator<'_, '_>) -> usize {
    sim.session
        .messages
        .iter()
        .map(|m| match m {
            Msg::Note { text, .. } => text.len(),
            _ => 0,
        })
        .sum()
}

#[test]
fn veto_reasons_count_against_the_session_text_bound() {
    // 12 sends, each vetoed at entry with a 1 MiB reason: 12 MiB of notes unbounded.
    const SENDS: usize = 12;
    let turns = vec![vec![AgentAction::Say("refused".into())]; SENDS];
    let mut host = Vetoes {
        reason_bytes: Some(MIB),
    };
    with_sim(turns, &mut host, |sim| {
        for step in 0..SENDS {
            sim.send(step, "hi", &[]).unwrap();
        }
        let kept = note_bytes(sim);
        // The notes' own words and markers beside the budget: a few hundred bytes each.
        assert!(
            kept <= MAX_SESSION_TOOL_OUTPUT_BYTES + SENDS * 300,
            "{kept} bytes of notes kept for {SENDS} sends vetoed with {MIB}-byte reasons"
        );
        let notes = sim.view().notes;
        assert_eq!(notes.len(), SENDS, "every veto is still said");
        assert!(
            notes.last().unwrap().1.ends_with(TEXT_CUT_MARKER),
            "a cut note says so"
        );
    });
}

/// One model answer that stores `count` variables, each the 1 MiB seed `big` `times`
/// times over (references substituted at the call, FORMAT §A.3), then a reply.
fn storing_turn(count: usize, times: usize) -> Vec<AgentAction> {
    let value: Vec<Value> = (0..times).map(|_| json!("${{big}}")).collect();
    let mut turn: Vec<AgentAction> = (0..count)
        .map(|i| AgentAction::Call {
            tool: "archmax_set_variables".into(),
            input: json!({ "variables": { format!("v{i}"): value } }),
        })
        .collect();
    turn.push(AgentAction::Say("stored".into()));
    turn
}

fn big_seed() -> Vec<(String, Value)> {
    vec![("big".into(), json!("x".repeat(MIB)))]
}

#[test]
fn variables_past_the_session_bound_are_refused_whole() {
    // 20 calls of 4 MiB each: 80 MiB unbounded, past the 64 MiB the session holds.
    let mut host = Vetoes { reason_bytes: None };
    with_sim(vec![storing_turn(20, 4)], &mut host, |sim| {
        sim.send(0, "store", &big_seed()).ok();
        let view = sim.view();
        let held = sim.session.variables.bytes();
        assert!(
            held <= MAX_SESSION_DISK_BYTES,
            "the store holds {held} bytes, past the session's {MAX_SESSION_DISK_BYTES}"
        );
        let refusals: Vec<&str> = view
            .tool_calls
            .iter()
            .filter_map(|c| c.output.as_ref().and_then(Value::as_str))
            .filter(|o| {
                o.starts_with("archmax_set_variables rejected: the run variables would hold")
            })
            .collect();
        assert!(
            !refusals.is_empty(),
            "no call was refused: {held} bytes held"
        );
        assert!(
            refusals[0].contains("cap of 67108864 bytes")
                && refusals[0].ends_with("Nothing was written."),
            "{}",
            refusals[0]
        );
        // A refused call stored nothing; the calls before it stored theirs.
        let stored = (0..20)
            .filter(|i| sim.session.variables.contains_key(&format!("v{i}")))
            .count();
        assert!((10..20).contains(&stored), "{stored} of 20 stored");
        assert!(
            view.failed,
            "a refused set is an error result (FORMAT §E.4)"
        );
    });
}

#[test]
fn storing_variables_does_not_copy_the_store_per_call() {
    // 40 calls of 1 MiB each: the store grows to 40 MiB. Copying it twice per call, as
    // before, allocates 2 × (1 + 2 + … + 40) MiB = 1,640 MiB; reading it in place costs
    // each call its own value, and each model call one view of the store.
    const CALLS: usize = 40;
    let mut host = Vetoes { reason_bytes: None };
    with_sim(vec![storing_turn(CALLS, 1)], &mut host, |sim| {
        let before = allocated();
        sim.send(0, "store", &big_seed()).ok();
        let spent = allocated() - before;
        let stored = (0..CALLS)
            .filter(|i| sim.session.variables.contains_key(&format!("v{i}")))
            .count();
        assert_eq!(stored, CALLS);
        assert!(
            spent < 400 * MIB,
            "{} MiB allocated to store {CALLS} MiB of variables",
            spent / MIB
        );
    });
}
