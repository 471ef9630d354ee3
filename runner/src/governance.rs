//! Governance of tool calls (FORMAT §E.7, §A.3, §E.5): which tools a state offers, whether
//! a call is allowed, and why not. Closed by default: the essentials and the controls, plus
//! `tools.allow_always` and the state's `tools.allow`, minus `tools.forbid_always` and the
//! state's `tools.forbid`; an allow entry with guards narrows even an essential tool; the
//! skills gate on `skills/<slug>/**`; `scratchpad/**` always open; runtime zones and mounts
//! never writable.
//!
//! Pure: reads the workflow model and the run variables, never the session folder.

use indexmap::IndexMap;
use serde_json::Value;
use wfx_schemas::model::workflow::{State, ToolEntry, Workflow};

use crate::glob::{escape, glob_match};
use crate::matching::{js_string, resolve_path};
use crate::session_fs::{Zone, classify, normalize};

pub use wfx_schemas::model::workflow::ESSENTIAL_TOOLS as ESSENTIALS;

pub use wfx_schemas::model::workflow::CONTROL_TOOLS as CONTROLS;

/// Tools whose path arguments write.
const WRITERS: &[&str] = &[
    "write_file",
    "edit_file",
    "copy_file",
    "move_file",
    "remove_file",
];

/// The path arguments of a tool's input, as `(argument, value)`.
pub fn path_args(tool: &str, input: &Value) -> Vec<(&'static str, String)> {
    let names: &[&'static str] = match tool {
        "ls" | "glob" | "grep" => &["path"],
        "read_file" | "write_file" | "edit_file" | "remove_file" | "archmax_run" => &["file_path"],
        "copy_file" | "move_file" => &["source_path", "destination_path"],
        _ => &[],
    };
    names
        .iter()
        .filter_map(|n| {
            input
                .get(*n)
                .and_then(Value::as_str)
                .map(|v| (*n, v.to_owned()))
        })
        .collect()
}

/// A refused call: the rule id (`tool.forbidden`, `skill.not-allowed`, …) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The reference's rule id.
    pub rule: &'static str,
    /// Our explanation.
    pub message: String,
}

fn block(rule: &'static str, message: String) -> Block {
    Block { rule, message }
}

/// Run variables by name (FORMAT §E.4), read where they are kept: the session's store is
/// not copied for each tool call that substitutes references or checks guards (issue 24:
/// one send of 100 calls storing 4 MiB each copied the whole store per call, 788 MB).
pub trait Vars {
    /// The value of the variable `name`, if it is set.
    fn var(&self, name: &str) -> Option<&Value>;
}

impl Vars for IndexMap<String, Value> {
    fn var(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

impl Vars for serde_json::Map<String, Value> {
    fn var(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

/// Longest text [`substitute`] produces, in bytes (bounded work): a guard or an argument
/// repeating a reference to a large variable would otherwise multiply it. A guard glob is
/// matched only up to `wfx_schemas::glob::MAX_EXPANDED_CHARS` characters anyway.
pub const MAX_SUBSTITUTED_BYTES: usize = 1 << 20;

/// Substitutes `${{name.path}}` references in a guard glob, glob-escaping the values
/// (FORMAT §A.3); `$${{…}}` is an escape for the literal text. Errors name the reference,
/// or say that the result would exceed [`MAX_SUBSTITUTED_BYTES`].
pub fn substitute(text: &str, vars: &dyn Vars, for_glob: bool) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("${{") {
        let escaped = i > 0 && rest.as_bytes().get(i - 1) == Some(&b'$');
        let (head, tail) = rest.split_at(i);
        let Some(end) = tail.find("}}") else { break };
        let inner = tail.get(3..end).unwrap_or_default();
        if escaped {
            out.push_str(head.get(..head.len().saturating_sub(1)).unwrap_or_default());
            out.push_str(tail.get(..end + 2).unwrap_or_default());
        } else {
            out.push_str(head);
            let segs: Vec<&str> = inner.trim().split('.').collect();
            let raw = format!("${{{{{inner}}}}}");
            let name = segs.first().copied().unwrap_or_default();
            if segs.iter().any(|s| s.is_empty()) {
                return Err(format!("the reference {raw} is malformed"));
            }
            let value = vars
                .var(name)
                .ok_or_else(|| format!("variable '{name}' is not set"))?;
            let value = resolve_path(value, segs.get(1..).unwrap_or_default())
                .ok_or_else(|| format!("the path of {raw} does not resolve"))?;
            let text = match value {
                Value::String(_) | Value::Number(_) | Value::Bool(_) => js_string(value),
                _ => return Err(format!("{raw} is not a string, number or boolean")),
            };
            out.push_str(&if for_glob { escape(&text) } else { text });
        }
        if out.len() > MAX_SUBSTITUTED_BYTES {
            return Err(format!(
                "substituting its references gives more than {MAX_SUBSTITUTED_BYTES} bytes"
            ));
        }
        rest = tail.get(end + 2..).unwrap_or_default();
    }
    out.push_str(rest);
    Ok(out)
}

/// Most bytes the substituted strings of one tool input may hold together: 4 MiB
/// (4,194,304). Bounded memory: [`MAX_SUBSTITUTED_BYTES`] holds per string, and 5,000
/// references to a 1 MB variable in one call's list would otherwise ask for 5 GB (break-it
/// finding); past it the call fails before it is built.
pub const MAX_SUBSTITUTED_INPUT_BYTES: usize = 4 << 20;

/// Substitutes references in every string of a tool input (the agent's own arguments,
/// FORMAT §A.3): verbatim values, strings only. `Err` past [`MAX_SUBSTITUTED_BYTES`] for
/// one string or [`MAX_SUBSTITUTED_INPUT_BYTES`] for all of them.
pub fn substitute_input(input: &Value, vars: &dyn Vars) -> Result<Value, String> {
    let mut total = 0usize;
    substitute_input_in(input, vars, &mut total)
}

fn substitute_input_in(input: &Value, vars: &dyn Vars, total: &mut usize) -> Result<Value, String> {
    Ok(match input {
        Value::String(s) if s.contains("${{") => {
            let out = substitute(s, vars, false)?;
            *total = total.saturating_add(out.len());
            if *total > MAX_SUBSTITUTED_INPUT_BYTES {
                return Err(format!(
                    "substituting its references gives more than {MAX_SUBSTITUTED_INPUT_BYTES} bytes in all"
                ));
            }
            Value::String(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| substitute_input_in(i, vars, total))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                out.insert(k.clone(), substitute_input_in(v, vars, total)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

fn has_guards(e: &ToolEntry) -> bool {
    !e.args.is_empty() || !e.paths.is_empty()
}

/// True when every guard of a grant holds (every path argument matches a `paths` glob,
/// every `args` guard matches); `Err` when a reference does not resolve (fail-closed).
fn grant_matches(
    e: &ToolEntry,
    tool: &str,
    input: &Value,
    vars: &dyn Vars,
) -> Result<bool, String> {
    let globs = |list: &[String]| -> Result<Vec<String>, String> {
        list.iter().map(|g| substitute(g, vars, true)).collect()
    };
    if !e.paths.is_empty() {
        let paths = globs(&e.paths)?;
        let args = path_args(tool, input);
        if args.is_empty() {
            return Ok(false);
        }
        for (_, p) in args {
            let Ok(norm) = normalize(&p) else {
                return Ok(false);
            };
            if !any_glob(&paths, &norm)? {
                return Ok(false);
            }
        }
    }
    for (arg, list) in &e.args {
        let list = globs(list)?;
        let Some(v) = input.get(arg) else {
            return Ok(false);
        };
        let v = js_string(v);
        if !any_glob(&list, &v)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// True when a guarded denial applies (any path argument or any `args` value matches).
fn denial_matches(
    e: &ToolEntry,
    tool: &str,
    input: &Value,
    vars: &dyn Vars,
) -> Result<bool, String> {
    if !has_guards(e) {
        return Ok(true);
    }
    for g in &e.paths {
        let g = substitute(g, vars, true)?;
        for (_, p) in path_args(tool, input) {
            if let Ok(n) = normalize(&p)
                && any_glob(std::slice::from_ref(&g), &n)?
            {
                return Ok(true);
            }
        }
    }
    for (arg, list) in &e.args {
        if let Some(v) = input.get(arg) {
            let v = js_string(v);
            for g in list {
                if any_glob(&[substitute(g, vars, true)?], &v)? {
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}

/// Whether `value` matches any of `globs`, in order. `Err` (the block's reason) as soon as
/// a glob or the value is over a `wfx_schemas::glob` bound (bounded work): the callers
/// block the call for an allow entry and a forbid entry alike (fail closed), since "no
/// match" would let a forbidden call through and "match" would grant an unchecked one.
fn any_glob(globs: &[String], value: &str) -> Result<bool, String> {
    for g in globs {
        match glob_match(g, value) {
            Ok(true) => return Ok(true),
            Ok(false) => {}
            Err(limit) => return Err(format!("the glob `{}` cannot be matched: {limit}", cap(g))),
        }
    }
    Ok(false)
}

/// A glob for a message: at most 80 characters, then `…`.
fn cap(g: &str) -> String {
    match g.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", g.get(..i).unwrap_or(g)),
        None => g.to_owned(),
    }
}

/// The skills enabled in `state`: `skills.allow_always` plus the state's `skills.allow`,
/// minus both forbid lists. Sorted.
pub fn enabled_skills(wf: &Workflow, state: &State) -> Vec<String> {
    let forbidden = |s: &str| {
        wf.skills_forbid_always.iter().any(|f| f.value == s)
            || state.skills_forbid.iter().any(|f| f.value == s)
    };
    let mut out: Vec<String> = wf
        .skills_allow_always
        .iter()
        .chain(state.skills_allow.iter().flatten())
        .map(|s| s.value.clone())
        .filter(|s| !forbidden(s))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The skill slug a session path lies under (`skills/<slug>/…`), if any.
pub fn skill_of(path: &str) -> Option<String> {
    let norm = normalize(path).ok()?;
    let mut segs = norm.split('/');
    (segs.next() == Some("skills"))
        .then(|| segs.next().map(str::to_owned))
        .flatten()
}

/// Decides whether an agent (or a script under the agent's governance) may call `tool`
/// with `input` in `state`. `vars` are the run variables as plain values.
pub fn check_call(
    wf: &Workflow,
    state: &State,
    tool: &str,
    input: &Value,
    vars: &dyn Vars,
) -> Result<(), Block> {
    if tool == "task" {
        return Err(block("tool.forbidden", "`task` is never grantable".into()));
    }
    for (list, rule, where_) in [
        (
            &wf.tools_forbid_always,
            "tool.forbidden",
            "tools.forbid_always".to_owned(),
        ),
        (
            &state.tools_forbid,
            "tool.forbidden-here",
            format!("the `tools.forbid` of state `{}`", state.slug.value),
        ),
    ] {
        for e in list
            .iter()
            .filter(|e| e.tool.value == tool || e.tool.value == "*")
        {
            match denial_matches(e, tool, input, vars) {
                Ok(true) => return Err(block(rule, format!("`{tool}` is denied by {where_}"))),
                Ok(false) => {}
                Err(why) => {
                    return Err(block(
                        rule,
                        format!("`{tool}` is guarded by {where_}, and {why}"),
                    ));
                }
            }
        }
    }
    if tool == "archmax_advance" && state.is_terminal() {
        return Err(block(
            "tool.forbidden-here",
            format!(
                "`archmax_advance` is not offered in the terminal state `{}`",
                state.slug.value
            ),
        ));
    }
    let grants: Vec<&ToolEntry> = wf
        .tools_allow_always
        .iter()
        .chain(state.tools_allow.iter())
        .filter(|e| e.tool.value == tool)
        .collect();
    let base = ESSENTIALS.contains(&tool) || CONTROLS.contains(&tool);
    if grants.is_empty() {
        if !base {
            return Err(block(
                "tool.not-allowed",
                format!(
                    "`{tool}` is not granted in state `{}` (no `tools.allow` or `tools.allow_always` entry names it)",
                    state.slug.value
                ),
            ));
        }
    } else if !grants.iter().any(|e| !has_guards(e)) {
        let mut ok = false;
        for e in &grants {
            match grant_matches(e, tool, input, vars) {
                Ok(true) => ok = true,
                Ok(false) => {}
                Err(why) => {
                    return Err(block(
                        "tool.path-argument",
                        format!("the grant of `{tool}` cannot be checked: {why}"),
                    ));
                }
            }
        }
        if !ok {
            return Err(block(
                "tool.path-argument",
                format!(
                    "the arguments of `{tool}` are outside what state `{}` grants",
                    state.slug.value
                ),
            ));
        }
    }
    check_paths(wf, state, tool, input)
}

/// The zone and skill rules on path arguments, shared by agent and script calls.
fn check_paths(wf: &Workflow, state: &State, tool: &str, input: &Value) -> Result<(), Block> {
    let args = path_args(tool, input);
    if tool == "archmax_run"
        && let Some((_, p)) = args.first()
        && skill_of(p).is_none()
    {
        return Err(block(
            "script.skill-only",
            format!(
                "`archmax_run` runs scripts inside skill bundles only; `{p}` is not under `skills/<slug>/`"
            ),
        ));
    }
    let enabled = enabled_skills(wf, state);
    for (arg, p) in &args {
        let zone = classify(p);
        if zone == Zone::Escapes {
            return Err(block(
                "tool.path-argument",
                format!("`{p}` climbs above the session folder"),
            ));
        }
        let writes = WRITERS.contains(&tool) && !(tool == "copy_file" && *arg == "source_path");
        if writes
            && matches!(
                zone,
                Zone::Authored | Zone::RunInternal | Zone::RunOffload | Zone::Root
            )
        {
            return Err(block(
                "zone.read-only",
                format!("`{p}` is in the read-only `{}` zone", zone.name()),
            ));
        }
        if let Some(slug) = skill_of(p) {
            if wf
                .skills_forbid_always
                .iter()
                .chain(state.skills_forbid.iter())
                .any(|f| f.value == slug)
            {
                return Err(block(
                    "skill.forbidden",
                    format!(
                        "skill `{slug}` is forbidden in state `{}`",
                        state.slug.value
                    ),
                ));
            }
            if !enabled.contains(&slug) {
                return Err(block(
                    "skill.not-allowed",
                    format!(
                        "skill `{slug}` is not enabled in state `{}` (enabled: {})",
                        state.slug.value,
                        list_or_none(&enabled)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// The tool names a state offers, sorted: essentials, controls (no `archmax_advance` in a
/// terminal state) and granted tools, minus bare denials.
pub fn offered_tools(wf: &Workflow, state: &State) -> Vec<String> {
    let mut out: Vec<String> = ESSENTIALS
        .iter()
        .chain(CONTROLS.iter())
        .map(|s| (*s).to_owned())
        .collect();
    out.extend(
        wf.tools_allow_always
            .iter()
            .chain(state.tools_allow.iter())
            .map(|e| e.tool.value.clone()),
    );
    if state.is_terminal() {
        out.retain(|t| t != "archmax_advance");
    }
    let denied = |t: &str| {
        wf.tools_forbid_always
            .iter()
            .chain(state.tools_forbid.iter())
            .any(|e| !has_guards(e) && (e.tool.value == t || e.tool.value == "*"))
    };
    out.retain(|t| !denied(t));
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wfx_schemas::yaml;

    fn wf(src: &str) -> Workflow {
        Workflow::from_node(yaml::parse(src).documents.first().unwrap())
    }

    const WF: &str = "tools:\n  forbid_always: [archmax_reset]\nskills:\n  allow_always: [base]\nstates:\n  a:\n    skills: { allow: [extra], forbid: [base] }\n    tools:\n      allow:\n        - { tool: archmax_run, paths: [\"skills/extra/scripts/**\"] }\n        - lookup\n        - { tool: fetch, args: { url: \"https://${{host}}/*\" } }\n      forbid: [{ tool: read_file, paths: [\"scratchpad/secret/**\"] }]\n    transitions: [{ to: b, description: d }]\n  b: {}\n";

    #[test]
    fn allowed_and_blocked_calls() {
        let w = wf(WF);
        let a = w.state("a").unwrap();
        let b = w.state("b").unwrap();
        let mut vars = IndexMap::new();
        vars.insert("host".to_owned(), json!("example.com"));
        let check =
            |s: &State, t: &str, i: Value| check_call(&w, s, t, &i, &vars).map_err(|b| b.rule);
        assert_eq!(
            check(a, "read_file", json!({"file_path": "scratchpad/x"})),
            Ok(())
        );
        assert_eq!(
            check(a, "read_file", json!({"file_path": "skills/extra/x"})),
            Ok(())
        );
        assert_eq!(
            check(a, "read_file", json!({"file_path": "skills/base/x"})),
            Err("skill.forbidden")
        );
        assert_eq!(
            check(a, "read_file", json!({"file_path": "skills/other/x"})),
            Err("skill.not-allowed")
        );
        assert_eq!(
            check(b, "read_file", json!({"file_path": "skills/base/x"})),
            Ok(())
        );
        assert_eq!(
            check(a, "read_file", json!({"file_path": "scratchpad/secret/k"})),
            Err("tool.forbidden-here")
        );
        assert_eq!(check(a, "archmax_reset", json!({})), Err("tool.forbidden"));
        assert_eq!(check(a, "lookup", json!({})), Ok(()));
        assert_eq!(check(b, "lookup", json!({})), Err("tool.not-allowed"));
        assert_eq!(
            check(
                a,
                "archmax_run",
                json!({"file_path": "skills/extra/scripts/x.js"})
            ),
            Ok(())
        );
        assert_eq!(
            check(
                a,
                "archmax_run",
                json!({"file_path": "skills/extra/other.js"})
            ),
            Err("tool.path-argument")
        );
        assert_eq!(
            check(b, "archmax_run", json!({"file_path": "scratchpad/x.js"})),
            Err("script.skill-only")
        );
        assert_eq!(
            check(a, "fetch", json!({"url": "https://example.com/x"})),
            Ok(())
        );
        assert_eq!(
            check(a, "fetch", json!({"url": "https://evil.com/x"})),
            Err("tool.path-argument")
        );
        assert_eq!(
            check(a, "write_file", json!({"file_path": "skills/extra/x"})),
            Err("zone.read-only")
        );
        assert_eq!(
            check(a, "write_file", json!({"file_path": "artifacts/x"})),
            Err("zone.read-only")
        );
        assert_eq!(
            check(a, "read_file", json!({"file_path": "../x"})),
            Err("tool.path-argument")
        );
        assert_eq!(
            check(b, "archmax_advance", json!({})),
            Err("tool.forbidden-here")
        );
        assert_eq!(check(a, "task", json!({})), Err("tool.forbidden"));
        assert!(!offered_tools(&w, a).contains(&"archmax_reset".to_owned()));
        assert!(offered_tools(&w, a).contains(&"lookup".to_owned()));
        assert!(!offered_tools(&w, b).contains(&"archmax_advance".to_owned()));
    }

    #[test]
    fn guard_globs_over_a_bound_block_and_pathological_globs_are_decided() {
        let bomb = format!("docs/{}", "{a,b}".repeat(30));
        let deep = format!("{}scratchpad/**{}", "{a,".repeat(9), "}".repeat(9));
        let slow = format!("{}z", "*a".repeat(60));
        let src = format!(
            "states:\n  a:\n    tools:\n      allow:\n        - {{ tool: read_file, paths: [\"{bomb}\"] }}\n        - {{ tool: grep, paths: [\"{slow}\", \"**/*.md\"] }}\n      forbid:\n        - {{ tool: write_file, paths: [\"{deep}\"] }}\n"
        );
        let w = wf(&src);
        let a = w.state("a").unwrap();
        let vars = IndexMap::new();
        let check = |t: &str, i: Value| check_call(&w, a, t, &i, &vars);
        // Allow side: the grant cannot be checked, so the call is blocked.
        let err = check("read_file", json!({"file_path": "docs/ab"})).unwrap_err();
        assert_eq!(err.rule, "tool.path-argument");
        assert!(
            err.message.contains("more than 1024 alternatives"),
            "{}",
            err.message
        );
        // Forbid side: the denial cannot be checked, so the call is blocked too.
        let err = check(
            "write_file",
            json!({"file_path": "scratchpad/x", "content": ""}),
        )
        .unwrap_err();
        assert_eq!(err.rule, "tool.forbidden-here");
        assert!(
            err.message.contains("deeper than 8 levels"),
            "{}",
            err.message
        );
        // `*a` sixty times against a 4,000-character path of `a`s: decided (no match), and
        // the second glob still grants.
        let long = format!("{}.md", "a".repeat(4000));
        assert!(check("grep", json!({"path": long})).is_ok());
        let long = "a".repeat(4000);
        assert_eq!(
            check("grep", json!({"path": long})).map_err(|b| b.rule),
            Err("tool.path-argument")
        );
        // A path over MAX_PATH_CHARS cannot be matched: blocked with the reason.
        let err = check("grep", json!({"path": "a".repeat(5000)})).unwrap_err();
        assert!(err.message.contains("longer than 4096"), "{}", err.message);
    }

    #[test]
    fn substitution_is_bounded() {
        let mut vars = IndexMap::new();
        vars.insert("big".to_owned(), json!("x".repeat(100_000)));
        let ok = substitute(&"${{big}}".repeat(10), &vars, false).unwrap();
        assert_eq!(ok.len(), 1_000_000);
        let err = substitute(&"${{big}}".repeat(11), &vars, false).unwrap_err();
        assert!(err.contains("more than 1048576 bytes"), "{err}");
        // A thousand references in a guard glob would be 100 MB: refused at the bound.
        let err = substitute(&"${{big}}/".repeat(1000), &vars, true).unwrap_err();
        assert!(err.contains("more than"), "{err}");
    }

    #[test]
    fn substitution_is_bounded_per_input_too() {
        // Break-it finding: 5,000 references to a 1 MB variable in one call's list asked
        // for 5 GB; each string was within its own bound.
        let mut vars = IndexMap::new();
        vars.insert("x".to_owned(), json!("v".repeat(1_000_000)));
        let four = json!({"todos": vec!["${{x}}"; 4]});
        assert_eq!(
            substitute_input(&four, &vars).unwrap()["todos"][3]
                .as_str()
                .unwrap()
                .len(),
            1_000_000
        );
        let many = json!({"todos": vec!["${{x}}"; 5000]});
        let err = substitute_input(&many, &vars).unwrap_err();
        assert!(err.contains("more than 4194304 bytes in all"), "{err}");
    }

    #[test]
    fn unresolved_guard_reference_blocks() {
        let w = wf(WF);
        let a = w.state("a").unwrap();
        let err = check_call(
            &w,
            a,
            "fetch",
            &json!({"url": "https://x/y"}),
            &IndexMap::new(),
        )
        .unwrap_err();
        assert_eq!(err.rule, "tool.path-argument");
        assert!(
            err.message.contains("variable 'host' is not set"),
            "{}",
            err.message
        );
    }

    #[test]
    fn substitution_escapes_and_resolves_paths() {
        let mut vars = IndexMap::new();
        vars.insert("o".to_owned(), json!({"items": [{"id": "a*"}]}));
        assert_eq!(
            substitute("x/${{ o.items.-1.id }}", &vars, true).unwrap(),
            "x/a\\*"
        );
        assert_eq!(
            substitute("x/${{o.items.0.id}}", &vars, false).unwrap(),
            "x/a*"
        );
        assert_eq!(substitute("$${{o}}", &vars, false).unwrap(), "${{o}}");
        assert!(
            substitute("${{o}}", &vars, false)
                .unwrap_err()
                .contains("not a string")
        );
        assert!(
            substitute("${{missing}}", &vars, false)
                .unwrap_err()
                .contains("not set")
        );
    }
}
