//! Cassettes end to end (issue 15; docs/cassettes.md): the example suite recorded with
//! `wfx-lsp test --live` against the loopback fake model, then replayed with no endpoint
//! and no `ARCHMAX_*` variable: the same results JSON, grades included; the cassettes hold
//! no key. Then what a replay refuses: an unknown cassette version, a changed case (a
//! mismatch line), and `--record all` without `--live`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use support::fake_model::{Fake, Reply};
use support::script_model::{Player, replies_of};
use wfx_runner::agent::ScriptedAgent;

// Split so that no committed line holds a key-shaped value.
const KEY: &str = concat!("sk-", "cassette-PLANTED-5f3a9c");
const MODEL: &str = "fake-model-x";

/// The binary with every `ARCHMAX_*` variable removed.
fn wfx() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"));
    for (k, _) in std::env::vars() {
        if k.starts_with("ARCHMAX_") {
            c.env_remove(k);
        }
    }
    c
}

fn run(c: &mut Command) -> (i32, String, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The example suite with its agent scripts turned into a fake model's answers, the
/// scripts removed (so the model plays every case), recorded once with `--live`. Returns
/// the workspace, the recorded run's stdout (results JSON) and the number of requests.
fn recorded() -> (tempfile::TempDir, String, usize) {
    let ws = support::corpus_copy();
    let root = ws.path();
    let tests_dir = root.join("workflows/order-lookup/tests");
    let (code, listed, err) =
        run(wfx()
            .current_dir(root)
            .args(["test", "order-lookup", "--skip-grades", "--json"]));
    assert_eq!(code, 0, "{err}");
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let mut ids = 0;
    let ids_of: Vec<String> = listed["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids_of.len(), 9);
    let cases: Vec<Vec<Vec<Reply>>> = ids_of
        .iter()
        .map(|id| {
            let path = tests_dir.join(format!("{id}.agent.yaml"));
            let text = std::fs::read_to_string(&path).unwrap();
            let agent = ScriptedAgent::parse(id, &text).unwrap();
            std::fs::remove_file(&path).unwrap();
            replies_of(agent.turns().unwrap(), &mut ids)
        })
        .collect();
    let player = Arc::new(Mutex::new(Player {
        cases,
        case: None,
        run: 0,
        pos: 0,
    }));
    let fake = Fake::start(2000, move |s| player.lock().unwrap().answer(s));
    std::fs::write(
        root.join(".env"),
        format!(
            "ARCHMAX_API_BASE_URL={}\nARCHMAX_API_KEY={KEY}\n",
            fake.base
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = run(wfx().current_dir(root).env("ARCHMAX_MODEL", MODEL).args([
        "test",
        "order-lookup",
        "--live",
        "--json",
    ]));
    assert_eq!(code, 0, "{stderr}");
    let n = fake.requests().len();
    drop(fake);
    std::fs::remove_file(root.join(".env")).unwrap();
    (ws, stdout, n)
}

fn cassettes(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = std::fs::read_dir(root.join("workflows/order-lookup/tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".cassette.json"))
        .collect();
    out.sort();
    out
}

#[test]
fn the_example_suite_recorded_once_replays_identically_with_no_network_and_no_secret() {
    let (ws, live, requests) = recorded();
    let root = ws.path();
    let files = cassettes(root);
    assert_eq!(files.len(), 9, "one cassette per case: {files:?}");
    let mut interactions = 0;
    let mut judged = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(!text.contains(KEY), "the key leaked into {}", f.display());
        let c = wfx_schemas::cassette::parse(&text).unwrap();
        assert_eq!(c.model, MODEL);
        assert_eq!(c.endpoint.split(':').next(), Some("127.0.0.1"));
        interactions += c.interactions.len();
        judged += c
            .interactions
            .iter()
            .filter(|i| i.role != wfx_schemas::cassette::InteractionRole::Agent)
            .count();
    }
    assert_eq!(interactions, requests, "every model call is in a cassette");
    assert!(judged >= 5, "judge verdicts are recorded too ({judged})");

    // Replay: no endpoint (the fake is gone), no `.env`, no ARCHMAX_* variable.
    let (code, replay, stderr) =
        run(wfx()
            .current_dir(root)
            .args(["test", "order-lookup", "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let (a, b): (Value, Value) = (
        serde_json::from_str(&live).unwrap(),
        serde_json::from_str(&replay).unwrap(),
    );
    assert_eq!(a, b, "the replay's results equal the recording's");
    let graded = b["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["records"].as_array().unwrap().clone())
        .filter(|r| r["kind"] == "grade.closedQA" && r["status"] == "passed")
        .count();
    assert!(graded >= 5, "grades replayed, not skipped ({graded})");
    assert!(!stderr.contains("not run"), "{stderr}");

    // The same replay twice gives the same bytes.
    let (_, again, _) = run(wfx()
        .current_dir(root)
        .args(["test", "order-lookup", "--json"]));
    assert_eq!(again, replay);

    // `--record all` and `new` need `--live`: a usage error, nothing rewritten.
    let before = std::fs::read(&files[0]).unwrap();
    let (code, _, err) =
        run(wfx()
            .current_dir(root)
            .args(["test", "order-lookup", "--record", "all"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--record all records live model calls and needs --live"),
        "{err}"
    );
    assert_eq!(std::fs::read(&files[0]).unwrap(), before);

    // A changed case no longer matches its recording: one precise line and the hint.
    let case = root.join("workflows/order-lookup/tests/refund-approved.test.yaml");
    let text = std::fs::read_to_string(&case).unwrap();
    let changed = text.replacen("ORD-1001.\"", "ORD-1001 please.\"", 1);
    assert_ne!(changed, text, "the case's first message was changed");
    std::fs::write(&case, changed).unwrap();
    let (code, out, err) =
        run(wfx()
            .current_dir(root)
            .args(["test", "order-lookup", "refund-approved", "--json"]));
    assert_eq!(code, 1, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let error = v["results"][0]["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "cassette `workflows/order-lookup/tests/refund-approved.cassette.json`: interaction 0 (agent, run 0, call 0, step 1, state `"
        ),
        "{error}"
    );
    assert!(
        error.contains("message 1 (user): content: expected \"Hi, I'm support@acmecorp.com. I'd like a refund for order ORD-1001.\", got \"Hi, I'm support@acmecorp.com. I'd like a refund for order ORD-1001 please.\";"),
        "{error}"
    );
    assert!(
        error.ends_with("; re-record with `--live --record all`"),
        "{error}"
    );
    assert!(!error.contains('\n'), "one line: {error}");
    std::fs::write(&case, text).unwrap();

    // An unknown version is refused with its reason; the case fails, it is never skipped.
    let cassette = root.join("workflows/order-lookup/tests/refund-approved.cassette.json");
    let c = std::fs::read_to_string(&cassette).unwrap();
    std::fs::write(&cassette, c.replacen("\"version\": 1", "\"version\": 7", 1)).unwrap();
    let (code, out, err) =
        run(wfx()
            .current_dir(root)
            .args(["test", "order-lookup", "refund-approved", "--json"]));
    assert_eq!(code, 1, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["results"][0]["verdict"]["status"], "failed");
    assert!(
        v["results"][0]["error"]
            .as_str()
            .unwrap()
            .contains("cassette version 7 is not supported"),
        "{out}"
    );
}

/// Issue 15, item 6 (docs/agent-scripts.md "Export"): each recorded cassette exported to an
/// agent script, the cassettes deleted, the suite run from the scripts gives every case the
/// verdict of the recording, record by record. Grades are the exception, by the scripted
/// policy: a scripted run has no recorded judge, so it runs with `--skip-grades` and each
/// `grade` record is `not-executed` where the recording's passed.
#[test]
fn exported_agent_scripts_replay_the_recorded_verdicts_without_a_model() {
    let (ws, live, _) = recorded();
    let root = ws.path();
    let live: Value = serde_json::from_str(&live).unwrap();
    let results = live["results"].as_array().unwrap();
    assert_eq!(results.len(), 9);
    for c in results {
        let case = format!(
            "workflows/order-lookup/tests/{}.test.yaml",
            c["id"].as_str().unwrap()
        );
        let (code, out, err) = run(wfx().current_dir(root).args(["export-agent", &case]));
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.trim(), case.replace(".test.yaml", ".agent.yaml"));
        let script = std::fs::read_to_string(root.join(out.trim())).unwrap();
        assert!(!script.contains(KEY), "{script}");
        // An existing script is refused without --force, and replaced with it.
        let (code, _, err) = run(wfx().current_dir(root).args(["export-agent", &case]));
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("exists; pass --force to replace it"), "{err}");
        let (code, _, err) = run(wfx()
            .current_dir(root)
            .args(["export-agent", &case, "--force"]));
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            std::fs::read_to_string(root.join(out.trim())).unwrap(),
            script
        );
    }
    for f in cassettes(root) {
        std::fs::remove_file(f).unwrap();
    }
    let (code, scripted, err) =
        run(wfx()
            .current_dir(root)
            .args(["test", "order-lookup", "--skip-grades", "--json"]));
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("not run"), "{err}");
    let scripted: Value = serde_json::from_str(&scripted).unwrap();
    let mut grades = 0;
    for (a, b) in results.iter().zip(scripted["results"].as_array().unwrap()) {
        assert_eq!(a["id"], b["id"]);
        assert_eq!(
            a["verdict"]["status"], b["verdict"]["status"],
            "{}",
            a["id"]
        );
        let (ra, rb) = (
            a["records"].as_array().unwrap(),
            b["records"].as_array().unwrap(),
        );
        assert_eq!(ra.len(), rb.len(), "{}", a["id"]);
        for (x, y) in ra.iter().zip(rb) {
            if x["kind"].as_str().unwrap().starts_with("grade.") {
                // A skipped grade is reported by its step's kind, `grade`.
                assert_eq!(y["kind"], "grade", "{}: {y}", a["id"]);
                grades += 1;
                assert_eq!(x["status"], "passed", "{}: {x}", a["id"]);
                assert_eq!(y["status"], "not-executed", "{}: {y}", a["id"]);
            } else {
                assert_eq!(x["kind"], y["kind"], "{}", a["id"]);
                assert_eq!(x["status"], y["status"], "{}: {x} vs {y}", a["id"]);
            }
        }
    }
    assert!(grades >= 5, "grades recorded ({grades})");
}
