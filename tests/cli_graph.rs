//! `wfx-lsp graph` end to end (issue 7 item 2): Mermaid and DOT snapshots of the example
//! workflow, every state in the SVG, `--case` lighting the states a run reached (FORMAT
//! §E.10 graph semantics, §E.2 trail), and usage errors exiting 2.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::Command;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/customer-support")
}

fn graph(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
        .arg("graph")
        .args(args)
        .current_dir(corpus())
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const STATES: &[&str] = &[
    "identify-case",
    "orders-question",
    "refund-request",
    "refund-review",
    "refund-closed",
    "clarify",
    "escalation",
    "general-question",
];

#[test]
fn mermaid_of_the_example() {
    let (code, out, err) = graph(&["order-lookup", "--format", "mermaid"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!(out);
}

#[test]
fn dot_of_the_example() {
    let (code, out, err) = graph(&["workflows/order-lookup", "--format", "dot"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!(out);
}

#[test]
fn svg_names_every_state() {
    let (code, out, err) = graph(&["order-lookup"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("<svg"));
    for s in STATES {
        assert!(out.contains(s), "{s} missing from the SVG");
    }
}

#[test]
fn a_case_run_lights_refund_review() {
    let (code, out, err) = graph(&[
        "order-lookup",
        "--format",
        "json",
        "--case",
        "refund-approved",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let reached = &v["path"]["reached"];
    // 1-based step numbers (issue 16): reached during step 1 (`steps[0]`, the send) and
    // step 6 (`steps[5]`, the decide).
    assert_eq!(reached["refund-review"], 1, "{v}");
    assert_eq!(reached["refund-closed"], 6, "{v}");
    assert!(reached.get("orders-question").is_none());
    assert_eq!(
        v["path"]["edges"][0],
        serde_json::json!(["__start__", "identify-case"])
    );
    assert!(
        v["path"]["edges"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!(["refund-review", "refund-closed"]))
    );
    let (code, dot, _) = graph(&[
        "order-lookup",
        "--format",
        "dot",
        "--case",
        "refund-approved",
    ]);
    assert_eq!(code, 0);
    let line = dot
        .lines()
        .find(|l| l.contains("\"refund-review\" ["))
        .unwrap();
    assert!(line.contains("blue"), "{line}");
    let line = dot
        .lines()
        .find(|l| l.contains("\"orders-question\" ["))
        .unwrap();
    assert!(!line.contains("blue"), "{line}");
}

#[test]
fn unknown_case_or_workflow_is_a_usage_error() {
    let (code, _, err) = graph(&["order-lookup", "--case", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("no case `nope`"), "{err}");
    let (code, _, _) = graph(&["no-such-workflow"]);
    assert_eq!(code, 2);
    // Several workflows and none named.
    let (code, _, err) = graph(&[]);
    assert_eq!(code, 2);
    assert!(err.contains("several workflows"), "{err}");
}

#[test]
fn output_goes_to_a_file_with_o() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("g.mmd");
    let (code, out, _) = graph(&[
        "order-lookup",
        "--format",
        "mermaid",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert!(out.is_empty());
    assert!(
        std::fs::read_to_string(file)
            .unwrap()
            .starts_with("flowchart TD")
    );
}
