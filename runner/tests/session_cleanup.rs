//! A killed or aborted case leaves no session folder behind (safe writes): a case stopped by
//! `tests.caseTimeoutMs`, a panic inside a case, and a run cancelled between cases. The
//! script host records the session folders alive while a hook runs; after the case each is
//! gone from disk. (SIGTERM of `wfx-lsp test` is tested through the binary, in the root
//! package's `tests/noexec.rs`.)
//!
//! One test function on purpose: the scenarios run one after another in this binary, so
//! the live sessions a hook sees are this case's own.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use wfx_runner::clock::FixedClock;
use wfx_runner::script_host::{
    HookRequest, HookVerdict, ScriptError, ScriptHost, ScriptRequest, ToolBridge,
};
use wfx_runner::session_fs::live_sessions;
use wfx_runner::suite::{RunOptions, run_case_file, run_workflow};
use wfx_schemas::files::MemFiles;
use wfx_schemas::workspace::WorkflowDir;

/// Records the live session folders at each hook, then answers `ok`, or panics.
struct Recorder {
    seen: Arc<Mutex<Vec<PathBuf>>>,
    panic: bool,
}

impl ScriptHost for Recorder {
    fn run_hook(
        &mut self,
        _req: HookRequest,
        _bridge: &mut dyn ToolBridge,
    ) -> Result<HookVerdict, ScriptError> {
        self.seen.lock().unwrap().extend(live_sessions());
        assert!(!self.panic, "a bug inside a case");
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

fn workspace(case_timeout_ms: u64) -> MemFiles {
    MemFiles::new()
        .with(
            "workflows/w/workflow.yaml",
            format!(
                "instructions: Answer.\ntests: {{ caseTimeoutMs: {case_timeout_ms} }}\nstates:\n  start:\n    triggers: {{ manual: }}\n    before: {{ script: hooks/h.js }}\n    instructions: Route.\n"
            ),
        )
        .with("workflows/w/hooks/h.js", "export default () => ok();\n")
        .with(
            CASE,
            "title: One\ndescription: Sends twice.\nsteps:\n  - send: hi\n  - send: again\n  - send: and again\n",
        )
        .with(
            "workflows/w/tests/a.agent.yaml",
            "turns:\n  - - say: one\n  - - say: two\n  - - say: three\n",
        )
        .with("workflows/w/tests/b.agent.yaml", "turns:\n  - - say: one\n")
        .with(
            "workflows/w/tests/b.test.yaml",
            "title: Two\ndescription: Sends once.\nsteps:\n  - send: hi\n",
        )
}

/// Asserts the hook saw at least one session folder and that none is left.
fn assert_cleaned(seen: &Mutex<Vec<PathBuf>>, what: &str) {
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert!(!seen.is_empty(), "{what}: no hook saw a session folder");
    for dir in &seen {
        assert!(!dir.exists(), "{what}: {} is left behind", dir.display());
    }
    assert_eq!(live_sessions(), Vec::<PathBuf>::new(), "{what}");
}

#[test]
fn aborted_cases_leave_no_session_folder() {
    let seen = Arc::new(Mutex::new(Vec::new()));

    // 1. `tests.caseTimeoutMs`: the clock moves 10 ms a read, the case may take 45 ms
    // (enough for the first hook to start; the case times out at a later step).
    let fs = workspace(45);
    let clock = FixedClock::new(0, 10);
    let s = Arc::clone(&seen);
    let host = move || -> Box<dyn ScriptHost> {
        Box::new(Recorder {
            seen: Arc::clone(&s),
            panic: false,
        })
    };
    let mut ro = RunOptions::new(&fs, &clock);
    ro.grades.skip = true;
    ro.script_host = Some(&host);
    let run = run_case_file(&ro, CASE).unwrap();
    let shown = format!("{:?}", run.result);
    assert!(shown.contains("timed out"), "{shown}");
    assert_cleaned(&seen, "case timeout");

    // 2. A panic inside the case unwinds through the session.
    let fs = workspace(120_000);
    let clock = FixedClock::default();
    let s = Arc::clone(&seen);
    let host = move || -> Box<dyn ScriptHost> {
        Box::new(Recorder {
            seen: Arc::clone(&s),
            panic: true,
        })
    };
    let mut ro = RunOptions::new(&fs, &clock);
    ro.grades.skip = true;
    ro.script_host = Some(&host);
    let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_case_file(&ro, CASE)));
    assert!(got.is_err(), "the host's panic did not reach the caller");
    assert_cleaned(&seen, "panic");

    // 3. Cancellation: the server's flag, checked between cases, is raised by the first
    //    case's hook; the run stops after that case, and its folder is gone.
    let fs = workspace(120_000);
    let clock = FixedClock::default();
    let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (s, c) = (Arc::clone(&seen), Arc::clone(&cancel));
    let host = move || -> Box<dyn ScriptHost> {
        c.store(true, std::sync::atomic::Ordering::SeqCst);
        Box::new(Recorder {
            seen: Arc::clone(&s),
            panic: false,
        })
    };
    let cancelled = || cancel.load(std::sync::atomic::Ordering::SeqCst);
    let mut ro = RunOptions::new(&fs, &clock);
    ro.grades.skip = true;
    ro.script_host = Some(&host);
    ro.cancelled = Some(&cancelled);
    let dir = WorkflowDir {
        root: String::new(),
        slug: "w".into(),
    };
    let mut ran = Vec::new();
    run_workflow(&ro, &dir, &mut |run| ran.push(run.path.clone())).unwrap();
    assert_eq!(ran, [CASE], "the run went on after the cancellation");
    assert_cleaned(&seen, "cancellation");
}
