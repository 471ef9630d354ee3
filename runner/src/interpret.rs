//! The case interpreter (FORMAT §B.2–§B.6, §C.3): runs one case document against the
//! simulator and produces its [`CaseResult`]: one record per assertion (one per token for
//! `reply`), the structural halt with `not-executed` records, died cases with the error
//! first in the failures, and the verdict reduction.
//!
//! Must not: print, read the environment, or know which [`Agent`] it drives.

use serde::Serialize;
use serde_json::Value;
use wfx_schemas::diagnostics::Severity;
use wfx_schemas::files::{FileAccess, FileError, join};
use wfx_schemas::model::case::{
    Case, CaseStep, Channel, SeedContent, StepForm, ToolAssertion, is_assertion, is_structural,
};
use wfx_schemas::model::workflow::Workflow;
use wfx_schemas::text::collapse_whitespace;
use wfx_schemas::workspace::{WorkflowDir, case_id};
use wfx_schemas::{check, jsregex, yaml};

use crate::agent::Agent;
use crate::clock::Clock;
use crate::evidence::Evidence;
use crate::grade::{GradePolicy, Judge, unavailable_reason};
use crate::matching::{deep_equal, js_number, partial_match, resolve_path};
use crate::script_host::ScriptHost;
use crate::sim::{Session, SessionView, SimConfig, SimError, Simulator, Status, TrailStep};

/// A record's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordStatus {
    /// The assertion held.
    Passed,
    /// It did not.
    Failed,
    /// It never ran (halt, death, or `--skip-grades`).
    NotExecuted,
}

/// One assertion record (FORMAT §C.3); JSON field order as the reference.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    /// `succeeded`, `reply.includes`, `grade.closedQA`, …; not-executed records use the step key.
    pub kind: String,
    /// `atLeast` for grades, else `null`.
    pub threshold: Option<f64>,
    /// The outcome.
    pub status: RecordStatus,
    /// Grade score in [0, 1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// What was checked, or why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Index into the case's `steps`.
    pub step: usize,
}

/// A verdict's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VerdictStatus {
    /// No failures.
    Passed,
    /// At least one failure.
    Failed,
    /// `skip:`.
    Skipped,
    /// Not run: the selection rule found no agent for the case (`"not-run"`, a wfx-lsp
    /// addition to the reference's statuses; issue 15, docs/cli.md). Counted apart from
    /// failures; the run exits 1 unless `--allow-no-agent`.
    #[serde(rename = "not-run")]
    NotRun,
}

/// `{status, failures}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// The outcome.
    pub status: VerdictStatus,
    /// `'<kind>: <detail>'` strings; a died case's error first.
    pub failures: Vec<String>,
}

/// One case's result (FORMAT §C.3); JSON field names and order as the reference.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseResult {
    /// The case id; for a case that does not parse, the workspace-relative file path.
    pub id: String,
    /// Collapsed title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Collapsed description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The verdict.
    pub verdict: Verdict,
    /// Records in step order.
    pub records: Vec<Record>,
    /// `skip:` reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// Set when the case died.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the case was not run, with the hint naming the ways to give it an agent
    /// (status `not-run`, [`crate::select::not_run_message`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    /// Model tokens (and cost) of a `--live` run or a replayed cassette; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::model::RunUsage>,
    /// Warnings about the run that do not fail it (a cassette's prompt drift, secrets
    /// redacted from a recording; docs/cassettes.md). Absent when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A case run with what narration and the editor need beyond the result.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseRun {
    /// Workspace-relative case path.
    pub path: String,
    /// The result.
    pub result: CaseResult,
    /// The state flow, e.g. `identify-case → refund-request → refund-review ⏸`.
    pub flow: String,
    /// Wall time by the run's clock, ms.
    pub duration_ms: u64,
    /// The session's audit trail (FORMAT §E.2), each step with the index (into the case's
    /// `steps`) of the action during which it was recorded; empty when the case did not run.
    pub trail: Vec<(usize, TrailStep)>,
    /// Hook verdicts, parks and tools the simulator saw (for `--coverage`); empty when the
    /// case did not run.
    pub observed: crate::coverage::Observed,
    /// What happened, in order, each entry with its 1-based step number and state (issue
    /// 16, [`crate::evidence`]); empty when the case did not run.
    pub evidence: Evidence,
}

/// What one case run needs.
pub struct CaseEnv<'a> {
    /// The workspace.
    pub fs: &'a dyn FileAccess,
    /// The workflow folder.
    pub dir: &'a WorkflowDir,
    /// The workflow model.
    pub workflow: &'a Workflow,
    /// Time.
    pub clock: &'a dyn Clock,
    /// Grades and rubric hooks.
    pub grades: GradePolicy,
}

/// The outcome of one `from:` path normalization (FORMAT §B.8).
fn normalize_fixture(from: &str, file: &str) -> Result<String, String> {
    if from.starts_with('/') {
        return Err(format!(
            "{file}: 'from: {from}' must be a tests/-relative file path"
        ));
    }
    let mut segs = Vec::new();
    for s in from.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                return Err(format!(
                    "{file}: 'from: {from}' escapes the tests directory"
                ));
            }
            s => segs.push(s),
        }
    }
    if segs.is_empty() {
        return Err(format!(
            "{file}: 'from: {from}' must be a tests/-relative file path"
        ));
    }
    Ok(segs.join("/"))
}

fn seed_text(node: &yaml::Node) -> String {
    match node.to_json() {
        Value::String(s) => s,
        other => format!(
            "{}\n",
            serde_json::to_string_pretty(&other).unwrap_or_default()
        ),
    }
}

fn rec(kind: &str, pass: bool, detail: Option<String>, step: usize) -> Record {
    Record {
        kind: kind.to_owned(),
        threshold: None,
        status: if pass {
            RecordStatus::Passed
        } else {
            RecordStatus::Failed
        },
        score: None,
        detail,
        step,
    }
}

fn not_executed(key: &str, step: &CaseStep, detail: Option<String>) -> Record {
    let threshold = match step.form() {
        Some(StepForm::Grade { at_least, .. }) => Some(at_least),
        _ => None,
    };
    Record {
        kind: key.to_owned(),
        threshold,
        status: RecordStatus::NotExecuted,
        score: None,
        detail,
        step: step.index,
    }
}

fn failure_string(r: &Record) -> String {
    let mut s = match &r.detail {
        Some(d) => format!("{}: {d}", r.kind),
        None => r.kind.clone(),
    };
    if r.kind == "grade.closedQA"
        && let (Some(score), Some(t)) = (r.score, r.threshold)
    {
        s.push_str(&format!(" (score {} < {})", fmt_num(score), fmt_num(t)));
    }
    s
}

fn fmt_num(f: f64) -> String {
    serde_json::Number::from_f64(f).map_or_else(|| f.to_string(), |n| js_number(&n))
}

/// `reduceVerdict` (FORMAT §C.3).
pub fn reduce_verdict(records: &[Record]) -> Verdict {
    let failures: Vec<String> = records
        .iter()
        .filter(|r| r.status == RecordStatus::Failed)
        .map(failure_string)
        .collect();
    Verdict {
        status: if failures.is_empty() {
            VerdictStatus::Passed
        } else {
            VerdictStatus::Failed
        },
        failures,
    }
}

fn channel_str(c: Channel) -> &'static str {
    match c {
        Channel::Decision => "decision",
        Channel::Input => "input",
    }
}

/// Whether a `reply` token matches the transcript: a regex token tests it, anything else is
/// a substring. `Err` (the message for the failed assertion) when the regex gave up after
/// `jsregex::MAX_MATCH_WORK` units (bounded work): both `includes` and `excludes` then fail.
fn token_matches(token: &str, transcript: &str) -> Result<bool, String> {
    match jsregex::compile_token(token) {
        Some(Ok(re)) => re.test(transcript).map_err(|e| format!("{token}: {e}")),
        _ => Ok(transcript.contains(token)),
    }
}

/// The record of one `reply` token: `want` is whether it should match (`includes`) or not.
fn reply_record(kind: &str, token: &str, transcript: &str, want: bool, step: usize) -> Record {
    match token_matches(token, transcript) {
        Ok(hit) => rec(kind, hit == want, Some(token.to_owned()), step),
        Err(why) => rec(kind, false, Some(why), step),
    }
}

/// Evaluates one assertion against the view; `grade` needs the policy and judge.
fn evaluate(
    form: &StepForm,
    view: &SessionView,
    step: usize,
    grades: &GradePolicy,
    has_judge_decl: bool,
    judge: Option<&mut dyn Judge>,
    evidence: Option<&str>,
) -> Vec<Record> {
    match form {
        StepForm::Succeeded => {
            let pass = !view.failed && !view.parked && view.raised.is_none();
            let detail = if let Some(r) = &view.raised {
                Some(format!("the session raised '{}': {}", r.code, r.reason))
            } else if view.parked {
                Some(format!(
                    "the session is parked ({}) in {}",
                    view.channel.map_or("?", channel_str),
                    view.state
                ))
            } else if view.failed {
                let bad = view
                    .tool_calls
                    .iter()
                    .filter(|c| c.status == "failed")
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>();
                Some(format!("a tool call failed: {}", bad.join(", ")))
            } else {
                None
            };
            vec![rec("succeeded", pass, detail, step)]
        }
        StepForm::Parked { channel, state } => {
            let mut pass = view.parked;
            if let Some(c) = channel {
                pass &= view.channel == Some(*c);
            }
            if let Some(s) = state {
                pass &= view.state == s.value;
            }
            let detail = if view.parked {
                format!(
                    "{} in {}",
                    view.channel.map_or("?", channel_str),
                    view.state
                )
            } else {
                format!(
                    "the session is not parked (status {}, state {})",
                    view.status.as_str(),
                    view.state
                )
            };
            let expected: Vec<String> = channel
                .map(|c| channel_str(c).to_owned())
                .into_iter()
                .chain(state.as_ref().map(|s| s.value.clone()))
                .collect();
            let detail = if pass || expected.is_empty() {
                detail
            } else {
                format!("expected {}; {detail}", expected.join(" in "))
            };
            vec![rec("parked", pass, Some(detail), step)]
        }
        StepForm::Raised { code, reason } => {
            let mut pass = view.raised.is_some();
            if let (Some(r), Some(c)) = (&view.raised, code) {
                pass &= r.code == *c;
            }
            let mut gave_up = None;
            if let (Some(r), Some(want)) = (&view.raised, reason) {
                match partial_match(
                    &Value::String(want.clone()),
                    Some(&Value::String(r.reason.clone())),
                ) {
                    Ok(hit) => pass &= hit,
                    Err(why) => {
                        pass = false;
                        gave_up = Some(why);
                    }
                }
            }
            let mut detail = format!(
                "code={} reason={}",
                code.as_deref().unwrap_or("*"),
                reason.as_deref().unwrap_or("*")
            );
            if let Some(why) = gave_up {
                detail.push_str(&format!("; {why}"));
            } else if !pass {
                match &view.raised {
                    Some(r) => detail.push_str(&format!("; raised '{}': {}", r.code, r.reason)),
                    None => detail.push_str("; the session did not raise"),
                }
            }
            vec![rec("raised", pass, Some(detail), step)]
        }
        StepForm::ReachedState(s) => {
            let pass = view
                .trail
                .iter()
                .any(|t| t.kind != "trigger" && t.to == s.value);
            let detail = if pass {
                s.value.clone()
            } else {
                let seen: Vec<&str> = view
                    .trail
                    .iter()
                    .filter(|t| t.kind != "trigger")
                    .map(|t| t.to.as_str())
                    .collect();
                format!(
                    "{} (committed: {})",
                    s.value,
                    if seen.is_empty() {
                        "none".to_owned()
                    } else {
                        seen.join(", ")
                    }
                )
            };
            vec![rec("reachedState", pass, Some(detail), step)]
        }
        StepForm::TriggerArrival(id) => {
            let pass = view
                .trail
                .iter()
                .any(|t| t.kind == "trigger" && t.reason.as_deref() == Some(id.value.as_str()));
            vec![rec("triggerArrival", pass, Some(id.value.clone()), step)]
        }
        StepForm::NoTraversal => {
            let others: Vec<String> = view
                .trail
                .iter()
                .filter(|t| t.kind != "trigger")
                .map(|t| format!("{} → {}", t.kind, t.to))
                .collect();
            let detail = if others.is_empty() {
                "no committed transitions".to_owned()
            } else {
                format!("committed: {}", others.join(", "))
            };
            vec![rec("noTraversal", others.is_empty(), Some(detail), step)]
        }
        StepForm::Trail {
            to,
            kind,
            reason,
            count,
        } => {
            let n = view
                .trail
                .iter()
                .filter(|t| {
                    to.as_ref().is_none_or(|x| t.to == x.value)
                        && kind.as_ref().is_none_or(|k| t.kind == k)
                        && reason
                            .as_ref()
                            .is_none_or(|r| t.reason.as_deref() == Some(r.as_str()))
                })
                .count();
            let mut parts = Vec::new();
            if let Some(t) = to {
                parts.push(format!("to={}", t.value));
            }
            if let Some(k) = kind {
                parts.push(format!("kind={k}"));
            }
            if let Some(r) = reason {
                parts.push(format!("reason={r}"));
            }
            parts.push(format!("expected {count}, saw {n}"));
            vec![rec(
                "trail",
                n as u64 == *count,
                Some(parts.join(" ")),
                step,
            )]
        }
        StepForm::Variables {
            expect,
            path,
            locked,
        } => {
            let mut out = Vec::new();
            for (name, expected) in expect {
                let name = &name.value;
                let p = path.iter().find(|(k, _)| k == name).map(|(_, p)| p.clone());
                let label = match &p {
                    Some(p) => format!("{name}.{p}"),
                    None => name.clone(),
                };
                let Some(stored) = view.variables.get(name) else {
                    out.push(rec(
                        "variables",
                        false,
                        Some(format!("{label} (not set)")),
                        step,
                    ));
                    if let Some((_, want)) = locked.iter().find(|(k, _)| k == name) {
                        out.push(rec(
                            "variables",
                            false,
                            Some(format!("{name} locked={want} (actual unset)")),
                            step,
                        ));
                    }
                    continue;
                };
                let actual = match &p {
                    Some(p) => resolve_path(&stored.value, &p.split('.').collect::<Vec<_>>()),
                    None => Some(&stored.value),
                };
                match actual {
                    None => out.push(rec(
                        "variables",
                        false,
                        Some(format!("{label} (path does not resolve)")),
                        step,
                    )),
                    Some(a) => {
                        let pass = deep_equal(a, expected);
                        let detail = if pass {
                            label.clone()
                        } else {
                            format!("{label}: expected {expected}, got {a}")
                        };
                        out.push(rec("variables", pass, Some(detail), step));
                    }
                }
                if let Some((_, want)) = locked.iter().find(|(k, _)| k == name) {
                    out.push(rec(
                        "variables",
                        stored.locked == *want,
                        Some(format!("{name} locked={want} (actual {})", stored.locked)),
                        step,
                    ));
                }
            }
            out
        }
        StepForm::Reply { includes, excludes } => {
            let transcript = if view.transcript.is_empty() {
                view.reply.clone().unwrap_or_default()
            } else {
                view.transcript.clone()
            };
            let mut out = Vec::new();
            for t in includes {
                out.push(reply_record(
                    "reply.includes",
                    &t.value,
                    &transcript,
                    true,
                    step,
                ));
            }
            for t in excludes {
                out.push(reply_record(
                    "reply.excludes",
                    &t.value,
                    &transcript,
                    false,
                    step,
                ));
            }
            out
        }
        StepForm::Tool { which, name, input } => {
            // A call whose input the matcher could not decide (bounded work) fails the
            // assertion whichever way it asks, with the reason in the detail.
            let mut gave_up = None;
            let decided: Vec<(&crate::sim::ToolCallFact, bool)> = view
                .tool_calls
                .iter()
                .filter(|c| c.name == name.value)
                .map(|c| {
                    let hit = match input.as_ref().map(|i| partial_match(i, Some(&c.input))) {
                        None | Some(Ok(true)) => true,
                        Some(Ok(false)) => false,
                        Some(Err(why)) => {
                            gave_up.get_or_insert(why);
                            false
                        }
                    };
                    (c, hit)
                })
                .collect();
            let matching = |c: &&crate::sim::ToolCallFact| {
                decided.iter().any(|(d, hit)| *hit && std::ptr::eq(*d, *c))
            };
            let (kind, pass) = match which {
                ToolAssertion::Called => {
                    ("calledTool", view.tool_calls.iter().any(|c| matching(&c)))
                }
                ToolAssertion::NotCalled => (
                    "notCalledTool",
                    !view.tool_calls.iter().any(|c| matching(&c)),
                ),
                ToolAssertion::Blocked => (
                    "blockedTool",
                    view.tool_calls
                        .iter()
                        .filter(matching)
                        .any(|c| c.status == "rejected"),
                ),
            };
            let pass = pass && gave_up.is_none();
            let mut detail = match input {
                Some(i) => format!("{} {i}", name.value),
                None => name.value.clone(),
            };
            if let Some(why) = &gave_up {
                detail.push_str(&format!("; {why}"));
            } else if !pass {
                let calls: Vec<String> = view
                    .tool_calls
                    .iter()
                    .filter(|c| c.name == name.value)
                    .map(|c| format!("{} ({})", c.input, c.status))
                    .collect();
                detail.push_str(&match (which, calls.is_empty()) {
                    (_, true) => format!("; no `{}` call was made", name.value),
                    _ => format!("; calls: {}", calls.join(", ")),
                });
            }
            vec![rec(kind, pass, Some(detail), step)]
        }
        StepForm::UsedNoTools => {
            let names: Vec<&str> = view.tool_calls.iter().map(|c| c.name.as_str()).collect();
            let detail = (!names.is_empty())
                .then(|| format!("{} tool call(s): {}", names.len(), names.join(", ")));
            vec![rec("usedNoTools", names.is_empty(), detail, step)]
        }
        StepForm::RanWorkflow {
            workflow,
            status,
            count,
        } => {
            let n = view
                .trail
                .iter()
                .filter(|t| {
                    t.kind == "sub-workflow"
                        && t.workflow.as_deref() == Some(workflow.value.as_str())
                        && t.status.unwrap_or("ok") == status
                })
                .count() as u64;
            let (pass, detail) = match count {
                None => (n > 0, format!("{} ({status})", workflow.value)),
                Some(c) => (n == *c, format!("{} ({status}, {n}/{c})", workflow.value)),
            };
            vec![rec("ranWorkflow", pass, Some(detail), step)]
        }
        StepForm::Grade {
            closed_qa,
            at_least,
        } => {
            let criterion = collapse_whitespace(closed_qa);
            let failed = |detail: String| Record {
                kind: "grade.closedQA".into(),
                threshold: Some(*at_least),
                status: RecordStatus::Failed,
                score: Some(0.0),
                detail: Some(detail),
                step,
            };
            if grades.skip {
                return vec![Record {
                    kind: "grade".into(),
                    threshold: Some(*at_least),
                    status: RecordStatus::NotExecuted,
                    score: None,
                    detail: Some(format!("{criterion} (skipped: --skip-grades)")),
                    step,
                }];
            }
            if !has_judge_decl {
                return vec![failed(format!(
                    "{criterion} (grading model unavailable: declare 'tests: {{ judge: ... }}' in workflow.yaml)"
                ))];
            }
            if let Some(why) = unavailable_reason(grades, judge.is_some()) {
                return vec![failed(format!(
                    "{criterion} (grading model unavailable: {why})"
                ))];
            }
            let Some(j) = judge else {
                return vec![failed(criterion)];
            };
            match j.grade(&criterion, evidence.unwrap_or_default()) {
                Ok((score, reason)) => {
                    let score = score.clamp(0.0, 1.0);
                    Record {
                        kind: "grade.closedQA".into(),
                        threshold: Some(*at_least),
                        status: if score >= *at_least {
                            RecordStatus::Passed
                        } else {
                            RecordStatus::Failed
                        },
                        score: Some(score),
                        detail: Some(match reason {
                            Some(r) => format!("{criterion}: {r}"),
                            None => criterion,
                        }),
                        step,
                    }
                    .into_vec()
                }
                Err(e) => vec![failed(format!("{criterion}: {e}"))],
            }
        }
        StepForm::Send(_) | StepForm::Decide { .. } | StepForm::Deliver { .. } => Vec::new(),
    }
}

impl Record {
    fn into_vec(self) -> Vec<Record> {
        vec![self]
    }
}

/// Reads a case file and reports parse errors the way the reference does (FORMAT §C.1):
/// any error-severity diagnostic of `check_file` means the case does not parse — except
/// `WFX313` ("no agent can pass this case"), a prediction about the run rather than a
/// reading of the file: such a case still runs, and fails where the run shows.
fn parse_errors(fs: &dyn FileAccess, path: &str) -> Option<String> {
    let diags = check::check_file(fs, path);
    let errors: Vec<String> = diags
        .iter()
        .filter(|d| {
            d.severity == Severity::Error
                && d.code.code != wfx_schemas::diagnostics::CASE_UNSATISFIABLE.code
        })
        .map(|d| d.message.clone())
        .collect();
    (!errors.is_empty()).then(|| format!("{path}: {}", errors.join("; ")))
}

/// The failed result of a case that does not parse: the id is the file path (FORMAT §C.1).
pub fn unparsed_result(path: &str, message: String) -> CaseResult {
    CaseResult {
        id: path.to_owned(),
        title: None,
        description: None,
        session_id: None,
        verdict: Verdict {
            status: VerdictStatus::Failed,
            failures: vec![message.clone()],
        },
        records: Vec::new(),
        skip_reason: None,
        not_run: None,
        error: Some(message),
        usage: None,
        warnings: Vec::new(),
    }
}

/// Runs one case (FORMAT §C.3 order of work). `agent`, `host` and `judge` are this case's.
pub fn run_case<'h>(
    env: &CaseEnv<'_>,
    path: &str,
    agent: &'h mut dyn Agent,
    host: &'h mut dyn ScriptHost,
    judge: Option<&'h mut dyn Judge>,
) -> CaseRun {
    // One regex work budget for the whole case (bounded work, docs/security.md §3):
    // reply tokens, tool-assertion inputs, `raised.reason` and mock `whenInput` share it.
    let _regex_budget = wfx_schemas::jsregex::MatchBudget::arm();
    let started = env.clock.now_ms();
    let finish = |result: CaseResult, flow: String, trail: Vec<(usize, TrailStep)>| CaseRun {
        path: path.to_owned(),
        result,
        flow,
        duration_ms: env.clock.now_ms().saturating_sub(started),
        trail,
        observed: crate::coverage::Observed::default(),
        evidence: Evidence::default(),
    };
    if let Some(msg) = parse_errors(env.fs, path) {
        return finish(unparsed_result(path, msg), String::new(), Vec::new());
    }
    let text = match env.fs.read_text(path) {
        Ok(t) => t,
        Err(FileError::OutsideWorkspace) => {
            return finish(
                unparsed_result(
                    path,
                    format!(
                        "'{path}' is a symbolic link that leaves the workspace; it was not read"
                    ),
                ),
                String::new(),
                Vec::new(),
            );
        }
        Err(_) => {
            return finish(
                unparsed_result(path, format!("missing test file '{path}'")),
                String::new(),
                Vec::new(),
            );
        }
    };
    let parsed = yaml::parse(&text);
    let Some(root) = parsed.documents.first().filter(|r| r.as_map().is_some()) else {
        return finish(
            unparsed_result(
                path,
                format!("{path}: a test case is a YAML mapping (title, description, steps, ...)"),
            ),
            String::new(),
            Vec::new(),
        );
    };
    let case = Case::from_node(root);
    let id = case_id(&env.dir.tests_dir(), path);
    let mut result = CaseResult {
        id,
        title: case.title.as_ref().map(|t| collapse_whitespace(&t.value)),
        description: case
            .description
            .as_ref()
            .map(|t| collapse_whitespace(&t.value)),
        session_id: None,
        verdict: Verdict {
            status: VerdictStatus::Passed,
            failures: Vec::new(),
        },
        records: Vec::new(),
        skip_reason: None,
        error: None,
        not_run: None,
        usage: None,
        warnings: Vec::new(),
    };
    if let Some(skip) = &case.skip {
        result.verdict.status = VerdictStatus::Skipped;
        result.skip_reason = Some(skip.value.clone());
        return finish(result, String::new(), Vec::new());
    }
    if let Some(why) = agent.not_run() {
        result.verdict.status = VerdictStatus::NotRun;
        result.not_run = Some(why);
        return finish(result, String::new(), Vec::new());
    }
    result.session_id = Some(format!(
        "test-default-test-run-{started}-{}",
        path.replace('/', "-")
    ));
    let mut flow = String::new();
    let mut trail = Vec::new();
    let mut observed = crate::coverage::Observed::default();
    let mut evidence = Evidence::default();
    let outcome = drive(
        env,
        path,
        &case,
        agent,
        host,
        judge,
        &mut result.records,
        &mut flow,
        &mut trail,
        &mut observed,
        &mut evidence,
    );
    match outcome {
        Ok(()) => result.verdict = reduce_verdict(&result.records),
        Err(SimError(message)) => {
            for step in &case.steps {
                if let Some(key) = step.key_str().filter(|k| is_assertion(k))
                    && !result.records.iter().any(|r| r.step == step.index)
                {
                    result.records.push(not_executed(key, step, None));
                }
            }
            result.records.sort_by_key(|r| r.step);
            let mut failures = vec![message.clone()];
            failures.extend(reduce_verdict(&result.records).failures);
            result.verdict = Verdict {
                status: VerdictStatus::Failed,
                failures,
            };
            result.error = Some(message);
        }
    }
    let mut run = finish(result, flow, trail);
    run.observed = observed;
    run.evidence = evidence;
    run
}

#[allow(clippy::too_many_arguments)]
fn drive<'h>(
    env: &CaseEnv<'_>,
    path: &str,
    case: &Case,
    agent: &'h mut dyn Agent,
    host: &'h mut dyn ScriptHost,
    judge: Option<&'h mut dyn Judge>,
    records: &mut Vec<Record>,
    flow: &mut String,
    trail: &mut Vec<(usize, TrailStep)>,
    observed: &mut crate::coverage::Observed,
    evidence: &mut Evidence,
) -> Result<(), SimError> {
    // Materialize seeds (FORMAT §B.8).
    // Bounded work: the seeds are read only while they fit the session folder's bound
    // together (`MAX_SESSION_DISK_BYTES`), so a case naming one 15 MB fixture 2,000 times
    // fails at its fifth read instead of holding 30 GB (break-it pass 4, F7).
    let tests_dir = env.dir.tests_dir();
    let mut seeds = Vec::new();
    let cap = crate::session_fs::MAX_SESSION_DISK_BYTES;
    let over = |seed: &str| {
        SimError(format!(
            "the workspace seeds up to '{seed}' hold more than the session folder's bound of {} MiB together; the case was not run",
            cap >> 20
        ))
    };
    let mut seeded: u64 = 0;
    for seed in &case.workspace {
        let content = match &seed.content {
            SeedContent::Inline(node) => seed_text(node),
            SeedContent::From(from) => {
                let rel = normalize_fixture(&from.value, path).map_err(SimError)?;
                let left = cap.saturating_sub(seeded);
                env.fs.read_text_max(&join(&tests_dir, &rel), left).map_err(|e| match e {
                    FileError::TooLarge { .. } => over(&seed.path.value),
                    FileError::OutsideWorkspace => SimError(format!("workspace entry '{}' references 'from: {}', but '{tests_dir}/{rel}' is a symbolic link that leaves the workspace; it was not read", seed.path.value, from.value)),
                    _ => SimError(format!("workspace entry '{}' references 'from: {}', but '{tests_dir}/{rel}' does not exist", seed.path.value, from.value)),
                })?
            }
        };
        seeded = seeded.saturating_add(content.len() as u64);
        if seeded > cap {
            return Err(over(&seed.path.value));
        }
        seeds.push((seed.path.value.clone(), content));
    }
    let cfg = SimConfig {
        workspace: env.fs,
        dir: env.dir.clone(),
        workflow: env.workflow,
        clock: env.clock,
        grades: env.grades.clone(),
    };
    let mut session = Session::new(cfg, case.mocks.clone())?;
    session.open(case.trigger_id())?;
    session.seed(&seeds)?;
    let mut sim = Simulator::new(session, agent, host, judge);
    let variables: Vec<(String, Value)> = case
        .variables
        .iter()
        .map(|(k, v)| (k.value.clone(), v.to_json()))
        .collect();
    // Clamped to the runner's ceiling (bounded work; `check` warns, WFX261).
    let timeout = env
        .workflow
        .case_timeout_ms
        .unwrap_or(120_000)
        .min(wfx_schemas::model::workflow::MAX_CASE_TIMEOUT_MS);
    // The case's time is measured on the run's clock even when the session runs on a
    // cassette's recorded clock (`Clock::limit_now_ms`, issue 24).
    let started = env.clock.limit_now_ms();
    sim.deadline_ms = Some(started.saturating_add(timeout));
    let mut result = Ok(());
    let mut halted_at = None;
    for step in &case.steps {
        if env.clock.limit_now_ms().saturating_sub(started) > timeout {
            result = Err(SimError(format!(
                "case '{}' timed out after {timeout}ms (tests.caseTimeoutMs)",
                case_id(&tests_dir, path)
            )));
            break;
        }
        let Some(key) = step.key_str() else {
            result = Err(SimError(format!(
                "step {} is not a single-key mapping",
                step.index + 1
            )));
            break;
        };
        let Some(form) = step.form() else {
            result = Err(SimError(format!(
                "step {} (`{key}`) does not have an accepted form",
                step.index + 1
            )));
            break;
        };
        let acted = match &form {
            StepForm::Send(message) => Some(sim.send(step.index, message, &variables)),
            StepForm::Decide { to, comment } => {
                Some(sim.decide(step.index, &to.value, comment.as_deref()))
            }
            StepForm::Deliver { trigger, variables } => {
                Some(sim.deliver(step.index, &trigger.value, variables))
            }
            _ => None,
        };
        if let Some(r) = acted {
            let recorded = sim.session.trail.iter().skip(trail.len());
            let tagged: Vec<_> = recorded.map(|t| (step.index, t.clone())).collect();
            trail.extend(tagged);
            if let Err(e) = r {
                // The case's time ran out inside the step (hooks, `sim.deadline_ms`): the
                // reference's timeout message, as between steps.
                result = Err(if e.0.starts_with(crate::sim::CASE_TIME_RAN_OUT) {
                    SimError(format!(
                        "case '{}' timed out after {timeout}ms (tests.caseTimeoutMs)",
                        case_id(&tests_dir, path)
                    ))
                } else {
                    e
                });
                break;
            }
            continue;
        }
        let view = sim.view();
        // The judge's evidence (FORMAT §B.6), built only for a `grade` step.
        let evidence = matches!(form, StepForm::Grade { .. }).then(|| {
            crate::model::judge::render_evidence(&sim.session.messages, view.reply.as_deref())
        });
        let out = evaluate(
            &form,
            &view,
            step.index,
            &env.grades,
            env.workflow.has_judge,
            sim.judge(),
            evidence.as_deref(),
        );
        let failed = out.iter().any(|r| r.status == RecordStatus::Failed);
        records.extend(out);
        if failed && is_structural(key) {
            halted_at = Some(step.index);
            break;
        }
    }
    // The last step may also use up the case's time: hooks cut at `sim.deadline_ms` end
    // exactly there (a cut hook reads as the hook's own failure), so a case that reached
    // its deadline fails with the timeout, as the reference's race against
    // `tests.caseTimeoutMs` would (`tests/breakit.rs::a_step_full_of_hooks_stops_at_the_case_timeout`).
    // `peek_ms`: a test clock's recorded timestamps do not move.
    if result.is_ok()
        && halted_at.is_none()
        && env.clock.limit_peek_ms().saturating_sub(started) >= timeout
    {
        result = Err(SimError(format!(
            "case '{}' timed out after {timeout}ms (tests.caseTimeoutMs)",
            case_id(&tests_dir, path)
        )));
    }
    if let Some(at) = halted_at {
        for step in case.steps.iter().filter(|s| s.index > at) {
            if let Some(key) = step.key_str().filter(|k| is_assertion(k)) {
                records.push(not_executed(key, step, None));
            }
        }
    }
    *observed = std::mem::take(&mut sim.session.observed);
    // A session refused at its start entered no state: name the start state anyway, so
    // the flow never shows a blank state name (issue 16).
    let entered = if sim.flow.is_empty() {
        vec![format!("{} (not entered)", sim.session.state)]
    } else {
        sim.flow.clone()
    };
    *evidence = std::mem::take(&mut sim.session.evidence);
    *flow = render_flow(
        &entered,
        sim.session.status,
        sim.session.raised.as_ref().map(|r| r.code.as_str()),
    );
    if result.is_err() {
        flow.push_str(" ✖");
    }
    result
}

/// `a → b → c` plus an end marker: ` ⏸` parked, ` ⚑ <code>` raised, ` ⛔` rejected.
pub fn render_flow(states: &[String], status: Status, raised: Option<&str>) -> String {
    let mut s = states.join(" → ");
    match status {
        Status::AwaitingDecision | Status::AwaitingInput => s.push_str(" ⏸"),
        Status::Failed => s.push_str(&format!(" ⚑ {}", raised.unwrap_or("raised"))),
        Status::Rejected => s.push_str(" ⛔"),
        Status::Running | Status::Completed => {}
    }
    s
}
