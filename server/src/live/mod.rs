//! The HTTP side of `wfx-lsp test --live` (issue 14): [`HttpTransport`], an
//! OpenAI-compatible chat-completions client on `ureq` (blocking, rustls), behind the
//! runner's [`ChatTransport`] seam.
//!
//! `POST {ARCHMAX_API_BASE_URL}/chat/completions` with `Authorization: Bearer <key>` and a
//! JSON body (no streaming). 401/403 are not retried; 429 and 5xx are retried at most
//! [`MAX_RETRIES`] times, waiting `Retry-After` (seconds, capped at
//! [`MAX_RETRY_AFTER_MS`]) or an exponential backoff; a body over [`MAX_BODY_BYTES`] is an
//! error. The key is only ever put in the `Authorization` header: no error, log or value
//! returned here contains it ("no secrets in output", docs/security.md), even when the
//! endpoint echoes it (the key's value becomes `<ENV:ARCHMAX_API_KEY>`, as in a cassette):
//! a chat completion is redacted in every string of the parsed answer, after the parser
//! built it ([`ChatResponse::redact`]: joined `content` parts, decoded `arguments`
//! strings); a body or content type that reaches an error message is redacted as raw text
//! and, for a JSON body, in its decoded strings (a key spelled with `\u` escapes).

use std::time::Duration;

use wfx_schemas::cassette::Secrets;

use wfx_runner::model::config::ModelEnv;
use wfx_runner::model::wire::{
    CallMeta, ChatRequest, ChatResponse, ChatTransport, ModelError, parse_response, snippet,
};

/// Retries after a 429 or 5xx answer (so at most 4 requests per call).
pub const MAX_RETRIES: u32 = 3;
/// The longest `Retry-After` honoured, in ms; a longer one is waited only this long.
pub const MAX_RETRY_AFTER_MS: u64 = 60_000;
/// The largest response body read, in bytes (8 MiB).
pub const MAX_BODY_BYTES: u64 = 8 * 1024 * 1024;
/// The timeout of a call when the caller gives none, in ms.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// The blocking chat-completions client.
pub struct HttpTransport {
    url: String,
    key: String,
    /// The key as a [`Secrets`] (`ARCHMAX_API_KEY`, the cassette's length rule), for
    /// redacting what the endpoint answers.
    echo: Secrets,
    agent: ureq::Agent,
    /// First backoff without `Retry-After`, in ms (doubled per retry).
    pub backoff_ms: u64,
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &self.url)
            .field("key", &"<redacted>")
            .finish()
    }
}

impl HttpTransport {
    /// A client for `env` (`base_url` without a trailing slash).
    pub fn new(env: &ModelEnv) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(Duration::from_secs(30)))
            .user_agent(concat!("wfx-lsp/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Self {
            url: format!("{}/chat/completions", env.base_url),
            key: env.api_key.clone(),
            echo: env.key_secrets(),
            agent,
            backoff_ms: 500,
        }
    }

    fn attempt(&self, body: &str, timeout_ms: u64) -> Attempt {
        let sent = self
            .agent
            .post(&self.url)
            .config()
            .timeout_global(Some(Duration::from_millis(timeout_ms.max(1))))
            .build()
            .header("Authorization", &format!("Bearer {}", self.key))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .send(body);
        let mut resp = match sent {
            Ok(r) => r,
            Err(ureq::Error::Timeout(_)) => {
                return Attempt::Fail(ModelError::Timeout {
                    after_ms: timeout_ms,
                });
            }
            Err(e) => return Attempt::Fail(transport_error(&e, timeout_ms)),
        };
        let status = resp.status().as_u16();
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let content_type = self.unechoed(header("content-type").unwrap_or_default());
        let retry_after_ms = header("retry-after")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| ((s * 1000.0) as u64).min(MAX_RETRY_AFTER_MS));
        let text = match resp
            .body_mut()
            .with_config()
            .limit(MAX_BODY_BYTES)
            .read_to_string()
        {
            Ok(t) => t,
            Err(ureq::Error::Timeout(_)) => {
                return Attempt::Fail(ModelError::Timeout {
                    after_ms: timeout_ms,
                });
            }
            Err(e) => return Attempt::Fail(transport_error(&e, timeout_ms)),
        };
        // A chat completion is parsed from the body as sent and redacted in the strings the
        // parser built (ChatResponse::redact); the text itself only ever reaches an error
        // message, redacted as text and in its decoded strings.
        let parsed = (200..=299).contains(&status).then(|| parse_response(&text));
        let text = self.unechoed(text);
        match status {
            200..=299 => match parsed {
                Some(Ok(mut r)) => {
                    r.redact(&self.echo);
                    Attempt::Done(r)
                }
                _ => Attempt::Fail(ModelError::BadBody {
                    status,
                    content_type,
                    snippet: snippet(&text),
                }),
            },
            401 | 403 => Attempt::Fail(ModelError::Auth { status }),
            429 => Attempt::Retry(ModelError::RateLimited { retry_after_ms }, retry_after_ms),
            500..=599 => Attempt::Retry(
                ModelError::Server {
                    status,
                    snippet: snippet(&text),
                },
                retry_after_ms,
            ),
            _ => Attempt::Fail(ModelError::Client {
                status,
                snippet: snippet(&text),
            }),
        }
    }
}

impl HttpTransport {
    /// `text` (a response body or header) with the key redacted: in the raw text, then, if
    /// it is JSON, in every decoded string and object key (re-serialised only when one
    /// held the key). Bounded by the body cap ([`MAX_BODY_BYTES`]).
    fn unechoed(&self, text: String) -> String {
        if self.echo.is_empty() {
            return text;
        }
        let (text, _) = self.echo.redact(&text);
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(mut v) => {
                if self.echo.redact_value(&mut v) > 0 {
                    v.to_string()
                } else {
                    text
                }
            }
            Err(_) => text,
        }
    }
}

enum Attempt {
    Done(ChatResponse),
    Fail(ModelError),
    Retry(ModelError, Option<u64>),
}

fn transport_error(e: &ureq::Error, timeout_ms: u64) -> ModelError {
    match e {
        ureq::Error::Timeout(_) => ModelError::Timeout {
            after_ms: timeout_ms,
        },
        ureq::Error::BodyExceedsLimit(n) => {
            ModelError::Transport(format!("the response body exceeds {n} bytes"))
        }
        other => ModelError::Transport(other.to_string()),
    }
}

impl ChatTransport for HttpTransport {
    fn complete(&mut self, req: &ChatRequest, meta: &CallMeta) -> Result<ChatResponse, ModelError> {
        let body = req.to_body().to_string();
        let timeout_ms = meta.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        let started = std::time::Instant::now();
        let mut retries = 0;
        loop {
            let left = timeout_ms.saturating_sub(started.elapsed().as_millis() as u64);
            if left == 0 {
                return Err(ModelError::Timeout {
                    after_ms: timeout_ms,
                });
            }
            match self.attempt(&body, left) {
                Attempt::Done(r) => return Ok(r),
                Attempt::Fail(e) => return Err(e),
                Attempt::Retry(e, retry_after) => {
                    if retries >= MAX_RETRIES {
                        return Err(e);
                    }
                    let wait = retry_after.unwrap_or(self.backoff_ms << retries);
                    let left = timeout_ms.saturating_sub(started.elapsed().as_millis() as u64);
                    if wait >= left {
                        return Err(e);
                    }
                    tracing::warn!(
                        "model endpoint answered {e}; retry {} of {MAX_RETRIES} in {wait} ms",
                        retries + 1
                    );
                    std::thread::sleep(Duration::from_millis(wait));
                    retries += 1;
                }
            }
        }
    }
}
