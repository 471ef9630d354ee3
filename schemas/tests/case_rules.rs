//! Fixture tests for the case document rules (WFX1xx, FORMAT §B.0–§B.8) and the case
//! cross-file rules (WFX301–WFX312, FORMAT §B.8, §B.10 and our own checks), plus the
//! example corpus: every case of `tests/corpus/customer-support` checks clean.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::{check_file_diagnostics, fixture};
use wfx_schemas::diagnostics::{Diagnostic, Severity};
use wfx_schemas::files::MemFiles;
use wfx_schemas::rules::case::{
    FixturePathError, did_you_mean, edit_distance, is_variable_name, normalize_fixture_path,
};
use wfx_schemas::rules::case_cross::{Zone, classify_seed_path};

const CASE: &str = "workflows/w/tests/a.test.yaml";

/// A workflow with two trigger entry states, one human state and a judge.
const WF: &str = r#"
#- workflows/w/workflow.yaml
instructions: Test workflow.
tests:
  judge: {}
states:
  start:
    triggers:
      manual:
      email_reply:
    transitions:
      - { to: review, description: d }
      - { to: wait, description: d }
  review:
    type: human
    instructions: Review.
    transitions:
      - to: done
        type: approve
        description: d
      - to: start
        type: refine
        description: d
  wait:
    triggers:
      clarify_requested:
    transitions:
      - { to: done, description: d }
  done:
    title: Done
#- workflows/other/workflow.yaml
states:
  only:
    triggers:
      manual:
"#;

/// Checks the case `body` (at [`CASE`]) beside [`WF`] and asserts its annotations.
#[track_caller]
fn check_case(body: &str) {
    check_file_diagnostics(&format!("{WF}#- {CASE}\n{body}"), CASE);
}

/// The diagnostics of [`CASE`] for `body`, beside [`WF`], and the case text.
fn diags(body: &str) -> (Vec<Diagnostic>, String) {
    let fx = fixture(&format!("{WF}#- {CASE}\n{body}"));
    let text = fx
        .texts
        .iter()
        .find(|(p, _)| p == CASE)
        .map(|(_, t)| t.clone())
        .unwrap();
    (wfx_schemas::check::check_file(&fx.files, CASE), text)
}

/// Applies the first fix of `d` to `text`.
fn apply_fix(d: &Diagnostic, text: &str) -> String {
    let fix = d.fixes.first().unwrap_or_else(|| panic!("no fix on {d:?}"));
    let mut out = text.to_owned();
    let mut edits = fix.edits.clone();
    edits.sort_by_key(|e| std::cmp::Reverse(e.range.start));
    for e in edits {
        out.replace_range(e.range.as_usize(), &e.new_text);
    }
    out
}

// ---------------------------------------------------------------- §B.0 document shape

#[test]
fn document_must_be_a_mapping() {
    check_case(
        r#"- send: hi
^^^^^^^^^^ error WFX101: a case is a YAML mapping (title, description, steps, …); got a list
"#,
    );
    check_case(
        r#"# nothing but a comment
^ error WFX101: got an empty document
"#,
    );
}

// ---------------------------------------------------------------- §B.1 top-level keys

#[test]
fn unknown_top_level_keys() {
    check_case(
        r#"title: t
description: d
stpes: []
^^^^^ error WFX102: unknown key `stpes`; did you mean `steps`?
version: 1
^^^^^^^ error WFX102: case files carry no version
judge: {}
^^^^^ error WFX102: grading is a step
owner: me
^^^^^ error WFX102: unknown key `owner` (known: title, description, skip, trigger, variables, workspace, mocks, steps)
"#,
    );
}

#[test]
fn near_miss_top_level_key_gets_a_rename_fix() {
    let (d, text) = diags("titel: Greeting\ndescription: d\n");
    let unknown: Vec<_> = d.iter().filter(|d| d.code.code == "WFX102").collect();
    assert_eq!(unknown.len(), 1, "{d:#?}");
    assert_eq!(
        unknown[0].message,
        "unknown key `titel`; did you mean `title`?"
    );
    assert_eq!(
        apply_fix(unknown[0], &text),
        "title: Greeting\ndescription: d\n"
    );
    // The title is missing too, reported on an empty range at the document start.
    let missing: Vec<_> = d.iter().filter(|d| d.code.code == "WFX103").collect();
    assert_eq!(missing.len(), 1);
    assert!(missing[0].range.is_empty() && missing[0].range.start == 0);
}

#[test]
fn renamed_name_key_is_fixed_to_title() {
    let (d, text) = diags("name: Greeting\ndescription: d\n");
    let renamed = d.iter().find(|d| d.code.code == "WFX102").unwrap();
    assert_eq!(
        apply_fix(renamed, &text),
        "title: Greeting\ndescription: d\n"
    );
}

#[test]
fn no_rename_fix_when_the_target_key_exists() {
    let (d, _) = diags("title: t\ndescription: d\nsteps: []\nstpes: []\n");
    let unknown = d.iter().find(|d| d.code.code == "WFX102").unwrap();
    assert!(
        unknown.fixes.is_empty(),
        "a rename would duplicate `steps`: {unknown:?}"
    );
}

#[test]
fn title_required_and_typed() {
    check_case(
        r#"description: d
^ error WFX103: `title` is required
"#,
    );
    check_case(
        r#"title: 42
#      ^^ error WFX103: `title` takes a string
description: d
"#,
    );
    check_case(
        r#"title: "   "
#      ^^^^^ error WFX103: `title` is blank
description: d
"#,
    );
    check_case(
        r#"title:
^^^^^ error WFX103: got nothing (null)
description: d
"#,
    );
}

#[test]
fn title_is_one_line_after_trimming() {
    check_case(
        r#"title: "first\nsecond"
#      ^^^^^^^^^^^^^^^ error WFX104: `title` spans several lines
description: d
"#,
    );
    // A folded scalar and a one-line literal with a trailing newline pass.
    check_case("title: >-\n  folded\n  onto one line\ndescription: d\n");
    check_case("title: |\n  one line\ndescription: d\n");
}

#[test]
fn title_limit_counts_collapsed_utf16_code_units() {
    // 61 ASCII characters: one too many.
    check_case(
        r#"title: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
#      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error WFX105: `title` is 61 characters long (UTF-16 code units, whitespace collapsed); the limit is 60
description: d
"#,
    );
    // Exactly 60 passes.
    check_case(
        "title: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\ndescription: d\n",
    );
    // 59 ASCII characters plus one emoji: 60 characters, but 61 UTF-16 code units.
    check_case(
        r#"title: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa😀
#      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error WFX105: is 61 characters long
description: d
"#,
    );
    // 58 ASCII characters plus one emoji is exactly 60 code units.
    check_case(
        "title: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa😀\ndescription: d\n",
    );
    // Runs of whitespace count once: 60 collapsed units written with extra spaces pass.
    check_case(
        "title: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaa      aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  \"\ndescription: d\n",
    );
}

#[test]
fn description_required_and_bounded() {
    check_case(
        r#"title: t
^ error WFX106: `description` is required
"#,
    );
    check_case(
        r#"title: t
description: [a]
#            ^^^ error WFX106: `description` takes a string
"#,
    );
    check_case(
        r#"title: t
description: " "
#            ^^^ error WFX106: `description` is blank
"#,
    );
    let long = "d".repeat(201);
    check_case(&format!(
        "title: t\ndescription: {long}\n#            {} error WFX107: `description` is 201 characters long\n",
        "^".repeat(201)
    ));
    check_case(&format!("title: t\ndescription: {}\n", "d".repeat(200)));
    // Several lines are fine.
    check_case("title: t\ndescription: |\n  one\n  two\n");
}

#[test]
fn skip_takes_a_reason_string() {
    check_case(
        r#"title: t
description: d
skip: ""
#     ^^ error WFX108: `skip` takes a reason string of at least one character; got an empty string
"#,
    );
    check_case(
        r#"title: t
description: d
skip: true
#     ^^^^ error WFX108: got `true`
"#,
    );
    check_case("title: t\ndescription: d\nskip: \" \"\n");
}

#[test]
fn trigger_is_a_strict_id_mapping() {
    check_case(
        r#"title: t
description: d
trigger: email_reply
#        ^^^^^^^^^^^ error WFX109: write `trigger: { id: email_reply }`
"#,
    );
    check_case(
        r#"title: t
description: d
trigger: {}
^^^^^^^ error WFX109: `trigger` needs an `id`
"#,
    );
    check_case(
        r#"title: t
description: d
trigger: { id: "" }
#              ^^ error WFX109: `trigger.id` takes a non-empty trigger id string
"#,
    );
    check_case(
        r#"title: t
description: d
trigger: { id: manual, args: { a: 1 } }
#                      ^^^^ error WFX102: a trigger carries only an `id`
trigger2: x
^^^^^^^^ error WFX102: did you mean `trigger`?
"#,
    );
}

#[test]
fn variables_keys_are_run_variable_names() {
    check_case(
        r#"title: t
description: d
variables: [company]
#          ^^^^^^^^^ error WFX110: `variables` takes a mapping
"#,
    );
    check_case(
        r#"title: t
description: d
variables:
  company: Acme
  orderId: 1
# ^^^^^^^ error WFX111: `orderId` is not a valid run-variable name
  _x: 1
# ^^ error WFX111
  items: [{ sku: a }]
"#,
    );
}

#[test]
fn workspace_paths_and_from_references() {
    check_case(
        r#"title: t
description: d
workspace: scratchpad/a.txt
#          ^^^^^^^^^^^^^^^^ error WFX112: `workspace` takes a mapping
"#,
    );
    check_case(
        r#"title: t
description: d
workspace:
  "": x
# ^^ error WFX112: workspace paths must be non-empty
  scratchpad/a.json: { from: 3 }
#                            ^ error WFX113: `from` takes a tests/-relative file path string; got a number
  scratchpad/b.json: { from: "" }
#                            ^^ error WFX113: got an empty string
  scratchpad/c.json: { from: ../secret.json }
#                            ^^^^^^^^^^^^^^ error WFX114: `from: ../secret.json` escapes the tests folder
  scratchpad/d.json: { from: /etc/passwd }
#                            ^^^^^^^^^^^ error WFX115: `from: /etc/passwd` must be a tests/-relative file path
  scratchpad/e.json: { from: ./ }
#                            ^^ error WFX115
  scratchpad/f.json: { from: x, other: y }
  scratchpad/g.txt: plain inline text
"#,
    );
}

#[test]
fn mocks_are_strict_items() {
    check_case(
        r#"title: t
description: d
mocks: { tool: read_file }
#      ^^^^^^^^^^^^^^^^^^^ error WFX116: `mocks` must be a list
"#,
    );
    check_case(
        r#"title: t
description: d
mocks:
  - read_file
#   ^^^^^^^^^ error WFX116: `mocks[0]` must be a mapping
  - { result: 1 }
#   ^ error WFX116: `mocks[1]` needs `tool`
  - { tool: "", result: 1 }
#           ^^ error WFX116: `tool` takes a non-empty tool name
  - { tool: grep, whenInput: 3 }
#                            ^ error WFX116: `whenInput` takes a mapping
  - { tool: grep, reslt: 1 }
#                 ^^^^^ error WFX102: unknown key `reslt` in `mocks[4]`; did you mean `result`?
  - { tool: grep }
"#,
    );
}

#[test]
fn regexes_in_when_input_are_checked_at_any_depth() {
    check_case(
        r#"title: t
description: d
mocks:
  - tool: read_file
    whenInput:
      file_path: "/(/"
#                ^^^^^ error WFX117: malformed regex `/(/`:
      nested: { list: [ok, "/[/", "/fine/i"] }
#                          ^^^^^ error WFX117: malformed regex `/[/`
      "/(/": key names are not regexes
    result: hi
"#,
    );
}

// ---------------------------------------------------------------- §B.2 steps

#[test]
fn steps_is_a_list_of_single_key_mappings() {
    check_case(
        r#"title: t
description: d
steps: { send: hi }
#      ^^^^^^^^^^^^ error WFX118: `steps` must be a list
"#,
    );
    check_case(
        r#"title: t
description: d
steps:
  - hello
#   ^^^^^ error WFX119: a step is a single-key mapping
  - {}
#   ^^ error WFX119: this one has none
  - send: hi
    succeeded: true
#   ^^^^^^^^^ error WFX119: a step declares exactly one key, got `send`, `succeeded`
  - succeeded: true
"#,
    );
}

#[test]
fn unknown_steps() {
    check_case(
        r#"title: t
description: d
steps:
  - send: hi
  - reachedstate: done
#   ^^^^^^^^^^^^ error WFX120: unknown step `reachedstate`; did you mean `reachedState`?
  - sned: hi
#   ^^^^ error WFX120: unknown step `sned`; did you mean `send`?
  - judge: { closedQA: polite, atLeast: 0.5 }
#   ^^^^^ error WFX120: unknown step `judge`; it was renamed to `grade`
  - frobnicate: 1
#   ^^^^^^^^^^ error WFX120: unknown step `frobnicate` (actions: send, decide, deliver; assertions: succeeded, usedNoTools, noTraversal, parked, raised, reachedState, triggerArrival, reply, calledTool, notCalledTool, blockedTool, ranWorkflow, trail, variables, grade)
"#,
    );
}

#[test]
fn unknown_step_fixes() {
    let (d, text) = diags(
        "title: t\ndescription: d\nsteps:\n  - send: hi\n  - reachedstate: done\n  - judge: { closedQA: q, atLeast: 1 }\n",
    );
    let fixed: Vec<String> = d
        .iter()
        .filter(|d| d.code.code == "WFX120")
        .map(|d| apply_fix(d, &text))
        .collect();
    assert_eq!(fixed.len(), 2, "{d:#?}");
    assert!(
        fixed[0].contains("  - reachedState: done\n"),
        "{}",
        fixed[0]
    );
    assert!(fixed[1].contains("  - grade: { closedQA"), "{}", fixed[1]);
}

#[test]
fn action_shapes() {
    check_case(
        r#"title: t
description: d
steps:
  - send: ""
#         ^^ error WFX121: `send` takes a user message string (at least one character); got an empty string
  - send: 3
#         ^ error WFX121: got a number
  - send:
#   ^^^^ error WFX121: got nothing (null)
  - decide: done
#           ^^^^ error WFX121: `decide` takes a mapping `{ to: <state>, comment?: <text> }`; got a string
  - decide: { comment: ok }
#   ^^^^^^ error WFX121: `decide` needs `to`
  - decide: { to: "", comment: 3 }
#                 ^^ error WFX121: `decide.to` takes a non-empty string
#                              ^ error WFX121: `decide.comment` takes a string
  - decide: { to: done, by: me }
#                       ^^ error WFX102: unknown key `by` in `decide` (known: to, comment)
  - deliver: { variables: { BadName: 1 } }
#   ^^^^^^^ error WFX121: `deliver` needs `trigger`
#                           ^^^^^^^ error WFX111: `BadName` is not a valid run-variable name
  - deliver: { trigger: email_reply, variables: [a] }
#                                               ^^^ error WFX121: `deliver.variables` takes a mapping
  - deliver: { trigger: email_reply, variables: { reply_body: hi } }
"#,
    );
}

#[test]
fn flag_assertions_take_literal_true() {
    check_case(
        r#"title: t
description: d
steps:
  - send: hi
  - succeeded: false
#              ^^^^^ error WFX122: `succeeded` takes the literal `true`; got `false`
  - usedNoTools: "true"
#                ^^^^^^ error WFX122: `usedNoTools` takes the literal `true`; got a string
  - noTraversal:
#   ^^^^^^^^^^^ error WFX122: got nothing (null)
  - succeeded: true
  - usedNoTools: true
  - noTraversal: true
"#,
    );
}

#[test]
fn parked_raised_and_name_assertions() {
    check_case(
        r#"title: t
description: d
steps:
  - send: hi
  - parked: waiting
#           ^^^^^^^ error WFX122: `parked` takes `true`, `decision` or `input`
  - parked: { channel: email, state: "" }
#                      ^^^^^ error WFX122: `parked.channel` is `decision` or `input`; got `email`
#                                    ^^ error WFX122: `parked.state` takes a state slug
  - parked: { where: review }
#             ^^^^^ error WFX102: unknown key `where` in `parked`
  - parked: {}
  - parked: input
  - parked: { channel: decision, state: review }
  - raised: "  "
#           ^^^^ error WFX122: `raised` takes `true`, the expected code, or a mapping
  - raised: { code: "" }
#                   ^^ error WFX122: `raised.code` takes a non-empty string
  - raised: { reason: "/(/" }
#                     ^^^^^ error WFX117: malformed regex `/(/`
  - raised: { code: out_of_stock, reason: "/stock/i" }
  - raised: out_of_stock
  - reachedState: ""
#                 ^^ error WFX122: `reachedState` takes a state slug string
  - triggerArrival: 3
#                   ^ error WFX122: `triggerArrival` takes a trigger id string
"#,
    );
}

#[test]
fn at_least_one_matcher() {
    check_case(
        r#"title: t
description: d
steps:
  - send: hi
  - trail: { count: 1 }
#   ^^^^^ error WFX123: `trail` declares none of `to`, `kind`, `reason`
  - raised: {}
#   ^^^^^^ error WFX123: `raised` declares neither `code` nor `reason`
  - reply: {}
#   ^^^^^ error WFX123: `reply` declares neither `includes` nor `excludes`
  - reply: { includes: [] }
"#,
    );
}

#[test]
fn reply_tokens() {
    check_case(
        r#"title: t
description: d
steps:
  - send: hi
  - reply: hello
#          ^^^^^ error WFX122: `reply` takes a mapping
  - reply: { includes: 3 }
#                      ^ error WFX122: `reply.includes` takes a string or a list of strings
  - reply: { excludes: [ok, 3] }
#                           ^ error WFX122: `reply.excludes[1]` takes a string
  - reply: { includes: ["/a/gg", "/a/uv", "/a/x", "/a/dgimsy", "//", "/a/b/", "a/"] }
#                       ^^^^^^^ error WFX117: malformed regex `/a/gg`: flag `g` is repeated
#                                ^^^^^^^ error WFX117: flags `u` and `v` cannot be combined
#                                         ^^^^^^ error WFX117: invalid flag `x`
  - reply: { includes: "/(?<=a)b/", excludes: "/\\k<x>(?<x>a)/u" }
"#,
    );
}

#[test]
fn tool_assertions() {
    check_case(
        r#"title: t
description: d
steps:
  - send: hi
  - calledTool: write_file
#               ^^^^^^^^^^ error WFX122: `calledTool` takes a mapping
  - notCalledTool: { input: { a: 1 } }
#   ^^^^^^^^^^^^^ error WFX122: `notCalledTool` needs `name`
  - blockedTool: { name: write_file, input: [a] }
#                                           ^^^ error WFX122: `blockedTool.input` takes a mapping
  - calledTool: { name: write_file, input: { file_path: "/(/", deep: [{ x: "/)/" }] } }
#                                                       ^^^^^ error WFX117: malformed regex `/(/`
#                                                                          ^^^^^ error WFX117: malformed regex `/)/`
  - calledTool: { name: write_file, args: {} }
#                                   ^^^^ error WFX102: unknown key `args` in `calledTool` (known: name, input)
"#,
    );
}

#[test]
fn ran_workflow_trail_variables_grade() {
    check_case(
        r#"title: t
description: d
steps:
  - send: hi
  - ranWorkflow: { workflow: other, status: failed, count: -1 }
#                                           ^^^^^^ error WFX122: `ranWorkflow.status` is `ok` or `error`; got `failed`
#                                                          ^^ error WFX122: `ranWorkflow.count` takes a whole number, 0 or more; got `-1`
  - ranWorkflow: { status: ok }
#   ^^^^^^^^^^^ error WFX122: `ranWorkflow` needs `workflow`
  - ranWorkflow: { workflow: other, count: 0 }
  - trail: { kind: trigger }
#   ^^^^^ error WFX122: `trail` needs `count`
  - trail: { to: 3, kind: trigger, count: 1.5 }
#                ^ error WFX122: `trail.to` takes a string
#                                         ^^^ error WFX122: `trail.count` takes a whole number
  - trail: { kind: trigger, count: 2.0 }
  - variables: { company: Acme }
#                ^^^^^^^ error WFX102: unknown key `company` in `variables` (known: expect, path, locked)
#   ^^^^^^^^^ error WFX122: `variables` needs `expect`
  - variables: { expect: [a] }
#                        ^^^ error WFX122: `variables.expect` takes a mapping
  - variables: { expect: { a: 1 }, path: { a: 3 }, locked: { a: "yes" } }
#                                             ^ error WFX122: `variables.path` values are a dotted path string
#                                                               ^^^^^ error WFX122: `variables.locked` values are `true` or `false`
  - grade: { closedQA: "", atLeast: 1.5 }
#                      ^^ error WFX122: `grade.closedQA` takes a non-empty string
#                                   ^^^ error WFX122: `grade.atLeast` takes a number from 0 to 1; got `1.5`
  - grade: { closedQA: polite }
#   ^^^^^ error WFX122: `grade` needs `atLeast`
  - grade: { closedQA: polite, atLeast: 0 }
  - grade: { closedQA: polite, atLeast: 1 }
"#,
    );
}

#[test]
fn variables_options_for_names_not_expected_are_flagged() {
    check_case(
        r#"title: t
description: d
steps:
  - send: hi
  - variables:
      expect: { company: Acme, items: [] }
      path: { items: "0.sku" }
      locked: { compnay: true, other: false }
#               ^^^^^^^ warning WFX125: `variables.locked` names `compnay`, which `expect` does not list, so it is ignored; did you mean `company`?
#                              ^^^^^ warning WFX125: names `other`
"#,
    );
}

#[test]
fn assertion_needs_a_preceding_action() {
    check_case(
        r#"title: t
description: d
steps:
  - succeeded: true
#   ^^^^^^^^^ error WFX124: assertion `succeeded` has no preceding action — put a `send`, `decide` or `deliver` step before it
  - reply: { includes: hi }
#   ^^^^^ error WFX124: assertion `reply`
  - frobnicate: 1
#   ^^^^^^^^^^ error WFX120
  - send: 3
#         ^ error WFX121
  - succeeded: true
"#,
    );
}

// ---------------------------------------------------------------- cross-file rules

#[test]
fn trigger_must_be_declared() {
    check_case(
        r#"title: t
description: d
trigger: { id: email }
#              ^^^^^ error WFX301: trigger `email` is not declared by any state of workflow `w` (declared: clarify_requested, email_reply, manual)
"#,
    );
    check_case("title: t\ndescription: d\ntrigger: { id: manual }\n");
    check_case("title: t\ndescription: d\ntrigger: { id: clarify_requested }\n");
}

#[test]
fn undeclared_trigger_points_at_declared_triggers_with_a_fix() {
    let (d, text) = diags("title: t\ndescription: d\ntrigger: { id: email_rply }\n");
    let d = d.iter().find(|d| d.code.code == "WFX301").unwrap();
    assert!(
        d.message.ends_with("; did you mean `email_reply`?"),
        "{}",
        d.message
    );
    let related: Vec<(&str, &str)> = d
        .related
        .iter()
        .map(|r| (r.file.as_str(), r.message.as_str()))
        .collect();
    assert_eq!(
        related,
        vec![
            (
                "workflows/w/workflow.yaml",
                "trigger `manual` is declared by state `start`"
            ),
            (
                "workflows/w/workflow.yaml",
                "trigger `email_reply` is declared by state `start`"
            ),
            (
                "workflows/w/workflow.yaml",
                "trigger `clarify_requested` is declared by state `wait`"
            ),
        ]
    );
    // The related ranges cover the trigger keys in workflow.yaml.
    let fx = fixture(&format!("{WF}#- {CASE}\n"));
    let wf_text = &fx
        .texts
        .iter()
        .find(|(p, _)| p == "workflows/w/workflow.yaml")
        .unwrap()
        .1;
    assert_eq!(&wf_text[d.related[1].range.as_usize()], "email_reply");
    assert_eq!(
        apply_fix(d, &text),
        "title: t\ndescription: d\ntrigger: { id: email_reply }\n"
    );
}

#[test]
fn missing_fixture_and_unseedable_paths() {
    check_file_diagnostics(
        &format!(
            "{WF}#- workflows/w/tests/fixtures/order.json\n{{}}\n#- {CASE}\n{}",
            r#"title: t
description: d
workspace:
  scratchpad/order.json: { from: fixtures/order.json }
  scratchpad/other.json: { from: ./fixtures//other.json }
#                                ^^^^^^^^^^^^^^^^^^^^^^ error WFX302: workspace entry `scratchpad/other.json` references `from: ./fixtures//other.json`, but `workflows/w/tests/fixtures/other.json` does not exist
  trigger.json: { company: Acme }
  /scratchpad/x.txt: fine
  skills/order-data/assets/orders.json: []
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error WFX307: cannot seed `skills/order-data/assets/orders.json`: it lies under a read-only authored mount (`skills/…`, `AGENTS.md`), the `authored` zone
  AGENTS.md: hi
# ^^^^^^^^^ error WFX307: the `authored` zone
  ../up.txt: x
# ^^^^^^^^^ error WFX307: the `escapes` zone
  ".": x
# ^^^ error WFX307: the `root` zone
  artifacts/trail.json: x
# ^^^^^^^^^^^^^^^^^^^^ error WFX307: the `run-internal` zone
  conversation_history/a: x
# ^^^^^^^^^^^^^^^^^^^^^^ error WFX307: the `run-offload` zone
"#
        ),
        CASE,
    );
}

#[test]
fn asserted_states_must_exist() {
    check_case(
        r#"title: t
description: d
steps:
  - send: hi
  - reachedState: revew
#                 ^^^^^ error WFX303: `reachedState` names state `revew`, which workflow `w` does not declare; did you mean `review`?
  - parked: { state: nowhere }
#                    ^^^^^^^ error WFX303: `parked.state` names state `nowhere`
  - trail: { to: "dne", count: 0 }
#                ^^^^^ error WFX303: `trail.to` names state `dne`
  - reachedState: review
  - parked: { channel: decision, state: review }
  - trail: { to: done, count: 1 }
"#,
    );
}

#[test]
fn unknown_state_fix_replaces_the_value() {
    let (d, text) =
        diags("title: t\ndescription: d\nsteps:\n  - send: hi\n  - reachedState: \"revew\"\n");
    let d = d.iter().find(|d| d.code.code == "WFX303").unwrap();
    assert!(apply_fix(d, &text).ends_with("  - reachedState: review\n"));
}

#[test]
fn decide_targets() {
    check_case(
        r#"title: t
description: d
steps:
  - send: hi
  - decide: { to: dnoe }
#                 ^^^^ error WFX304: `decide.to` names state `dnoe`, which workflow `w` does not declare; did you mean `done`?
  - decide: { to: wait }
#                 ^^^^ error WFX305: `decide.to` is `wait`, but no human state of workflow `w` has a transition to it (decision targets: done, start)
  - decide: { to: done }
  - decide: { to: start, comment: again }
"#,
    );
}

#[test]
fn decide_not_an_edge_points_at_the_human_transitions() {
    let (d, _) =
        diags("title: t\ndescription: d\nsteps:\n  - send: hi\n  - decide: { to: review }\n");
    let d = d.iter().find(|d| d.code.code == "WFX305").unwrap();
    let related: Vec<&str> = d.related.iter().map(|r| r.message.as_str()).collect();
    assert_eq!(
        related,
        vec![
            "human state `review` transitions to `done`",
            "human state `review` transitions to `start`"
        ]
    );
    assert!(
        d.related
            .iter()
            .all(|r| r.file == "workflows/w/workflow.yaml")
    );
}

#[test]
fn decide_in_a_workflow_without_human_states() {
    check_file_diagnostics(
        r#"
#- workflows/solo/workflow.yaml
instructions: Solo.
states:
  a:
    triggers:
      manual:
    transitions:
      - { to: b, description: d }
  b:
    title: B
#- workflows/solo/tests/a.test.yaml
title: t
description: d
steps:
  - send: hi
  - decide: { to: b }
#                 ^ error WFX305: workflow `solo` has no human state
  - grade: { closedQA: polite, atLeast: 0.5 }
#   ^^^^^ warning WFX308: `grade` cannot pass: workflow `solo` declares no `tests.judge`
"#,
        "workflows/solo/tests/a.test.yaml",
    );
}

#[test]
fn ran_workflow_must_name_a_workspace_workflow() {
    check_case(
        r#"title: t
description: d
steps:
  - send: hi
  - ranWorkflow: { workflow: othr }
#                            ^^^^ error WFX306: `ranWorkflow.workflow` names `othr`, which is no workflow of this workspace (workflows: other, w); did you mean `other`?
  - ranWorkflow: { workflow: other }
  - ranWorkflow: { workflow: w, count: 0 }
"#,
    );
}

#[test]
fn case_without_workflow_gets_one_diagnostic() {
    check_file_diagnostics(
        r#"
#- workflows/lost/tests/a.test.yaml
^ error WFX309: workflow folder `workflows/lost` has no `workflow.yaml`
title: t
description: d
trigger: { id: nothing_declares_this }
steps:
  - send: hi
  - reachedState: nowhere
"#,
        "workflows/lost/tests/a.test.yaml",
    );
}

/// A workflow that does not load suppresses the case's cross-file rules, and says so once
/// (WFX309) instead of letting the case pass unchecked.
#[test]
fn unusable_workflow_suppresses_cross_file_rules() {
    check_file_diagnostics(
        r#"
#- workflows/broken/workflow.yaml
states: [unclosed
#- workflows/broken/tests/a.test.yaml
^ error WFX309: `workflows/broken/workflow.yaml` does not load (see its own diagnostics), so this case has nothing to run against and its cross-file checks did not run
title: t
description: d
trigger: { id: nothing_declares_this }
steps:
  - send: hi
  - reachedState: nowhere
"#,
        "workflows/broken/tests/a.test.yaml",
    );
}

// ---------------------------------------------------------------- helpers

#[test]
fn helper_functions() {
    assert_eq!(edit_distance("sned", "send"), 1);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("abc", ""), 3);
    assert_eq!(
        did_you_mean("reachedstate", ["send", "reachedState"]),
        Some("reachedState")
    );
    assert_eq!(did_you_mean("xyz", ["send", "decide"]), None);
    assert!(
        is_variable_name("order_id2")
            && !is_variable_name("Order")
            && !is_variable_name("1a")
            && !is_variable_name("")
    );
    assert_eq!(normalize_fixture_path("./a//b.json"), Ok("a/b.json".into()));
    assert_eq!(
        normalize_fixture_path("a/../b"),
        Err(FixturePathError::Escapes)
    );
    assert_eq!(
        normalize_fixture_path("/a"),
        Err(FixturePathError::NotRelative)
    );
    assert_eq!(
        normalize_fixture_path("./"),
        Err(FixturePathError::NotRelative)
    );
    assert_eq!(classify_seed_path("scratchpad/a"), Zone::RunOpen);
    assert_eq!(classify_seed_path("a/../scratchpad/b"), Zone::RunOpen);
    assert_eq!(classify_seed_path("a/../../b"), Zone::Escapes);
    assert_eq!(classify_seed_path("/"), Zone::Root);
    assert_eq!(classify_seed_path("_specs/x"), Zone::RunInternal);
    assert_eq!(classify_seed_path("large_tool_results"), Zone::RunOffload);
    assert_eq!(classify_seed_path("skills"), Zone::Authored);
    assert_eq!(classify_seed_path("workflows/w/x"), Zone::Run);
}

// ---------------------------------------------------------------- the example corpus

/// Loads `tests/corpus/customer-support` from disk into a [`MemFiles`] rooted at `""`;
/// panics when the corpus is missing.
fn corpus() -> (MemFiles, Vec<String>) {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/customer-support");
    assert!(
        root.is_dir(),
        "the example corpus is missing at {}",
        root.display()
    );
    let mut files = MemFiles::new();
    let mut cases = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel.ends_with(".test.yaml") {
                cases.push(rel.clone());
            }
            files.insert(rel, std::fs::read(&path).unwrap());
        }
    }
    cases.sort();
    assert!(
        cases.len() >= 9,
        "expected at least 9 case files in the corpus, found {}: {cases:?}",
        cases.len()
    );
    (files, cases)
}

#[test]
fn every_corpus_case_checks_clean() {
    let (files, cases) = corpus();
    for case in &cases {
        let d = wfx_schemas::check::check_file(&files, case);
        assert!(d.is_empty(), "{case}: {d:#?}");
    }
    // The workspace pass agrees: no diagnostic on any case file.
    let all = wfx_schemas::check::check_workspace(&files, "");
    let on_cases: Vec<_> = all
        .iter()
        .filter(|d| d.file.ends_with(".test.yaml"))
        .collect();
    assert!(on_cases.is_empty(), "{on_cases:#?}");
}

#[test]
fn corpus_case_with_a_typo_is_caught_and_fixed() {
    let (mut files, _) = corpus();
    let path = "workflows/order-lookup/tests/refund-approved.test.yaml";
    let text = String::from_utf8(files_read(&files, path)).unwrap();
    let broken = text.replace("to: refund-closed", "to: refund-closd");
    assert_ne!(broken, text);
    files.insert(path, broken.clone());
    let d = wfx_schemas::check::check_file(&files, path);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].code.code, "WFX304");
    assert_eq!(d[0].severity, Severity::Error);
    assert_eq!(apply_fix(&d[0], &broken), text);
}

fn files_read(files: &MemFiles, path: &str) -> Vec<u8> {
    use wfx_schemas::files::FileAccess;
    files.read(path).unwrap()
}

// ------------------------------------------- trigger `requires` against case `variables`

/// A workflow whose triggers have typed `requires` (FORMAT §A.5).
const WF_REQ: &str = r#"
#- workflows/w/workflow.yaml
instructions: Test workflow.
states:
  start:
    triggers:
      manual:
        requires: [order_id, { name: count, type: integer }, { name: due, type: date }, { name: anything }]
      email:
        requires: [{ name: trigger, type: integer }, { name: title, type: string }]
    transitions:
      - to: review
  review:
    type: human
    transitions:
      - to: done
  done:
    title: Done
"#;

#[track_caller]
fn check_req_case(body: &str) {
    check_file_diagnostics(&format!("{WF_REQ}#- {CASE}\n{body}"), CASE);
}

#[test]
fn case_variables_meet_the_trigger_requires() {
    check_req_case(
        r#"title: t
description: d
variables:
^^^^^^^^^ error WFX310: trigger `manual` requires `order_id`, but the case's `variables` do not set it
  count: "3"
#        ^^^ error WFX311: trigger `manual` requires `count` to be integer, but the case sets it to "3"
  due: 2026-02-30
#      ^^^^^^^^^^ error WFX311: requires `due` to be date, but the case sets it to "2026-02-30"
  anything: null
steps:
  - send: hi
"#,
    );
    // Conforming values: an untyped entry takes `null`, `3.0` is an integer (JavaScript's
    // `Number.isInteger`), a leap day is a date.
    check_req_case(
        "title: t\ndescription: d\nvariables:\n  order_id: ORD-1\n  count: 3.0\n  due: 2024-02-29\n  anything: null\nsteps:\n  - send: hi\n",
    );
    // Without a `send` nothing checks the signature.
    check_req_case("title: t\ndescription: d\n");
    // A variable seeding refuses (a bad name) stops the run first: only WFX103-style rules.
    let (d, _) = diags_with(
        WF_REQ,
        "title: t\ndescription: d\nvariables: { Bad: 1 }\nsteps:\n  - send: hi\n",
    );
    assert!(
        !d.iter()
            .any(|d| d.code.code == "WFX310" || d.code.code == "WFX311"),
        "{d:#?}"
    );
}

#[test]
fn requires_without_variables_points_at_the_first_send() {
    check_req_case(
        r#"title: t
description: d
steps:
  - send: hi
#   ^^^^ error WFX310: `order_id`, but
#   ^^^^ error WFX310: `count` (integer), but
#   ^^^^ error WFX310: `due` (date), but
#   ^^^^ error WFX310: `anything`, but
  - send: again
"#,
    );
}

#[test]
fn requires_sees_the_seeded_builtins() {
    // `trigger` is set by the harness to the trigger id (a string, whatever the case says)
    // and `title` is seeded trimmed: both as the runner's `send` does.
    let (d, _) = diags_with(
        WF_REQ,
        "title: t\ndescription: d\ntrigger: { id: email }\nvariables: { trigger: 3, title: \"  Refund \" }\nsteps:\n  - send: hi\n",
    );
    let got: Vec<(&str, &str)> = d
        .iter()
        .map(|d| (d.code.code, d.message.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![(
            "WFX311",
            "trigger `email` requires `trigger` to be integer, but the case sets it to \"email\", so the first `send` is refused and the case ends `rejected`"
        )]
    );
    let send_at = d[0].range;
    let (_, text) = diags_with(
        WF_REQ,
        "title: t\ndescription: d\ntrigger: { id: email }\nvariables: { trigger: 3, title: \"  Refund \" }\nsteps:\n  - send: hi\n",
    );
    assert_eq!(&text[send_at.as_usize()], "send");
    assert_eq!(d[0].related.len(), 1);
    assert_eq!(d[0].related[0].file, "workflows/w/workflow.yaml");
    assert_eq!(
        d[0].related[0].message,
        "`trigger` is required by trigger `email` of state `start`"
    );
}

/// The diagnostics of [`CASE`] for `body` beside `wf`, and the case text.
fn diags_with(wf: &str, body: &str) -> (Vec<Diagnostic>, String) {
    let fx = fixture(&format!("{wf}#- {CASE}\n{body}"));
    let text = fx
        .texts
        .iter()
        .find(|(p, _)| p == CASE)
        .map(|(_, t)| t.clone())
        .unwrap();
    (wfx_schemas::check::check_file(&fx.files, CASE), text)
}

// ------------------------------------------------ a seed one typo away from a name read

/// A trigger requiring `order_id`, a state requiring `approver`, and instructions that
/// reference `${{region}}` (so a `region` seed is read).
const WF_SEED: &str = r#"
#- workflows/w/workflow.yaml
instructions: Report for ${{region}}.
states:
  start:
    triggers:
      manual:
        requires: [order_id]
    requires: [approver]
    transitions:
      - to: done
        description: Done.
  done:
    title: Done
"#;

#[track_caller]
fn check_seed_case(body: &str) {
    check_file_diagnostics(&format!("{WF_SEED}#- {CASE}\n{body}"), CASE);
}

/// Issue 24, item 3 (FORMAT §B.1 `variables`, §B.4, §E.4): a seed nothing reads that is
/// one typo away from an asserted or required name is reported on its key, with a quick
/// fix renaming it.
#[test]
fn a_seed_that_misspells_an_asserted_or_required_name_is_reported() {
    check_seed_case(
        r#"title: t
description: d
variables:
  order_id: ORD-1
  compnay: Acme Corp
# ^^^^^^^ warning WFX314: `compnay` is seeded, but nothing reads it (no trigger or state requires it, no `variables` step asserts it, workflow `w` never names it); did you mean `company`?
  aprover: ada
# ^^^^^^^ warning WFX314: did you mean `approver`?
steps:
  - send: hi
  - variables: { expect: { company: Acme Corp } }
"#,
    );
    // A misspelt required name: the requirement is missing (WFX310) and the seed says why.
    check_seed_case(
        r#"title: t
description: d
variables:
^^^^^^^^^ error WFX310: requires `order_id`
  ordr_id: ORD-1
# ^^^^^^^ warning WFX314: did you mean `order_id`?
steps:
  - send: hi
"#,
    );
    let (d, text) = diags_with(
        WF_SEED,
        "title: t\ndescription: d\nvariables: { order_id: O, compnay: Acme }\nsteps:\n  - send: hi\n  - variables: { expect: { company: Acme } }\n",
    );
    let w = d.iter().find(|d| d.code.code == "WFX314").unwrap();
    assert_eq!(w.severity, Severity::Warning);
    let fix = w.fixes.first().unwrap();
    assert_eq!(fix.title, "rename the seed to `company`");
    let edit = fix.edits.first().unwrap();
    assert_eq!(
        &text[edit.range.start as usize..edit.range.end as usize],
        "compnay"
    );
    assert_eq!(edit.new_text, "company");
    // The related site is the assertion.
    let related = w.related.first().unwrap();
    assert_eq!(related.file, CASE);
    let r = related.range;
    assert_eq!(&text[r.start as usize..r.end as usize], "company");
}

/// No false claims: a seed that is read (required, asserted, named by the workflow), or
/// whose near name is seeded too, or that is near no read name, gets nothing.
#[test]
fn a_seed_that_is_read_or_far_from_every_read_name_is_not_reported() {
    for (vars, expect) in [
        // Named by the workflow (`${{region}}`), though one typo from `regions`.
        ("region: eu", "regions: eu"),
        // Both spellings seeded: the near name is seeded itself.
        ("company: x, compnay: x", "company: x"),
        // Asserted itself (and near another asserted name).
        ("compnay: x", "compnay: x, company: x"),
        // Near nothing read.
        ("ticket: x", "company: x"),
        // Built-ins, one typo from asserted names.
        ("title: Report", "titles: x"),
    ] {
        let body = format!(
            "title: t\ndescription: d\nvariables: {{ order_id: O, approver: a, {vars} }}\nsteps:\n  - send: hi\n  - variables: {{ expect: {{ {expect} }} }}\n"
        );
        let (d, _) = diags_with(WF_SEED, &body);
        assert!(d.iter().all(|d| d.code.code != "WFX314"), "{vars}: {d:#?}");
    }
}

// ------------------------------------------------ mocks and runs resumed without them

#[test]
fn mocks_with_decide_or_deliver_get_one_information() {
    let body = r#"title: t
description: d
mocks:
  - tool: send_email
    result: sent
steps:
  - send: hi
  - decide: { to: done }
#   ^^^^^^ information WFX312: `archmax test` passes no mocks to the run this `decide` resumes
  - deliver: { trigger: reply }
"#;
    check_case(body);
    let (d, text) = diags(&body.replace(
        "#   ^^^^^^ information WFX312: `archmax test` passes no mocks to the run this `decide` resumes\n",
        "",
    ));
    let d = d.iter().find(|d| d.code.code == "WFX312").unwrap();
    assert_eq!(d.severity, Severity::Information);
    let related: Vec<(&str, &str)> = d
        .related
        .iter()
        .map(|r| (&text[r.range.as_usize()], r.message.as_str()))
        .collect();
    assert_eq!(
        related,
        vec![
            (
                "mocks",
                "the case's mocks, passed by `archmax test` with `send` only"
            ),
            ("deliver", "`deliver` resumes another run without mocks"),
        ]
    );
    // No mocks (or an empty list), or no decide/deliver: nothing.
    check_case(
        "title: t\ndescription: d\nmocks: []\nsteps:\n  - send: hi\n  - decide: { to: done }\n",
    );
    check_case("title: t\ndescription: d\nsteps:\n  - send: hi\n  - decide: { to: done }\n");
    check_case(
        "title: t\ndescription: d\nmocks:\n  - tool: send_email\n    result: sent\nsteps:\n  - send: hi\n",
    );
}
