//! Findings of an outside attack on the promises of docs/security.md, kept as regression
//! tests through the built binary (or a real stdio session).
//! Every process gets a hang guard; a run still going after it is killed and the test fails.

#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use support::stdio::Server;
use support::*;

const TESTS: &str = "workflows/order-lookup/tests";
/// A bounded command on one small workspace ends well within this.
const GUARD: Duration = Duration::from_secs(10);

/// Runs the binary in `cwd`; returns (exit code or None when killed by the guard, stdout,
/// stderr).
fn run(cwd: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let ro = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let re = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let t = Instant::now();
    let code = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st.code();
        }
        if t.elapsed() > GUARD {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        code,
        String::from_utf8_lossy(&ro.join().unwrap()).into_owned(),
        String::from_utf8_lossy(&re.join().unwrap()).into_owned(),
    )
}

fn mkfifo(p: &Path) {
    let st = Command::new("mkfifo").arg(p).status().unwrap();
    assert!(st.success(), "mkfifo {}", p.display());
}

/// Promise 3 (bounded work: "hitting a bound is a diagnostic or a clear failure, never a
/// hang"): a workflow file that is a named pipe blocks `check` for ever in `open(2)`/`read`.
/// A repository author can commit nothing but can ship one through an archive, and a
/// pre-commit/CI job then hangs until its own timeout. Each kind of file is tried alone.
#[test]
fn named_pipes_in_the_workspace_do_not_hang_check() {
    let replace = [
        format!("{TESTS}/refund-approved.test.yaml"),
        format!("{TESTS}/refund-approved.agent.yaml"),
        "workflows/order-lookup/hooks/check-refund.js".to_owned(),
        "skills/order-enrichment/scripts/enrich-orders.js".to_owned(),
        "workflows/enrich-order/workflow.yaml".to_owned(),
    ];
    let mut hung = Vec::new();
    for rel in &replace {
        let ws = corpus_copy();
        let p = ws.path().join(rel);
        std::fs::remove_file(&p).unwrap();
        mkfifo(&p);
        let (code, _, _) = run(ws.path(), &["check", "--format", "json", "."]);
        // A YAML file is an error on it; a skill script is skipped; neither hangs.
        if code.is_none() || (rel.ends_with(".yaml") && code != Some(1)) {
            hung.push((rel.clone(), code));
        }
    }
    assert!(hung.is_empty(), "`check .` on a named pipe: {hung:?}");
}

/// Promise 3, for `wfx-lsp test`: a case file that is a named pipe hangs the whole run.
#[test]
fn a_named_pipe_case_does_not_hang_test() {
    let ws = corpus_copy();
    mkfifo(&ws.path().join(TESTS).join("pipe.test.yaml"));
    let (code, _, _) = run(ws.path(), &["test", ".", "--skip-grades"]);
    assert!(code.is_some(), "`wfx-lsp test` hung on a named-pipe case");
}

fn alternation_case(n: usize) -> String {
    format!(
        "title: Regex case here\ndescription: A case with a hostile regex token to compile.\nsteps:\n  - send: \"Hi, I'm support@acmecorp.com.\"\n  - reply:\n      includes: [\"/{}b/\"]\n",
        "a|".repeat(n)
    )
}

/// Promise 3 (regexes run bounded; every bound "a diagnostic or a clear failure") and
/// promise 6 (handlers under `catch_unwind`): a reply token `/a|a|…|b/` of 100,000
/// alternatives (200 KB, far under the 8 MiB limit) overflows the stack while the token
/// is compiled: `check` dies with SIGABRT ("has overflowed its stack", exit 134) instead of
/// a `WFX117` (nesting depth, by contrast, is cut with `WFX117`).
#[test]
fn a_long_regex_alternation_does_not_overflow_checks_stack() {
    let ws = corpus_copy();
    let rel = format!("{TESTS}/re.test.yaml");
    std::fs::write(ws.path().join(&rel), alternation_case(100_000)).unwrap();
    let (code, _, err) = run(ws.path(), &["check", "--format", "json", &rel]);
    assert!(
        matches!(code, Some(0 | 1)),
        "check ended with {code:?} (134 = abort, None = killed by signal):\n{err}"
    );
}

/// Promise 6 / promise 3 in the editor: opening the same case kills the language server
/// (the stack overflow aborts the process; `catch_unwind` cannot catch it), so a hostile
/// repository takes the editor's server down the moment the file is opened.
#[test]
fn opening_a_long_regex_alternation_does_not_kill_the_server() {
    let ws = corpus_copy();
    let (mut s, _) = Server::start(ws.path());
    let u = uri(&ws.path().join(TESTS).join("re.test.yaml"));
    s.open(&u, &alternation_case(100_000));
    // The case's diagnostics come once its check (which compiles the token) is done; a
    // server that died on the way closes stdout and the wait fails (no fixed delay, which
    // a slow machine outlasts before the crash).
    s.diagnostics(&u, 1);
    assert!(
        s.child.try_wait().unwrap().is_none(),
        "the server died after opening the case"
    );
    let good = uri(&ws.path().join(TESTS).join("refund-approved.test.yaml"));
    let id = s.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": good}}),
    );
    let r = s.response(id);
    assert!(r.get("error").is_none(), "{r}");
}

/// Promise 3 in the editor (bounded work, never a hang) and promise 6 (every request gets
/// its reply): with a named pipe among the cases, `workspace/symbol` blocks reading it,
/// and the whole server stops answering: a plain `documentSymbol` sent afterwards never
/// gets a reply (the helper's 60 s deadline fails the test).
#[test]
fn a_named_pipe_in_the_workspace_does_not_freeze_the_server() {
    let ws = corpus_copy();
    mkfifo(&ws.path().join(TESTS).join("pipe.test.yaml"));
    let (mut s, _) = Server::start(ws.path());
    let good = uri(&ws.path().join(TESTS).join("refund-approved.test.yaml"));
    let text =
        std::fs::read_to_string(ws.path().join(TESTS).join("refund-approved.test.yaml")).unwrap();
    s.open(&good, &text);
    s.diagnostics(&good, 1);
    let _symbols = s.request("workspace/symbol", json!({"query": "a"}));
    let id = s.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": good}}),
    );
    let r = s.response(id);
    assert!(r.get("error").is_none(), "{r}");
}

/// Promise 3 (every loop over input has a bound; never a hang) for discovery: folder links
/// that stay inside the workspace ("work as usual") and form no cycle, but fan out, two
/// links per level to the next level (`fan/d0/{x,y} -> ../d1`, …), give 2^20 paths to one
/// case. `check .` and `test` walk every path: 8 levels take 0.4 s, 12 take 8 s, 20 never
/// end. Discovery should visit each real folder once (or bound the walk with a diagnostic).
#[test]
fn fanned_out_folder_links_inside_the_workspace_do_not_hang_discovery() {
    let ws = corpus_copy();
    let fan = ws.path().join(TESTS).join("fan");
    const LEVELS: usize = 20;
    for i in 0..=LEVELS {
        std::fs::create_dir_all(fan.join(format!("d{i}"))).unwrap();
    }
    for i in 0..LEVELS {
        for name in ["x", "y"] {
            std::os::unix::fs::symlink(
                format!("../d{}", i + 1),
                fan.join(format!("d{i}")).join(name),
            )
            .unwrap();
        }
    }
    std::fs::copy(
        ws.path().join(TESTS).join("refund-approved.test.yaml"),
        fan.join(format!("d{LEVELS}/deep.test.yaml")),
    )
    .unwrap();
    let (check, _, _) = run(ws.path(), &["check", "--format", "json", "."]);
    let (test, _, _) = run(
        ws.path(),
        &["test", "workflows/order-lookup", "--skip-grades"],
    );
    assert!(
        check.is_some() && test.is_some(),
        "discovery through fanned-out folder links hung: check {check:?}, test {test:?}"
    );
}

/// Promise 1 ("A folder link leading outside is skipped during discovery without a
/// diagnostic; named on the command line it gets `WFX010`"; a link leaving the workspace
/// is "never read: … a path given to `check`"): in a workspace (the current folder holds
/// `workflows/`), a planted folder link `foo -> <outside>` named on the command line makes
/// `check`, `graph` and `test` treat the link's target as a workspace of its own and read
/// it: an outside case's text is printed in a code frame, an outside state name in `graph`.
#[test]
fn a_folder_link_leaving_the_workspace_named_on_the_command_line_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    copy_dir(&repo().join("tests/corpus/customer-support"), &ws);
    let outside = tmp.path().join("outside");
    let x = outside.join("workflows/x");
    std::fs::create_dir_all(x.join("tests")).unwrap();
    let spec = std::fs::read_to_string(ws.join("workflows/enrich-order/workflow.yaml")).unwrap();
    let spec = spec.replacen("\n  enrich:\n", "\n  enrich-outsidemarker:\n", 1);
    std::fs::write(x.join("workflow.yaml"), spec).unwrap();
    std::fs::write(
        x.join("tests/sec.test.yaml"),
        "title: OUTSIDE_CASE_MARKER\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("foo")).unwrap();

    let mut leaks = Vec::new();
    for args in [
        vec!["check", "foo"],
        vec!["check", "foo/workflows/x"],
        vec!["check", "foo/workflows/x/tests/sec.test.yaml"],
        vec![
            "check",
            "--format",
            "json",
            "foo/workflows/x/tests/sec.test.yaml",
        ],
        vec!["graph", "foo/workflows/x", "--format", "mermaid"],
        vec!["graph", "foo", "--format", "mermaid"],
        vec!["test", "foo/workflows/x", "--skip-grades"],
    ] {
        let (code, out, err) = run(&ws, &args);
        assert_eq!(code, Some(2), "{args:?}: {out}{err}");
        assert!(
            err.contains("symbolic link that leaves the workspace"),
            "{args:?}: {err}"
        );
        let all = format!("{out}{err}");
        if all.contains("MARKER") || all.contains("outsidemarker") {
            leaks.push(format!("{args:?}:\n{all}"));
        }
    }
    assert!(
        leaks.is_empty(),
        "outside content printed through the folder link `foo`:\n{}",
        leaks.join("\n---\n")
    );
}

/// Promise 1 ("A `workflow.yaml` that cannot be read makes its cases report `WFX309`
/// rather than pass unchecked") with promise 3's size bound: a `workflow.yaml` over
/// 8 MiB is refused (`WFX008`, not parsed), yet `check <case>` (what a pre-commit hook
/// passes for a changed case) reports nothing and exits 0: the case passes unchecked
/// against a workflow nobody read. A directory, a dangling link or bad UTF-8 in its place
/// all give `WFX309`.
#[test]
fn a_case_of_an_oversized_workflow_does_not_pass_unchecked() {
    let ws = corpus_copy();
    let w = ws.path().join("workflows/order-lookup/workflow.yaml");
    let mut big = std::fs::read_to_string(&w).unwrap();
    big.push('#');
    big.push_str(&"x".repeat(9 * 1024 * 1024));
    big.push('\n');
    std::fs::write(&w, big).unwrap();
    let case = format!("{TESTS}/refund-approved.test.yaml");
    let (code, out, err) = run(ws.path(), &["check", "--format", "json", &case]);
    assert!(
        out.contains("WFX309") && code == Some(1),
        "the case of an unreadable (oversized) workflow.yaml passed: exit {code:?}\n{out}\n{err}"
    );
}

/// docs/cli.md "Nothing unchecked passes" (a file that was not checked is named on stderr
/// and in `unchecked`), the guarantee `check` gives a CI job: a case whose file name is
/// not UTF-8 (`\xff…x.test.yaml`, holding an invalid case) is skipped silently:
/// "no problems", exit 0, `unchecked: []`. A hostile author can hide cases from CI this
/// way.
#[test]
fn a_case_with_a_non_utf8_name_does_not_pass_unchecked() {
    use std::os::unix::ffi::OsStrExt;
    let ws = corpus_copy();
    let name = std::ffi::OsStr::from_bytes(b"\xffhidden.test.yaml");
    std::fs::write(ws.path().join(TESTS).join(name), "title: x\n").unwrap();
    let (code, out, err) = run(ws.path(), &["check", "--format", "json", "."]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let named = v["unchecked"].as_array().is_some_and(|a| !a.is_empty())
        || v["diagnostics"].as_array().is_some_and(|a| !a.is_empty());
    assert!(
        named && code != Some(0),
        "a non-UTF-8 case was neither checked nor named as unchecked (exit {code:?}):\n{out}\n{err}"
    );
}

/// A one-workflow workspace (states `start` → `done`) for runner findings; `agent` is the
/// agent script of its one case, whose reply must include `ok`.
fn small_workspace(agent: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let w = tmp.path().join("workflows/w");
    std::fs::create_dir_all(w.join("tests")).unwrap();
    std::fs::write(
        w.join("workflow.yaml"),
        "title: W\ninstructions: Be good.\nruntime:\n  engine: archmax-harness\n  version: \"2\"\nstates:\n  start:\n    title: Start\n    summary: start\n    triggers:\n      manual:\n    instructions: go\n    transitions:\n      - to: done\n        description: finish\n  done:\n    title: Done\n    summary: done\n    instructions: end\n",
    )
    .unwrap();
    std::fs::write(
        w.join("tests/a.test.yaml"),
        "title: A\ndescription: A case.\nsteps:\n  - send: \"hi\"\n  - reply:\n      includes: [\"ok\"]\n",
    )
    .unwrap();
    std::fs::write(w.join("tests/a.agent.yaml"), agent).unwrap();
    tmp
}

/// Break-it finding (bounded memory, `test`): `edit_file` with an empty `old_string` and
/// `replace_all: true` built a (len + 1) × len(new) string before the session's 64 MiB cap
/// was checked: from a 220 KB agent script, 3.4 GB and an abort (exit 134) that left the
/// session folder behind. The result's size is now checked first: the call fails as a tool
/// error and the case goes on.
#[test]
fn an_edit_that_would_explode_fails_as_a_tool_error() {
    let agent = format!(
        "turns:\n  - - call: {{tool: write_file, input: {{file_path: scratchpad/a.txt, content: \"{}\"}}}}\n    - call: {{tool: edit_file, input: {{file_path: scratchpad/a.txt, old_string: \"\", new_string: \"{}\", replace_all: true}}}}\n    - say: ok\n",
        "x".repeat(20_000),
        "y".repeat(200_000)
    );
    let ws = small_workspace(&agent);
    let (check, out, _) = run(ws.path(), &["check", "--format", "json", "."]);
    assert_eq!(check, Some(0), "the fixture must be clean:\n{out}");
    let (code, _, err) = run(ws.path(), &["test", ".", "--skip-grades"]);
    assert!(
        matches!(code, Some(0 | 1)),
        "test ended with {code:?} (134 = abort, None = killed by the guard):\n{err}"
    );
}

/// Break-it finding (bounded work, `test`): `tests.caseTimeoutMs` was only checked between
/// steps, so one `send` ran every hook of a state with a fresh budget each: five hooks of
/// 2.5 s under `caseTimeoutMs: 1000` took 12.5 s (and 20,000 hooks, days). Hooks now start
/// only while the case has time left, each with at most that time.
#[test]
fn a_step_full_of_hooks_stops_at_the_case_timeout() {
    let ws = small_workspace("turns:\n  - - say: ok\n");
    let w = ws.path().join("workflows/w");
    let spec = std::fs::read_to_string(w.join("workflow.yaml")).unwrap();
    let spec = spec
        .replace(
            "states:\n",
            "settings:\n  timeoutMs: 3000\ntests:\n  caseTimeoutMs: 1000\nstates:\n",
        )
        .replace(
            "    instructions: go\n",
            &format!(
                "    instructions: go\n    before:\n{}",
                "      - script: hooks/h.js\n".repeat(5)
            ),
        );
    std::fs::write(w.join("workflow.yaml"), spec).unwrap();
    std::fs::create_dir_all(w.join("hooks")).unwrap();
    std::fs::write(
        w.join("hooks/h.js"),
        "const t = Date.now(); while (Date.now() - t < 2500) {}\nexport default () => ok();\n",
    )
    .unwrap();
    let (check, out, _) = run(ws.path(), &["check", "--format", "json", "."]);
    assert_eq!(check, Some(0), "the fixture must be clean:\n{out}");
    let (code, out, err) = run(ws.path(), &["test", ".", "--skip-grades"]);
    assert_eq!(
        code,
        Some(1),
        "killed by the guard (None) or passed:\n{out}\n{err}"
    );
    // The narration is on stderr.
    assert!(
        err.contains("timed out after 1000ms (tests.caseTimeoutMs)"),
        "{out}\n{err}"
    );
}

/// Finding 0 (promise 1, and "secrets are never printed"): a repository commits links from
/// its cases to the untracked `.env` and `.git/config` a CI job may have filled with
/// secrets; `check`'s human output printed their first lines in a code frame. Such links
/// now count as leaving the workspace (`WFX010`), in every output format.
#[test]
fn links_to_untracked_secret_files_are_not_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    copy_dir(&repo().join("tests/corpus/customer-support"), &ws);
    std::fs::write(ws.join(".env"), "OPENAI_API_KEY=sk-live-SECRET123\n").unwrap();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(
        ws.join(".git/config"),
        "[remote]\n\turl = https://ci:ghp_SECRET789@example.com/r\n",
    )
    .unwrap();
    let tests = ws.join(TESTS);
    std::os::unix::fs::symlink("../../../.env", tests.join("env.test.yaml")).unwrap();
    std::os::unix::fs::symlink("../../../.git/config", tests.join("git.agent.yaml")).unwrap();
    std::fs::copy(
        tests.join("refund-approved.test.yaml"),
        tests.join("git.test.yaml"),
    )
    .unwrap();
    for format in ["human", "json", "github", "sarif"] {
        let (code, out, err) = run(&ws, &["check", "--format", format]);
        let all = format!("{out}{err}");
        assert_eq!(code, Some(1), "{format}: {all}");
        assert!(all.contains("WFX010"), "{format}: {all}");
        assert!(!all.contains("SECRET"), "{format} printed a secret:\n{all}");
    }
}

/// Finding 15: discovery under `tests/` walked every level of a deep tree, at a cost
/// growing faster than its depth (1,000 nested folders: 176 s). The walk now stops 32
/// folders below `tests/` (`files::MAX_WALK_DEPTH`): `check` reports `WFX012` on the first
/// folder it did not list, a case within the bound is still found and checked, one below it
/// is not, and `wfx-lsp test` runs the cases it found but fails the run, saying where it
/// stopped.
#[test]
fn a_thousand_nested_folders_end_in_wfx012_and_cases_within_the_bound_are_found() {
    let ws = corpus_copy();
    let summary_files = |out: &str| -> u64 {
        let v: serde_json::Value = serde_json::from_str(out).unwrap();
        v["summary"]["files"].as_u64().unwrap()
    };
    let (code, before, _) = run(ws.path(), &["check", "--format", "json", "."]);
    assert_eq!(code, Some(0), "{before}");
    let level = |n: usize| format!("{TESTS}/{}", vec!["n"; n].join("/"));
    std::fs::create_dir_all(ws.path().join(level(1_000))).unwrap();
    let src = ws.path().join(TESTS);
    for (n, name) in [(32, "deep32"), (33, "deep33"), (1_000, "deep1000")] {
        for ext in ["test.yaml", "agent.yaml"] {
            std::fs::copy(
                src.join(format!("refund-approved.{ext}")),
                ws.path().join(level(n)).join(format!("{name}.{ext}")),
            )
            .unwrap();
        }
    }
    let (code, out, err) = run(ws.path(), &["check", "--format", "json", "."]);
    assert_eq!(code, Some(1), "check hung or passed: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let diags = v["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1, "{out}");
    assert_eq!(diags[0]["code"], "WFX012", "{out}");
    assert_eq!(diags[0]["file"], level(33).as_str(), "{out}");
    assert!(
        diags[0]["message"]
            .as_str()
            .unwrap()
            .contains("more than 32 folders deep"),
        "{out}"
    );
    // The case and agent script 32 levels down are found and checked (clean); none below.
    assert_eq!(summary_files(&out), summary_files(&before) + 2, "{out}");

    let (code, _, err) = run(
        ws.path(),
        &["test", "workflows/order-lookup", "--skip-grades"],
    );
    assert!(
        err.contains(&format!(
            "Error: discovery stopped at `{}`: it lies more than 32 folders deep",
            level(33)
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{}/deep32",
            level(32).trim_start_matches(&format!("{TESTS}/"))
        )),
        "{err}"
    );
    assert!(!err.contains("deep33"), "{err}");
    assert_eq!(code, Some(1), "{err}");
}

/// F2 (third break-it pass): a folder that the `tests/` of many workflows link to was
/// listed once per workflow (300 workflows × 99,000 files: `check` 16.7 CPU s). The walks
/// of one `check` run share `files::MAX_PASS_WALK_ENTRIES` (200,000) entries: with 4
/// workflows × 99,990 files, the first 2 are walked whole, the 3rd spends the rest, and the
/// 4th is reported (`WFX012` on its `tests/`, naming the shared budget), not walked.
#[test]
fn walks_of_a_folder_shared_by_many_workflows_share_one_budget() {
    let ws = shared_folder_workspace(4, 99_990);
    let (code, out, err) = run(ws.path(), &["check", "--format", "json", "."]);
    assert_eq!(code, Some(1), "check hung or passed: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let diags = v["diagnostics"].as_array().unwrap();
    let wfx012: Vec<(&str, &str)> = diags
        .iter()
        .filter(|d| d["code"] == "WFX012")
        .map(|d| (d["file"].as_str().unwrap(), d["message"].as_str().unwrap()))
        .collect();
    assert_eq!(wfx012.len(), 1, "{out}");
    assert_eq!(wfx012[0].0, "workflows/w4/tests", "{out}");
    assert!(
        wfx012[0]
            .1
            .contains("had already visited 200000 entries together"),
        "{out}"
    );
    // Within the budget nothing is reported: 3 workflows (299,973 entries, the 3rd walk
    // starting with 18 left) are clean.
    let ws6 = shared_folder_workspace(3, 99_990);
    let (code, out, _) = run(ws6.path(), &["check", "--format", "json", "."]);
    assert_eq!(code, Some(0), "{out}");
}

/// Break-it pass 4, F5: `check`'s walk of `skills/*/scripts/` followed folder links with no
/// de-duplication and no budget, so 6 links per level over 8 levels (all inside the
/// workspace) made 6^8 = 1,679,616 paths to one script, each read and checked (K = 5: 57 s,
/// 390,625 diagnostics). Each real folder is now listed once: the one broken script is
/// reported once.
#[test]
fn linked_skill_script_folders_are_walked_once_each() {
    let ws = corpus_copy();
    let skill = ws.path().join("skills/fan");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    for l in 1..=8 {
        std::fs::create_dir_all(skill.join(format!("f{l}"))).unwrap();
    }
    std::fs::write(skill.join("f8/x.js"), "export default function main( {\n").unwrap();
    for i in 1..=6 {
        std::os::unix::fs::symlink("../f1", skill.join(format!("scripts/l{i}"))).unwrap();
        for l in 1..8 {
            std::os::unix::fs::symlink(format!("../f{}", l + 1), skill.join(format!("f{l}/l{i}")))
                .unwrap();
        }
    }
    let (code, out, err) = run(ws.path(), &["check", "--format", "json", "."]);
    assert_eq!(code, Some(1), "check hung or passed: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let broken: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "WFX503")
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    // Reached through the first path the walk takes (it lists the last entry first).
    assert_eq!(
        broken,
        ["skills/fan/scripts/l6/l6/l6/l6/l6/l6/l6/l6/x.js"],
        "{out}"
    );
}

/// Break-it pass 4, F7: `test` read every `from:` seed before the session folder's 64 MiB
/// bound was checked, so a 77 KB case naming one 15 MB fixture 2,000 times held 24 GB until
/// the OOM killer ended it. The seeds are now read only while they fit the bound together:
/// here the fifth read is refused, before it is made, with a message naming the bound.
#[test]
fn seeds_are_read_only_while_they_fit_the_session_bound() {
    let ws = corpus_copy();
    let tests = ws.path().join(TESTS);
    std::fs::create_dir_all(tests.join("fixtures")).unwrap();
    std::fs::write(tests.join("fixtures/big.txt"), vec![b'x'; 15 << 20]).unwrap();
    // 200 seeds: enough to hold 3 GB without the bound, little enough not to starve CI.
    let seeds: String = (0..200)
        .map(|i| format!("  scratchpad/s{i}.txt: {{ from: fixtures/big.txt }}\n"))
        .collect();
    std::fs::write(
        tests.join("seeds-over.test.yaml"),
        format!("title: Seeds over\ndescription: Too many seeds.\nworkspace:\n{seeds}steps:\n  - send: hi\n"),
    )
    .unwrap();
    std::fs::copy(
        tests.join("refund-approved.agent.yaml"),
        tests.join("seeds-over.agent.yaml"),
    )
    .unwrap();
    let (code, out, err) = run(
        ws.path(),
        &[
            "test",
            "workflows/order-lookup",
            "seeds-over",
            "--skip-grades",
        ],
    );
    let all = format!("{out}{err}");
    assert_eq!(code, Some(1), "{all}");
    assert!(
        all.contains("the workspace seeds up to 'scratchpad/s4.txt' hold more than the session folder's bound of 64 MiB together"),
        "{all}"
    );
}
