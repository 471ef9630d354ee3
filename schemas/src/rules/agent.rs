//! Rules for the runner's agent scripts (`tests/<name>.agent.yaml`): a mapping with one key,
//! `turns`, a list of turns, each a list of `say:` / `call:` actions.

use crate::diagnostics::Diagnostic;
use crate::model::workflow::Workflow;
use crate::yaml::Node;

/// Checks an agent script against its format and, when given, the workflow.
pub fn check_document(_file: &str, _root: &Node, _workflow: Option<&Workflow>) -> Vec<Diagnostic> {
    Vec::new()
}
