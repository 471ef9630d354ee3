//! The one table of key documentation: every case key, step key and nested key, and the
//! `workflow.yaml` keys, with what each does, its accepted forms, its role (structural or
//! content for assertions) and the FORMAT section that defines it.
//!
//! Hover and completion documentation read [`KEYS`] through [`lookup`] and [`children`];
//! `docs/reference.md` is rendered from it by [`render_reference`] (a test keeps the
//! checked-in page current). Pure data: no IO, no LSP types.
//!
//! Paths are dotted patterns over the YAML tree: a plain segment is a mapping key, `*` is
//! any key (a state slug, a trigger id), `-` is a list item, `-?` an optional list item
//! (a hook is one mapping or a list of them) and `a|b` is either key.

/// Which document a key belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocFile {
    /// A `*.test.yaml` case document (FORMAT §B).
    Case,
    /// A `workflow.yaml` (FORMAT §A).
    Workflow,
}

/// What a key is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyRole {
    /// A top-level key of a case (FORMAT §B.1).
    TopLevel,
    /// A step that drives the session: `send`, `decide`, `deliver` (FORMAT §B.2).
    Action,
    /// An assertion whose failure halts the case (FORMAT §B.5).
    Structural,
    /// An assertion whose failure does not halt the case (FORMAT §B.5).
    Content,
    /// A key nested inside a case key or a step.
    Nested,
    /// A `workflow.yaml` key.
    Workflow,
}

impl KeyRole {
    /// A short label: `top-level key`, `action`, `structural assertion`, …
    pub fn label(self) -> &'static str {
        match self {
            KeyRole::TopLevel => "top-level key",
            KeyRole::Action => "action",
            KeyRole::Structural => "structural assertion",
            KeyRole::Content => "content assertion",
            KeyRole::Nested => "nested key",
            KeyRole::Workflow => "workflow key",
        }
    }
}

/// Documentation of one key.
#[derive(Debug)]
pub struct KeyDoc {
    /// The document the key belongs to.
    pub file: DocFile,
    /// The dotted path pattern (see the module docs), e.g. `steps.-.decide.to`.
    pub path: &'static str,
    /// What the key does (one or two sentences, Markdown).
    pub summary: &'static str,
    /// The accepted forms (Markdown).
    pub forms: &'static str,
    /// The role; for assertions it says whether a failure halts the case.
    pub role: KeyRole,
    /// The FORMAT section, e.g. `§B.2`.
    pub section: &'static str,
    /// The completion snippet for the key (LSP snippet syntax, without the key itself when
    /// `None`: completion then inserts `key: `). Continuation lines are indented relative to
    /// the key; completion re-indents them to the key's column.
    pub snippet: Option<&'static str>,
}

impl KeyDoc {
    /// The key itself: the last segment of the path.
    pub fn key(&self) -> &'static str {
        self.path.rsplit('.').next().unwrap_or(self.path)
    }

    /// `Some(true)` for a structural assertion (a failure halts the case), `Some(false)` for
    /// a content assertion, `None` for anything else.
    pub fn halts(&self) -> Option<bool> {
        match self.role {
            KeyRole::Structural => Some(true),
            KeyRole::Content => Some(false),
            _ => None,
        }
    }

    /// The hover / completion documentation: summary, forms, role and section.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "**`{}`** ({})\n\n{}\n\n**Accepted:** {}",
            self.key(),
            self.role.label(),
            self.summary,
            self.forms
        );
        match self.halts() {
            Some(true) => {
                s.push_str("\n\nA failure **halts the case**: later assertions are not executed.")
            }
            Some(false) => s.push_str("\n\nA failure does not halt the case."),
            None => {}
        }
        s.push_str(&format!(
            "\n\nReference: {}",
            reference_link(&self.anchor(), &format!("`{}`", display_path(self.path)))
        ));
        s
    }

    /// The key's anchor in `docs/reference.md`: the document kind (`case`, `workflow`), then
    /// the displayed path's words joined by `-`, lower-case (`case-steps-decide`,
    /// `workflow-states-kind`). Unique per key (tested).
    pub fn anchor(&self) -> String {
        let kind = match self.file {
            DocFile::Case => "case",
            DocFile::Workflow => "workflow",
        };
        let mut a = String::from(kind);
        for w in display_path(self.path)
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            a.push('-');
            a.push_str(&w.to_ascii_lowercase());
        }
        a
    }
}

/// The user documentation page the editor's hovers and completion docs link to.
pub const REFERENCE_PAGE: &str = "docs/reference.md";

/// Anchor of the regular-expression section of `docs/reference.md`.
pub const REGEX_ANCHOR: &str = "regular-expressions";

/// A Markdown link to `anchor` in `docs/reference.md`, the one way user-visible text cites the
/// documentation (issue 16: users have the project's docs, not FORMAT.md): `[label](docs/reference.md#anchor)`.
/// The target is relative on purpose: it needs no network and reads as a path in any client
/// (Neovim shows it as text); the VS Code extension points it at the copy bundled in the VSIX
/// (editors/vscode/src/docLinks.ts). docs/editors.md "Documentation links" describes the choice.
pub fn reference_link(anchor: &str, label: &str) -> String {
    format!("[{label}]({REFERENCE_PAGE}#{anchor})")
}

macro_rules! k {
    ($file:ident, $path:literal, $role:ident, $sec:literal, $summary:literal, $forms:literal) => {
        KeyDoc {
            file: DocFile::$file,
            path: $path,
            summary: $summary,
            forms: $forms,
            role: KeyRole::$role,
            section: $sec,
            snippet: None,
        }
    };
    ($file:ident, $path:literal, $role:ident, $sec:literal, $summary:literal, $forms:literal, $snip:literal) => {
        KeyDoc {
            file: DocFile::$file,
            path: $path,
            summary: $summary,
            forms: $forms,
            role: KeyRole::$role,
            section: $sec,
            snippet: Some($snip),
        }
    };
}

/// Every documented key, case keys first (top-level keys, then steps in the reference's
/// order, then nested keys), then `workflow.yaml` keys.
pub static KEYS: &[KeyDoc] = &[
    // ---- case: top-level keys (FORMAT §B.1) ----
    k!(
        Case,
        "title",
        TopLevel,
        "§B.1",
        "A short one-line label for the case.",
        "a required string; one line; at most 60 UTF-16 code units once whitespace is collapsed",
        "title: ${1:label}"
    ),
    k!(
        Case,
        "description",
        TopLevel,
        "§B.1",
        "One or two sentences stating the scenario driven and what is asserted.",
        "a required string; several lines allowed; at most 200 UTF-16 code units once whitespace is collapsed",
        "description: >-\n  ${1:the scenario driven and what is asserted}"
    ),
    k!(
        Case,
        "skip",
        TopLevel,
        "§B.1",
        "Skips the case: it is not run and its verdict is `skipped` with this reason.",
        "a string of at least one character",
        "skip: ${1:reason}"
    ),
    k!(
        Case,
        "trigger",
        TopLevel,
        "§B.1, §B.10",
        "The trigger every driven turn starts under; its declaring state is the entry state. Without it the case starts under `manual`.",
        "a mapping `{ id: <trigger id> }`; the id must be `manual` or declared by a state of the workflow",
        "trigger:\n  id: ${1:manual}"
    ),
    k!(
        Case,
        "variables",
        TopLevel,
        "§B.1, §E.4",
        "Run variables seeded **locked** on every driven turn: the firing's payload.",
        "a mapping of variable name (`^[a-z][a-z0-9_]*$`) to any YAML value",
        "variables:\n  ${1:name}: ${2:value}"
    ),
    k!(
        Case,
        "workspace",
        TopLevel,
        "§B.1, §B.8",
        "Files seeded into the session workspace before any step.",
        "a mapping of session path to inline content (strings verbatim, other values as JSON) or `{ from: <tests/-relative file> }`",
        "workspace:\n  ${1:trigger.json}: ${2:content}"
    ),
    k!(
        Case,
        "mocks",
        TopLevel,
        "§B.1, §B.9",
        "Tool mocks: the first mock whose `tool` and `whenInput` match answers the call with `result`. Only `send` passes them.",
        "a list of `{ tool, whenInput?, result }`",
        "mocks:\n  - tool: ${1:tool}\n    result: ${2:result}"
    ),
    k!(
        Case,
        "steps",
        TopLevel,
        "§B.2",
        "The actions and assertions, in order. An assertion evaluates against the nearest action above it.",
        "a list of single-key mappings",
        "steps:\n  - send: \"${1:message}\""
    ),
    k!(
        Case,
        "trigger.id",
        Nested,
        "§B.1, §B.10",
        "The trigger id the case starts with.",
        "a non-empty string: `manual` or a trigger id some state declares"
    ),
    k!(
        Case,
        "workspace.*.from",
        Nested,
        "§B.8",
        "Copies an existing fixture file into the session workspace.",
        "a non-empty path relative to the workflow's `tests/` folder, with no `..` segment; the only key of the entry"
    ),
    k!(
        Case,
        "mocks.-.tool",
        Nested,
        "§B.9",
        "The tool name the mock answers (exact match).",
        "a non-empty string"
    ),
    k!(
        Case,
        "mocks.-.whenInput",
        Nested,
        "§B.3, §B.9",
        "A partial match against the call's arguments; `/…/flags` strings match as regexes.",
        "a mapping; omitted means any input"
    ),
    k!(
        Case,
        "mocks.-.result",
        Nested,
        "§B.9",
        "What the mocked call returns: a string verbatim, anything else as compact JSON. A delegation mock returns `{ message, returns }`.",
        "any YAML value (omitted: `null`)"
    ),
    // ---- case: actions (FORMAT §B.2) ----
    k!(
        Case,
        "steps.-.send",
        Action,
        "§B.2",
        "Sends a user message; the case's trigger, variables and mocks go with every send. To a parked session it is a reply and the session stays parked.",
        "a non-empty string",
        "send: \"${1:message}\""
    ),
    k!(
        Case,
        "steps.-.decide",
        Action,
        "§B.2, §E.3",
        "Decides a human state's park as the reviewer: routes the session along the chosen edge. `archmax test` passes no mocks to the run it resumes; `wfx-lsp test` does (WFX312).",
        "a mapping `{ to: <target state>, comment?: string }`",
        "decide:\n  to: ${1:state}\n  comment: ${2:comment}"
    ),
    k!(
        Case,
        "steps.-.deliver",
        Action,
        "§B.2, §E.3",
        "Delivers an event to a session parked for input (`archmax_wait`); its variables are seeded locked. `archmax test` passes no mocks to the run it resumes; `wfx-lsp test` does (WFX312).",
        "a mapping `{ trigger: <id>, variables?: { name: value } }`",
        "deliver:\n  trigger: ${1:trigger}\n  variables:\n    ${2:name}: ${3:value}"
    ),
    // ---- case: assertions (FORMAT §B.2 table) ----
    k!(
        Case,
        "steps.-.succeeded",
        Structural,
        "§B.2",
        "The session neither failed (any unblocked tool error), nor parked, nor raised.",
        "the literal `true`",
        "succeeded: true"
    ),
    k!(
        Case,
        "steps.-.usedNoTools",
        Content,
        "§B.2",
        "No tool call at all over the whole session.",
        "the literal `true`",
        "usedNoTools: true"
    ),
    k!(
        Case,
        "steps.-.noTraversal",
        Structural,
        "§B.2",
        "The trail holds only `trigger` steps: no transition was committed (e.g. a veto at entry).",
        "the literal `true`",
        "noTraversal: true"
    ),
    k!(
        Case,
        "steps.-.parked",
        Structural,
        "§B.2, §E.3",
        "The session is parked, optionally on a channel and in a state.",
        "`true`, `decision`, `input`, or a mapping `{ channel?: decision|input, state?: <slug> }`",
        "parked: ${1|true,decision,input|}"
    ),
    k!(
        Case,
        "steps.-.raised",
        Structural,
        "§B.2, §E.5",
        "The session ended with `archmax_raise`, optionally with this code and a reason matching.",
        "`true`, the expected code, or a mapping `{ code?, reason? }` with at least one key; `reason` may be a `/regex/`",
        "raised: ${1:true}"
    ),
    k!(
        Case,
        "steps.-.reachedState",
        Structural,
        "§B.2",
        "Some non-trigger trail step entered this state.",
        "a state slug",
        "reachedState: ${1:state}"
    ),
    k!(
        Case,
        "steps.-.triggerArrival",
        Structural,
        "§B.2",
        "Some `trigger` trail step carries this trigger id (a turn start or a delivery).",
        "a trigger id",
        "triggerArrival: ${1:trigger}"
    ),
    k!(
        Case,
        "steps.-.reply",
        Content,
        "§B.2, §B.3",
        "The reply transcript includes (or excludes) each token: a plain string matches as a substring, `/…/flags` as a regex. One record per token.",
        "a mapping `{ includes?, excludes? }` with at least one; each a string or a list of strings",
        "reply:\n  includes: [\"${1:text}\"]"
    ),
    k!(
        Case,
        "steps.-.calledTool",
        Content,
        "§B.2, §B.3",
        "Some tool call has this name and its input partially matches `input` (any status counts).",
        "a mapping `{ name, input? }`",
        "calledTool:\n  name: ${1:tool}"
    ),
    k!(
        Case,
        "steps.-.notCalledTool",
        Content,
        "§B.2, §B.3",
        "No tool call has this name with a matching input.",
        "a mapping `{ name, input? }`",
        "notCalledTool:\n  name: ${1:tool}"
    ),
    k!(
        Case,
        "steps.-.blockedTool",
        Content,
        "§B.2, §E.7",
        "Some matching tool call was blocked by governance.",
        "a mapping `{ name, input? }`",
        "blockedTool:\n  name: ${1:tool}"
    ),
    k!(
        Case,
        "steps.-.ranWorkflow",
        Content,
        "§B.2, §E.9",
        "Counts `sub-workflow` trail steps of this child workflow with this status.",
        "a mapping `{ workflow, status?: ok|error (default ok), count?: int ≥ 0 }`; without `count`, at least one",
        "ranWorkflow:\n  workflow: ${1:workflow}"
    ),
    k!(
        Case,
        "steps.-.trail",
        Structural,
        "§B.2, §E.2",
        "Exactly `count` trail steps match every given field.",
        "a mapping `{ to?, kind?, reason?, count: int ≥ 0 }` with at least one of `to`/`kind`/`reason`",
        "trail:\n  to: ${1:state}\n  count: ${2:1}"
    ),
    k!(
        Case,
        "steps.-.variables",
        Structural,
        "§B.2, §B.4",
        "Each name in `expect` is set and deep-equals the value (at `path` when given); `locked` also checks the lock.",
        "a mapping `{ expect: { name: value }, path?: { name: dotted.path }, locked?: { name: bool } }`",
        "variables:\n  expect:\n    ${1:name}: ${2:value}"
    ),
    k!(
        Case,
        "steps.-.grade",
        Content,
        "§B.2, §B.6",
        "A judge model scores the session against a closed question; passes when the score is at least `atLeast`. Needs `tests.judge` in workflow.yaml.",
        "a mapping `{ closedQA: string, atLeast: number in [0, 1] }`",
        "grade:\n  closedQA: ${1:question}\n  atLeast: ${2:0.7}"
    ),
    // ---- case: nested step keys ----
    k!(
        Case,
        "steps.-.decide.to",
        Nested,
        "§B.2, §E.3",
        "The target state: a transition of the human state the session is parked in.",
        "a non-empty state slug"
    ),
    k!(
        Case,
        "steps.-.decide.comment",
        Nested,
        "§B.2, §E.3",
        "The reviewer's comment; becomes the `human` trail step's reason. An empty comment is dropped.",
        "a string"
    ),
    k!(
        Case,
        "steps.-.deliver.trigger",
        Nested,
        "§B.2",
        "The delivered trigger id (never checked against the workflow).",
        "a non-empty string"
    ),
    k!(
        Case,
        "steps.-.deliver.variables",
        Nested,
        "§B.2, §E.3",
        "Variables delivered with the event, seeded locked.",
        "a mapping of variable name to any value"
    ),
    k!(
        Case,
        "steps.-.parked.channel",
        Nested,
        "§B.2",
        "Pins the park channel.",
        "`decision` (a human state) or `input` (`archmax_wait`)"
    ),
    k!(
        Case,
        "steps.-.parked.state",
        Nested,
        "§B.2",
        "Pins the state the session is parked in.",
        "a non-empty state slug"
    ),
    k!(
        Case,
        "steps.-.raised.code",
        Nested,
        "§B.2",
        "The expected raise code (exact).",
        "a non-empty string"
    ),
    k!(
        Case,
        "steps.-.raised.reason",
        Nested,
        "§B.2, §B.3",
        "The expected raise reason: exact, or a `/regex/flags`.",
        "a non-empty string"
    ),
    k!(
        Case,
        "steps.-.reply.includes",
        Nested,
        "§B.2, §B.3",
        "Tokens the reply transcript must match.",
        "a string or a list of strings; `/…/flags` is a regex, anything else a substring"
    ),
    k!(
        Case,
        "steps.-.reply.excludes",
        Nested,
        "§B.2, §B.3",
        "Tokens the reply transcript must not match.",
        "a string or a list of strings; `/…/flags` is a regex, anything else a substring"
    ),
    k!(
        Case,
        "steps.-.calledTool|notCalledTool|blockedTool.name",
        Nested,
        "§B.2",
        "The tool name (exact).",
        "a non-empty string"
    ),
    k!(
        Case,
        "steps.-.calledTool|notCalledTool|blockedTool.input",
        Nested,
        "§B.3",
        "A partial match against the call's input; extra keys are ignored, `/…/flags` strings match as regexes.",
        "a mapping"
    ),
    k!(
        Case,
        "steps.-.ranWorkflow.workflow",
        Nested,
        "§B.2, §E.9",
        "The child workflow's slug.",
        "a non-empty string"
    ),
    k!(
        Case,
        "steps.-.ranWorkflow.status",
        Nested,
        "§B.2",
        "The status the counted dispatches ended with.",
        "`ok` (default) or `error`"
    ),
    k!(
        Case,
        "steps.-.ranWorkflow.count",
        Nested,
        "§B.2",
        "The exact number of dispatches; 0 is allowed.",
        "an integer ≥ 0"
    ),
    k!(
        Case,
        "steps.-.trail.to",
        Nested,
        "§B.2, §E.2",
        "Matches the trail step's `to` state.",
        "a string"
    ),
    k!(
        Case,
        "steps.-.trail.kind",
        Nested,
        "§B.2, §E.2",
        "Matches the trail step's kind.",
        "`trigger`, `agent`, `human`, `sub-workflow`, `reset` or `on_error` (not checked)"
    ),
    k!(
        Case,
        "steps.-.trail.reason",
        Nested,
        "§B.2, §E.2",
        "Matches the trail step's reason exactly (a trigger id for `trigger` steps).",
        "a string"
    ),
    k!(
        Case,
        "steps.-.trail.count",
        Nested,
        "§B.2",
        "How many trail steps must match.",
        "a required integer ≥ 0"
    ),
    k!(
        Case,
        "steps.-.variables.expect",
        Nested,
        "§B.4",
        "The expected values, deep-equal (key order ignored, `1` equals `1.0`).",
        "a required mapping of variable name to value"
    ),
    k!(
        Case,
        "steps.-.variables.path",
        Nested,
        "§B.4",
        "A dotted path into a variable's value (`items.-1.sku`); only names in `expect` count.",
        "a mapping of variable name to path string"
    ),
    k!(
        Case,
        "steps.-.variables.locked",
        Nested,
        "§B.4",
        "The expected lock state; only names in `expect` count.",
        "a mapping of variable name to boolean"
    ),
    k!(
        Case,
        "steps.-.grade.closedQA",
        Nested,
        "§B.6",
        "The closed question the judge answers about the session.",
        "a non-empty string"
    ),
    k!(
        Case,
        "steps.-.grade.atLeast",
        Nested,
        "§B.6",
        "The passing score threshold.",
        "a number in [0, 1]"
    ),
    // ---- workflow.yaml: root keys (FORMAT §A.1) ----
    k!(
        Workflow,
        "title",
        Workflow,
        "§A.1",
        "A human label only, never read by the runtime.",
        "a string",
        "title: ${1:label}"
    ),
    k!(
        Workflow,
        "instructions",
        Workflow,
        "§A.1",
        "Standing direction for the whole run, appended to the system prompt.",
        "a non-empty string (lint warns when absent)",
        "instructions: >-\n  ${1:direction}"
    ),
    k!(
        Workflow,
        "disabled",
        Workflow,
        "§A.1",
        "Disables the workflow: it starts no runs and its suite is skipped.",
        "a boolean"
    ),
    k!(
        Workflow,
        "runtime",
        Workflow,
        "§A.1",
        "The runtime contract.",
        "`{ engine?, version? }`; supported: `archmax-harness@1`, `archmax-harness@2`",
        "runtime:\n  engine: archmax-harness\n  version: \"${1:2}\""
    ),
    k!(
        Workflow,
        "settings",
        Workflow,
        "§A.1",
        "Model and sandbox settings.",
        "`{ model?, timeoutMs?, memoryLimitBytes?, maxPtcCalls?, maxResultChars?, prompt_cache? }`",
        "settings:\n  ${1:timeoutMs}: ${2:15000}"
    ),
    k!(
        Workflow,
        "tools",
        Workflow,
        "§A.1, §E.7",
        "Tool governance in every state.",
        "`{ allow_always?, forbid_always? }`",
        "tools:\n  ${1:forbid_always}: [${2}]"
    ),
    k!(
        Workflow,
        "skills",
        Workflow,
        "§A.1, §E.7",
        "Skill bundles enabled or forbidden in every state.",
        "`{ allow_always?, forbid_always? }` lists of skill slugs",
        "skills:\n  allow_always: [${1}]"
    ),
    k!(
        Workflow,
        "mounts",
        Workflow,
        "§A.1",
        "Mounts granted or forbidden in every state.",
        "`{ allow_always?, forbid_always? }`"
    ),
    k!(
        Workflow,
        "tests",
        Workflow,
        "§A.1, §B.6",
        "Offline test-suite configuration.",
        "`{ maxConcurrency?, caseTimeoutMs?, judge? }`",
        "tests:\n  judge: {}"
    ),
    k!(
        Workflow,
        "extensions",
        Workflow,
        "§A.1",
        "Host extensions.",
        "`{ hooks?: [custom hook kinds] }`"
    ),
    k!(
        Workflow,
        "metadata",
        Workflow,
        "§A.1",
        "Free-form host data the runtime never reads (excluded from the spec hash).",
        "any mapping"
    ),
    k!(
        Workflow,
        "states",
        Workflow,
        "§A.1, §A.2",
        "The state machine: a mapping of state slug to state. Required.",
        "a non-empty mapping of slug (`^[a-z0-9]+(-[a-z0-9]+)*$`) to state",
        "states:\n  ${1:start}:\n    triggers: { manual: }\n    instructions: ${2:what to do}"
    ),
    k!(
        Workflow,
        "runtime.engine",
        Workflow,
        "§A.1",
        "The runtime engine.",
        "a string (default `archmax-harness`)"
    ),
    k!(
        Workflow,
        "runtime.version",
        Workflow,
        "§A.1",
        "The contract version.",
        "a string or number (default `1`)"
    ),
    k!(
        Workflow,
        "settings.model",
        Workflow,
        "§A.1",
        "The model id.",
        "a non-empty string"
    ),
    k!(
        Workflow,
        "settings.timeoutMs",
        Workflow,
        "§A.1",
        "The sandbox script budget in milliseconds; `wfx-lsp test` honours at most 30000 (a larger value is clamped, WFX261).",
        "an integer > 0"
    ),
    k!(
        Workflow,
        "settings.memoryLimitBytes",
        Workflow,
        "§A.1",
        "The sandbox memory limit in bytes; `wfx-lsp test` honours at most 268435456 (256 MiB; a larger value is clamped, WFX261).",
        "an integer > 0"
    ),
    k!(
        Workflow,
        "settings.maxPtcCalls",
        Workflow,
        "§A.1",
        "The most tool calls a script may make.",
        "an integer ≥ 0, or `null`"
    ),
    k!(
        Workflow,
        "settings.maxResultChars",
        Workflow,
        "§A.1",
        "The largest tool result kept inline.",
        "an integer > 0"
    ),
    k!(
        Workflow,
        "settings.prompt_cache",
        Workflow,
        "§A.1",
        "Prompt caching.",
        "`{ enabled?: boolean, ttl?: string }`"
    ),
    k!(
        Workflow,
        "tools.allow_always",
        Workflow,
        "§A.3, §E.7",
        "Tools granted in every state.",
        "a list of tool names or `{ tool, args?, paths? }`; `*` is refused"
    ),
    k!(
        Workflow,
        "tools.forbid_always",
        Workflow,
        "§A.3, §E.7",
        "Tools denied in every state; deny beats allow.",
        "a list of tool names or `{ tool, args?, paths? }`; `*` denies all"
    ),
    k!(
        Workflow,
        "skills.allow_always",
        Workflow,
        "§A.1",
        "Skill bundles enabled in every state.",
        "a list of skill slugs"
    ),
    k!(
        Workflow,
        "skills.forbid_always",
        Workflow,
        "§A.1",
        "Skill bundles out of reach of every state.",
        "a list of skill slugs"
    ),
    k!(
        Workflow,
        "mounts.allow_always",
        Workflow,
        "§A.3",
        "Mounts granted in every state.",
        "a list of mount names or `{ mount, access?: read|read_write }`"
    ),
    k!(
        Workflow,
        "mounts.forbid_always",
        Workflow,
        "§A.3",
        "Mounts forbidden in every state.",
        "a list of mount names"
    ),
    k!(
        Workflow,
        "tests.maxConcurrency",
        Workflow,
        "§A.4",
        "Case concurrency; only 1 is supported.",
        "an integer > 0 (above 1 is an error)"
    ),
    k!(
        Workflow,
        "tests.caseTimeoutMs",
        Workflow,
        "§A.1, §C.2",
        "The per-case wall clock in milliseconds.",
        "an integer > 0 (default 120000)"
    ),
    k!(
        Workflow,
        "tests.judge",
        Workflow,
        "§B.6",
        "Wires the grading model, so `grade` assertions can score; `{}` is enough.",
        "`{ model?, modelOptions?: { temperature?, maxTokens? } }`"
    ),
    k!(
        Workflow,
        "extensions.hooks",
        Workflow,
        "§A.6",
        "Custom hook kinds the host registers.",
        "a list of strings"
    ),
    // ---- workflow.yaml: state keys (FORMAT §A.2) ----
    k!(
        Workflow,
        "states.*.type",
        Workflow,
        "§A.2",
        "`human` makes the state a decision park: a person picks the edge.",
        "`agent` (default) or `human`"
    ),
    k!(
        Workflow,
        "states.*.title",
        Workflow,
        "§A.2",
        "A label, carried into the pending-decision record.",
        "a non-empty string"
    ),
    k!(
        Workflow,
        "states.*.instructions",
        Workflow,
        "§A.2, §A.7",
        "What the agent does in this state.",
        "a string (a human state needs it)",
        "instructions: >-\n  ${1:what to do here}"
    ),
    k!(
        Workflow,
        "states.*.summary",
        Workflow,
        "§A.2",
        "A summary for hosts; not in the prompt.",
        "a string"
    ),
    k!(
        Workflow,
        "states.*.evidence",
        Workflow,
        "§A.2, §E.3",
        "Baseline evidence paths shown with a human state's decision.",
        "a list of strings"
    ),
    k!(
        Workflow,
        "states.*.approvers",
        Workflow,
        "§A.2",
        "Who may decide a human state (not validated).",
        "a list of strings"
    ),
    k!(
        Workflow,
        "states.*.triggers",
        Workflow,
        "§A.5",
        "Triggers entering the run here: this state is their entry state.",
        "a mapping of trigger id to `null` or a declaration",
        "triggers:\n  ${1:manual}:"
    ),
    k!(
        Workflow,
        "states.*.before",
        Workflow,
        "§A.6, §E.6",
        "Hooks run once per entry, before the first model call; ok/veto only.",
        "one hook or a list: `{ script }`, `{ rubric: { instructions } }` or `{ <custom-kind>: target }`",
        "before:\n  - script: hooks/${1:check}.js"
    ),
    k!(
        Workflow,
        "states.*.after",
        Workflow,
        "§A.6, §E.6",
        "Hooks run at `archmax_advance` out of the state, before the commit; may `correct` within `max_iterations`.",
        "one hook or a list: `{ script, max_iterations? }`, `{ rubric: { instructions, max_iterations? } }` or `{ <custom-kind>: target }`",
        "after:\n  - script: hooks/${1:check}.js"
    ),
    k!(
        Workflow,
        "states.*.budget",
        Workflow,
        "§A.2",
        "Per-state limits.",
        "`{ maxTurns?, timeoutMs?, maxParks? }`, each a positive integer"
    ),
    k!(
        Workflow,
        "states.*.model",
        Workflow,
        "§A.2",
        "The model id for this state.",
        "a non-empty string"
    ),
    k!(
        Workflow,
        "states.*.on_error",
        Workflow,
        "§A.4, §E.1",
        "The state a terminal rejection routes to.",
        "a declared state slug"
    ),
    k!(
        Workflow,
        "states.*.tools",
        Workflow,
        "§A.2, §E.7",
        "Tools granted or denied in this state.",
        "`{ allow?, forbid? }`"
    ),
    k!(
        Workflow,
        "states.*.skills",
        Workflow,
        "§A.2, §E.7",
        "Skill bundles enabled or forbidden in this state.",
        "`{ allow?, forbid? }` lists of skill slugs"
    ),
    k!(
        Workflow,
        "states.*.mounts",
        Workflow,
        "§A.2",
        "Mounts granted or forbidden in this state.",
        "`{ allow?, forbid? }`"
    ),
    k!(
        Workflow,
        "states.*.requires",
        Workflow,
        "§A.2, §E.4",
        "Run variables that must be set before the agent may advance out of the state.",
        "a list of run-variable names"
    ),
    k!(
        Workflow,
        "states.*.metadata",
        Workflow,
        "§A.1",
        "Free-form host data the runtime never reads.",
        "any mapping"
    ),
    k!(
        Workflow,
        "states.*.transitions",
        Workflow,
        "§A.2",
        "The outgoing edges; none means the state is terminal.",
        "a list of `{ to, description, type? }`",
        "transitions:\n  - to: ${1:state}\n    description: ${2:when to take it}"
    ),
    k!(
        Workflow,
        "states.*.budget.maxTurns",
        Workflow,
        "§A.2",
        "The most model turns in this state.",
        "a positive integer"
    ),
    k!(
        Workflow,
        "states.*.budget.timeoutMs",
        Workflow,
        "§A.2",
        "The state's time budget in milliseconds.",
        "a positive integer"
    ),
    k!(
        Workflow,
        "states.*.budget.maxParks",
        Workflow,
        "§A.2, §E.3",
        "The most `archmax_wait` parks in this state.",
        "a positive integer"
    ),
    k!(
        Workflow,
        "states.*.tools.allow",
        Workflow,
        "§A.3, §E.7",
        "Tools granted in this state.",
        "a list of tool names or `{ tool, args?, paths? }`"
    ),
    k!(
        Workflow,
        "states.*.tools.forbid",
        Workflow,
        "§A.3, §E.7",
        "Tools denied in this state.",
        "a list of tool names or `{ tool, args?, paths? }`"
    ),
    k!(
        Workflow,
        "states.*.skills.allow",
        Workflow,
        "§A.2, §E.7",
        "Skill bundles enabled in this state (`[]` enables none).",
        "a list of skill slugs"
    ),
    k!(
        Workflow,
        "states.*.skills.forbid",
        Workflow,
        "§A.2, §E.7",
        "Skill bundles forbidden in this state.",
        "a list of skill slugs"
    ),
    k!(
        Workflow,
        "states.*.mounts.allow",
        Workflow,
        "§A.3",
        "Mounts granted in this state.",
        "a list of mount names or `{ mount, access? }`"
    ),
    k!(
        Workflow,
        "states.*.mounts.forbid",
        Workflow,
        "§A.3",
        "Mounts forbidden in this state.",
        "a list of mount names"
    ),
    k!(
        Workflow,
        "states.*.transitions.-.to",
        Workflow,
        "§A.2",
        "The target state.",
        "a declared state slug (a human state may not target itself)"
    ),
    k!(
        Workflow,
        "states.*.transitions.-.description",
        Workflow,
        "§A.2",
        "The only thing the agent is told about the edge: say when to take it.",
        "a required non-empty string"
    ),
    k!(
        Workflow,
        "states.*.transitions.-.type",
        Workflow,
        "§A.2, §E.3",
        "The edge type, shown on a human state's decision record.",
        "`approve`, `reject`, `refine` or `none`; at most one of each of the first three per human state"
    ),
    k!(
        Workflow,
        "states.*.triggers.*.session",
        Workflow,
        "§A.5",
        "A dotted path over the firing's variables naming the session to resume.",
        "a dotted path string, e.g. `conversation_id`"
    ),
    k!(
        Workflow,
        "states.*.triggers.*.message",
        Workflow,
        "§A.5",
        "Where the firing's message text is (read by the host).",
        "a dotted path string, or `false`"
    ),
    k!(
        Workflow,
        "states.*.triggers.*.connection",
        Workflow,
        "§A.5",
        "The host connection (read by the host).",
        "a non-empty string"
    ),
    k!(
        Workflow,
        "states.*.triggers.*.description",
        Workflow,
        "§A.5",
        "What calling this entry does, for a caller.",
        "a non-empty string"
    ),
    k!(
        Workflow,
        "states.*.triggers.*.requires",
        Workflow,
        "§A.5",
        "Variables a firing must supply; checked at the turn start.",
        "a list of names or `{ name, type?, description? }`"
    ),
    k!(
        Workflow,
        "states.*.triggers.*.returns",
        Workflow,
        "§A.5",
        "Variables the run must set before it completes.",
        "a list of names or `{ name, type?, description? }`; not `trigger`, `title` or `note`"
    ),
    k!(
        Workflow,
        "states.*.triggers.*.requires|returns.-.name",
        Workflow,
        "§A.5",
        "The variable name.",
        "a run-variable name"
    ),
    k!(
        Workflow,
        "states.*.triggers.*.requires|returns.-.type",
        Workflow,
        "§A.5",
        "The value's type, checked without coercion.",
        "`string`, `integer`, `number`, `boolean`, `date`, `date-time`, `object` or `array`"
    ),
    k!(
        Workflow,
        "states.*.triggers.*.requires|returns.-.description",
        Workflow,
        "§A.5",
        "What the variable holds.",
        "a string"
    ),
    k!(
        Workflow,
        "states.*.before|after.-?.script",
        Workflow,
        "§A.6",
        "A JavaScript hook returning `ok()`, `correct(reason)` or `veto(reason)`.",
        "a workflow-relative path `hooks/<file>.js` or `.mjs`, no `..`"
    ),
    k!(
        Workflow,
        "states.*.before|after.-?.rubric",
        Workflow,
        "§A.6, §E.6",
        "A hook graded by a separate model call.",
        "`{ instructions, max_iterations?, model?, metadata? }`"
    ),
    k!(
        Workflow,
        "states.*.before|after.-?.max_iterations",
        Workflow,
        "§A.6, §E.6",
        "How many `correct` verdicts an `after` hook may give before it becomes a veto (not on `before` hooks).",
        "an integer ≥ 0 (default 0)"
    ),
    k!(
        Workflow,
        "states.*.before|after.-?.rubric.instructions",
        Workflow,
        "§A.6",
        "What the rubric judges.",
        "a string"
    ),
    k!(
        Workflow,
        "states.*.before|after.-?.rubric.max_iterations",
        Workflow,
        "§A.6",
        "The rubric's correction budget.",
        "an integer ≥ 0"
    ),
    k!(
        Workflow,
        "states.*.tools.allow|forbid.-.tool",
        Workflow,
        "§A.3",
        "The tool the entry grants or denies.",
        "a tool name (`*` only when forbidding)"
    ),
    k!(
        Workflow,
        "states.*.tools.allow|forbid.-.args",
        Workflow,
        "§A.3",
        "Guards on named arguments: globs, `${{var}}` references allowed.",
        "a mapping of argument name to a glob or a list of globs"
    ),
    k!(
        Workflow,
        "states.*.tools.allow|forbid.-.paths",
        Workflow,
        "§A.3",
        "A guard on every declared path argument.",
        "a glob or a list of globs"
    ),
    k!(
        Workflow,
        "tools.allow_always|forbid_always.-.tool",
        Workflow,
        "§A.3",
        "The tool the entry grants or denies.",
        "a tool name (`*` only when forbidding)"
    ),
    k!(
        Workflow,
        "tools.allow_always|forbid_always.-.args",
        Workflow,
        "§A.3",
        "Guards on named arguments.",
        "a mapping of argument name to a glob or a list of globs"
    ),
    k!(
        Workflow,
        "tools.allow_always|forbid_always.-.paths",
        Workflow,
        "§A.3",
        "A guard on every declared path argument.",
        "a glob or a list of globs"
    ),
];

/// True when the pattern segment `pat` matches the path segment `seg`.
fn seg_matches(pat: &str, seg: &str) -> bool {
    match pat {
        "*" => seg != "-",
        "-" => seg == "-",
        _ => pat.split('|').any(|p| p == seg),
    }
}

/// True when the pattern (split on `.`) matches the whole path. `-?` may match nothing.
fn matches(pat: &[&str], path: &[&str]) -> bool {
    match (pat.split_first(), path.split_first()) {
        (None, None) => true,
        (Some((&"-?", rest)), _) => {
            matches(rest, path)
                || path.first() == Some(&"-") && matches(rest, path.get(1..).unwrap_or(&[]))
        }
        (Some((p, prest)), Some((s, srest))) => seg_matches(p, s) && matches(prest, srest),
        _ => false,
    }
}

fn pattern(doc: &KeyDoc) -> Vec<&'static str> {
    doc.path.split('.').collect()
}

/// True when the dotted `pattern` (see the module docs) matches the whole `path`.
pub fn path_matches(pattern: &str, path: &[&str]) -> bool {
    let pat: Vec<&str> = pattern.split('.').collect();
    matches(&pat, path)
}

/// The documentation of the key at `path` in a `file` document: `path` is the key's full
/// path with `-` for list items, e.g. `["steps", "-", "decide", "to"]`.
pub fn lookup(file: DocFile, path: &[&str]) -> Option<&'static KeyDoc> {
    KEYS.iter()
        .find(|d| d.file == file && matches(&pattern(d), path))
}

/// The documented keys of the mapping at `parent` (e.g. `["steps", "-"]` gives the step
/// keys, actions first), in table order.
pub fn children(file: DocFile, parent: &[&str]) -> Vec<&'static KeyDoc> {
    KEYS.iter()
        .filter(|d| {
            if d.file != file {
                return false;
            }
            let pat = pattern(d);
            match pat.split_last() {
                Some((last, init)) => {
                    !matches!(*last, "*" | "-" | "-?")
                        && !last.contains('|')
                        && matches(init, parent)
                }
                None => false,
            }
        })
        .collect()
}

fn display_path(path: &str) -> String {
    path.split('.')
        .map(|s| match s {
            "*" => "<name>".to_owned(),
            "-" => "[]".to_owned(),
            "-?" => "[]?".to_owned(),
            other => other.replace('|', " \\| "),
        })
        .collect::<Vec<_>>()
        .join(".")
        .replace(".[]", "[]")
}

/// Renders `docs/reference.md`: one table per document kind, one row per key.
pub fn render_reference() -> String {
    let mut out = String::from(
        "# Key reference\n\n<!-- Generated from schemas/src/docs.rs by `UPDATE_EXPECT=1 cargo test -p wfx-schemas docs`; do not edit. -->\n\n\
         The keys of case documents (`*.test.yaml`) and of `workflow.yaml`. \
         Hover and completion in the editor show the same text and link to the rows below \
         (each key's row has the anchor the hover links to, e.g. `#case-steps-decide`).\n\n\
         Structural assertions halt the case when they fail (later assertions are not executed); \
         content assertions do not.\n",
    );
    for (file, title) in [
        (DocFile::Case, "Case documents"),
        (DocFile::Workflow, "workflow.yaml"),
    ] {
        out.push_str(&format!("\n## {title}\n\n| key | role | what it does | accepted forms | halts |\n|---|---|---|---|---|\n"));
        for d in KEYS.iter().filter(|d| d.file == file) {
            let halts = match d.halts() {
                Some(true) => "yes",
                Some(false) => "no",
                None => "",
            };
            out.push_str(&format!(
                "| <a id=\"{}\"></a>`{}` | {} | {} | {} | {} |\n",
                d.anchor(),
                display_path(d.path),
                d.role.label(),
                d.summary.replace('|', "\\|"),
                d.forms.replace('|', "\\|"),
                halts,
            ));
        }
    }
    out.push_str(&format!(
        "\n## Regular expressions\n\n<a id=\"{REGEX_ANCHOR}\"></a>\
         A string written `/body/flags` is a regular expression wherever the tables above say a \
         key accepts one; any other string matches as the key says (by equality or as a \
         substring). The body has JavaScript (ECMAScript) \
         syntax and semantics: lookbehind, named groups and backreferences work, and without the \
         `u` or `v` flag the pattern runs over UTF-16 code units, as in JavaScript. A malformed \
         pattern is a diagnostic; hover on it shows why.\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::case::{ACTIONS, ASSERTIONS, STRUCTURAL, TOP_LEVEL_KEYS};

    #[test]
    fn every_case_key_has_a_doc_with_the_right_role() {
        for k in TOP_LEVEL_KEYS {
            assert_eq!(
                lookup(DocFile::Case, &[k]).map(|d| d.role),
                Some(KeyRole::TopLevel),
                "{k}"
            );
        }
        for k in ACTIONS {
            assert_eq!(
                lookup(DocFile::Case, &["steps", "-", k]).map(|d| d.role),
                Some(KeyRole::Action),
                "{k}"
            );
        }
        for k in ASSERTIONS {
            let d = lookup(DocFile::Case, &["steps", "-", k]).unwrap();
            assert_eq!(d.halts(), Some(STRUCTURAL.contains(k)), "{k}");
        }
    }

    #[test]
    fn step_children_come_actions_first_in_reference_order() {
        let keys: Vec<&str> = children(DocFile::Case, &["steps", "-"])
            .iter()
            .map(|d| d.key())
            .collect();
        let want: Vec<&str> = ACTIONS.iter().chain(ASSERTIONS).copied().collect();
        assert_eq!(keys, want);
        let decide: Vec<&str> = children(DocFile::Case, &["steps", "-", "decide"])
            .iter()
            .map(|d| d.key())
            .collect();
        assert_eq!(decide, ["to", "comment"]);
        let tool: Vec<&str> = children(DocFile::Case, &["steps", "-", "blockedTool"])
            .iter()
            .map(|d| d.key())
            .collect();
        assert_eq!(tool, ["name", "input"]);
    }

    #[test]
    fn workflow_patterns_with_wildcards_and_optional_items() {
        assert_eq!(
            lookup(
                DocFile::Workflow,
                &["states", "review", "transitions", "-", "type"]
            )
            .map(|d| d.section),
            Some("§A.2, §E.3")
        );
        assert!(lookup(DocFile::Workflow, &["states", "a", "after", "script"]).is_some());
        assert!(lookup(DocFile::Workflow, &["states", "a", "after", "-", "script"]).is_some());
        assert!(
            lookup(
                DocFile::Workflow,
                &["states", "a", "tools", "allow", "-", "paths"]
            )
            .is_some()
        );
        assert!(lookup(DocFile::Workflow, &["states", "-", "title"]).is_none());
        let hook: Vec<&str> = children(DocFile::Workflow, &["states", "x", "before", "-"])
            .iter()
            .map(|d| d.key())
            .collect();
        assert_eq!(hook, ["script", "rubric", "max_iterations"]);
        let root: Vec<&str> = children(DocFile::Workflow, &[])
            .iter()
            .map(|d| d.key())
            .collect();
        assert_eq!(root.first(), Some(&"title"));
        assert!(root.contains(&"states"));
    }

    #[test]
    fn markdown_says_whether_a_failure_halts() {
        let d = lookup(DocFile::Case, &["steps", "-", "reachedState"]).unwrap();
        expect_test::expect![[r#"
            **`reachedState`** (structural assertion)

            Some non-trigger trail step entered this state.

            **Accepted:** a state slug

            A failure **halts the case**: later assertions are not executed.

            Reference: [`steps[].reachedState`](docs/reference.md#case-steps-reachedstate)"#]]
        .assert_eq(&d.markdown());
    }

    /// issue 16: hovers link to `docs/reference.md#<anchor>`; every key has its own anchor,
    /// the page carries each one, and the anchors the server names by hand exist.
    #[test]
    fn every_key_has_a_unique_anchor_on_the_reference_page() {
        let page = render_reference();
        let mut seen = std::collections::BTreeSet::new();
        for d in KEYS {
            let a = d.anchor();
            assert!(seen.insert(a.clone()), "duplicate anchor {a} ({})", d.path);
            assert!(page.contains(&format!("<a id=\"{a}\"></a>")), "{a}");
            assert!(
                d.markdown().contains(&format!("({REFERENCE_PAGE}#{a})")),
                "{a}"
            );
        }
        for a in [
            "case-title",
            "case-description",
            "workflow-states-name-transitions-type",
        ] {
            assert!(seen.contains(a), "{a}");
        }
        assert!(page.contains(&format!("<a id=\"{REGEX_ANCHOR}\"></a>")));
        assert!(!page.contains("FORMAT"), "the user page cites FORMAT.md");
    }

    #[test]
    fn reference_page_is_current() {
        expect_test::expect_file!["../../docs/reference.md"].assert_eq(&render_reference());
    }
}
