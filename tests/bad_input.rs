//! Hostile files through `wfx-lsp check`: binary garbage, a 7 MB case (under the 8 MiB limit), 10,000-deep
//! nesting, invalid UTF-8, an alias bomb and NUL bytes. Each must end in a diagnostic
//! with the expected code (exit 1) — never a panic (exit 101), a hang or a crash. No
//! timings are asserted.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::process::Command;

use serde_json::Value;
use support::*;

#[test]
fn hostile_files_yield_diagnostics_not_crashes() {
    let ws = corpus_copy();
    for (stem, bytes, code) in hostile() {
        let rel = format!("workflows/order-lookup/tests/{stem}.test.yaml");
        std::fs::write(ws.path().join(&rel), &bytes).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
            .args(["check", "--format", "json", &rel])
            .current_dir(ws.path())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{stem}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let codes: Vec<&str> = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap())
            .collect();
        assert!(
            codes.iter().any(|c| c.starts_with(code)),
            "{stem}: {codes:?}"
        );
        assert!(
            v["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .all(|d| d["file"] == rel.as_str()),
            "{stem}"
        );
        // The human renderer copes too (long lines, invalid bytes).
        let human = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
            .args(["check", &rel])
            .current_dir(ws.path())
            .output()
            .unwrap();
        assert_eq!(human.status.code(), Some(1), "{stem}");
        assert!(
            human.stdout.len() < 64 * 1024,
            "{stem}: the code frame is not bounded"
        );
    }
}
