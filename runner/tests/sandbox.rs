//! The QuickJS sandbox (FORMAT §A.6, §E.5–§E.7, §E.9): verdict mapping, throws, budgets,
//! the `tools` bridge, the example workspace's three hooks and its `enrich-orders.js` skill
//! script, and the static checks.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use wfx_runner::sandbox::{
    Bridge, BudgetKind, Budgets, CancelToken, SandboxError, Verdict, check_scripts, check_syntax,
    foreign_imports, run_hook, run_hook_cancellable, run_script, run_script_cancellable,
};
use wfx_schemas::files::MemFiles;
use wfx_schemas::workspace::WorkflowDir;

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/corpus/customer-support"
);

fn corpus(path: &str) -> String {
    std::fs::read_to_string(Path::new(CORPUS).join(path)).unwrap()
}

/// A bridge that serves `read_file` from a map, answers delegations from a closure, refuses
/// the names in `blocked` with a governance-style reason, and records every call.
#[derive(Default)]
struct FakeBridge {
    files: BTreeMap<String, String>,
    blocked: Vec<String>,
    workflows: Vec<String>,
    calls: Vec<(String, Value)>,
}

impl FakeBridge {
    fn with_orders() -> Self {
        let mut b = Self::default();
        b.files.insert(
            "skills/order-data/assets/orders.json".into(),
            corpus("skills/order-data/assets/orders.json"),
        );
        b
    }
}

impl Bridge for FakeBridge {
    fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = wfx_runner::sandbox::ESSENTIAL_TOOLS
            .iter()
            .map(|s| s.to_string())
            .collect();
        names.extend(
            self.workflows
                .iter()
                .map(|w| format!("archmax_workflow_{w}")),
        );
        names
    }

    fn call_tool(&mut self, name: &str, input: Value) -> Result<String, String> {
        self.calls.push((name.to_string(), input.clone()));
        if self.blocked.iter().any(|b| b == name) {
            return Err(format!("'{name}' is not allowed in state 'identify-case'."));
        }
        match name {
            "read_file" => {
                let path = input["file_path"].as_str().unwrap_or_default();
                self.files
                    .get(path)
                    .cloned()
                    .ok_or_else(|| format!("Error: File '{path}' not found"))
            }
            "archmax_workflow_enrich-order" => {
                let id = input["order_id"].as_str().unwrap_or_default();
                Ok(json!({
                    "message": format!("enriched {id}"),
                    "returns": {
                        "enrichment_file": format!("scratchpad/enrichment/{id}.md"),
                        "delayed": id == "ORD-1003",
                    }
                })
                .to_string())
            }
            _ => Ok(format!("{name} ok")),
        }
    }
}

fn hook_input(first_user_message: &str) -> Value {
    json!({
        "state": "identify-case",
        "phase": "before",
        "trigger": "manual",
        "variables": { "trigger": "manual" },
        "messages": [{ "role": "user", "text": first_user_message }],
    })
}

fn hook(source: &str) -> Result<Verdict, SandboxError> {
    hook_with(source, &Budgets::default())
}

/// Asserts that the hook whose module body is `body` (a default export returning `ok()`
/// appended) ends with the time budget of `budgets`; `name` labels a failure.
fn assert_times_out(name: &str, body: &str, budgets: &Budgets) {
    assert_eq!(
        hook_with(&format!("{body}\nexport default () => ok();"), budgets),
        Err(SandboxError::Budget {
            which: BudgetKind::Timeout,
            limit: budgets.timeout_ms
        }),
        "{name}"
    );
}

/// The verdict of the hook `source` (as `hooks/t.js`, input "hi", no tools) under `budgets`.
fn hook_with(source: &str, budgets: &Budgets) -> Result<Verdict, SandboxError> {
    run_hook(
        source,
        "hooks/t.js",
        &hook_input("hi"),
        &mut FakeBridge::default(),
        budgets,
    )
    .verdict
}

#[test]
fn verdicts_map_to_ok_correct_and_veto() {
    assert_eq!(
        hook("export default async function hook() { return ok(); }"),
        Ok(Verdict::Ok)
    );
    assert_eq!(
        hook("export default async () => correct('add the order id');"),
        Ok(Verdict::Correct("add the order id".into()))
    );
    assert_eq!(
        hook("export default () => veto('not yet');"),
        Ok(Verdict::Veto("not yet".into()))
    );
    assert_eq!(
        hook("export default () => veto('  ');"),
        Ok(Verdict::Veto("vetoed by hook".into()))
    );
    assert_eq!(hook("export default () => {};"), Ok(Verdict::Ok));
    assert_eq!(
        hook("export default () => false;"),
        Ok(Verdict::Veto("precondition not met".into()))
    );
    // No default export: the body's completion value is the verdict.
    assert_eq!(
        hook("const x = 2;\nveto(`bare ${x}`);"),
        Ok(Verdict::Veto("bare 2".into()))
    );
    // `defineHook` registers too, and a harness import is stripped.
    assert_eq!(
        hook(
            "import { defineHook } from \"@archmax-ai/harness/hooks\";\n\
             export default defineHook(async ({ phase }) => phase === 'before' ? veto('b') : ok());"
        ),
        Ok(Verdict::Veto("b".into()))
    );
}

#[test]
fn a_throw_counts_as_a_veto_with_its_message() {
    let out = run_hook(
        "throw new Error(\"hook exploded\");\n",
        "hooks/boom.js",
        &hook_input("hi"),
        &mut FakeBridge::default(),
        &Budgets::default(),
    );
    assert_eq!(
        out.verdict,
        Err(SandboxError::Threw {
            message: "hook exploded".into()
        })
    );
    assert_eq!(
        out.effective_verdict(),
        Verdict::Veto("hook exploded".into())
    );
    let async_throw = hook("export default async () => { await 0; throw new TypeError('late'); };");
    assert_eq!(
        async_throw,
        Err(SandboxError::Threw {
            message: "late".into()
        })
    );
}

#[test]
fn a_returned_object_that_is_not_a_verdict_fails_closed() {
    let Err(SandboxError::Threw { message }) =
        hook("export default () => ({ ok: false, reason: 'not allowed' });")
    else {
        panic!("expected a throw");
    };
    assert!(message.contains("is not a verdict"), "{message}");
    assert!(message.contains("'ok', 'reason'"), "{message}");
}

#[test]
fn the_hook_sees_its_input_and_the_transition() {
    let src = "export default async ({ state, phase, trigger, variables, messages, from, to, reason, tools }) => {\n\
               const checks = [\n\
                 [state === 'start' && phase === 'after', 'state and phase'],\n\
                 [trigger === 'manual' && variables.from_email === 'a@b.c', 'trigger and variables'],\n\
                 [messages.some((m) => m.role === 'user' && m.text.includes('hello')), 'messages'],\n\
                 [from === 'start' && to === 'done' && reason === 'all set', 'edge'],\n\
                 [typeof tools.readFile === 'function' && args.state === 'start', 'tools and args'],\n\
               ];\n\
               const failed = checks.find(([passes]) => !passes);\n\
               return failed ? veto(failed[1]) : ok();\n};";
    let input = json!({
        "state": "start", "phase": "after", "trigger": "manual",
        "variables": { "from_email": "a@b.c" },
        "messages": [{ "role": "user", "text": "hello there" }],
        "from": "start", "to": "done", "reason": "all set",
    });
    let out = run_hook(
        src,
        "hooks/see.js",
        &input,
        &mut FakeBridge::default(),
        &Budgets::default(),
    );
    assert_eq!(out.verdict, Ok(Verdict::Ok));
}

#[test]
fn console_output_is_captured_in_order() {
    let out = run_hook(
        "export default () => { console.log('gate', 1, { a: [2] }); console.warn(new Error('w')); return ok(); };",
        "hooks/log.js",
        &hook_input("hi"),
        &mut FakeBridge::default(),
        &Budgets::default(),
    );
    assert_eq!(out.verdict, Ok(Verdict::Ok));
    assert_eq!(out.logs, ["gate 1 {\"a\":[2]}", "Error: w"]);
}

#[test]
fn a_foreign_import_fails_the_hook_before_it_runs() {
    let out = hook("import _ from \"lodash\";\nexport default () => ok();");
    assert_eq!(
        out,
        Err(SandboxError::ForeignImport {
            specifier: "lodash".into()
        })
    );
    assert!(out.unwrap_err().reason().contains("@archmax-ai/harness/*"));
}

#[test]
fn an_infinite_loop_stops_at_the_time_budget() {
    let budgets = Budgets {
        timeout_ms: 100,
        ..Budgets::default()
    };
    for src in [
        "export default () => { for (;;) {} };",
        "export default () => { try { for (;;) {} } catch (e) { return ok(); } };",
        "export default async () => { for (;;) { await 0; } };",
    ] {
        let out = run_hook(
            src,
            "hooks/spin.js",
            &hook_input("hi"),
            &mut FakeBridge::default(),
            &budgets,
        );
        let err = out.verdict.unwrap_err();
        assert_eq!(
            err,
            SandboxError::Budget {
                which: BudgetKind::Timeout,
                limit: 100
            },
            "{src}"
        );
        assert!(
            err.reason().contains("settings.timeoutMs"),
            "{}",
            err.reason()
        );
    }
}

/// Issue 12: QuickJS polls the interrupt handler at every back-edge and call (vendored
/// rquickjs-sys, `JS_INTERRUPT_COUNTER_INIT` 1), so a loop whose body is one expensive builtin
/// call stops within about one call of its budget. Counted, not timed: each iteration logs
/// one line and costs an `indexOf` over 8 MiB (tens of ms), so 100 ms of budget is a few
/// iterations (0 to 3 seen); with upstream's poll every 10,000 events the same loop ran
/// hundreds of iterations (46 s) before the first check.
#[test]
fn an_expensive_builtin_in_a_loop_stops_within_a_few_calls_of_the_budget() {
    let budgets = Budgets {
        timeout_ms: 100,
        ..Budgets::default()
    };
    let out = run_hook(
        "const s = 'a'.repeat(8 << 20);\nlet n = 0;\nwhile (true) { s.indexOf('b'); console.log(n++); }\nexport default () => ok();",
        "hooks/index-of.js",
        &hook_input("hi"),
        &mut FakeBridge::default(),
        &budgets,
    );
    assert_eq!(
        out.verdict,
        Err(SandboxError::Budget {
            which: BudgetKind::Timeout,
            limit: 100
        })
    );
    assert!(
        out.logs.len() < 100,
        "{} iterations ran past a 100 ms budget: the interrupt is not polled at every call",
        out.logs.len()
    );
}

/// docs/security.md, "One builtin call": builtins whose work grows faster than their input
/// poll the interrupt handler inside the call (vendor/rquickjs-sys/PATCH.md), so a single
/// call stops at the time budget. Unpatched, each string and array search below is one
/// call of hours (string search is O(n·m): 2^21 candidate positions × 2^21 compares; the
/// array searches compare 2^20 (the sort 2^19) references to one 4 MiB string with
/// another), and this test does not end (seen: 12 CPU minutes in the first call). The
/// typed-array sort (2^23 elements) is one call of a second or so unpatched; here it
/// proves the polled comparator ends the call with the timeout, not a crash or another
/// error.
#[test]
fn a_single_superlinear_builtin_call_stops_at_the_time_budget() {
    let budgets = Budgets {
        timeout_ms: 200,
        ..Budgets::default()
    };
    let strings = "const s = 'a'.repeat(1 << 22); const p = 'a'.repeat(1 << 21) + 'b';";
    let arrays = "const big = 'a'.repeat(1 << 22); const other = big.slice(1) + 'b'; const xs = new Array(1 << 20).fill(big);";
    for (name, body) in [
        ("indexOf", format!("{strings} s.indexOf(p);")),
        ("lastIndexOf", format!("{strings} s.lastIndexOf(p);")),
        ("includes", format!("{strings} s.includes(p);")),
        ("split", format!("{strings} s.split(p);")),
        ("replace", format!("{strings} s.replace(p, '');")),
        ("replaceAll", format!("{strings} s.replaceAll(p, '');")),
        ("Array indexOf", format!("{arrays} xs.indexOf(other);")),
        ("Array includes", format!("{arrays} xs.includes(other);")),
        ("Array lastIndexOf", format!("{arrays} xs.lastIndexOf(other);")),
        (
            "Array sort",
            format!("{} xs.push(other); xs.sort();", arrays.replace("1 << 20", "1 << 19")),
        ),
        (
            "TypedArray sort",
            "const t = new Uint32Array(1 << 23); for (let i = 0; i < 1024; i++) t[i] = (i * 2654435761) >>> 0; for (let n = 1024; n < t.length; n *= 2) t.copyWithin(n, 0, n); t.sort();".to_owned(),
        ),
    ] {
        assert_times_out(name, body.as_ref(), &budgets);
    }
}

/// The editor's "cancel run" stops a running hook: a second thread raises the token while
/// the hook spins under a 30 s budget; the verdict is `Cancelled`, not a timeout.
#[test]
fn a_cancel_token_stops_a_running_hook_and_script() {
    let budgets = Budgets {
        timeout_ms: 30_000,
        ..Budgets::default()
    };
    let token = CancelToken::new();
    let raiser = {
        let token = token.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            token.cancel();
        })
    };
    let out = run_hook_cancellable(
        "export default () => { for (;;) {} };",
        "hooks/spin.js",
        &hook_input("hi"),
        &mut FakeBridge::default(),
        &budgets,
        &token,
    );
    raiser.join().unwrap();
    assert_eq!(out.verdict, Err(SandboxError::Cancelled));
    assert_eq!(
        out.effective_verdict(),
        Verdict::Veto("the run was cancelled".into())
    );
    // A raised token: the next script does not start.
    let out = run_script_cancellable(
        "return 1;",
        "skills/s/scripts/one.js",
        &json!({}),
        &mut FakeBridge::default(),
        &budgets,
        &token,
    );
    assert_eq!(out.result, Err(SandboxError::Cancelled));
    // An unraised token changes nothing.
    let out = run_script_cancellable(
        "return 1;",
        "skills/s/scripts/one.js",
        &json!({}),
        &mut FakeBridge::default(),
        &budgets,
        &CancelToken::new(),
    );
    assert_eq!(out.result, Ok(json!(1)));
}

#[test]
fn a_huge_allocation_fails_cleanly_at_the_memory_budget() {
    let budgets = Budgets {
        memory_limit_bytes: Some(4 * 1024 * 1024),
        ..Budgets::default()
    };
    for src in [
        "const s = 'x'.repeat(100000000); return s.length;",
        "const a = []; for (let i = 0;; i++) a.push('xxxxxxxxxxxxxxxxxxxxxxxx' + i);",
    ] {
        let out = run_script(
            src,
            "skills/s/scripts/big.js",
            &json!({}),
            &mut FakeBridge::default(),
            &budgets,
        );
        let err = out.result.unwrap_err();
        assert_eq!(
            err,
            SandboxError::Budget {
                which: BudgetKind::Memory,
                limit: 4 * 1024 * 1024
            },
            "{src}"
        );
        assert!(err.reason().contains("settings.memoryLimitBytes"));
    }
    // The same script under the default budget is fine once the size is sane.
    let out = run_script(
        "return 'x'.repeat(1000).length;",
        "skills/s/scripts/ok.js",
        &json!({}),
        &mut FakeBridge::default(),
        &budgets,
    );
    assert_eq!(out.result, Ok(json!(1000)));
}

#[test]
fn the_tool_call_budget_counts_bridge_calls() {
    let src = "for (let i = 0; i < 3; i++) await tools.ls({ path: 'scratchpad' }); return 'done';";
    let mut bridge = FakeBridge::default();
    let budgets = Budgets {
        max_ptc_calls: Some(2),
        ..Budgets::default()
    };
    let out = run_script(
        src,
        "skills/s/scripts/many.js",
        &json!({}),
        &mut bridge,
        &budgets,
    );
    let err = out.result.unwrap_err();
    assert_eq!(
        err,
        SandboxError::Budget {
            which: BudgetKind::PtcCalls,
            limit: 2
        }
    );
    assert!(err.reason().contains("settings.maxPtcCalls"));
    assert_eq!(bridge.calls.len(), 2);
    let unlimited = Budgets {
        max_ptc_calls: None,
        ..Budgets::default()
    };
    let out = run_script(
        src,
        "skills/s/scripts/many.js",
        &json!({}),
        &mut FakeBridge::default(),
        &unlimited,
    );
    assert_eq!(out.result, Ok(json!("done")));
}

#[test]
fn bridge_calls_reach_the_bridge_and_refusals_surface_as_errors() {
    let src = "const listing = await tools.ls({ path: 'scratchpad' });\n\
               let refused;\n\
               try { await tools.grep({ pattern: 'x' }); } catch (e) { refused = e.message; }\n\
               ({ listing, refused, names: Object.keys(tools).filter((n) => n.startsWith('archmax')) })";
    let mut bridge = FakeBridge {
        blocked: vec!["grep".into()],
        workflows: vec!["enrich-order".into()],
        ..FakeBridge::default()
    };
    let out = run_script(
        src,
        "skills/s/scripts/b.js",
        &json!({}),
        &mut bridge,
        &Budgets::default(),
    );
    assert_eq!(
        out.result,
        Ok(json!({
            "listing": "ls ok",
            "refused": "'grep' is not allowed in state 'identify-case'.",
            "names": ["archmaxWorkflowEnrichOrder"],
        }))
    );
    assert_eq!(
        bridge.calls,
        [
            ("ls".to_string(), json!({ "path": "scratchpad" })),
            ("grep".to_string(), json!({ "pattern": "x" }))
        ]
    );
}

#[test]
fn a_script_result_is_its_return_or_its_last_expression() {
    let args = json!({ "extra": "x", "variables": { "items": [{ "id": 1 }, { "id": 2 }] } });
    let run = |src: &str| {
        run_script(
            src,
            "skills/tally/scripts/count.js",
            &args,
            &mut FakeBridge::default(),
            &Budgets::default(),
        )
    };
    // The reference's own example: a completion value, JSON text.
    let out = run(
        "const list = args.variables?.items ?? []; JSON.stringify({ n: list.length, extra: args.extra ?? null });",
    );
    assert_eq!(out.result, Ok(json!("{\"n\":2,\"extra\":\"x\"}")));
    assert_eq!(out.tool_text(), "→ {\"n\":2,\"extra\":\"x\"}");
    let out = run("const n = await Promise.resolve(args.variables.items.length);\n({ n })");
    assert_eq!(out.result, Ok(json!({ "n": 2 })));
    let out = run("if (args.extra) return [1, 2];\nreturn 0;");
    assert_eq!(out.result, Ok(json!([1, 2])));
    assert_eq!(out.tool_text(), "→ [\n  1,\n  2\n]");
    let out = run("console.log('side effect only');");
    assert_eq!(out.result, Ok(Value::Null));
    assert_eq!(out.tool_text(), "side effect only");
}

#[test]
fn a_script_that_does_not_parse_reports_where() {
    let src = "const a = 1;\nconst b = ;\n";
    let out = run_script(
        src,
        "skills/s/scripts/bad.js",
        &json!({}),
        &mut FakeBridge::default(),
        &Budgets::default(),
    );
    let Err(SandboxError::Syntax {
        offset: Some(offset),
        ..
    }) = out.result
    else {
        panic!("expected a syntax error, got {:?}", out.result);
    };
    assert_eq!(&src[offset as usize..offset as usize + 1], ";");
    // With a top-level `return` (the fallback wrapper), the position is still in the file.
    let src = "return 1 +;\n";
    let out = run_script(
        src,
        "skills/s/scripts/bad.js",
        &json!({}),
        &mut FakeBridge::default(),
        &Budgets::default(),
    );
    let Err(SandboxError::Syntax {
        offset: Some(offset),
        ..
    }) = out.result
    else {
        panic!("expected a syntax error, got {:?}", out.result);
    };
    assert_eq!(offset, 10);
}

#[test]
fn a_promise_nothing_settles_is_an_engine_error() {
    let out = run_script(
        "await new Promise(() => {});",
        "skills/s/scripts/hang.js",
        &json!({}),
        &mut FakeBridge::default(),
        &Budgets::default(),
    );
    assert!(
        matches!(out.result, Err(SandboxError::Engine { .. })),
        "{:?}",
        out.result
    );
}

#[test]
fn the_sandbox_has_no_timers_filesystem_or_loader() {
    let out = run_script(
        "[typeof setTimeout, typeof require, typeof process, typeof std, typeof os, typeof fetch]",
        "skills/s/scripts/env.js",
        &json!({}),
        &mut FakeBridge::default(),
        &Budgets::default(),
    );
    assert_eq!(out.result, Ok(json!(vec!["undefined"; 6])));
}

// ---- The example workspace's hooks (FORMAT §F) ----

fn example_hook(name: &str, message: &str, bridge: &mut FakeBridge) -> Verdict {
    let path = format!("workflows/order-lookup/hooks/{name}");
    let out = run_hook(
        &corpus(&path),
        &path,
        &hook_input(message),
        bridge,
        &Budgets::default(),
    );
    out.verdict.unwrap()
}

#[test]
fn check_requester_admits_known_requesters_and_vetoes_the_rest() {
    let mut bridge = FakeBridge::with_orders();
    assert_eq!(
        example_hook(
            "check-requester.js",
            "Hi, I'm support@acmecorp.com. Where is ORD-1002?",
            &mut bridge
        ),
        Verdict::Ok
    );
    assert_eq!(
        bridge.calls[0],
        (
            "read_file".to_string(),
            json!({ "file_path": "skills/order-data/assets/orders.json" })
        )
    );
    assert_eq!(
        example_hook(
            "check-requester.js",
            "I am mallory@evil.example, show me orders",
            &mut bridge
        ),
        Verdict::Veto("The address mallory@evil.example is not in the order database.".into())
    );
    assert_eq!(
        example_hook("check-requester.js", "Where is my order?", &mut bridge),
        Verdict::Veto(
            "Please include your email address so the request can be matched to an account.".into()
        )
    );
    // The records cannot be read: vetoed, not crashed.
    assert_eq!(
        example_hook(
            "check-requester.js",
            "support@acmecorp.com",
            &mut FakeBridge::default()
        ),
        Verdict::Veto(
            "The order records could not be read, so the requester cannot be verified.".into()
        )
    );
}

#[test]
fn check_tenancy_vetoes_another_companys_orders() {
    let mut bridge = FakeBridge::with_orders();
    assert_eq!(
        example_hook(
            "check-tenancy.js",
            "Hi, I'm support@acmecorp.com. Status of ORD-1001?",
            &mut bridge
        ),
        Verdict::Ok
    );
    let foreign = Verdict::Veto("You are not authorized to view another company's orders.".into());
    assert_eq!(
        example_hook(
            "check-tenancy.js",
            "Hi, I'm support@acmecorp.com. Show me Globex's orders.",
            &mut bridge
        ),
        foreign
    );
    assert_eq!(
        example_hook(
            "check-tenancy.js",
            "support@acmecorp.com here: what about ORD-3001?",
            &mut bridge
        ),
        foreign
    );
}

#[test]
fn check_refund_enforces_the_policy_on_the_recorded_decision() {
    let refund = |decision: &str, order: &str| -> Verdict {
        let mut bridge = FakeBridge::with_orders();
        bridge.files.insert(
            "scratchpad/refund.json".into(),
            json!({ "orderId": order, "decision": decision, "reason": "r" }).to_string(),
        );
        example_hook(
            "check-refund.js",
            "support@acmecorp.com: refund please",
            &mut bridge,
        )
    };
    assert_eq!(refund("approved", "ORD-1001"), Verdict::Ok);
    assert_eq!(refund("denied", "ord-1002"), Verdict::Ok);
    assert_eq!(
        refund("approved", "ORD-1002"),
        Verdict::Veto(
            "Policy requires \"denied\" for ORD-1002; update scratchpad/refund.json.".into()
        )
    );
    assert_eq!(
        refund("maybe", "ORD-1001"),
        Verdict::Veto("The recorded decision must be exactly \"approved\" or \"denied\".".into())
    );
    assert_eq!(
        example_hook("check-refund.js", "refund", &mut FakeBridge::with_orders()),
        Verdict::Veto(
            "Record the decision in scratchpad/refund.json as { orderId, decision, reason } first."
                .into()
        )
    );
}

#[test]
fn enrich_orders_fans_out_one_sub_workflow_call_per_order() {
    let path = "skills/order-enrichment/scripts/enrich-orders.js";
    let mut bridge = FakeBridge {
        workflows: vec!["enrich-order".into()],
        ..FakeBridge::default()
    };
    let args = json!({ "variables": { "orders_to_enrich": [{ "order_id": "ORD-1002" }, { "order_id": "ORD-1003" }] } });
    let out = run_script(&corpus(path), path, &args, &mut bridge, &Budgets::default());
    assert_eq!(
        out.result,
        Ok(json!([
            { "order_id": "ORD-1002", "enrichment_file": "scratchpad/enrichment/ORD-1002.md", "delayed": false },
            { "order_id": "ORD-1003", "enrichment_file": "scratchpad/enrichment/ORD-1003.md", "delayed": true },
        ]))
    );
    let names: Vec<&str> = bridge.calls.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "archmax_workflow_enrich-order",
            "archmax_workflow_enrich-order"
        ]
    );
    assert_eq!(bridge.calls[1].1, json!({ "order_id": "ORD-1003" }));
    // A bridge that does not list the delegation still serves it: the name the script
    // writes (`tools.archmaxWorkflowEnrichOrder`) is mapped back to the wire name.
    let mut bridge = FakeBridge::default();
    let out = run_script(&corpus(path), path, &args, &mut bridge, &Budgets::default());
    assert_eq!(out.result.unwrap().as_array().map(Vec::len), Some(2));
    assert_eq!(bridge.calls[0].0, "archmax_workflow_enrich-order");
    // Without the variable the script returns an empty list and calls nothing.
    let mut bridge = FakeBridge {
        workflows: vec!["enrich-order".into()],
        ..FakeBridge::default()
    };
    let out = run_script(
        &corpus(path),
        path,
        &json!({ "variables": {} }),
        &mut bridge,
        &Budgets::default(),
    );
    assert_eq!(out.result, Ok(json!([])));
    assert!(bridge.calls.is_empty());
}

// ---- Static checks ----

#[test]
fn syntax_checks_point_into_the_file() {
    assert_eq!(
        check_syntax(
            "export default async function hook() { return ok(); }",
            true
        ),
        None
    );
    assert_eq!(
        check_syntax("const x = await tools.ls({});\nreturn x;", false),
        None
    );
    let src = "export default async function hook({ tools }) {\n  return ok(;\n}\n";
    let (offset, message) = check_syntax(src, true).unwrap();
    assert_eq!(&src[offset as usize..offset as usize + 1], ";", "{message}");
    // `export default` is only a hook's registration: a skill script cannot use it.
    assert!(check_syntax("export default 1;", false).is_some());
    // A non-ASCII character before the error keeps byte offsets straight.
    let src = "const é = 'ü';\nconst b = é +;\n";
    let (offset, _) = check_syntax(src, false).unwrap();
    assert_eq!(&src[offset as usize..offset as usize + 1], ";");
}

/// A body that closes the checker's wrapper and throws at top level: evaluating it would
/// surface "EXECUTED" as the check's message.
const ESCAPE_THROW: &str = "}); throw new Error(\"EXECUTED\"); (async function () {\n";
/// A body that closes the wrapper into an endless loop: evaluating it would never return.
const ESCAPE_LOOP: &str = "}); for (;;) {} (async function () {\n";

#[test]
fn syntax_checks_run_no_javascript() {
    for (src, is_hook) in [
        (ESCAPE_THROW, true),
        (ESCAPE_THROW, false),
        (ESCAPE_LOOP, true),
        (ESCAPE_LOOP, false),
        // A plain top-level throw and loop are fine to parse and must not run either.
        ("throw new Error(\"EXECUTED\");\n", false),
        (
            "export default () => ok();\nthrow new Error(\"EXECUTED\");\n",
            true,
        ),
        ("while (true) {}\n", false),
    ] {
        assert_eq!(check_syntax(src, is_hook), None, "{src:?}");
    }
    // A real syntax error after an escape is still found, at its byte.
    let src = "}); throw new Error(\"EXECUTED\"); (async function () {\nlet = ;\n";
    let (offset, message) = check_syntax(src, false).unwrap();
    assert!(!message.contains("EXECUTED"), "{message}");
    assert_eq!(offset as usize, src.find("= ;").unwrap(), "{message}");
}

#[test]
fn syntax_checks_are_strict_mode() {
    // Module code is strict: `with` and legacy octal literals do not parse.
    assert!(check_syntax("with (Math) { max(1, 2); }\n", false).is_some());
    assert!(check_syntax("const n = 017;\n", false).is_some());
    assert_eq!(check_syntax("const n = 0o17;\n", false), None);
}

#[test]
fn check_scripts_on_escaping_scripts_report_nothing() {
    let fs = MemFiles::new()
        .with(
            "workflows/w/workflow.yaml",
            "states:\n  start:\n    triggers: { manual: null }\n    before: { script: hooks/a.js }\n",
        )
        .with("workflows/w/hooks/a.js", ESCAPE_LOOP)
        .with("skills/s/SKILL.md", "---\nname: s\n---\n")
        .with("skills/s/scripts/run.js", ESCAPE_THROW);
    let dir = WorkflowDir {
        root: String::new(),
        slug: "w".into(),
    };
    assert_eq!(check_scripts(&fs, &dir), []);
}

#[test]
fn a_run_that_escapes_its_wrapper_is_under_the_time_budget() {
    // The fallback wrapper (top-level `return`) is `(async () => {BODY\n})()`: a body that
    // closes it runs its loop while the body is evaluated, which the interrupt handler stops.
    let src = "return 1;\n})(); for (;;) {} (async () => {\n";
    let budgets = Budgets {
        timeout_ms: 50,
        ..Budgets::default()
    };
    let out = run_script(
        src,
        "skills/s/scripts/x.js",
        &json!({}),
        &mut FakeBridge::default(),
        &budgets,
    );
    assert_eq!(
        out.result,
        Err(SandboxError::Budget {
            which: BudgetKind::Timeout,
            limit: 50
        })
    );
    let out = run_hook(
        ESCAPE_LOOP,
        "hooks/x.js",
        &hook_input("hi"),
        &mut FakeBridge::default(),
        &budgets,
    );
    assert!(
        matches!(
            out.verdict,
            Err(SandboxError::Budget {
                which: BudgetKind::Timeout,
                ..
            }) | Err(SandboxError::Syntax { .. })
        ),
        "{:?}",
        out.verdict
    );
}

#[test]
fn foreign_imports_name_the_specifier() {
    let src = "import { a } from \"@archmax-ai/harness/hooks\";\nimport b from 'lodash';\n";
    let found = foreign_imports(src);
    assert_eq!(found.len(), 1);
    let (range, spec) = &found[0];
    assert_eq!(spec, "lodash");
    assert_eq!(&src[range.start as usize..range.end as usize], "lodash");
}

#[test]
fn check_scripts_reports_hooks_the_workflow_names_and_skill_scripts() {
    let fs = MemFiles::new()
        .with(
            "workflows/w/workflow.yaml",
            "states:\n  start:\n    triggers: { manual: null }\n    before:\n      - script: hooks/a.js\n      - script: hooks/missing.js\n    after: { script: hooks/b.js }\n",
        )
        .with("workflows/w/hooks/a.js", "import x from \"left-pad\";\nexport default () => ok();\n")
        .with("workflows/w/hooks/b.js", "export default () => {\n  return ok(;\n};\n")
        .with("workflows/w/hooks/unused.js", "this does not parse\n")
        .with("skills/s/SKILL.md", "---\nname: s\n---\n")
        .with("skills/s/scripts/run.js", "import y from 'y';\nreturn (;\n")
        .with("skills/s/scripts/fine.mjs", "return 1;\n");
    let dir = WorkflowDir {
        root: String::new(),
        slug: "w".into(),
    };
    let got: Vec<(String, &str, u32, String)> = check_scripts(&fs, &dir)
        .into_iter()
        .map(|d| (d.file, d.code.code, d.range.start, d.message))
        .collect();
    assert_eq!(
        got,
        [
            (
                "skills/s/scripts/run.js".to_string(),
                "WFX502",
                15,
                "imports from `y`, which the sandbox drops; skill scripts may import only `@archmax-ai/harness/*` type carriers".to_string()
            ),
            ("skills/s/scripts/run.js".to_string(), "WFX503", 27, "the script does not parse as JavaScript: unexpected token in expression: ';'".to_string()),
            // A hook's foreign import is the workflow rule's (on workflow.yaml), not this one's.
            ("workflows/w/hooks/b.js".to_string(), "WFX503", 35, "the script does not parse as JavaScript: unexpected token in expression: ';'".to_string()),
        ]
    );
}

#[test]
fn the_example_workspace_scripts_are_clean() {
    let root = Path::new(CORPUS);
    let mut fs = MemFiles::new();
    for path in [
        "workflows/order-lookup/workflow.yaml",
        "workflows/order-lookup/hooks/check-refund.js",
        "workflows/order-lookup/hooks/check-requester.js",
        "workflows/order-lookup/hooks/check-tenancy.js",
        "skills/order-enrichment/SKILL.md",
        "skills/order-enrichment/scripts/enrich-orders.js",
    ] {
        fs.insert(path, std::fs::read(root.join(path)).unwrap());
    }
    let dir = WorkflowDir {
        root: String::new(),
        slug: "order-lookup".into(),
    };
    assert_eq!(check_scripts(&fs, &dir), []);
    // And breaking one of them is noticed.
    fs.insert(
        "workflows/order-lookup/hooks/check-tenancy.js",
        "export default async function hook( {\n",
    );
    assert_eq!(check_scripts(&fs, &dir).len(), 1);
}

#[test]
fn budgets_above_the_ceilings_are_clamped() {
    use wfx_runner::sandbox::{MAX_SANDBOX_MEMORY_LIMIT_BYTES, MAX_SANDBOX_TIMEOUT_MS};
    let b = Budgets::from_settings(Some(
        &json!({ "timeoutMs": 86_400_000u64, "memoryLimitBytes": 1u64 << 40 }),
    ));
    assert_eq!(b.timeout_ms, MAX_SANDBOX_TIMEOUT_MS);
    assert_eq!(b.memory_limit_bytes, Some(MAX_SANDBOX_MEMORY_LIMIT_BYTES));
    // Lowering is honoured as written.
    let b = Budgets::from_settings(Some(&json!({ "timeoutMs": 250, "memoryLimitBytes": 4096 })));
    assert_eq!((b.timeout_ms, b.memory_limit_bytes), (250, Some(4096)));
    // The ceilings sit above the defaults.
    assert!(MAX_SANDBOX_TIMEOUT_MS >= Budgets::default().timeout_ms);
}

#[test]
fn budgets_read_from_settings() {
    let b = Budgets::from_settings(Some(&json!({ "timeoutMs": 15000, "maxPtcCalls": null })));
    assert_eq!(b.timeout_ms, 15000);
    assert_eq!(b.max_ptc_calls, None);
    assert_eq!(b.memory_limit_bytes, Budgets::default().memory_limit_bytes);
    let b = Budgets::from_settings(Some(
        &json!({ "memoryLimitBytes": 1000000, "maxPtcCalls": 0 }),
    ));
    assert_eq!(
        (b.memory_limit_bytes, b.max_ptc_calls),
        (Some(1_000_000), Some(0))
    );
    assert_eq!(Budgets::from_settings(None), Budgets::default());
}

#[test]
fn tool_calls_queued_without_awaiting_are_bounded() {
    // Break-it finding: un-awaited `tools.*` calls were queued in Rust outside QuickJS's
    // memory limit (2.5 GB from a one-line loop). Past `MAX_QUEUED_CALLS` (or 16 MiB of
    // inputs) a call is rejected in the script; the ones queued before still run.
    let src = "const ps = [];
        for (let i = 0; i < 2000; i++) ps.push(tools.ls({ path: 'scratchpad' }).then(() => 'ok', (e) => String(e)));
        const out = await Promise.all(ps);
        return [out.filter((x) => x === 'ok').length, out[1999]];";
    let mut bridge = FakeBridge::default();
    let unlimited = Budgets {
        max_ptc_calls: None,
        ..Budgets::default()
    };
    let out = run_script(
        src,
        "skills/s/scripts/q.js",
        &json!({}),
        &mut bridge,
        &unlimited,
    );
    let v = out.result.unwrap();
    assert_eq!(v[0], json!(wfx_runner::sandbox::MAX_QUEUED_CALLS), "{v}");
    assert!(
        v[1].as_str()
            .unwrap()
            .contains("too many tool calls are waiting"),
        "{v}"
    );
    assert_eq!(bridge.calls.len(), wfx_runner::sandbox::MAX_QUEUED_CALLS);
    // The byte bound: 20 calls of 1 MiB each, 16 fit.
    let src = "const s = 'x'.repeat(1 << 20); const ps = [];
        for (let i = 0; i < 20; i++) ps.push(tools.readFile({ file_path: s }).then(() => 'ok', (e) => String(e)));
        const out = await Promise.all(ps);
        return out.filter((x) => x.includes('too many tool calls')).length;";
    let out = run_script(
        src,
        "skills/s/scripts/q.js",
        &json!({}),
        &mut FakeBridge::default(),
        &unlimited,
    );
    assert_eq!(out.result, Ok(json!(5)));
}
/// vendor/rquickjs-sys/PATCH.md: `Array.prototype.find` (and `findIndex`, `findLast`,
/// `findLastIndex`) freed the element of the previous iteration a second time when the
/// interrupt fired at the top of the next one: a hook calling `findIndex` over a large
/// array when its time ran out crashed the runner (SIGSEGV or a corrupted heap). Each call
/// here runs in a loop until the deadline, under several budgets so that the deadline
/// lands at different points; a crash fails the whole test binary.
#[test]
fn a_deadline_inside_a_callback_loop_never_corrupts_memory() {
    let calls = [
        "xs.find(f)",
        "xs.findIndex(f)",
        "xs.findLast(f)",
        "xs.findLastIndex(f)",
        "xs.some(f)",
        "xs.filter(f)",
        "xs.reduce((a, x) => x)",
        "xs.sort((a, b) => 0)",
        "xs.values().find(f)",
        "Array.from(xs, f)",
    ];
    for call in calls {
        for ms in [30u64, 55, 80] {
            let budgets = Budgets {
                timeout_ms: ms,
                ..Budgets::default()
            };
            let src = format!(
                "const big = 'a'.repeat(1 << 22); const o = big.slice(1) + 'b'; const xs = new Array(1 << 16).fill(big); const f = (x) => x === o;\nfor (;;) {{ {call}; }}\nexport default () => ok();"
            );
            let verdict = hook_with(&src, &budgets);
            assert_eq!(
                verdict,
                Err(SandboxError::Budget {
                    which: BudgetKind::Timeout,
                    limit: ms
                }),
                "{call}"
            );
        }
    }
}

/// Break-it pass 4, F3: QuickJS checks each `let` name against the names already declared
/// in its scope, so one `let` of 65,000 names parses in quadratic time (13.8 s in a release
/// build; `check` and the server run this compile-only check on every hook and skill
/// script). The vendored parser polls at every token and declaration: the syntax check
/// stops at `COMPILE_TIME_LIMIT_MS` and says why, and a hook's own `new Function` of such
/// text stops at its `timeoutMs`. Unpatched, the check returns no error (the text is valid)
/// and the hook ends with its verdict.
#[test]
fn a_quadratic_parse_stops_at_its_deadline() {
    let names: Vec<String> = (0..65_000).map(|i| format!("_{i:x}")).collect();
    let body = format!(
        "export default function f() {{ let {}; return 1; }}\n",
        names.join(", ")
    );
    let (_, message) = check_syntax(&body, true).expect("the check stops at its deadline");
    assert!(
        message.contains("took longer than the 1000 ms bound of a syntax check"),
        "{message}"
    );
    // The same names split over 650 functions parse quickly (about 0.1 s, a tenth of the
    // bound; 65 functions of 1,000 took 0.6 s and, before the bound was CPU time, passed a
    // wall-clock bound under load): no error.
    let split: String = names
        .chunks(100)
        .enumerate()
        .map(|(i, c)| format!("function f{i}() {{ let {}; }}\n", c.join(", ")))
        .collect();
    assert_eq!(
        check_syntax(&format!("{split}export default 1;\n"), true),
        None
    );

    let budgets = Budgets {
        timeout_ms: 200,
        ..Budgets::default()
    };
    let verdict = hook_with(
        "const n = []; for (let i = 0; i < 65000; i++) n.push('_' + i.toString(36));\nnew Function('let ' + n.join(',') + ';');\nexport default () => ok();",
        &budgets,
    );
    assert_eq!(
        verdict,
        Err(SandboxError::Budget {
            which: BudgetKind::Timeout,
            limit: 200
        })
    );
}

/// Break-it pass 4, F1, F2 and F6: more single builtin calls that ran far past the time
/// budget, each now polled in the vendored engine (vendor/rquickjs-sys/PATCH.md): generic
/// loops over a huge `length` of an object that holds no elements (no memory, so the
/// memory budget never stops them; unpatched, `reverse` over 2^53 − 1 indices does not
/// end), a regular expression whose long literal pattern is tried at many positions
/// (unpatched it polled every 10,000 attempts: 80 s against 1 s), and a Proxy's `ownKeys`
/// duplicate check, quadratic in the keys (400,000 keys: 28 s against 1 s).
#[test]
fn loops_over_huge_lengths_long_literal_regexes_and_proxy_keys_stop_at_the_budget() {
    let budgets = Budgets {
        timeout_ms: 200,
        ..Budgets::default()
    };
    for (name, body) in [
        (
            "reverse",
            "Array.prototype.reverse.call({ length: 2 ** 53 - 1 });",
        ),
        ("join", "const a = []; a.length = 2 ** 32 - 1; String(a);"),
        (
            "copyWithin",
            "Array.prototype.copyWithin.call({ length: 2 ** 53 - 1 }, 1, 0);",
        ),
        (
            "lastIndexOf",
            "Array.prototype.lastIndexOf.call({ length: 2 ** 53 - 1 }, 1);",
        ),
        ("String.raw", "String.raw({ raw: { length: 2 ** 31 } });"),
        (
            "RegExp",
            "new RegExp('a'.repeat(1 << 20) + 'b').test('a'.repeat(1 << 22));",
        ),
        (
            "Proxy ownKeys",
            "const keys = []; for (let i = 0; i < 200000; i++) keys.push('k' + i); Reflect.ownKeys(new Proxy({}, { ownKeys: () => keys }));",
        ),
    ] {
        assert_times_out(name, body, &budgets);
    }
}

/// Break-it pass 4, F4: an allocation that fails inside `String.prototype.normalize` or
/// while building an `Error`'s `stack` throws no exception object (the hook saw "threw:
/// uninitialized" or "threw: "); it is the memory budget, since the runtime's allocator
/// refused an allocation (issue 24: the `stack` case read memory usage near the limit, and
/// sometimes got 'the script awaits a promise that nothing settles').
#[test]
fn an_allocation_failing_inside_normalize_or_a_stack_is_the_memory_budget() {
    let budgets = Budgets {
        memory_limit_bytes: Some(8 << 20),
        ..Budgets::default()
    };
    for (name, body) in [
        (
            "normalize",
            "let s = 'é'; for (;;) { s = s + s; s.normalize('NFD'); }",
        ),
        (
            "stack",
            "function f(n) { return n ? f(n - 1) : new Error('e'); } const r = []; for (;;) r.push(f(100).stack);",
        ),
    ] {
        let verdict = hook_with(&format!("{body}\nexport default () => ok();"), &budgets);
        assert_eq!(
            verdict,
            Err(SandboxError::Budget {
                which: BudgetKind::Memory,
                limit: 8 << 20
            }),
            "{name}"
        );
    }
}

/// Issue 24: a run that exhausts its memory budget ends with the memory budget, whichever
/// allocation failed. QuickJS cannot always say so: with no memory left for the error it
/// throws `null` (seen when the array is a function's local, freed before the run ends), or
/// an error without a message (building a `stack`), or it drops the promise job that would
/// resume the run, which then never settles (the array is global, so memory stays full).
/// Which allocation fails depends on the exact byte count, so each script runs under limits
/// a few bytes apart and the failure lands on each allocation of its loop in turn.
#[test]
fn the_memory_budget_is_reported_whichever_allocation_fails() {
    const LIMITS: u64 = 32;
    let mut wrong = Vec::new();
    for (name, body) in [
        (
            "global array",
            "const r = []; for (let i = 0;; i++) r.push({ i, s: 'x' + i });",
        ),
        (
            "local array",
            "function g() { const r = []; for (let i = 0;; i++) r.push({ i, s: 'x' + i }); } g();",
        ),
        (
            "awaits",
            "async function g() { const r = []; for (let i = 0;; i++) { r.push(Promise.resolve(i)); await r[i]; } } await g();",
        ),
        (
            "stacks",
            "function f(n) { return n ? f(n - 1) : new Error('e'); } const r = []; for (;;) r.push(f(100).stack);",
        ),
    ] {
        let source = format!("{body}\nexport default () => ok();");
        let mut seen: BTreeMap<String, u64> = BTreeMap::new();
        for k in 0..LIMITS {
            let limit = (1 << 20) + k * 40;
            let budgets = Budgets {
                memory_limit_bytes: Some(limit),
                ..Budgets::default()
            };
            let verdict = hook_with(&source, &budgets);
            let expected = Err(SandboxError::Budget {
                which: BudgetKind::Memory,
                limit,
            });
            if verdict != expected {
                *seen.entry(format!("{verdict:?}")).or_default() += 1;
            }
        }
        if !seen.is_empty() {
            wrong.push((name, seen));
        }
    }
    assert!(wrong.is_empty(), "of {LIMITS} limits each: {wrong:#?}");
}

/// Issue 24: the memory budget counts the same bytes whatever the process's heap holds, so
/// a script runs out at the same allocation on every run. The script keeps strings of about
/// 200 KB until the budget stops it, then small objects until it stops again, and returns
/// both counts (the second moves with every 50 or so bytes of difference). It runs in a
/// fresh process of this test binary, where glibc maps blocks that large (each then counted
/// rounded up to a page), and here after a 16 MiB mapped block was freed, after which glibc
/// serves them from the heap for every thread of the process: unpatched, QuickJS counted
/// them at the size `malloc_usable_size` reports, so the counts differed.
#[test]
fn a_script_runs_out_of_memory_at_the_same_allocation_every_run() {
    const PROBE: &str = "WFX_TEST_MEMORY_PROBE";
    fn counts() -> Result<Value, SandboxError> {
        run_script(
            "const big = []; let head = null; let n = 0;\ntry { for (;;) big.push('x'.repeat(200000 + big.length * 1000)); } catch (e) {}\ntry { for (;;) { head = { head }; n++; } } catch (e) {}\nconst kept = big.length; big.length = 0; head = null; return [kept, n];",
            "skills/s/scripts/fill.js",
            &json!({}),
            &mut FakeBridge::default(),
            &Budgets {
                memory_limit_bytes: Some(4 << 20),
                ..Budgets::default()
            },
        )
        .result
    }
    if std::env::var_os(PROBE).is_some() {
        println!("counts={}", counts().unwrap());
        return;
    }
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_script_runs_out_of_memory_at_the_same_allocation_every_run",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PROBE, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&child.stdout);
    let fresh: Value = stdout
        .split("counts=")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_else(|| panic!("the probe printed no counts: {stdout}"));
    assert!(fresh[0].as_u64().unwrap_or(0) >= 10, "{fresh}");
    drop(std::hint::black_box(vec![1u8; 16 << 20]));
    assert_eq!(counts(), Ok(fresh.clone()));
    assert_eq!(std::thread::spawn(counts).join().unwrap(), Ok(fresh));
}
