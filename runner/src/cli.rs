//! The `wfx-lsp test` command, without clap: options in, exit code out, output to any
//! `Write` (FORMAT §C.4). The binary's clap layer fills [`TestOptions`] and calls [`run_cli`].
//!
//! This is the only module of the runner that reads the environment
//! (`ARCHMAX_API_BASE_URL`, `ARCHMAX_MODEL`) or the system clock; everything below takes
//! them as arguments.
//!
//! Target resolution (`[WORKFLOW|PATH]`): a workflow slug under `<cwd>/workflows/`, a
//! workspace root (the folder holding `workflows/`), a workflow folder, a folder under a
//! workflow's `tests/`, or one case file. With no target, `<cwd>` is the workspace, or,
//! started below a workspace's `workflows/`, what `test .` runs there (the workflow
//! folder `<cwd>` is in; from `workflows/` itself, the whole workspace). A
//! workspace with several workflows runs every workflow that has case files, in order
//! (the reference needs the workflow named when there are several; we run them all), and
//! `--json` then prints an array of RunTestsResult objects instead of one object.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use wfx_schemas::cassette::{Cassette, Secrets};
use wfx_schemas::files::{FileAccess, FileError};
use wfx_schemas::inert::inert;
use wfx_schemas::workspace::{WorkflowDir, discover_cases, discover_workflows};

use crate::cassette::{LiveModel, RecordMode};
use crate::clock::{Clock, SystemClock};
use crate::disk::DiskFiles;
use crate::grade::{GradePolicy, Judge, ModelConfig};
use crate::model::judge::{JudgeSettings, ModelJudge};
use crate::model::wire::ChatTransport;
use crate::model::{RunUsage, UsageLog};
use crate::report::{self, Counts};
use crate::script_host::ScriptHost;
use crate::suite::{RunOptions, SuiteError, SuiteRun, run_workflow};

/// Makes the script host of each case; the binary plugs the JavaScript sandbox in here.
#[derive(Clone)]
pub struct ScriptHostFactory(pub Arc<dyn Fn() -> Box<dyn ScriptHost> + Send + Sync>);

impl std::fmt::Debug for ScriptHostFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ScriptHostFactory(..)")
    }
}

/// The function behind a [`ChatTransportFactory`].
pub type MakeTransport =
    dyn Fn(&crate::model::config::ModelEnv) -> Box<dyn ChatTransport> + Send + Sync;

/// Makes the chat transport of a live run from its settings; the binary plugs its HTTP
/// client in here (the runner has no network code).
#[derive(Clone)]
pub struct ChatTransportFactory(pub Arc<MakeTransport>);

impl std::fmt::Debug for ChatTransportFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChatTransportFactory(..)")
    }
}

/// Reads one environment variable (tests pass a map; `None`: the process environment).
#[derive(Clone)]
pub struct EnvLookup(pub Arc<GetVar>);

/// Reads one variable.
pub type GetVar = dyn Fn(&str) -> Option<String> + Send + Sync;

impl std::fmt::Debug for EnvLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EnvLookup(..)")
    }
}

/// Options of `wfx-lsp test [WORKFLOW|PATH] [FILTER] [--json] [--reporter junit|markdown|json|html]...
/// [--out DIR] [--skip-grades] [--bail] [--live] [--buffers-stdin]`.
#[derive(Clone, Debug, Default)]
pub struct TestOptions {
    /// A workflow slug, a workflow folder, a workspace root or a case file.
    pub target: Option<String>,
    /// Substring filter on the workspace-relative case path.
    pub filter: Option<String>,
    /// Print the RunTestsResult JSON on stdout.
    pub json: bool,
    /// Extra reporters: `junit` (`junit.xml`), `markdown` (`report.md`), `json`
    /// (`results.json`), `html` (`report.html`, see [`crate::report_html`]), written under
    /// `out_dir` (default `.wfx-test-results/`).
    pub reporters: Vec<String>,
    /// Where reporters write; also gets one `history.jsonl` row per run.
    pub out_dir: Option<PathBuf>,
    /// Report `grade` as not-executed and let rubric hooks pass (see `grade`).
    pub skip_grades: bool,
    /// Stop after the first failing case.
    pub bail: bool,
    /// Cases not run for want of an agent (issue 15) do not make the exit code 1; they
    /// are still reported and counted (`--allow-no-agent`).
    pub allow_no_agent: bool,
    /// Print each case's whole evidence record in the narration (see
    /// [`report::case_evidence`]); without it, a failed case prints the entries that
    /// explain it.
    pub verbose: bool,
    /// Workflow coverage ([`crate::coverage`]): a summary in the narration, and
    /// `coverage.json` plus `coverage.md` in the output folder (default
    /// `.wfx-test-results/`); the HTML reporter then adds a coverage graph.
    pub coverage: bool,
    /// `--coverage-min states=80,edges=60`: fail (exit 1) when a workflow's coverage is
    /// below a threshold (see [`crate::coverage::Thresholds::parse`]); implies `coverage`.
    pub coverage_min: Option<String>,
    /// The JavaScript sandbox; `None` runs with [`crate::sandbox::QuickJsHost`] (pass a factory of
    /// `NoScriptHost` to run without one: hooks and scripts then fail
    /// their step with a "was not executed" error).
    pub script_host: Option<ScriptHostFactory>,
    /// `--live`: the agent and the judge are the configured model (`ARCHMAX_*` from the
    /// environment over the workspace's `.env`), reached through `chat`. Without it no
    /// model is ever called.
    pub live: bool,
    /// The chat client of `--live` (the binary's HTTP transport).
    pub chat: Option<ChatTransportFactory>,
    /// The environment of `--live` (`None`: the process environment).
    pub env: Option<EnvLookup>,
    /// `--repeat N`: run every selected case N times (1 to [`report::MAX_REPEAT`]) and
    /// report each case's pass rate ([`report::PassRate`]); `history.jsonl` gets one row per
    /// run. `None`: one run, the usual output shapes.
    pub repeat: Option<u32>,
    /// `--buffers-stdin`: the editor's unsaved buffers (workspace-relative path below
    /// `workflows/` → text, read by [`crate::buffers::read_buffers`]), read instead of the
    /// files on disk through [`crate::buffers::BufferOverlay`]. A refused path fails the run
    /// (exit 2) before any case runs.
    pub buffers: Option<std::collections::BTreeMap<String, String>>,
    /// `--record once|new|all|none` (`None`: `once`; docs/cassettes.md). `new` and `all`
    /// need `--live`.
    pub record: Option<crate::cassette::RecordMode>,
    /// `--strict-cassettes`: prompt drift in a replayed cassette fails the case instead
    /// of warning.
    pub strict_cassettes: bool,
    /// Set to stop the run (the editor's "Record with model" cancel): checked before each
    /// case and each model call of a recorded case ([`RunOptions::cancelled`]); a cancelled
    /// recording writes no cassette. `None`: the run cannot be cancelled (the command line).
    pub cancelled: Option<Arc<std::sync::atomic::AtomicBool>>,
}

/// A resolved `--live` run: settings, the client and the shared token log.
struct Live {
    env: crate::model::config::ModelEnv,
    chat: ChatTransportFactory,
    usage: Arc<Mutex<UsageLog>>,
    /// `.env`'s variables (for redaction).
    dotenv: Vec<(String, String)>,
}

/// The values a recorded cassette must not hold ([`Secrets`]): key-like variables of the
/// process environment and of the workspace's `.env`, and the key `--live` uses.
fn secrets(live: Option<&Live>) -> Secrets {
    let mut vars: Vec<(String, String)> = std::env::vars().collect();
    if let Some(l) = live {
        vars.extend(l.dotenv.iter().cloned());
        vars.push(("ARCHMAX_API_KEY".into(), l.env.api_key.clone()));
    }
    Secrets::from_env(vars)
}

/// The transport of a run without `--live`: never called (cases without a cassette or
/// an agent script are not run), and refuses if it were.
struct NoTransport;

impl ChatTransport for NoTransport {
    fn complete(
        &mut self,
        _: &crate::model::wire::ChatRequest,
        _: &crate::model::wire::CallMeta,
    ) -> Result<crate::model::wire::ChatResponse, crate::model::wire::ModelError> {
        Err(crate::model::wire::ModelError::Replay(
            "no model is called without --live".into(),
        ))
    }
}

/// Resolves `--live` before any case runs: the variables (the process environment over
/// `<root>/.env`, read through the confined layer) and the client. `Err` names what is
/// missing; it never contains the key.
fn live_setup(opts: &TestOptions, root: &Path) -> Result<Option<Live>, String> {
    if !opts.live {
        return Ok(None);
    }
    let fs = DiskFiles::new(root);
    let dotenv = fs
        .read_text(".env")
        .map(|t| crate::model::config::parse_dotenv(&t))
        .unwrap_or_default();
    let process: Arc<GetVar> = match &opts.env {
        Some(f) => f.0.clone(),
        None => Arc::new(|k: &str| std::env::var(k).ok()),
    };
    let env = {
        let get = crate::model::config::merge_env(&*process, &dotenv);
        crate::model::config::from_vars(&get)?
    };
    let chat = opts
        .chat
        .clone()
        .ok_or("--live needs a model client, and this build of the runner has none")?;
    Ok(Some(Live {
        env,
        chat,
        usage: Arc::new(Mutex::new(UsageLog::default())),
        dotenv,
    }))
}

/// What [`run_cli_with`] takes from the process: time and the model settings.
pub struct CliContext<'a> {
    /// Time (tests pass a `FixedClock`).
    pub clock: &'a dyn Clock,
    /// `ARCHMAX_API_BASE_URL` / `ARCHMAX_MODEL`, when both are set.
    pub model: Option<ModelConfig>,
}

/// Runs the command in `cwd`; returns the process exit code (0 pass, 1 failures or no
/// match, 2 usage or IO error).
pub fn run_cli(
    opts: &TestOptions,
    cwd: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let model = match (
        std::env::var("ARCHMAX_API_BASE_URL"),
        std::env::var("ARCHMAX_MODEL"),
    ) {
        (Ok(base_url), Ok(model)) if !base_url.is_empty() && !model.is_empty() => {
            Some(ModelConfig { base_url, model })
        }
        _ => None,
    };
    run_cli_with(
        opts,
        cwd,
        &CliContext {
            clock: &SystemClock,
            model,
        },
        stdout,
        stderr,
    )
}

struct Plan {
    root: PathBuf,
    suites: Vec<WorkflowDir>,
    path_filter: Option<String>,
}

fn usage(stderr: &mut dyn Write, msg: &str) -> i32 {
    let _ = writeln!(stderr, "Error: {} (try: wfx-lsp test --help)", inert(msg));
    2
}

fn plan(opts: &TestOptions, cwd: &Path) -> Result<Plan, String> {
    let workflow_dir = |root: &Path, slug: &str| {
        root.join("workflows")
            .join(slug)
            .join("workflow.yaml")
            .is_file()
    };
    let target: &str = if let Some(t) = &opts.target {
        t
    } else {
        if cwd.join("workflows").is_dir() {
            return Ok(Plan {
                root: cwd.to_path_buf(),
                suites: Vec::new(),
                path_filter: None,
            });
        }
        // Started inside a workspace (a workflow folder, its tests, or `workflows/`
        // itself): find the root above, as `test .` does.
        let abs = crate::shown::lexical_absolute(cwd, Path::new("."));
        if abs.file_name().is_some_and(|n| n == "workflows")
            && let Some(root) = abs.parent()
        {
            return Ok(Plan {
                root: root.to_path_buf(),
                suites: Vec::new(),
                path_filter: None,
            });
        }
        if !abs
            .ancestors()
            .skip(1)
            .any(|a| a.file_name().is_some_and(|n| n == "workflows"))
        {
            return Err(format!(
                "no workflows/ folder in {}; pass a workflow, a workspace or a case file",
                cwd.display()
            ));
        }
        "."
    };
    if !target.contains('/') && workflow_dir(cwd, target) {
        return Ok(Plan {
            root: cwd.to_path_buf(),
            suites: vec![WorkflowDir {
                root: String::new(),
                slug: target.to_owned(),
            }],
            path_filter: None,
        });
    }
    let path = cwd.join(target);
    if !path.exists() {
        return Err(format!("no workflow or path `{target}`"));
    }
    if path.is_dir() && path.join("workflows").is_dir() {
        return Ok(Plan {
            root: path,
            suites: Vec::new(),
            path_filter: None,
        });
    }
    let comps: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let Some(w) = comps.iter().rposition(|c| c == "workflows") else {
        return Err(format!(
            "`{target}` is not inside a workspace (no `workflows/` folder above it)"
        ));
    };
    let root: PathBuf = comps.iter().take(w).collect();
    let Some(slug) = comps.get(w + 1) else {
        return Err(format!("`{target}` names no workflow"));
    };
    let rest: Vec<&String> = comps.iter().skip(w + 2).collect();
    let path_filter = if rest.is_empty() {
        None
    } else {
        let mut rel = format!("workflows/{slug}");
        for r in &rest {
            rel.push('/');
            rel.push_str(r);
        }
        Some(rel)
    };
    Ok(Plan {
        root,
        suites: vec![WorkflowDir {
            root: String::new(),
            slug: slug.clone(),
        }],
        path_filter,
    })
}

/// [`run_cli`] with the process context passed in (for tests and the language server).
pub fn run_cli_with(
    opts: &TestOptions,
    cwd: &Path,
    ctx: &CliContext<'_>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    for r in &opts.reporters {
        if !["junit", "markdown", "json", "html"].contains(&r.as_str()) {
            return usage(
                stderr,
                &format!("unknown reporter `{r}` (expected junit, markdown, json or html)"),
            );
        }
    }
    let thresholds = match opts
        .coverage_min
        .as_deref()
        .map(crate::coverage::Thresholds::parse)
    {
        Some(Ok(t)) => Some(t),
        Some(Err(m)) => return usage(stderr, &m),
        None => None,
    };
    let want_coverage = opts.coverage || thresholds.is_some();
    let repeat = match opts.repeat {
        None => 1,
        Some(n) if (1..=report::MAX_REPEAT).contains(&n) => n,
        Some(n) => {
            return usage(
                stderr,
                &format!("--repeat {n} is out of range (1 to {})", report::MAX_REPEAT),
            );
        }
    };
    let mut plan = match plan(opts, cwd) {
        Ok(p) => p,
        Err(m) => return usage(stderr, &m),
    };
    if crate::disk::root_escapes_through_link(cwd, &plan.root) {
        return usage(
            stderr,
            &format!(
                "`{}`: {}",
                plan.root.display(),
                crate::disk::ROOT_LINK_REFUSED
            ),
        );
    }
    let record = opts.record.unwrap_or_default();
    if !opts.live && matches!(record, RecordMode::New | RecordMode::All) {
        return usage(
            stderr,
            &format!(
                "--record {} records live model calls and needs --live (without it cassettes are only replayed)",
                record.as_str()
            ),
        );
    }
    let live = match live_setup(opts, &plan.root) {
        Ok(l) => l,
        Err(m) => {
            let _ = writeln!(stderr, "Error: {}", inert(&m));
            return 2;
        }
    };
    // Cassettes are written to disk (never into the editor's buffers), confined.
    let disk = DiskFiles::new(&plan.root);
    let model_usage = live.as_ref().map_or_else(
        || Arc::new(Mutex::new(UsageLog::default())),
        |l| l.usage.clone(),
    );
    let prices = live.as_ref().map(|l| l.env.prices).unwrap_or_default();
    let secrets = secrets(live.as_ref());
    // A live run that may record refuses a secret set too large to redact whole
    // (docs/cassettes.md, "Secrets"), before any model call.
    if let Some(over) = secrets.overflow()
        && live.is_some()
        && record != RecordMode::None
    {
        let _ = writeln!(stderr, "Error: {over}");
        return 2;
    }
    // The cassettes this command writes: rounds 2..N of `--repeat` do not replay them
    // (crate::rounds).
    let written = crate::rounds::Written::default();
    let save_cassette = |path: &str, c: &Cassette| -> Result<usize, FileError> {
        let n = crate::cassette::save(&disk, path, c, &secrets)?;
        written.add(path);
        Ok(n)
    };
    let chat = || -> Box<dyn ChatTransport> {
        match &live {
            Some(l) => (l.chat.0)(&l.env),
            None => Box::new(NoTransport),
        }
    };
    let fs = match crate::buffers::BufferOverlay::new(
        DiskFiles::new(&plan.root),
        opts.buffers.clone().unwrap_or_default(),
    ) {
        Ok(fs) => fs,
        Err(m) => return usage(stderr, &m),
    };
    if plan.suites.is_empty() {
        let all = discover_workflows(&fs, "");
        let with_cases: Vec<WorkflowDir> = all
            .iter()
            .filter(|w| !discover_cases(&fs, w).is_empty())
            .cloned()
            .collect();
        plan.suites = if all.len() == 1 || with_cases.is_empty() {
            all
        } else {
            with_cases
        };
        if plan.suites.is_empty() {
            return usage(
                stderr,
                &format!("no workflow under {}/workflows", plan.root.display()),
            );
        }
    }
    let cancel_flag = opts.cancelled.clone();
    let cancelled = move || {
        cancel_flag
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::SeqCst))
    };
    let started = ctx.clock.now_ms();
    let host_factory = opts.script_host.clone();
    let make_host = move || -> Box<dyn ScriptHost> {
        match &host_factory {
            Some(f) => (f.0)(),
            None => Box::new(crate::sandbox::QuickJsHost::default()),
        }
    };
    // Copy-paste hints name cases from the current folder, not the workspace root.
    let hint_prefix = crate::shown::root_prefix(&plan.root, cwd);
    let mut code = 0;
    // One entry per run of `--repeat N`: (suites, started at, duration ms).
    let mut rounds: Vec<(Vec<SuiteRun>, u64, u64)> = Vec::new();
    let mut bailed = false;
    for round in 1..=repeat {
        if bailed {
            break;
        }
        if opts.repeat.is_some() {
            let _ = writeln!(stderr, "── run {round}/{repeat} ──");
        }
        // Only `--repeat` reads the clock per run, so a single run's clock reads (and the
        // session ids derived from them) are as before.
        let round_started = if opts.repeat.is_some() {
            ctx.clock.now_ms()
        } else {
            started
        };
        let mut runs: Vec<SuiteRun> = Vec::new();
        // Round 1 plays the workspace as it is; later rounds do not see the cassettes it
        // wrote, play those cases live and write nothing (crate::rounds).
        let later = crate::rounds::Hiding {
            inner: &fs,
            hidden: &written,
        };
        let round_fs: &dyn FileAccess = if round == 1 { &fs } else { &later };
        for dir in &plan.suites {
            let filter = match (&plan.path_filter, &opts.filter) {
                (Some(p), _) if opts.filter.is_none() => Some(p.clone()),
                (_, f) => f.clone(),
            };
            let mut ro = RunOptions::new(round_fs, ctx.clock);
            ro.hint_prefix = hint_prefix.clone();
            ro.grades = GradePolicy {
                skip: opts.skip_grades,
                model: match &live {
                    Some(l) => Some(ModelConfig {
                        base_url: l.env.base_url.clone(),
                        model: l.env.model.clone(),
                    }),
                    None => ctx.model.clone(),
                },
            };
            let workflow = wfx_schemas::check::load_workflow(round_fs, dir).and_then(|w| w.model);
            let live_judge = || -> Box<dyn Judge> {
                match (&live, &workflow) {
                    (Some(l), Some(wf)) => {
                        let (model, temperature, max_tokens) =
                            crate::model::config::judge_settings(wf, &l.env);
                        Box::new(
                            ModelJudge::new(
                                (l.chat.0)(&l.env),
                                JudgeSettings {
                                    model,
                                    temperature,
                                    max_tokens,
                                    timeout_ms: Some(wf.case_timeout_ms.unwrap_or(120_000)),
                                },
                                l.usage.clone(),
                            )
                            .redacting(l.env.key_secrets()),
                        )
                    }
                    _ => Box::new(crate::grade::NoJudge),
                }
            };
            if let Some(l) = &live {
                // The selection rule (crate::select): a cassette, then an agent script, still
                // win; the model plays the cases that have neither (and re-records cassettes
                // under `--record new|all`). Agent-script cases are graded by the live judge.
                ro.live = true;
                ro.live_model = Some(LiveModel {
                    env: &l.env,
                    chat: &chat,
                });
                ro.judge = Some(&live_judge);
            }
            ro.record = if round == 1 { record } else { RecordMode::None };
            ro.strict_cassettes = opts.strict_cassettes;
            ro.save_cassette = Some(&save_cassette);
            ro.usage = Some(model_usage.clone());
            ro.filter = filter.clone();
            ro.bail = opts.bail;
            ro.allow_no_agent = opts.allow_no_agent;
            ro.script_host = Some(&make_host);
            if opts.cancelled.is_some() {
                ro.cancelled = Some(&cancelled);
            }
            let count = discover_cases(round_fs, dir)
                .iter()
                .filter(|p| filter.as_ref().is_none_or(|f| p.contains(f.as_str())))
                .count();
            let _ = report::header(stderr, &dir.slug, count, live.is_some());
            if let Some(l) = &live {
                let _ = writeln!(
                    stderr,
                    "  live model: agent and judge on `{}` (ARCHMAX_MODEL unless the workflow names one)",
                    inert(&l.env.model)
                );
            }
            // Token use per case: every case of a live run, and every case that replayed a
            // cassette (its recorded usage), so a replay reports what the recording did.
            let mut per_case: std::collections::BTreeMap<String, RunUsage> = Default::default();
            let mut seen_calls = model_usage.lock().map(|g| g.calls.len()).unwrap_or(0);
            let mut narrate = |run: &crate::interpret::CaseRun| {
                let _ = report::case(stderr, run);
                let _ = report::case_evidence(stderr, run, opts.verbose);
                let calls = model_usage
                    .lock()
                    .map(|g| g.calls.get(seen_calls..).unwrap_or_default().to_vec())
                    .unwrap_or_default();
                seen_calls += calls.len();
                if live.is_some() || !calls.is_empty() {
                    let u = RunUsage::of(&calls, &prices);
                    let _ = writeln!(stderr, "      {}", u.line());
                    per_case.insert(run.result.id.clone(), u);
                }
            };
            let run = match run_workflow(&ro, dir, &mut narrate) {
                Ok(r) => r,
                Err(SuiteError::Refused(m)) => {
                    let _ = writeln!(stderr, "Error: {}", inert(&m));
                    return 1;
                }
                Err(SuiteError::NoWorkflow(m)) => return usage(stderr, &m),
            };
            if run.result.skipped.is_some() {
                let _ = writeln!(stderr, "{}: suite skipped — disabled", inert(&dir.slug));
            } else if run.filter_matched_nothing {
                let _ = writeln!(
                    stderr,
                    "Error: no cases matched '{}' ({} discovered)",
                    inert(filter.as_deref().unwrap_or("")),
                    run.result.discovered
                );
                code = 1;
            } else {
                let _ = report::summary(stderr, &run);
            }
            if let Some(stop) = &run.walk_stop {
                let _ = writeln!(stderr, "Error: {}", inert(&stop.to_string()));
                code = code.max(1);
            }
            let mut run = run;
            if live.is_some() || !per_case.is_empty() {
                let mut suite = RunUsage::default();
                for u in per_case.values() {
                    suite.add(u);
                }
                // Every case gets a figure (zero when the model played no part), so a replay
                // reports exactly what its live recording did.
                for c in &mut run.cases {
                    c.result.usage = Some(per_case.get(&c.result.id).copied().unwrap_or_default());
                }
                for r in &mut run.result.results {
                    r.usage = Some(per_case.get(&r.id).copied().unwrap_or_default());
                }
                run.result.usage = Some(suite);
                let _ = writeln!(stderr, "{}: {}", inert(&dir.slug), suite.line());
            }
            code = code.max(run.result.exit_code);
            let bail = opts.bail
                && run
                    .result
                    .results
                    .iter()
                    .any(|r| r.verdict.status == crate::interpret::VerdictStatus::Failed);
            runs.push(run);
            if bail {
                bailed = true;
                break;
            }
        }
        let round_ms = if opts.repeat.is_some() {
            ctx.clock.now_ms().saturating_sub(round_started)
        } else {
            0
        };
        rounds.push((runs, round_started, round_ms));
    }
    let duration = ctx.clock.now_ms().saturating_sub(started);
    let rates = opts.repeat.map(|_| {
        let suites: Vec<Vec<SuiteRun>> = rounds.iter().map(|(r, _, _)| r.clone()).collect();
        report::pass_rates(&suites)
    });
    if let Some(rates) = &rates {
        let _ = report::pass_rate_narration(stderr, rounds.len(), rates);
    }
    // Coverage, the stdout line and the single-run shapes read the first run; with
    // `--repeat` the JSON and the reporters carry every run (see `repeat_json`).
    let empty = Vec::new();
    let runs: &Vec<SuiteRun> = rounds.first().map(|(r, _, _)| r).unwrap_or(&empty);
    let coverage: Vec<crate::coverage::SuiteCoverage> = if want_coverage {
        runs.iter()
            .filter(|r| r.result.skipped.is_none())
            .filter_map(|r| crate::coverage::for_suite(&fs, r))
            .collect()
    } else {
        Vec::new()
    };
    for c in &coverage {
        let _ = write!(stderr, "{}", c.narration());
    }
    if let Some(t) = &thresholds {
        let unmet: Vec<String> = coverage.iter().flat_map(|c| t.unmet(c)).collect();
        for u in &unmet {
            let _ = writeln!(stderr, "coverage below --coverage-min: {}", inert(u));
        }
        if !unmet.is_empty() {
            code = code.max(1);
        }
    }
    let repeat_doc = rates
        .as_ref()
        .map(|rates| repeat_json(repeat, &rounds, rates));
    if opts.json {
        let json = match (&repeat_doc, runs.as_slice()) {
            (Some(doc), _) => serde_json::to_string_pretty(doc),
            (None, [one]) => serde_json::to_string_pretty(&report::result_json(one)),
            (None, many) => serde_json::to_string_pretty(
                &many.iter().map(report::result_json).collect::<Vec<_>>(),
            ),
        };
        let _ = writeln!(stdout, "{}", json.unwrap_or_default());
    } else if repeat_doc.is_some() {
        let mut total = Counts::default();
        for r in rounds.iter().flat_map(|(r, _, _)| r) {
            total.add(Counts::of(r));
        }
        let _ = writeln!(stdout, "{} runs: {}", rounds.len(), total.line());
    } else if runs.len() == 1 && runs.iter().all(|r| r.result.skipped.is_some()) {
        let _ = writeln!(stdout, "suite skipped — disabled");
    } else {
        let mut total = Counts::default();
        for r in runs {
            total.add(Counts::of(r));
        }
        let _ = writeln!(stdout, "{}", total.line());
    }
    if !opts.reporters.is_empty() || opts.out_dir.is_some() || want_coverage {
        let given = opts
            .out_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(".wfx-test-results"));
        let out = cwd.join(&given);
        let meta = crate::report_html::HtmlMeta {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            started_ms: started,
            duration_ms: duration,
            coverage: want_coverage,
        };
        let written = crate::disk::output_dir(cwd, &given).and_then(|dir| {
            write_reports(
                &dir,
                &opts.reporters,
                &rounds,
                &fs,
                &meta,
                repeat_doc.as_ref(),
            )
            .and_then(|()| write_coverage(&dir, &coverage, want_coverage))
            .map_err(|e| e.to_string())
        });
        if let Err(e) = written {
            let _ = writeln!(
                stderr,
                "Error: cannot write reports to {}: {}",
                inert(&out.display().to_string()),
                inert(&e.to_string())
            );
            return 2;
        }
        let _ = writeln!(
            stderr,
            "reports written to {}",
            inert(&out.display().to_string())
        );
    }
    code
}

/// The `--json` document of `--repeat N` (docs/cli.md): `{"repeat": N, "runs": [...],
/// "passRates": [...]}`, where each of `runs` is what `--json` prints for one run (an
/// object, or an array with several workflows) and `passRates` is [`report::PassRate`] per
/// case.
fn repeat_json(
    repeat: u32,
    rounds: &[(Vec<SuiteRun>, u64, u64)],
    rates: &[report::PassRate],
) -> serde_json::Value {
    let runs: Vec<serde_json::Value> = rounds
        .iter()
        .map(|(r, _, _)| match r.as_slice() {
            [one] => report::result_json(one),
            many => serde_json::Value::Array(many.iter().map(report::result_json).collect()),
        })
        .collect();
    serde_json::json!({
        "repeat": repeat,
        "runs": runs,
        "passRates": rates,
    })
}

/// Writes the reporters' files and appends the `history.jsonl` rows in the output folder
/// `out` (already checked by [`crate::disk::output_dir`]): one row per run, so `--repeat N`
/// appends N rows (`round`, `rounds` set). Every file goes through
/// [`crate::disk::replace_file`] / [`crate::disk::append_file`]: a symbolic link planted at
/// a report's name is replaced, never written through ("safe writes").
///
/// With `--repeat` (`repeat_doc` is `Some`): JUnit and Markdown hold every run, each suite
/// named `<workflow> (run i/N)`, and Markdown ends with the pass-rate table;
/// `results.json` is `repeat_doc`; the HTML report shows the first run.
fn write_reports(
    out: &Path,
    reporters: &[String],
    rounds: &[(Vec<SuiteRun>, u64, u64)],
    fs: &dyn FileAccess,
    meta: &crate::report_html::HtmlMeta,
    repeat_doc: Option<&serde_json::Value>,
) -> std::io::Result<()> {
    let first: &[SuiteRun] = rounds.first().map(|(r, _, _)| r.as_slice()).unwrap_or(&[]);
    let n = rounds.len();
    let labelled: Vec<SuiteRun> = if repeat_doc.is_some() {
        rounds
            .iter()
            .enumerate()
            .flat_map(|(i, (r, _, _))| {
                r.iter().map(move |s| {
                    let mut s = s.clone();
                    s.result.workflow = format!("{} (run {}/{n})", s.result.workflow, i + 1);
                    s
                })
            })
            .collect()
    } else {
        first.to_vec()
    };
    for r in reporters {
        let mut buf = Vec::new();
        let name = match r.as_str() {
            "junit" => {
                report::junit(&mut buf, &labelled)?;
                "junit.xml"
            }
            "markdown" => {
                report::markdown(&mut buf, &labelled)?;
                if repeat_doc.is_some() {
                    let suites: Vec<Vec<SuiteRun>> =
                        rounds.iter().map(|(r, _, _)| r.clone()).collect();
                    report::pass_rate_markdown(&mut buf, n, &report::pass_rates(&suites))?;
                }
                "report.md"
            }
            "html" => {
                crate::report_html::html(&mut buf, first, fs, meta)?;
                "report.html"
            }
            _ => {
                buf = match repeat_doc {
                    Some(doc) => serde_json::to_vec_pretty(doc),
                    None => {
                        let v: Vec<_> = first.iter().map(report::result_json).collect();
                        serde_json::to_vec_pretty(&v)
                    }
                }
                .map_err(std::io::Error::other)?;
                buf.push(b'\n');
                "results.json"
            }
        };
        crate::disk::replace_file(out, name, &buf)?;
    }
    let mut rows = String::new();
    for (i, (runs, started, duration)) in rounds.iter().enumerate() {
        let (started, duration) = if repeat_doc.is_some() {
            (*started, *duration)
        } else {
            (meta.started_ms, meta.duration_ms)
        };
        let mut row = report::history_row(runs, started, duration);
        if repeat_doc.is_some() {
            row.round = u32::try_from(i + 1).ok();
            row.rounds = u32::try_from(n).ok();
        }
        rows.push_str(&serde_json::to_string(&row).map_err(std::io::Error::other)?);
        rows.push('\n');
    }
    crate::disk::append_file(out, "history.jsonl", rows.as_bytes())
}

/// Writes `coverage.json` (`{version, workflows}`, docs/cli.md) and `coverage.md` (one
/// section per workflow, for a pull-request comment) when coverage was asked for; safe
/// writes as in [`write_reports`].
fn write_coverage(
    out: &Path,
    coverage: &[crate::coverage::SuiteCoverage],
    wanted: bool,
) -> std::io::Result<()> {
    if !wanted {
        return Ok(());
    }
    let file = crate::coverage::CoverageFile {
        version: crate::coverage::COVERAGE_VERSION,
        workflows: coverage,
    };
    let mut json = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
    json.push(b'\n');
    crate::disk::replace_file(out, "coverage.json", &json)?;
    let md: Vec<String> = coverage.iter().map(|c| c.markdown()).collect();
    crate::disk::replace_file(out, "coverage.md", md.join("\n").as_bytes())
}

/// The workspace a path lies in, for callers that only have a case path (the server).
pub fn disk_files(root: &Path) -> impl FileAccess {
    DiskFiles::new(root)
}
