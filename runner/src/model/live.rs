//! [`LiveAgent`]: the [`Agent`] that asks a chat model (issue 14; design doc §1.5, §5.1).
//!
//! One [`Agent::respond`] is one model call: the request is the system prompt (the static
//! half of [`super::prompt`] plus this call's volatile block), the session transcript
//! rebuilt exactly, and the current state's tools (none on a reply-only call). The answer
//! becomes actions: its text as one `say` (first, as the message carries it), then its
//! tool calls in order. After an answer without tool calls the run is over: the next
//! `respond` of that run returns no actions without calling the model ("text alone ends
//! the turn").
//!
//! Transcript rebuilding (from [`AgentMessage`]s): user messages as `user`; the assistant
//! messages of one model call (same `group`) merged into one assistant message whose
//! `tool_calls` carry the provider's ids (the simulator's `call_<n>` for calls no
//! provider made); tool results as `tool` messages answering their call's id; runtime
//! notes as an assistant `archmax_note` call `note_<k>` (k counting notes from 1) plus its
//! result, placed after the tool results of the model call they interrupted, so every
//! call is answered before the next message. Arguments that were not JSON are echoed
//! verbatim.
//!
//! Bounds: the simulator's per-run cap and `budget.maxTurns`; here, `tests.caseTimeoutMs`
//! on the given clock (the CLI's is the wall clock), checked before every call and given
//! to the transport as the call's timeout.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wfx_schemas::files::FileAccess;
use wfx_schemas::model::workflow::Workflow;

use super::prompt::{state_section, static_prompt, tool_specs, volatile_block};
use super::wire::{
    CallMeta, CallRole, ChatMessage, ChatRequest, ChatTransport, ModelError, Role, ToolArgs,
    ToolCall,
};
use super::{UsageLog, config, record_usage};
use crate::agent::{Agent, AgentAction, AgentError, AgentMessage, TurnContext};

/// Epoch milliseconds (the CLI passes the system clock; tests a fixed one).
pub type NowFn = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Sampling settings and bounds of a live agent.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveSettings {
    /// `ARCHMAX_MODEL`: the model when neither the state nor `settings` names one.
    pub default_model: String,
    /// `ARCHMAX_TEMPERATURE`.
    pub temperature: Option<f64>,
    /// `ARCHMAX_MAX_TOKENS`.
    pub max_tokens: Option<u64>,
    /// `tests.caseTimeoutMs` (default 120,000 ms).
    pub case_timeout_ms: u64,
}

/// The per-case, per-state parts of the prompt, built once.
#[derive(Clone, Debug)]
struct StateBrief {
    section: String,
    model: String,
}

/// The live agent of one case.
pub struct LiveAgent {
    transport: Box<dyn ChatTransport>,
    static_prompt: String,
    states: BTreeMap<String, StateBrief>,
    settings: LiveSettings,
    now: NowFn,
    /// The clock of the prompt's clock line (default: `now`); a recorded or replayed case
    /// passes its deterministic clock here (docs/cassettes.md).
    prompt_now: Option<NowFn>,
    started_ms: u64,
    usage: Arc<Mutex<UsageLog>>,
    /// The last answer of the current run had no tool calls.
    ended: bool,
    /// Provider ids of the calls of the last answer, in order, not yet matched to the
    /// simulator's call ids.
    pending_ids: Vec<String>,
    /// Simulator call id → provider call id.
    provider_ids: BTreeMap<u64, String>,
    /// The newest `group` already matched.
    matched_group: Option<u64>,
}

impl LiveAgent {
    /// The agent of a case of the workflow `wf` in `workflow_dir` (workspace-relative),
    /// reading `AGENTS.md`, `WORKFLOW.md` and skill descriptions through `fs` once.
    pub fn new(
        fs: &dyn FileAccess,
        workflow_dir: &str,
        wf: &Workflow,
        transport: Box<dyn ChatTransport>,
        settings: LiveSettings,
        now: NowFn,
        usage: Arc<Mutex<UsageLog>>,
    ) -> Self {
        let states = wf
            .states
            .iter()
            .map(|s| {
                (
                    s.slug.value.clone(),
                    StateBrief {
                        section: state_section(fs, wf, s),
                        model: config::state_model(wf, &s.slug.value, &settings.default_model),
                    },
                )
            })
            .collect();
        let started_ms = now();
        Self {
            transport,
            static_prompt: static_prompt(fs, wf, workflow_dir),
            states,
            settings,
            now,
            prompt_now: None,
            started_ms,
            usage,
            ended: false,
            pending_ids: Vec::new(),
            provider_ids: BTreeMap::new(),
            matched_group: None,
        }
    }

    /// The same agent with the prompt's clock line read from `now` instead of the clock
    /// that bounds the case's time (a cassette's deterministic clock, so a replayed prompt
    /// is byte-identical to the recorded one).
    pub fn with_prompt_clock(mut self, now: NowFn) -> Self {
        self.prompt_now = Some(now);
        self
    }

    /// Matches the provider ids of the last answer to the simulator's ids of the newest
    /// model call's calls, in order.
    fn match_ids(&mut self, messages: &[AgentMessage]) {
        if self.pending_ids.is_empty() {
            return;
        }
        let Some(newest) = messages.iter().filter_map(|m| m.group).max() else {
            return;
        };
        if self.matched_group.is_some_and(|g| g >= newest) {
            return;
        }
        let ids: Vec<u64> = messages
            .iter()
            .filter(|m| m.group == Some(newest))
            .filter_map(|m| m.call_id)
            .collect();
        for (sim, provider) in ids.into_iter().zip(self.pending_ids.drain(..)) {
            self.provider_ids.insert(sim, provider);
        }
        self.pending_ids.clear();
        self.matched_group = Some(newest);
    }

    /// The request of one call (pure given the context; exposed for tests).
    pub fn request(&self, ctx: &TurnContext<'_>) -> ChatRequest {
        let brief = self.states.get(ctx.state);
        let mut names: Vec<String> = match ctx.variables {
            Value::Object(m) => m.keys().cloned().collect(),
            _ => Vec::new(),
        };
        names.sort();
        let volatile = volatile_block(
            self.prompt_now.as_ref().unwrap_or(&self.now)(),
            brief.map_or("", |b| b.section.as_str()),
            ctx.reply_only,
            ctx.cause,
            &names,
        );
        let mut messages = vec![ChatMessage::text(
            Role::System,
            format!("{}\n\n{volatile}", self.static_prompt),
        )];
        messages.extend(rebuild_transcript(ctx.messages, &self.provider_ids));
        ChatRequest {
            model: brief.map_or_else(|| self.settings.default_model.clone(), |b| b.model.clone()),
            messages,
            tools: if ctx.reply_only {
                Vec::new()
            } else {
                tool_specs(ctx.tools)
            },
            temperature: self.settings.temperature,
            max_tokens: self.settings.max_tokens,
        }
    }
}

/// The chat transcript of a session (see the module docs for the rules).
pub fn rebuild_transcript(
    messages: &[AgentMessage],
    provider_ids: &BTreeMap<u64, String>,
) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::new();
    // (group, index in `out`) of the assistant message being filled.
    let mut open: Option<(Option<u64>, usize)> = None;
    let mut unanswered = 0usize;
    let mut held_notes: Vec<&AgentMessage> = Vec::new();
    let mut notes = 0u64;
    let id_of = |m: &AgentMessage| -> String {
        let n = m.call_id.unwrap_or(0);
        provider_ids
            .get(&n)
            .cloned()
            .unwrap_or_else(|| format!("call_{n}"))
    };
    let flush = |out: &mut Vec<ChatMessage>, held: &mut Vec<&AgentMessage>, notes: &mut u64| {
        for n in held.drain(..) {
            *notes += 1;
            let id = format!("note_{notes}");
            out.push(ChatMessage {
                role: Role::Assistant,
                content: None,
                tool_calls: vec![ToolCall {
                    id: id.clone(),
                    name: "archmax_note".into(),
                    arguments: ToolArgs::Json(json!({"kind": n.note_kind.unwrap_or("note")})),
                }],
                tool_call_id: None,
            });
            out.push(ChatMessage::tool_result(id, n.text.clone()));
        }
    };
    for m in messages {
        match m.role {
            "assistant" => {
                let same = matches!(open, Some((g, _)) if g.is_some() && g == m.group);
                if !same {
                    flush(&mut out, &mut held_notes, &mut notes);
                    out.push(ChatMessage {
                        role: Role::Assistant,
                        content: None,
                        tool_calls: Vec::new(),
                        tool_call_id: None,
                    });
                    open = Some((m.group, out.len() - 1));
                    unanswered = 0;
                }
                let Some((_, idx)) = open else { continue };
                let target = &mut out[idx];
                match &m.tool {
                    Some(name) => {
                        let arguments = match &m.input {
                            Some(Value::String(raw)) => ToolArgs::Invalid(raw.clone()),
                            Some(v) => ToolArgs::Json(v.clone()),
                            None => ToolArgs::Json(json!({})),
                        };
                        target.tool_calls.push(ToolCall {
                            id: id_of(m),
                            name: name.clone(),
                            arguments,
                        });
                        unanswered += 1;
                    }
                    None => {
                        let c = target.content.get_or_insert_with(String::new);
                        if !c.is_empty() && !m.text.is_empty() {
                            c.push_str("\n\n");
                        }
                        c.push_str(&m.text);
                    }
                }
            }
            "tool" => {
                out.push(ChatMessage::tool_result(id_of(m), m.text.clone()));
                unanswered = unanswered.saturating_sub(1);
            }
            "runtime" => {
                if open.is_some() && unanswered > 0 {
                    held_notes.push(m);
                } else {
                    held_notes.push(m);
                    flush(&mut out, &mut held_notes, &mut notes);
                    open = None;
                }
            }
            _ => {
                flush(&mut out, &mut held_notes, &mut notes);
                open = None;
                out.push(ChatMessage::text(Role::User, m.text.clone()));
            }
        }
    }
    flush(&mut out, &mut held_notes, &mut notes);
    out
}

impl Agent for LiveAgent {
    fn respond(&mut self, ctx: &TurnContext<'_>) -> Result<Vec<AgentAction>, AgentError> {
        if ctx.call == 0 {
            self.ended = false;
        }
        self.match_ids(ctx.messages);
        if self.ended {
            return Ok(Vec::new());
        }
        let elapsed = (self.now)().saturating_sub(self.started_ms);
        if elapsed >= self.settings.case_timeout_ms {
            return Err(AgentError(format!(
                "the case ran out of time before a model call: {elapsed} ms of tests.caseTimeoutMs {} ms (wall clock)",
                self.settings.case_timeout_ms
            )));
        }
        let req = self.request(ctx);
        let meta = CallMeta {
            role: CallRole::Agent,
            timeout_ms: Some(self.settings.case_timeout_ms - elapsed),
            run: ctx.run as u64,
            call: ctx.call as u64,
            step: Some(ctx.case_step as u64 + 1),
            state: Some(ctx.state.to_owned()),
        };
        let resp = self.transport.complete(&req, &meta).map_err(|e| match e {
            // A cassette's line is complete as it is (docs/cassettes.md).
            ModelError::Replay(line) => AgentError(line),
            e => AgentError(format!("model call failed in state `{}`: {e}", ctx.state)),
        })?;
        record_usage(&self.usage, CallRole::Agent, &req.model, resp.usage);
        let mut actions = Vec::new();
        if let Some(text) = resp.content.filter(|t| !t.trim().is_empty()) {
            actions.push(AgentAction::Say(text));
        }
        self.ended = resp.tool_calls.is_empty();
        for c in resp.tool_calls {
            self.pending_ids.push(c.id);
            actions.push(AgentAction::Call {
                tool: c.name,
                input: match c.arguments {
                    ToolArgs::Json(v) => v,
                    ToolArgs::Invalid(raw) => Value::String(raw),
                },
            });
        }
        Ok(actions)
    }
}
