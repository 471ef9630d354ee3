//! Findings of a new-user tryout of the command line (docs/cli.md): `test` with no target
//! started inside a workspace, `check --format json|sarif` when nothing was checked, a
//! closed stdout (`| head -1`), `scrub` outside a workspace and its tally, and copy-paste
//! hints whose paths work from the folder the command was started in.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use support::*;
use wfx_schemas::cassette::{Cassette, InputDigests, RecordedClock, Secrets, VERSION};

/// Runs the binary in `cwd`; returns (exit code, stdout, stderr).
fn run(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("ARCHMAX_API_BASE_URL")
        .env_remove("ARCHMAX_MODEL")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Runs the binary in `cwd` with a stdout whose reader is already gone, so the first write
/// fails with EPIPE; returns (exit code, stderr).
fn run_closed_stdout(cwd: &Path, args: &[&str]) -> (i32, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("ARCHMAX_API_BASE_URL")
        .env_remove("ARCHMAX_MODEL")
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `<tmp>/ws`: a copy of the customer-support corpus one folder below the temp dir, so
/// commands can be started outside the workspace root.
fn nested() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    copy_dir(&repo().join("tests/corpus/customer-support"), &ws);
    (tmp, ws)
}

const CASE: &str = "workflows/order-lookup/tests/skill-gate.test.yaml";

#[test]
fn test_without_a_target_finds_the_workspace_from_inside_it() {
    let (_tmp, ws) = nested();
    let wf = ws.join("workflows/order-lookup");
    let (code, out, err) = run(&wf, &["test", "--skip-grades"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("order-lookup: ") && out.contains(" passed"),
        "{out}{err}"
    );
    // The same run as `test .` there.
    let (dot, dot_out, _) = run(&wf, &["test", ".", "--skip-grades"]);
    assert_eq!(dot, 0);
    let summary = |s: &str| {
        s.lines()
            .last()
            .map(|l| l.replace(char::is_numeric, ""))
            .unwrap()
    };
    assert_eq!(summary(&out), summary(&dot_out));
    // From a workflow's tests folder and from `workflows/` itself too.
    let (code, out, err) = run(&wf.join("tests"), &["test", "--skip-grades"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = run(&ws.join("workflows"), &["test", "--skip-grades"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("order-lookup: "), "{out}{err}");
    // Outside any workspace it is still a usage error.
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = run(empty.path(), &["test"]);
    assert_eq!(code, 2);
    assert!(err.contains("no workflows/ folder"), "{err}");
}

#[test]
fn check_json_and_sarif_print_their_document_when_nothing_was_checked() {
    let (_tmp, ws) = nested();
    let (code, out, err) = run(&ws, &["check", "AGENTS.md", "--format", "json"]);
    assert_eq!(code, 2, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["diagnostics"], Value::Array(Vec::new()));
    assert_eq!(doc["unchecked"][0]["path"], "AGENTS.md");
    assert_eq!(doc["summary"]["files"], 0);

    let (code, out, err) = run(&ws, &["check", "AGENTS.md", "--format", "sarif"]);
    assert_eq!(code, 2, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let run0 = &doc["runs"][0];
    assert_eq!(run0["results"], Value::Array(Vec::new()));
    let inv = &run0["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false);
    let note = &inv["toolExecutionNotifications"][0];
    assert_eq!(note["level"], "error");
    assert_eq!(
        note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "AGENTS.md"
    );
    assert!(
        note["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("not checked: ")
    );
    // Human output keeps stdout empty (the reasons are on stderr).
    let (code, out, _) = run(&ws, &["check", "AGENTS.md"]);
    assert_eq!((code, out.as_str()), (2, ""));
}

fn cassette() -> Cassette {
    Cassette {
        version: VERSION,
        recorded_with: "wfx-lsp test".into(),
        recorded_at: "2026-01-01T00:00:00Z".into(),
        clock: RecordedClock {
            start_ms: 0,
            step_ms: 1,
            zone: "UTC".into(),
        },
        model: "m".into(),
        endpoint: "127.0.0.1".into(),
        case: "a".into(),
        inputs: InputDigests {
            case: String::new(),
            workflow: String::new(),
        },
        prompts: [("p1".to_owned(), "p".to_owned())].into_iter().collect(),
        toolsets: Default::default(),
        interactions: Vec::new(),
    }
}

fn write_cassette(ws: &Path, rel: &str) {
    let (text, _) = wfx_schemas::cassette::to_json(&cassette(), &Secrets::default());
    std::fs::write(ws.join(rel), text).unwrap();
}

#[test]
fn a_closed_stdout_ends_every_command_quietly_with_its_exit_code() {
    let (_tmp, ws) = nested();
    let cassette = "workflows/enrich-order/a.cassette.json";
    write_cassette(&ws, cassette);
    std::fs::remove_file(ws.join("workflows/order-lookup/tests/skill-gate.agent.yaml")).unwrap();
    let commands: [&[&str]; 6] = [
        &["check", ".", "--format", "sarif"],
        &["check", "."],
        &[
            "test",
            "order-lookup",
            "--json",
            "--skip-grades",
            "--allow-no-agent",
        ],
        &["graph", "order-lookup", "--format", "json"],
        &["scrub", cassette],
        &["scaffold", CASE],
    ];
    for args in commands {
        let (code, err) = run_closed_stdout(&ws, args);
        assert!(
            !err.contains("Broken pipe") && !err.contains("cannot write"),
            "{args:?}: {err}"
        );
        if args[0] == "scaffold" {
            std::fs::remove_file(ws.join(CASE.replace(".test.", ".agent."))).unwrap();
        }
        let (want, out, _) = run(&ws, args);
        assert!(!out.is_empty(), "{args:?} writes on stdout");
        assert_eq!(code, want, "{args:?}: {err}");
    }
}

#[test]
fn scrub_needs_a_workspace_and_counts_only_what_it_scrubbed() {
    let (_tmp, ws) = nested();
    let (code, out, err) = run(&ws.join("workflows"), &["scrub"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("no workflows/ folder"), "{err}");
    assert!(!err.contains("scrubbed"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = run(empty.path(), &["scrub"]);
    assert_eq!(code, 2);
    assert!(err.contains("no workflows/ folder"), "{err}");

    let ok = "workflows/order-lookup/tests/ok.cassette.json";
    write_cassette(&ws, ok);
    let (code, out, err) = run(&ws, &["scrub", "workflows/nope.cassette.json", ok]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains(&format!("{ok}: 0 value(s) replaced")), "{out}");
    assert!(
        err.contains("Error: workflows/nope.cassette.json: "),
        "{err}"
    );
    assert!(
        err.contains("scrubbed 1 cassette(s): 0 value(s) replaced; 1 failed"),
        "{err}"
    );
}

#[test]
fn hints_name_paths_from_the_current_folder() {
    let (tmp, ws) = nested();
    std::fs::remove_file(ws.join("workflows/order-lookup/tests/skill-gate.agent.yaml")).unwrap();
    // From above the workspace: the scaffold hint of a case without an agent.
    let (_, out, err) = run(tmp.path(), &["test", "ws", "skill", "--skip-grades"]);
    let hint = format!("`wfx-lsp scaffold ws/{CASE}`");
    assert!(out.contains(&hint) || err.contains(&hint), "{out}{err}");
    // The hinted command works as pasted, and its own hint does too.
    let (code, _, err) = run(tmp.path(), &["scaffold", &format!("ws/{CASE}")]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&format!("`wfx-lsp test ws/{CASE}`")), "{err}");
    let (code, out, err) = run(
        tmp.path(),
        &["test", &format!("ws/{CASE}"), "--skip-grades"],
    );
    assert_eq!(code, 0, "{out}{err}");
    // From inside the workflow folder the prefix climbs.
    std::fs::remove_file(ws.join("workflows/order-lookup/tests/skill-gate.agent.yaml")).unwrap();
    let (_, out, err) = run(
        &ws.join("workflows/order-lookup"),
        &["test", "--skip-grades"],
    );
    let hint = format!("`wfx-lsp scaffold ../../{CASE}`");
    assert!(out.contains(&hint) || err.contains(&hint), "{out}{err}");
    // A case with an error: scaffold's `wfx-lsp check` hint works from here too.
    let bad = "workflows/order-lookup/tests/bad.test.yaml";
    std::fs::write(ws.join(bad), "title: x\nsteps:\n  - sned: hi\n").unwrap();
    let (code, _, err) = run(tmp.path(), &["scaffold", &format!("ws/{bad}")]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("`wfx-lsp check ws/{bad}`")), "{err}");
    std::fs::remove_file(ws.join(bad)).unwrap();
    // From the root it is unchanged.
    let (_, out, err) = run(&ws, &["test", "--skip-grades"]);
    let hint = format!("`wfx-lsp scaffold {CASE}`");
    assert!(out.contains(&hint) || err.contains(&hint), "{out}{err}");
}
