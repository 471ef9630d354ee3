//! The live agent and the model judge over a scripted transport (issue 14), offline and
//! pure: prompt snapshots for every state of the example workflows, the tool declarations,
//! transcript rebuilding (grouping, provider ids, runtime notes, reply-only calls), the
//! judge's evidence with both caps and their markers, verdict parsing with the one retry,
//! and `budget.maxTurns` routing through `on_error` for any agent.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers"
)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wfx_runner::agent::{Agent, AgentAction, AgentError, RunCause, ScriptedAgent, TurnContext};
use wfx_runner::clock::FixedClock;
use wfx_runner::disk::DiskFiles;
use wfx_runner::grade::{GradePolicy, Judge};
use wfx_runner::model::UsageLog;
use wfx_runner::model::judge::{
    JSON_ONLY, JudgeSettings, MAX_RECORD_CHARS, ModelJudge, NO_VERDICT, render_evidence,
};
use wfx_runner::model::live::{LiveAgent, LiveSettings};
use wfx_runner::model::prompt::tool_specs;
use wfx_runner::model::wire::{
    CallMeta, ChatRequest, ChatResponse, ChatTransport, ModelError, ToolArgs, ToolCall, Usage,
};
use wfx_runner::script_host::{HookVerdict, NoScriptHost};
use wfx_runner::sim::{Msg, Session, SimConfig, Simulator};
use wfx_schemas::files::{FileAccess, MemFiles};
use wfx_schemas::model::workflow::Workflow;
use wfx_schemas::workspace::WorkflowDir;
use wfx_schemas::yaml;

/// A transport answering from a queue and recording every request.
struct Scripted {
    answers: VecDeque<Result<ChatResponse, ModelError>>,
    seen: Arc<Mutex<Vec<ChatRequest>>>,
}

impl ChatTransport for Scripted {
    fn complete(&mut self, req: &ChatRequest, _: &CallMeta) -> Result<ChatResponse, ModelError> {
        self.seen.lock().unwrap().push(req.clone());
        self.answers
            .pop_front()
            .unwrap_or_else(|| Err(ModelError::Transport("script exhausted".into())))
    }
}

fn scripted(answers: Vec<ChatResponse>) -> (Box<Scripted>, Arc<Mutex<Vec<ChatRequest>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    (
        Box::new(Scripted {
            answers: answers.into_iter().map(Ok).collect(),
            seen: seen.clone(),
        }),
        seen,
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

fn settings() -> LiveSettings {
    LiveSettings {
        default_model: "env-model".into(),
        temperature: Some(0.0),
        max_tokens: None,
        case_timeout_ms: 120_000,
    }
}

/// 2026-12-02 15:47:13 UTC: the prompt shows 15:40.
const NOW: u64 = 1_796_226_433_000;

fn corpus() -> DiskFiles {
    DiskFiles::new(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/customer-support"),
    )
}

fn workflow(fs: &dyn FileAccess, slug: &str) -> Workflow {
    let text = fs
        .read_text(&format!("workflows/{slug}/workflow.yaml"))
        .unwrap();
    Workflow::from_node(yaml::parse(&text).documents.first().unwrap())
}

#[test]
fn prompt_snapshots_for_every_state_of_the_example_workflows() {
    let fs = corpus();
    let mut count = 0;
    for slug in ["order-lookup", "enrich-order"] {
        let wf = workflow(&fs, slug);
        let (t, _) = scripted(vec![]);
        let agent = LiveAgent::new(
            &fs,
            &format!("workflows/{slug}"),
            &wf,
            t,
            settings(),
            Arc::new(|| NOW),
            Arc::new(Mutex::new(UsageLog::default())),
        );
        for state in &wf.states {
            let tools = wfx_runner::governance::offered_tools(&wf, state);
            let cause = RunCause::Send {
                message: "hi".into(),
            };
            let vars = json!({"conversation_id": "c-1", "title": "t"});
            let ctx = TurnContext {
                run: 0,
                call: 0,
                case_step: 0,
                cause: &cause,
                state: &state.slug.value,
                instructions: state.instructions.as_deref(),
                reply_only: false,
                tools: &tools,
                messages: &[],
                variables: &vars,
            };
            let req = agent.request(&ctx);
            let names: Vec<&str> = req.tools.iter().map(|t| t.name.as_str()).collect();
            let text = format!(
                "model: {}\ntools: {}\n\n{}",
                req.model,
                names.join(", "),
                req.messages[0].content.as_deref().unwrap()
            );
            insta::assert_snapshot!(format!("prompt-{slug}-{}", state.slug.value), text);
            count += 1;
        }
    }
    assert_eq!(count, 13, "12 states in order-lookup, 1 in enrich-order");
}

#[test]
fn a_reply_only_call_offers_no_tools_and_says_the_run_is_parked() {
    let fs = corpus();
    let wf = workflow(&fs, "order-lookup");
    let (t, _) = scripted(vec![]);
    let agent = LiveAgent::new(
        &fs,
        "workflows/order-lookup",
        &wf,
        t,
        settings(),
        Arc::new(|| NOW),
        Arc::default(),
    );
    let tools = vec!["read_file".to_owned()];
    let cause = RunCause::ReplyWhileParked {
        message: "any news?".into(),
    };
    let ctx = TurnContext {
        run: 1,
        call: 0,
        case_step: 3,
        cause: &cause,
        state: "refund-review",
        instructions: None,
        reply_only: true,
        tools: &tools,
        messages: &[],
        variables: &json!({}),
    };
    let req = agent.request(&ctx);
    assert!(req.tools.is_empty());
    let system = req.messages[0].content.clone().unwrap();
    assert!(system.contains("## This run is parked\nA person wrote while the run is waiting."));
    assert!(!system.contains("## Current state"));
}

#[test]
fn tool_declarations_in_the_documented_order() {
    let offered: Vec<String> = [
        "zeta_host",
        "grep",
        "archmax_workflow_enrich-order",
        "read_file",
        "archmax_advance",
        "alpha_host",
        "archmax_set_variables",
        "archmax_run",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let specs = tool_specs(&offered);
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "archmax_advance",
            "archmax_set_variables",
            "archmax_run",
            "read_file",
            "grep",
            "archmax_workflow_enrich-order",
            "alpha_host",
            "zeta_host"
        ]
    );
    let all: Vec<String> = wfx_runner::model::prompt::TOOL_ORDER
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    insta::assert_json_snapshot!("tool-declarations", tool_specs(&all));
}

const FLOW: &str = "title: Flow\ninstructions: Be brief.\nstates:\n  start:\n    triggers: { manual: }\n    transitions: [{ to: review, description: Needs a person. }]\n  review:\n    type: human\n    transitions: [{ to: done, type: approve, description: Approved. }]\n  done:\n    instructions: Confirm.\n";

fn with_flow(agent: &mut dyn Agent, f: impl FnOnce(&mut Simulator<'_, '_>)) {
    let fs = MemFiles::new()
        .with("workflows/flow/workflow.yaml", FLOW)
        .with("AGENTS.md", "persona");
    let wf = Workflow::from_node(yaml::parse(FLOW).documents.first().unwrap());
    let clock = FixedClock::default();
    let cfg = SimConfig {
        workspace: &fs,
        dir: WorkflowDir {
            root: String::new(),
            slug: "flow".into(),
        },
        workflow: &wf,
        clock: &clock,
        grades: GradePolicy::default(),
    };
    let mut session = Session::new(cfg, Vec::new()).unwrap();
    session.open("manual").unwrap();
    let mut host = NoScriptHost;
    let mut sim = Simulator::new(session, agent, &mut host, None);
    f(&mut sim);
}

/// One line per message: role, content, calls `name#id(args)`, result ids.
fn compact(req: &ChatRequest) -> String {
    req.messages
        .iter()
        .skip(1)
        .map(|m| {
            let calls: Vec<String> = m
                .tool_calls
                .iter()
                .map(|c| format!("{}#{}({})", c.name, c.id, c.arguments.wire_text()))
                .collect();
            format!(
                "{:?} {:?}{}{}",
                m.role,
                m.content.as_deref().unwrap_or(""),
                if calls.is_empty() {
                    String::new()
                } else {
                    format!(" calls=[{}]", calls.join(", "))
                },
                m.tool_call_id
                    .as_ref()
                    .map(|i| format!(" answers={i}"))
                    .unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_transcript_is_rebuilt_exactly_across_runs() {
    let fs = MemFiles::new().with("AGENTS.md", "persona");
    let wf = Workflow::from_node(yaml::parse(FLOW).documents.first().unwrap());
    let (t, seen) = scripted(vec![
        answer(
            Some("Looking."),
            &[
                ("p1", "ls", json!({})),
                ("p2", "read_file", json!({"file_path": "AGENTS.md"})),
            ],
        ),
        answer(
            None,
            &[(
                "p3",
                "archmax_advance",
                json!({"to": "review", "reason": "check"}),
            )],
        ),
        answer(Some("A person will decide."), &[]),
        answer(Some("Approved and done."), &[]),
    ]);
    let usage: Arc<Mutex<UsageLog>> = Arc::default();
    let mut agent = LiveAgent::new(
        &fs,
        "workflows/flow",
        &wf,
        t,
        settings(),
        Arc::new(|| NOW),
        usage.clone(),
    );
    with_flow(&mut agent, |sim| {
        sim.send(0, "hi", &[]).unwrap();
        assert_eq!(sim.session.state, "review");
        sim.decide(1, "done", Some("fine")).unwrap();
        assert_eq!(sim.view().reply.as_deref(), Some("Approved and done."));
    });
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 4, "no call after a reply without tool calls");
    assert!(seen[2].tools.is_empty(), "the parked call offers no tools");
    assert!(!seen[1].tools.is_empty());
    expect_test::expect![[r#"
        User "hi"
        Assistant "Looking." calls=[ls#p1({}), read_file#p2({"file_path":"AGENTS.md"})]
        Tool "AGENTS.md" answers=p1
        Tool "persona" answers=p2
        Assistant "" calls=[archmax_advance#p3({"to":"review","reason":"check"})]
        Tool "Advanced to state 'review'. You may now use the tools allowed in this state." answers=p3
        Assistant "A person will decide."
        Assistant "" calls=[archmax_note#note_1({"kind":"decision"})]
        Tool "[decision] A human selected approve → 'done' at 'review' checkpoint: fine. The run has already been routed: you are now in 'done'. Do its work and continue from here." answers=note_1"#]]
    .assert_eq(&compact(&seen[3]));
    let log = usage.lock().unwrap();
    assert_eq!(log.calls.len(), 4);
    assert_eq!(log.total().prompt_tokens, 40);
}

#[test]
fn the_judge_evidence_caps_values_and_the_record_and_keeps_the_reply_whole() {
    let long = "x".repeat(2_000);
    let mut msgs = vec![Msg::User("hi".into())];
    for i in 0..40 {
        msgs.push(Msg::Assistant {
            text: String::new(),
            call: Some((i, "read_file".into(), json!({"file_path": format!("f{i}")}))),
        });
        msgs.push(Msg::Tool {
            call_id: i,
            name: "read_file".into(),
            content: long.clone(),
            error: false,
            blocked: false,
        });
    }
    msgs.push(Msg::Note {
        kind: "decision",
        text: "[decision] ok".into(),
    });
    let reply = format!("final {}", "y".repeat(1_500));
    msgs.push(Msg::Assistant {
        text: reply.clone(),
        call: None,
    });
    let ev = render_evidence(&msgs, Some(&reply));
    let (record, tail) = ev.split_once("\n\nFinal reply to the user:\n").unwrap();
    assert_eq!(tail, reply, "the reply is whole");
    assert!(record.starts_with("What the assistant did, in order:\n… "));
    let marker = record.lines().nth(1).unwrap();
    assert!(
        marker.ends_with(" earlier entries omitted (evidence budget)"),
        "{marker}"
    );
    assert!(record.contains("output=") && record.contains(" …(+1200 chars)"));
    assert!(
        record.ends_with("41. [runtime:decision] [decision] ok"),
        "the reply closed the turn: dropped from the record"
    );
    let body: usize = record.lines().skip(2).map(|l| l.chars().count() + 1).sum();
    assert!(body <= MAX_RECORD_CHARS, "{body}");
    let empty = render_evidence(&[Msg::User("hi".into())], None);
    assert_eq!(
        empty,
        "What the assistant did, in order:\n(no tool calls or intermediate messages recorded)\n\nFinal reply to the user:\n(empty)"
    );
}

fn judge_with(answers: Vec<&str>) -> (ModelJudge, Arc<Mutex<Vec<ChatRequest>>>) {
    let (t, seen) = scripted(answers.into_iter().map(|a| answer(Some(a), &[])).collect());
    let j = ModelJudge::new(
        t,
        JudgeSettings {
            model: "judge-model".into(),
            temperature: Some(0.0),
            max_tokens: Some(300),
            timeout_ms: None,
        },
        Arc::default(),
    );
    (j, seen)
}

#[test]
fn verdicts_are_read_from_prose_or_fences_with_one_retry_then_score_zero() {
    let (mut j, seen) = judge_with(vec![
        "Sure: {\"score\": 1.7, \"pass\": true, \"reason\": \"met\"} done",
    ]);
    assert_eq!(j.grade("c", "ev").unwrap(), (1.0, Some("met".into())));
    assert_eq!(
        seen.lock().unwrap()[0].messages[1].content.as_deref(),
        Some("Criterion: c\n\nev")
    );

    let (mut j, seen) = judge_with(vec![
        "I think it is fine.",
        "```json\n{\"score\": 0.8, \"reason\": \"r {x}\"}\n```",
    ]);
    assert_eq!(j.grade("c", "ev").unwrap(), (0.8, Some("r {x}".into())));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].messages.len(), 4);
    assert_eq!(
        seen[1].messages[2].content.as_deref(),
        Some("I think it is fine.")
    );
    assert_eq!(seen[1].messages[3].content.as_deref(), Some(JSON_ONLY));
    assert_eq!(seen[1].model, "judge-model");

    let (mut j, _) = judge_with(vec!["no", "still no {not json}"]);
    assert_eq!(j.grade("c", "ev").unwrap(), (0.0, Some(NO_VERDICT.into())));

    let (mut j, _) = judge_with(vec![
        "{\"verdict\": \"correct\", \"reason\": \"warmer\"}",
        "gibberish",
    ]);
    assert_eq!(
        j.rubric("be kind", &json!({})).unwrap(),
        HookVerdict::Correct("warmer".into())
    );
    assert!(matches!(
        j.rubric("be kind", &json!({})).unwrap(),
        HookVerdict::Veto(_)
    ));
}

#[test]
fn reasons_the_verdict_parser_decodes_are_redacted() {
    // Issue 24, item 4: the answer's text is redacted by the transport, but a key spelled
    // with `\u` escapes inside the verdict's JSON is whole only in the parsed reason.
    let key = concat!("sk-", "judge-PLANTED-0000");
    let escaped = format!("\\u0073{}", &key[1..]);
    let env = wfx_runner::model::config::ModelEnv {
        base_url: "http://127.0.0.1:9".into(),
        api_key: key.into(),
        model: "m".into(),
        temperature: None,
        max_tokens: None,
        prices: Default::default(),
    };
    let grade = format!("{{\"score\": 1, \"reason\": \"met; {escaped}\"}}");
    let correct = format!("{{\"verdict\": \"correct\", \"reason\": \"{escaped}!\"}}");
    let veto = format!("{{\"verdict\": \"veto\", \"reason\": \"no {escaped}\"}}");
    let (j, _) = judge_with(vec![&grade, &correct, &veto]);
    let mut j = j.redacting(env.key_secrets());
    let p = "<ENV:ARCHMAX_API_KEY>";
    assert_eq!(
        j.grade("c", "ev").unwrap(),
        (1.0, Some(format!("met; {p}")))
    );
    assert_eq!(
        j.rubric("r", &json!({})).unwrap(),
        HookVerdict::Correct(format!("{p}!"))
    );
    assert_eq!(
        j.rubric("r", &json!({})).unwrap(),
        HookVerdict::Veto(format!("no {p}"))
    );
    // Without the secrets the parser does build the key: the redaction is what removes it.
    let (mut bare, _) = judge_with(vec![&grade]);
    assert_eq!(
        bare.grade("c", "ev").unwrap(),
        (1.0, Some(format!("met; {key}")))
    );
}

const BUDGET: &str = "title: B\ninstructions: x\nstates:\n  work:\n    triggers: { manual: }\n    budget: { maxTurns: 2 }\n    on_error: esc\n    transitions: [{ to: esc, description: d }]\n  esc:\n    instructions: Apologise.\n";

fn with_budget(agent: &mut dyn Agent, f: impl FnOnce(&mut Simulator<'_, '_>)) {
    let fs = MemFiles::new().with("workflows/b/workflow.yaml", BUDGET);
    let wf = Workflow::from_node(yaml::parse(BUDGET).documents.first().unwrap());
    let clock = FixedClock::default();
    let cfg = SimConfig {
        workspace: &fs,
        dir: WorkflowDir {
            root: String::new(),
            slug: "b".into(),
        },
        workflow: &wf,
        clock: &clock,
        grades: GradePolicy::default(),
    };
    let mut session = Session::new(cfg, Vec::new()).unwrap();
    session.open("manual").unwrap();
    let mut host = NoScriptHost;
    let mut sim = Simulator::new(session, agent, &mut host, None);
    f(&mut sim);
}

/// Lists files for ever in `work`; apologises once in `esc`.
struct Looper(usize);

impl Agent for Looper {
    fn respond(&mut self, ctx: &TurnContext<'_>) -> Result<Vec<AgentAction>, AgentError> {
        self.0 += 1;
        Ok(match (ctx.state, ctx.call) {
            ("work", _) => vec![AgentAction::Call {
                tool: "ls".into(),
                input: json!({}),
            }],
            ("esc", _) if ctx.messages.last().is_some_and(|m| m.role != "assistant") => {
                vec![AgentAction::Say("Sorry.".into())]
            }
            _ => Vec::new(),
        })
    }
}

#[test]
fn max_turns_routes_through_on_error_for_a_looping_model() {
    let mut agent = Looper(0);
    with_budget(&mut agent, |sim| {
        sim.send(0, "go", &[]).unwrap();
        let v = sim.view();
        let trail: Vec<(&str, String, Option<String>)> = v
            .trail
            .iter()
            .map(|t| (t.kind, t.to.clone(), t.reason.clone()))
            .collect();
        assert_eq!(
            trail[1],
            (
                "on_error",
                "esc".into(),
                Some("state 'work' exhausted its turn budget (maxTurns: 2)".into())
            )
        );
        assert_eq!(v.tool_calls.len(), 2, "the third call was not executed");
        assert_eq!(v.reply.as_deref(), Some("Sorry."));
    });
}

#[test]
fn max_turns_counts_a_scripted_agents_runs_in_one_visit() {
    let say = |t: &str| vec![AgentAction::Say(t.into())];
    let mut agent = ScriptedAgent::from_turns(
        "t.agent.yaml",
        vec![say("one"), say("two"), say("three"), say("sorry")],
    );
    with_budget(&mut agent, |sim| {
        sim.send(0, "a", &[]).unwrap();
        sim.send(1, "b", &[]).unwrap();
        assert_eq!(sim.session.state, "work");
        sim.send(2, "c", &[]).unwrap();
        let v = sim.view();
        assert_eq!(
            v.trail.last().map(|t| (t.kind, t.to.as_str())),
            Some(("on_error", "esc"))
        );
        assert!(
            !v.transcript.contains("three"),
            "the exceeding call's actions were not executed"
        );
        assert!(
            v.notes.iter().any(
                |(k, t)| *k == "error" && t.contains("exhausted its turn budget (maxTurns: 2)")
            )
        );
        assert_eq!(v.reply.as_deref(), Some("two"));
    });
}

#[test]
fn a_run_that_never_ends_hits_the_per_run_cap() {
    struct Forever;
    impl Agent for Forever {
        fn respond(&mut self, _: &TurnContext<'_>) -> Result<Vec<AgentAction>, AgentError> {
            Ok(vec![AgentAction::Say("again".into())])
        }
    }
    let mut agent = Forever;
    with_flow(&mut agent, |sim| {
        let e = sim.send(0, "hi", &[]).unwrap_err();
        assert!(e.0.contains("more than 50 model calls"), "{}", e.0);
    });
}

/// docs/security.md, F6: an answer with more than `MAX_TOOL_CALLS_PER_MODEL_CALL` tool
/// calls is refused whole (none executed); one at the cap runs every call.
#[test]
fn an_answer_over_the_tool_call_cap_is_refused_whole() {
    use wfx_runner::sim::MAX_TOOL_CALLS_PER_MODEL_CALL;
    struct Many(usize, bool);
    impl Agent for Many {
        fn respond(&mut self, _: &TurnContext<'_>) -> Result<Vec<AgentAction>, AgentError> {
            if std::mem::replace(&mut self.1, true) {
                return Ok(Vec::new());
            }
            Ok((0..self.0)
                .map(|_| AgentAction::Call {
                    tool: "ls".into(),
                    input: json!({}),
                })
                .collect())
        }
    }
    let mut at_cap = Many(MAX_TOOL_CALLS_PER_MODEL_CALL, false);
    with_flow(&mut at_cap, |sim| {
        sim.send(0, "hi", &[]).unwrap();
        assert_eq!(sim.view().tool_calls.len(), MAX_TOOL_CALLS_PER_MODEL_CALL);
    });
    let mut over = Many(MAX_TOOL_CALLS_PER_MODEL_CALL + 1, false);
    with_flow(&mut over, |sim| {
        let e = sim.send(0, "hi", &[]).unwrap_err();
        assert!(
            e.0.contains("carried 101 tool calls, more than the cap of 100 per call"),
            "{}",
            e.0
        );
        assert!(
            sim.view().tool_calls.is_empty(),
            "no call of the answer ran"
        );
    });
}
