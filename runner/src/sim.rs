//! The deterministic simulator of the workflow machine (FORMAT §E): one [`Session`] per
//! case, driven by the case's actions (`send`, `decide`, `deliver`) and answered by an
//! [`Agent`]. It keeps the checkpointed fields the reference keeps (state, status, trigger,
//! variables, the audit trail, park records, counters), runs hooks through a
//! [`ScriptHost`], enforces governance, answers mocked and built-in tools over a fresh
//! session folder, and builds the [`SessionView`] assertions read (§E.8).
//!
//! Choices where FORMAT is UNCONFIRMED (documented in `docs/agent-scripts.md` too):
//! * A follow-up `send` on a session that is not parked continues in the state the previous
//!   turn ended in; its `trigger` trail step has `to` = that state.
//! * A `before` veto at entry commits only the `trigger` step, adds a `[veto]` runtime note,
//!   sets the status to `rejected` and gives the agent one reply-only run to explain.
//! * A model run that ends in a non-terminal state without parking leaves the session
//!   `running`; the next `send` continues there.
//! * Governance is checked before mocks: a forbidden call stays blocked even when mocked.
//! * A reply-only refusal (`tool.reply-only`) is recorded like a governance block.
//! * `requires` refusal: `archmax_advance rejected: state '<s>' requires <names> …`.
//! * `on_error` trail steps carry the failure reason.
//! * The built-in file tools take `file_path` (`read_file`, `write_file`, `edit_file`,
//!   `remove_file`), `path` (`ls`, `glob`, `grep`) and `source_path`/`destination_path`
//!   (`copy_file`, `move_file`); `write_file` refuses an existing file (use `edit_file`).
//! * `budget.maxTurns` counts the model calls that returned actions in one visit of a
//!   state (consecutive calls in that state); the call that would exceed it is not
//!   executed and routes `state '<s>' exhausted its turn budget (maxTurns: N)` through
//!   `on_error` (or rejects the session without one), as the reference's `beforeModel`
//!   does. `maxParks` is enforced too; `budget.timeoutMs` applies to live model calls.
//! * A model run has at most [`MAX_MODEL_CALLS_PER_RUN`] calls; one more kills the case
//!   with an error naming the cap (the counterpart of the reference's recursion limit).
//!   One model call (one answer) carries at most [`MAX_TOOL_CALLS_PER_MODEL_CALL`] tool
//!   calls; an answer with more is not executed at all and kills the case with an error
//!   naming the cap (docs/security.md, F6).
//!
//! Must not: read the clock other than through [`Clock`], print, or depend on a specific
//! agent implementation.

use std::collections::{BTreeMap, BTreeSet};

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Value, json};
use wfx_schemas::check::load_workflow;
use wfx_schemas::files::{FileAccess, join};
use wfx_schemas::model::case::{Channel, Mock};
use wfx_schemas::model::workflow::{HookKind, SigEntry, State, StateType, Workflow};
use wfx_schemas::signature::{seed_value, signature_issue, title_issue};
use wfx_schemas::workspace::WorkflowDir;

use crate::agent::{Agent, AgentAction, AgentMessage, RunCause, TurnContext};
use crate::clock::Clock;
use crate::evidence::{CallStatus, Event, Evidence};
use crate::file_tools::Limits;
use crate::governance::{self, Block};
use crate::grade::{GradePolicy, Judge, unavailable_reason};
use crate::matching::{partial_match, resolve_path};
use crate::script_host::{
    HookPhase, HookRequest, HookVerdict, ScriptError, ScriptHost, ScriptRequest, ToolBridge,
};
use crate::session_fs::{FsError, SessionFs, Zone, classify};
use crate::variables::Variables;

/// An error that ends the case ("died", FORMAT §C.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `WORKFLOW_STATUSES` (FORMAT §E.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Working, or idle between turns in a non-terminal state.
    Running,
    /// A terminal state answered.
    Completed,
    /// `archmax_raise`.
    Failed,
    /// A refused start, an entry veto, or a terminal rejection without `on_error`.
    Rejected,
    /// Parked at a human state.
    AwaitingDecision,
    /// Parked by `archmax_wait`.
    AwaitingInput,
}

impl Status {
    /// The reference's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Rejected => "rejected",
            Status::AwaitingDecision => "awaiting_decision",
            Status::AwaitingInput => "awaiting_input",
        }
    }
}

/// One audit-trail step (FORMAT §E.2).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrailStep {
    /// Target state.
    pub to: String,
    /// `trigger`, `agent`, `human`, `sub-workflow`, `reset` or `on_error`.
    pub kind: &'static str,
    /// Trigger id, advance reason, comment, reset reason, failure reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Child workflow slug (`sub-workflow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    /// `ok` or `error` (`sub-workflow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
    /// Epoch ms.
    pub ts: u64,
}

/// A run variable (FORMAT §E.4).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Var {
    /// The value.
    pub value: Value,
    /// Locked by a host seed or delivery.
    pub locked: bool,
}

/// `raised: {code, reason, state}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Raised {
    /// The code.
    pub code: String,
    /// The reason.
    pub reason: String,
    /// Where it was raised.
    pub state: String,
}

/// The tool result of an `archmax_advance` call that moved the session to `to` (FORMAT
/// §E.5): the text the agent reads back, and the text a cassette records as that call's
/// result (docs/cassettes.md). A state rename rewrites it in cassettes, so it is written
/// in one place.
pub fn advanced_message(to: &str) -> String {
    format!("Advanced to state '{to}'. You may now use the tools allowed in this state.")
}

/// `pendingDecision` (FORMAT §E.3).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingDecision {
    /// The human state.
    pub state: String,
    /// Its title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// 1-based.
    pub seq: u64,
    /// `[{to, description?, type?}]`.
    pub transitions: Vec<Value>,
    /// Declared evidence, then attached paths, de-duplicated.
    pub evidence: Vec<String>,
    /// Epoch ms.
    pub created_at: u64,
}

/// `pendingInput` (FORMAT §E.3).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingInput {
    /// The parked state.
    pub state: String,
    /// Its title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The wait reason.
    pub reason: String,
    /// Epoch ms.
    pub parked_at: u64,
    /// `until`, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_at: Option<String>,
}

/// The most model calls one model run may make (FORMAT has no such bound; the reference's
/// counterpart is its recursion limit of 400 graph steps).
pub const MAX_MODEL_CALLS_PER_RUN: usize = 50;

/// The most tool calls one model call (one answer of a live model, a cassette or an agent
/// script turn) may carry: 100. The reference has no such bound (its tool node runs every
/// call of an answer); without one, a hostile endpoint's answer of 60,000 calls within the
/// 8 MiB body cap took 3.3 GB (docs/security.md, F6). An answer over the cap is refused
/// whole, none of its calls executed, and the case fails with an error naming the cap:
/// fail-closed, never a silent truncation.
pub const MAX_TOOL_CALLS_PER_MODEL_CALL: usize = 100;

/// A transcript message.
#[derive(Clone, Debug, PartialEq)]
pub enum Msg {
    /// A user message.
    User(String),
    /// An assistant message: text, or one tool call.
    Assistant {
        /// Text (empty for a call).
        text: String,
        /// `(id, name, input)`.
        call: Option<(u64, String, Value)>,
    },
    /// A tool result.
    Tool {
        /// The call it answers.
        call_id: u64,
        /// The tool.
        name: String,
        /// Content text.
        content: String,
        /// Raw status `error`.
        error: bool,
        /// Refused by governance (or the reply-only rule).
        blocked: bool,
    },
    /// A runtime note (`archmax_note`), never a tool call.
    Note {
        /// `decision`, `event`, `veto`, `error`, `hook`, …
        kind: &'static str,
        /// The text.
        text: String,
    },
}

/// A recorded tool call in the view (FORMAT §E.8 `ToolCallFact`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCallFact {
    /// Tool name.
    pub name: String,
    /// Arguments.
    pub input: Value,
    /// `completed`, `failed`, `rejected` or `pending`.
    pub status: &'static str,
    /// Parsed JSON content or the raw string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
}

/// What assertions read (FORMAT §E.8).
#[derive(Clone, Debug, PartialEq)]
pub struct SessionView {
    /// Last non-empty assistant text.
    pub reply: Option<String>,
    /// Every non-empty assistant text, joined with `\n`.
    pub transcript: String,
    /// Every tool call of the session.
    pub tool_calls: Vec<ToolCallFact>,
    /// Any non-governance error result in the session.
    pub failed: bool,
    /// Parked in either channel.
    pub parked: bool,
    /// The park channel.
    pub channel: Option<Channel>,
    /// The current (or parked) state.
    pub state: String,
    /// The raise, if the session raised.
    pub raised: Option<Raised>,
    /// The trail.
    pub trail: Vec<TrailStep>,
    /// The variables, shared with the session's store as it was (copy-on-write,
    /// [`crate::variables::Variables::shared`]).
    pub variables: std::sync::Arc<IndexMap<String, Var>>,
    /// Runtime notes `(kind, text)`.
    pub notes: Vec<(&'static str, String)>,
    /// The status.
    pub status: Status,
}

/// Everything the simulator needs from outside.
pub struct SimConfig<'w> {
    /// The workspace (mounts, hooks, sub-workflow specs).
    pub workspace: &'w dyn FileAccess,
    /// The workflow folder.
    pub dir: WorkflowDir,
    /// The workflow model.
    pub workflow: &'w Workflow,
    /// Time.
    pub clock: &'w dyn Clock,
    /// Grades and rubric hooks.
    pub grades: GradePolicy,
}

/// Who a tool call runs for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Authority {
    /// The agent or an `archmax_run` script: the state's governance applies.
    Agent,
    /// A lifecycle hook: exempt from the state's enabled set (FORMAT §E.6).
    Runtime,
}

/// The session state: everything but the agent, the script host and the judge.
pub struct Session<'w> {
    cfg: SimConfig<'w>,
    fs: SessionFs<'w>,
    /// Current state.
    pub state: String,
    /// Status.
    pub status: Status,
    /// The trigger id of the session.
    pub trigger_id: String,
    entry_state: String,
    /// Variables (FORMAT §E.4), held against the session folder's bound with its files.
    pub variables: Variables,
    /// The audit trail.
    pub trail: Vec<TrailStep>,
    /// Decision park.
    pub pending_decision: Option<PendingDecision>,
    /// Input park.
    pub pending_input: Option<PendingInput>,
    /// The raise.
    pub raised: Option<Raised>,
    /// The transcript.
    pub messages: Vec<Msg>,
    mocks: Vec<Mock>,
    mocks_active: bool,
    reply_only: bool,
    started: bool,
    before_done: BTreeSet<String>,
    iterations: BTreeMap<String, u64>,
    park_counts: BTreeMap<String, u64>,
    decision_count: u64,
    next_call: u64,
    dispatch_ordinal: u64,
    /// Tool-result bytes kept so far (see [`MAX_SESSION_TOOL_OUTPUT_BYTES`]).
    output_bytes: usize,
    /// Coverage observations (hooks, parks, tools) of this session.
    pub observed: crate::coverage::Observed,
    /// The evidence of the run so far (issue 16; see [`crate::evidence`]).
    pub evidence: Evidence,
    /// The 0-based index of the case step being acted on, for [`Self::evidence`].
    ev_step: usize,
}

/// A session plus its agent, script host and judge.
pub struct Simulator<'w, 'h> {
    /// The session.
    pub session: Session<'w>,
    host: &'h mut dyn ScriptHost,
    agent: &'h mut dyn Agent,
    judge: Option<&'h mut dyn Judge>,
    runs: usize,
    step: usize,
    /// Model calls so far (all runs), the `group` of their messages.
    model_calls: u64,
    /// `(first message, end, group)` of each model call's messages, in order.
    call_spans: Vec<(usize, usize, u64)>,
    /// `(state, calls)`: model calls with actions in the current visit of `state`.
    state_turns: (String, u64),
    /// State flow for narration: entered states in order, consecutive repeats dropped.
    pub flow: Vec<String>,
    /// When the case's time (`tests.caseTimeoutMs`) runs out, epoch ms on the clock case
    /// limits are measured on ([`Clock::limit_now_ms`]: the run's clock, also when the
    /// session stamps on a cassette's recorded clock);
    /// `None` without a limit. Hooks are not started past it, and a hook's time budget is
    /// at most what is left (bounded work: a step with many hooks cannot outlast its case).
    pub deadline_ms: Option<u64>,
}

enum HookOutcome {
    Ok,
    Veto(String),
    Correct {
        key: String,
        reason: String,
        budget: u64,
    },
    Failed(String),
}

/// How the [`SimError`] of a case whose time ran out inside a step starts (see
/// [`Simulator::deadline_ms`]); the interpreter reports it as the case's timeout.
pub const CASE_TIME_RAN_OUT: &str = "the case's time ran out";

/// The result of a tool: content and whether it is an error.
type ToolResult = Result<String, String>;

/// Most runtime text one session keeps, in bytes: 4 MiB (4,194,304), counted over its tool
/// results (`archmax_run` output included), its runtime notes (a veto's or a correction's
/// reason, a delivery's variables, FORMAT §E.3, §E.6) and its trail reasons (FORMAT
/// §E.2). Bounded work: the text that crosses it is cut at a character boundary and ends
/// with [`OUTPUT_CUT_MARKER`] (a tool result) or [`TEXT_CUT_MARKER`] (a note or a
/// reason); later ones keep only the marker. The agent and the assertions see the cut
/// text. Notes and reasons count since issue 24: 12 sends vetoed with 60 MB reasons
/// kept 1.5 GB.
pub const MAX_SESSION_TOOL_OUTPUT_BYTES: usize = 4 * 1024 * 1024;
/// What ends a tool result cut by [`MAX_SESSION_TOOL_OUTPUT_BYTES`].
pub const OUTPUT_CUT_MARKER: &str =
    "[output cut: the session's tool output passed the runner's cap of 4194304 bytes]";
/// What ends a runtime note or a trail reason cut by [`MAX_SESSION_TOOL_OUTPUT_BYTES`].
pub const TEXT_CUT_MARKER: &str =
    "[cut: the session's tool output, notes and reasons passed the runner's cap of 4194304 bytes]";

/// What a session keeps of one tool result, given the bytes `kept` so far (updated):
/// [`cut_output`] with the room left under [`MAX_SESSION_TOOL_OUTPUT_BYTES`].
pub(crate) fn keep_output(kept: &mut usize, content: String) -> String {
    keep_cut(kept, content, OUTPUT_CUT_MARKER)
}

/// [`keep_output`] ending a cut text with `marker`.
fn keep_cut(kept: &mut usize, content: String, marker: &str) -> String {
    let room = MAX_SESSION_TOOL_OUTPUT_BYTES.saturating_sub(*kept);
    let content = cut_output(content, room, marker);
    *kept = kept.saturating_add(content.len());
    content
}

/// `content` cut to at most `room` bytes (at a character boundary) plus `marker`, or as
/// is when it fits.
fn cut_output(content: String, room: usize, marker: &str) -> String {
    if content.len() <= room {
        return content;
    }
    let mut end = room;
    while end > 0 && !content.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = content.get(..end).unwrap_or_default().to_owned();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(marker);
    out
}

/// A script's time budget, ms: `settings.timeoutMs` (FORMAT §A.1; the sandbox's default
/// when unset), at most `left`, the case's time left (`None`: no case limit).
fn within(timeout_ms: Option<u64>, left: Option<u64>) -> Option<u64> {
    match left {
        None => timeout_ms,
        Some(left) => Some(
            timeout_ms
                .unwrap_or(crate::sandbox::DEFAULT_TIMEOUT_MS)
                .min(left),
        ),
    }
}

/// `VARIABLE_NAME_PATTERN` (FORMAT §A.3).
pub fn is_variable_name(n: &str) -> bool {
    let mut c = n.chars();
    c.next().is_some_and(|f| f.is_ascii_lowercase())
        && c.all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_')
}

impl<'w> Session<'w> {
    /// A new session in a fresh session folder. `mocks` are the case's mocks.
    pub fn new(cfg: SimConfig<'w>, mocks: Vec<Mock>) -> Result<Self, SimError> {
        let fs =
            SessionFs::new(cfg.workspace, &cfg.dir.root).map_err(|e| SimError(e.to_string()))?;
        Ok(Self {
            cfg,
            fs,
            state: String::new(),
            status: Status::Running,
            trigger_id: "manual".into(),
            entry_state: String::new(),
            variables: Variables::new(),
            trail: Vec::new(),
            pending_decision: None,
            pending_input: None,
            raised: None,
            messages: Vec::new(),
            mocks,
            mocks_active: false,
            reply_only: false,
            started: false,
            before_done: BTreeSet::new(),
            iterations: BTreeMap::new(),
            park_counts: BTreeMap::new(),
            decision_count: 0,
            next_call: 0,
            dispatch_ordinal: 0,
            output_bytes: 0,
            observed: crate::coverage::Observed::default(),
            evidence: Evidence::default(),
            ev_step: 0,
        })
    }

    /// The session's files (for tests).
    pub fn files(&self) -> &SessionFs<'w> {
        &self.fs
    }

    fn wf(&self) -> &'w Workflow {
        self.cfg.workflow
    }

    fn state_model(&self) -> Option<&'w State> {
        self.cfg.workflow.state(&self.state)
    }

    fn now(&self) -> u64 {
        self.cfg.clock.now_ms()
    }

    /// The value of the variable `name`, read in place.
    fn var(&self, name: &str) -> Option<&Value> {
        self.variables.get(name).map(|v| &v.value)
    }

    /// Stores `set` in the variables (in order, FORMAT §E.4) when the store stays within
    /// the session folder's bound together with the files ([`SessionFs::hold`]); `Err`
    /// says by how much it would not, and nothing is stored then.
    fn put_vars(&mut self, set: Vec<(String, Var)>) -> Result<(), String> {
        let after = self.variables.bytes_with(&set);
        if let Err(files) = self.fs.hold(after) {
            return Err(format!(
                "the run variables would hold {after} bytes, which with the session's {files} bytes of files passes the session folder's cap of {} bytes (a runner limit)",
                crate::session_fs::MAX_SESSION_DISK_BYTES
            ));
        }
        self.variables.insert_all(set, after);
        Ok(())
    }

    /// What the session keeps of a runtime text (a note, a trail reason): cut to the room
    /// the session's budget ([`MAX_SESSION_TOOL_OUTPUT_BYTES`], shared with tool results)
    /// still has, ending with [`TEXT_CUT_MARKER`] when cut, and counted against it.
    fn keep_text(&mut self, text: String) -> String {
        keep_cut(&mut self.output_bytes, text, TEXT_CUT_MARKER)
    }

    fn note(&mut self, kind: &'static str, text: String) {
        let text = self.keep_text(text);
        self.ev(Event::Note {
            note_kind: kind,
            text: crate::evidence::cut(&text),
        });
        self.messages.push(Msg::Note { kind, text });
    }

    /// Records `event` in the evidence at the current step and state.
    fn ev(&mut self, event: Event) {
        let state = if self.state.is_empty() {
            &self.entry_state
        } else {
            &self.state
        };
        self.evidence.push(self.ev_step, state, event);
    }

    fn push_trail(&mut self, to: &str, kind: &'static str, reason: Option<String>) {
        let reason = reason.map(|r| self.keep_text(r));
        self.ev(Event::Trail {
            to: to.to_owned(),
            trail_kind: kind,
            reason: reason.as_deref().map(crate::evidence::cut),
        });
        let ts = self.now();
        self.trail.push(TrailStep {
            to: to.to_owned(),
            kind,
            reason,
            workflow: None,
            status: None,
            ts,
        });
    }

    /// Resolves the trigger and opens the session (FORMAT §B.10 at run time, §E.1).
    pub fn open(&mut self, trigger_id: &str) -> Result<(), SimError> {
        let wf = self.wf();
        let Some(t) = wf.trigger(trigger_id) else {
            let ids = wf.trigger_ids();
            return Err(SimError(if ids.is_empty() {
                format!(
                    "no start state for trigger `{trigger_id}`: the workflow declares no start-state triggers"
                )
            } else {
                format!(
                    "no start state for trigger `{trigger_id}`; declared triggers: {}",
                    ids.join(", ")
                )
            }));
        };
        self.trigger_id = trigger_id.to_owned();
        self.entry_state = t.state.clone();
        self.state = t.state.clone();
        Ok(())
    }

    /// Seeds files (FORMAT §B.8): validates every path first and writes nothing if one
    /// fails; only the `run` and `run-open` zones are seedable.
    pub fn seed(&mut self, files: &[(String, String)]) -> Result<(), SimError> {
        for (path, _) in files {
            let zone = classify(path);
            if !matches!(zone, Zone::Run | Zone::RunOpen) {
                return Err(SimError(format!(
                    "cannot seed `{path}`: it resolves to the `{}` zone; seedable paths are agent-visible session files (e.g. `trigger.json`, `scratchpad/…`)",
                    zone.name()
                )));
            }
        }
        for (path, content) in files {
            self.fs
                .write(path, content)
                .map_err(|e| SimError(format!("cannot seed `{path}`: {e}")))?;
        }
        Ok(())
    }

    /// Seeds locked host variables with `reseed` (FORMAT §E.4): replaces locked values;
    /// `title` is stored unlocked and trimmed and must pass the title check.
    /// `Err` when the store would pass the session folder's bound (the case dies).
    pub fn seed_variables(&mut self, vars: &[(String, Value)]) -> Result<(), SimError> {
        let mut set = Vec::with_capacity(vars.len());
        for (name, value) in vars {
            // The same seeding the static check of `requires` simulates (WFX310/WFX311).
            let value = seed_value(name, value).map_err(SimError)?;
            let locked = name != "title";
            set.push((name.clone(), Var { value, locked }));
        }
        self.put_vars(set)
            .map_err(|why| SimError(format!("the case's variables were not seeded: {why}")))
    }

    fn set_trigger_var(&mut self, id: &str) -> Result<(), SimError> {
        self.put_vars(vec![(
            "trigger".into(),
            Var {
                value: Value::String(id.to_owned()),
                locked: true,
            },
        )])
        .map_err(|why| SimError(format!("the trigger `{id}` was not stored: {why}")))
    }

    /// True when the session is parked in either channel.
    pub fn parked(&self) -> bool {
        matches!(
            self.status,
            Status::AwaitingDecision | Status::AwaitingInput
        )
    }

    /// The view assertions read (FORMAT §E.8).
    pub fn view(&self) -> SessionView {
        let mut reply = None;
        let mut texts = Vec::new();
        let mut calls: Vec<(u64, ToolCallFact)> = Vec::new();
        let mut failed = false;
        let mut notes = Vec::new();
        for m in &self.messages {
            match m {
                Msg::User(_) => {}
                Msg::Assistant { text, call } => {
                    if !text.is_empty() {
                        reply = Some(text.clone());
                        texts.push(text.clone());
                    }
                    if let Some((id, name, input)) = call {
                        calls.push((
                            *id,
                            ToolCallFact {
                                name: name.clone(),
                                input: input.clone(),
                                status: "pending",
                                output: None,
                            },
                        ));
                    }
                }
                Msg::Tool {
                    call_id,
                    content,
                    error,
                    blocked,
                    ..
                } => {
                    if *error && !*blocked {
                        failed = true;
                    }
                    if let Some((_, fact)) = calls.iter_mut().find(|(id, _)| id == call_id) {
                        fact.status = if *blocked {
                            "rejected"
                        } else if *error {
                            "failed"
                        } else {
                            "completed"
                        };
                        fact.output = Some(
                            serde_json::from_str(content)
                                .unwrap_or_else(|_| Value::String(content.clone())),
                        );
                    }
                }
                Msg::Note { kind, text } => notes.push((*kind, text.clone())),
            }
        }
        SessionView {
            reply,
            transcript: texts.join("\n"),
            tool_calls: calls.into_iter().map(|(_, f)| f).collect(),
            failed,
            parked: self.parked(),
            channel: match self.status {
                Status::AwaitingDecision => Some(Channel::Decision),
                Status::AwaitingInput => Some(Channel::Input),
                _ => None,
            },
            state: self.state.clone(),
            raised: self.raised.clone(),
            trail: self.trail.clone(),
            variables: self.variables.shared(),
            notes,
            status: self.status,
        }
    }

    /// The first mock for `tool` whose `whenInput` matches `input` (FORMAT §B.6). `Err`
    /// (the tool call's failure message) when a `whenInput` could not be decided (bounded
    /// work): the call then fails rather than falling through to a later mock.
    fn find_mock(&self, tool: &str, input: &Value) -> Result<Option<&Mock>, String> {
        if !self.mocks_active {
            return Ok(None);
        }
        for m in self.mocks.iter().filter(|m| m.tool.value == tool) {
            match m.when_input.as_ref().map(|w| partial_match(w, Some(input))) {
                None | Some(Ok(true)) => return Ok(Some(m)),
                Some(Ok(false)) => {}
                Some(Err(why)) => {
                    return Err(format!("the mock of `{tool}` could not be matched: {why}"));
                }
            }
        }
        Ok(None)
    }

    fn mock_text(result: &Value) -> String {
        match result {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }

    /// Bytes of tool output the session still keeps ([`MAX_SESSION_TOOL_OUTPUT_BYTES`]
    /// less what it kept).
    fn output_room(&self) -> usize {
        MAX_SESSION_TOOL_OUTPUT_BYTES.saturating_sub(self.output_bytes)
    }

    /// Built-in file tools over the session folder (skills and `AGENTS.md` mounted).
    fn file_tool(&mut self, tool: &str, input: &Value, authority: Authority) -> Option<ToolResult> {
        let s = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_owned);
        let enabled: Option<Vec<String>> = match authority {
            Authority::Runtime => None,
            Authority::Agent => self
                .state_model()
                .map(|st| governance::enabled_skills(self.wf(), st)),
        };
        let visible = |p: &str| match (&enabled, governance::skill_of(p)) {
            (Some(list), Some(slug)) => list.contains(&slug),
            _ => true,
        };
        let need = |k: &str| s(k).ok_or_else(|| format!("{tool}: `{k}` is required (a string)"));
        let fserr = |e: FsError| e.to_string();
        Some(match tool {
            "read_file" => need("file_path").and_then(|p| self.fs.read(&p).map_err(fserr)),
            "write_file" => need("file_path").and_then(|p| {
                let content = match input.get("content") {
                    Some(Value::String(c)) => c.clone(),
                    Some(other) => other.to_string(),
                    None => return Err("write_file: `content` is required".into()),
                };
                if self.fs.exists(&p) {
                    return Err(format!("write_file: `{p}` already exists; read it and change it with edit_file"));
                }
                self.fs.write(&p, &content).map_err(fserr).map(|()| format!("Updated file {p}"))
            }),
            "edit_file" => need("file_path").and_then(|p| {
                let old = need("old_string")?;
                let new = need("new_string")?;
                let all = input.get("replace_all").and_then(Value::as_bool).unwrap_or(false);
                let text = self.fs.read(&p).map_err(fserr)?;
                let n = text.matches(&old).count();
                if n == 0 {
                    return Err(format!("edit_file: `old_string` does not occur in `{p}`"));
                }
                if n > 1 && !all {
                    return Err(format!("edit_file: `old_string` occurs {n} times in `{p}`; pass replace_all: true or a longer string"));
                }
                // Bounded memory: the result's size is known before it is built; one that
                // could never fit the session folder is refused here, not after allocating
                // it (break-it finding: an empty `old_string` with `replace_all` asked for
                // gigabytes).
                let times = if all { n } else { 1 };
                let size = (text.len() as u64)
                    .saturating_sub((old.len() as u64).saturating_mul(times as u64))
                    .saturating_add((new.len() as u64).saturating_mul(times as u64));
                if size > crate::session_fs::MAX_SESSION_DISK_BYTES {
                    return Err(format!(
                        "edit_file: the result would be {size} bytes, more than the session folder's cap of {} bytes (a runner limit)",
                        crate::session_fs::MAX_SESSION_DISK_BYTES
                    ));
                }
                let out = if all { text.replace(&old, &new) } else { text.replacen(&old, &new, 1) };
                self.fs.write(&p, &out).map_err(fserr).map(|()| format!("Successfully replaced {} occurrence(s) in {p}", if all { n } else { 1 }))
            }),
            "remove_file" => need("file_path").and_then(|p| self.fs.remove(&p).map_err(fserr).map(|()| format!("Removed {p}"))),
            "copy_file" | "move_file" => need("source_path").and_then(|from| {
                let to = need("destination_path")?;
                let text = self.fs.read(&from).map_err(fserr)?;
                self.fs.write(&to, &text).map_err(fserr)?;
                if tool == "move_file" {
                    self.fs.remove(&from).map_err(fserr)?;
                }
                Ok(format!("{} {from} to {to}", if tool == "move_file" { "Moved" } else { "Copied" }))
            }),
            // Built only up to what the session's output cap still keeps (bounded work,
            // `crate::file_tools`).
            "ls" => {
                let p = s("path").unwrap_or_default();
                crate::file_tools::ls(&self.fs, &p, &visible, self.output_room(), &Limits::RUNNER)
                    .map(|a| a.text)
                    .map_err(fserr)
            }
            "glob" => need("pattern").map(|pat| {
                let base = s("path").unwrap_or_default();
                crate::file_tools::glob(&self.fs, &base, &pat, &visible, self.output_room(), &Limits::RUNNER).text
            }),
            "grep" => need("pattern").map(|pat| {
                let base = s("path").unwrap_or_default();
                let filter = s("glob");
                crate::file_tools::grep(&self.fs, &base, &pat, filter.as_deref(), &visible, self.output_room(), &Limits::RUNNER).text
            }),
            "write_todos" => Ok("Updated the todo list".into()),
            _ => return None,
        })
    }

    /// Dispatches `archmax_workflow_<slug>` from a mock (FORMAT §B.9, §E.9).
    fn sub_workflow(&mut self, tool: &str, input: &Value) -> ToolResult {
        let slug = tool
            .strip_prefix("archmax_workflow_")
            .unwrap_or_default()
            .to_owned();
        let dir = WorkflowDir {
            root: self.cfg.dir.root.clone(),
            slug: slug.clone(),
        };
        let target = load_workflow(self.cfg.workspace, &dir).and_then(|w| w.model);
        let Some(target) = target else {
            return Err(format!(
                "`{tool}` refused: no workflow `{slug}` in this workspace (workflows/{slug}/workflow.yaml)"
            ));
        };
        if target.disabled {
            return Err(format!(
                "`{tool}` refused (disabled): workflow `{slug}` is disabled"
            ));
        }
        let manual = target.trigger("manual");
        if let Some(t) = manual {
            for entry in &t.requires {
                if let Some(why) = signature_issue(entry, input.get(&entry.name.value)) {
                    return Err(format!(
                        "Call refused before it ran: {why} (a required input of `{slug}`)"
                    ));
                }
            }
        }
        let Some(mock) = self.find_mock(tool, input)?.cloned() else {
            return Err(format!(
                "`{tool}` has no mock in this case, and the bundled runner does not run sub-workflows; add one to the case, e.g.\nmocks:\n  - tool: {tool}\n    result: {{ message: \"…\", returns: {{ … }} }}"
            ));
        };
        self.dispatch_ordinal += 1;
        let (message, returns) = match &mock.result {
            Value::Object(m) => (
                m.get("message").map(Self::mock_text).unwrap_or_default(),
                m.get("returns").cloned().unwrap_or_else(|| json!({})),
            ),
            other => (Self::mock_text(other), json!({})),
        };
        let declared: Vec<SigEntry> = manual.map(|t| t.returns.clone()).unwrap_or_default();
        let mut unset = Vec::new();
        for entry in &declared {
            match returns.get(&entry.name.value) {
                None => unset.push(entry.name.value.clone()),
                Some(v) => {
                    if let Some(why) = signature_issue(entry, Some(v)) {
                        self.push_sub_trail(&slug, "error");
                        return Err(format!(
                            "`{tool}` failed (invalid-return): {why}; the mocked returns do not match `{slug}`'s declared `returns`"
                        ));
                    }
                }
            }
        }
        self.push_sub_trail(&slug, "ok");
        if declared.is_empty() {
            return Ok(message);
        }
        let mut out = serde_json::Map::new();
        out.insert("message".into(), Value::String(message));
        out.insert("returns".into(), returns);
        if !unset.is_empty() {
            let names: Vec<String> = unset.iter().map(|n| format!("'{n}'")).collect();
            out.insert(
                "note".into(),
                Value::String(format!(
                    "Not all return variables were set by the sub-workflow: {} {} not set.",
                    names.join(", "),
                    if names.len() == 1 { "was" } else { "were" }
                )),
            );
        }
        Ok(Value::Object(out).to_string())
    }

    fn push_sub_trail(&mut self, slug: &str, status: &'static str) {
        self.ev(Event::Trail {
            to: self.state.clone(),
            trail_kind: "sub-workflow",
            reason: Some(format!("{slug}: {status}")),
        });
        let ts = self.now();
        let to = self.state.clone();
        self.trail.push(TrailStep {
            to,
            kind: "sub-workflow",
            reason: None,
            workflow: Some(slug.to_owned()),
            status: Some(status),
            ts,
        });
    }

    /// A tool call from a script (hook or `archmax_run`) through the bridge.
    fn bridge_call(&mut self, tool: &str, input: Value, authority: Authority) -> ToolResult {
        if authority == Authority::Agent
            && let Some(st) = self.state_model()
            && let Err(b) = governance::check_call(self.wf(), st, tool, &input, &self.variables)
        {
            return Err(format!("blocked by governance ({}): {}", b.rule, b.message));
        }
        if tool.starts_with("archmax_workflow_") {
            return self.sub_workflow(tool, &input);
        }
        if let Some(m) = self.find_mock(tool, &input)? {
            return Ok(Self::mock_text(&m.result));
        }
        if tool == "archmax_run" || tool == "archmax_eval" || governance::CONTROLS.contains(&tool) {
            return Err(format!("`{tool}` cannot be called from a script"));
        }
        match self.file_tool(tool, &input, authority) {
            Some(r) => r,
            None => Err(format!(
                "tool `{tool}` is not available in the simulator; mock it in the case's `mocks:`"
            )),
        }
    }
}

struct Bridge<'s, 'w> {
    session: &'s mut Session<'w>,
    authority: Authority,
}

impl ToolBridge for Bridge<'_, '_> {
    fn call_tool(&mut self, name: &str, input: Value) -> Result<String, String> {
        self.session.bridge_call(name, input, self.authority)
    }
}

impl<'w, 'h> Simulator<'w, 'h> {
    /// A simulator over `session`.
    pub fn new(
        session: Session<'w>,
        agent: &'h mut dyn Agent,
        host: &'h mut dyn ScriptHost,
        judge: Option<&'h mut dyn Judge>,
    ) -> Self {
        Self {
            session,
            host,
            agent,
            judge,
            runs: 0,
            step: 0,
            model_calls: 0,
            call_spans: Vec::new(),
            state_turns: (String::new(), 0),
            flow: Vec::new(),
            deadline_ms: None,
        }
    }

    /// Milliseconds left before [`Self::deadline_ms`]; `Err` when none are, saying the
    /// time ran out `while` (e.g. "the hooks of `s` were running"). `peek` reads the clock
    /// without counting as a read ([`Clock::limit_peek_ms`]).
    fn time_left(&self, while_: &str, peek: bool) -> Result<Option<u64>, SimError> {
        let Some(deadline) = self.deadline_ms else {
            return Ok(None);
        };
        let clock = self.session.cfg.clock;
        let now = if peek {
            clock.limit_peek_ms()
        } else {
            clock.limit_now_ms()
        };
        match deadline.checked_sub(now) {
            Some(left) if left > 0 => Ok(Some(left)),
            _ => Err(SimError(format!(
                "{CASE_TIME_RAN_OUT} while {while_} (tests.caseTimeoutMs)"
            ))),
        }
    }

    fn enter_flow(&mut self, state: &str) {
        if self.flow.last().map(String::as_str) != Some(state) {
            self.flow.push(state.to_owned());
        }
    }

    /// `send` (FORMAT §B.2, §E.1, §E.3). `variables` are the case's, seeded every turn.
    pub fn send(
        &mut self,
        step: usize,
        message: &str,
        variables: &[(String, Value)],
    ) -> Result<(), SimError> {
        self.step = step;
        self.session.ev_step = step;
        self.session.ev(Event::User {
            text: crate::evidence::cut(message),
        });
        if self.session.parked() {
            self.session.messages.push(Msg::User(message.to_owned()));
            self.session.mocks_active = true;
            self.session.reply_only = true;
            return self.run_agent(RunCause::ReplyWhileParked {
                message: message.to_owned(),
            });
        }
        let first = !self.session.started;
        self.session.started = true;
        self.session.messages.push(Msg::User(message.to_owned()));
        self.session.mocks_active = true;
        self.session.reply_only = false;
        self.session.raised = None;
        self.session.seed_variables(variables)?;
        let trigger_id = self.session.trigger_id.clone();
        self.session.set_trigger_var(&trigger_id)?;
        let wf = self.session.wf();
        if let Some(t) = wf.trigger(&trigger_id) {
            let issues: Vec<String> = t
                .requires
                .iter()
                .filter_map(|e| signature_issue(e, self.session.var(&e.name.value)))
                .collect();
            if !issues.is_empty() {
                self.session.status = Status::Rejected;
                self.session.note(
                    "rejected",
                    format!(
                        "[rejected] the start was refused: trigger '{trigger_id}' requires {}.",
                        issues.join("; ")
                    ),
                );
                return Ok(());
            }
        }
        if first {
            self.session.state = self.session.entry_state.clone();
        }
        let state = self.session.state.clone();
        self.session.push_trail(&state, "trigger", Some(trigger_id));
        self.enter_flow(&state);
        self.session.status = Status::Running;
        if !self.entry_hooks(&state)? {
            return Ok(());
        }
        self.run_agent(RunCause::Send {
            message: message.to_owned(),
        })?;
        self.finish_turn()
    }

    /// Runs `before` hooks for an entry that is not an advance (turn start, decision,
    /// `on_error` route). `Ok(false)` when vetoed (the session is then rejected and the
    /// agent has had its reply-only run).
    fn entry_hooks(&mut self, state: &str) -> Result<bool, SimError> {
        if self.session.before_done.contains(state) {
            return Ok(true);
        }
        match self.run_hooks(state, HookPhase::Before, None)? {
            HookOutcome::Ok => {
                self.session.before_done.insert(state.to_owned());
                Ok(true)
            }
            HookOutcome::Veto(reason)
            | HookOutcome::Correct { reason, .. }
            | HookOutcome::Failed(reason) => {
                self.session.note(
                    "veto",
                    format!("[veto] Entry to '{state}' was vetoed: {reason}"),
                );
                self.session.status = Status::Rejected;
                self.session.reply_only = true;
                self.run_agent(RunCause::VetoedEntry { reason })?;
                Ok(false)
            }
        }
    }

    /// `decide` (FORMAT §B.2, §E.3). No mocks on the resumed run.
    pub fn decide(&mut self, step: usize, to: &str, comment: Option<&str>) -> Result<(), SimError> {
        self.step = step;
        self.session.ev_step = step;
        let Some(pending) = self
            .session
            .pending_decision
            .clone()
            .filter(|_| self.session.status == Status::AwaitingDecision)
        else {
            return Err(SimError(format!(
                "cannot `decide`: the session is not parked at a human state (status: {})",
                self.session.status.as_str()
            )));
        };
        let wf = self.session.wf();
        let from = pending.state.clone();
        let Some(edge) = wf
            .state(&from)
            .and_then(|s| s.transitions.iter().find(|t| t.to.value == to))
        else {
            let declared: Vec<String> = wf
                .state(&from)
                .map(|s| s.transitions.iter().map(|t| t.to.value.clone()).collect())
                .unwrap_or_default();
            return Err(SimError(format!(
                "cannot `decide` `{to}`: it is not a transition of `{from}` (declared: {})",
                declared.join(", ")
            )));
        };
        let comment = comment
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned);
        self.session.ev(Event::Resume {
            channel: "decision",
            by: to.to_owned(),
        });
        self.session.push_trail(to, "human", comment.clone());
        let label = match edge.kind.as_ref().map(|k| k.value.as_str()) {
            Some(k) if k != "none" => format!("{k} → '{to}'"),
            _ => format!("'{to}'"),
        };
        let tail = match &comment {
            Some(c) => format!(": {c}."),
            None => ".".into(),
        };
        self.session.note(
            "decision",
            format!("[decision] A human selected {label} at '{from}' checkpoint{tail} The run has already been routed: you are now in '{to}'. Do its work and continue from here."),
        );
        self.session.pending_decision = None;
        self.session.state = to.to_owned();
        self.session.status = Status::Running;
        // wfx-lsp decision (FORMAT §B.9): the case's mocks apply to the resumed run too;
        // `archmax test` passes none here, which WFX312 tells the author.
        self.session.mocks_active = true;
        self.session.reply_only = false;
        self.enter_flow(to);
        if wf.state(to).is_some_and(|s| s.kind == StateType::Human) {
            self.park_decision(Vec::new());
            return self.run_agent(RunCause::Decision { to: to.to_owned() });
        }
        self.session.before_done.remove(to);
        if !self.entry_hooks(to)? {
            return Ok(());
        }
        self.run_agent(RunCause::Decision { to: to.to_owned() })?;
        self.finish_turn()
    }

    /// `deliver` (FORMAT §B.2, §E.3). No mocks on the resumed run.
    pub fn deliver(
        &mut self,
        step: usize,
        trigger: &str,
        variables: &[(String, Value)],
    ) -> Result<(), SimError> {
        self.step = step;
        self.session.ev_step = step;
        if self.session.status != Status::AwaitingInput {
            return Err(SimError(format!(
                "cannot `deliver` `{trigger}`: the session is not parked for input (status: {})",
                self.session.status.as_str()
            )));
        }
        let state = self.session.state.clone();
        let mut shown = Vec::new();
        let mut set = Vec::with_capacity(variables.len());
        for (name, value) in variables {
            if name == "title" {
                match value.as_str().filter(|s| title_issue(s).is_none()) {
                    Some(s) => set.push((
                        name.clone(),
                        Var {
                            value: Value::String(s.trim().to_owned()),
                            locked: false,
                        },
                    )),
                    None => continue,
                }
            } else {
                set.push((
                    name.clone(),
                    Var {
                        value: value.clone(),
                        locked: true,
                    },
                ));
            }
            shown.push(format!("{name}={value}"));
        }
        self.session.put_vars(set).map_err(|why| {
            SimError(format!(
                "the variables delivered with `{trigger}` were not stored: {why}"
            ))
        })?;
        self.session.set_trigger_var(trigger)?;
        self.session.ev(Event::Resume {
            channel: "input",
            by: trigger.to_owned(),
        });
        let tail = if shown.is_empty() {
            ".".to_owned()
        } else {
            format!(": {} (also readable as run variables)", shown.join(", "))
        };
        self.session.note("event", format!("[event] '{trigger}' arrived while the run waited in '{state}'{tail} You are still in '{state}'; continue from here."));
        self.session
            .push_trail(&state, "trigger", Some(trigger.to_owned()));
        self.session.pending_input = None;
        self.session.status = Status::Running;
        // wfx-lsp decision (FORMAT §B.9), as for `decide`.
        self.session.mocks_active = true;
        self.session.reply_only = false;
        self.run_agent(RunCause::Delivery {
            trigger: trigger.to_owned(),
        })?;
        self.finish_turn()
    }

    fn park_decision(&mut self, attached: Vec<String>) {
        let wf = self.session.wf();
        let state = self.session.state.clone();
        let st = wf.state(&state);
        let mut evidence: Vec<String> = st.map(|s| s.evidence.clone()).unwrap_or_default();
        for p in attached {
            if !evidence.contains(&p) {
                evidence.push(p);
            }
        }
        self.session.decision_count += 1;
        self.session.observed.park(&state, "decision");
        let created_at = self.session.now();
        self.session.pending_decision = Some(PendingDecision {
            state: state.clone(),
            title: st.and_then(|s| s.title.clone()),
            seq: self.session.decision_count,
            transitions: st
                .map(|s| {
                    s.transitions
                        .iter()
                        .map(|t| {
                            let mut m = serde_json::Map::new();
                            m.insert("to".into(), Value::String(t.to.value.clone()));
                            if let Some(d) = &t.description {
                                m.insert("description".into(), Value::String(d.clone()));
                            }
                            if let Some(k) = &t.kind {
                                m.insert("type".into(), Value::String(k.value.clone()));
                            }
                            Value::Object(m)
                        })
                        .collect()
                })
                .unwrap_or_default(),
            evidence,
            created_at,
        });
        self.session.status = Status::AwaitingDecision;
        self.session.reply_only = true;
        self.session.ev(Event::Park {
            channel: "decision",
            reason: None,
        });
    }

    /// One model run: calls the agent until it returns no actions, at most
    /// [`MAX_MODEL_CALLS_PER_RUN`] times (one more is an error naming the cap: bounded
    /// work). Each call with actions counts against the state's `budget.maxTurns`.
    fn run_agent(&mut self, cause: RunCause) -> Result<(), SimError> {
        let run = self.runs;
        self.runs += 1;
        for call in 0..=MAX_MODEL_CALLS_PER_RUN {
            // The case's time holds inside a model run too, whatever the agent (a live
            // agent checks its own wall clock as well): no model call starts past it.
            self.time_left(&format!("{} was running", cause.describe()), true)?;
            let wf = self.session.wf();
            let state = self.session.state_model();
            let tools = state
                .map(|s| governance::offered_tools(wf, s))
                .unwrap_or_default();
            let at = self.session.state.clone();
            self.session.observed.offer(&at, &tools);
            let messages = self.agent_messages();
            let vars = self.session.variables.plain();
            let state_slug = self.session.state.clone();
            let ctx = TurnContext {
                run,
                call,
                case_step: self.step,
                cause: &cause,
                state: &state_slug,
                instructions: state.and_then(|s| s.instructions.as_deref()),
                reply_only: self.session.reply_only,
                tools: &tools,
                messages: &messages,
                variables: vars,
            };
            let actions = self.agent.respond(&ctx).map_err(|e| SimError(e.0))?;
            if actions.is_empty() {
                return Ok(());
            }
            let calls = actions
                .iter()
                .filter(|a| matches!(a, AgentAction::Call { .. }))
                .count();
            if calls > MAX_TOOL_CALLS_PER_MODEL_CALL {
                return Err(SimError(format!(
                    "one model call of {} carried {calls} tool calls, more than the cap of {MAX_TOOL_CALLS_PER_MODEL_CALL} per call; none was executed and the run was stopped",
                    cause.describe()
                )));
            }
            if call == MAX_MODEL_CALLS_PER_RUN {
                return Err(SimError(format!(
                    "{} made more than {MAX_MODEL_CALLS_PER_RUN} model calls without ending with a reply (the per-run cap); the run was stopped",
                    cause.describe()
                )));
            }
            if self.state_turns.0 != state_slug {
                self.state_turns = (state_slug.clone(), 0);
            }
            self.state_turns.1 += 1;
            if let Some(max) = state.and_then(|s| s.max_turns)
                && self.state_turns.1 > max
                && !self.session.reply_only
            {
                let reason =
                    format!("state '{state_slug}' exhausted its turn budget (maxTurns: {max})");
                self.terminal_rejection(&reason)?;
                continue;
            }
            let group = self.model_calls;
            self.model_calls += 1;
            let first = self.session.messages.len();
            let mut raised = false;
            for action in actions {
                match action {
                    AgentAction::Say(text) => {
                        if !text.is_empty() {
                            self.session.ev(Event::Assistant {
                                text: crate::evidence::cut(&text),
                            });
                        }
                        self.session
                            .messages
                            .push(Msg::Assistant { text, call: None });
                    }
                    AgentAction::Call { tool, input } => self.agent_call(&tool, input)?,
                }
                if self.session.raised.is_some() {
                    raised = true;
                    break;
                }
            }
            self.call_spans
                .push((first, self.session.messages.len(), group));
            if raised {
                return Ok(());
            }
        }
        Ok(())
    }

    fn agent_messages(&self) -> Vec<AgentMessage> {
        let mut spans = self.call_spans.iter().peekable();
        self.session
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                while spans.peek().is_some_and(|(_, end, _)| *end <= i) {
                    spans.next();
                }
                let group = spans
                    .peek()
                    .filter(|(first, _, _)| *first <= i)
                    .map(|(_, _, g)| *g);
                let base = AgentMessage {
                    role: "user",
                    text: String::new(),
                    tool: None,
                    call_id: None,
                    input: None,
                    error: false,
                    note_kind: None,
                    group: None,
                };
                match m {
                    Msg::User(t) => AgentMessage {
                        text: t.clone(),
                        ..base
                    },
                    Msg::Assistant { text, call } => AgentMessage {
                        role: "assistant",
                        text: text.clone(),
                        tool: call.as_ref().map(|c| c.1.clone()),
                        call_id: call.as_ref().map(|c| c.0),
                        input: call.as_ref().map(|c| c.2.clone()),
                        group,
                        ..base
                    },
                    Msg::Tool {
                        call_id,
                        name,
                        content,
                        error,
                        blocked,
                    } => AgentMessage {
                        role: "tool",
                        text: content.clone(),
                        tool: Some(name.clone()),
                        call_id: Some(*call_id),
                        error: *error || *blocked,
                        ..base
                    },
                    Msg::Note { kind, text } => AgentMessage {
                        role: "runtime",
                        text: text.clone(),
                        note_kind: Some(kind),
                        ..base
                    },
                }
            })
            .collect()
    }

    fn push_result(&mut self, id: u64, name: &str, content: String, error: bool, blocked: bool) {
        let content = keep_output(&mut self.session.output_bytes, content);
        let status = if blocked {
            CallStatus::Rejected
        } else if error {
            CallStatus::Failed
        } else if name == "archmax_advance" && content.starts_with("archmax_advance rejected") {
            // The reference answers a refused advance as a completed call (FORMAT §E.8);
            // the evidence names it for what it is.
            CallStatus::Rejected
        } else {
            CallStatus::Completed
        };
        self.session.evidence.answer(id, status, &content);
        self.session.messages.push(Msg::Tool {
            call_id: id,
            name: name.to_owned(),
            content,
            error,
            blocked,
        });
    }

    /// Executes one agent tool call: reply-only rule, reference substitution, governance,
    /// then controls, sub-workflows, mocks, scripts and file tools.
    fn agent_call(&mut self, tool: &str, input: Value) -> Result<(), SimError> {
        // No call of an answer starts past the case's time (bounded work: an answer carries
        // up to 100 calls, each of which may read or store megabytes).
        self.time_left(&format!("the agent's `{tool}` call was to run"), true)?;
        self.session.next_call += 1;
        let id = self.session.next_call;
        self.session.ev(Event::ToolCall {
            call_id: id,
            tool: tool.to_owned(),
            input: crate::evidence::cut_value(&input),
            status: CallStatus::Pending,
            output: None,
            reason: None,
        });
        self.session.messages.push(Msg::Assistant {
            text: String::new(),
            call: Some((id, tool.to_owned(), input.clone())),
        });
        if self.session.reply_only
            || matches!(
                self.session.status,
                Status::Rejected | Status::Completed | Status::Failed
            )
        {
            let at = self.session.state.clone();
            self.session.observed.call(&at, tool, true);
            self.push_result(id, tool, format!("Refused (tool.reply-only): `{tool}` was not run; this turn may only reply, because the session is {}.", self.session.status.as_str()), true, true);
            return Ok(());
        }
        if let Value::String(raw) = &input {
            // A live model's arguments that are not JSON arrive verbatim as a string
            // (`model::wire::ToolArgs::Invalid`): an error result the model can correct.
            let shown: String = raw.chars().take(200).collect();
            self.push_result(id, tool, format!("Call refused before it ran: the arguments of `{tool}` are not valid JSON ({shown}). Send the arguments as one JSON object."), true, false);
            return Ok(());
        }
        let input = match governance::substitute_input(&input, &self.session.variables) {
            Ok(v) => v,
            Err(why) => {
                self.push_result(id, tool, format!("Call refused before it ran: an argument reference could not be resolved — {why}. Nothing was called."), true, false);
                return Ok(());
            }
        };
        let wf = self.session.wf();
        let Some(state) = self.session.state_model() else {
            return Err(SimError(format!(
                "the session is in an undeclared state `{}`",
                self.session.state
            )));
        };
        if let Err(Block { rule, message }) =
            governance::check_call(wf, state, tool, &input, &self.session.variables)
        {
            let at = self.session.state.clone();
            self.session.observed.call(&at, tool, true);
            self.push_result(
                id,
                tool,
                format!("Blocked by governance ({rule}): {message}."),
                true,
                true,
            );
            return Ok(());
        }
        let at = self.session.state.clone();
        self.session.observed.call(&at, tool, false);
        let mut mocked = false;
        let result = match tool {
            "archmax_advance" => self.advance(&input)?,
            "archmax_wait" => self.wait(&input)?,
            "archmax_raise" => self.raise(&input),
            "archmax_reset" => self.reset(&input)?,
            "archmax_set_variables" => self.set_variables(&input),
            "archmax_get_variables" => self.get_variables(&input),
            t if t.starts_with("archmax_workflow_") => {
                mocked = true;
                self.session.sub_workflow(t, &input)
            }
            t => {
                let mock = match self.session.find_mock(t, &input) {
                    Ok(m) => m.map(|m| Ok(Session::mock_text(&m.result))),
                    Err(why) => Some(Err(why)),
                };
                if let Some(r) = mock {
                    mocked = r.is_ok();
                    r
                } else if t == "archmax_run" {
                    self.run_script(&input)?
                } else if t == "archmax_eval" {
                    Err("archmax_eval was not executed: the JavaScript sandbox is not available in the bundled runner".into())
                } else {
                    match self.session.file_tool(t, &input, Authority::Agent) {
                        Some(r) => r,
                        None => Err(format!(
                            "tool `{t}` is not available in the simulator: declare a mock for it in the case's `mocks:`"
                        )),
                    }
                }
            }
        };
        match result {
            Ok(text) => {
                self.push_result(id, tool, text, false, false);
                if mocked {
                    self.session.evidence.mark_mocked(id);
                }
            }
            Err(text) => self.push_result(id, tool, text, true, false),
        }
        Ok(())
    }

    fn run_script(&mut self, input: &Value) -> Result<ToolResult, SimError> {
        let Some(path) = input
            .get("file_path")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Ok(Err("archmax_run: `file_path` is required".into()));
        };
        let source = match self.session.fs.read(&path) {
            Ok(s) => s,
            Err(e) => return Ok(Err(format!("archmax_run: {e}"))),
        };
        let wf = self.session.wf();
        // Bounded work (issue 24): a script starts only while the case has time left and
        // runs with min(`settings.timeoutMs`, that time), as hooks do, so 100 calls of an
        // answer cannot each take a 30 s budget. The look at the clock does not count as a
        // read (a test clock's recorded timestamps stay as they were).
        let left = self.time_left(&format!("`archmax_run` was to run `{path}`"), true)?;
        let req = ScriptRequest {
            path: path.clone(),
            source,
            input: input.clone(),
            variables: self.session.variables.plain().clone(),
            timeout_ms: within(wf.timeout_ms, left),
            memory_limit_bytes: wf.memory_limit_bytes,
            max_calls: wf.max_ptc_calls,
        };
        let Simulator { session, host, .. } = self;
        let mut bridge = Bridge {
            session,
            authority: Authority::Agent,
        };
        let out = host.run_script(req, &mut bridge);
        // A script cut at the case's deadline ends the case there, as a hook does.
        self.time_left(&format!("`archmax_run` ran `{path}`"), true)?;
        match out {
            Ok(Value::String(s)) => Ok(Ok(s)),
            Ok(v) => Ok(Ok(v.to_string())),
            Err(ScriptError::Unavailable(m)) => Err(SimError(m)),
            Err(ScriptError::Threw(m)) | Err(ScriptError::Failed(m)) => {
                Ok(Err(format!("archmax_run `{path}` failed: {m}")))
            }
        }
    }

    /// Runs the hooks of `state` for `phase`; `advance` is `(from, to, reason)`.
    fn run_hooks(
        &mut self,
        state: &str,
        phase: HookPhase,
        advance: Option<(&str, &str, &str)>,
    ) -> Result<HookOutcome, SimError> {
        let wf = self.session.wf();
        let Some(st) = wf.state(state) else {
            return Ok(HookOutcome::Ok);
        };
        if st.kind == StateType::Human {
            return Ok(HookOutcome::Ok);
        }
        let hooks = match phase {
            HookPhase::Before => &st.before,
            HookPhase::After => &st.after,
        };
        for (i, hook) in hooks.iter().enumerate() {
            let label = match &hook.kind {
                HookKind::Script(path) => path.value.clone(),
                HookKind::Rubric(_) => format!("rubric#{i}"),
                HookKind::Custom(kind, target) => format!("{}: {target}", kind.value),
            };
            let mut skipped = false;
            // Every hook of a list, the first included, starts only while the case has
            // time left, and gets at most that: min(hook budget, case time left), so a
            // spent case never starts a 30 s hook. The first hook's look at the clock does
            // not count as a read (a test clock does not advance; recorded timestamps stay
            // as they were).
            let left = self.time_left(&format!("the hooks of `{state}` were running"), i == 0)?;
            let verdict = match &hook.kind {
                HookKind::Script(path) => {
                    self.run_script_hook(state, phase, &path.value, advance, left)?
                }
                HookKind::Rubric(instructions) => {
                    let id = format!("{state}/{}/rubric#{i}", phase.as_str());
                    if self.session.cfg.grades.skip {
                        skipped = true;
                        self.session.note(
                            "hook",
                            format!(
                                "[hook] rubric {id} was skipped (--skip-grades) and counts as ok"
                            ),
                        );
                        Ok(HookVerdict::Ok)
                    } else if let Some(why) =
                        unavailable_reason(&self.session.cfg.grades, self.judge.is_some())
                    {
                        return Err(SimError(format!(
                            "rubric hook `{id}` was not executed: {why}"
                        )));
                    } else {
                        let payload = self.hook_input(state, phase, advance);
                        match self.judge.as_mut() {
                            Some(j) => j
                                .rubric(instructions, &payload)
                                .map_err(ScriptError::Failed),
                            None => Ok(HookVerdict::Ok),
                        }
                    }
                }
                HookKind::Custom(kind, target) => {
                    return Err(SimError(format!(
                        "hook `{}: {target}` of state `{state}` was not executed: the bundled runner has no executor for custom hook kinds",
                        kind.value
                    )));
                }
            };
            if !skipped {
                self.session.observed.hook(
                    state,
                    phase.as_str(),
                    i,
                    crate::coverage::class_of(&verdict),
                );
            }
            let (v, why) = match &verdict {
                Ok(HookVerdict::Ok) if skipped => ("skipped", None),
                Ok(HookVerdict::Ok) => ("ok", None),
                Ok(HookVerdict::Veto(r)) => ("veto", Some(r.clone())),
                Ok(HookVerdict::Correct(r)) => ("correct", Some(r.clone())),
                Err(ScriptError::Threw(m)) => ("threw", Some(m.clone())),
                Err(ScriptError::Failed(m)) | Err(ScriptError::Unavailable(m)) => {
                    ("failed", Some(m.clone()))
                }
            };
            self.session.ev(Event::Hook {
                phase: phase.as_str(),
                of: state.to_owned(),
                hook: label,
                verdict: v,
                reason: why.map(|r| crate::evidence::cut(&r)),
            });
            // A hook cut at the case's deadline ends the case there (FORMAT §C.2: the run
            // is aborted at the timeout), before its cut reads as a veto or a failure that
            // the run would go on handling past the deadline.
            self.time_left(&format!("the hooks of `{state}` were running"), true)?;
            match verdict {
                Ok(HookVerdict::Ok) => {}
                Ok(HookVerdict::Veto(r)) => return Ok(HookOutcome::Veto(r)),
                Ok(HookVerdict::Correct(r)) if phase == HookPhase::Before => {
                    return Ok(HookOutcome::Veto(r));
                }
                Ok(HookVerdict::Correct(r)) => {
                    return Ok(HookOutcome::Correct {
                        key: format!("{state}/after/{i}"),
                        reason: r,
                        budget: hook.max_iterations,
                    });
                }
                Err(ScriptError::Unavailable(m)) => return Err(SimError(m)),
                Err(ScriptError::Threw(m)) => {
                    return Ok(HookOutcome::Veto(format!("the hook threw: {m}")));
                }
                Err(ScriptError::Failed(m)) => {
                    return Ok(HookOutcome::Failed(format!(
                        "a hook failed to execute: {m}"
                    )));
                }
            }
        }
        Ok(HookOutcome::Ok)
    }

    fn hook_input(
        &self,
        state: &str,
        phase: HookPhase,
        advance: Option<(&str, &str, &str)>,
    ) -> Value {
        let messages: Vec<Value> = self
            .session
            .messages
            .iter()
            .filter_map(|m| match m {
                Msg::User(t) => Some(json!({"role": "user", "text": t})),
                Msg::Assistant { text, .. } if !text.is_empty() => {
                    Some(json!({"role": "assistant", "text": text}))
                }
                _ => None,
            })
            .collect();
        let mut input = json!({
            "state": state,
            "phase": phase.as_str(),
            "trigger": self.session.trigger_id,
            "variables": self.session.variables.plain(),
            "messages": messages,
        });
        if let (Some((from, to, reason)), Some(obj)) = (advance, input.as_object_mut()) {
            obj.insert("from".into(), json!(from));
            obj.insert("to".into(), json!(to));
            obj.insert("reason".into(), json!(reason));
        }
        input
    }

    fn run_script_hook(
        &mut self,
        state: &str,
        phase: HookPhase,
        path: &str,
        advance: Option<(&str, &str, &str)>,
        left: Option<u64>,
    ) -> Result<Result<HookVerdict, ScriptError>, SimError> {
        let wf = self.session.wf();
        let file = join(&self.session.cfg.dir.dir(), path);
        let source = match self
            .session
            .cfg
            .workspace
            .read_text_max(&file, wfx_schemas::check::MAX_SCRIPT_BYTES)
        {
            Ok(s) => s,
            Err(
                e @ (wfx_schemas::files::FileError::TooLarge { .. }
                | wfx_schemas::files::FileError::HardLink { .. }),
            ) => {
                return Ok(Err(ScriptError::Failed(format!(
                    "hook `{path}` ({file}) was not run: {e}"
                ))));
            }
            Err(wfx_schemas::files::FileError::OutsideWorkspace) => {
                return Ok(Err(ScriptError::Failed(format!(
                    "hook `{path}` leaves the workspace ({file}: `..`, an absolute path or a symbolic link leading outside); it was not run"
                ))));
            }
            Err(_) => {
                return Ok(Err(ScriptError::Failed(format!(
                    "hook `{path}` does not exist ({file})"
                ))));
            }
        };
        let req = HookRequest {
            path: path.to_owned(),
            source,
            state: state.to_owned(),
            phase,
            input: self.hook_input(state, phase, advance),
            // At most the case's time left (the host clamps to its ceiling as well).
            timeout_ms: within(wf.timeout_ms, left),
            memory_limit_bytes: wf.memory_limit_bytes,
        };
        let Simulator { session, host, .. } = self;
        let mut bridge = Bridge {
            session,
            authority: Authority::Runtime,
        };
        Ok(host.run_hook(req, &mut bridge))
    }

    /// A terminal rejection: route to `on_error` when declared, else reject the session.
    fn terminal_rejection(&mut self, reason: &str) -> Result<String, SimError> {
        let wf = self.session.wf();
        let from = self.session.state.clone();
        match wf
            .state(&from)
            .and_then(|s| s.on_error.as_ref())
            .map(|s| s.value.clone())
        {
            Some(target) if wf.state(&target).is_some() => {
                self.session
                    .push_trail(&target, "on_error", Some(reason.to_owned()));
                self.session.note("error", format!("[error] The work in '{from}' failed: {reason}. The run was routed to '{target}'; continue from here."));
                self.session.state = target.clone();
                self.enter_flow(&target);
                self.session.before_done.remove(&target);
                self.entry_hooks(&target)?;
                Ok(format!(
                    "archmax_advance rejected: {reason}. The run was routed to '{target}'."
                ))
            }
            _ => {
                self.session.status = Status::Rejected;
                self.session.reply_only = true;
                self.session.note(
                    "error",
                    format!("[error] The work in '{from}' failed: {reason}. The run is rejected."),
                );
                Ok(format!(
                    "archmax_advance rejected: {reason}. The run is rejected."
                ))
            }
        }
    }

    fn advance(&mut self, input: &Value) -> Result<ToolResult, SimError> {
        let to = input
            .get("to")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let reason = input
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if to.is_empty() || reason.is_empty() {
            return Ok(Err(
                "archmax_advance rejected: `to` (a state) and a non-empty `reason` are required."
                    .into(),
            ));
        }
        let wf = self.session.wf();
        let from = self.session.state.clone();
        let Some(st) = wf.state(&from) else {
            return Ok(Err("archmax_advance: the session has no state".into()));
        };
        if !st.transitions.iter().any(|t| t.to.value == to) {
            let declared: Vec<&str> = st.transitions.iter().map(|t| t.to.value.as_str()).collect();
            return Ok(Ok(format!(
                "archmax_advance rejected: '{to}' is not a transition of state '{from}'; declared: {}.",
                declared.join(", ")
            )));
        }
        let target_human = wf.state(&to).is_some_and(|s| s.kind == StateType::Human);
        let evidence: Vec<String> = input
            .get("evidence")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if !evidence.is_empty() {
            if !target_human {
                return Ok(Ok("archmax_advance rejected: evidence can only be attached when advancing into a human decision state; drop `evidence` or advance to a human state.".into()));
            }
            if evidence.len() > 20 {
                return Ok(Ok(
                    "archmax_advance rejected: at most 20 evidence paths may be attached.".into(),
                ));
            }
            if let Some(bad) = evidence
                .iter()
                .find(|p| classify(p) == Zone::Escapes || !self.session.fs.exists(p))
            {
                return Ok(Ok(format!(
                    "archmax_advance rejected: evidence `{bad}` is not a readable session file."
                )));
            }
        }
        let missing: Vec<String> = st
            .requires
            .iter()
            .map(|r| r.value.clone())
            .filter(|n| !self.session.variables.contains_key(n))
            .collect();
        if !missing.is_empty() {
            return Ok(Ok(format!(
                "archmax_advance rejected: state '{from}' requires {} to be set before it may be left; set {} with archmax_set_variables.",
                missing
                    .iter()
                    .map(|n| format!("'{n}'"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if missing.len() == 1 { "it" } else { "them" }
            )));
        }
        match self.run_hooks(&from, HookPhase::After, Some((&from, &to, &reason)))? {
            HookOutcome::Ok => {}
            HookOutcome::Veto(r) => return Ok(Ok(format!("archmax_advance rejected: {r}"))),
            HookOutcome::Correct {
                key,
                reason: r,
                budget,
            } => {
                let used = self.session.iterations.get(&key).copied().unwrap_or(0);
                if used < budget {
                    self.session.iterations.insert(key, used + 1);
                    return Ok(Ok(format!("archmax_advance rejected: {r}")));
                }
                return self
                    .terminal_rejection(&format!(
                        "the correction budget of an after hook is exhausted: {r}"
                    ))
                    .map(Ok);
            }
            HookOutcome::Failed(r) => return self.terminal_rejection(&r).map(Ok),
        }
        if !target_human {
            match self.run_hooks(&to, HookPhase::Before, Some((&from, &to, &reason)))? {
                HookOutcome::Ok => {}
                HookOutcome::Veto(r) | HookOutcome::Correct { reason: r, .. } => {
                    return Ok(Ok(format!("archmax_advance rejected: {r}")));
                }
                HookOutcome::Failed(r) => return self.terminal_rejection(&r).map(Ok),
            }
        }
        self.session.push_trail(&to, "agent", Some(reason));
        self.session.state = to.clone();
        self.session.before_done.insert(to.clone());
        self.enter_flow(&to);
        if target_human {
            self.park_decision(evidence);
        }
        Ok(Ok(advanced_message(&to)))
    }

    fn wait(&mut self, input: &Value) -> Result<ToolResult, SimError> {
        let reason = input
            .get("reason")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or_default()
            .to_owned();
        if reason.is_empty() {
            return Ok(Err(
                "archmax_wait rejected: a non-empty `reason` is required.".into(),
            ));
        }
        let until = input
            .get("until")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let state = self.session.state.clone();
        let count = self.session.park_counts.get(&state).copied().unwrap_or(0);
        if let Some(max) = self.session.state_model().and_then(|s| s.max_parks)
            && count + 1 > max
        {
            let msg = self.terminal_rejection(&format!(
                "state '{state}' may park at most {max} time(s) (budget.maxParks)"
            ))?;
            return Ok(Err(msg));
        }
        self.session.park_counts.insert(state.clone(), count + 1);
        self.session.observed.park(&state, "input");
        self.session.ev(Event::Park {
            channel: "input",
            reason: Some(reason.clone()),
        });
        let parked_at = self.session.now();
        self.session.pending_input = Some(PendingInput {
            state: state.clone(),
            title: self.session.state_model().and_then(|s| s.title.clone()),
            reason,
            parked_at,
            resume_at: until,
        });
        self.session.status = Status::AwaitingInput;
        self.session.reply_only = true;
        Ok(Ok(format!(
            "Waiting in state '{state}'. The run is parked here until an event arrives; it resumes in this state."
        )))
    }

    fn raise(&mut self, input: &Value) -> ToolResult {
        let code = input
            .get("code")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or_default()
            .to_owned();
        let reason = input
            .get("reason")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or_default()
            .to_owned();
        if code.is_empty() || reason.is_empty() {
            return Err(
                "archmax_raise rejected: a non-empty `code` and `reason` are required.".into(),
            );
        }
        self.session.raised = Some(Raised {
            code: code.clone(),
            reason,
            state: self.session.state.clone(),
        });
        self.session.status = Status::Failed;
        self.session.pending_decision = None;
        self.session.pending_input = None;
        Ok(format!("Raised '{code}'. The run has ended."))
    }

    fn reset(&mut self, input: &Value) -> Result<ToolResult, SimError> {
        let reason = input
            .get("reason")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or_default()
            .to_owned();
        if reason.is_empty() {
            return Ok(Err(
                "archmax_reset rejected: a non-empty `reason` is required.".into(),
            ));
        }
        let entry = self.session.entry_state.clone();
        self.session.state = entry.clone();
        self.session.iterations.clear();
        self.session.before_done.clear();
        self.session.push_trail(&entry, "reset", Some(reason));
        self.enter_flow(&entry);
        self.entry_hooks(&entry)?;
        Ok(Ok(format!(
            "Reset to state '{entry}'. Messages, files, variables and the trail are kept."
        )))
    }

    fn set_variables(&mut self, input: &Value) -> ToolResult {
        let Some(vars) = input.get("variables").and_then(Value::as_object) else {
            return Err(
                "archmax_set_variables rejected: `variables` must be a mapping of name to value."
                    .into(),
            );
        };
        if vars.is_empty() {
            return Err("archmax_set_variables rejected: no variables given.".into());
        }
        let lock = input.get("lock").and_then(Value::as_bool).unwrap_or(false);
        let returns: Vec<SigEntry> = self
            .session
            .wf()
            .trigger(&self.session.trigger_id)
            .map(|t| t.returns.clone())
            .unwrap_or_default();
        for (name, value) in vars {
            if !is_variable_name(name) {
                let hint = if name.contains('.') {
                    " (a dotted name is not a path: set the whole value)"
                } else {
                    ""
                };
                return Err(format!(
                    "archmax_set_variables rejected: '{name}' is not a valid variable name{hint}. Nothing was written."
                ));
            }
            if let Some(v) = self.session.variables.get(name).filter(|v| v.locked) {
                return Err(format!(
                    "archmax_set_variables rejected: '{name}' is locked and cannot be changed (current value: {}). Nothing was written.",
                    v.value
                ));
            }
            if name == "title" {
                if lock {
                    return Err("archmax_set_variables rejected: 'title' cannot be locked. Nothing was written.".into());
                }
                if let Some(why) = title_issue(value.as_str().unwrap_or_default()).filter(|_| true)
                {
                    return Err(format!(
                        "archmax_set_variables rejected: 'title' {why}. Nothing was written."
                    ));
                }
            }
            if let Some(entry) = returns
                .iter()
                .find(|e| e.name.value == *name && e.ty.is_some())
                && let Some(why) = signature_issue(entry, Some(value))
            {
                return Err(format!(
                    "archmax_set_variables rejected: {why} (a typed return of trigger '{}'). Nothing was written.",
                    self.session.trigger_id
                ));
            }
        }
        let mut names = Vec::new();
        let mut set = Vec::with_capacity(vars.len());
        for (name, value) in vars {
            let value = if name == "title" {
                Value::String(value.as_str().unwrap_or_default().trim().to_owned())
            } else {
                value.clone()
            };
            set.push((
                name.clone(),
                Var {
                    value,
                    locked: lock && name != "title",
                },
            ));
            names.push(name.clone());
        }
        // Bounded memory (issue 24): the store stays within the session folder's bound.
        if let Err(why) = self.session.put_vars(set) {
            return Err(format!(
                "archmax_set_variables rejected: {why}. Nothing was written."
            ));
        }
        Ok(format!(
            "Set {}{}.",
            names.join(", "),
            if lock { " (locked)" } else { "" }
        ))
    }

    fn get_variables(&mut self, input: &Value) -> ToolResult {
        let Some(name) = input.get("name").and_then(Value::as_str) else {
            let all: serde_json::Map<String, Value> = self
                .session
                .variables
                .iter()
                .map(|(k, v)| (k.clone(), json!({"value": v.value, "locked": v.locked})))
                .collect();
            return Ok(Value::Object(all).to_string());
        };
        let Some(var) = self.session.variables.get(name) else {
            let set: Vec<&str> = self.session.variables.keys().map(String::as_str).collect();
            return Err(format!(
                "Variable '{name}' is not set. Set: {}.",
                if set.is_empty() {
                    "(none set yet)".to_owned()
                } else {
                    set.join(", ")
                }
            ));
        };
        match input.get("path").and_then(Value::as_str) {
            None => Ok(json!({"value": var.value, "locked": var.locked}).to_string()),
            Some(path) => {
                let segs: Vec<&str> = path.split('.').collect();
                match resolve_path(&var.value, &segs) {
                    Some(v) => Ok(v.to_string()),
                    None => Err(format!(
                        "archmax_get_variables rejected: the path '{path}' does not resolve in '{name}'."
                    )),
                }
            }
        }
    }

    /// Ends a model run that did not park, raise or get rejected (FORMAT §E.1 ends of a
    /// turn): a terminal state runs its `after` hooks, checks the trigger's `returns` and
    /// completes; a non-terminal state stays `running`.
    fn finish_turn(&mut self) -> Result<(), SimError> {
        if self.session.status != Status::Running || self.session.raised.is_some() {
            return Ok(());
        }
        let wf = self.session.wf();
        let state = self.session.state.clone();
        let Some(st) = wf.state(&state) else {
            return Ok(());
        };
        if !st.is_terminal() {
            return Ok(());
        }
        for _ in 0..8 {
            match self.run_hooks(&state, HookPhase::After, None)? {
                HookOutcome::Ok => break,
                HookOutcome::Correct {
                    key,
                    reason,
                    budget,
                } => {
                    let used = self.session.iterations.get(&key).copied().unwrap_or(0);
                    if used >= budget {
                        self.terminal_rejection(&format!(
                            "the correction budget of an after hook is exhausted: {reason}"
                        ))?;
                        return Ok(());
                    }
                    self.session.iterations.insert(key, used + 1);
                    self.session.note("hook", format!("[correction] {reason}"));
                    self.run_agent(RunCause::Send {
                        message: String::new(),
                    })?;
                }
                HookOutcome::Veto(r) | HookOutcome::Failed(r) => {
                    self.terminal_rejection(&r)?;
                    return Ok(());
                }
            }
        }
        if let Some(t) = wf.trigger(&self.session.trigger_id) {
            let issues: Vec<String> = t
                .returns
                .iter()
                .filter_map(|e| signature_issue(e, self.session.var(&e.name.value)))
                .collect();
            if !issues.is_empty() {
                self.session.status = Status::Rejected;
                self.session.note(
                    "rejected",
                    format!(
                        "[rejected] the run finished without its returns: {}.",
                        issues.join("; ")
                    ),
                );
                return Ok(());
            }
        }
        self.session.status = Status::Completed;
        Ok(())
    }

    /// The judge, for `grade` assertions.
    pub fn judge(&mut self) -> Option<&mut dyn Judge> {
        match &mut self.judge {
            Some(j) => Some(&mut **j),
            None => None,
        }
    }

    /// The view after the last action.
    pub fn view(&self) -> SessionView {
        self.session.view()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_output_is_kept_up_to_the_session_cap_then_cut_with_a_marker() {
        let mut kept = 0;
        let small = "x".repeat(1000);
        assert_eq!(keep_output(&mut kept, small.clone()), small);
        // A result that crosses the cap keeps what fits, then the marker.
        let big = "é".repeat(MAX_SESSION_TOOL_OUTPUT_BYTES);
        let cut = keep_output(&mut kept, big);
        assert!(
            cut.ends_with(OUTPUT_CUT_MARKER),
            "{}",
            &cut[cut.len() - 100..]
        );
        let body = cut.len() - OUTPUT_CUT_MARKER.len() - 1;
        assert!(body <= MAX_SESSION_TOOL_OUTPUT_BYTES - 1000);
        assert!(body >= MAX_SESSION_TOOL_OUTPUT_BYTES - 1000 - 1);
        assert!(cut[..body].chars().all(|c| c == 'é'));
        // Later results keep only the marker.
        assert_eq!(keep_output(&mut kept, "more".into()), OUTPUT_CUT_MARKER);
        assert_eq!(keep_output(&mut kept, String::new()), "");
    }

    #[test]
    fn variable_names() {
        assert!(is_variable_name("order_id"));
        assert!(!is_variable_name("Order"));
        assert!(!is_variable_name("1a"));
        assert!(!is_variable_name("a.b"));
    }
}
