//! The model judge behind `grade` and rubric hooks (FORMAT §B.6, §E.6; design doc §1.6):
//! [`render_evidence`] builds the two labelled evidence sections from the transcript, and
//! [`ModelJudge`] asks the configured model through a [`ChatTransport`].
//!
//! Evidence (FORMAT §B.6): a numbered record of `[message]`, `[runtime:<kind>]` and
//! `[tool] <name> input=… → <status> output=…` entries, each value cut at
//! [`MAX_VALUE_CHARS`] characters with ` …(+N chars)`; the record kept under
//! [`MAX_RECORD_CHARS`] by dropping the oldest entries behind `… N earlier entr(y|ies)
//! omitted (evidence budget)`; then the final reply, whole. The reply is dropped from the
//! record when it is the record's last entry (it closed the turn).
//!
//! Verdicts: the first balanced `{…}` block of the answer that parses as an object gives
//! `score` (clamped to [0, 1]) and `reason`; with none, the model is asked once more for
//! JSON only, then the score is 0 with the reason `grader returned no readable JSON
//! verdict`. A rubric answers `{verdict: ok|correct|veto, reason}`; anything unreadable is
//! a veto (fail closed).
//!
//! The answer's text reaches the judge redacted (the transport's work), but the verdict is
//! JSON inside that text: its parser decodes `\u` escapes, so a key spelled with them is
//! whole only in the `reason` it builds. [`ModelJudge::redacting`] gives the judge the
//! values to replace there, after parsing (issue 24; "no secrets in output",
//! docs/security.md).

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wfx_schemas::cassette::Secrets;

use super::wire::{CallMeta, CallRole, ChatMessage, ChatRequest, ChatTransport, Role};
use super::{UsageLog, record_usage};
use crate::grade::Judge;
use crate::script_host::HookVerdict;
use crate::sim::Msg;

/// Each record value is cut at this many characters (FORMAT §B.6).
pub const MAX_VALUE_CHARS: usize = 800;
/// The record keeps its newest entries within this many characters (FORMAT §B.6).
pub const MAX_RECORD_CHARS: usize = 12_000;
/// The reason when no verdict could be read (FORMAT §B.6).
pub const NO_VERDICT: &str = "grader returned no readable JSON verdict";

/// `text` cut at [`MAX_VALUE_CHARS`] characters plus ` …(+N chars)`.
pub fn cap(text: &str) -> String {
    let n = text.chars().count();
    if n <= MAX_VALUE_CHARS {
        return text.to_owned();
    }
    let head: String = text.chars().take(MAX_VALUE_CHARS).collect();
    format!("{head} …(+{} chars)", n - MAX_VALUE_CHARS)
}

/// The judge's evidence for a transcript whose final reply is `reply` (FORMAT §B.6).
pub fn render_evidence(messages: &[Msg], reply: Option<&str>) -> String {
    let mut entries: Vec<String> = Vec::new();
    let mut last_is_reply_msg = false;
    for (i, m) in messages.iter().enumerate() {
        match m {
            Msg::User(_) => {}
            Msg::Assistant { text, call: None } => {
                if !text.is_empty() {
                    entries.push(format!("[message] {}", cap(text)));
                    last_is_reply_msg = reply == Some(text.as_str());
                    continue;
                }
            }
            Msg::Assistant {
                call: Some((id, name, input)),
                ..
            } => {
                let result = messages[i + 1..].iter().find_map(|r| match r {
                    Msg::Tool {
                        call_id,
                        content,
                        error,
                        blocked,
                        ..
                    } if call_id == id => Some((content, *error, *blocked)),
                    _ => None,
                });
                let input = cap(&input.to_string());
                entries.push(match result {
                    Some((content, error, blocked)) => {
                        let status = if blocked {
                            "rejected"
                        } else if error {
                            "failed"
                        } else {
                            "completed"
                        };
                        if content.is_empty() {
                            format!("[tool] {name} input={input} → {status} (no output recorded)")
                        } else {
                            format!(
                                "[tool] {name} input={input} → {status} output={}",
                                cap(content)
                            )
                        }
                    }
                    None => format!("[tool] {name} input={input} → pending (no output recorded)"),
                });
            }
            Msg::Tool { .. } => {}
            Msg::Note { kind, text } => entries.push(format!("[runtime:{kind}] {}", cap(text))),
        }
        last_is_reply_msg = false;
    }
    if last_is_reply_msg {
        entries.pop();
    }
    let numbered: Vec<String> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{}. {e}", i + 1))
        .collect();
    let mut kept = 0usize;
    let mut size = 0usize;
    for e in numbered.iter().rev() {
        let add = e.chars().count() + 1;
        if size + add > MAX_RECORD_CHARS {
            break;
        }
        size += add;
        kept += 1;
    }
    let dropped = numbered.len() - kept;
    let mut record: Vec<String> = Vec::new();
    if dropped > 0 {
        record.push(format!(
            "… {dropped} earlier {} omitted (evidence budget)",
            if dropped == 1 { "entry" } else { "entries" }
        ));
    }
    record.extend(numbered.into_iter().skip(dropped));
    let record = if record.is_empty() {
        "(no tool calls or intermediate messages recorded)".to_owned()
    } else {
        record.join("\n")
    };
    let reply = match reply {
        Some(r) if !r.is_empty() => r,
        _ => "(empty)",
    };
    format!("What the assistant did, in order:\n{record}\n\nFinal reply to the user:\n{reply}")
}

/// The judge's system message (our wording of the reference's closed-QA grader).
pub const JUDGE_SYSTEM: &str = "You grade whether an AI assistant met one yes/no criterion in a conversation.
You are given the criterion, a numbered record of what the assistant did (messages, runtime notes, tool calls with their inputs and outputs), and the final reply the user received.
Weigh them differently: a criterion about what the user was told is met only by the final reply; a criterion about what the assistant did may be met by the record.
Answer with JSON only: {\"score\": <number from 0 to 1>, \"pass\": <true|false>, \"reason\": \"<1-3 sentences>\"}.";

/// The follow-up when the first answer had no readable JSON.
pub const JSON_ONLY: &str = "Your answer had no readable JSON object. Reply with the JSON object only: {\"score\": <number from 0 to 1>, \"pass\": <true|false>, \"reason\": \"<1-3 sentences>\"}.";

/// The balanced `{…}` blocks of `text` (strings and escapes respected), in order of their
/// opening brace; at most 64 are tried (bounded work).
fn objects(text: &str) -> Vec<Value> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (start, _) in text.match_indices('{').take(64) {
        let (mut depth, mut in_str, mut esc) = (0usize, false, false);
        for (off, &b) in bytes[start..].iter().enumerate() {
            if in_str {
                match (esc, b) {
                    (true, _) => esc = false,
                    (false, b'\\') => esc = true,
                    (false, b'"') => in_str = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_str = true,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if let Ok(v @ Value::Object(_)) =
                            serde_json::from_str::<Value>(&text[start..=start + off])
                        {
                            out.push(v);
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
        if !out.is_empty() {
            break;
        }
    }
    out
}

/// The verdict of a grader answer: `(score clamped to [0, 1], reason)`, or `None` when no
/// balanced block parses as an object. A missing or non-numeric `score` reads as 0.
pub fn parse_verdict(text: &str) -> Option<(f64, Option<String>)> {
    let v = objects(text).into_iter().next()?;
    let score = match v.get("score") {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(Value::String(s)) => s.trim().parse::<f64>().unwrap_or(0.0),
        _ => 0.0,
    };
    let score = if score.is_nan() {
        0.0
    } else {
        score.clamp(0.0, 1.0)
    };
    let reason = v.get("reason").and_then(Value::as_str).map(str::to_owned);
    Some((score, reason))
}

/// The rubric verdict of an answer; unreadable is a veto (fail closed).
pub fn parse_rubric(text: &str) -> HookVerdict {
    let Some(v) = objects(text).into_iter().next() else {
        return HookVerdict::Veto("the rubric returned no readable verdict".into());
    };
    let reason = v
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    match v.get("verdict").and_then(Value::as_str) {
        Some("ok") => HookVerdict::Ok,
        Some("correct") => HookVerdict::Correct(reason),
        Some("veto") => HookVerdict::Veto(reason),
        _ => HookVerdict::Veto(format!(
            "the rubric returned no readable verdict ({})",
            super::wire::snippet(text)
        )),
    }
}

/// Model settings of the judge: `tests.judge.model` / `modelOptions` over the
/// environment's.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeSettings {
    /// Model id.
    pub model: String,
    /// Temperature.
    pub temperature: Option<f64>,
    /// Max tokens.
    pub max_tokens: Option<u64>,
    /// Per-call timeout in ms.
    pub timeout_ms: Option<u64>,
}

/// [`Judge`] over a chat endpoint.
pub struct ModelJudge {
    transport: Box<dyn ChatTransport>,
    settings: JudgeSettings,
    usage: Arc<Mutex<UsageLog>>,
    /// Questions asked so far (a `grade` or a rubric hook each): [`CallMeta::run`].
    questions: u64,
    /// Values replaced in every reason the verdict parser builds (see the module docs).
    secrets: Secrets,
}

impl ModelJudge {
    /// A judge asking `transport` with `settings`, recording token use into `usage`.
    pub fn new(
        transport: Box<dyn ChatTransport>,
        settings: JudgeSettings,
        usage: Arc<Mutex<UsageLog>>,
    ) -> Self {
        Self {
            transport,
            settings,
            usage,
            questions: 0,
            secrets: Secrets::default(),
        }
    }

    /// The same judge replacing every value of `secrets` in the reasons it parses out of
    /// an answer (normally [`super::config::ModelEnv::key_secrets`], what the endpoint
    /// knows).
    pub fn redacting(mut self, secrets: Secrets) -> Self {
        self.secrets = secrets;
        self
    }

    /// `reason` with the judge's secrets replaced.
    fn unechoed(&self, mut reason: String) -> String {
        self.secrets.redact_in_place(&mut reason);
        reason
    }

    fn ask(
        &mut self,
        role: CallRole,
        attempt: u64,
        messages: Vec<ChatMessage>,
    ) -> Result<String, String> {
        let req = ChatRequest {
            model: self.settings.model.clone(),
            messages,
            tools: Vec::new(),
            temperature: self.settings.temperature,
            max_tokens: self.settings.max_tokens,
        };
        let meta = CallMeta {
            role,
            timeout_ms: self.settings.timeout_ms,
            run: self.questions,
            call: attempt,
            step: None,
            state: None,
        };
        let resp = self
            .transport
            .complete(&req, &meta)
            .map_err(|e| e.to_string())?;
        record_usage(&self.usage, role, &req.model, resp.usage);
        Ok(resp.content.unwrap_or_default())
    }
}

impl Judge for ModelJudge {
    fn grade(&mut self, criterion: &str, evidence: &str) -> Result<(f64, Option<String>), String> {
        let mut messages = vec![
            ChatMessage::text(Role::System, JUDGE_SYSTEM),
            ChatMessage::text(Role::User, format!("Criterion: {criterion}\n\n{evidence}")),
        ];
        let asked = self.ask(CallRole::Judge, 0, messages.clone());
        let verdict = match asked {
            Ok(first) => match parse_verdict(&first) {
                Some(v) => Ok(v),
                None => {
                    messages.push(ChatMessage::text(Role::Assistant, first));
                    messages.push(ChatMessage::text(Role::User, JSON_ONLY));
                    self.ask(CallRole::Judge, 1, messages).map(|second| {
                        parse_verdict(&second).unwrap_or((0.0, Some(NO_VERDICT.to_owned())))
                    })
                }
            },
            Err(e) => Err(e),
        };
        self.questions += 1;
        verdict.map(|(score, reason)| (score, reason.map(|r| self.unechoed(r))))
    }

    fn rubric(&mut self, instructions: &str, payload: &Value) -> Result<HookVerdict, String> {
        let system = format!(
            "{}\n\nAnswer with JSON only: {{\"verdict\": \"ok\" | \"correct\" | \"veto\", \"reason\": \"<short reason>\"}}.",
            instructions.trim()
        );
        let messages = vec![
            ChatMessage::text(Role::System, system),
            ChatMessage::text(Role::User, json!(payload).to_string()),
        ];
        let answer = self.ask(CallRole::Rubric, 0, messages);
        self.questions += 1;
        Ok(match parse_rubric(&answer?) {
            HookVerdict::Correct(r) => HookVerdict::Correct(self.unechoed(r)),
            HookVerdict::Veto(r) => HookVerdict::Veto(self.unechoed(r)),
            HookVerdict::Ok => HookVerdict::Ok,
        })
    }
}
