//! The typed model of `workflow.yaml` (FORMAT §A): states, triggers, transitions, hooks and
//! governance, each with its range. Lenient: a malformed part is skipped, not reported.

use super::{Spanned, as_u64, spanned_str, spanned_strs};
use crate::text::TextRange;
use crate::yaml::{Node, Value};

/// Ceiling of `settings.timeoutMs` (FORMAT §A.1) the runner honours: 30,000 ms per script
/// run. Bounded work: a workflow may lower its sandbox's time budget, never raise it past
/// this; `wfx-lsp test` clamps a larger value to it and `check` warns (`WFX261`).
pub const MAX_SANDBOX_TIMEOUT_MS: u64 = 30_000;
/// Ceiling of `settings.memoryLimitBytes` (FORMAT §A.1) the runner honours: 256 MiB
/// (268,435,456 bytes) per script run. Bounded work: a larger value is clamped to it at run
/// time and `check` warns (`WFX261`).
pub const MAX_SANDBOX_MEMORY_LIMIT_BYTES: u64 = 256 * 1024 * 1024;
/// Ceiling of `tests.caseTimeoutMs` (FORMAT §A.1 says only "integer > 0", default 120,000)
/// the runner honours: 600,000 ms (10 minutes) per case. Bounded work: a workflow may lower
/// it, never raise it past this; `wfx-lsp test` clamps a larger value to it and `check`
/// warns (`WFX261`).
pub const MAX_CASE_TIMEOUT_MS: u64 = 600_000;

/// Essential tools: always shown and permitted in every state (FORMAT §E.5). The single
/// list every rule, the runner's governance and the IDE read.
pub const ESSENTIAL_TOOLS: &[&str] = &[
    "ls",
    "read_file",
    "write_file",
    "edit_file",
    "copy_file",
    "move_file",
    "remove_file",
    "glob",
    "grep",
    "write_todos",
    "archmax_eval",
    "archmax_run",
];

/// The control tools, always allowed (FORMAT §E.5; `archmax_advance` is hidden in terminal
/// states).
pub const CONTROL_TOOLS: &[&str] = &[
    "archmax_advance",
    "archmax_reset",
    "archmax_wait",
    "archmax_raise",
    "archmax_get_variables",
    "archmax_set_variables",
];

/// `agent` (the default) or `human` (FORMAT §A.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateType {
    /// Model-driven.
    Agent,
    /// A person decides the edge (a decision park).
    Human,
}

/// A parsed `workflow.yaml`.
#[derive(Clone, Debug, PartialEq)]
pub struct Workflow {
    /// The document root.
    pub root: Node,
    /// `title`.
    pub title: Option<Spanned<String>>,
    /// Runtime reading of `disabled`: anything but absent, `null` or `false` disables (FORMAT §A.1).
    pub disabled: bool,
    /// `instructions`.
    pub instructions: Option<Spanned<String>>,
    /// The states, in document order.
    pub states: Vec<State>,
    /// Range of the `states` key (or the document start when absent).
    pub states_key: TextRange,
    /// `tests.judge` is declared (even `{}`), so `grade` can be wired (FORMAT §B.6).
    pub has_judge: bool,
    /// `tests.maxConcurrency`.
    pub max_concurrency: Option<u64>,
    /// `tests.caseTimeoutMs`.
    pub case_timeout_ms: Option<u64>,
    /// `settings.timeoutMs` (sandbox script budget, ms).
    pub timeout_ms: Option<u64>,
    /// `settings.memoryLimitBytes`.
    pub memory_limit_bytes: Option<u64>,
    /// `settings.maxPtcCalls`.
    pub max_ptc_calls: Option<u64>,
    /// `tools.allow_always`.
    pub tools_allow_always: Vec<ToolEntry>,
    /// `tools.forbid_always`.
    pub tools_forbid_always: Vec<ToolEntry>,
    /// `skills.allow_always`.
    pub skills_allow_always: Vec<Spanned<String>>,
    /// `skills.forbid_always`.
    pub skills_forbid_always: Vec<Spanned<String>>,
    /// `extensions.hooks`.
    pub extension_hooks: Vec<String>,
    /// Index of the first state of each slug in `states`, so [`Workflow::state`] costs a
    /// lookup, not a scan (bounded work: 1,000 state names in a case against 40,000 states).
    state_index: std::collections::BTreeMap<String, usize>,
}

/// One state.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// The slug (the mapping key) and its range.
    pub slug: Spanned<String>,
    /// Range of the state's value node.
    pub range: TextRange,
    /// `type`.
    pub kind: StateType,
    /// `title`.
    pub title: Option<String>,
    /// `summary`.
    pub summary: Option<String>,
    /// `instructions`.
    pub instructions: Option<String>,
    /// `evidence`.
    pub evidence: Vec<String>,
    /// `requires`.
    pub requires: Vec<Spanned<String>>,
    /// Triggers declared here (this state is their entry state).
    pub triggers: Vec<Trigger>,
    /// `before` hooks, in order.
    pub before: Vec<Hook>,
    /// `after` hooks, in order.
    pub after: Vec<Hook>,
    /// `budget.maxTurns`.
    pub max_turns: Option<u64>,
    /// `budget.maxParks`.
    pub max_parks: Option<u64>,
    /// `on_error`.
    pub on_error: Option<Spanned<String>>,
    /// `tools.allow`.
    pub tools_allow: Vec<ToolEntry>,
    /// `tools.forbid`.
    pub tools_forbid: Vec<ToolEntry>,
    /// `skills.allow` (`None` when absent, `Some([])` for `allow: []`).
    pub skills_allow: Option<Vec<Spanned<String>>>,
    /// `skills.forbid`.
    pub skills_forbid: Vec<Spanned<String>>,
    /// `transitions`, in order; empty means terminal.
    pub transitions: Vec<Transition>,
}

impl State {
    /// A state with no transitions is terminal (FORMAT §A.2).
    pub fn is_terminal(&self) -> bool {
        self.transitions.is_empty()
    }
}

/// A trigger declaration (FORMAT §A.5).
#[derive(Clone, Debug, PartialEq)]
pub struct Trigger {
    /// The trigger id (the key) and its range.
    pub id: Spanned<String>,
    /// The entry state's slug.
    pub state: String,
    /// `session` path.
    pub session: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `requires` signature.
    pub requires: Vec<SigEntry>,
    /// `returns` signature.
    pub returns: Vec<SigEntry>,
}

/// A signature entry: a bare name or `{ name, type?, description? }`.
#[derive(Clone, Debug, PartialEq)]
pub struct SigEntry {
    /// The variable name.
    pub name: Spanned<String>,
    /// The declared type, if any (`string`, `integer`, …).
    pub ty: Option<String>,
    /// `description`.
    pub description: Option<String>,
}

/// A transition (FORMAT §A.2).
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// `to` and its range.
    pub to: Spanned<String>,
    /// `description`.
    pub description: Option<String>,
    /// `type` (`approve`, `reject`, `refine`, `none`).
    pub kind: Option<Spanned<String>>,
    /// Range of the whole transition item.
    pub range: TextRange,
}

/// A hook (FORMAT §A.6).
#[derive(Clone, Debug, PartialEq)]
pub enum HookKind {
    /// `{ script: hooks/x.js }`.
    Script(Spanned<String>),
    /// `{ rubric: { instructions } }`.
    Rubric(String),
    /// `{ <kind>: <target> }`.
    Custom(Spanned<String>, String),
}

/// A hook with its budget and range.
#[derive(Clone, Debug, PartialEq)]
pub struct Hook {
    /// What runs.
    pub kind: HookKind,
    /// `max_iterations` (the correction budget; default 0).
    pub max_iterations: u64,
    /// Range of the hook item.
    pub range: TextRange,
}

/// An allow/forbid entry (FORMAT §A.3).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolEntry {
    /// The tool name.
    pub tool: Spanned<String>,
    /// `args` guards: argument name → globs.
    pub args: Vec<(String, Vec<String>)>,
    /// `paths` guard globs.
    pub paths: Vec<String>,
    /// Range of the entry.
    pub range: TextRange,
}

impl Workflow {
    /// Builds the model from a document root. Never fails.
    pub fn from_node(root: &Node) -> Workflow {
        let get = |k: &str| root.get_value(k);
        let tests = get("tests");
        let settings = get("settings");
        let tools = get("tools");
        let skills = get("skills");
        let disabled = match get("disabled").map(|n| &n.value) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(_) => true,
        };
        let mut states = Vec::new();
        if let Some(map) = get("states").and_then(Node::as_map) {
            for e in map {
                if let Some(slug) = e.key.scalar_text() {
                    states.push(State::from_node(
                        Spanned::new(slug.into_owned(), e.key.range),
                        &e.value,
                    ));
                }
            }
        }
        let mut state_index = std::collections::BTreeMap::new();
        for (i, st) in states.iter().enumerate() {
            state_index.entry(st.slug.value.clone()).or_insert(i);
        }
        Workflow {
            state_index,
            root: root.clone(),
            title: get("title").and_then(spanned_str),
            disabled,
            instructions: get("instructions").and_then(spanned_str),
            states,
            states_key: root
                .get("states")
                .map_or(TextRange::empty(root.range.start), |e| e.key.range),
            has_judge: tests.and_then(|t| t.get("judge")).is_some(),
            max_concurrency: as_u64(tests.and_then(|t| t.get_value("maxConcurrency"))),
            case_timeout_ms: as_u64(tests.and_then(|t| t.get_value("caseTimeoutMs"))),
            timeout_ms: as_u64(settings.and_then(|t| t.get_value("timeoutMs"))),
            memory_limit_bytes: as_u64(settings.and_then(|t| t.get_value("memoryLimitBytes"))),
            max_ptc_calls: as_u64(settings.and_then(|t| t.get_value("maxPtcCalls"))),
            tools_allow_always: tool_entries(tools.and_then(|t| t.get_value("allow_always"))),
            tools_forbid_always: tool_entries(tools.and_then(|t| t.get_value("forbid_always"))),
            skills_allow_always: spanned_strs(skills.and_then(|t| t.get_value("allow_always"))),
            skills_forbid_always: spanned_strs(skills.and_then(|t| t.get_value("forbid_always"))),
            extension_hooks: spanned_strs(get("extensions").and_then(|t| t.get_value("hooks")))
                .into_iter()
                .map(|s| s.value)
                .collect(),
        }
    }

    /// The state with this slug.
    pub fn state(&self, slug: &str) -> Option<&State> {
        self.states.get(*self.state_index.get(slug)?)
    }

    /// Every trigger of every state, in document order.
    pub fn triggers(&self) -> impl Iterator<Item = &Trigger> {
        self.states.iter().flat_map(|s| s.triggers.iter())
    }

    /// The first trigger with this id.
    pub fn trigger(&self, id: &str) -> Option<&Trigger> {
        self.triggers().find(|t| t.id.value == id)
    }

    /// Declared trigger ids, sorted and de-duplicated.
    pub fn trigger_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.triggers().map(|t| t.id.value.clone()).collect();
        ids.sort();
        ids.dedup();
        ids
    }
}

impl State {
    fn from_node(slug: Spanned<String>, node: &Node) -> State {
        let get = |k: &str| node.get_value(k);
        let text = |k: &str| get(k).and_then(Node::as_str).map(str::to_owned);
        let tools = get("tools");
        let skills = get("skills");
        let budget = get("budget");
        let mut triggers = Vec::new();
        if let Some(map) = get("triggers").and_then(Node::as_map) {
            for e in map {
                if let Some(id) = e.key.scalar_text() {
                    let decl = &e.value;
                    triggers.push(Trigger {
                        id: Spanned::new(id.into_owned(), e.key.range),
                        state: slug.value.clone(),
                        session: decl
                            .get_value("session")
                            .and_then(Node::as_str)
                            .map(|s| s.trim().to_owned()),
                        description: decl
                            .get_value("description")
                            .and_then(Node::as_str)
                            .map(str::to_owned),
                        requires: sig_entries(decl.get_value("requires")),
                        returns: sig_entries(decl.get_value("returns")),
                    });
                }
            }
        }
        let transitions = get("transitions")
            .and_then(Node::as_seq)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|t| {
                        Some(Transition {
                            to: t.get_value("to").and_then(spanned_str)?,
                            description: t
                                .get_value("description")
                                .and_then(Node::as_str)
                                .map(str::to_owned),
                            kind: t.get_value("type").and_then(spanned_str),
                            range: t.range,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        State {
            kind: if get("type").and_then(Node::as_str) == Some("human") {
                StateType::Human
            } else {
                StateType::Agent
            },
            title: text("title"),
            summary: text("summary"),
            instructions: text("instructions"),
            evidence: spanned_strs(get("evidence"))
                .into_iter()
                .map(|s| s.value)
                .collect(),
            requires: spanned_strs(get("requires")),
            triggers,
            before: hooks(get("before")),
            after: hooks(get("after")),
            max_turns: as_u64(budget.and_then(|b| b.get_value("maxTurns"))),
            max_parks: as_u64(budget.and_then(|b| b.get_value("maxParks"))),
            on_error: get("on_error").and_then(spanned_str),
            tools_allow: tool_entries(tools.and_then(|t| t.get_value("allow"))),
            tools_forbid: tool_entries(tools.and_then(|t| t.get_value("forbid"))),
            skills_allow: skills
                .and_then(|s| s.get_value("allow"))
                .map(|n| spanned_strs(Some(n))),
            skills_forbid: spanned_strs(skills.and_then(|s| s.get_value("forbid"))),
            transitions,
            range: node.range,
            slug,
        }
    }
}

fn sig_entries(node: Option<&Node>) -> Vec<SigEntry> {
    let Some(items) = node.and_then(Node::as_seq) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match &item.value {
            Value::Str(..) => Some(SigEntry {
                name: spanned_str(item)?,
                ty: None,
                description: None,
            }),
            Value::Map(_) => Some(SigEntry {
                name: item.get_value("name").and_then(spanned_str)?,
                ty: item
                    .get_value("type")
                    .and_then(Node::as_str)
                    .map(str::to_owned),
                description: item
                    .get_value("description")
                    .and_then(Node::as_str)
                    .map(str::to_owned),
            }),
            _ => None,
        })
        .collect()
}

fn hooks(node: Option<&Node>) -> Vec<Hook> {
    let Some(node) = node else { return Vec::new() };
    let items: Vec<&Node> = match node.as_seq() {
        Some(items) => items.iter().collect(),
        None => vec![node],
    };
    items
        .into_iter()
        .filter_map(|h| {
            let map = h.as_map()?;
            let max_iterations = as_u64(h.get_value("max_iterations")).unwrap_or(0);
            if let Some(script) = h.get_value("script").and_then(spanned_str) {
                return Some(Hook {
                    kind: HookKind::Script(script),
                    max_iterations,
                    range: h.range,
                });
            }
            if let Some(rubric) = h.get_value("rubric") {
                let instructions = rubric
                    .get_value("instructions")
                    .and_then(Node::as_str)
                    .unwrap_or("")
                    .to_owned();
                let max_iterations = as_u64(rubric.get_value("max_iterations")).unwrap_or(0);
                return Some(Hook {
                    kind: HookKind::Rubric(instructions),
                    max_iterations,
                    range: h.range,
                });
            }
            let e = map
                .iter()
                .find(|e| e.key.as_str() != Some("max_iterations"))?;
            let kind = spanned_str(&e.key)?;
            let target = e.value.as_str().unwrap_or("").to_owned();
            Some(Hook {
                kind: HookKind::Custom(kind, target),
                max_iterations,
                range: h.range,
            })
        })
        .collect()
}

/// Tool entries at `node`: bare names or `{ tool, args?, paths? }` mappings.
pub fn tool_entries(node: Option<&Node>) -> Vec<ToolEntry> {
    let Some(items) = node.and_then(Node::as_seq) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match &item.value {
            Value::Str(..) => Some(ToolEntry {
                tool: spanned_str(item)?,
                args: Vec::new(),
                paths: Vec::new(),
                range: item.range,
            }),
            Value::Map(_) => {
                let tool = item.get_value("tool").and_then(spanned_str)?;
                let args = item
                    .get_value("args")
                    .and_then(Node::as_map)
                    .map(|m| {
                        m.iter()
                            .filter_map(|e| {
                                let k = e.key.as_str()?.to_owned();
                                Some((
                                    k,
                                    spanned_strs(Some(&e.value))
                                        .into_iter()
                                        .map(|s| s.value)
                                        .collect(),
                                ))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let paths = spanned_strs(item.get_value("paths"))
                    .into_iter()
                    .map(|s| s.value)
                    .collect();
                Some(ToolEntry {
                    tool,
                    args,
                    paths,
                    range: item.range,
                })
            }
            _ => None,
        })
        .collect()
}
