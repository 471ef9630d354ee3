//! Rules for the runner's agent scripts (`tests/<name>.agent.yaml`): a mapping with one key,
//! `turns`, a list of turns, each a list of `say: <text>` / `call: {tool, input}` actions
//! (docs/agent-scripts.md). Emits WFX401–WFX408. A `call` of a tool that governance blocks
//! in every state of the workflow is a warning (FORMAT §E.7): blocked calls are legitimate
//! when a case asserts them with `blockedTool`.

use crate::diagnostics::{self, Diagnostic};
use crate::model::workflow::Workflow;
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
        out.push(d(
            &diagnostics::AGENT_NOT_MAPPING,
            root.range,
            format!(
                "an agent script is a mapping with one key, `turns`; found {}",
                root.type_name()
            ),
        ));
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
            out.push(diag);
        }
    }
    let Some(turns) = root.get_value("turns") else {
        if !map
            .iter()
            .any(|e| near(&e.key.scalar_text().unwrap_or_default(), &["turns"]).is_some())
        {
            out.push(d(
                &diagnostics::AGENT_MISSING_TURNS,
                root.range,
                "missing `turns`: list the agent's actions for each driven model run".into(),
            ));
        }
        return out;
    };
    let Some(items) = turns.as_seq() else {
        out.push(d(
            &diagnostics::AGENT_NOT_LIST,
            turns.range,
            format!("`turns` takes a list of turns; found {}", turns.type_name()),
        ));
        return out;
    };
    for (t, turn) in items.iter().enumerate() {
        let actions: &[Node] = match &turn.value {
            Value::Null => &[],
            Value::Seq(a) => a,
            _ => {
                out.push(d(
                    &diagnostics::AGENT_NOT_LIST,
                    turn.range,
                    format!(
                        "turn {} takes a list of actions (`- say: …` / `- call: …`); found {}",
                        t + 1,
                        turn.type_name()
                    ),
                ));
                continue;
            }
        };
        for action in actions {
            check_action(file, action, workflow, &mut out);
        }
    }
    out
}

fn check_action(file: &str, action: &Node, workflow: Option<&Workflow>, out: &mut Vec<Diagnostic>) {
    let d = |code, range: TextRange, msg: String| Diagnostic::new(code, file, range, msg);
    let entries = match action.as_map() {
        Some(e) if e.len() == 1 => e,
        _ => {
            out.push(d(
                &diagnostics::AGENT_ACTION_SHAPE,
                action.range,
                "an action is a single-key mapping: `say: <text>` or `call: {tool, input}`".into(),
            ));
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
                out.push(d(
                    &diagnostics::AGENT_SAY_TEXT,
                    entry.value.range,
                    format!(
                        "`say` takes the message text; found {}",
                        entry.value.type_name()
                    ),
                ));
            }
        }
        "call" => check_call(file, &entry.value, workflow, out),
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
            out.push(diag);
        }
    }
}

fn check_call(file: &str, call: &Node, workflow: Option<&Workflow>, out: &mut Vec<Diagnostic>) {
    let d = |code, range: TextRange, msg: String| Diagnostic::new(code, file, range, msg);
    let Some(map) = call.as_map() else {
        out.push(d(
            &diagnostics::AGENT_CALL_SHAPE,
            call.range,
            format!(
                "`call` takes `{{tool: <name>, input: {{…}}}}`; found {}",
                call.type_name()
            ),
        ));
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
            out.push(diag);
        }
    }
    if let Some(input) = call
        .get_value("input")
        .filter(|i| i.as_map().is_none() && !i.is_null())
    {
        out.push(d(
            &diagnostics::AGENT_CALL_SHAPE,
            input.range,
            format!(
                "`input` takes a mapping of arguments; found {}",
                input.type_name()
            ),
        ));
    }
    match call.get_value("tool") {
        None => out.push(d(
            &diagnostics::AGENT_CALL_SHAPE,
            call.range,
            "`call` needs `tool`, the name of the tool to call".into(),
        )),
        Some(t) => match t.as_str().filter(|s| !s.is_empty()) {
            None => out.push(d(
                &diagnostics::AGENT_CALL_SHAPE,
                t.range,
                "`tool` takes a tool name (a non-empty string)".into(),
            )),
            Some(name) => {
                if workflow.is_some_and(|wf| !allowed_somewhere(wf, name)) {
                    out.push(d(
                        &diagnostics::AGENT_CALL_NEVER_ALLOWED,
                        t.range,
                        format!("no state of this workflow allows `{name}`, so governance blocks this call wherever it is made"),
                    ));
                }
            }
        },
    }
}
