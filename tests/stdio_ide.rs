//! Real-stdio end-to-end test of the IDE features (issue 3): spawn the built `wfx-lsp`
//! over `Content-Length` framing on a temp copy of the customer-support corpus and ask
//! for completion, hover, definition, references, rename, inlay hints and a quick fix.
//! Every read has a deadline; the child is killed on drop.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::io::BufReader;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

const DEADLINE: Duration = Duration::from_secs(60);

struct Server {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    rx: Receiver<Result<Value, String>>,
    next_id: i64,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn spawn(root: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
            .args(["lsp", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let item = match read_frame(&mut r) {
                    Ok(Some(v)) => Ok(v),
                    Ok(None) => Err("stdout closed".to_owned()),
                    Err(e) => Err(format!("stdout carried a non-frame: {e}")),
                };
                let stop = item.is_err();
                if tx.send(item).is_err() || stop {
                    break;
                }
            }
        });
        let mut s = Self {
            child,
            stdin,
            rx,
            next_id: 1,
        };
        let init = s.request("initialize", initialize_params(root, &["utf-16"]));
        assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
        s.notify("initialized", json!({}));
        s
    }

    fn notify(&mut self, method: &str, params: Value) {
        send(self.stdin.as_mut().unwrap(), &notification(method, params));
    }

    /// The next message matching `pred`, skipping others; panics after [`DEADLINE`].
    fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let end = Instant::now() + DEADLINE;
        loop {
            match self
                .rx
                .recv_timeout(end.saturating_duration_since(Instant::now()))
            {
                Ok(Ok(m)) if pred(&m) => return m,
                Ok(Ok(_)) => {}
                Ok(Err(e)) => panic!("{e} while waiting for {what}"),
                Err(RecvTimeoutError::Timeout) => panic!("no {what} within {DEADLINE:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("reader gone waiting for {what}"),
            }
        }
    }

    /// Sends a request and returns its `result` (panics on an error response).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        send(self.stdin.as_mut().unwrap(), &request(id, method, params));
        let m = self.wait_for(&format!("{method} response"), |m| {
            m["id"] == id && m.get("method").is_none()
        });
        assert!(m.get("error").is_none(), "{method}: {m}");
        m["result"].clone()
    }

    fn open(&mut self, path: &Path, text: &str) -> Value {
        let u = uri(path);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": u, "languageId": "yaml", "version": 1, "text": text}}),
        );
        let m = self.wait_for(&format!("diagnostics of {u}"), |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == u
                && m["params"]["version"] == 1
        });
        m["params"]["diagnostics"].clone()
    }

    fn shutdown(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        drop(self.stdin.take());
        let end = Instant::now() + DEADLINE;
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            assert!(Instant::now() < end, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "exit status {status}");
    }
}

fn pos(path: &Path, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri(path)}, "position": {"line": line, "character": character}})
}

fn range(l0: u32, c0: u32, l1: u32, c1: u32) -> Value {
    json!({"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}})
}

#[test]
fn ide_features_over_real_stdio() {
    let ws = corpus_copy();
    let dir = ws.path().join("workflows/order-lookup");
    let spec = dir.join("workflow.yaml");
    let case = dir.join("tests/refund-approved.test.yaml");
    let case_text = std::fs::read_to_string(&case).unwrap();
    let mut s = Server::spawn(ws.path());
    s.open(&case, &case_text);

    // Hover on the step key `parked` (line 15, characters 4..10): non-empty markdown.
    let hover = s.request("textDocument/hover", pos(&case, 15, 5));
    assert_eq!(hover["contents"]["kind"], "markdown", "{hover}");
    let md = hover["contents"]["value"].as_str().unwrap();
    assert!(md.starts_with("**`parked`**"), "{md}");
    assert_eq!(hover["range"], range(15, 4, 15, 10));

    // `- reachedState: refund-request` (line 16, slug at characters 18..32).
    let spec_u = uri(&spec);
    let case_u = uri(&case);
    let decl = json!({"uri": spec_u, "range": range(171, 2, 171, 16)});
    let def = s.request("textDocument/definition", pos(&case, 16, 20));
    assert_eq!(def, json!([decl]));

    let refs = s.request(
        "textDocument/references",
        json!({"textDocument": {"uri": case_u}, "position": {"line": 16, "character": 20},
               "context": {"includeDeclaration": true}}),
    );
    let refs = refs.as_array().unwrap();
    assert!(refs.contains(&decl), "{refs:?}");
    assert!(
        refs.contains(&json!({"uri": spec_u, "range": range(104, 12, 104, 26)})),
        "{refs:?}"
    );
    assert!(
        refs.contains(&json!({"uri": case_u, "range": range(16, 18, 16, 32)})),
        "{refs:?}"
    );

    let edit = s.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": case_u}, "position": {"line": 16, "character": 20},
               "newName": "refund-ask"}),
    );
    let changes = &edit["changes"];
    let spec_edits = changes[&spec_u].as_array().unwrap();
    assert!(
        spec_edits.contains(&json!({"range": range(171, 2, 171, 16), "newText": "refund-ask"})),
        "{edit}"
    );
    assert_eq!(spec_edits.len(), 3, "{edit}");
    assert_eq!(
        changes[&case_u],
        json!([{"range": range(16, 18, 16, 32), "newText": "refund-ask"}])
    );

    // Inlay hints: the title budget after `title: Refund approved after human review`.
    let hints = s.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": case_u}, "range": range(0, 0, 30, 0)}),
    );
    assert_eq!(hints[0]["label"], "34/60", "{hints}");
    assert_eq!(hints[0]["position"], json!({"line": 8, "character": 41}));

    // A scratch case: completion after `- reachedState: ` and the quick fix for `sned`.
    let scratch = dir.join("tests/ide.test.yaml");
    let text = "title: IDE\ndescription: Completion and a quick fix.\nsteps:\n  - sned: hi\n  - reachedState: \n";
    let d = s.open(&scratch, text);
    let completion = s.request("textDocument/completion", pos(&scratch, 4, 17));
    let items = completion.as_array().unwrap();
    let labels: Vec<&str> = items.iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert_eq!(labels.len(), 12, "{labels:?}");
    assert_eq!(
        labels[..3],
        ["identify-case", "orders-question", "refund-request"]
    );
    assert!(labels.contains(&"general-question"), "{labels:?}");
    assert_eq!(items[2]["detail"], "Evaluate refund request");
    assert_eq!(items[2]["textEdit"]["range"], range(4, 17, 4, 17));

    let sned: Vec<Value> = d
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["code"] == "WFX120")
        .cloned()
        .collect();
    assert_eq!(sned.len(), 1, "{d}");
    let actions = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&scratch)}, "range": sned[0]["range"],
               "context": {"diagnostics": sned}}),
    );
    let fix = &actions[0];
    assert_eq!(fix["title"], "replace `sned` with `send`");
    assert_eq!(fix["kind"], "quickfix");
    assert_eq!(
        fix["edit"]["changes"][uri(&scratch)],
        json!([{"range": range(3, 4, 3, 8), "newText": "send"}])
    );
    s.shutdown();
}
