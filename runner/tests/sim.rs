//! Simulator semantics over an in-memory workspace (FORMAT §E): each trail kind, both
//! parks, governance allowed and blocked, mock order and `whenInput`, sub-workflow mocks
//! with checked returns, seeding zones, raise, reset, variables and the requires gate.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers"
)]

use serde_json::{Value, json};
use wfx_runner::agent::{AgentAction, ScriptedAgent};
use wfx_runner::clock::FixedClock;
use wfx_runner::grade::GradePolicy;
use wfx_runner::script_host::NoScriptHost;
use wfx_runner::sim::{Session, SessionView, SimConfig, Simulator, Status};
use wfx_schemas::files::MemFiles;
use wfx_schemas::model::case::{Case, Channel};
use wfx_schemas::model::workflow::Workflow;
use wfx_schemas::workspace::WorkflowDir;
use wfx_schemas::yaml;

const WF: &str = r#"
tools:
  forbid_always: [archmax_eval]
states:
  start:
    triggers:
      manual:
        returns: [{ name: result, type: string }]
    tools:
      allow: [lookup, archmax_workflow_child]
    requires: [ticket]
    transitions:
      - { to: review, description: review }
      - { to: wait, description: wait }
      - { to: done, description: done }
  review:
    type: human
    evidence: [scratchpad/a.txt]
    transitions:
      - { to: done, type: approve, description: ok }
      - { to: review2, description: again }
  review2:
    type: human
    transitions: [{ to: done, description: ok }]
  wait:
    budget: { maxParks: 1 }
    on_error: done
    transitions: [{ to: done, description: d }]
  done: {}
"#;

const CHILD: &str = "states:\n  c:\n    triggers:\n      manual:\n        requires: [{ name: item_id, type: string }]\n        returns: [{ name: total, type: number }, label]\n";

fn ws() -> MemFiles {
    MemFiles::new()
        .with("workflows/w/workflow.yaml", WF)
        .with("workflows/child/workflow.yaml", CHILD)
        .with("skills/data/x.json", "[1]")
        .with("AGENTS.md", "persona")
}

fn call(tool: &str, input: Value) -> AgentAction {
    AgentAction::Call {
        tool: tool.into(),
        input,
    }
}

fn say(t: &str) -> AgentAction {
    AgentAction::Say(t.into())
}

fn mocks(src: &str) -> Vec<wfx_schemas::model::case::Mock> {
    yaml::parse(src)
        .documents
        .first()
        .map(|d| Case::from_node(d).mocks)
        .unwrap_or_default()
}

/// Runs `f` with a simulator over the fixture workflow, scripted with `turns`.
fn with_sim(turns: Vec<Vec<AgentAction>>, mock_src: &str, f: impl FnOnce(&mut Simulator<'_, '_>)) {
    let fs = ws();
    let wf = Workflow::from_node(yaml::parse(WF).documents.first().unwrap());
    let clock = FixedClock::default();
    let cfg = SimConfig {
        workspace: &fs,
        dir: WorkflowDir {
            root: String::new(),
            slug: "w".into(),
        },
        workflow: &wf,
        clock: &clock,
        grades: GradePolicy {
            skip: true,
            model: None,
        },
    };
    let mut session = Session::new(cfg, mocks(mock_src)).unwrap();
    session.open("manual").unwrap();
    let mut agent = ScriptedAgent::from_turns("t.agent.yaml", turns);
    let mut host = NoScriptHost;
    let mut sim = Simulator::new(session, &mut agent, &mut host, None);
    f(&mut sim);
}

fn ticket() -> Vec<(String, Value)> {
    vec![("ticket".into(), json!("T-1"))]
}

fn kinds(v: &SessionView) -> Vec<(&'static str, String)> {
    v.trail.iter().map(|t| (t.kind, t.to.clone())).collect()
}

fn output(v: &SessionView, i: usize) -> (&'static str, Value) {
    let c = &v.tool_calls[i];
    (c.status, c.output.clone().unwrap_or(Value::Null))
}

#[test]
fn trigger_agent_human_trail_and_the_decision_park() {
    let turns = vec![
        vec![
            call(
                "write_file",
                json!({"file_path": "scratchpad/b.txt", "content": "b"}),
            ),
            call(
                "archmax_advance",
                json!({"to": "review", "reason": "check", "evidence": ["scratchpad/b.txt"]}),
            ),
            say("parked"),
            call("read_file", json!({"file_path": "scratchpad/b.txt"})),
        ],
        vec![say("still parked")],
        vec![say("again parked")],
        vec![
            call(
                "archmax_set_variables",
                json!({"variables": {"result": "ok"}}),
            ),
            say("closed"),
        ],
    ];
    with_sim(turns, "", |sim| {
        sim.send(0, "hi", &ticket()).unwrap();
        let v = sim.view();
        assert_eq!(
            (v.parked, v.channel, v.state.as_str()),
            (true, Some(Channel::Decision), "review")
        );
        let pd = sim.session.pending_decision.clone().unwrap();
        assert_eq!(pd.evidence, ["scratchpad/a.txt", "scratchpad/b.txt"]);
        assert_eq!(pd.seq, 1);
        assert_eq!(
            output(&v, 2).0,
            "rejected",
            "the call after the park is reply-only"
        );
        assert!(!v.failed);
        sim.send(2, "news?", &ticket()).unwrap();
        assert_eq!(
            sim.view().trail.len(),
            2,
            "a message to a parked session adds no step"
        );
        sim.decide(3, "review2", Some("  ")).unwrap();
        let v = sim.view();
        assert_eq!(
            sim.session.pending_decision.as_ref().map(|p| p.seq),
            Some(2)
        );
        assert_eq!(
            v.trail.last().unwrap().reason,
            None,
            "an empty comment is dropped"
        );
        assert!(
            sim.decide(4, "nowhere", None)
                .unwrap_err()
                .0
                .contains("declared: done")
        );
        sim.decide(4, "done", Some("fine")).unwrap();
        let v = sim.view();
        assert_eq!(v.status, Status::Completed);
        assert_eq!(
            kinds(&v),
            [
                ("trigger", "start".into()),
                ("agent", "review".into()),
                ("human", "review2".into()),
                ("human", "done".into())
            ]
        );
        assert!(v.notes.iter().any(|(k, t)| *k == "decision"
            && t.contains("A human selected 'done' at 'review2' checkpoint: fine.")));
        assert!(v.transcript.contains("still parked") && v.transcript.ends_with("closed"));
        assert!(
            sim.decide(5, "done", None)
                .unwrap_err()
                .0
                .contains("not parked at a human state")
        );
    });
}

#[test]
fn the_input_park_delivery_and_max_parks_route_to_on_error() {
    let turns = vec![
        vec![
            call("archmax_advance", json!({"to": "wait", "reason": "ask"})),
            call("archmax_wait", json!({"reason": "the id"})),
            say("asked"),
        ],
        vec![
            call("archmax_wait", json!({"reason": "again"})),
            say("in done now"),
            call(
                "archmax_set_variables",
                json!({"variables": {"result": "x"}}),
            ),
        ],
    ];
    with_sim(turns, "", |sim| {
        assert!(
            sim.deliver(0, "early", &[])
                .unwrap_err()
                .0
                .contains("not parked for input")
        );
        sim.send(0, "hi", &ticket()).unwrap();
        let v = sim.view();
        assert_eq!((v.parked, v.channel), (true, Some(Channel::Input)));
        assert_eq!(sim.session.pending_input.as_ref().unwrap().reason, "the id");
        sim.deliver(2, "reply", &[("sku".into(), json!("B2"))])
            .unwrap();
        let v = sim.view();
        assert!(v.variables["sku"].locked);
        assert_eq!(v.variables["trigger"].value, json!("reply"));
        assert!(v.notes.iter().any(|(k, t)| *k == "event"
            && t.starts_with(
                "[event] 'reply' arrived while the run waited in 'wait': sku=\"B2\""
            )));
        // The second wait exceeds maxParks: a terminal rejection routed to on_error.
        assert_eq!(
            kinds(&v),
            [
                ("trigger", "start".into()),
                ("agent", "wait".into()),
                ("trigger", "wait".into()),
                ("on_error", "done".into())
            ]
        );
        assert!(v.failed, "the refused wait is an error result");
        assert_eq!(v.status, Status::Completed);
    });
}

#[test]
fn edges_requires_evidence_and_reset() {
    let turns = vec![vec![
        call("archmax_advance", json!({"to": "nowhere", "reason": "x"})),
        call(
            "archmax_advance",
            json!({"to": "done", "reason": "x", "evidence": ["scratchpad/a.txt"]}),
        ),
        call("archmax_advance", json!({"to": "done", "reason": "x"})),
        call(
            "archmax_set_variables",
            json!({"variables": {"ticket": "T-2"}}),
        ),
        call("archmax_advance", json!({"to": "done", "reason": "done"})),
        call("archmax_reset", json!({"reason": "start over"})),
    ]];
    with_sim(turns, "", |sim| {
        sim.send(0, "hi", &[]).unwrap();
        let v = sim.view();
        let outs: Vec<String> = v
            .tool_calls
            .iter()
            .map(|c| c.output.clone().unwrap().as_str().unwrap_or("").to_owned())
            .collect();
        assert!(
            outs[0].starts_with(
                "archmax_advance rejected: 'nowhere' is not a transition of state 'start'"
            ),
            "{}",
            outs[0]
        );
        assert!(
            outs[1].contains(
                "evidence can only be attached when advancing into a human decision state"
            )
        );
        assert!(outs[2].contains("requires 'ticket'"), "{}", outs[2]);
        assert_eq!(outs[3], "Set ticket.");
        assert!(outs[4].starts_with("Advanced to state 'done'"));
        assert_eq!(kinds(&v).last().unwrap(), &("reset", "start".into()));
        assert_eq!(v.state, "start");
        assert!(!v.failed, "recoverable rejections are not errors");
    });
}

#[test]
fn variables_locks_and_reads() {
    let turns = vec![vec![
        call(
            "archmax_set_variables",
            json!({"variables": {"ticket": "other"}}),
        ),
        call("archmax_set_variables", json!({"variables": {"a.b": 1}})),
        call("archmax_set_variables", json!({"variables": {}})),
        call("archmax_set_variables", json!({"variables": {"result": 5}})),
        call(
            "archmax_set_variables",
            json!({"variables": {"note": {"items": [1, 2]}}, "lock": true}),
        ),
        call(
            "archmax_get_variables",
            json!({"name": "note", "path": "items.-1"}),
        ),
        call("archmax_get_variables", json!({"name": "missing"})),
        call("archmax_set_variables", json!({"variables": {"note": 1}})),
    ]];
    with_sim(turns, "", |sim| {
        sim.send(0, "hi", &ticket()).unwrap();
        let v = sim.view();
        let o = |i| output(&v, i);
        assert_eq!(o(0).0, "failed");
        assert!(
            o(0).1
                .as_str()
                .unwrap()
                .contains("'ticket' is locked and cannot be changed (current value: \"T-1\")")
        );
        assert!(o(1).1.as_str().unwrap().contains("dotted name"));
        assert_eq!(
            o(2).1,
            json!("archmax_set_variables rejected: no variables given.")
        );
        assert!(
            o(3).1.as_str().unwrap().contains("'result' must be string"),
            "typed returns are enforced"
        );
        assert_eq!(o(4), ("completed", json!("Set note (locked).")));
        assert_eq!(o(5), ("completed", json!(2)));
        assert_eq!(
            o(6).1,
            json!("Variable 'missing' is not set. Set: ticket, trigger, note.")
        );
        assert_eq!(o(7).0, "failed");
        assert!(v.failed, "a refused control call fails the session view");
    });
}

#[test]
fn governance_allowed_blocked_and_the_skill_gate() {
    let turns = vec![vec![
        call("read_file", json!({"file_path": "skills/data/x.json"})),
        call("read_file", json!({"file_path": "AGENTS.md"})),
        call("archmax_eval", json!({"code": "1"})),
        call("fetch", json!({})),
        call(
            "write_file",
            json!({"file_path": "AGENTS.md", "content": "x"}),
        ),
        call("ls", json!({"path": "skills"})),
        call(
            "write_file",
            json!({"file_path": "../escape.txt", "content": "x"}),
        ),
    ]];
    with_sim(turns, "", |sim| {
        sim.send(0, "hi", &ticket()).unwrap();
        let v = sim.view();
        assert_eq!(output(&v, 0).0, "rejected");
        assert!(
            output(&v, 0)
                .1
                .as_str()
                .unwrap()
                .contains("skill.not-allowed")
        );
        assert_eq!(output(&v, 1), ("completed", json!("persona")));
        assert!(output(&v, 2).1.as_str().unwrap().contains("tool.forbidden"));
        assert!(
            output(&v, 3)
                .1
                .as_str()
                .unwrap()
                .contains("tool.not-allowed")
        );
        assert!(output(&v, 4).1.as_str().unwrap().contains("zone.read-only"));
        assert_eq!(
            output(&v, 5),
            ("completed", json!("")),
            "ls hides skills that are not enabled"
        );
        assert!(
            output(&v, 6)
                .1
                .as_str()
                .unwrap()
                .contains("tool.path-argument")
        );
        assert!(!v.failed, "governance blocks do not fail the view");
    });
}

#[test]
fn mocks_first_match_in_order_with_when_input() {
    let src = "mocks:\n  - tool: lookup\n    whenInput: { sku: \"/^A/\", meta: { tags: [x] } }\n    result: first\n  - tool: lookup\n    whenInput: { sku: \"/^A/\" }\n    result: second\n  - tool: lookup\n    result: { any: 1 }\n  - tool: read_file\n    whenInput: { file_path: \"/x\\\\.json$/\" }\n    result: \"[]\"\n";
    let turns = vec![vec![
        call(
            "lookup",
            json!({"sku": "A1", "meta": {"tags": ["x"], "other": 1}}),
        ),
        call("lookup", json!({"sku": "A1", "meta": {"tags": ["x", "y"]}})),
        call("lookup", json!({"sku": "B1"})),
        call("read_file", json!({"file_path": "skills/data/x.json"})),
    ]];
    with_sim(turns, src, |sim| {
        sim.send(0, "hi", &ticket()).unwrap();
        let v = sim.view();
        assert_eq!(output(&v, 0).1, json!("first"));
        assert_eq!(
            output(&v, 1).1,
            json!("second"),
            "arrays match element-wise with equal length"
        );
        assert_eq!(output(&v, 2).1, json!({"any": 1}));
        assert_eq!(output(&v, 3).0, "rejected", "governance runs before mocks");
    });
}

#[test]
fn sub_workflow_mocks_are_checked_against_the_signature() {
    let ok = "mocks:\n  - tool: archmax_workflow_child\n    whenInput: { item_id: A1 }\n    result: { message: counted, returns: { total: 3 } }\n  - tool: archmax_workflow_child\n    whenInput: { item_id: B2 }\n    result: { message: bad, returns: { total: three, label: x } }\n";
    let turns = vec![vec![
        call("archmax_workflow_child", json!({"item_id": "A1"})),
        call("archmax_workflow_child", json!({"item_id": "B2"})),
        call("archmax_workflow_child", json!({})),
        call("archmax_workflow_child", json!({"item_id": "C3"})),
    ]];
    with_sim(turns, ok, |sim| {
        sim.send(0, "hi", &ticket()).unwrap();
        let v = sim.view();
        assert_eq!(
            output(&v, 0),
            (
                "completed",
                json!({"message": "counted", "returns": {"total": 3}, "note": "Not all return variables were set by the sub-workflow: 'label' was not set."})
            )
        );
        assert_eq!(output(&v, 1).0, "failed");
        assert!(output(&v, 1).1.as_str().unwrap().contains("invalid-return"));
        assert!(
            output(&v, 2)
                .1
                .as_str()
                .unwrap()
                .starts_with("Call refused before it ran: 'item_id' was not set")
        );
        assert!(
            output(&v, 3)
                .1
                .as_str()
                .unwrap()
                .contains("has no mock in this case")
        );
        let subs: Vec<(Option<&str>, Option<&str>)> = v
            .trail
            .iter()
            .filter(|t| t.kind == "sub-workflow")
            .map(|t| (t.workflow.as_deref(), t.status))
            .collect();
        assert_eq!(
            subs,
            [(Some("child"), Some("ok")), (Some("child"), Some("error"))]
        );
    });
}

#[test]
fn raise_ends_the_session_and_stops_the_run() {
    let turns = vec![vec![
        call("archmax_raise", json!({"code": "c", "reason": "r"})),
        say("never said"),
    ]];
    with_sim(turns, "", |sim| {
        sim.send(0, "hi", &ticket()).unwrap();
        let v = sim.view();
        assert_eq!(v.status, Status::Failed);
        assert_eq!(
            v.raised
                .as_ref()
                .map(|r| (r.code.as_str(), r.reason.as_str(), r.state.as_str())),
            Some(("c", "r", "start"))
        );
        assert!(!v.transcript.contains("never said"));
    });
}

#[test]
fn seeding_zones() {
    with_sim(vec![], "", |sim| {
        for bad in [
            "skills/data/y",
            "AGENTS.md",
            "artifacts/x",
            "checkpoints/x",
            "conversation_history/x",
            "../x",
            "",
        ] {
            let err = sim
                .session
                .seed(&[
                    ("scratchpad/ok.txt".into(), "a".into()),
                    (bad.into(), "x".into()),
                ])
                .unwrap_err();
            assert!(
                err.0.starts_with(&format!("cannot seed `{bad}`")),
                "{bad}: {err}"
            );
            assert!(
                !sim.session.files().exists("scratchpad/ok.txt"),
                "nothing is written when one path fails"
            );
        }
        sim.session
            .seed(&[
                ("trigger.json".into(), "{}".into()),
                ("scratchpad/a/b.txt".into(), "t".into()),
                ("/abs.txt".into(), "z".into()),
            ])
            .unwrap();
        assert_eq!(sim.session.files().read("scratchpad/a/b.txt").unwrap(), "t");
        assert!(
            sim.session.files().host_dir().join("abs.txt").exists(),
            "an absolute seed path stays in the session folder"
        );
    });
}

#[test]
fn a_missing_required_trigger_input_refuses_the_start() {
    let fs = ws().with(
        "workflows/w/workflow.yaml",
        "states:\n  s:\n    triggers:\n      go:\n        requires: [{ name: n, type: integer }]\n",
    );
    let wf = Workflow::from_node(yaml::parse("states:\n  s:\n    triggers:\n      go:\n        requires: [{ name: n, type: integer }]\n").documents.first().unwrap());
    let clock = FixedClock::default();
    let cfg = SimConfig {
        workspace: &fs,
        dir: WorkflowDir {
            root: String::new(),
            slug: "w".into(),
        },
        workflow: &wf,
        clock: &clock,
        grades: GradePolicy::default(),
    };
    let mut session = Session::new(cfg, Vec::new()).unwrap();
    assert!(
        session
            .open("manual")
            .unwrap_err()
            .0
            .contains("declared triggers: go")
    );
    session.open("go").unwrap();
    let mut agent = ScriptedAgent::from_turns("t", vec![]);
    let mut host = NoScriptHost;
    let mut sim = Simulator::new(session, &mut agent, &mut host, None);
    sim.send(0, "hi", &[("n".into(), json!(1.5))]).unwrap();
    let v = sim.view();
    assert_eq!(v.status, Status::Rejected);
    assert!(v.trail.is_empty());
    assert!(
        sim.send(0, "x", &[("Bad".into(), json!(1))])
            .unwrap_err()
            .0
            .contains("not a valid variable name")
    );
}

#[test]
fn trail_timestamps_come_from_the_clock() {
    with_sim(
        vec![vec![call(
            "archmax_advance",
            json!({"to": "done", "reason": "r"}),
        )]],
        "",
        |sim| {
            sim.send(0, "hi", &ticket()).unwrap();
            let ts: Vec<u64> = sim.view().trail.iter().map(|t| t.ts).collect();
            assert_eq!(ts.len(), 2);
            assert!(
                ts[0] >= wfx_runner::clock::TEST_EPOCH_MS && ts[0] < ts[1] && ts[1] < ts[0] + 100
            );
        },
    );
}

#[test]
fn mocks_answer_the_run_a_decision_resumes() {
    // wfx-lsp decision (FORMAT §B.9): unlike `archmax test`, the case's mocks apply to the
    // run a `decide` resumes (WFX312 tells the author about the difference).
    // The file does not exist: without the mock the call would fail.
    let src = "mocks:\n  - tool: read_file\n    whenInput: { file_path: scratchpad/none.txt }\n    result: mocked\n";
    let turns = vec![
        vec![call(
            "archmax_advance",
            json!({"to": "review", "reason": "check"}),
        )],
        vec![call(
            "read_file",
            json!({"file_path": "scratchpad/none.txt"}),
        )],
    ];
    with_sim(turns, src, |sim| {
        sim.send(0, "hi", &ticket()).unwrap();
        sim.decide(1, "done", None).unwrap();
        let v = sim.view();
        let last = v.tool_calls.len() - 1;
        assert_eq!(v.tool_calls[last].name, "read_file");
        assert_eq!(output(&v, last), ("completed", json!("mocked")));
    });
}

/// The static `requires` check of a case (WFX310/WFX311) and the simulator's `send` agree
/// on every case below: the check reports exactly when the first `send` is refused.
#[test]
fn the_static_requires_check_and_send_agree() {
    const REQ: &str = "states:\n  start:\n    triggers:\n      manual:\n        requires: [order_id, { name: n, type: integer }, { name: due, type: date-time }, { name: trigger, type: string }]\n    transitions: [{ to: done, description: d }]\n  done: {}\n";
    let cases = [
        "{ order_id: A, n: 1, due: \"2026-01-01T10:00:00Z\" }",
        "{ order_id: null, n: 2.0, due: \"2026-01-01T10:00:00+01:00\" }",
        "{ n: 1, due: \"2026-01-01T10:00:00Z\" }",
        "{ order_id: A, n: \"1\", due: \"2026-01-01T10:00:00Z\" }",
        "{ order_id: A, n: 1.5, due: \"2026-01-01T10:00:00Z\" }",
        "{ order_id: A, n: 1, due: \"2026-01-01T10:00:00\" }",
        "{ order_id: A, n: 1, due: 2026-01-01 }",
        "{ order_id: A, n: null, due: \"2026-01-01T10:00:00Z\" }",
        "{ order_id: A, n: 1, due: \"2026-01-01T10:00:00Z\", trigger: 5 }",
    ];
    let mut refused_seen = 0;
    for vars in cases {
        let case_text =
            format!("title: t\ndescription: d\nvariables: {vars}\nsteps:\n  - send: hi\n");
        let fs = MemFiles::new()
            .with("workflows/w/workflow.yaml", REQ)
            .with("workflows/w/tests/a.test.yaml", case_text.as_str());
        let statically = wfx_schemas::check::check_file(&fs, "workflows/w/tests/a.test.yaml")
            .iter()
            .any(|d| d.code.code == "WFX310" || d.code.code == "WFX311");

        let wf = Workflow::from_node(yaml::parse(REQ).documents.first().unwrap());
        let parsed = yaml::parse(&case_text);
        let case = Case::from_node(parsed.documents.first().unwrap());
        let variables: Vec<(String, Value)> = case
            .variables
            .iter()
            .map(|(k, v)| (k.value.clone(), v.to_json()))
            .collect();
        let clock = FixedClock::default();
        let cfg = SimConfig {
            workspace: &fs,
            dir: WorkflowDir {
                root: String::new(),
                slug: "w".into(),
            },
            workflow: &wf,
            clock: &clock,
            grades: GradePolicy {
                skip: true,
                model: None,
            },
        };
        let mut session = Session::new(cfg, Vec::new()).unwrap();
        session.open("manual").unwrap();
        let mut agent = ScriptedAgent::from_turns("a.agent.yaml", vec![vec![say("ok")]]);
        let mut host = NoScriptHost;
        let mut sim = Simulator::new(session, &mut agent, &mut host, None);
        sim.send(0, "hi", &variables).unwrap();
        let refused = sim.view().status == Status::Rejected && sim.view().trail.is_empty();
        refused_seen += usize::from(refused);
        assert_eq!(statically, refused, "variables {vars}");
    }
    assert_eq!(refused_seen, 6, "the table exercises both verdicts");
}
