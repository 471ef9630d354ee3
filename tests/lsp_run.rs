//! Running cases from the editor, end to end over the in-process server (issue 4 item 7,
//! issue 7 item 3): the "▶ Run case" lens, `wfx.runCase` in the background with work-done
//! progress, the annotations it leaves (per-step inlay hints, the verdict lens, `wfx-run`
//! diagnostics on failed steps, `○ not executed` after a halt — FORMAT §B.5, §C.3), edits
//! clearing them, the external runner command (a fake script printing canned JSON) and
//! the `wfx/graph` request.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::inprocess::Client;
use support::*;

const DEADLINE: Duration = Duration::from_secs(20);

impl Client {
    fn start() -> Self {
        Self::connect(DEADLINE, true)
    }

    async fn initialize(&mut self, root: &Path, runner_command: Option<&str>) {
        self.initialize_with(root, runner_command, true).await;
    }

    /// `lens_refresh`: whether the client announces `workspace.codeLens.refreshSupport`
    /// (Neovim 0.12 does not).
    async fn initialize_with(
        &mut self,
        root: &Path,
        runner_command: Option<&str>,
        lens_refresh: bool,
    ) {
        let mut params = initialize_params(root, &["utf-16"]);
        params["capabilities"]["window"] = json!({"workDoneProgress": true});
        params["capabilities"]["workspace"] = if lens_refresh {
            json!({"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}})
        } else {
            json!({"inlayHint": {"refreshSupport": true}})
        };
        params["initializationOptions"] =
            json!({"runner": {"skipGrades": true, "command": runner_command}});
        let r = self.request("initialize", params).await;
        let cmds = &r["capabilities"]["executeCommandProvider"]["commands"];
        assert!(
            cmds.as_array().unwrap().contains(&json!("wfx.runCase")),
            "{r}"
        );
        assert!(r["capabilities"]["codeLensProvider"].is_object(), "{r}");
        self.notify("initialized", json!({})).await;
    }

    /// Runs `command` on `path` and waits for the inlay-hint refresh that ends the run.
    async fn run(&mut self, command: &str, path: &Path) {
        let r = self
            .request(
                "workspace/executeCommand",
                json!({"command": command, "arguments": [uri(path)]}),
            )
            .await;
        assert!(r.is_null(), "{r}");
        self.wait_for("the inlay hint refresh", |m| {
            m["method"] == "workspace/inlayHint/refresh"
        })
        .await;
    }

    async fn hints(&mut self, path: &Path) -> Vec<(u64, String)> {
        let r = self
            .request(
                "textDocument/inlayHint",
                json!({"textDocument": {"uri": uri(path)}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 999, "character": 0}}}),
            )
            .await;
        r.as_array()
            .unwrap()
            .iter()
            .filter_map(|h| {
                let l = h["label"].as_str()?;
                (l.starts_with('✔') || l.starts_with('✖') || l.starts_with('○'))
                    .then(|| (h["position"]["line"].as_u64().unwrap(), l.to_owned()))
            })
            .collect()
    }

    async fn lenses(&mut self, path: &Path) -> Vec<String> {
        let r = self
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

    async fn run_diagnostics(&mut self, path: &Path) -> Vec<Value> {
        let u = uri(path);
        // The run publishes before it asks for the refresh that `run` waits for.
        let m = self
            .seen
            .iter()
            .rev()
            .find(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == u)
            .cloned()
            .unwrap();
        m["params"]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["source"] == "wfx-run")
            .cloned()
            .collect()
    }
}

fn line_of(text: &str, needle: &str) -> u64 {
    text[..text.find(needle).unwrap()].matches('\n').count() as u64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_case_annotates_steps_and_an_edit_clears_them() {
    let ws = corpus_copy();
    let case = ws
        .path()
        .join("workflows/order-lookup/tests/refund-approved.test.yaml");
    let text = std::fs::read_to_string(&case).unwrap();
    let mut c = Client::start();
    c.initialize(ws.path(), None).await;
    c.open(&case, &text, 1).await;
    assert_eq!(c.lenses(&case).await, ["▶ Run case (agent script)"]);
    // Nothing ran because the file was opened.
    assert!(c.hints(&case).await.is_empty());

    c.run("wfx.runCase", &case).await;
    assert!(
        c.server_requests
            .contains(&"window/workDoneProgress/create".to_owned())
    );
    let hints = c.hints(&case).await;
    let send = line_of(&text, "  - send:");
    let review = line_of(&text, "reachedState: refund-review");
    let grade = line_of(&text, "  - grade:");
    assert_eq!(hints.len(), 8, "{hints:?}");
    assert!(hints.contains(&(send, "✔ passed".into())), "{hints:?}");
    assert!(hints.contains(&(review, "✔ passed".into())), "{hints:?}");
    // `wfx.runner.skipGrades` (default true): the grade is not executed.
    assert!(
        hints.contains(&(grade, "○ not executed".into())),
        "{hints:?}"
    );
    let lenses = c.lenses(&case).await;
    assert_eq!(lenses[0], "▶ Run case (agent script)");
    assert!(
        lenses[1].starts_with("✔ passed · 7/8 steps · "),
        "{lenses:?}"
    );

    // The case's path is available through wfx/graph.
    let g = c
        .request("wfx/graph", json!({"textDocument": {"uri": uri(&case)}}))
        .await;
    assert_eq!(g["path"]["reached"]["refund-review"], 1, "{}", g["path"]);

    // Break the case: refund-closed is not reached before the decision, the structural
    // assertion halts the run, later assertions are not executed.
    let broken = text.replace("reachedState: refund-review", "reachedState: refund-closed");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&case), "version": 2}, "contentChanges": [{"text": broken}]}),
    )
    .await;
    // The edit cleared the annotations.
    assert!(c.hints(&case).await.is_empty());
    assert_eq!(c.lenses(&case).await, ["▶ Run case (agent script)"]);

    c.run("wfx.runCase", &case).await;
    let diags = c.run_diagnostics(&case).await;
    let halt = line_of(&broken, "reachedState: refund-closed");
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["range"]["start"]["line"], halt);
    let hints = c.hints(&case).await;
    let label = &hints.iter().find(|h| h.0 == halt).unwrap().1;
    assert!(label.starts_with("✖ failed: reachedState"), "{label}");
    let succeeded = line_of(&broken, "  - succeeded:");
    let decide = line_of(&broken, "  - decide:");
    assert!(
        hints.contains(&(succeeded, "○ not executed".into())),
        "{hints:?}"
    );
    assert!(
        hints.contains(&(decide, "○ not executed".into())),
        "{hints:?}"
    );
    assert!(c.lenses(&case).await[1].starts_with("✖ failed · "));
}

/// issue 16: a client without `workspace.codeLens.refreshSupport` (Neovim) is never sent
/// `workspace/codeLens/refresh`; the verdict reaches it as a `wfx-run` information
/// diagnostic on the first line. A client with the capability gets the lens refresh and no
/// such diagnostic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_lens_refresh_the_verdict_is_pushed_as_a_diagnostic() {
    for lens_refresh in [false, true] {
        let ws = corpus_copy();
        let case = ws
            .path()
            .join("workflows/order-lookup/tests/refund-approved.test.yaml");
        let text = std::fs::read_to_string(&case).unwrap();
        let mut c = Client::start();
        c.initialize_with(ws.path(), None, lens_refresh).await;
        c.open(&case, &text, 1).await;
        c.run("wfx.runCase", &case).await;
        let verdicts: Vec<Value> = c
            .run_diagnostics(&case)
            .await
            .into_iter()
            .filter(|d| d["message"].as_str().unwrap().starts_with("last run: "))
            .collect();
        // The lens refresh follows the inlay-hint refresh `run` waited for.
        if lens_refresh {
            assert!(verdicts.is_empty(), "{verdicts:?}");
            c.wait_for("the code lens refresh", |m| {
                m["method"] == "workspace/codeLens/refresh"
            })
            .await;
        } else {
            assert_eq!(verdicts.len(), 1, "{verdicts:?}");
            let d = &verdicts[0];
            assert_eq!(d["severity"], 3, "{d}");
            assert_eq!(d["range"]["start"]["line"], 0, "{d}");
            assert!(
                d["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("last run: ✔ passed · 7/8 steps · "),
                "{d}"
            );
            // Give a stray refresh time to arrive, then check none came.
            c.request(
                "textDocument/codeLens",
                json!({"textDocument": {"uri": uri(&case)}}),
            )
            .await;
            assert!(
                !c.server_requests
                    .iter()
                    .any(|m| m == "workspace/codeLens/refresh"),
                "{:?}",
                c.server_requests
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_external_runner_command_is_used_when_set() {
    let ws = corpus_copy();
    let case = ws
        .path()
        .join("workflows/order-lookup/tests/refund-approved.test.yaml");
    let text = std::fs::read_to_string(&case).unwrap();
    let args_file = ws.path().join("args.txt");
    let script = ws.path().join("fake-runner.sh");
    let canned = json!({"workflow": "order-lookup", "exitCode": 1, "discovered": 1, "results": [{
    "id": "refund-approved",
    "verdict": {"status": "failed", "failures": ["parked: canned failure"]},
    "records": [
        {"kind": "parked", "threshold": null, "status": "failed", "detail": "canned failure", "step": 1},
        {"kind": "reachedState", "threshold": null, "status": "not-executed", "step": 2}
    ]}]});
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" > '{}'\ncat <<'JSON'\n{}\nJSON\n",
            args_file.display(),
            canned
        ),
    )
    .unwrap();
    let mut perm = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&script, perm).unwrap();

    let mut c = Client::start();
    let command = format!("{} test", script.display());
    c.initialize(ws.path(), Some(&command)).await;
    c.open(&case, &text, 1).await;
    c.run("wfx.runCase", &case).await;
    let diags = c.run_diagnostics(&case).await;
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0]["message"]
            .as_str()
            .unwrap()
            .contains("canned failure")
    );
    assert_eq!(
        diags[0]["range"]["start"]["line"],
        line_of(&text, "  - parked:")
    );
    let args = std::fs::read_to_string(&args_file).unwrap();
    assert!(args.starts_with("test "), "{args}");
    assert!(args.contains("workflows/order-lookup workflows/order-lookup/tests/refund-approved.test.yaml --json --skip-grades"), "{args}");
    let hints = c.hints(&case).await;
    assert!(
        hints.contains(&(
            line_of(&text, "reachedState: refund-request"),
            "○ not executed".into()
        )),
        "{hints:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wfx_graph_returns_every_state_of_the_current_text() {
    let ws = corpus_copy();
    let wf = ws.path().join("workflows/order-lookup/workflow.yaml");
    let text = std::fs::read_to_string(&wf).unwrap();
    let mut c = Client::start();
    c.initialize(ws.path(), None).await;
    c.open(&wf, &text, 1).await;
    // "Run all cases", then the coverage lenses (issue 17): the 8 cases with the manual
    // trigger reach `identify-case`, which comes first.
    let lenses = c.lenses(&wf).await;
    assert_eq!(lenses[0], "▶ Run all cases");
    assert_eq!(lenses[1], "reached by 8 cases", "{lenses:?}");
    assert!(
        lenses.iter().any(|l| l == "decided by 1 case"),
        "{lenses:?}"
    );
    let g = c
        .request("wfx/graph", json!({"textDocument": {"uri": uri(&wf)}}))
        .await;
    assert_eq!(g["workflow"], "order-lookup");
    assert!(g["path"].is_null());
    let nodes = g["graph"]["nodes"].as_array().unwrap();
    let ids: Vec<&str> = nodes.iter().map(|n| n["id"].as_str().unwrap()).collect();
    for s in [
        "identify-case",
        "refund-request",
        "refund-review",
        "refund-closed",
        "escalation",
    ] {
        assert!(ids.contains(&s), "{s} missing from {ids:?}");
        assert!(g["svg"].as_str().unwrap().contains(s));
    }
    let review = nodes.iter().find(|n| n["id"] == "refund-review").unwrap();
    assert_eq!(review["kind"], "human");
    assert_eq!(
        review["range"]["start"]["line"],
        line_of(&text, "refund-review:")
    );
    assert!(g["mermaid"].as_str().unwrap().starts_with("flowchart TD"));
    // No case has run: the coverage the cases' assertions name, drawn into the SVG.
    assert_eq!(g["coverage"]["source"], "assertions");
    assert_eq!(g["coverage"]["reached"]["identify-case"], 8);
    assert!(g["coverage"]["reached"].get("clarify").is_none());
    let svg = g["svg"].as_str().unwrap();
    assert!(svg.contains("identify-case ×8"), "{svg}");
    assert!(svg.contains("clarify (not covered)"), "{svg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stale_change_keeps_the_run_annotations() {
    // A `didChange` whose version does not exceed the document's is dropped (the text
    // stays as it was), so the annotations of the text that ran stay too.
    let ws = corpus_copy();
    let case = ws
        .path()
        .join("workflows/order-lookup/tests/refund-approved.test.yaml");
    let text = std::fs::read_to_string(&case).unwrap();
    let mut c = Client::start();
    c.initialize(ws.path(), None).await;
    c.open(&case, &text, 5).await;
    c.run("wfx.runCase", &case).await;
    let before = c.hints(&case).await;
    assert_eq!(before.len(), 8, "{before:?}");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&case), "version": 5}, "contentChanges": [{"text": "title: stale\n"}]}),
    )
    .await;
    assert_eq!(c.hints(&case).await, before);
    assert_eq!(c.lenses(&case).await.len(), 2);
}

/// Issue 12: "cancel run" stops the hook that is running, not only the cases after it. The
/// first hook of the case spins under the ceiling budget (`timeoutMs: 30000`, longer than
/// this client's 20 s deadline); `wfx.cancelRun` during it ends the run ("cancelled").
/// Without the cancel token reaching the sandbox the hook would run its 30 s and the wait
/// below would fail at the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_run_stops_a_running_hook() {
    let ws = corpus_copy();
    let wf_dir = ws.path().join("workflows/order-lookup");
    std::fs::write(
        wf_dir.join("hooks/check-requester.js"),
        "export default () => { for (;;) {} };\n",
    )
    .unwrap();
    let wf = std::fs::read_to_string(wf_dir.join("workflow.yaml")).unwrap();
    assert!(wf.contains("  timeoutMs: 15000\n"));
    std::fs::write(
        wf_dir.join("workflow.yaml"),
        wf.replace("  timeoutMs: 15000\n", "  timeoutMs: 30000\n"),
    )
    .unwrap();
    let case = wf_dir.join("tests/refund-approved.test.yaml");
    let text = std::fs::read_to_string(&case).unwrap();
    let mut c = Client::start();
    c.initialize(ws.path(), None).await;
    c.open(&case, &text, 1).await;
    let r = c
        .request(
            "workspace/executeCommand",
            json!({"command": "wfx.runCase", "arguments": [uri(&case)]}),
        )
        .await;
    assert!(r.is_null(), "{r}");
    c.wait_for("the run's progress to begin", |m| {
        m["method"] == "$/progress" && m["params"]["value"]["kind"] == "begin"
    })
    .await;
    // Give the case time to reach the hook (a run takes milliseconds up to it).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = c
        .request(
            "workspace/executeCommand",
            json!({"command": "wfx.cancelRun", "arguments": [uri(&case)]}),
        )
        .await;
    assert_eq!(r, json!(true), "the run was not running");
    let end = c
        .wait_for("the run's progress to end", |m| {
            m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end"
        })
        .await;
    assert_eq!(end["params"]["value"]["message"], "cancelled", "{end}");
}

/// issue 16 ("Run all cases" shows progress and a result): a client announcing
/// `experimental.wfxRunStatus` (the VS Code client) gets `wfx/runStatus` (docs/lsp-extensions.md):
/// `begin` with every case, one `case` per case (`done` = i of n), then `end` with the verdict
/// counts, and no work-done progress of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_all_cases_reports_run_status_to_a_client_that_asks() {
    let ws = corpus_copy();
    let wf = ws.path().join("workflows/order-lookup/workflow.yaml");
    let n = std::fs::read_dir(ws.path().join("workflows/order-lookup/tests"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".test.yaml")
        })
        .count();
    assert!(n >= 2, "the corpus workflow has {n} cases");
    let mut c = Client::start();
    let mut params = initialize_params(ws.path(), &["utf-16"]);
    params["capabilities"]["window"] = json!({"workDoneProgress": true});
    params["capabilities"]["experimental"] = json!({"wfxRunStatus": true});
    params["initializationOptions"] = json!({"runner": {"skipGrades": true}});
    c.request("initialize", params).await;
    c.notify("initialized", json!({})).await;
    let r = c
        .request(
            "workspace/executeCommand",
            json!({"command": "wfx.runAllCases", "arguments": [uri(&wf)]}),
        )
        .await;
    assert!(r.is_null(), "{r}");
    let end = c
        .wait_for("the end of the run", |m| {
            m["method"] == "wfx/runStatus" && m["params"]["phase"] == "end"
        })
        .await;
    let statuses: Vec<&Value> = c
        .seen
        .iter()
        .filter(|m| m["method"] == "wfx/runStatus")
        .map(|m| &m["params"])
        .collect();
    let phases: Vec<&str> = statuses
        .iter()
        .map(|s| s["phase"].as_str().unwrap())
        .collect();
    let mut want = vec!["begin"];
    want.extend(std::iter::repeat_n("case", n));
    want.push("end");
    assert_eq!(phases, want, "{statuses:?}");
    assert_eq!(statuses[0]["total"], n);
    assert_eq!(statuses[0]["cases"].as_array().unwrap().len(), n);
    assert_eq!(statuses[0]["uri"], uri(&wf));
    for (i, s) in statuses[1..=n].iter().enumerate() {
        assert_eq!(s["done"], i + 1, "{s}");
        assert!(s["case"].as_str().unwrap().ends_with(".test.yaml"), "{s}");
    }
    let k = &end["params"]["counts"];
    let sum: u64 = ["passed", "failed", "skipped", "notRun"]
        .iter()
        .map(|f| k[f].as_u64().unwrap())
        .sum();
    assert_eq!(sum, n as u64, "{k}");
    assert!(k["passed"].as_u64().unwrap() >= 1, "{k}");
    // The notification replaces work-done progress for this client.
    assert!(
        !c.server_requests
            .contains(&"window/workDoneProgress/create".to_owned()),
        "{:?}",
        c.server_requests
    );
}

/// Finding 7: the SVG layout of the worst graph within the 64-node / 128-edge bound (a
/// ring of 63 states, each with a chord) ran for 15–21 s on a runtime worker, and every
/// request sent meanwhile waited for it. Now each layout stops at a work budget
/// (`graph::MAX_LAYOUT_WORK`, reported as `layout`, counted here rather than timed) and runs
/// on a blocking thread: three such `wfx/graph` requests and a cheap request sent behind
/// them are all answered, in order (the server handles messages one at a time, so the
/// cheap one waits for the bounded layouts ahead of it, never for an unbounded one).
#[tokio::test]
async fn requests_sent_while_graphs_are_laid_out_are_answered_and_each_layout_is_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let n = 63;
    let mut src = String::from("states:\n");
    for i in 0..n {
        src.push_str(&format!(
            "  s{i}:\n{}    transitions:\n      - {{ to: s{}, description: next }}\n      - {{ to: s{} }}\n",
            if i == 0 { "    triggers: { manual: }\n" } else { "" },
            (i + 1) % n,
            (i * 7 + 3) % n
        ));
    }
    let wf = tmp.path().join("workflows/ring/workflow.yaml");
    std::fs::create_dir_all(wf.parent().unwrap()).unwrap();
    std::fs::write(&wf, &src).unwrap();
    let mut c = Client::start();
    c.initialize(tmp.path(), None).await;
    c.open(&wf, &src, 1).await;
    let graph_ids = [9001, 9002, 9003];
    for id in graph_ids {
        c.send(request(
            id,
            "wfx/graph",
            json!({"textDocument": {"uri": uri(&wf)}}),
        ))
        .await;
    }
    c.send(request(
        9100,
        "textDocument/foldingRange",
        json!({"textDocument": {"uri": uri(&wf)}}),
    ))
    .await;
    let mut order = Vec::new();
    let mut graphs = Vec::new();
    while order.len() < 4 {
        let m = c
            .wait_for("the responses", |m| {
                m.get("method").is_none() && m["id"].as_i64().is_some_and(|i| i > 9000)
            })
            .await;
        let id = m["id"].as_i64().unwrap();
        assert!(m.get("error").is_none(), "{m}");
        if id != 9100 {
            graphs.push(m["result"].clone());
        }
        order.push(id);
    }
    assert_eq!(order, [9001, 9002, 9003, 9100]);
    for g in &graphs {
        assert!(g["svg"].as_str().unwrap().contains(&format!("s{}", n - 1)));
        assert_eq!(g["layout"]["cut"], true, "{}", g["layout"]);
        let work = g["layout"]["work"].as_u64().unwrap();
        assert!(
            work <= 2 * wfx_schemas::graph::MAX_LAYOUT_WORK,
            "layout work {work}"
        );
    }
    c.shutdown().await;
}
