//! In-process LSP tests: the real service (`wfx_lsp::lsp::serve`) over a tokio duplex pipe
//! with real `Content-Length` framing. Covers position-encoding negotiation with emoji and
//! CJK, didOpen/didChange ordering, superseded versions, quick fixes carried in
//! `Diagnostic.data`, related information (and its folding), cross-file rechecks through
//! the overlay, files that get no diagnostics, and requests for unknown documents.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::inprocess::Client;
use support::*;

const DEADLINE: Duration = Duration::from_secs(60);

impl Client {
    fn start() -> Self {
        Self::connect(DEADLINE, false)
    }

    async fn initialize(&mut self, root: &Path, encodings: &[&str], related: bool) -> Value {
        let mut params = initialize_params(root, encodings);
        params["capabilities"]["textDocument"]["publishDiagnostics"]["relatedInformation"] =
            json!(related);
        params["capabilities"]["textDocument"]["documentSymbol"] =
            json!({"hierarchicalDocumentSymbolSupport": true});
        let r = self.request("initialize", params).await;
        self.notify("initialized", json!({})).await;
        r
    }

    async fn diagnostics(&mut self, path: &Path, version: i64) -> Value {
        let u = uri(path);
        let m = self
            .wait_for(&format!("diagnostics of {u} v{version}"), |m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == u
                    && m["params"]["version"] == version
            })
            .await;
        m["params"]["diagnostics"].clone()
    }
}

fn case_path(ws: &Path, name: &str) -> std::path::PathBuf {
    ws.join("workflows/order-lookup/tests").join(name)
}

/// The UTF-16 / UTF-8 column of the first `needle` on its line.
fn columns(text: &str, needle: &str) -> (u64, u64, u64) {
    let at = text.find(needle).unwrap();
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count() as u64;
    let prefix = &text[line_start..at];
    (
        line,
        prefix.encode_utf16().count() as u64,
        prefix.len() as u64,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn utf8_and_utf16_negotiation_report_different_columns_on_a_cjk_emoji_line() {
    let ws = corpus_copy();
    let path = case_path(ws.path(), "wide.test.yaml");
    let text = "title: Wide characters\ndescription: A step after emoji and CJK on one line.\nsteps: [{send: \"😀注文\"}, {sned: x}]\n";
    let (line, c16, c8) = columns(text, "sned");
    assert_ne!(c16, c8);
    for (offered, name, col) in [
        (vec!["utf-8", "utf-16"], "utf-8", c8),
        (vec![], "utf-16", c16),
        (vec!["utf-32"], "utf-32", c16 - 1),
    ] {
        let mut c = Client::start();
        let init = c.initialize(ws.path(), &offered, true).await;
        assert_eq!(init["capabilities"]["positionEncoding"], name);
        c.open(&path, text, 1).await;
        let d = c.diagnostics(&path, 1).await;
        assert_eq!(
            summarize(&d),
            vec![("WFX120".to_owned(), line, col, line, col + 4)],
            "{name}"
        );
        // An edit in the same encoding lands on `sned`.
        let change = json!({
            "textDocument": {"uri": uri(&path), "version": 2},
            "contentChanges": [{"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 4}}, "text": "send"}],
        });
        c.notify("textDocument/didChange", change).await;
        assert_eq!(c.diagnostics(&path, 2).await, json!([]), "{name}");
        c.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_apply_in_order_and_publishes_never_go_back_in_version() {
    let ws = corpus_copy();
    let path = case_path(ws.path(), "order.test.yaml");
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    let text = "title: Ordering\ndescription: Edits arrive in a burst.\nsteps:\n  - send: hi\n";
    c.open(&path, text, 1).await;
    // A burst: break, break differently, then fix; sent without waiting.
    let edits = [(2, "sned"), (3, "snd"), (4, "send")];
    let mut current = "send".to_owned();
    for (version, word) in edits {
        let change = json!({
            "textDocument": {"uri": uri(&path), "version": version},
            "contentChanges": [{"range": {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 4 + current.len()}}, "text": word}],
        });
        c.notify("textDocument/didChange", change).await;
        current = word.to_owned();
    }
    assert_eq!(c.diagnostics(&path, 4).await, json!([]));
    let versions: Vec<i64> = c
        .seen
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .map(|m| m["params"]["version"].as_i64().unwrap())
        .collect();
    assert!(versions.windows(2).all(|w| w[0] <= w[1]), "{versions:?}");
    assert_eq!(versions.last(), Some(&4));
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_fixes_travel_in_diagnostic_data_and_come_back_as_code_actions() {
    let ws = corpus_copy();
    let path = case_path(ws.path(), "fix.test.yaml");
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    let text = "title: Fix me\ndescription: A step with a typo.\nsteps:\n  - sned: hi\n";
    c.open(&path, text, 1).await;
    let d = c.diagnostics(&path, 1).await;
    assert_eq!(
        d[0]["data"]["fixes"][0]["title"],
        "replace `sned` with `send`"
    );
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri(&path)}, "range": d[0]["range"], "context": {"diagnostics": d}}),
        )
        .await;
    let fix = &actions[0];
    assert_eq!(fix["title"], "replace `sned` with `send`");
    assert_eq!(fix["kind"], "quickfix");
    assert_eq!(fix["isPreferred"], true);
    let edits = &fix["edit"]["changes"][uri(&path)];
    assert_eq!(
        edits,
        &json!([{"range": {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 8}}, "newText": "send"}])
    );
    // After an edit that shifts the text, the version-1 diagnostic's offsets are stale:
    // whatever fix is offered must edit where `sned` is now (line 4), never line 3.
    let shift = json!({
        "textDocument": {"uri": uri(&path), "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "# moved\n"}],
    });
    c.notify("textDocument/didChange", shift).await;
    c.diagnostics(&path, 2).await;
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri(&path)}, "range": d[0]["range"], "context": {"diagnostics": d}}),
        )
        .await;
    for a in actions.as_array().unwrap() {
        for e in a["edit"]["changes"][uri(&path)].as_array().unwrap() {
            assert_ne!(e["range"]["start"]["line"], 3, "stale edit offered: {a}");
        }
    }
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn related_information_or_folded_message_depends_on_the_client() {
    let ws = corpus_copy();
    let path = case_path(ws.path(), "dup.test.yaml");
    let text = "title: Duplicate\ntitle: Again\ndescription: Two titles.\nsteps:\n  - send: hi\n";
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    c.open(&path, text, 1).await;
    let d = c.diagnostics(&path, 1).await;
    let dup = d
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["code"] == "WFX002")
        .unwrap();
    assert_eq!(dup["relatedInformation"][0]["location"]["uri"], uri(&path));
    assert_eq!(
        dup["relatedInformation"][0]["location"]["range"]["start"],
        json!({"line": 0, "character": 0})
    );
    assert!(!dup["message"].as_str().unwrap().contains('\n'));
    c.shutdown().await;

    let mut c = Client::start();
    c.initialize(ws.path(), &[], false).await;
    c.open(&path, text, 1).await;
    let d = c.diagnostics(&path, 1).await;
    let dup = d
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["code"] == "WFX002")
        .unwrap();
    assert!(dup.get("relatedInformation").is_none());
    let msg = dup["message"].as_str().unwrap();
    assert!(
        msg.contains("\nworkflows/order-lookup/tests/dup.test.yaml:1:1: "),
        "{msg}"
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsaved_workflow_edit_rechecks_the_open_case() {
    let ws = corpus_copy();
    let case = case_path(ws.path(), "triggered-report.test.yaml");
    let spec = ws.path().join("workflows/order-lookup/workflow.yaml");
    let case_text = std::fs::read_to_string(&case).unwrap();
    let spec_text = std::fs::read_to_string(&spec).unwrap();
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    c.open(&case, &case_text, 1).await;
    assert_eq!(c.diagnostics(&case, 1).await, json!([]));
    // Rename the trigger in the (unsaved) workflow buffer: the case's trigger id is now
    // undeclared, and the case is re-published without being edited.
    let renamed = spec_text.replace("report_requested:", "report_wanted:");
    assert_ne!(renamed, spec_text);
    c.open(&spec, &renamed, 1).await;
    let d = c.diagnostics(&case, 1).await;
    let codes: Vec<String> = summarize(&d).into_iter().map(|x| x.0).collect();
    assert!(
        !codes.is_empty() && codes.iter().all(|c| c.starts_with("WFX3")),
        "{d}"
    );
    let related = d[0]["relatedInformation"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        related.iter().any(|r| r["location"]["uri"] == uri(&spec)),
        "{d}"
    );
    // Closing the buffer restores the saved workflow: the case is clean again.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri(&spec)}}),
    )
    .await;
    let m = c
        .wait_for("cleared workflow diagnostics", |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri(&spec)
        })
        .await;
    assert_eq!(m["params"]["diagnostics"], json!([]));
    assert_eq!(c.diagnostics(&case, 1).await, json!([]));
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_a_file_as_saved_republishes_no_other_document() {
    let ws = corpus_copy();
    let a = case_path(ws.path(), "triggered-report.test.yaml");
    let b = case_path(ws.path(), "refund-approved.test.yaml");
    let spec = ws.path().join("workflows/order-lookup/workflow.yaml");
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    c.open(&a, &std::fs::read_to_string(&a).unwrap(), 1).await;
    c.diagnostics(&a, 1).await;
    // Opening (and closing) files whose buffers equal the saved text changes nothing other
    // documents read: `a` is not re-published. A request answered after them bounds the
    // messages they caused (the server handles one message at a time).
    c.seen.clear();
    c.open(&b, &std::fs::read_to_string(&b).unwrap(), 1).await;
    c.open(&spec, &std::fs::read_to_string(&spec).unwrap(), 1)
        .await;
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri(&spec)}}),
    )
    .await;
    c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri(&a)}}),
    )
    .await;
    let published = |seen: &[Value], p: &Path| {
        seen.iter()
            .filter(|m| {
                m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri(p)
            })
            .count()
    };
    assert_eq!(published(&c.seen, &b), 1);
    assert_eq!(published(&c.seen, &a), 0, "{:#?}", c.seen);
    // An unsaved difference does reach `a`: a workflow buffer without the trigger it uses.
    let spec_text = std::fs::read_to_string(&spec).unwrap();
    c.open(
        &spec,
        &spec_text.replace("report_requested:", "report_wanted:"),
        2,
    )
    .await;
    assert_ne!(c.diagnostics(&a, 1).await, json!([]));
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_yaml_gets_no_diagnostics_and_unknown_documents_get_null() {
    let ws = corpus_copy();
    let other = ws.path().join("config.yaml");
    let case = case_path(ws.path(), "after.test.yaml");
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    c.open(&other, "a: [\nb: b: c\n", 1).await;
    c.open(
        &case,
        "title: After\ndescription: Opened after a broken non-case file.\nsteps:\n  - sned: x\n",
        1,
    )
    .await;
    let d = c.diagnostics(&case, 1).await;
    assert_eq!(summarize(&d).len(), 1);
    // Messages are handled in order, so a publish for config.yaml would have come first.
    assert!(
        !c.seen.iter().any(|m| m["params"]["uri"] == uri(&other)),
        "{:?}",
        c.seen
    );

    let unknown = uri(&ws
        .path()
        .join("workflows/order-lookup/tests/never-opened.test.yaml"));
    let pos = json!({"textDocument": {"uri": unknown}, "position": {"line": 0, "character": 0}});
    assert_eq!(
        c.request("textDocument/hover", pos.clone()).await,
        Value::Null
    );
    assert_eq!(
        c.request("textDocument/completion", pos.clone()).await,
        Value::Null
    );
    assert_eq!(c.request("textDocument/definition", pos).await, Value::Null);
    // Out-of-range positions clamp rather than fail.
    let far =
        json!({"textDocument": {"uri": uri(&case)}, "position": {"line": 9999, "character": 9999}});
    let r = c.request("textDocument/completion", far).await;
    assert!(r.is_array(), "{r}");
    let syms = c
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri(&case)}}),
        )
        .await;
    assert!(syms.is_array(), "{syms}");
    let toks = c
        .request(
            "textDocument/semanticTokens/full",
            json!({"textDocument": {"uri": uri(&case)}}),
        )
        .await;
    assert!(toks["data"].is_array(), "{toks}");
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_buffers_get_diagnostics_and_the_server_keeps_answering() {
    let ws = corpus_copy();
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    for (version, (stem, bytes, code)) in (1..).zip(hostile()) {
        // LSP text is a JSON string: invalid UTF-8 cannot be sent, its lossy form can.
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let path = case_path(ws.path(), &format!("{stem}.test.yaml"));
        c.open(&path, &text, version).await;
        let d = c.diagnostics(&path, version).await;
        let codes: Vec<String> = summarize(&d).into_iter().map(|x| x.0).collect();
        assert!(!codes.is_empty(), "{stem}: no diagnostics");
        if !matches!(stem, "garbage" | "utf8") {
            assert!(
                codes.iter().any(|c| c.starts_with(code)),
                "{stem}: {codes:?}"
            );
        }
        // Requests on the hostile buffer answer (empty or not) instead of failing.
        let pos =
            json!({"textDocument": {"uri": uri(&path)}, "position": {"line": 1, "character": 3}});
        c.request("textDocument/hover", pos.clone()).await;
        c.request("textDocument/completion", pos).await;
        c.request(
            "textDocument/foldingRange",
            json!({"textDocument": {"uri": uri(&path)}}),
        )
        .await;
        c.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri(&path)}}),
        )
        .await;
    }
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_are_registered_and_settings_pulled_when_the_client_can() {
    let ws = corpus_copy();
    let mut c = Client::start();
    let mut params = initialize_params(ws.path(), &[]);
    params["capabilities"]["workspace"] =
        json!({"didChangeWatchedFiles": {"dynamicRegistration": true}, "configuration": true});
    let init = c.request("initialize", params).await;
    // The run commands are announced (FORMAT-independent: docs/lsp-extensions.md).
    assert_eq!(
        init["capabilities"]["executeCommandProvider"]["commands"],
        json!([
            "wfx.runCase",
            "wfx.runAllCases",
            "wfx.cancelRun",
            "wfx.showTranscript",
            "wfx.recordCase"
        ]),
        "{init}"
    );
    c.notify("initialized", json!({})).await;
    let mut registered = None;
    let mut pulled = None;
    while registered.is_none() || pulled.is_none() {
        let m = c
            .wait_for("a server request", |m| {
                m.get("method").is_some() && m.get("id").is_some()
            })
            .await;
        let result = match m["method"].as_str().unwrap() {
            "client/registerCapability" => {
                registered = Some(m["params"].clone());
                Value::Null
            }
            "workspace/configuration" => {
                pulled = Some(m["params"].clone());
                json!([{"inlayHints": {"lengthBudget": false}}])
            }
            other => panic!("unexpected request {other}"),
        };
        c.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": result}))
            .await;
    }
    let reg = &registered.unwrap()["registrations"][0];
    assert_eq!(reg["method"], "workspace/didChangeWatchedFiles");
    let globs: Vec<&str> = reg["registerOptions"]["watchers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["globPattern"].as_str().unwrap())
        .collect();
    assert!(
        globs.contains(&"**/workflows/*/workflow.yaml") && globs.contains(&"**/*.test.yaml"),
        "{globs:?}"
    );
    // Hook scripts, fixtures and skills feed diagnostics too.
    assert!(
        [
            "**/workflows/*/hooks/**",
            "**/workflows/*/tests/**",
            "**/skills/*/SKILL.md"
        ]
        .iter()
        .all(|g| globs.contains(g)),
        "{globs:?}"
    );
    assert_eq!(pulled.unwrap()["items"][0]["section"], "wfx");
    // A watched-file change rechecks open documents.
    let case = case_path(ws.path(), "watched.test.yaml");
    c.open(
        &case,
        "title: Watched\ndescription: Rechecked on a disk change.\nsteps:\n  - sned: x\n",
        1,
    )
    .await;
    c.diagnostics(&case, 1).await;
    let spec = uri(&ws.path().join("workflows/order-lookup/workflow.yaml"));
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": spec, "type": 2}]}),
    )
    .await;
    let d = c.diagnostics(&case, 1).await;
    assert_eq!(summarize(&d).len(), 1);
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ide_features_answer_through_the_protocol() {
    let ws = corpus_copy();
    let path = case_path(ws.path(), "ide.test.yaml");
    let text =
        "title: IDE\ndescription: Features through the protocol.\nsteps:\n  - send: hi\n  - \n";
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    c.open(&path, text, 1).await;
    c.diagnostics(&path, 1).await;
    let doc = json!({"uri": uri(&path)});
    let items = c
        .request(
            "textDocument/completion",
            json!({"textDocument": doc, "position": {"line": 4, "character": 4}}),
        )
        .await;
    let labels: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert!(labels.contains(&"send"), "{labels:?}");
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": doc, "position": {"line": 3, "character": 5}}),
        )
        .await;
    assert_eq!(hover["contents"]["kind"], "markdown", "{hover}");
    assert_eq!(hover["range"]["start"]["line"], 3, "{hover}");
    let symbols = c
        .request("textDocument/documentSymbol", json!({"textDocument": doc}))
        .await;
    let names: Vec<&str> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"IDE"), "{names:?}");
    c.shutdown().await;
}

/// The codes of a `publishDiagnostics` array.
fn codes(d: &Value) -> Vec<String> {
    summarize(d).into_iter().map(|x| x.0).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_script_buffer_rechecks_its_open_workflow() {
    // workflow.yaml's diagnostics read its hook scripts (FORMAT §A.6: a foreign import is
    // reported on the hook that names the script), so opening, editing and closing a hook
    // script buffer re-publishes the open workflow.yaml.
    let ws = corpus_copy();
    let spec = ws.path().join("workflows/order-lookup/workflow.yaml");
    let hook = ws
        .path()
        .join("workflows/order-lookup/hooks/check-tenancy.js");
    let spec_text = std::fs::read_to_string(&spec).unwrap();
    let hook_text = std::fs::read_to_string(&hook).unwrap();
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    c.open(&spec, &spec_text, 1).await;
    assert_eq!(c.diagnostics(&spec, 1).await, json!([]));
    let foreign = format!("import _ from \"lodash\";\n{hook_text}");
    let params = json!({"textDocument": {"uri": uri(&hook), "languageId": "javascript", "version": 1, "text": foreign}});
    c.notify("textDocument/didOpen", params).await;
    let d = c.diagnostics(&spec, 1).await;
    assert!(codes(&d).contains(&"WFX345".to_owned()), "{d}");
    // Editing the import away clears it again.
    let change = json!({
        "textDocument": {"uri": uri(&hook), "version": 2},
        "contentChanges": [{"text": hook_text}],
    });
    c.notify("textDocument/didChange", change).await;
    assert_eq!(c.diagnostics(&spec, 1).await, json!([]));
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixture_buffer_rechecks_the_open_case_that_names_it() {
    // A case's `from:` fixture (FORMAT §B.8) is a plain file under `tests/`: opening it
    // (unsaved) makes it exist for the open case, closing it makes it vanish again.
    let ws = corpus_copy();
    let path = case_path(ws.path(), "seeded.test.yaml");
    let fixture = case_path(ws.path(), "fixtures/orders.json");
    let text = "title: Seeded\ndescription: A fixture seeds the session.\nworkspace:\n  scratchpad/orders.json: { from: fixtures/orders.json }\nsteps:\n  - send: hi\n";
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    c.open(&path, text, 1).await;
    let d = c.diagnostics(&path, 1).await;
    assert_eq!(codes(&d), ["WFX302"], "{d}");
    let params = json!({"textDocument": {"uri": uri(&fixture), "languageId": "json", "version": 1, "text": "[]"}});
    c.notify("textDocument/didOpen", params).await;
    assert_eq!(c.diagnostics(&path, 1).await, json!([]));
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri(&fixture)}}),
    )
    .await;
    let d = c.diagnostics(&path, 1).await;
    assert_eq!(codes(&d), ["WFX302"], "{d}");
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn case_completion_follows_the_unsaved_workflow_buffer() {
    // IDE requests of a case read its workflow through the overlay and the session's
    // workflow cache: a state renamed in the unsaved workflow.yaml buffer is offered at
    // once, and closing the buffer without saving brings the saved name back.
    let ws = corpus_copy();
    let path = case_path(ws.path(), "complete.test.yaml");
    let spec = ws.path().join("workflows/order-lookup/workflow.yaml");
    let spec_text = std::fs::read_to_string(&spec).unwrap();
    let text = "title: Complete\ndescription: State names come from the workflow.\nsteps:\n  - send: hi\n  - reachedState: \n";
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    c.open(&path, text, 1).await;
    c.diagnostics(&path, 1).await;
    let at = json!({"textDocument": {"uri": uri(&path)}, "position": {"line": 4, "character": 18}});
    let labels = |items: &Value| -> Vec<String> {
        let items = items.get("items").unwrap_or(items);
        items
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap().to_owned())
            .collect()
    };
    let saved = labels(&c.request("textDocument/completion", at.clone()).await);
    assert!(saved.contains(&"refund-review".to_owned()), "{saved:?}");
    // Rename the state in the workflow buffer (unsaved), in two steps: open, then edit.
    c.open(&spec, &spec_text, 1).await;
    let renamed = spec_text.replace("refund-review", "refund-audit");
    let change = json!({
        "textDocument": {"uri": uri(&spec), "version": 2},
        "contentChanges": [{"text": renamed}],
    });
    c.notify("textDocument/didChange", change).await;
    let edited = labels(&c.request("textDocument/completion", at.clone()).await);
    assert!(edited.contains(&"refund-audit".to_owned()), "{edited:?}");
    assert!(!edited.contains(&"refund-review".to_owned()), "{edited:?}");
    // A broken buffer: no crash, the request still answers.
    let change = json!({
        "textDocument": {"uri": uri(&spec), "version": 3},
        "contentChanges": [{"text": "states: [\n"}],
    });
    c.notify("textDocument/didChange", change).await;
    let broken = c.request("textDocument/completion", at.clone()).await;
    assert!(
        !labels(&broken).contains(&"refund-review".to_owned()),
        "{broken}"
    );
    // Closed without saving: the disk's names again.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri(&spec)}}),
    )
    .await;
    let closed = labels(&c.request("textDocument/completion", at).await);
    assert!(closed.contains(&"refund-review".to_owned()), "{closed:?}");
    assert!(!closed.contains(&"refund-audit".to_owned()), "{closed:?}");
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_manifest_buffer_rechecks_the_open_workflows() {
    // workflow.yaml's skill rules read `<root>/skills/*/SKILL.md` (FORMAT §A.7): emptying
    // the order-data manifest in an unsaved buffer makes the skill unloadable and unknown.
    let ws = corpus_copy();
    let spec = ws.path().join("workflows/order-lookup/workflow.yaml");
    let skill = ws.path().join("skills/order-data/SKILL.md");
    let spec_text = std::fs::read_to_string(&spec).unwrap();
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    c.open(&spec, &spec_text, 1).await;
    assert_eq!(c.diagnostics(&spec, 1).await, json!([]));
    let params = json!({"textDocument": {"uri": uri(&skill), "languageId": "markdown", "version": 1, "text": ""}});
    c.notify("textDocument/didOpen", params).await;
    let d = c.diagnostics(&spec, 1).await;
    assert!(codes(&d).contains(&"WFX346".to_owned()), "{d}");
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri(&skill)}}),
    )
    .await;
    assert_eq!(c.diagnostics(&spec, 1).await, json!([]));
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_file_cap_counts_hook_script_problems_on_workflow_yaml() {
    // workflow.yaml with 1,001 unknown keys and a hook script that does not parse: the
    // script's WFX503 is published on the hook of workflow.yaml, and the file still gets at
    // most 1,000 diagnostics plus one WFX009.
    let ws = corpus_copy();
    let spec = ws.path().join("workflows/order-lookup/workflow.yaml");
    let hook = ws
        .path()
        .join("workflows/order-lookup/hooks/check-tenancy.js");
    std::fs::write(&hook, "export default async function hook( {\n").unwrap();
    let mut text = std::fs::read_to_string(&spec).unwrap();
    for i in 0..1001 {
        text.push_str(&format!("zz{i}: 1\n"));
    }
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    c.open(&spec, &text, 1).await;
    let d = c.diagnostics(&spec, 1).await;
    let codes = codes(&d);
    assert!(codes.contains(&"WFX503".to_owned()), "{codes:?}");
    assert_eq!(codes.len(), 1001);
    assert_eq!(codes.iter().filter(|c| *c == "WFX009").count(), 1);
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_undecodable_workflow_is_reported_on_the_open_case() {
    // Issue 13: a closed workflow.yaml with invalid UTF-8 used to vanish, taking the case's
    // cross-file errors (here an unknown state) with it.
    let ws = corpus_copy();
    let spec = ws.path().join("workflows/order-lookup/workflow.yaml");
    let mut bytes = std::fs::read(&spec).unwrap();
    bytes.extend_from_slice(b"# \xff\n");
    std::fs::write(&spec, bytes).unwrap();
    let path = case_path(ws.path(), "stray.test.yaml");
    let text = "title: Stray\ndescription: Names a state.\nsteps:\n  - send: hi\n  - reachedState: nowhere\n";
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    c.open(&path, text, 1).await;
    let d = c.diagnostics(&path, 1).await;
    assert_eq!(codes(&d), ["WFX309"], "{d}");
    let message = d[0]["message"].as_str().unwrap();
    assert!(
        message.contains("workflows/order-lookup/workflow.yaml` cannot be read (not valid UTF-8"),
        "{message}"
    );
    c.shutdown().await;
}

/// Confinement (docs/security.md §1): a buffer the client opens at a path outside every
/// workspace folder gets its own (single-file) diagnostics only. The server reads nothing
/// of that folder: the `workflow.yaml` beside it (whose state name is a marker) never shows
/// in diagnostics or hover, and the case is told its cross-file checks did not run.
#[tokio::test]
async fn a_buffer_outside_the_workspace_folders_reads_nothing_beside_it() {
    let ws = corpus_copy();
    let outside = tempfile::tempdir().unwrap();
    let wf = outside.path().join("workflows/private");
    std::fs::create_dir_all(wf.join("tests")).unwrap();
    std::fs::write(
        wf.join("workflow.yaml"),
        "instructions: x\nstates:\n  secret-marker-state:\n    triggers:\n      manual:\n",
    )
    .unwrap();
    let path = wf.join("tests/peek.test.yaml");
    // `secret-marker-stat` is one letter from the marker: a did-you-mean would print it.
    let text = "title: Peek\ndescription: Names a state beside it.\nsteps:\n  - send: hi\n  - reachedState: secret-marker-stat\n  - sned: typo\n";
    std::fs::write(&path, text).unwrap();
    let mut c = Client::start();
    c.initialize(ws.path(), &[], true).await;
    c.open(&path, text, 1).await;
    let d = c.diagnostics(&path, 1).await;
    let all = d.to_string();
    assert!(!all.contains("secret-marker-state"), "{all}");
    // The document's own rules ran (the misspelt action) and the cross-file ones say why
    // they did not.
    assert!(codes(&d).contains(&"WFX309".to_owned()), "{d}");
    assert!(
        all.contains("outside the editor's workspace folders; not read"),
        "{all}"
    );
    assert!(codes(&d).iter().any(|c| c != "WFX309"), "{d}");
    let doc = json!({"uri": uri(&path)});
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": doc, "position": {"line": 4, "character": 20}}),
        )
        .await;
    assert!(
        !hover.to_string().contains("secret-marker-state"),
        "{hover}"
    );
    // The same layout inside the workspace is read as usual (the test can fail).
    let inside = case_path(ws.path(), "peek.test.yaml");
    let text_in = text.replace("secret-marker-stat", "refund-revie");
    c.open(&inside, &text_in, 1).await;
    let d = c.diagnostics(&inside, 1).await;
    assert!(d.to_string().contains("did you mean"), "{d}");
    c.shutdown().await;
}

/// issue 16: the capabilities the editor fixes rely on. Document highlight is announced;
/// formatting is deliberately not (docs/editors.md "Formatting": the server does not
/// reformat, so a YAML formatter the user chose stays the only one), so neither
/// `documentFormattingProvider` nor `documentRangeFormattingProvider` may appear.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn highlight_is_announced_and_formatting_is_not() {
    let ws = corpus_copy();
    let mut c = Client::start();
    let init = c.initialize(ws.path(), &["utf-16"], true).await;
    let caps = &init["capabilities"];
    assert_eq!(caps["documentHighlightProvider"], json!(true), "{caps}");
    for absent in [
        "documentFormattingProvider",
        "documentRangeFormattingProvider",
        "documentOnTypeFormattingProvider",
    ] {
        assert!(
            caps.get(absent).is_none_or(Value::is_null),
            "{absent}: {caps}"
        );
    }
    // Asked anyway, formatting is refused or empty: never an edit.
    let spec = ws.path().join("workflows/order-lookup/workflow.yaml");
    let text = std::fs::read_to_string(&spec).unwrap();
    c.open(&spec, &text, 1).await;
    let id = 9_001;
    c.send(json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/formatting",
        "params": {"textDocument": {"uri": uri(&spec)}, "options": {"tabSize": 2, "insertSpaces": true}}}))
        .await;
    let resp = c
        .wait_for("the formatting answer", |m| {
            m["id"] == id && m.get("method").is_none()
        })
        .await;
    assert!(
        resp.get("error").is_some() || resp["result"].is_null() || resp["result"] == json!([]),
        "{resp}"
    );
    c.shutdown().await;
}

/// Finding 11: one `didChange` of 700,000 small edits (about 60 MB, under the 64 MiB
/// message bound) rebuilt the whole text after each edit. The edits are now applied on
/// the rope and the text rebuilt once per notification (`document::TEXT_REBUILDS`, counted
/// rather than timed); the resulting text is the one the edits describe, as the document
/// symbols show.
#[tokio::test]
async fn seven_hundred_thousand_edits_in_one_did_change_apply_with_one_rebuild() {
    let ws = corpus_copy();
    let spec = ws.path().join("workflows/edits/workflow.yaml");
    std::fs::create_dir_all(spec.parent().unwrap()).unwrap();
    let start = "states:\n  s:\n    triggers: { manual: }\n";
    std::fs::write(&spec, start).unwrap();
    let mut c = Client::start();
    c.initialize(ws.path(), &["utf-16"], true).await;
    c.open(&spec, start, 1).await;
    let at = |l: u32, ch: u32| json!({"line": l, "character": ch});
    let mut changes = Vec::with_capacity(700_000);
    // Insert `q` after `s` and delete it again, then rename `s`: any edit applied at a wrong
    // place leaves stray text.
    for _ in 0..349_999 {
        changes.push(json!({"range": {"start": at(1, 3), "end": at(1, 3)}, "text": "q"}));
        changes.push(json!({"range": {"start": at(1, 3), "end": at(1, 4)}, "text": ""}));
    }
    changes.push(json!({"range": {"start": at(1, 2), "end": at(1, 3)}, "text": "renamed"}));
    changes.push(json!({"range": {"start": at(1, 9), "end": at(1, 9)}, "text": "-state"}));
    assert_eq!(changes.len(), 700_000);
    let before = wfx_lsp::lsp::document::TEXT_REBUILDS.load(std::sync::atomic::Ordering::Relaxed);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&spec), "version": 2}, "contentChanges": changes}),
    )
    .await;
    let symbols = c
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri(&spec)}}),
        )
        .await;
    let rebuilds =
        wfx_lsp::lsp::document::TEXT_REBUILDS.load(std::sync::atomic::Ordering::Relaxed) - before;
    fn names(v: &Value, out: &mut Vec<String>) {
        if let Some(n) = v.get("name").and_then(Value::as_str) {
            out.push(n.to_owned());
        }
        for child in v
            .as_array()
            .into_iter()
            .chain(v.get("children").and_then(Value::as_array))
            .flatten()
        {
            names(child, out);
        }
    }
    let mut found = Vec::new();
    names(&symbols, &mut found);
    assert!(found.iter().any(|n| n == "renamed-state"), "{found:?}");
    assert!(
        !found.iter().any(|n| n == "s" || n.contains('q')),
        "{found:?}"
    );
    // One for this notification; the other tests of this binary may add a few of their own,
    // never hundreds of thousands.
    assert!((1..1_000).contains(&rebuilds), "{rebuilds} text rebuilds");
    c.shutdown().await;
}
