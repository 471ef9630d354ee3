//! The agent seam: what the simulator asks of "the model" (FORMAT §E.1 turns), and
//! [`ScriptedAgent`], its first implementation, driven by an agent script
//! (`tests/<name>.agent.yaml`, documented in `docs/agent-scripts.md`).
//!
//! The simulator only knows the [`Agent`] trait. One call of [`Agent::respond`] is one
//! model call: it returns the actions of one assistant message (`say` text and tool
//! `call`s, in order). The simulator executes them (governance, hooks, mocks, parks and the
//! trail all apply), appends the results to the transcript, and calls again; an empty list
//! ends the model run. A model-endpoint agent fits the same trait: it turns
//! [`TurnContext::messages`] into a chat request and the reply into actions.
//!
//! Must not: execute anything itself, or depend on simulator internals.

use serde_json::Value;
use wfx_schemas::yaml::{self, Node};

/// One thing the agent does.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentAction {
    /// An assistant message.
    Say(String),
    /// A tool call: any tool (controls, file tools, host tools, `archmax_workflow_<slug>`,
    /// `archmax_run`).
    Call {
        /// Wire name, e.g. `archmax_advance`.
        tool: String,
        /// Arguments object.
        input: Value,
    },
}

/// Why this run of the agent began.
#[derive(Clone, Debug, PartialEq)]
pub enum RunCause {
    /// A `send` starting (or continuing) a turn.
    Send {
        /// The user message.
        message: String,
    },
    /// A `send` to a parked session: a reply-only run (FORMAT §E.3).
    ReplyWhileParked {
        /// The user message.
        message: String,
    },
    /// A `decide` resumed the session.
    Decision {
        /// The chosen target state.
        to: String,
    },
    /// A `deliver` resumed the session.
    Delivery {
        /// The delivered trigger id.
        trigger: String,
    },
    /// Entry was vetoed by a `before` hook; the agent explains (reply-only).
    VetoedEntry {
        /// The veto reason.
        reason: String,
    },
}

impl RunCause {
    /// A short description for messages, e.g. ``the `send` ``.
    pub fn describe(&self) -> String {
        match self {
            RunCause::Send { .. } => "the run started by `send`".into(),
            RunCause::ReplyWhileParked { .. } => {
                "the reply-only run answering a `send` to the parked session".into()
            }
            RunCause::Decision { to } => format!("the run resumed by `decide` to `{to}`"),
            RunCause::Delivery { trigger } => {
                format!("the run resumed by `deliver` of `{trigger}`")
            }
            RunCause::VetoedEntry { .. } => "the reply-only run after the entry veto".into(),
        }
    }
}

/// One transcript message as the agent sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentMessage {
    /// `user`, `assistant`, `tool` or `runtime` (a runtime note).
    pub role: &'static str,
    /// The text (for `assistant` with tool calls: the text part; for `tool`: the result).
    pub text: String,
    /// For `assistant`: the tool called, if any; for `tool`: which tool answered.
    pub tool: Option<String>,
    /// For a call (`assistant` with `tool`) and its result (`tool`): the simulator's call
    /// id, the same on both, so a transcript can pair them exactly.
    pub call_id: Option<u64>,
    /// For a call: its arguments as executed.
    pub input: Option<Value>,
    /// For `tool`: the result is an error (raw status `error`, or refused).
    pub error: bool,
    /// For `runtime`: the note's kind (`decision`, `event`, `veto`, `error`, `hook`, …).
    pub note_kind: Option<&'static str>,
    /// For `assistant`: the 0-based model call (of the whole session) whose actions
    /// produced it; messages of one model call share it, so a chat transcript can group
    /// them back into one assistant message. `None` for messages no model call produced.
    pub group: Option<u64>,
}

/// What the agent is told at each model call.
#[derive(Clone, Debug)]
pub struct TurnContext<'a> {
    /// 0-based index of this model run in the case (one per `send`, reply-only run, and
    /// run resumed by `decide`/`deliver`).
    pub run: usize,
    /// 0-based model call within the run.
    pub call: usize,
    /// The case step (index into `steps`) whose action started the run.
    pub case_step: usize,
    /// Why the run began.
    pub cause: &'a RunCause,
    /// The current state slug.
    pub state: &'a str,
    /// The state's `instructions`.
    pub instructions: Option<&'a str>,
    /// True when every tool call will be refused (`tool.reply-only`).
    pub reply_only: bool,
    /// Tool names offered in the state, sorted.
    pub tools: &'a [String],
    /// The whole session transcript so far.
    pub messages: &'a [AgentMessage],
    /// Run variables as `{<name>: <value>}`.
    pub variables: &'a Value,
}

/// The agent could not answer; the case dies with this message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentError(pub String);

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// "The model" of a session.
pub trait Agent {
    /// One model call: the actions of one assistant message. An empty list ends the run.
    fn respond(&mut self, ctx: &TurnContext<'_>) -> Result<Vec<AgentAction>, AgentError>;

    /// `Some(message)` when this is no agent at all (the selection rule found none,
    /// [`crate::select`]): the case is then not run and is reported "not run" with the
    /// message, never passed. Default `None`.
    fn not_run(&self) -> Option<String> {
        None
    }
}

/// The stand-in for a case the selection rule found no agent for: it is never asked to
/// respond (the interpreter reports the case "not run" first); if it were, it refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoAgent(pub String);

impl Agent for NoAgent {
    fn respond(&mut self, _ctx: &TurnContext<'_>) -> Result<Vec<AgentAction>, AgentError> {
        Err(AgentError(self.0.clone()))
    }

    fn not_run(&self) -> Option<String> {
        Some(self.0.clone())
    }
}

/// An agent that replays an agent script: `turns[run]` on the first call of each run,
/// nothing on later calls.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptedAgent {
    /// Workspace-relative path of the script (for messages).
    pub path: String,
    /// `None` when the file does not exist.
    turns: Option<Vec<Vec<AgentAction>>>,
}

impl ScriptedAgent {
    /// An agent for a case whose script file is missing: every run fails with a message
    /// that shows how to create it.
    pub fn missing(path: &str) -> Self {
        Self {
            path: path.to_owned(),
            turns: None,
        }
    }

    /// An agent from already-built turns.
    pub fn from_turns(path: &str, turns: Vec<Vec<AgentAction>>) -> Self {
        Self {
            path: path.to_owned(),
            turns: Some(turns),
        }
    }

    /// Reads an agent script: a mapping with one key `turns`, a list of turns, each a list
    /// of `say: <text>` / `call: {tool, input?}` actions. Errors name the first problem
    /// (the full diagnostics are WFX4xx from `wfx_schemas::check`).
    pub fn parse(path: &str, text: &str) -> Result<Self, String> {
        let parsed = yaml::parse(text);
        if let Some(issue) = parsed.issues.first() {
            return Err(format!(
                "agent script `{path}` is not valid YAML: {}",
                issue.message
            ));
        }
        let root = parsed
            .documents
            .first()
            .ok_or_else(|| format!("agent script `{path}` is empty"))?;
        let turns_node = root
            .get_value("turns")
            .and_then(Node::as_seq)
            .ok_or_else(|| format!("agent script `{path}` needs a `turns:` list"))?;
        let mut turns = Vec::new();
        for (t, turn) in turns_node.iter().enumerate() {
            let items: &[Node] = match &turn.value {
                yaml::Value::Null => &[],
                _ => turn.as_seq().ok_or_else(|| {
                    format!(
                        "agent script `{path}`: turn {} is not a list of actions",
                        t + 1
                    )
                })?,
            };
            let mut actions = Vec::new();
            for (a, item) in items.iter().enumerate() {
                let bad = || {
                    format!(
                        "agent script `{path}`: turn {}, action {} is not `say: <text>` or `call: {{tool, input}}`",
                        t + 1,
                        a + 1
                    )
                };
                let [entry] = item.as_map().ok_or_else(bad)? else {
                    return Err(bad());
                };
                match entry.key.as_str() {
                    Some("say") => actions.push(AgentAction::Say(
                        entry.value.scalar_text().ok_or_else(bad)?.into_owned(),
                    )),
                    Some("call") => {
                        let tool = entry
                            .value
                            .get_value("tool")
                            .and_then(Node::as_str)
                            .ok_or_else(bad)?;
                        let input = entry
                            .value
                            .get_value("input")
                            .map_or(Value::Object(Default::default()), Node::to_json);
                        actions.push(AgentAction::Call {
                            tool: tool.to_owned(),
                            input,
                        });
                    }
                    _ => return Err(bad()),
                }
            }
            turns.push(actions);
        }
        Ok(Self {
            path: path.to_owned(),
            turns: Some(turns),
        })
    }

    /// The turns of the script, `None` when it is missing (a fake model endpoint replays
    /// them in the live-agent tests).
    pub fn turns(&self) -> Option<&[Vec<AgentAction>]> {
        self.turns.as_deref()
    }

    /// Number of turns in the script (0 when missing).
    pub fn turn_count(&self) -> usize {
        self.turns.as_ref().map_or(0, Vec::len)
    }
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

impl Agent for ScriptedAgent {
    fn respond(&mut self, ctx: &TurnContext<'_>) -> Result<Vec<AgentAction>, AgentError> {
        if ctx.call > 0 {
            return Ok(Vec::new());
        }
        let Some(turns) = &self.turns else {
            return Err(AgentError(format!(
                "no agent script for this case: create `{}` with one entry under `turns:` per driven model run, e.g.\nturns:\n  - - say: \"…\"",
                self.path
            )));
        };
        match turns.get(ctx.run) {
            Some(actions) => Ok(actions.clone()),
            None => Err(AgentError(format!(
                "agent script `{}` has no turn {} ({}, step {} in state `{}`); it has {} turn(s): add a {} entry under `turns:`, e.g.\n  - - say: \"…\"",
                self.path,
                ctx.run + 1,
                ctx.cause.describe(),
                ctx.case_step + 1,
                ctx.state,
                turns.len(),
                ordinal(ctx.run + 1)
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx<'a>(run: usize, call: usize, cause: &'a RunCause, vars: &'a Value) -> TurnContext<'a> {
        TurnContext {
            run,
            call,
            case_step: 2,
            cause,
            state: "s",
            instructions: None,
            reply_only: false,
            tools: &[],
            messages: &[],
            variables: vars,
        }
    }

    #[test]
    fn parses_and_replays_turns() {
        let mut a = ScriptedAgent::parse(
            "t.agent.yaml",
            "turns:\n  - - say: hi\n    - call: { tool: archmax_advance, input: { to: b, reason: r } }\n  -\n",
        )
        .unwrap();
        let cause = RunCause::Send {
            message: "x".into(),
        };
        let vars = json!({});
        assert_eq!(
            a.respond(&ctx(0, 0, &cause, &vars)).unwrap(),
            vec![
                AgentAction::Say("hi".into()),
                AgentAction::Call {
                    tool: "archmax_advance".into(),
                    input: json!({"to": "b", "reason": "r"})
                }
            ]
        );
        assert_eq!(a.respond(&ctx(0, 1, &cause, &vars)).unwrap(), vec![]);
        assert_eq!(a.respond(&ctx(1, 0, &cause, &vars)).unwrap(), vec![]);
        let err = a.respond(&ctx(2, 0, &cause, &vars)).unwrap_err();
        assert!(
            err.0
                .contains("has no turn 3 (the run started by `send`, step 3 in state `s`)"),
            "{err}"
        );
        assert!(err.0.contains("add a 3rd entry under `turns:`"), "{err}");
    }

    #[test]
    fn missing_script_says_how_to_create_it() {
        let mut a = ScriptedAgent::missing("w/tests/x.agent.yaml");
        let cause = RunCause::Send {
            message: "x".into(),
        };
        let vars = json!({});
        let err = a.respond(&ctx(0, 0, &cause, &vars)).unwrap_err();
        assert!(
            err.0
                .starts_with("no agent script for this case: create `w/tests/x.agent.yaml`"),
            "{err}"
        );
    }

    #[test]
    fn shape_errors_name_the_turn_and_action() {
        let err = ScriptedAgent::parse("a", "turns:\n  - - shout: x\n").unwrap_err();
        assert!(err.contains("turn 1, action 1"), "{err}");
        assert!(
            ScriptedAgent::parse("a", "turn: []\n")
                .unwrap_err()
                .contains("needs a `turns:` list")
        );
    }
}
