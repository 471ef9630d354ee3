//! The real-stdio LSP test client: spawns the built `wfx-lsp lsp --stdio`, speaks
//! `Content-Length` framing over its stdin/stdout (strict: stdout bytes that are not a
//! frame are a [`Wire::Violation`]) and waits with a deadline ([`DEADLINE`], a hang guard,
//! never a speed assertion). A reader thread forwards stdout to a channel; the child is
//! killed on drop.
//!
//! Each test file adds its own methods in an `impl Server` block: the type belongs to the
//! test crate that includes this module.

use std::io::BufReader;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{initialize_params, notification, read_frame, request, send};

/// Hang guard of every wait.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// What the reader thread saw on stdout.
pub enum Wire {
    Message(Value),
    /// Bytes that are not a frame (the reader stops after one).
    Violation(String),
    /// stdout ended cleanly.
    Closed,
}

/// A spawned server. Drop `stdin` (and `rx`) to make the client vanish.
pub struct Server {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    /// Frames from stdout; `None` once the test dropped it (the reader thread then stops
    /// reading after its next frame, closing stdout).
    pub rx: Option<Receiver<Wire>>,
    /// Id of the last request sent by [`Server::request`] (ids start at 1).
    next_id: i64,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Spawns `wfx-lsp lsp --stdio` (stderr discarded) and its stdout reader thread.
    pub fn spawn() -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"));
        cmd.stderr(Stdio::null());
        Self::spawn_command(cmd)
    }

    /// Spawns the server with the model variables `ARCHMAX_*` of this process removed and
    /// `vars` set instead, its stderr (the log, at `RUST_LOG=debug`) written to `log`.
    pub fn spawn_env(vars: &[(&str, &str)], log: &Path) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"));
        for (k, _) in std::env::vars() {
            if k.starts_with("ARCHMAX_") {
                cmd.env_remove(k);
            }
        }
        cmd.envs(vars.iter().copied())
            .env("RUST_LOG", "debug")
            .stderr(std::fs::File::create(log).unwrap());
        Self::spawn_command(cmd)
    }

    fn spawn_command(mut cmd: Command) -> Self {
        let mut child = cmd
            .args(["lsp", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let item = match read_frame(&mut r) {
                    Ok(Some(v)) => Wire::Message(v),
                    Ok(None) => Wire::Closed,
                    Err(e) => Wire::Violation(e),
                };
                let stop = !matches!(item, Wire::Message(_));
                if tx.send(item).is_err() || stop {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            rx: Some(rx),
            next_id: 0,
        }
    }

    /// Spawns the server and completes `initialize` (UTF-16 offered, on `root`) and
    /// `initialized`; returns the server and the whole initialize response.
    pub fn start(root: &Path) -> (Self, Value) {
        let mut s = Self::spawn();
        let id = s.request("initialize", initialize_params(root, &["utf-16"]));
        let init = s.response(id);
        s.notify("initialized", json!({}));
        (s, init)
    }

    /// Writes one framed message to stdin.
    pub fn send(&mut self, msg: &Value) {
        send(self.stdin.as_mut().unwrap(), msg);
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&notification(method, params));
    }

    /// Sends a request with the next id and returns the id without waiting.
    pub fn request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let msg = request(self.next_id, method, params);
        self.send(&msg);
        self.next_id
    }

    /// The next message matching `pred`, skipping others (logs, notifications) and
    /// answering the server's own requests with a `null` result on the way. Panics after
    /// [`DEADLINE`], on a non-frame and when stdout closes.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let end = Instant::now() + DEADLINE;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let m = match self.rx.as_ref().unwrap().recv_timeout(left) {
                Ok(Wire::Message(m)) => m,
                Ok(Wire::Violation(e)) => {
                    panic!("stdout carried a non-frame while waiting for {what}: {e}")
                }
                Ok(Wire::Closed) => panic!("stdout closed while waiting for {what}"),
                Err(RecvTimeoutError::Timeout) => panic!("no {what} within {DEADLINE:?}"),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("reader gone while waiting for {what}")
                }
            };
            if m.get("method").is_some() && m.get("id").is_some() {
                let answer = json!({"jsonrpc": "2.0", "id": m["id"], "result": null});
                self.send(&answer);
                continue;
            }
            if pred(&m) {
                return m;
            }
        }
    }

    /// The whole response to request `id` (result or error).
    pub fn response(&mut self, id: i64) -> Value {
        self.wait_for(&format!("response {id}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
    }

    /// Sends a request, waits for it and returns its `result` (panics on an error).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        let m = self.response(id);
        assert!(m.get("error").is_none(), "{method}: {m}");
        m["result"].clone()
    }

    /// The whole `publishDiagnostics` message for `uri` at `version`.
    pub fn diagnostics(&mut self, uri: &str, version: i64) -> Value {
        self.wait_for(&format!("diagnostics of {uri} v{version}"), |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        })
    }

    /// Opens `uri` with `text` at version 1 (`didOpen`, language `yaml`).
    pub fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
        );
    }

    /// Polls until the process exits (hang guard [`DEADLINE`]); returns its status and
    /// how long the wait took.
    pub fn wait_exit(&mut self) -> (ExitStatus, Duration) {
        let t = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return (st, t.elapsed());
            }
            assert!(
                t.elapsed() < DEADLINE,
                "server still running after {DEADLINE:?}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
