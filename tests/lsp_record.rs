//! "● Record with model" from the editor (issue 15 item 8), over the real stdio server
//! against the loopback fake model endpoint of `tests/live.rs` (`support::fake_model`):
//! the `wfx.run.allowLive` gate (no lens and a refused command while it is off, whatever
//! the client sends), a recording that writes a cassette with the key redacted and reports
//! one `$/progress` per model call, and a cancel during a stalled model call that writes
//! nothing (no cassette, no temporary file). The server runs with the `ARCHMAX_*` variables
//! of this process removed and the fake's set, so no test ever reaches a real endpoint.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Instant;

use serde_json::{Value, json};
use support::fake_model::{Fake, Reply, call};
use support::stdio::{DEADLINE, Server, Wire};
use support::{initialize_params, uri};

// Split so that no committed line holds a key-shaped value.
const KEY: &str = concat!("sk-", "live-PLANTED-7c1d9e");
const MODEL: &str = "fake-model-x";
/// One state; a generous case timeout, so only a cancel can end a stalled call in time.
const WF: &str = "title: Tiny\ninstructions: Be brief.\ntests:\n  caseTimeoutMs: 300000\nstates:\n  start:\n    triggers: { manual: }\n    instructions: Greet the user, then advance to done.\n    transitions:\n      - to: done\n        description: The user was greeted.\n  done:\n    instructions: Stop.\n";
const CASE: &str = "title: Hello\ndescription: The model greets the user.\nsteps:\n  - send: \"hi\"\n  - reply:\n      includes: [\"hello\"]\n";

/// The workspace, the case's path, and the server's log file (in a second folder).
fn workspace() -> (tempfile::TempDir, std::path::PathBuf, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path().join("workflows/tiny/tests");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(ws.path().join("workflows/tiny/workflow.yaml"), WF).unwrap();
    let case = dir.join("hello.test.yaml");
    std::fs::write(&case, CASE).unwrap();
    (ws, case, tempfile::tempdir().unwrap())
}

/// A client that keeps every message the server sent (to look for the key in all of them).
struct Recorder {
    server: Server,
    seen: Vec<Value>,
}

impl Recorder {
    /// Starts the server against `fake` with `allow_live` in `initializationOptions`.
    fn start(root: &Path, fake: &Fake, log: &Path, allow_live: Option<bool>) -> Self {
        let server = Server::spawn_env(
            &[
                ("ARCHMAX_API_BASE_URL", &fake.base),
                ("ARCHMAX_API_KEY", KEY),
                ("ARCHMAX_MODEL", MODEL),
            ],
            log,
        );
        let mut r = Recorder {
            server,
            seen: Vec::new(),
        };
        let mut params = initialize_params(root, &["utf-16"]);
        params["capabilities"]["window"] = json!({"workDoneProgress": true});
        params["capabilities"]["workspace"] = json!({"codeLens": {"refreshSupport": true}});
        params["initializationOptions"] = match allow_live {
            Some(b) => json!({"runner": {"skipGrades": true}, "run": {"allowLive": b}}),
            None => json!({"runner": {"skipGrades": true}}),
        };
        let id = r.server.request("initialize", params);
        let init = r.response(id);
        let cmds = &init["result"]["capabilities"]["executeCommandProvider"]["commands"];
        assert!(
            cmds.as_array().unwrap().contains(&json!("wfx.recordCase")),
            "{init}"
        );
        r.server.notify("initialized", json!({}));
        r
    }

    /// The next message matching `pred`; every message is kept, server requests are
    /// answered with `null`. Hang guard [`DEADLINE`].
    fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let end = Instant::now() + DEADLINE;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let m = match self.server.rx.as_ref().unwrap().recv_timeout(left) {
                Ok(Wire::Message(m)) => m,
                Ok(Wire::Violation(e)) => panic!("non-frame while waiting for {what}: {e}"),
                Ok(Wire::Closed) => panic!("stdout closed while waiting for {what}"),
                Err(RecvTimeoutError::Timeout) => panic!("no {what} within {DEADLINE:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("reader gone: {what}"),
            };
            self.seen.push(m.clone());
            if m.get("method").is_some() && m.get("id").is_some() {
                let answer = json!({"jsonrpc": "2.0", "id": m["id"], "result": null});
                self.server.send(&answer);
            }
            if pred(&m) {
                return m;
            }
        }
    }

    fn response(&mut self, id: i64) -> Value {
        self.wait_for(&format!("response {id}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.server.request(method, params);
        self.response(id)
    }

    fn lenses(&mut self, path: &Path) -> Vec<(String, String)> {
        let r = self.call(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri(path)}}),
        );
        r["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["command"]["title"].as_str().unwrap().to_owned(),
                    l["command"]["command"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    fn record(&mut self, path: &Path) -> Value {
        self.call(
            "workspace/executeCommand",
            json!({"command": "wfx.recordCase", "arguments": [uri(path)]}),
        )
    }

    /// The `$/progress` values of `token`, in order.
    fn progress(&self, token: &Value) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|m| m["method"] == "$/progress" && m["params"]["token"] == *token)
            .map(|m| m["params"]["value"].clone())
            .collect()
    }

    /// Waits for the `end` of the recording's progress; returns its token.
    fn wait_end(&mut self) -> Value {
        let m = self.wait_for("the end of the recording", |m| {
            m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end"
        });
        m["params"]["token"].clone()
    }

    /// No message the server sent, and not its stderr, carries the key.
    fn assert_no_key(&self, log: &Path) {
        for m in &self.seen {
            assert!(!m.to_string().contains(KEY), "the key leaked: {m}");
        }
        let log = std::fs::read_to_string(log).unwrap();
        assert!(!log.contains(KEY), "the key leaked to stderr: {log}");
    }
}

fn open(r: &mut Recorder, path: &Path) {
    r.server
        .open(&uri(path), &std::fs::read_to_string(path).unwrap());
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn with_live_runs_off_there_is_no_record_lens_and_the_command_is_refused() {
    let (ws, case, logs) = workspace();
    let fake = Fake::start(10, |_| Reply::message(Some("hello"), json!([])));
    let log = logs.path().join("stderr.log");
    for allow in [None, Some(false)] {
        let mut r = Recorder::start(ws.path(), &fake, &log, allow);
        open(&mut r, &case);
        let lenses = r.lenses(&case);
        assert_eq!(
            lenses,
            [("▶ Run case (no agent)".to_owned(), "wfx.runCase".to_owned())],
            "{allow:?}"
        );
        let wf = ws.path().join("workflows/tiny/workflow.yaml");
        open(&mut r, &wf);
        assert!(
            !r.lenses(&wf).iter().any(|(t, _)| t.contains("Record")),
            "{allow:?}"
        );
        // A client that sends the command anyway is refused, for a case and a workflow.
        for target in [&case, &wf] {
            let answer = r.record(target);
            let msg = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(msg.contains("wfx.run.allowLive"), "{answer}");
        }
        r.assert_no_key(&log);
    }
    assert!(fake.requests().is_empty());
    assert_eq!(
        files(&ws.path().join("workflows/tiny/tests")),
        ["hello.test.yaml"]
    );
}

#[test]
fn turning_live_runs_on_shows_the_lens_and_a_recording_writes_a_redacted_cassette() {
    let (ws, case, logs) = workspace();
    let mut n = 0;
    // Two model calls: an unknown tool (its error goes back to the model), then a reply
    // that echoes the key, which the cassette must not keep.
    let fake = Fake::start(10, move |_| {
        n += 1;
        if n == 1 {
            Reply::message(None, json!([call("c1", "frobnicate", "{}")]))
        } else {
            Reply::message(Some(&format!("hello there, your key is {KEY}")), json!([]))
        }
    });
    let log = logs.path().join("stderr.log");
    let mut r = Recorder::start(ws.path(), &fake, &log, None);
    open(&mut r, &case);
    assert!(!r.lenses(&case).iter().any(|(t, _)| t.contains("Record")));
    r.server.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"wfx": {"run": {"allowLive": true}, "runner": {"skipGrades": true}}}}),
    );
    assert_eq!(
        r.lenses(&case),
        [
            ("▶ Run case (no agent)".to_owned(), "wfx.runCase".to_owned()),
            (
                "● Record with model".to_owned(),
                "wfx.recordCase".to_owned()
            ),
        ]
    );
    let wf = ws.path().join("workflows/tiny/workflow.yaml");
    open(&mut r, &wf);
    assert!(r.lenses(&wf).contains(&(
        "● Record all with model".to_owned(),
        "wfx.recordCase".to_owned()
    )));
    let answer = r.record(&case);
    assert!(answer.get("error").is_none(), "{answer}");
    let token = r.wait_end();
    r.wait_for("the code lens refresh", |m| {
        m["method"] == "workspace/codeLens/refresh"
    });
    let progress = r.progress(&token);
    let reports: Vec<&str> = progress
        .iter()
        .filter(|v| v["kind"] == "report")
        .map(|v| v["message"].as_str().unwrap())
        .collect();
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(
        reports,
        [
            "model call 1: agent · step 1 · state `start`",
            "model call 2: agent · step 1 · state `start`"
        ]
    );
    assert_eq!(progress.first().unwrap()["kind"], "begin");
    let end = progress.last().unwrap();
    assert_eq!(
        end["message"], "2 model call(s); 1/1 case(s) passed",
        "{end}"
    );
    let cassette = ws.path().join("workflows/tiny/tests/hello.cassette.json");
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("<ENV:ARCHMAX_API_KEY>"), "{text}");
    let parsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed["interactions"].as_array().unwrap().len(), 2);
    assert_eq!(
        files(&ws.path().join("workflows/tiny/tests")),
        ["hello.cassette.json", "hello.test.yaml"]
    );
    // The run lens now replays the recording; the record lens re-records.
    let lenses: Vec<String> = r.lenses(&case).into_iter().map(|(t, _)| t).collect();
    assert_eq!(lenses[0], "▶ Run case (cassette)");
    assert_eq!(lenses[1], "● Re-record with model");
    assert!(lenses[2].starts_with("✔ passed"), "{lenses:?}");
    r.assert_no_key(&log);
}

#[test]
fn cancelling_during_a_stalled_model_call_writes_nothing() {
    let (ws, case, logs) = workspace();
    let mut n = 0;
    // The first call asks for a second one; the second stalls far past the hang guard, so
    // only the cancel can end the recording in time.
    let fake = Fake::start(10, move |_| {
        n += 1;
        if n == 1 {
            Reply::message(None, json!([call("c1", "frobnicate", "{}")]))
        } else {
            let mut r = Reply::message(Some("hello"), json!([]));
            r.delay_ms = 2 * DEADLINE.as_millis() as u64;
            r
        }
    });
    let log = logs.path().join("stderr.log");
    let mut r = Recorder::start(ws.path(), &fake, &log, Some(true));
    open(&mut r, &case);
    // The client's own progress token (what VS Code sends), cancelled with that token.
    let answer = r.call(
        "workspace/executeCommand",
        json!({"command": "wfx.recordCase", "arguments": [uri(&case)], "workDoneToken": "client-7"}),
    );
    assert!(answer.get("error").is_none(), "{answer}");
    let m = r.wait_for("the report of model call 2", |m| {
        m["method"] == "$/progress"
            && m["params"]["value"]["message"]
                .as_str()
                .is_some_and(|s| s.starts_with("model call 2"))
    });
    let token = m["params"]["token"].clone();
    assert_eq!(token, "client-7");
    assert!(
        !r.seen
            .iter()
            .any(|m| m["method"] == "window/workDoneProgress/create"),
        "a token was created although the client gave one"
    );
    r.server.notify(
        "window/workDoneProgress/cancel",
        json!({"token": token.clone()}),
    );
    let end_token = r.wait_end();
    assert_eq!(end_token, token);
    let end = r.progress(&token).last().unwrap().clone();
    assert_eq!(end["message"], "cancelled: nothing was written");
    assert_eq!(fake.requests().len(), 2);
    // No cassette, no temporary file: the folder holds the case only.
    assert_eq!(
        files(&ws.path().join("workflows/tiny/tests")),
        ["hello.test.yaml"]
    );
    assert_eq!(
        files(&ws.path().join("workflows/tiny")),
        ["tests", "workflow.yaml"]
    );
    assert_eq!(files(ws.path()), ["workflows"]);
    // The lens still offers a first recording, and a new recording can start.
    assert!(r.lenses(&case).contains(&(
        "● Record with model".to_owned(),
        "wfx.recordCase".to_owned()
    )));
    r.assert_no_key(&log);
}

#[test]
fn without_the_model_variables_the_recording_ends_with_the_missing_ones() {
    let (ws, case, logs) = workspace();
    let log = logs.path().join("stderr.log");
    let server = Server::spawn_env(&[], &log);
    let mut r = Recorder {
        server,
        seen: Vec::new(),
    };
    let mut params = initialize_params(ws.path(), &["utf-16"]);
    params["capabilities"]["window"] = json!({"workDoneProgress": true});
    params["initializationOptions"] = json!({"run": {"allowLive": true}});
    let id = r.server.request("initialize", params);
    r.response(id);
    r.server.notify("initialized", json!({}));
    open(&mut r, &case);
    let answer = r.record(&case);
    assert!(answer.get("error").is_none(), "{answer}");
    let token = r.wait_end();
    let end = r.progress(&token).last().unwrap().clone();
    let msg = end["message"].as_str().unwrap();
    assert!(
        msg.starts_with("Missing required environment variables: ARCHMAX_API_BASE_URL"),
        "{msg}"
    );
    // The error is shown before the progress ends.
    assert!(
        r.seen.iter().any(|m| m["method"] == "window/showMessage"
            && m["params"]["message"]
                .as_str()
                .is_some_and(|t| t.starts_with("wfx: the recording failed: Missing required"))),
        "no error message"
    );
    assert_eq!(
        files(&ws.path().join("workflows/tiny/tests")),
        ["hello.test.yaml"]
    );
}

#[test]
fn record_all_on_workflow_yaml_records_every_case_the_model_plays() {
    let (ws, case, logs) = workspace();
    let tests = ws.path().join("workflows/tiny/tests");
    std::fs::write(tests.join("again.test.yaml"), CASE).unwrap();
    // A case with an agent script is played by the script: not recorded.
    std::fs::write(tests.join("scripted.test.yaml"), CASE).unwrap();
    std::fs::write(tests.join("scripted.agent.yaml"), "turns: []\n").unwrap();
    let fake = Fake::start(10, |_| Reply::message(Some("hello"), json!([])));
    let log = logs.path().join("stderr.log");
    let mut r = Recorder::start(ws.path(), &fake, &log, Some(true));
    let wf = ws.path().join("workflows/tiny/workflow.yaml");
    open(&mut r, &wf);
    open(&mut r, &case);
    let scripted = tests.join("scripted.test.yaml");
    open(&mut r, &scripted);
    // No record lens on the scripted case, and the command is refused for it.
    assert!(!r.lenses(&scripted).iter().any(|(t, _)| t.contains("ecord")));
    let refused = r.record(&scripted);
    let msg = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("agent script"), "{refused}");
    let answer = r.record(&wf);
    assert!(answer.get("error").is_none(), "{answer}");
    let token = r.wait_end();
    let progress = r.progress(&token);
    let reports = progress.iter().filter(|v| v["kind"] == "report").count();
    assert_eq!(reports, 2);
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(
        files(&tests),
        [
            "again.cassette.json",
            "again.test.yaml",
            "hello.cassette.json",
            "hello.test.yaml",
            "scripted.agent.yaml",
            "scripted.test.yaml"
        ]
    );
    r.assert_no_key(&log);
}
