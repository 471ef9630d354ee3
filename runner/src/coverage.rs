//! Workflow coverage from runs (`wfx-lsp test --coverage`): over the cases of one suite,
//! which states were entered, which edges of the workflow graph (FORMAT §E.10) were taken
//! by kind (trigger, agent, human decision, `on_error`; resets apart), which triggers
//! started a session or arrived, which hooks ran with which verdicts, which parks happened
//! on which channel, and which tools were offered, called or refused.
//!
//! Two halves:
//! * [`Observed`]: what the simulator saw in one case beyond its audit trail (hook
//!   verdicts, parks, tools). The simulator records into `Session::observed`; the case
//!   interpreter moves it into `CaseRun::observed`. Each map is keyed by names of the
//!   workflow or of the agent's calls, so its size is bounded by the model and the calls
//!   the simulator allows (bounded work).
//! * [`SuiteCoverage::compute`]: a pure fold over the suite's [`CaseRun`]s (their trail,
//!   FORMAT §E.2, and their observations) against the workflow model. No IO, no clock;
//!   every list is in document order or sorted, never hash order.
//!
//! Edge kinds: a trigger edge (`__start__` → entry, labelled with the trigger id) is taken
//! when a session *started* with that trigger (its first trail step); a `deliver` arrival
//! covers the trigger (in `triggers`) but not the start edge. A declared transition out
//! of an agent state is an `agent` edge, out of a human state a `decision` edge (taken by a
//! `decide` step); `on_error` routes are `on_error` edges. `archmax_reset` moves are not
//! edges of the graph: they are listed in `resets`. Percentages count the graph's edges;
//! `decisions` are the `decision` edges alone.
//!
//! Hook verdicts: `ok` (passed), `veto` (a veto or a correction, incl. a correction at a
//! `before` hook and a hook that threw, which the runtime applies as a veto), `failure`
//! (the hook could not execute: the run routes to `on_error` or rejects).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;
use wfx_schemas::graph::{EdgeKind, Graph, NodeKind, START};
use wfx_schemas::inert::inert;
use wfx_schemas::model::workflow::{HookKind, Workflow};

use crate::interpret::CaseRun;

/// The coverage JSON's `version` (bumped on a breaking change of the shape in docs/cli.md).
pub const COVERAGE_VERSION: u32 = 1;

/// A hook verdict class as coverage counts it (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum HookVerdictClass {
    /// The hook passed.
    Ok,
    /// A veto, a correction, or a throw applied as a veto.
    Veto,
    /// The hook could not execute.
    Failure,
}

/// Verdict counts of one hook.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct VerdictCounts {
    /// Runs that passed.
    pub ok: u64,
    /// Runs that vetoed (or asked for a correction).
    pub veto: u64,
    /// Runs that could not execute.
    pub failure: u64,
}

impl VerdictCounts {
    fn add(&mut self, o: VerdictCounts) {
        self.ok += o.ok;
        self.veto += o.veto;
        self.failure += o.failure;
    }

    fn total(&self) -> u64 {
        self.ok + self.veto + self.failure
    }
}

/// What the simulator saw in one case beyond its trail. Keys: `(state, phase, index)` for
/// hooks (`phase` is `before` or `after`, `index` the hook's position in that list),
/// `(state, channel)` for parks (`decision` or `input`), `state` for tools offered,
/// `(state, tool)` for calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    /// Hook runs by verdict.
    pub hooks: BTreeMap<(String, &'static str, usize), VerdictCounts>,
    /// Parks per state and channel.
    pub parks: BTreeMap<(String, &'static str), u64>,
    /// Tools offered to the agent, per state in which the agent was called.
    pub offered: BTreeMap<String, BTreeSet<String>>,
    /// `(called, refused)` counts per state and tool: a call that governance (or the
    /// reply-only rule) refused counts as refused, any other as called.
    pub calls: BTreeMap<(String, String), (u64, u64)>,
}

impl Observed {
    /// Records one hook run.
    pub fn hook(&mut self, state: &str, phase: &'static str, index: usize, v: HookVerdictClass) {
        let c = self
            .hooks
            .entry((state.to_owned(), phase, index))
            .or_default();
        match v {
            HookVerdictClass::Ok => c.ok += 1,
            HookVerdictClass::Veto => c.veto += 1,
            HookVerdictClass::Failure => c.failure += 1,
        }
    }

    /// Records a park at `state` on `channel` (`decision` or `input`).
    pub fn park(&mut self, state: &str, channel: &'static str) {
        *self.parks.entry((state.to_owned(), channel)).or_default() += 1;
    }

    /// Records the tools offered in `state` (once per state: the offer is a function of
    /// the state, FORMAT §A.3).
    pub fn offer(&mut self, state: &str, tools: &[String]) {
        if !self.offered.contains_key(state) {
            self.offered
                .insert(state.to_owned(), tools.iter().cloned().collect());
        }
    }

    /// Records a tool call in `state`, refused or not.
    pub fn call(&mut self, state: &str, tool: &str, refused: bool) {
        let c = self
            .calls
            .entry((state.to_owned(), tool.to_owned()))
            .or_default();
        if refused {
            c.1 += 1;
        } else {
            c.0 += 1;
        }
    }
}

/// `covered` of `total`, and the percentage (100 when `total` is 0).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Ratio {
    /// Covered elements.
    pub covered: usize,
    /// All elements.
    pub total: usize,
    /// `covered / total × 100`, rounded to one decimal; 100 for an empty set.
    pub percent: f64,
}

impl Ratio {
    fn of(covered: usize, total: usize) -> Ratio {
        let percent = if total == 0 {
            100.0
        } else {
            ((covered as f64) * 1000.0 / (total as f64)).round() / 10.0
        };
        Ratio {
            covered,
            total,
            percent,
        }
    }
}

/// The five percentages of the summary.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// States entered.
    pub states: Ratio,
    /// Graph edges taken (trigger, agent, decision, `on_error`).
    pub edges: Ratio,
    /// Decision edges (out of human states) taken.
    pub decisions: Ratio,
    /// Triggers that started a session or arrived.
    pub triggers: Ratio,
    /// Hooks that ran at least once.
    pub hooks: Ratio,
}

impl Summary {
    /// The five groups by their `--coverage-min` names, in the order every output lists
    /// them: states, edges, decisions, triggers, hooks.
    pub fn groups(&self) -> [(&'static str, &Ratio); 5] {
        [
            ("states", &self.states),
            ("edges", &self.edges),
            ("decisions", &self.decisions),
            ("triggers", &self.triggers),
            ("hooks", &self.hooks),
        ]
    }
}

/// One state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StateCoverage {
    /// The slug.
    pub state: String,
    /// `agent` or `human`.
    pub kind: &'static str,
    /// Case ids that entered it, sorted.
    pub cases: Vec<String>,
}

/// One graph edge.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EdgeCoverage {
    /// Source (`__start__` for a trigger edge).
    pub source: String,
    /// Target state.
    pub target: String,
    /// `trigger`, `agent`, `decision` or `on_error`.
    pub kind: &'static str,
    /// Trigger id, transition `type`, or `on_error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Case ids that took it, sorted.
    pub cases: Vec<String>,
}

/// One trigger.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TriggerCoverage {
    /// The trigger id.
    pub trigger: String,
    /// Its entry state.
    pub state: String,
    /// Case ids whose session it started, sorted.
    pub started: Vec<String>,
    /// Case ids in which it arrived later (`deliver`), sorted.
    pub arrived: Vec<String>,
}

/// One hook.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HookCoverage {
    /// The state.
    pub state: String,
    /// `before` or `after`.
    pub phase: &'static str,
    /// Position in the state's list for that phase (0-based).
    pub index: usize,
    /// `script: <path>`, `rubric`, or `<kind>: <target>`.
    pub hook: String,
    /// Verdict counts over the suite.
    pub verdicts: VerdictCounts,
    /// Case ids in which it ran, sorted.
    pub cases: Vec<String>,
}

/// A reset move (not a graph edge).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResetCoverage {
    /// The state reset from.
    pub source: String,
    /// The entry state reset to.
    pub target: String,
    /// Case ids, sorted.
    pub cases: Vec<String>,
}

/// Parks at one state on one channel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParkCoverage {
    /// The state.
    pub state: String,
    /// `decision` or `input`.
    pub channel: &'static str,
    /// Parks over the suite.
    pub count: u64,
    /// Case ids, sorted.
    pub cases: Vec<String>,
}

/// One tool in one state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCoverage {
    /// The state.
    pub state: String,
    /// The tool.
    pub tool: String,
    /// Offered to the agent in this state.
    pub offered: bool,
    /// Calls that ran.
    pub called: u64,
    /// Calls refused (governance or reply-only).
    pub refused: u64,
}

/// The coverage of one suite (one workflow), the shape of one element of `workflows` in
/// `coverage.json` (docs/cli.md).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SuiteCoverage {
    /// The workflow slug.
    pub workflow: String,
    /// Cases that ran (had at least one trail step).
    pub cases: usize,
    /// The percentages.
    pub summary: Summary,
    /// Every declared state, document order.
    pub states: Vec<StateCoverage>,
    /// Every graph edge, graph order (trigger edges, then per state).
    pub edges: Vec<EdgeCoverage>,
    /// Every declared trigger, document order.
    pub triggers: Vec<TriggerCoverage>,
    /// Every declared hook, document order.
    pub hooks: Vec<HookCoverage>,
    /// Resets taken.
    pub resets: Vec<ResetCoverage>,
    /// Parks that happened, sorted by state and channel.
    pub parks: Vec<ParkCoverage>,
    /// Tools offered or called, sorted by state and tool.
    pub tools: Vec<ToolCoverage>,
    /// Moves of the trail that match no declared edge (`source → target`, sorted).
    pub undeclared: Vec<String>,
}

fn edge_kind(g: &Graph, source: &str, kind: &EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Trigger => "trigger",
        EdgeKind::OnError => "on_error",
        EdgeKind::Transition(_) => {
            if g.nodes
                .iter()
                .any(|n| n.id == source && n.kind == NodeKind::Human)
            {
                "decision"
            } else {
                "agent"
            }
        }
    }
}

fn hook_name(k: &HookKind) -> String {
    match k {
        HookKind::Script(p) => format!("script: {}", p.value),
        HookKind::Rubric(_) => "rubric".into(),
        HookKind::Custom(kind, target) => format!("{}: {target}", kind.value),
    }
}

fn sorted(set: BTreeSet<String>) -> Vec<String> {
    set.into_iter().collect()
}

impl SuiteCoverage {
    /// Folds the suite's case runs over the workflow model (see the module docs). Cases
    /// with an empty trail (skipped, unparsed, died before the start) count for nothing.
    pub fn compute(slug: &str, wf: &Workflow, cases: &[CaseRun]) -> SuiteCoverage {
        let g = Graph::from_workflow(wf);
        let mut state_cases: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        let mut edge_cases: Vec<BTreeSet<String>> = vec![BTreeSet::new(); g.edges.len()];
        let mut started: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut arrived: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut resets: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
        let mut undeclared: BTreeSet<String> = BTreeSet::new();
        let mut hooks: BTreeMap<(String, &'static str, usize), (VerdictCounts, BTreeSet<String>)> =
            BTreeMap::new();
        let mut parks: BTreeMap<(String, &'static str), (u64, BTreeSet<String>)> = BTreeMap::new();
        let mut tools: BTreeMap<(String, String), ToolCoverage> = BTreeMap::new();
        let mut ran = 0;
        for case in cases {
            if case.trail.is_empty() {
                continue;
            }
            ran += 1;
            let id = &case.result.id;
            let mut current: Option<String> = None;
            for (_, t) in &case.trail {
                if t.kind == "sub-workflow" {
                    continue;
                }
                if let Some(n) = g.nodes.iter().find(|n| n.id == t.to) {
                    state_cases.entry(&n.id).or_default().insert(id.clone());
                }
                let reason = t.reason.as_deref().unwrap_or("");
                match (t.kind, current.as_deref()) {
                    ("trigger", None) => {
                        started
                            .entry(reason.to_owned())
                            .or_default()
                            .insert(id.clone());
                        let hit = g.edges.iter().position(|e| {
                            e.kind == EdgeKind::Trigger
                                && e.target == t.to
                                && e.label.as_deref() == Some(reason)
                        });
                        match hit {
                            Some(i) => {
                                if let Some(s) = edge_cases.get_mut(i) {
                                    s.insert(id.clone());
                                }
                            }
                            None => {
                                undeclared.insert(format!("{START} → {}", t.to));
                            }
                        }
                    }
                    ("trigger", Some(_)) => {
                        arrived
                            .entry(reason.to_owned())
                            .or_default()
                            .insert(id.clone());
                    }
                    ("reset", from) => {
                        resets
                            .entry((from.unwrap_or(START).to_owned(), t.to.clone()))
                            .or_default()
                            .insert(id.clone());
                    }
                    (kind, from) => {
                        let from = from.unwrap_or(START);
                        let want_error = kind == "on_error";
                        let mut any = false;
                        for (i, e) in g.edges.iter().enumerate() {
                            let matches = e.source == from
                                && e.target == t.to
                                && match e.kind {
                                    EdgeKind::OnError => want_error,
                                    EdgeKind::Transition(_) => !want_error,
                                    EdgeKind::Trigger => false,
                                };
                            if matches && let Some(s) = edge_cases.get_mut(i) {
                                s.insert(id.clone());
                                any = true;
                            }
                        }
                        if !any {
                            undeclared.insert(format!("{from} → {}", t.to));
                        }
                    }
                }
                current = Some(t.to.clone());
            }
            for (k, v) in &case.observed.hooks {
                let e = hooks.entry(k.clone()).or_default();
                e.0.add(*v);
                e.1.insert(id.clone());
            }
            for (k, n) in &case.observed.parks {
                let e = parks.entry(k.clone()).or_default();
                e.0 += n;
                e.1.insert(id.clone());
            }
            for (state, offered) in &case.observed.offered {
                for tool in offered {
                    tools
                        .entry((state.clone(), tool.clone()))
                        .or_insert_with(|| tool_row(state, tool))
                        .offered = true;
                }
            }
            for ((state, tool), (called, refused)) in &case.observed.calls {
                let row = tools
                    .entry((state.clone(), tool.clone()))
                    .or_insert_with(|| tool_row(state, tool));
                row.called += called;
                row.refused += refused;
            }
        }
        let states: Vec<StateCoverage> = g
            .nodes
            .iter()
            .filter(|n| n.kind != NodeKind::Start)
            .map(|n| StateCoverage {
                state: n.id.clone(),
                kind: if n.kind == NodeKind::Human {
                    "human"
                } else {
                    "agent"
                },
                cases: state_cases
                    .get(n.id.as_str())
                    .cloned()
                    .map(sorted)
                    .unwrap_or_default(),
            })
            .collect();
        let edges: Vec<EdgeCoverage> = g
            .edges
            .iter()
            .zip(edge_cases)
            .map(|(e, cases)| EdgeCoverage {
                source: e.source.clone(),
                target: e.target.clone(),
                kind: edge_kind(&g, &e.source, &e.kind),
                label: match &e.kind {
                    EdgeKind::Transition(t) => t.clone(),
                    _ => e.label.clone(),
                },
                cases: sorted(cases),
            })
            .collect();
        let triggers: Vec<TriggerCoverage> = wf
            .triggers()
            .map(|t| TriggerCoverage {
                trigger: t.id.value.clone(),
                state: t.state.clone(),
                started: started
                    .get(&t.id.value)
                    .cloned()
                    .map(sorted)
                    .unwrap_or_default(),
                arrived: arrived
                    .get(&t.id.value)
                    .cloned()
                    .map(sorted)
                    .unwrap_or_default(),
            })
            .collect();
        let mut hook_rows = Vec::new();
        for s in &wf.states {
            for (phase, list) in [("before", &s.before), ("after", &s.after)] {
                for (i, h) in list.iter().enumerate() {
                    let key = (s.slug.value.clone(), phase, i);
                    let (verdicts, cases) = hooks.remove(&key).unwrap_or_default();
                    hook_rows.push(HookCoverage {
                        state: s.slug.value.clone(),
                        phase,
                        index: i,
                        hook: hook_name(&h.kind),
                        verdicts,
                        cases: sorted(cases),
                    });
                }
            }
        }
        let count = |it: &mut dyn Iterator<Item = bool>| {
            let (mut c, mut t) = (0, 0);
            for covered in it {
                t += 1;
                if covered {
                    c += 1;
                }
            }
            Ratio::of(c, t)
        };
        let summary = Summary {
            states: count(&mut states.iter().map(|s| !s.cases.is_empty())),
            edges: count(&mut edges.iter().map(|e| !e.cases.is_empty())),
            decisions: count(
                &mut edges
                    .iter()
                    .filter(|e| e.kind == "decision")
                    .map(|e| !e.cases.is_empty()),
            ),
            triggers: count(
                &mut triggers
                    .iter()
                    .map(|t| !t.started.is_empty() || !t.arrived.is_empty()),
            ),
            hooks: count(&mut hook_rows.iter().map(|h| h.verdicts.total() > 0)),
        };
        SuiteCoverage {
            workflow: slug.to_owned(),
            cases: ran,
            summary,
            states,
            edges,
            triggers,
            hooks: hook_rows,
            resets: resets
                .into_iter()
                .map(|((source, target), cases)| ResetCoverage {
                    source,
                    target,
                    cases: sorted(cases),
                })
                .collect(),
            parks: parks
                .into_iter()
                .map(|((state, channel), (count, cases))| ParkCoverage {
                    state,
                    channel,
                    count,
                    cases: sorted(cases),
                })
                .collect(),
            tools: tools.into_values().collect(),
            undeclared: sorted(undeclared),
        }
    }

    /// Names of the uncovered elements per group, for narration and Markdown:
    /// `(group, names)` with group `states`, `edges`, `decisions`, `triggers`, `hooks`.
    pub fn uncovered(&self) -> Vec<(&'static str, Vec<String>)> {
        let edge = |e: &EdgeCoverage| {
            let label = e
                .label
                .as_deref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            format!("{} → {}{label}", e.source, e.target)
        };
        vec![
            (
                "states",
                self.states
                    .iter()
                    .filter(|s| s.cases.is_empty())
                    .map(|s| s.state.clone())
                    .collect(),
            ),
            (
                "edges",
                self.edges
                    .iter()
                    .filter(|e| e.cases.is_empty() && e.kind != "decision")
                    .map(edge)
                    .collect(),
            ),
            (
                "decisions",
                self.edges
                    .iter()
                    .filter(|e| e.cases.is_empty() && e.kind == "decision")
                    .map(edge)
                    .collect(),
            ),
            (
                "triggers",
                self.triggers
                    .iter()
                    .filter(|t| t.started.is_empty() && t.arrived.is_empty())
                    .map(|t| t.trigger.clone())
                    .collect(),
            ),
            (
                "hooks",
                self.hooks
                    .iter()
                    .filter(|h| h.verdicts.total() == 0)
                    .map(|h| format!("{} {}[{}] {}", h.state, h.phase, h.index, h.hook))
                    .collect(),
            ),
        ]
    }

    fn summary_parts(&self) -> String {
        self.summary
            .groups()
            .iter()
            .map(|(name, r)| format!("{name} {}/{} ({}%)", r.covered, r.total, r.percent))
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// The narration summary (terminal text, every name through [`inert`]): one line of
    /// percentages, then one indented line per group with uncovered elements.
    pub fn narration(&self) -> String {
        let mut o = format!(
            "coverage {} ({} case{}): {}\n",
            inert(&self.workflow),
            self.cases,
            if self.cases == 1 { "" } else { "s" },
            self.summary_parts()
        );
        for (group, names) in self.uncovered() {
            if !names.is_empty() {
                let names: Vec<String> = names.iter().map(|n| inert(n).into_owned()).collect();
                let _ = writeln!(o, "  uncovered {group}: {}", names.join(", "));
            }
        }
        o
    }

    /// A Markdown section fit for a pull-request comment (names escaped with
    /// [`crate::report::md`]): a table of the five ratios and the uncovered lists.
    pub fn markdown(&self) -> String {
        use crate::report::md;
        let mut o = format!(
            "### Coverage of {} ({} cases)\n\n| | covered | total | % |\n|---|---:|---:|---:|\n",
            md(&self.workflow),
            self.cases
        );
        for (name, r) in self.summary.groups() {
            let _ = writeln!(
                o,
                "| {name} | {} | {} | {} |",
                r.covered, r.total, r.percent
            );
        }
        let unc = self.uncovered();
        if unc.iter().any(|(_, n)| !n.is_empty()) {
            o.push_str("\n**Not covered**\n\n");
            for (group, names) in unc {
                if !names.is_empty() {
                    let names: Vec<String> = names.iter().map(|n| md(n)).collect();
                    let _ = writeln!(o, "- {group}: {}", names.join(", "));
                }
            }
        }
        o
    }

    /// The union of every case's path (covered states and edges), for lighting a graph.
    pub fn covered_path(&self) -> wfx_schemas::graph::CasePath {
        let mut p = wfx_schemas::graph::CasePath {
            coverage: true,
            ..Default::default()
        };
        for s in &self.states {
            if !s.cases.is_empty() {
                p.reached.insert(s.state.clone(), s.cases.len());
            }
        }
        for e in &self.edges {
            if !e.cases.is_empty() {
                p.edges.push((e.source.clone(), e.target.clone()));
            }
        }
        p
    }
}

fn tool_row(state: &str, tool: &str) -> ToolCoverage {
    ToolCoverage {
        state: state.to_owned(),
        tool: tool.to_owned(),
        offered: false,
        called: 0,
        refused: 0,
    }
}

/// `coverage.json`: `{version, workflows: [SuiteCoverage…]}` (docs/cli.md).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoverageFile<'a> {
    /// [`COVERAGE_VERSION`].
    pub version: u32,
    /// One entry per suite run, in run order.
    pub workflows: &'a [SuiteCoverage],
}

/// Minimum percentages of `--coverage-min` (CI). Unset groups are not checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Thresholds {
    /// `(group, minimum percent)`, group one of `states`, `edges`, `decisions`,
    /// `triggers`, `hooks`, in the order given.
    pub min: Vec<(&'static str, f64)>,
}

impl Thresholds {
    /// Parses `states=80,edges=60` (groups as above; percent 0–100, decimals allowed).
    /// Errors name the bad item.
    pub fn parse(s: &str) -> Result<Thresholds, String> {
        let mut min = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let Some((k, v)) = item.split_once('=') else {
                return Err(format!(
                    "--coverage-min: `{item}` is not GROUP=PERCENT (e.g. states=80,edges=60)"
                ));
            };
            let group = match k.trim() {
                "states" => "states",
                "edges" => "edges",
                "decisions" => "decisions",
                "triggers" => "triggers",
                "hooks" => "hooks",
                other => {
                    return Err(format!(
                        "--coverage-min: unknown group `{other}` (expected states, edges, decisions, triggers or hooks)"
                    ));
                }
            };
            let pct: f64 = v
                .trim()
                .trim_end_matches('%')
                .parse()
                .ok()
                .filter(|p: &f64| (0.0..=100.0).contains(p))
                .ok_or_else(|| {
                    format!("--coverage-min: `{item}`: the percent must be a number from 0 to 100")
                })?;
            min.push((group, pct));
        }
        if min.is_empty() {
            return Err("--coverage-min: give at least one GROUP=PERCENT".into());
        }
        Ok(Thresholds { min })
    }

    /// The unmet thresholds of one suite, as `"<workflow>: states 71.4% < 80%"` lines.
    pub fn unmet(&self, c: &SuiteCoverage) -> Vec<String> {
        let mut out = Vec::new();
        for (group, min) in &self.min {
            let r = match *group {
                "states" => c.summary.states,
                "edges" => c.summary.edges,
                "decisions" => c.summary.decisions,
                "triggers" => c.summary.triggers,
                _ => c.summary.hooks,
            };
            if r.percent < *min {
                out.push(format!("{}: {group} {}% < {min}%", c.workflow, r.percent));
            }
        }
        out
    }
}

/// The coverage class of a hook's result (see the module docs): `Ok` → ok; a veto, a
/// correction or a throw → veto; a failure to execute or an unavailable host → failure.
pub fn class_of(
    v: &Result<crate::script_host::HookVerdict, crate::script_host::ScriptError>,
) -> HookVerdictClass {
    use crate::script_host::{HookVerdict, ScriptError};
    match v {
        Ok(HookVerdict::Ok) => HookVerdictClass::Ok,
        Ok(HookVerdict::Veto(_)) | Ok(HookVerdict::Correct(_)) | Err(ScriptError::Threw(_)) => {
            HookVerdictClass::Veto
        }
        Err(ScriptError::Failed(_)) | Err(ScriptError::Unavailable(_)) => HookVerdictClass::Failure,
    }
}

/// The coverage of one suite run, reading `workflows/<slug>/workflow.yaml` from `fs` for the
/// model; `None` when it cannot be read or parsed as a mapping (the runner refuses such a
/// workflow before its cases run, so this is rare).
pub fn for_suite(
    fs: &dyn wfx_schemas::files::FileAccess,
    run: &crate::suite::SuiteRun,
) -> Option<SuiteCoverage> {
    let slug = &run.result.workflow;
    let text = fs
        .read_text(&format!("workflows/{slug}/workflow.yaml"))
        .ok()?;
    let parsed = wfx_schemas::yaml::parse(&text);
    let root = parsed.documents.first().filter(|r| r.as_map().is_some())?;
    Some(SuiteCoverage::compute(
        slug,
        &Workflow::from_node(root),
        &run.cases,
    ))
}
