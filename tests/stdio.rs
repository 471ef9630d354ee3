//! The one real-stdio test: spawn the built `wfx-lsp`, speak `Content-Length` framing over
//! its stdin/stdout, and walk initialize → didOpen (a broken case) → publishDiagnostics →
//! didChange (fixed) → empty diagnostics → shutdown → exit. Asserts the exit status and
//! that stdout carried nothing but frames. Every read has a deadline; the child is killed
//! on drop.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::time::Instant;

use serde_json::{Value, json};
use support::stdio::{DEADLINE, Server, Wire};
use support::*;

#[test]
fn stdio_session_publishes_and_clears_diagnostics_then_exits_cleanly() {
    let ws = corpus_copy();
    let case = ws
        .path()
        .join("workflows/order-lookup/tests/broken.test.yaml");
    let broken =
        "title: Broken case\ndescription: A case with a typo in a step.\nsteps:\n  - sned: hi\n";
    std::fs::write(&case, broken).unwrap();
    let case_uri = uri(&case);

    let mut s = Server::spawn();
    s.send(&request(
        1,
        "initialize",
        initialize_params(ws.path(), &["utf-16"]),
    ));
    let init = s.wait_for("initialize result", |m| m["id"] == 1);
    assert_eq!(init["result"]["capabilities"]["positionEncoding"], "utf-16");
    assert_eq!(
        init["result"]["capabilities"]["textDocumentSync"]["change"],
        2
    );
    s.send(&notification("initialized", json!({})));

    s.send(&notification(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": case_uri, "languageId": "yaml", "version": 1, "text": broken}}),
    ));
    let pub1 = s.diagnostics(&case_uri, 1);
    let diags = &pub1["params"]["diagnostics"];
    assert_eq!(summarize(diags), vec![("WFX120".to_owned(), 3, 4, 3, 8)]);
    assert_eq!(diags[0]["source"], "wfx");
    assert_eq!(
        diags[0]["message"],
        "unknown step `sned`; did you mean `send`?"
    );
    assert!(
        diags[0]["codeDescription"]["href"]
            .as_str()
            .unwrap()
            .ends_with("docs/diagnostics.md#wfx120")
    );

    // Replace `sned` with `send` (line 3, characters 4..8).
    s.send(&notification(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": case_uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 8}}, "text": "send"}],
        }),
    ));
    let pub2 = s.diagnostics(&case_uri, 2);
    assert_eq!(pub2["params"]["diagnostics"], json!([]));

    s.send(&request(2, "shutdown", Value::Null));
    let down = s.wait_for("shutdown result", |m| m["id"] == 2);
    assert!(down.get("error").is_none(), "{down}");
    s.send(&notification("exit", Value::Null));
    drop(s.stdin.take());

    // After exit, stdout must end cleanly (no stray bytes) and the process exit 0.
    let end = Instant::now() + DEADLINE;
    loop {
        match s
            .rx
            .as_ref()
            .unwrap()
            .recv_timeout(end.saturating_duration_since(Instant::now()))
        {
            Ok(Wire::Message(_)) => {}
            Ok(Wire::Closed) => break,
            Ok(Wire::Violation(e)) => panic!("stdout carried a non-frame: {e}"),
            Err(e) => panic!("stdout did not close: {e}"),
        }
    }
    let (status, _) = s.wait_exit();
    assert!(status.success(), "exit status {status}");
}

#[test]
fn exit_without_shutdown_is_a_failure_exit() {
    let ws = tempfile::tempdir().unwrap();
    let mut s = Server::spawn();
    s.send(&request(1, "initialize", initialize_params(ws.path(), &[])));
    s.wait_for("initialize result", |m| m["id"] == 1);
    s.send(&notification("exit", Value::Null));
    drop(s.stdin.take());
    let (status, _) = s.wait_exit();
    assert_eq!(status.code(), Some(1));
}
