//! `wfx-lsp check` on cassettes (`WFX45x`, docs/cassettes.md): a cassette with a planted
//! credential-shaped string and an unknown key is reported, and the string never reaches
//! the output in any format (the code frame masks it).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

use std::process::Command;

// Fake, and split so that no committed line holds a key-shaped value.
const KEY: &str = concat!("sk-", "live-FAKEnotArealKEY00000");

#[test]
fn check_reports_cassette_problems_and_never_prints_the_key() {
    let ws = tempfile::tempdir().unwrap();
    let tests = ws.path().join("workflows/w/tests");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(
        ws.path().join("workflows/w/workflow.yaml"),
        "title: W\ninstructions: Be brief.\nstates:\n  a:\n    triggers: { manual: }\n    instructions: Stop.\n",
    )
    .unwrap();
    let cassette = format!(
        "{{\n  \"version\": 1,\n  \"recordedWith\": \"wfx-lsp 0.1.0\",\n  \"recordedAt\": \"2026-12-03T08:52:53Z\",\n  \"clock\": {{ \"startMs\": 0, \"stepMs\": 1, \"zone\": \"UTC\" }},\n  \"model\": \"m\",\n  \"endpoint\": \"127.0.0.1:9\",\n  \"case\": \"a\",\n  \"recordedBy\": \"me\",\n  \"inputs\": {{ \"case\": \"x\", \"workflow\": \"y\" }},\n  \"prompts\": {{ \"p0\": \"use {KEY} now\" }},\n  \"interactions\": []\n}}\n"
    );
    std::fs::write(tests.join("a.cassette.json"), cassette).unwrap();
    for format in ["human", "json", "github", "sarif"] {
        let out = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
            .current_dir(ws.path())
            .args(["check", ".", "--format", format])
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(1), "{format}: {text}");
        assert!(text.contains("WFX452"), "{format}: {text}");
        assert!(text.contains("WFX453"), "{format}: {text}");
        assert!(!text.contains(KEY), "{format} printed the key: {text}");
        assert!(
            !text.contains("FAKEnotAreal"),
            "{format} printed part of the key: {text}"
        );
    }
}
