//! Shared helpers of the root package's integration tests: LSP `Content-Length` framing
//! (strict: anything on the wire that is not a frame is recorded as a violation), a
//! temp copy of the customer-support corpus, and `file://` URIs; the in-process client in
//! [`inprocess`] and the real-stdio client (the built binary) in [`stdio`].

#![allow(dead_code, reason = "each test crate uses a subset")]

pub mod fake_model;
pub mod inprocess;
pub mod script_model;
pub mod stdio;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copies a folder recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A temp copy of `tests/corpus/customer-support` (fails loudly if the corpus is missing).
pub fn corpus_copy() -> tempfile::TempDir {
    let src = repo().join("tests/corpus/customer-support");
    assert!(
        src.join("workflows/order-lookup/workflow.yaml").is_file(),
        "the corpus is missing"
    );
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&src, tmp.path());
    tmp
}

/// docs/security.md, F2: a workspace of `workflows` workflows `w1`, `w2`, … whose
/// `tests/shared` is a link to one folder `shared/` of `files` empty files (not cases).
/// Each workflow's walk lists the shared folder again, so the walks of one pass together
/// visit about `workflows × files` entries.
#[cfg(unix)]
pub fn shared_folder_workspace(workflows: usize, files: usize) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    for i in 0..files {
        std::fs::File::create(shared.join(format!("f{i}"))).unwrap();
    }
    for w in 1..=workflows {
        let dir = tmp.path().join(format!("workflows/w{w}"));
        std::fs::create_dir_all(dir.join("tests")).unwrap();
        std::fs::write(
            dir.join("workflow.yaml"),
            "title: W\ninstructions: Help.\nstates:\n  start:\n    triggers: { manual: }\n",
        )
        .unwrap();
        std::os::unix::fs::symlink("../../../shared", dir.join("tests/shared")).unwrap();
    }
    tmp
}

/// `file://` URI of a path.
pub fn uri(p: &Path) -> String {
    tower_lsp_server::ls_types::Uri::from_file_path(p)
        .unwrap()
        .as_str()
        .to_owned()
}

/// One framed message.
pub fn frame(msg: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(msg).unwrap();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend(body);
    out
}

/// Reads one frame; `Ok(None)` at a clean end of stream, `Err` for anything that is not
/// a well-formed frame.
pub fn read_frame(r: &mut impl BufRead) -> Result<Option<Value>, String> {
    let mut len = None;
    let mut first = true;
    loop {
        let mut line = String::new();
        let n = r.read_line(&mut line).map_err(|e| e.to_string())?;
        if n == 0 {
            return if first {
                Ok(None)
            } else {
                Err("end of stream inside a header".into())
            };
        }
        first = false;
        if line == "\r\n" {
            break;
        }
        let Some(h) = line.strip_suffix("\r\n") else {
            return Err(format!("header line without CRLF: {line:?}"));
        };
        if let Some(v) = h.strip_prefix("Content-Length: ") {
            len = Some(
                v.parse::<usize>()
                    .map_err(|e| format!("bad length {v:?}: {e}"))?,
            );
        } else if !h.starts_with("Content-Type: ") {
            return Err(format!("not a header: {line:?}"));
        }
    }
    let len = len.ok_or("no Content-Length")?;
    let mut body = vec![0; len];
    r.read_exact(&mut body).map_err(|e| e.to_string())?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| format!("body is not JSON: {e}"))
}

/// `initialize` params with a workspace folder and the given extra client capabilities.
pub fn initialize_params(root: &Path, encodings: &[&str]) -> Value {
    json!({
        "processId": null,
        "rootUri": uri(root),
        "workspaceFolders": [{"uri": uri(root), "name": "ws"}],
        "capabilities": {
            "general": {"positionEncodings": encodings},
            "textDocument": {
                "publishDiagnostics": {"relatedInformation": true},
                "completion": {"completionItem": {"snippetSupport": true}},
            },
        },
        "initializationOptions": {"runner": {"skipGrades": true}},
    })
}

/// A request message.
pub fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A notification message.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// Writes one framed message.
pub fn send(w: &mut impl Write, msg: &Value) {
    w.write_all(&frame(msg)).unwrap();
    w.flush().unwrap();
}

/// `(code, start line, start character, end line, end character)` of published
/// diagnostics.
pub fn summarize(diags: &Value) -> Vec<(String, u64, u64, u64, u64)> {
    diags
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let r = &d["range"];
            (
                d["code"].as_str().unwrap_or_default().to_owned(),
                r["start"]["line"].as_u64().unwrap(),
                r["start"]["character"].as_u64().unwrap(),
                r["end"]["line"].as_u64().unwrap(),
                r["end"]["character"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The hostile inputs: (file stem, bytes, a code the result must contain).
pub fn hostile() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    // Deterministic "random" bytes (an LCG), so the garbage is the same every run.
    let mut x: u32 = 12345;
    let garbage: Vec<u8> = (0..4096)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect();
    // Just under the 8 MiB parse limit (wfx_schemas::yaml::MAX_BYTES): checked in full.
    let mut big = String::from("title: Big\ndescription: A seven-megabyte case.\nsteps:\n");
    let mut i = 0;
    while big.len() < 7 * 1024 * 1024 {
        big.push_str(&format!("  - send: \"{} {i}\"\n", "y".repeat(90)));
        i += 1;
    }
    big.push_str("  - sned: last\n");
    let deep = format!(
        "title: Deep\nsteps: {}{}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let mut bomb = String::from(
        "title: Bomb\ndescription: Billion laughs.\nvariables:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    let mut prev = 'a';
    for n in 'b'..='j' {
        bomb.push_str(&format!(
            "  {n}: &{n} [{}]\n",
            vec![format!("*{prev}"); 9].join(", ")
        ));
        prev = n;
    }
    bomb.push_str("steps:\n  - send: hi\n");
    vec![
        ("garbage", garbage, "WFX006"),
        ("big", big.into_bytes(), "WFX120"),
        ("deep", deep.into_bytes(), "WFX00"),
        (
            "utf8",
            b"title: Bad \xff\xfe bytes\nsteps: []\n".to_vec(),
            "WFX006",
        ),
        ("bomb", bomb.into_bytes(), "WFX004"),
        (
            "nul",
            b"title: \"Nul \x00 inside\"\ndescription: x\nsteps:\n  - send: hi\n".to_vec(),
            "WFX001",
        ),
    ]
}

/// A valid ~6-line case body after `title:`.
const TAIL: &str = "description: An adversarial case.\nsteps:\n  - send: hi\n";

/// The adversarial inputs of issue 8, except the 50 MB file (tests/robustness_check.rs
/// through `check`, tests/robustness_lsp.rs opened in the editor): (stem, bytes, codes that must all be
/// reported; empty = the file is valid and must be clean).
pub fn adversarial() -> Vec<(&'static str, Vec<u8>, Vec<&'static str>)> {
    // Billion laughs: 10 levels of 9 aliases each (9^10 nodes if expanded).
    let mut bomb = String::from(
        "title: Bomb\ndescription: x\nvariables:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    let mut prev = 'a';
    for n in 'b'..='k' {
        bomb.push_str(&format!(
            "  {n}: &{n} [{}]\n",
            vec![format!("*{prev}"); 9].join(", ")
        ));
        prev = n;
    }
    bomb.push_str("steps:\n  - send: hi\n");
    let deep_seq = format!(
        "title: Deep\n{TAIL}variables:\n  v: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let mut deep_map = format!("title: Deep map\n{TAIL}variables:\n  v: ");
    deep_map.push_str(&"{a: ".repeat(100_000));
    deep_map.push('1');
    deep_map.push_str(&"}".repeat(100_000));
    deep_map.push('\n');
    let long_line = format!("title: \"{}\"\n{TAIL}", "L".repeat(1024 * 1024));
    let mut many_keys = format!("title: Many keys\n{TAIL}variables:\n");
    for i in 0..100_000 {
        many_keys.push_str(&format!("  k{i}: {i}\n"));
    }
    let mut many_top = String::from("title: Many top-level keys\n");
    for i in 0..100_000 {
        many_top.push_str(&format!("key{i}: {i}\n"));
    }
    many_top.push_str(TAIL);
    let crlf = "title: Mixed line ends\r\ndescription: CRLF and LF\nsteps:\r\n  - send: hi\n  - sned: typo\r\n";
    let bom_mid = format!("title: BOM\n\u{feff}{TAIL}");
    vec![
        ("alias-bomb", bomb.into_bytes(), vec!["WFX004"]),
        ("deep-seq", deep_seq.into_bytes(), vec!["WFX00"]),
        ("deep-map", deep_map.into_bytes(), vec!["WFX00"]),
        (
            "invalid-utf8",
            b"title: Bad \xff\xfe\xc3\x28 bytes\ndescription: x\nsteps: []\n".to_vec(),
            vec!["WFX006"],
        ),
        (
            "nul",
            b"title: \"a \x00 b\"\ndescription: x\x00y\nsteps:\n  - send: hi\n".to_vec(),
            vec!["WFX001"],
        ),
        ("long-line", long_line.into_bytes(), vec!["WFX1"]),
        ("many-keys", many_keys.into_bytes(), vec![]),
        (
            "many-top-keys",
            many_top.into_bytes(),
            vec!["WFX1", "WFX009"],
        ),
        ("mixed-crlf", crlf.as_bytes().to_vec(), vec!["WFX120"]),
        ("bom-middle", bom_mid.into_bytes(), vec!["WFX001"]),
    ]
}
