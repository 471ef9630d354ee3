//! [`QuickJsHost`]: the simulator's [`ScriptHost`] seam implemented with the QuickJS sandbox.
//!
//! Maps a [`HookRequest`] / [`ScriptRequest`] onto [`super::run_hook`] / [`super::run_script`]
//! and the simulator's [`ToolBridge`] onto the sandbox's [`super::Bridge`]. Budgets come from
//! the request (`settings` in `workflow.yaml`), with the sandbox's defaults where it has none.
//! A fresh QuickJS runtime per call costs about 0.2 ms, so nothing is reused across calls and
//! no state leaks between hooks.

use serde_json::Value;

use super::{Bridge, Budgets, CancelToken, SandboxError, Verdict};
use crate::script_host::{
    HookRequest, HookVerdict, ScriptError, ScriptHost, ScriptRequest, ToolBridge,
};

/// The QuickJS-backed script host. Keeps the `console.*` lines of the last call for
/// narration.
#[derive(Debug, Default)]
pub struct QuickJsHost {
    /// `console.*` lines of the most recent hook or script, in order.
    pub last_logs: Vec<String>,
    /// Raised by the embedder to stop the running hook or script (the editor's "cancel
    /// run"); a cancelled run is `ScriptError::Failed("the run was cancelled")`.
    pub cancel: CancelToken,
}

impl QuickJsHost {
    /// A host whose runs stop when `cancel` is raised.
    pub fn with_cancel(cancel: CancelToken) -> Self {
        Self {
            last_logs: Vec::new(),
            cancel,
        }
    }
}

struct BridgeAdapter<'a> {
    inner: &'a mut dyn ToolBridge,
}

impl Bridge for BridgeAdapter<'_> {
    fn call_tool(&mut self, name: &str, input: Value) -> Result<String, String> {
        // Workflow slugs are kebab-case (FORMAT §A.3): the delegation tool's slug part maps
        // back from the sandbox's snake_case exactly.
        let name = match name.strip_prefix("archmax_workflow_") {
            Some(slug) => format!("archmax_workflow_{}", slug.replace('_', "-")),
            None => name.to_owned(),
        };
        self.inner.call_tool(&name, input)
    }
}

/// The run's budgets from the workflow's `settings`, clamped to the ceilings
/// ([`Budgets::clamped`]): a workflow may lower them, never raise them past those.
fn budgets(timeout_ms: Option<u64>, memory: Option<u64>, calls: Option<u64>) -> Budgets {
    let mut b = Budgets::default();
    if let Some(t) = timeout_ms {
        b.timeout_ms = t;
    }
    if memory.is_some() {
        b.memory_limit_bytes = memory;
    }
    if calls.is_some() {
        b.max_ptc_calls = calls;
    }
    b.clamped()
}

fn script_error(e: SandboxError) -> ScriptError {
    match e {
        SandboxError::Threw { .. } => ScriptError::Threw(e.reason()),
        other => ScriptError::Failed(other.reason()),
    }
}

impl ScriptHost for QuickJsHost {
    fn run_hook(
        &mut self,
        req: HookRequest,
        bridge: &mut dyn ToolBridge,
    ) -> Result<HookVerdict, ScriptError> {
        let mut adapter = BridgeAdapter { inner: bridge };
        let b = budgets(req.timeout_ms, req.memory_limit_bytes, None);
        let outcome = super::run_hook_cancellable(
            &req.source,
            &req.path,
            &req.input,
            &mut adapter,
            &b,
            &self.cancel,
        );
        self.last_logs = outcome.logs;
        match outcome.verdict {
            Ok(Verdict::Ok) => Ok(HookVerdict::Ok),
            Ok(Verdict::Correct(r)) => Ok(HookVerdict::Correct(r)),
            Ok(Verdict::Veto(r)) => Ok(HookVerdict::Veto(r)),
            Err(e) => Err(script_error(e)),
        }
    }

    fn run_script(
        &mut self,
        req: ScriptRequest,
        bridge: &mut dyn ToolBridge,
    ) -> Result<Value, ScriptError> {
        // `args` is the call's `args` plus `args.variables`, as the reference builds it.
        let mut args = match req.input.get("args") {
            Some(Value::Object(m)) => m.clone(),
            _ => serde_json::Map::new(),
        };
        args.insert("variables".into(), req.variables.clone());
        let mut adapter = BridgeAdapter { inner: bridge };
        let b = budgets(req.timeout_ms, req.memory_limit_bytes, req.max_calls);
        let outcome = super::run_script_cancellable(
            &req.source,
            &req.path,
            &Value::Object(args),
            &mut adapter,
            &b,
            &self.cancel,
        );
        self.last_logs = outcome.logs;
        outcome.result.map_err(script_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script_host::HookPhase;

    struct Files;
    impl ToolBridge for Files {
        fn call_tool(&mut self, name: &str, input: Value) -> Result<String, String> {
            Ok(format!("{name}:{input}"))
        }
    }

    fn hook(source: &str) -> Result<HookVerdict, ScriptError> {
        QuickJsHost::default().run_hook(
            HookRequest {
                path: "hooks/h.js".into(),
                source: source.into(),
                state: "s".into(),
                phase: HookPhase::Before,
                input: serde_json::json!({"state": "s", "variables": {}}),
                timeout_ms: Some(1000),
                memory_limit_bytes: None,
            },
            &mut Files,
        )
    }

    #[test]
    fn the_runs_budgets_are_clamped_to_the_ceilings() {
        let b = budgets(Some(u64::MAX), Some(u64::MAX), None);
        assert_eq!(b.timeout_ms, crate::sandbox::MAX_SANDBOX_TIMEOUT_MS);
        assert_eq!(
            b.memory_limit_bytes,
            Some(crate::sandbox::MAX_SANDBOX_MEMORY_LIMIT_BYTES)
        );
        let b = budgets(Some(20), Some(1 << 20), Some(3));
        assert_eq!(
            (b.timeout_ms, b.memory_limit_bytes, b.max_ptc_calls),
            (20, Some(1 << 20), Some(3))
        );
    }

    #[test]
    fn verdicts_and_throws_map_onto_the_seam() {
        assert_eq!(
            hook("export default async () => ok();"),
            Ok(HookVerdict::Ok)
        );
        assert_eq!(
            hook("export default async () => veto('no');"),
            Ok(HookVerdict::Veto("no".into()))
        );
        assert_eq!(
            hook("export default async () => correct('again');"),
            Ok(HookVerdict::Correct("again".into()))
        );
        assert!(
            matches!(hook("export default async () => { throw new Error('boom'); };"), Err(ScriptError::Threw(m)) if m.contains("boom"))
        );
        assert!(
            matches!(hook("export default async () => { while (true) {} };"), Err(ScriptError::Failed(m)) if m.contains("timeoutMs"))
        );
    }

    #[test]
    fn scripts_see_args_variables_and_kebab_case_delegation_names() {
        let out = QuickJsHost::default()
            .run_script(
                ScriptRequest {
                    path: "skills/s/scripts/x.js".into(),
                    source: "const r = await tools.archmaxWorkflowEnrichOrder({order_id: args.id}); return [r, args.variables.v];".into(),
                    input: serde_json::json!({"file_path": "skills/s/scripts/x.js", "args": {"id": "A"}}),
                    variables: serde_json::json!({"v": 1}),
                    timeout_ms: Some(1000),
                    memory_limit_bytes: None,
                    max_calls: None,
                },
                &mut Files,
            )
            .unwrap();
        assert_eq!(
            out,
            serde_json::json!(["archmax_workflow_enrich-order:{\"order_id\":\"A\"}", 1])
        );
    }
}
