//! Checks shared by `wfx-lsp check` and the language server beyond `wfx_schemas::check`:
//! the static script checks of the sandbox (WFX502 foreign imports in skill scripts, WFX503
//! syntax errors in hook and skill scripts; `wfx_runner::sandbox::check_*`), and the case
//! path a run took through the workflow graph (FORMAT §E.2 trail → `CasePath`).
//!
//! [`script_diagnostics`] is the ONE entry point both front ends call, with the same path
//! arguments `check` accepts. Scope, by what a path resolves to:
//! * a workspace root: the hook scripts of every workflow, and the skill scripts of the
//!   workspace once;
//! * a workflow folder or its `workflow.yaml`: that workflow's hook scripts;
//! * a hook script (`workflows/<slug>/hooks/…`): its own diagnostics only;
//! * anything else: nothing.
//!
//! The diagnostics sit on the script files; the language server re-anchors them on
//! `workflow.yaml` (see `lsp::server`).

use std::collections::BTreeSet;

use wfx_runner::sandbox::{check_hook_scripts, check_skill_scripts};
use wfx_schemas::check::{Target, resolve_target};
use wfx_schemas::diagnostics::{Diagnostic, sort_diagnostics};
use wfx_schemas::files::FileAccess;
use wfx_schemas::workspace::{self, FileKind, WorkflowDir};

/// The workflow folder of a hook script path (`<root>/workflows/<slug>/hooks/…`).
fn hook_dir(path: &str) -> Option<WorkflowDir> {
    let segs: Vec<&str> = path.split('/').collect();
    let w = segs.iter().rposition(|s| *s == "workflows")?;
    let slug = segs.get(w + 1)?;
    if segs.get(w + 2) != Some(&"hooks") || segs.len() <= w + 3 {
        return None;
    }
    let root = segs.get(..w)?.join("/");
    Some(WorkflowDir {
        root,
        slug: (*slug).to_owned(),
    })
}

/// Script diagnostics (WFX502, WFX503) for `check`'s path arguments (workspace-relative),
/// deduplicated and sorted (uncapped, like `check_paths`: the caller bounds what it
/// shows). Unknown paths contribute nothing (`check_paths` reports them).
pub fn script_diagnostics(fs: &dyn FileAccess, paths: &[String]) -> Vec<Diagnostic> {
    let mut dirs: BTreeSet<(String, String)> = BTreeSet::new();
    let mut roots: BTreeSet<String> = BTreeSet::new();
    let mut single: BTreeSet<String> = BTreeSet::new();
    for p in paths {
        match resolve_target(fs, p) {
            Some(Target::Workspace(root)) => {
                for d in workspace::discover_workflows(fs, &root) {
                    dirs.insert((d.root, d.slug));
                }
                roots.insert(root);
            }
            Some(Target::Workflow(d)) => {
                dirs.insert((d.root, d.slug));
            }
            Some(Target::File(f)) => {
                if let FileKind::Workflow(d) = workspace::classify(&f) {
                    dirs.insert((d.root, d.slug));
                } else if hook_dir(&f).is_some() {
                    single.insert(f);
                }
            }
            Some(Target::Folder(_)) | None => {}
        }
    }
    let mut out = Vec::new();
    for (root, slug) in &dirs {
        let d = WorkflowDir {
            root: root.clone(),
            slug: slug.clone(),
        };
        out.extend(check_hook_scripts(fs, &d));
    }
    for f in &single {
        if let Some(d) = hook_dir(f)
            && !dirs.contains(&(d.root.clone(), d.slug.clone()))
        {
            out.extend(
                check_hook_scripts(fs, &d)
                    .into_iter()
                    .filter(|x| &x.file == f),
            );
        }
    }
    for root in &roots {
        out.extend(check_skill_scripts(fs, root));
    }
    sort_diagnostics(&mut out);
    out.dedup_by(|a, b| a.file == b.file && a.range == b.range && a.code == b.code);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_paths_name_their_workflow() {
        let d = hook_dir("ws/workflows/a/hooks/x.js").unwrap();
        assert_eq!((d.root.as_str(), d.slug.as_str()), ("ws", "a"));
        assert!(hook_dir("ws/workflows/a/workflow.yaml").is_none());
        assert!(hook_dir("ws/workflows/a/hooks").is_none());
    }
}
