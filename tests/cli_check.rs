//! `wfx-lsp check` through the built binary: every output format snapshotted (stdout and
//! exit code) on a small fixture workspace and on the customer-support corpus, `--fix`,
//! usage errors (exit 2) and `--help`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::path::Path;
use std::process::Command;

use support::*;

/// Runs the binary in `cwd`; returns (exit code, stdout, stderr).
fn run(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn shown(code: i32, stdout: &str) -> String {
    format!("exit: {code}\n--- stdout\n{stdout}")
}

/// The customer-support corpus plus four cases: a near-miss step with a fix, a duplicate
/// key with a related site, an error after emoji and CJK, and a valid one.
fn fixture() -> tempfile::TempDir {
    let tmp = corpus_copy();
    let tests = tmp.path().join("workflows/order-lookup/tests");
    let write = |name: &str, text: &str| std::fs::write(tests.join(name), text).unwrap();
    write(
        "typo.test.yaml",
        "title: Typo\ndescription: A near-miss step name.\nsteps:\n  - sned: hi\n",
    );
    write(
        "dup.test.yaml",
        "title: Dup\ntitle: Again\ndescription: Two titles.\nsteps:\n  - send: hi\n",
    );
    write(
        "wide.test.yaml",
        "title: Wide\ndescription: Emoji and CJK before the error.\nsteps: [{send: \"😀注文\"}, {sned: x}]\n",
    );
    write(
        "ok.test.yaml",
        "title: Fine\ndescription: A valid case.\nsteps:\n  - send: hi\n",
    );
    tmp
}

#[test]
fn fixture_in_every_format() {
    let ws = fixture();
    for format in ["human", "json", "github", "sarif"] {
        let (code, stdout, _) = run(ws.path(), &["check", "--format", format]);
        assert_eq!(code, 1, "{format}");
        if format == "sarif" {
            // The rule list follows the registry (checked here, not snapshotted, so a new
            // code does not churn the snapshot); the results are snapshotted.
            let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            let run = &v["runs"][0];
            assert_eq!(v["version"], "2.1.0");
            assert_eq!(run["columnKind"], "utf16CodeUnits");
            let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
            let codes = wfx_schemas::diagnostics::all_codes();
            assert_eq!(rules.len(), codes.len());
            for (rule, code) in rules.iter().zip(&codes) {
                assert_eq!(rule["id"], code.code);
                let help = rule["helpUri"].as_str().unwrap();
                assert!(
                    help.ends_with(&format!("docs/diagnostics.md#{}", code.code.to_lowercase())),
                    "{help}"
                );
            }
            for r in run["results"].as_array().unwrap() {
                assert_eq!(
                    rules[r["ruleIndex"].as_u64().unwrap() as usize]["id"],
                    r["ruleId"]
                );
            }
            // ruleIndex moves when codes are added; its consistency is asserted above.
            let mut results = run["results"].clone();
            for r in results.as_array_mut().unwrap() {
                r.as_object_mut().unwrap().remove("ruleIndex");
            }
            let results = serde_json::to_string_pretty(&results).unwrap();
            insta::assert_snapshot!("fixture_sarif_results", shown(code, &results));
            continue;
        }
        insta::assert_snapshot!(format!("fixture_{format}"), shown(code, &stdout));
    }
}

#[test]
fn corpus_checks_clean_in_every_format() {
    let corpus = repo().join("tests/corpus/customer-support");
    assert!(corpus.join("workflows").is_dir(), "the corpus is missing");
    for format in ["human", "json", "github", "sarif"] {
        let (code, stdout, stderr) = run(&corpus, &["check", "--format", format]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(v["summary"]["errors"], 0);
            assert!(v["summary"]["files"].as_u64().unwrap() >= 10, "{v}");
        }
        if format != "sarif" {
            insta::assert_snapshot!(format!("corpus_{format}"), shown(code, &stdout));
        }
    }
}

#[test]
fn paths_may_be_files_workflow_folders_parents_or_absolute() {
    let ws = fixture();
    let (code, stdout, _) = run(
        ws.path(),
        &[
            "check",
            "--format",
            "github",
            "./workflows/order-lookup/tests/typo.test.yaml",
        ],
    );
    assert_eq!(code, 1);
    assert_eq!(stdout.lines().count(), 1);
    assert!(
        stdout
            .starts_with("::error file=workflows/order-lookup/tests/typo.test.yaml,line=4,col=5,"),
        "{stdout}"
    );
    let (code, stdout, _) = run(
        &ws.path().join("workflows"),
        &[
            "check",
            "--format",
            "github",
            "../workflows/order-lookup/tests/ok.test.yaml",
        ],
    );
    assert_eq!((code, stdout.as_str()), (0, ""));
    let abs = ws
        .path()
        .join("workflows/order-lookup/tests/typo.test.yaml");
    let (code, stdout, _) = run(
        Path::new("/"),
        &["check", "--format", "github", abs.to_str().unwrap()],
    );
    assert_eq!(code, 1);
    assert!(
        stdout.contains(&format!(
            "file={}",
            abs.to_str().unwrap().replace(':', "%3A")
        )),
        "{stdout}"
    );
    let (code, stdout, _) = run(
        ws.path(),
        &["check", "--format", "json", "workflows/order-lookup"],
    );
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // workflow.yaml, 9 + 4 cases and 9 agent scripts.
    assert_eq!(v["summary"]["files"], 23);
}

#[test]
fn missing_path_is_a_usage_error() {
    let ws = fixture();
    let (code, stdout, stderr) = run(ws.path(), &["check", "no/such/dir"]);
    assert_eq!(code, 2);
    assert_eq!(stdout, "");
    assert!(stderr.contains("no/such/dir"), "{stderr}");
    let (code, _, _) = run(ws.path(), &["check", "--format", "xml"]);
    assert_eq!(code, 2);
}

/// Issue 13, no fail-open path: a file outside the layout (even one that is not YAML) is
/// never counted as checked; alone it is a usage error, beside checked files a warning.
#[test]
fn a_path_outside_the_layout_is_never_reported_as_checked() {
    let ws = fixture();
    let stray = ws.path().join("some/dir/tests");
    std::fs::create_dir_all(&stray).unwrap();
    std::fs::write(stray.join("broken.test.yaml"), "\u{0}\u{1} not: [yaml").unwrap();
    std::fs::write(stray.join("notes.txt"), "hello").unwrap();
    std::fs::create_dir_all(ws.path().join("empty")).unwrap();
    for args in [
        &["check", "some/dir/tests/broken.test.yaml"][..],
        &["check", "some/dir/tests/notes.txt"],
        &[
            "check",
            "--format",
            "json",
            "some/dir/tests/broken.test.yaml",
        ],
        &["check", "empty"],
    ] {
        let (code, stdout, stderr) = run(ws.path(), args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(!stdout.contains("no problems"), "{args:?}: {stdout}");
        assert!(stderr.contains("not checked: "), "{args:?}: {stderr}");
        assert!(stderr.contains("workflows/<slug>"), "{args:?}: {stderr}");
    }
    let (_, _, stderr) = run(ws.path(), &["check", "some/dir/tests/broken.test.yaml"]);
    assert!(
        stderr.contains("a case file outside the `workflows/<slug>/tests/` layout"),
        "{stderr}"
    );
    // Beside a checked file: the stray one is named and not counted.
    let (code, stdout, stderr) = run(
        ws.path(),
        &[
            "check",
            "some/dir/tests/broken.test.yaml",
            "workflows/order-lookup/tests/ok.test.yaml",
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("no problems in 1 file"), "{stdout}");
    assert!(
        stderr.contains("warning: not checked: some/dir/tests/broken.test.yaml"),
        "{stderr}"
    );
}

/// Issue 13, the pre-commit hook's mode: given only the changed `workflow.yaml`,
/// `--whole-workflows` rechecks the workflow's unchanged cases, so a renamed state fails.
#[test]
fn whole_workflows_rechecks_the_cases_a_workflow_change_breaks() {
    let ws = corpus_copy();
    let spec = ws.path().join("workflows/order-lookup/workflow.yaml");
    let text = std::fs::read_to_string(&spec).unwrap();
    let renamed = text.replace("refund-review", "refund-audit");
    assert_ne!(text, renamed);
    std::fs::write(&spec, renamed).unwrap();
    let args = ["check", "workflows/order-lookup/workflow.yaml"];
    let (_, stdout, _) = run(ws.path(), &args);
    assert!(!stdout.contains("refund-approved.test.yaml"), "{stdout}");
    let (code, stdout, stderr) = run(ws.path(), &[&args[..], &["--whole-workflows"]].concat());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("workflows/order-lookup/tests/refund-approved.test.yaml"),
        "{stdout}"
    );
    assert!(stdout.contains("refund-review"), "{stdout}");
}

#[test]
fn fix_applies_the_edits_and_rechecks() {
    let ws = fixture();
    let (code, stdout, stderr) = run(ws.path(), &["check", "--fix", "--format", "github"]);
    let typo = std::fs::read_to_string(
        ws.path()
            .join("workflows/order-lookup/tests/typo.test.yaml"),
    )
    .unwrap();
    assert_eq!(
        typo,
        "title: Typo\ndescription: A near-miss step name.\nsteps:\n  - send: hi\n"
    );
    let wide = std::fs::read_to_string(
        ws.path()
            .join("workflows/order-lookup/tests/wide.test.yaml"),
    )
    .unwrap();
    assert!(wide.contains("{send: x}"), "{wide}");
    assert!(stderr.contains("applied"), "{stderr}");
    // The duplicate key has no certain fix and stays.
    assert_eq!(code, 1);
    assert!(!stdout.contains("typo.test.yaml"), "{stdout}");
    assert!(stdout.contains("dup.test.yaml"), "{stdout}");
}

#[test]
fn help_is_stable() {
    let (code, stdout, _) = run(Path::new("."), &["--help"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("help", stdout);
    let (code, stdout, _) = run(Path::new("."), &["check", "--help"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("check_help", stdout);
}

#[test]
fn fix_applies_fixes_beyond_the_per_file_cap() {
    // 1,200 near-miss steps in one case: the report shows 1,000 plus one WFX009, but
    // `--fix` fixes them all in one run.
    let ws = corpus_copy();
    let path = ws
        .path()
        .join("workflows/order-lookup/tests/many.test.yaml");
    let mut text = String::from("title: Many\ndescription: Many typos.\nsteps:\n");
    for i in 0..1200 {
        text.push_str(&format!("  - sned: m{i}\n"));
    }
    std::fs::write(&path, &text).unwrap();
    let rel = "workflows/order-lookup/tests/many.test.yaml";
    let (code, stdout, _) = run(ws.path(), &["check", "--format", "github", rel]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("WFX009"),
        "{}",
        &stdout[..stdout.len().min(500)]
    );
    let (code, stdout, stderr) = run(ws.path(), &["check", "--fix", "--format", "github", rel]);
    assert!(stderr.contains("applied 1200 fixes"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text.replace("sned", "send")
    );
    assert_eq!(code, 0, "{}", &stdout[..stdout.len().min(500)]);
}

/// A case file whose name carries `ESC [2J` and OSC 52 and whose unknown key carries OSC 8
/// and a C1 CSI (issue 12, inert output): `check` shows them as visible escapes in every
/// human-readable place (location, message, code frame), GitHub commands stay one line
/// each, and SARIF's artifact URI is percent-encoded.
#[test]
fn hostile_file_names_and_keys_are_inert() {
    let tmp = corpus_copy();
    let tests = tmp.path().join("workflows/order-lookup/tests");
    let name = "x\u{1b}[2J\u{1b}]52;c;aGk=\u{7}.test.yaml";
    std::fs::write(
        tests.join(name),
        "title: Hostile\ndescription: Controls in a key.\nsteps:\n  - send: hi\n\"\\e]8;;http://x\\a\\x9b2Jk\": 1\n",
    )
    .unwrap();
    let raw = |s: &str| {
        s.chars()
            .find(|&c| wfx_schemas::inert::is_unsafe(c) && c != '\n')
    };
    let (code, out, err) = run(tmp.path(), &["check", "workflows"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(raw(&out), None, "{out:?}");
    assert_eq!(raw(&err), None, "{err:?}");
    assert!(
        out.contains("x\\u{1b}[2J\\u{1b}]52;c;aGk=\\u{7}.test.yaml:5:1"),
        "{out}"
    );
    assert!(out.contains("\\u{1b}]8;;http://x\\u{7}\\u{9b}2Jk"), "{out}");

    let (_, out, _) = run(tmp.path(), &["check", "--format", "github", "workflows"]);
    assert_eq!(raw(&out), None, "{out:?}");
    assert!(out.lines().all(|l| l.starts_with("::")), "{out}");
    assert!(
        out.contains(
            "file=workflows/order-lookup/tests/x\\u{1b}[2J\\u{1b}]52;c;aGk=\\u{7}.test.yaml,line=5"
        ),
        "{out}"
    );

    let (_, out, _) = run(tmp.path(), &["check", "--format", "sarif", "workflows"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let uris: Vec<&str> = v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(
        uris.contains(&"workflows/order-lookup/tests/x%1B%5B2J%1B%5D52%3Bc%3BaGk%3D%07.test.yaml"),
        "{uris:?}"
    );
}

/// Error messages on stderr are inert too: a path argument with `ESC [2J`.
#[test]
fn hostile_path_arguments_are_inert_in_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, err) = run(tmp.path(), &["check", "no\u{1b}[2Jsuch"]);
    assert_eq!(code, 2);
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(err.contains("no\\u{1b}[2Jsuch"), "{err}");
    let (code, _, err) = run(tmp.path(), &["graph", "no\u{1b}]52;c;aGk=\u{7}"]);
    assert_eq!(code, 2);
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    let (code, _, err) = run(tmp.path(), &["test", "no\u{1b}[2Jsuch"]);
    assert_eq!(code, 2);
    assert!(!err.contains('\u{1b}'), "{err:?}");
}
