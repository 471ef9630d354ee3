//! Registry of `WFX1xx`: the case schema (FORMAT §B.0–§B.8). Only declarations live here;
//! the checks are in `rules::case`. Every code is an error unless it is one of our own
//! checks the reference lacks (marked `wfx`), which are warnings.

use crate::code;
use crate::diagnostics::CodeInfo;

code!(
    CASE_NOT_A_MAPPING,
    "WFX101",
    "case-not-a-mapping",
    Error,
    "§B.0",
    "a case document is not a mapping",
    "A case file is one YAML mapping with the keys `title`, `description`, `steps`, … An empty file, a list or a scalar is refused before anything else is checked.\n\nFails:\n```yaml\n- send: hi\n```\nPasses:\n```yaml\ntitle: Greeting\ndescription: Says hi.\nsteps:\n  - send: hi\n```"
);
code!(
    CASE_UNKNOWN_KEY,
    "WFX102",
    "case-unknown-key",
    Error,
    "§B.1, §B.7",
    "a case mapping has a key the format does not know",
    "The top level and every nested mapping with a fixed set of keys (`trigger`, mock items, the values of `decide`, `parked`, `trail`, …) are strict: an unknown key is an error. Removed keys such as `version` (case files have none) and `judge` (grading is the `grade` step) are unknown keys too. A near-miss gets a did-you-mean and a quick fix.\n\nFails:\n```yaml\ntitel: Greeting\n```\nPasses:\n```yaml\ntitle: Greeting\n```"
);
code!(
    CASE_TITLE_REQUIRED,
    "WFX103",
    "case-title-required",
    Error,
    "§B.1",
    "the case has no usable `title`",
    "`title` is a required string and must not be blank: a short one-line label for the case.\n\nFails:\n```yaml\ndescription: Says hi.\nsteps: []\n```\nPasses:\n```yaml\ntitle: Greeting\ndescription: Says hi.\n```"
);
code!(
    CASE_TITLE_MULTILINE,
    "WFX104",
    "case-title-multiline",
    Error,
    "§B.1",
    "the case `title` spans several lines",
    "`title` is one line once its ends are trimmed; the detail belongs in `description`. A `>-` folded scalar passes, because YAML folds it to one line.\n\nFails:\n```yaml\ntitle: |\n  Greeting\n  and more\n```\nPasses:\n```yaml\ntitle: Greeting\n```"
);
code!(
    CASE_TITLE_TOO_LONG,
    "WFX105",
    "case-title-too-long",
    Error,
    "§B.1",
    "the case `title` is longer than 60 characters",
    "The limit counts UTF-16 code units after every run of whitespace is collapsed to one space and the ends are trimmed, so an emoji counts 2.\n\nFails:\n```yaml\ntitle: A refund for a delivered order is approved after a human reviewed it\n```\nPasses:\n```yaml\ntitle: Refund approved after human review\n```"
);
code!(
    CASE_DESCRIPTION_REQUIRED,
    "WFX106",
    "case-description-required",
    Error,
    "§B.1",
    "the case has no usable `description`",
    "`description` is a required string, not blank: one or two sentences stating the scenario driven and what is asserted.\n\nFails:\n```yaml\ntitle: Greeting\n```\nPasses:\n```yaml\ntitle: Greeting\ndescription: Sends a greeting and expects a friendly reply.\n```"
);
code!(
    CASE_DESCRIPTION_TOO_LONG,
    "WFX107",
    "case-description-too-long",
    Error,
    "§B.1",
    "the case `description` is longer than 200 characters",
    "The limit counts UTF-16 code units after whitespace is collapsed. Longer rationale belongs in a YAML comment above the document.\n\nFails: a 250-character description.\nPasses: one or two sentences."
);
code!(
    CASE_INVALID_SKIP,
    "WFX108",
    "case-invalid-skip",
    Error,
    "§B.1",
    "`skip` is not a reason string",
    "`skip` takes a string of at least one character: the reason the case is not run.\n\nFails:\n```yaml\nskip: true\n```\nPasses:\n```yaml\nskip: flaky until the grader is pinned\n```"
);
code!(
    CASE_INVALID_TRIGGER,
    "WFX109",
    "case-invalid-trigger",
    Error,
    "§B.1",
    "`trigger` is not `{ id: <trigger id> }`",
    "`trigger` is a mapping with exactly one key, `id`, a non-empty string. A trigger carries only an id: inputs go in the case's `variables`.\n\nFails:\n```yaml\ntrigger: report_requested\n```\nPasses:\n```yaml\ntrigger: { id: report_requested }\n```"
);
code!(
    CASE_INVALID_VARIABLES,
    "WFX110",
    "case-invalid-variables",
    Error,
    "§B.1",
    "`variables` is not a mapping",
    "`variables` maps run-variable names to values; they are seeded, locked, on every driven turn.\n\nFails:\n```yaml\nvariables: [company]\n```\nPasses:\n```yaml\nvariables:\n  company: Acme Corp\n```"
);
code!(
    CASE_VARIABLE_NAME,
    "WFX111",
    "case-variable-name",
    Error,
    "§A.3, §B.1, §B.2",
    "a run-variable name is not lowercase snake case",
    "Names in `variables` and in `deliver.variables` match `^[a-z][a-z0-9_]*$`: lowercase letters, digits and underscores, starting with a letter.\n\nFails:\n```yaml\nvariables:\n  orderId: ORD-1\n```\nPasses:\n```yaml\nvariables:\n  order_id: ORD-1\n```"
);
code!(
    CASE_INVALID_WORKSPACE,
    "WFX112",
    "case-invalid-workspace",
    Error,
    "§B.1",
    "`workspace` is not a mapping of non-empty paths",
    "`workspace` maps session-relative paths to content: inline content, or `{ from: <tests/-relative file> }`. Paths must be non-empty.\n\nFails:\n```yaml\nworkspace:\n  \"\": hello\n```\nPasses:\n```yaml\nworkspace:\n  scratchpad/note.txt: hello\n```"
);
code!(
    CASE_INVALID_FROM,
    "WFX113",
    "case-invalid-from",
    Error,
    "§B.1, §B.8",
    "a `from:` fixture reference is not a non-empty string",
    "A workspace entry that is a mapping with the single key `from` is a file reference; `from` takes a tests/-relative file path string.\n\nFails:\n```yaml\nworkspace:\n  scratchpad/a.json: { from: 3 }\n```\nPasses:\n```yaml\nworkspace:\n  scratchpad/a.json: { from: fixtures/a.json }\n```"
);
code!(
    CASE_FROM_ESCAPES,
    "WFX114",
    "case-from-escapes",
    Error,
    "§B.8",
    "a `from:` path climbs out of the tests folder",
    "Fixture paths are relative to the workflow's `tests/` folder and may not contain a `..` segment.\n\nFails:\n```yaml\nworkspace:\n  a.json: { from: ../secrets.json }\n```\nPasses:\n```yaml\nworkspace:\n  a.json: { from: fixtures/a.json }\n```"
);
code!(
    CASE_FROM_NOT_RELATIVE,
    "WFX115",
    "case-from-not-relative",
    Error,
    "§B.8",
    "a `from:` path is absolute or names no file",
    "Fixture paths are tests/-relative: no leading `/`, and not empty once `.` and empty segments are dropped.\n\nFails:\n```yaml\nworkspace:\n  a.json: { from: /tmp/a.json }\n```\nPasses:\n```yaml\nworkspace:\n  a.json: { from: a.json }\n```"
);
code!(
    CASE_INVALID_MOCKS,
    "WFX116",
    "case-invalid-mocks",
    Error,
    "§B.1, §B.9",
    "`mocks` is not a list of `{ tool, whenInput?, result }`",
    "`mocks` is a list; each item is a strict mapping with a non-empty `tool`, an optional `whenInput` mapping and a `result`.\n\nFails:\n```yaml\nmocks:\n  read_file: hi\n```\nPasses:\n```yaml\nmocks:\n  - tool: read_file\n    result: hi\n```"
);
code!(
    CASE_MALFORMED_REGEX,
    "WFX117",
    "case-malformed-regex",
    Error,
    "§B.2",
    "a `/…/flags` string does not compile as a JavaScript regex",
    "Reply tokens, tool-assertion `input` values, mock `whenInput` values and `raised.reason` are regexes when written `/body/flags`. The body must compile with JavaScript semantics and the flags are `d g i m s u v y`, each at most once, never both `u` and `v`. Bounded work: a pattern has at most 1,000 `|` alternatives and builds at most 100,000 units of matcher (one per character, group and class range, a case-folded class 32 more; `\\k<name>` counts every group of that name), so a hostile token is refused here rather than compiled.\n\nFails:\n```yaml\n- reply: { includes: \"/(/\" }\n```\nPasses:\n```yaml\n- reply: { includes: \"/\\\\(/\" }\n```"
);
code!(
    CASE_INVALID_STEPS,
    "WFX118",
    "case-invalid-steps",
    Error,
    "§B.1",
    "`steps` is not a list",
    "`steps` is a list of single-key mappings.\n\nFails:\n```yaml\nsteps:\n  send: hi\n```\nPasses:\n```yaml\nsteps:\n  - send: hi\n```"
);
code!(
    CASE_STEP_SHAPE,
    "WFX119",
    "case-step-shape",
    Error,
    "§B.2",
    "a step is not a single-key mapping",
    "Each step is a mapping with exactly one key: an action (`send`, `decide`, `deliver`) or an assertion. Two keys in one item usually mean a missing `-`.\n\nFails:\n```yaml\nsteps:\n  - send: hi\n    succeeded: true\n```\nPasses:\n```yaml\nsteps:\n  - send: hi\n  - succeeded: true\n```"
);
code!(
    CASE_UNKNOWN_STEP,
    "WFX120",
    "case-unknown-step",
    Error,
    "§B.2",
    "a step key is neither an action nor an assertion",
    "The known steps are the actions `send, decide, deliver` and the assertions `succeeded, usedNoTools, noTraversal, parked, raised, reachedState, triggerArrival, reply, calledTool, notCalledTool, blockedTool, ranWorkflow, trail, variables, grade`. There is no `judge` step: use `grade`.\n\nFails:\n```yaml\n- reachedstate: done\n```\nPasses:\n```yaml\n- reachedState: done\n```"
);
code!(
    CASE_INVALID_ACTION,
    "WFX121",
    "case-invalid-action",
    Error,
    "§B.2",
    "an action's value does not have an accepted shape",
    "`send` takes a non-empty string; `decide` a strict `{ to, comment? }`; `deliver` a strict `{ trigger, variables? }`.\n\nFails:\n```yaml\n- decide: refund-closed\n```\nPasses:\n```yaml\n- decide: { to: refund-closed }\n```"
);
code!(
    CASE_INVALID_ASSERTION,
    "WFX122",
    "case-invalid-assertion",
    Error,
    "§B.2",
    "an assertion's value does not have an accepted shape",
    "Each assertion accepts the forms listed in docs/reference.md#case-documents: e.g. `succeeded: true`, `parked: decision`, `trail: { kind: trigger, count: 1 }`, `grade: { closedQA, atLeast }` with `atLeast` in [0, 1].\n\nFails:\n```yaml\n- succeeded: yes please\n```\nPasses:\n```yaml\n- succeeded: true\n```"
);
code!(
    CASE_EMPTY_MATCHER,
    "WFX123",
    "case-empty-matcher",
    Error,
    "§B.2",
    "`trail`, `raised` or `reply` declares nothing to match",
    "`trail` needs at least one of `to`/`kind`/`reason`, a `raised` mapping at least one of `code`/`reason`, and `reply` at least one of `includes`/`excludes`.\n\nFails:\n```yaml\n- trail: { count: 1 }\n```\nPasses:\n```yaml\n- trail: { kind: trigger, count: 1 }\n```"
);
code!(
    CASE_ASSERTION_BEFORE_ACTION,
    "WFX124",
    "case-assertion-before-action",
    Error,
    "§B.2",
    "an assertion comes before any action",
    "An assertion reads the session view returned by the nearest action above it, so the first steps before any `send`, `decide` or `deliver` cannot be assertions.\n\nFails:\n```yaml\nsteps:\n  - succeeded: true\n  - send: hi\n```\nPasses:\n```yaml\nsteps:\n  - send: hi\n  - succeeded: true\n```"
);
code!(
    CASE_IGNORED_VARIABLE_OPTION,
    "WFX125",
    "case-ignored-variable-option",
    Warning,
    "wfx",
    "a `variables` assertion pins `path` or `locked` for a name it does not expect",
    "The `variables` assertion loops over the names in `expect` only; a `path` or `locked` entry for any other name is silently ignored by the reference, so it asserts nothing.\n\nFails:\n```yaml\n- variables:\n    expect: { company: Acme }\n    locked: { compnay: true }\n```\nPasses:\n```yaml\n- variables:\n    expect: { company: Acme }\n    locked: { company: true }\n```"
);

/// The `WFX1xx` codes.
pub static CODES: &[&CodeInfo] = &[
    &CASE_NOT_A_MAPPING,
    &CASE_UNKNOWN_KEY,
    &CASE_TITLE_REQUIRED,
    &CASE_TITLE_MULTILINE,
    &CASE_TITLE_TOO_LONG,
    &CASE_DESCRIPTION_REQUIRED,
    &CASE_DESCRIPTION_TOO_LONG,
    &CASE_INVALID_SKIP,
    &CASE_INVALID_TRIGGER,
    &CASE_INVALID_VARIABLES,
    &CASE_VARIABLE_NAME,
    &CASE_INVALID_WORKSPACE,
    &CASE_INVALID_FROM,
    &CASE_FROM_ESCAPES,
    &CASE_FROM_NOT_RELATIVE,
    &CASE_INVALID_MOCKS,
    &CASE_MALFORMED_REGEX,
    &CASE_INVALID_STEPS,
    &CASE_STEP_SHAPE,
    &CASE_UNKNOWN_STEP,
    &CASE_INVALID_ACTION,
    &CASE_INVALID_ASSERTION,
    &CASE_EMPTY_MATCHER,
    &CASE_ASSERTION_BEFORE_ACTION,
    &CASE_IGNORED_VARIABLE_OPTION,
];
