//! Reporters for `wfx-lsp test` (FORMAT §C.4): the stderr narration (header, per case its
//! state flow and verdict line with indented failures, `N assertions not executed`, a
//! summary), the stdout summary line, JUnit XML, Markdown, and the `history.jsonl` row.
//! Every reporter writes to any `Write`; output depends only on its input.
//!
//! Each escapes for where it is read (security promises "inert output" and "report
//! escaping"): the narration goes through [`inert`] (terminal controls shown as `\u{1b}`),
//! JUnit through [`xml`] and [`xml_attr`] (markup escaped, characters XML 1.0 forbids replaced by U+FFFD),
//! Markdown through [`md`] (no raw HTML, no code spans, no table breaks), and the history
//! row through serde_json.

use std::io::{self, Write};

use serde::Serialize;
use wfx_schemas::inert::{inert, inert_lines, is_unsafe};

use crate::interpret::{CaseRun, RecordStatus, VerdictStatus};
use crate::suite::SuiteRun;

/// Passed, failed, skipped and not-run counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Passed cases.
    pub passed: usize,
    /// Failed cases.
    pub failed: usize,
    /// Skipped cases.
    pub skipped: usize,
    /// Cases not run for want of an agent (issue 15), counted apart from failures.
    pub not_run: usize,
}

impl Counts {
    /// Counts of one suite.
    pub fn of(run: &SuiteRun) -> Self {
        let mut c = Counts::default();
        for r in &run.result.results {
            match r.verdict.status {
                VerdictStatus::Passed => c.passed += 1,
                VerdictStatus::Failed => c.failed += 1,
                VerdictStatus::Skipped => c.skipped += 1,
                VerdictStatus::NotRun => c.not_run += 1,
            }
        }
        c
    }

    /// Adds another suite's counts.
    pub fn add(&mut self, o: Counts) {
        self.passed += o.passed;
        self.failed += o.failed;
        self.skipped += o.skipped;
        self.not_run += o.not_run;
    }

    /// `P passed, F failed, S skipped`, then `, N not run (no agent)` when N > 0.
    pub fn line(&self) -> String {
        let mut s = format!(
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        );
        if self.not_run > 0 {
            s.push_str(&format!(", {} not run (no agent)", self.not_run));
        }
        s
    }

    /// Every case counted.
    pub fn total(&self) -> usize {
        self.passed + self.failed + self.skipped + self.not_run
    }
}

/// The suite header on stderr: the workflow, the case count and the selection rule that
/// gives each case its agent (docs/cli.md "Which agent a case gets"): its cassette, else its
/// agent script, else (`live`, i.e. `--live`) the model.
pub fn header(w: &mut dyn Write, workflow: &str, cases: usize, live: bool) -> io::Result<()> {
    writeln!(
        w,
        "wfx-lsp test · {} · {cases} case{} · deterministic runner · agent: cassette, else agent script{}",
        inert(workflow),
        if cases == 1 { "" } else { "s" },
        if live { ", else live model" } else { "" }
    )
}

/// One case's narration: a dimmed header, its state flow, the verdict line, indented
/// failures, grade scores and the not-executed count.
pub fn case(w: &mut dyn Write, run: &CaseRun) -> io::Result<()> {
    let r = &run.result;
    writeln!(w)?;
    match &r.title {
        Some(t) => writeln!(w, "  {} · {}", inert(&r.id), inert(t))?,
        None => writeln!(w, "  {}", inert(&r.id))?,
    }
    if !run.flow.is_empty() {
        writeln!(w, "    {}", inert(&run.flow))?;
    }
    match r.verdict.status {
        VerdictStatus::Passed => writeln!(w, "  ✔ passed ({} ms)", run.duration_ms)?,
        VerdictStatus::Failed => writeln!(w, "  ✖ failed ({} ms)", run.duration_ms)?,
        VerdictStatus::Skipped => writeln!(
            w,
            "  ○ skipped: {}",
            inert(r.skip_reason.as_deref().unwrap_or(""))
        )?,
        VerdictStatus::NotRun => writeln!(
            w,
            "  ⊘ not run: {}",
            inert(r.not_run.as_deref().unwrap_or("no agent"))
        )?,
    }
    for warning in &r.warnings {
        writeln!(w, "      ⚠ {}", inert(warning))?;
    }
    for f in &r.verdict.failures {
        let f = inert_lines(f);
        let mut lines = f.lines();
        if let Some(first) = lines.next() {
            writeln!(w, "      {first}")?;
        }
        for l in lines {
            writeln!(w, "        {l}")?;
        }
    }
    for rec in r.records.iter().filter(|x| x.kind == "grade.closedQA") {
        if let (Some(s), Some(t)) = (rec.score, rec.threshold) {
            writeln!(w, "      grade {s} (at least {t})")?;
        }
    }
    let skipped_grades = r
        .records
        .iter()
        .filter(|x| {
            x.kind == "grade" && x.status == RecordStatus::NotExecuted && x.detail.is_some()
        })
        .count();
    let not_executed = r
        .records
        .iter()
        .filter(|x| x.status == RecordStatus::NotExecuted)
        .count()
        - skipped_grades;
    if not_executed > 0 {
        writeln!(
            w,
            "      {not_executed} assertion{} not executed",
            if not_executed == 1 { "" } else { "s" }
        )?;
    }
    if skipped_grades > 0 {
        writeln!(
            w,
            "      {skipped_grades} grade{} skipped (--skip-grades)",
            if skipped_grades == 1 { "" } else { "s" }
        )?;
    }
    Ok(())
}

/// The evidence of one case in the narration (issue 16), after [`case`]: with `verbose`,
/// every entry of the record, each as `step N · in <state> · <what happened>` (1-based step
/// numbers) with a tool call's output indented under it; otherwise, for a failed case only,
/// the entries that explain the failure ([`crate::evidence::Entry::is_refusal`]: vetoes,
/// refusals, failed tool calls with their output, rejection notes) up to the failing step.
/// Inert output: every line goes through `inert`.
pub fn case_evidence(w: &mut dyn Write, run: &CaseRun, verbose: bool) -> io::Result<()> {
    let ev = &run.evidence;
    if ev.entries.is_empty() {
        return Ok(());
    }
    if verbose {
        writeln!(w, "      evidence ({} entries):", ev.entries.len())?;
        for e in &ev.entries {
            entry_lines(w, e, 8, usize::MAX)?;
        }
        return Ok(());
    }
    let explaining = explaining(run);
    if explaining.is_empty() {
        return Ok(());
    }
    writeln!(w, "      why (--verbose for the whole record):")?;
    for e in explaining.into_iter().take(20) {
        entry_lines(w, e, 8, 12)?;
    }
    Ok(())
}

/// The evidence entries that explain a failed case (none for a case that did not fail):
/// the refusals up to its first failed step, or all of them when the case died.
pub fn explaining(run: &CaseRun) -> Vec<&crate::evidence::Entry> {
    if run.result.verdict.status != VerdictStatus::Failed {
        return Vec::new();
    }
    let first_failed = run
        .result
        .records
        .iter()
        .filter(|r| r.status == RecordStatus::Failed)
        .map(|r| r.step)
        .min();
    let up_to = if run.result.error.is_some() {
        None
    } else {
        first_failed
    };
    run.evidence.refusals(up_to).collect()
}

/// One evidence entry: its line, then its detail (a tool's output) indented, at most
/// `max_detail` lines (then `… N more lines`).
fn entry_lines(
    w: &mut dyn Write,
    e: &crate::evidence::Entry,
    indent: usize,
    max_detail: usize,
) -> io::Result<()> {
    let pad = " ".repeat(indent);
    writeln!(w, "{pad}{}", inert(&e.line()))?;
    if let Some(d) = e.event.detail() {
        let d = inert_lines(d);
        let lines: Vec<&str> = d.lines().collect();
        // A one-line output already shows as the summary's reason (refusals, failures) or
        // as the summary itself (messages).
        let said = match &e.event {
            crate::evidence::Event::ToolCall { reason, .. } => reason.is_some(),
            _ => true,
        };
        if lines.len() <= 1 && said {
            return Ok(());
        }
        for l in lines.iter().take(max_detail) {
            writeln!(w, "{pad}  │ {l}")?;
        }
        if lines.len() > max_detail {
            writeln!(w, "{pad}  │ … {} more lines", lines.len() - max_detail)?;
        }
    }
    Ok(())
}

/// The `--json` value of one suite: the reference's `RunTestsResult` (FORMAT §C.3) with one
/// key added to each case result after the reference's keys: `evidence`, the case's
/// evidence ([`crate::evidence`]; `[]` when the case did not run). Documented in
/// docs/cli.md.
pub fn result_json(run: &SuiteRun) -> serde_json::Value {
    let mut v = serde_json::to_value(&run.result).unwrap_or_default();
    if let Some(results) = v
        .get_mut("results")
        .and_then(serde_json::Value::as_array_mut)
    {
        for (r, case) in results.iter_mut().zip(&run.cases) {
            if let Some(obj) = r.as_object_mut() {
                obj.insert("evidence".into(), case.evidence.to_json());
            }
        }
    }
    v
}

/// The closing summary on stderr.
pub fn summary(w: &mut dyn Write, run: &SuiteRun) -> io::Result<()> {
    let c = Counts::of(run);
    writeln!(w)?;
    let names = |s: VerdictStatus| -> Vec<String> {
        run.result
            .results
            .iter()
            .filter(|r| r.verdict.status == s)
            .map(|r| inert(&r.id).into_owned())
            .collect()
    };
    writeln!(
        w,
        "{}: {} ({} ms)",
        inert(&run.result.workflow),
        c.line(),
        run.duration_ms
    )?;
    for (label, s) in [
        ("failed", VerdictStatus::Failed),
        ("skipped", VerdictStatus::Skipped),
        ("not run (no agent)", VerdictStatus::NotRun),
    ] {
        let n = names(s);
        if !n.is_empty() {
            writeln!(w, "  {label}: {}", n.join(", "))?;
        }
    }
    Ok(())
}

/// Text for XML 1.0 element content: `& < > " '` as entities (so `]]>` and `-->` cannot
/// appear either), carriage return as `&#13;`, and every character XML 1.0 forbids (C0
/// controls but tab and line feed, U+FFFE, U+FFFF), the discouraged DEL and C1 controls and
/// the bidi controls of [`is_unsafe`] as U+FFFD, so the document stays well-formed and inert whatever a title or message holds.
pub fn xml(s: &str) -> String {
    xml_escape(s, false)
}

/// [`xml`] for an attribute value: tab and line feed also as character references, so
/// attribute-value normalisation keeps them.
pub fn xml_attr(s: &str) -> String {
    xml_escape(s, true)
}

fn xml_escape(s: &str, attr: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' if attr => out.push_str("&#9;"),
            '\n' if attr => out.push_str("&#10;"),
            '\t' | '\n' => out.push(c),
            '\r' => out.push_str("&#13;"),
            '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            c if is_unsafe(c) => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

fn secs(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// JUnit XML: one `<testsuite>` per workflow, one `<testcase>` per case.
pub fn junit(w: &mut dyn Write, runs: &[SuiteRun]) -> io::Result<()> {
    let mut total = Counts::default();
    let mut ms = 0;
    for r in runs {
        total.add(Counts::of(r));
        ms += r.duration_ms;
    }
    writeln!(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
    writeln!(
        w,
        "<testsuites name=\"wfx-lsp test\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{}\">",
        total.total(),
        total.failed,
        total.skipped + total.not_run,
        secs(ms)
    )?;
    for run in runs {
        let c = Counts::of(run);
        writeln!(
            w,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{}\">",
            xml_attr(&run.result.workflow),
            c.total(),
            c.failed,
            c.skipped + c.not_run,
            secs(run.duration_ms)
        )?;
        for case in &run.cases {
            let r = &case.result;
            let name = match &r.title {
                Some(t) => format!("{} · {t}", r.id),
                None => r.id.clone(),
            };
            write!(
                w,
                "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" time=\"{}\"",
                xml_attr(&run.result.workflow),
                xml_attr(&name),
                xml_attr(&case.path),
                secs(case.duration_ms)
            )?;
            let props = r.usage.map(|u| junit_usage(&u)).unwrap_or_default();
            match r.verdict.status {
                VerdictStatus::Passed if props.is_empty() => writeln!(w, "/>")?,
                VerdictStatus::Passed => {
                    writeln!(w, ">")?;
                    write!(w, "{props}")?;
                    writeln!(w, "    </testcase>")?;
                }
                VerdictStatus::Skipped => {
                    writeln!(w, ">")?;
                    write!(w, "{props}")?;
                    writeln!(
                        w,
                        "      <skipped message=\"{}\"/>",
                        xml_attr(r.skip_reason.as_deref().unwrap_or(""))
                    )?;
                    writeln!(w, "    </testcase>")?;
                }
                // JUnit has no "not run": a skipped test case whose message starts
                // `not run: ` (docs/cli.md), counted in `skipped`; the exit code, not
                // the XML, is what fails CI.
                VerdictStatus::NotRun => {
                    writeln!(w, ">")?;
                    writeln!(
                        w,
                        "      <skipped message=\"not run: {}\"/>",
                        xml_attr(r.not_run.as_deref().unwrap_or("no agent"))
                    )?;
                    writeln!(w, "    </testcase>")?;
                }
                VerdictStatus::Failed => {
                    writeln!(w, ">")?;
                    write!(w, "{props}")?;
                    let first = r
                        .verdict
                        .failures
                        .first()
                        .map(String::as_str)
                        .unwrap_or("failed");
                    let tag = if r.error.is_some() {
                        "error"
                    } else {
                        "failure"
                    };
                    let mut body = r.verdict.failures.join("\n");
                    let why = explaining(case);
                    if !why.is_empty() {
                        body.push_str("\nwhy:");
                        for e in why.iter().take(20) {
                            body.push_str("\n  ");
                            body.push_str(&e.line());
                        }
                    }
                    writeln!(
                        w,
                        "      <{tag} message=\"{}\">{}</{tag}>",
                        xml_attr(first.lines().next().unwrap_or("")),
                        xml(&body)
                    )?;
                    if !case.flow.is_empty() {
                        writeln!(w, "      <system-out>{}</system-out>", xml(&case.flow))?;
                    }
                    writeln!(w, "    </testcase>")?;
                }
            }
        }
        writeln!(w, "  </testsuite>")?;
    }
    writeln!(w, "</testsuites>")
}

/// Text for a Markdown table cell or list item: no raw HTML (`&`, `<`, `>` as entities),
/// Markdown punctuation that could open a code span, emphasis, a link or an image, or end
/// a table cell backslash-escaped, terminal controls made inert ([`inert_lines`]), and
/// line breaks as `<br>` (the one tag we write) so a value stays in its cell.
pub fn md(s: &str) -> String {
    let s = inert_lines(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' => out.push_str("<br>"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '!' | '|' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A Markdown report: a summary line and a table per workflow, then the failures: per
/// failed case its failure messages, its state flow, and `Why:` — the evidence entries that
/// explain it ([`explaining`], at most 20, each `step N · in <state> · <what happened>` with a
/// multi-line tool output's first 12 lines), every string escaped by [`md`].
pub fn markdown(w: &mut dyn Write, runs: &[SuiteRun]) -> io::Result<()> {
    writeln!(w, "# wfx-lsp test report")?;
    for run in runs {
        writeln!(w)?;
        writeln!(w, "## {}", md(&run.result.workflow))?;
        writeln!(w)?;
        if run.result.skipped.is_some() {
            writeln!(w, "Suite skipped — disabled.")?;
            continue;
        }
        writeln!(w, "{} ({} ms)", Counts::of(run).line(), run.duration_ms)?;
        if let Some(u) = &run.result.usage {
            writeln!(w)?;
            writeln!(w, "Model use: {}", md(&u.line()))?;
        }
        writeln!(w)?;
        writeln!(w, "| case | verdict | state flow | assertions | ms |")?;
        writeln!(w, "|---|---|---|---|---|")?;
        for case in &run.cases {
            let r = &case.result;
            let verdict = match r.verdict.status {
                VerdictStatus::Passed => "✔ passed",
                VerdictStatus::Failed => "✖ failed",
                VerdictStatus::Skipped => "○ skipped",
                VerdictStatus::NotRun => "⊘ not run (no agent)",
            };
            let count = |s: RecordStatus| r.records.iter().filter(|x| x.status == s).count();
            writeln!(
                w,
                "| {} | {verdict} | {} | {} passed, {} failed, {} not executed | {} |",
                md(&r.id),
                md(&case.flow),
                count(RecordStatus::Passed),
                count(RecordStatus::Failed),
                count(RecordStatus::NotExecuted),
                case.duration_ms
            )?;
        }
        let failed: Vec<&CaseRun> = run
            .cases
            .iter()
            .filter(|c| c.result.verdict.status == VerdictStatus::Failed)
            .collect();
        if !failed.is_empty() {
            writeln!(w)?;
            writeln!(w, "### Failures")?;
            for c in failed {
                writeln!(w)?;
                writeln!(w, "**{}**", md(&c.result.id))?;
                writeln!(w)?;
                for f in &c.result.verdict.failures {
                    writeln!(w, "- {}", md(f))?;
                }
                if !c.flow.is_empty() {
                    writeln!(w)?;
                    writeln!(w, "State flow: {}", md(&c.flow))?;
                }
                // Why it failed (issue 16): the evidence that explains it, as in the
                // narration's `why` block and the JUnit failure body.
                let why = explaining(c);
                if !why.is_empty() {
                    writeln!(w)?;
                    writeln!(w, "Why:")?;
                    writeln!(w)?;
                    for e in why.iter().take(20) {
                        writeln!(w, "- {}", md(&e.line()))?;
                        if let Some(d) = e.event.detail().filter(|d| d.contains('\n')) {
                            let lines: Vec<&str> = d.lines().collect();
                            let mut head = lines
                                .iter()
                                .take(12)
                                .copied()
                                .collect::<Vec<_>>()
                                .join("\n");
                            if lines.len() > 12 {
                                head.push_str(&format!("\n… {} more lines", lines.len() - 12));
                            }
                            writeln!(w, "  <br>{}", md(&head))?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// One `history.jsonl` row.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryRow {
    /// `<startedAt>-<workflows joined by +>`.
    pub run_id: String,
    /// Epoch ms.
    pub started_at: u64,
    /// Workflows run.
    pub workflows: Vec<String>,
    /// Cases run.
    pub total: usize,
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Skipped.
    pub skipped: usize,
    /// Not run for want of an agent.
    pub not_run: usize,
    /// Duration, ms.
    pub duration_ms: u64,
    /// Model tokens (and cost) of a `--live` run; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::model::RunUsage>,
    /// With `--repeat N`: which run of the N this row is (1-based); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// With `--repeat N`: N; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
}

/// The summary row of a run.
pub fn history_row(runs: &[SuiteRun], started_at: u64, duration_ms: u64) -> HistoryRow {
    let mut c = Counts::default();
    for r in runs {
        c.add(Counts::of(r));
    }
    let workflows: Vec<String> = runs.iter().map(|r| r.result.workflow.clone()).collect();
    HistoryRow {
        run_id: format!("{started_at}-{}", workflows.join("+")),
        started_at,
        workflows,
        total: c.total(),
        passed: c.passed,
        failed: c.failed,
        skipped: c.skipped,
        not_run: c.not_run,
        duration_ms,
        usage: runs
            .iter()
            .filter_map(|r| r.result.usage)
            .reduce(|mut a, b| {
                a.add(&b);
                a
            }),
        round: None,
        rounds: None,
    }
}

/// The JUnit `<properties>` of a case's model use (`wfx.model.calls`,
/// `wfx.tokens.prompt`, `wfx.tokens.completion`, `wfx.tokens.cached`, `wfx.cost.usd`).
fn junit_usage(u: &crate::model::RunUsage) -> String {
    let mut out = String::from("      <properties>\n");
    let mut prop = |k: &str, v: String| {
        out.push_str(&format!("        <property name=\"{k}\" value=\"{v}\"/>\n"));
    };
    prop("wfx.model.calls", u.calls.to_string());
    prop("wfx.tokens.prompt", u.prompt_tokens.to_string());
    prop("wfx.tokens.completion", u.completion_tokens.to_string());
    prop("wfx.tokens.cached", u.cached_tokens.to_string());
    if let Some(c) = u.cost_usd {
        prop("wfx.cost.usd", format!("{c:.6}"));
    }
    out.push_str("      </properties>\n");
    out
}

/// The most runs `--repeat N` allows per case (docs/cli.md): a bigger N is a usage error
/// (exit 2), so a typo cannot start thousands of paid model calls.
pub const MAX_REPEAT: u32 = 100;

/// One case's verdicts over the rounds of `--repeat N` (issue 15, item 7): how often it
/// passed. Cases are keyed by (workflow, case id) and listed in the order of their first
/// result.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PassRate {
    /// The workflow slug.
    pub workflow: String,
    /// The case id.
    pub id: String,
    /// Rounds in which the case has a result (N, unless `--bail` stopped early).
    pub runs: usize,
    /// Rounds it passed.
    pub passed: usize,
    /// Rounds it failed.
    pub failed: usize,
    /// Rounds it was skipped (`skip:`).
    pub skipped: usize,
    /// Rounds it was not run for want of an agent.
    pub not_run: usize,
    /// `passed / (passed + failed + notRun)`, from 0 to 1; absent when the case never
    /// ran (skipped every round).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
}

impl PassRate {
    /// `passed P/R (xx%)`, or `skipped` when the case never ran; `R` counts the rounds
    /// that ran it (not the skipped ones).
    pub fn line(&self) -> String {
        let ran = self.passed + self.failed + self.not_run;
        match self.rate {
            Some(r) => format!("passed {}/{ran} ({:.0}%)", self.passed, r * 100.0),
            None => "skipped".to_owned(),
        }
    }
}

/// The pass rate of every case over `rounds` (each round: the suites of one run, as the
/// CLI collects them).
pub fn pass_rates(rounds: &[Vec<SuiteRun>]) -> Vec<PassRate> {
    let mut out: Vec<PassRate> = Vec::new();
    let mut index: std::collections::HashMap<(String, String), usize> = Default::default();
    for round in rounds {
        for run in round {
            for r in &run.result.results {
                let key = (run.result.workflow.clone(), r.id.clone());
                let i = *index.entry(key).or_insert_with(|| {
                    out.push(PassRate {
                        workflow: run.result.workflow.clone(),
                        id: r.id.clone(),
                        runs: 0,
                        passed: 0,
                        failed: 0,
                        skipped: 0,
                        not_run: 0,
                        rate: None,
                    });
                    out.len() - 1
                });
                let Some(p) = out.get_mut(i) else { continue };
                p.runs += 1;
                match r.verdict.status {
                    VerdictStatus::Passed => p.passed += 1,
                    VerdictStatus::Failed => p.failed += 1,
                    VerdictStatus::Skipped => p.skipped += 1,
                    VerdictStatus::NotRun => p.not_run += 1,
                }
            }
        }
    }
    for p in &mut out {
        let ran = p.passed + p.failed + p.not_run;
        p.rate = (ran > 0).then(|| p.passed as f64 / ran as f64);
    }
    out
}

/// The pass-rate block of the narration: `pass rate over N runs:` then one line per case,
/// `  <workflow>/<case>  passed P/R (xx%)`, flaky cases (neither 0% nor 100%) marked
/// `flaky`.
pub fn pass_rate_narration(w: &mut dyn Write, rounds: usize, rates: &[PassRate]) -> io::Result<()> {
    writeln!(w)?;
    writeln!(
        w,
        "pass rate over {rounds} run{}:",
        if rounds == 1 { "" } else { "s" }
    )?;
    for p in rates {
        let flaky = p.rate.is_some_and(|r| r > 0.0 && r < 1.0);
        writeln!(
            w,
            "  {}/{}  {}{}",
            inert(&p.workflow),
            inert(&p.id),
            p.line(),
            if flaky { "  flaky" } else { "" }
        )?;
    }
    Ok(())
}

/// The Markdown pass-rate table of `--repeat N` (`## Pass rate over N runs`, then
/// `| case | passed | failed | not run | skipped | rate |`), escaped as [`markdown`].
pub fn pass_rate_markdown(w: &mut dyn Write, rounds: usize, rates: &[PassRate]) -> io::Result<()> {
    writeln!(w)?;
    writeln!(w, "## Pass rate over {rounds} runs")?;
    writeln!(w)?;
    writeln!(w, "| case | passed | failed | not run | skipped | rate |")?;
    writeln!(w, "|---|---|---|---|---|---|")?;
    for p in rates {
        writeln!(
            w,
            "| {}/{} | {} | {} | {} | {} | {} |",
            md(&p.workflow),
            md(&p.id),
            p.passed,
            p.failed,
            p.not_run,
            p.skipped,
            p.rate
                .map(|r| format!("{:.0}%", r * 100.0))
                .unwrap_or_else(|| "—".to_owned())
        )?;
    }
    Ok(())
}
