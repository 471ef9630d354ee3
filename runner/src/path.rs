//! A case run's path through the workflow graph (FORMAT §E.2 audit trail, §E.10 graph):
//! which states the run reached, at which case step, and which edges it took, so the graph
//! renderers (`Graph::to_svg`, `to_mermaid`, `to_dot`) can light it.
//!
//! Trail kinds and how they move (FORMAT §E.2):
//! * `trigger`: the first one is the start edge `__start__` → its `to` (the entry state);
//!   later ones (a follow-up `send`, a `deliver`) do not move.
//! * `agent`, `human`, `on_error`: an edge from the current state to `to`.
//! * `reset`: an edge from the current state back to `to` (the entry state).
//! * `sub-workflow`: no move (the child runs in its own session).
//!
//! Choices where FORMAT is silent: a later `trigger` whose `to` differs from the current
//! state (not produced by the runner today) is read as a re-entry from `__start__`; an edge
//! taken twice is listed twice, in order; a state reached again keeps the step of its first
//! arrival.
//!
//! Must not: read files or the clock; pure over the [`CaseRun`].

use wfx_schemas::graph::{CasePath, START};

use crate::interpret::CaseRun;

/// The path of one case run: `reached` maps each state to the **1-based** number of the
/// case step (the action) during which it was first reached (issue 16: one step numbering
/// for people, `@3` on the graph is "step 3"); `edges` lists the traversed
/// `(source, target)` pairs in order, `("__start__", entry)` first. Empty for a case that
/// did not run (skipped, unparsed, refused before its first trail step).
pub fn case_path(run: &CaseRun) -> CasePath {
    let mut path = CasePath::default();
    let mut current: Option<String> = None;
    for (step, t) in &run.trail {
        let source = match (t.kind, &current) {
            ("sub-workflow", _) => continue,
            ("trigger", Some(c)) if *c == t.to => continue,
            ("trigger", _) | (_, None) => START.to_owned(),
            (_, Some(c)) => c.clone(),
        };
        path.edges.push((source, t.to.clone()));
        path.reached.entry(t.to.clone()).or_insert(*step + 1);
        current = Some(t.to.clone());
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interpret::{CaseResult, Verdict, VerdictStatus};
    use crate::sim::TrailStep;

    fn run(trail: &[(usize, &str, &'static str)]) -> CaseRun {
        CaseRun {
            path: "workflows/w/tests/a.test.yaml".into(),
            result: CaseResult {
                id: "a".into(),
                title: None,
                description: None,
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
            },
            flow: String::new(),
            duration_ms: 0,
            observed: Default::default(),
            evidence: Default::default(),
            trail: trail
                .iter()
                .map(|(step, to, kind)| {
                    (
                        *step,
                        TrailStep {
                            to: (*to).into(),
                            kind,
                            reason: None,
                            workflow: None,
                            status: None,
                            ts: 0,
                        },
                    )
                })
                .collect(),
        }
    }

    fn edges(p: &CasePath) -> Vec<(&str, &str)> {
        p.edges
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect()
    }

    #[test]
    fn start_edge_then_moves_with_the_step_of_first_arrival() {
        let p = case_path(&run(&[
            (0, "triage", "trigger"),
            (0, "review", "agent"),
            (2, "review", "trigger"),
            (2, "review", "sub-workflow"),
            (3, "done", "human"),
        ]));
        assert_eq!(
            edges(&p),
            [
                ("__start__", "triage"),
                ("triage", "review"),
                ("review", "done")
            ]
        );
        assert_eq!(
            p.reached
                .iter()
                .map(|(k, v)| (k.as_str(), *v))
                .collect::<Vec<_>>(),
            [("done", 4), ("review", 1), ("triage", 1)]
        );
    }

    #[test]
    fn on_error_and_reset_move_from_the_current_state() {
        let p = case_path(&run(&[
            (0, "a", "trigger"),
            (0, "b", "agent"),
            (0, "err", "on_error"),
            (1, "a", "reset"),
            (1, "b", "agent"),
        ]));
        assert_eq!(
            edges(&p),
            [
                ("__start__", "a"),
                ("a", "b"),
                ("b", "err"),
                ("err", "a"),
                ("a", "b")
            ]
        );
        assert_eq!(p.reached.get("a"), Some(&1));
        assert_eq!(p.reached.get("err"), Some(&1));
    }

    #[test]
    fn a_case_that_did_not_run_has_an_empty_path() {
        assert_eq!(case_path(&run(&[])), CasePath::default());
    }
}
