//! Adversarial corpus through `wfx-lsp check` (the built binary), issue 8: an alias bomb,
//! a 50 MB file, 100,000-deep flow nesting, invalid UTF-8, NUL bytes, a 1 MB line,
//! 100,000 keys, mixed CRLF and LF, and a BOM in the middle of a file. Each file is
//! generated here (nothing large is kept in the repository) and must end in a clean
//! report: exit 0 or 1 (never 101, the panic exit, nor a signal), JSON on stdout, and the
//! expected diagnostic codes where the input is wrong. The process gets a 60 s hang guard
//! (not a speed assertion); the measured time and peak RSS (VmHWM, sampled) are printed
//! and the peak RSS is bounded generously (bounded memory, issue 8).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "test code fails loudly and prints its measurements"
)]

mod support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{adversarial, corpus_copy};

const HANG_GUARD: Duration = Duration::from_secs(60);
const TESTS: &str = "workflows/order-lookup/tests";

/// Runs `wfx-lsp check --format json <rel>` in `dir` with the hang guard; returns (exit
/// code, stdout JSON, elapsed, peak RSS in KiB as sampled).
fn check(dir: &std::path::Path, rel: &str) -> (Option<i32>, Value, Duration, u64) {
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_wfx-lsp"))
        .args(["check", "--format", "json", rel])
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        out.read_to_end(&mut s).unwrap();
        s
    });
    let mut peak = 0;
    let status = loop {
        if let Some(h) = vm_hwm(pid) {
            peak = peak.max(h);
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t.elapsed() > HANG_GUARD {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{rel}: `wfx-lsp check` still running after {HANG_GUARD:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = t.elapsed();
    let stdout = reader.join().unwrap();
    let json: Value = serde_json::from_slice(&stdout).unwrap_or_else(|e| {
        panic!(
            "{rel}: stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&stdout[..stdout.len().min(500)])
        )
    });
    (status.code(), json, elapsed, peak)
}

fn vm_hwm(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn codes(report: &Value) -> Vec<String> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn adversarial_files_end_in_diagnostics_or_a_clean_report() {
    let ws = corpus_copy();
    let mut missing = Vec::new();
    for (stem, bytes, want) in adversarial() {
        let rel = format!("{TESTS}/{stem}.test.yaml");
        std::fs::write(ws.path().join(&rel), &bytes).unwrap();
        let (code, report, elapsed, peak) = check(ws.path(), &rel);
        let got = codes(&report);
        let mut distinct = got.clone();
        distinct.dedup();
        println!(
            "{stem:<14} {:>9} bytes  exit {code:?}  {:>8.1} ms  peak RSS {:>7.1} MiB  {} diagnostics {distinct:?}",
            bytes.len(),
            elapsed.as_secs_f64() * 1e3,
            peak as f64 / 1024.0,
            got.len()
        );
        let expected_exit = if want.is_empty() { 0 } else { 1 };
        assert!(
            matches!(code, Some(0 | 1)),
            "{stem}: exit {code:?} (panic or signal)"
        );
        if code != Some(expected_exit) {
            missing.push(format!(
                "{stem}: exit {code:?}, expected {expected_exit}: {got:?}"
            ));
        }
        for w in &want {
            if !got.iter().any(|c| c.starts_with(w)) {
                missing.push(format!("{stem}: want {w}, got {got:?}"));
            }
        }
        // Bounded memory: far below what an expanded alias bomb (9^10 nodes) would take.
        assert!(peak < 1024 * 1024, "{stem}: peak RSS {peak} KiB");
        // Bounded output: at most 1,000 diagnostics per file plus one WFX009 for the rest.
        assert!(
            got.len() <= wfx_schemas::diagnostics::MAX_PER_FILE + 1,
            "{stem}: {} diagnostics",
            got.len()
        );
        // Every diagnostic range lies inside the file.
        for d in report["diagnostics"].as_array().unwrap() {
            let end = d["range"]["end"]["line"].as_u64().unwrap_or(0);
            assert!(
                end <= bytes.iter().filter(|b| **b == b'\n').count() as u64 + 1,
                "{stem}: {d}"
            );
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}

#[test]
fn a_50_mb_case_is_checked_once_with_bounded_memory() {
    let ws = corpus_copy();
    let mut big = String::with_capacity(51 * 1024 * 1024);
    big.push_str("title: Fifty megabytes\ndescription: A very large case.\nsteps:\n");
    let mut i = 0;
    while big.len() < 50 * 1024 * 1024 {
        big.push_str(&format!("  - send: \"{} {i}\"\n", "z".repeat(100)));
        i += 1;
    }
    big.push_str("  - sned: the only mistake\n");
    let rel = format!("{TESTS}/big.test.yaml");
    std::fs::write(ws.path().join(&rel), &big).unwrap();
    let (code, report, elapsed, peak) = check(ws.path(), &rel);
    let got = codes(&report);
    println!(
        "50 MB case: {} bytes, exit {code:?}, {:.1} ms, peak RSS {:.1} MiB, codes {got:?}",
        big.len(),
        elapsed.as_secs_f64() * 1e3,
        peak as f64 / 1024.0
    );
    // Over the 8 MiB limit: one WFX008, the file is not parsed (FORMAT has no size limit;
    // ours is documented with the code).
    assert_eq!(code, Some(1), "{got:?}");
    assert_eq!(got, vec!["WFX008".to_owned()]);
    assert!(peak < 512 * 1024, "peak RSS {peak} KiB for a 50 MB file");
}

#[test]
fn script_diagnostics_are_capped_per_file_too() {
    // The per-file bound (at most 1,000 plus one WFX009) holds for the script checks as
    // well: a skill script with 1,500 foreign imports (WFX502 each).
    let ws = corpus_copy();
    let script = ws.path().join("skills/order-enrichment/scripts/imports.js");
    let mut text = String::new();
    for i in 0..1500 {
        text.push_str(&format!("import m{i} from \"lodash-{i}\";\n"));
    }
    std::fs::write(&script, text).unwrap();
    let (code, report, _, _) = check(ws.path(), ".");
    // WFX502 is a warning.
    assert_eq!(code, Some(0));
    let on_script: Vec<&Value> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| {
            d["file"]
                .as_str()
                .is_some_and(|f| f.ends_with("scripts/imports.js"))
        })
        .collect();
    assert_eq!(on_script.len(), 1001);
    assert_eq!(on_script[1000]["code"], "WFX009", "{}", on_script[1000]);
    assert!(
        on_script[1000]["message"]
            .as_str()
            .unwrap()
            .starts_with("500 more problems"),
        "{}",
        on_script[1000]
    );
}

#[test]
fn a_7_mib_unknown_key_is_reported_with_bounded_memory() {
    // A near-miss suggestion compares the key with every known key; a 7 MiB key must not
    // make that comparison allocate per character pair (FORMAT §A.1 unknown keys).
    let ws = corpus_copy();
    let rel = "workflows/enrich-order/workflow.yaml";
    let path = ws.path().join(rel);
    let mut text = std::fs::read_to_string(&path).unwrap();
    // An explicit key: an implicit one is limited to 1,024 characters by YAML.
    text.push_str(&format!("? {}\n: 1\n", "k".repeat(7 * 1024 * 1024)));
    std::fs::write(&path, &text).unwrap();
    let (code, report, elapsed, peak) = check(ws.path(), rel);
    let got = codes(&report);
    println!(
        "7 MiB key: exit {code:?}, {:.1} ms, peak RSS {:.1} MiB, codes {got:?}",
        elapsed.as_secs_f64() * 1e3,
        peak as f64 / 1024.0
    );
    assert_eq!(code, Some(1), "{got:?}");
    assert!(got.contains(&"WFX202".to_owned()), "{got:?}");
    assert!(peak < 512 * 1024, "peak RSS {peak} KiB for a 7 MiB key");
}

#[test]
fn guard_glob_bombs_end_in_wfx227() {
    // Thirty `{a,b}` groups (2^30 alternatives), a thousand nested groups and a 20,000-
    // character glob in `tools.allow_always` / `tools.forbid_always`: each is one WFX227 on its glob
    // (bounded work, `wfx_schemas::glob`), and `check` reports instead of expanding.
    let ws = corpus_copy();
    let rel = "workflows/enrich-order/workflow.yaml";
    let path = ws.path().join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let bomb = format!("docs/{}", "{a,b}".repeat(30));
    let deep = format!("{}x{}", "{a,".repeat(1000), "}".repeat(1000));
    let long = "l".repeat(20_000);
    // The corpus spec has no root `tools`; the test appends one.
    assert!(
        !text.contains("\ntools:"),
        "the corpus spec grew a root `tools`"
    );
    let text = format!(
        "{text}\ntools:\n  allow_always:\n    - {{ tool: read_file, paths: [\"{bomb}\"] }}\n    - {{ tool: grep, paths: [\"{long}\"] }}\n  forbid_always:\n    - {{ tool: write_file, paths: [\"{deep}\"] }}\n"
    );
    std::fs::write(&path, &text).unwrap();
    let (code, report, elapsed, peak) = check(ws.path(), rel);
    let got = codes(&report);
    println!(
        "glob bombs: exit {code:?}, {:.1} ms, peak RSS {:.1} MiB, codes {got:?}",
        elapsed.as_secs_f64() * 1e3,
        peak as f64 / 1024.0
    );
    assert_eq!(code, Some(1), "{got:?}");
    let over: Vec<&Value> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "WFX227")
        .collect();
    assert_eq!(over.len(), 3, "{got:?}");
}

/// The message of the one diagnostic with `code`.
fn message_of(report: &Value, code: &str) -> String {
    let hits: Vec<&Value> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == code)
        .collect();
    assert_eq!(hits.len(), 1, "{code}: {hits:?}");
    hits[0]["message"].as_str().unwrap().to_owned()
}

#[test]
fn huge_flows_of_errors_are_counted_not_built() {
    // Bounded memory (docs/security.md §3): a 7.9 MB `steps: [a, a, …]` (2.6 million
    // nodes) used to cost ~2.9 GB; it is now cut at `yaml::MAX_NODES` with one WFX008.
    // Below that bound, 490,000 wrong steps and 240,000 duplicate keys are built only up
    // to `diagnostics::MAX_COLLECTED` and counted past it: the WFX009 still says exactly
    // how many were left out.
    let ws = corpus_copy();
    let huge = format!(
        "title: x\ndescription: x\nsteps: [{}]\n",
        vec!["a"; 2_630_000].join(", ")
    );
    let steps = format!(
        "title: x\ndescription: x\nsteps: [{}]\n",
        vec!["a"; 490_000].join(", ")
    );
    let dups = format!(
        "title: x\ndescription: x\nsteps:\n  - send: hi\nvariables:\n{}",
        "  a: 1\n".repeat(240_001)
    );
    for (stem, text, want) in [
        ("huge", huge, None),
        ("steps", steps, Some("489000 more problems")),
        ("dups", dups, Some("239000 more problems")),
    ] {
        let rel = format!("{TESTS}/{stem}.test.yaml");
        std::fs::write(ws.path().join(&rel), &text).unwrap();
        let (code, report, elapsed, peak) = check(ws.path(), &rel);
        let got = codes(&report);
        println!(
            "{stem}: {} bytes, exit {code:?}, {:.1} ms, peak RSS {:.1} MiB, {} diagnostics",
            text.len(),
            elapsed.as_secs_f64() * 1e3,
            peak as f64 / 1024.0,
            got.len()
        );
        assert_eq!(code, Some(1), "{stem}");
        match want {
            None => {
                assert_eq!(got, ["WFX008"], "{stem}");
                assert!(
                    message_of(&report, "WFX008").contains("more than 500000 YAML nodes"),
                    "{report}"
                );
            }
            Some(want) => {
                assert_eq!(got.len(), 1001, "{stem}");
                let m = message_of(&report, "WFX009");
                assert!(m.starts_with(want), "{stem}: {m}");
            }
        }
        assert!(peak < 200 * 1024, "{stem}: peak RSS {peak} KiB");
    }
}

#[test]
fn did_you_mean_work_is_bounded_per_file() {
    // Bounded work: 1,000 unknown `reachedState` names against a 40,000-state workflow
    // compared each with every state (40 million edit distances) and did not finish. The
    // near-miss searches of a file share `rules::case::MAX_SUGGEST_WORK`: the first
    // names still get a suggestion, the rest the plain diagnostic.
    let ws = corpus_copy();
    let dir = ws.path().join("workflows/many-states");
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let mut spec = String::from("instructions: x\nstates:\n  s0:\n    triggers:\n      manual:\n");
    for i in 1..40_000 {
        spec.push_str(&format!("  state-number-{i}:\n    title: x\n"));
    }
    std::fs::write(dir.join("workflow.yaml"), spec).unwrap();
    let mut case =
        String::from("title: Many\ndescription: Unknown states.\nsteps:\n  - send: hi\n");
    for i in 0..1000 {
        case.push_str(&format!("  - reachedState: state-numbr-{i}x\n"));
    }
    let rel = "workflows/many-states/tests/many.test.yaml";
    std::fs::write(ws.path().join(rel), case).unwrap();
    let (code, report, elapsed, peak) = check(ws.path(), rel);
    println!(
        "did-you-mean: exit {code:?}, {:.1} ms, peak RSS {:.1} MiB",
        elapsed.as_secs_f64() * 1e3,
        peak as f64 / 1024.0
    );
    assert_eq!(code, Some(1));
    let d = report["diagnostics"].as_array().unwrap();
    let unknown: Vec<&str> = d
        .iter()
        .filter(|d| d["code"] == "WFX303")
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert_eq!(unknown.len(), 1000);
    assert!(
        unknown[0].contains("did you mean `state-number-"),
        "{}",
        unknown[0]
    );
    assert!(!unknown[999].contains("did you mean"), "{}", unknown[999]);
}

#[test]
fn guard_glob_work_is_bounded_per_file() {
    // Bounded work: 125,000 guard globs, each within its own bounds (1,024 alternatives),
    // took 27–40 s. The globs of a file share `glob::MAX_FILE_GLOB_CHARS`; past it every
    // further glob is WFX227 (an error, so `test` refuses the workflow).
    let ws = corpus_copy();
    let rel = "workflows/enrich-order/workflow.yaml";
    let path = ws.path().join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let globs = vec![format!("\"{}\"", "{a,b}".repeat(10)); 125_000].join(", ");
    let text =
        format!("{text}\ntools:\n  allow_always:\n    - {{ tool: read_file, paths: [{globs}] }}\n");
    std::fs::write(&path, &text).unwrap();
    let (code, report, elapsed, peak) = check(ws.path(), rel);
    println!(
        "125,000 globs: exit {code:?}, {:.1} ms, peak RSS {:.1} MiB",
        elapsed.as_secs_f64() * 1e3,
        peak as f64 / 1024.0
    );
    assert_eq!(code, Some(1));
    let over: Vec<&Value> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "WFX227" || d["code"] == "WFX009")
        .collect();
    assert!(!over.is_empty(), "{report}");
    assert!(
        over[0]["message"]
            .as_str()
            .unwrap()
            .contains("the file's globs together expand to more than"),
        "{}",
        over[0]
    );
}
