//! A loopback fake of an OpenAI-compatible chat-completions endpoint for the `--live`
//! tests: a `std::net::TcpListener` on 127.0.0.1:0, one request per connection
//! (`Connection: close`), a 10 s read timeout per connection, at most `max_requests`
//! requests (then it stops accepting), every request recorded for the test to inspect.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// A request the fake received.
#[derive(Clone, Debug)]
pub struct Seen {
    /// Request line method.
    pub method: String,
    /// Request path.
    pub path: String,
    /// Every header line, lower-cased name.
    pub headers: Vec<(String, String)>,
    /// The raw body.
    pub raw: String,
    /// The body as JSON (`Null` if it is not).
    pub body: Value,
}

impl Seen {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the fake answers.
#[derive(Clone, Debug)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Content type.
    pub content_type: String,
    /// Body.
    pub body: String,
    /// Wait this long before answering.
    pub delay_ms: u64,
}

impl Reply {
    /// A 200 JSON chat completion with this assistant message.
    pub fn message(content: Option<&str>, tool_calls: Value) -> Reply {
        let mut msg = json!({"role": "assistant", "content": content});
        if tool_calls.as_array().is_some_and(|a| !a.is_empty()) {
            msg["tool_calls"] = tool_calls;
        }
        Reply::json(json!({
            "id": "chatcmpl-fake", "object": "chat.completion", "model": "fake-model",
            "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        }))
    }

    /// A 200 JSON body.
    pub fn json(v: Value) -> Reply {
        Reply {
            status: 200,
            headers: Vec::new(),
            content_type: "application/json".into(),
            body: v.to_string(),
            delay_ms: 0,
        }
    }

    /// Any status and body.
    pub fn status(status: u16, content_type: &str, body: &str) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            content_type: content_type.into(),
            body: body.into(),
            delay_ms: 0,
        }
    }
}

/// One tool call in the wire shape, arguments as JSON text.
pub fn call(id: &str, name: &str, args: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
}

/// What answers a request.
pub type Handler = dyn FnMut(&Seen) -> Reply + Send;

/// The running fake.
pub struct Fake {
    /// `http://127.0.0.1:<port>/v1`.
    pub base: String,
    /// Every request, in order.
    pub seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    port: u16,
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

impl Fake {
    /// Starts a fake answering with `handler`.
    pub fn start(
        max_requests: usize,
        handler: impl FnMut(&Seen) -> Reply + Send + 'static,
    ) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen2, stop2) = (seen.clone(), stop.clone());
        let handler: Arc<Mutex<Handler>> = Arc::new(Mutex::new(handler));
        std::thread::spawn(move || {
            let mut served = 0;
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) || served >= max_requests {
                    break;
                }
                let Ok(stream) = stream else { continue };
                served += 1;
                let (seen3, handler) = (seen2.clone(), handler.clone());
                // One thread per connection, so a delayed answer does not block the next.
                std::thread::spawn(move || serve(stream, &seen3, &*handler));
            }
        });
        Fake {
            base: format!("http://127.0.0.1:{port}/v1"),
            seen,
            stop,
            port,
        }
    }

    /// The requests so far.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, seen: &Mutex<Vec<Seen>>, handler: &Mutex<Handler>) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let path = parts.next().unwrap_or("").to_owned();
    let mut headers = Vec::new();
    for _ in 0..100 {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len.min(16 * 1024 * 1024)];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let raw = String::from_utf8_lossy(&body).into_owned();
    let req = Seen {
        method,
        path,
        headers,
        body: serde_json::from_str(&raw).unwrap_or(Value::Null),
        raw,
    };
    seen.lock().unwrap().push(req.clone());
    let reply = (handler.lock().unwrap())(&req);
    if reply.delay_ms > 0 {
        std::thread::sleep(Duration::from_millis(reply.delay_ms));
    }
    let mut out = format!(
        "HTTP/1.1 {} X\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        reply.content_type,
        reply.body.len()
    );
    for (k, v) in &reply.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&reply.body);
    let mut stream = stream;
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.flush();
}
