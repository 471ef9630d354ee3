//! Every validation rule, grouped by FORMAT section: [`yaml`] (stream level), [`case`]
//! (§B, one case document), [`case_cross`] (§B.10, §B.8 and our own case ↔ workflow
//! checks), [`workflow`] (§A, one `workflow.yaml`), [`workflow_cross`] (§D) [`agent`] (the runner's agent scripts) and [`cassette`] (recorded live runs).
//!
//! Rules take a span tree or a model and return diagnostics; they never read the clock or
//! the environment, and they never choose a severity (the registry does).

pub mod agent;
pub mod case;
pub mod case_cross;
pub mod cassette;
pub mod workflow;
pub mod workflow_cross;
pub mod yaml;
