//! `wfx-lsp test --buffers-stdin` (issue 16): the Test Explorer runs the editor's unsaved
//! buffers, not the files on disk. Through the built binary: an edit that makes a passing
//! case impossible fails the run only when the buffer is given; refused paths and bounds
//! end the run with exit 2 before any case runs, naming the path but never a file's text.

#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use support::*;

const CASE: &str = "workflows/order-lookup/tests/refund-approved.test.yaml";

/// Runs `wfx-lsp test order-lookup refund-approved --json --skip-grades --buffers-stdin`
/// in `ws` with `stdin`; returns (exit code, stdout, stderr).
fn run(ws: &Path, stdin: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
        .args([
            "test",
            "order-lookup",
            "refund-approved",
            "--json",
            "--skip-grades",
            "--buffers-stdin",
        ])
        .current_dir(ws)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // A refused input may end the process before it reads everything: ignore a broken pipe.
    let _ = input.write_all(stdin);
    drop(input);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn verdict(out: &str) -> (String, Vec<Value>) {
    let v: Value = serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let r = &v["results"][0];
    (
        r["verdict"]["status"].as_str().unwrap().to_owned(),
        r["records"].as_array().unwrap().clone(),
    )
}

#[test]
fn an_unsaved_impossible_step_fails_and_the_saved_file_still_passes() {
    let ws = corpus_copy();
    let disk = std::fs::read_to_string(ws.path().join(CASE)).unwrap();
    // The saved file passes (empty overlay).
    let (code, out, err) = run(ws.path(), b"{}");
    assert_eq!(code, 0, "{err}");
    assert_eq!(verdict(&out).0, "passed");
    // The buffer adds a step no run can pass: the run of the buffer fails on it.
    let edited = format!("{disk}  - reachedState: escalation\n");
    let (code, out, err) = run(ws.path(), json!({ CASE: edited }).to_string().as_bytes());
    assert_eq!(code, 1, "{err}");
    let (status, records) = verdict(&out);
    assert_eq!(status, "failed", "{out}");
    assert!(
        records
            .iter()
            .any(|r| r["status"] == "failed" && r["step"] == 8),
        "the added step (index 8, after the eight saved ones) should fail: {records:#?}"
    );
    // Nothing was written: the file on disk is unchanged.
    assert_eq!(std::fs::read_to_string(ws.path().join(CASE)).unwrap(), disk);
}

#[test]
fn refused_paths_and_bad_input_end_the_run_before_any_case() {
    let ws = corpus_copy();
    std::os::unix::fs::symlink("/etc", ws.path().join("workflows/out")).unwrap();
    for (input, want) in [
        (json!({"../x.test.yaml": "x"}).to_string(), "../x.test.yaml"),
        (json!({".env": "x"}).to_string(), ".env"),
        (
            json!({"workflows/out/passwd": "x"}).to_string(),
            "workflows/out/passwd",
        ),
        ("[1, 2]".to_owned(), "JSON object"),
        ("{\"workflows/a\": 3}".to_owned(), "JSON object"),
    ] {
        let (code, out, err) = run(ws.path(), input.as_bytes());
        assert_eq!(code, 2, "{input}: {err}");
        assert!(out.is_empty(), "{input}: {out}");
        assert!(err.contains(want), "{input}: {err}");
        assert!(!err.contains("root:"), "{input}: {err}");
    }
    let big = vec![b' '; 16 * 1024 * 1024 + 1];
    let (code, _, err) = run(ws.path(), &big);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("more than 16 MiB"), "{err}");
}
