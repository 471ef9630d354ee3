//! Registry of `WFX3xx (340-399)`: cross-file workflow rules (FORMAT §D.2): the workflow
//! folder, runtime contract, state slugs, hook scripts, the skills registry, governance
//! probes and sub-workflow targets. Only declarations live here; the checks are in
//! `rules::workflow_cross`.

use crate::code;
use crate::diagnostics::CodeInfo;

code!(
    WFC_MISSING_WORKFLOW,
    "WFX340",
    "missing-workflow",
    Error,
    "§A.0, §D.2",
    "a workflow folder has no `workflow.yaml`",
    "Every folder under `workflows/` is a workflow and needs its machine spec.\n\nFails: `workflows/x/tests/a.test.yaml` with no `workflows/x/workflow.yaml`.\nPasses: the folder holds `workflow.yaml`."
);
code!(
    WFC_WORKFLOW_SLUG,
    "WFX341",
    "workflow-slug",
    Error,
    "§D.2",
    "the workflow folder name is not kebab-case",
    "A workflow is identified by its `workflows/<slug>/` folder name, which follows the slug grammar `^[a-z0-9]+(-[a-z0-9]+)*$`. Put a human label in `title`.\n\nFails: `workflows/Order_Lookup/workflow.yaml`.\nPasses: `workflows/order-lookup/workflow.yaml`."
);
code!(
    WFC_UNSUPPORTED_RUNTIME,
    "WFX342",
    "unsupported-runtime",
    Error,
    "§A.1, §D.2",
    "the runtime contract is not supported",
    "`runtime.engine@runtime.version` must resolve to `archmax-harness@1` or `archmax-harness@2` (engine defaults to `archmax-harness`, version to `1`).\n\nFails:\n```yaml\nruntime: { version: 3 }\n```\nPasses:\n```yaml\nruntime: { version: \"2\" }\n```"
);
code!(
    WFC_STATE_SLUG,
    "WFX343",
    "state-slug",
    Error,
    "§A.3, §D.2",
    "a state slug is empty or not kebab-case",
    "A state's key is its identity for every transition, trigger, `archmax_advance` call and case assertion; it follows the slug grammar. Put a label in `title`.\n\nFails:\n```yaml\nstates:\n  Identify_Case:\n```\nPasses:\n```yaml\nstates:\n  identify-case:\n```"
);
code!(
    WFC_HOOK_SCRIPT_MISSING,
    "WFX344",
    "hook-script-missing",
    Error,
    "§A.6, §D.2",
    "a hook script file does not exist",
    "`script: hooks/x.js` is resolved against the workflow folder: `workflows/<slug>/hooks/x.js` must exist.\n\nFails: `before: { script: hooks/missing.js }`.\nPasses: a path to an existing file."
);
code!(
    WFC_HOOK_FOREIGN_IMPORT,
    "WFX345",
    "hook-foreign-import",
    Error,
    "§A.6, §D.2",
    "a hook script imports from outside `@archmax-ai/harness/*`",
    "Sandbox scripts are self-contained: they may import only the `@archmax-ai/harness/*` type carriers. Inline the logic or use the tools bridge.\n\nFails:\n```js\nimport fs from \"node:fs\";\n```\nPasses:\n```js\nimport { veto } from \"@archmax-ai/harness/hooks\";\n```"
);
code!(
    WFC_UNKNOWN_SKILL,
    "WFX346",
    "unknown-skill",
    Error,
    "§D.2",
    "a skills list names a skill no bundle provides",
    "Skill slugs name folders under `skills/` that hold a loadable `SKILL.md`.\n\nFails: `skills: { allow_always: [order-date] }` with only `skills/order-data/`.\nPasses: `skills: { allow_always: [order-data] }`."
);
code!(
    WFC_NO_ROOT_SKILLS,
    "WFX347",
    "no-root-skills",
    Warning,
    "§D.2",
    "the workspace has skills but the workflow declares no root `skills` block",
    "Without a root `skills` block nothing here can read a bundle or run its scripts. Write `skills: { allow_always: [] }` to say the workflow grants none workflow-wide.\n\nFails: a spec without `skills:` in a workspace with `skills/order-data/SKILL.md`.\nPasses: `skills: { allow_always: [] }`."
);
code!(
    WFC_SKILL_NAME_MISMATCH,
    "WFX348",
    "skill-name-mismatch",
    Error,
    "§D.2",
    "a `SKILL.md` `name:` disagrees with its folder, or the folder is not a slug",
    "The folder name is the slug governance uses; a different `name:` in `SKILL.md` is misleading, and a folder that is not kebab-case can never be named in a skills list.\n\nFails: `skills/order-data/SKILL.md` with `name: orders`.\nPasses: `name: order-data`."
);
code!(
    WFC_SKILL_UNLOADABLE,
    "WFX349",
    "skill-unloadable",
    Warning,
    "§D.2",
    "a skill bundle's `SKILL.md` cannot be loaded",
    "The runtime skips a bundle whose `SKILL.md` is empty, has no YAML frontmatter, or has no `description`.\n\nFails: `SKILL.md` with no `---` frontmatter.\nPasses:\n```markdown\n---\nname: order-data\ndescription: The order records.\n---\n```"
);
code!(
    WFC_TASK_NOT_GRANTABLE,
    "WFX350",
    "task-not-grantable",
    Error,
    "§D.2, §E.5",
    "an allow list grants `task`",
    "`task` is the runtime's own dispatch for grading rubrics: no state may be given it. Delegate with `archmax_workflow_<slug>` instead.\n\nFails:\n```yaml\ntools: { allow: [task] }\n```\nPasses:\n```yaml\ntools: { allow: [archmax_workflow_enrich-order] }\n```"
);
code!(
    WFC_ADVANCE_UNDEFINED_TARGET,
    "WFX351",
    "advance-undefined-target",
    Warning,
    "§D.2",
    "an `archmax_advance` guard names an undeclared state",
    "Fails:\n```yaml\ntools:\n  allow: [{ tool: archmax_advance, args: { to: dne } }]\n```\nPasses: `args: { to: done }` with a `done` state."
);
code!(
    WFC_ADVANCE_WITHOUT_EDGE,
    "WFX352",
    "advance-without-edge",
    Warning,
    "§D.2",
    "an `archmax_advance` guard names a state this state has no edge to",
    "Tool governance lets the call through, but the transition is blocked because no edge leads there.\n\nFails: `args: { to: done }` on a state without `transitions: [{ to: done, … }]`.\nPasses: add the edge."
);
code!(
    WFC_RUN_OUTSIDE_SKILL_BUNDLE,
    "WFX353",
    "run-outside-skill-bundle",
    Error,
    "§D.2, §E.7",
    "an `archmax_run` grant points outside every skill bundle",
    "`archmax_run` may only execute scripts in a skill bundle (rule `script.skill-only`), so such an entry grants nothing.\n\nFails:\n```yaml\n- { tool: archmax_run, paths: [scripts/**] }\n```\nPasses:\n```yaml\n- { tool: archmax_run, paths: [skills/order-enrichment/scripts/**] }\n```"
);
code!(
    WFC_AUTHORING_PLANE_PATH,
    "WFX354",
    "authoring-plane-path",
    Error,
    "§D.2",
    "a grant's path names `workflows/`",
    "`workflows/` (specs, rubrics, hooks, cases) is served to the harness, not routed into the agent's workspace: such a path resolves inside the run's own zone.\n\nFails:\n```yaml\n- { tool: read_file, paths: [workflows/x/workflow.yaml] }\n```\nPasses: a path in a skill bundle or `scratchpad/`."
);
code!(
    WFC_RUNTIME_OWNED_WRITE,
    "WFX355",
    "runtime-owned-write",
    Error,
    "§D.2",
    "a grant writes into a runtime-owned run area",
    "`checkpoints`, `artifacts`, `_specs`, `large_tool_results` and `conversation_history` belong to the runtime; writes there are blocked (and `tools.allow_always` may not name them at all).\n\nFails:\n```yaml\n- { tool: write_file, paths: [artifacts/**] }\n```\nPasses: `paths: [reports/**]`."
);
code!(
    WFC_AUTHORED_ZONE_WRITE,
    "WFX356",
    "authored-zone-write",
    Error,
    "§D.2, §E.7",
    "a grant writes into the read-only authored zone",
    "Skill bundles and `AGENTS.md` are authored content, read-only at run time (rule `zone.read-only`). wfx treats `skills/**` and `AGENTS.md` as authored, since the CLI validates without a mount table.\n\nFails:\n```yaml\n- { tool: write_file, paths: [skills/order-data/assets/orders.json] }\n```\nPasses: write under `scratchpad/`."
);
code!(
    WFC_SKILL_NOT_ENABLED_PATH,
    "WFX357",
    "skill-not-enabled-path",
    Error,
    "§D.2, §E.7",
    "a grant's path lies inside a skill the state does not enable",
    "A path inside `skills/<slug>/` is refused unless the state enables that skill (`skills.allow_always` or its own `skills.allow`, minus forbids).\n\nFails: `- { tool: read_file, paths: [skills/refund-policy/**] }` on a state without `refund-policy`.\nPasses: add `refund-policy` to the state's `skills.allow`."
);
code!(
    WFC_FORBID_ALWAYS_DENIES_GRANT,
    "WFX358",
    "forbid-always-denies-grant",
    Error,
    "§D.2, §E.7",
    "a state allows a tool `tools.forbid_always` denies",
    "A denial beats every grant, so the state's entry is blocked everywhere.\n\nFails:\n```yaml\ntools: { forbid_always: [write_file] }\nstates:\n  a: { tools: { allow: [write_file] } }\n```\nPasses: remove one of the two."
);
code!(
    WFC_ALLOWED_AND_FORBIDDEN,
    "WFX359",
    "allowed-and-forbidden",
    Error,
    "§D.2, §E.7",
    "a state allows and forbids the same tool outright",
    "The state's unguarded `forbid` entry wins, so the grant beside it does nothing.\n\nFails:\n```yaml\ntools: { allow: [grep], forbid: [grep] }\n```\nPasses: keep one of them."
);
code!(
    WFC_SUB_WORKFLOW_SLUG,
    "WFX360",
    "sub-workflow-slug",
    Error,
    "§D.2, §E.9",
    "an `archmax_workflow_<slug>` target is not kebab-case",
    "The target of a delegation is a workflow folder name.\n\nFails: `archmax_workflow_Enrich_Order`.\nPasses: `archmax_workflow_enrich-order`."
);
code!(
    WFC_SUB_WORKFLOW_CYCLE,
    "WFX361",
    "sub-workflow-cycle",
    Error,
    "§D.2, §E.9",
    "a delegation chain runs a workflow that is already running",
    "A cycle of delegations (`a → b → a`) would never terminate.\n\nFails: `a` allows `archmax_workflow_b` and `b` allows `archmax_workflow_a`.\nPasses: an acyclic chain."
);
code!(
    WFC_SUB_WORKFLOW_MISSING,
    "WFX362",
    "sub-workflow-missing",
    Error,
    "§D.2, §E.9",
    "a delegation target is missing or has no valid spec",
    "The target's `workflows/<slug>/workflow.yaml` must exist and load without errors (lint findings do not count).\n\nFails: `archmax_workflow_enrich` with no `workflows/enrich/`.\nPasses: an existing, valid target."
);
code!(
    WFC_SUB_WORKFLOW_NO_MANUAL,
    "WFX363",
    "sub-workflow-no-manual",
    Error,
    "§D.2, §E.9",
    "a delegation target declares no `manual` trigger",
    "A caller enters the target where a host would with no trigger: through `manual`.\n\nFails: a target whose only trigger is `email`.\nPasses: `triggers: { manual: }` on its start state."
);
code!(
    WFC_SUB_WORKFLOW_DISABLED,
    "WFX364",
    "sub-workflow-disabled",
    Warning,
    "§D.2, §E.9",
    "a delegation target is disabled",
    "The tool stays bound but every call is refused at run time.\n\nFails: a target with `disabled: true`.\nPasses: re-enable it or stop allowing it."
);
code!(
    WFC_SUB_WORKFLOW_TOO_DEEP,
    "WFX365",
    "sub-workflow-too-deep",
    Error,
    "§D.2, §E.9",
    "a delegation chain is deeper than the dispatcher allows",
    "Delegations nest at most 3 levels deep (`DEFAULT_SUB_WORKFLOW_DEPTH` in the reference's `src/workflow/sub-workflow.ts`); the root workflow does not count.\n\nFails: `a → b → c → d → e`.\nPasses: `a → b → c → d`."
);
code!(
    WFC_RUNTIME_AREA_GRANT,
    "WFX366",
    "runtime-area-grant",
    Error,
    "§D.2",
    "`tools.allow_always` names a path in a runtime-owned run area",
    "Run-internal (`checkpoints`, `artifacts`, `_specs`) and offload (`large_tool_results`, `conversation_history`) areas are the runtime's; a workflow-wide grant there is blocked.\n\nFails:\n```yaml\ntools:\n  allow_always: [{ tool: read_file, paths: [checkpoints/**] }]\n```\nPasses: `paths: [scratchpad/**]`."
);

/// The codes of this file.
pub static CODES: &[&CodeInfo] = &[
    &WFC_MISSING_WORKFLOW,
    &WFC_WORKFLOW_SLUG,
    &WFC_UNSUPPORTED_RUNTIME,
    &WFC_STATE_SLUG,
    &WFC_HOOK_SCRIPT_MISSING,
    &WFC_HOOK_FOREIGN_IMPORT,
    &WFC_UNKNOWN_SKILL,
    &WFC_NO_ROOT_SKILLS,
    &WFC_SKILL_NAME_MISMATCH,
    &WFC_SKILL_UNLOADABLE,
    &WFC_TASK_NOT_GRANTABLE,
    &WFC_ADVANCE_UNDEFINED_TARGET,
    &WFC_ADVANCE_WITHOUT_EDGE,
    &WFC_RUN_OUTSIDE_SKILL_BUNDLE,
    &WFC_AUTHORING_PLANE_PATH,
    &WFC_RUNTIME_OWNED_WRITE,
    &WFC_AUTHORED_ZONE_WRITE,
    &WFC_SKILL_NOT_ENABLED_PATH,
    &WFC_FORBID_ALWAYS_DENIES_GRANT,
    &WFC_ALLOWED_AND_FORBIDDEN,
    &WFC_SUB_WORKFLOW_SLUG,
    &WFC_SUB_WORKFLOW_CYCLE,
    &WFC_SUB_WORKFLOW_MISSING,
    &WFC_SUB_WORKFLOW_NO_MANUAL,
    &WFC_SUB_WORKFLOW_DISABLED,
    &WFC_SUB_WORKFLOW_TOO_DEEP,
    &WFC_RUNTIME_AREA_GRANT,
];
