//! Hooks and `archmax_run` scripts through the simulator with the real QuickJS sandbox
//! (the default host of `run_cli_with`) on tests/fixtures/hooks: an entry veto, an
//! `after` hook's `correct` within and over its `max_iterations` budget (FORMAT §E.6), a
//! throwing hook, a hook stopped by `settings.timeoutMs` (FORMAT §A.1), case mocks seen
//! by a script's tool calls, and governance bounding a script (FORMAT §E.5, §E.7).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use serde_json::Value;
use wfx_runner::cli::{CliContext, TestOptions, run_cli_with};
use wfx_runner::clock::FixedClock;

fn ws() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks")
}

/// Runs one workflow of the fixture with `--json --skip-grades` and the default
/// (QuickJS) script host; returns the exit code, the parsed JSON and stderr.
fn run(slug: &str) -> (i32, Value, String) {
    let clock = FixedClock::default();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let opts = TestOptions {
        target: Some(slug.into()),
        skip_grades: true,
        json: true,
        ..Default::default()
    };
    let code = run_cli_with(
        &opts,
        &ws(),
        &CliContext {
            clock: &clock,
            model: None,
        },
        &mut out,
        &mut err,
    );
    let err = String::from_utf8(err).unwrap();
    let v: Value = serde_json::from_str(&String::from_utf8(out).unwrap())
        .unwrap_or_else(|e| panic!("{e}\n{err}"));
    (code, v, err)
}

/// The result of case `id`.
fn case<'v>(v: &'v Value, id: &str) -> &'v Value {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no case {id} in {v:#}"))
}

/// `(kind, status, detail)` of every record of a case, in order.
fn records(r: &Value) -> Vec<(String, String, String)> {
    r["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["kind"].as_str().unwrap().to_owned(),
                x["status"].as_str().unwrap().to_owned(),
                x["detail"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn rec(kind: &str, status: &str, detail: &str) -> (String, String, String) {
    (kind.into(), status.into(), detail.into())
}

fn assert_passed(r: &Value, err: &str) {
    assert_eq!(r["verdict"]["status"], "passed", "{r:#}\n{err}");
    assert_eq!(r["verdict"]["failures"], serde_json::json!([]), "{r:#}");
}

#[test]
fn a_before_hook_vetoes_entry_and_a_throwing_hook_counts_as_a_veto() {
    let (code, v, err) = run("gate");
    assert_eq!(code, 0, "{v:#}\n{err}");
    assert_eq!(v["discovered"], 3);
    // (1) the veto: nothing traversed, the reply comes from the reply-only turn.
    let vetoed = case(&v, "vetoed");
    assert_passed(vetoed, &err);
    assert_eq!(
        records(vetoed),
        [
            rec("reply.includes", "passed", "/not served/"),
            rec("noTraversal", "passed", "no committed transitions"),
        ]
    );
    // (4) a hook that throws vetoes the same way.
    let throws = case(&v, "throws");
    assert_passed(throws, &err);
    assert_eq!(
        records(throws),
        [
            rec("reply.includes", "passed", "/rejected/"),
            rec("noTraversal", "passed", "no committed transitions"),
        ]
    );
    // The control: the same hook lets a friend in, so the two above are its doing.
    let allowed = case(&v, "allowed");
    assert_passed(allowed, &err);
    assert_eq!(
        records(allowed),
        [
            rec("succeeded", "passed", ""),
            rec("trail", "passed", "to=done kind=agent expected 1, saw 1"),
        ]
    );
}

#[test]
fn an_after_hook_correction_within_budget_sends_back_once_then_passes() {
    let (code, v, err) = run("fix");
    assert_eq!(code, 0, "{v:#}\n{err}");
    let r = case(&v, "corrected");
    assert_passed(r, &err);
    assert_eq!(
        records(r),
        [
            rec("succeeded", "passed", ""),
            rec("reachedState", "passed", "done"),
            rec("trail", "passed", "to=done kind=agent expected 1, saw 1"),
            rec("trail", "passed", "kind=on_error expected 0, saw 0"),
            rec(
                "calledTool",
                "passed",
                "write_file {\"file_path\":\"scratchpad/fixed.txt\"}"
            ),
        ]
    );
    // Without the fix the one send-back is spent, and the second correction is terminal.
    let r = case(&v, "unfixed");
    assert_passed(r, &err);
    assert_eq!(
        records(r),
        [
            rec("reachedState", "passed", "escalated"),
            rec(
                "trail",
                "passed",
                "to=escalated kind=on_error expected 1, saw 1"
            ),
            rec("trail", "passed", "to=done expected 0, saw 0"),
        ]
    );
}

#[test]
fn an_after_hook_correction_over_budget_is_a_hard_veto_routed_to_on_error() {
    let (code, v, err) = run("strict");
    assert_eq!(code, 0, "{v:#}\n{err}");
    let r = case(&v, "over-budget");
    assert_passed(r, &err);
    assert_eq!(
        records(r),
        [
            rec("reachedState", "passed", "escalated"),
            rec(
                "trail",
                "passed",
                "to=escalated kind=on_error reason=the correction budget of an after hook is exhausted: write scratchpad/fixed.txt first expected 1, saw 1"
            ),
            rec("trail", "passed", "to=done expected 0, saw 0"),
        ]
    );
}

#[test]
fn an_endless_hook_is_stopped_by_the_timeout_budget() {
    let (code, v, err) = run("loop");
    assert_eq!(code, 0, "{v:#}\n{err}");
    let r = case(&v, "spins");
    assert_passed(r, &err);
    assert_eq!(
        records(r),
        [
            rec("reachedState", "passed", "failed"),
            rec(
                "trail",
                "passed",
                "to=failed kind=on_error reason=a hook failed to execute: the script exceeded its time budget of 200 ms (settings.timeoutMs) expected 1, saw 1"
            ),
        ]
    );
}

#[test]
fn case_mocks_answer_a_scripts_tool_calls() {
    let (code, v, err) = run("scripts");
    let r = case(&v, "mocked");
    assert_passed(r, &err);
    assert_eq!(
        records(r),
        [
            rec("succeeded", "passed", ""),
            rec("trail", "passed", "to=done expected 1, saw 1"),
        ]
    );
    assert_eq!(code, 0, "{v:#}\n{err}");
}

#[test]
fn a_script_cannot_read_a_skill_the_state_does_not_enable() {
    let (code, v, err) = run("scripts");
    let r = case(&v, "governed");
    assert_passed(r, &err);
    assert_eq!(
        records(r),
        [
            rec("succeeded", "passed", ""),
            rec("trail", "passed", "to=done expected 1, saw 1"),
        ]
    );
    assert_eq!(code, 0, "{v:#}\n{err}");
}
