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
];
