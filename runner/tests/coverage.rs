//! `wfx-lsp test --coverage` on the example workspace (tests/corpus/customer-support, nine
//! cases with agent scripts and the real JavaScript hooks). The expectation is derived
//! independently of the coverage code: states, edges, decisions and triggers from each
//! case's recorded audit trail (`CaseRun::trail`, FORMAT §E.2) walked against the declared
//! workflow, hook runs and verdicts from a script host that logs every hook it is asked to
//! run and what the sandbox answered. `coverage.json` must list exactly those as covered
//! and every other declared element as not covered. `--coverage-min` fails below a
//! threshold and passes at it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use wfx_runner::cli::{CliContext, ScriptHostFactory, TestOptions, run_cli_with};
use wfx_runner::clock::FixedClock;
use wfx_runner::disk::DiskFiles;
use wfx_runner::grade::GradePolicy;
use wfx_runner::sandbox::QuickJsHost;
use wfx_runner::script_host::{
    HookRequest, HookVerdict, ScriptError, ScriptHost, ScriptRequest, ToolBridge,
};
use wfx_runner::suite::{RunOptions, run_workflow};
use wfx_schemas::model::workflow::{StateType, Workflow};
use wfx_schemas::workspace::WorkflowDir;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/customer-support")
}

/// `(state, phase, path, verdict)` of every hook run.
type HookLog = Arc<Mutex<Vec<(String, &'static str, String, &'static str)>>>;

/// The real sandbox, logging each hook request and its answer.
struct Logging {
    inner: QuickJsHost,
    log: HookLog,
}

impl ScriptHost for Logging {
    fn run_hook(
        &mut self,
        req: HookRequest,
        bridge: &mut dyn ToolBridge,
    ) -> Result<HookVerdict, ScriptError> {
        let key = (req.state.clone(), req.phase.as_str(), req.path.clone());
        let v = self.inner.run_hook(req, bridge);
        let class = match &v {
            Ok(HookVerdict::Ok) => "ok",
            Ok(_) | Err(ScriptError::Threw(_)) => "veto",
            Err(_) => "failure",
        };
        self.log.lock().unwrap().push((key.0, key.1, key.2, class));
        v
    }

    fn run_script(
        &mut self,
        req: ScriptRequest,
        bridge: &mut dyn ToolBridge,
    ) -> Result<Value, ScriptError> {
        self.inner.run_script(req, bridge)
    }
}

fn factory(log: &HookLog) -> ScriptHostFactory {
    let log = log.clone();
    ScriptHostFactory(Arc::new(move || {
        Box::new(Logging {
            inner: QuickJsHost::default(),
            log: log.clone(),
        })
    }))
}

fn workflow() -> Workflow {
    let text =
        std::fs::read_to_string(corpus().join("workflows/order-lookup/workflow.yaml")).unwrap();
    Workflow::from_node(&wfx_schemas::yaml::parse(&text).documents[0])
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wfx-coverage-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn cli(opts: &TestOptions) -> (i32, String) {
    let clock = FixedClock::default();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_cli_with(
        opts,
        &corpus(),
        &CliContext {
            clock: &clock,
            model: None,
        },
        &mut out,
        &mut err,
    );
    (code, String::from_utf8(err).unwrap())
}

/// What the trails say: covered states, edges `(source, target, kind)` (a trigger edge's
/// kind is `trigger:<id>`, two triggers may enter one state) and triggers.
#[derive(Default)]
struct Expected {
    states: BTreeSet<String>,
    edges: BTreeSet<(String, String, String)>,
    started: BTreeSet<String>,
    arrived: BTreeSet<String>,
}

fn from_trails(wf: &Workflow) -> (Expected, usize) {
    let fs = DiskFiles::new(corpus());
    let clock = FixedClock::default();
    let log: HookLog = Arc::default();
    let f = factory(&log);
    let make = move || (f.0)();
    let mut ro = RunOptions::new(&fs, &clock);
    ro.grades = GradePolicy {
        skip: true,
        model: None,
    };
    ro.script_host = Some(&make);
    let dir = WorkflowDir {
        root: String::new(),
        slug: "order-lookup".into(),
    };
    let run = run_workflow(&ro, &dir, &mut |_| {}).unwrap();
    let human = |s: &str| {
        wf.states
            .iter()
            .any(|st| st.slug.value == s && st.kind == StateType::Human)
    };
    let mut e = Expected::default();
    let mut ran = 0;
    for case in &run.cases {
        assert_eq!(
            case.result.verdict.status,
            wfx_runner::interpret::VerdictStatus::Passed,
            "{}",
            case.path
        );
        if !case.trail.is_empty() {
            ran += 1;
        }
        let mut at: Option<String> = None;
        for (_, t) in &case.trail {
            e.states.insert(t.to.clone());
            let reason = t.reason.clone().unwrap_or_default();
            match (t.kind, &at) {
                ("trigger", None) => {
                    e.edges.insert((
                        "__start__".into(),
                        t.to.clone(),
                        format!("trigger:{reason}"),
                    ));
                    e.started.insert(reason);
                }
                ("trigger", Some(_)) => {
                    e.arrived.insert(reason);
                }
                (k, Some(from)) => {
                    let kind = match k {
                        "on_error" => "on_error",
                        _ if human(from) => "decision",
                        _ => "agent",
                    };
                    e.edges.insert((from.clone(), t.to.clone(), kind.into()));
                }
                (k, None) => panic!("a trail starting with `{k}`"),
            }
            at = Some(t.to.clone());
        }
    }
    (e, ran)
}

fn names(v: &Value, key: &str, covered: bool) -> BTreeSet<String> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["cases"].as_array().is_some_and(|c| c.is_empty()) != covered)
        .map(|x| x["state"].as_str().unwrap().to_owned())
        .collect()
}

fn edges(v: &Value, covered: bool) -> BTreeSet<(String, String, String)> {
    v["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["cases"].as_array().unwrap().is_empty() != covered)
        .map(|x| {
            (
                x["source"].as_str().unwrap().to_owned(),
                x["target"].as_str().unwrap().to_owned(),
                match x["kind"].as_str().unwrap() {
                    "trigger" => format!("trigger:{}", x["label"].as_str().unwrap()),
                    k => k.to_owned(),
                },
            )
        })
        .collect()
}

#[test]
fn coverage_lists_exactly_what_the_example_cases_exercise_and_miss() {
    let wf = workflow();
    let (expected, ran) = from_trails(&wf);
    let log: HookLog = Arc::default();
    let out = out_dir("exact");
    let (code, err) = cli(&TestOptions {
        target: Some("order-lookup".into()),
        skip_grades: true,
        coverage: true,
        out_dir: Some(out.clone()),
        script_host: Some(factory(&log)),
        ..Default::default()
    });
    assert_eq!(code, 0, "{err}");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("coverage.json")).unwrap()).unwrap();
    assert_eq!(file["version"], 1);
    let c = &file["workflows"][0];
    assert_eq!(c["workflow"], "order-lookup");
    assert_eq!(c["cases"], ran);

    // States: covered exactly the trails' targets, uncovered every other declared state.
    let declared: BTreeSet<String> = wf.states.iter().map(|s| s.slug.value.clone()).collect();
    assert_eq!(names(c, "states", true), expected.states);
    let missed: BTreeSet<String> = declared.difference(&expected.states).cloned().collect();
    assert!(!missed.is_empty(), "the example suite misses some state");
    assert_eq!(names(c, "states", false), missed);

    // Edges by kind: covered exactly the trails' moves; uncovered every other declared edge.
    assert_eq!(edges(c, true), expected.edges);
    let mut all = BTreeSet::new();
    for t in wf.triggers() {
        all.insert((
            "__start__".to_owned(),
            t.state.clone(),
            format!("trigger:{}", t.id.value),
        ));
    }
    for s in &wf.states {
        let kind = if s.kind == StateType::Human {
            "decision"
        } else {
            "agent"
        };
        for tr in &s.transitions {
            all.insert((s.slug.value.clone(), tr.to.value.clone(), kind.to_owned()));
        }
        if let Some(e) = &s.on_error {
            all.insert((s.slug.value.clone(), e.value.clone(), "on_error".to_owned()));
        }
    }
    let missed_edges: BTreeSet<_> = all.difference(&expected.edges).cloned().collect();
    assert_eq!(edges(c, false), missed_edges);
    let decisions_taken = expected.edges.iter().filter(|e| e.2 == "decision").count();
    let decisions_all = all.iter().filter(|e| e.2 == "decision").count();
    assert!(decisions_taken > 0);
    assert_eq!(c["summary"]["decisions"]["covered"], decisions_taken);
    assert_eq!(c["summary"]["decisions"]["total"], decisions_all);
    assert_eq!(c["summary"]["states"]["covered"], expected.states.len());
    assert_eq!(c["summary"]["states"]["total"], declared.len());

    // Triggers: started and arrived per the trails.
    for t in c["triggers"].as_array().unwrap() {
        let id = t["trigger"].as_str().unwrap();
        assert_eq!(
            !t["started"].as_array().unwrap().is_empty(),
            expected.started.contains(id),
            "{id}"
        );
        assert_eq!(
            !t["arrived"].as_array().unwrap().is_empty(),
            expected.arrived.contains(id),
            "{id}"
        );
    }

    // Hooks: verdict counts as the logging host saw them; rubric hooks (grades skipped)
    // never ran.
    let mut seen: BTreeMap<(String, String, String), [u64; 3]> = BTreeMap::new();
    for (state, phase, path, class) in log.lock().unwrap().iter() {
        let e = seen
            .entry((
                state.clone(),
                (*phase).to_owned(),
                format!("script: {path}"),
            ))
            .or_default();
        e[match *class {
            "ok" => 0,
            "veto" => 1,
            _ => 2,
        }] += 1;
    }
    assert!(seen.values().any(|v| v[1] > 0), "a veto is exercised");
    let mut listed = BTreeMap::new();
    for h in c["hooks"].as_array().unwrap() {
        let v = &h["verdicts"];
        let counts = [
            v["ok"].as_u64().unwrap(),
            v["veto"].as_u64().unwrap(),
            v["failure"].as_u64().unwrap(),
        ];
        if counts != [0, 0, 0] {
            listed.insert(
                (
                    h["state"].as_str().unwrap().to_owned(),
                    h["phase"].as_str().unwrap().to_owned(),
                    h["hook"].as_str().unwrap().to_owned(),
                ),
                counts,
            );
        }
    }
    assert_eq!(listed, seen);

    // The narration names every uncovered state and decision edge; the Markdown too.
    for s in &missed {
        assert!(err.contains(s.as_str()), "{s} missing from {err}");
    }
    let line = err
        .lines()
        .find(|l| l.starts_with("coverage order-lookup"))
        .unwrap();
    assert!(
        line.contains(&format!(
            "states {}/{}",
            expected.states.len(),
            declared.len()
        )),
        "{line}"
    );
    let md = std::fs::read_to_string(out.join("coverage.md")).unwrap();
    assert!(md.contains("| states |"), "{md}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn coverage_min_fails_below_the_threshold_and_passes_at_it() {
    let wf = workflow();
    let (expected, _) = from_trails(&wf);
    let pct = (expected.states.len() as f64 * 1000.0 / wf.states.len() as f64).round() / 10.0;
    let out = out_dir("min");
    let run = |min: String| {
        cli(&TestOptions {
            target: Some("order-lookup".into()),
            skip_grades: true,
            coverage_min: Some(min),
            out_dir: Some(out.clone()),
            ..Default::default()
        })
    };
    let (code, err) = run(format!("states={}", pct + 0.1));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "coverage below --coverage-min: order-lookup: states {pct}% < {}%",
            pct + 0.1
        )),
        "{err}"
    );
    let (code, err) = run(format!("states={pct}"));
    assert_eq!(code, 0, "{err}");
    let (code, err) = run("paths=10".into());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown group `paths`"), "{err}");
    let _ = std::fs::remove_dir_all(&out);
}
