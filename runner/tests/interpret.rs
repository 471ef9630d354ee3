//! Interpreter semantics (FORMAT §B.5, §C.3) on the fixture workspace: per-token reply
//! records, the structural halt, died cases with the error first, variables with path and
//! locked, and a deliberately wrong agent script failing the right assertions.

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
use wfx_runner::interpret::{CaseResult, RecordStatus, VerdictStatus};
use wfx_runner::suite::{RunOptions, run_case_file};

fn run(case: &str) -> CaseResult {
    let fs = DiskFiles::new(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ws"));
    let clock = FixedClock::default();
    let mut ro = RunOptions::new(&fs, &clock);
    ro.grades = GradePolicy {
        skip: true,
        model: None,
    };
    run_case_file(&ro, &format!("workflows/shop/tests/{case}.test.yaml"))
        .unwrap()
        .result
}

fn summary(r: &CaseResult) -> Vec<(String, RecordStatus, usize)> {
    r.records
        .iter()
        .map(|x| (x.kind.clone(), x.status, x.step))
        .collect()
}

#[test]
fn a_wrong_agent_that_never_advances_halts_at_the_structural_assertion() {
    let r = run("never-advances");
    assert_eq!(r.verdict.status, VerdictStatus::Failed);
    assert_eq!(
        r.verdict.failures,
        ["reachedState: review (committed: none)"]
    );
    assert_eq!(r.error, None, "a halt is not a death");
    use RecordStatus::*;
    assert_eq!(
        summary(&r),
        [
            ("reply.includes".into(), Passed, 1),
            ("reachedState".into(), Failed, 2),
            ("parked".into(), NotExecuted, 3),
            ("succeeded".into(), NotExecuted, 5)
        ]
    );
}

#[test]
fn a_died_case_lists_the_error_first_then_earlier_failures() {
    let r = run("missing-turn");
    let err = r.error.clone().unwrap();
    assert!(
        err.starts_with(
            "agent script `workflows/shop/tests/missing-turn.agent.yaml` has no turn 2"
        ),
        "{err}"
    );
    assert_eq!(r.verdict.failures, [err, "reply.includes: nope".to_owned()]);
    use RecordStatus::*;
    assert_eq!(
        summary(&r),
        [
            ("reply.includes".into(), Passed, 1),
            ("reply.includes".into(), Failed, 1),
            ("reply.excludes".into(), Passed, 1),
            ("reply".into(), NotExecuted, 3)
        ],
        "one record per token; one not-executed record per step"
    );
}

#[test]
fn variables_with_path_and_locked_give_two_records_per_name() {
    let r = run("decide");
    assert_eq!(r.verdict.status, VerdictStatus::Passed, "{:?}", r.verdict);
    let vars: Vec<(Option<String>, RecordStatus)> = r
        .records
        .iter()
        .filter(|x| x.kind == "variables")
        .map(|x| (x.detail.clone(), x.status))
        .collect();
    assert_eq!(
        vars,
        [
            (Some("customer.name".into()), RecordStatus::Passed),
            (
                Some("customer locked=true (actual true)".into()),
                RecordStatus::Passed
            ),
            (Some("trigger".into()), RecordStatus::Passed),
            (
                Some("trigger locked=true (actual true)".into()),
                RecordStatus::Passed
            ),
        ]
    );
}

#[test]
fn a_case_that_does_not_parse_is_a_failed_result_named_by_its_path() {
    let r = run("broken");
    assert_eq!(r.id, "workflows/shop/tests/broken.test.yaml");
    assert!(r.records.is_empty() && r.title.is_none() && r.session_id.is_none());
    assert_eq!(r.verdict.failures, [r.error.clone().unwrap()]);
}

#[test]
fn skip_drives_nothing() {
    let r = run("skipped");
    assert_eq!(
        (r.verdict.status, r.skip_reason.as_deref(), r.records.len()),
        (VerdictStatus::Skipped, Some("not ready"), 0)
    );
}
