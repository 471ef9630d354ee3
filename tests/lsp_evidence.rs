//! The evidence of a run in the editor (issue 16), over the in-process server: for each
//! fixture case of `runner/tests/fixtures/evidence` (a hook veto, a governance refusal, a
//! failed tool call with its output, an unmocked host tool, a trigger-signature rejection,
//! an advance with no edge), `wfx.runCase` then a hover on the failed step shows the
//! reason; the `wfx-run` diagnostic numbers the step from 1; `wfx.showTranscript` answers
//! the case's whole transcript as Markdown.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::inprocess::Client;
use support::*;

const DEADLINE: Duration = Duration::from_secs(30);

/// (case file stem, the failed step's text, the reason the hover must show).
const CASES: &[(&str, &str, &str)] = &[
    (
        "hook-veto",
        "reachedState: pay",
        "before hook hooks/limit.js of pay: veto: Payments over 1000 EUR need a second approver.",
    ),
    (
        "governance",
        "reply:",
        "Blocked by governance (tool.forbidden-here): `erp_delete_vendor` is denied",
    ),
    (
        "failed-tool",
        "succeeded: true",
        "no such file or folder: scratchpad/invoice-7.json",
    ),
    (
        "unmocked",
        "succeeded: true",
        "tool `erp_post_payment` is not available in the simulator",
    ),
    (
        "signature",
        "variables:",
        "the run finished without its returns: 'payment_id' was not set",
    ),
    (
        "no-edge",
        "reachedState: done",
        "'done' is not a transition of state 'start'; declared: pay.",
    ),
];

fn fixture() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("runner/tests/fixtures/evidence"), ws.path());
    ws
}

async fn init(c: &mut Client, root: &Path) {
    let mut params = initialize_params(root, &["utf-16"]);
    params["capabilities"]["workspace"] =
        json!({"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}});
    params["initializationOptions"] = json!({"runner": {"skipGrades": true}});
    let r = c.request("initialize", params).await;
    let cmds = &r["capabilities"]["executeCommandProvider"]["commands"];
    assert!(
        cmds.as_array()
            .unwrap()
            .contains(&json!("wfx.showTranscript")),
        "{r}"
    );
    c.notify("initialized", json!({})).await;
}

/// The hover's Markdown with its escapes removed (`\(` → `(`), so a test can look for the
/// plain reason.
fn unescape(md: &str) -> String {
    let mut out = String::new();
    let mut chars = md.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_on_a_failed_step_shows_its_evidence_and_the_transcript_command_answers() {
    let ws = fixture();
    let mut c = Client::connect(DEADLINE, true);
    init(&mut c, ws.path()).await;
    for (name, step, reason) in CASES {
        let case = ws
            .path()
            .join(format!("workflows/pay/tests/{name}.test.yaml"));
        let text = std::fs::read_to_string(&case).unwrap();
        c.open(&case, &text, 1).await;
        let r = c
            .request(
                "workspace/executeCommand",
                json!({"command": "wfx.runCase", "arguments": [uri(&case)]}),
            )
            .await;
        assert!(r.is_null(), "{r}");
        let u = uri(&case);
        let diag = c
            .wait_for("the run's diagnostics", |m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == u
                    && m["params"]["diagnostics"]
                        .as_array()
                        .is_some_and(|d| d.iter().any(|d| d["source"] == "wfx-run"))
            })
            .await;
        let line = text[..text.find(step).unwrap()].matches('\n').count();
        let run_diag = diag["params"]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["source"] == "wfx-run")
            .unwrap()
            .clone();
        // `steps[1]` is "step 2" for people.
        assert!(
            run_diag["message"]
                .as_str()
                .unwrap()
                .starts_with("step 2 failed: "),
            "{name}: {run_diag}"
        );
        assert_eq!(run_diag["range"]["start"]["line"], line, "{name}");
        let col = text.lines().nth(line).unwrap().find(step).unwrap() + 1;
        let h = c
            .request(
                "textDocument/hover",
                json!({"textDocument": {"uri": u}, "position": {"line": line, "character": col}}),
            )
            .await;
        let md = h["contents"]["value"].as_str().unwrap_or_default();
        let plain = unescape(md);
        assert!(plain.contains("Evidence of step 2"), "{name}: {md}");
        assert!(plain.contains(reason), "{name}: `{reason}` not in\n{md}");
        assert!(plain.contains("**step 1** · in "), "{name}: {md}");
        // The passing `send` step has no evidence hover of its own.
        let send_line = text[..text.find("- send:").unwrap()].matches('\n').count();
        let h = c
            .request(
                "textDocument/hover",
                json!({"textDocument": {"uri": u}, "position": {"line": send_line, "character": 5}}),
            )
            .await;
        let send_md = h["contents"]["value"].as_str().unwrap_or_default();
        assert!(!send_md.contains("Evidence of step"), "{name}: {send_md}");

        let t = c
            .request(
                "workspace/executeCommand",
                json!({"command": "wfx.showTranscript", "arguments": [u]}),
            )
            .await;
        assert_eq!(
            t["title"],
            Value::String(format!(
                "Transcript of workflows/pay/tests/{name}.test.yaml"
            ))
        );
        let doc = unescape(t["markdown"].as_str().unwrap());
        assert!(doc.contains("Verdict: **failed**"), "{name}: {doc}");
        assert!(doc.contains("## Step 1"), "{name}: {doc}");
        assert!(doc.contains(reason), "{name}: `{reason}` not in\n{doc}");
    }
    // A case that has not run has no transcript.
    let other = ws.path().join("workflows/pay/workflow.yaml");
    let t = c
        .request(
            "workspace/executeCommand",
            json!({"command": "wfx.showTranscript", "arguments": [uri(&other)]}),
        )
        .await;
    assert!(t.is_null(), "{t}");
}
