//! Registry of `WFX3xx (301-339)`: cross-file case rules (FORMAT §B.8, §B.10, and our own
//! case ↔ workflow checks, marked `wfx`). Only declarations live here; the checks are in
//! `rules::case_cross`.

use crate::code;
use crate::diagnostics::CodeInfo;

code!(
    CASE_UNDECLARED_TRIGGER,
    "WFX301",
    "case-undeclared-trigger",
    Error,
    "§B.10",
    "the case's `trigger.id` is declared by no state",
    "A case starts under `trigger.id`, which must be `manual` or a trigger some state of the workflow declares. `manual` always passes this check (the runtime still needs a state to declare it).\n\nFails (no state declares `email`):\n```yaml\ntrigger: { id: email }\n```\nPasses:\n```yaml\ntrigger: { id: email_reply }\n```"
);
code!(
    CASE_MISSING_FIXTURE,
    "WFX302",
    "case-missing-fixture",
    Error,
    "§B.8",
    "a `from:` fixture does not exist under `tests/`",
    "`from:` names a file relative to the workflow's `tests/` folder; the runner reads it when the case starts and fails the case when it is missing.\n\nFails (no `tests/fixtures/order.json`):\n```yaml\nworkspace:\n  scratchpad/order.json: { from: fixtures/order.json }\n```\nPasses: the same, with the file present."
);
code!(
    CASE_UNKNOWN_STATE,
    "WFX303",
    "case-unknown-state",
    Error,
    "wfx",
    "`reachedState`, `parked.state` or `trail.to` names no state of the workflow",
    "An assertion about a state the workflow does not declare can never pass (or, for `trail` with `count: 0`, passes vacuously). The reference does not check this statically.\n\nFails:\n```yaml\n- reachedState: refund-closd\n```\nPasses:\n```yaml\n- reachedState: refund-closed\n```"
);
code!(
    CASE_DECIDE_UNKNOWN_STATE,
    "WFX304",
    "case-decide-unknown-state",
    Error,
    "wfx",
    "`decide.to` names no state of the workflow",
    "A decision routes the parked session along one of its human state's transitions; a target that is not even a state is refused at run time.\n\nFails:\n```yaml\n- decide: { to: refund-closd }\n```\nPasses:\n```yaml\n- decide: { to: refund-closed }\n```"
);
code!(
    CASE_DECIDE_NOT_AN_EDGE,
    "WFX305",
    "case-decide-not-an-edge",
    Error,
    "wfx",
    "`decide.to` is no transition target of any human state",
    "A decision can only pick a declared transition of the human state the session is parked at. A state no human state transitions to can never be a decision's target. Not reported while `workflow.yaml` has shape or refine errors (it would not load, and its own errors may be what dropped the transition).\n\nFails (only `refund-review` is human, with edges to `refund-closed` and `refund-request`):\n```yaml\n- decide: { to: escalation }\n```\nPasses:\n```yaml\n- decide: { to: refund-closed }\n```"
);
code!(
    CASE_UNKNOWN_WORKFLOW,
    "WFX306",
    "case-unknown-workflow",
    Error,
    "wfx",
    "`ranWorkflow.workflow` names no workflow of the workspace",
    "`ranWorkflow` counts sub-workflow trail steps of the named child; a slug that is no folder under `workflows/` can never appear.\n\nFails:\n```yaml\n- ranWorkflow: { workflow: enrich-ordr }\n```\nPasses:\n```yaml\n- ranWorkflow: { workflow: enrich-order }\n```"
);
code!(
    CASE_UNSEEDABLE_PATH,
    "WFX307",
    "case-unseedable-path",
    Error,
    "§B.8",
    "a `workspace` path lies in a zone that cannot be seeded",
    "Seeding writes agent-visible session files only (the `run` and `run-open` zones, e.g. `trigger.json` or `scratchpad/…`). Paths that climb above the session root, name the root, fall under an authored mount (`skills/…`, `AGENTS.md`) or a runtime-owned area (`checkpoints`, `artifacts`, `_specs`, `large_tool_results`, `conversation_history`) fail the case at run time; the reference's `validate` does not catch them.\n\nFails:\n```yaml\nworkspace:\n  skills/order-data/assets/orders.json: []\n```\nPasses:\n```yaml\nworkspace:\n  scratchpad/orders.json: []\n```"
);
code!(
    CASE_GRADE_WITHOUT_JUDGE,
    "WFX308",
    "case-grade-without-judge",
    Warning,
    "§B.6",
    "`grade` in a workflow without `tests.judge`",
    "Grading is wired only when `workflow.yaml` declares `tests.judge` (even `judge: {}`); without it every `grade` step fails with score 0.\n\nFails (the workflow has no `tests.judge`):\n```yaml\n- grade: { closedQA: is polite, atLeast: 0.7 }\n```\nPasses: the same step with `tests: { judge: {} }` in workflow.yaml."
);
code!(
    CASE_WITHOUT_WORKFLOW,
    "WFX309",
    "case-without-workflow",
    Error,
    "§C.1, §D.2",
    "the case's workflow folder has no readable `workflow.yaml`",
    "A case runs against the `workflow.yaml` of the folder above its `tests/`; without it nothing can run, and the case's cross-file checks cannot run either. A `workflow.yaml` that exists but cannot be read (not valid UTF-8, an IO error, a link leaving the workspace) or does not load (a syntax error, not a mapping, over the size limit) counts as missing, so a case never passes unchecked against a workflow nobody could read.\n\nFails: `workflows/x/tests/a.test.yaml` with no `workflows/x/workflow.yaml`, or with one holding the byte `0xFF`.\nPasses: the same with a readable workflow file present."
);

code!(
    CASE_REQUIRED_VARIABLE_MISSING,
    "WFX310",
    "case-required-variable-missing",
    Error,
    "§A.5, §B.10",
    "the case's `variables` lack a name its trigger `requires`",
    "Every `send` seeds the case's `variables` (and the built-in `trigger`) and then checks them against the `requires` signature of the case's trigger (`trigger.id`, default `manual`); a name that is not set refuses the start, and the case ends `rejected` with nothing else run. This check calls the runner's own seeding and signature code, so it reports exactly what a run refuses. It is reported only when the case has a `send` step.\n\nFails (the trigger `requires: [order_id]`):\n```yaml\nvariables: { customer: ada }\nsteps:\n  - send: hi\n```\nPasses:\n```yaml\nvariables: { customer: ada, order_id: ORD-1 }\nsteps:\n  - send: hi\n```"
);
code!(
    CASE_VARIABLE_WRONG_TYPE,
    "WFX311",
    "case-variable-wrong-type",
    Error,
    "§A.5, §B.10",
    "a case variable does not have the type its trigger `requires`",
    "A typed `requires` entry (`{ name, type }`) accepts only values of that type: `null` never, `integer` a whole number, `number` a finite one, `date` a real `YYYY-MM-DD` day, `date-time` a date, time and mandatory offset; nothing is coerced, so the string `\"42\"` is no `integer`. A mismatch refuses the start at the first `send`, exactly as a run does (the same code decides both).\n\nFails (the trigger requires `{ name: due, type: date }`):\n```yaml\nvariables: { due: 2026-02-30 }\n```\nPasses:\n```yaml\nvariables: { due: 2026-02-28 }\n```"
);
code!(
    CASE_MOCKS_NOT_ON_RESUME,
    "WFX312",
    "case-mocks-not-on-resume",
    Information,
    "§B.2, §B.9",
    "`archmax test` passes no mocks to the runs `decide`/`deliver` resume",
    "`wfx-lsp test` applies a case's `mocks` to every run of its session. The reference's `archmax test` passes them only with `send`: a run resumed by a `decide` or `deliver` step gets none, so a call to a mocked tool after that step reaches the real tool there (a `wfx-lsp` decision; docs/reference.md#case-mocks). Reported once per case, at its first `decide` or `deliver` step, with the `mocks` key and any later such steps as related sites.\n\nReported:\n```yaml\nmocks:\n  - tool: send_email\n    result: sent\nsteps:\n  - send: refund ORD-1\n  - decide: { to: refund-closed }\n```\nNot reported: the same case without `mocks`, or without `decide`/`deliver`."
);

code!(
    CASE_UNSATISFIABLE,
    "WFX313",
    "case-unsatisfiable",
    Error,
    "§B.2, §B.5, §E.1–§E.5",
    "no agent can pass this case: no path through the workflow satisfies its steps in order",
    "A bounded search over the workflow graph (no execution) looks for a path that the case's actions (`send`, `decide`, `deliver`) and structural assertions (`reachedState`, `parked`, `raised`, `trail`, `triggerArrival`, `noTraversal`, `succeeded`, `variables`) accept in order. Within one model run the agent may follow edges of agent states (`archmax_advance`; entering a human state parks), park with `archmax_wait`, raise, reset, or be routed by `on_error`; a human state moves only by `decide`. Hooks count as passable, so the case is reported only when it fails for every hook outcome and every agent. Reported on the first step no path gets past, with the reason: a state unreachable from the trigger's start state, a park no path reaches, a `decide.to` that is no edge of the state the session is parked at, a count no path gives, a seeded variable expected to differ. When the search hits its bound (4,096 situations per step; 200,000 units of work, where every edge, park, raise or reset considered and every situation kept costs one unit plus one per 16 counted assertions, so the search's memory is bounded with its time) nothing is reported. `wfx-lsp scaffold` refuses such a case; `wfx-lsp test` still runs it (it fails where the run shows).\n\nAlso not reported when another error of the case (an unknown state, a `decide` target no human state routes to) already explains it, nor while `workflow.yaml` has shape or refine errors (it would not load; a typo'd `transtions:` key would otherwise make every case \"unpassable\").\n\nReported (`refund-closed` is terminal, so the second `decide` finds no park):\n```yaml\nsteps:\n  - send: refund ORD-1\n  - parked: decision\n  - decide: { to: refund-closed }\n  - decide: { to: refund-closed }\n```\nNot reported: the same case without the second `decide`."
);

code!(
    CASE_SEED_NEAR_MISS,
    "WFX314",
    "case-seed-near-miss",
    Warning,
    "§B.1, §B.4, §E.4",
    "a seeded variable nothing reads is one typo away from a name the case asserts or a trigger or state requires",
    "The case's `variables` are seeded as locked run variables at every `send`. A seed that no trigger or state `requires`, that no `variables` step asserts and that `workflow.yaml` never names (no `${{…}}` reference, `session` path or signature) is read by nothing; when its name is also within a typo (the did-you-mean distance: a third of its length) of a name the case asserts or the workflow requires, and that name is not seeded itself, it is almost certainly that name misspelt: the run never gets the value the case meant to give, and the assertion meets whatever the agent set instead. The quick fix renames the seed. A warning: the agent could still read the seed with `archmax_get_variables`.\n\nWarns:\n```yaml\nvariables: { compnay: Acme Corp }\nsteps:\n  - send: write the report\n  - variables: { expect: { company: Acme Corp } }\n```\nPasses:\n```yaml\nvariables: { company: Acme Corp }\nsteps:\n  - send: write the report\n  - variables: { expect: { company: Acme Corp } }\n```"
);

/// The codes of this file.
pub static CODES: &[&CodeInfo] = &[
    &CASE_UNDECLARED_TRIGGER,
    &CASE_MISSING_FIXTURE,
    &CASE_UNKNOWN_STATE,
    &CASE_DECIDE_UNKNOWN_STATE,
    &CASE_DECIDE_NOT_AN_EDGE,
    &CASE_UNKNOWN_WORKFLOW,
    &CASE_UNSEEDABLE_PATH,
    &CASE_GRADE_WITHOUT_JUDGE,
    &CASE_WITHOUT_WORKFLOW,
    &CASE_REQUIRED_VARIABLE_MISSING,
    &CASE_VARIABLE_WRONG_TYPE,
    &CASE_MOCKS_NOT_ON_RESUME,
    &CASE_UNSATISFIABLE,
    &CASE_SEED_NEAR_MISS,
];
