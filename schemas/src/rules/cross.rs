//! Cross-file rules: a case against its workflow (FORMAT §B.10, `from:` fixtures §B.8, and
//! our own state/trigger/edge checks), and a workflow against its folder and workspace
//! (FORMAT §D.2: slugs, hook scripts, skills registry, sub-workflow targets).

use crate::diagnostics::Diagnostic;
use crate::files::FileAccess;
use crate::model::case::Case;
use crate::model::workflow::Workflow;
use crate::check::WorkflowInfo;
use crate::workspace::WorkflowDir;

/// What a case's cross-file rules may look at.
pub struct CaseContext<'a> {
    /// Workspace access (an editor overlay puts open buffers first).
    pub fs: &'a dyn FileAccess,
    /// The case's workflow folder.
    pub dir: &'a WorkflowDir,
    /// The loaded `workflow.yaml`, if it exists.
    pub workflow: Option<&'a WorkflowInfo>,
    /// Slugs of every workflow in the workspace, sorted.
    pub workflow_slugs: Vec<String>,
    /// True when the document rules found no error (the reference's document-level checks
    /// run only then).
    pub document_parses: bool,
}

/// Cross-file rules for one case.
pub fn check_case(_ctx: &CaseContext<'_>, _file: &str, _case: &Case) -> Vec<Diagnostic> {
    Vec::new()
}

/// Cross-file rules for one `workflow.yaml` (FORMAT §D.2 steps 1, 5–9).
pub fn check_workflow(_fs: &dyn FileAccess, _dir: &WorkflowDir, _file: &str, _wf: &Workflow) -> Vec<Diagnostic> {
    Vec::new()
}

/// FORMAT §D.2 / §A.0.1: the workflow folder has no `workflow.yaml`.
pub fn missing_workflow(_dir: &WorkflowDir) -> Vec<Diagnostic> {
    Vec::new()
}
