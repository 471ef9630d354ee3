//! The offline HTML report of `wfx-lsp test --reporter html` (issue 7 item 4, FORMAT §C.3,
//! §C.4): ONE self-contained file, `report.html`, per run. It shows the run's metadata (tool
//! version, date, duration, per workflow the spec hash of `workflow.yaml`), each suite's
//! verdict counts and a table of its cases, the workflow's states, and per case its title,
//! description, verdict, every step with its outcome (✔ passed, ✖ failed with the detail,
//! ○ not executed, numbered from 1), the error of a case that died, the case's transcript
//! (its evidence, [`crate::evidence`]; open when something was refused), and the workflow
//! graph (SVG) with the case's path lit ([`crate::path::case_path`]). A workflow is laid out
//! once (`Graph::svg_drawing`, its boxes wide enough for every case's ` @N` labels) and each
//! case's path is drawn on that layout: the layout is the expensive part (up to
//! `graph::MAX_LAYOUT_WORK`), so a suite of many cases costs one.
//! Selecting a state — its label on the graph or its name in the legend, plain links, no
//! script — jumps to a block listing what happened in that state (`:target` highlights it,
//! and shows its entries even when the block is collapsed, through `::details-content`).
//!
//! Offline and strict: inline CSS only, no script, no external fonts, images or styles; a
//! `Content-Security-Policy` meta tag forbids everything else ([`csp`]): no script and no
//! style element runs unless it carries the report's nonce, which every `<style>` (and any
//! `<script>`) we write does. Cases are `<details open>`
//! blocks, so they collapse without JavaScript. Every user string (titles, descriptions,
//! messages, failure details, paths) is HTML-escaped.
//!
//! Deterministic: the bytes depend only on the runs, the files read through `FileAccess`
//! and [`HtmlMeta`] (whose times come from the run's `Clock`). The layout-rs SVG is
//! post-processed: the XML prolog is dropped, its element ids are prefixed per case (several
//! SVGs share one document, and `href="#arrow3"` must resolve inside its own graph), and its
//! `<style>` rules (emitted in hash-map order) are sorted.
//!
//! Spec hash: SHA-256 of the bytes of `workflow.yaml`, hex, computed here (no dependency;
//! checked against the FIPS 180-2 test vectors), so `sha256sum workflow.yaml` reproduces it.
//! This is a hash of the file, not the reference's canonical spec hash (which excludes
//! `metadata`).

use std::fmt::Write as _;
use std::io::{self, Write};

use wfx_schemas::files::FileAccess;
use wfx_schemas::graph::{CasePath, EdgeKind, Graph, NodeKind, SvgDrawing};
use wfx_schemas::model::case::{Case, CaseStep, is_action};
use wfx_schemas::model::workflow::Workflow;
use wfx_schemas::yaml;

use crate::coverage::SuiteCoverage;
use crate::evidence::{Entry, Evidence};
use crate::interpret::{CaseRun, Record, RecordStatus, VerdictStatus};
use crate::path::case_path;
use crate::report::Counts;
use crate::suite::SuiteRun;

/// The run's metadata shown in the report header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HtmlMeta {
    /// Tool version (`env!("CARGO_PKG_VERSION")` of the caller).
    pub version: String,
    /// When the run started, epoch ms (from the run's `Clock`); rendered as UTC.
    pub started_ms: u64,
    /// Wall time of the whole run, ms.
    pub duration_ms: u64,
    /// `--coverage`: each workflow gets a coverage section (ratios, uncovered names, and its
    /// graph with covered elements blue and uncovered ones red, [`crate::coverage`]).
    pub coverage: bool,
}

/// The Content-Security-Policy of a page whose nonce is `nonce` (report escaping): nothing
/// loads from anywhere (`default-src 'none'`), images only from `data:`, and a `<style>`
/// or `<script>` element only with `nonce="…"`; style attributes (inert) are allowed.
pub fn csp(nonce: &str) -> String {
    format!(
        "default-src 'none'; img-src data:; style-src 'nonce-{nonce}'; style-src-attr 'unsafe-inline'; script-src 'nonce-{nonce}'; base-uri 'none'; form-action 'none'"
    )
}

/// Where the nonce goes while the page is built. It holds `<`, which [`esc`] (and
/// layout-rs for SVG text) always escapes, so only the markup we write can contain it.
const NONCE_SLOT: &str = "<wfx-nonce>";

/// The report's nonce: the first 32 hex digits of the SHA-256 of the page built with
/// [`NONCE_SLOT`] in its place. It changes with every report's content and cannot be
/// known to whoever writes a title or message (it would have to be a fixed point of the
/// hash), and the page stays a function of its input (deterministic bytes).
fn nonce_of(page: &str) -> String {
    sha256_hex(page.as_bytes()).chars().take(32).collect()
}

/// Writes the report of `runs` (one section per workflow) to `w`. `fs` is the workspace the
/// runs read (workflow-relative paths `workflows/<slug>/workflow.yaml` and each case's
/// `path`): the workflow is read for its graph and spec hash, each case file for its steps.
/// A file that cannot be read or parsed is reported in the page, never an error; errors are
/// only `w`'s.
pub fn html(
    w: &mut dyn Write,
    runs: &[SuiteRun],
    fs: &dyn FileAccess,
    meta: &HtmlMeta,
) -> io::Result<()> {
    let mut total = Counts::default();
    for r in runs {
        total.add(Counts::of(r));
    }
    let names: Vec<&str> = runs.iter().map(|r| r.result.workflow.as_str()).collect();
    let mut o = String::new();
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(
        o,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        csp(NONCE_SLOT)
    );
    o.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        o,
        "<title>wfx-lsp test · {} · {}</title>",
        esc(&names.join(", ")),
        esc(&total.line())
    );
    let _ = writeln!(o, "<style>{STYLE}</style>\n</head>\n<body>");
    let status_class = if total.failed > 0 { "failed" } else { "passed" };
    let _ = writeln!(
        o,
        "<header class=\"run {status_class}\">\n<h1>wfx-lsp test report</h1>\n<p class=\"totals\">{}</p>",
        esc(&total.line())
    );
    let _ = writeln!(
        o,
        "<dl class=\"meta\"><dt>Workflows</dt><dd>{}</dd><dt>Date</dt><dd>{}</dd><dt>Duration</dt><dd>{} ms</dd><dt>Tool</dt><dd>wfx-lsp {}</dd><dt>Runner</dt><dd>deterministic runner; each case played by its cassette, else its agent script, else (with --live) the model</dd></dl>\n</header>",
        esc(&names.join(", ")),
        utc(meta.started_ms),
        meta.duration_ms,
        esc(&meta.version)
    );
    for (i, run) in runs.iter().enumerate() {
        suite(&mut o, i, run, fs, meta.coverage);
    }
    o.push_str(
        "<footer>Generated by wfx-lsp. Self-contained: this file loads nothing from the network.</footer>\n</body>\n</html>\n",
    );
    // Every style (and script) element we wrote gets the nonce; user text cannot hold a
    // raw `<style>` (it is escaped), so nothing else does.
    let o = o
        .replace("<style>", &format!("<style nonce=\"{NONCE_SLOT}\">"))
        .replace("<script>", &format!("<script nonce=\"{NONCE_SLOT}\">"));
    let nonce = nonce_of(&o);
    w.write_all(o.replace(NONCE_SLOT, &nonce).as_bytes())
}

fn suite(o: &mut String, si: usize, run: &SuiteRun, fs: &dyn FileAccess, coverage: bool) {
    let slug = &run.result.workflow;
    let spec_path = format!("workflows/{slug}/workflow.yaml");
    let spec = fs.read(&spec_path).ok();
    let workflow = spec
        .as_deref()
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|text| {
            let parsed = yaml::parse(text);
            parsed
                .documents
                .first()
                .filter(|r| r.as_map().is_some())
                .map(Workflow::from_node)
        });
    let graph = workflow.as_ref().map(Graph::from_workflow);
    let c = Counts::of(run);
    let _ = writeln!(o, "<section class=\"suite\" id=\"wf-{}\">", attr_id(slug));
    let title = workflow
        .as_ref()
        .and_then(|w| w.title.as_ref().map(|t| t.value.clone()))
        .map(|t| format!(" <span class=\"dim\">· {}</span>", esc(&t)))
        .unwrap_or_default();
    let _ = writeln!(o, "<h2>Workflow <code>{}</code>{title}</h2>", esc(slug));
    let hash = spec
        .as_deref()
        .map(|b| format!("sha256 {}", sha256_hex(b)))
        .unwrap_or_else(|| "workflow.yaml could not be read".into());
    let _ = writeln!(
        o,
        "<dl class=\"meta\"><dt>Spec</dt><dd><code>{}</code></dd><dt>Spec hash</dt><dd><code>{}</code></dd><dt>Verdicts</dt><dd>{}</dd><dt>Duration</dt><dd>{} ms</dd></dl>",
        esc(&spec_path),
        esc(&hash),
        counts_html(c),
        run.duration_ms
    );
    if let Some(u) = &run.result.usage {
        let _ = writeln!(o, "<p class=\"dim\">Model use: {}</p>", esc(&u.line()));
    }
    if run.result.skipped.is_some() {
        o.push_str("<p class=\"note\">Suite skipped — the workflow is disabled.</p>\n</section>\n");
        return;
    }
    if let Some(g) = &graph {
        states_table(o, g);
    }
    if coverage && let (Some(wf), Some(g)) = (&workflow, &graph) {
        coverage_section(o, si, &SuiteCoverage::compute(slug, wf, &run.cases), g);
    }
    o.push_str("<h3>Cases</h3>\n<table class=\"cases\"><thead><tr><th>Case</th><th>Verdict</th><th>State flow</th><th>Assertions</th><th>ms</th></tr></thead><tbody>\n");
    for (ci, case) in run.cases.iter().enumerate() {
        let r = &case.result;
        let count = |s: RecordStatus| r.records.iter().filter(|x| x.status == s).count();
        let skipped_grades = r.records.iter().filter(|x| is_skipped_grade(x)).count();
        let grades = if skipped_grades > 0 {
            format!(", {skipped_grades} grade skipped")
        } else {
            String::new()
        };
        let title = r
            .title
            .as_deref()
            .map(|t| format!("<br><span class=\"dim\">{}</span>", esc(t)))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "<tr class=\"{}\"><td><a href=\"#{}\"><code>{}</code></a>{title}</td><td>{}</td><td class=\"flow\">{}</td><td>{} passed, {} failed, {} not executed{grades}</td><td class=\"num\">{}</td></tr>",
            verdict_class(r.verdict.status),
            case_anchor(si, ci),
            esc(&r.id),
            verdict_badge(r.verdict.status),
            flow_html(&case.flow),
            count(RecordStatus::Passed),
            count(RecordStatus::Failed),
            count(RecordStatus::NotExecuted).saturating_sub(skipped_grades),
            case.duration_ms
        );
    }
    o.push_str("</tbody></table>\n");
    // One layout per workflow: every case's path is drawn on it (its boxes fit the widest
    // ` @N` label any case gives them), never a layout per case.
    let paths: Vec<CasePath> = run.cases.iter().map(case_path).collect();
    let drawing = graph.as_ref().map(|g| {
        let lit: Vec<Option<&CasePath>> = paths.iter().map(Some).collect();
        g.svg_drawing(&lit)
    });
    for (ci, (case, path)) in run.cases.iter().zip(&paths).enumerate() {
        case_section(o, si, ci, case, path, drawing.as_ref(), fs);
    }
    o.push_str("</section>\n");
}

/// The coverage section of one workflow: ratios, the uncovered names, and the graph with
/// the union of the cases' paths lit (blue) and every other element red.
fn coverage_section(o: &mut String, si: usize, c: &SuiteCoverage, g: &Graph) {
    let _ = writeln!(
        o,
        "<details class=\"coverage\" id=\"coverage-{si}\" open><summary>Coverage over {} case{}</summary>",
        c.cases,
        if c.cases == 1 { "" } else { "s" }
    );
    o.push_str(
        "<table><thead><tr><th></th><th>Covered</th><th>Total</th><th>%</th></tr></thead><tbody>\n",
    );
    for (name, r) in c.summary.groups() {
        let _ = writeln!(
            o,
            "<tr><td>{name}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            r.covered, r.total, r.percent
        );
    }
    o.push_str("</tbody></table>\n");
    let unc = c.uncovered();
    if unc.iter().any(|(_, n)| !n.is_empty()) {
        o.push_str("<ul class=\"uncovered\">");
        for (group, names) in unc.iter().filter(|(_, n)| !n.is_empty()) {
            let names: Vec<String> = names
                .iter()
                .map(|n| format!("<code>{}</code>", esc(n)))
                .collect();
            let _ = write!(o, "<li>Not covered {group}: {}</li>", names.join(", "));
        }
        o.push_str("</ul>\n");
    }
    o.push_str("<figure class=\"graph\">\n");
    match g.to_svg(Some(&c.covered_path())) {
        Ok(svg) => o.push_str(&embed_svg(
            &svg,
            &format!("cov{si}-"),
            &format!("coverage of {}", c.workflow),
        )),
        Err(e) => {
            let _ = write!(o, "<p class=\"note\">{}</p>", esc(&e));
        }
    }
    o.push_str("<figcaption>Blue: covered by at least one case (<code>×N</code>: entered by N cases). Red: not covered.</figcaption>\n</figure>\n</details>\n");
}

fn states_table(o: &mut String, g: &Graph) {
    o.push_str("<details class=\"states\" open><summary>States and transitions</summary>\n<table><thead><tr><th>State</th><th>Kind</th><th>Title</th><th>Leads to</th></tr></thead><tbody>\n");
    for n in g.nodes.iter().filter(|n| n.kind != NodeKind::Start) {
        let kind = match (n.kind, n.terminal) {
            (NodeKind::Human, _) => "human",
            (_, true) => "agent · terminal",
            _ => "agent",
        };
        let entry = if n.triggers.is_empty() {
            String::new()
        } else {
            format!(
                "<br><span class=\"dim\">entry for {}</span>",
                esc(&n.triggers.join(", "))
            )
        };
        let mut leads = String::new();
        for e in g.edges.iter().filter(|e| e.source == n.id) {
            let what = match &e.kind {
                EdgeKind::OnError => "<span class=\"tag err\">on_error</span> ".to_owned(),
                EdgeKind::Transition(Some(t)) => format!("<span class=\"tag\">{}</span> ", esc(t)),
                _ => String::new(),
            };
            let desc = match (&e.kind, &e.label) {
                (EdgeKind::Transition(_), Some(l)) => {
                    format!(" <span class=\"dim\">{}</span>", esc(l))
                }
                _ => String::new(),
            };
            let _ = write!(
                leads,
                "<div>{what}→ <code>{}</code>{desc}</div>",
                esc(&e.target)
            );
        }
        if leads.is_empty() {
            leads.push_str("<span class=\"dim\">(ends the run)</span>");
        }
        let _ = writeln!(
            o,
            "<tr><td><code>{}</code>{entry}</td><td>{kind}</td><td>{}</td><td>{leads}</td></tr>",
            esc(&n.id),
            esc(n.title.as_deref().unwrap_or(""))
        );
    }
    o.push_str("</tbody></table></details>\n");
}

/// One case: its text, steps, transcript and failures, and the workflow's graph `drawing`
/// (laid out once per workflow, [`Graph::svg_drawing`]) with the case's `path` lit.
fn case_section(
    o: &mut String,
    si: usize,
    ci: usize,
    case: &CaseRun,
    path: &CasePath,
    drawing: Option<&Result<SvgDrawing, String>>,
    fs: &dyn FileAccess,
) {
    let r = &case.result;
    let _ = writeln!(
        o,
        "<details class=\"case {}\" id=\"{}\" open>",
        verdict_class(r.verdict.status),
        case_anchor(si, ci)
    );
    let _ = writeln!(
        o,
        "<summary>{} <code>{}</code>{}</summary>",
        verdict_badge(r.verdict.status),
        esc(&r.id),
        r.title
            .as_deref()
            .map(|t| format!(" · <strong>{}</strong>", esc(t)))
            .unwrap_or_default()
    );
    o.push_str("<div class=\"case-body\">\n<div class=\"case-text\">\n");
    if let Some(d) = &r.description {
        let _ = writeln!(o, "<p class=\"desc\">{}</p>", esc(d));
    }
    let _ = writeln!(
        o,
        "<p class=\"dim\"><code>{}</code> · {} ms{}</p>",
        esc(&case.path),
        case.duration_ms,
        r.usage
            .map(|u| format!(" · {}", esc(&u.line())))
            .unwrap_or_default()
    );
    if !case.flow.is_empty() {
        let _ = writeln!(
            o,
            "<p class=\"flow\"><span class=\"label\">State flow</span> {}</p>",
            flow_html(&case.flow)
        );
    }
    if let Some(reason) = &r.skip_reason {
        let _ = writeln!(o, "<p class=\"note\">Skipped: {}</p>", esc(reason));
    }
    if let Some(reason) = &r.not_run {
        let _ = writeln!(o, "<p class=\"note\">Not run: {}</p>", esc(reason));
    }
    if let Some(e) = &r.error {
        let _ = writeln!(
            o,
            "<div class=\"error\"><strong>The case died:</strong><pre>{}</pre></div>",
            esc(e)
        );
    }
    steps(o, case, fs);
    transcript(o, &case.evidence);
    let other: Vec<&String> = r
        .verdict
        .failures
        .iter()
        .filter(|f| Some(f.as_str()) != r.error.as_deref())
        .collect();
    if !other.is_empty() {
        o.push_str("<div class=\"failures\"><strong>Failures</strong><ul>");
        for f in other {
            let _ = write!(o, "<li><pre>{}</pre></li>", esc(f));
        }
        o.push_str("</ul></div>\n");
    }
    o.push_str("</div>\n<figure class=\"graph\">\n");
    let states = case.evidence.states();
    let anchors: Vec<(&str, String)> = states
        .iter()
        .enumerate()
        .map(|(k, s)| (*s, format!("{}-s{k}", case_anchor(si, ci))))
        .collect();
    match drawing.map(|d| {
        d.as_ref()
            .map_err(Clone::clone)
            .and_then(|d| d.render(Some(path)))
    }) {
        Some(Ok(svg)) => o.push_str(&link_states(
            &embed_svg(&svg, &format!("g{si}-{ci}-"), &r.id),
            &anchors,
        )),
        Some(Err(e)) => {
            let _ = write!(o, "<p class=\"note\">{}</p>", esc(&e));
        }
        None => o.push_str("<p class=\"note\">workflow.yaml could not be read</p>"),
    }
    let legend = if path.reached.is_empty() {
        "The case reached no state.".to_owned()
    } else {
        let mut reached: Vec<(&String, &usize)> = path.reached.iter().collect();
        reached.sort_by_key(|(s, step)| (**step, path_order(path, s)));
        let parts: Vec<String> = reached
            .iter()
            .map(|(s, step)| match anchors.iter().find(|(a, _)| a == s) {
                Some((_, id)) => {
                    format!(
                        "<a href=\"#{id}\"><code>{}</code></a> at step {step}",
                        esc(s)
                    )
                }
                None => format!("<code>{}</code> at step {step}", esc(s)),
            })
            .collect();
        format!(
            "Blue: the path this case took; <code>@N</code> is the step (numbered from 1) during which a state was first reached; select a state to see what happened there. Reached: {}.",
            parts.join(", ")
        )
    };
    let _ = writeln!(o, "<figcaption>{legend}</figcaption>");
    evidence_by_state(o, &case.evidence, &anchors);
    o.push_str("</figure>\n</div>\n</details>\n");
}

/// Per state of the run, what happened there (issue 16): one `<details>` block per state
/// with an id the graph's state labels and the legend link to (`:target` highlights it,
/// no script), each entry with its step number. Everything escaped with [`esc`].
fn evidence_by_state(o: &mut String, ev: &Evidence, anchors: &[(&str, String)]) {
    if ev.entries.is_empty() {
        return;
    }
    o.push_str(
        "<div class=\"evidence\"><span class=\"label\">What happened in each state</span>\n",
    );
    for (state, id) in anchors {
        let entries: Vec<&Entry> = ev.entries.iter().filter(|e| e.state == *state).collect();
        let refusals = entries.iter().filter(|e| e.is_refusal()).count();
        let _ = write!(
            o,
            "<details class=\"state-ev\" id=\"{id}\"{}><summary><code>{}</code> · {} entr{}{}</summary>",
            if refusals > 0 { " open" } else { "" },
            esc(state),
            entries.len(),
            if entries.len() == 1 { "y" } else { "ies" },
            if refusals > 0 {
                format!(" · <span class=\"refused\">{refusals} refused or failed</span>")
            } else {
                String::new()
            }
        );
        entry_list(o, &entries);
        o.push_str("</details>\n");
    }
    o.push_str("</div>\n");
}

/// An `<ol>` of evidence entries: step number, state, summary, and the full output or
/// message when there is more than the summary.
fn entry_list(o: &mut String, entries: &[&Entry]) {
    o.push_str("<ol class=\"ev\">");
    for e in entries {
        let class = if e.is_refusal() {
            " class=\"refused\""
        } else {
            ""
        };
        let _ = write!(
            o,
            "<li{class}><span class=\"dim\">step {} · {}</span> {}",
            e.step_number,
            esc(&e.state),
            esc(&e.event.summary())
        );
        if let Some(d) = e.event.detail() {
            let _ = write!(o, "<pre>{}</pre>", esc(d));
        }
        o.push_str("</li>");
    }
    o.push_str("</ol>\n");
}

/// The case's full transcript (every evidence entry, in order) as a collapsed block.
fn transcript(o: &mut String, ev: &Evidence) {
    if ev.entries.is_empty() {
        return;
    }
    let refused = ev.entries.iter().any(Entry::is_refusal);
    let _ = write!(
        o,
        "<details class=\"transcript\"{}><summary>Transcript · {} entries</summary>",
        if refused { " open" } else { "" },
        ev.entries.len()
    );
    let all: Vec<&Entry> = ev.entries.iter().collect();
    entry_list(o, &all);
    o.push_str("</details>\n");
}

/// Wraps the SVG `<text>` label of each state in `anchors` in a link to its evidence block.
/// A label (the text of its first `<tspan>`) is the state id, optionally followed by ` (human)`, ` (end)` and ` @<step>`
/// ([`Graph::to_svg`]); ids are matched after escaping, so a label can never inject markup.
/// Only labels of reached states (those with ` @<step>`) are linked, as in the legend: the
/// entry circle is labelled `start` too, and must not lead to a state named `start`.
fn link_states(svg: &str, anchors: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    // Bounded: each pass consumes at least one `<text` element of the input.
    while let Some(i) = rest.find("<text") {
        let Some(open_end) = rest.get(i..).and_then(|t| t.find('>')).map(|n| i + n + 1) else {
            break;
        };
        let Some(close) = rest
            .get(open_end..)
            .and_then(|t| t.find("</text>"))
            .map(|n| open_end + n)
        else {
            break;
        };
        let mut inner = rest.get(open_end..close).unwrap_or_default();
        // layout-rs puts the label in a `<tspan>`.
        if let Some(t) = inner.find("<tspan") {
            let body = inner.get(t..).unwrap_or_default();
            let from = body.find('>').map_or(body.len(), |n| n + 1);
            let body = body.get(from..).unwrap_or_default();
            inner = body
                .get(..body.find("</tspan>").unwrap_or(body.len()))
                .unwrap_or_default();
        }
        let id = inner
            .rsplit_once(" @")
            .map(|(head, _)| head.split(" (").next().unwrap_or_default());
        out.push_str(rest.get(..i).unwrap_or_default());
        let element = rest.get(i..close + "</text>".len()).unwrap_or_default();
        match id.and_then(|id| anchors.iter().find(|(s, _)| esc(s) == id)) {
            Some((_, target)) => {
                let _ = write!(out, "<a href=\"#{target}\">{element}</a>");
            }
            None => out.push_str(element),
        }
        rest = rest.get(close + "</text>".len()..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// Position of a state's first arrival along the path's edges (for a stable legend order).
fn path_order(path: &wfx_schemas::graph::CasePath, state: &str) -> usize {
    path.edges
        .iter()
        .position(|(_, t)| t == state)
        .unwrap_or(usize::MAX)
}

/// One step's outcome as shown.
enum Outcome {
    Passed,
    Failed,
    NotExecuted,
    SkippedGrade,
    Ran,
    Died,
}

fn steps(o: &mut String, case: &CaseRun, fs: &dyn FileAccess) {
    let r = &case.result;
    let Some(parsed) = fs
        .read_text(&case.path)
        .ok()
        .map(|t| yaml::parse(&t))
        .filter(|p| p.documents.first().is_some_and(|d| d.as_map().is_some()))
    else {
        return;
    };
    let Some(root) = parsed.documents.first() else {
        return;
    };
    let c = Case::from_node(root);
    if c.steps.is_empty() {
        return;
    }
    if let Some(t) = &c.trigger {
        let _ = writeln!(
            o,
            "<p><span class=\"label\">Trigger</span> <code>{}</code></p>",
            esc(&t.value)
        );
    }
    let cut = r
        .records
        .iter()
        .filter(|x| x.status == RecordStatus::NotExecuted && !is_skipped_grade(x))
        .map(|x| x.step)
        .min();
    let skipped_case = r.verdict.status == VerdictStatus::Skipped;
    let died_at = r.error.as_ref().and_then(|_| {
        c.steps
            .iter()
            .filter(|s| s.is_action() && cut.is_none_or(|k| s.index < k))
            .map(|s| s.index)
            .max()
    });
    o.push_str("<ol class=\"steps\" start=\"1\">\n");
    for s in &c.steps {
        let recs: Vec<&Record> = r.records.iter().filter(|x| x.step == s.index).collect();
        let key = s.key_str().unwrap_or("?");
        let outcome = if skipped_case {
            Outcome::NotExecuted
        } else if s.key_str().is_some_and(is_action) {
            if died_at == Some(s.index) {
                Outcome::Died
            } else if cut.is_some_and(|k| s.index > k) || (r.error.is_some() && died_at.is_none()) {
                Outcome::NotExecuted
            } else {
                Outcome::Ran
            }
        } else if recs.iter().any(|x| x.status == RecordStatus::Failed) {
            Outcome::Failed
        } else if !recs.is_empty() && recs.iter().all(|x| is_skipped_grade(x)) {
            Outcome::SkippedGrade
        } else if recs.is_empty() || recs.iter().any(|x| x.status == RecordStatus::NotExecuted) {
            Outcome::NotExecuted
        } else {
            Outcome::Passed
        };
        let (class, mark, word) = match outcome {
            Outcome::Passed => ("passed", "✔", "passed"),
            Outcome::Failed => ("failed", "✖", "failed"),
            Outcome::NotExecuted => ("not-executed", "○", "not executed"),
            Outcome::SkippedGrade => ("not-executed", "○", "skipped (--skip-grades)"),
            Outcome::Ran => ("action", "▶", "ran"),
            Outcome::Died => ("failed", "✖", "died here"),
        };
        let _ = write!(
            o,
            "<li class=\"{class}\"><span class=\"mark\" title=\"{word}\">{mark}</span> <code class=\"key\">{}</code> <span class=\"arg\">{}</span> <span class=\"outcome\">{word}</span>",
            esc(key),
            esc(&step_summary(s))
        );
        let details: Vec<String> = recs
            .iter()
            .filter(|x| x.status == RecordStatus::Failed || x.score.is_some())
            .map(|x| {
                let mut d = format!("{}: {}", x.kind, x.detail.as_deref().unwrap_or(""));
                if let (Some(sc), Some(t)) = (x.score, x.threshold) {
                    let _ = write!(d, " (score {sc}, at least {t})");
                }
                d
            })
            .collect();
        if !details.is_empty() {
            o.push_str("<ul class=\"detail\">");
            for d in details {
                let _ = write!(o, "<li><pre>{}</pre></li>", esc(&d));
            }
            o.push_str("</ul>");
        }
        o.push_str("</li>\n");
    }
    o.push_str("</ol>\n");
}

fn is_skipped_grade(x: &Record) -> bool {
    x.kind == "grade" && x.status == RecordStatus::NotExecuted && x.detail.is_some()
}

/// A one-line rendering of a step's value: a string as is, anything else as compact JSON;
/// at most 160 characters.
fn step_summary(s: &CaseStep) -> String {
    let text = match s.value.to_json() {
        serde_json::Value::String(t) => t,
        v => v.to_string(),
    };
    let text = wfx_schemas::text::collapse_whitespace(&text);
    if text.chars().count() > 160 {
        let mut t: String = text.chars().take(159).collect();
        t.push('…');
        t
    } else {
        text
    }
}

/// The layout-rs SVG made embeddable: no XML prolog, ids prefixed with `prefix`, sorted
/// style rules, a sans-serif font, an accessible label and a class for CSS scaling.
fn embed_svg(svg: &str, prefix: &str, case_id: &str) -> String {
    let body = svg.find("<svg").and_then(|i| svg.get(i..)).unwrap_or(svg);
    let mut s = body
        .replace("id=\"arrow", &format!("id=\"{prefix}arrow"))
        .replace("href=\"#arrow", &format!("href=\"#{prefix}arrow"))
        .replace("id=\"C", &format!("id=\"{prefix}C"))
        .replace("url(#C", &format!("url(#{prefix}C"))
        .replace("startarrow", &format!("{prefix}startarrow"))
        .replace("endarrow", &format!("{prefix}endarrow"))
        .replace(
            "stroke=\"#1565c0ff\" stroke-width=\"1\"",
            "stroke=\"#1565c0ff\" stroke-width=\"3\"",
        )
        .replace(
            "stroke-width=\"1\" stroke=\"#1565c0ff\"",
            "stroke-width=\"3\" stroke=\"#1565c0ff\"",
        )
        .replace(
            "font-family: Times, serif",
            "font-family: system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif",
        )
        .replacen(
            "<svg ",
            &format!(
                "<svg class=\"wf-graph\" role=\"img\" aria-label=\"workflow graph with the path of case {}\" ",
                esc(case_id)
            ),
            1,
        );
    if let (Some(a), Some(b)) = (s.find("<style>\n"), s.find("</style>")) {
        let start = a + "<style>\n".len();
        if let Some(rules) = s.get(start..b) {
            let mut lines: Vec<&str> = rules.lines().filter(|l| !l.is_empty()).collect();
            lines.sort_unstable();
            let mut sorted = lines.join("\n");
            sorted.push('\n');
            s.replace_range(start..b, &sorted);
        }
    }
    s
}

/// The narration's state flow (`a → b ⏸`) with its end markers spelled out, since the
/// marker glyphs (⏸ ⛔ ⚑) are missing from many system fonts: `parked`, `rejected`,
/// `raised <code>`, `died`.
fn flow_html(flow: &str) -> String {
    let mut s = flow.trim_end().to_owned();
    let mut tail = Vec::new();
    if let Some(rest) = s.strip_suffix(" ✖") {
        s = rest.to_owned();
        tail.push("died".to_owned());
    }
    if let Some(rest) = s.strip_suffix(" ⏸") {
        s = rest.to_owned();
        tail.insert(0, "parked".to_owned());
    } else if let Some(rest) = s.strip_suffix(" ⛔") {
        s = rest.to_owned();
        tail.insert(0, "rejected".to_owned());
    } else if let Some((head, code)) = s.rsplit_once(" ⚑ ") {
        tail.insert(0, format!("raised {code}"));
        s = head.to_owned();
    }
    let mut out = esc(&s);
    for t in tail {
        let _ = write!(out, " <span class=\"end\">{}</span>", esc(&t));
    }
    out
}

fn counts_html(c: Counts) -> String {
    let mut s = format!(
        "<span class=\"n passed\">{} passed</span> <span class=\"n failed\">{} failed</span> <span class=\"n skipped\">{} skipped</span>",
        c.passed, c.failed, c.skipped
    );
    if c.not_run > 0 {
        s.push_str(&format!(
            " <span class=\"n skipped\">{} not run (no agent)</span>",
            c.not_run
        ));
    }
    s
}

fn verdict_class(s: VerdictStatus) -> &'static str {
    match s {
        VerdictStatus::Passed => "passed",
        VerdictStatus::Failed => "failed",
        VerdictStatus::Skipped => "skipped",
        VerdictStatus::NotRun => "not-run",
    }
}

fn verdict_badge(s: VerdictStatus) -> &'static str {
    match s {
        VerdictStatus::Passed => "<span class=\"badge passed\">✔ passed</span>",
        VerdictStatus::Failed => "<span class=\"badge failed\">✖ failed</span>",
        VerdictStatus::Skipped => "<span class=\"badge skipped\">○ skipped</span>",
        VerdictStatus::NotRun => "<span class=\"badge skipped\">⊘ not run (no agent)</span>",
    }
}

fn case_anchor(si: usize, ci: usize) -> String {
    format!("case-{si}-{ci}")
}

/// An id-safe rendering of a slug (ASCII alphanumerics and `-`, others as `_`).
fn attr_id(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// HTML text and attribute escaping: `& < > " '`.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `YYYY-MM-DD HH:MM:SS UTC` of an epoch-ms time (proleptic Gregorian calendar).
fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// SHA-256 (FIPS 180-4) of `data`, lowercase hex.
pub fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (wi, word) in w.iter_mut().zip(block.chunks_exact(4)) {
            *wi = u32::from_be_bytes(word.try_into().unwrap_or([0; 4]));
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for (k, wi) in K.iter().zip(w.iter()) {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(*k)
                .wrapping_add(*wi);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (hi, v) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *hi = hi.wrapping_add(v);
        }
    }
    h.iter().fold(String::with_capacity(64), |mut s, x| {
        let _ = write!(s, "{x:08x}");
        s
    })
}

const STYLE: &str = r#"
:root{--fg:#1d2330;--dim:#5b6473;--line:#d8dde6;--bg:#f6f7f9;--ok:#1e7b34;--okbg:#e6f4ea;--bad:#b3261e;--badbg:#fdecea;--skip:#6b6f76;--skipbg:#eef0f3;--lit:#1565c0}
*{box-sizing:border-box}
body{margin:0;padding:24px 32px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg)}
h1{margin:0 0 4px;font-size:22px}h2{font-size:19px;margin:28px 0 8px}h3{font-size:16px;margin:18px 0 8px}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{white-space:pre-wrap;word-break:break-word;margin:0}
.dim{color:var(--dim)}
header.run{background:#fff;border:1px solid var(--line);border-left:6px solid var(--ok);border-radius:6px;padding:14px 18px}
header.run.failed{border-left-color:var(--bad)}
.totals{font-size:16px;font-weight:600;margin:0 0 8px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}
dl.meta dt{color:var(--dim)}dl.meta dd{margin:0}
section.suite{margin-top:8px}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid var(--line)}
th,td{border-bottom:1px solid var(--line);padding:6px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}
td.num{text-align:right}td.flow{font-size:13px}
tr.failed td:first-child{border-left:4px solid var(--bad)}tr.passed td:first-child{border-left:4px solid var(--ok)}tr.skipped td:first-child{border-left:4px solid var(--skip)}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;white-space:nowrap}
.badge.passed,.n.passed{color:var(--ok);background:var(--okbg)}.badge.failed,.n.failed{color:var(--bad);background:var(--badbg)}.badge.skipped,.n.skipped{color:var(--skip);background:var(--skipbg)}
.n{padding:1px 6px;border-radius:4px;margin-right:4px}
details.states{margin:10px 0}details.states summary{cursor:pointer;font-weight:600;margin-bottom:6px}
.tag{display:inline-block;font-size:11px;padding:0 5px;border-radius:3px;background:#eef1f5;border:1px solid var(--line)}.tag.err{background:var(--badbg);border-color:#f1b6b0}
details.case{background:#fff;border:1px solid var(--line);border-left:6px solid var(--ok);border-radius:6px;margin:14px 0;padding:0}
details.case.failed{border-left-color:var(--bad)}details.case.skipped{border-left-color:var(--skip)}
details.case>summary{cursor:pointer;padding:10px 14px;font-size:15px;border-bottom:1px solid var(--line)}
.case-body{padding:12px 14px}
.desc{margin:0 0 6px}
.label{display:inline-block;min-width:72px;color:var(--dim);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
p.flow{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
ol.steps{list-style:none;padding:0;margin:8px 0;counter-reset:step 0}
ol.steps>li{counter-increment:step;padding:4px 6px 4px 34px;position:relative;border-bottom:1px dashed #e6e9ef;display:grid;grid-template-columns:18px max-content 1fr max-content;gap:0 8px;align-items:baseline}
ol.steps>li>ul.detail{grid-column:2/5}
ol.steps>li::before{content:counter(step);position:absolute;left:4px;top:5px;font-size:11px;color:var(--dim);width:18px;text-align:right}
.mark{display:inline-block;width:16px;text-align:center;font-weight:700}
li.passed .mark{color:var(--ok)}li.failed .mark{color:var(--bad)}li.not-executed .mark{color:var(--skip)}li.action .mark{color:var(--lit)}
li.not-executed{color:var(--skip)}li.failed{background:var(--badbg)}
code.key{font-weight:600}
.arg{word-break:break-word}
.outcome{font-size:12px;color:var(--dim);white-space:nowrap}li.failed .outcome{color:var(--bad);font-weight:600}
ul.detail{margin:4px 0 2px;padding-left:18px;color:var(--bad)}
.error,.failures{border:1px solid #f1b6b0;background:var(--badbg);border-radius:4px;padding:8px 10px;margin:8px 0}
.failures ul{margin:4px 0 0;padding-left:18px}
.note{color:var(--dim);font-style:italic}
figure.graph{margin:10px 0 0;padding-top:10px;border-top:1px solid var(--line);text-align:center}
.end{display:inline-block;font-size:11px;padding:0 6px;border-radius:3px;background:#eef1f5;border:1px solid var(--line);font-family:system-ui,sans-serif}
svg.wf-graph{max-width:100%;height:auto;background:#fff}
figcaption{font-size:12px;color:var(--dim);text-align:left;margin-top:6px}
.evidence{margin-top:8px;font-size:12px;text-align:left}
.state-ev:target{outline:2px solid #1565c0;background:#eef4fc}
.state-ev:target::details-content{content-visibility:visible;display:block}
ol.ev{margin:4px 0;padding-left:18px;font-size:12px}
ol.ev pre{max-height:12em;overflow:auto;margin:2px 0}
li.refused,span.refused{color:#b71c1c}
footer{margin-top:28px;color:var(--dim);font-size:12px}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_the_fips_vectors() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
    }

    #[test]
    fn utc_renders_the_test_epoch() {
        assert_eq!(utc(1_767_225_600_000), "2026-01-01 00:00:00 UTC");
        assert_eq!(utc(951_827_696_000), "2000-02-29 12:34:56 UTC");
    }

    #[test]
    fn flow_end_markers_are_spelled_out() {
        assert_eq!(
            flow_html("a → b ⏸"),
            "a → b <span class=\"end\">parked</span>"
        );
        assert_eq!(flow_html("a ⛔"), "a <span class=\"end\">rejected</span>");
        assert_eq!(
            flow_html("a ⚑ <x> ✖"),
            "a <span class=\"end\">raised &lt;x&gt;</span> <span class=\"end\">died</span>"
        );
        assert_eq!(flow_html("a → b"), "a → b");
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<a href='x'>&\""),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;"
        );
    }

    #[test]
    fn embedded_svg_ids_are_prefixed_and_styles_sorted() {
        let svg = "<?xml version=\"1.0\"?><svg width=\"1\" height=\"1\"><marker id=\"endarrow\"/><style>\n.b2 {}\n.a1 {}\n</style><path id=\"arrow0\"/><textPath href=\"#arrow0\"/></svg>";
        let out = embed_svg(svg, "g0-1-", "c");
        assert!(out.starts_with("<svg class=\"wf-graph\""), "{out}");
        assert!(out.contains("id=\"g0-1-arrow0\"") && out.contains("href=\"#g0-1-arrow0\""));
        assert!(out.contains("id=\"g0-1-endarrow\""));
        assert!(out.contains("<style>\n.a1 {}\n.b2 {}\n</style>"), "{out}");
    }

    #[test]
    fn only_reached_state_labels_link_to_their_block() {
        // The entry circle is labelled `start`, like the state `start`: only the state's
        // label (reached, so ` @1`) links to the state's block; an unreached state is plain.
        let text = |l: &str| format!("<text x=\"1\"><tspan dy=\"1\">{l}</tspan></text>");
        let svg = format!(
            "<svg>{}{}{}{}</svg>",
            text("start"),
            text("start @1"),
            text("done (end) @2"),
            text("pay")
        );
        let anchors = [
            ("start", "c-s0".to_owned()),
            ("done", "c-s1".to_owned()),
            ("pay", "c-s2".to_owned()),
        ];
        let out = link_states(&svg, &anchors);
        assert_eq!(out.matches("<a href=\"#c-s0\">").count(), 1, "{out}");
        assert!(
            out.contains(&format!("<a href=\"#c-s0\">{}</a>", text("start @1"))),
            "{out}"
        );
        assert!(
            out.contains(&format!("<a href=\"#c-s1\">{}</a>", text("done (end) @2"))),
            "{out}"
        );
        assert!(!out.contains("#c-s2"), "{out}");
    }
}
