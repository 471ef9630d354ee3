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

use std::path::Path;

use serde_json::{Value, json};
use support::stdio::Server;
use support::*;

impl Server {
    /// Opens `path` with `text` (version 1) and returns its first diagnostics.
    fn open_file(&mut self, path: &Path, text: &str) -> Value {
        let u = uri(path);
        self.open(&u, text);
        self.diagnostics(&u, 1)["params"]["diagnostics"].clone()
    }

    /// `shutdown` (checked) and `exit`; the process must exit successfully.
    fn shutdown(mut self) {
        self.call("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        drop(self.stdin.take());
        let (status, _) = self.wait_exit();
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
    let (mut s, init) = Server::start(ws.path());
    assert_eq!(init["result"]["capabilities"]["positionEncoding"], "utf-16");
    s.open_file(&case, &case_text);

    // Hover on the step key `parked` (line 15, characters 4..10): non-empty markdown.
    let hover = s.call("textDocument/hover", pos(&case, 15, 5));
    assert_eq!(hover["contents"]["kind"], "markdown", "{hover}");
    let md = hover["contents"]["value"].as_str().unwrap();
    assert!(md.starts_with("**`parked`**"), "{md}");
    assert_eq!(hover["range"], range(15, 4, 15, 10));

    // `- reachedState: refund-request` (line 16, slug at characters 18..32).
    let spec_u = uri(&spec);
    let case_u = uri(&case);
    let decl = json!({"uri": spec_u, "range": range(171, 2, 171, 16)});
    let def = s.call("textDocument/definition", pos(&case, 16, 20));
    assert_eq!(def, json!([decl]));

    let refs = s.call(
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

    let edit = s.call(
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
    let hints = s.call(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": case_u}, "range": range(0, 0, 30, 0)}),
    );
    assert_eq!(hints[0]["label"], "34/60", "{hints}");
    assert_eq!(hints[0]["position"], json!({"line": 8, "character": 41}));

    // A scratch case: completion after `- reachedState: ` and the quick fix for `sned`.
    let scratch = dir.join("tests/ide.test.yaml");
    let text = "title: IDE\ndescription: Completion and a quick fix.\nsteps:\n  - sned: hi\n  - reachedState: \n";
    let d = s.open_file(&scratch, text);
    let completion = s.call("textDocument/completion", pos(&scratch, 4, 17));
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
    let actions = s.call(
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

#[test]
fn agent_scripts_in_state_references_and_rename_over_real_stdio() {
    let ws = corpus_copy();
    let dir = ws.path().join("workflows/order-lookup");
    let spec = dir.join("workflow.yaml");
    let agent = dir.join("tests/refund-approved.agent.yaml");
    let agent_text = std::fs::read_to_string(&agent).unwrap();
    let (mut s, _) = Server::start(ws.path());
    // The corpus script advances along real edges: no WFX409/WFX410 (nor anything else).
    let d = s.open_file(&agent, &agent_text);
    assert_eq!(d, json!([]), "{d}");

    // `input: { to: refund-request, … }` (line 8, slug at characters 21..35).
    let spec_u = uri(&spec);
    let agent_u = uri(&agent);
    let decl = json!({"uri": spec_u, "range": range(171, 2, 171, 16)});
    let at_agent = json!({"uri": agent_u, "range": range(8, 21, 8, 35)});
    let def = s.call("textDocument/definition", pos(&agent, 8, 25));
    assert_eq!(def, json!([decl]));
    let refs = s.call(
        "textDocument/references",
        json!({"textDocument": {"uri": agent_u}, "position": {"line": 8, "character": 25},
               "context": {"includeDeclaration": true}}),
    );
    let refs = refs.as_array().unwrap();
    assert!(refs.contains(&decl), "{refs:?}");
    assert!(refs.contains(&at_agent), "{refs:?}");

    // Rename the state in workflow.yaml: the agent scripts naming it are edited too.
    let spec_text = std::fs::read_to_string(&spec).unwrap();
    s.open_file(&spec, &spec_text);
    let edit = s.call(
        "textDocument/rename",
        json!({"textDocument": {"uri": spec_u}, "position": {"line": 171, "character": 5},
               "newName": "refund-ask"}),
    );
    let changes = &edit["changes"];
    assert_eq!(
        changes[&agent_u],
        json!([{"range": range(8, 21, 8, 35), "newText": "refund-ask"}]),
        "{edit}"
    );
    let scripts = changes
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.ends_with(".agent.yaml"))
        .count();
    assert!(
        scripts >= 2,
        "other agent scripts advance to refund-request too: {edit}"
    );
    s.shutdown();
}
