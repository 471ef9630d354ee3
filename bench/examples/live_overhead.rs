//! The live agent's own overhead per model call (issue 14), excluding the endpoint's time:
//!
//! 1. **in memory**: `LiveAgent::respond` over a transport that does what the HTTP client
//!    does besides I/O (serialize the request body, parse a canned response body): the
//!    prompt, the tool declarations, the transcript rebuilt from a 40-message session,
//!    serialization, lenient parsing and the mapping to actions;
//! 2. **loopback**: the same through the real `HttpTransport` against a fake endpoint on
//!    127.0.0.1 that answers at once; the fake's own handling time is subtracted.
//!
//! Prints the median and p95 per call in microseconds. Run with
//! `cargo run --release -p wfx-bench --example live_overhead`; not a test.

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark harness fails loudly"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wfx_runner::agent::{Agent, AgentMessage, RunCause, TurnContext};
use wfx_runner::disk::DiskFiles;
use wfx_runner::model::config::ModelEnv;
use wfx_runner::model::live::{LiveAgent, LiveSettings};
use wfx_runner::model::wire::{
    CallMeta, ChatRequest, ChatResponse, ChatTransport, ModelError, parse_response,
};
use wfx_schemas::files::FileAccess;
use wfx_schemas::model::workflow::Workflow;

const CALLS: usize = 2_000;

fn body() -> String {
    json!({"id": "x", "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "Checking the order.",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file",
            "arguments": "{\"file_path\":\"skills/order-data/assets/orders.json\"}"}}]}}],
        "usage": {"prompt_tokens": 3000, "completion_tokens": 40}})
    .to_string()
}

/// What `HttpTransport` does apart from I/O.
struct InMemory(String);

impl ChatTransport for InMemory {
    fn complete(&mut self, req: &ChatRequest, _: &CallMeta) -> Result<ChatResponse, ModelError> {
        let sent = req.to_body().to_string();
        std::hint::black_box(sent.len());
        parse_response(&self.0).map_err(ModelError::Transport)
    }
}

fn transcript() -> Vec<AgentMessage> {
    let base = AgentMessage {
        role: "user",
        text: "Hi, I'm support@acmecorp.com. Where is ORD-1002?".into(),
        tool: None,
        call_id: None,
        input: None,
        error: false,
        note_kind: None,
        group: None,
    };
    let mut out = vec![base.clone()];
    for i in 0..13u64 {
        out.push(AgentMessage {
            role: "assistant",
            text: String::new(),
            tool: Some("read_file".into()),
            call_id: Some(i + 1),
            input: Some(json!({"file_path": "skills/order-data/assets/orders.json"})),
            group: Some(i),
            ..base.clone()
        });
        out.push(AgentMessage {
            role: "tool",
            text: "x".repeat(1_500),
            tool: Some("read_file".into()),
            call_id: Some(i + 1),
            ..base.clone()
        });
        out.push(AgentMessage {
            role: "assistant",
            text: "Still looking.".into(),
            group: Some(i),
            ..base.clone()
        });
    }
    out
}

fn measure(
    agent: &mut LiveAgent,
    wf: &Workflow,
    mut endpoint_us: impl FnMut() -> f64,
) -> (f64, f64) {
    let state = wf.state("orders-question").unwrap();
    let tools = wfx_runner::governance::offered_tools(wf, state);
    let messages = transcript();
    let vars = json!({"conversation_id": "c", "title": "t"});
    let cause = RunCause::Send {
        message: "hi".into(),
    };
    let mut samples = Vec::with_capacity(CALLS);
    for run in 0..CALLS {
        let ctx = TurnContext {
            run,
            call: 0,
            case_step: 0,
            cause: &cause,
            state: "orders-question",
            instructions: state.instructions.as_deref(),
            reply_only: false,
            tools: &tools,
            messages: &messages,
            variables: &vars,
        };
        let t = Instant::now();
        let actions = agent.respond(&ctx).unwrap();
        let us = t.elapsed().as_secs_f64() * 1e6 - endpoint_us();
        assert_eq!(actions.len(), 2);
        samples.push(us);
    }
    samples.sort_by(f64::total_cmp);
    (samples[CALLS / 2], samples[CALLS * 95 / 100])
}

fn main() {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/customer-support");
    let fs = DiskFiles::new(&root);
    let text = fs
        .read_text("workflows/order-lookup/workflow.yaml")
        .unwrap();
    let wf = Workflow::from_node(wfx_schemas::yaml::parse(&text).documents.first().unwrap());
    let settings = LiveSettings {
        default_model: "m".into(),
        temperature: None,
        max_tokens: None,
        case_timeout_ms: u64::MAX / 2,
    };
    let now = Arc::new(|| 1_796_226_433_000u64);
    let mut agent = LiveAgent::new(
        &fs,
        "workflows/order-lookup",
        &wf,
        Box::new(InMemory(body())),
        settings.clone(),
        now.clone(),
        Arc::default(),
    );
    let (p50, p95) = measure(&mut agent, &wf, || 0.0);
    println!(
        "in-memory  per model call: median {p50:.0} µs, p95 {p95:.0} µs ({CALLS} calls, 40-message transcript)"
    );

    // The loopback endpoint: answers each request at once; records its handling time.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handled: Arc<Mutex<Vec<f64>>> = Arc::default();
    let h2 = handled.clone();
    let canned = body();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(CALLS) {
            let stream = stream.unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut r = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            let t = Instant::now();
            let mut len = 0;
            loop {
                let mut h = String::new();
                r.read_line(&mut h).unwrap();
                if h.trim().is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut b = vec![0; len];
            r.read_exact(&mut b).unwrap();
            let mut s = stream;
            write!(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{canned}", canned.len()).unwrap();
            s.flush().unwrap();
            h2.lock().unwrap().push(t.elapsed().as_secs_f64() * 1e6);
        }
    });
    let env = ModelEnv {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        api_key: "k".into(),
        model: "m".into(),
        temperature: None,
        max_tokens: None,
        prices: Default::default(),
    };
    let transport = wfx_lsp::live::HttpTransport::new(&env);
    let mut agent = LiveAgent::new(
        &fs,
        "workflows/order-lookup",
        &wf,
        Box::new(transport),
        settings,
        now,
        Arc::default(),
    );
    let mut i = 0;
    let (p50, p95) = measure(&mut agent, &wf, || {
        // The fake's handling time of this call (it has finished writing by now).
        let v = handled.lock().unwrap().get(i).copied().unwrap_or(0.0);
        i += 1;
        v
    });
    let _: Value = Value::Null;
    println!(
        "loopback   per model call: median {p50:.0} µs, p95 {p95:.0} µs (HTTP client + TCP connect on 127.0.0.1, endpoint time subtracted)"
    );
}
