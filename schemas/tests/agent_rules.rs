//! Fixture tests for the agent-script rules (WFX401–WFX408).

mod common;
use common::check_file_diagnostics;

const WF: &str = "#- workflows/w/workflow.yaml\ninstructions: x\ntools:\n  forbid_always: [archmax_reset]\nstates:\n  s:\n    triggers: { manual: }\n    tools: { allow: [lookup] }\n";

fn check(script: &str) {
    check_file_diagnostics(
        &format!("{WF}#- workflows/w/tests/a.agent.yaml\n{script}"),
        "workflows/w/tests/a.agent.yaml",
    );
}

#[test]
fn a_valid_script_has_no_diagnostics() {
    check(
        r#"turns:
  - - say: hello
    - call: { tool: read_file, input: { file_path: a.txt } }
    - call: { tool: lookup }
  -
  - []
"#,
    );
}

#[test]
fn not_a_mapping() {
    check(
        r#"- say: hi
^^^^^^^^^ error WFX401: an agent script is a mapping
"#,
    );
}

#[test]
fn unknown_and_near_miss_top_level_keys() {
    check(
        r#"turn: []
^^^^ error WFX402: unknown key `turn`; did you mean `turns`?
"#,
    );
    check(
        r#"turns: []
version: 1
^^^^^^^ error WFX402: unknown key `version`; an agent script has one key
"#,
    );
}

#[test]
fn missing_turns() {
    check(
        r#"{}
^^ error WFX403: missing `turns`
"#,
    );
}

#[test]
fn turns_and_turn_shapes() {
    check(
        r#"turns: hello
#      ^^^^^ error WFX404: `turns` takes a list of turns; found string
"#,
    );
    check(
        r#"turns:
  - say: hi
#   ^^^^^^^ error WFX404: turn 1 takes a list of actions
"#,
    );
}

#[test]
fn action_shapes() {
    check(
        r#"turns:
  - - sya: hi
#     ^^^ error WFX405: unknown action `sya`; did you mean `say`?
    - { say: a, call: b }
#     ^^^^^^^^^^^^^^^^^^^ error WFX405: an action is a single-key mapping
    - say: [a]
#          ^^^ error WFX406: `say` takes the message text; found list
"#,
    );
}

#[test]
fn call_shapes() {
    check(
        r#"turns:
  - - call: read_file
#           ^^^^^^^^^ error WFX407: `call` takes
    - call: { tool: read_file, inptu: {} }
#                              ^^^^^ error WFX407: did you mean `input`?
    - call: { tool: read_file, input: [] }
#                                     ^^ error WFX407: `input` takes a mapping
    - call: { input: {} }
#           ^^^^^^^^^^^^^ error WFX407: `call` needs `tool`
    - call: { tool: 3 }
#                   ^ error WFX407: `tool` takes a tool name
"#,
    );
}

#[test]
fn calls_no_state_allows_are_warnings() {
    check(
        r#"turns:
  - - call: { tool: reed_file }
#                   ^^^^^^^^^ warning WFX408: no state of this workflow allows `reed_file`
    - call: { tool: archmax_reset }
#                   ^^^^^^^^^^^^^ warning WFX408: allows `archmax_reset`
    - call: { tool: lookup }
"#,
    );
}
