//! `wfx-lsp scrub` (issue 15; docs/cassettes.md "Scrubbing"): a cassette holding the value
//! of a key-like environment variable (the process's and `.env`'s) is rewritten in place
//! without it, still loads, and the output reports counts only; a cassette that does not
//! parse is an error naming it (exit 2) while the others are still scrubbed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

use std::path::Path;
use std::process::Command;

use wfx_schemas::cassette::{Cassette, InputDigests, RecordedClock, Secrets, VERSION, load};

// Split so that no committed line holds a key-shaped value.
const PROC_KEY: &str = concat!("sk-", "scrub-PLANTED-proc-7c1e42");
const DOTENV_KEY: &str = "dotenv-PLANTED-secret-99a0";

fn cassette(model: &str, prompt: &str) -> Cassette {
    Cassette {
        version: VERSION,
        recorded_with: "wfx-lsp test".into(),
        recorded_at: "2026-01-01T00:00:00Z".into(),
        clock: RecordedClock {
            start_ms: 0,
            step_ms: 1,
            zone: "UTC".into(),
        },
        model: model.into(),
        endpoint: "127.0.0.1".into(),
        case: "a".into(),
        inputs: InputDigests {
            case: String::new(),
            workflow: String::new(),
        },
        prompts: [("p1".to_owned(), prompt.to_owned())].into_iter().collect(),
        toolsets: Default::default(),
        interactions: Vec::new(),
    }
}

fn write(root: &Path, rel: &str, c: &Cassette) {
    // Written without redaction: what another tool, or a run before the key existed, left.
    let (text, n) = wfx_schemas::cassette::to_json(c, &Secrets::default());
    assert_eq!(n, 0);
    std::fs::write(root.join(rel), text).unwrap();
}

/// Written compact, on one line: a rewrite by `scrub` (always pretty-printed) would change
/// its bytes, so "untouched byte-for-byte" can fail.
fn write_compact(root: &Path, rel: &str, c: &Cassette) {
    std::fs::write(root.join(rel), serde_json::to_string(c).unwrap()).unwrap();
}

fn scrub(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
        .current_dir(root)
        .env("SCRUB_TEST_API_TOKEN", PROC_KEY)
        .env_remove("ARCHMAX_API_KEY")
        .arg("scrub")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn planted_key_values_are_scrubbed_in_place_and_the_cassette_still_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let tests = root.join("workflows/wf/tests");
    std::fs::create_dir_all(tests.join("sub")).unwrap();
    std::fs::write(
        root.join(".env"),
        format!("MY_SECRET={DOTENV_KEY}\nPLAIN=hello-world-long\n"),
    )
    .unwrap();
    let dirty = "workflows/wf/tests/a.cassette.json";
    write(
        root,
        dirty,
        &cassette(
            PROC_KEY,
            &format!("system with {DOTENV_KEY} and {PROC_KEY}"),
        ),
    );
    let clean = "workflows/wf/tests/sub/b.cassette.json";
    write_compact(root, clean, &cassette("fake-model", "hello-world-long"));
    let clean_before = std::fs::read(root.join(clean)).unwrap();

    let (code, out, err) = scrub(root, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("workflows/wf/tests/a.cassette.json: 3 value(s) replaced"),
        "{out}"
    );
    assert!(
        out.contains("workflows/wf/tests/sub/b.cassette.json: 0 value(s) replaced"),
        "{out}"
    );
    for s in [&out, &err] {
        assert!(!s.contains(PROC_KEY) && !s.contains(DOTENV_KEY), "{s}");
    }
    let text = std::fs::read_to_string(root.join(dirty)).unwrap();
    assert!(
        !text.contains(PROC_KEY) && !text.contains(DOTENV_KEY),
        "{text}"
    );
    assert!(text.contains("<ENV:SCRUB_TEST_API_TOKEN>"), "{text}");
    assert!(text.contains("<ENV:MY_SECRET>"), "{text}");
    // A value of a variable whose name is not key-like stays, and an untouched file is
    // not rewritten.
    assert_eq!(std::fs::read(root.join(clean)).unwrap(), clean_before);
    let fs = wfx_runner::disk::DiskFiles::new(root);
    let back = load(&fs, dirty).unwrap().unwrap();
    assert_eq!(back.model, "<ENV:SCRUB_TEST_API_TOKEN>");
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    // A second run has nothing left to replace.
    let (code, out, _) = scrub(root, &[dirty]);
    assert_eq!(code, 0);
    assert_eq!(out, format!("{dirty}: 0 value(s) replaced\n"));
}

#[test]
fn a_cassette_that_does_not_parse_is_an_error_naming_it_and_the_rest_are_scrubbed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let tests = root.join("workflows/wf/tests");
    std::fs::create_dir_all(&tests).unwrap();
    let bad = "workflows/wf/tests/bad.cassette.json";
    std::fs::write(root.join(bad), format!("{{\"version\": \"{PROC_KEY}\"")).unwrap();
    let bad_before = std::fs::read(root.join(bad)).unwrap();
    let good = "workflows/wf/tests/good.cassette.json";
    write(root, good, &cassette(PROC_KEY, "p"));

    let (code, out, err) = scrub(root, &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(&format!("Error: {bad}: ")), "{err}");
    assert!(
        out.contains(&format!("{good}: 1 value(s) replaced")),
        "{out}"
    );
    assert!(!err.contains(PROC_KEY) && !out.contains(PROC_KEY), "{err}");
    assert_eq!(std::fs::read(root.join(bad)).unwrap(), bad_before);
    assert!(
        !std::fs::read_to_string(root.join(good))
            .unwrap()
            .contains(PROC_KEY)
    );

    // A named path that is not a cassette, or leaves the workspace, is an error too.
    let (code, _, err) = scrub(
        root,
        &["workflows/wf/tests/x.test.yaml", "../o.cassette.json"],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("Error: workflows/wf/tests/x.test.yaml: not a cassette"),
        "{err}"
    );
    assert!(err.contains("Error: ../o.cassette.json: "), "{err}");
}

/// A cassette that is a link to a file outside the workspace is refused (read through the
/// confined layer), named or found by the walk, and neither the link nor its target is
/// changed; the secret in the target never reaches the output. docs/security.md.
#[cfg(unix)]
#[test]
fn a_cassette_linked_out_of_the_workspace_is_refused_and_left_alone() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("ws");
    let tests = root.join("workflows/wf/tests");
    std::fs::create_dir_all(&tests).unwrap();
    let target = outer.path().join("elsewhere.cassette.json");
    write(
        outer.path(),
        "elsewhere.cassette.json",
        &cassette(PROC_KEY, "p"),
    );
    let target_before = std::fs::read(&target).unwrap();
    let link = "workflows/wf/tests/evil.cassette.json";
    std::os::unix::fs::symlink(&target, root.join(link)).unwrap();

    for args in [&[link][..], &[][..]] {
        let (code, out, err) = scrub(&root, args);
        assert_eq!(code, 2, "{out}{err}");
        assert!(
            err.contains(&format!(
                "Error: {link}: cannot read `{link}`: it leads outside the workspace"
            )),
            "{err}"
        );
        assert!(!out.contains(link), "{out}");
        assert!(
            !out.contains(PROC_KEY) && !err.contains(PROC_KEY),
            "{out}{err}"
        );
        assert_eq!(std::fs::read(&target).unwrap(), target_before);
        assert!(
            std::fs::symlink_metadata(root.join(link))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}

/// Key-shaped strings that are no variable's value cannot be redacted by value (the
/// writer does not either); `scrub` warns with their count and kinds, never the string,
/// and leaves them. docs/cassettes.md "Scrubbing".
#[test]
fn key_shaped_strings_left_are_warned_about_without_printing_them() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join("workflows/wf/tests")).unwrap();
    let shaped = concat!("sk-", "unknownORIGINabcdefghijklmnop123");
    let rel = "workflows/wf/tests/a.cassette.json";
    write(root, rel, &cassette("m", &format!("key {shaped} here")));
    let before = std::fs::read(root.join(rel)).unwrap();
    let (code, out, err) = scrub(root, &[rel]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, format!("{rel}: 0 value(s) replaced\n"));
    assert!(
        err.contains(&format!(
            "warning: {rel}: 1 key-shaped string(s) left (sk- key)"
        )),
        "{err}"
    );
    assert!(!err.contains(shaped), "{err}");
    assert_eq!(std::fs::read(root.join(rel)).unwrap(), before);
}

/// `scrub` with no variable but `SCRUB_TEST_API_TOKEN` (so the count of secret values is
/// the test's own).
fn scrub_clean_env(root: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
        .current_dir(root)
        .env_clear()
        .env("SCRUB_TEST_API_TOKEN", PROC_KEY)
        .arg("scrub")
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 24, item 3: a `.env` of 10,000 long values made `scrub` build a 477 MB automaton
/// (Secrets::MAX_VALUES, Secrets::MAX_BYTES). Over the bounds, `scrub` refuses before it
/// reads any cassette (exit 2, `Error:` naming both bounds, never a value), so no partial
/// scrub looks done; within them it scrubs as before.
#[test]
fn a_secret_set_over_the_redaction_bounds_is_refused_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join("workflows/wf/tests")).unwrap();
    let rel = "workflows/wf/tests/a.cassette.json";
    write(root, rel, &cassette(PROC_KEY, "p"));
    let before = std::fs::read(root.join(rel)).unwrap();
    // 10,000 distinct values of 1,000 bytes, each built at run time.
    let value = |i: usize| format!("{i:08}-{}", "v".repeat(991));
    let env: String = (0..10_000)
        .map(|i| format!("K{i}_TOKEN={}\n", value(i)))
        .collect();
    std::fs::write(root.join(".env"), &env).unwrap();
    let (code, out, err) = scrub_clean_env(root);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(&format!(
            "Error: the key-like variables of the environment and `.env` hold 10001 secret values of {} bytes together, more than the {} values or {} KiB that redaction by value takes",
            10_000 * 1_000 + PROC_KEY.len(),
            Secrets::MAX_VALUES,
            Secrets::MAX_BYTES / 1024
        )),
        "{err}"
    );
    assert!(out.is_empty(), "no cassette was read: {out}");
    assert!(!err.contains(&value(7)) && !err.contains(PROC_KEY), "{err}");
    assert_eq!(std::fs::read(root.join(rel)).unwrap(), before);

    // Within the bounds (1,000 values of 200 bytes and the process's key), it scrubs.
    let env: String = (0..Secrets::MAX_VALUES - 1)
        .map(|i| format!("K{i}_TOKEN={i:08}-{}\n", "w".repeat(191)))
        .collect();
    std::fs::write(root.join(".env"), &env).unwrap();
    let (code, out, err) = scrub_clean_env(root);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out, format!("{rel}: 1 value(s) replaced\n"));
}

/// Issue 24, item 4: a cassette that does not parse because a value has the wrong type is
/// reported with serde's message, which quotes the value. `check` masks key-shaped strings
/// in its messages (WFX450); `scrub` (redaction by value only) and a replay in `test`
/// printed a key-shaped string that is no variable's value verbatim. A cassette error shown
/// to a person masks it (`CassetteError`'s `Display`).
#[test]
fn a_cassette_error_quoting_a_key_shaped_value_masks_it_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let tests = root.join("workflows/wf/tests");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(
        root.join("workflows/wf/workflow.yaml"),
        "title: W\ninstructions: x\nstates:\n  a:\n    triggers: { manual: }\n",
    )
    .unwrap();
    std::fs::write(
        tests.join("a.test.yaml"),
        "title: t\ndescription: d\nsteps:\n  - send: hi\n",
    )
    .unwrap();
    let shaped = concat!("sk-", "proj-FAKEonlyNOTaREALkey0000");
    let c = cassette("m", "p");
    let text = wfx_schemas::cassette::to_json(&c, &Secrets::default())
        .0
        .replacen("\"stepMs\": 1", &format!("\"stepMs\": \"{shaped}\""), 1);
    std::fs::write(tests.join("a.cassette.json"), &text).unwrap();
    let (code, out, err) = scrub(root, &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("invalid type: string \"***"), "{err}");
    let test = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
        .current_dir(root)
        .args(["test", "wf", "--json"])
        .output()
        .unwrap();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&test.stdout),
        String::from_utf8_lossy(&test.stderr)
    );
    assert!(shown.contains("invalid type: string \\\"***"), "{shown}");
    for s in [&out, &err, &shown] {
        assert!(!s.contains(shaped), "{s}");
        assert!(!s.contains(&shaped[8..]), "{s}");
    }
}
