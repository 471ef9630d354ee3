//! Code actions: the fixes the diagnostics carry, plus our own minimal edits — a near-miss
//! key → the known key, an unknown state or trigger → the nearest declared one, a `- send:`
//! step above assertions that have no preceding action, a missing `title` / `description`,
//! and `tests: { judge: {} }` in `workflow.yaml` for a `grade` without a judge. Edits never
//! re-serialise YAML, so comments and formatting survive; nothing is offered when the
//! document does not parse or the edit would not be certain.

use wfx_schemas::diagnostics::{Diagnostic, TextEdit};
use wfx_schemas::docs::{self, DocFile};
use wfx_schemas::model::case::{is_action, is_assertion};
use wfx_schemas::text::TextRange;
use wfx_schemas::yaml::{self, Node, Value};

use super::CodeAction;
use super::analysis::{Analysis, DocKind, Hit, Sym, content_range, locate, nearest, symbol_at};

fn overlaps(a: TextRange, b: TextRange) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// See [`super::code_actions`].
pub(crate) fn code_actions(
    an: &Analysis<'_>,
    range: TextRange,
    diagnostics: &[Diagnostic],
) -> Vec<CodeAction> {
    let mut out: Vec<CodeAction> = Vec::new();
    for d in diagnostics
        .iter()
        .filter(|d| d.file == an.path && overlaps(d.range, range))
    {
        for f in &d.fixes {
            out.push(CodeAction {
                title: f.title.clone(),
                edits: f.edits.clone(),
                preferred: d.fixes.len() == 1,
                fixes_code: Some(d.code.code.to_owned()),
            });
        }
    }
    let Some(root) = an.root() else { return out };
    let code_at = |r: TextRange| {
        diagnostics
            .iter()
            .find(|d| d.file == an.path && d.range == r)
            .map(|d| d.code.code.to_owned())
    };
    let mut own = Vec::new();
    near_miss_keys(an, root, range, &code_at, &mut own);
    unknown_symbol(an, root, range, &code_at, &mut own);
    if an.kind == DocKind::Case {
        missing_action(an, root, range, &mut own);
        missing_title(an, root, &mut own);
        grade_without_judge(an, root, range, &mut own);
    }
    for a in own {
        if !out.iter().any(|o| o.edits == a.edits) {
            out.push(a);
        }
    }
    out
}

fn replace(
    an: &Analysis<'_>,
    title: String,
    range: TextRange,
    new_text: &str,
    code: Option<String>,
) -> CodeAction {
    CodeAction {
        title,
        edits: vec![TextEdit {
            file: an.path.to_owned(),
            range,
            new_text: new_text.to_owned(),
        }],
        preferred: true,
        fixes_code: code,
    }
}

/// Keys of documented mappings that are not documented there but close to one that is.
fn near_miss_keys(
    an: &Analysis<'_>,
    root: &Node,
    range: TextRange,
    code_at: &dyn Fn(TextRange) -> Option<String>,
    out: &mut Vec<CodeAction>,
) {
    let file = match an.kind {
        DocKind::Case => DocFile::Case,
        DocKind::Workflow => DocFile::Workflow,
        DocKind::Agent => return,
    };
    let mut todo: Vec<(Vec<String>, &Node)> = vec![(Vec::new(), root)];
    while let Some((path, n)) = todo.pop() {
        if !overlaps(n.range, range) && !n.range.is_empty() && !path.is_empty() {
            continue;
        }
        match &n.value {
            Value::Map(entries) => {
                let segs: Vec<&str> = path.iter().map(String::as_str).collect();
                let known = docs::children(file, &segs);
                for e in entries {
                    let Some(k) = e.key.as_str() else { continue };
                    if !known.is_empty()
                        && overlaps(e.key.range, range)
                        && !known.iter().any(|d| d.key() == k)
                        && let Some(best) = nearest(k, known.iter().map(|d| d.key()))
                    {
                        out.push(replace(
                            an,
                            format!("replace `{k}` with `{best}`"),
                            e.key.range,
                            best,
                            code_at(e.key.range),
                        ));
                    }
                    let mut p = path.clone();
                    p.push(k.to_owned());
                    todo.push((p, &e.value));
                }
            }
            Value::Seq(items) => {
                for i in items {
                    let mut p = path.clone();
                    p.push("-".into());
                    todo.push((p, i));
                }
            }
            _ => {}
        }
    }
}

/// A state or trigger at the range start that the workflow does not declare.
fn unknown_symbol(
    an: &Analysis<'_>,
    root: &Node,
    range: TextRange,
    code_at: &dyn Fn(TextRange) -> Option<String>,
    out: &mut Vec<CodeAction>,
) {
    let Some(wf) = an.workflow() else { return };
    let Some(loc) = locate(root, range.start) else {
        return;
    };
    let Some((sym, node_range)) = symbol_at(an.kind, &loc) else {
        return;
    };
    let (name, candidates): (&str, Vec<&str>) = match &sym {
        Sym::State(s) if wf.state(s).is_none() => {
            (s, wf.states.iter().map(|s| s.slug.value.as_str()).collect())
        }
        Sym::Trigger(t) if wf.trigger(t).is_none() && t != "manual" => {
            let mut ids: Vec<&str> = wf.triggers().map(|t| t.id.value.as_str()).collect();
            if loc.path.first().map(String::as_str) == Some("trigger") {
                ids.push("manual");
            }
            (t, ids)
        }
        _ => return,
    };
    let Some(best) = nearest(name, candidates) else {
        return;
    };
    let node = match loc.hit {
        Hit::Key(e) => &e.key,
        Hit::Value(n) => n,
    };
    let target = content_range(an.text, node).unwrap_or(node_range);
    let what = if matches!(sym, Sym::State(_)) {
        "state"
    } else {
        "trigger"
    };
    out.push(replace(
        an,
        format!("replace {what} `{name}` with `{best}`"),
        target,
        best,
        code_at(node_range).or(code_at(target)),
    ));
}

/// `- send:` above the assertions that come before every action (FORMAT §B.2).
fn missing_action(an: &Analysis<'_>, root: &Node, range: TextRange, out: &mut Vec<CodeAction>) {
    let Some(steps) = root.get_value("steps").and_then(Node::as_seq) else {
        return;
    };
    let key = |s: &Node| {
        s.as_map()
            .and_then(|m| m.first())
            .and_then(|e| e.key.as_str())
            .map(str::to_owned)
    };
    let first_action = steps
        .iter()
        .position(|s| key(s).is_some_and(|k| is_action(&k)))
        .unwrap_or(steps.len());
    let orphans = steps.get(..first_action).unwrap_or(&[]);
    if !orphans
        .iter()
        .any(|s| key(s).is_some_and(|k| is_assertion(&k)) && overlaps(s.range, range))
    {
        return;
    }
    let Some(first) = steps.first() else { return };
    let ls = super::analysis::line_start(an.text, first.range.start);
    let Some(before) = an.text.get(ls as usize..first.range.start as usize) else {
        return;
    };
    // Only the block form `<indent>- <step>` gets the edit.
    let indent_len = before.len() - before.trim_start_matches(' ').len();
    let rest = before.get(indent_len..).unwrap_or("");
    if !(rest.starts_with('-')
        && rest
            .get(1..)
            .is_some_and(|r| !r.is_empty() && r.chars().all(|c| c == ' ')))
    {
        return;
    }
    let indent = " ".repeat(indent_len);
    out.push(CodeAction {
        title: "insert a `send` step before the first assertion".into(),
        edits: vec![TextEdit {
            file: an.path.to_owned(),
            range: TextRange::empty(ls),
            new_text: format!("{indent}- send: \"TODO: the user's message\"\n"),
        }],
        preferred: true,
        fixes_code: None,
    });
}

/// A title from the case file name: `refund-approved.test.yaml` → `Refund approved`.
pub(crate) fn title_from_path(path: &str) -> String {
    let stem = path.rsplit('/').next().unwrap_or(path);
    let stem = stem
        .strip_suffix(".test.yaml")
        .or_else(|| stem.strip_suffix(".test.yml"))
        .unwrap_or(stem);
    let words = stem.replace(['-', '_'], " ");
    let mut chars = words.trim().chars();
    match chars.next() {
        Some(c) => {
            let t: String = c.to_uppercase().chain(chars).collect();
            t.chars().take(60).collect()
        }
        None => "New case".into(),
    }
}

/// Inserts a missing `title` / `description` before the first top-level key.
fn missing_title(an: &Analysis<'_>, root: &Node, out: &mut Vec<CodeAction>) {
    let Some(entries) = root
        .as_map()
        .or(if root.is_null() { Some(&[]) } else { None })
    else {
        return;
    };
    let at = match entries.first() {
        Some(e) => super::analysis::line_start(an.text, e.key.range.start),
        None => u32::try_from(an.text.len()).unwrap_or(0),
    };
    if entries.first().is_some_and(|e| {
        an.text
            .get(at as usize..e.key.range.start as usize)
            .is_some_and(|s| !s.trim().is_empty())
    }) {
        return; // a flow mapping root or a key not at a line start
    }
    let lead = if at > 0
        && !an
            .text
            .get(..at as usize)
            .is_some_and(|s| s.ends_with('\n'))
    {
        "\n"
    } else {
        ""
    };
    if root.get("title").is_none() {
        out.push(CodeAction {
            title: "add the missing `title`".into(),
            edits: vec![TextEdit {
                file: an.path.to_owned(),
                range: TextRange::empty(at),
                new_text: format!(
                    "{lead}title: {}\n",
                    super::analysis::yaml_scalar(&title_from_path(an.path))
                ),
            }],
            preferred: false,
            fixes_code: None,
        });
    }
    if root.get("description").is_none() {
        let at = match root.get("title") {
            Some(t) => {
                let end = t.value.range.end.max(t.key.range.end) as usize;
                an.text
                    .get(end..)
                    .and_then(|r| r.find('\n'))
                    .map_or(an.text.len(), |p| end + p + 1)
            }
            None => at as usize,
        };
        let at = u32::try_from(at).unwrap_or(0);
        let lead = if at > 0
            && !an
                .text
                .get(..at as usize)
                .is_some_and(|s| s.ends_with('\n'))
        {
            "\n"
        } else {
            ""
        };
        out.push(CodeAction {
            title: "add the missing `description`".into(),
            edits: vec![TextEdit {
                file: an.path.to_owned(),
                range: TextRange::empty(at),
                new_text: format!(
                    "{lead}description: >-\n  TODO: the scenario driven and what is asserted.\n"
                ),
            }],
            preferred: false,
            fixes_code: None,
        });
    }
}

/// `tests: { judge: {} }` in workflow.yaml when a `grade` step is in range and no judge is
/// declared (FORMAT §B.6).
fn grade_without_judge(
    an: &Analysis<'_>,
    root: &Node,
    range: TextRange,
    out: &mut Vec<CodeAction>,
) {
    let Some(wf) = an.workflow() else { return };
    if wf.has_judge {
        return;
    }
    let grade_here = root
        .get_value("steps")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .any(|s| {
            s.as_map()
                .and_then(|m| m.first())
                .and_then(|e| e.key.as_str())
                == Some("grade")
                && overlaps(s.range, range)
        });
    if !grade_here {
        return;
    }
    let Some(edit) = judge_edit(an.workflow_text()) else {
        return;
    };
    out.push(CodeAction {
        title: "declare `tests: { judge: {} }` in workflow.yaml".into(),
        edits: vec![TextEdit {
            file: an.spec_path(),
            range: edit.0,
            new_text: edit.1,
        }],
        preferred: true,
        fixes_code: None,
    });
}

/// The edit declaring `judge: {}` under `tests` in a workflow text.
pub(crate) fn judge_edit(text: &str) -> Option<(TextRange, String)> {
    let parsed = yaml::parse(text);
    let root = parsed
        .documents
        .first()
        .filter(|_| !parsed.has_syntax_error())?;
    let Some(tests) = root.get("tests") else {
        let end = u32::try_from(text.len()).ok()?;
        let lead = if text.is_empty() || text.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        return Some((
            TextRange::empty(end),
            format!("{lead}tests:\n  judge: {{}}\n"),
        ));
    };
    let raw = text.get(tests.value.range.as_usize())?;
    match &tests.value.value {
        Value::Map(entries) if raw.starts_with('{') => {
            let close = tests.value.range.end.checked_sub(1)?;
            if entries.is_empty() {
                Some((tests.value.range, "{ judge: {} }".into()))
            } else {
                let last = entries.last()?;
                Some((
                    TextRange::empty(last.value.range.end.max(last.key.range.end).min(close)),
                    ", judge: {}".into(),
                ))
            }
        }
        Value::Map(entries) => {
            let first = entries.first()?;
            let ls = super::analysis::line_start(text, first.key.range.start);
            let indent = text.get(ls as usize..first.key.range.start as usize)?;
            if !indent.chars().all(|c| c == ' ') {
                return None;
            }
            Some((TextRange::empty(ls), format!("{indent}judge: {{}}\n")))
        }
        Value::Null => {
            let after_key = text.get(tests.key.range.end as usize..)?;
            let colon = after_key.find(':')?;
            let at = tests.key.range.end + u32::try_from(colon + 1).ok()?;
            Some((TextRange::empty(at), " { judge: {} }".into()))
        }
        _ => None,
    }
}
