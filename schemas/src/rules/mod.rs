//! Every validation rule, grouped by FORMAT section: [`yaml`] (stream level), [`case`]
//! (§B, one case document), [`workflow`] (§A, one `workflow.yaml`), [`cross`] (§B.10, §D and
//! our own cross-file checks) and [`agent`] (the runner's agent scripts).
//!
//! Rules take a span tree or a model and return diagnostics; they never read the clock or
//! the environment, and they never choose a severity (the registry does).

pub mod agent;
pub mod case;
pub mod cross;
pub mod workflow;
pub mod yaml;
