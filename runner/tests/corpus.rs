//! The example workspace (tests/corpus/customer-support) end to end: with no sandbox,
//! the cases whose hooks need JavaScript fail with the clear not-executed error and the
//! rest pass; with a test-only host that ports the three example hooks to Rust, all nine
//! pass with their agent scripts. Also: two runs produce the same bytes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers"
)]

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use wfx_runner::cli::{CliContext, ScriptHostFactory, TestOptions, run_cli_with};
use wfx_runner::clock::FixedClock;
use wfx_runner::script_host::{
    HookRequest, HookVerdict, ScriptError, ScriptHost, ScriptRequest, ToolBridge,
};

fn corpus() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/customer-support");
    assert!(
        p.join("workflows/order-lookup/tests").is_dir(),
        "the example corpus is missing at {}",
        p.display()
    );
    p
}

/// The three example hooks, ported to Rust for tests (the real ones are JavaScript).
struct EmulatedHooks;

fn email_in(text: &str) -> Option<String> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '?')
        .map(|w| w.trim_end_matches('.'))
        .find(|w| w.contains('@') && w.contains('.'))
        .map(str::to_lowercase)
}

impl ScriptHost for EmulatedHooks {
    fn run_hook(
        &mut self,
        req: HookRequest,
        bridge: &mut dyn ToolBridge,
    ) -> Result<HookVerdict, ScriptError> {
        let read = |bridge: &mut dyn ToolBridge, p: &str| {
            bridge.call_tool("read_file", serde_json::json!({"file_path": p}))
        };
        let orders: Vec<Value> = serde_json::from_str(
            &read(bridge, "skills/order-data/assets/orders.json").map_err(ScriptError::Threw)?,
        )
        .map_err(|e| ScriptError::Threw(e.to_string()))?;
        let first = req.input["messages"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["role"] == "user"))
            .and_then(|m| m["text"].as_str())
            .unwrap_or("")
            .to_owned();
        match req.path.as_str() {
            "hooks/check-requester.js" => {
                let Some(email) = email_in(&first) else {
                    return Ok(HookVerdict::Veto(
                        "Please include your email address.".into(),
                    ));
                };
                if orders
                    .iter()
                    .any(|o| o["email"].as_str().map(str::to_lowercase) == Some(email.clone()))
                {
                    Ok(HookVerdict::Ok)
                } else {
                    Ok(HookVerdict::Veto(format!(
                        "The address {email} is not in the order database."
                    )))
                }
            }
            "hooks/check-tenancy.js" => {
                let email = email_in(&first).unwrap_or_default();
                let own: Vec<&Value> = orders
                    .iter()
                    .filter(|o| o["email"].as_str().map(str::to_lowercase) == Some(email.clone()))
                    .collect();
                let lower = first.to_lowercase();
                for o in &orders {
                    let customer = o["customer"].as_str().unwrap_or("").to_lowercase();
                    let id = o["id"].as_str().unwrap_or("");
                    let foreign_name = !own
                        .iter()
                        .any(|x| x["customer"].as_str().unwrap_or("").to_lowercase() == customer)
                        && lower.contains(&customer);
                    let foreign_id = !own.iter().any(|x| x["id"] == o["id"])
                        && first.to_uppercase().contains(id);
                    if foreign_name || foreign_id {
                        return Ok(HookVerdict::Veto(
                            "You are not authorized to view another company's orders.".into(),
                        ));
                    }
                }
                Ok(HookVerdict::Ok)
            }
            "hooks/check-refund.js" => {
                let Ok(text) = read(bridge, "scratchpad/refund.json") else {
                    return Ok(HookVerdict::Veto(
                        "Record the decision in scratchpad/refund.json first.".into(),
                    ));
                };
                let ticket: Value =
                    serde_json::from_str(&text).map_err(|e| ScriptError::Threw(e.to_string()))?;
                let id = ticket["orderId"].as_str().unwrap_or("").to_uppercase();
                let order = orders
                    .iter()
                    .find(|o| o["id"].as_str() == Some(id.as_str()));
                let expected = match order.and_then(|o| o["status"].as_str()) {
                    Some("delivered") | Some("delayed") => "approved",
                    _ => "denied",
                };
                if ticket["decision"] == expected {
                    Ok(HookVerdict::Ok)
                } else {
                    Ok(HookVerdict::Veto(format!(
                        "Policy requires \"{expected}\" for {id}"
                    )))
                }
            }
            other => Err(ScriptError::Failed(format!("no emulation for {other}"))),
        }
    }

    fn run_script(
        &mut self,
        req: ScriptRequest,
        _bridge: &mut dyn ToolBridge,
    ) -> Result<Value, ScriptError> {
        Err(ScriptError::Unavailable(format!(
            "script `{}` was not executed: emulation only covers hooks",
            req.path
        )))
    }
}

fn run(opts: &TestOptions) -> (i32, String, String) {
    let clock = FixedClock::default();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = run_cli_with(
        opts,
        &corpus(),
        &CliContext {
            clock: &clock,
            model: None,
        },
        &mut out,
        &mut err,
    );
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn without_a_sandbox_hooked_cases_fail_clearly_and_the_rest_pass() {
    let (code, out, err) = run(&TestOptions {
        skip_grades: true,
        json: true,
        script_host: Some(ScriptHostFactory(Arc::new(|| {
            Box::new(wfx_runner::script_host::NoScriptHost)
        }))),
        ..Default::default()
    });
    assert_eq!(code, 1, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["workflow"], "order-lookup");
    assert_eq!(v["discovered"], 9);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 9);
    for r in results {
        let id = r["id"].as_str().unwrap();
        if id == "triggered-report" {
            assert_eq!(r["verdict"]["status"], "passed", "{r:#}");
        } else {
            assert_eq!(r["verdict"]["status"], "failed", "{id}");
            let error = r["error"].as_str().unwrap();
            assert!(
                error
                    == "hook `hooks/check-requester.js` was not executed: the JavaScript sandbox is not available",
                "{id}: {error}"
            );
            assert_eq!(r["verdict"]["failures"][0], error);
        }
    }
}

#[test]
fn with_the_quickjs_sandbox_every_example_case_passes() {
    // The default host runs the real JavaScript hooks of the example workflow.
    let (code, out, err) = run(&TestOptions {
        skip_grades: true,
        json: true,
        ..Default::default()
    });
    let v: Value = serde_json::from_str(&out).unwrap();
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 9, "{err}");
    for r in results {
        assert_eq!(r["verdict"]["status"], "passed", "{r:#}\n{err}");
    }
    assert_eq!(code, 0, "{err}");
}

#[test]
fn with_the_hooks_emulated_every_example_case_passes() {
    let opts = TestOptions {
        skip_grades: true,
        script_host: Some(ScriptHostFactory(Arc::new(|| Box::new(EmulatedHooks)))),
        ..Default::default()
    };
    let (code, out, err) = run(&opts);
    assert_eq!(out, "9 passed, 0 failed, 0 skipped\n", "{err}");
    assert_eq!(code, 0);
    assert!(
        err.contains("identify-case → refund-request → refund-review → refund-closed"),
        "{err}"
    );
}

#[test]
fn two_runs_produce_the_same_bytes() {
    let opts = TestOptions {
        skip_grades: true,
        json: true,
        ..Default::default()
    };
    assert_eq!(run(&opts), run(&opts));
    let opts = TestOptions {
        skip_grades: true,
        script_host: Some(ScriptHostFactory(Arc::new(|| Box::new(EmulatedHooks)))),
        ..Default::default()
    };
    assert_eq!(run(&opts), run(&opts));
}

#[test]
fn the_example_agent_scripts_check_clean() {
    let fs = wfx_runner::disk::DiskFiles::new(corpus());
    let dir = wfx_schemas::workspace::WorkflowDir {
        root: String::new(),
        slug: "order-lookup".into(),
    };
    let scripts = wfx_schemas::workspace::discover_agent_scripts(&fs, &dir);
    assert_eq!(scripts.len(), 9);
    for s in scripts {
        let diags = wfx_schemas::check::check_file(&fs, &s);
        assert!(diags.is_empty(), "{s}: {diags:?}");
    }
}
