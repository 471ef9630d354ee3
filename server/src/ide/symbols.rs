//! Outline and decorations: inlay hints (length budgets, decision edge types), document
//! symbols, folding ranges, workspace symbols and regex token ranges. Tree based: a
//! document that does not parse gets none (folding falls back to indentation).

use wfx_schemas::check::load_workflow;
use wfx_schemas::files::FileAccess;
use wfx_schemas::jsregex;
use wfx_schemas::model::case::{Case, StepForm};
use wfx_schemas::model::workflow::StateType;
use wfx_schemas::text::{TextRange, collapse_whitespace, collapsed_utf16_len};
use wfx_schemas::workspace::{FileKind, case_id, classify, discover_cases, discover_workflows};
use wfx_schemas::yaml::{self, Node, Parsed, Value};

use super::analysis::Analysis;
use super::{InlayHint, Location, Symbol, WorkspaceSymbol, WorkspaceSymbolKind};

/// Title budget in UTF-16 code units after collapsing whitespace (FORMAT §B.1).
pub(crate) const TITLE_BUDGET: usize = 60;
/// Description budget (FORMAT §B.1).
pub(crate) const DESCRIPTION_BUDGET: usize = 200;

/// The human state a `decide` at step `index` decides: pinned by `parked.state` or the last
/// `reachedState` naming a human state since the last decision; else the only human state
/// with an edge to `to`.
pub(crate) fn decided_state(
    an: &Analysis<'_>,
    case: &Case,
    index: usize,
    to: &str,
) -> Option<String> {
    let wf = an.workflow()?;
    let mut pinned: Option<String> = None;
    for s in case.steps.iter().take(index) {
        match s.form() {
            Some(StepForm::Decide { .. } | StepForm::Deliver { .. }) => pinned = None,
            Some(StepForm::Parked {
                state: Some(st), ..
            }) => pinned = Some(st.value),
            Some(StepForm::ReachedState(st)) if an.is_human(&st.value) => pinned = Some(st.value),
            _ => {}
        }
    }
    if pinned.is_some() {
        return pinned;
    }
    let mut from = wf
        .states
        .iter()
        .filter(|s| s.kind == StateType::Human && s.transitions.iter().any(|t| t.to.value == to));
    let first = from.next()?;
    from.next().is_none().then(|| first.slug.value.clone())
}

/// See [`super::inlay_hints`].
pub(crate) fn inlay_hints(an: &Analysis<'_>, range: TextRange) -> Vec<InlayHint> {
    let mut out = Vec::new();
    let Some(case) = an.case() else { return out };
    for (spanned, budget, key) in [
        (&case.title, TITLE_BUDGET, "title"),
        (&case.description, DESCRIPTION_BUDGET, "description"),
    ] {
        if let Some(s) = spanned {
            let len = collapsed_utf16_len(&s.value);
            out.push(InlayHint {
                offset: super::analysis::tight(an.text, s.range).end,
                label: format!("{len}/{budget}"),
                tooltip: Some(format!(
                    "`{key}`: {len} of at most {budget} UTF-16 code units once whitespace is collapsed ({}#case-{key})",
                    wfx_schemas::docs::REFERENCE_PAGE
                )),
            });
        }
    }
    for step in &case.steps {
        let Some(StepForm::Decide { to, .. }) = step.form() else {
            continue;
        };
        let Some(from) = decided_state(an, case, step.index, &to.value) else {
            continue;
        };
        let Some(st) = an.workflow().and_then(|w| w.state(&from)) else {
            continue;
        };
        let Some(t) = st.transitions.iter().find(|t| t.to.value == to.value) else {
            continue;
        };
        let Some(kind) = &t.kind else { continue };
        out.push(InlayHint {
            offset: super::analysis::tight(an.text, to.range).end,
            label: kind.value.clone(),
            tooltip: Some(format!(
                "the `{}` edge of human state `{from}` ({}#workflow-states-name-transitions-type)",
                kind.value,
                wfx_schemas::docs::REFERENCE_PAGE
            )),
        });
    }
    out.retain(|h| range.contains_inclusive(h.offset));
    out.sort_by_key(|h| h.offset);
    out
}

fn short(s: &str, max: usize) -> String {
    let s = collapse_whitespace(s);
    if s.chars().count() <= max {
        return s;
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}

fn step_name(key: &str, v: &Node) -> String {
    match (&v.value, key) {
        (Value::Str(s, _), _) => format!("{key}: {}", short(s, 40)),
        (Value::Map(_), "decide") => format!(
            "decide → {}",
            v.get_value("to").and_then(Node::as_str).unwrap_or("?")
        ),
        (Value::Map(_), "deliver") => format!(
            "deliver {}",
            v.get_value("trigger").and_then(Node::as_str).unwrap_or("?")
        ),
        (Value::Map(m), _) => {
            let keys: Vec<&str> = m.iter().filter_map(|e| e.key.as_str()).collect();
            if keys.is_empty() {
                key.to_owned()
            } else {
                format!("{key} {{ {} }}", keys.join(", "))
            }
        }
        _ => match v.scalar_text() {
            Some(t) => format!("{key}: {t}"),
            None => key.to_owned(),
        },
    }
}

/// See [`super::document_symbols`].
pub(crate) fn document_symbols(path: &str, parsed: &Parsed) -> Vec<Symbol> {
    let Some(root) = parsed
        .documents
        .first()
        .filter(|_| !parsed.has_syntax_error())
    else {
        return Vec::new();
    };
    match classify(path) {
        FileKind::Case(_) => case_symbols(root),
        FileKind::Workflow(_) => workflow_symbols(root),
        _ => Vec::new(),
    }
}

/// See [`super::outline`].
pub(crate) fn outline(path: &str, parsed: &Parsed) -> Vec<Symbol> {
    let Some(root) = parsed
        .documents
        .first()
        .filter(|_| !parsed.has_syntax_error())
    else {
        return Vec::new();
    };
    match classify(path) {
        FileKind::Case(_) => case_symbols(root),
        FileKind::Workflow(_) => {
            let mut out = Vec::new();
            for e in root.as_map().unwrap_or(&[]) {
                let Some(key) = e.key.scalar_text() else {
                    continue;
                };
                let children = if key == "states" {
                    workflow_symbols(root)
                } else {
                    key_symbols(&e.value)
                };
                out.push(Symbol {
                    name: key.into_owned(),
                    detail: value_detail(&e.value),
                    range: e.key.range.cover(e.value.range),
                    selection: e.key.range,
                    children,
                });
            }
            out
        }
        _ => Vec::new(),
    }
}

/// A scalar value, shortened, as a symbol's detail (`None` for a null or a collection).
fn value_detail(v: &Node) -> Option<String> {
    if matches!(v.value, Value::Null) {
        return None;
    }
    v.scalar_text().map(|t| short(&t, 60))
}

/// The keys of a mapping value, one level deep, with their scalar values as detail.
fn key_symbols(v: &Node) -> Vec<Symbol> {
    v.as_map()
        .unwrap_or(&[])
        .iter()
        .filter_map(|e| {
            Some(Symbol {
                name: e.key.scalar_text()?.into_owned(),
                detail: value_detail(&e.value),
                range: e.key.range.cover(e.value.range),
                selection: e.key.range,
                children: Vec::new(),
            })
        })
        .collect()
}

fn case_symbols(root: &Node) -> Vec<Symbol> {
    let mut out = Vec::new();
    if let Some(e) = root.get("title") {
        out.push(Symbol {
            name: e
                .value
                .as_str()
                .map_or_else(|| "title".into(), |t| short(t, 60)),
            detail: Some("title".into()),
            range: e.key.range.cover(e.value.range),
            selection: e.value.range,
            children: Vec::new(),
        });
    }
    for step in root
        .get_value("steps")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
    {
        let Some([e]) = step.as_map() else { continue };
        let Some(key) = e.key.as_str() else { continue };
        let sym = Symbol {
            name: step_name(key, &e.value),
            detail: Some(
                if wfx_schemas::model::case::is_action(key) {
                    "action"
                } else {
                    "assertion"
                }
                .into(),
            ),
            range: step.range,
            selection: e.key.range,
            children: Vec::new(),
        };
        let nest = !wfx_schemas::model::case::is_action(key);
        match out.last_mut() {
            Some(action) if nest && action.detail.as_deref() == Some("action") => {
                action.range = action.range.cover(sym.range);
                action.children.push(sym);
            }
            _ => out.push(sym),
        }
    }
    out
}

fn workflow_symbols(root: &Node) -> Vec<Symbol> {
    let mut out = Vec::new();
    for st in root
        .get_value("states")
        .and_then(Node::as_map)
        .unwrap_or(&[])
    {
        let Some(slug) = st.key.as_str() else {
            continue;
        };
        let mut children = Vec::new();
        for t in st
            .value
            .get_value("triggers")
            .and_then(Node::as_map)
            .unwrap_or(&[])
        {
            children.push(Symbol {
                name: t
                    .key
                    .scalar_text()
                    .map(|s| s.into_owned())
                    .unwrap_or_default(),
                detail: Some("trigger".into()),
                range: t.key.range.cover(t.value.range),
                selection: t.key.range,
                children: Vec::new(),
            });
        }
        for t in st
            .value
            .get_value("transitions")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            let Some(to) = t.get_value("to") else {
                continue;
            };
            children.push(Symbol {
                name: format!("→ {}", to.as_str().unwrap_or("?")),
                detail: t
                    .get_value("type")
                    .and_then(Node::as_str)
                    .map(str::to_owned)
                    .or(Some("transition".into())),
                range: t.range,
                selection: to.range,
                children: Vec::new(),
            });
        }
        out.push(Symbol {
            name: slug.to_owned(),
            detail: st
                .value
                .get_value("title")
                .and_then(Node::as_str)
                .map(str::to_owned),
            range: st.key.range.cover(st.value.range),
            selection: st.key.range,
            children,
        });
    }
    out
}

/// See [`super::folding_ranges`]: every collection value and block scalar spanning more
/// than one line, from its key; indentation blocks when the text does not parse.
pub(crate) fn folding_ranges(text: &str, parsed: &Parsed) -> Vec<TextRange> {
    let mut out = Vec::new();
    let multiline = |r: TextRange| {
        text.get(r.as_usize())
            .is_some_and(|s| s.trim_end().contains('\n'))
    };
    match parsed
        .documents
        .first()
        .filter(|_| !parsed.has_syntax_error())
    {
        Some(root) => {
            let mut todo = vec![root];
            while let Some(n) = todo.pop() {
                match &n.value {
                    Value::Map(entries) => {
                        for e in entries {
                            let r = e.key.range.cover(e.value.range);
                            if multiline(r) {
                                out.push(TextRange::new(r.start, trim_end(text, r)));
                            }
                            todo.push(&e.value);
                        }
                    }
                    Value::Seq(items) => {
                        for i in items {
                            if multiline(i.range) && i.as_map().is_some_and(|m| m.len() > 1) {
                                out.push(TextRange::new(i.range.start, trim_end(text, i.range)));
                            }
                            todo.push(i);
                        }
                    }
                    _ => {}
                }
            }
        }
        None => out = indent_folds(text),
    }
    out.sort();
    out.dedup();
    out
}

fn trim_end(text: &str, r: TextRange) -> u32 {
    let s = text.get(r.as_usize()).unwrap_or("");
    r.start + u32::try_from(s.trim_end().len()).unwrap_or(0)
}

fn indent_folds(text: &str) -> Vec<TextRange> {
    let mut out = Vec::new();
    let mut open: Vec<(usize, u32)> = Vec::new(); // (indent, start offset)
    let mut last_end = 0u32;
    let mut offset = 0u32;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end();
        let len = u32::try_from(line.len()).unwrap_or(0);
        if !body.trim().is_empty() && !body.trim_start().starts_with('#') {
            let indent = body.len() - body.trim_start().len();
            while open.last().is_some_and(|(i, _)| *i >= indent) {
                if let Some((_, s)) = open.pop()
                    && text
                        .get(s as usize..last_end as usize)
                        .is_some_and(|t| t.contains('\n'))
                {
                    out.push(TextRange::new(s, last_end));
                }
            }
            open.push((indent, offset));
            last_end = offset + u32::try_from(body.len()).unwrap_or(0);
        }
        offset += len;
    }
    while let Some((_, s)) = open.pop() {
        if text
            .get(s as usize..last_end as usize)
            .is_some_and(|t| t.contains('\n'))
        {
            out.push(TextRange::new(s, last_end));
        }
    }
    out
}

/// See [`super::regex_tokens`]: strings of regex shape where the case reads regexes
/// (reply tokens, `raised.reason`, tool `input` and mock `whenInput` at any depth).
pub(crate) fn regex_tokens(path: &str, text: &str, parsed: &Parsed) -> Vec<TextRange> {
    if !matches!(classify(path), FileKind::Case(_)) {
        return Vec::new();
    }
    let Some(root) = parsed
        .documents
        .first()
        .filter(|_| !parsed.has_syntax_error())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut strings = |n: &Node| {
        let mut todo = vec![n];
        while let Some(n) = todo.pop() {
            match &n.value {
                Value::Str(s, _) if jsregex::regex_token(s).is_some() => {
                    out.push(super::analysis::tight(text, n.range))
                }
                Value::Seq(items) => todo.extend(items.iter()),
                Value::Map(entries) => todo.extend(entries.iter().map(|e| &e.value)),
                _ => {}
            }
        }
    };
    for m in root
        .get_value("mocks")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
    {
        m.get_value("whenInput").into_iter().for_each(&mut strings);
    }
    for step in root
        .get_value("steps")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
    {
        let Some([e]) = step.as_map() else { continue };
        match e.key.as_str().unwrap_or("") {
            "reply" => ["includes", "excludes"]
                .iter()
                .filter_map(|k| e.value.get_value(k))
                .for_each(&mut strings),
            "raised" => e
                .value
                .get_value("reason")
                .into_iter()
                .for_each(&mut strings),
            "calledTool" | "notCalledTool" | "blockedTool" => e
                .value
                .get_value("input")
                .into_iter()
                .for_each(&mut strings),
            _ => {}
        }
    }
    out.sort();
    out
}

/// True when `query` matches `name` as a case-insensitive subsequence.
fn fuzzy(query: &str, name: &str) -> bool {
    let mut chars = name.chars().flat_map(char::to_lowercase);
    query
        .chars()
        .flat_map(char::to_lowercase)
        .all(|q| chars.any(|c| c == q))
}

/// See [`super::workspace_symbols`].
pub(crate) fn workspace_symbols(
    fs: &dyn FileAccess,
    root: &str,
    query: &str,
) -> Vec<WorkspaceSymbol> {
    let mut out = Vec::new();
    for dir in discover_workflows(fs, root) {
        if let Some(info) = load_workflow(fs, &dir)
            && let Some(wf) = &info.model
        {
            for s in &wf.states {
                out.push(WorkspaceSymbol {
                    name: s.slug.value.clone(),
                    kind: WorkspaceSymbolKind::State,
                    container: Some(dir.slug.clone()),
                    location: Location {
                        file: info.path.clone(),
                        range: s.slug.range,
                    },
                });
                for t in &s.triggers {
                    out.push(WorkspaceSymbol {
                        name: t.id.value.clone(),
                        kind: WorkspaceSymbolKind::Trigger,
                        container: Some(format!("{}/{}", dir.slug, s.slug.value)),
                        location: Location {
                            file: info.path.clone(),
                            range: t.id.range,
                        },
                    });
                }
            }
        }
        let tests = dir.tests_dir();
        for c in discover_cases(fs, &dir) {
            let range = fs
                .read_text(&c)
                .ok()
                .and_then(|t| {
                    let p = yaml::parse(&t);
                    p.documents
                        .first()
                        .and_then(|r| r.get("title"))
                        .map(|e| e.value.range)
                })
                .unwrap_or_default();
            out.push(WorkspaceSymbol {
                name: case_id(&tests, &c),
                kind: WorkspaceSymbolKind::Case,
                container: Some(dir.slug.clone()),
                location: Location { file: c, range },
            });
        }
    }
    out.retain(|s| fuzzy(query, &s.name));
    out
}
