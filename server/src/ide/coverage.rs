//! Coverage in the editor (issue 17 item 3), on `workflow.yaml`: a lens per state ("reached
//! by N cases") and per human decision edge ("decided by N cases"), from the static coverage
//! of the workflow's cases ([`wfx_schemas::coverage`]: what their structural assertions
//! name), and the decision edges no case decides (for the opt-in hint diagnostic,
//! `wfx.coverage.uncoveredDecisions`). Pure: the workspace through `Doc::fs`, the buffer
//! for `workflow.yaml`, ranges in bytes of the buffer. The language server appends the
//! last run's verdict of the named cases to the lens title.

use wfx_schemas::coverage::static_coverage;
use wfx_schemas::model::case::Case;
use wfx_schemas::model::workflow::StateType;
use wfx_schemas::text::TextRange;
use wfx_schemas::workspace::discover_cases;
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
    let mut paths = Vec::new();
    let mut cases = Vec::new();
    for p in discover_cases(doc.fs, &an.dir).into_iter().take(MAX_CASES) {
        let Ok(text) = doc.fs.read_text(&p) else {
            continue;
        };
        let parsed = yaml::parse(&text);
        if let Some(root) = parsed.documents.first().filter(|r| r.as_map().is_some()) {
            cases.push(Case::from_node(root));
            paths.push(p);
        }
    }
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
