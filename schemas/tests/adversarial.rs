//! Hostile and unlucky input for the format crate: odd YAML, odd text, huge sizes, wrong
//! types everywhere, odd regexes and odd graphs. Every input goes through every entry
//! point (`yaml::parse`, the models, `check_text`/`check_file`/`check_paths`/
//! `check_workspace` over a copy of the customer-support corpus, the graph renderers) and
//! the invariants below are asserted:
//!
//! - nothing panics and everything terminates (inputs are bounded; nothing is timed);
//! - every diagnostic range (and related range, and fix edit) lies within its file's text
//!   and on char boundaries; every message is non-empty; every code is registered;
//! - output is sorted by [`Diagnostic::sort_key`] and deterministic (run twice, compare);
//! - every span-tree node and YAML issue range lies within the text on char boundaries.
//!
//! Peak timings of the huge inputs are printed (`--nocapture`), never asserted.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Instant;

use wfx_schemas::check::{check_file, check_paths, check_text, check_workspace};
use wfx_schemas::diagnostics::{Diagnostic, code_by_name};
use wfx_schemas::files::{FileAccess, MemFiles};
use wfx_schemas::graph::Graph;
use wfx_schemas::model::case::{ACTIONS, ASSERTIONS, Case, TOP_LEVEL_KEYS};
use wfx_schemas::model::workflow::Workflow;
use wfx_schemas::text::{LineIndex, PositionEncoding, TextRange, decode};
use wfx_schemas::yaml::{self, Node, Value};

const WF: &str = "workflows/order-lookup/workflow.yaml";
const CASE: &str = "workflows/order-lookup/tests/adv.test.yaml";
const AGENT: &str = "workflows/order-lookup/tests/adv.agent.yaml";

/// The customer-support corpus as an in-memory workspace rooted at `""` (read once).
fn corpus() -> MemFiles {
    static CORPUS: std::sync::OnceLock<MemFiles> = std::sync::OnceLock::new();
    CORPUS.get_or_init(read_corpus).clone()
}

fn read_corpus() -> MemFiles {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/customer-support");
    let mut fs = MemFiles::new();
    let mut todo = vec![root.clone()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).expect("corpus folder is readable") {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                fs.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    assert!(fs.is_file(WF), "corpus has {WF}");
    fs
}

fn is_boundary(text: &[u8], at: u32) -> bool {
    match std::str::from_utf8(text) {
        Ok(s) => s.is_char_boundary(at as usize),
        // Undecodable file: the range is in bytes; only require it to be in bounds.
        Err(_) => (at as usize) <= text.len(),
    }
}

#[track_caller]
fn assert_range_in(text: &[u8], r: TextRange, what: &str) {
    assert!(r.start <= r.end, "{what}: inverted range {r:?}");
    assert!(
        (r.end as usize) <= text.len(),
        "{what}: range {r:?} past the end ({} bytes)",
        text.len()
    );
    assert!(
        is_boundary(text, r.start) && is_boundary(text, r.end),
        "{what}: range {r:?} splits a character"
    );
}

/// Text of `file` as checked: the workspace contents with the BOM stripped, or `overlay`.
fn text_of(fs: &MemFiles, file: &str, overlay: Option<(&str, &str)>) -> Vec<u8> {
    if let Some((p, t)) = overlay
        && p == file
    {
        return t.as_bytes().to_vec();
    }
    let bytes = fs.read(file).unwrap_or_default();
    bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .map(<[u8]>::to_vec)
        .unwrap_or(bytes)
}

/// Every invariant of a diagnostic list.
#[track_caller]
fn assert_diagnostics(fs: &MemFiles, overlay: Option<(&str, &str)>, diags: &[Diagnostic]) {
    for d in diags {
        let what = format!("{} {} {:?}", d.code.code, d.file, d.message);
        let text = text_of(fs, &d.file, overlay);
        assert_range_in(&text, d.range, &what);
        assert!(!d.message.trim().is_empty(), "{what}: empty message");
        let reg = code_by_name(d.code.code).unwrap_or_else(|| panic!("{what}: unregistered code"));
        assert_eq!(reg.slug, d.code.slug, "{what}");
        for r in &d.related {
            let rt = text_of(fs, &r.file, overlay);
            assert_range_in(&rt, r.range, &format!("{what} related {}", r.file));
            assert!(!r.message.is_empty(), "{what}: empty related message");
        }
        for f in &d.fixes {
            assert!(!f.title.is_empty(), "{what}: empty fix title");
            for e in &f.edits {
                let et = text_of(fs, &e.file, overlay);
                assert_range_in(&et, e.range, &format!("{what} fix {}", f.title));
            }
        }
    }
    for w in diags.windows(2) {
        assert!(
            w[0].sort_key() <= w[1].sort_key(),
            "unsorted: {:?} before {:?}",
            w[0].sort_key(),
            w[1].sort_key()
        );
    }
}

/// Every span-tree node and YAML issue of `text` lies within it on char boundaries.
#[track_caller]
fn assert_tree(text: &str) -> yaml::Parsed {
    let parsed = yaml::parse(text);
    let bytes = text.as_bytes();
    let mut todo: Vec<&Node> = parsed.documents.iter().collect();
    let mut seen = 0usize;
    while let Some(n) = todo.pop() {
        seen += 1;
        assert_range_in(bytes, n.range, &format!("node {:?}", n.type_name()));
        match &n.value {
            Value::Seq(items) => todo.extend(items.iter()),
            Value::Map(entries) => {
                for e in entries {
                    todo.push(&e.key);
                    todo.push(&e.value);
                }
            }
            _ => {}
        }
    }
    assert!(seen >= parsed.documents.len());
    for r in &parsed.document_ranges {
        assert_range_in(bytes, *r, "document range");
    }
    for i in &parsed.issues {
        assert_range_in(bytes, i.range, &format!("issue {:?} {}", i.kind, i.message));
        assert!(!i.message.is_empty());
        if let Some(r) = i.related {
            assert_range_in(bytes, r, "issue related");
        }
    }
    parsed
}

/// Runs `text` through every entry point as a case, a workflow and an agent script, twice,
/// asserting every invariant; returns the case diagnostics of `check_text`.
#[track_caller]
fn hammer(text: &str) -> Vec<Diagnostic> {
    hammer_with(text, true)
}

/// [`hammer`] without the whole-workspace runs (`check_workspace`, `check_paths`), for the
/// big loops over case shapes where only the file's own pipeline changes.
#[track_caller]
fn hammer_quick(text: &str) -> Vec<Diagnostic> {
    hammer_with(text, false)
}

#[track_caller]
fn hammer_with(text: &str, workspace: bool) -> Vec<Diagnostic> {
    let parsed = assert_tree(text);
    for doc in &parsed.documents {
        let case = Case::from_node(doc);
        for s in &case.steps {
            let _ = s.form();
        }
        let wf = Workflow::from_node(doc);
        let g = Graph::from_workflow(&wf);
        let _ = g.to_mermaid(None);
        let _ = g.to_dot(None);
        let _ = g.to_reference_json();
    }
    let base = corpus();
    let mut case_diags = Vec::new();
    for path in [CASE, WF, AGENT] {
        let first = check_text(&base, path, text);
        assert_diagnostics(&base, Some((path, text)), &first);
        assert!(first.iter().all(|d| d.file == path));
        assert_eq!(
            first,
            check_text(&base, path, text),
            "check_text is not deterministic for {path}"
        );
        let fs = base.clone().with(path, text);
        let by_file = check_file(&fs, path);
        assert_diagnostics(&fs, None, &by_file);
        // `check_file` decodes (strips one leading BOM); an editor buffer arrives decoded.
        let decoded = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        assert_eq!(
            by_file,
            check_text(&base, path, decoded),
            "check_file and check_text disagree on {path}"
        );
        if workspace {
            let all = check_workspace(&fs, "");
            assert_diagnostics(&fs, None, &all);
            assert_eq!(
                all,
                check_workspace(&fs, ""),
                "check_workspace is not deterministic"
            );
            let paths = check_paths(&fs, &[String::from("workflows/order-lookup")])
                .unwrap()
                .diagnostics;
            assert_diagnostics(&fs, None, &paths);
        }
        if path == CASE {
            case_diags = first;
        }
    }
    case_diags
}

/// `check_workspace` once with `text` as the corpus's `workflow.yaml`, so every corpus case
/// runs its cross-file rules against it.
#[track_caller]
fn workspace_once(text: &str) {
    let fs = corpus().with(WF, text);
    let all = check_workspace(&fs, "");
    assert_diagnostics(&fs, None, &all);
}

fn codes(diags: &[Diagnostic]) -> Vec<&'static str> {
    diags.iter().map(|d| d.code.code).collect()
}

// ---------------------------------------------------------------------------------------
// Odd YAML
// ---------------------------------------------------------------------------------------

const ODD_YAML: &[&str] = &[
    // anchors and aliases in keys and values, merge keys
    "title: &t hello\ndescription: *t\nsteps:\n  - send: *t\n",
    "&k title: x\n*k : y\n",
    "base: &b { send: hi }\nsteps:\n  - <<: *b\n  - { <<: *b, succeeded: true }\n",
    "steps:\n  - &s send: hi\n  - *s : there\n",
    "steps: &steps\n  - send: hi\n  - reply: *steps\n",
    "a: *undefined\n",
    "&a a: &b b\n*b : *a\n",
    // tags
    "title: !!str 123\nsteps:\n  - send: !!str true\n",
    "title: !custom x\nsteps: !custom\n  - send: hi\n",
    "title: !!binary R0lGODlhDAAMAIQAAP//9/X\nsteps: []\n",
    "title: !!int nope\nskip: !!null x\nsteps: !!seq []\n",
    "!!map { title: x }\n",
    "%TAG !e! tag:example.com,2000:\n---\ntitle: !e!foo x\n",
    // complex keys
    "? [a]\n: b\n",
    "? { a: 1 }\n: b\nsteps: []\n",
    "steps:\n  - ? [send]\n    : hi\n",
    "? |\n  block key\n: v\n",
    // flow collections spanning lines
    "steps: [\n  { send: hi },\n  { succeeded:\n      true }\n]\n",
    "title: { a: [1,\n 2, { b: c\n }] }\n",
    "steps: [ send: hi, succeeded: true ]\n",
    // block scalars with indicators and chomping
    "title: |+2\n    x\n\n\nsteps: []\n",
    "title: >-\n  folded\n  text\n\nsteps:\n  - send: |2-\n      keep\n",
    "description: |-\n\tnot indented\n",
    "title: |\n",
    "title: >\n\n\n",
    // documents, directives, comments
    "---\ntitle: x\n...\n",
    "---\n",
    "...\n",
    "---\n---\n---\n",
    "%YAML 1.1\n---\ntitle: yes\n",
    "%YAML 1.2\n%YAML 1.2\n---\n",
    "%FOO bar\n---\na: 1\n",
    "# only a comment\n",
    "#\n#\n# comments\n   # indented\n",
    "title: x # trailing\n# between\nsteps: # after key\n  # inside\n  - send: hi # after value\n",
    "title: x\n---\nsteps: []\n",
    "title: x\n...\n---\nsteps: []\n...\n",
    // tabs
    "steps:\n\t- send: hi\n",
    "title:\tx\n",
    "a:\n  b: 1\n\tc: 2\n",
    // empty and blank
    "",
    " ",
    "\n\n\n",
    "\r\n",
    "\t",
    // BOM
    "\u{FEFF}title: x\n",
    "title: x\n\u{FEFF}steps: []\n",
    "title: \u{FEFF}x\u{FEFF}\n",
    "\u{FEFF}\u{FEFF}a: 1\n",
    // line endings
    "title: x\rsteps:\r  - send: hi\r",
    "title: x\r\nsteps:\n  - send: hi\r\n  - succeeded: true\n",
    "title: \"a\r\nb\"\r\n",
    "title: |\r\n  a\r\n  b\r\n",
    "\r\r\r",
    // NUL and control characters
    "title: a\0b\n",
    "\0",
    "title: \"\\0\\x01\\u2028\"\n",
    "title: a\u{1}b\n",
    "title: a\u{7f}b\n",
    // unicode
    "title: 😀😀😀\nsteps:\n  - send: \"注文 ORD-1 ✓\"\n",
    "😀: 1\n注文: 2\nsteps:\n  - 😀: x\n",
    "title: e\u{301}\u{301}\u{301}\n",
    "title: \u{202E}evil\u{202C}\n\u{200B}steps: []\n",
    "\u{200B}title: x\n",
    "title: a\u{2028}b\u{85}c\n",
    "title: \"a\u{2028}b\u{85}c\"\n",
    "title: |\n  a\u{2028}b\n  c\u{85}d\n",
    "title: a\u{2029}b\n",
    "st\u{200D}eps:\n  - sen\u{301}d: hi\n",
    // syntax errors at odd places
    "title: \"unterminated\n",
    "title: 'unterminated\n",
    "steps: [\n",
    "steps: {\n",
    "a: b: c\n",
    "- a\nb: c\n",
    "title: x\n  bad: indent\n",
    "&anchor\n",
    "*alias\n",
    "!tag\n",
    "? \n",
    ": \n",
    "[}\n",
    "{]\n",
    "'\n",
    "\"\\uD800\"\n",
    "\"\\U0010FFFF\\U00110000\"\n",
    "title: 😀\"\n",
    "😀: [😀\n",
    "注文: {注文\n",
    "a: |\n 😀\n😀",
];

#[test]
fn odd_yaml_never_breaks_an_invariant() {
    let mut total = 0;
    for src in ODD_YAML {
        let diags = hammer(src);
        total += diags.len();
    }
    assert!(total > 0, "the odd inputs produced no diagnostics at all");
}

#[test]
fn yaml_syntax_errors_point_into_the_text() {
    for src in [
        "title: \"unterminated\n",
        "steps: [\n",
        "😀: [😀\n",
        "a: b: c\n",
    ] {
        let p = yaml::parse(src);
        assert!(p.has_syntax_error(), "{src:?}");
        let d = hammer(src);
        assert!(codes(&d).contains(&"WFX001"), "{src:?}: {:?}", codes(&d));
    }
}

#[test]
fn merge_keys_are_ordinary_keys() {
    // The reference's `yaml` package (YAML 1.2 core) does not merge `<<`: it is a key.
    let p = yaml::parse("a: &b { x: 1 }\nc:\n  <<: *b\n");
    let c = p.documents[0].get_value("c").unwrap();
    assert_eq!(
        c.get_value("<<")
            .and_then(|n| n.get_value("x"))
            .map(|n| n.value.clone()),
        Some(Value::Int(1))
    );
}

#[test]
fn aliases_take_the_alias_range_and_the_anchor_value() {
    let src = "title: &t hello\ndescription: *t\n";
    let p = yaml::parse(src);
    let d = p.documents[0].get_value("description").unwrap();
    assert_eq!(d.as_str(), Some("hello"));
    assert_eq!(&src[d.range.as_usize()], "*t");
}

#[test]
fn bom_in_the_middle_is_content_not_stripped() {
    // Only a leading BOM is a byte-order mark (stripped by `decode`); a later U+FEFF is a
    // character of the text, and ranges must still be on char boundaries.
    assert_eq!(decode("\u{FEFF}a\u{FEFF}".as_bytes()).unwrap(), "a\u{FEFF}");
    hammer("title: x\n\u{FEFF}steps: []\n");
}

#[test]
fn cr_only_line_endings_are_refused_at_the_first_cr() {
    // The reference's YAML library reads a lone CR as content, not a line break
    // (docs/yaml-parity.md, `lone-cr`): such a file is refused where the first one is.
    let cr = yaml::parse("title: x\rsteps:\r  - send: hi\r");
    assert!(cr.has_syntax_error(), "{:?}", cr.issues);
    assert_eq!(cr.issues[0].range, TextRange::new(8, 9));
    let crlf = yaml::parse("title: x\r\nsteps:\r\n  - send: hi\r\n");
    let lf = yaml::parse("title: x\nsteps:\n  - send: hi\n");
    assert!(crlf.issues.is_empty(), "{:?}", crlf.issues);
    assert_eq!(lf.documents[0].to_json(), crlf.documents[0].to_json());
}

#[test]
fn invalid_utf8_is_one_diagnostic_at_the_bad_byte() {
    let fs = corpus()
        .with(CASE, b"title: ok\nsteps:\n  - send: \xFF\xFE\n".to_vec())
        .with(
            "workflows/order-lookup/tests/bom.test.yaml",
            b"\xEF\xBB\xBFtitle: \xC3\n".to_vec(),
        )
        .with(
            "workflows/order-lookup/tests/trunc.test.yaml",
            "title: 😀".as_bytes()[..10].to_vec(),
        );
    let d = check_file(&fs, CASE);
    assert_diagnostics(&fs, None, &d);
    assert_eq!(codes(&d), ["WFX006"], "{d:?}");
    assert_eq!(d[0].range, TextRange::new(27, 28));
    let d = check_file(&fs, "workflows/order-lookup/tests/bom.test.yaml");
    assert_diagnostics(&fs, None, &d);
    // After the BOM: `title: ` is 7 bytes.
    assert_eq!(d[0].range.start, 7);
    let d = check_file(&fs, "workflows/order-lookup/tests/trunc.test.yaml");
    assert_diagnostics(&fs, None, &d);
    assert_eq!(codes(&d), ["WFX006"]);
    let all = check_workspace(&fs, "");
    assert_diagnostics(&fs, None, &all);
    // An undecodable workflow.yaml: the cases still get checked (the workflow is "missing"
    // for cross-file rules), nothing panics.
    let fs = corpus().with(WF, b"title: \xFF\n".to_vec());
    let all = check_workspace(&fs, "");
    assert_diagnostics(&fs, None, &all);
    assert!(all.iter().any(|d| d.file == WF && d.code.code == "WFX006"));
}

#[test]
fn check_file_on_missing_and_other_files() {
    let fs = corpus();
    let d = check_file(&fs, "workflows/order-lookup/tests/nope.test.yaml");
    assert_diagnostics(&fs, None, &d);
    assert_eq!(codes(&d), ["WFX902"], "{d:?}");
    assert!(check_file(&fs, "AGENTS.md").is_empty());
    assert!(check_paths(&fs, &["no/such/path".into()]).is_err());
    let run = check_paths(&fs, &[String::new()]).unwrap();
    assert_diagnostics(&fs, None, &run.diagnostics);
    assert!(run.files > 5, "{}", run.files);
}

// ---------------------------------------------------------------------------------------
// Wrong types everywhere
// ---------------------------------------------------------------------------------------

const WRONG_VALUES: &[&str] = &[
    "[a, b]", "[]", "{ a: 1 }", "{}", "null", "~", "", "42", "-1", "1.5", ".nan", "true", "false",
    "\"\"", "'😀'", "/[/",
];

/// Every step key the model knows (FORMAT §B.2), plus a near miss and the empty key.
fn step_keys() -> Vec<&'static str> {
    ACTIONS
        .iter()
        .chain(ASSERTIONS)
        .copied()
        .chain(["sned", ""])
        .collect()
}

#[test]
fn every_case_key_with_every_wrong_type() {
    for key in TOP_LEVEL_KEYS {
        for v in WRONG_VALUES {
            hammer_quick(&format!("title: t\nsteps:\n  - send: hi\n{key}: {v}\n"));
        }
    }
}

#[test]
fn every_step_key_with_every_wrong_type() {
    for key in step_keys() {
        for v in WRONG_VALUES {
            hammer_quick(&format!("title: t\nsteps:\n  - {key}: {v}\n"));
        }
    }
}

const STEP_SUBKEYS: &[(&str, &[&str])] = &[
    ("decide", &["to", "comment"]),
    ("deliver", &["trigger", "variables"]),
    ("parked", &["channel", "state"]),
    ("raised", &["code", "reason"]),
    ("reply", &["includes", "excludes"]),
    ("calledTool", &["name", "input"]),
    ("blockedTool", &["name", "input"]),
    ("ranWorkflow", &["workflow", "status", "count"]),
    ("trail", &["to", "kind", "reason", "count"]),
    ("variables", &["expect", "path", "locked"]),
    ("grade", &["closedQA", "atLeast"]),
];

#[test]
fn every_step_field_with_every_wrong_type() {
    for (step, fields) in STEP_SUBKEYS {
        for f in *fields {
            for v in WRONG_VALUES {
                hammer_quick(&format!(
                    "title: t\nsteps:\n  - send: hi\n  - {step}:\n      {f}: {v}\n"
                ));
            }
        }
    }
}

#[test]
fn nested_case_sections_with_wrong_types() {
    for v in WRONG_VALUES {
        for src in [
            format!("title: t\ntrigger:\n  id: {v}\nsteps: [ {{ send: hi }} ]\n"),
            format!("title: t\nvariables:\n  {v}: {v}\nsteps: [ {{ send: hi }} ]\n"),
            format!(
                "title: t\nworkspace:\n  a.txt: {v}\n  b.txt: {{ from: {v} }}\nsteps: [ {{ send: hi }} ]\n"
            ),
            format!(
                "title: t\nmocks:\n  - {v}\n  - tool: {v}\n    whenInput: {v}\n    result: {v}\nsteps: [ {{ send: hi }} ]\n"
            ),
        ] {
            hammer_quick(&src);
        }
    }
}

#[test]
fn steps_with_zero_or_two_keys_and_duplicate_keys() {
    for src in [
        "title: t\nsteps:\n  - {}\n",
        "title: t\nsteps:\n  - send: hi\n    succeeded: true\n",
        "title: t\nsteps:\n  - send: hi\n  - decide: { to: a, to: b }\n",
        "title: t\ntitle: u\nsteps: []\nsteps: []\n",
        "title: t\nsteps:\n  - send: hi\n  - variables:\n      expect: { a: 1, a: 2 }\n      expect: {}\n",
        "title: t\nsteps:\n  - send: hi\n  - reply: { includes: a, includes: b, excludes: [], excludes: [] }\n",
        "title: t\nmocks:\n  - { tool: a, tool: b }\nsteps:\n  - send: hi\n",
        "title: t\n1: a\n1: b\ntrue: x\ntrue: y\nnull: z\n~: w\n",
        "title: t\nsteps:\n  - - send: hi\n  - [ ]\n  - hi\n  - 1\n  - null\n",
    ] {
        hammer(src);
    }
}

const WORKFLOW_KEYS: &[&str] = &[
    "title",
    "instructions",
    "disabled",
    "runtime",
    "settings",
    "metadata",
    "tests",
    "tools",
    "skills",
    "extensions",
    "states",
];

#[test]
fn every_workflow_key_with_every_wrong_type() {
    let base = corpus();
    let original = String::from_utf8(base.read(WF).unwrap()).unwrap();
    for key in WORKFLOW_KEYS {
        for v in WRONG_VALUES {
            let text = format!("{key}: {v}\nstates:\n  a:\n    triggers: {{ manual: }}\n");
            hammer_quick(&text);
            workspace_once(&text);
        }
    }
    // Every state field given every wrong type, in the real workflow (so the real cases
    // run their cross-file rules against it).
    for field in [
        "type",
        "title",
        "summary",
        "instructions",
        "evidence",
        "requires",
        "triggers",
        "before",
        "after",
        "budget",
        "on_error",
        "tools",
        "skills",
        "transitions",
        "metadata",
    ] {
        for v in WRONG_VALUES {
            let text = original.replacen(
                "  identify-case:\n",
                &format!("  identify-case:\n    {field}: {v}\n"),
                1,
            );
            assert_ne!(text, original);
            hammer_quick(&text);
            workspace_once(&text);
        }
    }
}

#[test]
fn workflow_trigger_transition_and_hook_shapes() {
    for v in WRONG_VALUES {
        for src in [
            format!(
                "states:\n  a:\n    triggers:\n      manual: {v}\n      {v}: {{ session: {v}, requires: {v}, returns: [{v}] }}\n"
            ),
            format!(
                "states:\n  a:\n    transitions:\n      - {v}\n      - {{ to: {v}, type: {v}, description: {v} }}\n"
            ),
            format!(
                "states:\n  a:\n    before: {v}\n    after:\n      - {{ script: {v}, max_iterations: {v} }}\n      - {{ rubric: {v} }}\n      - {{ {v}: {v} }}\n"
            ),
            format!(
                "states:\n  a:\n    tools: {{ allow: [{v}, {{ tool: {v}, args: {{ a: {v} }}, paths: {v} }}], forbid: {v} }}\n"
            ),
            format!("states:\n  {v}:\n    transitions: [ {{ to: {v} }} ]\n"),
            format!(
                "states:\n  a:\n    skills: {{ allow: {v}, forbid: [{v}] }}\n    budget: {{ maxTurns: {v}, maxParks: {v} }}\n"
            ),
        ] {
            hammer_quick(&src);
            workspace_once(&src);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Regexes: compiled, never run, at check time
// ---------------------------------------------------------------------------------------

const REGEXES: &[&str] = &[
    "/(?<=a)b/",
    "/[/",
    "/a/gg",
    "//",
    "/\\u{1F600}/u",
    "/(a+)+$/",
    "/(a|aa)*b/",
    "/(.*a){20}/",
    "/(?<n>x)\\k<n>/",
    "/\\k<nope>/u",
    "/(?<a>x)(?<a>y)/",
    "/a{2,1}/",
    "/a**/",
    "/\\p{L}/u",
    "/\\p{Nope}/u",
    "/[z-a]/",
    "/(?=)/",
    "/😀/",
    "/😀{2}/u",
    "/\\/",
    "/a/😀",
    "/a/ G",
    "/x\ny/s",
    "/\\c/",
    "/(/",
    "/)/",
    "/[\\d-z]/u",
    "/a/dgimsuyv",
    "/a/vu",
    "/[[a]--[b]]/v",
    "/\\u{110000}/u",
    "/(?<😀>x)/",
    "/\\1(a)/",
];

#[test]
fn regexes_compile_without_panicking() {
    for r in REGEXES {
        // The token API first, then the same token in every regex-bearing place of a case.
        let _ = wfx_schemas::jsregex::compile_token(r);
        let q = serde_json::to_string(r).unwrap();
        hammer(&format!(
            "title: t\nsteps:\n  - send: hi\n  - reply: {{ includes: [{q}], excludes: {q} }}\n  - raised: {{ reason: {q} }}\n  - trail: {{ to: a, reason: {q}, count: 1 }}\nmocks:\n  - tool: x\n    whenInput: {{ q: {q} }}\n"
        ));
    }
}

#[test]
fn catastrophic_patterns_are_only_compiled_at_check_time() {
    // `(a+)+$` against a long run of `a`s followed by `b` takes exponential time if it is
    // ever executed. The check pipeline only compiles case regexes; if it ran this one
    // against anything of the document (the reply text is not known at check time), this
    // test would not terminate. The reply token and the send text are both 64 `a`s + `b`.
    let evil = "/^(a+)+$/";
    let long = format!("{}b", "a".repeat(64));
    let src = format!(
        "title: {long}\ndescription: {long}\nsteps:\n  - send: {long}\n  - reply: {{ includes: [\"{evil}\", {long}] }}\n  - raised: {{ code: {long}, reason: \"{evil}\" }}\n"
    );
    let diags = hammer(&src);
    assert!(!codes(&diags).contains(&"WFX001"), "{diags:?}");
    // The compiled token is valid (no diagnostic about it either).
    assert!(wfx_schemas::jsregex::compile_token(evil).unwrap().is_ok());
}

#[test]
fn regex_token_edge_shapes() {
    use wfx_schemas::jsregex::{compile_token, regex_token};
    assert_eq!(regex_token("//"), Some(("", "")));
    assert!(compile_token("//").unwrap().is_ok());
    assert!(compile_token("/[/").unwrap().is_err());
    assert!(compile_token("/a/gg").unwrap().is_err());
    assert!(compile_token("/(?<=a)b/").unwrap().is_ok());
    assert!(
        compile_token("/\\u{1F600}/u")
            .unwrap()
            .unwrap()
            .test("😀")
            .unwrap()
    );
    // Multi-byte characters at every position of the token shape.
    assert_eq!(regex_token("/😀/"), Some(("😀", "")));
    assert_eq!(regex_token("😀/a/"), None);
    assert_eq!(regex_token("/a/😀"), None);
    assert_eq!(regex_token("/"), None);
    assert_eq!(regex_token(""), None);
}

// ---------------------------------------------------------------------------------------
// Graphs with odd names, cycles and many states
// ---------------------------------------------------------------------------------------

fn workflow(src: &str) -> Workflow {
    let p = yaml::parse(src);
    assert!(!p.has_syntax_error(), "{:?}", p.issues);
    Workflow::from_node(&p.documents[0])
}

const ODD_NAMES: &[&str] = &[
    "\"a\\\"b\"",
    "'it''s'",
    "\"back\\\\slash\"",
    "\"new\\nline\"",
    "end",
    "END",
    "1st",
    "0",
    "😀",
    "注文",
    "\"a b\"",
    "\"a->b\"",
    "\"a;b\"",
    "\"{x}\"",
    "\"[x]\"",
    "\"<b>\"",
    "\"a|b\"",
    "\"#quot;\"",
    "__start__",
    "\"\\t\"",
    "\"\"",
    "\"a\\\\nb\"",
    "\"e\\u0301\"",
    "\"\\u202Eevil\"",
    "\"a\\u2028b\"",
    "graph",
    "node",
    "edge",
    "subgraph",
    "digraph",
];

#[test]
fn odd_state_names_render_in_every_format() {
    for name in ODD_NAMES {
        let src = format!(
            "states:\n  {name}:\n    title: {name}\n    triggers: {{ manual: , {name}: }}\n    on_error: {name}\n    transitions:\n      - {{ to: {name}, description: {name} }}\n      - {{ to: other }}\n  other:\n    type: human\n    transitions: [ {{ to: {name}, type: approve }} ]\n"
        );
        let wf = workflow(&src);
        assert_eq!(wf.states.len(), 2, "{name}");
        let g = Graph::from_workflow(&wf);
        let m = g.to_mermaid(None);
        let d = g.to_dot(None);
        assert!(m.starts_with("flowchart TD\n") && d.ends_with("}\n"));
        // Every DOT line of a node or an edge has balanced (unescaped) quotes.
        for line in d.lines().filter(|l| l.contains('"')) {
            let unescaped = line.replace("\\\\", "").replace("\\\"", "");
            assert_eq!(
                unescaped.matches('"').count() % 2,
                0,
                "{name}: unbalanced quotes in {line:?}"
            );
        }
        // Mermaid ids are ASCII word characters and never the keyword `end`.
        for line in m
            .lines()
            .skip(1)
            .filter(|l| l.contains("-->") || l.contains("-.->"))
        {
            let first = line.split_whitespace().next().unwrap();
            assert!(
                !first.is_empty() && first.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{name}: {line}"
            );
            let lower = first.to_ascii_lowercase();
            assert!(
                ![
                    "end",
                    "subgraph",
                    "graph",
                    "style",
                    "class",
                    "classdef",
                    "click",
                    "linkstyle"
                ]
                .contains(&lower.as_str()),
                "{name}: {line}"
            );
        }
        let svg = g.to_svg(None);
        if let Ok(svg) = &svg {
            assert!(svg.contains("<svg"), "{name}");
        }
        hammer(&src);
    }
}

/// The id of each Mermaid node-definition line (the lines after the header, one per node).
fn mermaid_node_ids(m: &str, nodes: usize) -> Vec<String> {
    m.lines()
        .skip(1)
        .take(nodes)
        .map(|l| {
            l.trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn mermaid_ids_stay_distinct_when_sanitised_names_collide() {
    // `a-b`/`a_b`/`a b`, CJK names (every non-ASCII char sanitises to `_`), `end`/`nend`
    // and `1st`/`n1st` collide after sanitising; each state must keep its own node.
    let src = "states:\n  a-b: { triggers: { manual: }, transitions: [ { to: a_b } ] }\n  a_b: { transitions: [ { to: \"a b\" } ] }\n  \"a b\": { transitions: [ { to: 注 } ] }\n  注: { transitions: [ { to: 文 } ] }\n  文: { transitions: [ { to: end } ] }\n  end: { transitions: [ { to: nend } ] }\n  nend: { transitions: [ { to: 1st } ] }\n  1st: { transitions: [ { to: n1st } ] }\n  n1st: { transitions: [ { to: missing-state } ] }\n";
    let g = Graph::from_workflow(&workflow(src));
    assert_eq!(g.nodes.len(), 10);
    let m = g.to_mermaid(None);
    let ids = mermaid_node_ids(&m, g.nodes.len());
    let distinct: std::collections::BTreeSet<_> = ids.iter().collect();
    assert_eq!(
        distinct.len(),
        ids.len(),
        "colliding Mermaid ids {ids:?} in\n{m}"
    );
    // Every edge joins the two nodes it names: `a-b` → `a_b` is not a self-loop.
    let edge = m.lines().find(|l| l.contains("-->")).unwrap();
    let mut parts = edge.split_whitespace();
    let (from, to) = (parts.next().unwrap(), parts.nth(1).unwrap());
    assert_ne!(from, to, "{edge}");
    assert_eq!(from, ids[1]);
    assert_eq!(to, ids[2]);
    // Ids are still Mermaid-safe and deterministic.
    assert!(
        ids.iter()
            .all(|i| !i.is_empty() && i != "end" && !i.starts_with(|c: char| c.is_ascii_digit()))
    );
    assert_eq!(m, g.to_mermaid(None));
}

#[test]
fn mermaid_and_dot_labels_escape_quotes_and_line_breaks() {
    for name in [
        "\"a\\\"b\"",
        "\"new\\nline\"",
        "\"cr\\rhere\"",
        "\"pipe|x\"",
    ] {
        let src = format!(
            "states:\n  {name}:\n    triggers: {{ manual: }}\n    transitions: [ {{ to: {name}, description: {name} }} ]\n"
        );
        let g = Graph::from_workflow(&workflow(&src));
        let m = g.to_mermaid(None);
        // One line per node, per edge and per class: a raw line break would split one.
        let node_lines: Vec<&str> = m.lines().skip(1).take(g.nodes.len()).collect();
        for l in &node_lines {
            assert_eq!(
                l.matches('"').count(),
                2,
                "{name}: a node label leaks a quote or breaks a line: {l:?}\n{m}"
            );
        }
        assert_eq!(
            m.lines().count(),
            1 + g.nodes.len() + g.edges.len() + 3,
            "{name}:\n{m}"
        );
        let d = g.to_dot(None);
        for line in d.lines().filter(|l| l.contains('"')) {
            let unescaped = line.replace("\\\\", "").replace("\\\"", "");
            assert_eq!(
                unescaped.matches('"').count() % 2,
                0,
                "{name}: unbalanced quotes in {line:?}\n{d}"
            );
        }
        assert_eq!(
            d.lines().count(),
            5 + g.nodes.len() + g.edges.len(),
            "{name}:\n{d}"
        );
    }
}

#[test]
fn a_very_long_state_name_renders() {
    // Implicit keys are limited to 1024 characters in YAML; an explicit `?` key is not.
    let name = "s".repeat(5_000);
    let src = format!(
        "states:\n  ? {name}\n  : triggers: {{ manual: }}\n    transitions: [ {{ to: {name} }} ]\n"
    );
    let g = Graph::from_workflow(&workflow(&src));
    assert!(g.to_mermaid(None).contains(&name));
    assert!(g.to_dot(None).contains(&name));
    let svg = g.to_svg(None).expect("a long name renders");
    assert!(svg.contains("<svg"));
}

/// A workflow of `n` states in a ring with chords (cycles everywhere).
fn ring(n: usize) -> String {
    let mut src = String::from("states:\n");
    for i in 0..n {
        src.push_str(&format!(
            "  s{i}:\n{}    transitions:\n      - {{ to: s{}, description: next }}\n      - {{ to: s{} }}\n",
            if i == 0 { "    triggers: { manual: }\n" } else { "" },
            (i + 1) % n,
            (i * 7 + 3) % n
        ));
    }
    src
}

#[test]
fn a_thousand_state_cyclic_workflow_builds_and_renders_as_text() {
    let src = ring(1_000);
    let wf = workflow(&src);
    assert_eq!(wf.states.len(), 1_000);
    let g = Graph::from_workflow(&wf);
    assert_eq!(g.nodes.len(), 1_001);
    assert_eq!(g.edges.len(), 2_001);
    let t = Instant::now();
    let m = g.to_mermaid(None);
    let d = g.to_dot(None);
    eprintln!(
        "1000-state mermaid+dot: {:?} ({} + {} bytes)",
        t.elapsed(),
        m.len(),
        d.len()
    );
    assert!(m.lines().count() > 3_000);
    let fs = corpus().with(WF, src.clone());
    let t = Instant::now();
    let diags = check_workspace(&fs, "");
    eprintln!(
        "1000-state check_workspace: {:?} ({} diagnostics)",
        t.elapsed(),
        diags.len()
    );
    assert_diagnostics(&fs, None, &diags);
}

// ---------------------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------------------

#[test]
fn deep_block_and_flow_nesting_is_bounded() {
    let depth = 10_000;
    // Compact block sequences nest on one line (`- - - x`), 2 bytes a level; block mappings
    // need a line and one more space of indentation a level, so 10,000 levels would be a
    // 50 MB text: they go 2,000 deep (2 MB).
    let map_depth = 2_000;
    let mut block = String::new();
    for i in 0..map_depth {
        block.push_str(&" ".repeat(i));
        block.push_str("a:\n");
    }
    let seq = format!("{}x\n", "- ".repeat(depth));
    let flow = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let flow_map = format!("{}{}", "{a: ".repeat(depth), "}".repeat(depth));
    let mixed = format!(
        "steps:\n  - reply:\n      includes: {}x{}\n",
        "[{a: ".repeat(depth / 2),
        "}]".repeat(depth / 2)
    );
    for (what, src) in [
        ("block map", block),
        ("compact block seq", seq),
        ("flow seq", flow),
        ("flow map", flow_map),
        ("mixed flow in a case", mixed),
    ] {
        let t = Instant::now();
        let p = assert_tree(&src);
        eprintln!(
            "{what} nesting ({} bytes): parse {:?}",
            src.len(),
            t.elapsed()
        );
        // Block nesting stops at MAX_DEPTH (WFX003); saphyr refuses a 256th flow level
        // outright (a syntax error, WFX001, that says so).
        let flow = what.contains("flow");
        assert!(
            p.issues.iter().any(|i| if flow {
                i.kind == yaml::YamlIssueKind::Syntax
                    && i.message.contains("nested deeper than 255 levels")
            } else {
                i.kind == yaml::YamlIssueKind::TooDeep
            }),
            "{what}: {:?}",
            p.issues
                .iter()
                .map(|i| (i.kind, &i.message))
                .collect::<Vec<_>>()
        );
        let t = Instant::now();
        let d = hammer_quick(&src);
        eprintln!(
            "{what} nesting: check_text/check_file as case, workflow, agent script {:?}",
            t.elapsed()
        );
        let code = if flow { "WFX001" } else { "WFX003" };
        assert!(codes(&d).contains(&code), "{what}: {:?}", codes(&d));
    }
}

#[test]
fn alias_bomb_is_cut_off() {
    let mut src = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        src.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            [prev.as_str(); 10].join(", ")
        ));
    }
    src.push_str("steps:\n  - send: hi\n  - reply: { includes: *a9 }\n");
    let t = Instant::now();
    let p = assert_tree(&src);
    eprintln!("alias bomb: parse {:?}", t.elapsed());
    assert!(
        p.issues
            .iter()
            .any(|i| i.kind == yaml::YamlIssueKind::AliasExpansion)
    );
    let d = hammer(&src);
    assert!(codes(&d).contains(&"WFX004"), "{:?}", codes(&d));
}

/// `check_file` of `src` as the case, twice (deterministic), with every invariant; prints
/// the time of the parse and of the whole pipeline.
fn big_case(what: &str, src: &str) -> Vec<Diagnostic> {
    let fs = corpus().with(CASE, src);
    let t = Instant::now();
    let p = yaml::parse(src);
    let parse = t.elapsed();
    let t = Instant::now();
    let d = check_file(&fs, CASE);
    eprintln!(
        "{what} ({} bytes): parse {parse:?}, check_file {:?}, {} diagnostics, {} YAML issues",
        src.len(),
        t.elapsed(),
        d.len(),
        p.issues.len()
    );
    assert_diagnostics(&fs, None, &d);
    assert_eq!(d, check_file(&fs, CASE));
    d
}

#[test]
fn a_hundred_thousand_variables() {
    let mut src = String::from("title: t\ndescription: d\nsteps:\n  - send: hi\nvariables:\n");
    for i in 0..100_000 {
        src.push_str(&format!("  k{i}: {i}\n"));
    }
    let d = big_case("100k variables", &src);
    assert!(!codes(&d).contains(&"WFX002"), "{:?}", &d[..d.len().min(3)]);
}

#[test]
fn a_hundred_thousand_steps() {
    let mut src = String::from("title: t\ndescription: d\nsteps:\n");
    for i in 0..100_000 {
        src.push_str(if i % 2 == 0 {
            "  - send: hi\n"
        } else {
            "  - reachedState: refund-review\n"
        });
    }
    big_case("100k steps", &src);
}

#[test]
fn a_one_megabyte_line() {
    let src = format!(
        "title: t\ndescription: d\nsteps:\n  - send: \"{}\"\n",
        "😀".repeat(250_000)
    );
    big_case("1 MB line", &src);
    let src = format!(
        "title: t\ndescription: d\nsteps: [ {} {{ send: hi }} ]\n",
        "{ reachedState: refund-review }, ".repeat(30_000)
    );
    big_case("1 MB flow line", &src);
}

#[test]
fn twenty_thousand_duplicate_keys_point_at_the_first() {
    let src = format!(
        "title: t\ndescription: d\nsteps: []\nvariables:\n{}",
        "  k: 1\n".repeat(20_000)
    );
    let p = yaml::parse(&src);
    let dups: Vec<_> = p
        .issues
        .iter()
        .filter(|i| i.kind == yaml::YamlIssueKind::DuplicateKey)
        .collect();
    // Bounded memory: the first `MAX_ISSUES` are kept, the rest counted.
    assert_eq!(dups.len(), yaml::MAX_ISSUES);
    assert_eq!(p.issues_left_out, 19_999 - yaml::MAX_ISSUES);
    let first = src.find("  k: 1").unwrap() as u32 + 2;
    assert!(
        dups.iter()
            .all(|i| i.related == Some(TextRange::new(first, first + 1)))
    );
    // The checker builds the kept ones and one marker counting the rest; what is shown
    // (`cap_per_file`, applied by the CLI report and the server) is the first 1,000 and one
    // WFX009 for the other 18,999.
    let mut d = big_case("20k duplicate keys", &src);
    assert_eq!(
        codes(&d).iter().filter(|c| **c == "WFX002").count(),
        yaml::MAX_ISSUES
    );
    wfx_schemas::diagnostics::cap_per_file(&mut d);
    assert_eq!(
        codes(&d).iter().filter(|c| **c == "WFX002").count(),
        wfx_schemas::diagnostics::MAX_PER_FILE
    );
    let rest: Vec<_> = d.iter().filter(|x| x.code.code == "WFX009").collect();
    assert_eq!(rest.len(), 1);
    assert!(
        rest[0].message.starts_with("18999 more problems"),
        "{}",
        rest[0].message
    );
    assert_eq!(rest[0].severity, wfx_schemas::diagnostics::Severity::Error);
}

#[test]
fn a_ten_megabyte_case() {
    let mut src = String::from("title: big\ndescription: |\n");
    let line = "  lorem ipsum dolor sit amet 😀 注文 consectetur adipiscing elit\n";
    while src.len() < 10 * 1024 * 1024 {
        src.push_str(line);
    }
    src.push_str("steps:\n  - send: hi\n  - succeeded: true\n");
    let fs = corpus().with(CASE, src.clone());
    let t = Instant::now();
    let d = check_file(&fs, CASE);
    eprintln!(
        "10 MB case: check_file {:?}, {} diagnostics",
        t.elapsed(),
        d.len()
    );
    assert_diagnostics(&fs, None, &d);
    // Over the 8 MiB parse limit: one WFX008 on the first line, nothing parsed.
    assert_eq!(codes(&d), ["WFX008"]);
    let t = Instant::now();
    let idx = LineIndex::new(&src);
    eprintln!("10 MB LineIndex::new {:?}", t.elapsed());
    let last = idx.position(idx.len(), PositionEncoding::Utf16);
    assert_eq!(idx.offset(last, PositionEncoding::Utf16), idx.len());
}

#[test]
fn svg_renders_odd_names_and_shows_controls_as_replacements() {
    for name in ODD_NAMES {
        let src = format!(
            "states:\n  {name}:\n    triggers: {{ manual: }}\n    transitions: [ {{ to: {name}, description: {name} }} ]\n"
        );
        let svg = Graph::from_workflow(&workflow(&src))
            .to_svg(None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(svg.contains("<svg") && svg.contains("</svg>"), "{name}");
        // Text is XML-escaped by the renderer: a `<b>` state stays text.
        assert!(!svg.contains("<b>"), "{name}");
    }
    // A NUL (or any control character) in a name is shown as U+FFFD: the layout gets no
    // control character (it used to refuse a NUL), and the SVG stays well-formed XML.
    let src = "states:\n  \"nul\\0x\\e[2J\":\n    triggers: { manual: }\n";
    let svg = Graph::from_workflow(&workflow(src)).to_svg(None).unwrap();
    assert!(svg.contains("nul\u{fffd}x\u{fffd}[2J"), "{svg}");
    assert!(!svg.chars().any(|c| c.is_control() && c != '\n'), "{svg:?}");
}

#[test]
fn svg_refuses_graphs_beyond_its_limit_and_renders_below_it() {
    use wfx_schemas::graph::{MAX_SVG_EDGES, MAX_SVG_NODES};
    // 1,000 states with cycles: refused at once instead of a layout that does not finish.
    let g = Graph::from_workflow(&workflow(&ring(1_000)));
    let t = Instant::now();
    let err = g.to_svg(None).unwrap_err();
    eprintln!("1000-state to_svg refusal: {:?}", t.elapsed());
    assert!(
        err.contains("1001 nodes") && err.contains(&MAX_SVG_NODES.to_string()),
        "{err}"
    );
    // Edges count too: 3 states with many transitions.
    let mut src = String::from("states:\n  a:\n    triggers: { manual: }\n    transitions:\n");
    for _ in 0..=MAX_SVG_EDGES {
        src.push_str("      - { to: b }\n");
    }
    src.push_str("  b: {}\n");
    let err = Graph::from_workflow(&workflow(&src))
        .to_svg(None)
        .unwrap_err();
    assert!(err.contains(&MAX_SVG_EDGES.to_string()), "{err}");
    // The biggest ring under the limit still renders.
    let n = (MAX_SVG_NODES - 1).min((MAX_SVG_EDGES - 1) / 2);
    let g = Graph::from_workflow(&workflow(&ring(n)));
    assert!(g.nodes.len() <= MAX_SVG_NODES && g.edges.len() <= MAX_SVG_EDGES);
    let t = Instant::now();
    let (svg, layout) = g
        .to_svg_measured(None)
        .expect("a graph under the limit renders");
    eprintln!(
        "{n}-state ring to_svg: {:?} ({} bytes, {layout:?})",
        t.elapsed(),
        svg.len()
    );
    assert!(svg.contains(&format!("s{}", n - 1)));
    // Finding 7: this ring is the worst case within the bounds (740 million units of
    // crossing optimization unbudgeted, 15–21 s). The layout stops at its budget, plus at
    // most one row's count, and is still complete.
    assert!(layout.cut, "{layout:?}");
    assert!(
        layout.work >= wfx_schemas::graph::MAX_LAYOUT_WORK
            && layout.work <= wfx_schemas::graph::MAX_LAYOUT_WORK + 1_000_000,
        "{layout:?}"
    );
    for i in 0..n {
        assert!(svg.contains(&format!(">s{i}<")), "s{i} missing");
    }
}

#[test]
fn a_small_graph_is_laid_out_within_the_budget_uncut() {
    let g = Graph::from_workflow(&workflow(&ring(8)));
    let (_, layout) = g.to_svg_measured(None).unwrap();
    assert!(!layout.cut && layout.work > 0, "{layout:?}");
}

#[test]
fn odd_check_targets_and_paths() {
    let fs = corpus()
        .with("workflows//workflow.yaml", "states: {}\n")
        .with("workflows/x/tests/.test.yaml", "title: t\n")
        .with("workflows/workflows/workflow.yaml", "states: {}\n")
        .with(
            "workflows/😀/workflow.yaml",
            "states:\n  a: { triggers: { manual: } }\n",
        )
        .with(
            "workflows/😀/tests/注文.test.yml",
            "title: t\nsteps: [ { send: hi } ]\n",
        );
    for target in [
        ".",
        "",
        "/",
        "workflows",
        "workflows/",
        "workflows/order-lookup/",
        "workflows/order-lookup/tests",
        "workflows/😀",
        "workflows/😀/tests/注文.test.yml",
    ] {
        let run =
            check_paths(&fs, &[target.to_owned()]).unwrap_or_else(|e| panic!("{target:?}: {e}"));
        let (d, n) = (run.diagnostics, run.files);
        assert_diagnostics(&fs, None, &d);
        assert!(n > 0 || d.is_empty(), "{target:?}");
        assert!(
            n > 0 || !run.unchecked.is_empty(),
            "{target:?} checked nothing silently"
        );
        assert_eq!(
            d,
            check_paths(&fs, &[target.to_owned()]).unwrap().diagnostics,
            "{target:?}"
        );
    }
    let all = check_workspace(&fs, "");
    assert_diagnostics(&fs, None, &all);
    assert!(
        all.iter()
            .any(|d| d.file == "workflows/😀/tests/注文.test.yml"),
        "{all:?}"
    );
}
