//! The offline HTML report (`wfx-lsp test --reporter html`, issue 7 item 4) on the example
//! workspace (tests/corpus/customer-support, `--skip-grades`, the QuickJS sandbox): its
//! structure (every case, one graph per case, no network URLs, the CSP), the path lit per
//! case ([`wfx_runner::path::case_path`] from the real trails), byte-for-byte determinism
//! under a fixed clock, and HTML escaping of user strings. The browser check of the same
//! file lives in `runner/tests/browser/check-report.sh`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers"
)]

use std::path::{Path, PathBuf};

use wfx_runner::cli::{CliContext, TestOptions, run_cli_with};
use wfx_runner::clock::FixedClock;
use wfx_runner::disk::DiskFiles;
use wfx_runner::path::case_path;
use wfx_runner::suite::{RunOptions, run_workflow};
use wfx_schemas::workspace::WorkflowDir;

fn corpus() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/customer-support");
    assert!(
        p.join("workflows/order-lookup/tests").is_dir(),
        "the example corpus is missing at {}",
        p.display()
    );
    p
}

/// Runs `wfx-lsp test order-lookup --skip-grades --reporter html --out <tmp>` in `ws` and
/// returns the exit code and `report.html`.
fn report(ws: &Path) -> (i32, String) {
    let (code, html, _) = report_with(ws, false);
    (code, html)
}

/// [`report`], with `--coverage` when `coverage`; also returns `coverage.json` (or "").
fn report_with(ws: &Path, coverage: bool) -> (i32, String, String) {
    let out = tempfile::tempdir().unwrap();
    let clock = FixedClock::default();
    let opts = TestOptions {
        target: Some("order-lookup".into()),
        skip_grades: true,
        reporters: vec!["html".into()],
        out_dir: Some(out.path().to_path_buf()),
        coverage,
        ..Default::default()
    };
    let (mut so, mut se) = (Vec::new(), Vec::new());
    let code = run_cli_with(
        &opts,
        ws,
        &CliContext {
            clock: &clock,
            model: None,
        },
        &mut so,
        &mut se,
    );
    let html = std::fs::read_to_string(out.path().join("report.html")).unwrap_or_else(|e| {
        panic!(
            "no report.html ({e}); stderr:\n{}",
            String::from_utf8_lossy(&se)
        )
    });
    let json = std::fs::read_to_string(out.path().join("coverage.json")).unwrap_or_default();
    (code, html, json)
}

fn case_ids(ws: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(ws.join("workflows/order-lookup/tests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".test.yaml").map(str::to_owned))
        .collect();
    ids.sort();
    ids
}

/// Values of `name="…"` attributes in `html`.
fn attr_values<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let needle = format!(" {name}=\"");
    html.match_indices(&needle)
        .map(|(i, _)| {
            let rest = &html[i + needle.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect()
}

#[test]
fn example_suite_report_has_every_case_with_its_graph_and_nothing_external() {
    let ws = corpus();
    let (code, html) = report(&ws);
    if let Ok(file) = std::env::var("WFX_REPORT_HTML_OUT") {
        // The browser check (check-report.sh --example) loads exactly this file.
        std::fs::write(&file, &html).unwrap();
    }
    assert_eq!(code, 0, "the example suite passes");
    let ids = case_ids(&ws);
    assert_eq!(ids.len(), 9, "{ids:?}");
    for id in &ids {
        assert!(
            html.contains(&format!("<code>{id}</code>")),
            "case {id} missing"
        );
    }
    assert_eq!(
        html.matches("<details class=\"case ").count(),
        ids.len(),
        "one section per case"
    );
    assert_eq!(
        html.matches("<svg").count(),
        ids.len(),
        "one graph per case"
    );
    assert_eq!(html.matches("</svg>").count(), ids.len());
    assert!(html.starts_with("<!DOCTYPE html>"));
    // The CSP names one nonce; every style element carries it, nothing is 'unsafe-inline'
    // but style attributes.
    let meta = html
        .split("<meta http-equiv=\"Content-Security-Policy\" content=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap();
    let nonce = meta
        .split("'nonce-")
        .nth(1)
        .and_then(|r| r.split('\'').next())
        .unwrap();
    assert_eq!(nonce.len(), 32, "{meta}");
    assert!(nonce.bytes().all(|b| b.is_ascii_hexdigit()), "{meta}");
    assert_eq!(
        meta,
        wfx_runner::report_html::csp(nonce),
        "the CSP of the page"
    );
    assert!(
        meta.contains(&format!("script-src 'nonce-{nonce}'")),
        "{meta}"
    );
    assert!(!meta.contains("script-src 'unsafe-inline'"), "{meta}");
    assert!(!meta.contains("style-src 'unsafe-inline'"), "{meta}");
    let styles = html.matches("<style").count();
    assert!(styles > 1, "the page style and one per graph");
    assert_eq!(
        html.matches(&format!("<style nonce=\"{nonce}\">")).count(),
        styles,
        "every style element carries the nonce"
    );
    for name in ["src", "href", "xlink:href", "action"] {
        for v in attr_values(&html, name) {
            assert!(
                !v.contains("http://") && !v.contains("https://") && !v.starts_with("//"),
                "external {name}: {v}"
            );
        }
    }
    assert!(!html.contains("<script"), "no script needed");
    assert!(!html.contains("<link"), "no external styles");
    assert!(!html.contains("@import"), "no imported styles");
    assert!(!html.contains("<?xml"), "the SVG prolog is stripped");
    // Metadata: version, workflow, spec hash (sha256 of workflow.yaml), duration, date.
    assert!(html.contains(&format!("wfx-lsp {}", env!("CARGO_PKG_VERSION"))));
    assert!(
        html.contains("2026-01-01 00:00:00 UTC"),
        "date from the clock"
    );
    let spec = std::fs::read(ws.join("workflows/order-lookup/workflow.yaml")).unwrap();
    let hash = wfx_runner::report_html::sha256_hex(&spec);
    assert!(html.contains(&format!("sha256 {hash}")));
    assert!(html.contains("<span class=\"n passed\">9 passed</span>"));
    // --skip-grades shows grades as skipped, not as failures.
    assert!(html.contains("skipped (--skip-grades)"));
    // Per-case ids inside the SVGs are distinct (one document, several graphs).
    let ids_in_doc = attr_values(&html, "id");
    let mut dedup = ids_in_doc.clone();
    dedup.sort_unstable();
    dedup.dedup();
    assert_eq!(dedup.len(), ids_in_doc.len(), "duplicate element ids");
}

#[test]
fn report_bytes_are_deterministic_for_a_fixed_clock() {
    let ws = corpus();
    let (_, a) = report(&ws);
    let (_, b) = report(&ws);
    assert!(a == b, "two runs differ");
}

#[test]
fn each_case_graph_lights_the_path_its_trail_took() {
    let ws = corpus();
    let fs = DiskFiles::new(&ws);
    let clock = FixedClock::default();
    let host = || -> Box<dyn wfx_runner::script_host::ScriptHost> {
        Box::new(wfx_runner::sandbox::QuickJsHost::default())
    };
    let mut ro = RunOptions::new(&fs, &clock);
    ro.grades.skip = true;
    ro.script_host = Some(&host);
    ro.filter = Some("refund-denied".into());
    let dir = WorkflowDir {
        root: String::new(),
        slug: "order-lookup".into(),
    };
    let run = run_workflow(&ro, &dir, &mut |_| {}).unwrap();
    let [case] = run.cases.as_slice() else {
        panic!("one case expected, got {}", run.cases.len())
    };
    let path = case_path(case);
    let entry = path.edges.first().cloned().unwrap();
    assert_eq!(entry.0, "__start__");
    // refund-denied: reaches refund-request and refund-review during step 1 (send,
    // `steps[0]`) and refund-closed during step 6 (decide, `steps[5]`): 1-based, as people
    // count.
    assert_eq!(path.reached.get("refund-request"), Some(&1), "{path:?}");
    assert_eq!(path.reached.get("refund-review"), Some(&1), "{path:?}");
    assert_eq!(path.reached.get("refund-closed"), Some(&6), "{path:?}");
    assert!(
        path.edges
            .contains(&("refund-review".into(), "refund-closed".into())),
        "{path:?}"
    );
    // The report's SVG of that case carries the same step marks.
    let (_, html) = report(&ws);
    let start = html.find("id=\"case-0-").unwrap();
    let section = &html[html[start..]
        .find("refund-denied")
        .map(|i| start + i)
        .unwrap()..];
    let section = &section[..section.find("</figure>").unwrap()];
    assert!(section.contains("refund-closed (end) @6"), "{section}");
    assert!(section.contains("refund-review (human) @1"), "{section}");
    // Each lit state label links to what happened there.
    assert!(
        section.contains("-s1\"><text dominant-baseline"),
        "no state link in {section}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A case whose title carries markup and whose structural assertion fails: the title is
/// escaped, the failed step carries its detail, the steps after the halt are not executed.
#[test]
fn failing_case_with_markup_in_its_title_is_escaped_and_detailed() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&corpus(), tmp.path());
    let case = tmp
        .path()
        .join("workflows/order-lookup/tests/refund-denied.test.yaml");
    let text = std::fs::read_to_string(&case).unwrap();
    let text = text.replace(
        "title: Refund denied for an undelivered order",
        "title: \"<script>x</script></textarea>\\\"]]>--><style> & <img src=x>\"",
    );
    assert!(text.contains("<script>"));
    let text = text.replace(
        "  - reachedState: refund-review\n",
        "  - reachedState: escalation\n",
    );
    assert!(text.contains("reachedState: escalation"));
    std::fs::write(&case, text).unwrap();
    let (code, html) = report(tmp.path());
    if let Ok(file) = std::env::var("WFX_REPORT_HTML_FAILING_OUT") {
        std::fs::write(&file, &html).unwrap();
    }
    assert_eq!(code, 1);
    assert!(html.contains("<span class=\"n failed\">1 failed</span>"));
    let start = html.find("<details class=\"case failed\"").unwrap();
    let section = &html[start..];
    let section = &section[..section.find("</details>").unwrap()];
    assert!(
        section.contains("<li class=\"failed\"><span class=\"mark\" title=\"failed\">✖</span> <code class=\"key\">reachedState</code> <span class=\"arg\">escalation</span>"),
        "{section}"
    );
    assert!(
        section.contains("reachedState: "),
        "failure detail shown: {section}"
    );
    assert!(
        section.contains("<code class=\"key\">decide</code> <span class=\"arg\">"),
        "{section}"
    );
    assert!(
        section.matches("title=\"not executed\"").count() >= 3,
        "reply, decide and succeeded after the halt: {section}"
    );
    assert!(!html.contains("<script"), "unescaped title");
    assert!(!html.contains("<img"), "unescaped title");
    assert!(!html.contains("</textarea"), "unescaped title");
    assert!(!html.contains("\"]]>"), "unescaped title");
    assert!(!html.contains("<style>"), "unescaped title");
    assert_eq!(
        html.matches("<style").count(),
        html.matches("<style nonce=\"").count(),
        "only our style elements, each with the nonce"
    );
    assert!(html.contains(
        "&lt;script&gt;x&lt;/script&gt;&lt;/textarea&gt;&quot;]]&gt;--&gt;&lt;style&gt; &amp; &lt;img src=x&gt;"
    ));
}

/// `--coverage` adds one coverage section per workflow: its ratios, the uncovered names,
/// and one more graph where each uncovered state (from `coverage.json`) is labelled
/// `(not covered)` and drawn red while covered ones are blue; the page keeps its CSP (every
/// style with the nonce) and distinct ids.
#[test]
fn coverage_report_marks_covered_and_uncovered_elements_apart() {
    let ws = corpus();
    let (plain_code, plain, _) = report_with(&ws, false);
    assert_eq!(plain_code, 0);
    assert!(!plain.contains("class=\"coverage\""));
    let (code, html, json) = report_with(&ws, true);
    assert_eq!(code, 0);
    let c: serde_json::Value = serde_json::from_str(&json).unwrap();
    let states = c["workflows"][0]["states"].as_array().unwrap();
    let section = html
        .split("<details class=\"coverage\" id=\"coverage-0\" open>")
        .nth(1)
        .and_then(|r| r.split("</details>").next())
        .expect("a coverage section");
    assert_eq!(section.matches("<svg").count(), 1, "one coverage graph");
    let (mut covered, mut uncovered) = (0, 0);
    for s in states {
        let name = s["state"].as_str().unwrap();
        let n = s["cases"].as_array().unwrap().len();
        if n == 0 {
            uncovered += 1;
            assert!(
                section.contains(&format!("{name} (not covered)"))
                    || section.contains(&format!("{name} (end) (not covered)"))
                    || section.contains(&format!("{name} (human) (not covered)")),
                "{name} not marked uncovered"
            );
            assert!(
                section.contains(&format!("<code>{name}</code>")),
                "{name} not listed"
            );
        } else {
            covered += 1;
            assert!(section.contains(&format!(" ×{n}<")), "{name} ×{n}");
        }
    }
    assert!(covered > 0 && uncovered > 0);
    assert!(section.contains("#c62828"), "uncovered drawn red");
    assert!(section.contains("#1565c0"), "covered drawn blue");
    let nonce = html
        .split("'nonce-")
        .nth(1)
        .and_then(|r| r.split('\'').next())
        .unwrap();
    assert_eq!(
        html.matches(&format!("<style nonce=\"{nonce}\">")).count(),
        html.matches("<style").count()
    );
    let ids_in_doc = attr_values(&html, "id");
    let mut dedup = ids_in_doc.clone();
    dedup.sort_unstable();
    dedup.dedup();
    assert_eq!(dedup.len(), ids_in_doc.len(), "duplicate element ids");
}

/// A workspace in a temporary folder: one workflow `ring` of `states` states in a ring with
/// chords (every state leads to the next and to a far one, so the layout has crossings to
/// optimize), and `cases` one-line cases (no agent: each is "not run", with its graph).
fn ring_workspace(states: usize, cases: usize) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path().join("workflows/ring/tests");
    std::fs::create_dir_all(&dir).unwrap();
    let mut src = String::from("title: Ring\ninstructions: Go round.\nstates:\n");
    for i in 0..states {
        src.push_str(&format!(
            "  s{i}:\n{}    transitions:\n      - {{ to: s{}, description: next }}\n      - {{ to: s{}, description: jump }}\n",
            if i == 0 { "    triggers: { manual: }\n" } else { "" },
            (i + 1) % states,
            (i * 7 + 3) % states
        ));
    }
    std::fs::write(ws.path().join("workflows/ring/workflow.yaml"), src).unwrap();
    for c in 0..cases {
        std::fs::write(
            dir.join(format!("c{c:03}.test.yaml")),
            "steps: [{ send: hi }]\n",
        )
        .unwrap();
    }
    ws
}

/// Issue 24: the report laid the graph out again for every case (200 one-line cases of a
/// 63-state ring with chords: 27 s of CPU, each layout spending the whole crossing budget).
/// Now a workflow is laid out once and every case's path is drawn on that layout: one
/// layout for the suite (the example's nine cases, or 40 cases of the ring), plus one for
/// the coverage graph with `--coverage`.
#[test]
fn the_report_lays_each_workflow_out_once_whatever_its_cases() {
    use wfx_schemas::graph::layouts_on_this_thread;
    let ws = corpus();
    let before = layouts_on_this_thread();
    let (_, html) = report(&ws);
    assert_eq!(html.matches("<svg").count(), 9, "a graph per case");
    assert_eq!(
        layouts_on_this_thread() - before,
        1,
        "one layout for nine cases"
    );
    let before = layouts_on_this_thread();
    let (_, html, _) = report_with(&ws, true);
    assert_eq!(html.matches("<svg").count(), 10);
    assert_eq!(
        layouts_on_this_thread() - before,
        2,
        "the cases' layout and coverage's"
    );

    let ring = ring_workspace(63, 40);
    let out = tempfile::tempdir().unwrap();
    let clock = FixedClock::default();
    let opts = TestOptions {
        reporters: vec!["html".into()],
        out_dir: Some(out.path().to_path_buf()),
        ..Default::default()
    };
    let (mut so, mut se) = (Vec::new(), Vec::new());
    let before = layouts_on_this_thread();
    run_cli_with(
        &opts,
        ring.path(),
        &CliContext {
            clock: &clock,
            model: None,
        },
        &mut so,
        &mut se,
    );
    assert_eq!(
        layouts_on_this_thread() - before,
        1,
        "one layout for 40 cases"
    );
    let html = std::fs::read_to_string(out.path().join("report.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 40, "a graph per case");
    // Every case's graph has the one layout's geometry.
    let geometry = |svg: &str| -> Vec<String> {
        svg.split("<rect ")
            .skip(1)
            .map(|r| r.split(" fill=").next().unwrap_or("").to_owned())
            .collect()
    };
    let graphs: Vec<&str> = html.split("<svg ").skip(1).collect();
    let first = geometry(graphs[0]);
    assert_eq!(first.len(), 63, "a box per state");
    assert!(graphs.iter().all(|g| geometry(g) == first));
}
