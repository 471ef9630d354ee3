//! Robustness of the language server over real stdio (the built `wfx-lsp lsp`), issue 8:
//! the adversarial documents opened in the editor, requests for unknown documents,
//! out-of-range positions, stale `didChange` versions, a cancelled request, an unknown
//! command, and the client dying (stdin and stdout closed abruptly: the server exits and
//! leaves no child process behind). After each fault the server must still answer a plain
//! request, so a panic that killed a handler (or the process) shows up as a failure.
//! Deadlines are hang guards (60 s), not speed assertions; measured times are printed.
//!
//! Shutdown while a `wfx.runCase` run is in flight, and the client dying during one, use
//! an external runner command (`wfx.runner.command`) that starts a grandchild and never
//! finishes: the server must exit promptly and leave neither of them behind.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "test code fails loudly and prints its measurements"
)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::stdio::{DEADLINE, Server};
use support::*;

const TESTS: &str = "workflows/order-lookup/tests";

impl Server {
    /// A plain request still gets a successful answer: the server is alive and serving.
    fn assert_serving(&mut self, uri: &str) {
        let id = self.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        );
        let r = self.response(id);
        assert!(r.get("error").is_none(), "server no longer serving: {r}");
        assert!(self.child.try_wait().unwrap().is_none(), "server exited");
    }
}

/// A server on `root` with the example case `refund-approved` open and its first
/// diagnostics received; returns the server and the case URI.
fn started_on_example(root: &Path) -> (Server, String) {
    let (mut s, _) = Server::start(root);
    let u = uri(&root.join(TESTS).join("refund-approved.test.yaml"));
    s.open(&u, &small_case());
    s.diagnostics(&u, 1);
    (s, u)
}

fn small_case() -> String {
    std::fs::read_to_string(repo().join(
        "tests/corpus/customer-support/workflows/order-lookup/tests/refund-approved.test.yaml",
    ))
    .unwrap()
}

fn codes(publish: &Value) -> Vec<String> {
    summarize(&publish["params"]["diagnostics"])
        .into_iter()
        .map(|d| d.0)
        .collect()
}

#[test]
fn adversarial_documents_get_diagnostics_in_the_editor() {
    let ws = corpus_copy();
    let (mut s, _) = Server::start(ws.path());
    let good = ws.path().join(TESTS).join("refund-approved.test.yaml");
    s.open(&uri(&good), &small_case());
    s.diagnostics(&uri(&good), 1);
    // The same inputs as tests/robustness_check.rs (without the 50 MB file), as text:
    // LSP carries UTF-8 JSON strings, so invalid bytes arrive as U+FFFD and the document
    // the server sees is valid text (no WFX006 in the editor; `check` reports it).
    let mut missing = Vec::new();
    for (stem, bytes, want) in adversarial() {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let want = if stem == "invalid-utf8" { vec![] } else { want };
        let p = ws.path().join(TESTS).join(format!("{stem}.test.yaml"));
        let u = uri(&p);
        let t = Instant::now();
        s.open(&u, &text);
        let publish = s.diagnostics(&u, 1);
        let got = codes(&publish);
        println!(
            "{stem:<14} {:>8} bytes  first diagnostics after {:>8.1} ms  {got:?}",
            text.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
        for w in &want {
            if !got.iter().any(|c| c.starts_with(w)) {
                missing.push(format!("{stem}: want {w}, got {got:?}"));
            }
        }
        s.assert_serving(&u);
    }
    assert!(missing.is_empty(), "{missing:#?}");
}

#[test]
fn requests_for_unknown_documents_and_out_of_range_positions_get_answers() {
    let ws = corpus_copy();
    let (mut s, u) = started_on_example(ws.path());
    let unknown = uri(&ws.path().join(TESTS).join("never-opened.test.yaml"));
    let elsewhere = "file:///nonexistent/dir/x.test.yaml";
    let methods = [
        "textDocument/completion",
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/references",
        "textDocument/documentSymbol",
        "textDocument/codeAction",
        "textDocument/codeLens",
        "textDocument/documentLink",
        "textDocument/prepareRename",
        "textDocument/rename",
    ];
    let positions = [
        json!({"line": 0, "character": 3}),
        json!({"line": 1_000_000, "character": 0}),
        json!({"line": 3, "character": 1_000_000}),
        json!({"line": 4_294_967_295u64, "character": 4_294_967_295u64}),
    ];
    let mut answered = 0;
    for target in [unknown.as_str(), elsewhere, u.as_str()] {
        for m in methods {
            for p in &positions {
                let params = json!({
                    "textDocument": {"uri": target},
                    "position": p,
                    "range": {"start": p, "end": p},
                    "context": {"diagnostics": [], "includeDeclaration": true},
                    "newName": "x",
                });
                let id = s.request(m, params);
                let r = s.response(id);
                // An answer (a result or a clean error), never silence.
                assert!(
                    r.get("result").is_some() || r.get("error").is_some(),
                    "{m}: {r}"
                );
                if let Some(e) = r.get("error") {
                    assert_ne!(e["code"], -32603, "{m} {p}: internal error (panic?): {e}");
                }
                answered += 1;
            }
        }
    }
    assert_eq!(answered, 3 * methods.len() * positions.len());
    s.assert_serving(&u);
}

#[test]
fn stale_and_out_of_range_changes_do_not_break_the_document() {
    let ws = corpus_copy();
    let (mut s, _) = Server::start(ws.path());
    let case = ws.path().join(TESTS).join("edit.test.yaml");
    let u = uri(&case);
    let text = "title: T\ndescription: x\nsteps:\n  - send: hi\n";
    s.open(&u, text);
    s.diagnostics(&u, 1);
    let change = |version: i64, sl: u64, sc: u64, el: u64, ec: u64, t: &str| {
        json!({
            "textDocument": {"uri": u, "version": version},
            "contentChanges": [{"range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}, "text": t}],
        })
    };
    // v5, then a stale v3 and a repeated v5, then a range far past the end, then v6.
    s.notify("textDocument/didChange", change(5, 3, 4, 3, 8, "sned"));
    let p5 = s.diagnostics(&u, 5);
    assert!(codes(&p5).contains(&"WFX120".to_owned()), "{p5}");
    s.notify(
        "textDocument/didChange",
        change(3, 0, 0, 0, 0, "garbage: ["),
    );
    s.notify(
        "textDocument/didChange",
        change(5, 0, 0, 0, 0, "garbage: ["),
    );
    s.notify(
        "textDocument/didChange",
        change(6, 900, 0, 1000, 7, "# end\n"),
    );
    s.notify("textDocument/didChange", change(7, 3, 4, 3, 8, "send"));
    let p7 = s.diagnostics(&u, 7);
    // The stale v3 and the repeated v5 were dropped (applied, they would leave
    // `garbage: [` at the top: a syntax error); the out-of-range change clamped to the end.
    assert!(codes(&p7).is_empty(), "{p7}");
    s.assert_serving(&u);
    // A change to a document never opened is ignored, not fatal.
    let other = uri(&ws.path().join(TESTS).join("ghost.test.yaml"));
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": other, "version": 2}, "contentChanges": [{"text": "x"}]}),
    );
    s.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": other}}),
    );
    s.assert_serving(&u);
}

#[test]
fn a_cancelled_request_is_answered_and_the_server_keeps_serving() {
    let ws = corpus_copy();
    let (mut s, u) = started_on_example(ws.path());
    let mut ids = Vec::new();
    for _ in 0..20 {
        let id = s.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": u}, "position": {"line": 14, "character": 6}}),
        );
        s.notify("$/cancelRequest", json!({"id": id}));
        ids.push(id);
    }
    // Cancelling an id that was never sent, and one already answered, is harmless.
    s.notify("$/cancelRequest", json!({"id": 999_999}));
    for id in ids {
        let r = s.response(id);
        assert!(
            r.get("result").is_some() || r["error"]["code"] == -32800,
            "cancelled request {id}: {r}"
        );
    }
    s.notify("$/cancelRequest", json!({"id": 1}));
    s.assert_serving(&u);
}

#[test]
fn an_unknown_command_is_an_error_not_a_crash() {
    let ws = corpus_copy();
    let (mut s, init) = Server::start(ws.path());
    let announced = init["result"]["capabilities"]["executeCommandProvider"]["commands"].clone();
    println!("announced commands: {announced}");
    let case = ws.path().join(TESTS).join("refund-approved.test.yaml");
    let u = uri(&case);
    s.open(&u, &small_case());
    s.diagnostics(&u, 1);
    let id = s.request(
        "workspace/executeCommand",
        json!({"command": "wfx.noSuchCommand", "arguments": [u, 1, null]}),
    );
    let r = s.response(id);
    assert!(r.get("error").is_some(), "{r}");
    s.assert_serving(&u);
}

/// Pids of all descendants of `pid` (children, grandchildren, …), from /proc.
fn descendants(pid: u32) -> Vec<u32> {
    let mut parents = vec![pid];
    let mut out = Vec::new();
    while let Some(p) = parents.pop() {
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(child) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
                continue;
            };
            let rest = stat.rsplit_once(')').map(|x| x.1).unwrap_or_default();
            if rest.split_whitespace().nth(1) == Some(&p.to_string()) {
                out.push(child);
                parents.push(child);
            }
        }
    }
    out
}

#[test]
fn the_client_dying_ends_the_server_without_leftovers() {
    let ws = corpus_copy();
    let (mut s, u) = started_on_example(ws.path());
    // Work in flight when the client dies: edits and requests not yet answered.
    for v in 2..50 {
        s.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": u, "version": v}, "contentChanges": [{"range": {"start": {"line": 9, "character": 7}, "end": {"line": 9, "character": 7}}, "text": "x"}]}),
        );
        s.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": u}, "position": {"line": 14, "character": 6}}),
        );
    }
    let pid = s.child.id();
    let before = descendants(pid);
    let t = Instant::now();
    // The client dies: both pipes close without shutdown/exit.
    drop(s.stdin.take());
    drop(s.rx.take());
    let status = loop {
        if let Some(st) = s.child.try_wait().unwrap() {
            break st;
        }
        assert!(
            t.elapsed() < DEADLINE,
            "server still running {DEADLINE:?} after the client died"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    println!(
        "server exited {:.1} ms after the client died with {status}; descendants before: {before:?}",
        t.elapsed().as_secs_f64() * 1e3
    );
    // No panic exit (101) and no signal; exit 1 = "exited without shutdown".
    assert!(matches!(status.code(), Some(0 | 1)), "{status}");
    for d in before {
        assert!(
            !Path::new(&format!("/proc/{d}")).exists()
                || std::fs::read_to_string(format!("/proc/{d}/stat"))
                    .map(|s| s.contains(") Z "))
                    .unwrap_or(true),
            "descendant {d} survived the server"
        );
    }
}

/// Starts the server with `wfx.runner.command` set to a script that starts a grandchild
/// (`sleep 300`) and waits for it, runs a case, and waits until both processes exist.
/// Returns the server, the case URI and the runner's processes.
fn server_with_a_run_in_flight(ws: &Path) -> (Server, String, Vec<u32>) {
    let script = ws.join("slow-runner.sh");
    std::fs::write(&script, "#!/bin/sh\nsleep 300 &\nwait\n").unwrap();
    let mut perm = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&script, perm).unwrap();
    let (mut s, _) = Server::start(ws);
    s.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"wfx": {"runner": {"command": script.to_str().unwrap()}}}}),
    );
    let case = ws.join(TESTS).join("refund-approved.test.yaml");
    let u = uri(&case);
    s.open(&u, &small_case());
    s.diagnostics(&u, 1);
    let id = s.request(
        "workspace/executeCommand",
        json!({"command": "wfx.runCase", "arguments": [u]}),
    );
    let r = s.response(id);
    assert!(r.get("error").is_none(), "{r}");
    let pid = s.child.id();
    let t = Instant::now();
    let runner = loop {
        let d = descendants(pid);
        if d.len() >= 2 {
            break d;
        }
        assert!(t.elapsed() < DEADLINE, "the runner command never started");
        std::thread::sleep(Duration::from_millis(10));
    };
    (s, u, runner)
}

/// True when `pid` is gone (or a zombie waiting for a parent that is gone too).
fn gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.contains(") Z "))
        .unwrap_or(true)
}

/// Polls until every pid in `pids` is gone (hang guard [`DEADLINE`]).
fn assert_all_gone(pids: &[u32]) {
    let t = Instant::now();
    while !pids.iter().all(|p| gone(*p)) {
        assert!(
            t.elapsed() < DEADLINE,
            "runner processes survived: {:?}",
            pids.iter().filter(|p| !gone(**p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn shutdown_during_a_run_stops_the_runner_and_its_children() {
    let ws = corpus_copy();
    let (mut s, _, runner) = server_with_a_run_in_flight(ws.path());
    let id = s.request("shutdown", json!(null));
    let r = s.response(id);
    assert!(r.get("error").is_none(), "{r}");
    s.notify("exit", json!(null));
    let (status, took) = s.wait_exit();
    println!(
        "exit {status} {:.1} ms after `exit` with a run in flight (runner pids {runner:?})",
        took.as_secs_f64() * 1e3
    );
    // `shutdown` then `exit`: exit code 0 (LSP).
    assert_eq!(status.code(), Some(0), "{status}");
    assert_all_gone(&runner);
}

#[test]
fn the_client_dying_during_a_run_stops_the_runner_and_its_children() {
    let ws = corpus_copy();
    let (mut s, _, runner) = server_with_a_run_in_flight(ws.path());
    drop(s.stdin.take());
    drop(s.rx.take());
    let (status, took) = s.wait_exit();
    println!(
        "exit {status} {:.1} ms after the client died with a run in flight",
        took.as_secs_f64() * 1e3
    );
    assert!(matches!(status.code(), Some(0 | 1)), "{status}");
    assert_all_gone(&runner);
}

#[test]
fn exit_without_shutdown_during_a_bundled_run_of_all_cases() {
    // The bundled runner (no `wfx.runner.command`) on 120 cases, `exit` without
    // `shutdown` while it runs: the server stops before its next case and exits 1.
    let ws = corpus_copy();
    let tests = ws.path().join(TESTS);
    let originals: Vec<std::path::PathBuf> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".test.yaml"))
        .collect();
    assert!(originals.len() >= 5);
    for i in 0..15 {
        for p in &originals {
            let stem = p.file_name().unwrap().to_str().unwrap();
            let stem = stem.strip_suffix(".test.yaml").unwrap();
            let agent = tests.join(format!("{stem}.agent.yaml"));
            std::fs::copy(p, tests.join(format!("{stem}-{i}.test.yaml"))).unwrap();
            if agent.is_file() {
                std::fs::copy(&agent, tests.join(format!("{stem}-{i}.agent.yaml"))).unwrap();
            }
        }
    }
    let (mut s, _) = Server::start(ws.path());
    let spec = uri(&ws.path().join("workflows/order-lookup/workflow.yaml"));
    let id = s.request(
        "workspace/executeCommand",
        json!({"command": "wfx.runAllCases", "arguments": [spec]}),
    );
    let r = s.response(id);
    assert!(r.get("error").is_none(), "{r}");
    std::thread::sleep(Duration::from_millis(200));
    s.notify("exit", json!(null));
    let (status, took) = s.wait_exit();
    println!(
        "exit {status} {:.1} ms after `exit` during a bundled run of all cases",
        took.as_secs_f64() * 1e3
    );
    assert_eq!(status.code(), Some(1), "{status}");
}

impl Server {
    /// Writes raw bytes to the server's stdin (no framing added).
    fn send_raw(&mut self, bytes: &[u8]) {
        use std::io::Write;
        let w = self.stdin.as_mut().unwrap();
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
    }

    /// The next error response with `id` and `code`.
    fn error_reply(&mut self, id: &Value, code: i64) -> Value {
        self.wait_for(&format!("error {code} for id {id}"), |m| {
            m.get("method").is_none() && &m["id"] == id && m["error"]["code"] == code
        })
    }
}

fn raw_frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Protocol abuse over real stdio (issue 12): each malformed message gets the error reply
/// JSON-RPC 2.0 prescribes, and a normal request sent right after it still gets its
/// answer. The framing layer is `wfx_lsp::lsp::framing`.
#[test]
fn malformed_messages_get_error_replies_and_the_server_keeps_serving() {
    let tmp = corpus_copy();
    let root = tmp.path().join("customer-support");
    let (mut s, u) = started_on_example(&root);

    // Invalid JSON: -32700, id null.
    s.send_raw(&raw_frame(b"{\"jsonrpc\": \"2.0\", \"method\": "));
    s.error_reply(&Value::Null, -32700);
    s.assert_serving(&u);

    // Invalid UTF-8 in the body: -32700.
    s.send_raw(&raw_frame(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\",\"id\":5}",
    ));
    s.error_reply(&Value::Null, -32700);
    s.assert_serving(&u);

    // Valid JSON that is not a JSON-RPC object: -32600, id null.
    for body in [&b"42"[..], b"{\"foo\":1}", b"[]", b"null"] {
        s.send_raw(&raw_frame(body));
        s.error_reply(&Value::Null, -32600);
        s.assert_serving(&u);
    }
    // An object with a usable id but a bad method: -32600 with that id.
    s.send_raw(&raw_frame(br#"{"jsonrpc":"2.0","method":7,"id":4242}"#));
    s.error_reply(&json!(4242), -32600);
    s.assert_serving(&u);
    // A wrong protocol version.
    s.send_raw(&raw_frame(
        br#"{"jsonrpc":"1.0","method":"shutdown","id":"v1"}"#,
    ));
    s.error_reply(&json!("v1"), -32600);
    s.assert_serving(&u);

    // Bad headers: a non-numeric length, a line without a colon, no Content-Length at
    // all. Each is a parse error, and the next well-framed message is read.
    s.send_raw(b"Content-Length: abc\r\n\r\n{}");
    s.error_reply(&Value::Null, -32700);
    s.assert_serving(&u);
    s.send_raw(b"this is not a header\r\n\r\n");
    s.error_reply(&Value::Null, -32700);
    s.assert_serving(&u);
    s.send_raw(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}\r\n");
    s.error_reply(&Value::Null, -32700);
    s.assert_serving(&u);
    // A header line of 1 MiB (over the 8 KiB limit) is not buffered.
    let mut long = b"X-Long: ".to_vec();
    long.extend(std::iter::repeat_n(b'a', 1 << 20));
    long.extend_from_slice(b"\r\n\r\n");
    s.send_raw(&long);
    s.error_reply(&Value::Null, -32700);
    s.assert_serving(&u);

    // A `$/…` request with an id gets MethodNotFound (a notification gets nothing).
    s.notify("$/unknownNotification", json!({}));
    s.send(&json!({"jsonrpc": "2.0", "id": 77, "method": "$/foo", "params": {}}));
    let r = s.error_reply(&json!(77), -32601);
    assert_eq!(r["id"], 77);
    s.assert_serving(&u);
}

/// A `Content-Length` over the 64 MiB limit is answered with -32600 and its body is
/// skipped without being stored; the server's memory stays bounded and the next request
/// is answered.
#[test]
fn an_oversized_message_is_skipped_and_the_server_keeps_serving() {
    let tmp = corpus_copy();
    let root = tmp.path().join("customer-support");
    let (mut s, u) = started_on_example(&root);
    let len: usize = (64 << 20) + 1;
    s.send_raw(format!("Content-Length: {len}\r\n\r\n").as_bytes());
    let chunk = vec![b' '; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(chunk.len());
        s.send_raw(&chunk[..n]);
        left -= n;
    }
    let r = s.error_reply(&Value::Null, -32600);
    assert!(
        r["error"]["message"].as_str().unwrap().contains("67108865"),
        "{r}"
    );
    s.assert_serving(&u);
    // Resident memory stays far below the announced body (Linux: VmHWM in /proc).
    if let Ok(status) = std::fs::read_to_string(format!("/proc/{}/status", s.child.id())) {
        let hwm_kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        println!("peak resident memory after a 64 MiB + 1 body: {hwm_kib} KiB");
        assert!(
            hwm_kib < 60 << 10,
            "the skipped body was buffered: {hwm_kib} KiB"
        );
    }
}
