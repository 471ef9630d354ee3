//! Bounded work at run time (docs/security.md): a catastrophic regex in a `reply` token, a
//! tool assertion's `input` and a mock's `whenInput` fails with the reason instead of
//! running for ever, and guard globs over a bound block the calls they guard, for allow
//! and forbid entries alike (fail closed). No timing: each test only has to finish.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers"
)]

use std::path::PathBuf;

use wfx_runner::clock::FixedClock;
use wfx_runner::disk::DiskFiles;
use wfx_runner::grade::GradePolicy;
use wfx_runner::interpret::{CaseEnv, run_case};
use wfx_runner::interpret::{CaseResult, RecordStatus, VerdictStatus};
use wfx_runner::script_host::NoScriptHost;
use wfx_runner::suite::{RunOptions, SuiteError, run_case_file, scripted_agent};
use wfx_schemas::check::load_workflow;
use wfx_schemas::workspace::WorkflowDir;

fn fixture() -> DiskFiles {
    DiskFiles::new(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bounds"))
}

/// Runs a case of the fixture workflow through the interpreter itself. `wfx-lsp test` and
/// the editor refuse this workflow (its glob bombs are WFX227 errors, see
/// [`the_suite_refuses_the_fixture_workflow`]); the run-time bounds below are the second
/// line, for a workflow that reaches the simulator anyway.
fn run(case: &str) -> CaseResult {
    let fs = fixture();
    let clock = FixedClock::default();
    let dir = WorkflowDir {
        root: String::new(),
        slug: "bounds".into(),
    };
    let info = load_workflow(&fs, &dir).unwrap();
    let env = CaseEnv {
        fs: &fs,
        dir: &dir,
        workflow: info.model.as_ref().unwrap(),
        clock: &clock,
        grades: GradePolicy {
            skip: true,
            model: None,
        },
    };
    let path = format!("workflows/bounds/tests/{case}.test.yaml");
    let mut agent = scripted_agent(&fs, &path);
    run_case(&env, &path, agent.as_mut(), &mut NoScriptHost, None).result
}

#[test]
fn the_suite_refuses_the_fixture_workflow() {
    let fs = fixture();
    let clock = FixedClock::default();
    let ro = RunOptions::new(&fs, &clock);
    let err = run_case_file(&ro, "workflows/bounds/tests/reply.test.yaml").unwrap_err();
    assert!(
        matches!(&err, SuiteError::Refused(m) if m.contains("WFX227")),
        "{err:?}"
    );
}

fn records(r: &CaseResult) -> Vec<(String, RecordStatus, String)> {
    r.records
        .iter()
        .map(|x| {
            (
                x.kind.clone(),
                x.status,
                x.detail.clone().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn a_catastrophic_reply_token_fails_both_includes_and_excludes_with_the_reason() {
    let r = run("reply");
    assert_eq!(r.error, None);
    assert_eq!(r.verdict.status, VerdictStatus::Failed);
    let recs = records(&r);
    use RecordStatus::*;
    let kinds: Vec<(&str, RecordStatus)> = recs.iter().map(|(k, s, _)| (k.as_str(), *s)).collect();
    assert_eq!(
        kinds,
        [
            ("reply.includes", Failed),
            ("reply.excludes", Failed),
            ("reply.includes", Passed),
            ("reply.excludes", Passed),
        ],
        "{recs:?}"
    );
    for (_, _, detail) in recs.iter().take(2) {
        assert!(detail.contains("gave up after 1000000 steps"), "{detail}");
    }
    assert!(recs[0].2.starts_with("/(a+)+c/"), "{}", recs[0].2);
    assert!(recs[1].2.starts_with("/(a|aa)+c/"), "{}", recs[1].2);
}

#[test]
fn a_catastrophic_when_input_fails_the_call_and_a_tool_input_assertion_says_why() {
    let r = run("mock");
    assert_eq!(r.error, None);
    let recs = records(&r);
    use RecordStatus::*;
    let kinds: Vec<(&str, RecordStatus)> = recs.iter().map(|(k, s, _)| (k.as_str(), *s)).collect();
    // The mock could not be decided, so the call failed rather than falling through to
    // the second mock; the call itself was made with its input.
    assert_eq!(
        kinds,
        [
            ("calledTool", Passed),
            ("calledTool", Failed),
            ("succeeded", Failed),
        ],
        "{recs:?}"
    );
    assert!(
        recs[1].2.contains("gave up after 1000000 steps"),
        "{}",
        recs[1].2
    );
    assert!(
        recs[2].2.contains("a tool call failed: lookup"),
        "{}",
        recs[2].2
    );
}

#[test]
fn guard_globs_over_a_bound_block_allow_and_forbid_alike() {
    let r = run("globs");
    assert_eq!(r.error, None);
    let recs = records(&r);
    assert!(
        recs.iter().all(|(_, s, _)| *s == RecordStatus::Passed),
        "{recs:?}"
    );
    assert_eq!(r.verdict.status, VerdictStatus::Passed);
}

#[test]
fn check_reports_the_fixture_globs_with_wfx227() {
    let fs =
        DiskFiles::new(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bounds"));
    let diags = wfx_schemas::check::check_file(&fs, "workflows/bounds/workflow.yaml");
    let over: Vec<&str> = diags
        .iter()
        .filter(|d| d.code.code == "WFX227")
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(over.len(), 2, "{diags:?}");
    assert!(over[0].contains("more than 1024 alternatives"), "{over:?}");
    assert!(over[1].contains("deeper than 8 levels"), "{over:?}");
}
