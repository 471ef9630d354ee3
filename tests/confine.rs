//! Confinement and safe writes on a hostile repository (issue 12): `check`, `check --fix`,
//! `test` (runs and `--out` reports), `graph --out` through the built binary, and the
//! editor's run path (the server's `Overlay` handed to `run_case_file`, as the run lens
//! does). Each test plants symbolic links or `..` paths leading outside the workspace and
//! asserts that nothing outside was read (a unique marker never appears in any output) or
//! written (the target keeps its bytes), and that the refusal names the link (`WFX010`).

#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::*;

/// `tmp/ws` (a copy of the customer-support corpus plus the runner's `gate` hook
/// workflow) and `tmp/outside` (files no command may read or write).
struct Layout {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
}

fn layout() -> Layout {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let outside = tmp.path().join("outside");
    copy_dir(&repo().join("tests/corpus/customer-support"), &ws);
    copy_dir(
        &repo().join("runner/tests/fixtures/hooks/workflows/gate"),
        &ws.join("workflows/gate"),
    );
    std::fs::create_dir_all(&outside).unwrap();
    Layout {
        _tmp: tmp,
        ws,
        outside,
    }
}

/// Runs the binary in `cwd` with extra environment; returns (exit code, stdout, stderr).
fn run_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"));
    cmd.args(args).current_dir(cwd).env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn run(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    run_env(cwd, args, &[])
}

const FORMATS: [&str; 4] = ["human", "json", "github", "sarif"];

/// The (file, line, character) of every `code` diagnostic in `check --format json` output.
fn sites(json: &str, code: &str) -> Vec<(String, u64, u64)> {
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}\n{json}"));
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == code)
        .map(|d| {
            (
                d["file"].as_str().unwrap().to_owned(),
                d["range"]["start"]["line"].as_u64().unwrap(),
                d["range"]["start"]["character"].as_u64().unwrap(),
            )
        })
        .collect()
}

const LEAK: &str = "workflows/order-lookup/tests/leak.test.yaml";

#[test]
fn a_case_link_leaving_the_workspace_is_reported_on_the_link_and_not_read() {
    let l = layout();
    // Invalid on purpose: read and checked, it would be shown in a code frame.
    std::fs::write(
        l.outside.join("secret.test.yaml"),
        "title: SECRET-MARKER-7731\nsteps:\n  - sned: SECRET-MARKER-7731\n",
    )
    .unwrap();
    symlink(l.outside.join("secret.test.yaml"), l.ws.join(LEAK)).unwrap();
    for args in [vec!["."], vec![LEAK], vec!["workflows/order-lookup"]] {
        for format in FORMATS {
            let mut a = vec!["check", "--format", format];
            a.extend(&args);
            let (code, out, err) = run(&l.ws, &a);
            assert!(
                !out.contains("SECRET-MARKER") && !err.contains("SECRET-MARKER"),
                "{a:?} leaked the target:\n{out}\n{err}"
            );
            assert!(out.contains("WFX010"), "{a:?}:\n{out}\n{err}");
            assert_eq!(code, 1, "{a:?}:\n{out}\n{err}");
            if format == "json" {
                assert_eq!(sites(&out, "WFX010"), [(LEAK.to_owned(), 0, 0)], "{a:?}");
            }
        }
    }
}

#[test]
fn a_link_to_the_environment_never_reaches_the_output() {
    let l = layout();
    let marker = format!("wfx-confine-env-marker-{}", std::process::id());
    let env = l.ws.join("workflows/order-lookup/tests/env.test.yaml");
    symlink("/proc/self/environ", &env).unwrap();
    // The same through a folder link: tests/proc -> /proc/self.
    symlink("/proc/self", l.ws.join("workflows/order-lookup/tests/proc")).unwrap();
    for target in [".", "workflows/order-lookup/tests/env.test.yaml"] {
        for format in FORMATS {
            let (code, out, err) = run_env(
                &l.ws,
                &["check", "--format", format, target],
                &[("WFX_CONFINE_MARKER", &marker)],
            );
            assert!(
                !out.contains(&marker) && !err.contains(&marker),
                "{format} {target} printed the environment:\n{out}\n{err}"
            );
            assert!(out.contains("WFX010"), "{format}:\n{out}\n{err}");
            assert_eq!(code, 1);
            if format == "json" {
                assert_eq!(
                    sites(&out, "WFX010"),
                    [(
                        "workflows/order-lookup/tests/env.test.yaml".to_owned(),
                        0,
                        0
                    )]
                );
            }
        }
    }
}

#[test]
fn links_inside_the_workspace_still_work() {
    let l = layout();
    std::fs::create_dir_all(l.ws.join("shared")).unwrap();
    std::fs::write(
        l.ws.join("shared/typo.test.yaml"),
        "title: Shared\ndescription: Linked in.\nsteps:\n  - sned: hi\n",
    )
    .unwrap();
    symlink(
        "../../../shared/typo.test.yaml",
        l.ws.join("workflows/order-lookup/tests/alias.test.yaml"),
    )
    .unwrap();
    let (code, out, err) = run(&l.ws, &["check", "--format", "json", "."]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(sites(&out, "WFX010").is_empty(), "{out}");
    assert!(
        out.contains("\"file\": \"workflows/order-lookup/tests/alias.test.yaml\""),
        "{out}"
    );
    // The code frame shows the linked file's text: it is the workspace's own.
    let (_, human, _) = run(&l.ws, &["check", "."]);
    assert!(human.contains("sned: hi"), "{human}");
}

#[test]
fn workflow_spec_fixture_and_hook_links_are_reported_on_the_link() {
    let l = layout();
    std::fs::write(
        l.outside.join("wf.yaml"),
        "instructions: WF-MARKER-5521\nstates: {a: {instructions: WF-MARKER-5521, bogus: 1}}\n",
    )
    .unwrap();
    std::fs::create_dir_all(l.ws.join("workflows/evil")).unwrap();
    symlink(
        l.outside.join("wf.yaml"),
        l.ws.join("workflows/evil/workflow.yaml"),
    )
    .unwrap();
    // A hook script and a fixture that are links leaving the workspace.
    std::fs::write(
        l.outside.join("evil.js"),
        "import x from 'HOOK-MARKER-9912';\nexport default async function hook() { return veto('HOOK-MARKER-9912'); }\n",
    )
    .unwrap();
    let gate = l.ws.join("workflows/gate");
    std::fs::remove_file(gate.join("hooks/gate.js")).unwrap();
    symlink(l.outside.join("evil.js"), gate.join("hooks/gate.js")).unwrap();
    std::fs::write(l.outside.join("secret.txt"), "FIXTURE-MARKER-3390").unwrap();
    std::fs::create_dir_all(gate.join("tests/fixtures")).unwrap();
    symlink(
        l.outside.join("secret.txt"),
        gate.join("tests/fixtures/s.txt"),
    )
    .unwrap();
    let seeded = "title: Seeded\ndescription: A fixture link.\nworkspace:\n  scratchpad/s.txt: { from: fixtures/s.txt }\nsteps:\n  - send: I am a friend.\n";
    std::fs::write(gate.join("tests/seeded.test.yaml"), seeded).unwrap();
    for format in FORMATS {
        let (_, out, err) = run(&l.ws, &["check", "--format", format, "."]);
        for m in ["WF-MARKER", "HOOK-MARKER", "FIXTURE-MARKER"] {
            assert!(
                !out.contains(m) && !err.contains(m),
                "{format}: {m}\n{out}\n{err}"
            );
        }
    }
    let (_, out, _) = run(&l.ws, &["check", "--format", "json", "."]);
    let got = sites(&out, "WFX010");
    // (line, character) of the first occurrence of `needle` in `text`.
    let at = |text: &str, needle: &str| {
        let i = text.find(needle).unwrap();
        let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
        (
            text[..i].matches('\n').count() as u64,
            (i - line_start) as u64,
        )
    };
    let from = at(seeded, "fixtures/s.txt");
    let spec = std::fs::read_to_string(gate.join("workflow.yaml")).unwrap();
    let script = at(&spec, "hooks/gate.js");
    assert_eq!(
        got,
        [
            ("workflows/evil/workflow.yaml".to_owned(), 0, 0),
            (
                "workflows/gate/tests/seeded.test.yaml".to_owned(),
                from.0,
                from.1
            ),
            (
                "workflows/gate/workflow.yaml".to_owned(),
                script.0,
                script.1
            ),
        ],
        "{out}"
    );
}

/// Runs `target` with `wfx-lsp test --json` and returns (exit, stdout+stderr).
fn cli_test(ws: &Path, target: &str) -> (i32, String) {
    let (code, out, err) = run(ws, &["test", target, "--json", "--skip-grades"]);
    (code, format!("{out}\n{err}"))
}

/// Runs one case as the editor's run lens does: the server's `Overlay` (no open buffers)
/// over the workspace, `run_case_file`, the QuickJS host. Returns the result as JSON text.
fn lsp_run(ws: &Path, case: &str) -> String {
    let fs = wfx_lsp::lsp::overlay::Overlay::new(ws, BTreeMap::new());
    let clock = wfx_runner::clock::FixedClock::default();
    let make_host = || -> Box<dyn wfx_runner::script_host::ScriptHost> {
        Box::new(wfx_runner::sandbox::QuickJsHost::default())
    };
    let mut ro = wfx_runner::suite::RunOptions::new(&fs, &clock);
    ro.grades.skip = true;
    ro.script_host = Some(&make_host);
    match wfx_runner::suite::run_case_file(&ro, case) {
        Ok(run) => serde_json::to_string(&run.result).unwrap(),
        Err(e) => e.to_string(),
    }
}

/// Lets everyone in: had it run, the `allowed` case would pass. Refused, the hook fails and
/// a failing `before` hook vetoes entry, so the case fails with no traversal.
const EVIL_HOOK: &str = "export default async function hook() { return ok(); }\n";

#[test]
fn dotdot_and_linked_hook_scripts_never_run_from_the_cli_or_the_editor() {
    let l = layout();
    std::fs::write(l.outside.join("evil.js"), EVIL_HOOK).unwrap();
    let gate = l.ws.join("workflows/gate");
    let spec = std::fs::read_to_string(gate.join("workflow.yaml")).unwrap();
    // 1. `script: ../../../outside/evil.js` (from workflows/gate, three `..` reach tmp/).
    std::fs::write(
        gate.join("workflow.yaml"),
        spec.replace("hooks/gate.js", "../../../outside/evil.js"),
    )
    .unwrap();
    let case = "workflows/gate/tests/allowed.test.yaml";
    let (_, cli) = cli_test(&l.ws, "workflows/gate/tests/allowed.test.yaml");
    let lsp = lsp_run(&l.ws, case);
    // `test` and the lens refuse the workflow outright (WFX225 is an error on it, issue 13);
    // had the hook run, the case would have passed.
    for (who, text) in [("cli", &cli), ("lsp", &lsp)] {
        assert!(!text.contains("\"passed\""), "{who} ran the hook:\n{text}");
        assert!(
            text.contains("Cannot load workflow 'gate'") && text.contains("WFX225"),
            "{who} ran the hook:\n{text}"
        );
    }
    // 2. `script: hooks/gate.js`, a link to the same file outside.
    std::fs::write(gate.join("workflow.yaml"), &spec).unwrap();
    std::fs::remove_file(gate.join("hooks/gate.js")).unwrap();
    symlink(l.outside.join("evil.js"), gate.join("hooks/gate.js")).unwrap();
    let (_, cli) = cli_test(&l.ws, "workflows/gate/tests/allowed.test.yaml");
    let lsp = lsp_run(&l.ws, case);
    for (who, text) in [("cli", &cli), ("lsp", &lsp)] {
        assert!(!text.contains("\"passed\""), "{who} ran the hook:\n{text}");
        assert!(
            text.contains("Cannot load workflow 'gate'") && text.contains("WFX010"),
            "{who} ran the hook:\n{text}"
        );
    }
}

#[test]
fn dotdot_and_linked_fixtures_and_dotdot_seeds_are_refused_by_the_cli_and_the_editor() {
    let l = layout();
    std::fs::write(l.outside.join("secret.txt"), "FIXTURE-MARKER-6620").unwrap();
    let tests = l.ws.join("workflows/gate/tests");
    std::fs::create_dir_all(tests.join("fixtures")).unwrap();
    symlink(l.outside.join("secret.txt"), tests.join("fixtures/s.txt")).unwrap();
    let agent = std::fs::read_to_string(tests.join("allowed.agent.yaml")).unwrap();
    // The agent reads the seeded file back, so a seed that got through would show.
    let reads = "turns:\n  - - call:\n        tool: read_file\n        input: { file_path: scratchpad/s.txt }\n    - say: done\n";
    let cases = [
        (
            "dotdot-from",
            "  scratchpad/s.txt: { from: ../../../../outside/secret.txt }\n",
            "escapes",
        ),
        (
            "link-from",
            "  scratchpad/s.txt: { from: fixtures/s.txt }\n",
            "leaves the workspace",
        ),
        (
            "dotdot-seed",
            "  ../../../escape.txt: FIXTURE-MARKER-6620\n",
            "..",
        ),
    ];
    for (name, seed, _) in cases {
        std::fs::write(
            tests.join(format!("{name}.test.yaml")),
            format!("title: {name}\ndescription: A hostile seed.\nworkspace:\n{seed}steps:\n  - send: I am a friend.\n"),
        )
        .unwrap();
        std::fs::write(tests.join(format!("{name}.agent.yaml")), reads).unwrap();
    }
    let _ = agent;
    for (name, _, why) in cases {
        let case = format!("workflows/gate/tests/{name}.test.yaml");
        let (_, cli) = cli_test(&l.ws, &case);
        let lsp = lsp_run(&l.ws, &case);
        for (who, text) in [("cli", &cli), ("lsp", &lsp)] {
            if name != "dotdot-seed" {
                assert!(!text.contains("FIXTURE-MARKER"), "{who} {name}:\n{text}");
            }
            assert!(text.contains("\"failed\""), "{who} {name}:\n{text}");
            assert!(text.contains(why), "{who} {name}: no `{why}`:\n{text}");
        }
        assert!(!l.ws.parent().unwrap().join("escape.txt").exists());
        assert!(!l.ws.join("escape.txt").exists());
    }
}

#[test]
fn fix_never_writes_outside_the_workspace() {
    let l = layout();
    let before = "title: Outside\ndescription: Not ours.\nsteps:\n  - sned: hi\n";
    std::fs::write(l.outside.join("fixme.test.yaml"), before).unwrap();
    let link = "workflows/order-lookup/tests/fixme.test.yaml";
    symlink(l.outside.join("fixme.test.yaml"), l.ws.join(link)).unwrap();
    // A fixable case inside, so --fix has work to do.
    let inside = l.ws.join("workflows/order-lookup/tests/typo.test.yaml");
    std::fs::write(&inside, before).unwrap();
    for args in [vec!["check", "--fix", "."], vec!["check", "--fix", link]] {
        let (_, out, err) = run(&l.ws, &args);
        assert_eq!(
            std::fs::read_to_string(l.outside.join("fixme.test.yaml")).unwrap(),
            before,
            "{args:?}:\n{out}\n{err}"
        );
        assert!(
            std::fs::symlink_metadata(l.ws.join(link))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
    // The case inside was fixed: --fix still works.
    assert!(
        std::fs::read_to_string(&inside)
            .unwrap()
            .contains("send: hi")
    );
}

#[test]
fn test_out_replaces_planted_links_and_refuses_a_linked_folder() {
    let l = layout();
    let rc = l.outside.join("shellrc");
    std::fs::write(&rc, "export KEEP=1\n").unwrap();
    let out = l.ws.join("results");
    std::fs::create_dir_all(&out).unwrap();
    for name in [
        "history.jsonl",
        "junit.xml",
        "report.md",
        "results.json",
        "report.html",
    ] {
        symlink(&rc, out.join(name)).unwrap();
    }
    let args = [
        "test",
        "order-lookup",
        "--skip-grades",
        "--out",
        "results",
        "--reporter",
        "junit",
        "--reporter",
        "markdown",
        "--reporter",
        "json",
        "--reporter",
        "html",
    ];
    let (code, o, e) = run(&l.ws, &args);
    assert_eq!(std::fs::read_to_string(&rc).unwrap(), "export KEEP=1\n");
    assert!(code == 0 || code == 1, "{o}\n{e}");
    // The links were replaced by the reports.
    for name in ["history.jsonl", "junit.xml", "report.md", "results.json"] {
        let meta = std::fs::symlink_metadata(out.join(name)).unwrap();
        assert!(meta.is_file(), "{name} is still a link");
    }
    let history = std::fs::read_to_string(out.join("history.jsonl")).unwrap();
    assert_eq!(history.lines().count(), 1, "{history}");
    // A second run appends to the real history file.
    run(&l.ws, &args);
    let history = std::fs::read_to_string(out.join("history.jsonl")).unwrap();
    assert_eq!(history.lines().count(), 2, "{history}");

    // The output folder itself, or a folder above it, a link: refused, nothing written.
    let elsewhere = l.outside.join("reports");
    std::fs::create_dir_all(&elsewhere).unwrap();
    symlink(&elsewhere, l.ws.join("linked")).unwrap();
    for dir in ["linked", "linked/sub"] {
        let (code, o, e) = run(
            &l.ws,
            &["test", "order-lookup", "--skip-grades", "--out", dir],
        );
        assert_eq!(code, 2, "{dir}:\n{o}\n{e}");
        assert!(e.contains("symbolic link"), "{dir}:\n{e}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
}

#[test]
fn graph_out_replaces_a_planted_link_and_refuses_a_linked_folder() {
    let l = layout();
    let target = l.outside.join("victim.txt");
    std::fs::write(&target, "victim\n").unwrap();
    symlink(&target, l.ws.join("graph.mmd")).unwrap();
    let (code, o, e) = run(
        &l.ws,
        &[
            "graph",
            "order-lookup",
            "--format",
            "mermaid",
            "--out",
            "graph.mmd",
        ],
    );
    assert_eq!(code, 0, "{o}\n{e}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "victim\n");
    let written = std::fs::read_to_string(l.ws.join("graph.mmd")).unwrap();
    assert!(written.contains("flowchart"), "{written}");
    symlink(&l.outside, l.ws.join("linked")).unwrap();
    let (code, _, e) = run(
        &l.ws,
        &[
            "graph",
            "order-lookup",
            "--format",
            "mermaid",
            "--out",
            "linked/g.mmd",
        ],
    );
    assert_eq!(code, 2, "{e}");
    assert!(e.contains("symbolic link"), "{e}");
    assert!(!l.outside.join("g.mmd").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_reports_an_open_link_leaving_the_workspace_and_does_not_analyse_it() {
    let l = layout();
    let text = "title: x\nsteps:\n  - sned: OPEN-MARKER-2207\n";
    std::fs::write(l.outside.join("o.test.yaml"), text).unwrap();
    let link = l.ws.join("workflows/order-lookup/tests/open.test.yaml");
    symlink(l.outside.join("o.test.yaml"), &link).unwrap();
    let mut c = support::inprocess::Client::connect(std::time::Duration::from_secs(20), true);
    c.request("initialize", initialize_params(&l.ws, &["utf-16"]))
        .await;
    c.notify("initialized", serde_json::json!({})).await;
    c.open(&link, text, 1).await;
    let u = uri(&link);
    let m = c
        .wait_for("the link's diagnostics", |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == u
        })
        .await;
    let diags = m["params"]["diagnostics"].as_array().unwrap();
    let codes: Vec<&str> = diags.iter().map(|d| d["code"].as_str().unwrap()).collect();
    // Analysed, the typo would give a WFX1xx diagnostic quoting the step.
    assert_eq!(codes, ["WFX010"], "{m}");
    assert!(!m.to_string().contains("OPEN-MARKER"), "{m}");
    c.shutdown().await;
}

/// Confinement: a folder link leaving the workspace, named on the command line as
/// `check workflows/<link>`, is `WFX010` on the link with the wording of every other escape
/// (it used to be "not checked", exit 2), and nothing behind it is read.
#[test]
fn a_folder_link_leaving_the_workspace_named_to_check_is_wfx010() {
    let l = layout();
    let target = l.outside.join("wf");
    std::fs::create_dir_all(target.join("tests")).unwrap();
    std::fs::write(
        target.join("workflow.yaml"),
        "instructions: SECRET-MARKER-4410\nstates: {s: {triggers: {manual: }, sned: 1}}\n",
    )
    .unwrap();
    symlink(&target, l.ws.join("workflows/away")).unwrap();
    for format in FORMATS {
        let a = ["check", "--format", format, "workflows/away"];
        let (code, out, err) = run(&l.ws, &a);
        assert!(
            !out.contains("SECRET-MARKER") && !err.contains("SECRET-MARKER"),
            "{a:?} leaked the target:\n{out}\n{err}"
        );
        assert_eq!(code, 1, "{a:?}:\n{out}\n{err}");
        assert!(out.contains("WFX010"), "{a:?}:\n{out}\n{err}");
        if format == "json" {
            assert_eq!(sites(&out, "WFX010"), [("workflows/away".to_owned(), 0, 0)]);
            assert!(
                out.contains(
                    "`workflows/away` is a symbolic link that leaves the workspace; it was not read"
                ),
                "{out}"
            );
        }
    }
}
