//! Fixture tests for the `workflow.yaml` rules (WFX2xx, FORMAT §A) and the cross-file
//! workflow rules (WFX340–WFX366, FORMAT §D.2), plus the customer-support corpus.

mod common;
use common::{check_diagnostics, check_file_diagnostics};

use wfx_schemas::files::{FileAccess, FileError, DirEntry};

/// Reads the real corpus under `tests/corpus/customer-support` (relative to the workspace).
struct Disk(std::path::PathBuf);

impl FileAccess for Disk {
    fn read(&self, path: &str) -> Result<Vec<u8>, FileError> {
        std::fs::read(self.0.join(path)).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => FileError::NotFound,
            _ => FileError::Other(e.to_string()),
        })
    }
    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FileError> {
        let rd = std::fs::read_dir(self.0.join(dir)).map_err(|_| FileError::NotFound)?;
        let mut v: Vec<DirEntry> = rd
            .filter_map(Result::ok)
            .map(|e| DirEntry { name: e.file_name().to_string_lossy().into_owned(), is_dir: e.path().is_dir() })
            .collect();
        v.sort();
        Ok(v)
    }
}

fn corpus() -> Disk {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/customer-support");
    assert!(
        root.join("workflows/order-lookup/workflow.yaml").is_file() && root.join("workflows/enrich-order/workflow.yaml").is_file(),
        "the customer-support corpus is missing at {}",
        root.display()
    );
    Disk(root)
}

#[test]
fn corpus_workflows_have_no_errors() {
    let fs = corpus();
    let mut lines = Vec::new();
    for path in ["workflows/enrich-order/workflow.yaml", "workflows/order-lookup/workflow.yaml"] {
        for d in wfx_schemas::check::check_file(&fs, path) {
            lines.push(format!("{path} {} {} {:?}: {}", d.severity.as_str(), d.code.code, d.range, d.message));
        }
    }
    println!("{}", lines.join("\n"));
    assert!(lines.is_empty(), "{}", lines.join("\n"));
}

const W: &str = "workflows/w/workflow.yaml";

#[track_caller]
fn check_spec(src: &str) {
    check_file_diagnostics(src, W);
}

#[test]
fn minimal_spec_is_clean() {
    check_diagnostics(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers: { manual: }
"#,
    );
}

// ---- shape (FORMAT §A.0–§A.3, §A.5, §A.6) ----

#[test]
fn wfx201_not_a_mapping() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
- states
^^^^^^^^ error WFX201: must be a YAML mapping
"#,
    );
}

#[test]
fn wfx202_unknown_key_with_did_you_mean() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers: { manual: }
    transtions: []
#   ^^^^^^^^^^ error WFX202: unknown key `transtions` in state `a`; did you mean `transitions`?
"#,
    );
}

#[test]
fn wfx203_removed_key() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
name: Order lookup
^^^^ error WFX203: `name` was removed from the workflow spec; use `title` instead
instructions: Answer.
states:
  a:
    triggers: { manual: }
"#,
    );
}

#[test]
fn wfx204_wrong_type() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
settings:
  timeoutMs: fast
#            ^^^^ error WFX204: `settings.timeoutMs` must be an integer greater than 0
states:
  a:
    triggers: { manual: }
"#,
    );
}

#[test]
fn wfx205_empty_string() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: "  "
#             ^^^^ error WFX205: `instructions` must be a non-empty string
states:
  a:
    triggers: { manual: }
"#,
    );
}

#[test]
fn wfx206_invalid_number() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers: { manual: }
    budget: { maxTurns: 0 }
#                       ^ error WFX206: `budget.maxTurns` must be an integer greater than 0
"#,
    );
}

#[test]
fn wfx207_disabled_not_boolean() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
disabled: "no"
#         ^^^^ error WFX207: fail-closed as disabled
states:
  a:
    triggers: { manual: }
"#,
    );
}

#[test]
fn wfx208_missing_states() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
^ error WFX208: has no `states`
"#,
    );
}

#[test]
fn wfx208_empty_states_is_a_document_rule() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states: {}
#       ^^ error WFX208: `states` is empty
"#,
    );
}

#[test]
fn wfx209_unknown_state_type() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    type: person
#         ^^^^^^ error WFX209: unknown state type `person`
    triggers: { manual: }
  b:
    type: wait
#         ^^^^ error WFX209: `archmax_wait`
"#,
    );
}

#[test]
fn wfx210_missing_transition_description() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers: { manual: }
    transitions:
      - to: b
#       ^^ error WFX210: non-empty `description`
      - { to: b, description: "" }
#                             ^^ error WFX210
  b:
"#,
    );
}

#[test]
fn wfx211_unknown_transition_type() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers: { manual: }
    transitions:
      - { to: b, description: Done., type: accept }
#                                          ^^^^^^ error WFX211: unknown transition type `accept`
  b:
"#,
    );
}

#[test]
fn wfx212_invalid_skill_slug() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
skills:
  allow_always: [skills/order-data]
#                ^^^^^^^^^^^^^^^^^ error WFX212: is not a skill slug
states:
  a:
    triggers: { manual: }
"#,
    );
}

#[test]
fn wfx213_invalid_variable_name() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers:
      manual: { requires: [orderId] }
#                          ^^^^^^^ error WFX213: `orderId` is not a valid run-variable name
    requires: [order_id, 1st]
#                        ^^^ error WFX213
"#,
    );
}

#[test]
fn wfx214_invalid_mount_name() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
mounts:
  forbid_always: [catalogs/*, /abs, a/../b]
#                 ^^^^^^^^^^ error WFX214: glob character
#                             ^^^^ error WFX214: starts or ends
#                                   ^^^^^^ error WFX214: `..`
states:
  a:
    triggers: { manual: }
"#,
    );
}

#[test]
fn wfx215_invalid_mount_grant() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
mounts:
  allow_always: [{ mount: data, access: write }, 3]
#                                       ^^^^^ error WFX215: unknown mount access `write`
#                                                ^ error WFX215: must be a mount name
states:
  a:
    triggers: { manual: }
"#,
    );
}

#[test]
fn wfx216_invalid_tool_entry() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
tools:
  allow_always:
    - { paths: [scratchpad/**] }
#       ^^^^^ error WFX216: must name a tool
    - { tool: grep, args: { path: 3 } }
#                                 ^ error WFX216: `args.path` must be a glob
states:
  a:
    triggers: { manual: }
"#,
    );
}

#[test]
fn wfx217_invalid_trigger_id() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers:
      manual:
      " ":
#     ^^^ error WFX217: must be non-empty
"#,
    );
}

#[test]
fn wfx218_invalid_session_path() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers:
      manual: { session: "${{conversation_id}}" }
#                        ^^^^^^^^^^^^^^^^^^^^^^ error WFX218: write the bare path
      email: { session: a..b, message: 3 }
#                       ^^^^ error WFX218: empty segment
#                                      ^ error WFX218: or `false`
      chat: { session: Conv }
#                      ^^^^ error WFX218: first segment
"#,
    );
}

#[test]
fn wfx219_invalid_signature() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers:
      manual:
        requires: order_id
#                 ^^^^^^^^ error WFX219: must be a list of run-variable names
        returns: [{ type: string }, { name: x, kind: y }]
#                   ^^^^ error WFX219: needs a `name`
#                                              ^^^^ error WFX219: declares `kind`
"#,
    );
}

#[test]
fn wfx220_unknown_signature_type() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers:
      manual: { requires: [{ name: due, type: datetime }] }
#                                             ^^^^^^^^ error WFX220: got `"datetime"`
"#,
    );
}

#[test]
fn wfx221_duplicate_signature_name() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers:
      manual: { requires: [order_id, { name: order_id }] }
#                                            ^^^^^^^^ error WFX221: `order_id` is listed more than once
"#,
    );
}

#[test]
fn wfx222_reserved_return_name() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers:
      manual: { returns: [note, trigger, summary] }
#                         ^^^^ error WFX222: `note` is reserved
#                               ^^^^^^^ error WFX222: built-in trigger variable
"#,
    );
}

#[test]
fn wfx223_refused_trigger_key() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers:
      manual: { entry: a, name: start }
#               ^^^^^ error WFX223: declares `entry`
#                         ^^^^ error WFX223: declares `name`
"#,
    );
}

#[test]
fn wfx224_invalid_hook() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers: { manual: }
    after:
      - { script: hooks/a.js, rubric: { instructions: x } }
#                             ^^^^^^ error WFX224: `rubric` is a second kind key
      - hooks/b.js
#       ^^^^^^^^^^ error WFX224: every `after` entry
      - { rubric: { instructions: x }, max_iterations: 2 }
#                                      ^^^^^^^^^^^^^^ error WFX224: goes inside `rubric`
#- workflows/w/hooks/a.js
export default async () => ok();
"#,
    );
}

#[test]
fn wfx225_invalid_hook_script_path() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers: { manual: }
    before: { script: ../shared/check.js }
#                     ^^^^^^^^^^^^^^^^^^ error WFX225: inside `hooks/`
"#,
    );
}

#[test]
fn wfx226_unknown_hook_kind_unless_declared() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
extensions:
  hooks: [webhook]
states:
  a:
    triggers: { manual: }
    after:
      - { webhook: "https://example.com" }
      - { pager: ops }
#         ^^^^^ error WFX226: unknown kind `pager`
"#,
    );
}

// ---- refine (FORMAT §A.4) ----

#[test]
fn wfx230_undefined_transition_target() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers: { manual: }
    transitions:
      - { to: dnoe, description: Done. }
#             ^^^^ error WFX230: transitions to undefined state `dnoe`; did you mean `done`?
  done:
"#,
    );
}

#[test]
fn wfx231_undefined_on_error_target() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers: { manual: }
    on_error: escalate
#             ^^^^^^^^ error WFX231: routes to undefined state `escalate`
"#,
    );
}

#[test]
fn wfx232_before_hook_budget() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers: { manual: }
    before: { script: hooks/a.js, max_iterations: 2 }
#                                 ^^^^^^^^^^^^^^ error WFX232: before hooks are ok/veto only
#- workflows/w/hooks/a.js
export default async () => ok();
"#,
    );
}

#[test]
fn wfx233_wildcard_grant() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
tools:
  allow_always: ["*"]
#                ^^^ error WFX233: `*` is not a tool name a grant may use
  forbid_always: ["*"]
states:
  a:
    triggers: { manual: }
"#,
    );
}

#[test]
fn wfx234_malformed_guard_reference() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers: { manual: }
    tools:
      allow:
        - { tool: lookup, args: { id: "${{order..id}}", note: "$${{literal}}" } }
#                                     ^^^^^^^^^^^^^^^^ error WFX234: guards `lookup` on `${{order..id}}`
"#,
    );
}

#[test]
fn wfx235_duplicate_trigger() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
  a:
    triggers: { manual: }
  b:
    triggers: { manual: }
#               ^^^^^^ error WFX235: several states declare trigger `manual` (a, b)
"#,
    );
}

#[test]
fn wfx236_no_start_state() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
states:
^^^^^^ error WFX236: no start state
  a:
"#,
    );
}

#[test]
fn wfx237_max_concurrency() {
    check_spec(
        r#"
#- workflows/w/workflow.yaml
instructions: Answer.
tests: { maxConcurrency: 4 }
#                        ^ error WFX237: above 1 is not supported
states:
  a:
    triggers: { manual: }
"#,
    );
}

#[test]
fn shape_errors_suppress_refine_and_lint() {
    // FORMAT §A.0.3: the undefined target (refine) and the missing instructions (lint) are
    // not reported while the unknown key (shape) stands.
    check_spec(
        r#"
#- workflows/w/workflow.yaml
states:
  a:
    triggers: { manual: }
    transitions: [{ to: nowhere, description: x }]
    sumary: x
#   ^^^^^^ error WFX202: did you mean `summary`?
"#,
    );
}
