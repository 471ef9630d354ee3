//! `wfx-lsp export-agent <case.test.yaml>` (issue 15, item 6; docs/agent-scripts.md
//! "Export"): turns a case's cassette into an agent script (`<case>.agent.yaml`, the format
//! [`crate::agent::ScriptedAgent`] reads), so a recorded run becomes an editable, model-free
//! case. One turn per driven model run of the recording; each holds, in call order, what the
//! live agent ([`crate::model::live`]) made of every recorded answer: the text as a `say`
//! (when not blank) and each tool call as a `call` with its arguments (arguments that were
//! not JSON become the string the model sent, as the live agent passes them).
//!
//! Judge and rubric interactions are not exported: a scripted case's `grade` steps and
//! rubric hooks follow the scripted policy (docs/agent-scripts.md "What the simulator
//! provides": a configured judge with `--live`, else a failure naming the settings, or
//! `--skip-grades`).
//!
//! Must not: write outside the workspace (the confined [`DiskFiles::write`]), replace an
//! existing script without `force`, or write a secret: the cassette is redacted again with
//! the workspace's secrets before it is rendered.

use serde_json::Value;
use wfx_schemas::cassette::{Cassette, InteractionRole, MAX_INTERACTIONS, Secrets, load};
use wfx_schemas::files::FileAccess;
use wfx_schemas::workspace::{self, FileKind, agent_script_path, cassette_path};

use crate::agent::AgentAction;
use crate::disk::DiskFiles;

/// The turns of the agent script for `c`: `turns[r]` holds the actions of driven model run
/// `r` (a run with no recorded agent call is an empty turn). `Err` when a run index is at
/// or past [`MAX_INTERACTIONS`] (no recording has that many runs; the cassette is
/// malformed).
pub fn turns(c: &Cassette) -> Result<Vec<Vec<AgentAction>>, String> {
    let mut turns: Vec<Vec<AgentAction>> = Vec::new();
    for i in c
        .interactions
        .iter()
        .filter(|i| i.role == InteractionRole::Agent)
    {
        let run = usize::try_from(i.run)
            .ok()
            .filter(|r| *r < MAX_INTERACTIONS)
            .ok_or_else(|| {
                format!(
                    "interaction {} names run {}, more than a cassette holds ({MAX_INTERACTIONS})",
                    i.seq, i.run
                )
            })?;
        if turns.len() <= run {
            turns.resize_with(run + 1, Vec::new);
        }
        let Some(turn) = turns.get_mut(run) else {
            continue;
        };
        if let Some(text) = i.response.content.as_ref().filter(|t| !t.trim().is_empty()) {
            turn.push(AgentAction::Say(text.clone()));
        }
        for call in &i.response.tool_calls {
            let input = match (&call.arguments, &call.raw_arguments) {
                (Value::Null, Some(raw)) => Value::String(raw.clone()),
                (v, _) => v.clone(),
            };
            turn.push(AgentAction::Call {
                tool: call.name.clone(),
                input,
            });
        }
    }
    Ok(turns)
}

/// A JSON string literal, which is also a YAML double-quoted scalar with the same value
/// (JSON's escapes are a subset of YAML's): used for every text the model wrote, so no
/// text can end a line, open a comment or start a key.
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The agent script text for the cassette `c` found at `cassette` (workspace-relative, for
/// the header comment): a header naming the source, then `turns:` with one entry per run,
/// each commented with its run, case step, state and number of model calls. Every string
/// the recording holds is a JSON string literal; tool inputs are JSON flow mappings.
/// Parses back with [`crate::agent::ScriptedAgent::parse`] to exactly [`turns`].
pub fn render(c: &Cassette, cassette: &str) -> Result<String, String> {
    let turns = turns(c)?;
    let mut out = String::new();
    out.push_str(&format!(
        "# Agent script exported by `wfx-lsp export-agent` from {} (recorded {} with model {}).\n",
        q(cassette),
        q(&c.recorded_at),
        q(&c.model)
    ));
    out.push_str(
        "# One turn per driven model run: the model's replies (`say`) and tool calls, in order.\n\
         # Judge verdicts are not exported: `grade` steps follow the scripted policy\n\
         # (docs/agent-scripts.md). The cassette is used first while it exists.\n",
    );
    if turns.is_empty() {
        out.push_str("turns: []\n");
        return Ok(out);
    }
    out.push_str("turns:\n");
    for (r, actions) in turns.iter().enumerate() {
        let calls: Vec<_> = c
            .interactions
            .iter()
            .filter(|i| i.role == InteractionRole::Agent && i.run == r as u64)
            .collect();
        let mut about = format!("  # Turn {}: the cassette's `run: {r}`", r + 1);
        if let Some(first) = calls.first() {
            if let Some(step) = first.step {
                about.push_str(&format!(", driven by step {step} (1-based)"));
            }
            if let Some(state) = &first.state {
                about.push_str(&format!(", state {}", q(state)));
            }
        }
        about.push_str(&format!(", {} model call(s)\n", calls.len()));
        out.push_str(&about);
        if actions.is_empty() {
            out.push_str("  - []\n");
            continue;
        }
        for (k, a) in actions.iter().enumerate() {
            out.push_str(if k == 0 { "  - - " } else { "    - " });
            match a {
                AgentAction::Say(t) => out.push_str(&format!("say: {}\n", q(t))),
                AgentAction::Call { tool, input } => out.push_str(&format!(
                    "call: {{ tool: {}, input: {} }}\n",
                    q(tool),
                    serde_json::to_string(input).unwrap_or_else(|_| "{}".into())
                )),
            }
        }
    }
    Ok(out)
}

/// Exports the cassette of the case at `case_path` (workspace-relative,
/// `workflows/<slug>/tests/**/*.test.yaml`) to `<case>.agent.yaml` through the confined
/// layer, redacting it again with `secrets` first. Refuses (an error, nothing written) a
/// path that is no case, a case without a cassette, a cassette that does not load, and an
/// existing script unless `force`. Returns the written path.
pub fn write(
    fs: &DiskFiles,
    case_path: &str,
    force: bool,
    secrets: &Secrets,
) -> Result<String, String> {
    if !matches!(workspace::classify(case_path), FileKind::Case(_)) {
        return Err(format!(
            "`{case_path}` is not a case file (workflows/<slug>/tests/**/*.test.yaml)"
        ));
    }
    let cassette = cassette_path(case_path);
    let c = match load(fs, &cassette) {
        Ok(Some(c)) => c,
        Ok(None) => {
            return Err(format!(
                "`{case_path}` has no cassette (`{cassette}`): record one with `wfx-lsp test --live`"
            ));
        }
        Err(e) => return Err(format!("`{cassette}`: {e}")),
    };
    // Redact again: the cassette may predate a key (`wfx-lsp scrub` does the same).
    let (text, _) = wfx_schemas::cassette::to_json(&c, secrets);
    let c = wfx_schemas::cassette::parse(&text).map_err(|e| format!("`{cassette}`: {e}"))?;
    let script = agent_script_path(case_path);
    if !force && fs.read(&script).is_ok() {
        return Err(format!("`{script}` exists; pass --force to replace it"));
    }
    let out = render(&c, &cassette).map_err(|e| format!("`{cassette}`: {e}"))?;
    fs.write(&script, out.as_bytes())
        .map_err(|e| format!("cannot write `{script}`: {e}"))?;
    Ok(script)
}

/// `wfx-lsp export-agent <CASE> [--force]`: `case` is a case file path relative to `cwd`
/// (or absolute); the workspace is the folder above its `workflows/` (as for `scaffold`).
/// Prints the written path on stdout and a hint on stderr; errors on stderr (through
/// `inert`, redacted). Exit 0 written, 1 refused (no cassette, an invalid one, the script
/// exists without `--force`), 2 usage or IO error (not inside a workspace).
pub fn run_cli(
    case: &str,
    force: bool,
    cwd: &std::path::Path,
    stdout: &mut dyn std::io::Write,
    stderr: &mut dyn std::io::Write,
) -> i32 {
    use wfx_schemas::inert::inert;
    let (fs, rel) = match crate::scaffold::locate_case(case, cwd) {
        Ok(x) => x,
        Err(m) => {
            let _ = writeln!(stderr, "Error: {}", inert(&m));
            return 2;
        }
    };
    let secrets = super::scrub::workspace_secrets(&fs);
    if let Some(over) = secrets.overflow() {
        let _ = writeln!(stderr, "Error: {over}");
        return 2;
    }
    match write(&fs, &rel, force, &secrets) {
        Ok(p) => {
            let _ = writeln!(stdout, "{}", inert(&p));
            let _ = writeln!(
                stderr,
                "wrote {}: the case's cassette is used first while it exists; move it away to run the script with `wfx-lsp test {}`",
                inert(&p),
                inert(&format!(
                    "{}{rel}",
                    crate::shown::root_prefix(fs.root(), cwd)
                ))
            );
            0
        }
        Err(m) => {
            let _ = writeln!(stderr, "Error: {}", inert(&secrets.redact(&m).0));
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::ScriptedAgent;
    use serde_json::json;
    use wfx_schemas::cassette::{
        InputDigests, Interaction, RecordedClock, RecordedRequest, RecordedResponse,
        RecordedToolCall, VERSION,
    };

    fn interaction(
        seq: u64,
        role: InteractionRole,
        run: u64,
        content: Option<&str>,
        calls: Vec<RecordedToolCall>,
    ) -> Interaction {
        Interaction {
            seq,
            role,
            run,
            call: 0,
            step: Some(run.saturating_add(1)),
            state: Some("intake\n# not: a comment".into()),
            request: RecordedRequest {
                model: "m".into(),
                temperature: None,
                max_tokens: None,
                system: None,
                tools: Vec::new(),
                toolset: None,
                messages_from: 0,
                messages: Vec::new(),
            },
            response: RecordedResponse {
                content: content.map(str::to_owned),
                tool_calls: calls,
                ..RecordedResponse::default()
            },
        }
    }

    fn tool_call(name: &str, arguments: Value, raw: Option<&str>) -> RecordedToolCall {
        RecordedToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments,
            raw_arguments: raw.map(str::to_owned),
        }
    }

    fn cassette(interactions: Vec<Interaction>) -> Cassette {
        Cassette {
            version: VERSION,
            recorded_with: "wfx-lsp test".into(),
            recorded_at: "2026-01-01T00:00:00Z".into(),
            clock: RecordedClock {
                start_ms: 0,
                step_ms: 1,
                zone: "UTC".into(),
            },
            model: "m\nturns: evil".into(),
            endpoint: "127.0.0.1".into(),
            case: "a".into(),
            inputs: InputDigests {
                case: String::new(),
                workflow: String::new(),
            },
            prompts: Default::default(),
            toolsets: Default::default(),
            interactions,
        }
    }

    /// Every text the model wrote survives the YAML round trip exactly (quotes, `#`,
    /// `: `, line breaks, a tab, a control character, astral characters), judge calls are
    /// left out, a blank text is no `say`, arguments that were not JSON stay a string, and
    /// a run with no agent call is an empty turn.
    #[test]
    fn the_exported_script_parses_back_to_the_recorded_actions() {
        let hostile = "line 1\nline 2: \"quoted\" # not a comment\t\u{1}\u{1F600} 注文 \\ '";
        let c = cassette(vec![
            interaction(
                0,
                InteractionRole::Agent,
                0,
                Some(hostile),
                vec![
                    tool_call(
                        "archmax_advance",
                        json!({"to": "refund-request", "reason": "a: b # c\n", "n": 1.5, "l": [null, true]}),
                        None,
                    ),
                    tool_call("read_file", Value::Null, Some("{not json")),
                ],
            ),
            interaction(1, InteractionRole::Judge, 0, Some("score 1"), Vec::new()),
            interaction(2, InteractionRole::Agent, 0, Some("  \n"), Vec::new()),
            interaction(3, InteractionRole::Agent, 2, Some("bye"), Vec::new()),
        ]);
        let want = vec![
            vec![
                AgentAction::Say(hostile.into()),
                AgentAction::Call {
                    tool: "archmax_advance".into(),
                    input: json!({"to": "refund-request", "reason": "a: b # c\n", "n": 1.5, "l": [null, true]}),
                },
                AgentAction::Call {
                    tool: "read_file".into(),
                    input: Value::String("{not json".into()),
                },
            ],
            Vec::new(),
            vec![AgentAction::Say("bye".into())],
        ];
        assert_eq!(turns(&c).unwrap(), want);
        let text = render(&c, "w/tests/a.cassette.json").unwrap();
        let back = ScriptedAgent::parse("a.agent.yaml", &text).unwrap();
        assert_eq!(back.turns().unwrap(), want.as_slice(), "{text}");
        // Comments carry the recording's strings quoted: no line of them is YAML content.
        assert!(text.contains("with model \"m\\nturns: evil\""), "{text}");
        assert!(!text.contains("\nturns: evil"), "{text}");
    }

    #[test]
    fn a_cassette_without_agent_calls_exports_no_turns_and_a_huge_run_is_refused() {
        let text = render(&cassette(Vec::new()), "a.cassette.json").unwrap();
        let back = ScriptedAgent::parse("a.agent.yaml", &text).unwrap();
        assert_eq!(back.turn_count(), 0);
        let huge = cassette(vec![interaction(
            0,
            InteractionRole::Agent,
            u64::MAX,
            Some("x"),
            Vec::new(),
        )]);
        assert!(
            turns(&huge)
                .unwrap_err()
                .contains("more than a cassette holds")
        );
    }
}
