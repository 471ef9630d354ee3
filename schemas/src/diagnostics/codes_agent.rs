//! Registry of `WFX4xx`: agent scripts of the runner (`tests/*.agent.yaml`). Only declarations live here.

use crate::code;
use crate::diagnostics::CodeInfo;

code!(
    AGENT_NOT_MAPPING,
    "WFX401",
    "agent-script-not-mapping",
    Error,
    "wfx",
    "an agent script is not a mapping",
    "An agent script (`tests/<name>.agent.yaml`, read by the bundled runner's scripted agent) is a mapping with one key, `turns`.\n\nFails:\n```yaml\n- say: hi\n```\nPasses:\n```yaml\nturns:\n  - - say: hi\n```"
);
code!(
    AGENT_UNKNOWN_KEY,
    "WFX402",
    "agent-script-unknown-key",
    Error,
    "wfx",
    "an agent script has a key other than `turns`",
    "The only top-level key of an agent script is `turns`.\n\nFails:\n```yaml\nturn:\n  - - say: hi\n```\nPasses:\n```yaml\nturns:\n  - - say: hi\n```"
);
code!(
    AGENT_MISSING_TURNS,
    "WFX403",
    "agent-script-missing-turns",
    Error,
    "wfx",
    "an agent script has no `turns`",
    "`turns` lists the agent's actions for each driven model run, in order: one entry per `send` (a reply-only run while parked included) and per run resumed by `decide` or `deliver`.\n\nFails:\n```yaml\n{}\n```\nPasses:\n```yaml\nturns:\n  - - say: hi\n```"
);
code!(
    AGENT_NOT_LIST,
    "WFX404",
    "agent-turns-not-a-list",
    Error,
    "wfx",
    "`turns`, or one turn, is not a list",
    "`turns` is a list of turns and each turn is a list of actions (an empty turn is `[]` or an empty entry).\n\nFails:\n```yaml\nturns:\n  - say: hi\n```\nPasses:\n```yaml\nturns:\n  - - say: hi\n```"
);
code!(
    AGENT_ACTION_SHAPE,
    "WFX405",
    "agent-action-shape",
    Error,
    "wfx",
    "an action is not `say:` or `call:`",
    "Each action is a single-key mapping: `say: <text>` (an assistant message) or `call: {tool, input}` (a tool call).\n\nFails:\n```yaml\nturns:\n  - - sya: hi\n```\nPasses:\n```yaml\nturns:\n  - - say: hi\n```"
);
code!(
    AGENT_SAY_TEXT,
    "WFX406",
    "agent-say-not-text",
    Error,
    "wfx",
    "`say` does not take text",
    "`say` takes the assistant's message as a string.\n\nFails:\n```yaml\nturns:\n  - - say: [a, b]\n```\nPasses:\n```yaml\nturns:\n  - - say: \"a and b\"\n```"
);
code!(
    AGENT_CALL_SHAPE,
    "WFX407",
    "agent-call-shape",
    Error,
    "wfx",
    "`call` is not `{tool, input}`",
    "`call` takes a mapping with `tool` (the tool's name, a string) and optionally `input` (a mapping of arguments).\n\nFails:\n```yaml\nturns:\n  - - call: read_file\n```\nPasses:\n```yaml\nturns:\n  - - call: { tool: read_file, input: { file_path: scratchpad/a.txt } }\n```"
);
code!(
    AGENT_CALL_NEVER_ALLOWED,
    "WFX408",
    "agent-call-never-allowed",
    Warning,
    "§E.7",
    "a `call` names a tool no state of the workflow allows",
    "The tool is neither an essential tool nor a control tool, and no `tools.allow` or `tools.allow_always` entry grants it (or `tools.forbid_always` denies it), so governance blocks the call in every state. That is fine when the case asserts the block with `blockedTool`; otherwise it is usually a typo.\n\nFails (warns):\n```yaml\nturns:\n  - - call: { tool: reed_file, input: {} }\n```\nPasses:\n```yaml\nturns:\n  - - call: { tool: read_file, input: { file_path: a.txt } }\n```"
);

code!(
    AGENT_ADVANCE_UNKNOWN_STATE,
    "WFX409",
    "agent-advance-unknown-state",
    Warning,
    "§E.5",
    "an `archmax_advance` names a state the workflow does not declare",
    "`archmax_advance` moves the session along a declared transition; a target that is no state of the workflow is refused at run time (a recoverable rejection: the agent stays where it is and the script goes on), so the later steps of the script usually run in the wrong state. A warning, since a case may test the refusal on purpose; usually it is a typo.\n\nWarns:\n```yaml\nturns:\n  - - call: { tool: archmax_advance, input: { to: refund-reqest, reason: refund } }\n```\nPasses:\n```yaml\nturns:\n  - - call: { tool: archmax_advance, input: { to: refund-request, reason: refund } }\n```"
);
code!(
    AGENT_ADVANCE_NOT_AN_EDGE,
    "WFX410",
    "agent-advance-not-an-edge",
    Warning,
    "§E.5",
    "an `archmax_advance` follows no transition of the state the script is in",
    "An advance is refused unless the current state has a transition to its target. Where the script is follows from its structure: the first turn starts at an entry state of the workflow's triggers, and each advance along an edge moves on (when the runtime might refuse that advance, because of `requires`, hooks, `evidence` or a governance rule naming `archmax_advance`, the script may also still be where it was). After a park, a raise or an `archmax_run` script, and in later turns (started by the case's `decide`, `deliver` or a follow-up `send`), the place is not known statically: the advance is then reported only when no state at all has a transition to its target, and the message says which of the two it is. Not reported while `workflow.yaml` has shape or refine errors (it would not load, and its own errors may be what dropped the transition).\n\nWarns (the entry state `triage` has transitions to `refund-request` and `escalation` only):\n```yaml\nturns:\n  - - call: { tool: archmax_advance, input: { to: refund-closed, reason: done } }\n```\nPasses:\n```yaml\nturns:\n  - - call: { tool: archmax_advance, input: { to: refund-request, reason: refund } }\n```"
);

/// The `WFX4xx` codes.
pub static CODES: &[&CodeInfo] = &[
    &AGENT_NOT_MAPPING,
    &AGENT_UNKNOWN_KEY,
    &AGENT_MISSING_TURNS,
    &AGENT_NOT_LIST,
    &AGENT_ACTION_SHAPE,
    &AGENT_SAY_TEXT,
    &AGENT_CALL_SHAPE,
    &AGENT_CALL_NEVER_ALLOWED,
    &AGENT_ADVANCE_UNKNOWN_STATE,
    &AGENT_ADVANCE_NOT_AN_EDGE,
];
