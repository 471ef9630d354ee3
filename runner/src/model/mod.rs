//! A live model behind the runner (issue 14): the chat seam ([`wire`]), the reference's
//! configuration ([`config`]), the system prompt and tool declarations ([`prompt`]), the
//! live agent ([`live`]) and the model judge ([`judge`]).
//!
//! Everything here is pure and synchronous: the network lives in the binary, behind
//! [`wire::ChatTransport`] (no execution of network code in `wfx-runner`; the tidy test
//! holds the crate free of HTTP clients).

pub mod config;
pub mod judge;
pub mod live;
pub mod prompt;
pub mod wire;

use std::sync::{Arc, Mutex};

use serde::Serialize;

use wire::{CallRole, Usage};

/// Token use of one model call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallUsage {
    /// Who called.
    pub role: CallRole,
    /// The model id asked.
    pub model: String,
    /// Tokens (zeros when the endpoint reported none).
    pub usage: Usage,
    /// The endpoint reported usage.
    pub reported: bool,
}

/// The token use of a run, call by call (shared by a case's agent and judge).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct UsageLog {
    /// Calls in order.
    pub calls: Vec<CallUsage>,
}

impl UsageLog {
    /// The sum over all calls.
    pub fn total(&self) -> Usage {
        let mut t = Usage::default();
        for c in &self.calls {
            t.add(c.usage);
        }
        t
    }
}

/// Appends one call's usage to a shared log (a poisoned lock drops the entry).
pub fn record_usage(log: &Arc<Mutex<UsageLog>>, role: CallRole, model: &str, usage: Option<Usage>) {
    if let Ok(mut l) = log.lock() {
        l.calls.push(CallUsage {
            role,
            model: model.to_owned(),
            usage: usage.unwrap_or_default(),
            reported: usage.is_some(),
        });
    }
}

/// Token use (and cost) of a case or a suite, as reported in the narration, `--json`
/// (`usage`), JUnit properties, the Markdown and HTML reports and `history.jsonl`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunUsage {
    /// Model calls (agent, judge and rubric).
    pub calls: u64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    pub cached_tokens: u64,
    /// USD, when `ARCHMAX_PRICE_INPUT` and `ARCHMAX_PRICE_OUTPUT` are set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl RunUsage {
    /// The usage of `calls` priced with `prices`.
    pub fn of(calls: &[CallUsage], prices: &config::Prices) -> Self {
        let mut t = Usage::default();
        for c in calls {
            t.add(c.usage);
        }
        Self {
            calls: calls.len() as u64,
            prompt_tokens: t.prompt_tokens,
            completion_tokens: t.completion_tokens,
            cached_tokens: t.cached_tokens,
            cost_usd: prices.cost(t),
        }
    }

    /// Adds `other` (costs add when both have one).
    pub fn add(&mut self, other: &RunUsage) {
        self.calls += other.calls;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// `7 model calls · 1200 tokens in (100 cached), 300 out · $0.0042` (cost only when
    /// priced).
    pub fn line(&self) -> String {
        let mut out = format!(
            "{} model call{} · {} tokens in",
            self.calls,
            if self.calls == 1 { "" } else { "s" },
            self.prompt_tokens
        );
        if self.cached_tokens > 0 {
            out.push_str(&format!(" ({} cached)", self.cached_tokens));
        }
        out.push_str(&format!(", {} out", self.completion_tokens));
        if let Some(c) = self.cost_usd {
            out.push_str(&format!(" · ${c:.4}"));
        }
        out
    }
}
