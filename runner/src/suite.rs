//! Discovery and `runTests` (FORMAT §C.1, §C.2): which cases a workflow has, the substring
//! filter, the disabled and `maxConcurrency` rules, sequential execution with a fresh agent,
//! script host and session per case, and the [`RunTestsResult`] the CLI prints with
//! `--json`. Also the entry points the language server uses for code lenses:
//! [`run_workflow`] and [`run_case_file`].
//!
//! Must not: print or read the environment (the CLI does).

use serde::Serialize;
use wfx_schemas::check::load_workflow;
use wfx_schemas::files::FileAccess;
use wfx_schemas::workspace::{self, FileKind, WorkflowDir, agent_script_path};

use std::sync::{Arc, Mutex};

use crate::agent::{Agent, NoAgent, ScriptedAgent};
use crate::cassette::{LiveModel, RecordMode, SaveCassette, run_model_case};
use crate::clock::Clock;
use crate::grade::{GradePolicy, Judge};
use crate::interpret::{CaseEnv, CaseResult, CaseRun, VerdictStatus, run_case};
use crate::model::UsageLog;
use crate::script_host::{NoScriptHost, ScriptHost};
use crate::select::{AgentSource, not_run_message, select_agent};

/// `{workflow, results, exitCode, discovered[, skipped]}` (FORMAT §C.3, §C.4).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTestsResult {
    /// The workflow slug.
    pub workflow: String,
    /// Case results in discovery order.
    pub results: Vec<CaseResult>,
    /// 1 when any verdict failed, or any case was not run for want of an agent (unless
    /// [`RunOptions::allow_no_agent`]), else 0.
    pub exit_code: i32,
    /// Case files found (0 for a disabled workflow).
    pub discovered: usize,
    /// `"disabled"` for a disabled workflow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<&'static str>,
    /// Model tokens (and cost) of the suite in a `--live` run; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::model::RunUsage>,
}

/// A suite run: the result plus per-case runs (flows, durations) and the run's duration.
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteRun {
    /// The reference's result.
    pub result: RunTestsResult,
    /// One per result, same order.
    pub cases: Vec<CaseRun>,
    /// Wall time by the run's clock, ms.
    pub duration_ms: u64,
    /// A filter was given and selected no case.
    pub filter_matched_nothing: bool,
    /// Discovery stopped at a bound (`wfx_schemas::files::walk_bounded`): cases below
    /// that folder were not found, so not run. The run fails (exit code 1) and
    /// `wfx-lsp test` says where (docs/cli.md).
    pub walk_stop: Option<wfx_schemas::files::WalkStop>,
}

/// Why a suite could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SuiteError {
    /// No usable `workflow.yaml` (exit 2 in the CLI).
    NoWorkflow(String),
    /// The reference throws (`maxConcurrency` above 1); exit 1 with `Error: …`.
    Refused(String),
}

impl std::fmt::Display for SuiteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SuiteError::NoWorkflow(m) | SuiteError::Refused(m) => f.write_str(m),
        }
    }
}

/// Makes a fresh script host per case.
pub type HostFactory<'a> = &'a dyn Fn() -> Box<dyn ScriptHost>;
/// Makes the agent of a case from its path.
pub type AgentFactory<'a> = &'a dyn Fn(&dyn FileAccess, &str) -> Box<dyn Agent>;
/// Makes a judge per case.
pub type JudgeFactory<'a> = &'a dyn Fn() -> Box<dyn Judge>;

/// Everything a run needs.
pub struct RunOptions<'a> {
    /// The workspace (paths relative to it).
    pub fs: &'a dyn FileAccess,
    /// Time.
    pub clock: &'a dyn Clock,
    /// `--skip-grades` and the configured model.
    pub grades: GradePolicy,
    /// Substring filter on the workspace-relative case path.
    pub filter: Option<String>,
    /// Stop after the first failing case.
    pub bail: bool,
    /// Script hosts (default [`NoScriptHost`]).
    pub script_host: Option<HostFactory<'a>>,
    /// Agents: overrides the selection rule when set (tests, benchmarks). Default: the
    /// rule of [`crate::select::select_agent`] (cassette, else agent script, else live,
    /// else not run).
    pub agent: Option<AgentFactory<'a>>,
    /// Live model runs are allowed (`--live`; the selection rule's third choice).
    pub live: bool,
    /// The live model, used when `live` and the rule picks the model (recorded per
    /// `record`), and to re-record cassettes (`--record new|all`); without it such a case
    /// is reported "not run".
    pub live_model: Option<LiveModel<'a>>,
    /// `--record` (default `once`; docs/cassettes.md).
    pub record: RecordMode,
    /// `--strict-cassettes`: prompt drift in a replay fails the case instead of warning.
    pub strict_cassettes: bool,
    /// Writes a recorded cassette (the CLI: [`crate::cassette::save`] on its confined
    /// disk layer, with the environment's secrets). Without it a recording fails its case.
    pub save_cassette: Option<SaveCassette<'a>>,
    /// The token log of model calls, live and replayed (default: a fresh one per case).
    pub usage: Option<Arc<Mutex<UsageLog>>>,
    /// Cases not run for want of an agent do not make the exit code 1
    /// (`--allow-no-agent`); they are still reported and counted.
    pub allow_no_agent: bool,
    /// Judges (default: none).
    pub judge: Option<JudgeFactory<'a>>,
    /// Checked between cases; `true` stops the run.
    pub cancelled: Option<&'a dyn Fn() -> bool>,
    /// Prepended to the workspace-relative case path in the commands a "not run" message
    /// tells the user to run (`wfx-lsp scaffold <prefix>workflows/…`): the workspace root
    /// as seen from the folder the command was started in (`crate::shown::root_prefix`;
    /// the CLI sets it). Default `""` (the language server, whose paths are the client's).
    pub hint_prefix: String,
}

impl<'a> RunOptions<'a> {
    /// Defaults: no filter, no bail, no sandbox, scripted agents, no judge.
    pub fn new(fs: &'a dyn FileAccess, clock: &'a dyn Clock) -> Self {
        Self {
            fs,
            clock,
            grades: GradePolicy::default(),
            filter: None,
            bail: false,
            script_host: None,
            agent: None,
            live: false,
            live_model: None,
            record: RecordMode::Once,
            strict_cassettes: false,
            save_cassette: None,
            usage: None,
            allow_no_agent: false,
            judge: None,
            cancelled: None,
            hint_prefix: String::new(),
        }
    }
}

/// The scripted agent beside a case: `x.agent.yaml` for `x.test.yaml`. A missing file
/// gives an agent whose first run fails with instructions; a malformed one fails likewise.
pub fn scripted_agent(fs: &dyn FileAccess, case_path: &str) -> Box<dyn Agent> {
    let path = agent_script_path(case_path);
    match fs.read_text(&path) {
        Err(_) => Box::new(ScriptedAgent::missing(&path)),
        Ok(text) => match ScriptedAgent::parse(&path, &text) {
            Ok(a) => Box::new(a),
            Err(msg) => Box::new(BrokenAgent(msg)),
        },
    }
}

struct BrokenAgent(String);

impl Agent for BrokenAgent {
    fn respond(
        &mut self,
        _ctx: &crate::agent::TurnContext<'_>,
    ) -> Result<Vec<crate::agent::AgentAction>, crate::agent::AgentError> {
        Err(crate::agent::AgentError(self.0.clone()))
    }
}

/// Every case file of a workflow, sorted (FORMAT §C.1).
pub fn discover(fs: &dyn FileAccess, dir: &WorkflowDir) -> Vec<String> {
    workspace::discover_cases(fs, dir)
}

/// The agent of the case at `path` for the sources that need no model: the agent script,
/// or a [`NoAgent`] (the case is reported "not run"). The model's sources (a cassette, the
/// live model) are run by [`run_model_case`].
fn case_agent(opts: &RunOptions<'_>, path: &str, source: AgentSource) -> Box<dyn Agent> {
    let shown = format!("{}{path}", opts.hint_prefix);
    match source {
        AgentSource::AgentScript { .. } => scripted_agent(opts.fs, path),
        AgentSource::Cassette { .. } | AgentSource::Live => Box::new(NoAgent(format!(
            "no agent: live runs are allowed but no model is configured; {}",
            not_run_message(&shown, &agent_script_path(path))
        ))),
        AgentSource::NoAgent { script_path } => {
            Box::new(NoAgent(not_run_message(&shown, &script_path)))
        }
    }
}

/// Runs one case with the agent the selection rule ([`crate::select`]) picks:
/// [`RunOptions::agent`] when set; a cassette or the live model through
/// [`run_model_case`]; else the agent script, else "not run".
fn one_case(opts: &RunOptions<'_>, env: &CaseEnv<'_>, path: &str) -> CaseRun {
    let mut agent = match opts.agent {
        Some(f) => f(opts.fs, path),
        None => match select_agent(opts.fs, path, opts.live) {
            AgentSource::Cassette { path: c } => return run_model_case(opts, env, path, Some(&c)),
            AgentSource::Live if opts.live_model.is_some() => {
                return run_model_case(opts, env, path, None);
            }
            source => case_agent(opts, path, source),
        },
    };
    let mut host: Box<dyn ScriptHost> = match opts.script_host {
        Some(f) => f(),
        None => Box::new(NoScriptHost),
    };
    let mut judge = opts.judge.map(|f| f());
    let judge_ref: Option<&mut dyn Judge> = match &mut judge {
        Some(j) => Some(&mut **j),
        None => None,
    };
    run_case(env, path, agent.as_mut(), host.as_mut(), judge_ref)
}

/// `Err` with the reference's `WorkflowLoadError` shape when `dir`'s `workflow.yaml` has an
/// error-severity diagnostic (FORMAT §C.2 step 6; issue 13: `test` never runs the cases of a
/// workflow that `check` rejects): `Cannot load workflow '<slug>' (<path>): <line>:<col>
/// <code> <message>. Run 'wfx-lsp check <dir>' for details.` naming the first error in
/// file order. Lint errors count too: a fail-closed runner does not run what `check` fails.
pub fn refuse_unloadable(fs: &dyn FileAccess, dir: &WorkflowDir) -> Result<(), SuiteError> {
    let spec = dir.spec_path();
    let diags = wfx_schemas::check::check_file(fs, &spec);
    let Some(first) = diags
        .iter()
        .filter(|d| d.file == spec && d.severity == wfx_schemas::diagnostics::Severity::Error)
        .min_by_key(|d| (d.range.start, d.range.end))
    else {
        return Ok(());
    };
    let at = fs
        .read_text(&spec)
        .map(|text| {
            let index = wfx_schemas::text::LineIndex::new(&text);
            let p = index.position(
                first.range.start,
                wfx_schemas::text::PositionEncoding::Utf32,
            );
            format!("{}:{} ", p.line + 1, p.character + 1)
        })
        .unwrap_or_default();
    Err(SuiteError::Refused(format!(
        "Cannot load workflow '{}' ({spec}): {at}{} {}. Run 'wfx-lsp check {}' for details.",
        dir.slug,
        first.code.code,
        first.message,
        dir.dir()
    )))
}

/// Runs the cases of one workflow (FORMAT §C.2), calling `on_case` after each case.
pub fn run_workflow(
    opts: &RunOptions<'_>,
    dir: &WorkflowDir,
    on_case: &mut dyn FnMut(&CaseRun),
) -> Result<SuiteRun, SuiteError> {
    let started = opts.clock.now_ms();
    let info = load_workflow(opts.fs, dir).ok_or_else(|| {
        SuiteError::NoWorkflow(format!(
            "no workflow.yaml found for workflow '{}'",
            dir.slug
        ))
    })?;
    let workflow = info
        .model
        .ok_or_else(|| SuiteError::NoWorkflow(format!("{} is not a YAML mapping", info.path)))?;
    let mut result = RunTestsResult {
        workflow: dir.slug.clone(),
        results: Vec::new(),
        exit_code: 0,
        discovered: 0,
        skipped: None,
        usage: None,
    };
    if workflow.disabled {
        result.skipped = Some("disabled");
        return Ok(SuiteRun {
            result,
            cases: Vec::new(),
            duration_ms: 0,
            filter_matched_nothing: false,
            walk_stop: None,
        });
    }
    if let Some(n) = workflow.max_concurrency.filter(|n| *n > 1) {
        return Err(SuiteError::Refused(format!(
            "'tests.maxConcurrency' is {n}, but case concurrency is not implemented — cases run sequentially. Set it to 1 or remove the field."
        )));
    }
    let found = workspace::discover_test_files(opts.fs, dir);
    let walk_stop = found.stop;
    let all = found.cases;
    result.discovered = all.len();
    let selected: Vec<&String> = all
        .iter()
        .filter(|p| opts.filter.as_ref().is_none_or(|f| p.contains(f.as_str())))
        .collect();
    let filter_matched_nothing = opts.filter.is_some() && selected.is_empty();
    if !selected.is_empty() {
        refuse_unloadable(opts.fs, dir)?;
    }
    let env = CaseEnv {
        fs: opts.fs,
        dir,
        workflow: &workflow,
        clock: opts.clock,
        grades: opts.grades.clone(),
    };
    let mut cases = Vec::new();
    for path in selected {
        if opts.cancelled.is_some_and(|c| c()) {
            break;
        }
        let run = one_case(opts, &env, path);
        on_case(&run);
        let failed = run.result.verdict.status == VerdictStatus::Failed;
        result.results.push(run.result.clone());
        cases.push(run);
        if failed && opts.bail {
            break;
        }
    }
    result.exit_code = i32::from(
        walk_stop.is_some()
            || result.results.iter().any(|r| {
                r.verdict.status == VerdictStatus::Failed
                    || (r.verdict.status == VerdictStatus::NotRun && !opts.allow_no_agent)
            }),
    );
    let duration_ms = opts.clock.now_ms().saturating_sub(started);
    Ok(SuiteRun {
        result,
        cases,
        duration_ms,
        filter_matched_nothing,
        walk_stop,
    })
}

/// Runs one case file by its workspace-relative path (the "▶ Run case" code lens).
pub fn run_case_file(opts: &RunOptions<'_>, path: &str) -> Result<CaseRun, SuiteError> {
    let FileKind::Case(dir) = workspace::classify(path) else {
        return Err(SuiteError::NoWorkflow(format!(
            "`{path}` is not a case file (workflows/<slug>/tests/**/*.test.yaml)"
        )));
    };
    let info = load_workflow(opts.fs, &dir).ok_or_else(|| {
        SuiteError::NoWorkflow(format!(
            "no workflow.yaml found for workflow '{}'",
            dir.slug
        ))
    })?;
    let workflow = info
        .model
        .ok_or_else(|| SuiteError::NoWorkflow(format!("{} is not a YAML mapping", info.path)))?;
    refuse_unloadable(opts.fs, &dir)?;
    let env = CaseEnv {
        fs: opts.fs,
        dir: &dir,
        workflow: &workflow,
        clock: opts.clock,
        grades: opts.grades.clone(),
    };
    Ok(one_case(opts, &env, path))
}
