//! "● Record with model" from the editor (issue 15, item 8): the `wfx.recordCase [uri]`
//! command records a case (or, on `workflow.yaml`, every case of the workflow) against the
//! live model endpoint, through the very path of `wfx-lsp test <case> --live --record all`
//! ([`wfx_runner::cli::run_cli`]: `ARCHMAX_*` from the process environment over the
//! workspace's `.env`, the bundled HTTP client, the runner's confined atomic cassette write).
//!
//! What this module adds to that path is editor glue only:
//!
//! * [`Watched`], the chat transport of a recording: it wraps the HTTP client, sends one
//!   progress note per model call (`model call 3: agent · step 2 · state `intake``; never a
//!   request, a reply or the key) and honours cancellation *during* a call: the call runs
//!   on its own thread and is abandoned when the cancel flag is set (polled every
//!   [`POLL`]); the abandoned thread ends with the HTTP timeout of the call.
//! * [`record`], the blocking run: a cancelled recording fails its model call, the runner's
//!   tape is cancelled and no cassette (nor any temporary file) is written
//!   (docs/cassettes.md "Writing").
//!
//! The gate is the `wfx.run.allowLive` setting (default off), checked by the server before
//! a recording starts, whatever the client sends.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wfx_runner::cli::{ChatTransportFactory, ScriptHostFactory, TestOptions};
use wfx_runner::model::config::ModelEnv;
use wfx_runner::model::wire::{
    CallMeta, CallRole, ChatRequest, ChatResponse, ChatTransport, ModelError,
};
use wfx_schemas::cassette::Secrets;
use wfx_schemas::files::FileAccess;

use super::runs::CancelToken;

/// The command id (announced in `executeCommandProvider`): records the case of the given
/// case URI, or every case of the workflow of the given `workflow.yaml` URI.
pub const RECORD_CASE: &str = "wfx.recordCase";

/// The error of `wfx.recordCase` while `wfx.run.allowLive` is false.
pub const REFUSED_OFF: &str = "recording with the model is off: set `wfx.run.allowLive` to true to allow it (a recording sends the case to the model endpoint of ARCHMAX_API_BASE_URL and spends money on every call)";

/// The lens on `workflow.yaml` (same command, the workflow's URI).
pub const RECORD_ALL_TITLE: &str = "● Record all with model";

/// The lens title on a case whose agent (the selection rule, with live runs allowed) is
/// `source`: `● Record with model` (no cassette yet) or `● Re-record with model` (replaces
/// its cassette); `None` for a case with an agent script, which comes before the model and
/// would not be recorded.
pub fn lens_title(source: &wfx_runner::select::AgentSource) -> Option<&'static str> {
    use wfx_runner::select::AgentSource;
    match source {
        AgentSource::Cassette { .. } => Some("● Re-record with model"),
        AgentSource::Live | AgentSource::NoAgent { .. } => Some("● Record with model"),
        AgentSource::AgentScript { .. } => None,
    }
}

/// How often a model call in flight checks the cancel flag.
pub const POLL: Duration = Duration::from_millis(20);

/// The message of a model call cut short by a cancel (the case fails with it; the server
/// drops a cancelled recording's outcome).
pub const CANCELLED: &str = "the recording was cancelled";

/// Makes the wrapped transport of one model configuration (the binary's HTTP client; tests
/// pass a scripted one).
pub type MakeInner = dyn Fn(&ModelEnv) -> Box<dyn ChatTransport + Send> + Send + Sync;

/// The progress note of model call `n` (1-based, counted over the whole recording, agent
/// and judge): who calls, the case step and the workflow state. No request or reply text.
pub fn call_note(n: usize, meta: &CallMeta) -> String {
    let role = match meta.role {
        CallRole::Agent => "agent",
        CallRole::Judge => "judge",
        CallRole::Rubric => "rubric",
    };
    let mut s = format!("model call {n}: {role}");
    if let Some(step) = meta.step {
        s.push_str(&format!(" · step {step}"));
    }
    if let Some(state) = &meta.state {
        let state: String = state.chars().take(60).collect();
        s.push_str(&format!(" · state `{state}`"));
    }
    s
}

/// The transport of an editor recording: counts and announces each call, and gives up on
/// a call in flight once the recording is cancelled.
pub struct Watched {
    inner: Arc<Mutex<Box<dyn ChatTransport + Send>>>,
    cancel: CancelToken,
    calls: Arc<AtomicUsize>,
    notes: tokio::sync::mpsc::UnboundedSender<String>,
}

impl ChatTransport for Watched {
    fn complete(&mut self, req: &ChatRequest, meta: &CallMeta) -> Result<ChatResponse, ModelError> {
        if self.cancel.load(Ordering::SeqCst) {
            return Err(ModelError::Transport(CANCELLED.into()));
        }
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let _ = self.notes.send(call_note(n, meta));
        let (tx, rx) = std::sync::mpsc::channel();
        let (inner, req, meta) = (self.inner.clone(), req.clone(), meta.clone());
        std::thread::spawn(move || {
            let r = inner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .complete(&req, &meta);
            let _ = tx.send(r);
        });
        loop {
            match rx.recv_timeout(POLL) {
                Ok(r) => return r,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if self.cancel.load(Ordering::SeqCst) {
                        return Err(ModelError::Transport(CANCELLED.into()));
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(ModelError::Transport(
                        "the model call ended without an answer".into(),
                    ));
                }
            }
        }
    }
}

/// One recording to run.
pub struct Job {
    /// The workspace folder (the CLI's working directory).
    pub root: PathBuf,
    /// The case file or workflow folder, workspace-relative (the CLI's target).
    pub target: String,
    /// `wfx.runner.skipGrades`.
    pub skip_grades: bool,
    /// The editor's open buffers under `workflows/` (workspace-relative path → text): the
    /// recording plays what the editor shows (`--buffers-stdin`).
    pub buffers: BTreeMap<String, String>,
    /// Set to cancel.
    pub cancel: CancelToken,
    /// Makes the real transport.
    pub inner: Arc<MakeInner>,
    /// Receives one note per model call.
    pub notes: tokio::sync::mpsc::UnboundedSender<String>,
}

/// What a finished (not failed) recording printed.
#[derive(Debug)]
pub struct Recorded {
    /// The `--json` RunTestsResult.
    pub stdout: String,
    /// Model calls made.
    pub calls: usize,
    /// Wall time, ms.
    pub duration_ms: u64,
}

/// The secrets an error message must not show: key-like variables of the process and of
/// `<root>/.env` (read through the confined layer), as a cassette write redacts them.
pub fn secrets(root: &Path) -> Secrets {
    let mut vars: Vec<(String, String)> = std::env::vars().collect();
    if let Ok(t) = wfx_runner::disk::DiskFiles::new(root).read_text(".env") {
        vars.extend(wfx_runner::model::config::parse_dotenv(&t));
    }
    Secrets::from_env(vars)
}

/// Runs `wfx-lsp test <target> --live --record all --json` in `job.root` with the job's
/// transport, script host and cancel flag. Blocking. `Err` is the run's `Error:` line (a
/// missing `ARCHMAX_*` variable, a refused target), with every secret value redacted.
pub fn record(job: Job) -> Result<Recorded, String> {
    let calls = Arc::new(AtomicUsize::new(0));
    let (inner, cancel, notes, calls2) = (
        job.inner.clone(),
        job.cancel.clone(),
        job.notes.clone(),
        calls.clone(),
    );
    let chat = ChatTransportFactory(Arc::new(move |env: &ModelEnv| {
        Box::new(Watched {
            inner: Arc::new(Mutex::new(inner(env))),
            cancel: cancel.clone(),
            calls: calls2.clone(),
            notes: notes.clone(),
        }) as Box<dyn ChatTransport>
    }));
    let stop = wfx_runner::sandbox::CancelToken::from_flag(job.cancel.clone());
    let host = ScriptHostFactory(Arc::new(move || {
        Box::new(wfx_runner::sandbox::QuickJsHost::with_cancel(stop.clone()))
            as Box<dyn wfx_runner::script_host::ScriptHost>
    }));
    let opts = TestOptions {
        target: Some(job.target.clone()),
        json: true,
        skip_grades: job.skip_grades,
        allow_no_agent: true,
        script_host: Some(host),
        live: true,
        chat: Some(chat),
        env: None,
        buffers: Some(job.buffers),
        record: Some(wfx_runner::cassette::RecordMode::All),
        cancelled: Some(job.cancel.clone()),
        ..Default::default()
    };
    let started = Instant::now();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = wfx_runner::cli::run_cli(&opts, &job.root, &mut out, &mut err);
    drop(opts);
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let stdout = String::from_utf8_lossy(&out).into_owned();
    if code == 2 || stdout.trim().is_empty() {
        let err = String::from_utf8_lossy(&err);
        let line = err
            .lines()
            .rev()
            .find(|l| l.starts_with("Error:"))
            .map_or("the recording did not run", |l| {
                l.trim_start_matches("Error:")
            })
            .trim()
            .to_owned();
        return Err(secrets(&job.root).redact(&line).0);
    }
    Ok(Recorded {
        stdout,
        calls: calls.load(Ordering::SeqCst),
        duration_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// Answers after `delay`, or never (`None`).
    struct Slow(Option<Duration>);

    impl ChatTransport for Slow {
        fn complete(&mut self, _: &ChatRequest, _: &CallMeta) -> Result<ChatResponse, ModelError> {
            match self.0 {
                Some(d) => {
                    std::thread::sleep(d);
                    Err(ModelError::Transport("answered".into()))
                }
                None => loop {
                    std::thread::sleep(Duration::from_secs(60));
                },
            }
        }
    }

    fn watched(
        delay: Option<Duration>,
    ) -> (
        Watched,
        CancelToken,
        tokio::sync::mpsc::UnboundedReceiver<String>,
    ) {
        let cancel: CancelToken = Arc::new(AtomicBool::new(false));
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let w = Watched {
            inner: Arc::new(Mutex::new(Box::new(Slow(delay)))),
            cancel: cancel.clone(),
            calls: Arc::default(),
            notes: tx,
        };
        (w, cancel, rx)
    }

    fn req() -> ChatRequest {
        serde_json::from_value(serde_json::json!({"model": "m", "messages": [], "tools": []}))
            .unwrap()
    }

    #[test]
    fn each_call_is_announced_with_its_number_step_and_state() {
        let (mut w, _, mut rx) = watched(Some(Duration::ZERO));
        let meta = CallMeta {
            step: Some(2),
            state: Some("intake".into()),
            ..Default::default()
        };
        for _ in 0..2 {
            let e = w.complete(&req(), &meta).unwrap_err();
            assert_eq!(e, ModelError::Transport("answered".into()));
        }
        assert_eq!(
            rx.try_recv().unwrap(),
            "model call 1: agent · step 2 · state `intake`"
        );
        assert_eq!(
            rx.try_recv().unwrap(),
            "model call 2: agent · step 2 · state `intake`"
        );
    }

    #[test]
    fn a_cancel_ends_a_call_in_flight_and_refuses_the_next() {
        let (mut w, cancel, mut rx) = watched(None);
        let c2 = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            c2.store(true, Ordering::SeqCst);
        });
        let e = w.complete(&req(), &CallMeta::default()).unwrap_err();
        assert_eq!(e, ModelError::Transport(CANCELLED.into()));
        let e = w.complete(&req(), &CallMeta::default()).unwrap_err();
        assert_eq!(e, ModelError::Transport(CANCELLED.into()));
        // The refused second call is not announced.
        assert!(rx.try_recv().is_ok());
        assert!(rx.try_recv().is_err());
    }
}
