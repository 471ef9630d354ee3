//! The [`Tape`]: recording and replay at the [`ChatTransport`] level (issue 15; docs/cassettes.md).
//! One tape serves one case; the live agent and the model judge each hold a
//! [`TapeTransport`] on it, so their calls land in one cassette in call order.
//!
//! * **Replay** consumes the recorded interactions in order, one queue for the agent and one
//!   for the judge (`grade` and rubric hooks), and matches the *new* messages of each call
//!   structurally: roles, contents (ends trimmed), tool-call ids, names, parsed arguments,
//!   tool results, and the offered tool names. The first difference ends the case with one
//!   line ([`Tape::error`]); recorded calls left at the end are an error too
//!   ([`Tape::leftovers`]). A changed system prompt or tool declaration, model, temperature or
//!   token cap is *drift*: a warning, or an error when strict.
//! * **Record** passes every call to the live transport and keeps it; [`Tape::cassette`]
//!   builds the file at the end, and gives nothing when a call failed or the run was
//!   cancelled (so nothing is written).
//! * **Replay, then record** (`--record new`) replays while the recording matches; at the
//!   first mismatch, or when the recording runs out, it goes live and records the rest,
//!   replacing the recording's tail.
//!
//! Must not: call the network except through the live transport it was given, read the
//! environment, or keep headers or the key (a [`ChatRequest`] has neither).

use std::cell::{RefCell, RefMut};
use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::Value;
use wfx_schemas::cassette::{
    Cassette, InputDigests, Interaction, InteractionRole, MessageRole, RecordedClock,
    RecordedMessage, RecordedRequest, RecordedResponse, RecordedTool, RecordedToolCall,
    RecordedUsage, VERSION,
};
use wfx_schemas::rules::cassette::mask_key_shaped;

use crate::model::judge::cap;
use crate::model::wire::{
    CallMeta, CallRole, ChatMessage, ChatRequest, ChatResponse, ChatTransport, ModelError, Role,
    ToolArgs, ToolCall, ToolSpec, Usage,
};

/// The hint closing every replay error.
pub const RERECORD_HINT: &str = "re-record with `--live --record all`";

/// At most this many drift warnings are kept per case (the rest are counted).
pub const MAX_WARNINGS: usize = 5;

/// What a tape does with calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TapeMode {
    /// Answer from the recording only; never the network.
    Replay,
    /// Call the live transport and keep every call.
    Record,
    /// Replay while the recording matches, then record live (`--record new`).
    ReplayThenRecord,
}

/// Who made a call, as a queue: the agent, or the model judge (`grade` and rubric).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Queue {
    Agent,
    Judge,
}

fn queue_of(role: InteractionRole) -> Queue {
    match role {
        InteractionRole::Agent => Queue::Agent,
        InteractionRole::Judge | InteractionRole::Rubric => Queue::Judge,
    }
}

fn interaction_role(role: CallRole) -> InteractionRole {
    match role {
        CallRole::Agent => InteractionRole::Agent,
        CallRole::Judge => InteractionRole::Judge,
        CallRole::Rubric => InteractionRole::Rubric,
    }
}

fn role_name(role: InteractionRole) -> &'static str {
    match role {
        InteractionRole::Agent => "agent",
        InteractionRole::Judge => "judge",
        InteractionRole::Rubric => "rubric",
    }
}

/// An interaction of the run, with its prompt and tool declarations as text (ids are
/// given when the cassette is built).
#[derive(Clone, Debug)]
struct Kept {
    it: Interaction,
    system: Option<String>,
    tools: Option<Vec<RecordedTool>>,
}

/// What the cassette of a recording says about the run besides its calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordingInfo {
    /// `wfx-lsp <version>`.
    pub recorded_with: String,
    /// The clock the case ran on.
    pub clock: RecordedClock,
    /// `ARCHMAX_MODEL`.
    pub model: String,
    /// The endpoint's host ([`endpoint_host`]).
    pub endpoint: String,
    /// The case id.
    pub case: String,
    /// Digests of the case and `workflow.yaml` texts.
    pub inputs: InputDigests,
}

struct State {
    mode: TapeMode,
    strict: bool,
    /// The cassette being replayed (its path names it in messages).
    recorded: Option<(String, Cassette)>,
    /// Per queue, the indexes of its interactions and the next one to use.
    queues: BTreeMap<Queue, (Vec<usize>, usize)>,
    live: Option<Box<dyn ChatTransport>>,
    /// `--record new` went live.
    gone_live: bool,
    kept: Vec<Kept>,
    /// Per [`last_key`]: the previous call's messages after the system prompt, plus its
    /// answer: what a call's messages extend.
    last: BTreeMap<(Queue, u64), Vec<RecordedMessage>>,
    error: Option<String>,
    warnings: Vec<String>,
    more_warnings: usize,
    failed: bool,
    cancelled: bool,
    new_calls: usize,
}

/// One case's recording or replay, shared by its [`TapeTransport`]s (one thread: a case
/// runs on one).
#[derive(Clone)]
pub struct Tape(Rc<RefCell<State>>);

/// A [`ChatTransport`] answering from (or recording into) a [`Tape`].
pub struct TapeTransport(Tape);

impl ChatTransport for TapeTransport {
    fn complete(&mut self, req: &ChatRequest, meta: &CallMeta) -> Result<ChatResponse, ModelError> {
        self.0.complete(req, meta)
    }
}

impl Tape {
    /// A tape replaying `cassette` (read from `path`, named in messages) in `mode`
    /// ([`TapeMode::Replay`] or [`TapeMode::ReplayThenRecord`], which needs `live`).
    /// `strict`: drift is an error (`--strict-cassettes`).
    pub fn replay(
        path: &str,
        cassette: Cassette,
        mode: TapeMode,
        live: Option<Box<dyn ChatTransport>>,
        strict: bool,
    ) -> Self {
        let mut queues: BTreeMap<Queue, (Vec<usize>, usize)> = BTreeMap::new();
        for (i, it) in cassette.interactions.iter().enumerate() {
            queues.entry(queue_of(it.role)).or_default().0.push(i);
        }
        Self::new(
            mode,
            strict,
            Some((path.to_owned(), cassette)),
            queues,
            live,
        )
    }

    /// A tape recording every call made through `live`.
    pub fn record(live: Box<dyn ChatTransport>) -> Self {
        Self::new(TapeMode::Record, false, None, BTreeMap::new(), Some(live))
    }

    fn new(
        mode: TapeMode,
        strict: bool,
        recorded: Option<(String, Cassette)>,
        queues: BTreeMap<Queue, (Vec<usize>, usize)>,
        live: Option<Box<dyn ChatTransport>>,
    ) -> Self {
        Tape(Rc::new(RefCell::new(State {
            mode,
            strict,
            recorded,
            queues,
            live,
            gone_live: false,
            kept: Vec::new(),
            last: BTreeMap::new(),
            error: None,
            warnings: Vec::new(),
            more_warnings: 0,
            failed: false,
            cancelled: false,
            new_calls: 0,
        })))
    }

    /// A transport on this tape (one for the agent, one for the judge).
    pub fn transport(&self) -> Box<dyn ChatTransport> {
        Box::new(TapeTransport(self.clone()))
    }

    fn state(&self) -> Option<RefMut<'_, State>> {
        self.0.try_borrow_mut().ok()
    }

    /// Marks the run cancelled: later calls fail and [`Tape::cassette`] gives nothing.
    pub fn cancel(&self) {
        if let Some(mut s) = self.state() {
            s.cancelled = true;
        }
    }

    /// The first replay error (a mismatch, a call the recording lacks, strict drift), as
    /// one line.
    pub fn error(&self) -> Option<String> {
        self.state().and_then(|s| s.error.clone())
    }

    /// Drift warnings, at most [`MAX_WARNINGS`] plus a count of the rest.
    pub fn warnings(&self) -> Vec<String> {
        let Some(s) = self.state() else {
            return Vec::new();
        };
        let mut w = s.warnings.clone();
        if s.more_warnings > 0 {
            w.push(format!("… and {} more drift warnings", s.more_warnings));
        }
        w
    }

    /// After the run: the error for recorded calls that were never made (`Replay` only;
    /// judge calls are not counted when `skip_grades`, since grades did not run).
    pub fn leftovers(&self, skip_grades: bool) -> Option<String> {
        let s = self.state()?;
        if s.mode != TapeMode::Replay || s.error.is_some() {
            return None;
        }
        let (path, c) = s.recorded.as_ref()?;
        let mut unused: Vec<usize> = Vec::new();
        for (q, (idx, next)) in &s.queues {
            if *q == Queue::Judge && skip_grades {
                continue;
            }
            unused.extend(idx.iter().skip(*next));
        }
        unused.sort_unstable();
        let first = c.interactions.get(*unused.first()?)?;
        Some(format!(
            "cassette `{path}`: the run ended with {} recorded model call{} unused, the first {}; {RERECORD_HINT}",
            unused.len(),
            if unused.len() == 1 { "" } else { "s" },
            describe(first)
        ))
    }

    /// True when the run made live calls that a cassette should keep (`Record`, or
    /// `ReplayThenRecord` after it went live) and none failed and nothing was cancelled.
    pub fn has_new_recording(&self) -> bool {
        self.state().is_some_and(|s| {
            s.mode != TapeMode::Replay
                && s.new_calls > 0
                && !s.failed
                && !s.cancelled
                && s.error.is_none()
        })
    }

    /// The cassette of the run: the calls in order (replayed ones first under `--record
    /// new`), prompts and tool declarations stored once each. `None` when there is nothing
    /// new to keep (see [`Tape::has_new_recording`]). Under `--record new` the recording's
    /// clock and date are kept, since the replayed calls depend on them.
    pub fn cassette(&self, info: &RecordingInfo, recorded_at: String) -> Option<Cassette> {
        if !self.has_new_recording() {
            return None;
        }
        let s = self.state()?;
        let (clock, recorded_at) = match (&s.recorded, s.mode) {
            (Some((_, c)), TapeMode::ReplayThenRecord) => (c.clock.clone(), c.recorded_at.clone()),
            _ => (info.clock.clone(), recorded_at),
        };
        let mut out = Cassette {
            version: VERSION,
            recorded_with: info.recorded_with.clone(),
            recorded_at,
            clock,
            model: info.model.clone(),
            endpoint: info.endpoint.clone(),
            case: info.case.clone(),
            inputs: info.inputs.clone(),
            prompts: Default::default(),
            toolsets: Default::default(),
            interactions: Vec::new(),
        };
        for (seq, k) in s.kept.iter().enumerate() {
            let mut it = k.it.clone();
            it.seq = seq as u64;
            it.request.system =
                k.system
                    .as_ref()
                    .map(|text| match out.prompts.iter().find(|(_, v)| *v == text) {
                        Some((id, _)) => id.clone(),
                        None => {
                            let id = format!("p{}", out.prompts.len());
                            out.prompts.insert(id.clone(), text.clone());
                            id
                        }
                    });
            it.request.toolset = k.tools.as_ref().map(|tools| {
                match out.toolsets.iter().find(|(_, v)| *v == tools) {
                    Some((id, _)) => id.clone(),
                    None => {
                        let id = format!("t{}", out.toolsets.len());
                        out.toolsets.insert(id.clone(), tools.clone());
                        id
                    }
                }
            });
            out.interactions.push(it);
        }
        Some(out)
    }

    fn complete(&self, req: &ChatRequest, meta: &CallMeta) -> Result<ChatResponse, ModelError> {
        let Ok(mut s) = self.0.try_borrow_mut() else {
            return Err(ModelError::Replay(
                "the cassette was asked twice at once".into(),
            ));
        };
        if s.cancelled {
            return Err(ModelError::Replay("the recording was cancelled".into()));
        }
        if let Some(e) = &s.error {
            return Err(ModelError::Replay(e.clone()));
        }
        let role = interaction_role(meta.role);
        let queue = queue_of(role);
        let (system, messages) = split_system(req);
        let prev = s
            .last
            .get(&last_key(queue, meta.run))
            .cloned()
            .unwrap_or_default();
        let replaying = match s.mode {
            TapeMode::Replay => true,
            TapeMode::ReplayThenRecord => !s.gone_live,
            TapeMode::Record => false,
        };
        if replaying {
            match s.replay_one(req, meta, role, system.as_deref(), &messages, &prev) {
                Ok(resp) => return Ok(resp),
                Err(line) => {
                    // It quotes the recording and the run: nothing key-shaped is shown.
                    let line = mask_key_shaped(&line);
                    if s.mode == TapeMode::Replay {
                        s.error = Some(line.clone());
                        return Err(ModelError::Replay(line));
                    }
                    // `--record new`: the recording ends here; the rest is live.
                    s.gone_live = true;
                }
            }
        }
        let Some(live) = s.live.as_mut() else {
            let line = "no live model to record with (`--live` is needed)".to_owned();
            s.error = Some(line.clone());
            return Err(ModelError::Replay(line));
        };
        let resp = match live.complete(req, meta) {
            Ok(r) => r,
            Err(e) => {
                s.failed = true;
                return Err(e);
            }
        };
        let from = new_from(&prev, &messages);
        let it = Interaction {
            seq: s.kept.len() as u64,
            role,
            run: meta.run,
            call: meta.call,
            step: meta.step,
            state: meta.state.clone(),
            request: RecordedRequest {
                model: req.model.clone(),
                temperature: req.temperature,
                max_tokens: req.max_tokens,
                system: None,
                tools: req.tools.iter().map(|t| t.name.clone()).collect(),
                toolset: None,
                messages_from: from as u64,
                messages: messages.get(from..).unwrap_or_default().to_vec(),
            },
            response: response_to_recorded(&resp),
        };
        let tools =
            (!req.tools.is_empty()).then(|| req.tools.iter().map(tool_to_recorded).collect());
        s.remember(queue, meta.run, messages, &it.response);
        s.kept.push(Kept { it, system, tools });
        s.new_calls += 1;
        Ok(resp)
    }
}

impl State {
    fn remember(
        &mut self,
        queue: Queue,
        run: u64,
        mut messages: Vec<RecordedMessage>,
        answer: &RecordedResponse,
    ) {
        messages.push(RecordedMessage {
            role: MessageRole::Assistant,
            content: answer.content.clone(),
            tool_calls: answer.tool_calls.clone(),
            tool_call_id: None,
        });
        self.last.insert(last_key(queue, run), messages);
    }

    /// Keeps a drift warning (it quotes the recording and the run: key-shaped strings are
    /// masked as in `check`'s code frames).
    fn warn(&mut self, w: String) {
        let w = mask_key_shaped(&w);
        if self.warnings.contains(&w) {
            return;
        }
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(w);
        } else {
            self.more_warnings += 1;
        }
    }

    /// Answers one call from the recording, or says (one line) why it cannot.
    fn replay_one(
        &mut self,
        req: &ChatRequest,
        meta: &CallMeta,
        role: InteractionRole,
        system: Option<&str>,
        messages: &[RecordedMessage],
        prev: &[RecordedMessage],
    ) -> Result<ChatResponse, String> {
        let queue = queue_of(role);
        let checked = self.check_one(req, meta, role, system, messages, prev)?;
        let Checked {
            it,
            at,
            drift,
            system: recorded_system,
            tools: recorded_tools,
        } = checked;
        for d in drift {
            let line = format!("{at}: prompt drift: {d}");
            if self.strict {
                return Err(format!(
                    "{line} (an error with --strict-cassettes); {RERECORD_HINT}"
                ));
            }
            self.warn(format!("{line}; {RERECORD_HINT}"));
        }
        if let Some(q) = self.queues.get_mut(&queue) {
            q.1 += 1;
        }
        self.remember(queue, meta.run, messages.to_vec(), &it.response);
        let resp = response_from_recorded(&it.response);
        if self.mode == TapeMode::ReplayThenRecord {
            self.kept.push(Kept {
                system: recorded_system,
                tools: recorded_tools,
                it,
            });
        }
        Ok(resp)
    }

    /// Matches one call against the next recorded interaction of its queue.
    fn check_one(
        &self,
        req: &ChatRequest,
        meta: &CallMeta,
        role: InteractionRole,
        system: Option<&str>,
        messages: &[RecordedMessage],
        prev: &[RecordedMessage],
    ) -> Result<Checked, String> {
        let queue = queue_of(role);
        let Some((path, c)) = self.recorded.as_ref() else {
            return Err("no cassette to replay".into());
        };
        let here = format!(
            "{}, run {}, call {}{}{}",
            role_name(role),
            meta.run,
            meta.call,
            meta.step.map(|s| format!(", step {s}")).unwrap_or_default(),
            meta.state
                .as_deref()
                .map(|s| format!(", state `{s}`"))
                .unwrap_or_default()
        );
        let next = self
            .queues
            .get(&queue)
            .and_then(|(idx, n)| idx.get(*n).copied());
        let Some(i) = next else {
            let first_new = messages
                .get(new_from(prev, messages))
                .map(|m| format!("; its first new message: {}", cap(&message_text(m))))
                .unwrap_or_default();
            return Err(format!(
                "cassette `{path}`: the run made a model call the recording does not have ({here}): all {} recorded {} calls were used{first_new}; {RERECORD_HINT}",
                self.queues.get(&queue).map_or(0, |q| q.0.len()),
                match queue {
                    Queue::Agent => "agent",
                    Queue::Judge => "judge",
                }
            ));
        };
        let Some(it) = c.interactions.get(i) else {
            return Err(format!("cassette `{path}`: interaction {i} is missing"));
        };
        let at = format!("cassette `{path}`: {}", describe(it));
        let mismatch =
            |what: String| format!("{at} does not match the run ({here}): {what}; {RERECORD_HINT}");
        if it.role != role {
            return Err(mismatch(format!(
                "expected a {} call, got a {} call",
                role_name(it.role),
                role_name(role)
            )));
        }
        // The messages: the previous call's (and its answer) up to `messagesFrom`, then
        // the recorded new ones.
        let from = usize::try_from(it.request.messages_from).unwrap_or(usize::MAX);
        let mut expected: Vec<RecordedMessage> = prev.iter().take(from).cloned().collect();
        expected.extend(it.request.messages.iter().cloned());
        if let Some(diff) = first_difference(&expected, messages) {
            return Err(mismatch(diff));
        }
        let offered: Vec<String> = req.tools.iter().map(|t| t.name.clone()).collect();
        if offered != it.request.tools {
            return Err(mismatch(format!(
                "offered tools: expected [{}], got [{}]",
                cap(&it.request.tools.join(", ")),
                cap(&offered.join(", "))
            )));
        }
        // Drift: compared here, a warning or (strict) an error in the caller.
        let mut drift: Vec<String> = Vec::new();
        let recorded_system = it.request.system.as_ref().and_then(|id| c.prompts.get(id));
        if recorded_system.map(String::as_str) != system {
            drift.push(text_drift(
                "the system prompt",
                recorded_system.map_or("", String::as_str),
                system.unwrap_or(""),
            ));
        }
        let recorded_tools = it
            .request
            .toolset
            .as_ref()
            .and_then(|id| c.toolsets.get(id));
        if let Some(rt) = recorded_tools
            && let Some((t, _)) = rt
                .iter()
                .zip(&req.tools)
                .find(|(a, b)| **a != tool_to_recorded(b))
        {
            drift.push(format!(
                "the declaration of tool `{}` differs from the recording",
                t.name
            ));
        }
        if it.request.model != req.model {
            drift.push(format!(
                "the model is `{}`, the recording's `{}`",
                req.model, it.request.model
            ));
        }
        if it.request.temperature != req.temperature || it.request.max_tokens != req.max_tokens {
            drift.push("the temperature or token cap differs from the recording".into());
        }
        Ok(Checked {
            it: it.clone(),
            at,
            drift,
            system: recorded_system.cloned(),
            tools: recorded_tools.cloned(),
        })
    }
}

/// A call that matched its recorded interaction.
struct Checked {
    it: Interaction,
    at: String,
    drift: Vec<String>,
    system: Option<String>,
    tools: Option<Vec<RecordedTool>>,
}

/// Whose previous call a call extends: the agent's previous call, whatever its run (the
/// session's transcript goes on across runs); for the judge, the previous attempt at the
/// same question.
fn last_key(queue: Queue, run: u64) -> (Queue, u64) {
    match queue {
        Queue::Agent => (Queue::Agent, 0),
        Queue::Judge => (Queue::Judge, run),
    }
}

/// `role, run, call, step, state` of an interaction, for messages.
fn describe_ctx(it: &Interaction) -> String {
    format!(
        "{}, run {}, call {}{}{}",
        role_name(it.role),
        it.run,
        it.call,
        it.step.map(|s| format!(", step {s}")).unwrap_or_default(),
        it.state
            .as_deref()
            .map(|s| format!(", state `{s}`"))
            .unwrap_or_default()
    )
}

fn describe(it: &Interaction) -> String {
    format!("interaction {} ({})", it.seq, describe_ctx(it))
}

/// The system prompt of a request (a leading `system` message) and the other messages.
fn split_system(req: &ChatRequest) -> (Option<String>, Vec<RecordedMessage>) {
    let mut rest = req.messages.as_slice();
    let mut system = None;
    if let Some((first, tail)) = rest.split_first()
        && first.role == Role::System
    {
        system = Some(first.content.clone().unwrap_or_default());
        rest = tail;
    }
    (system, rest.iter().map(message_to_recorded).collect())
}

/// Where the new messages start: after the previous call's messages and answer when the
/// request extends them, else 0.
fn new_from(prev: &[RecordedMessage], messages: &[RecordedMessage]) -> usize {
    if !prev.is_empty()
        && messages.len() >= prev.len()
        && prev.iter().zip(messages).all(|(a, b)| same_message(a, b))
    {
        prev.len()
    } else {
        0
    }
}

fn norm(c: &Option<String>) -> Option<&str> {
    c.as_deref().map(str::trim).filter(|t| !t.is_empty())
}

/// True when `actual` matches `expected`, where each redaction placeholder `<ENV:NAME>` in
/// `expected` stands for any text (a recording never holds the secret, and a replay may run
/// where it is unknown). Linear in the two lengths (glob matching with `*`).
pub fn matches_redacted(expected: &str, actual: &str) -> bool {
    if expected == actual {
        return true;
    }
    if !expected.contains("<ENV:") {
        return false;
    }
    // The literal pieces between placeholders, in order.
    let mut lits: Vec<String> = vec![String::new()];
    let mut rest = expected;
    while let Some(at) = rest.find("<ENV:") {
        let (before, from) = rest.split_at(at);
        let tail = from.get(5..).unwrap_or("");
        let name_len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let closed = tail.get(name_len..).is_some_and(|t| t.starts_with('>'));
        if let Some(last) = lits.last_mut() {
            last.push_str(before);
        }
        if name_len > 0 && closed {
            lits.push(String::new());
            rest = tail.get(name_len + 1..).unwrap_or("");
        } else {
            if let Some(last) = lits.last_mut() {
                last.push_str("<ENV:");
            }
            rest = tail;
        }
    }
    if let Some(last) = lits.last_mut() {
        last.push_str(rest);
    }
    let (Some(first), Some(last)) = (lits.first(), lits.last()) else {
        return false;
    };
    if lits.len() == 1 {
        return first == actual;
    }
    if actual.len() < first.len() + last.len()
        || !actual.starts_with(first.as_str())
        || !actual.ends_with(last.as_str())
    {
        return false;
    }
    let end = actual.len() - last.len();
    let mut pos = first.len();
    for mid in lits.iter().skip(1).take(lits.len() - 2) {
        match actual.get(pos..end).and_then(|hay| hay.find(mid.as_str())) {
            Some(i) => pos += i + mid.len(),
            None => return false,
        }
    }
    true
}

fn opt_matches(expected: Option<&str>, actual: Option<&str>) -> bool {
    match (expected, actual) {
        (Some(e), Some(a)) => matches_redacted(e, a),
        (e, a) => e == a,
    }
}

fn same_message(a: &RecordedMessage, b: &RecordedMessage) -> bool {
    message_difference(a, b).is_none()
}

fn message_difference(a: &RecordedMessage, b: &RecordedMessage) -> Option<String> {
    if a.role != b.role {
        return Some(format!(
            "role: expected {}, got {}",
            role_text(a.role),
            role_text(b.role)
        ));
    }
    if !opt_matches(norm(&a.content), norm(&b.content)) {
        return Some(format!(
            "content: expected {}, got {}",
            quoted(norm(&a.content)),
            quoted(norm(&b.content))
        ));
    }
    if a.tool_call_id != b.tool_call_id {
        return Some(format!(
            "tool result for call: expected {}, got {}",
            quoted(a.tool_call_id.as_deref()),
            quoted(b.tool_call_id.as_deref())
        ));
    }
    for (k, (x, y)) in a.tool_calls.iter().zip(&b.tool_calls).enumerate() {
        let n = k + 1;
        if x.name != y.name {
            return Some(format!(
                "tool call {n} name: expected `{}`, got `{}`",
                x.name, y.name
            ));
        }
        if x.id != y.id {
            return Some(format!(
                "tool call {n} (`{}`) id: expected `{}`, got `{}`",
                x.name, x.id, y.id
            ));
        }
        let same = (x.arguments == y.arguments && x.raw_arguments == y.raw_arguments)
            || matches_redacted(&args_text(x), &args_text(y));
        if !same {
            return Some(format!(
                "tool call {n} (`{}`) arguments: expected {}, got {}",
                x.name,
                cap(&args_text(x)),
                cap(&args_text(y))
            ));
        }
    }
    if a.tool_calls.len() != b.tool_calls.len() {
        return Some(format!(
            "tool calls: expected {}, got {}",
            a.tool_calls.len(),
            b.tool_calls.len()
        ));
    }
    None
}

/// The first difference between the expected and actual messages (after the system
/// prompt), as "message N (role): what".
fn first_difference(expected: &[RecordedMessage], actual: &[RecordedMessage]) -> Option<String> {
    for (k, (e, a)) in expected.iter().zip(actual).enumerate() {
        if let Some(d) = message_difference(e, a) {
            return Some(format!("message {} ({}): {d}", k + 1, role_text(e.role)));
        }
    }
    match expected.len().cmp(&actual.len()) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Less => actual.get(expected.len()).map(|m| {
            format!(
                "message {} ({}): not in the recording: {}",
                expected.len() + 1,
                role_text(m.role),
                cap(&message_text(m))
            )
        }),
        std::cmp::Ordering::Greater => expected.get(actual.len()).map(|m| {
            format!(
                "message {} ({}): recorded but not sent: {}",
                actual.len() + 1,
                role_text(m.role),
                cap(&message_text(m))
            )
        }),
    }
}

fn role_text(r: MessageRole) -> &'static str {
    match r {
        MessageRole::System => "system",
        MessageRole::User => "user",
        MessageRole::Assistant => "assistant",
        MessageRole::Tool => "tool",
    }
}

fn quoted(s: Option<&str>) -> String {
    match s {
        Some(t) => cap(&Value::String(t.to_owned()).to_string()),
        None => "nothing".into(),
    }
}

fn args_text(c: &RecordedToolCall) -> String {
    match &c.raw_arguments {
        Some(raw) => raw.clone(),
        None => c.arguments.to_string(),
    }
}

fn message_text(m: &RecordedMessage) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(c) = norm(&m.content) {
        parts.push(Value::String(c.to_owned()).to_string());
    }
    for c in &m.tool_calls {
        parts.push(format!("{}({})", c.name, args_text(c)));
    }
    if parts.is_empty() {
        "nothing".into()
    } else {
        parts.join(" ")
    }
}

/// "<what> differs from the recording at line N: expected …, got …".
fn text_drift(what: &str, expected: &str, actual: &str) -> String {
    let mut e = expected.lines();
    let mut a = actual.lines();
    let mut n = 0;
    loop {
        n += 1;
        match (e.next(), a.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (None, None) => {
                return format!("{what} differs from the recording (line endings)");
            }
            (x, y) => {
                return format!(
                    "{what} differs from the recording at line {n}: expected {}, got {}",
                    quoted(x),
                    quoted(y)
                );
            }
        }
    }
}

fn message_to_recorded(m: &ChatMessage) -> RecordedMessage {
    RecordedMessage {
        role: match m.role {
            Role::System => MessageRole::System,
            Role::User => MessageRole::User,
            Role::Assistant => MessageRole::Assistant,
            Role::Tool => MessageRole::Tool,
        },
        content: m.content.clone(),
        tool_calls: m.tool_calls.iter().map(call_to_recorded).collect(),
        tool_call_id: m.tool_call_id.clone(),
    }
}

fn call_to_recorded(c: &ToolCall) -> RecordedToolCall {
    let (arguments, raw_arguments) = match &c.arguments {
        ToolArgs::Json(v) => (v.clone(), None),
        ToolArgs::Invalid(raw) => (Value::Null, Some(raw.clone())),
    };
    RecordedToolCall {
        id: c.id.clone(),
        name: c.name.clone(),
        arguments,
        raw_arguments,
    }
}

fn call_from_recorded(c: &RecordedToolCall) -> ToolCall {
    ToolCall {
        id: c.id.clone(),
        name: c.name.clone(),
        arguments: match &c.raw_arguments {
            Some(raw) => ToolArgs::Invalid(raw.clone()),
            None => ToolArgs::Json(c.arguments.clone()),
        },
    }
}

fn tool_to_recorded(t: &ToolSpec) -> RecordedTool {
    RecordedTool {
        name: t.name.clone(),
        description: t.description.clone(),
        parameters: t.parameters.clone(),
    }
}

fn response_to_recorded(r: &ChatResponse) -> RecordedResponse {
    RecordedResponse {
        content: r.content.clone(),
        tool_calls: r.tool_calls.iter().map(call_to_recorded).collect(),
        finish_reason: r.finish_reason.clone(),
        model: r.model.clone(),
        usage: r.usage.map(|u| RecordedUsage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            cached_tokens: u.cached_tokens,
        }),
    }
}

fn response_from_recorded(r: &RecordedResponse) -> ChatResponse {
    ChatResponse {
        content: r.content.clone(),
        tool_calls: r.tool_calls.iter().map(call_from_recorded).collect(),
        finish_reason: r.finish_reason.clone(),
        usage: r.usage.map(|u| Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            cached_tokens: u.cached_tokens,
        }),
        model: r.model.clone(),
    }
}

/// `ARCHMAX_API_BASE_URL` reduced to its host and port: no scheme, credentials, path or
/// query (`https://user:pw@api.example.com:8443/v1?x=1` → `api.example.com:8443`).
pub fn endpoint_host(base_url: &str) -> String {
    let rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, h)| h)
        .to_owned()
}

/// Epoch milliseconds as RFC 3339 in UTC, to the second (`2026-12-03T08:52:53Z`).
pub fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let days = secs / 86_400;
    let (y, m, d) = crate::model::prompt::civil_from_days(i64::try_from(days).unwrap_or(0));
    let t = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        t / 3600,
        (t % 3600) / 60,
        t % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_dates() {
        assert_eq!(
            endpoint_host("https://user:pw@api.example.com:8443/v1?x=1"),
            "api.example.com:8443"
        );
        assert_eq!(endpoint_host("http://127.0.0.1:9/v1"), "127.0.0.1:9");
        assert_eq!(endpoint_host("openrouter.ai"), "openrouter.ai");
        assert_eq!(rfc3339(crate::clock::TEST_EPOCH_MS), "2026-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_796_287_973_999), "2026-12-03T08:52:53Z");
    }

    #[test]
    fn placeholders_match_any_text() {
        assert!(matches_redacted("key <ENV:K> ok", "key sk-123 ok"));
        assert!(matches_redacted("<ENV:K>", "anything"));
        assert!(matches_redacted("a <ENV:K> b <ENV:T> c", "a 1 b 2 c"));
        assert!(!matches_redacted("a <ENV:K> b <ENV:T> c", "a 1 c 2 b"));
        assert!(!matches_redacted("key <ENV:K> ok", "key sk-123 ko"));
        assert!(!matches_redacted("key <ENV:K> ok", "ok"));
        assert!(matches_redacted("<ENV:not closed", "<ENV:not closed"));
        assert!(!matches_redacted("<ENV:not closed", "x"));
        assert!(!matches_redacted("plain", "other"));
    }

    #[test]
    fn drift_names_the_first_differing_line() {
        assert_eq!(
            text_drift("the system prompt", "a\nb\nc", "a\nB\nc"),
            "the system prompt differs from the recording at line 2: expected \"b\", got \"B\""
        );
        assert_eq!(
            text_drift("x", "a", "a\nmore"),
            "x differs from the recording at line 2: expected nothing, got \"more\""
        );
    }
}
