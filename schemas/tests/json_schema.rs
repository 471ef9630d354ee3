//! The JSON Schemas for editors without `wfx-lsp` (`schemas/case.schema.json`,
//! `schemas/workflow.schema.json`, draft 2020-12, for yaml-language-server) against the
//! corpora and against the Rust validator.
//!
//! 1. Both files are valid draft 2020-12 schemas (meta-schema, and every `pattern` compiles).
//! 2. Every property they declare carries `description` and `markdownDescription`.
//! 3. Every case and `workflow.yaml` of `tests/corpus/customer-support` and
//!    `tests/corpus/valid` passes; every file of `tests/corpus/invalid` fails
//!    (`*.test.yaml` against the case schema, `*.workflow.yaml` against the workflow schema).
//! 4. Agreement: for every corpus file, "the schema rejects it" equals "`check_file` reports an
//!    error-severity diagnostic for it". Invalid cases are checked as
//!    `workflows/w/tests/<name>` beside [`MINIMAL_WORKFLOW`]; invalid workflows as
//!    `workflows/w/workflow.yaml` with a `hooks/check.js` beside them, so a missing hook file
//!    cannot stand in for the shape rule the file breaks. Rules the schema cannot express
//!    (collapsed-length budgets, regex validity, cross-file rules) are kept out of the
//!    invalid corpus, so the verdicts must match exactly.
//!
//! YAML becomes JSON through `wfx_schemas::yaml::parse(text).documents[0].to_json()`.

// Helpers outside `#[test]` functions read the corpus and panic loudly on a bad one.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use wfx_schemas::diagnostics::Severity;
use wfx_schemas::files::MemFiles;
use wfx_schemas::workspace::{FileKind, classify};

const CASE_SCHEMA: &str = include_str!("../case.schema.json");
const WORKFLOW_SCHEMA: &str = include_str!("../workflow.schema.json");
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// The workflow placed beside every invalid case: declares `manual` (FORMAT §B.10) and one
/// state, so the case's own error is the only one.
const MINIMAL_WORKFLOW: &str = "instructions: Minimal workflow beside an invalid case.\nstates:\n  start:\n    triggers:\n      manual:\n";

/// The hook script placed beside every invalid workflow (FORMAT §D.2 checks that it exists).
const HOOK_SCRIPT: &str = "export default async function hook() {\n  return ok();\n}\n";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Case,
    Workflow,
}

/// One corpus file, placed in a workspace the Rust checker can run on.
struct Sample {
    /// Repository-relative origin, for messages.
    label: String,
    kind: Kind,
    text: String,
    fs: MemFiles,
    /// Where the file sits in `fs`.
    path: String,
}

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus")
        .join(name)
}

/// Every file below `dir` as (`/`-separated relative path, bytes), sorted. Panics when the
/// folder is missing or holds no file.
fn read_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    assert!(dir.is_dir(), "corpus folder {} is missing", dir.display());
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    assert!(!out.is_empty(), "corpus folder {} is empty", dir.display());
    out
}

/// A corpus laid out as a workspace (`workflows/<slug>/…`, `skills/…`): every workflow spec
/// and case in it, checked inside the whole workspace.
fn workspace_samples(name: &str) -> Vec<Sample> {
    let files = read_tree(&corpus(name));
    let mut fs = MemFiles::new();
    for (path, bytes) in &files {
        fs.insert(path.clone(), bytes.clone());
    }
    let mut out = Vec::new();
    for (path, bytes) in &files {
        let kind = match classify(path) {
            FileKind::Workflow(_) => Kind::Workflow,
            FileKind::Case(_) => Kind::Case,
            _ => continue,
        };
        out.push(Sample {
            label: format!("tests/corpus/{name}/{path}"),
            kind,
            text: String::from_utf8(bytes.clone()).unwrap(),
            fs: fs.clone(),
            path: path.clone(),
        });
    }
    let cases = out.iter().filter(|s| s.kind == Kind::Case).count();
    let workflows = out.iter().filter(|s| s.kind == Kind::Workflow).count();
    assert!(
        cases > 0 && workflows > 0,
        "tests/corpus/{name} has {cases} cases and {workflows} workflows"
    );
    out
}

/// `tests/corpus/invalid`: a flat folder of `*.test.yaml` and `*.workflow.yaml` files, each
/// breaking one shape rule; each is placed into its own workspace.
fn invalid_samples() -> Vec<Sample> {
    let mut out = Vec::new();
    for (name, bytes) in read_tree(&corpus("invalid")) {
        assert!(
            !name.contains('/'),
            "tests/corpus/invalid is flat; found {name}"
        );
        let text = String::from_utf8(bytes).unwrap();
        let (kind, path, fs) = if name.ends_with(".test.yaml") {
            let path = format!("workflows/w/tests/{name}");
            let fs = MemFiles::new()
                .with("workflows/w/workflow.yaml", MINIMAL_WORKFLOW)
                .with(path.clone(), text.clone());
            (Kind::Case, path, fs)
        } else if name.ends_with(".workflow.yaml") {
            let path = "workflows/w/workflow.yaml".to_owned();
            let fs = MemFiles::new()
                .with(path.clone(), text.clone())
                .with("workflows/w/hooks/check.js", HOOK_SCRIPT);
            (Kind::Workflow, path, fs)
        } else {
            panic!("tests/corpus/invalid/{name}: name it *.test.yaml or *.workflow.yaml");
        };
        out.push(Sample {
            label: format!("tests/corpus/invalid/{name}"),
            kind,
            text,
            fs,
            path,
        });
    }
    for kind in [Kind::Case, Kind::Workflow] {
        assert!(
            out.iter().any(|s| s.kind == kind),
            "tests/corpus/invalid has no {kind:?} file"
        );
    }
    out
}

fn schema_json(kind: Kind) -> Value {
    serde_json::from_str(match kind {
        Kind::Case => CASE_SCHEMA,
        Kind::Workflow => WORKFLOW_SCHEMA,
    })
    .unwrap()
}

struct Validators {
    case: jsonschema::Validator,
    workflow: jsonschema::Validator,
}

impl Validators {
    fn new() -> Self {
        Self {
            case: jsonschema::draft202012::new(&schema_json(Kind::Case)).unwrap(),
            workflow: jsonschema::draft202012::new(&schema_json(Kind::Workflow)).unwrap(),
        }
    }

    /// The schema's errors for a sample, rendered `<instance path>: <message>`.
    fn errors(&self, s: &Sample) -> Vec<String> {
        let parsed = wfx_schemas::yaml::parse(&s.text);
        let json = parsed
            .documents
            .first()
            .map_or(Value::Null, |d| d.to_json());
        let v = match s.kind {
            Kind::Case => &self.case,
            Kind::Workflow => &self.workflow,
        };
        v.iter_errors(&json)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect()
    }
}

/// The Rust checker's error-severity diagnostics for a sample.
fn rust_errors(s: &Sample) -> Vec<String> {
    wfx_schemas::check::check_file(&s.fs, &s.path)
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        // WFX313 (no agent can pass the case) is a path search over the workflow graph, which
        // no JSON Schema can express; the showcase `valid/.../every-step` case has it.
        .filter(|d| d.code.code != "WFX313")
        .map(|d| format!("{} {}", d.code.code, d.message))
        .collect()
}

#[test]
fn schemas_are_valid_draft_2020_12() {
    for kind in [Kind::Case, Kind::Workflow] {
        let schema = schema_json(kind);
        assert_eq!(
            schema["$schema"], DRAFT_2020_12,
            "{kind:?} schema must declare draft 2020-12"
        );
        if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
            panic!(
                "{kind:?} schema is not a valid draft 2020-12 schema: {e} at {}",
                e.instance_path()
            );
        }
        // Compiling also compiles every `pattern`.
        jsonschema::draft202012::new(&schema).unwrap();
    }
}

/// Walks a schema and names every declared property lacking `description` or
/// `markdownDescription`.
fn undocumented(schema: &Value, at: &str, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                for (name, prop) in props {
                    for key in ["description", "markdownDescription"] {
                        if !prop.get(key).is_some_and(Value::is_string) {
                            out.push(format!("{at}/properties/{name} lacks {key}"));
                        }
                    }
                }
            }
            for (k, v) in map {
                undocumented(v, &format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                undocumented(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_property_is_documented() {
    for kind in [Kind::Case, Kind::Workflow] {
        let schema = schema_json(kind);
        let mut missing = Vec::new();
        undocumented(&schema, "#", &mut missing);
        // Property schemas inside `if`/`then` only add constraints to documented properties.
        missing.retain(|m| !m.contains("/if/") && !m.contains("/then/") && !m.contains("/not/"));
        assert!(missing.is_empty(), "{kind:?} schema: {missing:#?}");
        let top = schema["properties"].as_object().unwrap().len();
        assert!(
            top >= 8,
            "{kind:?} schema declares only {top} top-level properties"
        );
    }
}

#[track_caller]
fn assert_all_pass(samples: &[Sample]) {
    let v = Validators::new();
    let failures: Vec<String> = samples
        .iter()
        .filter_map(|s| {
            let errs = v.errors(s);
            (!errs.is_empty()).then(|| format!("{}:\n  {}", s.label, errs.join("\n  ")))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "valid files rejected by the schema:\n{}",
        failures.join("\n")
    );
}

#[test]
fn customer_support_passes_the_schemas() {
    let samples = workspace_samples("customer-support");
    assert!(
        samples.len() >= 10,
        "expected the example's 2 workflows and its cases, got {}",
        samples.len()
    );
    assert_all_pass(&samples);
}

#[test]
fn valid_corpus_passes_the_schemas() {
    assert_all_pass(&workspace_samples("valid"));
}

#[test]
fn invalid_corpus_fails_the_schemas() {
    let v = Validators::new();
    let accepted: Vec<String> = invalid_samples()
        .into_iter()
        .filter(|s| v.errors(s).is_empty())
        .map(|s| s.label)
        .collect();
    assert!(
        accepted.is_empty(),
        "invalid files accepted by the schema: {accepted:#?}"
    );
}

#[test]
fn schema_and_rust_validator_agree() {
    let v = Validators::new();
    let mut samples = workspace_samples("customer-support");
    samples.extend(workspace_samples("valid"));
    samples.extend(invalid_samples());
    let mut disagreements = Vec::new();
    for s in &samples {
        let schema = v.errors(s);
        let rust = rust_errors(s);
        if schema.is_empty() != rust.is_empty() {
            disagreements.push(format!(
                "{}: schema says {}, Rust says {}\n  schema: {:?}\n  rust:   {:?}",
                s.label,
                if schema.is_empty() {
                    "valid"
                } else {
                    "invalid"
                },
                if rust.is_empty() { "valid" } else { "invalid" },
                schema,
                rust
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} corpus files get different verdicts:\n{}",
        disagreements.len(),
        samples.len(),
        disagreements.join("\n")
    );
}

/// Validates `value` against one sub-schema of `kind`'s schema, named by a JSON pointer.
fn sub_schema_accepts(kind: Kind, pointer: &str, value: &Value) -> bool {
    let schema = schema_json(kind);
    let root = serde_json::json!({
        "$schema": DRAFT_2020_12,
        "$defs": schema["$defs"],
        "properties": schema["properties"],
        "$ref": format!("#{pointer}"),
    });
    jsonschema::draft202012::new(&root).unwrap().is_valid(value)
}

/// The hand-written patterns against the grammars of FORMAT §A.3, §A.5, §A.6, §B.1, §B.8.
#[test]
fn patterns_follow_the_format_grammars() {
    use serde_json::json;
    let table: &[(Kind, &str, &[&str], &[&str])] = &[
        (
            Kind::Case,
            "/properties/title",
            &["Refund approved", "  padded  ", "one line\n", "\n label \n"],
            &["", "   ", "two\nlines", "a\n\nb"],
        ),
        (
            Kind::Case,
            "/properties/description",
            &["x", " x ", "a\nb"],
            &["", " \n\t"],
        ),
        (
            Kind::Case,
            "/$defs/workspaceEntry",
            &[
                "fixtures/a.json",
                "./a.json",
                "sub/./a",
                "...",
                "a/.../b",
                "a..b",
            ],
            &["", ".", "./", "/abs", "../up", "a/../b", "a/..", "//"],
        ),
        (
            Kind::Case,
            "/$defs/variableName",
            &["order_id", "a", "a1_"],
            &["", "Order", "1a", "_a", "order-id"],
        ),
        (
            Kind::Workflow,
            "/$defs/mountName",
            &["catalogs", "catalogs/eu", "a.b", "..x"],
            &[
                "", " a", "a ", "/a", "a/", "a//b", "./a", "a/.", "a/../b", "..", "a*", "a?",
                "[a]", "{a}",
            ],
        ),
        (
            Kind::Workflow,
            "/$defs/sessionPath",
            &[
                "conversation_id",
                "triggers.-1.conversationId",
                " a.b ",
                "a. .b",
            ],
            &[
                "", " ", "a.", "a..b", ".a", "A", "1a", "${{a}}", "a.${{b}}", "a. ",
            ],
        ),
        (
            Kind::Workflow,
            "/$defs/slug",
            &["a", "order-lookup", "a1-b2"],
            &["", "A", "a--b", "-a", "a-", "a_b"],
        ),
        (
            Kind::Workflow,
            "/$defs/afterHook/oneOf/0/properties/script",
            &["hooks/a.js", "hooks/sub/b.mjs", "hooks/.x.js"],
            &[
                "hooks/a.ts",
                "scripts/a.js",
                "hooks//a.js",
                "hooks/../a.js",
                "hooks/a/../b.js",
                "/hooks/a.js",
                "hooks/",
            ],
        ),
    ];
    let mut wrong = Vec::new();
    for (kind, pointer, good, bad) in table {
        for s in *good {
            let v = if *pointer == "/$defs/workspaceEntry" {
                json!({ "from": s })
            } else {
                json!(s)
            };
            if !sub_schema_accepts(*kind, pointer, &v) {
                wrong.push(format!("{kind:?} {pointer} rejects {s:?}"));
            }
        }
        for s in *bad {
            let v = if *pointer == "/$defs/workspaceEntry" {
                json!({ "from": s })
            } else {
                json!(s)
            };
            if sub_schema_accepts(*kind, pointer, &v) {
                wrong.push(format!("{kind:?} {pointer} accepts {s:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
