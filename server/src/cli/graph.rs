//! `wfx-lsp graph [WORKFLOW|PATH] [--format svg|mermaid|dot|json] [--case ID] [-o FILE]`:
//! the workflow graph (FORMAT §E.10) as SVG (default, laid out by `layout-rs`), Mermaid,
//! Graphviz DOT or the reference's `graph.json` shape. With `--case`, the case is run with
//! the bundled runner (grades skipped, hooks in the QuickJS sandbox) and the path it took is
//! highlighted, each reached state labelled with the case step at which it was first reached.
//!
//! Target resolution: no target is the current folder; a bare name is a workflow slug under
//! `workflows/`; a workspace root with exactly one workflow selects it (several: usage
//! error naming them); a workflow folder or any file inside one selects that workflow; a
//! case file also selects the case when `--case` is absent.
//!
//! Exit codes as `check`: 0 written, 2 for a usage error (unknown workflow or case, a
//! workflow.yaml that does not load, an unwritable output).

use std::io::Write;
use std::path::{Path, PathBuf};

use wfx_runner::clock::SystemClock;
use wfx_runner::grade::GradePolicy;
use wfx_runner::script_host::ScriptHost;
use wfx_runner::suite::{RunOptions, run_case_file};
use wfx_schemas::check::load_workflow;
use wfx_schemas::files::FileAccess;
use wfx_schemas::graph::{CasePath, Graph};
use wfx_schemas::inert::inert;
use wfx_schemas::workspace::{self, WorkflowDir, case_id};

use super::{EXIT_OK, EXIT_USAGE};
use wfx_runner::disk::DiskFiles;

/// Output formats of `graph`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GraphFormat {
    /// A standalone SVG document.
    #[default]
    Svg,
    /// A Mermaid flowchart.
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// The reference's `graph.json` (plus `path` when a case ran).
    Json,
}

/// Options of `wfx-lsp graph`.
#[derive(Clone, Debug, Default)]
pub struct GraphOptions {
    /// A workflow slug, a workspace root, a workflow folder or a file inside one.
    pub target: Option<String>,
    /// Output format.
    pub format: GraphFormat,
    /// A case id (its path under `tests/` without `.test.yaml`) whose path to light.
    pub case: Option<String>,
    /// Write here instead of stdout.
    pub out: Option<PathBuf>,
}

/// A resolved target: the workspace root on disk, the workflow, and a case path implied by
/// a case-file target.
struct Resolved {
    root: PathBuf,
    dir: WorkflowDir,
    case_file: Option<String>,
}

fn resolve(target: Option<&str>, cwd: &Path) -> Result<Resolved, String> {
    let in_root = |root: &Path| -> Result<Resolved, String> {
        if wfx_runner::disk::root_escapes_through_link(cwd, root) {
            return Err(format!(
                "`{}`: {}",
                root.display(),
                wfx_runner::disk::ROOT_LINK_REFUSED
            ));
        }
        let fs = DiskFiles::new(root);
        let all = workspace::discover_workflows(&fs, "");
        match all.as_slice() {
            [one] => Ok(Resolved {
                root: root.to_path_buf(),
                dir: one.clone(),
                case_file: None,
            }),
            [] => Err(format!("no workflows in {}", root.display())),
            many => Err(format!(
                "{} holds several workflows; name one of: {}",
                root.display(),
                many.iter()
                    .map(|d| d.slug.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    };
    let Some(target) = target else {
        return in_root(cwd);
    };
    if !target.contains('/')
        && cwd
            .join("workflows")
            .join(target)
            .join("workflow.yaml")
            .is_file()
    {
        return Ok(Resolved {
            root: cwd.to_path_buf(),
            dir: WorkflowDir {
                root: String::new(),
                slug: target.to_owned(),
            },
            case_file: None,
        });
    }
    let path = cwd.join(target);
    if !path.exists() {
        return Err(format!("no workflow or path `{target}`"));
    }
    if path.is_dir() && path.join("workflows").is_dir() {
        return in_root(&path);
    }
    let comps: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let Some(w) = comps.iter().rposition(|c| c == "workflows") else {
        return Err(format!("`{target}` is not inside a workspace"));
    };
    let root: PathBuf = comps.iter().take(w).collect();
    let Some(slug) = comps.get(w + 1) else {
        return Err(format!("`{target}` names no workflow"));
    };
    if wfx_runner::disk::root_escapes_through_link(cwd, &root) {
        return Err(format!(
            "`{target}`: {}",
            wfx_runner::disk::ROOT_LINK_REFUSED
        ));
    }
    let rel = comps.get(w..).unwrap_or_default().join("/");
    let case_file = workspace::is_case_name(&rel).then_some(rel);
    Ok(Resolved {
        root,
        dir: WorkflowDir {
            root: String::new(),
            slug: slug.clone(),
        },
        case_file,
    })
}

/// Runs `case` (a workspace-relative case path) with grades skipped and returns its path
/// through the graph.
pub fn run_case_path(fs: &dyn FileAccess, case: &str) -> Result<CasePath, String> {
    let clock = SystemClock;
    let make_host =
        || -> Box<dyn ScriptHost> { Box::new(wfx_runner::sandbox::QuickJsHost::default()) };
    let mut ro = RunOptions::new(fs, &clock);
    ro.grades = GradePolicy {
        skip: true,
        model: None,
    };
    ro.script_host = Some(&make_host);
    let run = run_case_file(&ro, case).map_err(|e| e.to_string())?;
    Ok(wfx_runner::path::case_path(&run))
}

/// The rendered graph in `format`, with `path` lit.
pub fn render(
    graph: &Graph,
    format: GraphFormat,
    path: Option<&CasePath>,
) -> Result<String, String> {
    Ok(match format {
        GraphFormat::Svg => graph.to_svg(path)?,
        GraphFormat::Mermaid => graph.to_mermaid(path),
        GraphFormat::Dot => graph.to_dot(path),
        GraphFormat::Json => {
            let mut v = graph.to_reference_json();
            if let (Some(obj), Some(p)) = (v.as_object_mut(), path) {
                obj.insert("path".into(), path_json(p));
            }
            let mut s = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?;
            s.push('\n');
            s
        }
    })
}

/// `{reached: {<state>: <stepNumber>}, edges: [[source, target]]}` (also `wfx/graph`'s
/// `path`); `stepNumber` is 1-based ("step 3" is `steps[2]`), as every label people read.
pub fn path_json(p: &CasePath) -> serde_json::Value {
    serde_json::json!({
        "reached": p.reached,
        "edges": p.edges.iter().map(|(s, t)| serde_json::json!([s, t])).collect::<Vec<_>>(),
    })
}

fn graph_inner(opts: &GraphOptions, cwd: &Path) -> Result<String, String> {
    let r = resolve(opts.target.as_deref(), cwd)?;
    let fs = DiskFiles::new(&r.root);
    let info = load_workflow(&fs, &r.dir)
        .ok_or_else(|| format!("no workflow.yaml found for workflow '{}'", r.dir.slug))?;
    let wf = info
        .model
        .ok_or_else(|| format!("{} is not a YAML mapping", info.path))?;
    let graph = Graph::from_workflow(&wf);
    let case = match (&opts.case, r.case_file) {
        (Some(id), _) => {
            let cases = workspace::discover_cases(&fs, &r.dir);
            let tests = r.dir.tests_dir();
            let found = cases
                .iter()
                .find(|c| case_id(&tests, c) == *id)
                .cloned()
                .ok_or_else(|| {
                    format!(
                        "no case `{id}` in workflow '{}' (cases: {})",
                        r.dir.slug,
                        cases
                            .iter()
                            .map(|c| case_id(&tests, c))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })?;
            Some(found)
        }
        (None, f) => f,
    };
    let path = match case {
        Some(c) => Some(run_case_path(&fs, &c)?),
        None => None,
    };
    render(&graph, opts.format, path.as_ref())
}

/// `wfx-lsp graph`: returns the exit code ([`EXIT_OK`] or [`EXIT_USAGE`]).
pub fn run_graph(
    opts: &GraphOptions,
    cwd: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let text = match graph_inner(opts, cwd) {
        Ok(t) => t,
        Err(e) => {
            let _ = writeln!(stderr, "error: {}", inert(&e.to_string()));
            return EXIT_USAGE;
        }
    };
    let written = match &opts.out {
        // Never through a planted link: the folder is checked, the file replaced.
        Some(p) => wfx_runner::disk::write_output_file(cwd, p, text.as_bytes()),
        None => stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("cannot write the output: {e}")),
    };
    match written {
        Ok(()) => EXIT_OK,
        Err(e) => {
            let _ = writeln!(stderr, "error: {}", inert(&e.to_string()));
            EXIT_USAGE
        }
    }
}
