//! Case document rules (FORMAT §B.0–§B.7): the 8 top-level keys, title and description
//! budgets, trigger, variables, workspace, mocks, steps, actions, assertions and regexes.

use crate::diagnostics::Diagnostic;
use crate::yaml::Node;

/// Every FORMAT §B rule on one case document root. `file` is the workspace-relative path.
pub fn check_document(_file: &str, _root: &Node) -> Vec<Diagnostic> {
    Vec::new()
}
