//! Cross-file rules for a case: the case against its workflow (FORMAT §B.10), `from:`
//! fixtures (§B.8), and our own checks of state, trigger, edge and workflow references.

use crate::check::WorkflowInfo;
use crate::diagnostics::Diagnostic;
use crate::files::FileAccess;
use crate::model::case::Case;
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
