//! The live agent's system prompt and tool declarations (issue 14; the reference's
//! structure as read in the design doc §1.3–§1.4, in our own words).
//!
//! The prompt has a static half, built once per case, and a volatile half rebuilt for
//! every model call:
//!
//! 1. static: `AGENTS.md` (the workspace persona), our platform rules, `# Workflow: <title>`
//!    with `## Instructions` (the root `instructions`), `WORKFLOW.md` with its HTML
//!    comments stripped;
//! 2. volatile: the clock rounded down to 10 minutes, then either `## This run is parked`
//!    with a reply-only directive, or `## Current state: <slug>` with the state's
//!    instructions, its skills, the names (never values) of the run variables, the
//!    enforced argument constraints, and its hooks, signature and outgoing transitions.
//!
//! The tools offered are the current state's (none on a reply-only call), in one fixed
//! order ([`TOOL_ORDER`], then delegation tools, then host tools by name), so the
//! request of a call is a pure function of the session.

use serde_json::{Value, json};
use wfx_schemas::files::FileAccess;
use wfx_schemas::model::workflow::{HookKind, State, StateType, Workflow};
use wfx_schemas::yaml::Node;

use super::wire::ToolSpec;
use crate::agent::RunCause;

/// The fixed order of the built-in tools in a request: control tools, the interpreter,
/// then the file tools. Delegation tools (`archmax_workflow_<slug>`) follow, then host
/// tools, each group sorted by name.
pub const TOOL_ORDER: &[&str] = &[
    "archmax_advance",
    "archmax_wait",
    "archmax_reset",
    "archmax_raise",
    "archmax_get_variables",
    "archmax_set_variables",
    "archmax_eval",
    "archmax_run",
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
];

/// Our platform rules: what the reference's platform prompt tells the model, reworded.
pub const PLATFORM_RULES: &str = "## How this workflow runs
You work inside a governed workflow: a graph of states. The section \"Current state\" below says where you are, what to do there and where you may go next.
- Do the current state's work with the tools you are given, then move on with `archmax_advance` (`to`: one of the listed transition targets; `reason`: why). Advance at most once per message.
- A message without tool calls ends your turn. When you want to say something and act, put the text and the calls in the same message.
- If the current state cannot serve the request, call `archmax_reset` (where it is offered). A terminal state does not serve follow-up requests.
- When you must wait for something that arrives from outside, call `archmax_wait` with the reason. Decisions that need a person go through a human state.
- When the task cannot be completed at all, call `archmax_raise` with a short code and the reason, and nothing else in that message.
- Tools are closed by default: only the tools offered in this call exist for you.
- `archmax_eval` runs JavaScript for loops and chains of calls; only the last expression and `console.log` output come back.
- Arguments may reference run variables as `${{name}}`.";

/// The static half of the system prompt (FORMAT §A.1 `title`/`instructions`; the
/// workspace's `AGENTS.md` and the workflow's `WORKFLOW.md`, read through `fs`, missing
/// files skipped).
pub fn static_prompt(fs: &dyn FileAccess, wf: &Workflow, workflow_dir: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Ok(agents) = fs.read_text("AGENTS.md") {
        let t = agents.trim();
        if !t.is_empty() {
            parts.push(t.to_owned());
        }
    }
    parts.push(PLATFORM_RULES.to_owned());
    let title = wf
        .title
        .as_ref()
        .map_or_else(|| last_segment(workflow_dir), |t| t.value.clone());
    let mut header = format!("# Workflow: {title}");
    if let Some(i) = &wf.instructions {
        header.push_str("\n\n## Instructions\n");
        header.push_str(i.value.trim());
    }
    parts.push(header);
    if let Ok(md) = fs.read_text(&format!("{workflow_dir}/WORKFLOW.md")) {
        let t = strip_html_comments(&md);
        let t = t.trim();
        if !t.is_empty() {
            parts.push(t.to_owned());
        }
    }
    parts.join("\n\n")
}

fn last_segment(p: &str) -> String {
    p.rsplit('/').next().unwrap_or(p).to_owned()
}

/// Removes `<!-- … -->` comments (an unclosed one runs to the end).
pub fn strip_html_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => rest = &rest[start + end + 3..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// The clock line: `Current date and time: 2026-12-02 15:50 UTC (Wednesday), rounded down
/// to the nearest 10 minutes.` (`now_ms`: epoch milliseconds).
pub fn clock_line(now_ms: u64) -> String {
    let minutes = now_ms / 60_000 / 10 * 10;
    let days = minutes / 1440;
    let (y, m, d) = civil_from_days(days as i64);
    let hh = (minutes % 1440) / 60;
    let mm = minutes % 60;
    const WEEKDAYS: [&str; 7] = [
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
    ];
    let wd = WEEKDAYS[(days % 7) as usize];
    format!(
        "Current date and time: {y:04}-{m:02}-{d:02} {hh:02}:{mm:02} UTC ({wd}), rounded down to the nearest 10 minutes."
    )
}

/// Days since 1970-01-01 → (year, month, day) (H. Hinnant's civil-from-days).
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The per-state part of the volatile block that does not change between calls: built
/// once per case for every state.
pub fn state_section(fs: &dyn FileAccess, wf: &Workflow, state: &State) -> String {
    let slug = &state.slug.value;
    let mut out = format!(
        "## Current state: {slug}\nThis is the state you are in now; it overrides any state movement recorded earlier in the conversation."
    );
    if let Some(i) = &state.instructions {
        out.push_str("\n\n");
        out.push_str(i.trim());
    }
    let skills = crate::governance::enabled_skills(wf, state);
    if !skills.is_empty() {
        out.push_str("\n\n## Skills available in this state");
        for s in &skills {
            let path = format!("skills/{s}/SKILL.md");
            let desc = fs
                .read_text(&path)
                .ok()
                .and_then(|t| skill_description(&t))
                .unwrap_or_default();
            if desc.is_empty() {
                out.push_str(&format!("\n- `{s}`. Read `{path}` first."));
            } else {
                out.push_str(&format!("\n- `{s}`: {desc} Read `{path}` first."));
            }
        }
    }
    let mut constraints = Vec::new();
    for e in wf.tools_allow_always.iter().chain(state.tools_allow.iter()) {
        for (arg, pats) in &e.args {
            constraints.push(format!(
                "- `{}`: `{arg}` must match {}",
                e.tool.value,
                quoted_list(pats)
            ));
        }
        if !e.paths.is_empty() {
            constraints.push(format!(
                "- `{}`: only paths matching {}",
                e.tool.value,
                quoted_list(&e.paths)
            ));
        }
    }
    for e in wf
        .tools_forbid_always
        .iter()
        .chain(state.tools_forbid.iter())
    {
        if !e.paths.is_empty() {
            constraints.push(format!(
                "- `{}`: never paths matching {}",
                e.tool.value,
                quoted_list(&e.paths)
            ));
        }
    }
    if !constraints.is_empty() {
        out.push_str("\n\nArgument constraints enforced in this state:\n");
        out.push_str(&constraints.join("\n"));
    }
    let mut graph = Vec::new();
    let hooks = |hs: &[wfx_schemas::model::workflow::Hook]| {
        hs.iter()
            .map(|h| match &h.kind {
                HookKind::Script(p) => format!("script {}", p.value),
                HookKind::Rubric(_) => "rubric".to_owned(),
                HookKind::Custom(k, t) => format!("{} {t}", k.value),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !state.before.is_empty() || !state.after.is_empty() {
        let mut h = Vec::new();
        if !state.before.is_empty() {
            h.push(format!("before: {}", hooks(&state.before)));
        }
        if !state.after.is_empty() {
            h.push(format!("after: {}", hooks(&state.after)));
        }
        graph.push(format!("Hooks: {}", h.join("; ")));
    }
    if !state.requires.is_empty() {
        let names: Vec<String> = state
            .requires
            .iter()
            .map(|r| format!("`{}`", r.value))
            .collect();
        graph.push(format!(
            "This run must set {} with archmax_set_variables before it can advance.",
            names.join(", ")
        ));
    }
    if state.transitions.is_empty() {
        graph.push(
            "This state is terminal: answer and stop; there is nowhere to advance to.".into(),
        );
    } else {
        let mut t = String::from(
            "Transitions — choose one with archmax_advance when this state's work is done:",
        );
        for tr in &state.transitions {
            let mut tags = Vec::new();
            if let Some(k) = &tr.kind {
                tags.push(k.value.clone());
            }
            if let Some(target) = wf.state(&tr.to.value) {
                if target.kind == StateType::Human {
                    tags.push("human decision node".into());
                }
                if target.is_terminal() {
                    tags.push("terminal".into());
                }
            }
            let tags = if tags.is_empty() {
                String::new()
            } else {
                format!(" ({})", tags.join(", "))
            };
            let desc = tr
                .description
                .as_deref()
                .map(|d| format!(" — {}", d.trim()))
                .unwrap_or_default();
            t.push_str(&format!("\n- to `{}`{tags}{desc}", tr.to.value));
        }
        graph.push(t);
    }
    out.push_str("\n\n");
    out.push_str(&graph.join("\n"));
    out
}

fn quoted_list(v: &[String]) -> String {
    v.iter()
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// The `description` of a `SKILL.md` front matter, whitespace collapsed.
fn skill_description(text: &str) -> Option<String> {
    let body = text.strip_prefix("---")?;
    let end = body.find("\n---")?;
    let parsed = wfx_schemas::yaml::parse(&body[..end]);
    let root = parsed.documents.first()?;
    let d = root.get_value("description").and_then(Node::scalar_text)?;
    Some(d.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The volatile block of one model call: the clock, then the reply-only directive or the
/// state's section, then the run variables' names.
pub fn volatile_block(
    now_ms: u64,
    state_section: &str,
    reply_only: bool,
    cause: &RunCause,
    variable_names: &[String],
) -> String {
    let mut out = clock_line(now_ms);
    out.push_str("\n\n");
    if reply_only {
        out.push_str("## This run is parked\n");
        out.push_str(match cause {
            RunCause::ReplyWhileParked { .. } => "A person wrote while the run is waiting. Reply to them in text only; no tool will run in this call, and the run stays where it is.",
            RunCause::Decision { .. } => "A decision routed the run here and the run cannot act further now. Reply to the person in text only; no tool will run in this call.",
            RunCause::VetoedEntry { .. } => "The run was refused at its entry; the reason is in the conversation. Explain it to the person in text only; no tool will run in this call.",
            _ => "The run is waiting for a decision or for input from outside. Reply in text only; no tool will run in this call.",
        });
    } else {
        out.push_str(state_section);
    }
    if !variable_names.is_empty() {
        out.push_str(&format!(
            "\n\nRun variables set: {}. Read one with archmax_get_variables.",
            variable_names.join(", ")
        ));
    }
    out
}

fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// The declaration of a built-in tool (its JSON Schema follows the reference's control
/// tool schemas and the simulator's parameter names, docs/agent-scripts.md), `None` for a
/// name that is not built in.
pub fn builtin_tool(name: &str) -> Option<ToolSpec> {
    let s = |d: &str| json!({"type": "string", "description": d});
    let (description, parameters) = match name {
        "archmax_advance" => (
            "Move the run along one of the current state's transitions once its work is done.",
            obj(
                json!({"to": s("Target state slug, one of the listed transitions."),
                       "reason": {"type": "string", "minLength": 1, "description": "Why the work is done."},
                       "evidence": {"type": "array", "items": {"type": "string"}, "maxItems": 20,
                                    "description": "Files a human reviewer should see (only into a human state)."}}),
                &["to", "reason"],
            ),
        ),
        "archmax_wait" => (
            "Park the run until something arrives from outside.",
            obj(
                json!({"reason": {"type": "string", "minLength": 1, "description": "What you are waiting for."},
                       "until": s("Optional: a duration like 30m or 2d, or an ISO-8601 instant.")}),
                &["reason"],
            ),
        ),
        "archmax_reset" => (
            "Return the run to its entry state when the current state cannot serve the request.",
            obj(
                json!({"reason": {"type": "string", "minLength": 1}}),
                &["reason"],
            ),
        ),
        "archmax_raise" => (
            "End the run as failed because the task cannot be completed. Call it alone.",
            obj(
                json!({"code": {"type": "string", "minLength": 1, "maxLength": 64, "description": "A short code, one line."},
                       "reason": {"type": "string", "minLength": 1}}),
                &["code", "reason"],
            ),
        ),
        "archmax_get_variables" => (
            "Read run variables: all of them, one by name, or a dotted path inside one (-1 is the last item).",
            obj(
                json!({"name": s("Variable name."), "path": s("Dotted path inside it.")}),
                &[],
            ),
        ),
        "archmax_set_variables" => (
            "Set run variables atomically; `lock` makes them read-only for the rest of the run.",
            obj(
                json!({"variables": {"type": "object", "description": "Name → value."},
                       "lock": {"type": "boolean"}}),
                &["variables"],
            ),
        ),
        "archmax_eval" => (
            "Run JavaScript that may call your tools; the last expression and console.log output come back.",
            obj(json!({"code": s("JavaScript source.")}), &["code"]),
        ),
        "archmax_run" => (
            "Run a skill script file in the sandbox and return its result.",
            obj(
                json!({"file_path": s("Script path, e.g. skills/<skill>/scripts/x.js.")}),
                &["file_path"],
            ),
        ),
        "ls" => (
            "List a folder of the session.",
            obj(
                json!({"path": s("Folder path; the root when omitted.")}),
                &[],
            ),
        ),
        "read_file" => (
            "Read a text file of the session.",
            obj(json!({"file_path": s("File path.")}), &["file_path"]),
        ),
        "write_file" => (
            "Create a new file (fails if it exists; use edit_file then).",
            obj(
                json!({"file_path": s("File path."), "content": s("Full text.")}),
                &["file_path", "content"],
            ),
        ),
        "edit_file" => (
            "Replace text in an existing file.",
            obj(
                json!({"file_path": s("File path."), "old_string": s("Exact text to replace."),
                       "new_string": s("Replacement."), "replace_all": {"type": "boolean"}}),
                &["file_path", "old_string", "new_string"],
            ),
        ),
        "copy_file" | "move_file" => (
            if name == "copy_file" {
                "Copy a file."
            } else {
                "Move or rename a file."
            },
            obj(
                json!({"source_path": s("From."), "destination_path": s("To.")}),
                &["source_path", "destination_path"],
            ),
        ),
        "remove_file" => (
            "Delete a file.",
            obj(json!({"file_path": s("File path.")}), &["file_path"]),
        ),
        "glob" => (
            "Find files by glob pattern.",
            obj(
                json!({"pattern": s("Glob, e.g. **/*.json."), "path": s("Folder to search.")}),
                &["pattern"],
            ),
        ),
        "grep" => (
            "Search file contents for a text pattern.",
            obj(
                json!({"pattern": s("Text to find."), "path": s("Folder or file to search.")}),
                &["pattern"],
            ),
        ),
        "write_todos" => (
            "Keep a short to-do list for this run.",
            obj(
                json!({"todos": {"type": "array", "items": {"type": "object",
                    "properties": {"content": {"type": "string"}, "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}},
                    "required": ["content", "status"]}}}),
                &["todos"],
            ),
        ),
        _ => return None,
    };
    Some(ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    })
}

/// The declarations of `offered` (the state's tool names) in the documented order:
/// [`TOOL_ORDER`], then `archmax_workflow_<slug>` delegation tools, then host tools, each
/// sorted by name. Delegation and host tools take any object (their calls are answered by
/// the sub-run or the case's mocks).
pub fn tool_specs(offered: &[String]) -> Vec<ToolSpec> {
    let mut out: Vec<ToolSpec> = TOOL_ORDER
        .iter()
        .filter(|t| offered.iter().any(|o| o == *t))
        .filter_map(|t| builtin_tool(t))
        .collect();
    let mut rest: Vec<&String> = offered
        .iter()
        .filter(|o| !TOOL_ORDER.contains(&o.as_str()))
        .collect();
    rest.sort_by_key(|o| (!o.starts_with("archmax_workflow_"), o.as_str()));
    for name in rest {
        let description = match name.strip_prefix("archmax_workflow_") {
            Some(slug) => format!(
                "Run the `{slug}` workflow as a sub-run; its arguments seed the child's locked run variables. Returns its closing message and returns."
            ),
            None => format!("The host tool `{name}`."),
        };
        out.push(ToolSpec {
            name: name.clone(),
            description,
            parameters: json!({"type": "object", "additionalProperties": true}),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use wfx_schemas::model::workflow::{CONTROL_TOOLS, ESSENTIAL_TOOLS};

    /// [`TOOL_ORDER`] is the prompt's order of the built-in tools the schemas crate lists
    /// (FORMAT §E.5); it names each of them exactly once, and each has a declaration, so
    /// the two lists cannot drift apart and no built-in tool is silently left out.
    #[test]
    fn tool_order_is_the_built_in_tools_each_once_and_declared() {
        let mut order: Vec<&str> = TOOL_ORDER.to_vec();
        order.sort_unstable();
        let mut builtin: Vec<&str> = CONTROL_TOOLS
            .iter()
            .chain(ESSENTIAL_TOOLS)
            .copied()
            .collect();
        builtin.sort_unstable();
        assert_eq!(order, builtin);
        for t in TOOL_ORDER {
            assert!(builtin_tool(t).is_some(), "{t} has no declaration");
        }
    }
}
