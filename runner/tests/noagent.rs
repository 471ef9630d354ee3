//! Issue 15, the model-free half: the selection rule's "not run: no agent" through every
//! reporter and the exit code, and `wfx-lsp scaffold` turning each example case into a
//! passing agent script (and refusing cases no agent can pass).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use wfx_runner::cli::{CliContext, ScriptHostFactory, TestOptions, run_cli_with};
use wfx_runner::clock::FixedClock;
use wfx_runner::disk::DiskFiles;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/customer-support")
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

const TESTS: &str = "workflows/order-lookup/tests";

/// The example suite in a temp dir without its agent scripts; returns the case paths.
fn suite_without_scripts() -> (tempfile::TempDir, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&corpus(), tmp.path());
    let mut cases = Vec::new();
    for e in std::fs::read_dir(tmp.path().join(TESTS)).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".agent.yaml") {
            std::fs::remove_file(tmp.path().join(TESTS).join(&name)).unwrap();
        } else if name.ends_with(".test.yaml") {
            cases.push(format!("{TESTS}/{name}"));
        }
    }
    cases.sort();
    assert!(cases.len() >= 9, "{cases:?}");
    (tmp, cases)
}

fn run(ws: &Path, opts: &TestOptions) -> (i32, String, String) {
    let clock = FixedClock::default();
    let (mut so, mut se) = (Vec::new(), Vec::new());
    let code = run_cli_with(
        opts,
        ws,
        &CliContext {
            clock: &clock,
            model: None,
        },
        &mut so,
        &mut se,
    );
    (
        code,
        String::from_utf8(so).unwrap(),
        String::from_utf8(se).unwrap(),
    )
}

#[test]
fn a_suite_without_agents_is_not_run_and_fails_unless_allowed() {
    let (tmp, cases) = suite_without_scripts();
    let out = tempfile::tempdir().unwrap();
    let opts = TestOptions {
        target: Some("order-lookup".into()),
        json: true,
        reporters: vec!["junit".into(), "markdown".into(), "html".into()],
        out_dir: Some(out.path().to_path_buf()),
        ..Default::default()
    };
    let (code, stdout, stderr) = run(tmp.path(), &opts);
    assert_eq!(code, 1, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["exitCode"], 1);
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), cases.len());
    for (r, case) in results.iter().zip(&cases) {
        assert_eq!(r["verdict"]["status"], "not-run", "{r}");
        assert_eq!(r["verdict"]["failures"], serde_json::json!([]));
        let why = r["notRun"].as_str().unwrap();
        let script = case.replace(".test.yaml", ".agent.yaml");
        for part in [
            format!("no agent script `{script}`"),
            format!("wfx-lsp scaffold {case}"),
            "cassette".into(),
            "--live".into(),
        ] {
            assert!(why.contains(&part), "{part}: {why}");
        }
    }
    // Narration: each case says so, the summary counts them apart from failures.
    assert_eq!(
        stderr.matches("⊘ not run: no agent").count(),
        cases.len(),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "0 passed, 0 failed, 0 skipped, {} not run (no agent)",
            cases.len()
        )),
        "{stderr}"
    );
    let junit = std::fs::read_to_string(out.path().join("junit.xml")).unwrap();
    assert_eq!(
        junit
            .matches("<skipped message=\"not run: no agent")
            .count(),
        cases.len(),
        "{junit}"
    );
    assert!(junit.contains("failures=\"0\""), "{junit}");
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert_eq!(
        md.matches("⊘ not run (no agent)").count(),
        cases.len(),
        "{md}"
    );
    let html = std::fs::read_to_string(out.path().join("report.html")).unwrap();
    assert!(html.contains("not run (no agent)</span>"), "{html}");
    assert!(
        html.contains("<p class=\"note\">Not run: no agent"),
        "{html}"
    );
    let history = std::fs::read_to_string(out.path().join("history.jsonl")).unwrap();
    assert!(
        history.contains(&format!("\"notRun\":{}", cases.len())),
        "{history}"
    );

    // --allow-no-agent: still reported, exit 0.
    let (code, stdout, _) = run(
        tmp.path(),
        &TestOptions {
            target: Some("order-lookup".into()),
            allow_no_agent: true,
            ..Default::default()
        },
    );
    assert_eq!(code, 0);
    assert!(stdout.contains("not run (no agent)"), "{stdout}");
}

#[test]
fn one_case_with_a_script_runs_and_the_others_are_not_run() {
    let (tmp, _) = suite_without_scripts();
    let script = corpus().join(TESTS).join("skill-gate.agent.yaml");
    std::fs::copy(
        &script,
        tmp.path().join(TESTS).join("skill-gate.agent.yaml"),
    )
    .unwrap();
    let (code, stdout, stderr) = run(
        tmp.path(),
        &TestOptions {
            target: Some("order-lookup".into()),
            skip_grades: true,
            allow_no_agent: true,
            ..Default::default()
        },
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("1 passed, 0 failed, 0 skipped, 8 not run (no agent)"),
        "{stdout}"
    );
}

/// A script host whose every hook answers `ok` (`archmax_run` scripts fail): the scaffold
/// drafts the path, while the work a hook checks (e.g. `check-refund.js` reading
/// `scratchpad/refund.json`) is the author's to add.
struct OkHooks;
impl wfx_runner::script_host::ScriptHost for OkHooks {
    fn run_hook(
        &mut self,
        _req: wfx_runner::script_host::HookRequest,
        _bridge: &mut dyn wfx_runner::script_host::ToolBridge,
    ) -> Result<wfx_runner::script_host::HookVerdict, wfx_runner::script_host::ScriptError> {
        Ok(wfx_runner::script_host::HookVerdict::Ok)
    }
    fn run_script(
        &mut self,
        req: wfx_runner::script_host::ScriptRequest,
        _bridge: &mut dyn wfx_runner::script_host::ToolBridge,
    ) -> Result<serde_json::Value, wfx_runner::script_host::ScriptError> {
        Err(wfx_runner::script_host::ScriptError::Failed(req.path))
    }
}

#[test]
fn scaffolded_scripts_pass_every_example_case() {
    let (tmp, cases) = suite_without_scripts();
    let fs = DiskFiles::new(tmp.path());
    for case in &cases {
        let written = wfx_runner::scaffold::write(&fs, case, false).unwrap();
        assert_eq!(written, case.replace(".test.yaml", ".agent.yaml"));
        // A second scaffold refuses to overwrite; --force replaces.
        let again = wfx_runner::scaffold::write(&fs, case, false).unwrap_err();
        assert!(again.contains("exists; pass --force"), "{again}");
        wfx_runner::scaffold::write(&fs, case, true).unwrap();
    }
    let (code, stdout, stderr) = run(
        tmp.path(),
        &TestOptions {
            target: Some("order-lookup".into()),
            skip_grades: true,
            script_host: Some(ScriptHostFactory(std::sync::Arc::new(|| {
                Box::new(OkHooks) as Box<dyn wfx_runner::script_host::ScriptHost>
            }))),
            ..Default::default()
        },
    );
    let scripts: Vec<String> = cases
        .iter()
        .map(|c| {
            std::fs::read_to_string(tmp.path().join(c.replace(".test.yaml", ".agent.yaml")))
                .unwrap()
        })
        .collect();
    assert_eq!(code, 0, "{stdout}\n{stderr}\n{}", scripts.join("\n----\n"));
    assert!(
        stdout.starts_with(&format!("{} passed, 0 failed, 0 skipped", cases.len())),
        "{stdout}"
    );
}

#[test]
fn scaffolded_scripts_pass_the_hook_free_cases_with_the_real_sandbox() {
    // With the QuickJS sandbox the entry hooks really run: the veto cases and the cases
    // whose path has no hook demanding work pass; the refund cases need the decision file
    // check-refund.js reads, which no scaffold can know.
    let (tmp, cases) = suite_without_scripts();
    let fs = DiskFiles::new(tmp.path());
    for case in &cases {
        wfx_runner::scaffold::write(&fs, case, false).unwrap();
    }
    let (_, stdout, stderr) = run(
        tmp.path(),
        &TestOptions {
            target: Some("order-lookup".into()),
            skip_grades: true,
            json: true,
            ..Default::default()
        },
    );
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for r in json["results"].as_array().unwrap() {
        let id = r["id"].as_str().unwrap();
        let status = r["verdict"]["status"].as_str().unwrap();
        if id.starts_with("refund-") {
            assert_eq!(status, "failed", "{id}: {stderr}");
        } else {
            assert_eq!(status, "passed", "{id}: {r}\n{stderr}");
        }
    }
}

#[test]
fn unsatisfiable_cases_are_refused_and_nothing_is_written() {
    let (tmp, _) = suite_without_scripts();
    let fs = DiskFiles::new(tmp.path());
    let cases = [
        (
            "unreachable",
            "  - send: \"Hi, I'm support@acmecorp.com. Refund ORD-1001.\"\n  - reachedState: refund-review\n  - reachedState: report-requested\n",
            "`report-requested` is unreachable from `identify-case`",
            "reachedState: report-requested",
        ),
        (
            "no-edge",
            "  - send: \"Hi, I'm support@acmecorp.com. Refund ORD-1001.\"\n  - parked: decision\n  - decide: { to: refund-closed }\n  - decide: { to: refund-closed, comment: twice }\n",
            "no path parks the session at a human state before this `decide`",
            "refund-closed, comment",
        ),
        (
            "count",
            "  - send: \"Hi, I'm support@acmecorp.com. Refund ORD-1001.\"\n  - trail: { kind: trigger, count: 2 }\n",
            "no path gives a count of 2 here (possible counts: 1)",
            "trail: {",
        ),
    ];
    for (name, steps, reason, at) in cases {
        let rel = format!("{TESTS}/{name}.test.yaml");
        let text = format!("title: {name}\ndescription: d\nsteps:\n{steps}");
        std::fs::write(tmp.path().join(&rel), &text).unwrap();
        let d = wfx_schemas::check::check_file(&fs, &rel);
        let d: Vec<_> = d.iter().filter(|d| d.code.code == "WFX313").collect();
        assert_eq!(d.len(), 1, "{name}: {d:#?}");
        assert!(d[0].message.contains(reason), "{name}: {}", d[0].message);
        let start = usize::try_from(d[0].range.start).unwrap();
        assert!(text[start..].starts_with(at), "{name}: {}", &text[start..]);
        let err = wfx_runner::scaffold::write(&fs, &rel, true).unwrap_err();
        assert!(err.contains("no agent can pass this case"), "{err}");
        assert!(err.contains(reason), "{err}");
        assert!(
            !tmp.path()
                .join(rel.replace(".test.yaml", ".agent.yaml"))
                .exists()
        );
    }
    // Through the CLI: exit 1, nothing on stdout.
    let (mut so, mut se) = (Vec::new(), Vec::new());
    let code = wfx_runner::scaffold::run_cli(
        &format!("{TESTS}/no-edge.test.yaml"),
        false,
        tmp.path(),
        &mut so,
        &mut se,
    );
    assert_eq!(code, 1);
    assert!(so.is_empty());
    assert!(String::from_utf8_lossy(&se).contains("no agent can pass this case"));
}
