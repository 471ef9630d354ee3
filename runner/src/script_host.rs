//! The seam between the simulator and a JavaScript sandbox (FORMAT §E.6 hooks, §E.5
//! `archmax_run`, §E.9 scripts calling sub-workflows).
//!
//! Lifecycle hooks (`script:` in a state's `before`/`after`) and the scripts the agent runs
//! with `archmax_run` are JavaScript. The runner does not execute JavaScript itself: it hands
//! each request to a [`ScriptHost`]. The sandbox crate module (`runner/src/sandbox/`, built
//! separately) implements this trait; until it is plugged in, [`NoScriptHost`] answers every
//! request with [`ScriptError::Unavailable`], which fails the guarded case step with a clear
//! "was not executed" error — never a silent pass.
//!
//! # Contract for implementors
//!
//! * [`ScriptHost::run_hook`] receives a [`HookRequest`]: the hook's workflow-relative path
//!   (`hooks/check-requester.js`), its source text, and `input`, the JSON object the hook's
//!   default export is called with (its shape is documented on [`HookRequest::input`]). The
//!   sandbox evaluates the module, calls its default export with `input` plus a `tools`
//!   object, and maps the returned `ok()` / `correct(reason)` / `veto(reason)` to a
//!   [`HookVerdict`]. A hook that throws is `Err(ScriptError::Threw)` (the simulator counts it
//!   as a veto, FORMAT §E.6); one that cannot run at all (syntax error, timeout, memory) is
//!   `Err(ScriptError::Failed)` (a terminal rejection, routed to `on_error`).
//! * [`ScriptHost::run_script`] receives a [`ScriptRequest`] for `archmax_run`; the returned
//!   JSON value becomes the tool result (strings verbatim, other values as compact JSON).
//! * `tools.<camelCase>(input)` inside JavaScript goes through the [`ToolBridge`] given with
//!   each request: `tools.readFile({file_path})` is `bridge.call_tool("read_file", …)`, and
//!   `tools.archmaxWorkflowEnrichOrder({order_id})` is
//!   `bridge.call_tool("archmax_workflow_enrich-order", …)`; use
//!   [`crate::sandbox::snake_from_camel`] to map names. The bridge applies the case's mocks
//!   and the simulator's file tools. For hooks it runs on *runtime authority* (exempt from
//!   the state's enabled tools and skills, FORMAT §E.6); for `archmax_run` scripts it runs
//!   under the calling state's governance. A bridge error is a string the sandbox should
//!   throw as a JavaScript `Error`.
//! * Limits come with each request (`timeout_ms`, `memory_limit_bytes`, `max_calls`, from
//!   `settings` in `workflow.yaml`); `None` means the sandbox's own default.
//! * A host must be deterministic for the same request and bridge answers (no clock, no
//!   randomness leaking into verdicts), so runs can be compared byte for byte.

use serde_json::Value;

/// `before` or `after` (FORMAT §A.6, §E.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookPhase {
    /// Runs once per entry into the state; `correct` counts as a veto.
    Before,
    /// Runs at `archmax_advance` out of the state (or at completion of a terminal state).
    After,
}

impl HookPhase {
    /// `before` or `after`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookPhase::Before => "before",
            HookPhase::After => "after",
        }
    }
}

/// One hook invocation.
#[derive(Clone, Debug, PartialEq)]
pub struct HookRequest {
    /// Workflow-relative path as declared, e.g. `hooks/check-requester.js`.
    pub path: String,
    /// The file's source text (read through `FileAccess` from `workflows/<slug>/<path>`).
    pub source: String,
    /// The state the hook belongs to.
    pub state: String,
    /// Which phase.
    pub phase: HookPhase,
    /// The argument object of the hook's default export:
    /// `{ state, phase: "before"|"after", trigger, variables: {<name>: <value>},
    ///    messages: [{role: "user"|"assistant", text}], from?, to?, reason? }`.
    /// `from`/`to`/`reason` are present for hooks run by an `archmax_advance`.
    pub input: Value,
    /// `settings.timeoutMs` of the workflow (ms).
    pub timeout_ms: Option<u64>,
    /// `settings.memoryLimitBytes` of the workflow (bytes).
    pub memory_limit_bytes: Option<u64>,
}

/// What a hook decided (FORMAT §E.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookVerdict {
    /// `ok()`.
    Ok,
    /// `correct(reason)`: send the agent back while the `max_iterations` budget lasts.
    Correct(String),
    /// `veto(reason)`.
    Veto(String),
}

/// One `archmax_run` invocation.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptRequest {
    /// Session path of the script, e.g. `skills/order-enrichment/scripts/enrich-orders.js`.
    pub path: String,
    /// The script's source text.
    pub source: String,
    /// The `archmax_run` call input (minus nothing: `file_path` included).
    pub input: Value,
    /// The run variables as `{<name>: <value>}`.
    pub variables: Value,
    /// `settings.timeoutMs` (ms).
    pub timeout_ms: Option<u64>,
    /// `settings.memoryLimitBytes` (bytes).
    pub memory_limit_bytes: Option<u64>,
    /// `settings.maxPtcCalls`: most bridge calls the script may make.
    pub max_calls: Option<u64>,
}

/// Why a script produced no verdict or value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptError {
    /// No sandbox can run it: the case step fails with a "was not executed" error.
    Unavailable(String),
    /// The script threw (a hook counts this as a veto; `archmax_run` returns an error result).
    Threw(String),
    /// It could not run (syntax error, timeout, memory): a terminal rejection for a hook.
    Failed(String),
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScriptError::Unavailable(m) | ScriptError::Threw(m) | ScriptError::Failed(m) => {
                f.write_str(m)
            }
        }
    }
}

/// Tool calls from inside a script, answered by the simulator (mocks, file tools,
/// sub-workflow dispatch). `Ok` is the tool's text result; `Err` is a message to throw.
pub trait ToolBridge {
    /// Calls `name` (snake_case wire name, e.g. `read_file`) with `input`.
    fn call_tool(&mut self, name: &str, input: Value) -> Result<String, String>;
}

/// Runs JavaScript for the simulator. See the module docs for the contract.
pub trait ScriptHost {
    /// Runs one lifecycle hook.
    fn run_hook(
        &mut self,
        req: HookRequest,
        bridge: &mut dyn ToolBridge,
    ) -> Result<HookVerdict, ScriptError>;
    /// Runs one `archmax_run` script; the value is the tool result.
    fn run_script(
        &mut self,
        req: ScriptRequest,
        bridge: &mut dyn ToolBridge,
    ) -> Result<Value, ScriptError>;
}

/// The host used when no sandbox is plugged in: every request is
/// [`ScriptError::Unavailable`], naming the file that was not executed.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoScriptHost;

impl ScriptHost for NoScriptHost {
    fn run_hook(
        &mut self,
        req: HookRequest,
        _bridge: &mut dyn ToolBridge,
    ) -> Result<HookVerdict, ScriptError> {
        Err(ScriptError::Unavailable(format!(
            "hook `{}` was not executed: the JavaScript sandbox is not available",
            req.path
        )))
    }

    fn run_script(
        &mut self,
        req: ScriptRequest,
        _bridge: &mut dyn ToolBridge,
    ) -> Result<Value, ScriptError> {
        Err(ScriptError::Unavailable(format!(
            "script `{}` was not executed: the JavaScript sandbox is not available",
            req.path
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoTools;
    impl ToolBridge for NoTools {
        fn call_tool(&mut self, _: &str, _: Value) -> Result<String, String> {
            Err("none".into())
        }
    }

    #[test]
    fn no_script_host_names_the_file() {
        let req = HookRequest {
            path: "hooks/check-requester.js".into(),
            source: String::new(),
            state: "identify-case".into(),
            phase: HookPhase::Before,
            input: Value::Null,
            timeout_ms: None,
            memory_limit_bytes: None,
        };
        let err = NoScriptHost.run_hook(req, &mut NoTools).unwrap_err();
        assert_eq!(
            err,
            ScriptError::Unavailable(
                "hook `hooks/check-requester.js` was not executed: the JavaScript sandbox is not available".into()
            )
        );
    }
}
