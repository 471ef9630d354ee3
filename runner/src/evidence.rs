//! The evidence of a run (issue 16): per case, the ordered record of what happened — user
//! and assistant messages, tool calls with their input, output and status, hook runs with
//! their verdicts, trail steps, parks and resumptions, runtime notes — each tied to the case
//! step that drove it and the state it happened in.
//!
//! The simulator ([`crate::sim`]) fills it as the session runs; the reporters (narration,
//! `--json`, HTML) and the editor read it. It is our own addition, not part of the
//! reference's `RunTestsResult` shape (FORMAT §C.3), so its step numbering is the people's:
//! [`Entry::step_number`] is **1-based** (`steps[step_number - 1]`). Only the reference's
//! `records[].step` keeps the 0-based index.
//!
//! Bounded work: at most [`MAX_ENTRIES`] entries per case (then one `note` entry of kind
//! `cut` says so), and each text or output kept here is at most [`MAX_TEXT_BYTES`] bytes,
//! cut at a character boundary with [`TEXT_CUT_MARKER`] and the count of bytes left out.
//! The text is kept raw: every view escapes it for its own syntax (`inert` for terminals,
//! the HTML report's escaping, LSP Markdown escaping).

use serde::Serialize;
use serde_json::Value;

/// Most entries one case keeps: 10,000. Bounded work; the entry after the last kept one is
/// a `note` of kind `cut`.
pub const MAX_ENTRIES: usize = 10_000;
/// Most bytes of one message, tool input rendering or tool output kept in an entry: 16 KiB.
pub const MAX_TEXT_BYTES: usize = 16 * 1024;
/// What starts the tail of a text cut by [`MAX_TEXT_BYTES`]; the count of bytes left out
/// follows, e.g. `[evidence cut: 1200 more bytes]`.
pub const TEXT_CUT_MARKER: &str = "[evidence cut:";

/// How a tool call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CallStatus {
    /// No result yet (the run died or stopped before it answered).
    Pending,
    /// Ran and succeeded.
    Completed,
    /// Ran (or was tried) and returned an error; `output` says why.
    Failed,
    /// Refused before it ran: governance, or the reply-only rule; `reason` says why.
    Rejected,
    /// Answered by one of the case's `mocks:` (FORMAT §B.6).
    Mocked,
}

impl CallStatus {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Pending => "pending",
            CallStatus::Completed => "completed",
            CallStatus::Failed => "failed",
            CallStatus::Rejected => "rejected",
            CallStatus::Mocked => "mocked",
        }
    }
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Event {
    /// A user message (`send`).
    User {
        /// The text.
        text: String,
    },
    /// A non-empty assistant reply.
    Assistant {
        /// The text.
        text: String,
    },
    /// One agent tool call and its result.
    #[serde(rename_all = "camelCase")]
    ToolCall {
        /// The call's id in the session (1-based, in call order).
        call_id: u64,
        /// The tool.
        tool: String,
        /// Its arguments, as the agent gave them.
        input: Value,
        /// How it ended.
        status: CallStatus,
        /// The result text (cut, see [`MAX_TEXT_BYTES`]); absent while pending.
        #[serde(skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// Why it was refused or failed, in one line (the first line of the output).
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// One lifecycle hook run (FORMAT §E.6).
    Hook {
        /// `before` or `after`.
        phase: &'static str,
        /// The state whose hook ran.
        of: String,
        /// The hook: the script path, or `rubric#<i>`.
        hook: String,
        /// `ok`, `veto`, `correct`, `threw`, `failed` or `skipped`.
        verdict: &'static str,
        /// The veto or correction reason, or the failure.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// One audit-trail step (FORMAT §E.2).
    #[serde(rename_all = "camelCase")]
    Trail {
        /// The target state.
        to: String,
        /// `trigger`, `agent`, `human`, `sub-workflow`, `reset` or `on_error`.
        trail_kind: &'static str,
        /// Trigger id, advance reason, comment, failure reason.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The session parked (FORMAT §E.3).
    Park {
        /// `decision` or `input`.
        channel: &'static str,
        /// The wait reason (`input`).
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A parked session resumed (`decide`, `deliver`).
    Resume {
        /// `decision` or `input`.
        channel: &'static str,
        /// The chosen transition target, or the delivered trigger.
        by: String,
    },
    /// A runtime note (`veto`, `error`, `rejected`, `decision`, `event`, `hook`, `cut`, …).
    #[serde(rename_all = "camelCase")]
    Note {
        /// The note's kind.
        note_kind: &'static str,
        /// The text.
        text: String,
    },
}

/// One entry of the evidence.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The case step that drove it, **1-based** (people's numbering: "step 3").
    pub step_number: usize,
    /// The state the session was in when it happened (never empty: the trigger's start
    /// state before the first entry).
    pub state: String,
    /// What happened.
    #[serde(flatten)]
    pub event: Event,
}

impl Entry {
    /// True when this entry explains a failure: a refused, failed or (unmocked) failing
    /// tool call, a hook that did not answer `ok`, or a `veto`/`error`/`rejected` note.
    pub fn is_refusal(&self) -> bool {
        match &self.event {
            Event::ToolCall { status, .. } => {
                matches!(status, CallStatus::Failed | CallStatus::Rejected)
            }
            Event::Hook { verdict, .. } => !matches!(*verdict, "ok" | "skipped"),
            Event::Note { note_kind, .. } => matches!(*note_kind, "veto" | "error" | "rejected"),
            _ => false,
        }
    }

    /// One line for people: `step 3 · in pay · tool erp_post_payment failed: <reason>`.
    /// Raw text: callers escape it for their output.
    pub fn line(&self) -> String {
        format!(
            "step {} · in {} · {}",
            self.step_number,
            self.state,
            self.event.summary()
        )
    }
}

impl Event {
    /// What happened, in one line (raw text; newlines kept only in long outputs of
    /// [`Event::detail`]).
    pub fn summary(&self) -> String {
        match self {
            Event::User { text } => format!("user: {}", first_line(text)),
            Event::Assistant { text } => format!("assistant: {}", first_line(text)),
            Event::ToolCall {
                tool,
                input,
                status,
                reason,
                ..
            } => {
                let args = first_line(&input.to_string());
                match (status, reason) {
                    (CallStatus::Rejected, Some(r)) => {
                        format!("tool {tool} {args} rejected: {r}")
                    }
                    (CallStatus::Failed, Some(r)) => format!("tool {tool} {args} failed: {r}"),
                    (s, _) => format!("tool {tool} {args} {}", s.as_str()),
                }
            }
            Event::Hook {
                phase,
                of,
                hook,
                verdict,
                reason,
            } => match reason {
                Some(r) => format!("{phase} hook {hook} of {of}: {verdict}: {r}"),
                None => format!("{phase} hook {hook} of {of}: {verdict}"),
            },
            Event::Trail {
                to,
                trail_kind,
                reason,
            } => match reason {
                Some(r) => format!("trail {trail_kind} → {to} ({})", first_line(r)),
                None => format!("trail {trail_kind} → {to}"),
            },
            Event::Park { channel, reason } => match reason {
                Some(r) => format!("parked for {channel}: {}", first_line(r)),
                None => format!("parked for {channel}"),
            },
            Event::Resume { channel, by } => format!("resumed ({channel}) by {by}"),
            Event::Note { note_kind, text } => format!("note {note_kind}: {}", first_line(text)),
        }
    }

    /// The long text of the entry beyond its summary, when there is more: a tool call's
    /// full output, a multi-line message.
    pub fn detail(&self) -> Option<&str> {
        match self {
            Event::ToolCall {
                output: Some(o), ..
            } => Some(o.as_str()),
            Event::User { text } | Event::Assistant { text } | Event::Note { text, .. }
                if text.contains('\n') =>
            {
                Some(text.as_str())
            }
            _ => None,
        }
    }
}

/// The first line of `s`, with a `…` when more follows; at most 300 characters.
pub fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(300).collect();
    if out.len() < s.trim_end().len() {
        out.push('…');
    }
    out
}

/// `text` cut to [`MAX_TEXT_BYTES`] at a character boundary, with the marker and the count
/// of bytes left out; as is when it fits.
pub fn cut(text: &str) -> String {
    if text.len() <= MAX_TEXT_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_TEXT_BYTES;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = text.get(..end).unwrap_or_default();
    format!("{head}\n{TEXT_CUT_MARKER} {} more bytes]", text.len() - end)
}

/// `input` as kept in a `tool-call` entry: as is when its JSON text fits in
/// [`MAX_TEXT_BYTES`], else that text cut by [`cut`] (a string).
pub fn cut_value(input: &Value) -> Value {
    let text = input.to_string();
    if text.len() <= MAX_TEXT_BYTES {
        input.clone()
    } else {
        Value::String(cut(&text))
    }
}

/// The evidence of one case, in the order things happened.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Evidence {
    /// The entries.
    pub entries: Vec<Entry>,
}

impl Evidence {
    /// Appends `event` at `step` (0-based index, stored 1-based) in `state`; past
    /// [`MAX_ENTRIES`] one `cut` note is kept and the rest dropped.
    pub fn push(&mut self, step: usize, state: &str, event: Event) {
        let n = self.entries.len();
        if n > MAX_ENTRIES {
            return;
        }
        let event = if n == MAX_ENTRIES {
            Event::Note {
                note_kind: "cut",
                text: format!(
                    "the evidence of this case passed {MAX_ENTRIES} entries; later ones were not kept"
                ),
            }
        } else {
            event
        };
        self.entries.push(Entry {
            step_number: step + 1,
            state: state.to_owned(),
            event,
        });
    }

    /// Sets the result of the pending call `call_id` (the latest entry with that id).
    pub fn answer(&mut self, call_id: u64, new_status: CallStatus, content: &str) {
        let found = self
            .entries
            .iter_mut()
            .rev()
            .find_map(|e| match &mut e.event {
                Event::ToolCall {
                    call_id: id,
                    status,
                    output,
                    reason,
                    ..
                } if *id == call_id => Some((status, output, reason)),
                _ => None,
            });
        if let Some((status, output, reason)) = found {
            *status = new_status;
            *output = Some(cut(content));
            if matches!(new_status, CallStatus::Failed | CallStatus::Rejected) {
                *reason = Some(first_line(content));
            }
        }
    }

    /// Marks the completed call `call_id` as answered by a mock.
    pub fn mark_mocked(&mut self, call_id: u64) {
        for e in self.entries.iter_mut().rev() {
            if let Event::ToolCall {
                call_id: id,
                status,
                ..
            } = &mut e.event
                && *id == call_id
            {
                if *status == CallStatus::Completed {
                    *status = CallStatus::Mocked;
                }
                return;
            }
        }
    }

    /// The entries of the case step with 0-based `index`.
    pub fn at_step(&self, index: usize) -> impl Iterator<Item = &Entry> {
        self.entries
            .iter()
            .filter(move |e| e.step_number == index + 1)
    }

    /// The entries that explain a failure ([`Entry::is_refusal`]) up to and including the
    /// step with 0-based `index` (all of them when `None`).
    pub fn refusals(&self, up_to: Option<usize>) -> impl Iterator<Item = &Entry> {
        self.entries
            .iter()
            .filter(move |e| up_to.is_none_or(|i| e.step_number <= i + 1) && e.is_refusal())
    }

    /// The JSON of `--json` (`results[].evidence`, docs/cli.md): each [`Entry`] as
    /// serialized, plus `summary` ([`Event::summary`], raw text) and `refusal`
    /// ([`Entry::is_refusal`]), so a client can show an entry without knowing every kind.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.entries
                .iter()
                .map(|e| {
                    let mut v = serde_json::to_value(e).unwrap_or(Value::Null);
                    if let Some(o) = v.as_object_mut() {
                        o.insert("summary".into(), Value::String(e.event.summary()));
                        o.insert("refusal".into(), Value::Bool(e.is_refusal()));
                    }
                    v
                })
                .collect(),
        )
    }

    /// The states in the order they first appear, for a per-state view.
    pub fn states(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for e in &self.entries {
            if !out.contains(&e.state.as_str()) {
                out.push(&e.state);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_stored_one_based_and_calls_are_answered() {
        let mut ev = Evidence::default();
        ev.push(
            2,
            "pay",
            Event::ToolCall {
                call_id: 7,
                tool: "erp".into(),
                input: serde_json::json!({"a": 1}),
                status: CallStatus::Pending,
                output: None,
                reason: None,
            },
        );
        ev.answer(7, CallStatus::Failed, "boom: no funds\nmore");
        let e = &ev.entries[0];
        assert_eq!(e.step_number, 3);
        assert!(e.is_refusal());
        assert_eq!(
            e.line(),
            r#"step 3 · in pay · tool erp {"a":1} failed: boom: no funds…"#
        );
        assert_eq!(ev.at_step(2).count(), 1);
        assert_eq!(ev.refusals(Some(1)).count(), 0);
        assert_eq!(ev.refusals(Some(2)).count(), 1);
        let json = serde_json::to_value(&ev).unwrap();
        assert_eq!(json[0]["kind"], "tool-call");
        assert_eq!(json[0]["stepNumber"], 3);
        assert_eq!(json[0]["status"], "failed");
        assert_eq!(json[0]["output"], "boom: no funds\nmore");
    }

    #[test]
    fn texts_and_entries_are_bounded() {
        let long = "é".repeat(MAX_TEXT_BYTES);
        let c = cut(&long);
        assert!(c.len() < MAX_TEXT_BYTES + 64);
        assert!(c.ends_with(&format!("{} more bytes]", MAX_TEXT_BYTES)));
        let big = serde_json::json!({ "a": "x".repeat(MAX_TEXT_BYTES) });
        assert!(cut_value(&big).as_str().unwrap().contains(TEXT_CUT_MARKER));
        let small = serde_json::json!({ "a": 1 });
        assert_eq!(cut_value(&small), small);
        let mut ev = Evidence::default();
        for i in 0..MAX_ENTRIES + 5 {
            ev.push(
                0,
                "s",
                Event::User {
                    text: i.to_string(),
                },
            );
        }
        assert_eq!(ev.entries.len(), MAX_ENTRIES + 1);
        assert!(matches!(
            ev.entries[MAX_ENTRIES].event,
            Event::Note {
                note_kind: "cut",
                ..
            }
        ));
    }
}
