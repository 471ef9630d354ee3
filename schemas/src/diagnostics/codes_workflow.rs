//! Registry of `WFX2xx`: one `workflow.yaml` on its own (FORMAT §A): shape (§A.0–§A.3,
//! §A.5, §A.6), document rules (§A.4), lint (§A.7) and `WORKFLOW.md` (§A.0.5). Only
//! declarations live here; the checks are in `rules::workflow`. 201–229 shape (227: guard globs over the matcher's bounds), 230–239
//! refine, 240–259 lint, 260– companions.

use crate::code;
use crate::diagnostics::CodeInfo;

code!(
    WF_NOT_A_MAPPING,
    "WFX201",
    "workflow-not-a-mapping",
    Error,
    "§A.0",
    "the workflow spec is not a YAML mapping",
    "`workflow.yaml` must be a mapping of keys; an empty file, a scalar or a list is refused and nothing else is checked.\n\nFails:\n```yaml\n- states\n```\nPasses:\n```yaml\nstates:\n  done:\n```"
);
code!(
    WF_UNKNOWN_KEY,
    "WFX202",
    "unknown-key",
    Error,
    "§A.0, §A.1, §A.2",
    "a strict mapping has a key it does not take",
    "Every mapping of the spec except `metadata` and trigger declarations is strict: an unknown key is an error. A near miss gets a did-you-mean fix.\n\nFails:\n```yaml\nstates:\n  review:\n    transtions: []\n```\nPasses:\n```yaml\nstates:\n  review:\n    transitions: []\n```"
);
code!(
    WF_REMOVED_KEY,
    "WFX203",
    "removed-key",
    Error,
    "§D.3",
    "a key the format removed",
    "Older specs used keys that are now unknown: `name` (now `title`), `description` (now `instructions`), `policy` (now `forbid_always`), root `skills.allow` (now `skills.allow_always`), `max_corrections` (now `max_iterations`), the `subagent` hook (now `rubric`), and the state shapes `type: wait`, `type: trigger`, `workflow:`, `for_each:`, `parallel:`, transition `on:`. The message names the replacement; renames come with a fix.\n\nFails:\n```yaml\nname: Order lookup\n```\nPasses:\n```yaml\ntitle: Order lookup\n```"
);
code!(
    WF_WRONG_TYPE,
    "WFX204",
    "wrong-type",
    Error,
    "§A.1–§A.3",
    "a value has the wrong type",
    "Each key takes one type: a string, a boolean, a list or a mapping. `null` is accepted only where the key reference (docs/reference.md) says so (a state body, a trigger declaration, `settings.maxPtcCalls`).\n\nFails:\n```yaml\nsettings:\n  timeoutMs: fast\n```\nPasses:\n```yaml\nsettings:\n  timeoutMs: 15000\n```"
);
code!(
    WF_EMPTY_STRING,
    "WFX205",
    "empty-string",
    Error,
    "§A.1–§A.5",
    "a string that must say something is empty",
    "`instructions`, a state `title`, a model id, `on_error`, a transition `to`, a trigger `connection` and `description` must be non-empty after trimming.\n\nFails:\n```yaml\ninstructions: \"  \"\n```\nPasses:\n```yaml\ninstructions: Look up orders.\n```"
);
code!(
    WF_INVALID_NUMBER,
    "WFX206",
    "invalid-number",
    Error,
    "§A.1, §A.2, §A.6",
    "a number is out of range or not an integer",
    "Budgets, timeouts and limits are integers: most must be greater than 0, `maxPtcCalls` and `max_iterations` at least 0, `temperature` a number at least 0.\n\nFails:\n```yaml\nbudget:\n  maxTurns: 0\n```\nPasses:\n```yaml\nbudget:\n  maxTurns: 12\n```"
);
code!(
    WF_DISABLED_NOT_BOOLEAN,
    "WFX207",
    "disabled-not-boolean",
    Error,
    "§A.1",
    "`disabled` is not `true` or `false`",
    "The runtime reads any `disabled` value other than absent, `null` or `false` as disabled (fail-closed), so a string such as `\"no\"` silently disables the workflow. Only booleans are accepted.\n\nFails:\n```yaml\ndisabled: \"no\"\n```\nPasses:\n```yaml\ndisabled: false\n```"
);
code!(
    WF_MISSING_STATES,
    "WFX208",
    "missing-states",
    Error,
    "§A.1, §A.4",
    "`states` is missing, not a mapping, or empty",
    "A workflow is its states: `states` is required and must map at least one slug to a state.\n\nFails:\n```yaml\ntitle: x\n```\nPasses:\n```yaml\nstates:\n  answer:\n    triggers: { manual: }\n```"
);
code!(
    WF_UNKNOWN_STATE_TYPE,
    "WFX209",
    "unknown-state-type",
    Error,
    "§A.2",
    "a state `type` is not `agent` or `human`",
    "A state is model-driven (`agent`, the default) or decided by a person (`human`). `type: wait` and `type: trigger` were removed (see WFX203).\n\nFails:\n```yaml\ntype: person\n```\nPasses:\n```yaml\ntype: human\n```"
);
code!(
    WF_MISSING_TRANSITION_DESCRIPTION,
    "WFX210",
    "missing-transition-description",
    Error,
    "§A.2",
    "a transition has no description",
    "The description is the only thing the agent learns about an edge; an undescribed edge cannot be chosen. Say when to take it, not where it goes.\n\nFails:\n```yaml\ntransitions:\n  - to: done\n```\nPasses:\n```yaml\ntransitions:\n  - to: done\n    description: The order was found.\n```"
);
code!(
    WF_UNKNOWN_TRANSITION_TYPE,
    "WFX211",
    "unknown-transition-type",
    Error,
    "§A.2",
    "a transition `type` is not approve, reject, refine or none",
    "Transition types label the edges of human states.\n\nFails:\n```yaml\ntype: accept\n```\nPasses:\n```yaml\ntype: approve\n```"
);
code!(
    WF_INVALID_SKILL_SLUG,
    "WFX212",
    "invalid-skill-slug",
    Error,
    "§A.3",
    "a skills entry is not a kebab-case slug",
    "Skill lists name bundle directories in kebab-case, never paths or globs; scope paths inside a skill with a `tools.allow` entry instead.\n\nFails:\n```yaml\nskills:\n  allow_always: [skills/order-data]\n```\nPasses:\n```yaml\nskills:\n  allow_always: [order-data]\n```"
);
code!(
    WF_INVALID_VARIABLE_NAME,
    "WFX213",
    "invalid-variable-name",
    Error,
    "§A.3, §A.5",
    "a run-variable name is malformed",
    "Run-variable names match `^[a-z][a-z0-9_]*$`: lowercase letters, digits and underscores, starting with a letter.\n\nFails:\n```yaml\nrequires: [orderId]\n```\nPasses:\n```yaml\nrequires: [order_id]\n```"
);
code!(
    WF_INVALID_MOUNT_NAME,
    "WFX214",
    "invalid-mount-name",
    Error,
    "§A.3",
    "a mount name is malformed",
    "A mount name is a relative path without glob characters (`* ? [ ] { }`), surrounding whitespace, leading or trailing `/`, or empty, `.` or `..` segments.\n\nFails:\n```yaml\nmounts:\n  forbid_always: [catalogs/*]\n```\nPasses:\n```yaml\nmounts:\n  forbid_always: [catalogs/eu]\n```"
);
code!(
    WF_INVALID_MOUNT_GRANT,
    "WFX215",
    "invalid-mount-grant",
    Error,
    "§A.3",
    "a mounts allow entry is malformed",
    "A grant is a mount name or `{ mount: <name>, access: read | read_write }`.\n\nFails:\n```yaml\nmounts:\n  allow_always: [{ mount: data, access: write }]\n```\nPasses:\n```yaml\nmounts:\n  allow_always: [{ mount: data, access: read }]\n```"
);
code!(
    WF_INVALID_TOOL_ENTRY,
    "WFX216",
    "invalid-tool-entry",
    Error,
    "§A.3",
    "an allow or forbid entry is malformed",
    "An entry is a tool name or `{ tool, args?, paths?, connection?, source? }`; `args` maps argument names to a glob or a list of globs, `paths` is a glob or a list of globs.\n\nFails:\n```yaml\ntools:\n  allow_always: [{ paths: [scratchpad/**] }]\n```\nPasses:\n```yaml\ntools:\n  allow_always: [{ tool: write_file, paths: [scratchpad/**] }]\n```"
);
code!(
    WF_INVALID_TRIGGER_ID,
    "WFX217",
    "invalid-trigger-id",
    Error,
    "§A.5",
    "a trigger id is empty",
    "Trigger ids may hold any characters but must be non-empty after trimming.\n\nFails:\n```yaml\ntriggers:\n  \" \":\n```\nPasses:\n```yaml\ntriggers:\n  manual:\n```"
);
code!(
    WF_INVALID_SESSION_PATH,
    "WFX218",
    "invalid-session-path",
    Error,
    "§A.5",
    "a trigger `session` or `message` path is malformed",
    "`session` and `message` are dotted paths over the run's variables: the first segment is a variable name, no segment is empty, and no `${{…}}` reference is written. `message` may also be `false`.\n\nFails:\n```yaml\nsession: ${{conversation_id}}\n```\nPasses:\n```yaml\nsession: conversation_id\n```"
);
code!(
    WF_INVALID_SIGNATURE,
    "WFX219",
    "invalid-signature",
    Error,
    "§A.5",
    "a trigger `requires` or `returns` list is malformed",
    "A signature is a list of bare variable names or `{ name, type?, description? }` entries.\n\nFails:\n```yaml\nrequires: order_id\n```\nPasses:\n```yaml\nrequires: [order_id, { name: due, type: date }]\n```"
);
code!(
    WF_UNKNOWN_SIGNATURE_TYPE,
    "WFX220",
    "unknown-signature-type",
    Error,
    "§A.5",
    "a signature entry `type` is not a known type",
    "Types are `string`, `integer`, `number`, `boolean`, `date`, `date-time`, `object` and `array`.\n\nFails:\n```yaml\nrequires: [{ name: due, type: datetime }]\n```\nPasses:\n```yaml\nrequires: [{ name: due, type: date-time }]\n```"
);
code!(
    WF_DUPLICATE_SIGNATURE_NAME,
    "WFX221",
    "duplicate-signature-name",
    Error,
    "§A.5",
    "a signature lists a name twice",
    "Each name appears once per `requires` or `returns` list, whichever spelling is used.\n\nFails:\n```yaml\nrequires: [order_id, { name: order_id }]\n```\nPasses:\n```yaml\nrequires: [order_id]\n```"
);
code!(
    WF_RESERVED_RETURN_NAME,
    "WFX222",
    "reserved-return-name",
    Error,
    "§A.5",
    "`returns` names a reserved variable",
    "`trigger` and `title` are built-in locked variables and `note` carries the unset-returns notice of a sub-run, so none may be declared as a return.\n\nFails:\n```yaml\nreturns: [note]\n```\nPasses:\n```yaml\nreturns: [summary]\n```"
);
code!(
    WF_REFUSED_TRIGGER_KEY,
    "WFX223",
    "refused-trigger-key",
    Error,
    "§A.5",
    "a trigger declaration says `entry` or `name`",
    "The state a declaration sits on is its entry state, and the key it sits under is its id; `entry` and `name` are refused.\n\nFails:\n```yaml\ntriggers:\n  manual: { entry: intake }\n```\nPasses:\n```yaml\ntriggers:\n  manual:\n```"
);
code!(
    WF_INVALID_HOOK,
    "WFX224",
    "invalid-hook",
    Error,
    "§A.6",
    "a hook is not a single-kind tagged mapping",
    "A hook is `{ script: hooks/<file>.js }`, `{ rubric: { instructions } }` or `{ <custom-kind>: <target> }`, each with an optional `max_iterations` (inside `rubric` for a rubric).\n\nFails:\n```yaml\nafter:\n  - script: hooks/a.js\n    rubric: { instructions: x }\n```\nPasses:\n```yaml\nafter:\n  - script: hooks/a.js\n```"
);
code!(
    WF_INVALID_HOOK_SCRIPT_PATH,
    "WFX225",
    "invalid-hook-script-path",
    Error,
    "§A.6",
    "a hook script path is not `hooks/<file>.js`",
    "Hook scripts live in the workflow's `hooks/` folder: the path matches `^hooks/[^/].*\\.(js|mjs)$` and has no `..` segment. Scripts the agent runs with `archmax_run` live in a skill bundle instead.\n\nFails:\n```yaml\nbefore: { script: ../shared/check.js }\n```\nPasses:\n```yaml\nbefore: { script: hooks/check.js }\n```"
);
code!(
    WF_UNKNOWN_HOOK_KIND,
    "WFX226",
    "unknown-hook-kind",
    Error,
    "§A.6, §D.2",
    "a custom hook kind is not declared under `extensions.hooks`",
    "The built-in kinds are `script` and `rubric`. A custom kind needs an executor registered by the host, declared under `extensions.hooks`.\n\nFails:\n```yaml\nafter: { webhook: https://example.com }\n```\nPasses:\n```yaml\nextensions:\n  hooks: [webhook]\n```"
);
code!(
    WF_GLOB_OVER_BOUND,
    "WFX227",
    "glob-over-bound",
    Error,
    "§A.3, §E.7",
    "a guard glob is over a bound of the glob matcher",
    "Guard globs (`paths` and path arguments of `tools.allow` / `tools.forbid` entries) expand their `{a,b}` groups before matching. A glob may nest groups at most 8 deep, expand to at most 1,024 alternatives and hold at most 16,384 characters in all; beyond that it cannot be matched in bounded time, and at run time every call it guards is blocked (fail closed, for allow and forbid entries alike).\n\nFails:\n```yaml\ntools:\n  allow:\n    - tool: read_file\n      paths: [\"{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}\"]\n```\nPasses:\n```yaml\ntools:\n  allow:\n    - tool: read_file\n      paths: [\"{a,b}/**\"]\n```"
);
code!(
    WF_UNDEFINED_TRANSITION_TARGET,
    "WFX230",
    "undefined-transition-target",
    Error,
    "§A.2, §A.4",
    "a transition goes to an undeclared state",
    "`to` must name a key of `states`.\n\nFails:\n```yaml\ntransitions:\n  - { to: dne, description: x }\n```\nPasses: a `to` naming a declared state."
);
code!(
    WF_UNDEFINED_ON_ERROR_TARGET,
    "WFX231",
    "undefined-on-error-target",
    Error,
    "§A.4",
    "`on_error` names an undeclared state",
    "The error route must name a key of `states`.\n\nFails:\n```yaml\non_error: escalate\n```\nPasses: `on_error: escalation` with an `escalation` state."
);
code!(
    WF_BEFORE_HOOK_BUDGET,
    "WFX232",
    "before-hook-budget",
    Error,
    "§A.4",
    "a `before` hook declares `max_iterations`",
    "Before hooks are ok/veto only (`correct` counts as a veto); the correction budget applies to `after` hooks.\n\nFails:\n```yaml\nbefore: { script: hooks/a.js, max_iterations: 2 }\n```\nPasses:\n```yaml\nafter: { script: hooks/a.js, max_iterations: 2 }\n```"
);
code!(
    WF_WILDCARD_GRANT,
    "WFX233",
    "wildcard-grant",
    Error,
    "§A.3, §A.4",
    "`*` is used as a tool name in an allow list",
    "An allow list names tools one by one; the every-tool wildcard belongs on the forbid side, where it can only deny.\n\nFails:\n```yaml\ntools:\n  allow_always: [\"*\"]\n```\nPasses:\n```yaml\ntools:\n  forbid_always: [\"*\"]\n```"
);
code!(
    WF_MALFORMED_GUARD_REFERENCE,
    "WFX234",
    "malformed-guard-reference",
    Error,
    "§A.3, §A.4",
    "a `${{…}}` reference in a guard is malformed",
    "Guard globs may embed `${{name}}` or `${{name.path}}`: no empty segment, and the name is a run-variable name. Write `$${{…}}` for the literal text.\n\nFails:\n```yaml\n- { tool: read_file, paths: [\"orders/${{}}.json\"] }\n```\nPasses:\n```yaml\n- { tool: read_file, paths: [\"orders/${{order_id}}.json\"] }\n```"
);
code!(
    WF_DUPLICATE_TRIGGER,
    "WFX235",
    "duplicate-trigger",
    Error,
    "§A.4",
    "two states declare the same trigger id",
    "A trigger names one start state, so an id may be declared by one state only (`manual` included).\n\nFails:\n```yaml\nstates:\n  a: { triggers: { manual: } }\n  b: { triggers: { manual: } }\n```\nPasses: each id on one state."
);
code!(
    WF_NO_START_STATE,
    "WFX236",
    "no-start-state",
    Error,
    "§A.4",
    "no state declares a trigger",
    "A run starts in the state that declares the trigger it was started with; with no `triggers` anywhere it cannot start.\n\nFails:\n```yaml\nstates:\n  a:\n```\nPasses:\n```yaml\nstates:\n  a: { triggers: { manual: } }\n```"
);
code!(
    WF_MAX_CONCURRENCY_UNSUPPORTED,
    "WFX237",
    "max-concurrency-unsupported",
    Error,
    "§A.4",
    "`tests.maxConcurrency` is above 1",
    "Case concurrency is not implemented; cases run one after another.\n\nFails:\n```yaml\ntests: { maxConcurrency: 4 }\n```\nPasses:\n```yaml\ntests: { maxConcurrency: 1 }\n```"
);
code!(
    WF_MISSING_INSTRUCTIONS,
    "WFX240",
    "missing-instructions",
    Warning,
    "§A.7",
    "the workflow has no top-level `instructions`",
    "The top-level instructions are the standing direction of every run.\n\nFails: a spec without `instructions`.\nPasses:\n```yaml\ninstructions: Answer order questions from the order data.\n```"
);
code!(
    WF_WORKFLOW_DISABLED,
    "WFX241",
    "workflow-disabled",
    Warning,
    "§A.7",
    "the workflow is disabled",
    "`disabled: true` makes the workflow start no runs and refuses delegations to it.\n\nFails:\n```yaml\ndisabled: true\n```\nPasses: no `disabled` key."
);
code!(
    WF_REDUNDANT_ESSENTIAL_GRANT,
    "WFX242",
    "redundant-essential-grant",
    Warning,
    "§A.7",
    "`tools.allow_always` lists an essential tool",
    "Essential tools (`ls`, `read_file`, `write_file`, `edit_file`, `copy_file`, `move_file`, `remove_file`, `glob`, `grep`, `write_todos`, `archmax_eval`, `archmax_run`) are always permitted: a bare entry is redundant and a guarded one is never enforced.\n\nFails:\n```yaml\ntools:\n  allow_always: [read_file]\n```\nPasses: no such entry."
);
code!(
    WF_REDUNDANT_FORBID_ALWAYS,
    "WFX243",
    "redundant-forbid-always",
    Warning,
    "§A.7",
    "a `forbid_always` slug is also granted",
    "`skills.forbid_always` (or `mounts.forbid_always`) beats every grant, so a grant of the same name in `allow_always` or a state's `allow` does nothing.\n\nFails:\n```yaml\nskills:\n  allow_always: [order-data]\n  forbid_always: [order-data]\n```\nPasses: the slug in one list only."
);
code!(
    WF_ADVANCE_FORBIDDEN,
    "WFX244",
    "advance-forbidden",
    Error,
    "§A.7",
    "`tools.forbid_always` denies `archmax_advance` while states have transitions",
    "Without `archmax_advance` no transition can ever be taken.\n\nFails:\n```yaml\ntools:\n  forbid_always: [archmax_advance]\n```\nPasses: `forbid_always: [archmax_reset]`."
);
code!(
    WF_REDUNDANT_STATE_MODEL,
    "WFX245",
    "redundant-state-model",
    Warning,
    "§A.7",
    "a state's `model` equals `settings.model`",
    "The state inherits `settings.model` already.\n\nFails:\n```yaml\nsettings: { model: m1 }\nstates:\n  a: { model: m1 }\n```\nPasses: drop the state's `model`."
);
code!(
    WF_REDUNDANT_STATE_GRANT,
    "WFX246",
    "redundant-state-grant",
    Warning,
    "§A.7",
    "a state's skills or mounts `allow` adds nothing",
    "A state's `allow` adds to the root `allow_always`: `allow: []` beside a non-empty root list narrows nothing, and a name the root already grants is repeated (a mount narrowed to `access: read` is not).\n\nFails:\n```yaml\nskills: { allow_always: [order-data] }\nstates:\n  a: { skills: { allow: [order-data] } }\n```\nPasses: `allow: [refund-policy]`."
);
code!(
    WF_ENABLED_AND_FORBIDDEN,
    "WFX247",
    "enabled-and-forbidden",
    Warning,
    "§A.7",
    "a state both allows and forbids the same name",
    "Deny beats allow, so the grant does nothing (for tools: where the forbid entry is guarded; an unguarded one is WFX358).\n\nFails:\n```yaml\nskills: { allow: [order-data], forbid: [order-data] }\n```\nPasses: the name in one list only."
);
code!(
    WF_POINTLESS_FORBID,
    "WFX248",
    "pointless-forbid",
    Warning,
    "§A.7",
    "a state forbids a skill nothing grants it",
    "A skill is closed unless `skills.allow_always` or the state's `skills.allow` names it, so forbidding an ungranted one does nothing.\n\nFails:\n```yaml\nstates:\n  a: { skills: { forbid: [order-data] } }\n```\nPasses: forbid only what `allow_always` grants."
);
code!(
    WF_MISSING_STATE_INSTRUCTIONS,
    "WFX249",
    "missing-state-instructions",
    Warning,
    "§A.7",
    "a branching agent state has no instructions",
    "With more than one outgoing transition the agent needs guidance on which to take.\n\nFails: an agent state with two transitions and no `instructions`.\nPasses: the same state with `instructions`."
);
code!(
    WF_HUMAN_STATE_INSTRUCTIONS,
    "WFX250",
    "human-state-instructions",
    Error,
    "§A.7",
    "a human state has no instructions",
    "The instructions are what the person deciding is shown.\n\nFails:\n```yaml\nreview: { type: human, transitions: [...] }\n```\nPasses: the same with `instructions`."
);
code!(
    WF_HUMAN_STATE_TERMINAL,
    "WFX251",
    "human-state-terminal",
    Error,
    "§A.7",
    "a human state has no transitions",
    "A person decides by picking an edge; a human state without edges can never be left.\n\nFails:\n```yaml\nreview: { type: human, instructions: x }\n```\nPasses: a human state with transitions."
);
code!(
    WF_HUMAN_STATE_SELF_LOOP,
    "WFX252",
    "human-state-self-loop",
    Error,
    "§A.7",
    "a human state transitions to itself",
    "A decision must move the run on.\n\nFails:\n```yaml\nreview:\n  type: human\n  transitions: [{ to: review, description: again }]\n```\nPasses: a transition to another state."
);
code!(
    WF_HUMAN_STATE_DUPLICATE_TYPE,
    "WFX253",
    "human-state-duplicate-type",
    Error,
    "§A.7",
    "a human state has two `approve`, `reject` or `refine` edges",
    "Each decision type names one edge.\n\nFails: two transitions with `type: approve`.\nPasses: one `approve` and one `reject`."
);
code!(
    WF_HUMAN_STATE_HOOK,
    "WFX254",
    "human-state-hook",
    Error,
    "§A.7",
    "a human state declares a hook",
    "Human states are decided by a person; `before` and `after` hooks do not run there.\n\nFails:\n```yaml\nreview: { type: human, after: { script: hooks/a.js } }\n```\nPasses: no hooks on human states."
);
code!(
    WF_DUPLICATE_REQUIRES,
    "WFX255",
    "duplicate-requires",
    Warning,
    "§A.7",
    "a state lists a required variable twice",
    "Fails:\n```yaml\nrequires: [order_id, order_id]\n```\nPasses:\n```yaml\nrequires: [order_id]\n```"
);
code!(
    WF_SCRATCHPAD_GUARD,
    "WFX256",
    "scratchpad-guard",
    Warning,
    "§A.7",
    "a write grant is guarded only to `scratchpad/`",
    "`scratchpad/` is always writable, so a mutating tool's guard that lies entirely inside it constrains nothing.\n\nFails:\n```yaml\ntools:\n  allow: [{ tool: write_file, paths: [scratchpad/**] }]\n```\nPasses: no entry (scratchpad is open anyway)."
);
code!(
    WF_UNKNOWN_TRIGGER_KEY,
    "WFX257",
    "unknown-trigger-key",
    Warning,
    "§A.5, §A.7",
    "a trigger declaration has a key the SDK ignores",
    "A declaration is a loose mapping: unknown keys are kept for the host but ignored. The read keys are `session`, `message`, `connection`, `description`, `requires` and `returns`.\n\nFails:\n```yaml\ntriggers:\n  email: { sesion: conversation_id }\n```\nPasses:\n```yaml\ntriggers:\n  email: { session: conversation_id }\n```"
);
code!(
    WF_UNGUARANTEED_GUARD_REFERENCE,
    "WFX258",
    "unguaranteed-guard-reference",
    Warning,
    "§A.3, §A.7",
    "a guard references a variable no state or trigger requires",
    "An unset reference blocks the call (fail-closed). A name is guaranteed when it is `trigger`, or named by a state's or a trigger's `requires`.\n\nFails:\n```yaml\n- { tool: read_file, paths: [\"orders/${{order_id}}.json\"] }\n```\nPasses: the same with `requires: [order_id]` on the state."
);
code!(
    WF_WORKFLOW_MD_FRONTMATTER,
    "WFX260",
    "workflow-md-frontmatter",
    Error,
    "§A.0",
    "`WORKFLOW.md` has YAML frontmatter",
    "`workflow.yaml` is the machine spec; `WORKFLOW.md` beside it is prose only, so frontmatter there declares a competing machine.\n\nFails:\n```markdown\n---\nstates: {}\n---\n# Notes\n```\nPasses:\n```markdown\n# Notes\n```"
);
code!(
    WF_SANDBOX_BUDGET_ABOVE_CEILING,
    "WFX261",
    "sandbox-budget-above-ceiling",
    Warning,
    "§A.1",
    "a sandbox budget in `settings` (or `tests.caseTimeoutMs`) is above the runner's ceiling",
    "`settings.timeoutMs` and `settings.memoryLimitBytes` budget each hook and `archmax_run` script run, and `tests.caseTimeoutMs` each case. A workflow may lower them, but `wfx-lsp test` never lets a workflow raise them past its ceilings (30,000 ms and 268,435,456 bytes, 256 MiB, per script run; 600,000 ms, 10 minutes, per case): a larger value is clamped to the ceiling when cases run.\n\nWarns:\n```yaml\nsettings: { timeoutMs: 600000 }\n```\nPasses:\n```yaml\nsettings: { timeoutMs: 10000 }\n```"
);

/// The `WFX2xx` codes.
pub static CODES: &[&CodeInfo] = &[
    &WF_NOT_A_MAPPING,
    &WF_UNKNOWN_KEY,
    &WF_REMOVED_KEY,
    &WF_WRONG_TYPE,
    &WF_EMPTY_STRING,
    &WF_INVALID_NUMBER,
    &WF_DISABLED_NOT_BOOLEAN,
    &WF_MISSING_STATES,
    &WF_UNKNOWN_STATE_TYPE,
    &WF_MISSING_TRANSITION_DESCRIPTION,
    &WF_UNKNOWN_TRANSITION_TYPE,
    &WF_INVALID_SKILL_SLUG,
    &WF_INVALID_VARIABLE_NAME,
    &WF_INVALID_MOUNT_NAME,
    &WF_INVALID_MOUNT_GRANT,
    &WF_INVALID_TOOL_ENTRY,
    &WF_INVALID_TRIGGER_ID,
    &WF_INVALID_SESSION_PATH,
    &WF_INVALID_SIGNATURE,
    &WF_UNKNOWN_SIGNATURE_TYPE,
    &WF_DUPLICATE_SIGNATURE_NAME,
    &WF_RESERVED_RETURN_NAME,
    &WF_REFUSED_TRIGGER_KEY,
    &WF_INVALID_HOOK,
    &WF_INVALID_HOOK_SCRIPT_PATH,
    &WF_UNKNOWN_HOOK_KIND,
    &WF_GLOB_OVER_BOUND,
    &WF_UNDEFINED_TRANSITION_TARGET,
    &WF_UNDEFINED_ON_ERROR_TARGET,
    &WF_BEFORE_HOOK_BUDGET,
    &WF_WILDCARD_GRANT,
    &WF_MALFORMED_GUARD_REFERENCE,
    &WF_DUPLICATE_TRIGGER,
    &WF_NO_START_STATE,
    &WF_MAX_CONCURRENCY_UNSUPPORTED,
    &WF_MISSING_INSTRUCTIONS,
    &WF_WORKFLOW_DISABLED,
    &WF_REDUNDANT_ESSENTIAL_GRANT,
    &WF_REDUNDANT_FORBID_ALWAYS,
    &WF_ADVANCE_FORBIDDEN,
    &WF_REDUNDANT_STATE_MODEL,
    &WF_REDUNDANT_STATE_GRANT,
    &WF_ENABLED_AND_FORBIDDEN,
    &WF_POINTLESS_FORBID,
    &WF_MISSING_STATE_INSTRUCTIONS,
    &WF_HUMAN_STATE_INSTRUCTIONS,
    &WF_HUMAN_STATE_TERMINAL,
    &WF_HUMAN_STATE_SELF_LOOP,
    &WF_HUMAN_STATE_DUPLICATE_TYPE,
    &WF_HUMAN_STATE_HOOK,
    &WF_DUPLICATE_REQUIRES,
    &WF_SCRATCHPAD_GUARD,
    &WF_UNKNOWN_TRIGGER_KEY,
    &WF_UNGUARANTEED_GUARD_REFERENCE,
    &WF_WORKFLOW_MD_FRONTMATTER,
    &WF_SANDBOX_BUDGET_ABOVE_CEILING,
];
