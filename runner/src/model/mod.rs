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
