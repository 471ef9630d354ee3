//! Replay of one recorded case (issue 15): the time `run_case_file` takes for a case whose
//! model calls come from its cassette (the live agent's prompt and transcript rebuilt, each
//! call matched against the recording, the judge's verdict replayed), next to the same case
//! with its agent script.
//!
//! Set-up, not timed: a copy of the example workspace; the case `refund-approved` is
//! recorded once through `--record once` machinery (`run_workflow` with a live model whose
//! transport plays the case's agent script: per run, the turn's says and calls as one
//! message, then an empty answer; the judge answers score 1), which writes
//! `refund-approved.cassette.json`. Then `RUNS` replays and `RUNS` scripted runs, each a
//! fresh `run_case_file` with the QuickJS sandbox (the scripted runs skip the grades: no
//! judge without a model). Prints the median and p95 wall time in ms and the mean CPU time per
//! run (all threads, from `/proc/self/stat`). Run with
//! `cargo run --release -p wfx-bench --example cassette_replay`; not a test.

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark harness fails loudly"
)]

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};
use wfx_runner::agent::{AgentAction, ScriptedAgent};
use wfx_runner::cassette::{LiveModel, RecordMode, save};
use wfx_runner::clock::SystemClock;
use wfx_runner::disk::DiskFiles;
use wfx_runner::interpret::VerdictStatus;
use wfx_runner::model::config::ModelEnv;
use wfx_runner::model::wire::{
    CallMeta, CallRole, ChatRequest, ChatResponse, ChatTransport, ModelError, ToolArgs, ToolCall,
};
use wfx_runner::script_host::ScriptHost;
use wfx_runner::suite::{RunOptions, run_case_file, run_workflow, scripted_agent};
use wfx_schemas::cassette::Secrets;
use wfx_schemas::files::FileAccess;
use wfx_schemas::workspace::WorkflowDir;

const RUNS: usize = 300;
const CASE: &str = "workflows/order-lookup/tests/refund-approved.test.yaml";

/// Plays an agent script as a model: run n's first call answers turn n (its says joined,
/// its calls), later calls of the run answer nothing; the judge says score 1, rubric hooks
/// `ok`.
struct ScriptModel(Vec<Vec<AgentAction>>);

impl ChatTransport for ScriptModel {
    fn complete(&mut self, _: &ChatRequest, meta: &CallMeta) -> Result<ChatResponse, ModelError> {
        let text = |t: &str| ChatResponse {
            content: Some(t.into()),
            ..ChatResponse::default()
        };
        match meta.role {
            CallRole::Judge => return Ok(text("{\"score\": 1, \"reason\": \"met\"}")),
            CallRole::Rubric => return Ok(text("{\"verdict\": \"ok\", \"reason\": \"fine\"}")),
            CallRole::Agent => {}
        }
        let turn = match (meta.call, self.0.get(meta.run as usize)) {
            (0, Some(t)) => t.clone(),
            _ => Vec::new(),
        };
        let mut says = Vec::new();
        let mut calls = Vec::new();
        for (i, a) in turn.into_iter().enumerate() {
            match a {
                AgentAction::Say(s) => says.push(s),
                AgentAction::Call { tool, input } => calls.push(ToolCall {
                    id: format!("r{}_{i}", meta.run),
                    name: tool,
                    arguments: ToolArgs::Json(input),
                }),
            }
        }
        Ok(ChatResponse {
            content: (!says.is_empty()).then(|| says.join("\n\n")),
            tool_calls: calls,
            ..ChatResponse::default()
        })
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

fn stats(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[ms.len() * 95 / 100])
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/customer-support"),
        root,
    );
    let fs = DiskFiles::new(root);
    let script = fs
        .read_text("workflows/order-lookup/tests/refund-approved.agent.yaml")
        .unwrap();
    let turns = ScriptedAgent::parse("refund-approved", &script)
        .unwrap()
        .turns()
        .unwrap()
        .to_vec();
    let host = || -> Box<dyn ScriptHost> { Box::new(wfx_runner::sandbox::QuickJsHost::default()) };

    // Record once (set-up).
    let env = ModelEnv {
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: "bench".into(),
        model: "bench-model".into(),
        temperature: None,
        max_tokens: None,
        prices: Default::default(),
    };
    let chat = || -> Box<dyn ChatTransport> { Box::new(ScriptModel(turns.clone())) };
    let secrets = Secrets::default();
    let writer = |p: &str, c: &wfx_schemas::cassette::Cassette| save(&fs, p, c, &secrets);
    let clock = SystemClock;
    {
        std::fs::remove_file(root.join("workflows/order-lookup/tests/refund-approved.agent.yaml"))
            .unwrap();
        let mut ro = RunOptions::new(&fs, &clock);
        ro.live = true;
        ro.live_model = Some(LiveModel {
            env: &env,
            chat: &chat,
        });
        ro.record = RecordMode::Once;
        ro.save_cassette = Some(&writer);
        ro.script_host = Some(&host);
        ro.filter = Some("refund-approved".into());
        ro.grades.model = Some(wfx_runner::grade::ModelConfig {
            base_url: env.base_url.clone(),
            model: env.model.clone(),
        });
        let dir = WorkflowDir {
            root: String::new(),
            slug: "order-lookup".into(),
        };
        let run = run_workflow(&ro, &dir, &mut |_| {}).unwrap();
        let r = &run.result.results[0];
        assert_eq!(r.verdict.status, VerdictStatus::Passed, "{r:?}");
        std::fs::write(
            root.join("workflows/order-lookup/tests/refund-approved.agent.yaml"),
            &script,
        )
        .unwrap();
    }
    let cassette = fs
        .read_text("workflows/order-lookup/tests/refund-approved.cassette.json")
        .unwrap();
    let c: Value = serde_json::from_str(&cassette).unwrap();
    let calls = c["interactions"].as_array().unwrap().len();

    let time = |scripted: bool| -> (Vec<f64>, f64) {
        let agent = |fs: &dyn FileAccess, p: &str| scripted_agent(fs, p);
        let cpu_before = process_cpu_ms();
        let walls = (0..RUNS)
            .map(|_| {
                let mut ro = RunOptions::new(&fs, &clock);
                ro.script_host = Some(&host);
                if scripted {
                    // No judge without a model: the scripted run skips its grades.
                    ro.agent = Some(&agent);
                    ro.grades.skip = true;
                }
                let t = Instant::now();
                let run = run_case_file(&ro, CASE).unwrap();
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                assert_eq!(
                    run.result.verdict.status,
                    VerdictStatus::Passed,
                    "{:?}",
                    run.result
                );
                ms
            })
            .collect();
        (walls, (process_cpu_ms() - cpu_before) / RUNS as f64)
    };
    let (replay_walls, replay_cpu) = time(false);
    let (script_walls, script_cpu) = time(true);
    let (replay_med, replay_p95) = stats(replay_walls);
    let (script_med, script_p95) = stats(script_walls);
    println!(
        "{}",
        json!({
            "case": CASE,
            "recordedCalls": calls,
            "cassetteBytes": cassette.len(),
            "runs": RUNS,
            "replay": {"medianMs": replay_med, "p95Ms": replay_p95, "cpuMsPerRun": replay_cpu},
            "scripted": {"medianMs": script_med, "p95Ms": script_p95, "cpuMsPerRun": script_cpu},
        })
    );
}

/// The process's CPU time so far (user + system, every thread including finished ones), in
/// ms, from `/proc/self/stat` (fields 14 and 15, in clock ticks of 10 ms: Linux's `USER_HZ`
/// is 100 on every architecture it exposes to user space). The load-independent figure on a
/// shared machine, where wall times mostly measure waiting for a core; resolution 10 ms, so
/// only a loop of many runs gives a useful mean.
fn process_cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // The command name (field 2) may hold spaces; the fields after it follow its ')'.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    // `rest` starts at field 3, so fields 14 and 15 are its 11th and 12th.
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    ticks as f64 * 10.0
}
