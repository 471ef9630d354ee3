//! Benchmark (not a test): the cost of one lifecycle hook call including the sandbox start
//! (a fresh QuickJS runtime and context per call), for a trivial hook and for the example
//! workspace's `check-requester.js` reading `orders.json` through the bridge (FORMAT §E.6).
//! Run with `cargo bench -p wfx-runner --bench sandbox`; the target is < 2 ms.
//!
//! Also the cost of the interrupt poll (issue 12, docs/performance.md "Sandbox time limit"):
//! a tight loop of 3,000,000 additions (best of 5, ms), and how long a loop whose body is one
//! `indexOf` over a 1 MiB string runs past a 1,000 ms `timeoutMs` before it is stopped.

#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wfx_runner::sandbox::{Bridge, Budgets, ESSENTIAL_TOOLS, run_hook};

struct Orders(String);

impl Bridge for Orders {
    fn tool_names(&self) -> Vec<String> {
        ESSENTIAL_TOOLS.iter().map(|s| s.to_string()).collect()
    }
    fn call_tool(&mut self, _name: &str, _input: Value) -> Result<String, String> {
        Ok(self.0.clone())
    }
}

fn measure(label: &str, source: &str, bridge: &mut Orders, input: &Value) {
    let budgets = Budgets::default();
    let runs = 300;
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let out = run_hook(source, "hooks/bench.js", input, bridge, &budgets);
        times.push(start.elapsed());
        assert!(out.verdict.is_ok(), "{:?}", out.verdict);
    }
    times.sort();
    let mean = times.iter().sum::<Duration>() / runs as u32;
    let median = times[runs / 2];
    let p95 = times[runs * 95 / 100];
    println!("{label}: mean {mean:?}, median {median:?}, p95 {p95:?} over {runs} calls");
}

fn main() {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/corpus/customer-support/"
    );
    let orders = std::fs::read_to_string(format!("{root}skills/order-data/assets/orders.json"))
        .unwrap_or_default();
    let hook = std::fs::read_to_string(format!(
        "{root}workflows/order-lookup/hooks/check-requester.js"
    ))
    .unwrap_or_default();
    let input = json!({
        "state": "identify-case", "phase": "before", "trigger": "manual", "variables": {},
        "messages": [{ "role": "user", "text": "Hi, I'm support@acmecorp.com. Where is ORD-1002?" }],
    });
    let mut bridge = Orders(orders);
    measure(
        "trivial hook (ok())",
        "export default () => ok();",
        &mut bridge,
        &input,
    );
    measure("check-requester.js", &hook, &mut bridge, &input);

    let mut best = Duration::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        let out = run_hook(
            "let s = 0; for (let i = 0; i < 3000000; i++) { s += i; }\nexport default () => ok();",
            "hooks/tight.js",
            &input,
            &mut bridge,
            &Budgets::default(),
        );
        best = best.min(start.elapsed());
        assert!(out.verdict.is_ok(), "{:?}", out.verdict);
    }
    println!("tight loop (3,000,000 additions): best of 5 {best:?}");

    let budgets = Budgets {
        timeout_ms: 1_000,
        ..Budgets::default()
    };
    let start = Instant::now();
    let out = run_hook(
        "const s = 'a'.repeat(1 << 20); let n = 0; while (true) { n += s.indexOf('b'); }",
        "hooks/index-of.js",
        &input,
        &mut bridge,
        &budgets,
    );
    println!(
        "indexOf loop over 1 MiB, timeoutMs 1000: stopped after {:?} ({:?})",
        start.elapsed(),
        out.verdict
    );
}
