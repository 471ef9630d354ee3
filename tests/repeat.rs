//! `wfx-lsp test --repeat N` (issue 15, item 7) against a loopback fake model whose answer
//! alternates, so a case's verdict varies from run to run: the pass rate in the
//! narration, the `--json` document and the Markdown report, one `history.jsonl` row per
//! run with its counts and tokens, and the documented ceiling on N.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use support::fake_model::{Fake, Reply};

// Split so that no committed line holds a key-shaped value.
const KEY: &str = concat!("sk-", "live-REPEAT-4f2a9b");
const TINY_WF: &str = "title: Tiny\ninstructions: Be brief.\ntests:\n  caseTimeoutMs: 3000\nstates:\n  start:\n    triggers: { manual: }\n    instructions: Greet the user, then advance to done.\n    transitions:\n      - to: done\n        description: The user was greeted.\n  done:\n    instructions: Stop.\n";
const TINY_CASE: &str = "title: Hello\ndescription: The model greets the user.\nsteps:\n  - send: \"hi\"\n  - reply:\n      includes: [\"hello\"]\n";

/// A one-case workspace and a fake that answers "hello there" on its 1st, 3rd, 5th …
/// request and "goodbye" on the others: the case passes every other run.
fn alternating() -> (tempfile::TempDir, Fake, Arc<AtomicUsize>) {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path().join("workflows/tiny/tests");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(ws.path().join("workflows/tiny/workflow.yaml"), TINY_WF).unwrap();
    std::fs::write(dir.join("hello.test.yaml"), TINY_CASE).unwrap();
    let n = Arc::new(AtomicUsize::new(0));
    let count = n.clone();
    let fake = Fake::start(50, move |_| {
        let i = count.fetch_add(1, Ordering::SeqCst);
        let text = if i.is_multiple_of(2) {
            "hello there"
        } else {
            "goodbye"
        };
        Reply::message(Some(text), json!([]))
    });
    (ws, fake, n)
}

fn run(ws: &Path, fake: &Fake, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"));
    for k in ["ARCHMAX_PRICE_INPUT", "ARCHMAX_PRICE_OUTPUT"] {
        c.env_remove(k);
    }
    let out = c
        .current_dir(ws)
        .env("ARCHMAX_API_BASE_URL", &fake.base)
        .env("ARCHMAX_API_KEY", KEY)
        .env("ARCHMAX_MODEL", "fake-model-x")
        .arg("test")
        .args(args)
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains(KEY), "the key leaked: {all}");
    out
}

#[test]
fn an_alternating_model_passes_half_of_the_runs() {
    let (ws, fake, calls) = alternating();
    let out = run(
        ws.path(),
        &fake,
        &[
            "tiny",
            "--live",
            "--repeat",
            "4",
            "--json",
            "--reporter",
            "markdown",
            "--reporter",
            "junit",
            "--out",
            "results",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "a failed run fails: {stderr}");
    assert_eq!(calls.load(Ordering::SeqCst), 4, "one model call per run");

    // Narration: each run announced, then the pass rate, marked flaky.
    for i in 1..=4 {
        assert!(stderr.contains(&format!("── run {i}/4 ──")), "{stderr}");
    }
    assert!(
        stderr.contains("pass rate over 4 runs:\n  tiny/hello  passed 2/4 (50%)  flaky"),
        "{stderr}"
    );

    // JSON: every run's result, verdicts alternating, and the rate.
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["repeat"], 4);
    let verdicts: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["results"][0]["verdict"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["passed", "failed", "passed", "failed"]);
    let rate = &doc["passRates"][0];
    assert_eq!(
        (
            rate["workflow"].as_str(),
            rate["id"].as_str(),
            rate["runs"].as_u64(),
            rate["passed"].as_u64(),
            rate["failed"].as_u64(),
            rate["rate"].as_f64()
        ),
        (
            Some("tiny"),
            Some("hello"),
            Some(4),
            Some(2),
            Some(2),
            Some(0.5)
        ),
        "{rate}"
    );

    // history.jsonl: one row per run, in order, with its own counts and tokens.
    let history = std::fs::read_to_string(ws.path().join("results/history.jsonl")).unwrap();
    let rows: Vec<Value> = history
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 4, "{history}");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["round"], i + 1, "{row}");
        assert_eq!(row["rounds"], 4, "{row}");
        assert_eq!(row["total"], 1, "{row}");
        assert_eq!(row["passed"], usize::from(i.is_multiple_of(2)), "{row}");
        assert_eq!(row["failed"], usize::from(!i.is_multiple_of(2)), "{row}");
        assert_eq!(row["usage"]["calls"], 1, "{row}");
        assert_eq!(row["usage"]["promptTokens"], 100, "{row}");
        assert_eq!(row["usage"]["completionTokens"], 20, "{row}");
        assert!(row["durationMs"].is_u64(), "{row}");
    }

    // Markdown: a section per run and the pass-rate table; JUnit: a suite per run.
    let md = std::fs::read_to_string(ws.path().join("results/report.md")).unwrap();
    assert!(md.contains("## tiny \\(run 4/4\\)"), "{md}");
    assert!(md.contains("| tiny/hello | 2 | 2 | 0 | 0 | 50% |"), "{md}");
    let junit = std::fs::read_to_string(ws.path().join("results/junit.xml")).unwrap();
    assert_eq!(junit.matches("<testsuite name=\"tiny (run ").count(), 4);
    assert!(junit.contains("tests=\"4\" failures=\"2\""), "{junit}");
}

#[test]
fn three_runs_of_an_alternating_model_and_the_stdout_line_counts_them() {
    let (ws, fake, calls) = alternating();
    // Three runs on an alternating fake: pass, fail, pass.
    let out = run(ws.path(), &fake, &["tiny", "--live", "--repeat", "3"]);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "3 runs: 2 passed, 1 failed, 0 skipped\n"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("passed 2/3 (67%)  flaky"));
    // Round 1 recorded the case (record `once`, no cassette before); rounds 2 and 3 played
    // the model live and did not overwrite it (runner/src/rounds.rs).
    let cassette =
        std::fs::read_to_string(ws.path().join("workflows/tiny/tests/hello.cassette.json"))
            .unwrap();
    assert!(cassette.contains("hello there"), "{cassette}");
    assert!(!cassette.contains("goodbye"), "{cassette}");
    assert!(!cassette.contains(KEY), "{cassette}");

    // A second command replays that recording in every round: no model call, 3/3.
    let again = run(ws.path(), &fake, &["tiny", "--live", "--repeat", "3"]);
    assert_eq!(calls.load(Ordering::SeqCst), 3, "replayed, not called");
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        "3 runs: 3 passed, 0 failed, 0 skipped\n"
    );
}

#[test]
fn repeat_is_bounded_and_zero_is_refused() {
    let (ws, fake, calls) = alternating();
    for n in ["0", "101"] {
        let out = run(ws.path(), &fake, &["tiny", "--live", "--repeat", n]);
        assert_eq!(out.status.code(), Some(2), "--repeat {n}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("--repeat {n} is out of range (1 to 100)")),
            "{err}"
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing ran");
    let ok = run(
        ws.path(),
        &fake,
        &["tiny", "--live", "--repeat", "1", "--json"],
    );
    let doc: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(doc["passRates"][0]["rate"], 1.0);
    assert_eq!(ok.status.code(), Some(0));
}
