//! `wfx-bench`: figures for wfx-lsp, printed as a table (not a test; nothing asserts a
//! time). Run `bash bench/run.sh` (builds the release binaries, then runs this).
//!
//! Measures: parse+validate (`check_text`) of a ~30-line and a ~3,000-line case (µs,
//! median and mean over repeated runs); `wfx-lsp check` of a generated workspace of 5,000
//! cases (wall time of the release binary, plus its peak RSS from `/proc/<pid>/status`
//! VmHWM, sampled until exit); edit-to-diagnostics latency through the real binary over
//! stdio (p50/p99 over 1,000 single-character edits) and the server's peak RSS (VmHWM
//! read before shutdown); completion and hover latency over stdio on a ~300-line case
//! (p50/p99 over 1,000 requests each); workflow.yaml edit to the closed cases' pushed
//! diagnostics on a workspace of 10,000 generated cases (ms per edit).

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark harness fails loudly"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wfx_schemas::files::MemFiles;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn corpus() -> PathBuf {
    repo().join("tests/corpus/customer-support")
}

const CASE_REL: &str = "workflows/order-lookup/tests/bench.test.yaml";

fn small_case() -> String {
    std::fs::read_to_string(corpus().join("workflows/order-lookup/tests/refund-approved.test.yaml"))
        .unwrap()
}

/// A ~3,000-line case: the small case's steps repeated.
fn large_case() -> String {
    let mut s =
        String::from("title: Large case\ndescription: Many steps, for the benchmark.\nsteps:\n");
    let mut i = 0;
    while s.lines().count() < 3000 {
        s.push_str(&format!(
            "  - send: \"message {i} about ORD-1001\"\n  - reply:\n      includes: [\"ORD-1001\", \"/approv/i\"]\n  - reachedState: refund-request\n"
        ));
        i += 1;
    }
    s
}

fn micro(name: &str, text: &str) {
    let workflow = std::fs::read(corpus().join("workflows/order-lookup/workflow.yaml")).unwrap();
    let fs = MemFiles::new()
        .with("workflows/order-lookup/workflow.yaml", workflow)
        .with(CASE_REL, text.as_bytes().to_vec());
    // The server's steady state: the workflow's parse is cached while its text is unchanged
    // (the first, cold run pays for it and is printed separately).
    let cache = wfx_schemas::check::WorkflowCache::new();
    let cold = Instant::now();
    std::hint::black_box(wfx_schemas::check::check_text_cached(
        &fs, &cache, CASE_REL, text,
    ));
    let cold_us = cold.elapsed().as_secs_f64() * 1e6;
    // Warm up, then time until ~2 s or 2,000 runs.
    for _ in 0..5 {
        std::hint::black_box(wfx_schemas::check::check_text_cached(
            &fs, &cache, CASE_REL, text,
        ));
    }
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < 2000 && start.elapsed() < Duration::from_secs(2) {
        let t = Instant::now();
        std::hint::black_box(wfx_schemas::check::check_text_cached(
            &fs, &cache, CASE_REL, text,
        ));
        samples.push(t.elapsed().as_secs_f64() * 1e6);
    }
    samples.sort_by(f64::total_cmp);
    let mean = samples.iter().sum::<f64>() / samples.len() as f64;
    println!(
        "parse+validate {name:<14} {:>5} lines  median {:>9.1} µs  mean {:>9.1} µs  ({} runs; cold with workflow parse {cold_us:.1} µs)",
        text.lines().count(),
        samples[samples.len() / 2],
        mean,
        samples.len()
    );
}

/// VmHWM of a process in KiB.
fn vm_hwm(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A temp copy of the corpus with `n` more cases under `order-lookup/tests/gen/`, copies
/// of the corpus's cases in turn.
fn generated_workspace(n: usize) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&corpus(), tmp.path());
    let tests = tmp.path().join("workflows/order-lookup/tests");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".test.yaml"))
        .collect();
    cases.sort();
    let cases: Vec<String> = cases
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    for i in 0..n {
        let dir = tests.join(format!("gen/{:03}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("case-{i:05}.test.yaml")),
            &cases[i % cases.len()],
        )
        .unwrap();
    }
    tmp
}

fn check_workspace(bin: &Path) {
    let tmp = generated_workspace(5000);
    let t = Instant::now();
    let mut child = Command::new(bin)
        .args(["check", "--format", "json", "."])
        .current_dir(tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    let mut peak = 0;
    loop {
        if let Some(h) = vm_hwm(pid) {
            peak = peak.max(h);
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let wall = t.elapsed();
    let out: Value = serde_json::from_str(&reader.join().unwrap()).unwrap();
    println!(
        "check of a workspace      {:>5} files  wall {:>9.1} ms  peak RSS ≥ {:.1} MiB  ({} errors)",
        out["summary"]["files"],
        wall.as_secs_f64() * 1e3,
        peak as f64 / 1024.0,
        out["summary"]["errors"]
    );
}

fn send(w: &mut impl Write, msg: &Value) {
    let body = serde_json::to_vec(msg).unwrap();
    write!(w, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
    w.write_all(&body).unwrap();
    w.flush().unwrap();
}

fn recv(r: &mut impl BufRead) -> Value {
    let mut len = 0;
    loop {
        let mut line = String::new();
        assert!(r.read_line(&mut line).unwrap() > 0, "server closed stdout");
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

/// A `wfx-lsp lsp` child over stdio on a temp copy of the corpus, with one case
/// ([`CASE_REL`]) written to disk and open in the server.
struct Session {
    /// The workspace; removed when the session is dropped.
    _tmp: tempfile::TempDir,
    child: Child,
    w: ChildStdin,
    r: BufReader<ChildStdout>,
    /// `file://` URI of the open case.
    uri: String,
}

impl Session {
    /// Copies the corpus to a temp folder, writes `text` at [`CASE_REL`], spawns `bin lsp`,
    /// initializes (no client capabilities), opens the case as version 1 and waits for its
    /// first diagnostics.
    fn open(bin: &Path, text: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        copy_dir(&corpus(), tmp.path());
        let path = tmp.path().join(CASE_REL);
        std::fs::write(&path, text).unwrap();
        let uri = format!("file://{}", path.display());
        let root = format!("file://{}", tmp.path().display());
        let mut child = Command::new(bin)
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let w = child.stdin.take().unwrap();
        let r = BufReader::new(child.stdout.take().unwrap());
        let mut s = Self {
            _tmp: tmp,
            child,
            w,
            r,
            uri,
        };
        s.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": root, "capabilities": {}}}),
        );
        s.response(1);
        s.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        s.send(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": s.uri, "languageId": "yaml", "version": 1, "text": text}}}),
        );
        s.diagnostics(1);
        s
    }

    fn send(&mut self, msg: &Value) {
        send(&mut self.w, msg);
    }

    /// Reads messages until the response to request `id`, which it returns.
    fn response(&mut self, id: i64) -> Value {
        loop {
            let m = recv(&mut self.r);
            if m["id"] == id {
                return m;
            }
        }
    }

    /// Reads messages until a `publishDiagnostics` for `version`.
    fn diagnostics(&mut self, version: i64) {
        loop {
            let m = recv(&mut self.r);
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version
            {
                return;
            }
        }
    }

    /// `shutdown` (request id 2), `exit`, closes stdin and waits for the process.
    fn shutdown(mut self) {
        self.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
        self.response(2);
        self.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
        let Self { mut child, w, .. } = self;
        drop(w);
        let _ = child.wait();
    }
}

/// The `p` quantile (0.0..=1.0, nearest rank) of ascending `samples`.
fn percentile(samples: &[f64], p: f64) -> f64 {
    samples[((samples.len() as f64 - 1.0) * p).round() as usize]
}

/// Edit-to-diagnostics latency through the real binary over stdio: 1,000 single-character
/// edits of the ~30-line case, p50/p99/max (ms), and the server's peak RSS (MiB).
fn edit_latency(bin: &Path) {
    let mut s = Session::open(bin, &small_case());
    // Single-character edits on the title line: insert `x` after `title: `, then delete it.
    let mut samples = Vec::with_capacity(1000);
    for i in 0..1000i64 {
        let version = i + 2;
        let change = if i % 2 == 0 {
            json!({"range": {"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 7}}, "text": "x"})
        } else {
            json!({"range": {"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 8}}, "text": ""})
        };
        let t = Instant::now();
        s.send(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": s.uri, "version": version}, "contentChanges": [change]}}),
        );
        s.diagnostics(version);
        samples.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let peak = vm_hwm(s.child.id()).unwrap_or(0);
    s.shutdown();
    samples.sort_by(f64::total_cmp);
    println!(
        "edit → diagnostics (stdio) {:>4} edits  p50 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms  server peak RSS {:.1} MiB",
        samples.len(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.99),
        samples[samples.len() - 1],
        peak as f64 / 1024.0
    );
}

/// Workspace-wide diagnostics over stdio on a workspace of 10,000 generated cases (plus the
/// corpus): `workflow.yaml` is open; renaming its state `general-question` in the buffer
/// must push a diagnostic for every closed case that names it, and undoing the rename must
/// clear them. Time from the `didChange` to the last of those pushes (ms), six edits
/// (the first includes the startup pass over the workspace).
fn workspace_diagnostics(bin: &Path) {
    let tmp = generated_workspace(10_000);
    let root = tmp.path();
    let mut expected = std::collections::BTreeSet::new();
    let mut stack = vec![root.join("workflows")];
    let mut cases = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(".test.yaml") {
                cases += 1;
                if std::fs::read_to_string(&p)
                    .unwrap()
                    .contains("reachedState: general-question")
                {
                    expected.insert(format!("file://{}", p.display()));
                }
            }
        }
    }
    let wf_path = root.join("workflows/order-lookup/workflow.yaml");
    let wf = std::fs::read_to_string(&wf_path).unwrap();
    let line = wf.lines().position(|l| l == "  general-question:").unwrap();
    let uri = format!("file://{}", wf_path.display());
    let mut child = Command::new(bin)
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut w = child.stdin.take().unwrap();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let root_uri = format!("file://{}", root.display());
    send(
        &mut w,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": root_uri, "capabilities": {}}}),
    );
    while recv(&mut r)["id"] != 1 {}
    send(
        &mut w,
        &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    );
    send(
        &mut w,
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": wf}}}),
    );
    let mut samples = Vec::new();
    for i in 0..6i64 {
        let broken = i % 2 == 0;
        let text = if broken {
            "  general-questionx:"
        } else {
            "  general-question:"
        };
        let old_len = if broken { 19 } else { 20 };
        let t = Instant::now();
        send(
            &mut w,
            &json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": i + 2}, "contentChanges": [{"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": old_len}}, "text": text}]}}),
        );
        let mut left = expected.clone();
        while !left.is_empty() {
            let m = recv(&mut r);
            if m["method"] == "textDocument/publishDiagnostics" {
                let u = m["params"]["uri"].as_str().unwrap_or_default();
                let n = m["params"]["diagnostics"].as_array().map_or(0, Vec::len);
                if (n > 0) == broken {
                    left.remove(u);
                }
            }
        }
        samples.push(t.elapsed().as_secs_f64() * 1e3);
    }
    send(
        &mut w,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
    );
    while recv(&mut r)["id"] != 2 {}
    send(&mut w, &json!({"jsonrpc": "2.0", "method": "exit"}));
    drop(w);
    let _ = child.wait();
    let shown: Vec<String> = samples.iter().map(|s| format!("{s:.0}")).collect();
    println!(
        "workflow.yaml edit → closed-case diagnostics (stdio) {cases} cases, {} affected  ms per edit: {}",
        expected.len(),
        shown.join(" ")
    );
}

/// A ~300-line case: the small case's steps repeated; every block ends with
/// `  - reachedState: refund-request`.
fn medium_case() -> String {
    let mut s = String::from(
        "title: Medium case\ndescription: Many steps, for the IDE benchmark.\nsteps:\n",
    );
    let mut i = 0;
    while s.lines().count() < 300 {
        s.push_str(&format!(
            "  - send: \"message {i} about ORD-1001\"\n  - reply:\n      includes: [\"ORD-1001\", \"/approv/i\"]\n  - reachedState: refund-request\n"
        ));
        i += 1;
    }
    s
}

/// Completion (after `- reachedState: `) and hover (on a `send` key) latency through the
/// real binary over stdio on a ~300-line case: p50/p99 over 1,000 requests each (ms).
fn ide_latency(bin: &Path) {
    let text = medium_case();
    let lines = text.lines().count();
    let mut s = Session::open(bin, &text);
    // The middle block's `  - reachedState: refund-request` line and its `  - send:` line.
    let state_line = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("  - reachedState: "))
        .map(|(n, _)| n)
        .nth(lines / 8)
        .unwrap();
    let send_line = state_line - 3;
    let mut id = 10i64;
    let mut run = |method: &str, line: usize, character: usize| {
        let mut samples = Vec::with_capacity(1000);
        for _ in 0..1000 {
            id += 1;
            let t = Instant::now();
            s.send(
                &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"textDocument": {"uri": s.uri}, "position": {"line": line, "character": character}}}),
            );
            let m = s.response(id);
            assert!(m.get("error").is_none() && !m["result"].is_null(), "{m}");
            samples.push(t.elapsed().as_secs_f64() * 1e3);
        }
        samples.sort_by(f64::total_cmp);
        println!(
            "{:<10} (stdio) {lines:>4}-line case {:>5} requests  p50 {:>7.3} ms  p99 {:>7.3} ms",
            method.trim_start_matches("textDocument/"),
            samples.len(),
            percentile(&samples, 0.5),
            percentile(&samples, 0.99),
        );
    };
    run("textDocument/completion", state_line, 18);
    run("textDocument/hover", send_line, 5);
    s.shutdown();
}

fn main() {
    let bin = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let me = std::env::current_exe().unwrap();
            me.with_file_name("wfx-lsp")
        });
    assert!(
        bin.is_file(),
        "wfx-lsp binary not found at {} (build it with `cargo build --release`)",
        bin.display()
    );
    let bin = std::fs::canonicalize(&bin).unwrap();
    println!("wfx-bench  (binary: {})", bin.display());
    // An optional second argument runs one figure only (`workspace_diagnostics`, …).
    let only = std::env::args().nth(2);
    let run = |name: &str| only.as_deref().is_none_or(|o| o == name);
    if run("micro") {
        micro("~30-line case", &small_case());
        micro("~3000-line case", &large_case());
    }
    if run("check_workspace") {
        check_workspace(&bin);
    }
    if run("workspace_diagnostics") {
        workspace_diagnostics(&bin);
    }
    if run("edit_latency") {
        edit_latency(&bin);
    }
    if run("ide_latency") {
        ide_latency(&bin);
    }
}
