//! The typed model of a case document (FORMAT §B): top-level keys, mocks, workspace seeds
//! and the flat list of steps. [`StepForm`] is the typed reading of one step's value, shared
//! by the rules (which report what does not fit) and the runner (which executes it).
//! Lenient: building never fails; a step whose value does not fit reads as `None`.

use super::{Spanned, as_u64, spanned_str};
use crate::text::TextRange;
use crate::yaml::{Node, Value};

/// The three actions, in the reference's order (FORMAT §B.2).
pub const ACTIONS: &[&str] = &["send", "decide", "deliver"];

/// Every assertion key, in the reference's order (FORMAT §B.2).
pub const ASSERTIONS: &[&str] = &[
    "succeeded",
    "usedNoTools",
    "noTraversal",
    "parked",
    "raised",
    "reachedState",
    "triggerArrival",
    "reply",
    "calledTool",
    "notCalledTool",
    "blockedTool",
    "ranWorkflow",
    "trail",
    "variables",
    "grade",
];

/// Assertions whose failure halts the case (FORMAT §B.5).
pub const STRUCTURAL: &[&str] = &[
    "succeeded",
    "parked",
    "raised",
    "reachedState",
    "trail",
    "noTraversal",
    "triggerArrival",
    "variables",
];

/// The 8 top-level keys, in the reference's order (FORMAT §B.1).
pub const TOP_LEVEL_KEYS: &[&str] = &[
    "title",
    "description",
    "skip",
    "trigger",
    "variables",
    "workspace",
    "mocks",
    "steps",
];

/// True for `send`, `decide`, `deliver`.
pub fn is_action(key: &str) -> bool {
    ACTIONS.contains(&key)
}

/// True for any assertion key.
pub fn is_assertion(key: &str) -> bool {
    ASSERTIONS.contains(&key)
}

/// True for a structural assertion.
pub fn is_structural(key: &str) -> bool {
    STRUCTURAL.contains(&key)
}

/// A parsed case document.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// The document root.
    pub root: Node,
    /// `title` as written (not collapsed).
    pub title: Option<Spanned<String>>,
    /// `description` as written.
    pub description: Option<Spanned<String>>,
    /// `skip` reason.
    pub skip: Option<Spanned<String>>,
    /// `trigger.id`.
    pub trigger: Option<Spanned<String>>,
    /// `variables`, in order.
    pub variables: Vec<(Spanned<String>, Node)>,
    /// `workspace` seeds, in order.
    pub workspace: Vec<Seed>,
    /// `mocks`, in order.
    pub mocks: Vec<Mock>,
    /// `steps`, in order.
    pub steps: Vec<CaseStep>,
}

/// A workspace seed (FORMAT §B.1, §B.8).
#[derive(Clone, Debug, PartialEq)]
pub struct Seed {
    /// The session-relative path (the key).
    pub path: Spanned<String>,
    /// File reference or inline content.
    pub content: SeedContent,
}

/// What a seed writes.
#[derive(Clone, Debug, PartialEq)]
pub enum SeedContent {
    /// `{ from: <tests/-relative path> }`.
    From(Spanned<String>),
    /// Anything else: strings verbatim, other values as pretty JSON.
    Inline(Node),
}

/// A tool mock (FORMAT §B.9).
#[derive(Clone, Debug, PartialEq)]
pub struct Mock {
    /// `tool`.
    pub tool: Spanned<String>,
    /// `whenInput` as JSON (regex strings inside).
    pub when_input: Option<serde_json::Value>,
    /// `result` as JSON (`null` when omitted).
    pub result: serde_json::Value,
    /// Range of the mock item.
    pub range: TextRange,
}

/// One step of `steps`: a single-key mapping (FORMAT §B.2).
#[derive(Clone, Debug, PartialEq)]
pub struct CaseStep {
    /// Index into `steps`.
    pub index: usize,
    /// The step key and its range (`None` when the item is not a single-key mapping).
    pub key: Option<Spanned<String>>,
    /// The step's value node (the whole item when there is no single key).
    pub value: Node,
    /// Range of the whole step item.
    pub range: TextRange,
}

impl CaseStep {
    /// The key text, if any.
    pub fn key_str(&self) -> Option<&str> {
        self.key.as_ref().map(|k| k.value.as_str())
    }

    /// True when the key is an action.
    pub fn is_action(&self) -> bool {
        self.key_str().is_some_and(is_action)
    }

    /// The typed form, or `None` when the key is unknown or the value does not fit.
    pub fn form(&self) -> Option<StepForm> {
        StepForm::read(self.key_str()?, &self.value)
    }
}

/// `parked` channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// A human state's decision park.
    Decision,
    /// An `archmax_wait` input park.
    Input,
}

/// A string or a list of strings (`reply.includes`).
pub type Tokens = Vec<Spanned<String>>;

/// The typed reading of a step (FORMAT §B.2 table).
#[derive(Clone, Debug, PartialEq)]
pub enum StepForm {
    /// `send: <message>`.
    Send(String),
    /// `decide: { to, comment? }`.
    Decide {
        /// Target state.
        to: Spanned<String>,
        /// Comment (dropped when empty).
        comment: Option<String>,
    },
    /// `deliver: { trigger, variables? }`.
    Deliver {
        /// Delivered trigger id.
        trigger: Spanned<String>,
        /// Delivered variables, in order.
        variables: Vec<(String, serde_json::Value)>,
    },
    /// `succeeded: true`.
    Succeeded,
    /// `usedNoTools: true`.
    UsedNoTools,
    /// `noTraversal: true`.
    NoTraversal,
    /// `parked` with optional pins.
    Parked {
        /// Pinned channel.
        channel: Option<Channel>,
        /// Pinned state.
        state: Option<Spanned<String>>,
    },
    /// `raised` with optional pins.
    Raised {
        /// Expected code.
        code: Option<String>,
        /// Expected reason (regex or exact).
        reason: Option<String>,
    },
    /// `reachedState: <slug>`.
    ReachedState(Spanned<String>),
    /// `triggerArrival: <id>`.
    TriggerArrival(Spanned<String>),
    /// `reply: { includes?, excludes? }`.
    Reply {
        /// Tokens that must match.
        includes: Tokens,
        /// Tokens that must not match.
        excludes: Tokens,
    },
    /// `calledTool` / `notCalledTool` / `blockedTool`.
    Tool {
        /// Which of the three.
        which: ToolAssertion,
        /// Tool name.
        name: Spanned<String>,
        /// Partial input to match.
        input: Option<serde_json::Value>,
    },
    /// `ranWorkflow: { workflow, status?, count? }`.
    RanWorkflow {
        /// Child workflow slug.
        workflow: Spanned<String>,
        /// `ok` (default) or `error`.
        status: String,
        /// Exact count, if given.
        count: Option<u64>,
    },
    /// `trail: { to?, kind?, reason?, count }`.
    Trail {
        /// Match `to`.
        to: Option<Spanned<String>>,
        /// Match `kind`.
        kind: Option<String>,
        /// Match `reason`.
        reason: Option<String>,
        /// Expected count.
        count: u64,
    },
    /// `variables: { expect, path?, locked? }`.
    Variables {
        /// Expected values, in order.
        expect: Vec<(Spanned<String>, serde_json::Value)>,
        /// Paths per name.
        path: Vec<(String, String)>,
        /// Expected lock state per name.
        locked: Vec<(String, bool)>,
    },
    /// `grade: { closedQA, atLeast }`.
    Grade {
        /// The criterion.
        closed_qa: String,
        /// Threshold in [0, 1].
        at_least: f64,
    },
}

/// Which tool assertion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolAssertion {
    /// Some call matches.
    Called,
    /// No call matches.
    NotCalled,
    /// Some matching call was blocked by governance.
    Blocked,
}

fn tokens(node: Option<&Node>) -> Tokens {
    match node {
        None => Vec::new(),
        Some(n) => match n.as_seq() {
            Some(items) => items.iter().filter_map(spanned_str).collect(),
            None => spanned_str(n).into_iter().collect(),
        },
    }
}

fn is_true(node: &Node) -> bool {
    node.value == Value::Bool(true)
}

impl StepForm {
    /// Reads a step's value for `key`; `None` when the key is unknown or the value does
    /// not have an accepted form.
    pub fn read(key: &str, v: &Node) -> Option<StepForm> {
        let s = |k: &str| v.get_value(k).and_then(spanned_str);
        Some(match key {
            "send" => StepForm::Send(v.as_str().filter(|s| !s.is_empty())?.to_owned()),
            "decide" => StepForm::Decide {
                to: s("to").filter(|t| !t.value.is_empty())?,
                comment: v
                    .get_value("comment")
                    .and_then(Node::as_str)
                    .filter(|c| !c.is_empty())
                    .map(str::to_owned),
            },
            "deliver" => StepForm::Deliver {
                trigger: s("trigger").filter(|t| !t.value.is_empty())?,
                variables: v
                    .get_value("variables")
                    .and_then(Node::as_map)
                    .map(|m| {
                        m.iter()
                            .filter_map(|e| {
                                Some((e.key.scalar_text()?.into_owned(), e.value.to_json()))
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            },
            "succeeded" if is_true(v) => StepForm::Succeeded,
            "usedNoTools" if is_true(v) => StepForm::UsedNoTools,
            "noTraversal" if is_true(v) => StepForm::NoTraversal,
            "parked" => match &v.value {
                Value::Bool(true) => StepForm::Parked {
                    channel: None,
                    state: None,
                },
                Value::Str(c, _) if c == "decision" => StepForm::Parked {
                    channel: Some(Channel::Decision),
                    state: None,
                },
                Value::Str(c, _) if c == "input" => StepForm::Parked {
                    channel: Some(Channel::Input),
                    state: None,
                },
                Value::Map(_) => StepForm::Parked {
                    channel: match v.get_value("channel").and_then(Node::as_str) {
                        None => None,
                        Some("decision") => Some(Channel::Decision),
                        Some("input") => Some(Channel::Input),
                        Some(_) => return None,
                    },
                    state: s("state"),
                },
                _ => return None,
            },
            "raised" => match &v.value {
                Value::Bool(true) => StepForm::Raised {
                    code: None,
                    reason: None,
                },
                Value::Str(c, _) if !c.trim().is_empty() => StepForm::Raised {
                    code: Some(c.clone()),
                    reason: None,
                },
                Value::Map(_) => StepForm::Raised {
                    code: s("code").map(|c| c.value),
                    reason: s("reason").map(|c| c.value),
                },
                _ => return None,
            },
            "reachedState" => {
                StepForm::ReachedState(spanned_str(v).filter(|t| !t.value.is_empty())?)
            }
            "triggerArrival" => {
                StepForm::TriggerArrival(spanned_str(v).filter(|t| !t.value.is_empty())?)
            }
            "reply" => {
                v.as_map()?;
                StepForm::Reply {
                    includes: tokens(v.get_value("includes")),
                    excludes: tokens(v.get_value("excludes")),
                }
            }
            "calledTool" | "notCalledTool" | "blockedTool" => StepForm::Tool {
                which: match key {
                    "calledTool" => ToolAssertion::Called,
                    "notCalledTool" => ToolAssertion::NotCalled,
                    _ => ToolAssertion::Blocked,
                },
                name: s("name").filter(|t| !t.value.is_empty())?,
                input: v.get_value("input").map(Node::to_json),
            },
            "ranWorkflow" => StepForm::RanWorkflow {
                workflow: s("workflow").filter(|t| !t.value.is_empty())?,
                status: v
                    .get_value("status")
                    .and_then(Node::as_str)
                    .unwrap_or("ok")
                    .to_owned(),
                count: as_u64(v.get_value("count")),
            },
            "trail" => StepForm::Trail {
                to: s("to"),
                kind: s("kind").map(|k| k.value),
                reason: s("reason").map(|k| k.value),
                count: as_u64(v.get_value("count"))?,
            },
            "variables" => {
                let expect = v.get_value("expect").and_then(Node::as_map)?;
                let pairs = |k: &str| -> Vec<(String, Node)> {
                    v.get_value(k)
                        .and_then(Node::as_map)
                        .map(|m| {
                            m.iter()
                                .filter_map(|e| {
                                    Some((e.key.scalar_text()?.into_owned(), e.value.clone()))
                                })
                                .collect()
                        })
                        .unwrap_or_default()
                };
                StepForm::Variables {
                    expect: expect
                        .iter()
                        .filter_map(|e| {
                            Some((
                                Spanned::new(e.key.scalar_text()?.into_owned(), e.key.range),
                                e.value.to_json(),
                            ))
                        })
                        .collect(),
                    path: pairs("path")
                        .into_iter()
                        .filter_map(|(k, n)| Some((k, n.as_str()?.to_owned())))
                        .collect(),
                    locked: pairs("locked")
                        .into_iter()
                        .filter_map(|(k, n)| match n.value {
                            Value::Bool(b) => Some((k, b)),
                            _ => None,
                        })
                        .collect(),
                }
            }
            "grade" => StepForm::Grade {
                closed_qa: v.get_value("closedQA").and_then(Node::as_str)?.to_owned(),
                at_least: match v.get_value("atLeast").map(|n| &n.value) {
                    Some(Value::Int(i)) => *i as f64,
                    Some(Value::Float(f)) => *f,
                    _ => return None,
                },
            },
            _ => return None,
        })
    }
}

impl Case {
    /// Builds the model from a document root. Never fails.
    pub fn from_node(root: &Node) -> Case {
        let get = |k: &str| root.get_value(k);
        let variables = get("variables")
            .and_then(Node::as_map)
            .map(|m| {
                m.iter()
                    .filter_map(|e| {
                        Some((
                            Spanned::new(e.key.scalar_text()?.into_owned(), e.key.range),
                            e.value.clone(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let workspace = get("workspace")
            .and_then(Node::as_map)
            .map(|m| {
                m.iter()
                    .filter_map(|e| {
                        let path = Spanned::new(e.key.scalar_text()?.into_owned(), e.key.range);
                        let content = match e.value.as_map() {
                            Some([only]) if only.key.as_str() == Some("from") => {
                                match spanned_str(&only.value) {
                                    Some(from) => SeedContent::From(from),
                                    None => SeedContent::Inline(e.value.clone()),
                                }
                            }
                            _ => SeedContent::Inline(e.value.clone()),
                        };
                        Some(Seed { path, content })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mocks = get("mocks")
            .and_then(Node::as_seq)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|m| {
                        Some(Mock {
                            tool: m.get_value("tool").and_then(spanned_str)?,
                            when_input: m.get_value("whenInput").map(Node::to_json),
                            result: m
                                .get_value("result")
                                .map_or(serde_json::Value::Null, Node::to_json),
                            range: m.range,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let steps = get("steps")
            .and_then(Node::as_seq)
            .map(|items| {
                items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| match item.as_map() {
                        Some([only]) => CaseStep {
                            index,
                            key: only
                                .key
                                .as_str()
                                .map(|k| Spanned::new(k.to_owned(), only.key.range)),
                            value: only.value.clone(),
                            range: item.range,
                        },
                        _ => CaseStep {
                            index,
                            key: None,
                            value: item.clone(),
                            range: item.range,
                        },
                    })
                    .collect()
            })
            .unwrap_or_default();
        Case {
            root: root.clone(),
            title: get("title").and_then(spanned_str),
            description: get("description").and_then(spanned_str),
            skip: get("skip").and_then(spanned_str),
            trigger: get("trigger")
                .and_then(|t| t.get_value("id"))
                .and_then(spanned_str),
            variables,
            workspace,
            mocks,
            steps,
        }
    }

    /// The trigger id the case starts with: `trigger.id`, default `manual`.
    pub fn trigger_id(&self) -> &str {
        self.trigger.as_ref().map_or("manual", |t| t.value.as_str())
    }
}
