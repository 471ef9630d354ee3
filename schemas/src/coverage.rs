//! Static coverage: which states, decision edges and triggers of a workflow the cases'
//! own structural assertions name, with no run (issue 17 item 2), so the editor can show it
//! as the author types. Pure: case and workflow models in, sorted maps out.
//!
//! What names what (FORMAT §B.2, §B.3):
//! * a state: the case's trigger enters its entry state (`trigger`, default `manual`);
//!   `reachedState: S`, `trail: {to: S}`, `decide: {to: S}` and `parked: {state: S}` name S;
//!   `triggerArrival: T` names T's entry state.
//! * a decision edge `H → S` (H a human state with a transition to S): `decide: {to: S}`
//!   names every such edge (a case may park at several human states; which one it decides
//!   at is only known from a run).
//! * a trigger: the case's `trigger`, and `triggerArrival: T` / `deliver: {trigger: T}`.
//!
//! Names that match nothing declared are left out (the cross-file rules report them).
//! This is what the assertions *claim*, not what a run does: `wfx-lsp test --coverage` is
//! the measured counterpart.

use std::collections::BTreeMap;

use crate::model::case::{Case, StepForm};
use crate::model::workflow::{StateType, Workflow};
use crate::text::TextRange;

/// One place where a case names an element.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Naming {
    /// Index of the case in the slice given to [`static_coverage`].
    pub case: usize,
    /// Byte range of the naming value in that case's text (`None` for the default
    /// `manual` trigger, which the case does not spell).
    pub range: Option<TextRange>,
    /// `trigger`, `reachedState`, `trail.to`, `decide.to`, `parked.state`,
    /// `triggerArrival` or `deliver`.
    pub via: &'static str,
}

/// What the cases name, keyed by state slug, `(human state, target)` and trigger id;
/// each list sorted by case index, then range.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StaticCoverage {
    /// State slug → namings.
    pub states: BTreeMap<String, Vec<Naming>>,
    /// `(human state, target)` → namings by `decide.to`.
    pub decisions: BTreeMap<(String, String), Vec<Naming>>,
    /// Trigger id → namings.
    pub triggers: BTreeMap<String, Vec<Naming>>,
}

impl StaticCoverage {
    /// Distinct cases naming `state`.
    pub fn cases_naming_state(&self, state: &str) -> usize {
        distinct(self.states.get(state))
    }

    /// Distinct cases deciding `from → to`.
    pub fn cases_deciding(&self, from: &str, to: &str) -> usize {
        distinct(self.decisions.get(&(from.to_owned(), to.to_owned())))
    }
}

fn distinct(v: Option<&Vec<Naming>>) -> usize {
    let mut ids: Vec<usize> = v
        .map(|v| v.iter().map(|n| n.case).collect())
        .unwrap_or_default();
    ids.dedup();
    ids.len()
}

/// Folds the cases' structural assertions over `wf` (see the module docs). Work is linear
/// in the cases' steps times the workflow's states (bounded work: both are bounded by the
/// files' size limits).
pub fn static_coverage(wf: &Workflow, cases: &[&Case]) -> StaticCoverage {
    let mut out = StaticCoverage::default();
    let declared = |s: &str| wf.state(s).is_some();
    let name_state = |out: &mut StaticCoverage, s: &str, n: Naming| {
        if declared(s) {
            out.states.entry(s.to_owned()).or_default().push(n);
        }
    };
    for (ci, case) in cases.iter().enumerate() {
        let trigger = case.trigger_id();
        if let Some(t) = wf.trigger(trigger) {
            let range = case.trigger.as_ref().map(|t| t.range);
            let n = Naming {
                case: ci,
                range,
                via: "trigger",
            };
            out.triggers
                .entry(t.id.value.clone())
                .or_default()
                .push(n.clone());
            name_state(&mut out, &t.state.clone(), n);
        }
        for step in &case.steps {
            let Some(form) = step.form() else {
                continue;
            };
            let arrival = matches!(form, StepForm::TriggerArrival(_));
            match form {
                StepForm::ReachedState(s) => name_state(
                    &mut out,
                    &s.value,
                    Naming {
                        case: ci,
                        range: Some(s.range),
                        via: "reachedState",
                    },
                ),
                StepForm::Trail { to: Some(s), .. } => name_state(
                    &mut out,
                    &s.value,
                    Naming {
                        case: ci,
                        range: Some(s.range),
                        via: "trail.to",
                    },
                ),
                StepForm::Parked { state: Some(s), .. } => name_state(
                    &mut out,
                    &s.value,
                    Naming {
                        case: ci,
                        range: Some(s.range),
                        via: "parked.state",
                    },
                ),
                StepForm::Decide { to, .. } => {
                    let n = Naming {
                        case: ci,
                        range: Some(to.range),
                        via: "decide.to",
                    };
                    for h in wf.states.iter().filter(|s| s.kind == StateType::Human) {
                        if h.transitions.iter().any(|t| t.to.value == to.value) {
                            out.decisions
                                .entry((h.slug.value.clone(), to.value.clone()))
                                .or_default()
                                .push(n.clone());
                        }
                    }
                    name_state(&mut out, &to.value, n);
                }
                StepForm::TriggerArrival(t) | StepForm::Deliver { trigger: t, .. } => {
                    let via = if arrival { "triggerArrival" } else { "deliver" };
                    if let Some(decl) = wf.trigger(&t.value) {
                        let n = Naming {
                            case: ci,
                            range: Some(t.range),
                            via,
                        };
                        out.triggers
                            .entry(decl.id.value.clone())
                            .or_default()
                            .push(n.clone());
                        if via == "triggerArrival" {
                            name_state(&mut out, &decl.state.clone(), n);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for v in out
        .states
        .values_mut()
        .chain(out.decisions.values_mut())
        .chain(out.triggers.values_mut())
    {
        v.sort();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wf() -> Workflow {
        let src = "states:\n  a:\n    triggers: { manual: {}, mail: {} }\n    transitions: [{ to: h }]\n  h:\n    type: human\n    transitions: [{ to: done, type: approve }, { to: a, type: refine }]\n  done: {}\n  lonely: {}\n";
        Workflow::from_node(&crate::yaml::parse(src).documents[0])
    }

    fn case(src: &str) -> Case {
        Case::from_node(&crate::yaml::parse(src).documents[0])
    }

    #[test]
    fn assertions_name_states_decisions_and_triggers() {
        let w = wf();
        let c0 = case(
            "steps:\n  - send: hi\n  - reachedState: h\n  - parked: { state: h }\n  - decide: { to: done }\n  - trail: { to: done, count: 1 }\n",
        );
        let c1 = case("trigger: { id: mail }\nsteps:\n  - send: hi\n  - reachedState: nowhere\n");
        let s = static_coverage(&w, &[&c0, &c1]);
        assert_eq!(
            s.cases_naming_state("a"),
            2,
            "both enter a by their trigger"
        );
        assert_eq!(s.cases_naming_state("h"), 1);
        assert_eq!(s.states["h"].len(), 2, "reachedState and parked.state");
        assert_eq!(s.cases_naming_state("done"), 1);
        assert_eq!(s.cases_naming_state("lonely"), 0);
        assert!(!s.states.contains_key("nowhere"));
        assert_eq!(s.cases_deciding("h", "done"), 1);
        assert_eq!(s.cases_deciding("h", "a"), 0);
        assert_eq!(s.triggers["manual"].len(), 1, "{:?}", s.triggers);
        assert_eq!(s.triggers["manual"][0].range, None);
        assert_eq!(s.triggers["mail"][0].case, 1);
        let r = s.states["done"][0].range.unwrap();
        let text = "steps:\n  - send: hi\n  - reachedState: h\n  - parked: { state: h }\n  - decide: { to: done }\n  - trail: { to: done, count: 1 }\n";
        assert_eq!(&text[r.start as usize..r.end as usize], "done");
    }
}
