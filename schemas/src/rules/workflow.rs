//! `workflow.yaml` rules (FORMAT §A): shape (A.1–A.3, A.5, A.6), refine (A.4) and lint (A.7),
//! plus the `WORKFLOW.md` frontmatter rule (A.0.5).

use crate::diagnostics::Diagnostic;
use crate::yaml::Node;

/// Every FORMAT §A rule on one `workflow.yaml` root.
pub fn check_document(_file: &str, _root: &Node) -> Vec<Diagnostic> {
    Vec::new()
}

/// FORMAT §A.0.5: `WORKFLOW.md` is prose only; YAML frontmatter is an error.
pub fn check_workflow_md(_file: &str, _text: &str) -> Vec<Diagnostic> {
    Vec::new()
}
