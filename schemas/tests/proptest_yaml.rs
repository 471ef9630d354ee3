//! Property tests of the YAML span tree and the check pipeline over generated near-YAML:
//! fragments of case and workflow documents glued with indentation, flow punctuation,
//! anchors, tags, comments, BOMs, odd line breaks and multi-byte characters. For every
//! input, as a case and as `workflow.yaml` beside the customer-support corpus: nothing
//! panics, every range lies within the text on char boundaries, messages are non-empty,
//! codes are registered, output is sorted and deterministic, and `check_text` agrees with
//! `check_file`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use proptest::prelude::*;
use wfx_schemas::check::{check_file, check_text};
use wfx_schemas::diagnostics::{Diagnostic, code_by_name};
use wfx_schemas::files::MemFiles;
use wfx_schemas::graph::Graph;
use wfx_schemas::model::case::{ACTIONS, ASSERTIONS, Case};
use wfx_schemas::model::workflow::Workflow;
use wfx_schemas::text::TextRange;
use wfx_schemas::yaml::{self, Node, Value};

const WF: &str = "workflows/order-lookup/workflow.yaml";
const CASE: &str = "workflows/order-lookup/tests/prop.test.yaml";

fn corpus() -> MemFiles {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus/customer-support/workflows/order-lookup");
    let mut fs = MemFiles::new();
    fs.insert(WF, std::fs::read(root.join("workflow.yaml")).unwrap());
    for e in std::fs::read_dir(root.join("tests")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        fs.insert(
            format!("workflows/order-lookup/tests/{name}"),
            std::fs::read(&p).unwrap(),
        );
    }
    fs
}

fn in_text(text: &str, r: TextRange) -> bool {
    r.start <= r.end
        && (r.end as usize) <= text.len()
        && text.is_char_boundary(r.start as usize)
        && text.is_char_boundary(r.end as usize)
}

fn tree_ok(text: &str) -> Result<(), TestCaseError> {
    let p = yaml::parse(text);
    let mut todo: Vec<&Node> = p.documents.iter().collect();
    while let Some(n) = todo.pop() {
        prop_assert!(in_text(text, n.range), "node range {:?}", n.range);
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
    for r in &p.document_ranges {
        prop_assert!(in_text(text, *r), "document range {r:?}");
    }
    for i in &p.issues {
        prop_assert!(
            in_text(text, i.range),
            "issue {:?} range {:?}",
            i.kind,
            i.range
        );
        prop_assert!(i.related.is_none_or(|r| in_text(text, r)));
        prop_assert!(!i.message.is_empty());
    }
    for doc in &p.documents {
        let case = Case::from_node(doc);
        for s in &case.steps {
            let _ = s.form();
        }
        let g = Graph::from_workflow(&Workflow::from_node(doc));
        let _ = (g.to_mermaid(None), g.to_dot(None));
    }
    Ok(())
}

fn diags_ok(
    fs: &MemFiles,
    path: &str,
    text: &str,
    diags: &[Diagnostic],
) -> Result<(), TestCaseError> {
    for d in diags {
        prop_assert_eq!(&d.file, path);
        prop_assert!(
            in_text(text, d.range),
            "{} {:?} range {:?}",
            d.code.code,
            d.message,
            d.range
        );
        prop_assert!(
            !d.message.trim().is_empty(),
            "{} empty message",
            d.code.code
        );
        prop_assert!(
            code_by_name(d.code.code).is_some(),
            "unregistered {}",
            d.code.code
        );
        for r in &d.related {
            let rt = if r.file == path {
                text.to_owned()
            } else {
                String::from_utf8(
                    wfx_schemas::files::FileAccess::read(fs, &r.file).unwrap_or_default(),
                )
                .unwrap_or_default()
            };
            prop_assert!(
                in_text(&rt, r.range),
                "{} related {} {:?}",
                d.code.code,
                r.file,
                r.range
            );
        }
        for f in &d.fixes {
            for e in &f.edits {
                prop_assert!(in_text(text, e.range), "{} fix {:?}", d.code.code, e.range);
            }
        }
    }
    for w in diags.windows(2) {
        prop_assert!(w[0].sort_key() <= w[1].sort_key(), "unsorted");
    }
    Ok(())
}

/// Fragments of case and workflow documents and of YAML syntax.
fn fragment() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "title: ",
        "description: ",
        "steps:",
        "trigger:",
        "id: ",
        "variables:",
        "workspace:",
        "mocks:",
        "skip: ",
        "- ",
        "  ",
        "    ",
        "\n",
        "\r\n",
        "\r",
        "\t",
        "send: ",
        "decide: ",
        "to: ",
        "reply: ",
        "includes: ",
        "reachedState: ",
        "parked: ",
        "raised: ",
        "grade: ",
        "closedQA: ",
        "atLeast: ",
        "trail: ",
        "count: ",
        "states:",
        "transitions:",
        "triggers:",
        "manual:",
        "on_error: ",
        "type: ",
        "human",
        "refund-review",
        "identify-case",
        "tool: ",
        "whenInput: ",
        "result: ",
        "from: ",
        "succeeded: true",
        "true",
        "null",
        "~",
        "0.7",
        "42",
        "-1",
        ".nan",
        "hi",
        "😀",
        "注文",
        "e\u{301}",
        "\u{FEFF}",
        "\u{2028}",
        "\u{85}",
        "\u{200B}",
        "\0",
        "{",
        "}",
        "[",
        "]",
        ", ",
        ": ",
        "? ",
        "&a ",
        "*a",
        "!!str ",
        "!x ",
        "<<: ",
        "# c",
        "'",
        "\"",
        "\\",
        "|",
        "|-",
        ">+",
        "|2",
        "---",
        "...",
        "%YAML 1.2",
        "/(?<=a)b/",
        "/[/",
        "/a/gg",
        "//",
    ])
}

fn near_yaml() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..48).prop_map(|v| v.concat())
}

/// Structurally valid case documents with random scalar leaves, so the rules past the
/// YAML layer run on many inputs.
fn case_doc() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(vec![
        "hi",
        "\"\"",
        "[]",
        "{}",
        "null",
        "true",
        "1",
        "-3",
        "0.5",
        "refund-review",
        "\"/approv/i\"",
        "\"/[/\"",
        "😀",
        "[a, 1]",
        "{ to: refund-closed }",
        "{ to: 😀, comment: x }",
        "{ name: x, input: { a: 1 } }",
        "{ expect: { a: 1 } }",
        "{ closedQA: ok, atLeast: 2 }",
        "{ includes: [x, \"/y/\"] }",
        "{ count: 1 }",
        "{ workflow: nope }",
    ]);
    // Every step key the model knows (FORMAT §B.2), plus near misses.
    let key = prop::sample::select(
        ACTIONS
            .iter()
            .chain(ASSERTIONS)
            .copied()
            .chain(["sned", "Send", "😀"])
            .collect::<Vec<&'static str>>(),
    );
    let step = (key, leaf.clone()).prop_map(|(k, v)| format!("  - {k}: {v}\n"));
    let top = prop::sample::select(vec![
        "title",
        "description",
        "skip",
        "trigger",
        "variables",
        "workspace",
        "mocks",
        "titel",
    ]);
    let extra = (top, leaf).prop_map(|(k, v)| format!("{k}: {v}\n"));
    (
        prop::collection::vec(extra, 0..4),
        prop::collection::vec(step, 0..8),
    )
        .prop_map(|(extra, steps)| format!("{}steps:\n{}", extra.concat(), steps.concat()))
}

fn run(text: &str) -> Result<(), TestCaseError> {
    tree_ok(text)?;
    let base = corpus();
    for path in [CASE, WF] {
        let first = check_text(&base, path, text);
        diags_ok(&base, path, text, &first)?;
        prop_assert_eq!(&first, &check_text(&base, path, text), "not deterministic");
        // `check_file` decodes (strips one leading BOM); an editor buffer arrives decoded.
        let fs = base.clone().with(path, text);
        let decoded = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        let by_file = check_file(&fs, path);
        diags_ok(&base, path, decoded, &by_file)?;
        prop_assert_eq!(
            &check_text(&base, path, decoded),
            &by_file,
            "check_file disagrees with check_text"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn near_yaml_keeps_every_invariant(text in near_yaml()) {
        run(&text)?;
    }

    #[test]
    fn case_documents_keep_every_invariant(text in case_doc()) {
        run(&text)?;
    }

    #[test]
    fn arbitrary_strings_keep_every_invariant(text in "\\PC{0,64}") {
        run(&text)?;
    }
}
