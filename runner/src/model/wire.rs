//! The chat-completion seam (issue 14): structured requests and responses for an
//! OpenAI-compatible `POST {base}/chat/completions`, the typed errors a transport may
//! return, and [`ChatTransport`], the trait the binary's HTTP client implements.
//!
//! Pure: no network, no headers and no key in any value here, so a recording or replaying
//! transport can wrap the real one and store requests and responses as they are
//! ("no secrets in files", docs/security.md). Parsing is lenient because "compatible"
//! endpoints differ (design doc §2.2): a missing or foreign `role` is the assistant's,
//! `content` may be a string, `null` or an array of parts, `arguments` may be a JSON
//! string or an object, unknown fields are ignored.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use wfx_schemas::cassette::Secrets;

/// Who a message is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The system prompt.
    System,
    /// A person (or the case's `send`).
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

/// Arguments of a tool call as the model sent them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolArgs {
    /// A JSON value (normally an object).
    Json(Value),
    /// Text that is not JSON: kept verbatim so it can be echoed and reported.
    Invalid(String),
}

impl ToolArgs {
    /// The arguments as the wire's `arguments` string.
    pub fn wire_text(&self) -> String {
        match self {
            ToolArgs::Json(v) => v.to_string(),
            ToolArgs::Invalid(s) => s.clone(),
        }
    }

    /// Replaces every value of `secrets` in the arguments as they were decoded: each string
    /// and object key of a JSON value ([`Secrets::redact_value`]), or the text kept
    /// verbatim. Returns the count replaced.
    pub fn redact(&mut self, secrets: &Secrets) -> usize {
        match self {
            ToolArgs::Json(v) => secrets.redact_value(v),
            ToolArgs::Invalid(s) => redact_string(s, secrets),
        }
    }
}

/// Redacts `s` in place; returns the count replaced.
fn redact_string(s: &mut String, secrets: &Secrets) -> usize {
    let (r, n) = secrets.redact(s);
    if n > 0 {
        *s = r;
    }
    n
}

/// One tool call of an assistant message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id (echoed as the result's `tool_call_id`).
    pub id: String,
    /// The tool's wire name.
    pub name: String,
    /// Its arguments.
    pub arguments: ToolArgs,
}

/// One message of a request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// The author.
    pub role: Role,
    /// The text (`None` for an assistant message that only calls tools).
    pub content: Option<String>,
    /// The calls of an assistant message, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    /// A message with text only.
    pub fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A tool result answering `call_id`.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
        }
    }
}

/// A tool offered to the model: name, description and JSON Schema of its arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Wire name.
    pub name: String,
    /// One-paragraph description.
    pub description: String,
    /// JSON Schema (draft 2020-12 subset every provider accepts) of the arguments object.
    pub parameters: Value,
}

/// One chat-completion request, without endpoint, headers or key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Model id.
    pub model: String,
    /// The conversation, system prompt first.
    pub messages: Vec<ChatMessage>,
    /// Offered tools, in the documented order (empty: none offered).
    pub tools: Vec<ToolSpec>,
    /// Sampling temperature, when configured.
    pub temperature: Option<f64>,
    /// Completion token cap, when configured.
    pub max_tokens: Option<u64>,
}

impl ChatRequest {
    /// The OpenAI chat-completions JSON body (`stream: false`; `tools` omitted when empty;
    /// tool-call `arguments` as JSON text, as the API wants).
    pub fn to_body(&self) -> Value {
        let messages: Vec<Value> = self.messages.iter().map(message_json).collect();
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("messages".into(), Value::Array(messages));
        if !self.tools.is_empty() {
            let tools: Vec<Value> = self
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters}})
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        if let Some(t) = self.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(m) = self.max_tokens {
            body.insert("max_tokens".into(), json!(m));
        }
        body.insert("stream".into(), json!(false));
        Value::Object(body)
    }
}

fn message_json(m: &ChatMessage) -> Value {
    let role = match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut o = Map::new();
    o.insert("role".into(), json!(role));
    o.insert(
        "content".into(),
        m.content.as_ref().map_or(Value::Null, |c| json!(c)),
    );
    if !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                       "function": {"name": c.name, "arguments": c.arguments.wire_text()}})
            })
            .collect();
        o.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(id) = &m.tool_call_id {
        o.insert("tool_call_id".into(), json!(id));
    }
    Value::Object(o)
}

/// Token counts of one model call (the endpoint's `usage`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub prompt_tokens: u64,
    /// Completion (output) tokens.
    pub completion_tokens: u64,
    /// Prompt tokens served from the provider's cache, when reported.
    #[serde(default)]
    pub cached_tokens: u64,
}

impl Usage {
    /// Adds `other` into `self` (saturating).
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
    }
}

/// The model's answer to one request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The assistant text (`None` or empty when it only calls tools).
    pub content: Option<String>,
    /// Its tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// `stop`, `tool_calls`, `length`, … as sent (may be absent or empty).
    pub finish_reason: Option<String>,
    /// Token counts, when the endpoint reports them.
    pub usage: Option<Usage>,
    /// The model id the endpoint says answered.
    pub model: Option<String>,
}

impl ChatResponse {
    /// Replaces every value of `secrets` in every string of the answer as the parser built
    /// it (issue 24, item 1): the text after its `content` parts were joined (a key split
    /// across two parts is whole only there), each tool call's id, name and arguments after
    /// an `arguments` JSON string was decoded (a `\u` escape inside that string is text
    /// until then), the finish reason and the model id. Redacting the body before parsing
    /// cannot see either. Returns the count replaced. Source: docs/security.md, "no secrets
    /// in output"; docs/live-agent.md.
    pub fn redact(&mut self, secrets: &Secrets) -> usize {
        if secrets.is_empty() {
            return 0;
        }
        // Destructured, so a string field added later cannot be missed silently.
        let ChatResponse {
            content,
            tool_calls,
            finish_reason,
            usage: _,
            model,
        } = self;
        let mut n = 0;
        for s in [content, finish_reason, model].into_iter().flatten() {
            n += redact_string(s, secrets);
        }
        for ToolCall {
            id,
            name,
            arguments,
        } in tool_calls
        {
            n += redact_string(id, secrets);
            n += redact_string(name, secrets);
            n += arguments.redact(secrets);
        }
        n
    }
}

/// Why a model call failed. Messages never contain the key or request headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// 401 or 403: the key was refused (not retried).
    Auth {
        /// HTTP status.
        status: u16,
    },
    /// 429 after the retries.
    RateLimited {
        /// The last `Retry-After`, in ms, if the endpoint sent one.
        retry_after_ms: Option<u64>,
    },
    /// 5xx after the retries.
    Server {
        /// HTTP status.
        status: u16,
        /// The first bytes of the body (inert, at most 200 characters).
        snippet: String,
    },
    /// Another 4xx (a malformed request, an unknown model, …).
    Client {
        /// HTTP status.
        status: u16,
        /// The first bytes of the body.
        snippet: String,
    },
    /// A 2xx whose body is not a chat completion.
    BadBody {
        /// HTTP status.
        status: u16,
        /// The `Content-Type` sent.
        content_type: String,
        /// The first bytes of the body.
        snippet: String,
    },
    /// No answer within the timeout.
    Timeout {
        /// The timeout, in ms.
        after_ms: u64,
    },
    /// Connection refused, DNS, TLS, a body over the size cap, …
    Transport(String),
    /// A cassette could not answer the call (a replay mismatch, no recorded call left, a
    /// cancelled recording): the message is the one precise line to show, as is
    /// (docs/cassettes.md).
    Replay(String),
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelError::Auth { status } => write!(
                f,
                "the model endpoint refused the key (HTTP {status}); check ARCHMAX_API_KEY"
            ),
            ModelError::RateLimited { retry_after_ms } => match retry_after_ms {
                Some(ms) => write!(
                    f,
                    "the model endpoint is rate-limiting (HTTP 429, retry after {ms} ms) and the retries ran out"
                ),
                None => write!(
                    f,
                    "the model endpoint is rate-limiting (HTTP 429) and the retries ran out"
                ),
            },
            ModelError::Server { status, snippet } => write!(
                f,
                "the model endpoint failed (HTTP {status}) and the retries ran out: {snippet}"
            ),
            ModelError::Client { status, snippet } => {
                write!(
                    f,
                    "the model endpoint rejected the request (HTTP {status}): {snippet}"
                )
            }
            ModelError::BadBody {
                status,
                content_type,
                snippet,
            } => write!(
                f,
                "the model endpoint answered HTTP {status} with a body that is not a chat completion (content type `{content_type}`): {snippet}"
            ),
            ModelError::Timeout { after_ms } => {
                write!(f, "the model endpoint did not answer within {after_ms} ms")
            }
            ModelError::Transport(m) => write!(f, "cannot reach the model endpoint: {m}"),
            ModelError::Replay(m) => f.write_str(m),
        }
    }
}

/// Which component makes a model call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CallRole {
    /// The live agent.
    #[default]
    Agent,
    /// The `grade` judge.
    Judge,
    /// A rubric hook.
    Rubric,
}

/// What a transport may know about a call besides the request (never sent on the wire).
/// A cassette stores the context (`run`, `call`, `step`, `state`) with each interaction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallMeta {
    /// Who calls.
    pub role: CallRole,
    /// Timeout for this call in ms (`budget.timeoutMs` of the state, else the default).
    pub timeout_ms: Option<u64>,
    /// The agent: the 0-based model run of the case. The judge: the 0-based question
    /// (one per `grade` step or rubric hook).
    pub run: u64,
    /// The agent: the 0-based model call within the run. The judge: the attempt (0, or 1
    /// for the JSON-only retry).
    pub call: u64,
    /// The case step that drove the call, 1-based (`None` when unknown, e.g. the judge).
    pub step: Option<u64>,
    /// The workflow state of the run (`None` for the judge).
    pub state: Option<String>,
}

/// A chat-completion endpoint. The binary's HTTP client implements it; tests script it.
pub trait ChatTransport {
    /// One request, one response (retries, if any, happen inside).
    fn complete(&mut self, req: &ChatRequest, meta: &CallMeta) -> Result<ChatResponse, ModelError>;
}

/// At most this many characters of a bad body go into an error message.
pub const SNIPPET_CHARS: usize = 200;

/// The first [`SNIPPET_CHARS`] characters of `body`, whitespace collapsed.
pub fn snippet(body: &str) -> String {
    let collapsed: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = collapsed.chars().take(SNIPPET_CHARS).collect();
    if collapsed.chars().count() > SNIPPET_CHARS {
        out.push('…');
    }
    out
}

/// Parses a chat-completion body leniently (see the module docs). `Err` holds a short
/// reason when the body is not JSON or has no `choices[0].message`.
pub fn parse_response(body: &str) -> Result<ChatResponse, String> {
    let v: Value = serde_json::from_str(body).map_err(|e| format!("not JSON ({e})"))?;
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or("no `choices[0]`")?;
    let msg = choice
        .get("message")
        .or_else(|| choice.get("delta"))
        .ok_or("no `choices[0].message`")?;
    let content = content_text(msg.get("content"));
    let mut tool_calls = Vec::new();
    if let Some(calls) = msg.get("tool_calls").and_then(Value::as_array) {
        for (i, c) in calls.iter().enumerate() {
            let f = c.get("function").unwrap_or(c);
            let Some(name) = f.get("name").and_then(Value::as_str) else {
                continue;
            };
            let arguments = match f.get("arguments").or_else(|| f.get("input")) {
                None | Some(Value::Null) => ToolArgs::Json(json!({})),
                Some(Value::String(s)) if s.trim().is_empty() => ToolArgs::Json(json!({})),
                Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                    Ok(v) => ToolArgs::Json(v),
                    Err(_) => ToolArgs::Invalid(s.clone()),
                },
                Some(other) => ToolArgs::Json(other.clone()),
            };
            let id = c
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map_or_else(|| format!("call_{i}"), str::to_owned);
            tool_calls.push(ToolCall {
                id,
                name: name.to_owned(),
                arguments,
            });
        }
    }
    let finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let usage = v.get("usage").filter(|u| u.is_object()).map(|u| {
        let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
        Usage {
            prompt_tokens: n("prompt_tokens"),
            completion_tokens: n("completion_tokens"),
            cached_tokens: u
                .get("prompt_tokens_details")
                .and_then(|d| d.get("cached_tokens"))
                .and_then(Value::as_u64)
                .unwrap_or(0),
        }
    });
    Ok(ChatResponse {
        content,
        tool_calls,
        finish_reason,
        usage,
        model: v.get("model").and_then(Value::as_str).map(str::to_owned),
    })
}

/// `content` as text: a string, `null`, or an array of parts whose `text` fields are
/// concatenated.
fn content_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let text: String = parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    _ => p.get("text").and_then(Value::as_str),
                })
                .collect();
            Some(text)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_parsing() {
        let r = parse_response(r#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],
            "tool_calls":[{"id":"x","function":{"name":"t","arguments":"{\"k\":1}"}},
                          {"function":{"name":"u","arguments":{"k":2}}},
                          {"id":"z","function":{"name":"v","arguments":"{bad"}}]},
            "finish_reason":""}],"extra":1,"usage":{"prompt_tokens":7,"completion_tokens":3}}"#)
        .unwrap();
        assert_eq!(r.content.as_deref(), Some("ab"));
        assert_eq!(r.tool_calls[0].arguments, ToolArgs::Json(json!({"k": 1})));
        assert_eq!(r.tool_calls[1].id, "call_1");
        assert_eq!(r.tool_calls[1].arguments, ToolArgs::Json(json!({"k": 2})));
        assert_eq!(r.tool_calls[2].arguments, ToolArgs::Invalid("{bad".into()));
        assert_eq!(r.finish_reason.as_deref(), Some(""));
        assert_eq!(r.usage.unwrap().prompt_tokens, 7);
        assert!(parse_response("<html>").is_err());
        assert!(parse_response("{}").is_err());
    }

    #[test]
    fn the_parsed_answer_is_redacted_in_the_strings_the_parser_built() {
        // Issue 24, item 1: a key split across `content` parts, and one escaped inside an
        // `arguments` JSON string, are whole only after parsing.
        let key = concat!("sk-", "wire-PLANTED-00000");
        let secrets = Secrets::from_env([("ARCHMAX_API_KEY".to_owned(), key.to_owned())]);
        let (head, tail) = key.split_at(6);
        let args = format!("{{\"k\":\"\\u0073{}\",\"{key}\":[\"{key}\"]}}", &key[1..]);
        let body = json!({"model": key, "choices": [{"finish_reason": key, "message": {
        "content": [{"type": "text", "text": head}, tail],
        "tool_calls": [
            {"id": key, "function": {"name": key, "arguments": args}},
            {"id": "b", "function": {"name": "t", "arguments": format!("{{bad {key}")}},
        ]}}]})
        .to_string();
        let mut r = parse_response(&body).unwrap();
        assert!(format!("{r:?}").contains(key), "the parser builds the key");
        assert_eq!(r.redact(&secrets), 9);
        let shown = format!("{r:?}");
        assert!(!shown.contains(key), "{shown}");
        let p = "<ENV:ARCHMAX_API_KEY>";
        assert_eq!(r.content.as_deref(), Some(p));
        assert_eq!(
            r.tool_calls[0].arguments,
            ToolArgs::Json(json!({"k": p, p: [p]}))
        );
        assert_eq!(
            r.tool_calls[1].arguments,
            ToolArgs::Invalid(format!("{{bad {p}"))
        );
        assert_eq!(
            (r.model.as_deref(), r.finish_reason.as_deref()),
            (Some(p), Some(p))
        );
        assert_eq!(
            (r.tool_calls[0].id.as_str(), r.tool_calls[0].name.as_str()),
            (p, p)
        );
        // No secrets: nothing changes.
        let mut again = parse_response(&body).unwrap();
        assert_eq!(again.redact(&Secrets::default()), 0);
        assert_eq!(again, parse_response(&body).unwrap());
    }

    #[test]
    fn body_shape() {
        let req = ChatRequest {
            model: "m".into(),
            messages: vec![
                ChatMessage::text(Role::System, "s"),
                ChatMessage {
                    role: Role::Assistant,
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "t".into(),
                        arguments: ToolArgs::Json(json!({"a": 1})),
                    }],
                    tool_call_id: None,
                },
                ChatMessage::tool_result("c1", "ok"),
            ],
            tools: vec![],
            temperature: Some(0.5),
            max_tokens: None,
        };
        let b = req.to_body();
        assert_eq!(
            b["messages"][1]["tool_calls"][0]["function"]["arguments"],
            "{\"a\":1}"
        );
        assert_eq!(b["messages"][2]["tool_call_id"], "c1");
        assert!(b.get("tools").is_none());
        assert_eq!(b["temperature"], 0.5);
        assert!(b.get("max_tokens").is_none());
    }
}
