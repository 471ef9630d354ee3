//! "No execution" and the runner's own limits, through the built binary: `check` and the
//! language server parse hook and skill scripts without running a statement of them (a
//! script that escapes the checker's wrapper into a top-level `throw` or an endless loop is
//! checked like any other text), and `wfx-lsp test` stopped by SIGTERM leaves no session
//! folder behind.
//!
//! Waits are hang guards ([`stdio::DEADLINE`]), never speed assertions.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use serde_json::{Value, json};
use support::stdio::{DEADLINE, Server};
use support::*;

/// A hook body that closes the checker's wrapper into an endless loop.
const ESCAPE_LOOP: &str = "}); for (;;) {} (async function () {\n";
/// A hook body that closes the wrapper and throws at top level, then has one real syntax
/// error (`let = ;`, reported at its `=`: 0-based line 1, character 4).
const ESCAPE_THROW_AND_ERROR: &str =
    "}); throw new Error(\"EXECUTED\"); (async function () {\nlet = ;\n";

/// The corpus with two escaping hooks in `order-lookup` and an escaping skill script.
fn hostile_corpus() -> tempfile::TempDir {
    let tmp = corpus_copy();
    let hooks = tmp.path().join("workflows/order-lookup/hooks");
    std::fs::write(hooks.join("check-tenancy.js"), ESCAPE_LOOP).unwrap();
    std::fs::write(hooks.join("check-requester.js"), ESCAPE_THROW_AND_ERROR).unwrap();
    std::fs::write(
        tmp.path()
            .join("skills/order-enrichment/scripts/enrich-orders.js"),
        "}); for (;;) {} (async function () {\n",
    )
    .unwrap();
    tmp
}

/// Runs the binary in `cwd` to completion, killing it (and failing) past [`DEADLINE`].
fn run_guarded(cwd: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!(
                "`wfx-lsp {}` did not finish within {DEADLINE:?}",
                args.join(" ")
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn check_runs_no_script() {
    let tmp = hostile_corpus();
    let out = run_guarded(tmp.path(), &["check", ".", "--format", "json"]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains("EXECUTED"), "{stdout}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let scripts: Vec<(String, String, Value)> = report["diagnostics"]
        .as_array()
        .unwrap_or_else(|| panic!("no diagnostics array: {report}"))
        .iter()
        .filter(|d| d["code"].as_str().is_some_and(|c| c.starts_with("WFX5")))
        .map(|d| {
            (
                d["file"].as_str().unwrap().to_string(),
                d["code"].as_str().unwrap().to_string(),
                d["range"]["start"].clone(),
            )
        })
        .collect();
    assert_eq!(
        scripts,
        [(
            "workflows/order-lookup/hooks/check-requester.js".to_string(),
            "WFX503".to_string(),
            json!({"line": 1, "character": 4}),
        )],
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}");
}

#[test]
fn the_server_runs_no_script_when_workflow_yaml_opens() {
    let tmp = hostile_corpus();
    let (mut s, _) = Server::start(tmp.path());
    let path = tmp.path().join("workflows/order-lookup/workflow.yaml");
    let u = uri(&path);
    s.open(&u, &std::fs::read_to_string(&path).unwrap());
    let diags = s.diagnostics(&u, 1);
    let text = diags.to_string();
    assert!(!text.contains("EXECUTED"), "{text}");
    let codes: Vec<&str> = diags["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["code"].as_str())
        .filter(|c| c.starts_with("WFX5"))
        .collect();
    assert_eq!(codes, ["WFX503"], "{text}");
    // The server still answers: nothing is stuck in a loop.
    let symbols = s.call(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": u}}),
    );
    assert!(
        symbols.as_array().is_some_and(|a| !a.is_empty()),
        "{symbols}"
    );
}

/// The `wfx-session-*` folders directly under `dir`.
#[cfg(unix)]
fn session_folders(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("wfx-session-"))
        })
        .collect()
}

#[cfg(unix)]
#[test]
fn sigterm_during_a_run_leaves_no_session_folder() {
    let tmp = corpus_copy();
    // Every case of order-lookup enters a state whose first hook loops (the workflow's
    // `timeoutMs: 15000` keeps it looping long enough to be stopped mid-run).
    std::fs::write(
        tmp.path()
            .join("workflows/order-lookup/hooks/check-requester.js"),
        "export default () => { for (;;) {} };\n",
    )
    .unwrap();
    // The child's own temp dir, so only its session folders are seen.
    let temp = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
        .args(["test", "workflows/order-lookup", "--skip-grades"])
        .current_dir(tmp.path())
        .env("TMPDIR", temp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while session_folders(temp.path()).is_empty() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before a session folder appeared"
        );
        assert!(start.elapsed() < DEADLINE, "no session folder appeared");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("`wfx-lsp test` did not stop on SIGTERM");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(128 + 15), "{status:?}");
    assert_eq!(
        session_folders(temp.path()),
        Vec::<std::path::PathBuf>::new()
    );
}
