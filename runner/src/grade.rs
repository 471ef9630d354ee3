//! The judge seam: `grade` assertions and rubric hooks need a model (FORMAT §B.6, §E.6).
//! [`Judge`] is where one plugs in (`crate::model::judge::ModelJudge` under `test --live`),
//! and [`GradePolicy`] says what happens without one.
//!
//! * `grade` without `tests.judge` in `workflow.yaml`: failed, score 0, the reference's
//!   "grading model unavailable: declare 'tests: { judge: ... }'" detail.
//! * `tests.judge` declared but no model configured (`ARCHMAX_API_BASE_URL` /
//!   `ARCHMAX_MODEL` unset): failed, score 0, naming the two variables.
//! * A model configured but no [`Judge`] plugged in (a run without `--live`): failed,
//!   saying models are only called with `--live`.
//! * `--skip-grades`: every `grade` is a `not-executed` record, and every rubric hook
//!   counts as `ok()` with a runtime note saying it was skipped, so a suite can run offline
//!   without losing the deterministic assertions. Without `--skip-grades` and without a
//!   model, a rubric hook is not executable: the step it guards fails with a clear error.

use serde_json::Value;

use crate::script_host::HookVerdict;

/// A model-backed grader.
pub trait Judge {
    /// Scores `evidence` against the yes/no `criterion`: `(score in [0, 1], reason)`.
    fn grade(&mut self, criterion: &str, evidence: &str) -> Result<(f64, Option<String>), String>;
    /// Runs a rubric hook with its `instructions` over the hook `payload`.
    fn rubric(&mut self, instructions: &str, payload: &Value) -> Result<HookVerdict, String>;
}

/// A judge that cannot judge (a placeholder where a factory must return one).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoJudge;

impl Judge for NoJudge {
    fn grade(&mut self, _: &str, _: &str) -> Result<(f64, Option<String>), String> {
        Err("no grading model is available".into())
    }
    fn rubric(&mut self, _: &str, _: &Value) -> Result<HookVerdict, String> {
        Err("no grading model is available".into())
    }
}

/// The model settings read from the environment by the CLI (never by the library).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelConfig {
    /// `ARCHMAX_API_BASE_URL`.
    pub base_url: String,
    /// `ARCHMAX_MODEL`.
    pub model: String,
}

/// What grades and rubric hooks may do in a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GradePolicy {
    /// `--skip-grades`.
    pub skip: bool,
    /// The configured model, if any.
    pub model: Option<ModelConfig>,
}

/// Why a grade or rubric cannot run, or `None` when a judge may be asked.
pub fn unavailable_reason(policy: &GradePolicy, has_judge_impl: bool) -> Option<String> {
    if policy.model.is_none() {
        return Some("no grading model is configured: set ARCHMAX_API_BASE_URL and ARCHMAX_MODEL, or pass --skip-grades".into());
    }
    if !has_judge_impl {
        return Some("a grading model is configured, but models are only called with --live (no model client without it); pass --live or --skip-grades".into());
    }
    None
}
