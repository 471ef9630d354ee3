//! The JavaScript sandbox: lifecycle hook scripts (FORMAT §A.6, §E.6) and `archmax_run` skill
//! scripts (FORMAT §E.5, §E.7, §E.9 "From scripts") run in an embedded QuickJS engine
//! (`rquickjs`, bundled C build), with a synchronous tool [`Bridge`] and the `settings`
//! budgets (FORMAT §A.1: `timeoutMs`, `memoryLimitBytes`, `maxPtcCalls`).
//!
//! Entry points: [`run_hook`] → [`HookOutcome`], [`run_script`] → [`ScriptOutcome`], and the
//! static checks [`check_syntax`], [`foreign_imports`] and [`check_scripts`] (codes `WFX5xx`).
//! Each run gets a fresh QuickJS runtime and context (about 0.2 ms), so nothing leaks from
//! one script to the next and an out-of-memory runtime is never reused. The sandbox has no
//! filesystem, network, timers or module loader: the only way out is `tools.<name>(input)`,
//! which the embedding [`Bridge`] serves (through governance and mocks in the simulator).
//! The adapter to the simulator's `ScriptHost` seam (`QuickJsHost`) follows once that trait
//! lands on main.

mod check;
mod host;
pub use engine::{MAX_QUEUED_BYTES, MAX_QUEUED_CALLS};
pub use host::QuickJsHost;
mod engine;
mod memory;
mod source;

pub use check::{
    MAX_SYNTAX_CACHE_BYTES, SYNTAX_PARSES, check_hook_scripts, check_scripts, check_skill_scripts,
    check_syntax,
};
pub use source::{
    HARNESS_SPECIFIER, ImportStatement, Scan, camel_case, foreign_imports, is_harness_specifier,
    referenced_tools, scan, snake_from_camel,
};

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Default `timeoutMs` when `settings` sets none: 5000 ms, the reference executor's default.
pub const DEFAULT_TIMEOUT_MS: u64 = 5_000;
/// Default `memoryLimitBytes` when `settings` sets none: 64 MiB. UNCONFIRMED: the reference's
/// QuickJS default was not read; this bounds a runaway script without touching real ones.
pub const DEFAULT_MEMORY_LIMIT_BYTES: u64 = 64 * 1024 * 1024;
/// Ceiling of `memoryLimitBytes` (256 MiB): as [`MAX_SANDBOX_TIMEOUT_MS`], for memory.
pub use wfx_schemas::model::workflow::MAX_SANDBOX_MEMORY_LIMIT_BYTES;
/// Ceiling of `timeoutMs` (30,000 ms): a workflow may lower its scripts' time budget, never
/// raise it past this (bounded work; `check` warns with `WFX261`). Defined in the format
/// crate so the rule and the runner share one number.
pub use wfx_schemas::model::workflow::MAX_SANDBOX_TIMEOUT_MS;
/// Default `maxPtcCalls` when `settings` sets none: 256 `tools.*` calls per run, the default of
/// the QuickJS REPL the reference embeds.
pub const DEFAULT_MAX_PTC_CALLS: u64 = 256;

/// The essential tools (FORMAT §E.5) every script sees on its `tools` bridge, by snake_case
/// name; a [`Bridge`] adds host tools and `archmax_workflow_<slug>` delegations. Derived from
/// the single list [`wfx_schemas::model::workflow::ESSENTIAL_TOOLS`]: all of it except its
/// last two entries, the agent's script tools `archmax_eval` and `archmax_run` (checked at
/// compile time: the build fails if the list no longer ends with them).
pub const ESSENTIAL_TOOLS: &[&str] = match wfx_schemas::model::workflow::ESSENTIAL_TOOLS
    .split_last_chunk::<2>()
{
    Some((bridge, [eval, run])) if same(eval, "archmax_eval") && same(run, "archmax_run") => bridge,
    _ => &[],
};
const _: () = assert!(
    !ESSENTIAL_TOOLS.is_empty(),
    "wfx_schemas' ESSENTIAL_TOOLS must end with archmax_eval, archmax_run"
);

/// Byte equality of two strings, usable in a `const` (`==` on `str` is not).
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The budgets of one script run (FORMAT §A.1 `settings`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budgets {
    /// Wall-clock budget in ms for the whole run, bridge calls included (`timeoutMs`). The
    /// engine's interrupt handler stops JavaScript once it is spent.
    pub timeout_ms: u64,
    /// The QuickJS runtime's memory limit in bytes (`memoryLimitBytes`); `None` is unlimited.
    /// It bounds the bytes the runtime holds (its 4 KiB arenas of small blocks and its large
    /// blocks, each rounded up to 8 bytes plus an 8-byte header), counted by the runtime's
    /// allocator so a script runs out at the same allocation on every run. It is applied
    /// after the sandbox prelude (about 100 KB) is set up, and counts that too. A run that
    /// passes it ends with [`SandboxError::Budget`] ([`BudgetKind::Memory`]) however QuickJS
    /// failed (issue 24).
    pub memory_limit_bytes: Option<u64>,
    /// How many `tools.*` calls one run may make (`maxPtcCalls`); `None` (`null` in
    /// `settings`) is unlimited, `Some(0)` forbids every call.
    pub max_ptc_calls: Option<u64>,
}

impl Default for Budgets {
    fn default() -> Self {
        Self {
            timeout_ms: DEFAULT_TIMEOUT_MS,
            memory_limit_bytes: Some(DEFAULT_MEMORY_LIMIT_BYTES),
            max_ptc_calls: Some(DEFAULT_MAX_PTC_CALLS),
        }
    }
}

impl Budgets {
    /// Reads the budgets from a workflow's `settings` mapping as JSON (FORMAT §A.1): positive
    /// integers for `timeoutMs` and `memoryLimitBytes`, an integer ≥ 0 or `null` for
    /// `maxPtcCalls`. Absent or malformed values keep the defaults (the schema rules report
    /// them). Bounded work: `timeoutMs` and `memoryLimitBytes` are clamped to
    /// [`MAX_SANDBOX_TIMEOUT_MS`] and [`MAX_SANDBOX_MEMORY_LIMIT_BYTES`] (a workflow may
    /// lower its budgets, never raise them past the ceilings; `check` warns, `WFX261`).
    /// `maxPtcCalls` has no ceiling: `null` (unlimited) is the format's, and every call
    /// counts against the clamped time budget.
    pub fn from_settings(settings: Option<&serde_json::Value>) -> Self {
        let mut out = Self::default();
        let Some(map) = settings.and_then(serde_json::Value::as_object) else {
            return out;
        };
        let positive = |key: &str| {
            map.get(key)
                .and_then(serde_json::Value::as_u64)
                .filter(|n| *n > 0)
        };
        if let Some(ms) = positive("timeoutMs") {
            out.timeout_ms = ms;
        }
        if let Some(bytes) = positive("memoryLimitBytes") {
            out.memory_limit_bytes = Some(bytes);
        }
        match map.get("maxPtcCalls") {
            Some(serde_json::Value::Null) => out.max_ptc_calls = None,
            Some(v) => {
                if let Some(n) = v.as_u64() {
                    out.max_ptc_calls = Some(n);
                }
            }
            None => {}
        }
        out.clamped()
    }

    /// These budgets with `timeout_ms` at most [`MAX_SANDBOX_TIMEOUT_MS`] and
    /// `memory_limit_bytes` at most [`MAX_SANDBOX_MEMORY_LIMIT_BYTES`] (`None`, unlimited,
    /// becomes the ceiling too). Bounded work: every run the runner starts goes through this.
    pub fn clamped(mut self) -> Self {
        self.timeout_ms = self.timeout_ms.min(MAX_SANDBOX_TIMEOUT_MS);
        self.memory_limit_bytes = Some(
            self.memory_limit_bytes
                .map_or(MAX_SANDBOX_MEMORY_LIMIT_BYTES, |b| {
                    b.min(MAX_SANDBOX_MEMORY_LIMIT_BYTES)
                }),
        );
        self
    }
}

/// A flag the embedder raises to stop running hooks and scripts: the editor's "cancel run"
/// (`wfx.cancelRun`, `window/workDoneProgress/cancel`). A run that sees it ends with
/// [`SandboxError::Cancelled`] at QuickJS's next interrupt poll (every back-edge and call,
/// so within one builtin call's time) or before its next bridge call; a run started after
/// it is raised does not start. Cheap to clone: clones share the flag.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that is not raised.
    pub fn new() -> Self {
        Self::default()
    }

    /// A token over an existing flag (the server's per-run `Arc<AtomicBool>`): raising the
    /// flag cancels.
    pub fn from_flag(flag: Arc<AtomicBool>) -> Self {
        Self(flag)
    }

    /// Raises the flag: every run holding this token stops.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether the flag is raised.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The shared flag.
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }
}

/// Which budget a run exceeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetKind {
    /// `settings.timeoutMs`.
    Timeout,
    /// `settings.memoryLimitBytes`.
    Memory,
    /// `settings.maxPtcCalls`.
    PtcCalls,
}

impl BudgetKind {
    /// The `settings` key of the budget (`timeoutMs`, `memoryLimitBytes`, `maxPtcCalls`).
    pub fn setting(self) -> &'static str {
        match self {
            BudgetKind::Timeout => "timeoutMs",
            BudgetKind::Memory => "memoryLimitBytes",
            BudgetKind::PtcCalls => "maxPtcCalls",
        }
    }
}

/// Why a run produced no verdict or result. Every variant of a hook counts as a veto whose
/// reason is [`SandboxError::reason`], and the reference treats each as a terminal rejection
/// (FORMAT §E.5 "hook execution error", §E.6 "Errors").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SandboxError {
    /// The source does not parse; `offset` is the byte offset in the file when QuickJS named
    /// a position.
    Syntax {
        /// QuickJS's message, e.g. `expecting ';'`.
        message: String,
        /// Byte offset in the source.
        offset: Option<u32>,
    },
    /// A hook imports something other than `@archmax-ai/harness/*` (FORMAT §D.2).
    ForeignImport {
        /// The specifier as written.
        specifier: String,
    },
    /// The script threw (or its promise rejected) and nothing caught it; for a hook also a
    /// returned object that is not a verdict.
    Threw {
        /// The error's `message` (or the thrown value as text).
        message: String,
    },
    /// A budget ran out.
    Budget {
        /// Which one.
        which: BudgetKind,
        /// Its value (ms, bytes or calls).
        limit: u64,
    },
    /// The engine failed (could not start, or the script awaits a promise nothing settles).
    Engine {
        /// What happened.
        message: String,
    },
    /// The embedder raised the run's [`CancelToken`] (the editor's "cancel run").
    Cancelled,
}

impl SandboxError {
    /// The text a veto or an error result carries: the thrown message as is, the others
    /// described in our words (a budget names its `settings` key).
    pub fn reason(&self) -> String {
        match self {
            SandboxError::Threw { message } => message.clone(),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SandboxError::Syntax { message, .. } => {
                write!(f, "the script does not parse as JavaScript: {message}")
            }
            SandboxError::ForeignImport { specifier } => write!(
                f,
                "the script imports from '{specifier}'; sandbox scripts may import only from \
                 '@archmax-ai/harness/*' type-carrier entry points"
            ),
            SandboxError::Threw { message } => write!(f, "the script threw: {message}"),
            SandboxError::Budget { which, limit } => {
                let unit = match which {
                    BudgetKind::Timeout => "ms",
                    BudgetKind::Memory => "bytes",
                    BudgetKind::PtcCalls => "tool calls",
                };
                write!(
                    f,
                    "the script exceeded its {} budget of {limit} {unit} (settings.{})",
                    match which {
                        BudgetKind::Timeout => "time",
                        BudgetKind::Memory => "memory",
                        BudgetKind::PtcCalls => "tool-call",
                    },
                    which.setting()
                )
            }
            SandboxError::Engine { message } => write!(f, "the sandbox failed: {message}"),
            SandboxError::Cancelled => f.write_str("the run was cancelled"),
        }
    }
}

impl std::error::Error for SandboxError {}

/// The tool bridge a script reaches through `tools.<camelCaseName>(input)` (FORMAT §E.9
/// "From scripts"). The sandbox calls it synchronously, one call at a time, in the order the
/// script issued them (calls awaited together with `Promise.all` are served in issue order).
pub trait Bridge {
    /// The snake_case names of the tools on the bridge; each is exposed under its
    /// [`camel_case`] name. Names the script writes as `tools.<name>` are exposed as well,
    /// mapped back by [`snake_from_camel`]; any other name is `undefined` in JS. The default
    /// is [`ESSENTIAL_TOOLS`].
    fn tool_names(&self) -> Vec<String> {
        ESSENTIAL_TOOLS.iter().map(|s| (*s).to_string()).collect()
    }
    /// Runs one call: `Ok(text)` resolves the script's promise with the text, `Err(text)`
    /// rejects it with `new Error(text)` (a governance refusal passes its reason verbatim).
    /// `input` is the object the script passed (anything else becomes `{}`).
    fn call_tool(&mut self, name: &str, input: serde_json::Value) -> Result<String, String>;
}

/// A hook's vote (FORMAT §E.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `ok()`, returning nothing, or returning anything that is not an object.
    Ok,
    /// `correct(reason)`; the simulator decides whether the budget allows it.
    Correct(String),
    /// `veto(reason)` or returning `false` (reason `precondition not met`).
    Veto(String),
}

/// The result of [`run_hook`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookOutcome {
    /// The verdict, or why there is none.
    pub verdict: Result<Verdict, SandboxError>,
    /// `console.*` lines, in order.
    pub logs: Vec<String>,
}

impl HookOutcome {
    /// The verdict with every error counted as a veto whose reason is the error's
    /// [`SandboxError::reason`] (FORMAT §E.6: a hook that throws counts as a veto).
    pub fn effective_verdict(&self) -> Verdict {
        match &self.verdict {
            Ok(v) => v.clone(),
            Err(e) => Verdict::Veto(e.reason()),
        }
    }
}

/// The result of [`run_script`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptOutcome {
    /// The script's value as JSON (`undefined` and functions become `null`), or the failure.
    pub result: Result<serde_json::Value, SandboxError>,
    /// `console.*` lines, in order.
    pub logs: Vec<String>,
}

impl ScriptOutcome {
    /// The tool reply the reference's `archmax_run` gives: the log lines, then `→ ` and the
    /// value (a string as is, anything else as 2-space JSON; nothing for `null`), or the error
    /// as `Error: <reason>`; `(no output)` when all of that is empty.
    pub fn tool_text(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if !self.logs.is_empty() {
            parts.push(self.logs.join("\n"));
        }
        match &self.result {
            Ok(serde_json::Value::Null) => {}
            Ok(serde_json::Value::String(s)) => parts.push(format!("→ {s}")),
            Ok(v) => parts.push(format!(
                "→ {}",
                serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
            )),
            Err(e) => parts.push(format!("Error: {}", e.reason())),
        }
        if parts.is_empty() {
            "(no output)".to_string()
        } else {
            parts.join("\n")
        }
    }
}

/// Runs a lifecycle hook (FORMAT §A.6, §E.6).
///
/// `source` is the hook file's text and `path` its workspace-relative path (used in error
/// stacks). The file is an ES-module-shaped script: `@archmax-ai/harness/*` imports are
/// stripped (any other import is [`SandboxError::ForeignImport`]), `export default <expr>`
/// registers the hook, and the body may use top-level `await` and `return`. A registered
/// function is called with `input` (the hook input `{ state, phase, trigger, variables,
/// messages: [{ role, text }], from?, to?, reason? }`) plus `tools`; without one the body's
/// completion value is the verdict. Globals: `ok(reason?)`, `veto(reason)`,
/// `correct(reason)`, `defineHook(fn)`, `args` (= `input`), `tools`, `console`. A verdict
/// object is taken as is, `false` vetoes, any other object is an error, anything else is ok.
///
/// Time: `budgets.timeout_ms` is enforced by QuickJS's interrupt handler, polled at every
/// back-edge and call, so a run ends within one builtin call's time of its budget (a single
/// builtin call itself is not interruptible; docs/security.md).
pub fn run_hook(
    source: &str,
    path: &str,
    input: &serde_json::Value,
    bridge: &mut dyn Bridge,
    budgets: &Budgets,
) -> HookOutcome {
    run_hook_inner(source, path, input, bridge, budgets, None)
}

/// [`run_hook`] that also stops when `cancel` is raised: the verdict is then
/// `Err(SandboxError::Cancelled)`.
pub fn run_hook_cancellable(
    source: &str,
    path: &str,
    input: &serde_json::Value,
    bridge: &mut dyn Bridge,
    budgets: &Budgets,
    cancel: &CancelToken,
) -> HookOutcome {
    run_hook_inner(source, path, input, bridge, budgets, Some(cancel))
}

fn run_hook_inner(
    source: &str,
    path: &str,
    input: &serde_json::Value,
    bridge: &mut dyn Bridge,
    budgets: &Budgets,
    cancel: Option<&CancelToken>,
) -> HookOutcome {
    if let Some((_, specifier)) = foreign_imports(source).into_iter().next() {
        return HookOutcome {
            verdict: Err(SandboxError::ForeignImport { specifier }),
            logs: Vec::new(),
        };
    }
    let body = source::prepare(source, true);
    let (result, logs) = engine::run(
        engine::Job::Hook { input },
        &body,
        path,
        bridge,
        budgets,
        cancel,
    );
    let verdict = result.and_then(|value| engine::verdict_from_json(&value));
    HookOutcome { verdict, logs }
}

/// Runs an `archmax_run` skill script (FORMAT §E.5, §E.7).
///
/// The source is an async script body: top-level `await` and `return` work, and without a
/// `return` the last expression statement's value is the result (as in the reference's
/// REPL). Import statements are dropped. Globals: `args` (the call's `args` plus
/// `args.variables`, built by the caller), `tools`, `console`. Objects come back as JSON.
pub fn run_script(
    source: &str,
    path: &str,
    args: &serde_json::Value,
    bridge: &mut dyn Bridge,
    budgets: &Budgets,
) -> ScriptOutcome {
    run_script_inner(source, path, args, bridge, budgets, None)
}

/// [`run_script`] that also stops when `cancel` is raised: the result is then
/// `Err(SandboxError::Cancelled)`.
pub fn run_script_cancellable(
    source: &str,
    path: &str,
    args: &serde_json::Value,
    bridge: &mut dyn Bridge,
    budgets: &Budgets,
    cancel: &CancelToken,
) -> ScriptOutcome {
    run_script_inner(source, path, args, bridge, budgets, Some(cancel))
}

fn run_script_inner(
    source: &str,
    path: &str,
    args: &serde_json::Value,
    bridge: &mut dyn Bridge,
    budgets: &Budgets,
    cancel: Option<&CancelToken>,
) -> ScriptOutcome {
    let body = source::prepare(source, false);
    let (result, logs) = engine::run(
        engine::Job::Script { args },
        &body,
        path,
        bridge,
        budgets,
        cancel,
    );
    ScriptOutcome { result, logs }
}
