//! Coverage in the editor (issue 17 item 3), on `workflow.yaml`: a lens per state ("reached
//! by N cases") and per human decision edge ("decided by N cases"), from the static coverage
//! of the workflow's cases ([`wfx_schemas::coverage`]: what their structural assertions
//! name), and the decision edges no case decides (for the opt-in hint diagnostic,
//! `wfx.coverage.uncoveredDecisions`). Pure: the workspace through `Doc::fs`, the buffer
//! for `workflow.yaml`, ranges in bytes of the buffer. The language server appends the
//! last run's verdict of the named cases to the lens title.

use wfx_schemas::coverage::static_coverage;
use wfx_schemas::files::FileAccess;
use wfx_schemas::graph::{CasePath, START};
use wfx_schemas::model::case::Case;
use wfx_schemas::model::workflow::{StateType, Workflow};
use wfx_schemas::text::TextRange;
use wfx_schemas::workspace::{WorkflowDir, discover_cases};
use wfx_schemas::yaml;

use super::Doc;
use super::analysis::{Analysis, DocKind};

/// Most case files read for one request (bounded work); more are left out of the counts.
pub const MAX_CASES: usize = 2_000;

/// One coverage lens on `workflow.yaml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoverageLens {
    /// The state key, or the transition's `to` value.
    pub range: TextRange,
    /// `reached by 3 cases` / `decided by 1 case` / `reached by no case`.
    pub title: String,
    /// Workspace-relative paths of the cases counted, sorted.
    pub cases: Vec<String>,
}

/// A decision edge (human state → target) that no case's `decide` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UncoveredDecision {
    /// The transition's `to` value.
    pub range: TextRange,
    /// The human state.
    pub from: String,
    /// The target.
    pub to: String,
}

/// The parseable cases of a workflow (at most [`MAX_CASES`]): paths and models.
fn load_cases(fs: &dyn FileAccess, dir: &WorkflowDir) -> (Vec<String>, Vec<Case>) {
    let mut paths = Vec::new();
    let mut cases = Vec::new();
    for p in discover_cases(fs, dir).into_iter().take(MAX_CASES) {
        let Ok(text) = fs.read_text(&p) else {
            continue;
        };
        let parsed = yaml::parse(&text);
        if let Some(root) = parsed.documents.first().filter(|r| r.as_map().is_some()) {
            cases.push(Case::from_node(root));
            paths.push(p);
        }
    }
    (paths, cases)
}

/// The coverage the cases' assertions claim, as a graph path for the renderers (`coverage`
/// set: states labelled with the number of cases naming them, lit edges the trigger edges
/// of the triggers cases start with and the decision edges they decide; the rest drawn
/// red). For the graph webview of `workflow.yaml` when no case of it has run.
pub fn assertion_coverage_path(fs: &dyn FileAccess, dir: &WorkflowDir, wf: &Workflow) -> CasePath {
    let (_, cases) = load_cases(fs, dir);
    let refs: Vec<&Case> = cases.iter().collect();
    let sc = static_coverage(wf, &refs);
    let mut p = CasePath {
        coverage: true,
        ..Default::default()
    };
    for s in &wf.states {
        let n = sc.cases_naming_state(&s.slug.value);
        if n > 0 {
            p.reached.insert(s.slug.value.clone(), n);
        }
    }
    for t in wf.triggers() {
        if sc
            .triggers
            .get(&t.id.value)
            .is_some_and(|v| v.iter().any(|n| n.via == "trigger"))
        {
            let e = (START.to_owned(), t.state.clone());
            if !p.edges.contains(&e) {
                p.edges.push(e);
            }
        }
    }
    for (from, to) in sc.decisions.keys() {
        p.edges.push((from.clone(), to.clone()));
    }
    p
}

/// The union of case paths of runs (`coverage` set, each state labelled with the number of
/// paths reaching it), for the graph webview of `workflow.yaml` once cases have run.
pub fn union_path<'a>(paths: impl Iterator<Item = &'a CasePath>) -> CasePath {
    let mut p = CasePath {
        coverage: true,
        ..Default::default()
    };
    for one in paths {
        for s in one.reached.keys() {
            *p.reached.entry(s.clone()).or_default() += 1;
        }
        for e in &one.edges {
            if !p.edges.contains(e) {
                p.edges.push(e.clone());
            }
        }
    }
    p.edges.sort();
    p
}

/// Lenses and uncovered decision edges of a `workflow.yaml` buffer (empty for any other
/// document or a workflow that does not load), in document order.
pub fn coverage_lenses(doc: &Doc<'_>) -> (Vec<CoverageLens>, Vec<UncoveredDecision>) {
    let Some(an) = Analysis::new(doc) else {
        return Default::default();
    };
    if an.kind != DocKind::Workflow {
        return Default::default();
    }
    let Some(wf) = an.workflow() else {
        return Default::default();
    };
    let (paths, cases) = load_cases(doc.fs, &an.dir);
    let refs: Vec<&Case> = cases.iter().collect();
    let sc = static_coverage(wf, &refs);
    let names = |v: Option<&Vec<wfx_schemas::coverage::Naming>>| {
        let mut c: Vec<String> = v
            .map(|v| {
                v.iter()
                    .filter_map(|n| paths.get(n.case).cloned())
                    .collect()
            })
            .unwrap_or_default();
        c.sort();
        c.dedup();
        c
    };
    let count = |verb: &str, n: usize| match n {
        0 => format!("{verb} by no case"),
        1 => format!("{verb} by 1 case"),
        n => format!("{verb} by {n} cases"),
    };
    let mut lenses = Vec::new();
    let mut uncovered = Vec::new();
    for s in &wf.states {
        let c = names(sc.states.get(&s.slug.value));
        lenses.push(CoverageLens {
            range: s.slug.range,
            title: count("reached", c.len()),
            cases: c,
        });
        if s.kind != StateType::Human {
            continue;
        }
        for t in &s.transitions {
            let key = (s.slug.value.clone(), t.to.value.clone());
            let c = names(sc.decisions.get(&key));
            if c.is_empty() {
                uncovered.push(UncoveredDecision {
                    range: t.to.range,
                    from: key.0.clone(),
                    to: key.1.clone(),
                });
            }
            lenses.push(CoverageLens {
                range: t.to.range,
                title: count("decided", c.len()),
                cases: c,
            });
        }
    }
    (lenses, uncovered)
}
