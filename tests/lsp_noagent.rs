//! The editor side of issue 15's selection rule: the run lens names the agent a case will
//! use, and a case with no agent script gets the "Scaffold an agent script" code action
//! (a workspace edit creating `<case>.agent.yaml` with the draft), over the in-process
//! server.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::inprocess::Client;
use support::*;

const DEADLINE: Duration = Duration::from_secs(20);

async fn start(root: &Path) -> Client {
    let mut c = Client::connect(DEADLINE, true);
    let mut params = initialize_params(root, &["utf-16"]);
    params["capabilities"]["workspace"] = json!({"workspaceEdit": {"documentChanges": true}});
    c.request("initialize", params).await;
    c.notify("initialized", json!({})).await;
    c
}

async fn lenses(c: &mut Client, path: &Path) -> Vec<String> {
    let r = c
        .request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri(path)}}),
        )
        .await;
    r.as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap().to_owned())
        .collect()
}

async fn actions(c: &mut Client, path: &Path) -> Vec<Value> {
    let r = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri(path)}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}),
        )
        .await;
    r.as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lens_names_the_agent_and_a_case_without_one_can_be_scaffolded() {
    let ws = corpus_copy();
    let tests = ws.path().join("workflows/order-lookup/tests");
    let with = tests.join("skill-gate.test.yaml");
    let without = tests.join("delayed-orders-ok.test.yaml");
    let script = tests.join("delayed-orders-ok.agent.yaml");
    std::fs::remove_file(&script).unwrap();
    let mut c = start(ws.path()).await;
    for p in [&with, &without] {
        c.open(p, &std::fs::read_to_string(p).unwrap(), 1).await;
    }
    assert_eq!(lenses(&mut c, &with).await, ["▶ Run case (agent script)"]);
    assert_eq!(lenses(&mut c, &without).await, ["▶ Run case (no agent)"]);

    // The case with a script gets no scaffold action.
    let titles = |a: &[Value]| -> Vec<String> {
        a.iter()
            .map(|x| x["title"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert!(
        !titles(&actions(&mut c, &with).await)
            .iter()
            .any(|t| t.starts_with("Scaffold"))
    );
    let acts = actions(&mut c, &without).await;
    let scaffold = acts
        .iter()
        .find(|a| a["title"] == "Scaffold an agent script (delayed-orders-ok.agent.yaml)")
        .unwrap_or_else(|| panic!("{acts:#?}"));
    let changes = scaffold["edit"]["documentChanges"].as_array().unwrap();
    assert_eq!(changes[0]["kind"], "create");
    assert_eq!(changes[0]["uri"], json!(uri(&script)));
    assert_eq!(changes[0]["options"]["overwrite"], false);
    let text = changes[1]["edits"][0]["newText"].as_str().unwrap();
    assert!(text.contains("\nturns:\n"), "{text}");
    assert!(
        text.contains("input: {\"to\":\"orders-question\""),
        "{text}"
    );
    assert!(text.contains("say: \"ORD-1003 delayed\""), "{text}");
    // The server wrote nothing: the client applies the edit.
    assert!(!script.exists());
}
