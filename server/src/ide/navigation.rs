//! Navigation: go to definition (state slug / trigger id → its declaration in
//! `workflow.yaml`, `from:` → the fixture, hook `script:` → the script, `ranWorkflow.workflow`
//! → that workflow), find references and rename of states and triggers across
//! `workflow.yaml`, every case and every agent script of the workflow (FORMAT §A.2, §A.5,
//! §B.2, §B.8; an agent script names a state as an `archmax_advance` target, §E.5), and
//! references of tools (governance entries, mocks, tool assertions, agent-script calls;
//! FORMAT §A.3, §B.2, §B.9). A state rename also reaches the workflow's cassettes
//! (`super::cassette`, docs/cassettes.md "Renaming a state").

use wfx_schemas::cassette;
use wfx_schemas::diagnostics::TextEdit;
use wfx_schemas::docs::path_matches;
use wfx_schemas::files::join;
use wfx_schemas::text::TextRange;
use wfx_schemas::workspace::{discover_agent_scripts, discover_cases, discover_cassettes};
use wfx_schemas::yaml;

use super::Location;
use super::analysis::{
    Analysis, DocKind, Hit, Sym, content_range, is_slug, locate, occurrences, symbol_at,
};

/// The symbol under the cursor and its token range (tree only).
fn symbol(an: &Analysis<'_>, offset: u32) -> Option<(Sym, TextRange)> {
    let root = an.root()?;
    let loc = locate(root, offset)?;
    let (sym, range) = symbol_at(an.kind, &loc)?;
    Some((sym, range))
}

/// The declaration of a symbol in the workflow.
fn declaration(an: &Analysis<'_>, sym: &Sym) -> Option<Location> {
    let wf = an.workflow()?;
    let range = match sym {
        Sym::State(s) => wf.state(s)?.slug.range,
        Sym::Trigger(id) => wf.trigger(id)?.id.range,
        Sym::Tool(_) => return None,
    };
    Some(Location {
        file: an.spec_path(),
        range,
    })
}

/// Normalizes a `from:` path the way the reference does (FORMAT §B.8); `None` when it
/// escapes `tests/` or is absolute.
fn normalize_fixture(from: &str) -> Option<String> {
    if from.starts_with('/') {
        return None;
    }
    let mut segs = Vec::new();
    for s in from.split('/') {
        match s {
            "" | "." => {}
            ".." => return None,
            s => segs.push(s),
        }
    }
    (!segs.is_empty()).then(|| segs.join("/"))
}

/// See [`super::goto_definition`].
pub(crate) fn definition(an: &Analysis<'_>, offset: u32) -> Vec<Location> {
    if let Some((sym, _)) = symbol(an, offset) {
        return declaration(an, &sym).into_iter().collect();
    }
    let Some(root) = an.root() else {
        return Vec::new();
    };
    let Some(loc) = locate(root, offset) else {
        return Vec::new();
    };
    let Hit::Value(n) = loc.hit else {
        return Vec::new();
    };
    let Some(s) = n.as_str() else {
        return Vec::new();
    };
    let segs = loc.segs();
    let target = match an.kind {
        DocKind::Case if path_matches("workspace.*.from", &segs) => {
            normalize_fixture(s).map(|p| join(&an.dir.tests_dir(), &p))
        }
        DocKind::Case if path_matches("steps.-.ranWorkflow.workflow", &segs) => {
            Some(join(&an.dir.root, &format!("workflows/{s}/workflow.yaml")))
        }
        DocKind::Workflow if path_matches("states.*.before|after.-?.script", &segs) => {
            (!s.split('/').any(|p| p == "..")).then(|| join(&an.dir.dir(), s))
        }
        _ => None,
    };
    target
        .filter(|p| an.fs.is_file(p))
        .map(|file| Location {
            file,
            range: TextRange::empty(0),
        })
        .into_iter()
        .collect()
}

/// Every document of the workflow, as (path, kind, text): `workflow.yaml`, the cases, then
/// the agent scripts, the current buffer taking the place of its file.
fn documents(an: &Analysis<'_>) -> Vec<(String, DocKind, String)> {
    let mut out = Vec::new();
    let spec = an.spec_path();
    let own = |p: &str| -> Option<String> { (p == an.path).then(|| an.text.to_owned()) };
    if let Some(t) = own(&spec).or_else(|| an.fs.read_text(&spec).ok()) {
        out.push((spec, DocKind::Workflow, t));
    }
    for c in discover_cases(an.fs, &an.dir) {
        if let Some(t) = own(&c).or_else(|| an.fs.read_text(&c).ok()) {
            out.push((c, DocKind::Case, t));
        }
    }
    for a in discover_agent_scripts(an.fs, &an.dir) {
        if let Some(t) = own(&a).or_else(|| an.fs.read_text(&a).ok()) {
            out.push((a, DocKind::Agent, t));
        }
    }
    if an.kind != DocKind::Workflow && !out.iter().any(|(p, _, _)| p == an.path) {
        out.push((an.path.to_owned(), an.kind, an.text.to_owned()));
    }
    out
}

/// All occurrences of `sym` as locations; `Err(path)` names a document that does not parse.
fn all_occurrences(an: &Analysis<'_>, sym: &Sym) -> Result<Vec<Location>, String> {
    let mut out = Vec::new();
    for (path, kind, text) in documents(an) {
        let parsed = yaml::parse(&text);
        let root = match parsed.documents.first() {
            Some(r) if !parsed.has_syntax_error() => r,
            _ if parsed.has_syntax_error() => return Err(path),
            _ => continue,
        };
        for range in occurrences(kind, &text, root, sym) {
            out.push(Location {
                file: path.clone(),
                range,
            });
        }
    }
    Ok(out)
}

/// See [`super::references`]. Documents that do not parse are skipped.
pub(crate) fn references(
    an: &Analysis<'_>,
    offset: u32,
    include_declaration: bool,
) -> Vec<Location> {
    let Some((sym, _)) = symbol(an, offset) else {
        return Vec::new();
    };
    let decl = declaration(an, &sym);
    let mut out = Vec::new();
    for (path, kind, text) in documents(an) {
        let parsed = yaml::parse(&text);
        let Some(root) = parsed
            .documents
            .first()
            .filter(|_| !parsed.has_syntax_error())
        else {
            continue;
        };
        for range in occurrences(kind, &text, root, &sym) {
            let loc = Location {
                file: path.clone(),
                range,
            };
            let is_decl = decl.as_ref().is_some_and(|d| {
                d.file == loc.file && d.range.start <= range.start && range.end <= d.range.end
            });
            if include_declaration || !is_decl {
                out.push(loc);
            }
        }
    }
    out
}

/// See [`super::document_highlights`].
pub(crate) fn highlights(an: &Analysis<'_>, offset: u32) -> Vec<super::Highlight> {
    let Some(root) = an.root() else {
        return Vec::new();
    };
    let Some((sym, _)) = symbol(an, offset) else {
        return Vec::new();
    };
    let decl = declaration(an, &sym).filter(|d| d.file == an.path);
    occurrences(an.kind, an.text, root, &sym)
        .into_iter()
        .map(|range| super::Highlight {
            range,
            write: decl
                .as_ref()
                .is_some_and(|d| d.range.start <= range.start && range.end <= d.range.end),
        })
        .collect()
}

/// See [`super::prepare_rename`].
pub(crate) fn prepare(an: &Analysis<'_>, offset: u32) -> Result<(Sym, TextRange), String> {
    let Some(root) = an.root() else {
        return Err("the document does not parse".into());
    };
    let loc = locate(root, offset).ok_or("nothing to rename here")?;
    let (sym, range) =
        symbol_at(an.kind, &loc).ok_or("only a state slug or a trigger id can be renamed")?;
    if let Sym::Tool(t) = &sym {
        return Err(format!(
            "tool `{t}` is named by the host, not declared in workflow.yaml, so it cannot be renamed here (find its references instead)"
        ));
    }
    let node_text = match loc.hit {
        Hit::Key(e) => &e.key,
        Hit::Value(n) => n,
    };
    let range =
        content_range(an.text, node_text).unwrap_or_else(|| super::analysis::tight(an.text, range));
    if declaration(an, &sym).is_none() {
        return Err(match &sym {
            Sym::State(s) => format!("state `{s}` is not declared in workflow.yaml"),
            Sym::Trigger(t) if t == "manual" => {
                "`manual` is the reserved default trigger id".into()
            }
            Sym::Trigger(t) => format!("trigger `{t}` is not declared in workflow.yaml"),
            Sym::Tool(t) => format!("tool `{t}` cannot be renamed"),
        });
    }
    if matches!(&sym, Sym::Trigger(t) if t == "manual") {
        return Err("`manual` is the reserved default trigger id".into());
    }
    Ok((sym, range))
}

/// See [`super::rename`].
pub(crate) fn rename(
    an: &Analysis<'_>,
    offset: u32,
    new_name: &str,
) -> Result<Vec<TextEdit>, String> {
    let (sym, _) = prepare(an, offset)?;
    let wf = an.workflow().ok_or("workflow.yaml does not parse")?;
    match &sym {
        Sym::State(_) => {
            if !is_slug(new_name) {
                return Err(format!(
                    "`{new_name}` is not a state slug (lowercase letters and digits in dash-separated words)"
                ));
            }
            if wf.state(new_name).is_some() {
                return Err(format!("a state `{new_name}` already exists"));
            }
        }
        Sym::Trigger(_) => {
            if new_name.trim().is_empty() {
                return Err("a trigger id must not be empty".into());
            }
            if wf.trigger(new_name).is_some() {
                return Err(format!("a trigger `{new_name}` already exists"));
            }
        }
        Sym::Tool(t) => return Err(format!("tool `{t}` cannot be renamed")),
    }
    let occ =
        all_occurrences(an, &sym).map_err(|p| format!("cannot rename: {p} does not parse"))?;
    let replacement = super::analysis::yaml_scalar(new_name);
    let mut edits: Vec<TextEdit> = Vec::new();
    for loc in occ {
        // A content range (inside quotes) takes the raw name; a whole-node range a scalar.
        let text = documents_text(an, &loc.file);
        let raw = text
            .as_deref()
            .and_then(|t| t.get(loc.range.as_usize()))
            .unwrap_or("");
        let new_text = if raw == sym.name() {
            new_name.to_owned()
        } else {
            replacement.clone()
        };
        edits.push(TextEdit {
            file: loc.file,
            range: loc.range,
            new_text,
        });
    }
    if let Sym::State(old) = &sym {
        edits.extend(cassette_edits(an, old, new_name)?);
    }
    edits.sort_by(|a, b| (&a.file, a.range.start).cmp(&(&b.file, b.range.start)));
    Ok(edits)
}

/// The edits renaming state `old` in every cassette of the workflow
/// ([`super::cassette::rename_state`]: interaction states, `archmax_advance` targets and
/// their results; never recorded prompts). Errors name a cassette that cannot be read
/// (over [`cassette::MAX_BYTES`]) or is not valid.
fn cassette_edits(an: &Analysis<'_>, old: &str, new: &str) -> Result<Vec<TextEdit>, String> {
    let mut out = Vec::new();
    for path in discover_cassettes(an.fs, &an.dir) {
        let text = if path == an.path {
            an.text.to_owned()
        } else {
            an.fs
                .read_text_max(&path, cassette::MAX_BYTES as u64)
                .map_err(|e| format!("cannot rename: cassette {path} cannot be read: {e}"))?
        };
        let edits = super::cassette::rename_state(&path, &text, old, new).map_err(|e| {
            format!(
                "cannot rename: cassette {path} is not valid ({e}); fix, re-record or delete it"
            )
        })?;
        out.extend(edits);
    }
    Ok(out)
}

fn documents_text(an: &Analysis<'_>, path: &str) -> Option<String> {
    if path == an.path {
        Some(an.text.to_owned())
    } else {
        an.fs.read_text(path).ok()
    }
}
