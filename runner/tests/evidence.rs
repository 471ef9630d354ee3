//! The evidence of a run in every view (issue 16): for each way a run is refused — a hook
//! veto, a governance refusal, a failed tool call with its output, an unmocked host tool, a
//! trigger-signature rejection, an advance with no edge — the fixture workspace
//! `tests/fixtures/evidence` has one failing case, and the reason must appear in the
//! default narration (without `--verbose`), in `--json` (`results[].evidence`), and in the
//! HTML report (escaped). One step numbering: people see "step 1" for `steps[0]`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers"
)]

use std::path::PathBuf;

use serde_json::Value;
use wfx_runner::cli::{CliContext, TestOptions, run_cli_with};
use wfx_runner::clock::FixedClock;
use wfx_runner::report_html::esc;

fn ws() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence")
}

fn run(opts: &TestOptions) -> (i32, String, String) {
    let clock = FixedClock::default();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_cli_with(
        opts,
        &ws(),
        &CliContext {
            clock: &clock,
            model: None,
        },
        &mut out,
        &mut err,
    );
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

fn pay(filter: Option<&str>) -> TestOptions {
    TestOptions {
        target: Some("pay".into()),
        filter: filter.map(str::to_owned),
        ..Default::default()
    }
}

/// (case id, a reason that must be shown, the state it happened in, the evidence kind).
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "hook-veto",
        "Payments over 1000 EUR need a second approver.",
        "start",
        "hook",
    ),
    (
        "governance",
        "Blocked by governance (tool.forbidden-here): `erp_delete_vendor` is denied by the `tools.forbid` of state `start`.",
        "start",
        "tool-call",
    ),
    (
        "failed-tool",
        "no such file or folder: scratchpad/invoice-7.json",
        "start",
        "tool-call",
    ),
    (
        "unmocked",
        "tool `erp_post_payment` is not available in the simulator",
        "start",
        "tool-call",
    ),
    (
        "signature",
        "the run finished without its returns: 'payment_id' was not set",
        "done",
        "note",
    ),
    (
        "no-edge",
        "'done' is not a transition of state 'start'; declared: pay.",
        "start",
        "tool-call",
    ),
];

/// The narration block of case `id` (from its header line to the next blank line).
fn block<'a>(err: &'a str, id: &str) -> &'a str {
    let start = err
        .find(&format!("\n  {id} · "))
        .unwrap_or_else(|| panic!("no narration for {id}:\n{err}"));
    let rest = &err[start + 1..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn the_default_narration_shows_the_reason_of_each_failure() {
    let (code, _, err) = run(&pay(None));
    assert_eq!(code, 1, "{err}");
    for (id, reason, _, _) in CASES {
        let b = block(&err, id);
        assert!(b.contains("✖ failed"), "{id} should fail:\n{b}");
        assert!(
            b.contains("why (--verbose for the whole record):"),
            "{id}:\n{b}"
        );
        assert!(b.contains(reason), "{id}: `{reason}` missing in\n{b}");
        // One step numbering: the action is steps[0], shown as step 1.
        assert!(b.contains("step 1 · in "), "{id}:\n{b}");
        assert!(!b.contains("step 0"), "{id}:\n{b}");
    }
    // The hook veto names the hook and the state whose entry it refused, not only the
    // refused advance.
    assert!(
        block(&err, "hook-veto")
            .contains("before hook hooks/limit.js of pay: veto: Payments over 1000 EUR"),
        "{err}"
    );
    // A failed tool's output is its reason, printed on the call's line.
    assert!(
        block(&err, "failed-tool").contains(
            "tool read_file {\"file_path\":\"scratchpad/invoice-7.json\"} failed: no such file or folder"
        ),
        "{err}"
    );
}

#[test]
fn verbose_prints_the_whole_record_and_the_default_does_not() {
    let (_, _, quiet) = run(&pay(Some("signature")));
    assert!(!quiet.contains("user: Settle invoice 7"), "{quiet}");
    let (_, _, err) = run(&TestOptions {
        verbose: true,
        ..pay(Some("signature"))
    });
    for want in [
        "evidence (10 entries):",
        "step 1 · in start · user: Settle invoice 7 (10 EUR).",
        "step 1 · in start · trail trigger → start (settle)",
        "step 1 · in start · before hook hooks/limit.js of pay: ok",
        "step 1 · in pay · tool archmax_set_variables {\"variables\":{\"payment_id\":7}} failed: archmax_set_variables rejected: 'payment_id' must be string, got 7",
        "step 1 · in done · assistant: Settled.",
        "│ Advanced to state 'done'.",
    ] {
        assert!(err.contains(want), "`{want}` missing in\n{err}");
    }
    // No blank state names anywhere in the flow line.
    assert!(err.contains("    start → pay → done ⛔"), "{err}");
}

#[test]
fn the_json_carries_the_evidence_after_the_reference_keys() {
    let (_, out, _) = run(&TestOptions {
        json: true,
        ..pay(None)
    });
    let v: Value = serde_json::from_str(&out).unwrap();
    let results = v["results"].as_array().unwrap();
    for (id, reason, state, kind) in CASES {
        let r = results
            .iter()
            .find(|r| r["id"] == *id)
            .unwrap_or_else(|| panic!("no result {id}"));
        let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys.last(), Some(&"evidence"), "{id}: {keys:?}");
        // The reference's 0-based `records[].step` is untouched.
        assert_eq!(r["records"][0]["step"], 1, "{id}");
        let ev = r["evidence"].as_array().unwrap();
        let hit = ev
            .iter()
            .find(|e| {
                e["kind"] == *kind
                    && [&e["reason"], &e["output"], &e["text"]]
                        .iter()
                        .any(|f| f.as_str().is_some_and(|s| s.contains(reason)))
            })
            .unwrap_or_else(|| panic!("{id}: no {kind} entry with `{reason}` in {ev:#?}"));
        assert_eq!(hit["state"], *state, "{id}");
        assert_eq!(hit["stepNumber"], 1, "{id}");
    }
    let veto = results.iter().find(|r| r["id"] == "hook-veto").unwrap();
    let hook = veto["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "hook")
        .unwrap();
    assert_eq!(hook["verdict"], "veto");
    assert_eq!(hook["phase"], "before");
    assert_eq!(hook["of"], "pay");
    let gov = results.iter().find(|r| r["id"] == "governance").unwrap();
    let call = gov["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "tool-call")
        .unwrap();
    assert_eq!(call["kind"], "tool-call", "{gov:#}");
    assert_eq!(call["status"], "rejected");
    assert_eq!(call["input"]["vendor"], 3);
    // A refused advance is a completed call in the reference's view, a rejection here.
    let edge = results.iter().find(|r| r["id"] == "no-edge").unwrap();
    assert!(
        edge["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["tool"] == "archmax_advance" && e["status"] == "rejected"),
        "{edge:#}"
    );
}

#[test]
fn the_html_report_shows_each_reason_by_state_and_in_the_transcript() {
    let out = tempfile::tempdir().unwrap();
    let (_, _, err) = run(&TestOptions {
        reporters: vec!["html".into()],
        out_dir: Some(out.path().to_path_buf()),
        ..pay(None)
    });
    let html = std::fs::read_to_string(out.path().join("report.html"))
        .unwrap_or_else(|e| panic!("{e}\n{err}"));
    if let Ok(file) = std::env::var("WFX_REPORT_HTML_OUT") {
        // The browser check (check-report.sh --evidence) loads exactly this page and, for each
        // case, selects the state on the graph and looks for the reason (`<file>.expect.json`).
        std::fs::write(&file, &html).unwrap();
        let expect: Vec<Value> = CASES
            .iter()
            .map(|(id, reason, state, _)| serde_json::json!({ "id": id, "reason": reason, "state": state }))
            .collect();
        std::fs::write(
            format!("{file}.expect.json"),
            Value::from(expect).to_string(),
        )
        .unwrap();
    }
    for (id, reason, state, _) in CASES {
        let section = html
            .split("<details class=\"case ")
            .skip(1)
            .find(|c| {
                c.lines()
                    .nth(1)
                    .is_some_and(|l| l.contains(&format!("<code>{}</code>", esc(id))))
            })
            .unwrap_or_else(|| panic!("no case {id}"));
        assert!(section.contains(&esc(reason)), "{id}: no `{reason}`");
        assert!(
            section.contains("<details class=\"transcript\" open>"),
            "{id}"
        );
        // The state's block, which the graph label and the legend link to.
        let state_block = format!("<summary><code>{}</code> · ", esc(state));
        let at = section
            .find(&state_block)
            .unwrap_or_else(|| panic!("{id}: no block for {state}"));
        let id_at = section[..at].rfind("id=\"").unwrap();
        let anchor: String = section[id_at + 4..]
            .chars()
            .take_while(|c| *c != '"')
            .collect();
        assert!(
            section.contains(&format!("<a href=\"#{anchor}\">")),
            "{id}: nothing links to #{anchor}"
        );
        let block_end = section[at..].find("</details>").unwrap() + at;
        assert!(
            section[at..block_end].contains(&esc(reason)),
            "{id}: `{reason}` is not in the block of {state}"
        );
    }
    // Steps are numbered from 1 in the page.
    assert!(html.contains("<ol class=\"steps\" start=\"1\">"));
    assert!(html.contains("numbered from 1"));
}

#[test]
fn the_junit_failure_says_why() {
    let out = tempfile::tempdir().unwrap();
    let (_, _, err) = run(&TestOptions {
        reporters: vec!["junit".into()],
        out_dir: Some(out.path().to_path_buf()),
        ..pay(None)
    });
    let xml = std::fs::read_to_string(out.path().join("junit.xml"))
        .unwrap_or_else(|e| panic!("{e}\n{err}"));
    for (id, reason, _, _) in CASES {
        let start = xml
            .find(&format!("name=\"{id} · "))
            .unwrap_or_else(|| panic!("no testcase {id}"));
        let end = xml[start..].find("</testcase>").unwrap() + start;
        let case = &xml[start..end];
        assert!(case.contains("\nwhy:\n  step 1 · in "), "{id}: {case}");
        assert!(
            case.contains(&wfx_runner::report::xml(reason)),
            "{id}: `{reason}` not in {case}"
        );
    }
}

#[test]
fn the_markdown_report_says_why_each_case_failed() {
    let out = tempfile::tempdir().unwrap();
    let (_, _, err) = run(&TestOptions {
        reporters: vec!["markdown".into()],
        out_dir: Some(out.path().to_path_buf()),
        ..pay(None)
    });
    let md = std::fs::read_to_string(out.path().join("report.md"))
        .unwrap_or_else(|e| panic!("{e}\n{err}"));
    let failures = md
        .split("### Failures")
        .nth(1)
        .unwrap_or_else(|| panic!("no failures section:\n{md}"));
    for (id, reason, state, _) in CASES {
        let head = format!("**{}**", wfx_runner::report::md(id));
        let start = failures
            .find(&head)
            .unwrap_or_else(|| panic!("no failure block for {id}:\n{md}"));
        let rest = &failures[start + head.len()..];
        let block = &rest[..rest.find("\n**").unwrap_or(rest.len())];
        assert!(block.contains("\nWhy:\n"), "{id}: no why in\n{block}");
        let line = format!("- step 1 · in {} · ", wfx_runner::report::md(state));
        assert!(block.contains(&line), "{id}: no `{line}` in\n{block}");
        assert!(
            block.contains(&wfx_runner::report::md(reason)),
            "{id}: `{reason}` missing in\n{block}"
        );
        // No blank state names in the flow.
        assert!(block.contains("State flow: "), "{id}:\n{block}");
        assert!(
            !block.contains("→  ") && !block.contains(" ·  "),
            "{id}:\n{block}"
        );
    }
}
