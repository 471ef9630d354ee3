//! Authoring commands as pure functions: "New case" (a valid case for a workflow, seeded
//! with the trigger and required variables of an event-triggered workflow) and "Fill from a
//! past session" (the case's `trigger` and `variables` rewritten from a recorded session's
//! `artifacts/variables.json` and `trail.json`, FORMAT §E.10, mapped as testing-workflows.md
//! "Authoring a case from a real session" says: the recorded `trigger` becomes `trigger.id`,
//! other locked entries become `variables:`, unlocked ones a `variables` assertion).
//! Results are file creations or minimal text edits; the LSP layer applies them.

use serde_json::Value as Json;
use wfx_schemas::check::load_workflow;
use wfx_schemas::diagnostics::TextEdit;
use wfx_schemas::files::{FileAccess, join};
use wfx_schemas::model::workflow::{SigEntry, Workflow};
use wfx_schemas::text::TextRange;
use wfx_schemas::workspace::{FileKind, WorkflowDir, classify};
use wfx_schemas::yaml::{self, Entry, Node};

use super::actions::title_from_path;
use super::analysis::{line_start, yaml_scalar};

/// One change an authoring command makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthoringEdit {
    /// Create a new file (workspace-relative path) with this text.
    Create {
        /// Workspace-relative path.
        path: String,
        /// The whole file.
        text: String,
    },
    /// Edit an existing file (byte offsets of its current text).
    Edit(TextEdit),
}

/// A recorded session offered by the "Fill from a past session" quick pick.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionInfo {
    /// The session id (its folder name).
    pub id: String,
    /// Workspace-relative session folder (`sessions/<id>`).
    pub dir: String,
    /// The trigger the session recorded (`manual` when none).
    pub trigger: String,
    /// The latest trail timestamp (epoch milliseconds), if the trail has one.
    pub last_ts: Option<f64>,
}

fn workflow_of(
    fs: &dyn FileAccess,
    workflow_dir: &str,
) -> Result<(WorkflowDir, Option<Workflow>), String> {
    let spec = join(workflow_dir, "workflow.yaml");
    let FileKind::Workflow(dir) = classify(&spec) else {
        return Err(format!(
            "`{workflow_dir}` is not a workflow folder (workflows/<slug>)"
        ));
    };
    let info = load_workflow(fs, &dir).ok_or_else(|| format!("{spec} does not exist"))?;
    Ok((dir, info.model))
}

fn placeholder(e: &SigEntry) -> &'static str {
    match e.ty.as_deref() {
        Some("integer" | "number") => "0",
        Some("boolean") => "false",
        Some("date") => "\"2024-01-31\"",
        Some("date-time") => "\"2024-01-31T09:00:00Z\"",
        Some("object") => "{}",
        Some("array") => "[]",
        _ => "\"TODO\"",
    }
}

/// "New case": the text of `<tests>/<name>.test.yaml` for the workflow at `workflow_dir`
/// (workspace-relative, e.g. `workflows/order-lookup`). The case has a title (from the
/// name), a description placeholder and a first `send`; for a workflow with no `manual`
/// trigger it seeds `trigger:` with the first declared trigger, and `variables:` with the
/// names that trigger `requires` (typed placeholders). Errors: not a workflow folder, a bad
/// name (empty, `..`, absolute), or an existing file.
pub fn new_case(
    fs: &dyn FileAccess,
    workflow_dir: &str,
    name: &str,
) -> Result<Vec<AuthoringEdit>, String> {
    let (dir, wf) = workflow_of(fs, workflow_dir)?;
    let name = name.trim();
    let name = name
        .strip_suffix(".test.yaml")
        .or_else(|| name.strip_suffix(".test.yml"))
        .unwrap_or(name);
    if name.is_empty()
        || name.starts_with('/')
        || name
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
        || name.contains('\\')
    {
        return Err(format!(
            "`{name}` is not a case name (a path under tests/, without `..`)"
        ));
    }
    let path = join(&dir.tests_dir(), &format!("{name}.test.yaml"));
    if fs.is_file(&path) {
        return Err(format!("{path} already exists"));
    }
    let mut text = format!(
        "title: {}\ndescription: >-\n  TODO: one or two sentences stating the scenario driven and what is asserted.\n",
        yaml_scalar(&title_from_path(&path))
    );
    let trigger = wf.as_ref().and_then(|w| match w.trigger("manual") {
        Some(t) => Some((None, t.requires.clone())),
        None => w
            .triggers()
            .next()
            .map(|t| (Some(t.id.value.clone()), t.requires.clone())),
    });
    if let Some((id, requires)) = trigger {
        if let Some(id) = id {
            text.push_str(&format!("trigger:\n  id: {}\n", yaml_scalar(&id)));
        }
        if !requires.is_empty() {
            text.push_str("variables:\n");
            for e in &requires {
                text.push_str(&format!("  {}: {}\n", e.name.value, placeholder(e)));
            }
        }
    }
    text.push_str("steps:\n  - send: \"TODO: the user's message\"\n  - succeeded: true\n");
    Ok(vec![AuthoringEdit::Create { path, text }])
}

fn read_json(fs: &dyn FileAccess, path: &str) -> Option<Json> {
    serde_json::from_str(&fs.read_text(path).ok()?).ok()
}

/// The trigger a session recorded: the `trigger` variable, else the first `trigger` trail
/// step's reason, else `manual`; and the latest trail timestamp.
fn session_facts(vars: &Json, trail: Option<&Json>) -> (String, Option<f64>) {
    let steps = trail.and_then(|t| t.get("steps")).and_then(Json::as_array);
    let from_trail = steps.and_then(|s| {
        s.iter()
            .find(|st| st.get("kind").and_then(Json::as_str) == Some("trigger"))?
            .get("reason")?
            .as_str()
    });
    let trigger = vars
        .get("variables")
        .and_then(|v| v.get("trigger"))
        .and_then(|t| t.get("value"))
        .and_then(Json::as_str)
        .or(from_trail)
        .unwrap_or("manual")
        .to_owned();
    let ts = steps.and_then(|s| {
        s.iter()
            .filter_map(|st| st.get("ts").and_then(Json::as_f64))
            .reduce(f64::max)
    });
    (trigger, ts)
}

/// The recorded sessions of the case's workflow whose trigger matches the case's (default
/// `manual`), newest first (by the latest trail timestamp, then id). Sessions live under
/// `<root>/sessions/<id>/artifacts/` (FORMAT §E.10; the store root is UNCONFIRMED there, we
/// read `sessions/` as the docs say).
pub fn sessions_for_case(
    fs: &dyn FileAccess,
    case_path: &str,
    case_text: &str,
) -> Vec<SessionInfo> {
    let FileKind::Case(dir) = classify(case_path) else {
        return Vec::new();
    };
    let parsed = yaml::parse(case_text);
    let want = parsed
        .documents
        .first()
        .and_then(|r| r.get_value("trigger"))
        .and_then(|t| t.get_value("id"))
        .and_then(Node::as_str)
        .unwrap_or("manual")
        .to_owned();
    let root = join(&dir.root, "sessions");
    let mut out = Vec::new();
    for e in fs
        .list(&root)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.is_dir)
    {
        let sdir = join(&root, &e.name);
        let Some(vars) = read_json(fs, &join(&sdir, "artifacts/variables.json")) else {
            continue;
        };
        if vars
            .get("workflow")
            .and_then(Json::as_str)
            .is_some_and(|w| w != dir.slug)
        {
            continue;
        }
        let trail = read_json(fs, &join(&sdir, "artifacts/trail.json"));
        let (trigger, last_ts) = session_facts(&vars, trail.as_ref());
        if trigger == want {
            out.push(SessionInfo {
                id: e.name,
                dir: sdir,
                trigger,
                last_ts,
            });
        }
    }
    out.sort_by(|a, b| {
        b.last_ts
            .unwrap_or(f64::MIN)
            .total_cmp(&a.last_ts.unwrap_or(f64::MIN))
            .then_with(|| b.id.cmp(&a.id))
    });
    out
}

/// The byte span of an entry's whole lines: from its key's line start to after the line
/// break that ends its value.
fn entry_lines(text: &str, e: &Entry) -> TextRange {
    let start = line_start(text, e.key.range.start);
    let end = e.value.range.end.max(e.key.range.end) as usize;
    let end = if end > 0 && text.get(end - 1..end) == Some("\n") {
        end
    } else {
        text.get(end..)
            .and_then(|r| r.find('\n'))
            .map_or(text.len(), |p| end + p + 1)
    };
    TextRange::new(start, u32::try_from(end).unwrap_or(u32::MAX))
}

fn json_yaml(v: &Json) -> String {
    match v {
        Json::String(s) => yaml_scalar(s),
        other => other.to_string(),
    }
}

/// "Fill from a past session": edits to the case at `case_path` (read through `fs`) that
/// set `trigger.id` to the session's recorded trigger, replace `variables:` with its other
/// locked entries, and append a `variables` assertion expecting its unlocked entries (the
/// agent's own writes; `title` included when set). The session folder `session_dir`
/// (workspace-relative, `sessions/<id>`) must hold `artifacts/variables.json`
/// (`{sessionId, workflow, variables: {name: {value, locked}}}`); `artifacts/trail.json`
/// supplies the trigger when the store lacks it. Errors: unreadable files, a case that does
/// not parse to a mapping, or a session of another workflow.
pub fn fill_from_session(
    fs: &dyn FileAccess,
    case_path: &str,
    session_dir: &str,
) -> Result<Vec<AuthoringEdit>, String> {
    let FileKind::Case(dir) = classify(case_path) else {
        return Err(format!("{case_path} is not a case file"));
    };
    let text = fs
        .read_text(case_path)
        .map_err(|_| format!("cannot read {case_path}"))?;
    let vars_path = join(session_dir, "artifacts/variables.json");
    let vars = read_json(fs, &vars_path).ok_or_else(|| format!("cannot read {vars_path}"))?;
    if let Some(w) = vars.get("workflow").and_then(Json::as_str)
        && w != dir.slug
    {
        return Err(format!(
            "the session ran workflow `{w}`, not `{}`",
            dir.slug
        ));
    }
    let trail = read_json(fs, &join(session_dir, "artifacts/trail.json"));
    let (trigger, _) = session_facts(&vars, trail.as_ref());
    let parsed = yaml::parse(&text);
    let root = match parsed.documents.first() {
        Some(r) if !parsed.has_syntax_error() && r.as_map().is_some() => r,
        _ => return Err(format!("{case_path} does not parse to a mapping")),
    };
    let mut seeds = Vec::new();
    let mut expect = Vec::new();
    if let Some(store) = vars.get("variables").and_then(Json::as_object) {
        for (name, entry) in store {
            if name == "trigger" {
                continue;
            }
            let value = entry.get("value").cloned().unwrap_or(Json::Null);
            if entry.get("locked").and_then(Json::as_bool) == Some(true) {
                seeds.push((name.clone(), value));
            } else {
                expect.push((name.clone(), value));
            }
        }
    }
    let mut edits = Vec::new();
    let mut block = format!("trigger:\n  id: {}\n", yaml_scalar(&trigger));
    if !seeds.is_empty() {
        block.push_str("variables:\n");
        for (k, v) in &seeds {
            block.push_str(&format!("  {k}: {}\n", json_yaml(v)));
        }
    }
    // Replace the existing `trigger` / `variables` entries; insert the block where the first
    // of them was, else before the first of workspace/mocks/steps, else at the end.
    let old: Vec<&Entry> = ["trigger", "variables"]
        .iter()
        .filter_map(|k| root.get(k))
        .collect();
    let anchor = old
        .iter()
        .map(|e| line_start(&text, e.key.range.start))
        .min()
        .or_else(|| {
            ["workspace", "mocks", "steps"]
                .iter()
                .filter_map(|k| root.get(k))
                .map(|e| line_start(&text, e.key.range.start))
                .min()
        });
    let end = u32::try_from(text.len()).unwrap_or(u32::MAX);
    let at = anchor.unwrap_or(end);
    let lead = if at == end && !text.is_empty() && !text.ends_with('\n') {
        "\n"
    } else {
        ""
    };
    let mut spans: Vec<TextRange> = old.iter().map(|e| entry_lines(&text, e)).collect();
    spans.sort();
    for (i, span) in spans.iter().enumerate() {
        let new_text = if i == 0 && span.start == at {
            std::mem::take(&mut block)
        } else {
            String::new()
        };
        edits.push(TextEdit {
            file: case_path.to_owned(),
            range: *span,
            new_text,
        });
    }
    if !block.is_empty() {
        edits.push(TextEdit {
            file: case_path.to_owned(),
            range: TextRange::empty(at),
            new_text: format!("{lead}{block}"),
        });
    }
    if !expect.is_empty() {
        edits.push(expect_edit(&text, root, case_path, &expect));
    }
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    Ok(edits.into_iter().map(AuthoringEdit::Edit).collect())
}

/// Appends `- variables: { expect: … }` after the last step (a `send` first when the case
/// has no action, so the assertion has one to evaluate against).
fn expect_edit(text: &str, root: &Node, case_path: &str, expect: &[(String, Json)]) -> TextEdit {
    let steps = root.get("steps");
    let items = steps.and_then(|s| s.value.as_seq()).unwrap_or(&[]);
    let indent = items
        .first()
        .and_then(|f| text.get(line_start(text, f.range.start) as usize..f.range.start as usize))
        .map_or(2, |b| b.len().saturating_sub(2));
    let pad = " ".repeat(indent);
    let mut s = String::new();
    let has_action = items.iter().any(|i| {
        i.as_map()
            .and_then(|m| m.first())
            .and_then(|e| e.key.as_str())
            .is_some_and(wfx_schemas::model::case::is_action)
    });
    if !has_action {
        s.push_str(&format!("{pad}- send: \"TODO: the user's message\"\n"));
    }
    s.push_str(&format!("{pad}- variables:\n{pad}    expect:\n"));
    for (k, v) in expect {
        s.push_str(&format!("{pad}      {k}: {}\n", json_yaml(v)));
    }
    let end = u32::try_from(text.len()).unwrap_or(u32::MAX);
    match (steps, items.last()) {
        (Some(_), Some(last)) => {
            let e = last.range.end as usize;
            let at = if e > 0 && text.get(e - 1..e) == Some("\n") {
                e
            } else {
                text.get(e..)
                    .and_then(|r| r.find('\n'))
                    .map_or(text.len(), |p| e + p + 1)
            };
            let at = u32::try_from(at).unwrap_or(end);
            let lead = if at == end && !text.ends_with('\n') {
                "\n"
            } else {
                ""
            };
            TextEdit {
                file: case_path.to_owned(),
                range: TextRange::empty(at),
                new_text: format!("{lead}{s}"),
            }
        }
        (Some(st), None) => {
            // `steps: []` or an empty `steps:`: replace the entry.
            TextEdit {
                file: case_path.to_owned(),
                range: entry_lines(text, st),
                new_text: format!("steps:\n{s}"),
            }
        }
        _ => {
            let lead = if text.ends_with('\n') || text.is_empty() {
                ""
            } else {
                "\n"
            };
            TextEdit {
                file: case_path.to_owned(),
                range: TextRange::empty(end),
                new_text: format!("{lead}steps:\n{s}"),
            }
        }
    }
}
