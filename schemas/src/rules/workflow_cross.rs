//! Cross-file rules for a workflow: `workflow.yaml` against its folder and workspace
//! (FORMAT §D.2: slugs, hook scripts, skills registry, governance probes, sub-workflow
//! targets) and a missing spec (§A.0.1).

use crate::diagnostics::Diagnostic;
use crate::files::FileAccess;
use crate::model::workflow::Workflow;
use crate::workspace::WorkflowDir;

/// Cross-file rules for one `workflow.yaml` (FORMAT §D.2 steps 1, 5–9).
pub fn check_workflow(_fs: &dyn FileAccess, _dir: &WorkflowDir, _file: &str, _wf: &Workflow) -> Vec<Diagnostic> {
    Vec::new()
}

/// FORMAT §D.2 / §A.0.1: the workflow folder has no `workflow.yaml`.
pub fn missing_workflow(_dir: &WorkflowDir) -> Vec<Diagnostic> {
    Vec::new()
}
