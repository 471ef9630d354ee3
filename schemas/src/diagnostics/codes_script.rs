//! Registry of `WFX5xx`: sandbox scripts, i.e. lifecycle hook scripts (`hooks/*.js`, FORMAT
//! §A.6, §E.6) and skill scripts run by `archmax_run` (`skills/*/scripts/**`, FORMAT §E.7).
//! Only declarations live here; the checks run in the runner's sandbox module, which owns the
//! JavaScript engine (`wfx_runner::sandbox::check_scripts`).

use crate::code;
use crate::diagnostics::CodeInfo;

code!(
    HOOK_FOREIGN_IMPORT,
    "WFX501",
    "hook-foreign-import",
    Error,
    "§D.2, §A.6",
    "a hook script imports from outside `@archmax-ai/harness/*`",
    "Hook scripts run in a self-contained sandbox: the only imports allowed are the \
`@archmax-ai/harness/*` type carriers, which the sandbox strips (the verdict helpers `ok`, \
`veto` and `correct` are globals). Any other import makes the reference's `validate` fail and \
the hook fail closed at run time. Inline the logic, or reach workspace files through `tools`.\n\n\
Fails:\n```js\nimport _ from \"lodash\";\nexport default async function hook() { return ok(); }\n```\n\
Passes:\n```js\nimport { defineHook } from \"@archmax-ai/harness/hooks\";\n\
export default defineHook(async ({ tools }) => ok());\n```"
);

code!(
    SCRIPT_FOREIGN_IMPORT,
    "WFX502",
    "script-foreign-import",
    Warning,
    "§E.7",
    "a skill script imports from outside `@archmax-ai/harness/*`",
    "A skill script run by `archmax_run` is evaluated as a script body, and the sandbox drops its \
import statements: an import of anything but an `@archmax-ai/harness/*` type carrier binds \
nothing, so the names it meant to import are undefined when the script runs. The reference's \
`validate` does not look at skill scripts, so this is a warning.\n\n\
Fails:\n```js\nimport { chunk } from \"lodash\";\nreturn chunk(args.items, 2);\n```\n\
Passes:\n```js\nconst out = [];\nfor (let i = 0; i < args.items.length; i += 2) out.push(args.items.slice(i, i + 2));\nreturn out;\n```"
);

code!(
    SCRIPT_SYNTAX,
    "WFX503",
    "script-syntax",
    Error,
    "§A.6, §E.6, §E.7",
    "a hook or skill script does not parse as JavaScript",
    "Hook scripts and skill scripts are compiled by the QuickJS sandbox when they run; a script \
that does not parse fails every time (a hook then rejects the transition terminally, an \
`archmax_run` call returns an error). The range is where QuickJS stopped parsing. Hooks may use \
`export default`, top-level `await` and `return`; skill scripts may use top-level `await` and \
`return`, and their last expression is their result. The check parses for at most 1,000 ms: a \
script still parsing then (one `let` of tens of thousands of names parses in quadratic time) is \
reported as not checked, at the start of the file.\n\n\
Fails:\n```js\nexport default async function hook({ tools }) {\n  return ok(;\n}\n```\n\
Passes:\n```js\nexport default async function hook({ tools }) {\n  return ok();\n}\n```"
);

code!(
    SCRIPT_TOO_LARGE,
    "WFX504",
    "script-too-large",
    Error,
    "wfx",
    "a hook or skill script is larger than 1 MiB",
    "Hook scripts and skill scripts are read with a 1 MiB bound: a larger one is refused by its size before any of it is read, so neither `check` nor the editor parses it (a 64 MiB script cost seconds and hundreds of megabytes per check, on every keystroke in `workflow.yaml`), and a run fails the hook instead of loading it. For a hook the diagnostic sits on its `script:` in `workflow.yaml`; for a skill script, on the file.\n\nFails: `script: hooks/generated.js` naming a 5 MB file.\nPasses: any script up to 1 MiB."
);

/// The `WFX5xx` codes.
pub static CODES: &[&CodeInfo] = &[
    &HOOK_FOREIGN_IMPORT_RETIRED,
    &SCRIPT_FOREIGN_IMPORT,
    &SCRIPT_SYNTAX,
    &SCRIPT_TOO_LARGE,
];

/// WFX501 is retired: the same rule is `WFX3xx` `hook-foreign-import` in the workflow's
/// cross-file rules (it sits on `workflow.yaml`, where the reference's `validate` reports it).
pub static HOOK_FOREIGN_IMPORT_RETIRED: CodeInfo = CodeInfo {
    retired: true,
    slug: "hook-foreign-import-in-script",
    ..HOOK_FOREIGN_IMPORT
};
