//! Fixture tests of the IDE features. A fixture is one unindented string: `#- <path>`
//! starts a file, `$0` marks the cursor (a second `$0` in the same file closes a selection).
//! Markers are removed before analysis. One `#[track_caller]` check helper per feature
//! renders the result as text compared with expect-test (`UPDATE_EXPECT=1` rewrites).

use std::collections::BTreeMap;

use expect_test::{Expect, expect};
use wfx_schemas::diagnostics::TextEdit;
use wfx_schemas::files::MemFiles;
use wfx_schemas::text::TextRange;

use super::*;

struct Fx {
    files: MemFiles,
    texts: BTreeMap<String, String>,
    cursor: Option<(String, u32)>,
    selection: Option<TextRange>,
}

/// What a [`Doc`] borrows besides the files: the text's parse and a workflow cache (as
/// the server holds them).
struct Own {
    parsed: wfx_schemas::yaml::Parsed,
    cache: wfx_schemas::check::WorkflowCache,
}

impl Own {
    fn new(text: &str) -> Self {
        Self {
            parsed: wfx_schemas::yaml::parse(text),
            cache: wfx_schemas::check::WorkflowCache::new(),
        }
    }

    fn doc<'a>(&'a self, fs: &'a MemFiles, path: &'a str, text: &'a str) -> Doc<'a> {
        Doc {
            fs,
            path,
            text,
            parsed: &self.parsed,
            workflows: &self.cache,
        }
    }
}

impl Fx {
    fn cursor_file(&self) -> (&str, &str, u32) {
        let (path, off) = self.cursor.as_ref().expect("fixture has no $0");
        (path, &self.texts[path], *off)
    }
}

fn fixture(src: &str) -> Fx {
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    let mut cursor = None;
    let mut selection = None;
    let mut current: Option<String> = None;
    for line in src.lines() {
        if let Some(p) = line.strip_prefix("#- ") {
            // A later file with the same path replaces the earlier one (tests override `WF`).
            current = Some(p.trim().to_owned());
            texts.insert(p.trim().to_owned(), String::new());
            continue;
        }
        let Some(path) = &current else { continue };
        let text = texts.get_mut(path).expect("file");
        let mut rest = line;
        while let Some(i) = rest.find("$0") {
            text.push_str(&rest[..i]);
            let off = text.len() as u32;
            match &cursor {
                Some((p, start)) if p == path && selection.is_none() => {
                    selection = Some(TextRange::new(*start, off))
                }
                _ => cursor = Some((path.clone(), off)),
            }
            rest = &rest[i + 2..];
        }
        text.push_str(rest);
        text.push('\n');
    }
    let mut files = MemFiles::new();
    for (p, t) in &texts {
        files.insert(p.clone(), t.clone());
    }
    Fx {
        files,
        texts,
        cursor,
        selection,
    }
}

/// The workflow most tests use.
const WF: &str = r#"
#- workflows/shop/workflow.yaml
title: Shop
instructions: Help.
tests:
  maxConcurrency: 1
states:
  intake:
    title: Take the request
    summary: Route the request.
    triggers:
      manual:
      email:
        session: conversation_id
        description: An email arrived.
        requires: [sender, { name: order_no, type: string }]
    before:
      - script: hooks/check.js
    tools:
      allow: [{ tool: read_file, paths: ["${{order_no}}"] }]
    transitions:
      - to: review
        description: Needs review.
  review:
    title: Review refund
    type: human
    instructions: Decide.
    transitions:
      - to: done
        type: approve
        description: Approve it.
      - to: intake
        type: refine
        description: Send back.
  done:
    title: Done
    summary: Finished.
#- workflows/shop/hooks/check.js
export default () => ok();
#- workflows/shop/tests/fixtures/orders.json
[]
#- skills/order-data/SKILL.md
x
#- workflows/other/workflow.yaml
states:
  only:
    triggers: { manual: }
"#;

fn with_wf(src: &str) -> String {
    format!("{WF}{src}")
}

fn render_range(text: &str, r: TextRange) -> String {
    format!("{:?} {:?}", r, text.get(r.as_usize()).unwrap_or("<oob>"))
}

fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut out = text.to_owned();
    // LSP semantics: inserts at the same position appear in array order.
    let mut edits: Vec<(usize, &TextEdit)> = edits.iter().enumerate().collect();
    edits.sort_by_key(|(i, e)| std::cmp::Reverse((e.range.start, e.range.end, *i)));
    for (_, e) in edits {
        out.replace_range(e.range.as_usize(), &e.new_text);
    }
    out
}

#[track_caller]
fn check_completion(src: &str, want: Expect) {
    let fx = fixture(&with_wf(src));
    let (path, text, off) = fx.cursor_file();
    let items = completion(&Own::new(text).doc(&fx.files, path, text), off);
    let mut out = String::new();
    if let Some(first) = items.first() {
        out.push_str(&format!(
            "replace {:?}\n",
            text.get(first.replace.as_usize()).unwrap_or("?")
        ));
    }
    for i in &items {
        out.push_str(&format!("{} [{:?}]", i.label, i.kind));
        if let Some(d) = &i.detail {
            out.push_str(&format!(" {d}"));
        }
        out.push('\n');
    }
    want.assert_eq(&out);
}

#[track_caller]
fn check_completion_insert(src: &str, label: &str, want: Expect) {
    let fx = fixture(&with_wf(src));
    let (path, text, off) = fx.cursor_file();
    let items = completion(&Own::new(text).doc(&fx.files, path, text), off);
    let item = items
        .iter()
        .find(|i| i.label == label)
        .unwrap_or_else(|| panic!("no item {label}"));
    want.assert_eq(&format!("snippet={} {}", item.is_snippet, item.insert_text));
}

#[track_caller]
fn check_hover(src: &str, want: Expect) {
    let fx = fixture(&with_wf(src));
    let (path, text, off) = fx.cursor_file();
    let got = match hover(&Own::new(text).doc(&fx.files, path, text), off) {
        Some(h) => format!("{}\n---\n{}", render_range(text, h.range), h.markdown),
        None => "none".into(),
    };
    want.assert_eq(&got);
}

#[track_caller]
fn check_definition(src: &str, want: Expect) {
    let fx = fixture(&with_wf(src));
    let (path, text, off) = fx.cursor_file();
    let locs = goto_definition(&Own::new(text).doc(&fx.files, path, text), off);
    let out: Vec<String> = locs
        .iter()
        .map(|l| format!("{} {}", l.file, render_range(&fx.texts[&l.file], l.range)))
        .collect();
    want.assert_eq(&out.join("\n"));
}

#[track_caller]
fn check_references(src: &str, include_declaration: bool, want: Expect) {
    let fx = fixture(&with_wf(src));
    let (path, text, off) = fx.cursor_file();
    let locs = references(
        &Own::new(text).doc(&fx.files, path, text),
        off,
        include_declaration,
    );
    let out: Vec<String> = locs
        .iter()
        .map(|l| format!("{} {}", l.file, render_range(&fx.texts[&l.file], l.range)))
        .collect();
    want.assert_eq(&out.join("\n"));
}

#[track_caller]
fn check_rename(src: &str, new_name: &str, want: Expect) {
    let fx = fixture(&with_wf(src));
    let (path, text, off) = fx.cursor_file();
    let got = match prepare_rename(&Own::new(text).doc(&fx.files, path, text), off) {
        Err(e) => format!("prepare: {e}"),
        Ok(r) => match rename(&Own::new(text).doc(&fx.files, path, text), off, new_name) {
            Err(e) => format!("prepare {}\nrename: {e}", render_range(text, r)),
            Ok(edits) => {
                let mut out = format!("prepare {}\n", render_range(text, r));
                let mut by_file: BTreeMap<&str, Vec<TextEdit>> = BTreeMap::new();
                for e in &edits {
                    by_file.entry(e.file.as_str()).or_default().push(e.clone());
                }
                for (f, es) in by_file {
                    let new = apply(&fx.texts[f], &es);
                    let changed: Vec<&str> = new.lines().filter(|l| l.contains(new_name)).collect();
                    out.push_str(&format!(
                        "{f} ({} edits)\n  {}\n",
                        es.len(),
                        changed.join("\n  ")
                    ));
                }
                out
            }
        },
    };
    want.assert_eq(&got);
}

#[track_caller]
fn check_inlay_hints(src: &str, want: Expect) {
    let fx = fixture(&with_wf(src));
    let (path, text, _) = fx.cursor_file();
    let hints = inlay_hints(
        &Own::new(text).doc(&fx.files, path, text),
        TextRange::new(0, text.len() as u32),
    );
    let mut out = text.to_owned();
    for h in hints.iter().rev() {
        out.insert_str(h.offset as usize, &format!("⟨{}⟩", h.label));
    }
    want.assert_eq(&out);
}

#[track_caller]
fn check_code_actions(
    src: &str,
    diagnostics: &[wfx_schemas::diagnostics::Diagnostic],
    want: Expect,
) {
    let fx = fixture(&with_wf(src));
    let (path, text, off) = fx.cursor_file();
    let range = fx.selection.unwrap_or(TextRange::empty(off));
    let actions = code_actions(
        &Own::new(text).doc(&fx.files, path, text),
        range,
        diagnostics,
    );
    let mut out = String::new();
    for a in &actions {
        out.push_str(&format!(
            "== {}{}\n",
            a.title,
            if a.preferred { " (preferred)" } else { "" }
        ));
        let mut by_file: BTreeMap<&str, Vec<TextEdit>> = BTreeMap::new();
        for e in &a.edits {
            by_file.entry(e.file.as_str()).or_default().push(e.clone());
        }
        for (f, es) in by_file {
            let old = &fx.texts[f];
            let new = apply(old, &es);
            // Show only the lines that differ (a tiny line diff).
            let old_lines: Vec<&str> = old.lines().collect();
            let new_lines: Vec<&str> = new.lines().collect();
            let prefix = old_lines
                .iter()
                .zip(&new_lines)
                .take_while(|(a, b)| a == b)
                .count();
            let suffix = old_lines
                .iter()
                .rev()
                .zip(new_lines.iter().rev())
                .take_while(|(a, b)| a == b)
                .count();
            out.push_str(&format!("{f}:\n"));
            for l in &old_lines[prefix..old_lines.len().saturating_sub(suffix).max(prefix)] {
                out.push_str(&format!("- {l}\n"));
            }
            for l in &new_lines[prefix..new_lines.len().saturating_sub(suffix).max(prefix)] {
                out.push_str(&format!("+ {l}\n"));
            }
        }
    }
    want.assert_eq(&out);
}

#[track_caller]
fn check_symbols(src: &str, want: Expect) {
    fn render(out: &mut String, text: &str, syms: &[Symbol], depth: usize) {
        for s in syms {
            out.push_str(&format!(
                "{}{} [{}] sel={:?}\n",
                "  ".repeat(depth),
                s.name,
                s.detail.as_deref().unwrap_or(""),
                text.get(s.selection.as_usize()).unwrap_or("?")
            ));
            render(out, text, &s.children, depth + 1);
        }
    }
    let fx = fixture(&with_wf(src));
    let (path, text, _) = fx.cursor_file();
    let mut out = String::new();
    render(
        &mut out,
        text,
        &document_symbols(&Own::new(text).doc(&MemFiles::new(), path, text)),
        0,
    );
    want.assert_eq(&out);
}

// ---- completion ----

#[test]
fn completion_in_an_empty_case_offers_the_top_level_keys() {
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\n$0",
        expect![[r#"
            replace ""
            title [Key] top-level key
            description [Key] top-level key
            skip [Key] top-level key
            trigger [Key] top-level key
            variables [Key] top-level key
            workspace [Key] top-level key
            mocks [Key] top-level key
            steps [Key] top-level key
        "#]],
    );
}

#[test]
fn completion_offers_only_keys_not_yet_present() {
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\ntitle: x\nde$0\nsteps:\n  - send: hi\n",
        expect![[r#"
            replace "de"
            description [Key] top-level key
            skip [Key] top-level key
            trigger [Key] top-level key
            variables [Key] top-level key
            workspace [Key] top-level key
            mocks [Key] top-level key
        "#]],
    );
}

#[test]
fn completion_of_step_keys_puts_actions_first() {
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - $0\n",
        expect![[r#"
            replace ""
            send [Key] action
            decide [Key] action
            deliver [Key] action
            succeeded [Key] structural assertion
            usedNoTools [Key] content assertion
            noTraversal [Key] structural assertion
            parked [Key] structural assertion
            raised [Key] structural assertion
            reachedState [Key] structural assertion
            triggerArrival [Key] structural assertion
            reply [Key] content assertion
            calledTool [Key] content assertion
            notCalledTool [Key] content assertion
            blockedTool [Key] content assertion
            ranWorkflow [Key] content assertion
            trail [Key] structural assertion
            variables [Key] structural assertion
            grade [Key] content assertion
        "#]],
    );
}

#[test]
fn step_snippets_are_reindented_to_the_key_column() {
    check_completion_insert(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - dec$0\n",
        "decide",
        expect![[r#"
            snippet=true decide:
                to: ${1:state}
                comment: ${2:comment}"#]],
    );
    // The key is already written: only the name is replaced.
    check_completion_insert(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - dec$0ide:\n      to: done\n",
        "decide",
        expect!["snippet=false decide"],
    );
}

/// The line of the cursor after applying the completion edit of `label` (its `replace`
/// range and `insert_text`), as a client applies a completion item's `textEdit`.
#[track_caller]
fn check_completion_applied(src: &str, label: &str, want: Expect) {
    let fx = fixture(&with_wf(src));
    let (path, text, off) = fx.cursor_file();
    let items = completion(&Own::new(text).doc(&fx.files, path, text), off);
    let item = items
        .iter()
        .find(|i| i.label == label)
        .unwrap_or_else(|| panic!("no item {label}"));
    let edited = apply(
        text,
        &[TextEdit {
            file: path.to_owned(),
            range: item.replace,
            new_text: item.insert_text.clone(),
        }],
    );
    let start = text
        .get(..off as usize)
        .and_then(|h| h.rfind('\n'))
        .map_or(0, |p| p + 1);
    let line = edited
        .get(start..)
        .unwrap_or("")
        .lines()
        .next()
        .unwrap_or("");
    want.assert_eq(line);
}

#[test]
fn completion_edits_keep_anchors_tags_and_quotes() {
    // issue 16: the edit replaces exactly the scalar's content.
    check_completion_applied(
        "#- workflows/w/workflow.yaml\nstates:\n  a:\n    transitions:\n      - to: &anchor b$0\n  b:\n    title: B\n",
        "b",
        expect!["      - to: &anchor b"],
    );
    check_completion_applied(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reachedState: &s rev$0\n",
        "review",
        expect!["  - reachedState: &s review"],
    );
    check_completion_applied(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reachedState: !!str &s do$0\n",
        "done",
        expect!["  - reachedState: !!str &s done"],
    );
    check_completion_applied(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reachedState: \"in$0\"\n",
        "intake",
        expect![[r#"  - reachedState: "intake""#]],
    );
    check_completion_applied(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reachedState: 'in$0'\n",
        "intake",
        expect!["  - reachedState: 'intake'"],
    );
    // Inside the anchor's name nothing is offered (it is not a state slug).
    let fx = fixture(&with_wf(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reachedState: &anc$0\n",
    ));
    let (path, text, off) = fx.cursor_file();
    assert!(completion(&Own::new(text).doc(&fx.files, path, text), off).is_empty());
}

#[test]
fn completion_right_after_the_colon_inserts_the_space() {
    check_completion_applied(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reachedState:$0\n",
        "review",
        expect!["  - reachedState: review"],
    );
    check_completion_applied(
        "#- workflows/shop/tests/a.test.yaml\ntrigger:\n  id:$0\n",
        "email",
        expect!["  id: email"],
    );
    // With the space already there, none is added.
    check_completion_applied(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reachedState: $0\n",
        "review",
        expect!["  - reachedState: review"],
    );
}

#[test]
fn nested_step_keys() {
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - trail:\n      count: 1\n      $0\n",
        expect![[r#"
            replace ""
            to [Key] nested key
            kind [Key] nested key
            reason [Key] nested key
        "#]],
    );
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\nmocks:\n  - tool: read_file\n    $0\n",
        expect![[r#"
            replace ""
            whenInput [Key] nested key
            result [Key] nested key
        "#]],
    );
}

#[test]
fn trigger_ids_with_entry_state_and_manual() {
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\ntrigger:\n  id: $0\n",
        expect![[r#"
            replace ""
            manual [Trigger] enters intake
            email [Trigger] enters intake
        "#]],
    );
    check_completion(
        "#- workflows/other/tests/a.test.yaml\ntrigger: { id: ma$0 }\n",
        expect![[r#"
            replace "ma"
            manual [Trigger] enters only
        "#]],
    );
}

#[test]
fn state_slugs_with_titles() {
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reachedState: rev$0\n",
        expect![[r#"
            replace "rev"
            intake [State] Take the request
            review [State] Review refund
            done [State] Done
        "#]],
    );
}

#[test]
fn decide_targets_are_human_edges_narrowed_by_the_steps_above() {
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - decide:\n      to: $0\n",
        expect![[r#"
            replace ""
            done [State] approve from review
            intake [State] refine from review
        "#]],
    );
    // Pinned to a state with other edges: only its edges.
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - parked: { state: intake }\n  - decide: { to: $0 }\n",
        expect![[r#"
            replace ""
            review [State] edge from intake
        "#]],
    );
}

#[test]
fn decide_targets_work_while_the_document_is_broken() {
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reachedState: review\n  - decide:\n      to: $0\n  - reply: { includes: [\"x\n",
        expect![[r#"
            replace ""
            done [State] approve from review
            intake [State] refine from review
        "#]],
    );
}

#[test]
fn enum_values_tools_variables_workflows_and_files() {
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - trail: { kind: $0 }\n",
        expect![[r#"
            replace ""
            trigger [Value]
            agent [Value]
            human [Value]
            sub-workflow [Value]
            reset [Value]
            on_error [Value]
        "#]],
    );
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - ranWorkflow:\n      workflow: $0\n",
        expect![[r#"
            replace ""
            other [Workflow]
            shop [Workflow]
        "#]],
    );
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\nvariables:\n  sender: a\n  $0\n",
        expect![[r#"
            replace ""
            order_no [Variable] required by a trigger
            conversation_id [Variable] a trigger's session path
            title [Variable] built-in: the run's title
        "#]],
    );
    check_completion(
        "#- workflows/shop/tests/a.test.yaml\nworkspace:\n  orders.json: { from: $0 }\n",
        expect![[r#"
            replace ""
            fixtures/orders.json [File]
        "#]],
    );
}

#[test]
fn tool_names() {
    let fx = fixture(&with_wf(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - calledTool: { name: $0 }\n",
    ));
    let (path, text, off) = fx.cursor_file();
    let labels: Vec<String> = completion(&Own::new(text).doc(&fx.files, path, text), off)
        .into_iter()
        .map(|i| i.label)
        .collect();
    assert_eq!(labels.first().map(String::as_str), Some("read_file"));
    assert!(labels.contains(&"archmax_advance".to_owned()));
    assert!(labels.contains(&"archmax_workflow_other".to_owned()));
    assert!(labels.contains(&"write_todos".to_owned()));
}

#[test]
fn workflow_yaml_completion() {
    check_completion(
        "#- workflows/w/workflow.yaml\nstates:\n  a:\n    transitions:\n      - to: $0\n  b:\n    title: B\n",
        expect![[r#"
            replace ""
            a [State]
            b [State] B
        "#]],
    );
    check_completion(
        "#- workflows/w/workflow.yaml\nstates:\n  a:\n    transitions:\n      - to: b\n        type: $0\n",
        expect![[r#"
            replace ""
            approve [Value]
            reject [Value]
            refine [Value]
            none [Value]
        "#]],
    );
    check_completion(
        "#- workflows/shop/workflow.yaml\nstates:\n  a:\n    before:\n      - script: $0\n    skills:\n      allow: [$0]\n",
        expect![[r#"
            replace ""
            hooks/check.js [File]
        "#]],
    );
    check_completion(
        "#- workflows/shop/workflow.yaml\nstates:\n  a:\n    skills:\n      allow: [$0]\n",
        expect![[r#"
            replace ""
            order-data [Skill]
        "#]],
    );
    check_completion(
        "#- workflows/w/workflow.yaml\nstates:\n  a:\n    tr$0\n    title: A\n",
        expect![[r#"
            replace "tr"
            type [Key] workflow key
            instructions [Key] workflow key
            summary [Key] workflow key
            evidence [Key] workflow key
            approvers [Key] workflow key
            triggers [Key] workflow key
            before [Key] workflow key
            after [Key] workflow key
            budget [Key] workflow key
            model [Key] workflow key
            on_error [Key] workflow key
            tools [Key] workflow key
            skills [Key] workflow key
            mounts [Key] workflow key
            requires [Key] workflow key
            metadata [Key] workflow key
            transitions [Key] workflow key
        "#]],
    );
}

#[test]
fn state_completion_in_a_broken_workflow_yaml() {
    check_completion(
        "#- workflows/w/workflow.yaml\nstates:\n  a:\n    transitions:\n      - to: $0\n  b:\n    title: [B\n  c: {}\n",
        expect![[r#"
            replace ""
            a [State]
            b [State]
            c [State]
        "#]],
    );
}

// ---- hover ----

#[test]
fn hover_on_a_step_key_shows_the_table_doc() {
    check_hover(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - tr$0ail: { to: done, count: 1 }\n",
        expect![[r#"
            24..29 "trail"
            ---
            **`trail`** (structural assertion)

            Exactly `count` trail steps match every given field.

            **Accepted:** a mapping `{ to?, kind?, reason?, count: int ≥ 0 }` with at least one of `to`/`kind`/`reason`

            A failure **halts the case**: later assertions are not executed.

            Reference: [`steps[].trail`](docs/reference.md#case-steps-trail)"#]],
    );
}

#[test]
fn hover_on_a_state_and_a_trigger() {
    check_hover(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reachedState: \"rev$0iew\"\n",
        expect![[r#"
            38..46 "\"review\""
            ---
            **state `review`** (human)

            Review refund

            Edges:
            - → `done` (approve): Approve it.
            - → `intake` (refine): Send back."#]],
    );
    check_hover(
        "#- workflows/shop/tests/a.test.yaml\ntrigger: { id: em$0ail }\n",
        expect![[r#"
            15..20 "email"
            ---
            **trigger `email`** → entry state `intake`

            An email arrived.

            session: `conversation_id`

            requires: `sender`, `order_no: string`"#]],
    );
    check_hover(
        "#- workflows/shop/workflow.yaml\nstates:\n  a:\n    transitions:\n      - to: d$0one\n  done: {}\n",
        expect![[r#"
            42..46 "done"
            ---
            **state `done`** (agent, terminal)"#]],
    );
}

#[test]
fn hover_on_regex_tokens() {
    check_hover(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reply: { includes: [\"/appr$0ov/i\"] }\n",
        expect![[r#"
            44..55 "\"/approv/i\""
            ---
            **regular expression** `/approv/`

            flags: `i`

            Reference: [regular expressions](docs/reference.md#regular-expressions)"#]],
    );
    check_hover(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reply: { includes: [ORD$0-1] }\n",
        expect![[r#"
            44..49 "ORD-1"
            ---
            plain string: matches as a substring (write `/…/flags` for a regex)"#]],
    );
    check_hover(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - calledTool: { name: x, input: { path: \"/a($0/\" } }\n",
        expect![[r#"
            62..68 "\"/a(/\""
            ---
            **regular expression** `/a(/`

            no flags

            **malformed:** Unbalanced parenthesis

            Reference: [regular expressions](docs/reference.md#regular-expressions)"#]],
    );
}

/// Hover Markdown with its code spans cut out (CommonMark: a run of N backticks opens a
/// span that the next run of exactly N closes; nothing inside is Markdown or HTML).
fn outside_code_spans(md: &str) -> String {
    let b = md.as_bytes();
    let run_at = |i: usize| b[i..].iter().take_while(|c| **c == b'`').count();
    let (mut out, mut i) = (String::new(), 0);
    while i < b.len() {
        if b[i] == b'`' && (i == 0 || b[i - 1] != b'\\') {
            let n = run_at(i);
            let mut j = i + n;
            let close = loop {
                match md[j..].find('`') {
                    Some(k) if run_at(j + k) == n => break Some(j + k),
                    Some(k) => j += k + run_at(j + k),
                    None => break None,
                }
            };
            if let Some(c) = close {
                out.push_str(" CODE ");
                i = c + n;
                continue;
            }
        }
        let ch = md[i..].chars().next().unwrap();
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Whether `md` (outside code spans) has markup a renderer would act on: raw HTML (`<`), or
/// an unescaped `!`, `[` or `]` (the only way to start an image or a link, inline or by
/// reference).
#[track_caller]
fn assert_inert_markdown(md: &str) {
    let rest = outside_code_spans(md);
    let b = rest.as_bytes();
    for (i, c) in b.iter().enumerate() {
        let escaped = b[..i].iter().rev().take_while(|x| **x == b'\\').count() % 2 == 1;
        assert!(
            *c != b'<' && (escaped || !matches!(c, b'!' | b'[' | b']')),
            "active markup at {i} of {rest:?}\nin {md}"
        );
    }
}

/// Issue 24: a state's `title`/`summary` went into hover Markdown verbatim, so a hostile
/// repository's remote image was fetched when a user hovered (a tracking pixel). Every
/// workspace string of a card is escaped: titles, summaries, trigger and transition
/// descriptions, types, sessions, names, slugs and patterns.
#[test]
fn hover_cards_show_workspace_text_as_text() {
    let img = "![x](https://example.invalid/p.png)";
    let html = "<img src=https://example.invalid/q.png>";
    let wf = format!(
        r#"
#- workflows/shop/workflow.yaml
states:
  intake:
    title: "{html}"
    summary: "{img}\n\n[l](https://example.invalid/l) <b>x</b>"
    triggers:
      manual:
      mail:
        description: "{img} {html}"
        session: "`{img}`"
        requires: [{{ name: "a`{img}", type: "{html}" }}]
    transitions:
      - to: "b`{img}"
        type: "{img}"
        description: "{html} {img}"
    on_error: "``{img}"
  "b`{img}": {{}}
"#
    );
    let hovers = [
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reachedState: int$0ake\n",
        "#- workflows/shop/tests/a.test.yaml\ntrigger: {{ id: ma$0il }}\n",
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - reply: {{ includes: [\"/`![x](https://example.invalid/r.png)`$0/\"] }}\n",
    ];
    for h in hovers {
        let fx = fixture(&format!(
            "{WF}{wf}{}",
            h.replace("{{", "{").replace("}}", "}")
        ));
        let (path, text, off) = fx.cursor_file();
        let md = hover(&Own::new(text).doc(&fx.files, path, text), off)
            .unwrap_or_else(|| panic!("no hover for {h}"))
            .markdown;
        // The regex card's one link is ours.
        let fixed = wfx_schemas::docs::reference_link(
            wfx_schemas::docs::REGEX_ANCHOR,
            "regular expressions",
        );
        assert_inert_markdown(&md.replace(&fixed, ""));
        // The text is still there, shown as text.
        assert!(md.contains("example.invalid"), "{md}");
    }
    // The checker sees what the old cards did.
    assert!(
        std::panic::catch_unwind(|| assert_inert_markdown(&format!("**state** {img}"))).is_err()
    );
    assert!(std::panic::catch_unwind(|| assert_inert_markdown(html)).is_err());
    assert_inert_markdown("`![x](u)` \\!\\[x\\]\\(u\\)");
}

#[test]
fn hover_works_on_broken_text() {
    check_hover(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: \"hi\n  - grad$0e:\n",
        expect![[r#"
            25..30 "grade"
            ---
            **`grade`** (content assertion)

            A judge model scores the session against a closed question; passes when the score is at least `atLeast`. Needs `tests.judge` in workflow.yaml.

            **Accepted:** a mapping `{ closedQA: string, atLeast: number in [0, 1] }`

            A failure does not halt the case.

            Reference: [`steps[].grade`](docs/reference.md#case-steps-grade)"#]],
    );
    check_hover(
        "#- workflows/shop/tests/a.test.yaml\ntitle: [\nsteps:\n  - send: hi\n  - grad$0e:\n",
        expect![[r#"
            33..38 "grade"
            ---
            **`grade`** (content assertion)

            A judge model scores the session against a closed question; passes when the score is at least `atLeast`. Needs `tests.judge` in workflow.yaml.

            **Accepted:** a mapping `{ closedQA: string, atLeast: number in [0, 1] }`

            A failure does not halt the case.

            Reference: [`steps[].grade`](docs/reference.md#case-steps-grade)"#]],
    );
}

// ---- navigation ----

#[test]
fn definition_of_states_triggers_fixtures_and_scripts() {
    check_definition(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: hi\n  - decide: { to: do$0ne }\n",
        expect![[r#"workflows/shop/workflow.yaml 737..741 "done""#]],
    );
    check_definition(
        "#- workflows/shop/tests/a.test.yaml\ntrigger:\n  id: ema$0il\n",
        expect![[r#"workflows/shop/workflow.yaml 171..176 "email""#]],
    );
    check_definition(
        "#- workflows/shop/tests/a.test.yaml\nworkspace:\n  o.json: { from: ./fixtures/$0orders.json }\n",
        expect![[r#"workflows/shop/tests/fixtures/orders.json 0..0 """#]],
    );
    check_definition(
        "#- workflows/shop/tests/a.test.yaml\nworkspace:\n  o.json: { from: ../$0workflow.yaml }\n",
        expect![""],
    );
    check_definition(
        "#- workflows/shop/workflow.yaml\nstates:\n  a:\n    after: { script: hooks/ch$0eck.js }\n    on_error: a\n",
        expect![[r#"workflows/shop/hooks/check.js 0..0 """#]],
    );
    check_definition(
        "#- workflows/shop/workflow.yaml\nstates:\n  a:\n    on_error: $0a\n",
        expect![[r#"workflows/shop/workflow.yaml 10..11 "a""#]],
    );
}

const CASES: &str = r#"
#- workflows/shop/tests/one.test.yaml
title: One
trigger: { id: email }
steps:
  - send: hi
  - reachedState: review
  - parked: { state: "review" }
  - decide: { to: done }
  - trail: { kind: trigger, reason: email, count: 1 }
  - trail: { kind: human, reason: email, count: 1 }
#- workflows/shop/tests/two.test.yaml
title: Two
steps:
  - send: hi
  - triggerArrival: email
  - reachedState: review
"#;

#[test]
fn references_of_a_state_across_the_workflow_and_its_cases() {
    check_references(
        &format!(
            "{CASES}#- workflows/shop/tests/three.test.yaml\nsteps:\n  - send: x\n  - trail: {{ to: re$0view, count: 1 }}\n"
        ),
        true,
        expect![[r#"
            workflows/shop/workflow.yaml 455..461 "review"
            workflows/shop/workflow.yaml 499..505 "review"
            workflows/shop/tests/one.test.yaml 72..78 "review"
            workflows/shop/tests/one.test.yaml 101..107 "review"
            workflows/shop/tests/three.test.yaml 36..42 "review"
            workflows/shop/tests/two.test.yaml 75..81 "review""#]],
    );
}

#[test]
fn references_of_a_trigger_without_the_declaration() {
    check_references(
        &format!(
            "{CASES}#- workflows/shop/tests/three.test.yaml\nsteps:\n  - send: x\n  - triggerArrival: e$0mail\n"
        ),
        false,
        expect![[r#"
            workflows/shop/tests/one.test.yaml 26..31 "email"
            workflows/shop/tests/one.test.yaml 172..177 "email"
            workflows/shop/tests/three.test.yaml 39..44 "email"
            workflows/shop/tests/two.test.yaml 51..56 "email""#]],
    );
}

#[test]
fn rename_a_state_everywhere() {
    check_rename(
        &format!(
            "{CASES}#- workflows/shop/tests/three.test.yaml\nsteps:\n  - send: x\n  - reachedState: re$0view\n"
        ),
        "approval",
        expect![[r#"
            prepare 37..43 "review"
            workflows/shop/tests/one.test.yaml (2 edits)
                - reachedState: approval
                - parked: { state: "approval" }
            workflows/shop/tests/three.test.yaml (1 edits)
                - reachedState: approval
            workflows/shop/tests/two.test.yaml (1 edits)
                - reachedState: approval
            workflows/shop/workflow.yaml (2 edits)
                    - to: approval
                approval:
        "#]],
    );
}

#[test]
fn a_key_right_after_a_block_scalar_is_found_at_its_first_character() {
    // The block scalar's range runs to the start of the next line: `b`'s first character.
    let wf = "#- workflows/shop/workflow.yaml\nstates:\n  a:\n    on_error: b\n    instructions: |\n      one\n      two\n  $0b:\n    on_error: a\n";
    check_rename(
        wf,
        "c",
        expect![[r#"
            prepare 71..72 "b"
            workflows/shop/workflow.yaml (2 edits)
                  on_error: c
                  instructions: |
                c:
        "#]],
    );
    check_references(
        wf,
        true,
        expect![[r#"
        workflows/shop/workflow.yaml 27..28 "b"
        workflows/shop/workflow.yaml 71..72 "b""#]],
    );
}

#[test]
fn rename_a_trigger_from_workflow_yaml() {
    let src = CASES;
    let wf_cursor = WF.replace("      email:\n", "      em$0ail:\n");
    let fx = fixture(&format!("{wf_cursor}{src}"));
    let (path, text, off) = fx.cursor_file();
    let edits = rename(&Own::new(text).doc(&fx.files, path, text), off, "mail").unwrap();
    let files: Vec<(&str, String)> = edits
        .iter()
        .map(|e| {
            (
                e.file.as_str(),
                fx.texts[&e.file][e.range.as_usize()].to_owned(),
            )
        })
        .collect();
    expect![[r#"
        [
            (
                "workflows/shop/tests/one.test.yaml",
                "email",
            ),
            (
                "workflows/shop/tests/one.test.yaml",
                "email",
            ),
            (
                "workflows/shop/tests/two.test.yaml",
                "email",
            ),
            (
                "workflows/shop/workflow.yaml",
                "email",
            ),
        ]
    "#]]
    .assert_debug_eq(&files);
}

/// An agent script naming states (`archmax_advance` targets) and tools (`call.tool`).
const AGENT: &str = r#"
#- workflows/shop/tests/one.agent.yaml
turns:
  - - call: { tool: archmax_advance, input: { to: review, reason: r } }
    - call: { tool: read_file, input: { file_path: a.txt } }
    - call: { tool: archmax_wait, input: { to: review, reason: r } }
  - - call:
        tool: archmax_advance
        input: { to: "review", reason: r }
"#;

#[test]
fn references_of_a_state_include_agent_script_advances() {
    // The `to` of `archmax_wait` names no state: only `archmax_advance` targets count.
    check_references(
        &format!(
            "{CASES}{AGENT}#- workflows/shop/tests/three.test.yaml\nsteps:\n  - send: x\n  - reachedState: re$0view\n"
        ),
        false,
        expect![[r#"
            workflows/shop/workflow.yaml 455..461 "review"
            workflows/shop/tests/one.test.yaml 72..78 "review"
            workflows/shop/tests/one.test.yaml 101..107 "review"
            workflows/shop/tests/three.test.yaml 37..43 "review"
            workflows/shop/tests/two.test.yaml 75..81 "review"
            workflows/shop/tests/one.agent.yaml 57..63 "review"
            workflows/shop/tests/one.agent.yaml 273..279 "review""#]],
    );
}

#[test]
fn references_from_an_agent_script() {
    check_references(
        &format!("{CASES}{AGENT}").replace(
            "{ to: review, reason: r } }\n    - call: { tool: read",
            "{ to: rev$0iew, reason: r } }\n    - call: { tool: read",
        ),
        true,
        expect![[r#"
            workflows/shop/workflow.yaml 455..461 "review"
            workflows/shop/workflow.yaml 499..505 "review"
            workflows/shop/tests/one.test.yaml 72..78 "review"
            workflows/shop/tests/one.test.yaml 101..107 "review"
            workflows/shop/tests/two.test.yaml 75..81 "review"
            workflows/shop/tests/one.agent.yaml 57..63 "review"
            workflows/shop/tests/one.agent.yaml 273..279 "review""#]],
    );
}

#[test]
fn references_of_a_tool_across_governance_mocks_assertions_and_scripts() {
    check_references(
        &format!(
            "{AGENT}#- workflows/shop/tests/three.test.yaml\nmocks:\n  - tool: read_file\n    result: x\nsteps:\n  - send: x\n  - calledTool: read_$0file\n  - notCalledTool: {{ name: read_file }}\n  - blockedTool: lookup\n"
        ),
        true,
        expect![[r#"
            workflows/shop/workflow.yaml 387..396 "read_file"
            workflows/shop/tests/three.test.yaml 17..26 "read_file"
            workflows/shop/tests/three.test.yaml 76..85 "read_file"
            workflows/shop/tests/three.test.yaml 113..122 "read_file"
            workflows/shop/tests/one.agent.yaml 99..108 "read_file""#]],
    );
}

#[test]
fn rename_a_state_edits_agent_scripts() {
    check_rename(
        &format!(
            "{CASES}{AGENT}#- workflows/shop/tests/three.test.yaml\nsteps:\n  - send: x\n  - reachedState: re$0view\n"
        ),
        "approval",
        expect![[r#"
            prepare 37..43 "review"
            workflows/shop/tests/one.agent.yaml (2 edits)
                - - call: { tool: archmax_advance, input: { to: approval, reason: r } }
                      input: { to: "approval", reason: r }
            workflows/shop/tests/one.test.yaml (2 edits)
                - reachedState: approval
                - parked: { state: "approval" }
            workflows/shop/tests/three.test.yaml (1 edits)
                - reachedState: approval
            workflows/shop/tests/two.test.yaml (1 edits)
                - reachedState: approval
            workflows/shop/workflow.yaml (2 edits)
                    - to: approval
                approval:
        "#]],
    );
    // From the agent script itself.
    check_rename(
        &AGENT.replace(
            "tool: archmax_advance, input: { to: review",
            "tool: archmax_advance, input: { to: rev$0iew",
        ),
        "approval",
        expect![[r#"
            prepare 57..63 "review"
            workflows/shop/tests/one.agent.yaml (2 edits)
                - - call: { tool: archmax_advance, input: { to: approval, reason: r } }
                      input: { to: "approval", reason: r }
            workflows/shop/workflow.yaml (2 edits)
                    - to: approval
                approval:
        "#]],
    );
    // A tool cannot be renamed.
    check_rename(
        &AGENT.replace("tool: read_file", "tool: read_$0file"),
        "open_file",
        expect![
            "prepare: tool `read_file` is named by the host, not declared in workflow.yaml, so it cannot be renamed here (find its references instead)"
        ],
    );
}

/// A cassette of the `shop` workflow (docs/cassettes.md): the model advances from `intake`
/// to `review` (call_1), reads a file whose arguments and result say "review" (not a
/// state), and the next request carries the simulator's result of the advance. The prompt,
/// the tool description and the model's prose name `review` too.
const CASSETTE: &str = r#"
#- workflows/shop/tests/one.cassette.json
{
  "version": 1,
  "recordedWith": "wfx-lsp 0.1.0",
  "recordedAt": "2026-12-03T08:52:53Z",
  "clock": { "startMs": 1796287973000, "stepMs": 1, "zone": "UTC" },
  "model": "test/model",
  "endpoint": "127.0.0.1:9",
  "case": "one",
  "inputs": { "case": "fnv1a64:0000000000000000", "workflow": "fnv1a64:0000000000000000" },
  "prompts": { "p0": "States: intake -> review -> done." },
  "toolsets": { "t0": [ { "name": "archmax_advance", "description": "Advance, e.g. to review.", "parameters": {} } ] },
  "interactions": [
    {
      "seq": 0, "role": "agent", "run": 0, "call": 0, "step": 1, "state": "intake",
      "request": {
        "model": "test/model", "system": "p0", "tools": ["archmax_advance", "read_file"], "toolset": "t0",
        "messagesFrom": 0,
        "messages": [ { "role": "user", "content": "review" } ]
      },
      "response": {
        "content": "Moving to review.",
        "toolCalls": [
          { "id": "call_1", "name": "archmax_advance", "arguments": { "to": "review", "reason": "review" } },
          { "id": "call_2", "name": "read_file", "arguments": { "to": "review" } }
        ],
        "finishReason": "tool_calls",
        "usage": { "promptTokens": 1200, "completionTokens": 34, "cachedTokens": 1000 }
      }
    },
    {
      "seq": 1, "role": "agent", "run": 0, "call": 1, "step": 1, "state": "review",
      "request": {
        "model": "test/model", "system": "p0", "tools": ["archmax_advance"], "toolset": "t0",
        "messagesFrom": 0,
        "messages": [
          { "role": "user", "content": "review" },
          { "role": "assistant", "content": "Moving to review.", "toolCalls": [
            { "id": "call_1", "name": "archmax_advance", "arguments": { "to": "review", "reason": "review" } },
            { "id": "call_2", "name": "read_file", "arguments": { "to": "review" } } ] },
          { "role": "tool", "toolCallId": "call_1", "content": "Advanced to state 'review'. You may now use the tools allowed in this state." },
          { "role": "tool", "toolCallId": "call_2", "content": "Advanced to state 'review'. You may now use the tools allowed in this state." }
        ]
      },
      "response": { "content": "Parked in review.", "finishReason": "stop", "usage": { "promptTokens": 1300, "completionTokens": 9 } }
    },
    {
      "seq": 2, "role": "judge", "run": 0, "call": 0, "step": 3,
      "request": { "model": "test/judge", "messagesFrom": 0, "messages": [ { "role": "user", "content": "Did it reach review?" } ] },
      "response": { "content": "{\"pass\": true}", "finishReason": "stop" }
    }
  ]
}
"#;

#[test]
fn rename_a_state_reaches_cassettes_structured_data_only() {
    // Renamed: the interaction `state`, the `to` of each `archmax_advance` call (response
    // and request messages) and the simulator's result of call_1. Kept: the prompt, the tool
    // description, user and model text, `read_file`'s arguments and call_2's result.
    check_rename(
        &format!(
            "{CASES}{CASSETTE}#- workflows/shop/tests/three.test.yaml\nsteps:\n  - send: x\n  - reachedState: re$0view\n"
        ),
        "approval",
        expect![[r#"
            prepare 37..43 "review"
            workflows/shop/tests/one.cassette.json (4 edits)
                        { "id": "call_1", "name": "archmax_advance", "arguments": { "to": "approval", "reason": "review" } },
                    "seq": 1, "role": "agent", "run": 0, "call": 1, "step": 1, "state": "approval",
                          { "id": "call_1", "name": "archmax_advance", "arguments": { "to": "approval", "reason": "review" } },
                        { "role": "tool", "toolCallId": "call_1", "content": "Advanced to state 'approval'. You may now use the tools allowed in this state." },
            workflows/shop/tests/one.test.yaml (2 edits)
                - reachedState: approval
                - parked: { state: "approval" }
            workflows/shop/tests/three.test.yaml (1 edits)
                - reachedState: approval
            workflows/shop/tests/two.test.yaml (1 edits)
                - reachedState: approval
            workflows/shop/workflow.yaml (2 edits)
                    - to: approval
                approval:
        "#]],
    );
    // The edited cassette is still a valid cassette.
    let fx = fixture(&with_wf(&format!(
        "{CASSETTE}#- workflows/shop/tests/three.test.yaml\nsteps:\n  - reachedState: re$0view\n"
    )));
    let (path, text, off) = fx.cursor_file();
    let edits = rename(&Own::new(text).doc(&fx.files, path, text), off, "approval").unwrap();
    let file = "workflows/shop/tests/one.cassette.json";
    let mine: Vec<TextEdit> = edits.into_iter().filter(|e| e.file == file).collect();
    let c = wfx_schemas::cassette::parse(&apply(&fx.texts[file], &mine)).unwrap();
    assert_eq!(c.interactions[1].state.as_deref(), Some("approval"));
    assert_eq!(c.prompts["p0"], "States: intake -> review -> done.");
    // Renaming another state leaves the cassette alone; an invalid cassette refuses.
    check_rename(
        &format!(
            "{CASSETTE}#- workflows/shop/tests/a.test.yaml\nsteps:\n  - reachedState: do$0ne\n"
        ),
        "closed",
        expect![[r#"
            prepare 25..29 "done"
            workflows/shop/tests/a.test.yaml (1 edits)
                - reachedState: closed
            workflows/shop/workflow.yaml (2 edits)
                    - to: closed
                closed:
        "#]],
    );
    check_rename(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - reachedState: re$0view\n#- workflows/shop/tests/a.cassette.json\n{ \"version\": 1 }\n",
        "approval",
        expect![[r#"
            prepare 25..31 "review"
            rename: cannot rename: cassette workflows/shop/tests/a.cassette.json is not valid (not a cassette: missing field `recordedWith` at line 1 column 16); fix, re-record or delete it"#]],
    );
}

/// docs/security.md, F1: strings equal to the old name deep under long keys (free JSON in a
/// tool call's `arguments`, which `check` passes) are not edits, and finding that out
/// copies no path (`PathShape`): the rename gives exactly the edits of the plain cassette.
#[test]
fn rename_in_a_cassette_with_deep_long_keyed_decoys_gives_the_plain_edits() {
    let plain = CASSETTE
        .split_once('\n')
        .unwrap()
        .1
        .split_once('\n')
        .unwrap()
        .1;
    let path = "workflows/shop/tests/one.cassette.json";
    let decoys = format!(
        "{}[{}]{}",
        (0..100)
            .map(|i| format!("{{\"{}{i}\": ", "k".repeat(2_000)))
            .collect::<String>(),
        vec!["\"review\""; 5_000].join(","),
        "}".repeat(100)
    );
    let crafted = plain.replacen(
        r#""name": "read_file", "arguments": { "to": "review" } }"#,
        &format!(r#""name": "read_file", "arguments": {decoys} }}"#),
        1,
    );
    assert!(crafted.len() > plain.len() + 200_000, "the decoys are in");
    wfx_schemas::cassette::parse(&crafted).expect("the crafted cassette is valid");
    let texts = |text: &str| -> Vec<(String, String)> {
        cassette::rename_state(path, text, "review", "approval")
            .unwrap()
            .into_iter()
            .map(|e| (text[e.range.as_usize()].to_owned(), e.new_text))
            .collect()
    };
    let want = texts(plain);
    assert_eq!(want.len(), 4, "{want:?}");
    assert_eq!(texts(&crafted), want);
}

#[test]
fn hover_and_lenses_on_a_cassette() {
    let fx = fixture(&with_wf(&format!(
        "{CASSETTE}#- workflows/shop/tests/one.test.yaml\ntitle: One\nsteps:\n  - send: review\n"
    )));
    let path = "workflows/shop/tests/one.cassette.json";
    let text = &fx.texts[path];
    let own = Own::new(text);
    let doc = own.doc(&fx.files, path, text);
    let titles: Vec<String> = cassette::lenses(&doc)
        .into_iter()
        .map(|l| {
            format!(
                "{} {:?} {:?}",
                render_range(text, l.range),
                l.title,
                l.run_case
            )
        })
        .collect();
    expect![[r#"
        [
            "55..67 \"\\\"recordedAt\\\"\" \"recorded 2026-12-03T08:52:53Z · test/model · 3 calls (2 agent, 1 judge) · 2,543 tokens\" None",
            "55..67 \"\\\"recordedAt\\\"\" \"⚠ stale: the case `workflows/shop/tests/one.test.yaml` changed and `workflow.yaml` changed since it was recorded (2026-12-03T08:52:53Z); a replay may diverge — re-record with `wfx-lsp test --live --record all`\" None",
            "55..67 \"\\\"recordedAt\\\"\" \"▶ Replay case (cassette)\" Some(\"workflows/shop/tests/one.test.yaml\")",
        ]
    "#]]
    .assert_debug_eq(&titles);
    // Inside the second interaction: its call above the cassette card.
    let at = text.find("Parked in review").unwrap() as u32 + 2;
    let h = hover(&doc, at).unwrap();
    assert_eq!(
        render_range(text, h.range),
        "2194..2211 \"Parked in review.\""
    );
    expect![[r#"
        **interaction 1** (agent): run 0, call 1, step 1, state `review`

        - model `test/model`
        - finish reason `stop`
        - tokens: 1,300 prompt + 9 completion

        ---

        **cassette** recorded `2026-12-03T08:52:53Z` with model `test/model` at `127.0.0.1:9`

        - 3 calls (2 agent, 1 judge)
        - tokens: 2,500 prompt (1,000 cached) + 43 completion
        - ⚠ stale cassette: the case \`workflows/shop/tests/one.test.yaml\` changed and \`workflow.yaml\` changed since it was recorded \(2026-12-03T08:52:53Z\); a replay may diverge — re-record with \`wfx-lsp test --live --record all\`

        Replayed by `wfx-lsp test` (no network, no key); re-record with `wfx-lsp test --live --record all`."#]]
    .assert_eq(&h.markdown);
    // Up to date once the digests match the case and workflow.yaml; no case, no replay lens.
    let digest = |p: &str| wfx_schemas::cassette::digest(&fx.texts[p]);
    let fresh = text
        .replacen(
            "fnv1a64:0000000000000000",
            &digest("workflows/shop/tests/one.test.yaml"),
            1,
        )
        .replacen(
            "fnv1a64:0000000000000000",
            &digest("workflows/shop/workflow.yaml"),
            1,
        );
    let own = Own::new(&fresh);
    let titles: Vec<String> = cassette::lenses(&own.doc(&fx.files, path, &fresh))
        .into_iter()
        .map(|l| l.title)
        .collect();
    assert_eq!(
        titles[1],
        "✔ recorded from the case and workflow.yaml as they are now"
    );
    assert_eq!(titles.len(), 3);
    let lone = "workflows/shop/tests/lone.cassette.json";
    let own = Own::new(text);
    assert_eq!(cassette::lenses(&own.doc(&fx.files, lone, text)).len(), 2);
    // Not a cassette: no lens, no hover.
    let own = Own::new("{}");
    assert!(cassette::lenses(&own.doc(&fx.files, path, "{}")).is_empty());
    assert!(hover(&own.doc(&fx.files, path, "{}"), 0).is_none());
}

#[test]
fn rename_refusals() {
    check_rename(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: x\n  - reachedState: re$0view\n",
        "Not A Slug",
        expect![[r#"
            prepare 37..43 "review"
            rename: `Not A Slug` is not a state slug (lowercase letters and digits in dash-separated words)"#]],
    );
    check_rename(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: x\n  - reachedState: re$0view\n",
        "done",
        expect![[r#"
            prepare 37..43 "review"
            rename: a state `done` already exists"#]],
    );
    check_rename(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - se$0nd: x\n",
        "y",
        expect!["prepare: only a state slug or a trigger id can be renamed"],
    );
    check_rename(
        "#- workflows/shop/tests/a.test.yaml\ntrigger: { id: man$0ual }\n",
        "y",
        expect!["prepare: `manual` is the reserved default trigger id"],
    );
    check_rename(
        "#- workflows/shop/tests/a.test.yaml\nsteps:\n  - send: x\n  - reachedState: nowh$0ere\n",
        "y",
        expect!["prepare: state `nowhere` is not declared in workflow.yaml"],
    );
    check_rename(
        "#- workflows/shop/tests/a.test.yaml\ntrigger: { id: em$0ail }\n",
        " ",
        expect![[r#"
            prepare 15..20 "email"
            rename: a trigger id must not be empty"#]],
    );
    check_rename(
        "#- workflows/shop/tests/a.test.yaml\ntrigger: { id: em$0ail }\n#- workflows/shop/tests/b.test.yaml\ntitle: [\n",
        "mail",
        expect![[r#"
            prepare 15..20 "email"
            rename: cannot rename: workflows/shop/tests/b.test.yaml does not parse"#]],
    );
}

// ---- inlay hints ----

#[test]
fn inlay_hints_for_budgets_and_decision_types() {
    check_inlay_hints(
        "#- workflows/shop/tests/a.test.yaml\n$0title: \"Refund   approved 😀\"\ndescription: >-\n  Two\n  lines.\nsteps:\n  - send: hi\n  - reachedState: review\n  - decide:\n      to: done\n  - decide: { to: intake }\n",
        expect![[r#"
            title: "Refund   approved 😀"⟨18/60⟩
            description: >-
              Two
              lines.⟨10/200⟩
            steps:
              - send: hi
              - reachedState: review
              - decide:
                  to: done⟨approve⟩
              - decide: { to: intake⟨refine⟩ }
        "#]],
    );
}

// ---- symbols, folding, regex tokens, workspace symbols ----

#[test]
fn document_symbols_nest_assertions_under_their_action() {
    check_symbols(
        "#- workflows/shop/tests/a.test.yaml\n$0title: Refund approved\nsteps:\n  - succeeded: true\n  - send: \"hi there\"\n  - reachedState: review\n  - decide: { to: done }\n  - reply: { includes: [x] }\n",
        expect![[r#"
            Refund approved [title] sel="Refund approved"
            succeeded: true [assertion] sel="succeeded"
            send: hi there [action] sel="send"
              reachedState: review [assertion] sel="reachedState"
            decide → done [action] sel="decide"
              reply { includes } [assertion] sel="reply"
        "#]],
    );
    check_symbols(
        "#- workflows/w/workflow.yaml\n$0states:\n  a:\n    title: A\n    triggers: { manual: }\n    transitions:\n      - to: b\n        type: approve\n  b: {}\n",
        expect![[r#"
            a [A] sel="a"
              manual [trigger] sel="manual"
              → b [approve] sel="b"
            b [] sel="b"
        "#]],
    );
}

#[test]
fn the_outline_of_workflow_yaml_has_every_top_level_key() {
    // issue 16: not only states, triggers and transitions.
    let text = "title: Shop\ninstructions: Help.\ntools:\n  allow_always: [read_file]\ntests:\n  maxConcurrency: 1\nstates:\n  a:\n    title: A\n    triggers: { manual: }\n    transitions:\n      - to: b\n  b: {}\nsettings:\n  prompt_cache: { enabled: true }\n";
    fn render(out: &mut String, syms: &[Symbol], depth: usize) {
        for s in syms {
            out.push_str(&format!(
                "{}{} [{}]\n",
                "  ".repeat(depth),
                s.name,
                s.detail.as_deref().unwrap_or("")
            ));
            render(out, &s.children, depth + 1);
        }
    }
    let mut out = String::new();
    render(
        &mut out,
        &outline(&Own::new(text).doc(&MemFiles::new(), "workflows/w/workflow.yaml", text)),
        0,
    );
    expect![[r#"
        title [Shop]
        instructions [Help.]
        tools []
          allow_always []
        tests []
          maxConcurrency [1]
        states []
          a [A]
            manual [trigger]
            → b [transition]
          b []
        settings []
          prompt_cache []
    "#]]
    .assert_eq(&out);
    // A case's outline is its steps, as before.
    let case = "title: T\nsteps:\n  - send: hi\n";
    assert_eq!(
        outline(&Own::new(case).doc(&MemFiles::new(), "workflows/w/tests/a.test.yaml", case)).len(),
        2
    );
}

#[track_caller]
fn check_highlights(src: &str, want: Expect) {
    let fx = fixture(&with_wf(src));
    let (path, text, off) = fx.cursor_file();
    let got: Vec<String> = document_highlights(&Own::new(text).doc(&fx.files, path, text), off)
        .iter()
        .map(|h| {
            let line = text[..h.range.start as usize].matches('\n').count();
            format!(
                "{line}:{} {}",
                &text[h.range.as_usize()],
                if h.write { "write" } else { "read" }
            )
        })
        .collect();
    want.assert_eq(&got.join("\n"));
}

#[test]
fn document_highlight_of_states_and_triggers() {
    // In workflow.yaml: the state's key is the write, its `to:` uses are reads.
    check_highlights(
        "#- workflows/w/workflow.yaml\nstates:\n  a:\n    title: A\n    transitions:\n      - to: b$0\n  b:\n    title: B\n    transitions:\n      - to: b\n    on_error: a\n",
        expect![[r#"
            4:b read
            5:b write
            8:b read"#]],
    );
    check_highlights(
        "#- workflows/w/workflow.yaml\nstates:\n  a:\n    triggers:\n      go$0:\n    transitions:\n      - to: a\n",
        expect!["3:go write"],
    );
    // In a case: every use is a read (the declaration is in another file).
    check_highlights(
        "#- workflows/shop/tests/a.test.yaml\ntrigger: { id: email }\nsteps:\n  - send: hi\n  - reachedState: rev$0iew\n  - decide: { to: done }\n  - parked: { state: review }\n",
        expect![[r#"
            3:review read
            5:review read"#]],
    );
    check_highlights(
        "#- workflows/shop/tests/a.test.yaml\ntrigger: { id: em$0ail }\nsteps:\n  - send: hi\n",
        expect!["0:email read"],
    );
    // Nothing under the cursor.
    check_highlights(
        "#- workflows/shop/tests/a.test.yaml\ntitle: $0x\nsteps:\n  - send: hi\n",
        expect![""],
    );
}

#[test]
fn folding_ranges_from_the_tree_and_from_indentation() {
    let text = "title: x\nsteps:\n  - send: hi\n  - decide:\n      to: a\n      comment: b\n";
    let got: Vec<&str> = folding_ranges(&Own::new(text).doc(
        &MemFiles::new(),
        "workflows/w/tests/a.test.yaml",
        text,
    ))
    .iter()
    .map(|r| &text[r.as_usize()])
    .collect();
    expect![[r#"
        [
            "steps:\n  - send: hi\n  - decide:\n      to: a\n      comment: b",
            "decide:\n      to: a\n      comment: b",
        ]
    "#]]
    .assert_debug_eq(&got);
    let broken = "title: [\nsteps:\n  - send: hi\n  - x\n";
    let got: Vec<&str> = folding_ranges(&Own::new(broken).doc(
        &MemFiles::new(),
        "workflows/w/tests/a.test.yaml",
        broken,
    ))
    .iter()
    .map(|r| &broken[r.as_usize()])
    .collect();
    expect![[r#"
        [
            "steps:\n  - send: hi\n  - x",
        ]
    "#]]
    .assert_debug_eq(&got);
}

#[test]
fn regex_tokens_only_where_regexes_are_read() {
    let text = "title: /not/\nmocks:\n  - tool: x\n    whenInput: { a: { b: \"/deep/\" } }\nsteps:\n  - send: /no/\n  - reply: { includes: [\"/yes/i\", plain], excludes: /x/ }\n  - raised: { reason: \"/r/\" }\n";
    let got: Vec<&str> =
        regex_tokens(&Own::new(text).doc(&MemFiles::new(), "workflows/w/tests/a.test.yaml", text))
            .iter()
            .map(|r| &text[r.as_usize()])
            .collect();
    expect![[r#"
        [
            "\"/deep/\"",
            "\"/yes/i\"",
            "/x/",
            "\"/r/\"",
        ]
    "#]]
    .assert_debug_eq(&got);
    assert!(
        regex_tokens(&Own::new(text).doc(&MemFiles::new(), "workflows/w/workflow.yaml", text))
            .is_empty()
    );
}

#[test]
fn workspace_symbols_filter_by_query() {
    let fx = fixture(&with_wf(CASES));
    let got: Vec<String> = workspace_symbols(&fx.files, "", "rev")
        .iter()
        .map(|s| {
            format!(
                "{:?} {} in {:?} at {}",
                s.kind, s.name, s.container, s.location.file
            )
        })
        .collect();
    expect![[r#"
        [
            "State review in Some(\"shop\") at workflows/shop/workflow.yaml",
        ]
    "#]]
    .assert_debug_eq(&got);
    let cases: Vec<String> = workspace_symbols(&fx.files, "", "o")
        .iter()
        .filter(|s| s.kind == WorkspaceSymbolKind::Case)
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(cases, ["one", "two"]);
}

// ---- code actions ----

#[test]
fn code_action_near_miss_key() {
    check_code_actions(
        "#- workflows/shop/tests/a.test.yaml\ntitle: x\nsteps:\n  - send: hi\n  - reachedSt$0at: done # keep me\n",
        &[],
        expect![[r#"
            == replace `reachedStat` with `reachedState` (preferred)
            workflows/shop/tests/a.test.yaml:
            -   - reachedStat: done # keep me
            +   - reachedState: done # keep me
            == add the missing `description`
            workflows/shop/tests/a.test.yaml:
            + description: >-
            +   TODO: the scenario driven and what is asserted.
        "#]],
    );
}

#[test]
fn code_action_unknown_state_and_trigger() {
    check_code_actions(
        "#- workflows/shop/tests/a.test.yaml\ntitle: x\ndescription: y\ntrigger: { id: emial$0 }\nsteps:\n  - send: hi\n",
        &[],
        expect![[r#"
            == replace trigger `emial` with `email` (preferred)
            workflows/shop/tests/a.test.yaml:
            - trigger: { id: emial }
            + trigger: { id: email }
        "#]],
    );
    check_code_actions(
        "#- workflows/shop/tests/a.test.yaml\ntitle: x\ndescription: y\nsteps:\n  - send: hi\n  - reachedState: \"revew$0\"\n",
        &[],
        expect![[r#"
            == replace state `revew` with `review` (preferred)
            workflows/shop/tests/a.test.yaml:
            -   - reachedState: "revew"
            +   - reachedState: "review"
        "#]],
    );
}

#[test]
fn code_action_send_above_orphan_assertions_and_missing_title() {
    check_code_actions(
        "#- workflows/shop/tests/refund-approved.test.yaml\n# a comment\ndescription: y\nsteps:\n  - succ$0eeded: true\n  - send: hi\n",
        &[],
        expect![[r#"
            == insert a `send` step before the first assertion (preferred)
            workflows/shop/tests/refund-approved.test.yaml:
            +   - send: "TODO: the user's message"
            == add the missing `title`
            workflows/shop/tests/refund-approved.test.yaml:
            + title: Refund approved
        "#]],
    );
}

#[test]
fn code_action_declares_a_judge_for_grade() {
    check_code_actions(
        "#- workflows/shop/tests/a.test.yaml\ntitle: x\ndescription: y\nsteps:\n  - send: hi\n  - gra$0de: { closedQA: ok?, atLeast: 0.5 }\n",
        &[],
        expect![[r#"
            == declare `tests: { judge: {} }` in workflow.yaml (preferred)
            workflows/shop/workflow.yaml:
            +   judge: {}
        "#]],
    );
    assert_eq!(
        actions::judge_edit("states: {}\ntests: { maxConcurrency: 1 }\n")
            .map(|(r, t)| (r.start, t)),
        Some((37, ", judge: {}".to_owned()))
    );
    assert_eq!(
        actions::judge_edit("states: {}").map(|(r, t)| (r.start, t)),
        Some((10, "\ntests:\n  judge: {}\n".to_owned()))
    );
}

#[test]
fn code_actions_carry_the_diagnostics_fixes() {
    static CODE: wfx_schemas::diagnostics::CodeInfo = wfx_schemas::diagnostics::CodeInfo {
        code: "WFX999",
        slug: "test",
        severity: wfx_schemas::diagnostics::Severity::Error,
        summary: "s",
        section: "§B.2",
        explanation: "e",
        retired: false,
    };
    let path = "workflows/shop/tests/a.test.yaml";
    let d = wfx_schemas::diagnostics::Diagnostic::new(
        &CODE,
        path,
        TextRange::new(39, 43),
        "unknown step `sned`",
    )
    .with_fix("replace `sned` with `send`", TextRange::new(39, 43), "send");
    check_code_actions(
        "#- workflows/shop/tests/a.test.yaml\ntitle: x\ndescription: y\nsteps:\n  - sn$0ed: hi\n",
        &[d],
        expect![[r#"
            == replace `sned` with `send` (preferred)
            workflows/shop/tests/a.test.yaml:
            -   - sned: hi
            +   - send: hi
        "#]],
    );
}

// ---- authoring ----

#[test]
fn new_case_for_a_manual_and_an_event_triggered_workflow() {
    let fx = fixture(&with_wf(
        "#- workflows/events/workflow.yaml\nstates:\n  s:\n    triggers:\n      report_requested:\n        requires: [company, { name: due, type: date }]\n",
    ));
    let edits = new_case(&fx.files, "workflows/events", "reports/weekly-report").unwrap();
    let AuthoringEdit::Create { path, text } = &edits[0] else {
        panic!()
    };
    expect![[r#"
        workflows/events/tests/reports/weekly-report.test.yaml
        title: Weekly report
        description: >-
          TODO: one or two sentences stating the scenario driven and what is asserted.
        trigger:
          id: report_requested
        variables:
          company: "TODO"
          due: "2024-01-31"
        steps:
          - send: "TODO: the user's message"
          - succeeded: true
    "#]]
    .assert_eq(&format!("{path}\n{text}"));
    // The new case is valid for the format's own parser and model.
    let parsed = wfx_schemas::yaml::parse(text);
    assert!(parsed.issues.is_empty());
    let edits = new_case(&fx.files, "workflows/shop", "a").unwrap();
    let AuthoringEdit::Create { text, .. } = &edits[0] else {
        panic!()
    };
    assert!(!text.contains("trigger:"), "{text}");
    assert_eq!(
        new_case(&fx.files, "workflows/shop", "../x"),
        Err("`../x` is not a case name (a path under tests/, without `..`)".into())
    );
    assert!(new_case(&fx.files, "nowhere", "x").is_err());
}

const SESSION: &str = r#"
#- sessions/s-41/artifacts/variables.json
{"sessionId":"s-41","workflow":"shop","variables":{"trigger":{"value":"email","locked":true}}}
#- sessions/s-41/artifacts/trail.json
{"sessionId":"s-41","workflow":"shop","steps":[{"to":"intake","kind":"trigger","reason":"email","ts":100}]}
#- sessions/s-42/artifacts/variables.json
{"sessionId":"s-42","workflow":"shop","variables":{"trigger":{"value":"email","locked":true},"sender":{"value":"a@b.c","locked":true},"order_no":{"value":"ORD-1","locked":true},"case_id":{"value":{"n":9},"locked":false}}}
#- sessions/s-42/artifacts/trail.json
{"sessionId":"s-42","workflow":"shop","steps":[{"to":"intake","kind":"trigger","reason":"email","ts":200}]}
#- sessions/s-43/artifacts/variables.json
{"sessionId":"s-43","workflow":"shop","variables":{"trigger":{"value":"manual","locked":true}}}
#- sessions/s-44/artifacts/variables.json
{"sessionId":"s-44","workflow":"other","variables":{"trigger":{"value":"email","locked":true}}}
"#;

#[test]
fn fill_from_a_past_session() {
    let case = "#- workflows/shop/tests/a.test.yaml\n# keep this comment\ntitle: A\ndescription: B\ntrigger:\n  id: email\nvariables:\n  old: 1 # replaced\nsteps:\n  - send: hi\n  - succeeded: true\n";
    let fx = fixture(&format!("{}{SESSION}{case}", WF));
    let path = "workflows/shop/tests/a.test.yaml";
    let picks: Vec<String> = sessions_for_case(&fx.files, path, &fx.texts[path])
        .into_iter()
        .map(|s| s.dir)
        .collect();
    assert_eq!(picks, ["sessions/s-42", "sessions/s-41"]);
    let edits = fill_from_session(&fx.files, path, "sessions/s-42").unwrap();
    let text_edits: Vec<TextEdit> = edits
        .into_iter()
        .map(|e| match e {
            AuthoringEdit::Edit(t) => t,
            AuthoringEdit::Create { .. } => panic!("no creation expected"),
        })
        .collect();
    expect![[r#"
        # keep this comment
        title: A
        description: B
        trigger:
          id: email
        variables:
          sender: a@b.c
          order_no: ORD-1
        steps:
          - send: hi
          - succeeded: true
          - variables:
              expect:
                case_id: {"n":9}
    "#]]
    .assert_eq(&apply(&fx.texts[path], &text_edits));
    assert_eq!(
        fill_from_session(&fx.files, path, "sessions/s-44"),
        Err("the session ran workflow `other`, not `shop`".into())
    );
}

#[test]
fn fill_from_a_session_into_a_case_without_trigger_or_steps() {
    let case = "#- workflows/shop/tests/a.test.yaml\ntitle: A\ndescription: B\n";
    let fx = fixture(&format!("{}{SESSION}{case}", WF));
    let path = "workflows/shop/tests/a.test.yaml";
    let edits: Vec<TextEdit> = fill_from_session(&fx.files, path, "sessions/s-42")
        .unwrap()
        .into_iter()
        .filter_map(|e| match e {
            AuthoringEdit::Edit(t) => Some(t),
            AuthoringEdit::Create { .. } => None,
        })
        .collect();
    let new = apply(&fx.texts[path], &edits);
    expect![[r#"
        title: A
        description: B
        trigger:
          id: email
        variables:
          sender: a@b.c
          order_no: ORD-1
        steps:
          - send: "TODO: the user's message"
          - variables:
              expect:
                case_id: {"n":9}
    "#]]
    .assert_eq(&new);
    assert!(wfx_schemas::yaml::parse(&new).issues.is_empty());
}

// ---- the example workspace ----

/// The example corpus (tests/corpus/customer-support) as an in-memory workspace.
fn corpus() -> MemFiles {
    fn walk(dir: &std::path::Path, base: &std::path::Path, files: &mut MemFiles) {
        for e in std::fs::read_dir(dir).expect("corpus folder").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, base, files);
            } else {
                let rel = p
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                files.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let base =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/customer-support");
    let mut files = MemFiles::new();
    walk(&base, &base, &mut files);
    assert!(files.paths().count() > 15, "the corpus is missing or empty");
    files
}

#[test]
fn corpus_decide_completion_hover_and_rename() {
    let fs = corpus();
    let path = "workflows/order-lookup/tests/refund-approved.test.yaml";
    let text = String::from_utf8(wfx_schemas::files::FileAccess::read(&fs, path).unwrap()).unwrap();
    // Completion right after `to: ` of the decide step: the parked refund-review's edges.
    let at = text.find("to: refund-closed").unwrap() as u32 + 4;
    let labels: Vec<String> = completion(&Own::new(&text).doc(&fs, path, &text), at)
        .into_iter()
        .map(|i| format!("{} {:?}", i.label, i.detail))
        .collect();
    expect![[r#"
        [
            "refund-closed Some(\"approve from refund-review\")",
            "refund-request Some(\"refine from refund-review\")",
        ]
    "#]]
    .assert_debug_eq(&labels);
    let at = text.find("reachedState: refund-review").unwrap() as u32 + 16;
    let h = hover(&Own::new(&text).doc(&fs, path, &text), at).unwrap();
    assert!(
        h.markdown.starts_with("**state `refund-review`** (human)"),
        "{}",
        h.markdown
    );
    let edits = rename(
        &Own::new(&text).doc(&fs, path, &text),
        at,
        "refund-approval",
    )
    .unwrap();
    let mut per_file: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &edits {
        *per_file.entry(e.file.as_str()).or_default() += 1;
    }
    expect![[r#"
        {
            "workflows/order-lookup/tests/refund-approved.agent.yaml": 1,
            "workflows/order-lookup/tests/refund-approved.test.yaml": 1,
            "workflows/order-lookup/tests/refund-decision-continues.agent.yaml": 1,
            "workflows/order-lookup/tests/refund-decision-continues.test.yaml": 1,
            "workflows/order-lookup/tests/refund-denied.agent.yaml": 1,
            "workflows/order-lookup/tests/refund-denied.test.yaml": 1,
            "workflows/order-lookup/tests/refund-rejection.agent.yaml": 2,
            "workflows/order-lookup/tests/refund-rejection.test.yaml": 1,
            "workflows/order-lookup/workflow.yaml": 2,
        }
    "#]]
    .assert_debug_eq(&per_file);
    let hints = inlay_hints(
        &Own::new(&text).doc(&fs, path, &text),
        TextRange::new(0, text.len() as u32),
    );
    let labels: Vec<&str> = hints.iter().map(|h| h.label.as_str()).collect();
    assert_eq!(labels, ["34/60", "179/200", "approve"]);
}

/// Coverage lenses on `workflow.yaml` (issue 17): per state the cases whose assertions or
/// trigger reach it, per human decision edge the cases that decide it; the edge no case
/// decides is reported for the opt-in hint. The cursor marks the `workflow.yaml` buffer.
#[test]
fn coverage_lenses_count_the_cases_naming_each_state_and_decision() {
    let fx = fixture(&format!("{WF}{CASES}"));
    let path = "workflows/shop/workflow.yaml";
    let text = &fx.texts[path];
    let own = Own::new(text);
    let (lenses, uncovered) = coverage::coverage_lenses(&own.doc(&fx.files, path, text));
    let shown: Vec<String> = lenses
        .iter()
        .map(|l| {
            format!(
                "{} {:?} {}",
                &text[l.range.start as usize..l.range.end as usize],
                l.title,
                l.cases.join(",")
            )
        })
        .collect();
    expect![[r#"
        intake "reached by 2 cases" workflows/shop/tests/one.test.yaml,workflows/shop/tests/two.test.yaml
        review "reached by 2 cases" workflows/shop/tests/one.test.yaml,workflows/shop/tests/two.test.yaml
        done "decided by 1 case" workflows/shop/tests/one.test.yaml
        intake "decided by no case" 
        done "reached by 1 case" workflows/shop/tests/one.test.yaml"#]]
    .assert_eq(&shown.join("\n"));
    assert_eq!(uncovered.len(), 1);
    assert_eq!(
        (uncovered[0].from.as_str(), uncovered[0].to.as_str()),
        ("review", "intake")
    );
    // Any other document has none.
    let case = "workflows/shop/tests/one.test.yaml";
    let ct = &fx.texts[case];
    let own = Own::new(ct);
    assert_eq!(
        coverage::coverage_lenses(&own.doc(&fx.files, case, ct)),
        (vec![], vec![])
    );
}

/// The graph webview's coverage paths: from the cases' assertions (trigger edge of the
/// trigger a case starts with, decision edges decided, states counted by cases) and the
/// union of run paths (states counted by runs, edges de-duplicated and sorted).
#[test]
fn coverage_paths_for_the_graph() {
    let fx = fixture(&format!("{WF}{CASES}"));
    let text = &fx.texts["workflows/shop/workflow.yaml"];
    let wf = wfx_schemas::model::workflow::Workflow::from_node(
        &wfx_schemas::yaml::parse(text).documents[0],
    );
    let dir = wfx_schemas::workspace::WorkflowDir {
        root: String::new(),
        slug: "shop".into(),
    };
    let p = coverage::assertion_coverage_path(&fx.files, &dir, &wf);
    assert!(p.coverage);
    assert_eq!(
        p.reached
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>(),
        ["done=1", "intake=2", "review=2"]
    );
    assert_eq!(
        p.edges,
        [
            ("__start__".to_owned(), "intake".to_owned()),
            ("review".to_owned(), "done".to_owned())
        ]
    );
    let mut a = wfx_schemas::graph::CasePath::default();
    a.reached.insert("intake".into(), 0);
    a.edges.push(("intake".into(), "review".into()));
    let mut b = a.clone();
    b.reached.insert("review".into(), 1);
    b.edges.push(("__start__".into(), "intake".into()));
    let u = coverage::union_path([&a, &b].into_iter());
    assert_eq!(u.reached["intake"], 2);
    assert_eq!(u.reached["review"], 1);
    assert_eq!(
        u.edges,
        [
            ("__start__".to_owned(), "intake".to_owned()),
            ("intake".to_owned(), "review".to_owned())
        ]
    );
}

/// Bounded work (docs/security.md): the editor's near-miss searches share the per-file
/// budget `check` uses (`rules::case::MAX_SUGGEST_WORK`). A 1,000-character unknown state
/// against a workflow of 40,000 states would compare it with every state (40,000
/// candidates, 400 million units); the code action gives up within the budget instead,
/// and a near miss among few states is still suggested.
#[test]
fn code_action_near_miss_search_is_bounded_by_the_check_budget() {
    use wfx_schemas::rules::case::{MAX_SUGGEST_WORK, SUGGEST_CANDIDATE_COST};
    let mut wf = String::from("states:\n  s0:\n    triggers: { manual: }\n");
    for i in 1..40_000 {
        wf.push_str(&format!("  state-{i:05}: {{}}\n"));
    }
    let files = MemFiles::new().with("workflows/big/workflow.yaml", wf.clone());
    let long = "x".repeat(1_000);
    let case =
        format!("title: t\ndescription: d\nsteps:\n  - send: hi\n  - reachedState: {long}\n");
    let path = "workflows/big/tests/a.test.yaml";
    let at = case.find(&long).unwrap() as u32 + 1;
    let own = Own::new(&case);
    analysis::NEAREST_EXAMINED.with(|n| n.set(0));
    let actions = code_actions(&own.doc(&files, path, &case), TextRange::empty(at), &[]);
    let examined = analysis::NEAREST_EXAMINED.with(std::cell::Cell::get);
    // Each candidate costs at least 64 + 1,000 × 11 units.
    let most = MAX_SUGGEST_WORK / (SUGGEST_CANDIDATE_COST + 1_000 * 11) + 2;
    assert!(
        examined > 0 && examined <= most,
        "{examined} candidates examined (bound {most})"
    );
    assert!(
        !actions.iter().any(|a| a.title.starts_with("replace state")),
        "no half-searched suggestion: {:?}",
        actions.iter().map(|a| &a.title).collect::<Vec<_>>()
    );
    // The budget is per request: a near miss in the same workflow is still found.
    let case = "title: t\ndescription: d\nsteps:\n  - send: hi\n  - reachedState: state-0001\n";
    let own = Own::new(case);
    let at = case.find("state-0001").unwrap() as u32 + 1;
    let actions = code_actions(&own.doc(&files, path, case), TextRange::empty(at), &[]);
    assert!(
        actions
            .iter()
            .any(|a| a.title == "replace state `state-0001` with `state-00001`"),
        "{:?}",
        actions.iter().map(|a| &a.title).collect::<Vec<_>>()
    );
}
