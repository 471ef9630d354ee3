//! The in-process LSP test client: the real service (`wfx_lsp::lsp::serve`) on one end of
//! a tokio duplex pipe, this client on the other, speaking real `Content-Length` framing
//! (strict: a malformed frame ends the connection, so the waiting test fails). A reader
//! task forwards every frame to a channel; [`Client::wait_for`] records what it sees and,
//! when asked to, answers the server's own requests with `null`.
//!
//! Each test file adds its own methods (`start`, `initialize`, …) in an `impl Client`
//! block: the type belongs to the test crate that includes this module.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf,
};
use tokio::sync::mpsc;

use super::{frame, notification, request, uri};

/// A client connected to an in-process server.
pub struct Client {
    w: WriteHalf<DuplexStream>,
    rx: mpsc::UnboundedReceiver<Value>,
    next_id: i64,
    /// Hang guard of every [`Client::wait_for`].
    deadline: Duration,
    /// Whether [`Client::wait_for`] answers the server's requests (`null` result).
    answer_server_requests: bool,
    /// Methods of the server's requests answered by [`Client::wait_for`], in order.
    pub server_requests: Vec<String>,
    /// Every message received, in order.
    pub seen: Vec<Value>,
}

/// Reads one frame; `None` when the stream ends. Panics (ending the reader task, so the
/// waiting test fails) on anything that is not a well-formed frame.
async fn read_frame_async(r: &mut BufReader<ReadHalf<DuplexStream>>) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        let h = line.strip_suffix("\r\n").expect("header without CRLF");
        if let Some(v) = h.strip_prefix("Content-Length: ") {
            len = Some(v.parse::<usize>().unwrap());
        } else {
            assert!(h.starts_with("Content-Type: "), "not a header: {h:?}");
        }
    }
    let mut body = vec![0; len.expect("no Content-Length")];
    r.read_exact(&mut body).await.ok()?;
    Some(serde_json::from_slice(&body).expect("body is not JSON"))
}

impl Client {
    /// Starts a server task and connects to it. `deadline` bounds each wait (a hang
    /// guard); `answer_server_requests` makes [`Client::wait_for`] answer the server's
    /// requests itself instead of handing them to the test.
    pub fn connect(deadline: Duration, answer_server_requests: bool) -> Self {
        let (client, server) = tokio::io::duplex(1 << 22);
        let (sr, sw) = tokio::io::split(server);
        tokio::spawn(async move {
            wfx_lsp::lsp::serve(sr, sw).await;
        });
        let (cr, cw) = tokio::io::split(client);
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut r = BufReader::new(cr);
            while let Some(v) = read_frame_async(&mut r).await {
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Self {
            w: cw,
            rx,
            next_id: 1,
            deadline,
            answer_server_requests,
            server_requests: Vec::new(),
            seen: Vec::new(),
        }
    }

    /// Writes one framed message.
    pub async fn send(&mut self, msg: Value) {
        self.w.write_all(&frame(&msg)).await.unwrap();
        self.w.flush().await.unwrap();
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(notification(method, params)).await;
    }

    /// The next message matching `pred`, skipping (and recording) the others; answers
    /// the server's requests on the way if connected with `answer_server_requests`.
    /// Panics after the deadline or when the connection closes.
    pub async fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + self.deadline;
        loop {
            let m = tokio::time::timeout_at(deadline, self.rx.recv())
                .await
                .unwrap_or_else(|_| panic!("no {what} within {:?}", self.deadline))
                .unwrap_or_else(|| panic!("connection closed while waiting for {what}"));
            self.seen.push(m.clone());
            if self.answer_server_requests
                && let (Some(method), Some(id)) = (m.get("method"), m.get("id"))
            {
                self.server_requests
                    .push(method.as_str().unwrap().to_owned());
                self.send(json!({"jsonrpc": "2.0", "id": id, "result": null}))
                    .await;
            }
            if pred(&m) {
                return m;
            }
        }
    }

    /// Sends a request and returns its `result` (panics on an error response).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(request(id, method, params)).await;
        let resp = self
            .wait_for(&format!("response to {method}"), |m| {
                m["id"] == id && m.get("method").is_none()
            })
            .await;
        assert!(resp.get("error").is_none(), "{method} failed: {resp}");
        resp["result"].clone()
    }

    /// Opens `path` with `text` at `version` (`didOpen`, language `yaml`).
    pub async fn open(&mut self, path: &Path, text: &str, version: i64) {
        let params = json!({"textDocument": {"uri": uri(path), "languageId": "yaml", "version": version, "text": text}});
        self.notify("textDocument/didOpen", params).await;
    }

    /// `shutdown` (its result checked) then `exit`.
    pub async fn shutdown(mut self) {
        self.request("shutdown", Value::Null).await;
        self.notify("exit", Value::Null).await;
    }
}
