//! Satisfiability of a case against its workflow (issue 15, items 5 and 8): a pure, bounded
//! search for a path through the workflow graph (FORMAT §E.1–§E.5) that the case's actions
//! and structural assertions (§B.2, §B.5: `reachedState`, `parked`, `decide`, `deliver`,
//! `raised`, `trail`, `triggerArrival`, `noTraversal`, `succeeded`, `variables`) accept, in
//! order. No execution: nothing here runs a hook or a script.
//!
//! The abstraction: after each case step, the set of situations the session can be in
//! (current state, `fresh`/`idle`/parked for a decision/parked for input/raised, and one
//! capped counter per counted assertion). An action (`send`, `decide`, `deliver`) gives the
//! agent one model run in which it may take any sequence of the moves it owns: follow an
//! edge of an agent state (`archmax_advance`; entering a human state parks), park with
//! `archmax_wait`, `archmax_raise`, `archmax_reset` back to the entry state (each unless
//! the workflow forbids it by exact name), or be routed by `on_error` (the runtime's, when a
//! hook or budget fails: counted as possible, never chosen by a scaffold if avoidable).
//! Hooks are treated as passable (design note "hooks can veto": a `before` veto leaves the
//! same trail as an agent that does not move), so a verdict of [`Satisfiability::
//! Unsatisfiable`] holds for every hook outcome.
//!
//! Conservative where the static model cannot know: a `trail` count with `kind` absent is a
//! lower bound (sub-workflow steps may add to it), a `trail` pinning a `reason` the agent
//! chooses is not evaluated, content assertions (`reply`, tool assertions, `grade`) are not
//! evaluated, `variables` are judged only for seeded, locked names. So "unsatisfiable" is
//! only said when no agent could pass ("no false claims").
//!
//! Bounded work (security promise "bounded work"): at most [`MAX_SITUATIONS`] situations per
//! step and [`MAX_WORK`] expansions per case; hitting either gives
//! [`Satisfiability::Unknown`], never a verdict.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::model::case::{Case, Channel, StepForm};
use crate::model::workflow::{StateType, ToolEntry, Workflow};

/// Most distinct situations kept after one step.
pub const MAX_SITUATIONS: usize = 4_096;
/// Most situation expansions (one per edge, park, raise or reset considered) per case.
pub const MAX_WORK: usize = 200_000;

/// One thing that moves the machine in a model run.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Move {
    /// `archmax_advance` along a declared edge. `hooked` when the source has `after` hooks
    /// or the target `before` hooks (they may veto at run time).
    Advance {
        /// From-state slug.
        from: String,
        /// Target slug.
        to: String,
        /// The edge has hooks that may veto.
        hooked: bool,
    },
    /// `archmax_wait` in the state.
    Wait {
        /// The state.
        state: String,
    },
    /// `archmax_raise` in the state.
    Raise {
        /// The state.
        state: String,
    },
    /// `archmax_reset` back to the entry state.
    Reset {
        /// The entry state.
        to: String,
    },
    /// The runtime's `on_error` route (not the agent's to take; a scaffold cannot script it).
    OnError {
        /// The failing state.
        from: String,
        /// The handler.
        to: String,
    },
}

/// The model run one action starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedRun {
    /// Index into the case's `steps` of the action (`send`, `decide`, `deliver`).
    pub step: usize,
    /// State the run starts in.
    pub start: String,
    /// True when every tool call is refused (a `send` to a parked session, a `decide`
    /// into a human state).
    pub reply_only: bool,
    /// Moves, in order.
    pub moves: Vec<Move>,
    /// State the run ends in.
    pub end: String,
}

/// A path through the workflow satisfying the case: one run per action, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The runs.
    pub runs: Vec<PlannedRun>,
    /// True when the path relies on an `on_error` route (possible, but not scriptable).
    pub needs_runtime_route: bool,
}

/// The verdict of [`analyse`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Satisfiability {
    /// A path exists (the shortest found, preferring ones without `on_error` routes).
    Satisfiable(Plan),
    /// No agent can pass the case: the first step no path gets past, and why.
    Unsatisfiable {
        /// Index into `steps`.
        step: usize,
        /// Plain-words reason, e.g. "`decide.to: x` is no edge of `review` …".
        reason: String,
    },
    /// The analysis could not decide (a bound was hit, or the case names something the
    /// workflow lacks, which other diagnostics report).
    Unknown(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Status {
    Fresh,
    Idle,
    Decision,
    Input,
    Raised,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Situation {
    state: usize,
    status: Status,
    counters: Vec<u32>,
}

/// What a counted assertion counts.
struct Counter {
    to: Option<String>,
    kind: Option<String>,
    reason: Option<String>,
    /// Counts any step whose kind is not `trigger` (for `noTraversal`, `reachedState`).
    not_trigger: bool,
    cap: u32,
}

/// A trail step as the analysis sees it; `reason: None` when the agent chooses it.
struct Event<'e> {
    to: &'e str,
    kind: &'static str,
    reason: Option<&'e str>,
}

impl Counter {
    fn bump(&self, n: u32, e: &Event<'_>) -> u32 {
        if self.not_trigger && e.kind == "trigger" {
            return n;
        }
        if self.to.as_deref().is_some_and(|t| t != e.to)
            || self.kind.as_deref().is_some_and(|k| k != e.kind)
        {
            return n;
        }
        if let Some(r) = &self.reason
            && e.reason != Some(r.as_str())
        {
            return n;
        }
        (n + 1).min(self.cap)
    }
}

/// How a step uses counters.
enum Check {
    AtLeastOne(usize),
    Zero(usize),
    Exactly(usize, u32),
    AtMost(usize, u32),
}

struct Node {
    sit: Situation,
    parent: Option<usize>,
    run: Option<PlannedRun>,
    maybe: bool,
}

/// What the path search needs of a workflow, whatever the case (FORMAT §E.1–§E.5), with
/// states as indices into `states`: built once per workflow by [`Graph::new`] and shared by
/// its cases ([`verdict_in`]; `check` keeps one per loaded `workflow.yaml`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    /// Per state: the targets of its transitions that name a known state, in declaration
    /// order (index, `hooked`: the source has `after` hooks or the target `before` hooks).
    edges: Vec<Vec<(usize, bool)>>,
    /// Per state: its `on_error` handler, when it names a known state.
    on_error: Vec<Option<usize>>,
    /// Per state: `type: human`.
    human: Vec<bool>,
    /// Per state: `archmax_reset` is not forbidden (by exact name, here or always).
    can_reset: Vec<bool>,
    /// Per state: `archmax_wait` is not forbidden and the state is not a human state.
    can_wait: Vec<bool>,
    /// Per state: `archmax_raise` is not forbidden.
    can_raise: Vec<bool>,
    /// Per state: `archmax_advance` is not forbidden.
    can_advance: Vec<bool>,
}

impl Graph {
    /// The graph of `wf`; a transition or `on_error` naming no state is left out.
    pub fn new(wf: &Workflow) -> Self {
        let n = wf.states.len();
        let flag = |tool: &str| -> Vec<bool> {
            (0..n)
                .map(|i| {
                    !forbids(&wf.tools_forbid_always, tool)
                        && wf
                            .states
                            .get(i)
                            .is_some_and(|s| !forbids(&s.tools_forbid, tool))
                })
                .collect()
        };
        let mut can_wait = flag("archmax_wait");
        for (i, w) in can_wait.iter_mut().enumerate() {
            *w = *w && wf.states.get(i).is_some_and(|s| s.kind != StateType::Human);
        }
        let index = |slug: &str| wf.states.iter().position(|s| s.slug.value == slug);
        Graph {
            edges: wf
                .states
                .iter()
                .map(|st| {
                    st.transitions
                        .iter()
                        .filter_map(|t| {
                            let to = index(&t.to.value)?;
                            let hooked = !st.after.is_empty()
                                || wf.states.get(to).is_some_and(|s| !s.before.is_empty());
                            Some((to, hooked))
                        })
                        .collect()
                })
                .collect(),
            on_error: wf
                .states
                .iter()
                .map(|st| st.on_error.as_ref().and_then(|o| index(&o.value)))
                .collect(),
            human: wf
                .states
                .iter()
                .map(|s| s.kind == StateType::Human)
                .collect(),
            can_reset: flag("archmax_reset"),
            can_wait,
            can_raise: flag("archmax_raise"),
            can_advance: flag("archmax_advance"),
        }
    }
}

struct Search<'w> {
    wf: &'w Workflow,
    /// Record the moves of each run ([`analyse`]); false for [`verdict`], which needs only
    /// the situations (the verdict does not depend on the moves).
    plans: bool,
    /// The workflow's graph.
    g: &'w Graph,
    counters: Vec<Counter>,
    entry: usize,
    trigger: String,
    work: usize,
    nodes: Vec<Node>,
}

fn forbids(entries: &[ToolEntry], tool: &str) -> bool {
    entries
        .iter()
        .any(|e| e.tool.value == tool && e.args.is_empty() && e.paths.is_empty())
}

fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

impl<'w> Search<'w> {
    fn slug(&self, i: usize) -> &'w str {
        self.wf.states.get(i).map_or("", |s| s.slug.value.as_str())
    }

    fn index(&self, slug: &str) -> Option<usize> {
        self.wf.states.iter().position(|s| s.slug.value == slug)
    }

    fn is_human(&self, i: usize) -> bool {
        self.g.human.get(i).copied().unwrap_or(false)
    }

    /// `moves` plus the move `mv` makes, when plans are recorded; else nothing is built.
    fn extend(&self, moves: &[Move], mv: impl FnOnce() -> Move) -> Vec<Move> {
        if !self.plans {
            return Vec::new();
        }
        let mut m = moves.to_vec();
        m.push(mv());
        m
    }

    fn bump(&self, counters: &mut [u32], e: &Event<'_>) {
        for (c, n) in self.counters.iter().zip(counters.iter_mut()) {
            *n = c.bump(*n, e);
        }
    }

    /// Every outcome of one model run starting in `start` (running, not parked): BFS over
    /// (state, counters), shortest move lists first. Outcomes are (situation, moves, maybe).
    fn agent_run(
        &mut self,
        start: usize,
        counters: Vec<u32>,
    ) -> Result<Vec<(Situation, Vec<Move>, bool)>, String> {
        let mut out = Vec::new();
        let mut seen: BTreeMap<(usize, Vec<u32>), ()> = BTreeMap::new();
        let mut queue: std::collections::VecDeque<(usize, Vec<u32>, Vec<Move>, bool)> =
            std::collections::VecDeque::new();
        queue.push_back((start, counters, Vec::new(), false));
        // (target, its move when plans are recorded, trail kind, `on_error`)
        let mut targets: Vec<(usize, Option<Move>, &'static str, bool)> = Vec::new();
        while let Some((at, cs, moves, maybe)) = queue.pop_front() {
            if seen.insert((at, cs.clone()), ()).is_some() {
                continue;
            }
            self.work += 1;
            if self.work > MAX_WORK {
                return Err(format!(
                    "the path search stopped after {MAX_WORK} steps of work"
                ));
            }
            // Stop here.
            out.push((
                Situation {
                    state: at,
                    status: Status::Idle,
                    counters: cs.clone(),
                },
                moves.clone(),
                maybe,
            ));
            let slug = self.slug(at);
            if self.g.can_wait.get(at).copied().unwrap_or(false) {
                out.push((
                    Situation {
                        state: at,
                        status: Status::Input,
                        counters: cs.clone(),
                    },
                    self.extend(&moves, || Move::Wait {
                        state: slug.to_owned(),
                    }),
                    maybe,
                ));
            }
            if self.g.can_raise.get(at).copied().unwrap_or(false) {
                out.push((
                    Situation {
                        state: at,
                        status: Status::Raised,
                        counters: cs.clone(),
                    },
                    self.extend(&moves, || Move::Raise {
                        state: slug.to_owned(),
                    }),
                    maybe,
                ));
            }
            targets.clear();
            if self.g.can_advance.get(at).copied().unwrap_or(false)
                && let Some(edges) = self.g.edges.get(at)
            {
                for &(to, hooked) in edges {
                    let mv = self.plans.then(|| Move::Advance {
                        from: slug.to_owned(),
                        to: self.slug(to).to_owned(),
                        hooked,
                    });
                    targets.push((to, mv, "agent", false));
                }
            }
            if let Some(to) = self.g.on_error.get(at).copied().flatten() {
                let mv = self.plans.then(|| Move::OnError {
                    from: slug.to_owned(),
                    to: self.slug(to).to_owned(),
                });
                targets.push((to, mv, "on_error", true));
            }
            if self.g.can_reset.get(at).copied().unwrap_or(false) {
                let mv = self.plans.then(|| Move::Reset {
                    to: self.slug(self.entry).to_owned(),
                });
                targets.push((self.entry, mv, "reset", false));
            }
            for (to, mv, kind, m_maybe) in targets.drain(..) {
                let mut cs2 = cs.clone();
                let to_slug = self.slug(to);
                self.bump(
                    &mut cs2,
                    &Event {
                        to: to_slug,
                        kind,
                        reason: None,
                    },
                );
                let m = match mv {
                    Some(mv) => {
                        let mut m = moves.clone();
                        m.push(mv);
                        m
                    }
                    None => Vec::new(),
                };
                if self.is_human(to) {
                    out.push((
                        Situation {
                            state: to,
                            status: Status::Decision,
                            counters: cs2,
                        },
                        m,
                        maybe || m_maybe,
                    ));
                } else {
                    queue.push_back((to, cs2, m, maybe || m_maybe));
                }
            }
        }
        Ok(out)
    }
}

/// Searches for a path through `wf` that satisfies `case` (see the module docs). Pure and
/// bounded; the same answer for the same inputs.
pub fn analyse(wf: &Workflow, case: &Case) -> Satisfiability {
    search(wf, &Graph::new(wf), case, true)
}

/// The verdict of [`analyse`] alone, as `check` needs it for `WFX313`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// [`Satisfiability::Satisfiable`], without the plan.
    Satisfiable,
    /// [`Satisfiability::Unsatisfiable`]: index into `steps` and the reason.
    Unsatisfiable {
        /// Index into `steps`.
        step: usize,
        /// Plain-words reason.
        reason: String,
    },
    /// [`Satisfiability::Unknown`].
    Unknown(String),
}

/// [`analyse`]'s verdict without recording the moves of the plan: the same search over
/// the same situations, so the same verdict, step and reason for every input (and the same
/// bounds, [`MAX_SITUATIONS`] and [`MAX_WORK`]), at a fraction of the allocations (it is
/// what `check` runs for `WFX313` on every case; docs/performance.md, "check cost").
pub fn verdict(wf: &Workflow, case: &Case) -> Verdict {
    verdict_in(wf, &Graph::new(wf), case)
}

/// [`verdict`] with the workflow's [`Graph`] built beforehand (`graph` must be
/// `Graph::new(wf)`), so the cases of one workflow share it.
pub fn verdict_in(wf: &Workflow, graph: &Graph, case: &Case) -> Verdict {
    match search(wf, graph, case, false) {
        Satisfiability::Satisfiable(_) => Verdict::Satisfiable,
        Satisfiability::Unsatisfiable { step, reason } => Verdict::Unsatisfiable { step, reason },
        Satisfiability::Unknown(why) => Verdict::Unknown(why),
    }
}

/// The search of [`analyse`]; the plan's runs are recorded when `plans`.
fn search(wf: &Workflow, g: &Graph, case: &Case, plans: bool) -> Satisfiability {
    let trigger = case.trigger_id().to_owned();
    let Some(t) = wf.trigger(&trigger) else {
        return Satisfiability::Unknown(format!("trigger `{trigger}` is declared by no state"));
    };
    let Some(entry) = wf.states.iter().position(|s| s.slug.value == t.state) else {
        return Satisfiability::Unknown(format!("trigger `{trigger}` enters no known state"));
    };
    let mut s = Search {
        wf,
        plans,
        g,
        counters: Vec::new(),
        entry,
        trigger: trigger.clone(),
        work: 0,
        nodes: Vec::new(),
    };
    // A name the workflow lacks is another rule's report (WFX303/WFX304): no verdict here.
    let known = |x: &str| wf.states.iter().any(|st| st.slug.value == x);
    let forms: Vec<Option<StepForm>> = case.steps.iter().map(|st| st.form()).collect();
    for form in &forms {
        let named = match form {
            Some(StepForm::Decide { to, .. }) => Some(to.value.as_str()),
            Some(StepForm::Parked { state: Some(x), .. }) => Some(x.value.as_str()),
            Some(StepForm::Trail { to: Some(x), .. }) => Some(x.value.as_str()),
            _ => None,
        };
        if let Some(x) = named.filter(|x| !known(x)) {
            return Satisfiability::Unknown(format!("`{x}` is no state"));
        }
    }
    // Counters and per-step checks.
    let mut checks: Vec<Option<Check>> = Vec::new();
    for form in &forms {
        let check = match form {
            Some(StepForm::ReachedState(x)) => {
                if !wf.states.iter().any(|st| st.slug.value == x.value) {
                    return Satisfiability::Unknown(format!("`{}` is no state", x.value));
                }
                if x.value == t.state {
                    // The start state is entered by a `trigger` step, which `reachedState`
                    // ignores, but a sub-workflow dispatched there writes `to` = the start
                    // state (FORMAT §E.2): possible whenever the run is in it, so not judged.
                    checks.push(None);
                    continue;
                }
                s.counters.push(Counter {
                    to: Some(x.value.clone()),
                    kind: None,
                    reason: None,
                    not_trigger: true,
                    cap: 1,
                });
                Some(Check::AtLeastOne(s.counters.len() - 1))
            }
            Some(StepForm::TriggerArrival(x)) => {
                s.counters.push(Counter {
                    to: None,
                    kind: Some("trigger".into()),
                    reason: Some(x.value.clone()),
                    not_trigger: false,
                    cap: 1,
                });
                Some(Check::AtLeastOne(s.counters.len() - 1))
            }
            Some(StepForm::NoTraversal) => {
                s.counters.push(Counter {
                    to: None,
                    kind: None,
                    reason: None,
                    not_trigger: true,
                    cap: 1,
                });
                Some(Check::Zero(s.counters.len() - 1))
            }
            Some(StepForm::Trail {
                to,
                kind,
                reason,
                count,
            }) => {
                let chosen_reason =
                    reason.is_some() && !matches!(kind.as_deref(), Some("trigger") | Some("human"));
                if chosen_reason || kind.as_deref() == Some("sub-workflow") {
                    None
                } else {
                    let cap = u32::try_from(*count).unwrap_or(u32::MAX - 1).min(64) + 1;
                    let want = u32::try_from(*count).unwrap_or(u32::MAX);
                    s.counters.push(Counter {
                        to: to.as_ref().map(|t| t.value.clone()),
                        kind: kind.clone(),
                        reason: reason.clone(),
                        not_trigger: false,
                        cap,
                    });
                    let i = s.counters.len() - 1;
                    if kind.is_none() {
                        Some(Check::AtMost(i, want))
                    } else if want >= cap {
                        // Beyond the cap we only know "at least cap".
                        None
                    } else {
                        Some(Check::Exactly(i, want))
                    }
                }
            }
            _ => None,
        };
        checks.push(check);
    }
    let seeded: Vec<(String, Value)> = case
        .variables
        .iter()
        .map(|(k, v)| (k.value.clone(), v.to_json()))
        .collect();
    s.nodes.push(Node {
        sit: Situation {
            state: entry,
            status: Status::Fresh,
            counters: vec![0; s.counters.len()],
        },
        parent: None,
        run: None,
        maybe: false,
    });
    let mut layer: Vec<usize> = vec![0];
    let mut delivered_vars: Vec<String> = Vec::new();
    let mut delivered_triggers: Vec<String> = Vec::new();
    for (i, form) in forms.iter().enumerate() {
        let Some(form) = form else {
            continue;
        };
        let next = match step(
            &mut s,
            &layer,
            i,
            form,
            checks.get(i).and_then(Option::as_ref),
        ) {
            Ok(v) => v,
            Err(Stop::Unknown(m)) => return Satisfiability::Unknown(m),
            Err(Stop::Empty(reason)) => {
                return Satisfiability::Unsatisfiable { step: i, reason };
            }
        };
        if let StepForm::Deliver { trigger, variables } = form {
            delivered_triggers.push(trigger.value.clone());
            delivered_vars.extend(variables.iter().map(|(k, _)| k.clone()));
        }
        if let StepForm::Variables {
            expect,
            path,
            locked,
        } = form
            && let Some(reason) = variables_reason(
                &seeded,
                &trigger,
                &delivered_vars,
                &delivered_triggers,
                expect,
                path,
                locked,
            )
        {
            return Satisfiability::Unsatisfiable { step: i, reason };
        }
        layer = next;
    }
    // Pick the first node without `maybe`, else the first.
    let best = layer
        .iter()
        .copied()
        .find(|&k| s.nodes.get(k).is_some_and(|n| !n.maybe))
        .or_else(|| layer.first().copied());
    let Some(mut k) = best else {
        return Satisfiability::Unknown("no step was analysed".into());
    };
    let needs_runtime_route = s.nodes.get(k).is_some_and(|n| n.maybe);
    let mut runs = Vec::new();
    while let Some(node) = s.nodes.get(k) {
        if let Some(r) = &node.run {
            runs.push(r.clone());
        }
        match node.parent {
            Some(p) => k = p,
            None => break,
        }
    }
    runs.reverse();
    Satisfiability::Satisfiable(Plan {
        runs,
        needs_runtime_route,
    })
}

fn variables_reason(
    seeded: &[(String, Value)],
    trigger: &str,
    delivered_vars: &[String],
    delivered_triggers: &[String],
    expect: &[(crate::model::Spanned<String>, Value)],
    path: &[(String, String)],
    locked: &[(String, bool)],
) -> Option<String> {
    for (name, want) in expect {
        let name = name.value.as_str();
        if path.iter().any(|(n, _)| n == name) || delivered_vars.iter().any(|d| d == name) {
            continue;
        }
        if name == "trigger" {
            if delivered_triggers.is_empty() && want != &Value::String(trigger.to_owned()) {
                return Some(format!(
                    "`trigger` is set and locked to `{trigger}` by the case's trigger, so it cannot equal {want}"
                ));
            }
            continue;
        }
        if name == "title" {
            continue;
        }
        if let Some((_, v)) = seeded.iter().find(|(k, _)| k == name) {
            if !json_equal(v, want) {
                return Some(format!(
                    "`{name}` is seeded and locked by the case's `variables` as {v}, so it cannot equal {want}"
                ));
            }
            if locked.iter().any(|(n, l)| n == name && !l) {
                return Some(format!(
                    "`{name}` is seeded by the case's `variables`, and seeds are always locked"
                ));
            }
        }
    }
    None
}

enum Stop {
    Unknown(String),
    Empty(String),
}

fn describe_status(st: Status) -> &'static str {
    match st {
        Status::Fresh => "not started",
        Status::Idle => "running or finished",
        Status::Decision => "parked for a decision",
        Status::Input => "parked for input",
        Status::Raised => "raised",
    }
}

/// Applies step `i` to every situation of `layer`; the new layer, or why it is empty.
fn step(
    s: &mut Search<'_>,
    layer: &[usize],
    i: usize,
    form: &StepForm,
    check: Option<&Check>,
) -> Result<Vec<usize>, Stop> {
    let mut next: BTreeMap<Situation, usize> = BTreeMap::new();
    let mut order: Vec<usize> = Vec::new();
    let mut add = |s: &mut Search<'_>, node: Node| -> Result<(), Stop> {
        if let Some(&old) = next.get(&node.sit) {
            let replace = s.nodes.get(old).is_some_and(|o| o.maybe) && !node.maybe;
            if replace && let Some(slot) = s.nodes.get_mut(old) {
                *slot = node;
            }
            return Ok(());
        }
        if next.len() >= MAX_SITUATIONS {
            return Err(Stop::Unknown(format!(
                "more than {MAX_SITUATIONS} situations after step {i}"
            )));
        }
        s.nodes.push(node);
        let k = s.nodes.len() - 1;
        if let Some(n) = s.nodes.get(k) {
            next.insert(n.sit.clone(), k);
        }
        order.push(k);
        Ok(())
    };
    match form {
        StepForm::Send(_) | StepForm::Decide { .. } | StepForm::Deliver { .. } => {
            for &k in layer {
                let Some(node) = s.nodes.get(k) else { continue };
                let sit = node.sit.clone();
                let maybe = node.maybe;
                // (start state, counters, reply-only, park-at-human-target)
                let start: Option<(usize, Vec<u32>, bool)> = match (form, sit.status) {
                    (StepForm::Send(_), Status::Decision | Status::Input) => {
                        Some((sit.state, sit.counters.clone(), true))
                    }
                    (StepForm::Send(_), _) => {
                        let mut cs = sit.counters.clone();
                        let to = s.slug(sit.state);
                        let trig = s.trigger.clone();
                        s.bump(
                            &mut cs,
                            &Event {
                                to,
                                kind: "trigger",
                                reason: Some(&trig),
                            },
                        );
                        Some((sit.state, cs, false))
                    }
                    (StepForm::Decide { to, comment }, Status::Decision) => {
                        let edge = s.wf.states.get(sit.state).is_some_and(|st| {
                            st.transitions.iter().any(|t| t.to.value == to.value)
                        });
                        match s.index(&to.value).filter(|_| edge) {
                            None => None,
                            Some(target) => {
                                let mut cs = sit.counters.clone();
                                let c = comment.as_deref().map(str::trim).filter(|c| !c.is_empty());
                                s.bump(
                                    &mut cs,
                                    &Event {
                                        to: s.slug(target),
                                        kind: "human",
                                        reason: c,
                                    },
                                );
                                Some((target, cs, s.is_human(target)))
                            }
                        }
                    }
                    (StepForm::Deliver { trigger, .. }, Status::Input) => {
                        let mut cs = sit.counters.clone();
                        s.bump(
                            &mut cs,
                            &Event {
                                to: s.slug(sit.state),
                                kind: "trigger",
                                reason: Some(&trigger.value),
                            },
                        );
                        Some((sit.state, cs, false))
                    }
                    _ => None,
                };
                let Some((at, cs, reply_only)) = start else {
                    continue;
                };
                let start_slug = if s.plans {
                    s.slug(at).to_owned()
                } else {
                    String::new()
                };
                if reply_only {
                    let status = if matches!(form, StepForm::Decide { .. }) {
                        Status::Decision
                    } else {
                        sit.status
                    };
                    let run = s.plans.then(|| PlannedRun {
                        step: i,
                        start: start_slug.clone(),
                        reply_only: true,
                        moves: Vec::new(),
                        end: start_slug,
                    });
                    add(
                        s,
                        Node {
                            sit: Situation {
                                state: at,
                                status,
                                counters: cs,
                            },
                            parent: Some(k),
                            run,
                            maybe,
                        },
                    )?;
                    continue;
                }
                let outcomes = s.agent_run(at, cs).map_err(Stop::Unknown)?;
                for (sit2, moves, m2) in outcomes {
                    let run = s.plans.then(|| PlannedRun {
                        step: i,
                        start: start_slug.clone(),
                        reply_only: false,
                        moves,
                        end: s.slug(sit2.state).to_owned(),
                    });
                    add(
                        s,
                        Node {
                            sit: sit2,
                            parent: Some(k),
                            run,
                            maybe: maybe || m2,
                        },
                    )?;
                }
            }
        }
        _ => {
            for &k in layer {
                let Some(node) = s.nodes.get(k) else { continue };
                let ok = passes(s, &node.sit, form, check);
                if ok {
                    order.push(k);
                }
            }
            if order.is_empty() && !layer.is_empty() {
                return Err(Stop::Empty(why_not(s, layer, form, check)));
            }
            return Ok(order);
        }
    }
    if order.is_empty() && !layer.is_empty() {
        return Err(Stop::Empty(why_not(s, layer, form, check)));
    }
    Ok(order)
}

fn passes(s: &Search<'_>, sit: &Situation, form: &StepForm, check: Option<&Check>) -> bool {
    let counted = |c: &Check| -> bool {
        match *c {
            Check::AtLeastOne(i) => sit.counters.get(i).is_some_and(|n| *n >= 1),
            Check::Zero(i) => sit.counters.get(i).is_some_and(|n| *n == 0),
            Check::Exactly(i, w) => sit.counters.get(i).is_some_and(|n| *n == w),
            Check::AtMost(i, w) => sit.counters.get(i).is_some_and(|n| *n <= w),
        }
    };
    match form {
        StepForm::Succeeded => sit.status == Status::Idle,
        StepForm::Parked { channel, state } => {
            let ch_ok = match (channel, sit.status) {
                (_, Status::Decision | Status::Input) if channel.is_none() => true,
                (Some(Channel::Decision), Status::Decision) => true,
                (Some(Channel::Input), Status::Input) => true,
                _ => false,
            };
            ch_ok
                && state
                    .as_ref()
                    .is_none_or(|st| st.value == s.slug(sit.state))
        }
        StepForm::Raised { .. } => sit.status == Status::Raised,
        _ => check.is_none_or(counted),
    }
}

fn why_not(s: &Search<'_>, layer: &[usize], form: &StepForm, check: Option<&Check>) -> String {
    let sits: Vec<&Situation> = layer
        .iter()
        .filter_map(|&k| s.nodes.get(k).map(|n| &n.sit))
        .collect();
    let mut states: Vec<&str> = sits.iter().map(|x| s.slug(x.state)).collect();
    states.sort_unstable();
    states.dedup();
    let start = s.slug(s.entry);
    match form {
        StepForm::Decide { to, .. } => {
            let parks: Vec<&Situation> = sits
                .iter()
                .copied()
                .filter(|x| x.status == Status::Decision)
                .collect();
            if parks.is_empty() {
                return "no path parks the session at a human state before this `decide`".into();
            }
            let mut at: Vec<String> = parks
                .iter()
                .map(|x| {
                    let st = s.slug(x.state);
                    let edges: Vec<&str> =
                        s.wf.states
                            .get(x.state)
                            .map(|m| m.transitions.iter().map(|t| t.to.value.as_str()).collect())
                            .unwrap_or_default();
                    format!("`{st}` (edges: {})", edges.join(", "))
                })
                .collect();
            at.sort();
            at.dedup();
            format!(
                "`decide.to: {}` is no edge of the state the session is parked at here: {}",
                to.value,
                at.join("; ")
            )
        }
        StepForm::Deliver { .. } => {
            "no path parks the session for input (`archmax_wait`) before this `deliver`".into()
        }
        StepForm::Succeeded => {
            "the session is parked or raised here on every path, so `succeeded` cannot hold".into()
        }
        StepForm::Parked { channel, state } => {
            let what = match (channel, state) {
                (_, Some(st)) => format!("at `{}`", st.value),
                (Some(Channel::Decision), None) => "for a decision".into(),
                (Some(Channel::Input), None) => "for input".into(),
                (None, None) => String::new(),
            };
            let mut reach: Vec<String> = sits
                .iter()
                .filter(|x| matches!(x.status, Status::Decision | Status::Input))
                .map(|x| format!("`{}` ({})", s.slug(x.state), describe_status(x.status)))
                .collect();
            reach.sort();
            reach.dedup();
            if reach.is_empty() {
                format!("no path parks the session {what} by this step").replace("  ", " ")
            } else {
                format!(
                    "no path parks the session {what} by this step; it can be parked at: {}",
                    reach.join(", ")
                )
                .replace("  ", " ")
            }
        }
        StepForm::Raised { .. } => {
            "`archmax_raise` is forbidden in every state the session can be in here".into()
        }
        StepForm::ReachedState(x) => {
            let reachable = reachable_from(s, s.entry);
            if !reachable.contains(&x.value.as_str()) {
                format!(
                    "`{}` is unreachable from `{start}`, the start state of trigger `{}`",
                    x.value, s.trigger
                )
            } else {
                format!(
                    "no path reaches `{}` by this step (the session can only be in: {})",
                    x.value,
                    states.join(", ")
                )
            }
        }
        StepForm::TriggerArrival(x) => format!(
            "trigger `{}` never arrives: the case starts with `{}` and delivers no `{}` before this step",
            x.value, s.trigger, x.value
        ),
        StepForm::NoTraversal => "every path has committed a transition by this step".into(),
        StepForm::Trail { count, .. } => {
            let mut seen: Vec<u32> = match check {
                Some(Check::Exactly(i, _) | Check::AtMost(i, _)) => sits
                    .iter()
                    .filter_map(|x| x.counters.get(*i).copied())
                    .collect(),
                _ => Vec::new(),
            };
            seen.sort_unstable();
            seen.dedup();
            let seen: Vec<String> = seen.iter().map(u32::to_string).collect();
            format!(
                "no path gives a count of {count} here (possible counts: {})",
                seen.join(", ")
            )
        }
        _ => "no path satisfies this step".into(),
    }
}

fn reachable_from<'w>(s: &Search<'w>, from: usize) -> Vec<&'w str> {
    let mut seen = vec![false; s.wf.states.len()];
    let mut stack = vec![from];
    while let Some(i) = stack.pop() {
        if seen.get(i).copied().unwrap_or(true) {
            continue;
        }
        if let Some(x) = seen.get_mut(i) {
            *x = true;
        }
        if let Some(st) = s.wf.states.get(i) {
            for t in &st.transitions {
                if let Some(j) = s.index(&t.to.value) {
                    stack.push(j);
                }
            }
            if let Some(j) = st.on_error.as_ref().and_then(|o| s.index(&o.value)) {
                stack.push(j);
            }
        }
    }
    seen.iter()
        .enumerate()
        .filter(|(_, b)| **b)
        .map(|(i, _)| s.slug(i))
        .collect()
}
