//! Cassettes in the runner (issue 15; docs/cassettes.md): the [`RecordMode`]s, the run of
//! a case whose model calls are recorded or replayed ([`run_model_case`], called by the
//! suite for the selection rule's `Cassette` and `Live` sources), the transport-level
//! [`tape`], and the atomic write of a recorded cassette through the confined file layer
//! ([`save`]). The format itself (types, parsing, the path rule, redaction) is
//! `wfx_schemas::cassette`, so `check` and the editor read the same types.
//!
//! Must not: write anywhere but the workspace through [`DiskFiles`], follow a link planted
//! at the cassette's name, write a cassette whose secrets were not redacted, or reach the
//! network other than through the live transport `--live` provides.

pub mod export;
pub mod scrub;
pub mod tape;

use std::sync::{Arc, Mutex};

use wfx_schemas::cassette::{Cassette, InputDigests, RecordedClock, Secrets, digest, to_json};
use wfx_schemas::files::FileError;
use wfx_schemas::workspace::case_id;

use crate::agent::{Agent, AgentAction, AgentError, TurnContext};
use crate::clock::{CaseClock, Clock, FixedClock, SystemClock};
use crate::disk::{DiskFiles, replace_file};
use crate::grade::{Judge, ModelConfig};
use crate::interpret::{CaseEnv, CaseRun, VerdictStatus, run_case};
use crate::model::UsageLog;
use crate::model::config::{ModelEnv, judge_settings};
use crate::model::judge::{JudgeSettings, ModelJudge};
use crate::model::live::{LiveAgent, LiveSettings};
use crate::model::wire::ChatTransport;
use crate::script_host::{NoScriptHost, ScriptHost};
use crate::suite::RunOptions;
use tape::{RecordingInfo, Tape, TapeMode, endpoint_host, rfc3339};

/// `--record`: what a run does with cassettes, in VCR's words (docs/cassettes.md). The
/// network is used only with `--live`; without it every mode replays an existing cassette.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecordMode {
    /// Record when the case has no cassette, else replay (the default).
    #[default]
    Once,
    /// Replay while the recording matches, then record the rest live and replace the
    /// recording's tail.
    New,
    /// Re-record every case the model plays, replacing its cassette whole.
    All,
    /// Replay only: never record (a case without a cassette runs live unrecorded with
    /// `--live`, else follows the rest of the selection rule).
    None,
}

impl RecordMode {
    /// `once`, `new`, `all` or `none`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "once" => Self::Once,
            "new" => Self::New,
            "all" => Self::All,
            "none" => Self::None,
            _ => return None,
        })
    }

    /// The flag's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::New => "new",
            Self::All => "all",
            Self::None => "none",
        }
    }
}

/// The live model of a `--live` run: its settings (`ARCHMAX_*`) and a maker of transports
/// (the binary's HTTP client).
#[derive(Clone, Copy)]
pub struct LiveModel<'a> {
    /// The settings; the key is never written anywhere.
    pub env: &'a ModelEnv,
    /// A fresh transport.
    pub chat: &'a dyn Fn() -> Box<dyn ChatTransport>,
}

/// Writes a recorded cassette at a workspace-relative path; returns the number of secret
/// values redacted. The CLI passes [`save`] on its [`DiskFiles`] with the environment's
/// [`Secrets`].
pub type SaveCassette<'a> = &'a dyn Fn(&str, &Cassette) -> Result<usize, FileError>;

/// Writes `cassette` at the workspace-relative `path` (normally
/// [`wfx_schemas::cassette::cassette_path`] of the case) with every value of `secrets`
/// redacted, and returns the number of values replaced.
///
/// The folder is resolved through the confined layer ([`DiskFiles::resolve`]: a folder
/// leaving the workspace is `OutsideWorkspace`, nothing is written); the bytes go to a
/// temporary file in that folder which is then renamed over the name
/// ([`replace_file`]), so a reader never sees half a cassette, a failed write leaves the
/// old file as it was, and a symbolic link planted at the name is replaced, never followed.
/// Errors: the file layer's, `NotFound` when the folder does not exist, or `Other` with
/// the OS's reason.
pub fn save(
    fs: &DiskFiles,
    path: &str,
    cassette: &Cassette,
    secrets: &Secrets,
) -> Result<usize, FileError> {
    let (dir, name) = match path.rsplit_once('/') {
        Some((d, n)) => (d, n),
        None => ("", path),
    };
    if name.is_empty() || name == "." || name == ".." {
        return Err(FileError::Other(format!("`{path}` is not a file path")));
    }
    let os_dir = fs.resolve(dir)?;
    let (text, n) = to_json(cassette, secrets);
    replace_file(&os_dir, name, text.as_bytes()).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => FileError::NotFound,
        _ => FileError::Other(format!("cannot write `{path}`: {e}")),
    })?;
    Ok(n)
}

/// Marks a case failed with `message` (first among its failures, and its error when it
/// has none), unless it already says so.
pub fn fail_case(run: &mut CaseRun, message: &str) {
    let r = &mut run.result;
    if r.verdict.failures.iter().any(|f| f == message) {
        return;
    }
    r.verdict.status = VerdictStatus::Failed;
    r.verdict.failures.insert(0, message.to_owned());
    if r.error.is_none() {
        r.error = Some(message.to_owned());
    }
}

/// An agent that fails its first call with a message (a cassette that cannot be read).
struct Refusing(String);

impl Agent for Refusing {
    fn respond(&mut self, _: &TurnContext<'_>) -> Result<Vec<AgentAction>, AgentError> {
        Err(AgentError(self.0.clone()))
    }
}

/// The agent of a recorded or replayed case: stops before a model call once the run is
/// cancelled (so a cancelled recording makes no more calls and writes nothing).
struct Cancellable<'a> {
    inner: Box<dyn Agent>,
    cancelled: &'a dyn Fn() -> bool,
    tape: Tape,
}

impl Agent for Cancellable<'_> {
    fn respond(&mut self, ctx: &TurnContext<'_>) -> Result<Vec<AgentAction>, AgentError> {
        if (self.cancelled)() {
            self.tape.cancel();
            return Err(AgentError("the run was cancelled".into()));
        }
        self.inner.respond(ctx)
    }
}

/// Runs a case the model plays (the selection rule's `Cassette` or `Live` source): replayed
/// from the cassette at `cassette`, or recorded live (with `--live`, per
/// [`RunOptions::record`]), or live without a recording (`--record none`). A recorded or
/// replayed case runs on the cassette's deterministic clock (trail times, session id, the
/// prompt's clock line), so a replay is byte-identical; its agent is the live agent and its
/// judge the model judge, both on one [`Tape`]. After the run: a replay error, unused
/// recorded calls (not counting judge calls under `--skip-grades`), or a recording that
/// cannot be written fail the case; drift warnings go to [`crate::interpret::CaseResult::warnings`];
/// a complete recording is written through [`RunOptions::save_cassette`].
pub fn run_model_case(
    opts: &RunOptions<'_>,
    env: &CaseEnv<'_>,
    path: &str,
    cassette: Option<&str>,
) -> CaseRun {
    let mut host: Box<dyn ScriptHost> = match opts.script_host {
        Some(f) => f(),
        None => Box::new(NoScriptHost),
    };
    let usage = opts
        .usage
        .clone()
        .unwrap_or_else(|| Arc::new(Mutex::new(UsageLog::default())));
    let live = opts.live.then_some(opts.live_model).flatten();
    let wf = env.workflow;
    let timeout_ms = wf.case_timeout_ms.unwrap_or(120_000);
    let cassette_at = cassette
        .map(str::to_owned)
        .unwrap_or_else(|| wfx_schemas::cassette::cassette_path(path));
    let die = |host: &mut dyn ScriptHost, message: String| {
        let mut run = run_case(env, path, &mut Refusing(message.clone()), host, None);
        fail_case(&mut run, &message);
        run
    };
    // What the case runs with: a tape (or none: live unrecorded), the clock's start and
    // step, and the agent's and judge's model settings.
    let (tape, clock, model_env) = match (cassette, live) {
        (Some(cp), _) => {
            let c = match wfx_schemas::cassette::load(opts.fs, cp) {
                Ok(Some(c)) => c,
                Ok(None) => return die(host.as_mut(), format!("cassette `{cp}` disappeared")),
                Err(e) => return die(host.as_mut(), format!("cassette `{cp}`: {e}")),
            };
            match (live, opts.record) {
                (Some(l), RecordMode::All) => (
                    Some(Tape::record((l.chat)())),
                    (opts.clock.now_ms(), 1),
                    l.env.clone(),
                ),
                (l, mode) => {
                    let replay_env = recorded_env(&c);
                    let clock = (c.clock.start_ms, c.clock.step_ms);
                    let (mode, chat) = match (l, mode) {
                        (Some(l), RecordMode::New) => {
                            (TapeMode::ReplayThenRecord, Some((l.chat)()))
                        }
                        _ => (TapeMode::Replay, None),
                    };
                    (
                        Some(Tape::replay(cp, c, mode, chat, opts.strict_cassettes)),
                        clock,
                        replay_env,
                    )
                }
            }
        }
        (None, Some(l)) if opts.record != RecordMode::None => (
            Some(Tape::record((l.chat)())),
            (opts.clock.now_ms(), 1),
            l.env.clone(),
        ),
        (None, Some(l)) => (None, (0, 0), l.env.clone()),
        (None, None) => {
            return die(
                host.as_mut(),
                "no agent: live runs are allowed but no model is configured".into(),
            );
        }
    };
    let fixed = Arc::new(FixedClock::new(clock.0, clock.1));
    let grades = crate::grade::GradePolicy {
        skip: env.grades.skip,
        model: env.grades.model.clone().or_else(|| {
            Some(ModelConfig {
                base_url: model_env.base_url.clone(),
                model: model_env.model.clone(),
            })
        }),
    };
    // Limits (`tests.caseTimeoutMs`) stay on the run's clock (issue 24).
    let replay_clock = CaseClock::new(fixed.as_ref(), env.clock);
    let case_clock: &dyn Clock = if tape.is_some() {
        &replay_clock
    } else {
        env.clock
    };
    let case_env = CaseEnv {
        fs: env.fs,
        dir: env.dir,
        workflow: wf,
        clock: case_clock,
        grades,
    };
    let transport = |tape: &Option<Tape>| -> Box<dyn ChatTransport> {
        match (tape, live) {
            (Some(t), _) => t.transport(),
            (None, Some(l)) => (l.chat)(),
            (None, None) => tape::Tape::record(Box::new(Unreachable)).transport(),
        }
    };
    let mut agent = LiveAgent::new(
        env.fs,
        &env.dir.dir(),
        wf,
        transport(&tape),
        LiveSettings {
            default_model: model_env.model.clone(),
            temperature: model_env.temperature,
            max_tokens: model_env.max_tokens,
            case_timeout_ms: timeout_ms,
        },
        Arc::new(|| SystemClock.now_ms()),
        usage.clone(),
    );
    if tape.is_some() {
        let f = fixed.clone();
        agent = agent.with_prompt_clock(Arc::new(move || f.now_ms()));
    }
    let (model, temperature, max_tokens) = judge_settings(wf, &model_env);
    let mut judge = ModelJudge::new(
        transport(&tape),
        JudgeSettings {
            model,
            temperature,
            max_tokens,
            timeout_ms: Some(timeout_ms),
        },
        usage,
    )
    .redacting(model_env.key_secrets());
    let never = || false;
    let mut agent = Cancellable {
        inner: Box::new(agent),
        cancelled: opts.cancelled.unwrap_or(&never),
        tape: tape
            .clone()
            .unwrap_or_else(|| Tape::record(Box::new(Unreachable))),
    };
    let judge_ref: &mut dyn Judge = &mut judge;
    let mut run = run_case(&case_env, path, &mut agent, host.as_mut(), Some(judge_ref));
    let Some(tape) = tape else {
        return run;
    };
    if opts.cancelled.is_some_and(|c| c()) {
        tape.cancel();
    }
    if let Some(e) = tape.error() {
        fail_case(&mut run, &e);
    }
    if let Some(e) = tape.leftovers(env.grades.skip) {
        fail_case(&mut run, &e);
    }
    run.result.warnings.extend(tape.warnings());
    let info = RecordingInfo {
        recorded_with: format!("wfx-lsp {}", env!("CARGO_PKG_VERSION")),
        clock: RecordedClock {
            start_ms: clock.0,
            step_ms: clock.1,
            zone: "UTC".into(),
        },
        model: model_env.model.clone(),
        endpoint: live.map_or_else(
            || endpoint_host(&model_env.base_url),
            |l| endpoint_host(&l.env.base_url),
        ),
        case: case_id(&env.dir.tests_dir(), path),
        inputs: InputDigests {
            case: digest(&env.fs.read_text(path).unwrap_or_default()),
            workflow: digest(&env.fs.read_text(&env.dir.spec_path()).unwrap_or_default()),
        },
    };
    if let Some(c) = tape.cassette(&info, rfc3339(clock.0)) {
        match opts.save_cassette {
            Some(save) => match save(&cassette_at, &c) {
                Ok(0) => {}
                Ok(n) => run.result.warnings.push(format!(
                    "{n} secret value{} redacted from the cassette `{cassette_at}`",
                    if n == 1 { " was" } else { "s were" }
                )),
                Err(e) => fail_case(
                    &mut run,
                    &format!("the cassette `{cassette_at}` was not written: {e}"),
                ),
            },
            None => fail_case(
                &mut run,
                &format!(
                    "the cassette `{cassette_at}` was recorded but this run cannot write files"
                ),
            ),
        }
    }
    run
}

/// The model settings a replay uses: the recording's model, and the temperature and token
/// cap of its first agent call (and first judge call, for the judge).
fn recorded_env(c: &Cassette) -> ModelEnv {
    let first = |judge: bool| {
        c.interactions
            .iter()
            .find(|i| (i.role == wfx_schemas::cassette::InteractionRole::Agent) != judge)
    };
    let agent = first(false);
    ModelEnv {
        base_url: c.endpoint.clone(),
        api_key: String::new(),
        model: c.model.clone(),
        temperature: agent.and_then(|i| i.request.temperature),
        max_tokens: agent.and_then(|i| i.request.max_tokens),
        prices: Default::default(),
    }
}

/// A transport for a case that has none (never called: such a case dies first).
struct Unreachable;

impl ChatTransport for Unreachable {
    fn complete(
        &mut self,
        _: &crate::model::wire::ChatRequest,
        _: &crate::model::wire::CallMeta,
    ) -> Result<crate::model::wire::ChatResponse, crate::model::wire::ModelError> {
        Err(crate::model::wire::ModelError::Replay(
            "no model transport".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wfx_schemas::cassette::{InputDigests, RecordedClock, VERSION, load};

    fn tiny() -> Cassette {
        Cassette {
            version: VERSION,
            recorded_with: "wfx-lsp test".into(),
            recorded_at: "2026-01-01T00:00:00Z".into(),
            clock: RecordedClock {
                start_ms: 0,
                step_ms: 1,
                zone: "UTC".into(),
            },
            model: "planted-secret-value-1234".into(),
            endpoint: "127.0.0.1".into(),
            case: "a".into(),
            inputs: InputDigests {
                case: String::new(),
                workflow: String::new(),
            },
            prompts: Default::default(),
            toolsets: Default::default(),
            interactions: Vec::new(),
        }
    }

    #[test]
    fn saves_atomically_redacted_and_never_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        std::fs::create_dir_all(root.join("w/tests")).unwrap();
        let fs = DiskFiles::new(&root);
        let secrets = Secrets::from_env([(
            "ARCHMAX_API_KEY".to_owned(),
            "planted-secret-value-1234".to_owned(),
        )]);
        let n = save(&fs, "w/tests/a.cassette.json", &tiny(), &secrets).unwrap();
        assert_eq!(n, 1);
        let text = std::fs::read_to_string(root.join("w/tests/a.cassette.json")).unwrap();
        assert!(!text.contains("planted-secret"), "{text}");
        assert!(text.contains("<ENV:ARCHMAX_API_KEY>"));
        let back = load(&fs, "w/tests/a.cassette.json").unwrap().unwrap();
        assert_eq!(back.model, "<ENV:ARCHMAX_API_KEY>");
        // No temporary file is left behind.
        let names: Vec<String> = std::fs::read_dir(root.join("w/tests"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.cassette.json"]);

        #[cfg(unix)]
        {
            // A link planted at the name is replaced, its target untouched.
            let outside = tmp.path().join("outside.txt");
            std::fs::write(&outside, "keep").unwrap();
            std::os::unix::fs::symlink(&outside, root.join("w/tests/b.cassette.json")).unwrap();
            save(&fs, "w/tests/b.cassette.json", &tiny(), &secrets).unwrap();
            assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
            let meta = std::fs::symlink_metadata(root.join("w/tests/b.cassette.json")).unwrap();
            assert!(meta.is_file());
            // A folder link leaving the workspace is refused and nothing is written there.
            std::os::unix::fs::symlink(tmp.path(), root.join("w/out")).unwrap();
            assert_eq!(
                save(&fs, "w/out/c.cassette.json", &tiny(), &secrets),
                Err(FileError::OutsideWorkspace)
            );
            assert!(!tmp.path().join("c.cassette.json").exists());
        }
        assert_eq!(
            save(&fs, "../x.cassette.json", &tiny(), &secrets),
            Err(FileError::OutsideWorkspace)
        );
        assert_eq!(
            save(&fs, "w/missing/a.cassette.json", &tiny(), &secrets),
            Err(FileError::NotFound)
        );
    }
}
