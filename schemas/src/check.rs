//! Entry points: files in, sorted diagnostics out.
//!
//! [`check_paths`] is what `wfx-lsp check` calls; [`check_file`] is what the server calls
//! for one document (its overlay `FileAccess` puts unsaved buffers first, so cross-file
//! rules see them). Both run the same pipeline per file: decode → YAML span tree → document
//! rules (FORMAT §A or §B) → cross-file rules (FORMAT §B.10, §D). A syntax error stops the
//! pipeline for that file, as the reference's loader does (FORMAT §A.0, §B.0).

use crate::diagnostics::{self, Diagnostic, sort_diagnostics};
use crate::files::{FileAccess, FileError, join};
use crate::model::workflow::Workflow;
use crate::rules;
use crate::text::TextRange;
use crate::workspace::{self, FileKind, WorkflowDir};
use crate::yaml::{self, Node, Parsed};

/// A loaded `workflow.yaml`: its text, span tree and model.
#[derive(Clone, Debug)]
pub struct WorkflowInfo {
    /// Which workflow.
    pub dir: WorkflowDir,
    /// Workspace-relative path of `workflow.yaml`.
    pub path: String,
    /// The text (BOM stripped).
    pub text: String,
    /// The span tree.
    pub parsed: Parsed,
    /// The model, when the text parsed to a mapping.
    pub model: Option<Workflow>,
}

/// Reads and parses `workflow.yaml` of `dir`; `None` when the file is missing or unreadable.
pub fn load_workflow(fs: &dyn FileAccess, dir: &WorkflowDir) -> Option<WorkflowInfo> {
    let path = dir.spec_path();
    let text = fs.read_text(&path).ok()?;
    let parsed = yaml::parse(&text);
    let model = match parsed.documents.first() {
        Some(root) if root.as_map().is_some() && !parsed.has_syntax_error() => Some(Workflow::from_node(root)),
        _ => None,
    };
    Some(WorkflowInfo { dir: dir.clone(), path, text, parsed, model })
}

/// Reads a file as text, turning failures into a diagnostic at the top of the file.
fn read(fs: &dyn FileAccess, path: &str) -> Result<String, Diagnostic> {
    match fs.read(path) {
        Ok(bytes) => crate::text::decode(&bytes).map_err(|at| {
            Diagnostic::new(
                &diagnostics::INVALID_UTF8,
                path,
                TextRange::new(at, at + 1),
                format!("the file is not valid UTF-8 (first invalid byte at offset {at})"),
            )
        }),
        Err(FileError::NotFound) => {
            Err(Diagnostic::new(&diagnostics::UNREADABLE_FILE, path, TextRange::empty(0), "the file does not exist"))
        }
        Err(FileError::Other(why)) => {
            Err(Diagnostic::new(&diagnostics::UNREADABLE_FILE, path, TextRange::empty(0), format!("cannot read the file: {why}")))
        }
    }
}

/// Diagnostics of one file, cross-file rules included. Files that are not a workflow spec,
/// a case, an agent script or `WORKFLOW.md` get none. `path` is workspace-relative.
pub fn check_file(fs: &dyn FileAccess, path: &str) -> Vec<Diagnostic> {
    let mut out = match fs.read(path) {
        Ok(_) => check_file_inner(fs, path),
        Err(_) => match read(fs, path) {
            Err(d) => vec![d],
            Ok(_) => Vec::new(),
        },
    };
    out.retain(|d| d.file == path);
    sort_diagnostics(&mut out);
    out
}

/// Diagnostics of one file's given text (an editor buffer), cross-file rules included.
pub fn check_text(fs: &dyn FileAccess, path: &str, text: &str) -> Vec<Diagnostic> {
    let mut out = check_kind(fs, path, text, &workspace::classify(path));
    out.retain(|d| d.file == path);
    sort_diagnostics(&mut out);
    out
}

fn check_file_inner(fs: &dyn FileAccess, path: &str) -> Vec<Diagnostic> {
    let kind = workspace::classify(path);
    if kind == FileKind::Other {
        return Vec::new();
    }
    match read(fs, path) {
        Err(d) => vec![d],
        Ok(text) => check_kind(fs, path, &text, &kind),
    }
}

/// Parses `text` and reports YAML-level problems; returns the single root when the
/// document rules may run.
pub fn parse_and_report(path: &str, text: &str, out: &mut Vec<Diagnostic>) -> (Parsed, Option<Node>) {
    let parsed = yaml::parse(text);
    out.extend(rules::yaml::check(path, &parsed));
    if parsed.has_syntax_error() {
        return (parsed, None);
    }
    let root = parsed.documents.first().cloned().unwrap_or(Node { value: yaml::Value::Null, range: TextRange::empty(0) });
    (parsed, Some(root))
}

fn check_kind(fs: &dyn FileAccess, path: &str, text: &str, kind: &FileKind) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    match kind {
        FileKind::Other => {}
        FileKind::WorkflowMd(_) => out.extend(rules::workflow::check_workflow_md(path, text)),
        FileKind::Workflow(dir) => {
            let (_, root) = parse_and_report(path, text, &mut out);
            if let Some(root) = root {
                let doc = rules::workflow::check_document(path, &root);
                let usable = !root.is_null() && root.as_map().is_some();
                out.extend(doc);
                if usable {
                    let model = Workflow::from_node(&root);
                    out.extend(rules::workflow_cross::check_workflow(fs, dir, path, &model));
                }
            }
        }
        FileKind::Case(dir) => {
            let (_, root) = parse_and_report(path, text, &mut out);
            if let Some(root) = root {
                let doc = rules::case::check_document(path, &root);
                let parses = doc.iter().all(|d| d.severity != diagnostics::Severity::Error);
                out.extend(doc);
                if root.as_map().is_some() {
                    let case = crate::model::case::Case::from_node(&root);
                    let wf = load_workflow(fs, dir);
                    let ctx = rules::case_cross::CaseContext {
                        fs,
                        dir,
                        workflow: wf.as_ref(),
                        workflow_slugs: workspace::discover_workflows(fs, &dir.root).into_iter().map(|w| w.slug).collect(),
                        document_parses: parses,
                    };
                    out.extend(rules::case_cross::check_case(&ctx, path, &case));
                }
            }
        }
        FileKind::AgentScript(dir) => {
            let (_, root) = parse_and_report(path, text, &mut out);
            if let Some(root) = root {
                let wf = load_workflow(fs, dir);
                out.extend(rules::agent::check_document(path, &root, wf.as_ref().and_then(|w| w.model.as_ref())));
            }
        }
    }
    out
}

/// Diagnostics of a workflow folder: `workflow.yaml` (or its absence), `WORKFLOW.md`, every
/// case and every agent script (FORMAT §D.2).
pub fn check_workflow_dir(fs: &dyn FileAccess, dir: &WorkflowDir) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let spec = dir.spec_path();
    if fs.is_file(&spec) {
        out.extend(check_file_inner(fs, &spec));
    } else {
        out.extend(rules::workflow_cross::missing_workflow(dir));
    }
    let md = join(&dir.dir(), "WORKFLOW.md");
    if fs.is_file(&md) {
        out.extend(check_file_inner(fs, &md));
    }
    for case in workspace::discover_cases(fs, dir) {
        out.extend(check_file_inner(fs, &case));
    }
    for script in workspace::discover_agent_scripts(fs, dir) {
        out.extend(check_file_inner(fs, &script));
    }
    sort_diagnostics(&mut out);
    out
}

/// Diagnostics of every workflow under `<root>/workflows/`.
pub fn check_workspace(fs: &dyn FileAccess, root: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for wf in workspace::discover_workflows(fs, root) {
        out.extend(check_workflow_dir(fs, &wf));
    }
    sort_diagnostics(&mut out);
    out
}

/// What a `check` target resolved to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A folder holding `workflows/`.
    Workspace(String),
    /// A workflow folder.
    Workflow(WorkflowDir),
    /// One file.
    File(String),
    /// A folder that is none of these: every workflow-related file below it.
    Folder(String),
}

/// Resolves a workspace-relative path to a [`Target`].
pub fn resolve_target(fs: &dyn FileAccess, path: &str) -> Option<Target> {
    let path = path.trim_end_matches('/');
    let path = if path == "." { "" } else { path };
    if !path.is_empty() && fs.is_file(path) {
        return Some(Target::File(path.to_owned()));
    }
    let entries = fs.list(path).ok()?;
    if entries.iter().any(|e| e.is_dir && e.name == "workflows") {
        return Some(Target::Workspace(path.to_owned()));
    }
    if entries.iter().any(|e| !e.is_dir && e.name == "workflow.yaml")
        && let FileKind::Workflow(dir) = workspace::classify(&join(path, "workflow.yaml")) {
            return Some(Target::Workflow(dir));
        }
    Some(Target::Folder(path.to_owned()))
}

/// Diagnostics of `check` targets; `Err` names a path that does not exist. Files counted
/// are returned with the diagnostics.
pub fn check_paths(fs: &dyn FileAccess, paths: &[String]) -> Result<(Vec<Diagnostic>, usize), String> {
    let mut out = Vec::new();
    let mut files = std::collections::BTreeSet::new();
    for p in paths {
        let target = resolve_target(fs, p).ok_or_else(|| format!("no such file or folder: {p}"))?;
        let dirs: Vec<WorkflowDir> = match &target {
            Target::Workspace(root) => workspace::discover_workflows(fs, root),
            Target::Workflow(d) => vec![d.clone()],
            Target::File(f) => {
                files.insert(f.clone());
                out.extend(check_file(fs, f));
                Vec::new()
            }
            Target::Folder(dir) => {
                for f in crate::files::walk(fs, dir) {
                    if workspace::classify(&f) != FileKind::Other {
                        files.insert(f.clone());
                        out.extend(check_file(fs, &f));
                    }
                }
                Vec::new()
            }
        };
        for d in dirs {
            files.insert(d.spec_path());
            for c in workspace::discover_cases(fs, &d).into_iter().chain(workspace::discover_agent_scripts(fs, &d)) {
                files.insert(c);
            }
            out.extend(check_workflow_dir(fs, &d));
        }
    }
    sort_diagnostics(&mut out);
    Ok((out, files.len()))
}
