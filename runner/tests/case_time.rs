//! The case's time limit holds whatever the agent and whatever runs inside a step (issue
//! 24; FORMAT §C.2 step 8: "Per-case timeout: `caseTimeoutMs ?? 120000`", the run aborted
//! with `case '<id>' timed out after <ms>ms (tests.caseTimeoutMs)`):
//!
//! * a case replayed from a cassette runs on the cassette's recorded clock, which advances
//!   per read, not with time; its limit is still measured on the run's clock (the wall
//!   clock here), so hooks cannot outlast it;
//! * an `archmax_run` script (FORMAT §E.5) gets min(`settings.timeoutMs`, the case's time
//!   left), as hooks do (docs/security.md "Hooks within the case's time"), and none starts
//!   once the case's time is spent.
//!
//! The wall-clock tests run real QuickJS scripts that busy-wait 0.9 s each and accept any
//! time well under the unbounded cost (18 s), so a loaded machine does not fail them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use wfx_runner::clock::{FixedClock, SystemClock};
use wfx_runner::interpret::CaseRun;
use wfx_runner::sandbox::QuickJsHost;
use wfx_runner::script_host::{
    HookRequest, HookVerdict, ScriptError, ScriptHost, ScriptRequest, ToolBridge,
};
use wfx_runner::suite::{RunOptions, run_case_file};
use wfx_schemas::files::MemFiles;

const CASE: &str = "workflows/w/tests/a.test.yaml";
/// What one hook or script busy-waits for, ms.
const BUSY_MS: u64 = 900;
/// How many of them a step runs: 18 s unbounded against a 2 s limit.
const COUNT: usize = 20;
/// The most a bounded run may take; the unbounded one takes `COUNT * BUSY_MS` = 18 s.
const MARGIN: Duration = Duration::from_secs(10);
const TIMED_OUT: &str = "case 'a' timed out after 2000ms (tests.caseTimeoutMs)";

fn busy_js(tail: &str) -> String {
    format!("const t = Date.now(); while (Date.now() - t < {BUSY_MS}) {{}}\n{tail}\n")
}

/// A cassette with no interactions, as `check` accepts it (FORMAT-independent: the
/// runner's own file, docs/cassettes.md).
const EMPTY_CASSETTE: &str = r#"{
  "version": 1,
  "recordedWith": "wfx-lsp 0.1.0",
  "recordedAt": "2026-12-03T08:52:53Z",
  "clock": { "startMs": 1796287973000, "stepMs": 1, "zone": "UTC" },
  "model": "m",
  "endpoint": "127.0.0.1:9",
  "case": "a",
  "inputs": { "case": "fnv1a64:0000000000000000", "workflow": "fnv1a64:0000000000000000" },
  "prompts": {},
  "toolsets": {},
  "interactions": []
}
"#;

/// A state with `COUNT` `before` hooks of 0.9 s each, a 2,000 ms case, and an empty
/// cassette beside the case (so the cassette is the agent, FORMAT-free selection rule).
fn hooks_under_a_cassette() -> MemFiles {
    let hooks = "      - script: hooks/h.js\n".repeat(COUNT);
    MemFiles::new()
        .with(
            "workflows/w/workflow.yaml",
            format!(
                "instructions: Answer.\nsettings:\n  timeoutMs: 3000\ntests:\n  caseTimeoutMs: 2000\nstates:\n  start:\n    triggers: {{ manual: }}\n    instructions: Route.\n    before:\n{hooks}"
            ),
        )
        .with("workflows/w/hooks/h.js", busy_js("export default () => ok();"))
        .with(CASE, "title: Slow hooks\ndescription: Many slow hooks.\nsteps:\n  - send: hi\n")
        .with("workflows/w/tests/a.cassette.json", EMPTY_CASSETTE)
}

/// One answer of `COUNT` `archmax_run` calls of a 0.9 s skill script, a 30 s script
/// budget and a 2,000 ms case.
fn scripts_in_one_answer() -> MemFiles {
    let calls = "    - call:\n        tool: archmax_run\n        input: { file_path: skills/kit/scripts/slow.js }\n"
        .repeat(COUNT);
    MemFiles::new()
        .with(
            "skills/kit/SKILL.md",
            "---\nname: kit\ndescription: Slow scripts.\n---\nRun scripts/slow.js.\n",
        )
        .with("skills/kit/scripts/slow.js", busy_js("return \"done\";"))
        .with(
            "workflows/w/workflow.yaml",
            "instructions: Answer.\nskills: { allow_always: [] }\nsettings:\n  timeoutMs: 30000\ntests:\n  caseTimeoutMs: 2000\nstates:\n  start:\n    triggers: { manual: }\n    instructions: Run the kit.\n    skills: { allow: [kit] }\n",
        )
        .with(CASE, "title: Slow scripts\ndescription: Many slow scripts.\nsteps:\n  - send: hi\n")
        .with(
            "workflows/w/tests/a.agent.yaml",
            format!("turns:\n  - - say: running\n{calls}    - say: done\n"),
        )
}

/// Runs the case on the wall clock with the QuickJS host; the run and its wall time.
fn run_on_the_wall_clock(fs: &MemFiles) -> (CaseRun, Duration) {
    let host = || -> Box<dyn ScriptHost> { Box::new(QuickJsHost::default()) };
    let mut ro = RunOptions::new(fs, &SystemClock);
    ro.grades.skip = true;
    ro.script_host = Some(&host);
    let t = Instant::now();
    let run = run_case_file(&ro, CASE).unwrap();
    (run, t.elapsed())
}

/// Hooks under a cassette, and `archmax_run` scripts of one answer: each 18 s unbounded,
/// each stopped at the 2,000 ms case limit on the wall clock.
#[test]
fn a_cassette_does_not_lift_the_case_time_limit_and_archmax_run_scripts_stop_at_it() {
    for (what, fs) in [
        ("hooks under a cassette", hooks_under_a_cassette()),
        ("archmax_run scripts of one answer", scripts_in_one_answer()),
    ] {
        let (run, took) = run_on_the_wall_clock(&fs);
        assert_eq!(
            run.result.error.as_deref(),
            Some(TIMED_OUT),
            "{what}: {:?}",
            run.result
        );
        assert!(
            took < MARGIN,
            "{what}: {took:?} for a 2,000 ms case that takes 18 s unbounded"
        );
    }
}

/// Records the time budget of every `archmax_run` script it is asked to run.
struct Budgets(Arc<Mutex<Vec<Option<u64>>>>);

impl ScriptHost for Budgets {
    fn run_hook(
        &mut self,
        _req: HookRequest,
        _bridge: &mut dyn ToolBridge,
    ) -> Result<HookVerdict, ScriptError> {
        Ok(HookVerdict::Ok)
    }

    fn run_script(
        &mut self,
        req: ScriptRequest,
        _bridge: &mut dyn ToolBridge,
    ) -> Result<Value, ScriptError> {
        self.0.lock().unwrap().push(req.timeout_ms);
        Ok(Value::String("done".into()))
    }
}

#[test]
fn each_archmax_run_script_gets_at_most_the_case_time_left() {
    // A test clock moving 100 ms a read: nothing here is timed. The scripts' own budget is
    // 30,000 ms; the case has 2,000 ms.
    let fs = scripts_in_one_answer();
    let clock = FixedClock::new(0, 100);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let host = move || -> Box<dyn ScriptHost> { Box::new(Budgets(Arc::clone(&s))) };
    let mut ro = RunOptions::new(&fs, &clock);
    ro.grades.skip = true;
    ro.script_host = Some(&host);
    let run = run_case_file(&ro, CASE).unwrap();
    let budgets = seen.lock().unwrap().clone();
    assert!(!budgets.is_empty(), "{:?}", run.result);
    assert_eq!(budgets.len(), COUNT, "{:?}", run.result);
    for b in &budgets {
        let b = b.expect("a budget");
        assert!(
            b > 0 && b <= 2_000,
            "a script got {b} ms of a 2,000 ms case: {budgets:?}"
        );
    }
}
