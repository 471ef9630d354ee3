//! The first hook of a list is bounded by the case's time left, like every later one
//! (docs/security.md "Bounded work"): its budget is min(`settings.timeoutMs`, the case's
//! time left), and a case whose time is spent starts no hook at all, so it never starts a
//! 30 s hook. A recording script host sees each hook's budget; the clock is a test clock,
//! so nothing here is timed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use serde_json::Value;
use wfx_runner::clock::FixedClock;
use wfx_runner::script_host::{
    HookRequest, HookVerdict, ScriptError, ScriptHost, ScriptRequest, ToolBridge,
};
use wfx_runner::suite::{RunOptions, run_case_file};
use wfx_schemas::files::MemFiles;

/// Records the time budget of every hook it is asked to run, then answers `ok`.
struct Budgets(Arc<Mutex<Vec<Option<u64>>>>);

impl ScriptHost for Budgets {
    fn run_hook(
        &mut self,
        req: HookRequest,
        _bridge: &mut dyn ToolBridge,
    ) -> Result<HookVerdict, ScriptError> {
        self.0.lock().unwrap().push(req.timeout_ms);
        Ok(HookVerdict::Ok)
    }

    fn run_script(
        &mut self,
        _req: ScriptRequest,
        _bridge: &mut dyn ToolBridge,
    ) -> Result<Value, ScriptError> {
        Ok(Value::Null)
    }
}

const CASE: &str = "workflows/w/tests/a.test.yaml";

/// A workflow whose one state has a single `before` hook with a 30 s budget.
fn workspace(case_timeout_ms: u64) -> MemFiles {
    MemFiles::new()
        .with(
            "workflows/w/workflow.yaml",
            format!(
                "instructions: Answer.\nsettings:\n  timeoutMs: 30000\ntests: {{ caseTimeoutMs: {case_timeout_ms} }}\nstates:\n  start:\n    triggers: {{ manual: }}\n    before: {{ script: hooks/h.js }}\n    instructions: Route.\n"
            ),
        )
        .with("workflows/w/hooks/h.js", "export default () => ok();\n")
        .with(
            CASE,
            "title: One\ndescription: Sends once.\nsteps:\n  - send: hi\n",
        )
        .with("workflows/w/tests/a.agent.yaml", "turns:\n  - - say: one\n")
}

/// Runs the case with a clock that moves `step` ms a read; the budgets hooks got, and the
/// case result as text.
fn run(case_timeout_ms: u64, step: u64) -> (Vec<Option<u64>>, String) {
    let fs = workspace(case_timeout_ms);
    let clock = FixedClock::new(0, step);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let host = move || -> Box<dyn ScriptHost> { Box::new(Budgets(Arc::clone(&s))) };
    let mut ro = RunOptions::new(&fs, &clock);
    ro.grades.skip = true;
    ro.script_host = Some(&host);
    let run = run_case_file(&ro, CASE).unwrap();
    let budgets = seen.lock().unwrap().clone();
    (budgets, format!("{:?}", run.result))
}

#[test]
fn the_first_hook_gets_at_most_the_case_time_left() {
    // 5 s for the case, 10 ms a clock read: the only hook is the first of its list.
    let (budgets, shown) = run(5_000, 10);
    assert_eq!(budgets.len(), 1, "{shown}");
    let budget = budgets[0].expect("a budget");
    assert!(
        budget <= 5_000,
        "the first hook got {budget} ms of a 5,000 ms case"
    );
    assert!(budget > 4_000, "{budget}");
}

#[test]
fn a_case_whose_time_is_spent_starts_no_hook() {
    // Each clock read moves 1 s and the case has 1 s: spent before the hook would start.
    let (budgets, shown) = run(1_000, 1_000);
    assert_eq!(budgets, Vec::<Option<u64>>::new(), "{shown}");
    assert!(shown.contains("timed out"), "{shown}");
}
