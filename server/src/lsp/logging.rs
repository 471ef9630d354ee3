//! Server log lines at their true level (issue 16). In server mode (`wfx-lsp`, `wfx-lsp lsp`)
//! every `tracing` event of the `wfx_*` crates becomes a `window/logMessage` notification
//! with the matching `MessageType` (error → Error, warn → Warning, info → Info, debug and
//! trace → Log) and no timestamp of its own: clients add theirs (VS Code's output panel,
//! Neovim's `lsp.log`). stderr receives errors only, also without a timestamp: Neovim files
//! every stderr line of a server as an error, so startup information there read as one.
//!
//! The lines wait in a bounded queue ([`QUEUE`] lines) until the client has answered
//! `initialize` and sent `initialized`; a full queue drops further lines and counts them.

use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::mpsc;
use tower_lsp_server::ls_types as lsp;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;

/// Lines kept while no client takes them (before `initialized`, or when the client reads
/// slower than the server logs); further lines are dropped and counted.
pub const QUEUE: usize = 256;

/// Longest line sent, in bytes; longer ones are cut at a character boundary with `…`.
pub const MAX_LINE: usize = 4096;

type Line = (lsp::MessageType, String);

static SENDER: Mutex<Option<mpsc::Sender<Line>>> = Mutex::new(None);
static RECEIVER: Mutex<Option<mpsc::Receiver<Line>>> = Mutex::new(None);
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// The `MessageType` of a `tracing` level.
pub fn message_type(level: Level) -> lsp::MessageType {
    match level {
        Level::ERROR => lsp::MessageType::ERROR,
        Level::WARN => lsp::MessageType::WARNING,
        Level::INFO => lsp::MessageType::INFO,
        _ => lsp::MessageType::LOG,
    }
}

/// A `tracing` layer that queues the events of the `wfx_*` crates for `window/logMessage`.
/// Installing it (see `main.rs`) creates the queue; [`take_lines`] hands it to the server.
pub struct ClientLog;

impl ClientLog {
    /// Creates the queue and the layer.
    pub fn install() -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        if let Ok(mut s) = SENDER.lock() {
            *s = Some(tx);
        }
        if let Ok(mut r) = RECEIVER.lock() {
            *r = Some(rx);
        }
        Self
    }
}

/// The queued lines, once: the server drains them into `window/logMessage` after
/// `initialized`. `None` when no [`ClientLog`] is installed (tests) or it was taken.
pub fn take_lines() -> Option<mpsc::Receiver<Line>> {
    RECEIVER.lock().ok().and_then(|mut r| r.take())
}

/// Lines dropped because the queue was full.
pub fn dropped() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

/// Cuts `s` to at most [`MAX_LINE`] bytes at a character boundary, marking the cut.
fn cut(mut s: String) -> String {
    if s.len() > MAX_LINE {
        let mut end = MAX_LINE;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

impl<S: Subscriber> tracing_subscriber::Layer<S> for ClientLog {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        if !meta.target().starts_with("wfx") {
            return;
        }
        let mut m = Message(String::new());
        event.record(&mut m);
        let line = (message_type(*meta.level()), cut(m.0));
        let Ok(guard) = SENDER.lock() else { return };
        if let Some(tx) = guard.as_ref()
            && tx.try_send(line).is_err()
        {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_to_message_types() {
        assert_eq!(message_type(Level::ERROR), lsp::MessageType::ERROR);
        assert_eq!(message_type(Level::WARN), lsp::MessageType::WARNING);
        assert_eq!(message_type(Level::INFO), lsp::MessageType::INFO);
        assert_eq!(message_type(Level::DEBUG), lsp::MessageType::LOG);
        assert_eq!(message_type(Level::TRACE), lsp::MessageType::LOG);
    }

    #[test]
    fn long_lines_are_cut_at_a_character_boundary() {
        let s = cut("é".repeat(MAX_LINE));
        assert!(s.len() <= MAX_LINE + '…'.len_utf8(), "{}", s.len());
        assert!(s.ends_with('…'));
        assert_eq!(cut("short".into()), "short");
    }
}
