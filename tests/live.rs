//! `wfx-lsp test --live` against a loopback fake model endpoint (issue 14): the fake plays
//! the example suite's agent scripts as a model would (one assistant message per run of
//! consecutive calls, text first) and plays the judge; the live verdicts must equal the
//! scripted run's, grades included, every request must have the expected shape, and the
//! planted key must appear in no output and no written file. Then one test per failure
//! class (401, 403, 429 with `Retry-After`, 5xx, a non-JSON body, a timeout, an unknown
//! tool, invalid argument JSON, a missing variable).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::fake_model::{Fake, Reply, Seen, call};
use wfx_runner::agent::{AgentAction, ScriptedAgent};

// Split so that no committed line holds a key-shaped value.
const KEY: &str = concat!("sk-", "live-PLANTED-7c1d9e");
const MODEL: &str = "fake-model-x";

fn wfx() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"));
    for k in [
        "ARCHMAX_API_BASE_URL",
        "ARCHMAX_API_KEY",
        "ARCHMAX_MODEL",
        "ARCHMAX_TEMPERATURE",
        "ARCHMAX_MAX_TOKENS",
        "ARCHMAX_PRICE_INPUT",
        "ARCHMAX_PRICE_OUTPUT",
        "ARCHMAX_PRICE_CACHE_READ",
    ] {
        c.env_remove(k);
    }
    c
}

fn is_judge(s: &Seen) -> bool {
    system(s).starts_with("You grade whether")
}

fn is_rubric(s: &Seen) -> bool {
    !is_judge(s) && system(s).contains("{\"verdict\"")
}

fn system(s: &Seen) -> String {
    s.body["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// The model's answers for one agent script: per run, the assistant messages that replay
/// its actions (a `say` opens a new message unless the current one has no calls yet).
fn replies_of(turns: &[Vec<AgentAction>], ids: &mut u64) -> Vec<Vec<Reply>> {
    turns
        .iter()
        .map(|turn| {
            let mut out = Vec::new();
            let mut content: Option<String> = None;
            let mut calls: Vec<Value> = Vec::new();
            for a in turn {
                match a {
                    AgentAction::Say(t) => {
                        if !calls.is_empty() {
                            out.push(Reply::message(content.as_deref(), Value::Array(calls)));
                            calls = Vec::new();
                            content = Some(t.clone());
                        } else {
                            content = Some(match content {
                                Some(c) => format!("{c}\n\n{t}"),
                                None => t.clone(),
                            });
                        }
                    }
                    AgentAction::Call { tool, input } => {
                        *ids += 1;
                        calls.push(call(&format!("fake_{ids}"), tool, &input.to_string()));
                    }
                }
            }
            if content.is_some() || !calls.is_empty() {
                out.push(Reply::message(content.as_deref(), Value::Array(calls)));
            }
            out
        })
        .collect()
}

/// Plays the scripts of `cases` in order, the judge (score 1 in prose with a fence) and
/// rubric hooks (`ok`).
struct Player {
    cases: Vec<Vec<Vec<Reply>>>,
    case: Option<usize>,
    run: usize,
    pos: usize,
}

impl Player {
    fn answer(&mut self, s: &Seen) -> Reply {
        if is_judge(s) {
            return Reply::message(
                Some(
                    "Looking at the record and the reply:\n```json\n{\"score\": 1, \"pass\": true, \"reason\": \"The reply meets it.\"}\n```",
                ),
                json!([]),
            );
        }
        if is_rubric(s) {
            return Reply::message(
                Some("{\"verdict\": \"ok\", \"reason\": \"friendly\"}"),
                json!([]),
            );
        }
        let msgs = s.body["messages"].as_array().cloned().unwrap_or_default();
        let real = msgs.iter().any(|m| {
            m["role"] == "assistant"
                && (m["content"].as_str().is_some_and(|c| !c.is_empty())
                    || m["tool_calls"].as_array().is_some_and(|cs| {
                        cs.iter().any(|c| c["function"]["name"] != "archmax_note")
                    }))
        });
        if !real {
            self.case = Some(self.case.map_or(0, |c| c + 1));
            self.run = 0;
            self.pos = 0;
        }
        let empty = Reply::message(None, json!([]));
        let Some(runs) = self.case.and_then(|c| self.cases.get(c)) else {
            return empty;
        };
        let Some(run) = runs.get(self.run) else {
            return empty;
        };
        if let Some(r) = run.get(self.pos).cloned() {
            self.pos += 1;
            let v: Value = serde_json::from_str(&r.body).unwrap();
            if v["choices"][0]["message"].get("tool_calls").is_none() {
                self.run += 1;
                self.pos = 0;
            }
            return r;
        }
        self.run += 1;
        self.pos = 0;
        empty
    }
}

fn all_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            all_files(&e.path(), out);
        } else {
            out.push(e.path());
        }
    }
}

/// (kind, status, score) of a record.
type RecordKey = (String, String, Value);

/// (id, status, [(kind, status, score)]) per case.
fn verdicts(result: &Value) -> Vec<(String, String, Vec<RecordKey>)> {
    result["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["verdict"]["status"].as_str().unwrap().to_owned(),
                c["records"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| {
                        (
                            r["kind"].as_str().unwrap().to_owned(),
                            r["status"].as_str().unwrap().to_owned(),
                            r["score"].clone(),
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

/// Every request of a live run has the chat-completions shape we promise.
fn assert_shapes(seen: &[Seen]) {
    let known: BTreeSet<&str> = wfx_runner::model::prompt::TOOL_ORDER
        .iter()
        .copied()
        .collect();
    for (i, s) in seen.iter().enumerate() {
        assert_eq!(s.method, "POST", "request {i}");
        assert_eq!(s.path, "/v1/chat/completions", "request {i}");
        assert_eq!(
            s.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert!(
            s.header("content-type")
                .unwrap()
                .starts_with("application/json")
        );
        assert_eq!(s.body["model"], MODEL, "request {i}");
        assert_eq!(s.body["stream"], false);
        let msgs = s.body["messages"].as_array().unwrap();
        assert_eq!(msgs[0]["role"], "system", "request {i}");
        let mut open: BTreeSet<String> = BTreeSet::new();
        for m in &msgs[1..] {
            let role = m["role"].as_str().unwrap();
            assert!(
                ["user", "assistant", "tool"].contains(&role),
                "request {i}: {role}"
            );
            if role == "tool" {
                let id = m["tool_call_id"].as_str().unwrap();
                assert!(open.remove(id), "request {i}: result for unknown call {id}");
            } else {
                assert!(
                    open.is_empty(),
                    "request {i}: calls {open:?} unanswered before a {role} message"
                );
            }
            for c in m["tool_calls"].as_array().into_iter().flatten() {
                open.insert(c["id"].as_str().unwrap().to_owned());
            }
        }
        assert!(open.is_empty(), "request {i}: unanswered calls {open:?}");
        let parked = system(s).contains("## This run is parked");
        match s.body.get("tools") {
            None => assert!(
                parked || is_judge(s) || is_rubric(s),
                "request {i}: an agent call in a working state offers tools"
            ),
            Some(tools) => {
                assert!(!parked, "request {i}: a reply-only call offers tools");
                for t in tools.as_array().unwrap() {
                    assert_eq!(t["type"], "function");
                    let name = t["function"]["name"].as_str().unwrap();
                    assert!(
                        known.contains(name) || name.starts_with("archmax_workflow_"),
                        "request {i}: unexpected tool {name}"
                    );
                    assert_eq!(t["function"]["parameters"]["type"], "object");
                }
                // A state whose skills grant nothing never offers archmax_reset
                // (forbid_always in the example).
                assert!(
                    tools
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|t| t["function"]["name"] != "archmax_reset")
                );
            }
        }
    }
}

#[test]
fn live_run_over_the_example_suite_equals_the_scripted_run_and_never_shows_the_key() {
    let ws = support::corpus_copy();
    let root = ws.path();
    let tests_dir = root.join("workflows/order-lookup/tests");
    // The runner's case order (discovery order), from a scripted run.
    let listed = wfx()
        .current_dir(root)
        .args(["test", "order-lookup", "--skip-grades", "--json"])
        .output()
        .unwrap();
    let scripted_skip: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let mut ids = 0;
    let cases: Vec<Vec<Vec<Reply>>> = scripted_skip["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let id = c["id"].as_str().unwrap();
            let path = tests_dir.join(format!("{id}.agent.yaml"));
            let text = std::fs::read_to_string(&path).unwrap();
            let agent = ScriptedAgent::parse(id, &text).unwrap();
            replies_of(agent.turns().unwrap(), &mut ids)
        })
        .collect();
    assert_eq!(cases.len(), 9);
    let player = Arc::new(Mutex::new(Player {
        cases,
        case: None,
        run: 0,
        pos: 0,
    }));
    let p2 = player.clone();
    let fake = Fake::start(2000, move |s| p2.lock().unwrap().answer(s));
    std::fs::write(
        root.join(".env"),
        format!(
            "# planted\nARCHMAX_API_BASE_URL={}\nARCHMAX_API_KEY={KEY}\n",
            fake.base
        ),
    )
    .unwrap();

    // The scripted agents with the model judge over the same endpoint: the reference run.
    let env = wfx_runner::model::config::ModelEnv {
        base_url: fake.base.clone(),
        api_key: KEY.into(),
        model: MODEL.into(),
        temperature: None,
        max_tokens: None,
        prices: Default::default(),
    };
    let fs = wfx_runner::disk::DiskFiles::new(root);
    let clock = wfx_runner::clock::SystemClock;
    let mut ro = wfx_runner::suite::RunOptions::new(&fs, &clock);
    ro.grades = wfx_runner::grade::GradePolicy {
        skip: false,
        model: Some(wfx_runner::grade::ModelConfig {
            base_url: fake.base.clone(),
            model: MODEL.into(),
        }),
    };
    let host = || -> Box<dyn wfx_runner::script_host::ScriptHost> {
        Box::new(wfx_runner::sandbox::QuickJsHost::default())
    };
    ro.script_host = Some(&host);
    let usage = Arc::new(Mutex::new(wfx_runner::model::UsageLog::default()));
    let judge = || -> Box<dyn wfx_runner::grade::Judge> {
        Box::new(wfx_runner::model::judge::ModelJudge::new(
            Box::new(wfx_lsp::live::HttpTransport::new(&env)),
            wfx_runner::model::judge::JudgeSettings {
                model: MODEL.into(),
                temperature: None,
                max_tokens: None,
                timeout_ms: Some(10_000),
            },
            usage.clone(),
        ))
    };
    ro.judge = Some(&judge);
    let dir = wfx_schemas::workspace::WorkflowDir {
        root: String::new(),
        slug: "order-lookup".into(),
    };
    let scripted = wfx_runner::suite::run_workflow(&ro, &dir, &mut |_| {}).unwrap();
    let scripted = serde_json::to_value(&scripted.result).unwrap();
    let judge_calls = fake.requests().len();
    assert!(
        judge_calls >= 5,
        "the scripted run's grades asked the judge ({judge_calls})"
    );

    // The selection rule (issue 15): an agent script wins over `--live`, so the model plays
    // only cases without one; remove them all so it plays every case.
    for c in scripted_skip["results"].as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        std::fs::remove_file(tests_dir.join(format!("{id}.agent.yaml"))).unwrap();
    }
    let out = wfx()
        .current_dir(root)
        .env("ARCHMAX_MODEL", MODEL)
        .env("ARCHMAX_PRICE_INPUT", "3")
        .env("ARCHMAX_PRICE_OUTPUT", "15")
        .args([
            "test",
            "order-lookup",
            "--live",
            "--json",
            "--reporter",
            "junit",
            "--reporter",
            "markdown",
            "--reporter",
            "json",
            "--reporter",
            "html",
            "--out",
            "results",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let live: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(verdicts(&live), verdicts(&scripted));
    // Grades ran (not skipped) in both.
    let graded = verdicts(&live)
        .iter()
        .flat_map(|c| c.2.clone())
        .filter(|r| r.0 == "grade.closedQA" && r.1 == "passed" && r.2 == json!(1.0))
        .count();
    assert!(graded >= 5, "{graded}");

    let seen = fake.requests();
    let live_requests = &seen[judge_calls..];

    // Usage and cost: per case and per suite, in every output. The fake reports 100
    // prompt and 20 completion tokens per call; $3 / $15 per million.
    let mut calls = 0;
    for c in live["results"].as_array().unwrap() {
        let u = &c["usage"];
        let n = u["calls"].as_u64().unwrap();
        assert!(n >= 1, "{c}");
        assert_eq!(u["promptTokens"].as_u64().unwrap(), 100 * n);
        assert_eq!(u["completionTokens"].as_u64().unwrap(), 20 * n);
        let cost = u["costUsd"].as_f64().unwrap();
        assert!((cost - 0.0006 * n as f64).abs() < 1e-9, "{cost}");
        calls += n;
    }
    assert_eq!(
        calls as usize,
        live_requests.len(),
        "every request is counted once"
    );
    assert_eq!(live["usage"]["calls"].as_u64().unwrap(), calls);
    assert!(
        stderr.contains(&format!(
            "order-lookup: {calls} model calls · {} tokens in, {} out · $",
            100 * calls,
            20 * calls
        )),
        "{stderr}"
    );
    let read = |name: &str| std::fs::read_to_string(root.join("results").join(name)).unwrap();
    assert!(read("junit.xml").contains(&format!(
        "<property name=\"wfx.tokens.prompt\" value=\"{}\"/>",
        100 * live["results"][0]["usage"]["calls"].as_u64().unwrap()
    )));
    assert!(read("report.md").contains(&format!("Model use: {calls} model calls")));
    assert!(read("report.html").contains(&format!("Model use: {calls} model calls")));
    let history: Value =
        serde_json::from_str(read("history.jsonl").lines().last().unwrap()).unwrap();
    assert_eq!(history["usage"]["calls"].as_u64().unwrap(), calls);
    assert!(live_requests.len() > 20, "{}", live_requests.len());
    assert_shapes(live_requests);
    assert!(
        live_requests.iter().any(is_rubric),
        "the rubric hook asked the model"
    );

    // The key: nowhere in the output or in any file the run wrote.
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
    let mut files = Vec::new();
    all_files(root, &mut files);
    let reports: Vec<_> = files
        .iter()
        .filter(|f| f.starts_with(root.join("results")))
        .collect();
    assert!(reports.len() >= 5, "{reports:?}");
    for f in &files {
        if f.file_name().is_some_and(|n| n == ".env") {
            continue;
        }
        let bytes = std::fs::read(f).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "the key leaked into {}",
            f.display()
        );
    }
}

// ---- failure classes -------------------------------------------------------------

const TINY_WF: &str = "title: Tiny\ninstructions: Be brief.\ntests:\n  caseTimeoutMs: 3000\nstates:\n  start:\n    triggers: { manual: }\n    instructions: Greet the user, then advance to done.\n    transitions:\n      - to: done\n        description: The user was greeted.\n  done:\n    instructions: Stop.\n";
const TINY_CASE: &str = "title: Hello\ndescription: The model greets the user.\nsteps:\n  - send: \"hi\"\n  - reply:\n      includes: [\"hello\"]\n";

/// A one-state workspace with one case, and a fake answering with `handler`.
fn tiny(handler: impl FnMut(&Seen) -> Reply + Send + 'static) -> (tempfile::TempDir, Fake) {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path().join("workflows/tiny/tests");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(ws.path().join("workflows/tiny/workflow.yaml"), TINY_WF).unwrap();
    std::fs::write(dir.join("hello.test.yaml"), TINY_CASE).unwrap();
    let fake = Fake::start(50, handler);
    (ws, fake)
}

/// Runs `test tiny --live --json`: (exit code, stdout + stderr).
fn run_tiny(ws: &Path, fake: &Fake) -> (i32, String) {
    let out = wfx()
        .current_dir(ws)
        .env("ARCHMAX_API_BASE_URL", &fake.base)
        .env("ARCHMAX_API_KEY", KEY)
        .env("ARCHMAX_MODEL", MODEL)
        .args(["test", "tiny", "--live", "--json"])
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains(KEY), "the key leaked: {text}");
    (out.status.code().unwrap(), text)
}

fn hello() -> Reply {
    Reply::message(Some("hello there"), json!([]))
}

#[test]
fn tiny_workspace_is_clean_and_passes_live() {
    let (ws, fake) = tiny(|_| hello());
    let check = wfx()
        .current_dir(ws.path())
        .args(["check", "."])
        .output()
        .unwrap();
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let (code, text) = run_tiny(ws.path(), &fake);
    assert_eq!(code, 0, "{text}");
    assert_eq!(fake.requests().len(), 1);
}

#[test]
fn unauthorized_is_not_retried_and_names_the_variable() {
    let (ws, fake) = tiny(|_| Reply::status(401, "application/json", "{\"error\":\"bad key\"}"));
    let (code, text) = run_tiny(ws.path(), &fake);
    assert_eq!(code, 1);
    assert!(
        text.contains("refused the key (HTTP 401)") && text.contains("ARCHMAX_API_KEY"),
        "{text}"
    );
    assert_eq!(fake.requests().len(), 1);
}

#[test]
fn forbidden_is_not_retried() {
    let (ws, fake) = tiny(|_| Reply::status(403, "text/plain", "forbidden"));
    let (code, text) = run_tiny(ws.path(), &fake);
    assert_eq!(code, 1);
    assert!(text.contains("refused the key (HTTP 403)"), "{text}");
    assert_eq!(fake.requests().len(), 1);
}

#[test]
fn rate_limit_is_retried_after_retry_after() {
    let mut n = 0;
    let (ws, fake) = tiny(move |_| {
        n += 1;
        if n == 1 {
            let mut r = Reply::status(429, "application/json", "{\"error\":\"slow down\"}");
            r.headers.push(("Retry-After".into(), "1".into()));
            r
        } else {
            hello()
        }
    });
    let (code, text) = run_tiny(ws.path(), &fake);
    assert_eq!(code, 0, "{text}");
    assert_eq!(fake.requests().len(), 2);
}

#[test]
fn server_errors_are_retried_a_bounded_number_of_times() {
    let (ws, fake) = tiny(|_| {
        let mut r = Reply::status(503, "text/plain", "upstream overloaded");
        r.headers.push(("Retry-After".into(), "0".into()));
        r
    });
    let (code, text) = run_tiny(ws.path(), &fake);
    assert_eq!(code, 1);
    assert!(
        text.contains("failed (HTTP 503) and the retries ran out: upstream overloaded"),
        "{text}"
    );
    assert_eq!(fake.requests().len(), 4);
}

#[test]
fn a_non_json_body_is_reported_with_status_type_and_snippet() {
    let (ws, fake) =
        tiny(|_| Reply::status(200, "text/html", "<html><body>Gateway login</body></html>"));
    let (code, text) = run_tiny(ws.path(), &fake);
    assert_eq!(code, 1);
    assert!(
        text.contains("HTTP 200 with a body that is not a chat completion (content type `text/html`): <html><body>Gateway login"),
        "{text}"
    );
}

#[test]
fn a_key_the_endpoint_echoes_in_an_error_is_redacted() {
    // Break-it pass 3, finding F4: a 400 body echoing the Authorization header reached the
    // error line (and the HTML report, the editor) verbatim. `run_tiny` asserts the key is
    // in no output; the placeholder shows where it was.
    let body = format!("{{\"error\":\"bad key Bearer {KEY}\"}}");
    let (ws, fake) = tiny(move |_| Reply::status(400, "application/json", &body));
    let (code, text) = run_tiny(ws.path(), &fake);
    assert_eq!(code, 1);
    assert!(
        text.contains("rejected the request (HTTP 400)")
            && text.contains("bad key Bearer <ENV:ARCHMAX_API_KEY>"),
        "{text}"
    );
}

#[test]
fn a_key_the_model_echoes_in_its_reply_reaches_no_output_or_report() {
    // F4 again, through a reply: spelled with a JSON escape (`\u0073` is `s`), so only the
    // decoded strings show the key. The narration (`--verbose`), `--json` and every report
    // under `--out` are searched for it.
    let escaped = format!("\\u0073{}", &KEY[1..]);
    let body = format!(
        "{{\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":\"hello, key is Bearer {escaped}\"}},\"finish_reason\":\"stop\"}}],\"usage\":{{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}}}"
    );
    assert!(!body.contains(KEY));
    let (ws, fake) = tiny(move |_| Reply::status(200, "application/json", &body));
    let (code, text) = run_tiny_with_reports(ws.path(), &fake);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("key is Bearer <ENV:ARCHMAX_API_KEY>"),
        "{text}"
    );
}

/// Runs `test tiny --live --json --verbose` with every reporter under `--out`: (exit code,
/// stdout + stderr). Asserts that the key is in neither stream nor in any file written
/// (`results.json`, `report.html`, `report.md`, `junit.xml`, `history.jsonl`).
fn run_tiny_with_reports(ws: &Path, fake: &Fake) -> (i32, String) {
    let out_dir = ws.join("out");
    let out = wfx()
        .current_dir(ws)
        .env("ARCHMAX_API_BASE_URL", &fake.base)
        .env("ARCHMAX_API_KEY", KEY)
        .env("ARCHMAX_MODEL", MODEL)
        .args(["test", "tiny", "--live", "--json", "--verbose", "--out"])
        .arg(&out_dir)
        .args([
            "--reporter",
            "json",
            "--reporter",
            "html",
            "--reporter",
            "markdown",
            "--reporter",
            "junit",
        ])
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains(KEY), "the key leaked: {text}");
    let mut files = Vec::new();
    all_files(&out_dir, &mut files);
    assert!(files.len() >= 4, "{files:?}");
    for f in files {
        let content = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        assert!(
            !content.contains(KEY),
            "the key leaked into {}",
            f.display()
        );
    }
    (out.status.code().unwrap(), text)
}

#[test]
fn a_key_split_across_content_parts_or_escaped_in_arguments_reaches_no_output() {
    // Issue 24, item 1: the client redacted the body's text and its decoded strings, but the
    // parser builds strings of its own: it joins `content` parts (a key split across two
    // parts was whole only after the join) and decodes `arguments` given as a JSON string
    // (a `\u` escape inside that string survived the body's decoding as text). Now every
    // string of the parsed answer is redacted after the parser built it.
    let (head, tail) = KEY.split_at(7);
    // `arguments` is JSON text holding the key with its `s` and `-` escaped: the body's
    // decoding leaves `\u0073k\u002d…`, which only the parse of `arguments` decodes.
    let args = format!(
        "{{\"to\":\"done\",\"reason\":\"key \\u0073k\\u002d{}\"}}",
        &KEY[3..]
    );
    let body = json!({
        "choices": [{"index": 0, "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": format!("hello, key is {head}")},
                {"type": "text", "text": format!("{tail} ok")},
            ],
            "tool_calls": [call("c1", "archmax_advance", &args)],
        }, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    })
    .to_string();
    assert!(!body.contains(KEY), "{body}");
    let mut n = 0;
    let (ws, fake) = tiny(move |_| {
        n += 1;
        if n == 1 {
            Reply::status(200, "application/json", &body)
        } else {
            Reply::message(None, json!([]))
        }
    });
    let (code, text) = run_tiny_with_reports(ws.path(), &fake);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("hello, key is <ENV:ARCHMAX_API_KEY> ok"),
        "the joined content is shown, redacted: {text}"
    );
    assert!(
        text.contains("key <ENV:ARCHMAX_API_KEY>"),
        "the decoded argument is shown, redacted: {text}"
    );
}

#[test]
fn a_slow_endpoint_times_out_within_the_case_budget() {
    let (ws, fake) = tiny(|_| {
        let mut r = hello();
        r.delay_ms = 6_000;
        r
    });
    let (code, text) = run_tiny(ws.path(), &fake);
    assert_eq!(code, 1);
    assert!(text.contains("did not answer within"), "{text}");
}

#[test]
fn an_unknown_tool_goes_back_to_the_model_as_an_error_result() {
    let mut n = 0;
    let (ws, fake) = tiny(move |_| {
        n += 1;
        if n == 1 {
            Reply::message(None, json!([call("c1", "frobnicate", "{}")]))
        } else {
            hello()
        }
    });
    let (code, text) = run_tiny(ws.path(), &fake);
    let seen = fake.requests();
    assert_eq!(seen.len(), 2, "{text}");
    let msgs = seen[1].body["messages"].as_array().unwrap();
    let result = msgs.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(result["tool_call_id"], "c1");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("`frobnicate` is not granted"),
        "{result}"
    );
    // The error result makes `succeeded` false but the reply assertion holds.
    assert_eq!(code, 0, "{text}");
}

#[test]
fn invalid_argument_json_goes_back_to_the_model_verbatim_with_an_error() {
    let mut n = 0;
    let (ws, fake) = tiny(move |_| {
        n += 1;
        if n == 1 {
            Reply::message(
                Some("hello"),
                json!([call("c1", "archmax_advance", "{to: done")]),
            )
        } else {
            Reply::message(None, json!([]))
        }
    });
    let (code, text) = run_tiny(ws.path(), &fake);
    assert_eq!(code, 0, "{text}");
    let seen = fake.requests();
    assert_eq!(seen.len(), 2, "{text}");
    let msgs = seen[1].body["messages"].as_array().unwrap();
    let asked = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(asked["content"], "hello");
    assert_eq!(asked["tool_calls"][0]["function"]["arguments"], "{to: done");
    let result = msgs.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("are not valid JSON ({to: done)"),
        "{result}"
    );
}

#[test]
fn a_missing_variable_is_named_before_any_case_runs() {
    let (ws, fake) = tiny(|_| hello());
    let out = wfx()
        .current_dir(ws.path())
        .env("ARCHMAX_API_BASE_URL", &fake.base)
        .env("ARCHMAX_MODEL", MODEL)
        .args(["test", "tiny", "--live"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("Missing required environment variable: ARCHMAX_API_KEY."),
        "{err}"
    );
    assert!(!err.contains("Hello"), "no case ran: {err}");
    assert!(fake.requests().is_empty());
}

#[test]
fn without_live_no_request_is_ever_made() {
    let (ws, fake) = tiny(|_| hello());
    let out = wfx()
        .current_dir(ws.path())
        .env("ARCHMAX_API_BASE_URL", &fake.base)
        .env("ARCHMAX_API_KEY", KEY)
        .env("ARCHMAX_MODEL", MODEL)
        .args(["test", "tiny"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(fake.requests().is_empty());
}

#[test]
fn a_secret_set_over_the_redaction_bounds_stops_recording_and_export_before_they_start() {
    // Issue 24, item 3 (docs/cassettes.md, "Secrets"): a recording redacted with only part of
    // the secret values would look safe, so a live run that may record, and export-agent,
    // refuse before any model call or write; `--record none` writes nothing and runs.
    let (ws, fake) = tiny(|_| hello());
    let value = |i: usize| format!("{i:08}-{}", "v".repeat(991));
    let env: String = (0..2_000)
        .map(|i| format!("K{i}_TOKEN={}\n", value(i)))
        .collect();
    std::fs::write(ws.path().join(".env"), env).unwrap();
    let bound = format!(
        "more than the {} values or {} KiB that redaction by value takes",
        wfx_schemas::cassette::Secrets::MAX_VALUES,
        wfx_schemas::cassette::Secrets::MAX_BYTES / 1024
    );
    let run = |args: &[&str]| {
        let out = wfx()
            .current_dir(ws.path())
            .env("ARCHMAX_API_BASE_URL", &fake.base)
            .env("ARCHMAX_API_KEY", KEY)
            .env("ARCHMAX_MODEL", MODEL)
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!err.contains(KEY) && !err.contains(&value(3)), "{err}");
        (out.status.code().unwrap(), err)
    };
    let (code, err) = run(&["test", "tiny", "--live"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&bound), "{err}");
    assert!(fake.requests().is_empty(), "no model call was made");
    assert!(
        !ws.path()
            .join("workflows/tiny/tests/hello.cassette.json")
            .exists()
    );
    let (code, err) = run(&["export-agent", "workflows/tiny/tests/hello.test.yaml"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&bound), "{err}");
    let (code, err) = run(&["test", "tiny", "--live", "--record", "none"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(fake.requests().len(), 1);
}

#[test]
fn a_key_escaped_inside_the_judge_verdict_reaches_no_output() {
    // Issue 24, item 4: the judge's answer is text holding JSON; its verdict parser decodes
    // that JSON, so a key spelled with `\u` escapes inside the verdict's `reason` was whole
    // only in the grade's reason (shown by every reporter). The judge redacts what its
    // parser builds, as the client does for the answer itself.
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path().join("workflows/tiny/tests");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        ws.path().join("workflows/tiny/workflow.yaml"),
        TINY_WF.replace(
            "tests:\n  caseTimeoutMs: 3000\n",
            "tests:\n  caseTimeoutMs: 3000\n  judge:\n    model: fake-judge\n",
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("hello.test.yaml"),
        format!("{TINY_CASE}  - grade: {{ closedQA: \"greets the user\", atLeast: 0.5 }}\n"),
    )
    .unwrap();
    let escaped = format!("\\u0073k\\u002d{}", &KEY[3..]);
    let fake = Fake::start(50, move |s| {
        if is_judge(s) {
            Reply::message(
                Some(&format!(
                    "{{\"score\": 1, \"pass\": true, \"reason\": \"it greets; key {escaped}\"}}"
                )),
                json!([]),
            )
        } else {
            hello()
        }
    });
    let (code, text) = run_tiny_with_reports(ws.path(), &fake);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("it greets; key <ENV:ARCHMAX_API_KEY>"),
        "the decoded reason is shown, redacted: {text}"
    );
    // The recording holds the judge's answer as text: the escaped spelling is redacted too
    // (Secrets::redact reads a text's JSON escapes), so a replay with no key (CI) cannot
    // decode it back into a reason.
    let cassette = std::fs::read_to_string(dir.join("hello.cassette.json")).unwrap();
    assert!(!cassette.contains(&KEY[3..]), "{cassette}");
    let out = wfx()
        .current_dir(ws.path())
        .args(["test", "tiny", "--json"])
        .output()
        .unwrap();
    let replay = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{replay}");
    assert!(!replay.contains(&KEY[3..]), "{replay}");
    assert!(
        replay.contains("it greets; key <ENV:ARCHMAX_API_KEY>"),
        "{replay}"
    );
}
