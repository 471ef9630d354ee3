//! Record and replay at the transport level (issue 15; docs/cassettes.md), offline: a
//! conversation recorded through a [`Tape`], then replayed exactly and with one change per
//! mismatch class (content, tool arguments, tool name, tool result, offered tools, an extra
//! call, leftover calls, the judge's queue), prompt drift lenient and strict, `--record
//! new` going live at the first difference; then whole cases through `run_workflow`: a
//! planted key never reaches the file (and the redacted file still replays), and a
//! cancelled or failed recording writes nothing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers"
)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wfx_runner::cassette::tape::{RecordingInfo, Tape, TapeMode};
use wfx_runner::cassette::{LiveModel, RecordMode, save};
use wfx_runner::clock::FixedClock;
use wfx_runner::disk::DiskFiles;
use wfx_runner::model::config::ModelEnv;
use wfx_runner::model::wire::{
    CallMeta, CallRole, ChatMessage, ChatRequest, ChatResponse, ChatTransport, ModelError, Role,
    ToolArgs, ToolCall, ToolSpec, Usage,
};
use wfx_runner::suite::{RunOptions, run_workflow};
use wfx_schemas::cassette::{Cassette, InputDigests, RecordedClock, Secrets};
use wfx_schemas::workspace::WorkflowDir;

/// Answers from a queue; counts calls.
struct Canned {
    answers: VecDeque<Result<ChatResponse, ModelError>>,
    calls: Arc<AtomicUsize>,
}

impl ChatTransport for Canned {
    fn complete(&mut self, _: &ChatRequest, _: &CallMeta) -> Result<ChatResponse, ModelError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.answers
            .pop_front()
            .unwrap_or_else(|| Err(ModelError::Transport("nothing left".into())))
    }
}

fn canned(answers: Vec<Result<ChatResponse, ModelError>>) -> (Box<Canned>, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    (
        Box::new(Canned {
            answers: answers.into(),
            calls: calls.clone(),
        }),
        calls,
    )
}

fn answer(content: Option<&str>, calls: &[(&str, &str, Value)]) -> ChatResponse {
    ChatResponse {
        content: content.map(str::to_owned),
        tool_calls: calls
            .iter()
            .map(|(id, name, args)| ToolCall {
                id: (*id).into(),
                name: (*name).into(),
                arguments: ToolArgs::Json(args.clone()),
            })
            .collect(),
        finish_reason: Some("stop".into()),
        usage: Some(Usage {
            prompt_tokens: 10,
            completion_tokens: 2,
            cached_tokens: 0,
        }),
        model: None,
    }
}

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("the {name} tool"),
        parameters: json!({"type": "object"}),
    }
}

fn meta(role: CallRole, run: u64, call: u64) -> CallMeta {
    CallMeta {
        role,
        timeout_ms: None,
        run,
        call,
        step: (role == CallRole::Agent).then_some(1),
        state: (role == CallRole::Agent).then(|| "intake".to_owned()),
    }
}

/// The pieces of the recorded conversation a test may change.
#[derive(Clone)]
struct Conv {
    system: &'static str,
    user: &'static str,
    tools: Vec<&'static str>,
    call_name: &'static str,
    call_args: Value,
    result: &'static str,
}

impl Default for Conv {
    fn default() -> Self {
        Self {
            system: "You are the agent.\nBe brief.",
            user: "hi",
            tools: vec!["lookup", "archmax_advance"],
            call_name: "lookup",
            call_args: json!({"order": "ORD-1"}),
            result: "found",
        }
    }
}

/// The two agent requests of the conversation, then the judge's.
fn requests(c: &Conv) -> Vec<(ChatRequest, CallMeta)> {
    let tools: Vec<ToolSpec> = c.tools.iter().map(|t| tool(t)).collect();
    let first = vec![
        ChatMessage::text(Role::System, c.system),
        ChatMessage::text(Role::User, c.user),
    ];
    let mut second = first.clone();
    second.push(ChatMessage {
        role: Role::Assistant,
        content: None,
        tool_calls: vec![ToolCall {
            id: "c1".into(),
            name: c.call_name.into(),
            arguments: ToolArgs::Json(c.call_args.clone()),
        }],
        tool_call_id: None,
    });
    second.push(ChatMessage::tool_result("c1", c.result));
    let req = |messages: Vec<ChatMessage>, tools: Vec<ToolSpec>| ChatRequest {
        model: "m".into(),
        messages,
        tools,
        temperature: None,
        max_tokens: None,
    };
    vec![
        (req(first, tools.clone()), meta(CallRole::Agent, 0, 0)),
        (req(second, tools), meta(CallRole::Agent, 0, 1)),
        (
            req(
                vec![
                    ChatMessage::text(Role::System, "You grade."),
                    ChatMessage::text(Role::User, "Criterion: polite"),
                ],
                Vec::new(),
            ),
            meta(CallRole::Judge, 0, 0),
        ),
    ]
}

fn answers() -> Vec<Result<ChatResponse, ModelError>> {
    vec![
        Ok(answer(None, &[("c1", "lookup", json!({"order": "ORD-1"}))])),
        Ok(answer(Some("Order ORD-1 is on its way."), &[])),
        Ok(answer(Some("{\"score\": 1, \"reason\": \"polite\"}"), &[])),
    ]
}

fn info() -> RecordingInfo {
    RecordingInfo {
        recorded_with: "wfx-lsp test".into(),
        clock: RecordedClock {
            start_ms: 0,
            step_ms: 1,
            zone: "UTC".into(),
        },
        model: "m".into(),
        endpoint: "127.0.0.1".into(),
        case: "c".into(),
        inputs: InputDigests {
            case: String::new(),
            workflow: String::new(),
        },
    }
}

/// The conversation recorded through a tape.
fn recording() -> Cassette {
    let (live, _) = canned(answers());
    let tape = Tape::record(live);
    let mut t = tape.transport();
    for (req, meta) in requests(&Conv::default()) {
        t.complete(&req, &meta).unwrap();
    }
    tape.cassette(&info(), "1970-01-01T00:00:00Z".into())
        .unwrap()
}

/// Replays `conv`'s calls (the first `calls` of them) on the recording: each answer or
/// error, then the tape.
fn replay(conv: &Conv, calls: usize, strict: bool) -> (Vec<Result<ChatResponse, String>>, Tape) {
    let tape = Tape::replay(
        "c.cassette.json",
        recording(),
        TapeMode::Replay,
        None,
        strict,
    );
    let mut t = tape.transport();
    let out = requests(conv)
        .into_iter()
        .take(calls)
        .map(|(req, meta)| t.complete(&req, &meta).map_err(|e| e.to_string()))
        .collect();
    (out, tape)
}

const HINT: &str = "; re-record with `--live --record all`";

#[test]
fn an_identical_run_replays_every_answer_and_uses_no_network() {
    let c = recording();
    assert_eq!(c.interactions.len(), 3);
    assert_eq!(c.interactions[1].request.messages_from, 2);
    assert_eq!(
        c.interactions[1].request.messages.len(),
        1,
        "only the new tool result"
    );
    assert_eq!(c.prompts.len(), 2);
    assert_eq!(c.toolsets.len(), 1);
    let (out, tape) = replay(&Conv::default(), 3, true);
    let expected: Vec<Result<ChatResponse, String>> = answers()
        .into_iter()
        .map(|a| a.map_err(|e| e.to_string()))
        .collect();
    assert_eq!(out, expected);
    assert_eq!(tape.error(), None);
    assert_eq!(tape.leftovers(false), None);
    assert!(tape.warnings().is_empty());
}

/// The one error of a replay whose calls differ from the recording's at `call`.
fn mismatch(conv: Conv, call: usize) -> String {
    let (out, tape) = replay(&conv, 3, false);
    for (i, r) in out.iter().enumerate().take(call) {
        assert!(r.is_ok(), "call {i}: {r:?}");
    }
    let e = out[call].clone().unwrap_err();
    assert_eq!(tape.error().as_deref(), Some(e.as_str()));
    assert!(e.ends_with(HINT), "{e}");
    assert!(!e.contains('\n'), "{e}");
    e
}

#[test]
fn each_mismatch_class_is_one_precise_line() {
    let at0 = "cassette `c.cassette.json`: interaction 0 (agent, run 0, call 0, step 1, state `intake`) does not match the run (agent, run 0, call 0, step 1, state `intake`): ";
    let at1 = "cassette `c.cassette.json`: interaction 1 (agent, run 0, call 1, step 1, state `intake`) does not match the run (agent, run 0, call 1, step 1, state `intake`): ";
    let cases: Vec<(Conv, usize, String)> = vec![
        (
            Conv {
                user: "ho",
                ..Conv::default()
            },
            0,
            format!("{at0}message 1 (user): content: expected \"hi\", got \"ho\"{HINT}"),
        ),
        (
            Conv {
                call_args: json!({"order": "ORD-2"}),
                ..Conv::default()
            },
            1,
            format!(
                "{at1}message 2 (assistant): tool call 1 (`lookup`) arguments: expected {{\"order\":\"ORD-1\"}}, got {{\"order\":\"ORD-2\"}}{HINT}"
            ),
        ),
        (
            Conv {
                call_name: "archmax_advance",
                ..Conv::default()
            },
            1,
            format!(
                "{at1}message 2 (assistant): tool call 1 name: expected `lookup`, got `archmax_advance`{HINT}"
            ),
        ),
        (
            Conv {
                result: "not found",
                ..Conv::default()
            },
            1,
            format!("{at1}message 3 (tool): content: expected \"found\", got \"not found\"{HINT}"),
        ),
        (
            Conv {
                tools: vec!["lookup"],
                ..Conv::default()
            },
            0,
            format!("{at0}offered tools: expected [lookup, archmax_advance], got [lookup]{HINT}"),
        ),
    ];
    for (conv, call, expected) in cases {
        assert_eq!(mismatch(conv, call), expected);
    }
    // Whitespace at the ends of a content is not a difference.
    let (out, _) = replay(
        &Conv {
            user: "  hi\n",
            ..Conv::default()
        },
        3,
        true,
    );
    assert!(out.iter().all(Result::is_ok), "{out:?}");
}

#[test]
fn an_extra_call_and_leftover_calls_are_errors() {
    // One agent call more than recorded.
    let tape = Tape::replay(
        "c.cassette.json",
        recording(),
        TapeMode::Replay,
        None,
        false,
    );
    let mut t = tape.transport();
    let reqs = requests(&Conv::default());
    for (req, meta) in &reqs {
        t.complete(req, meta).unwrap();
    }
    let (mut req, _) = reqs[1].clone();
    req.messages.push(ChatMessage::text(
        Role::Assistant,
        "Order ORD-1 is on its way.",
    ));
    req.messages.push(ChatMessage::text(Role::User, "thanks"));
    let e = t
        .complete(&req, &meta(CallRole::Agent, 0, 2))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "cassette `c.cassette.json`: the run made a model call the recording does not have (agent, run 0, call 2, step 1, state `intake`): all 2 recorded agent calls were used; its first new message: \"thanks\"{HINT}"
        )
    );

    // The run stops one call early: the unused call is named.
    let (out, tape) = replay(&Conv::default(), 1, false);
    assert!(out[0].is_ok());
    assert_eq!(
        tape.leftovers(false).unwrap(),
        format!(
            "cassette `c.cassette.json`: the run ended with 2 recorded model calls unused, the first interaction 1 (agent, run 0, call 1, step 1, state `intake`){HINT}"
        )
    );
    // Under --skip-grades the judge's unused verdicts do not count; the agent's still do.
    let (_, tape) = replay(&Conv::default(), 2, false);
    assert!(
        tape.leftovers(false).unwrap().contains(
            "1 recorded model call unused, the first interaction 2 (judge, run 0, call 0)"
        )
    );
    assert_eq!(tape.leftovers(true), None);
}

#[test]
fn prompt_drift_warns_and_fails_when_strict() {
    let drifted = Conv {
        system: "You are the agent.\nBe very brief.",
        ..Conv::default()
    };
    let line = "cassette `c.cassette.json`: interaction 0 (agent, run 0, call 0, step 1, state `intake`): prompt drift: the system prompt differs from the recording at line 2: expected \"Be brief.\", got \"Be very brief.\"";
    let (out, tape) = replay(&drifted, 3, false);
    assert!(out.iter().all(Result::is_ok), "{out:?}");
    // One warning per distinct difference (both agent calls share the prompt, but their
    // interactions differ, so two lines).
    let w = tape.warnings();
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!(w[0], format!("{line}{HINT}"));
    let (out, tape) = replay(&drifted, 3, true);
    let e = out[0].clone().unwrap_err();
    assert_eq!(
        e,
        format!("{line} (an error with --strict-cassettes){HINT}")
    );
    assert_eq!(tape.error(), Some(e));
    assert!(out[1].is_err(), "the case is dead after the first error");
}

#[test]
fn record_new_replays_the_matching_prefix_then_records_the_rest_live() {
    let (live, calls) = canned(vec![
        Ok(answer(Some("Order ORD-1 was not found."), &[])),
        Ok(answer(Some("{\"score\": 0, \"reason\": \"no\"}"), &[])),
    ]);
    let tape = Tape::replay(
        "c.cassette.json",
        recording(),
        TapeMode::ReplayThenRecord,
        Some(live),
        false,
    );
    let mut t = tape.transport();
    let conv = Conv {
        result: "not found",
        ..Conv::default()
    };
    let out: Vec<ChatResponse> = requests(&conv)
        .iter()
        .map(|(req, meta)| t.complete(req, meta).unwrap())
        .collect();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "the first call was replayed"
    );
    assert_eq!(
        out[1].content.as_deref(),
        Some("Order ORD-1 was not found.")
    );
    let c = tape.cassette(&info(), "ignored".into()).unwrap();
    assert_eq!(c.interactions.len(), 3);
    assert_eq!(
        c.recorded_at, "1970-01-01T00:00:00Z",
        "the recording's date stays"
    );
    assert_eq!(
        c.interactions[1].request.messages[0].content.as_deref(),
        Some("not found")
    );
    assert_eq!(
        c.interactions.iter().map(|i| i.seq).collect::<Vec<_>>(),
        [0, 1, 2]
    );
}

// ---- whole cases through the runner --------------------------------------------------

const WF: &str = "title: Tiny\ninstructions: Be brief.\nstates:\n  start:\n    triggers: { manual: }\n    instructions: Greet the user.\n    transitions:\n      - to: done\n        description: The user was greeted.\n  done:\n    instructions: Stop.\n";
const CASE: &str = "title: Hello\ndescription: The model greets the user.\nsteps:\n  - send: \"hi, my key is planted-test-value-NOT-A-KEY-0123456789\"\n  - reply:\n      includes: [\"hello\"]\n";
const KEY: &str = "planted-test-value-NOT-A-KEY-0123456789";
const CASSETTE: &str = "workflows/tiny/tests/hello.cassette.json";

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let tests = ws.path().join("workflows/tiny/tests");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(ws.path().join("workflows/tiny/workflow.yaml"), WF).unwrap();
    std::fs::write(tests.join("hello.test.yaml"), CASE).unwrap();
    ws
}

/// Runs the tiny suite live (record `once`) with `answers`, cancelled once `cancel_after`
/// model calls were made; returns the case's error.
fn record_tiny(
    ws: &std::path::Path,
    answers: Vec<Result<ChatResponse, ModelError>>,
    cancel_after: Option<usize>,
) -> Option<String> {
    let fs = DiskFiles::new(ws);
    let clock = FixedClock::default();
    let env = ModelEnv {
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: KEY.into(),
        model: "m".into(),
        temperature: None,
        max_tokens: None,
        prices: Default::default(),
    };
    let (transport, calls) = canned(answers);
    let slot = Mutex::new(Some(transport));
    let chat = || -> Box<dyn ChatTransport> {
        match slot.lock().unwrap().take() {
            Some(t) => t,
            None => canned(Vec::new()).0,
        }
    };
    let secrets = Secrets::from_env([("ARCHMAX_API_KEY".to_owned(), KEY.to_owned())]);
    let writer = |path: &str, c: &Cassette| save(&fs, path, c, &secrets);
    let is_cancelled = || cancel_after.is_some_and(|n| calls.load(Ordering::SeqCst) >= n);
    let mut ro = RunOptions::new(&fs, &clock);
    ro.live = true;
    ro.live_model = Some(LiveModel {
        env: &env,
        chat: &chat,
    });
    ro.record = RecordMode::Once;
    ro.save_cassette = Some(&writer);
    ro.cancelled = Some(&is_cancelled);
    let dir = WorkflowDir {
        root: String::new(),
        slug: "tiny".into(),
    };
    let run = run_workflow(&ro, &dir, &mut |_| {}).unwrap();
    run.result.results.first().and_then(|r| r.error.clone())
}

#[test]
fn a_recorded_case_is_written_once_with_the_planted_key_redacted() {
    let ws = workspace();
    let path = ws.path().join(CASSETTE);
    let err = record_tiny(
        ws.path(),
        vec![Ok(answer(Some(&format!("hello! you said {KEY}")), &[]))],
        None,
    );
    assert_eq!(err, None);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(KEY), "{text}");
    assert!(
        text.contains("hi, my key is <ENV:ARCHMAX_API_KEY>"),
        "{text}"
    );
    assert!(
        text.contains("hello! you said <ENV:ARCHMAX_API_KEY>"),
        "{text}"
    );
    // The file is a valid cassette that replays (no live model): the same run, from it.
    let c = wfx_schemas::cassette::parse(&text).unwrap();
    assert_eq!(c.interactions.len(), 1);
    assert_eq!(c.endpoint, "127.0.0.1:9");
    assert_eq!(c.case, "hello");
    // It replays where the key is unknown: the placeholder matches the case's literal key.
    let fs = DiskFiles::new(ws.path());
    let clock = FixedClock::default();
    let ro = RunOptions::new(&fs, &clock);
    let dir = WorkflowDir {
        root: String::new(),
        slug: "tiny".into(),
    };
    let run = run_workflow(&ro, &dir, &mut |_| {}).unwrap();
    let r = &run.result.results[0];
    assert_eq!(
        r.verdict.status,
        wfx_runner::interpret::VerdictStatus::Passed,
        "{r:?}"
    );
    assert_eq!(r.usage, None, "usage is the CLI's to attach");
}

#[test]
fn a_cancelled_or_failed_recording_writes_nothing() {
    // Cancelled after the first model call: the case stops there, no cassette.
    let ws = workspace();
    let path = ws.path().join(CASSETTE);
    let err = record_tiny(ws.path(), vec![Ok(answer(Some("hello"), &[]))], Some(1));
    assert_eq!(err.as_deref(), Some("the run was cancelled"));
    assert!(!path.exists(), "a cancelled recording wrote a cassette");
    // A transport failure: the case dies, no cassette.
    let err = record_tiny(ws.path(), vec![Err(ModelError::Auth { status: 401 })], None);
    assert!(err.unwrap().contains("HTTP 401"));
    assert!(!path.exists(), "a failed recording wrote a cassette");
    // The control: the same run, not cancelled, writes it.
    record_tiny(ws.path(), vec![Ok(answer(Some("hello"), &[]))], None);
    assert!(path.exists());
    let names: Vec<String> = std::fs::read_dir(ws.path().join("workflows/tiny/tests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "temporary files left: {names:?}");
}

/// Issue 24, item 4: a replay's mismatch line and drift warnings quote the recording and the
/// run; a key-shaped string in either is masked there as in `check`'s code frames
/// (`wfx_schemas::rules::cassette::mask_key_shaped`), so it never reaches a CI log.
#[test]
fn mismatch_lines_and_drift_warnings_mask_key_shaped_strings() {
    const SHAPED: &str = concat!("sk-", "proj-FAKEonlyNOTaREALkey0000");
    let e = mismatch(
        Conv {
            user: SHAPED,
            ..Conv::default()
        },
        0,
    );
    assert!(e.contains("got \"****"), "{e}");
    assert!(!e.contains(&SHAPED[8..]), "{e}");
    let (out, tape) = replay(
        &Conv {
            system: concat!(
                "You are the agent.\nUse sk-",
                "proj-FAKEonlyNOTaREALkey0000"
            ),
            ..Conv::default()
        },
        3,
        false,
    );
    assert!(out.iter().all(Result::is_ok), "{out:?}");
    let warnings = tape.warnings().join("\n");
    assert!(warnings.contains("prompt drift"), "{warnings}");
    assert!(warnings.contains("****"), "{warnings}");
    assert!(!warnings.contains(&SHAPED[8..]), "{warnings}");
}
