//! Completion: keys not yet present (from the docs table, with snippets), and values from
//! the workflow (states, triggers, human-state edges), the workspace (workflow slugs, skill
//! slugs, hook scripts, fixtures) and the format (enum values, tool names, variable names).
//! The position comes from [`super::context`], so it works on broken text; the workflow
//! comes from [`super::analysis`].

use wfx_schemas::docs::{self, DocFile, KeyDoc, path_matches};
use wfx_schemas::model::case::{Case, StepForm};
use wfx_schemas::model::workflow::StateType;
use wfx_schemas::yaml;

use super::analysis::{
    Analysis, DocKind, SIG_TYPES, TRAIL_KINDS, TRANSITION_TYPES, line_start, yaml_scalar,
};
use super::context::{Context, Slot, context};
use super::{CompletionItem, CompletionKind};

/// Completion items at `offset`; see [`super::completion`].
pub(crate) fn complete(an: &Analysis<'_>, offset: u32) -> Vec<CompletionItem> {
    let Some(cx) = context(an.text, offset) else {
        return Vec::new();
    };
    let segs: Vec<&str> = cx.path.iter().map(String::as_str).collect();
    let mut out = Out {
        cx: &cx,
        items: Vec::new(),
    };
    match (an.kind, cx.slot) {
        (DocKind::Case, Slot::Key) => case_keys(an, &segs, &mut out),
        (DocKind::Case, Slot::Value) => case_values(an, &segs, offset, &mut out),
        (DocKind::Workflow, Slot::Key) => workflow_keys(&segs, &mut out),
        (DocKind::Workflow, Slot::Value) => workflow_values(an, &segs, &mut out),
        (DocKind::Agent, _) => {}
    }
    // After `- ` in a list of scalars the word is a value, not a key.
    if cx.slot == Slot::Key && cx.after_dash && out.items.is_empty() {
        match an.kind {
            DocKind::Case => case_values(an, &segs, offset, &mut out),
            DocKind::Workflow => workflow_values(an, &segs, &mut out),
            DocKind::Agent => {}
        }
    }
    out.items
}

struct Out<'c> {
    cx: &'c Context,
    items: Vec<CompletionItem>,
}

impl Out<'_> {
    fn push(
        &mut self,
        label: &str,
        kind: CompletionKind,
        detail: Option<String>,
        doc: Option<String>,
    ) {
        let mut insert = if self.cx.quoted || self.cx.slot == Slot::Key {
            label.to_owned()
        } else {
            yaml_scalar(label)
        };
        if self.cx.space_before {
            insert.insert(0, ' ');
        }
        let sort_text = format!("{:04}", self.items.len());
        self.items.push(CompletionItem {
            label: label.to_owned(),
            kind,
            detail,
            documentation: doc,
            insert_text: insert,
            is_snippet: false,
            replace: self.cx.word,
            sort_text,
        });
    }

    /// A key item: `key: ` or its snippet, re-indented to the key's column.
    fn key(&mut self, d: &KeyDoc) {
        let (insert, is_snippet) = if self.cx.key_written {
            (d.key().to_owned(), false)
        } else {
            match d.snippet {
                Some(s) => (
                    reindent(
                        s,
                        self.cx.word_col.saturating_sub(self.cx.line_indent) as usize,
                    ),
                    true,
                ),
                None => (format!("{}: ", d.key()), false),
            }
        };
        let sort_text = format!("{:04}", self.items.len());
        self.items.push(CompletionItem {
            label: d.key().to_owned(),
            kind: CompletionKind::Key,
            detail: Some(d.role.label().to_owned()),
            documentation: Some(d.markdown()),
            insert_text: insert,
            is_snippet,
            replace: self.cx.word,
            sort_text,
        });
    }

    fn name_key(&mut self, name: &str, kind: CompletionKind, detail: &str) {
        let sort_text = format!("{:04}", self.items.len());
        self.items.push(CompletionItem {
            label: name.to_owned(),
            kind,
            detail: Some(detail.to_owned()),
            documentation: None,
            insert_text: if self.cx.key_written {
                name.to_owned()
            } else {
                format!("{name}: ")
            },
            is_snippet: false,
            replace: self.cx.word,
            sort_text,
        });
    }
}

/// Indents every continuation line of `snippet` by `extra` spaces: the client applies the
/// cursor line's own indentation (VS Code does), and the key sits `extra` columns further
/// in (after `- `).
fn reindent(snippet: &str, extra: usize) -> String {
    snippet.replace('\n', &format!("\n{}", " ".repeat(extra)))
}

fn keys_from_table(file: DocFile, segs: &[&str], out: &mut Out<'_>) {
    let present = out.cx.siblings.clone();
    for d in docs::children(file, segs) {
        if !present.iter().any(|p| p == d.key()) {
            out.key(d);
        }
    }
}

fn case_keys(an: &Analysis<'_>, segs: &[&str], out: &mut Out<'_>) {
    if path_matches("steps.-", segs) {
        // A step has exactly one key: actions first, then assertions (table order).
        if out.cx.siblings.is_empty() {
            keys_from_table(DocFile::Case, segs, out);
        }
        return;
    }
    if [
        "variables",
        "steps.-.variables.expect|path|locked",
        "steps.-.deliver.variables",
    ]
    .iter()
    .any(|p| path_matches(p, segs))
    {
        let present = out.cx.siblings.clone();
        for (name, why) in an.variable_names() {
            if !present.contains(&name) && name != "trigger" {
                out.name_key(&name, CompletionKind::Variable, why);
            }
        }
        return;
    }
    keys_from_table(DocFile::Case, segs, out);
}

fn workflow_keys(segs: &[&str], out: &mut Out<'_>) {
    keys_from_table(DocFile::Workflow, segs, out);
}

fn states(an: &Analysis<'_>, out: &mut Out<'_>) {
    let Some(wf) = an.workflow() else {
        // A broken workflow.yaml and no good copy: read the slugs off its lines.
        if an.kind == DocKind::Workflow {
            for s in super::analysis::line_states(an.text) {
                out.push(&s, CompletionKind::State, None, None);
            }
        }
        return;
    };
    for s in &wf.states {
        let mut doc = String::new();
        if let Some(sum) = &s.summary {
            doc.push_str(sum);
        }
        if s.kind == StateType::Human {
            doc.push_str(if doc.is_empty() {
                "human state"
            } else {
                "\n\nhuman state"
            });
        }
        out.push(
            &s.slug.value,
            CompletionKind::State,
            s.title.clone(),
            (!doc.is_empty()).then_some(doc),
        );
    }
}

fn triggers(an: &Analysis<'_>, with_manual: bool, out: &mut Out<'_>) {
    let mut seen_manual = false;
    if let Some(wf) = an.workflow() {
        for t in wf.triggers() {
            if out.items.iter().any(|i| i.label == t.id.value) {
                continue;
            }
            seen_manual |= t.id.value == "manual";
            let detail = format!("enters {}", t.state);
            out.push(
                &t.id.value,
                CompletionKind::Trigger,
                Some(detail),
                t.description.clone(),
            );
        }
    }
    if with_manual && !seen_manual {
        out.push(
            "manual",
            CompletionKind::Trigger,
            Some("the default trigger".into()),
            None,
        );
    }
}

fn values(list: &[&str], kind: CompletionKind, out: &mut Out<'_>) {
    for v in list {
        out.push(v, kind, None, None);
    }
}

/// The steps above the cursor's step, from the tree when the text parses, else from the
/// text before the cursor's step (which usually does).
fn steps_above(an: &Analysis<'_>, offset: u32) -> Vec<StepForm> {
    let cx = context(an.text, offset);
    let item_line = cx
        .as_ref()
        .and_then(|c| c.item_lines.first().copied())
        .unwrap_or_else(|| line_start(an.text, offset));
    let owned;
    let case = match an.case() {
        Some(c) => c,
        None => {
            let head = an.text.get(..item_line as usize).unwrap_or("");
            let parsed = yaml::parse(head);
            match parsed.documents.first() {
                Some(root) if !parsed.has_syntax_error() => {
                    owned = Case::from_node(root);
                    &owned
                }
                _ => return Vec::new(),
            }
        }
    };
    case.steps
        .iter()
        .filter(|s| s.range.start < item_line)
        .filter_map(|s| s.form())
        .collect()
}

/// `decide.to`: the edges of human states; only the parked state's when the steps above
/// pin it (`parked: {state: X}`, or the last `reachedState` naming a human state since the
/// last decision).
fn decide_targets(an: &Analysis<'_>, offset: u32, out: &mut Out<'_>) {
    let Some(wf) = an.workflow() else { return };
    let mut pinned: Option<String> = None;
    for f in steps_above(an, offset) {
        match f {
            StepForm::Decide { .. } | StepForm::Deliver { .. } => pinned = None,
            StepForm::Parked { state: Some(s), .. } => pinned = Some(s.value),
            StepForm::ReachedState(s) if an.is_human(&s.value) => pinned = Some(s.value),
            _ => {}
        }
    }
    let from: Vec<_> = match pinned.as_deref().and_then(|p| wf.state(p)) {
        Some(s) => vec![s],
        None => wf
            .states
            .iter()
            .filter(|s| s.kind == StateType::Human)
            .collect(),
    };
    for s in from {
        for t in &s.transitions {
            if out.items.iter().any(|i| i.label == t.to.value) {
                continue;
            }
            let ty = t.kind.as_ref().map_or("edge", |k| k.value.as_str());
            out.push(
                &t.to.value,
                CompletionKind::State,
                Some(format!("{ty} from {}", s.slug.value)),
                t.description.clone(),
            );
        }
    }
}

fn tools(an: &Analysis<'_>, out: &mut Out<'_>) {
    for (name, why) in an.tool_names() {
        out.push(&name, CompletionKind::Tool, Some(why.to_owned()), None);
    }
}

fn case_values(an: &Analysis<'_>, segs: &[&str], offset: u32, out: &mut Out<'_>) {
    let is = |p: &str| path_matches(p, segs);
    if is("trigger.id") || is("steps.-.triggerArrival") {
        triggers(an, true, out);
    } else if is("steps.-.deliver.trigger") || is("steps.-.trail.reason") {
        triggers(an, false, out);
    } else if is("steps.-.decide.to") {
        decide_targets(an, offset, out);
    } else if is("steps.-.reachedState") || is("steps.-.parked.state") || is("steps.-.trail.to") {
        states(an, out);
    } else if is("steps.-.trail.kind") {
        values(TRAIL_KINDS, CompletionKind::Value, out);
    } else if is("steps.-.parked") {
        values(&["true", "decision", "input"], CompletionKind::Value, out);
    } else if is("steps.-.parked.channel") {
        values(&["decision", "input"], CompletionKind::Value, out);
    } else if is("steps.-.ranWorkflow.status") {
        values(&["ok", "error"], CompletionKind::Value, out);
    } else if is("steps.-.succeeded|usedNoTools|noTraversal|raised") {
        values(&["true"], CompletionKind::Value, out);
    } else if is("steps.-.ranWorkflow.workflow") {
        for w in an.workflow_slugs() {
            out.push(&w, CompletionKind::Workflow, None, None);
        }
    } else if is("steps.-.calledTool|notCalledTool|blockedTool.name") || is("mocks.-.tool") {
        tools(an, out);
    } else if is("workspace.*.from") {
        for f in an.fixture_files() {
            out.push(&f, CompletionKind::File, None, None);
        }
    }
}

fn workflow_values(an: &Analysis<'_>, segs: &[&str], out: &mut Out<'_>) {
    let is = |p: &str| path_matches(p, segs);
    if is("states.*.transitions.-.to") || is("states.*.on_error") {
        states(an, out);
    } else if is("states.*.transitions.-.type") {
        values(TRANSITION_TYPES, CompletionKind::Value, out);
    } else if is("states.*.type") {
        values(&["agent", "human"], CompletionKind::Value, out);
    } else if is("states.*.triggers.*.requires|returns.-.type") {
        values(SIG_TYPES, CompletionKind::Value, out);
    } else if is("disabled") || is("settings.prompt_cache.enabled") {
        values(&["true", "false"], CompletionKind::Value, out);
    } else if is("runtime.engine") {
        values(&["archmax-harness"], CompletionKind::Value, out);
    } else if is("states.*.before|after.-?.script") {
        for f in an.hook_files() {
            out.push(&f, CompletionKind::File, None, None);
        }
    } else if is("skills.allow_always|forbid_always.-") || is("states.*.skills.allow|forbid.-") {
        for s in an.skill_slugs() {
            out.push(&s, CompletionKind::Skill, None, None);
        }
    } else if is("tools.allow_always|forbid_always.-")
        || is("states.*.tools.allow|forbid.-")
        || is("tools.allow_always|forbid_always.-.tool")
        || is("states.*.tools.allow|forbid.-.tool")
    {
        tools(an, out);
    } else if is("states.*.requires.-") || is("states.*.triggers.*.requires|returns.-") {
        for (name, why) in an.variable_names() {
            if name != "trigger" && name != "title" {
                out.push(&name, CompletionKind::Variable, Some(why.to_owned()), None);
            }
        }
    }
}
