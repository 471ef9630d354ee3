//! Tidy checks over the whole repository (STYLE §2, §7): module docs on every Rust file,
//! dependency direction (the format crate and the runner never pull in LSP, async or CLI
//! crates), and no LSP types in the pure IDE layer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_source_file_starts_with_a_module_doc() {
    let mut files = Vec::new();
    for dir in ["schemas/src", "runner/src", "server/src"] {
        rust_files(&repo().join(dir), &mut files);
    }
    assert!(
        files.len() > 20,
        "too few source files found: {}",
        files.len()
    );
    let missing: Vec<_> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` module doc: {missing:#?}"
    );
}

/// The host's target triple, as `rustc -vV` prints it.
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let out = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("rustc -vV runs");
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .trim()
        .to_owned()
}

#[test]
fn lower_crates_do_not_depend_on_protocol_or_runtime_crates() {
    // Only this platform's packages: a fresh machine's build fetched no others, and
    // `--offline` must not need them (issue 13: the README's test command on a fresh
    // cargo home).
    let host = host_triple();
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", &host])
        .current_dir(repo())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let nodes = meta["resolve"]["nodes"].as_array().unwrap();
    let name_of = |id: &str| -> String {
        meta["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id)
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let forbidden = [
        "tower-lsp-server",
        "tokio",
        "clap",
        "ropey",
        "dashmap",
        "ls-types",
        "lsp-types",
        // No network code below the binary: the live model's HTTP client lives in
        // server/src/live/ behind the runner's `ChatTransport` seam (issue 14).
        "ureq",
        "rustls",
        "reqwest",
        "hyper",
    ];
    for krate in ["wfx-schemas", "wfx-runner"] {
        let root = nodes
            .iter()
            .find(|n| name_of(n["id"].as_str().unwrap()) == krate)
            .unwrap();
        // Walk normal (non-dev) dependencies transitively.
        let mut todo = vec![root["id"].as_str().unwrap().to_owned()];
        let mut seen = std::collections::BTreeSet::new();
        while let Some(id) = todo.pop() {
            if !seen.insert(id.clone()) {
                continue;
            }
            let node = nodes.iter().find(|n| n["id"] == id.as_str()).unwrap();
            for dep in node["deps"].as_array().unwrap() {
                let normal = dep["dep_kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["kind"].is_null());
                if normal {
                    let dep_id = dep["pkg"].as_str().unwrap().to_owned();
                    let name = name_of(&dep_id);
                    assert!(
                        !forbidden.contains(&name.as_str()),
                        "{krate} depends on {name}"
                    );
                    todo.push(dep_id);
                }
            }
        }
        assert!(seen.len() > 1, "{krate} has no dependencies at all?");
    }
}

#[test]
fn ide_layer_names_no_lsp_types() {
    let mut files = Vec::new();
    rust_files(&repo().join("server/src/ide"), &mut files);
    assert!(!files.is_empty());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for needle in ["tower_lsp", "lsp_types", "ls_types"] {
            assert!(!text.contains(needle), "{} mentions {needle}", f.display());
        }
    }
}
