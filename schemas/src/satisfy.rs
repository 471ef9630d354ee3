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
//! step and [`MAX_WORK`] units of work per case, where everything the search builds (a
//! queued situation, an outcome, a recorded move, a kept situation) is paid for before it is
//! built, in proportion to its counters; hitting either bound gives
//! [`Satisfiability::Unknown`] (no `WFX313`), never a verdict. Work also stays linear in
//! the inputs outside the search: state names are looked up in a map, seeded and asserted
//! variable names in sets.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::rc::Rc;

use serde_json::Value;

use crate::model::case::{Case, Channel, StepForm};
use crate::model::workflow::{StateType, ToolEntry, Workflow};

/// Most distinct situations kept after one step.
pub const MAX_SITUATIONS: usize = 4_096;
/// Most units of work per case. A situation costs `1 + counters / COUNTERS_PER_UNIT`
/// units (its counters are copied and compared) each time one is considered: the run's
/// start, every edge, park, raise, reset and `on_error` route tried from a situation, and
/// every situation kept after a step. Assertion steps cost one unit per
/// [`COUNTERS_PER_UNIT`] situations they test. Everything the search holds was paid for,
/// so time and memory are bounded together: a few tens of MiB at most (docs/security.md,
/// "bounded work").
pub const MAX_WORK: usize = 200_000;
/// Counters (one byte each) that one unit of [`MAX_WORK`] pays for.
pub const COUNTERS_PER_UNIT: usize = 16;

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

/// The values of a situation's counters, one byte each: every cap is at most [`MAX_CAP`].
type Counts = Box<[u8]>;

/// The highest cap of a counter: a `trail` count is followed up to 64 and then as "65 or
/// more".
const MAX_CAP: u8 = 65;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Situation {
    state: usize,
    status: Status,
    counters: Counts,
}

/// What a counted assertion counts.
struct Counter {
    to: Option<String>,
    kind: Option<String>,
    reason: Option<String>,
    /// Counts any step whose kind is not `trigger` (for `noTraversal`, `reachedState`).
    not_trigger: bool,
    /// At most [`MAX_CAP`].
    cap: u8,
}

/// A trail step as the analysis sees it; `reason: None` when the agent chooses it.
struct Event<'e> {
    to: &'e str,
    kind: &'static str,
    reason: Option<&'e str>,
}

impl Counter {
    fn bump(&self, n: u8, e: &Event<'_>) -> u8 {
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
        n.saturating_add(1).min(self.cap)
    }
}

/// How a step uses counters.
enum Check {
    AtLeastOne(usize),
    Zero(usize),
    Exactly(usize, u32),
    AtMost(usize, u32),
}

/// A move as the search records it (plans only): states as indices into the workflow's
/// `states`, turned into a [`Move`] only for the plan returned.
#[derive(Clone, Copy, Debug)]
enum MoveAt {
    Advance {
        from: usize,
        to: usize,
        hooked: bool,
    },
    Wait(usize),
    Raise(usize),
    Reset(usize),
    OnError {
        from: usize,
        to: usize,
    },
}

/// One recorded move and the move before it in its run (an index into `Search::trace`):
/// the moves of every candidate run share their common prefix instead of each holding a
/// copy (a run's moves are as long as the path it took).
struct Traced {
    prev: Option<usize>,
    mv: MoveAt,
}

/// A model run as the search records it (plans only): states as indices, and its last move
/// as an index into `Search::trace` (`None`: no move).
struct RunAt {
    step: usize,
    start: usize,
    reply_only: bool,
    last: Option<usize>,
    end: usize,
}

struct Node {
    sit: Situation,
    parent: Option<usize>,
    run: Option<RunAt>,
    maybe: bool,
}

/// A situation waiting in a model run's queue: its state, its key (the state, then its
/// counters; shared with the run's `seen` set), its last move (plans only) and whether it
/// relied on an `on_error` route.
type Queued = (usize, Rc<[u8]>, Option<usize>, bool);

/// One way a model run can end: the situation, its last move (plans only), and whether it
/// relied on an `on_error` route.
struct Outcome {
    sit: Situation,
    last: Option<usize>,
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
    /// State slug → index (the first state of that slug), so a name is looked up in
    /// constant time, not by a scan of every state per step or per transition.
    index: HashMap<String, usize>,
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
        let mut slugs: HashMap<String, usize> = HashMap::with_capacity(n);
        for (i, st) in wf.states.iter().enumerate() {
            slugs.entry(st.slug.value.clone()).or_insert(i);
        }
        let index = |slug: &str| slugs.get(slug).copied();
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
            index: slugs,
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
    /// Units of work spent, against [`MAX_WORK`].
    work: usize,
    /// What one situation costs in units: `1 + counters / COUNTERS_PER_UNIT`.
    unit: usize,
    nodes: Vec<Node>,
    /// Every move recorded (plans only), linked to the move before it in its run.
    trace: Vec<Traced>,
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
        self.g.index.get(slug).copied()
    }

    fn is_human(&self, i: usize) -> bool {
        self.g.human.get(i).copied().unwrap_or(false)
    }

    /// Spends `units` of [`MAX_WORK`]; past it, the reason the search stops (its verdict is
    /// then [`Satisfiability::Unknown`]).
    fn charge(&mut self, units: usize) -> Result<(), String> {
        self.work = self.work.saturating_add(units);
        if self.work > MAX_WORK {
            return Err(format!(
                "the path search stopped after {MAX_WORK} units of work"
            ));
        }
        Ok(())
    }

    /// Records `mv` after the move `prev` when plans are recorded; its index in `trace`.
    fn traced(&mut self, prev: Option<usize>, mv: MoveAt) -> Option<usize> {
        if !self.plans {
            return None;
        }
        self.trace.push(Traced { prev, mv });
        Some(self.trace.len() - 1)
    }

    /// The moves of a run whose last move is `last`, in order.
    fn moves(&self, last: Option<usize>) -> Vec<Move> {
        let mut out = Vec::new();
        let mut at = last;
        // Each move's `prev` was recorded before it, so indices fall; the walk ends.
        while let Some(t) = at.and_then(|i| self.trace.get(i)) {
            out.push(self.to_move(t.mv));
            at = t.prev.filter(|p| Some(*p) < at);
        }
        out.reverse();
        out
    }

    fn to_move(&self, mv: MoveAt) -> Move {
        let slug = |i: usize| self.slug(i).to_owned();
        match mv {
            MoveAt::Advance { from, to, hooked } => Move::Advance {
                from: slug(from),
                to: slug(to),
                hooked,
            },
            MoveAt::Wait(state) => Move::Wait { state: slug(state) },
            MoveAt::Raise(state) => Move::Raise { state: slug(state) },
            MoveAt::Reset(to) => Move::Reset { to: slug(to) },
            MoveAt::OnError { from, to } => Move::OnError {
                from: slug(from),
                to: slug(to),
            },
        }
    }

    /// The run `r` as a [`PlannedRun`].
    fn planned(&self, r: &RunAt) -> PlannedRun {
        PlannedRun {
            step: r.step,
            start: self.slug(r.start).to_owned(),
            reply_only: r.reply_only,
            moves: self.moves(r.last),
            end: self.slug(r.end).to_owned(),
        }
    }

    fn bump(&self, counters: &mut [u8], e: &Event<'_>) {
        for (c, n) in self.counters.iter().zip(counters.iter_mut()) {
            *n = c.bump(*n, e);
        }
    }

    /// Every outcome of one model run starting in `start` (running, not parked): a
    /// breadth-first search over (state, counters), shortest move lists first.
    ///
    /// Bounded in memory as in time: every edge, park, raise and reset considered costs one
    /// situation's units of [`MAX_WORK`] before anything is built for it, and a situation
    /// is queued only the first time it is met (the queue and the `seen` set share one copy
    /// of it), so what this run holds is at most one queue entry, one outcome and one move
    /// per unit spent. (It once dropped duplicates only when they left the queue and
    /// counted only those: a fully connected 50-state workflow and 50 `reachedState`
    /// steps queued 49 copies of a counter vector per expansion, gigabytes within the
    /// bound.) Hitting the bound is `Err`, a verdict of [`Satisfiability::Unknown`].
    fn agent_run(&mut self, start: usize, counters: Counts) -> Result<Vec<Outcome>, String> {
        let unit = self.unit;
        let mut out = Vec::new();
        // A situation of this run as one byte string, the state (4 bytes, little-endian)
        // then its counters: the `seen` set and the queue share one copy.
        let key_of = |state: usize, cs: &[u8], buf: &mut Vec<u8>| {
            buf.clear();
            buf.extend_from_slice(&u32::try_from(state).unwrap_or(u32::MAX).to_le_bytes());
            buf.extend_from_slice(cs);
        };
        let mut buf: Vec<u8> = Vec::with_capacity(4 + counters.len());
        let mut seen: HashSet<Rc<[u8]>> = HashSet::new();
        let mut queue: VecDeque<Queued> = VecDeque::new();
        self.charge(unit)?;
        key_of(start, &counters, &mut buf);
        let key: Rc<[u8]> = Rc::from(buf.as_slice());
        seen.insert(Rc::clone(&key));
        queue.push_back((start, key, None, false));
        // (target, its move, trail kind, `on_error`)
        let mut targets: Vec<(usize, MoveAt, &'static str, bool)> = Vec::new();
        while let Some((at, key, last, maybe)) = queue.pop_front() {
            let cs = key.get(4..).unwrap_or_default();
            // Stop here.
            self.charge(unit)?;
            out.push(Outcome {
                sit: Situation {
                    state: at,
                    status: Status::Idle,
                    counters: cs.into(),
                },
                last,
                maybe,
            });
            if self.g.can_wait.get(at).copied().unwrap_or(false) {
                self.charge(unit)?;
                let last = self.traced(last, MoveAt::Wait(at));
                out.push(Outcome {
                    sit: Situation {
                        state: at,
                        status: Status::Input,
                        counters: cs.into(),
                    },
                    last,
                    maybe,
                });
            }
            if self.g.can_raise.get(at).copied().unwrap_or(false) {
                self.charge(unit)?;
                let last = self.traced(last, MoveAt::Raise(at));
                out.push(Outcome {
                    sit: Situation {
                        state: at,
                        status: Status::Raised,
                        counters: cs.into(),
                    },
                    last,
                    maybe,
                });
            }
            targets.clear();
            if self.g.can_advance.get(at).copied().unwrap_or(false)
                && let Some(edges) = self.g.edges.get(at)
            {
                for &(to, hooked) in edges {
                    let mv = MoveAt::Advance {
                        from: at,
                        to,
                        hooked,
                    };
                    targets.push((to, mv, "agent", false));
                }
            }
            if let Some(to) = self.g.on_error.get(at).copied().flatten() {
                targets.push((to, MoveAt::OnError { from: at, to }, "on_error", true));
            }
            if self.g.can_reset.get(at).copied().unwrap_or(false) {
                targets.push((self.entry, MoveAt::Reset(self.entry), "reset", false));
            }
            for &(to, mv, kind, m_maybe) in &targets {
                self.charge(unit)?;
                key_of(to, cs, &mut buf);
                let to_slug = self.slug(to);
                self.bump(
                    buf.get_mut(4..).unwrap_or_default(),
                    &Event {
                        to: to_slug,
                        kind,
                        reason: None,
                    },
                );
                if self.is_human(to) {
                    let last = self.traced(last, mv);
                    out.push(Outcome {
                        sit: Situation {
                            state: to,
                            status: Status::Decision,
                            counters: buf.get(4..).unwrap_or_default().into(),
                        },
                        last,
                        maybe: maybe || m_maybe,
                    });
                } else if !seen.contains(buf.as_slice()) {
                    let key: Rc<[u8]> = Rc::from(buf.as_slice());
                    seen.insert(Rc::clone(&key));
                    let last = self.traced(last, mv);
                    queue.push_back((to, key, last, maybe || m_maybe));
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
        unit: 1,
        nodes: Vec::new(),
        trace: Vec::new(),
    };
    // A name the workflow lacks is another rule's report (WFX303/WFX304): no verdict here.
    let known = |x: &str| g.index.contains_key(x);
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
                if !known(&x.value) {
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
                    let cap = u8::try_from(*count)
                        .unwrap_or(MAX_CAP)
                        .min(MAX_CAP - 1)
                        .saturating_add(1);
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
                    } else if want >= u32::from(cap) {
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
    // The first seed of a name is the one a run keeps (FORMAT §E.4; duplicate keys are
    // the case rules' report).
    let mut seeded: HashMap<&str, Value> = HashMap::new();
    for (k, v) in &case.variables {
        seeded
            .entry(k.value.as_str())
            .or_insert_with(|| v.to_json());
    }
    s.unit = 1 + s.counters.len() / COUNTERS_PER_UNIT;
    s.nodes.push(Node {
        sit: Situation {
            state: entry,
            status: Status::Fresh,
            counters: vec![0; s.counters.len()].into(),
        },
        parent: None,
        run: None,
        maybe: false,
    });
    let mut layer: Vec<usize> = vec![0];
    let mut delivered_vars: HashSet<&str> = HashSet::new();
    let mut delivered = false;
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
        if let StepForm::Deliver { variables, .. } = form {
            delivered = true;
            delivered_vars.extend(variables.iter().map(|(k, _)| k.as_str()));
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
                delivered,
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
            runs.push(s.planned(r));
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

/// Why a `variables` step cannot pass whatever the agent does: an expected value that
/// differs from a locked seed (or from the locked `trigger`), or a seed expected unlocked.
/// `None` when it may pass. Linear in the step's names (sets, not scans).
fn variables_reason(
    seeded: &HashMap<&str, Value>,
    trigger: &str,
    delivered_vars: &HashSet<&str>,
    delivered: bool,
    expect: &[(crate::model::Spanned<String>, Value)],
    path: &[(String, String)],
    locked: &[(String, bool)],
) -> Option<String> {
    let pathed: HashSet<&str> = path.iter().map(|(n, _)| n.as_str()).collect();
    let unlocked: HashSet<&str> = locked
        .iter()
        .filter(|(_, l)| !l)
        .map(|(n, _)| n.as_str())
        .collect();
    for (name, want) in expect {
        let name = name.value.as_str();
        if pathed.contains(name) || delivered_vars.contains(name) {
            continue;
        }
        if name == "trigger" {
            if !delivered && want != &Value::String(trigger.to_owned()) {
                return Some(format!(
                    "`trigger` is set and locked to `{trigger}` by the case's trigger, so it cannot equal {want}"
                ));
            }
            continue;
        }
        if name == "title" {
            continue;
        }
        if let Some(v) = seeded.get(name) {
            if !json_equal(v, want) {
                return Some(format!(
                    "`{name}` is seeded and locked by the case's `variables` as {v}, so it cannot equal {want}"
                ));
            }
            if unlocked.contains(name) {
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
        // A kept situation is paid for like any other (a `send` to a parked session keeps
        // one per situation without an agent run).
        s.charge(s.unit).map_err(Stop::Unknown)?;
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
                let start: Option<(usize, Counts, bool)> = match (form, sit.status) {
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
                if reply_only {
                    let status = if matches!(form, StepForm::Decide { .. }) {
                        Status::Decision
                    } else {
                        sit.status
                    };
                    let run = s.plans.then_some(RunAt {
                        step: i,
                        start: at,
                        reply_only: true,
                        last: None,
                        end: at,
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
                for o in outcomes {
                    let run = s.plans.then_some(RunAt {
                        step: i,
                        start: at,
                        reply_only: false,
                        last: o.last,
                        end: o.sit.state,
                    });
                    add(
                        s,
                        Node {
                            sit: o.sit,
                            parent: Some(k),
                            run,
                            maybe: maybe || o.maybe,
                        },
                    )?;
                }
            }
        }
        _ => {
            s.charge(1 + layer.len() / COUNTERS_PER_UNIT)
                .map_err(Stop::Unknown)?;
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
            Check::Exactly(i, w) => sit.counters.get(i).is_some_and(|n| u32::from(*n) == w),
            Check::AtMost(i, w) => sit.counters.get(i).is_some_and(|n| u32::from(*n) <= w),
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
            let mut seen: Vec<u8> = match check {
                Some(Check::Exactly(i, _) | Check::AtMost(i, _)) => sits
                    .iter()
                    .filter_map(|x| x.counters.get(*i).copied())
                    .collect(),
                _ => Vec::new(),
            };
            seen.sort_unstable();
            seen.dedup();
            let seen: Vec<String> = seen.iter().map(u8::to_string).collect();
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
