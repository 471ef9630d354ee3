//! Running cases from the editor (the "▶ Run case" / "▶ Run all cases" code lenses, issue 4
//! item 7) and the annotations a run leaves: per-step inlay hints (`✔ passed`,
//! `✖ failed: <detail>`, `○ not executed`), `wfx-run` diagnostics on failed steps, and a
//! verdict lens (`✔ passed · 6/6 steps · 3 ms`).
//!
//! Two backends produce the same [`CaseOutcome`]: the bundled runner
//! (`wfx_runner::suite::run_case_file`, synchronous, called per case inside
//! `spawn_blocking`) and an external command (`wfx.runner.command`) that prints the
//! `RunTestsResult` JSON of `wfx-lsp test --json` (FORMAT §C.3, §C.4) on stdout.
//!
//! Annotations belong to the text they ran on: each outcome stores the case text; it is
//! shown only while the document's text is exactly that text. An edit (`didChange`) drops
//! the case's annotations at once (chosen over "mark stale": a stale ✔ on edited steps
//! misleads more than no mark). The last run's graph path of a case is kept for the session
//! (`wfx/graph`), edits or not.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use wfx_schemas::graph::CasePath;
use wfx_schemas::model::case::Case;
use wfx_schemas::text::TextRange;
use wfx_schemas::workspace::{WorkflowDir, case_id};
use wfx_schemas::yaml;

/// Command ids announced in `executeCommandProvider`.
pub const RUN_CASE: &str = "wfx.runCase";
/// Runs every case of the workflow of the given `workflow.yaml` (or case) URI.
pub const RUN_ALL_CASES: &str = "wfx.runAllCases";
/// Cancels the running run of the given URI (also `window/workDoneProgress/cancel`).
pub const CANCEL_RUN: &str = "wfx.cancelRun";
/// Answers the last run's full transcript of the given case URI as Markdown:
/// `{title, markdown}`, or `null` when the case has not run in this session (issue 16).
pub const SHOW_TRANSCRIPT: &str = "wfx.showTranscript";

/// Most evidence entries kept from one case's outcome (bounded work; the runner keeps at
/// most [`wfx_runner::evidence::MAX_ENTRIES`] plus one, an external command may send more).
pub const MAX_EVIDENCE_ITEMS: usize = wfx_runner::evidence::MAX_ENTRIES + 1;

/// One evidence entry as the editor shows it (issue 16): from the bundled runner's
/// `CaseRun::evidence`, or the `evidence` array of an external runner's `--json`
/// (docs/cli.md). Raw text: escaped where shown ([`step_evidence_markdown`],
/// [`transcript_markdown`]).
#[derive(Clone, Debug, PartialEq)]
pub struct EvidenceItem {
    /// The case step that drove it, 1-based.
    pub step_number: usize,
    /// The state it happened in.
    pub state: String,
    /// What happened, one line.
    pub summary: String,
    /// A tool's output or a multi-line message, when there is more than the summary.
    pub detail: Option<String>,
    /// It explains a failure (a refusal, a veto, a failed tool call, a rejection note).
    pub refusal: bool,
}

/// How long an external runner command may take before it is killed.
pub const EXTERNAL_TIMEOUT: Duration = Duration::from_secs(300);

/// One assertion record: step index, `passed`/`failed`/`not-executed`, kind, detail.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordOutcome {
    /// Index into the case's `steps`.
    pub step: usize,
    /// `passed`, `failed` or `not-executed` (FORMAT §C.3).
    pub status: String,
    /// `reply.includes`, …
    pub kind: String,
    /// Why, if given.
    pub detail: Option<String>,
}

/// What a run of one case produced, whichever backend ran it.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseOutcome {
    /// `passed`, `failed`, `skipped` or `not-run` (no agent, issue 15).
    pub verdict: String,
    /// Records in step order.
    pub records: Vec<RecordOutcome>,
    /// The error of a case that died; for `not-run`, why (with the hint).
    pub error: Option<String>,
    /// Wall time, ms.
    pub duration_ms: u64,
    /// The path through the graph (the bundled runner only).
    pub path: Option<CasePath>,
    /// What happened, in order (empty when the runner gave none).
    pub evidence: Vec<EvidenceItem>,
}

/// An outcome pinned to the case text it ran on.
#[derive(Clone, Debug)]
pub struct Annotation {
    /// The case text at run time.
    pub text: Arc<str>,
    /// The outcome.
    pub outcome: CaseOutcome,
}

/// A cancel token shared by a run and whoever may cancel it.
pub type CancelToken = Arc<AtomicBool>;

/// Reads one `CaseResult` JSON object (FORMAT §C.3).
fn outcome_from_json(v: &Value, duration_ms: u64) -> CaseOutcome {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    CaseOutcome {
        verdict: v
            .get("verdict")
            .and_then(|x| s(x, "status"))
            .unwrap_or_else(|| "failed".into()),
        records: v
            .get("records")
            .and_then(Value::as_array)
            .map(|rs| {
                rs.iter()
                    .map(|r| RecordOutcome {
                        step: r
                            .get("step")
                            .and_then(Value::as_u64)
                            .and_then(|n| usize::try_from(n).ok())
                            .unwrap_or(0),
                        status: s(r, "status").unwrap_or_else(|| "failed".into()),
                        kind: s(r, "kind").unwrap_or_default(),
                        detail: s(r, "detail"),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        error: s(v, "error").or_else(|| s(v, "notRun")),
        duration_ms,
        path: None,
        evidence: v
            .get("evidence")
            .and_then(Value::as_array)
            .map(|es| {
                es.iter()
                    .take(MAX_EVIDENCE_ITEMS)
                    .map(|e| EvidenceItem {
                        step_number: e
                            .get("stepNumber")
                            .and_then(Value::as_u64)
                            .and_then(|n| usize::try_from(n).ok())
                            .unwrap_or(0),
                        state: s(e, "state").unwrap_or_default(),
                        summary: s(e, "summary").or_else(|| s(e, "kind")).unwrap_or_default(),
                        detail: s(e, "output")
                            .or_else(|| s(e, "text").filter(|t| t.contains('\n'))),
                        refusal: e.get("refusal").and_then(Value::as_bool).unwrap_or(false),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// A fenced code block holding `text` (made inert), with a fence longer than any run of
/// backticks inside it, so the text cannot close it (report escaping for Markdown).
fn code_block(text: &str) -> String {
    let text = wfx_schemas::inert::inert_lines(text);
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}text\n{text}\n{fence}\n")
}

/// One evidence entry as a Markdown list item: `**step N** · in `state` · summary`, the
/// detail (at most `max_lines` lines) in a code block below it.
fn item_markdown(e: &EvidenceItem, max_lines: usize) -> String {
    let mut out = format!(
        "- **step {}** · in {} · {}\n",
        e.step_number,
        wfx_runner::report::md(&e.state),
        wfx_runner::report::md(&e.summary)
    );
    if let Some(d) = &e.detail {
        let lines: Vec<&str> = d.lines().collect();
        let one_line_reason = lines.len() <= 1 && e.summary.contains(d.trim());
        if !one_line_reason {
            let mut shown = lines
                .iter()
                .take(max_lines)
                .copied()
                .collect::<Vec<_>>()
                .join("\n");
            if lines.len() > max_lines {
                shown.push_str(&format!("\n… {} more lines", lines.len() - max_lines));
            }
            for l in code_block(&shown).lines() {
                out.push_str("  ");
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    out
}

/// The hover text of a failed step (0-based `index`) of `o`: the entries that explain a
/// failure up to that step (1-based numbers as everywhere people read them), then the
/// step's own entries; `None` when the outcome carries no evidence for it. Markdown,
/// escaped; at most 40 entries, details at most 20 lines each.
pub fn step_evidence_markdown(o: &CaseOutcome, index: usize) -> Option<String> {
    let n = index + 1;
    let why: Vec<&EvidenceItem> = o
        .evidence
        .iter()
        .filter(|e| e.refusal && e.step_number <= n)
        .collect();
    let own: Vec<&EvidenceItem> = o
        .evidence
        .iter()
        .filter(|e| e.step_number == n && !e.refusal)
        .collect();
    if why.is_empty() && own.is_empty() {
        return None;
    }
    let mut out = format!("**Evidence of step {n}** (last run)\n\n");
    if !why.is_empty() {
        out.push_str("Refused or failed:\n\n");
        for e in why.iter().take(20) {
            out.push_str(&item_markdown(e, 20));
        }
    }
    if !own.is_empty() {
        out.push_str("\nWhat this step did:\n\n");
        for e in own.iter().take(20) {
            out.push_str(&item_markdown(e, 20));
        }
    }
    Some(out)
}

/// The full transcript of a case's last run as a Markdown document (the
/// `wfx.showTranscript` command): a heading with the case path and verdict, then every
/// evidence entry in order, refusals marked ✖. Escaped; details at most 200 lines each.
pub fn transcript_markdown(case: &str, o: &CaseOutcome) -> String {
    let mut out = format!(
        "# Transcript of {}\n\nVerdict: **{}** · {} ms · {} entries\n\n",
        wfx_runner::report::md(case),
        wfx_runner::report::md(&o.verdict),
        o.duration_ms,
        o.evidence.len()
    );
    if let Some(e) = &o.error {
        out.push_str("The case died:\n\n");
        out.push_str(&code_block(e));
        out.push('\n');
    }
    let mut step = 0;
    for e in &o.evidence {
        if e.step_number != step {
            step = e.step_number;
            out.push_str(&format!("\n## Step {step}\n\n"));
        }
        let mut item = item_markdown(e, 200);
        if e.refusal {
            item = item.replacen("- ", "- ✖ ", 1);
        }
        out.push_str(&item);
    }
    if o.evidence.is_empty() {
        out.push_str(
            "The run recorded nothing (the case did not run, or the runner gives no evidence).\n",
        );
    }
    out
}

/// The outcome of a bundled-runner case run.
pub fn outcome_from_run(run: &wfx_runner::interpret::CaseRun) -> CaseOutcome {
    let mut v = serde_json::to_value(&run.result).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.insert("evidence".into(), run.evidence.to_json());
    }
    let mut o = outcome_from_json(&v, run.duration_ms);
    o.path = Some(wfx_runner::path::case_path(run));
    o
}

/// Parses an external command's stdout (one `RunTestsResult` or an array of them) and
/// returns the result of each wanted case path, matched by case id. A case missing from the
/// output gets a failed outcome saying so.
pub fn parse_external(
    stdout: &str,
    dir: &WorkflowDir,
    cases: &[String],
    duration_ms: u64,
) -> Result<Vec<(String, CaseOutcome)>, String> {
    let v: Value = serde_json::from_str(stdout.trim())
        .map_err(|e| format!("the runner command did not print RunTestsResult JSON: {e}"))?;
    let suites = match &v {
        Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    };
    let results: Vec<&Value> = suites
        .iter()
        .filter_map(|s| s.get("results").and_then(Value::as_array))
        .flatten()
        .collect();
    let tests = dir.tests_dir();
    Ok(cases
        .iter()
        .map(|c| {
            let id = case_id(&tests, c);
            let o = results
                .iter()
                .find(|r| r.get("id").and_then(Value::as_str) == Some(id.as_str()))
                .map(|r| outcome_from_json(r, duration_ms))
                .unwrap_or_else(|| CaseOutcome {
                    verdict: "failed".into(),
                    records: Vec::new(),
                    error: Some(format!("the runner command reported no result for `{id}`")),
                    duration_ms,
                    path: None,
                    evidence: Vec::new(),
                });
            (c.clone(), o)
        })
        .collect())
}

/// Runs the external command `command` (split on whitespace) in `root` with the workflow
/// folder, the case filter (when one case), `--json` and, with `skip_grades`,
/// `--skip-grades`. Polls every 20 ms; kills the child on cancel or after `timeout`.
pub fn run_external(
    command: &str,
    root: &Path,
    dir: &WorkflowDir,
    filter: Option<&str>,
    skip_grades: bool,
    cancel: &AtomicBool,
    timeout: Duration,
) -> Result<(String, u64), String> {
    let mut parts = command.split_whitespace();
    let program = parts.next().ok_or("wfx.runner.command is empty")?;
    let mut cmd = Command::new(program);
    cmd.args(parts)
        .arg(root.join(dir.dir()))
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(f) = filter {
        cmd.arg(f);
    }
    cmd.arg("--json");
    if skip_grades {
        cmd.arg("--skip-grades");
    }
    // Its own process group, so that cancelling kills whatever the command started too.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    let mut out = child.stdout.take();
    // Read stdout on a thread so a chatty child never blocks on a full pipe.
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for `{program}` failed: {e}")),
        }
        if cancel.load(Ordering::SeqCst) {
            kill_tree(&mut child);
            return Err("cancelled".into());
        }
        if started.elapsed() > timeout {
            kill_tree(&mut child);
            return Err(format!(
                "`{program}` timed out after {} s",
                timeout.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let stdout = reader.join().unwrap_or_default();
    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok((stdout, ms))
}

/// Kills the runner command and (on Unix) every process of its group, then reaps it.
fn kill_tree(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let pid = rustix::process::Pid::from_child(child);
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A step's outcome for its inlay hint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepMark {
    /// Every record passed, or an action that ran.
    Passed,
    /// A record failed; the first failure's `kind: detail`.
    Failed(String),
    /// Not executed (after a halt or a death, or a skipped grade).
    NotExecuted,
}

impl StepMark {
    /// The hint label; failure details are cut at 60 characters.
    pub fn label(&self) -> String {
        match self {
            StepMark::Passed => "✔ passed".into(),
            StepMark::NotExecuted => "○ not executed".into(),
            StepMark::Failed(d) => {
                let mut s: String = d.chars().take(60).collect();
                if d.chars().count() > 60 {
                    s.push('…');
                }
                format!("✖ failed: {s}")
            }
        }
    }
}

/// One annotated step: its range in the case text, the byte offset of its first line's
/// end (where the hint goes) and its mark.
#[derive(Clone, Debug)]
pub struct StepAnnotation {
    /// The step's index.
    pub index: usize,
    /// The step item's range.
    pub range: TextRange,
    /// The key's range (the step item's when there is no key).
    pub key_range: TextRange,
    /// End of the step's first line (bytes).
    pub hint_at: u32,
    /// The outcome.
    pub mark: StepMark,
}

/// Marks each step of the case `text` with `o` (FORMAT §B.2–§B.5, §C.3). Steps with
/// records: failed if any failed, not executed if all are, else passed. Action steps (no
/// records): not executed when a not-executed record precedes them (the run halted or died
/// before), else passed. A skipped case, or one not run for want of an agent, marks
/// nothing (never a silent pass).
pub fn step_annotations(text: &str, o: &CaseOutcome) -> Vec<StepAnnotation> {
    if o.verdict == "skipped" || o.verdict == "not-run" {
        return Vec::new();
    }
    let parsed = yaml::parse(text);
    let Some(root) = parsed.documents.first() else {
        return Vec::new();
    };
    let case = Case::from_node(root);
    let first_ne = o
        .records
        .iter()
        .filter(|r| r.status == "not-executed" && !r.kind.starts_with("grade"))
        .map(|r| r.step)
        .min();
    case.steps
        .iter()
        .map(|s| {
            let recs: Vec<&RecordOutcome> =
                o.records.iter().filter(|r| r.step == s.index).collect();
            let mark = if let Some(f) = recs.iter().find(|r| r.status == "failed") {
                StepMark::Failed(match &f.detail {
                    Some(d) => format!("{}: {d}", f.kind),
                    None => f.kind.clone(),
                })
            } else if (!recs.is_empty() && recs.iter().all(|r| r.status == "not-executed"))
                || (recs.is_empty() && first_ne.is_some_and(|n| n < s.index))
            {
                StepMark::NotExecuted
            } else {
                StepMark::Passed
            };
            let start = s.range.start as usize;
            let line_end = text
                .get(start..)
                .and_then(|t| t.find(['\n', '\r']))
                .map_or(text.len(), |n| start + n);
            StepAnnotation {
                index: s.index,
                range: s.range,
                key_range: s.key.as_ref().map_or(s.range, |k| k.range),
                hint_at: u32::try_from(line_end).unwrap_or(u32::MAX),
                mark,
            }
        })
        .collect()
}

/// The verdict lens title, e.g. `✔ passed · 6/6 steps · 3 ms` or
/// `✖ failed · 2/5 steps · 12 ms`: steps marked passed over all steps.
pub fn verdict_title(o: &CaseOutcome, steps: &[StepAnnotation]) -> String {
    let icon = match o.verdict.as_str() {
        "passed" => "✔",
        "skipped" => "○",
        _ => "✖",
    };
    if o.verdict == "skipped" {
        return format!("{icon} skipped");
    }
    if o.verdict == "not-run" {
        let why: String = o
            .error
            .as_deref()
            .unwrap_or("no agent")
            .chars()
            .take(80)
            .collect();
        return format!("⊘ not run · {why}");
    }
    let passed = steps.iter().filter(|s| s.mark == StepMark::Passed).count();
    let mut t = format!(
        "{icon} {} · {passed}/{} steps · {} ms",
        o.verdict,
        steps.len(),
        o.duration_ms
    );
    if let Some(e) = &o.error {
        let e: String = e.chars().take(80).collect();
        t.push_str(&format!(" · {e}"));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    const CASE: &str = "title: t\nsteps:\n  - send: hi\n  - reachedState: a\n  - replied: true\n";

    fn rec(step: usize, status: &str) -> RecordOutcome {
        RecordOutcome {
            step,
            status: status.into(),
            kind: "reachedState".into(),
            detail: Some("wanted a".into()),
        }
    }

    #[test]
    fn steps_after_a_halt_are_not_executed() {
        let o = CaseOutcome {
            verdict: "failed".into(),
            records: vec![rec(1, "failed"), rec(2, "not-executed")],
            error: None,
            duration_ms: 3,
            path: None,
            evidence: Vec::new(),
        };
        let a = step_annotations(CASE, &o);
        let labels: Vec<String> = a.iter().map(|s| s.mark.label()).collect();
        assert_eq!(
            labels,
            [
                "✔ passed",
                "✖ failed: reachedState: wanted a",
                "○ not executed"
            ]
        );
        assert_eq!(
            &CASE[..a[0].hint_at as usize],
            "title: t\nsteps:\n  - send: hi"
        );
        assert_eq!(verdict_title(&o, &a), "✖ failed · 1/3 steps · 3 ms");
    }

    #[test]
    fn external_json_is_matched_by_case_id() {
        let dir = WorkflowDir {
            root: String::new(),
            slug: "w".into(),
        };
        let json = r#"{"workflow":"w","results":[{"id":"a","verdict":{"status":"passed","failures":[]},"records":[{"kind":"replied","threshold":null,"status":"passed","step":1}]}],"exitCode":0,"discovered":1}"#;
        let cases = vec![
            "workflows/w/tests/a.test.yaml".to_owned(),
            "workflows/w/tests/b.test.yaml".to_owned(),
        ];
        let got = parse_external(json, &dir, &cases, 7).unwrap();
        assert_eq!(got[0].1.verdict, "passed");
        assert_eq!(got[0].1.records[0].step, 1);
        assert_eq!(got[1].1.verdict, "failed");
        assert!(parse_external("nope", &dir, &cases, 7).is_err());
    }
}
