//! CLI snapshots on the runner's fixture workspace (tests/fixtures/ws): human narration,
//! `--json` and JUnit, exit codes, the filter and disabled rules, reporters under `--out`.

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
use wfx_runner::grade::ModelConfig;

fn ws() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ws")
}

fn run_in(
    cwd: &std::path::Path,
    opts: &TestOptions,
    model: Option<ModelConfig>,
) -> (i32, String, String) {
    let clock = FixedClock::default();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = run_cli_with(
        opts,
        cwd,
        &CliContext {
            clock: &clock,
            model,
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

fn run(opts: &TestOptions) -> (i32, String, String) {
    run_in(&ws(), opts, None)
}

fn shop(skip_grades: bool) -> TestOptions {
    TestOptions {
        target: Some("shop".into()),
        skip_grades,
        ..Default::default()
    }
}

#[test]
fn human_output() {
    let (code, out, err) = run(&shop(true));
    insta::assert_snapshot!(
        "human",
        format!("exit {code}\n--- stdout\n{out}--- stderr\n{err}")
    );
}

#[test]
fn json_output() {
    let (code, out, _) = run(&TestOptions {
        json: true,
        ..shop(true)
    });
    assert_eq!(code, 1);
    insta::assert_snapshot!("json", out);
}

#[test]
fn junit_and_markdown_reporters_and_history() {
    let out_dir = tempfile::tempdir().unwrap();
    let opts = TestOptions {
        reporters: vec!["junit".into(), "markdown".into()],
        out_dir: Some(out_dir.path().to_path_buf()),
        ..shop(true)
    };
    let (code, _, _) = run(&opts);
    assert_eq!(code, 1);
    let junit = std::fs::read_to_string(out_dir.path().join("junit.xml")).unwrap();
    insta::assert_snapshot!("junit", junit);
    let md = std::fs::read_to_string(out_dir.path().join("report.md")).unwrap();
    assert!(md.contains("| never-advances | ✖ failed |"), "{md}");
    run(&opts);
    let history = std::fs::read_to_string(out_dir.path().join("history.jsonl")).unwrap();
    let rows: Vec<Value> = history
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["total"], 11);
    assert_eq!(rows[0]["skipped"], 1);
}

#[test]
fn the_json_follows_the_reference_shape() {
    let (_, out, _) = run(&TestOptions {
        json: true,
        ..shop(true)
    });
    let v: Value = serde_json::from_str(&out).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["workflow", "results", "exitCode", "discovered"]);
    let broken = &v["results"][0];
    assert_eq!(broken["id"], "workflows/shop/tests/broken.test.yaml");
    assert!(broken.get("title").is_none() && broken.get("sessionId").is_none());
    assert_eq!(broken["records"], serde_json::json!([]));
    assert_eq!(broken["evidence"], serde_json::json!([]));
    let decide = &v["results"][1];
    let keys: Vec<&str> = decide
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "title",
            "description",
            "sessionId",
            "verdict",
            "records",
            // Ours (issue 16), after the reference's keys: what happened, step by step.
            "evidence"
        ]
    );
    let rec_keys: Vec<&str> = decide["records"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(rec_keys, ["kind", "threshold", "status", "detail", "step"]);
}

#[test]
fn grades_without_a_model_fail_with_the_reason() {
    let (_, out, _) = run(&TestOptions {
        json: true,
        filter: Some("graded".into()),
        ..shop(false)
    });
    let v: Value = serde_json::from_str(&out).unwrap();
    let rec = &v["results"][0]["records"][0];
    assert_eq!(rec["kind"], "grade.closedQA");
    assert_eq!(rec["status"], "failed");
    assert_eq!(rec["score"], 0.0);
    assert_eq!(rec["threshold"], 0.5);
    assert!(
        rec["detail"]
            .as_str()
            .unwrap()
            .contains("set ARCHMAX_API_BASE_URL and ARCHMAX_MODEL"),
        "{rec}"
    );
    assert!(
        v["results"][0]["verdict"]["failures"][0]
            .as_str()
            .unwrap()
            .ends_with("(score 0 < 0.5)")
    );
    // A model is configured but this build has no client: still a failure that says so.
    let (_, out, _) = run_in(
        &ws(),
        &TestOptions {
            json: true,
            filter: Some("graded".into()),
            ..shop(false)
        },
        Some(ModelConfig {
            base_url: "http://x".into(),
            model: "m".into(),
        }),
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["results"][0]["records"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("no model client")
    );
    // --skip-grades: not executed, and the case passes.
    let (code, out, _) = run(&TestOptions {
        json: true,
        filter: Some("graded".into()),
        ..shop(true)
    });
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["results"][0]["records"][0]["status"], "not-executed");
    assert_eq!(v["results"][0]["verdict"]["status"], "passed");
    assert_eq!(code, 0);
}

#[test]
fn filters_disabled_suites_and_usage_errors() {
    let (code, out, err) = run(&TestOptions {
        filter: Some("nothing-like-this".into()),
        ..shop(true)
    });
    assert_eq!(code, 1);
    assert_eq!(out, "0 passed, 0 failed, 0 skipped\n");
    assert!(
        err.contains("Error: no cases matched 'nothing-like-this' (11 discovered)"),
        "{err}"
    );
    let (code, out, err) = run(&TestOptions {
        target: Some("off".into()),
        ..Default::default()
    });
    assert_eq!(
        (code, out.as_str()),
        (0, "suite skipped — disabled\n"),
        "{err}"
    );
    let (code, out, _) = run(&TestOptions {
        target: Some("off".into()),
        json: true,
        ..Default::default()
    });
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"workflow": "off", "results": [], "exitCode": 0, "discovered": 0, "skipped": "disabled"})
    );
    let (code, _, err) = run(&TestOptions {
        target: Some("nope".into()),
        ..Default::default()
    });
    assert_eq!(code, 2);
    assert!(
        err.starts_with("Error: no workflow or path `nope`"),
        "{err}"
    );
    let (code, _, _) = run(&TestOptions {
        reporters: vec!["pdf".into()],
        ..shop(true)
    });
    assert_eq!(code, 2);
    // A case file as the target runs that case only.
    let (code, out, _) = run(&TestOptions {
        target: Some("workflows/shop/tests/raise.test.yaml".into()),
        skip_grades: true,
        ..Default::default()
    });
    assert_eq!((code, out.as_str()), (0, "1 passed, 0 failed, 0 skipped\n"));
}

#[test]
fn max_concurrency_above_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wf = dir.path().join("workflows/w");
    std::fs::create_dir_all(wf.join("tests")).unwrap();
    std::fs::write(
        wf.join("workflow.yaml"),
        "tests: { maxConcurrency: 2 }\nstates:\n  s:\n    triggers: { manual: }\n",
    )
    .unwrap();
    let (code, _, err) = run_in(dir.path(), &TestOptions::default(), None);
    assert_eq!(code, 1);
    assert!(err.contains("Error: 'tests.maxConcurrency' is 2"), "{err}");
}

/// Issue 13 / FORMAT §C.2 step 6: the cases of a workflow that `check` rejects are not
/// run; the first error is named with a pointer to `wfx-lsp check`.
#[test]
fn a_workflow_with_an_error_runs_no_case() {
    for (spec, code, wanted) in [
        (
            "nmae: typo\nstates:\n  s:\n    triggers: { manual: }\n",
            "WFX",
            "1:1 ",
        ),
        (
            "states:\n  s:\n    triggers: { manual: }\n    transitions:\n      - to: nowhere\n",
            "WFX",
            "5:",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let wf = dir.path().join("workflows/w");
        std::fs::create_dir_all(wf.join("tests")).unwrap();
        std::fs::write(wf.join("workflow.yaml"), spec).unwrap();
        std::fs::write(
            wf.join("tests/a.test.yaml"),
            "title: Would run\ndescription: d\nsteps:\n  - send: hi\n",
        )
        .unwrap();
        let (exit, out, err) = run_in(dir.path(), &TestOptions::default(), None);
        assert_eq!(exit, 1, "{spec}: {out}{err}");
        assert!(
            err.contains("Error: Cannot load workflow 'w' (workflows/w/workflow.yaml): "),
            "{err}"
        );
        assert!(err.contains(wanted) && err.contains(code), "{spec}: {err}");
        assert!(
            err.contains("Run 'wfx-lsp check workflows/w' for details."),
            "{err}"
        );
        assert!(!out.contains("Would run"), "{out}");
    }
}

#[test]
fn bail_stops_after_the_first_failing_case() {
    let (code, out, _) = run(&TestOptions {
        bail: true,
        json: true,
        ..shop(true)
    });
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
}

#[test]
fn output_is_deterministic() {
    assert_eq!(
        run(&TestOptions {
            json: true,
            ..shop(true)
        }),
        run(&TestOptions {
            json: true,
            ..shop(true)
        })
    );
}

/// Characters a terminal or a report reader would act on, in a workflow folder name, a case
/// title and an assertion's text (issue 12): the narration shows them as visible escapes,
/// JUnit stays well-formed XML with no markup from the input, Markdown has no raw HTML,
/// code span or table break, and `history.jsonl` stays one JSON row per line.
/// Copies the folder `from` into `to`, recursively (regular files and folders only).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let t = e.file_type().unwrap();
        if t.is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else if t.is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn hostile_names_and_titles_are_inert_in_every_output() {
    let tmp = tempfile::tempdir().unwrap();
    // A hostile workflow folder name is a WFX341 error, so the run is refused: the refusal
    // is inert too. The reports are then exercised through a hostile case file name.
    let slug = "sh\u{1b}[2Jop|`x`\n::error <b>";
    let name = "h\u{1b}[2Jop|`x`\n::error <b>";
    let bad_dir = tmp.path().join("workflows").join(slug);
    std::fs::create_dir_all(bad_dir.join("tests")).unwrap();
    std::fs::copy(
        ws().join("workflows/shop/workflow.yaml"),
        bad_dir.join("workflow.yaml"),
    )
    .unwrap();
    std::fs::write(
        bad_dir.join("tests/a.test.yaml"),
        "title: A\ndescription: d\nsteps:\n  - send: hi\n",
    )
    .unwrap();
    let refused = TestOptions {
        target: Some(format!("workflows/{slug}")),
        ..Default::default()
    };
    let (code, out, err) = run_in(tmp.path(), &refused, None);
    assert_eq!(code, 1, "{err}");
    let raw = |s: &str| {
        s.chars()
            .find(|&c| wfx_schemas::inert::is_unsafe(c) && c != '\n')
    };
    assert_eq!(raw(&err), None, "{err:?}");
    assert_eq!(raw(&out), None, "{out:?}");
    assert!(
        err.contains("Cannot load workflow 'sh\\u{1b}[2Jop|`x`\\n::error <b>'"),
        "{err}"
    );
    assert!(!err.lines().any(|l| l.starts_with("::error")), "{err}");
    std::fs::remove_dir_all(&bad_dir).unwrap();

    copy_tree(&ws(), tmp.path());
    let dir = tmp.path().join("workflows/shop");
    let tests = dir.join("tests");
    std::fs::create_dir_all(&tests).unwrap();
    let shop = ws().join("workflows/shop");
    std::fs::copy(shop.join("workflow.yaml"), dir.join("workflow.yaml")).unwrap();
    std::fs::copy(
        shop.join("tests/never-advances.agent.yaml"),
        tests.join(format!("{name}.agent.yaml")),
    )
    .unwrap();
    std::fs::write(
        tests.join(format!("{name}.test.yaml")),
        concat!(
            "description: The agent's reply is checked for text it does not hold.\n",
            "title: \"T\\e[2J\\e]8;;http://x\\a|`md`|<script>\\e]52;c;aGk=\\a\\u202E\"\n",
            "steps:\n",
            "  - send: \"How many A1 are in stock?\"\n",
            "  - reply: { includes: \"</textarea>\\\"]]>--> \\e[31m\\x9b31m\\n::error file=x::pwned\" }\n",
        ),
    )
    .unwrap();
    let out_dir = tmp.path().join("out");
    let opts = TestOptions {
        target: Some("shop".into()),
        filter: Some(name.to_owned()),
        reporters: vec!["junit".into(), "markdown".into()],
        out_dir: Some(out_dir.clone()),
        skip_grades: true,
        ..Default::default()
    };
    let (code, out, err) = run_in(tmp.path(), &opts, None);
    assert_eq!(code, 1, "{err}");
    // The narration: every control character visible, none raw.
    assert_eq!(raw(&err), None, "{err:?}");
    assert_eq!(raw(&out), None, "{out:?}");
    assert!(
        err.contains(
            "T\\u{1b}[2J\\u{1b}]8;;http://x\\u{7}|`md`|<script>\\u{1b}]52;c;aGk=\\u{7}\\u{202e}"
        ),
        "{err}"
    );
    assert!(err.contains("h\\u{1b}[2Jop|`x`\\n::error <b>"), "{err}");
    assert!(!err.lines().any(|l| l.starts_with("::error")), "{err}");

    let junit = std::fs::read_to_string(out_dir.join("junit.xml")).unwrap();
    assert_eq!(raw(&junit), None, "{junit:?}");
    for bad in ["<script", "</textarea", "<b>", "\"]]>", "-->"] {
        assert!(!junit.contains(bad), "{bad} in {junit}");
    }
    assert!(junit.contains("&lt;script&gt;"), "{junit}");
    assert!(junit.contains("&quot;]]&gt;--&gt;"), "{junit}");
    // Well-formed enough: every tag we opened is closed, and only our tags exist.
    let tags: Vec<&str> = junit
        .split('<')
        .skip(1)
        .map(|t| t.split([' ', '>', '/']).next().unwrap())
        .collect();
    for t in &tags {
        assert!(
            [
                "?xml",
                "",
                "testsuites",
                "testsuite",
                "testcase",
                "failure",
                "error",
                "system-out",
                "skipped"
            ]
            .contains(t),
            "tag {t:?} in {junit}"
        );
    }

    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert_eq!(raw(&md), None, "{md:?}");
    for bad in ["<script", "</textarea", "<b>", "`x`", "|`", "\n::error"] {
        assert!(!md.contains(bad), "{bad} in {md}");
    }
    assert!(md.contains("h\\\\u{1b}\\[2Jop\\|\\`x\\`"), "{md}");
    // Each table row keeps its five cells.
    for row in md.lines().filter(|l| l.starts_with("| ")) {
        assert_eq!(row.matches(" | ").count(), 4, "{row}");
    }

    let history = std::fs::read_to_string(out_dir.join("history.jsonl")).unwrap();
    assert_eq!(history.lines().count(), 1, "{history}");
    let row: Value = serde_json::from_str(history.trim_end()).unwrap();
    assert_eq!(row["workflows"][0], "shop");
}

#[test]
fn github_command_prefixes_in_names_and_titles_start_no_command() {
    // Inert output (docs/security.md §5): a case file named `::error …` and a title
    // holding `##[error]` printed raw in the narration would make GitHub Actions run a
    // workflow command; `wfx_schemas::inert` neutralises both prefixes.
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&ws(), tmp.path());
    let tests = tmp.path().join("workflows/shop/tests");
    let name = "::error title=pwned::x";
    std::fs::copy(
        ws().join("workflows/shop/tests/never-advances.agent.yaml"),
        tests.join(format!("{name}.agent.yaml")),
    )
    .unwrap();
    std::fs::write(
        tests.join(format!("{name}.test.yaml")),
        "title: \"##[error]boom\"\ndescription: d\nsteps:\n  - send: hi\n",
    )
    .unwrap();
    let opts = TestOptions {
        target: Some("workflows/shop".to_owned()),
        skip_grades: true,
        ..Default::default()
    };
    // The narration is on stderr.
    let (_, out, err) = run_in(tmp.path(), &opts, None);
    assert!(err.contains("\\u{3a}:error title=pwned::x"), "{err}");
    assert!(err.contains("\\u{23}#[error]boom"), "{err}");
    for line in out.lines().chain(err.lines()) {
        assert!(!line.trim_start().starts_with("::"), "{line}");
        assert!(!line.contains("##["), "{line}");
    }
}
