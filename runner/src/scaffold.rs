//! `wfx-lsp scaffold <case.test.yaml>` (issue 15, item 5): drafts the agent script
//! `<case>.agent.yaml` (docs/agent-scripts.md) from the path [`wfx_schemas::satisfy`]
//! finds through the workflow: one turn per model run the case starts, each with the
//! control-tool calls that move the machine along the path (`archmax_advance`,
//! `archmax_wait`, `archmax_raise`, `archmax_reset`), the calls its `calledTool` steps name
//! (inputs from the step, else from a declared mock's `whenInput`), and a `say` line holding
//! the literal `reply.includes` tokens (a regex token becomes a matching string when it is
//! simple enough, checked with the same regex engine as the run; otherwise a comment says
//! so). Hooked edges get a comment naming the hooks that may veto them.
//!
//! Refuses (an error, nothing written) a case with error diagnostics — among them `WFX313`,
//! "no agent can pass this case" — a case the search cannot decide, and an existing script
//! unless `force`. Writes through the confined layer ([`crate::disk::DiskFiles::write`]:
//! temporary file + rename, never outside the workspace; "confinement", "safe writes").
//!
//! Must not: run anything (no hook, no script, no model: "no execution").

use serde_json::{Map, Value};
use wfx_schemas::check::{check_file, load_workflow};
use wfx_schemas::diagnostics::Severity;
use wfx_schemas::files::FileAccess;
use wfx_schemas::model::case::{Case, StepForm, ToolAssertion};
use wfx_schemas::model::workflow::Workflow;
use wfx_schemas::satisfy::{Move, PlannedRun, Satisfiability, analyse};
use wfx_schemas::workspace::{self, FileKind, agent_script_path};
use wfx_schemas::yaml;

/// A drafted agent script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Draft {
    /// Workspace-relative path of the script (`<case>.agent.yaml`).
    pub path: String,
    /// Its YAML text.
    pub text: String,
}

/// Drafts the agent script of the case at `case_path` (workspace-relative). `Err` is a
/// message for the user: not a case, no usable workflow, the case has errors (the first is
/// named; `WFX313` when no agent can pass it), or the search could not decide.
pub fn draft(fs: &dyn FileAccess, case_path: &str) -> Result<Draft, String> {
    let FileKind::Case(dir) = workspace::classify(case_path) else {
        return Err(format!(
            "`{case_path}` is not a case file (workflows/<slug>/tests/**/*.test.yaml)"
        ));
    };
    let text = fs
        .read_text(case_path)
        .map_err(|e| format!("cannot read `{case_path}`: {e}"))?;
    let diags = check_file(fs, case_path);
    if let Some(d) = diags
        .iter()
        .filter(|d| d.file == case_path && d.severity == Severity::Error)
        .min_by_key(|d| (d.range.start, d.range.end))
    {
        return Err(format!(
            "`{case_path}` cannot be scaffolded: {} {} (run `wfx-lsp check {case_path}`)",
            d.code.code, d.message
        ));
    }
    let wf = load_workflow(fs, &dir)
        .and_then(|i| i.model)
        .ok_or_else(|| format!("no usable workflow.yaml for workflow '{}'", dir.slug))?;
    let parsed = yaml::parse(&text);
    let root = parsed
        .documents
        .first()
        .ok_or_else(|| format!("`{case_path}` is empty"))?;
    let case = Case::from_node(root);
    let plan = match analyse(&wf, &case) {
        Satisfiability::Satisfiable(p) => p,
        Satisfiability::Unsatisfiable { step, reason } => {
            return Err(format!(
                "`{case_path}` cannot be scaffolded: no agent can pass this case: {reason} (step {})",
                step + 1
            ));
        }
        Satisfiability::Unknown(why) => {
            return Err(format!(
                "`{case_path}` cannot be scaffolded: the path search could not decide ({why})"
            ));
        }
    };
    let path = agent_script_path(case_path);
    Ok(Draft {
        text: render(&wf, &case, case_path, &plan.runs, plan.needs_runtime_route),
        path,
    })
}

/// Drafts and writes the script through `fs` (the confined layer). Refuses an existing
/// script unless `force`. Returns the written path.
pub fn write(fs: &crate::disk::DiskFiles, case_path: &str, force: bool) -> Result<String, String> {
    let d = draft(fs, case_path)?;
    if !force && fs.read(&d.path).is_ok() {
        return Err(format!("`{}` exists; pass --force to replace it", d.path));
    }
    fs.write(&d.path, d.text.as_bytes())
        .map_err(|e| format!("cannot write `{}`: {e}", d.path))?;
    Ok(d.path)
}

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn call(tool: &str, input: &Value) -> String {
    format!(
        "call: {{ tool: {tool}, input: {} }}",
        serde_json::to_string(input).unwrap_or_else(|_| "{}".into())
    )
}

/// A string that the `/body/flags` token matches, when the body's first matching
/// alternative is literal text with simple escapes, classes and quantifiers; checked
/// with the run's regex engine. `None` when no such string was found. A literal token is
/// itself.
pub fn sample(token: &str) -> Option<String> {
    let Some((body, _)) = wfx_schemas::jsregex::regex_token(token) else {
        return Some(token.to_owned());
    };
    let compiled = wfx_schemas::jsregex::compile_token(token)?.ok()?;
    for alt in top_level_alternatives(body) {
        if let Some(s) = literal_of(alt)
            && compiled.test(&s) == Ok(true)
        {
            return Some(s);
        }
    }
    None
}

fn top_level_alternatives(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut class, mut esc, mut start) = (0i32, false, false, 0usize);
    for (i, c) in body.char_indices() {
        if esc {
            esc = false;
            continue;
        }
        match c {
            '\\' => esc = true,
            '[' if !class => class = true,
            ']' if class => class = false,
            '(' if !class => depth += 1,
            ')' if !class => depth -= 1,
            '|' if !class && depth == 0 => {
                out.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&body[start..]);
    out
}

/// Literal text for a simple alternative: characters, `\`-escaped punctuation, `\d \w \s`,
/// `.`, a class's first plain character, `?`/`*` (zero times) and `+` (once); `^`/`$`
/// anchors dropped. Anything else (groups, braces, lookarounds) gives `None`.
fn literal_of(alt: &str) -> Option<String> {
    let alt = alt.strip_prefix('^').unwrap_or(alt);
    let alt = alt.strip_suffix('$').unwrap_or(alt);
    let mut atoms: Vec<String> = Vec::new();
    let mut chars = alt.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let e = chars.next()?;
                atoms.push(match e {
                    'd' => "0".into(),
                    'w' => "a".into(),
                    's' => " ".into(),
                    c if c.is_ascii_punctuation() => c.to_string(),
                    _ => return None,
                });
            }
            '.' => atoms.push("x".into()),
            '[' => {
                let mut first = None;
                let mut negated = false;
                let mut n = 0;
                loop {
                    let k = chars.next()?;
                    if k == ']' && n > 0 {
                        break;
                    }
                    if n == 0 && k == '^' {
                        negated = true;
                    } else if first.is_none() && k != '\\' {
                        first = Some(k);
                    } else if k == '\\' {
                        chars.next()?;
                    }
                    n += 1;
                }
                if negated {
                    return None;
                }
                atoms.push(first?.to_string());
            }
            '?' | '*' => {
                atoms.pop()?;
            }
            '+' => {}
            '(' | ')' | '{' | '}' | '|' | '^' | '$' => return None,
            c => atoms.push(c.to_string()),
        }
    }
    Some(atoms.concat())
}

fn sample_value(v: &Value, unsampled: &mut Vec<String>) -> Value {
    match v {
        Value::String(s) => match sample(s) {
            Some(x) => Value::String(x),
            None => {
                unsampled.push(s.clone());
                Value::String(s.clone())
            }
        },
        Value::Array(a) => Value::Array(a.iter().map(|x| sample_value(x, unsampled)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), sample_value(x, unsampled)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn hooks_of(wf: &Workflow, from: &str, to: &str) -> Vec<String> {
    let mut out = Vec::new();
    let names = |hooks: &[wfx_schemas::model::workflow::Hook], phase: &str, st: &str| {
        hooks
            .iter()
            .map(|h| format!("`{st}` {phase} {}", hook_label(&h.kind)))
            .collect::<Vec<_>>()
    };
    if let Some(s) = wf.state(from) {
        out.extend(names(&s.after, "after", from));
    }
    if let Some(s) = wf.state(to) {
        out.extend(names(&s.before, "before", to));
    }
    out
}

fn hook_label(kind: &wfx_schemas::model::workflow::HookKind) -> String {
    use wfx_schemas::model::workflow::HookKind;
    match kind {
        HookKind::Script(p) => format!("script {}", p.value),
        HookKind::Rubric(_) => "rubric".into(),
        HookKind::Custom(k, _) => format!("`{}` hook", k.value),
    }
}

fn render(
    wf: &Workflow,
    case: &Case,
    case_path: &str,
    runs: &[PlannedRun],
    runtime: bool,
) -> String {
    let mut o = String::new();
    o.push_str(&format!(
        "# Drafted by `wfx-lsp scaffold` from {case_path}:\n# one turn per model run the case starts, along a path that satisfies its steps.\n# Hooks on the way may veto an advance: give each turn the work they check.\n"
    ));
    if runtime {
        o.push_str("# The path needs an `on_error` route (a hook or budget failure), which a script cannot cause.\n");
    }
    o.push_str("turns:\n");
    for (n, run) in runs.iter().enumerate() {
        let next_action = runs.get(n + 1).map_or(case.steps.len(), |r| r.step);
        let window: Vec<StepForm> = case
            .steps
            .iter()
            .filter(|s| s.index > run.step && s.index < next_action)
            .filter_map(|s| s.form())
            .collect();
        let cause = case
            .steps
            .get(run.step)
            .and_then(|s| s.key_str())
            .unwrap_or("action");
        o.push_str(&format!(
            "  # Turn {}: the run started by `{cause}` (step {}) in `{}`{}.\n",
            n + 1,
            run.step + 1,
            run.start,
            if run.reply_only {
                ", reply-only (tool calls are refused)".to_owned()
            } else if run.end != run.start {
                format!(", ending in `{}`", run.end)
            } else {
                String::new()
            }
        ));
        let mut items: Vec<String> = Vec::new();
        let mut comments: Vec<String> = Vec::new();
        let (parking, moving): (Vec<&Move>, Vec<&Move>) = {
            let last_parks = match run.moves.last() {
                Some(Move::Wait { .. } | Move::Raise { .. }) => true,
                Some(Move::Advance { to, .. }) => wf
                    .state(to)
                    .is_some_and(|s| s.kind == wfx_schemas::model::workflow::StateType::Human),
                _ => false,
            };
            let k = if last_parks {
                run.moves.len() - 1
            } else {
                run.moves.len()
            };
            (
                run.moves[k..].iter().collect(),
                run.moves[..k].iter().collect(),
            )
        };
        let move_items = |moves: &[&Move], items: &mut Vec<String>, comments: &mut Vec<String>| {
            for m in moves {
                match m {
                    Move::Advance { from, to, hooked } => {
                        let mut input = Map::new();
                        input.insert("to".into(), Value::String(to.clone()));
                        input.insert(
                            "reason".into(),
                            Value::String(format!("The case continues in {to}.")),
                        );
                        let mut s = call("archmax_advance", &Value::Object(input));
                        if *hooked {
                            s.push_str(&format!(
                                "\n      # may be vetoed by: {}",
                                hooks_of(wf, from, to).join("; ")
                            ));
                        }
                        items.push(s);
                    }
                    Move::Wait { state } => items.push(call(
                        "archmax_wait",
                        &serde_json::json!({"reason": format!("Waiting in {state} for the input the case delivers.")}),
                    )),
                    Move::Raise { .. } => {
                        let (code, reason) = window
                            .iter()
                            .find_map(|f| match f {
                                StepForm::Raised { code, reason } => {
                                    Some((code.clone(), reason.clone()))
                                }
                                _ => None,
                            })
                            .unwrap_or((None, None));
                        let reason = reason
                            .and_then(|r| sample(&r))
                            .unwrap_or_else(|| "The case expects the session to raise.".into());
                        items.push(call(
                            "archmax_raise",
                            &serde_json::json!({"code": code.unwrap_or_else(|| "scaffolded".into()), "reason": reason}),
                        ));
                    }
                    Move::Reset { .. } => items.push(call(
                        "archmax_reset",
                        &serde_json::json!({"reason": "The case starts over."}),
                    )),
                    Move::OnError { from, to } => comments.push(format!(
                        "here the runtime routes `{from}` to `{to}` by `on_error` (a hook or budget failure); a script cannot cause it"
                    )),
                }
            }
        };
        move_items(&moving, &mut items, &mut comments);
        // The calls `calledTool` steps of this window name.
        for f in &window {
            if let StepForm::Tool {
                which: ToolAssertion::Called,
                name,
                input,
            } = f
            {
                let mut unsampled = Vec::new();
                let base = input.clone().or_else(|| {
                    case.mocks
                        .iter()
                        .find(|m| m.tool.value == name.value)
                        .and_then(|m| m.when_input.clone())
                });
                let mut v = base
                    .map(|b| sample_value(&b, &mut unsampled))
                    .unwrap_or_else(|| Value::Object(Map::new()));
                if name.value == "write_file"
                    && let Value::Object(m) = &mut v
                    && !m.contains_key("content")
                {
                    m.insert("content".into(), Value::String("…".into()));
                }
                items.push(call(&name.value, &v));
                for u in unsampled {
                    comments.push(format!(
                        "no matching text was found for the pattern {}: edit the input of `{}`",
                        q(&u),
                        name.value
                    ));
                }
            }
        }
        // The reply tokens.
        let mut said = Vec::new();
        for f in &window {
            if let StepForm::Reply { includes, .. } = f {
                for t in includes {
                    match sample(&t.value) {
                        Some(s) => said.push(s),
                        None => comments.push(format!(
                            "no matching text was found for the reply pattern {}: add it to the `say` line",
                            q(&t.value)
                        )),
                    }
                }
            }
        }
        if !said.is_empty() {
            items.push(format!("say: {}", q(&said.join(" "))));
        }
        move_items(&parking, &mut items, &mut comments);
        if parking.iter().any(|m| matches!(m, Move::Raise { .. })) && items.len() > 2 {
            comments.push(
                "`archmax_raise` must stand alone in its message: move the other calls to an earlier turn".into(),
            );
        }
        for c in &comments {
            o.push_str(&format!("  # {c}\n"));
        }
        if items.is_empty() {
            o.push_str("  - []\n");
            continue;
        }
        for (k, it) in items.iter().enumerate() {
            o.push_str(if k == 0 { "  - - " } else { "    - " });
            o.push_str(it);
            o.push('\n');
        }
    }
    o
}

/// The workspace of a case path given on the command line, and the case's path in it:
/// `case` is relative to `cwd` (or absolute); the workspace is the folder above its last
/// `workflows/` component. `Err` (a message, exit 2 for the callers) when there is no
/// `workflows/` above it, or the root is reached through a link leaving `cwd`
/// ([`crate::disk::ROOT_LINK_REFUSED`]). Used by `scaffold` and `export-agent`.
pub fn locate_case(
    case: &str,
    cwd: &std::path::Path,
) -> Result<(crate::disk::DiskFiles, String), String> {
    let path = cwd.join(case);
    let comps: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let Some(w) = comps.iter().rposition(|c| c == "workflows") else {
        return Err(format!(
            "`{case}` is not inside a workspace (no `workflows/` folder above it)"
        ));
    };
    let root: std::path::PathBuf = comps.iter().take(w).collect();
    let rel = comps.iter().skip(w).cloned().collect::<Vec<_>>().join("/");
    if crate::disk::root_escapes_through_link(cwd, &root) {
        return Err(format!(
            "`{}`: {}",
            root.display(),
            crate::disk::ROOT_LINK_REFUSED
        ));
    }
    Ok((crate::disk::DiskFiles::new(&root), rel))
}

/// `wfx-lsp scaffold <CASE> [--force]` without clap: `case` is a case file path relative to
/// `cwd` (or absolute); the workspace is the folder above its `workflows/`. Prints the
/// written path on stdout; errors on stderr (through `inert`). Exit 0 written, 1 refused
/// (unsatisfiable, undecidable, errors in the case, the script exists without `--force`),
/// 2 usage or IO error.
pub fn run_cli(
    case: &str,
    force: bool,
    cwd: &std::path::Path,
    stdout: &mut dyn std::io::Write,
    stderr: &mut dyn std::io::Write,
) -> i32 {
    use wfx_schemas::inert::inert;
    let (fs, rel) = match locate_case(case, cwd) {
        Ok(x) => x,
        Err(m) => {
            let _ = writeln!(stderr, "Error: {}", inert(&m));
            return 2;
        }
    };
    match write(&fs, &rel, force) {
        Ok(p) => {
            let _ = writeln!(stdout, "{}", inert(&p));
            let _ = writeln!(
                stderr,
                "wrote {}: review it, then run `wfx-lsp test {}`",
                inert(&p),
                inert(&format!(
                    "{}{rel}",
                    crate::shown::root_prefix(fs.root(), cwd)
                ))
            );
            0
        }
        Err(m) => {
            // The `wfx-lsp check` hint names the case from the current folder too.
            let m = m.replace(
                &format!("`wfx-lsp check {rel}`"),
                &format!(
                    "`wfx-lsp check {}{rel}`",
                    crate::shown::root_prefix(fs.root(), cwd)
                ),
            );
            let _ = writeln!(stderr, "Error: {}", inert(&m));
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_match_their_patterns() {
        for (token, want) in [
            ("ORD-1001", Some("ORD-1001")),
            ("/approv/i", Some("approv")),
            (
                "/not authorized|only .* your own|rejected/i",
                Some("not authorized"),
            ),
            (
                "/scratchpad\\/report\\.json/",
                Some("scratchpad/report.json"),
            ),
            ("/^ORD-\\d+$/", Some("ORD-0")),
            ("/colou?r/", Some("color")),
            ("/[Pp]aris/", Some("Paris")),
            ("/(a|b)c/", None),
            ("/x{2}/", None),
        ] {
            assert_eq!(sample(token).as_deref(), want, "{token}");
        }
    }

    #[test]
    fn an_alternative_that_cannot_match_is_skipped() {
        // `\bfoo` is not literal text; the second alternative is.
        assert_eq!(sample("/\\bfoo|bar/").as_deref(), Some("bar"));
    }
}
