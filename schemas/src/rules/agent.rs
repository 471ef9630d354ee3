//! Rules for the runner's agent scripts (`tests/<name>.agent.yaml`): a mapping with one key,
//! `turns`, a list of turns, each a list of `say: <text>` / `call: {tool, input}` actions
//! (docs/agent-scripts.md). Emits WFX401–WFX410. A `call` of a tool that governance blocks
//! in every state of the workflow is a warning (FORMAT §E.7): blocked calls are legitimate
//! when a case asserts them with `blockedTool`. So is an `archmax_advance` the runtime
//! refuses (FORMAT §E.5: a recoverable rejection, the script goes on): to a state the
//! workflow does not declare (`WFX409`) or along no transition of the state the script is
//! in at that point (`WFX410`).
//!
//! Where the script is, statically: the first turn (the first `send`'s run)
//! starts in an entry state of some trigger (the case's trigger is not read, so a file's
//! diagnostics never depend on another file than `workflow.yaml`: with one entry state the
//! place is exact, with several it is any of them). An advance along an edge moves there;
//! when the runtime might refuse it (the state `requires` variables, an `after` hook of the
//! source, a `before` hook of the target, `evidence`, extension hooks, a governance rule
//! naming `archmax_advance`), the script may also still be where it was. `archmax_reset`
//! adds the entry states. After a park (`archmax_wait`, an advance into a human state), an
//! `archmax_raise` or an `archmax_run` script, and in every later turn (which the case's
//! `decide`/`deliver`/`send` steps start), the place is unknown: an advance is then
//! reported only when no state at all has a transition to its target.

use crate::diagnostics::{self, Diagnostic};
use crate::model::workflow::{StateType, Workflow};
use crate::rules::case::{did_you_mean, nearest, yaml_scalar};
use crate::text::TextRange;
use crate::yaml::{Node, Value};

fn near<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .copied()
        .filter(|k| crate::rules::case::edit_distance(word, k) <= 2)
        .min_by_key(|k| crate::rules::case::edit_distance(word, k))
}

/// True when some state may call `tool`: always-permitted or granted somewhere, and not
/// denied by a bare `tools.forbid_always` entry.
fn allowed_somewhere(wf: &Workflow, tool: &str) -> bool {
    let bare_forbid = wf.tools_forbid_always.iter().any(|e| {
        (e.tool.value == tool || e.tool.value == "*") && e.args.is_empty() && e.paths.is_empty()
    });
    if bare_forbid {
        return false;
    }
    crate::model::workflow::ESSENTIAL_TOOLS.contains(&tool)
        || crate::model::workflow::CONTROL_TOOLS.contains(&tool)
        || wf.tools_allow_always.iter().any(|e| e.tool.value == tool)
        || wf
            .states
            .iter()
            .any(|s| s.tools_allow.iter().any(|e| e.tool.value == tool))
}

/// Checks an agent script against its format and, when given, the workflow.
pub fn check_document(file: &str, root: &Node, workflow: Option<&Workflow>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let d = |code, range: TextRange, msg: String| Diagnostic::new(code, file, range, msg);
    let Some(map) = root.as_map() else {
        diagnostics::push_bounded(
            &mut out,
            d(
                &diagnostics::AGENT_NOT_MAPPING,
                root.range,
                format!(
                    "an agent script is a mapping with one key, `turns`; found {}",
                    root.type_name()
                ),
            ),
        );
        return out;
    };
    for e in map {
        let key = e
            .key
            .scalar_text()
            .map(|k| k.into_owned())
            .unwrap_or_default();
        if key != "turns" {
            let mut diag = d(
                &diagnostics::AGENT_UNKNOWN_KEY,
                e.key.range,
                format!("unknown key `{key}`; an agent script has one key, `turns`"),
            );
            if near(&key, &["turns"]).is_some() {
                diag.message = format!("unknown key `{key}`; did you mean `turns`?");
                diag = diag.with_fix("replace with `turns`", e.key.range, "turns");
            }
            diagnostics::push_bounded(&mut out, diag);
        }
    }
    let Some(turns) = root.get_value("turns") else {
        if !map
            .iter()
            .any(|e| near(&e.key.scalar_text().unwrap_or_default(), &["turns"]).is_some())
        {
            diagnostics::push_bounded(
                &mut out,
                d(
                    &diagnostics::AGENT_MISSING_TURNS,
                    root.range,
                    "missing `turns`: list the agent's actions for each driven model run".into(),
                ),
            );
        }
        return out;
    };
    let Some(items) = turns.as_seq() else {
        diagnostics::push_bounded(
            &mut out,
            d(
                &diagnostics::AGENT_NOT_LIST,
                turns.range,
                format!("`turns` takes a list of turns; found {}", turns.type_name()),
            ),
        );
        return out;
    };
    for (t, turn) in items.iter().enumerate() {
        let actions: &[Node] = match &turn.value {
            Value::Null => &[],
            Value::Seq(a) => a,
            _ => {
                diagnostics::push_bounded(
                    &mut out,
                    d(
                        &diagnostics::AGENT_NOT_LIST,
                        turn.range,
                        format!(
                            "turn {} takes a list of actions (`- say: …` / `- call: …`); found {}",
                            t + 1,
                            turn.type_name()
                        ),
                    ),
                );
                continue;
            }
        };
        let mut at = if t == 0 {
            workflow.and_then(Where::entry)
        } else {
            None
        };
        for action in actions {
            check_action(file, action, workflow, &mut at, &mut out);
        }
    }
    out
}

fn check_action(
    file: &str,
    action: &Node,
    workflow: Option<&Workflow>,
    at: &mut Option<Where>,
    out: &mut Vec<Diagnostic>,
) {
    let d = |code, range: TextRange, msg: String| Diagnostic::new(code, file, range, msg);
    let entries = match action.as_map() {
        Some(e) if e.len() == 1 => e,
        _ => {
            diagnostics::push_bounded(
                out,
                d(
                    &diagnostics::AGENT_ACTION_SHAPE,
                    action.range,
                    "an action is a single-key mapping: `say: <text>` or `call: {tool, input}`"
                        .into(),
                ),
            );
            return;
        }
    };
    let Some(entry) = entries.first() else { return };
    let key = entry
        .key
        .scalar_text()
        .map(|k| k.into_owned())
        .unwrap_or_default();
    match key.as_str() {
        "say" => {
            if entry.value.as_str().is_none()
                && !matches!(
                    entry.value.value,
                    Value::Int(_) | Value::Float(_) | Value::Bool(_)
                )
            {
                diagnostics::push_bounded(
                    out,
                    d(
                        &diagnostics::AGENT_SAY_TEXT,
                        entry.value.range,
                        format!(
                            "`say` takes the message text; found {}",
                            entry.value.type_name()
                        ),
                    ),
                );
            }
        }
        "call" => check_call(file, &entry.value, workflow, at, out),
        other => {
            let mut diag = d(
                &diagnostics::AGENT_ACTION_SHAPE,
                entry.key.range,
                format!("unknown action `{other}` (actions: say, call)"),
            );
            if let Some(fix) = near(other, &["say", "call"]) {
                diag.message = format!("unknown action `{other}`; did you mean `{fix}`?");
                diag = diag.with_fix(format!("replace with `{fix}`"), entry.key.range, fix);
            }
            diagnostics::push_bounded(out, diag);
        }
    }
}

fn check_call(
    file: &str,
    call: &Node,
    workflow: Option<&Workflow>,
    at: &mut Option<Where>,
    out: &mut Vec<Diagnostic>,
) {
    let d = |code, range: TextRange, msg: String| Diagnostic::new(code, file, range, msg);
    let Some(map) = call.as_map() else {
        diagnostics::push_bounded(
            out,
            d(
                &diagnostics::AGENT_CALL_SHAPE,
                call.range,
                format!(
                    "`call` takes `{{tool: <name>, input: {{…}}}}`; found {}",
                    call.type_name()
                ),
            ),
        );
        return;
    };
    for e in map {
        let k = e
            .key
            .scalar_text()
            .map(|k| k.into_owned())
            .unwrap_or_default();
        if k != "tool" && k != "input" {
            let mut diag = d(
                &diagnostics::AGENT_CALL_SHAPE,
                e.key.range,
                format!("unknown key `{k}` in `call` (keys: tool, input)"),
            );
            if let Some(fix) = near(&k, &["tool", "input"]) {
                diag.message = format!("unknown key `{k}` in `call`; did you mean `{fix}`?");
                diag = diag.with_fix(format!("replace with `{fix}`"), e.key.range, fix);
            }
            diagnostics::push_bounded(out, diag);
        }
    }
    if let Some(input) = call
        .get_value("input")
        .filter(|i| i.as_map().is_none() && !i.is_null())
    {
        diagnostics::push_bounded(
            out,
            d(
                &diagnostics::AGENT_CALL_SHAPE,
                input.range,
                format!(
                    "`input` takes a mapping of arguments; found {}",
                    input.type_name()
                ),
            ),
        );
    }
    match call.get_value("tool") {
        None => diagnostics::push_bounded(
            out,
            d(
                &diagnostics::AGENT_CALL_SHAPE,
                call.range,
                "`call` needs `tool`, the name of the tool to call".into(),
            ),
        ),
        Some(t) => match t.as_str().filter(|s| !s.is_empty()) {
            None => diagnostics::push_bounded(
                out,
                d(
                    &diagnostics::AGENT_CALL_SHAPE,
                    t.range,
                    "`tool` takes a tool name (a non-empty string)".into(),
                ),
            ),
            Some(name) => {
                if workflow.is_some_and(|wf| !allowed_somewhere(wf, name)) {
                    diagnostics::push_bounded(
                        out,
                        d(
                            &diagnostics::AGENT_CALL_NEVER_ALLOWED,
                            t.range,
                            format!(
                                "no state of this workflow allows `{name}`, so governance blocks this call wherever it is made"
                            ),
                        ),
                    );
                }
                if let Some(wf) = workflow {
                    follow(file, wf, name, call.get_value("input"), at, out);
                }
            }
        },
    }
}

/// The states an agent script may be in at one point of a turn, sorted and distinct
/// (never empty); `None` where it is not known statically.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Where(Vec<String>);

impl Where {
    /// The entry states of the workflow's triggers: where the first run starts.
    fn entry(wf: &Workflow) -> Option<Where> {
        Where::of(wf.triggers().map(|t| t.state.clone()).collect())
    }

    fn of(mut v: Vec<String>) -> Option<Where> {
        v.sort();
        v.dedup();
        (!v.is_empty()).then_some(Where(v))
    }

    fn with(&self, more: &Where) -> Where {
        Where::of(self.0.iter().chain(&more.0).cloned().collect()).unwrap_or_else(|| more.clone())
    }
}

/// True when the runtime might refuse an advance along the edge `from` → `to` (FORMAT
/// §E.4 state `requires`, §E.5 hooks and evidence, §E.7 governance).
fn may_refuse(wf: &Workflow, from: &[String], to: &str, input: Option<&Node>) -> bool {
    let names_advance = |e: &crate::model::workflow::ToolEntry| {
        e.tool.value == "archmax_advance" || e.tool.value == "*"
    };
    let source = from.iter().filter_map(|s| wf.state(s));
    let target = wf.state(to);
    !wf.extension_hooks.is_empty()
        || input.and_then(|i| i.get_value("evidence")).is_some()
        || wf.tools_forbid_always.iter().any(names_advance)
        || wf
            .tools_allow_always
            .iter()
            .any(|e| names_advance(e) && !e.args.is_empty())
        || source.clone().any(|s| {
            !s.requires.is_empty()
                || !s.after.is_empty()
                || s.tools_forbid.iter().any(names_advance)
                || s.tools_allow
                    .iter()
                    .any(|e| names_advance(e) && !e.args.is_empty())
        })
        || target.is_some_and(|t| t.kind != StateType::Human && !t.before.is_empty())
}

/// Follows one call's effect on where the script is, and reports an `archmax_advance`
/// the runtime refuses (`WFX409`, `WFX410`). Only a string `to` with a non-empty string
/// `reason` is followed (anything else is refused as invalid arguments and moves nothing).
fn follow(
    file: &str,
    wf: &Workflow,
    tool: &str,
    input: Option<&Node>,
    at: &mut Option<Where>,
    out: &mut Vec<Diagnostic>,
) {
    match tool {
        "archmax_advance" => {}
        "archmax_reset" => {
            if let (Some(now), Some(entry)) = (at.as_ref(), Where::entry(wf)) {
                *at = Some(now.with(&entry));
            }
            return;
        }
        "archmax_wait" | "archmax_raise" | "archmax_run" => {
            *at = None;
            return;
        }
        _ => return,
    }
    let Some(to_node) = input.and_then(|i| i.get_value("to")) else {
        return;
    };
    let Some(to) = to_node.as_str().filter(|s| !s.is_empty()) else {
        return;
    };
    let has_reason = input
        .and_then(|i| i.get_value("reason"))
        .and_then(Node::as_str)
        .is_some_and(|r| !r.is_empty());
    let names = || wf.states.iter().map(|s| s.slug.value.as_str());
    if wf.state(to).is_none() {
        let mut msg = format!(
            "`archmax_advance` to `{to}`, which this workflow does not declare, is refused at run time"
        );
        if let Some(s) = did_you_mean(to, names()) {
            msg.push_str(&format!("; did you mean `{s}`?"));
        }
        let mut diag = Diagnostic::new(
            &diagnostics::AGENT_ADVANCE_UNKNOWN_STATE,
            file,
            to_node.range,
            msg,
        );
        if let Some((s, _)) = nearest(to, names()) {
            diag = diag.with_fix(format!("advance to `{s}`"), to_node.range, yaml_scalar(s));
        }
        diagnostics::push_bounded(out, diag);
        return;
    }
    let edge_from = |s: &str| {
        wf.state(s)
            .is_some_and(|st| st.transitions.iter().any(|t| t.to.value == to))
    };
    match at.as_ref() {
        Some(now) if !now.0.iter().any(|s| edge_from(s)) => {
            let names: Vec<String> = now.0.iter().map(|s| format!("`{s}`")).collect();
            let places = match names.as_slice() {
                [one] => format!("state {one}"),
                more => format!("one of the states {}", more.join(", ")),
            };
            let mut targets: Vec<&str> = now
                .0
                .iter()
                .filter_map(|s| wf.state(s))
                .flat_map(|st| st.transitions.iter().map(|t| t.to.value.as_str()))
                .collect();
            targets.sort_unstable();
            targets.dedup();
            diagnostics::push_bounded(
                out,
                Diagnostic::new(
                    &diagnostics::AGENT_ADVANCE_NOT_AN_EDGE,
                    file,
                    to_node.range,
                    format!(
                        "`archmax_advance` to `{to}` is refused here: at this point the script is in {places}, with no transition to `{to}` (transitions to: {})",
                        if targets.is_empty() {
                            "none".to_owned()
                        } else {
                            targets.join(", ")
                        }
                    ),
                ),
            );
        }
        Some(now) => {
            if !has_reason {
                return;
            }
            let here: Vec<String> = now.0.iter().filter(|s| edge_from(s)).cloned().collect();
            let human = wf.state(to).is_some_and(|s| s.kind == StateType::Human);
            if human {
                *at = None;
                return;
            }
            let moved = Where(vec![to.to_owned()]);
            *at = Some(if may_refuse(wf, &here, to, input) {
                now.with(&moved)
            } else {
                moved
            });
        }
        None => {
            if !wf.states.iter().any(|s| edge_from(&s.slug.value)) {
                diagnostics::push_bounded(
                    out,
                    Diagnostic::new(
                        &diagnostics::AGENT_ADVANCE_NOT_AN_EDGE,
                        file,
                        to_node.range,
                        format!(
                            "`archmax_advance` to `{to}` is always refused: no state of this workflow has a transition to `{to}` (where the script is at this point is not known statically, so every state was considered)"
                        ),
                    ),
                );
            }
        }
    }
}
