//! Confinement of document URIs (docs/security.md §1, attack pass 5 F4), through the real
//! stdio server: a decoy `workflow.yaml` outside the workspace folder, with a unique state
//! name and title, is named by a case opened through `..` spelt four ways (`..`, `%2e%2e`,
//! `..%2f`, `//..//`) from inside the workspace, and through a folder link leaving it.
//! Each is treated like the direct outside path: `WFX309` (its cross-file checks did not
//! run), and neither diagnostics, completion nor hover ever show the decoy's names. A
//! workspace folder given with `..` is normalised the same way (its cases are checked
//! against their workflow as usual).

#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::stdio::Server;
use support::*;

/// The decoy's state name and title: neither may appear in any answer.
const MARKERS: [&str; 2] = ["topsecret-marker-state", "TOPSECRET-TITLE-MARKER"];

/// A case naming a state one letter from the decoy's (a did-you-mean would print it), with
/// the cursor for completion and hover on line 4, character 20.
const CASE: &str =
    "title: x\ndescription: x\nsteps:\n  - send: hi\n  - reachedState: topsecret-marker-stat\n";

/// `tmp/ws` (workflow `hv` with states `start`, `done`) and `tmp/outside` (the decoy
/// workflow `sec`); `tmp/ws/sub` links to `tmp/outside`.
fn layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(ws.join("workflows/hv/tests")).unwrap();
    std::fs::write(
        ws.join("workflows/hv/workflow.yaml"),
        "instructions: Go.\nstates:\n  start:\n    triggers: { manual: }\n    transitions:\n      - { to: done, description: go }\n  done:\n    title: Done\n    instructions: Close.\n",
    )
    .unwrap();
    std::fs::create_dir_all(outside.join("workflows/sec/tests")).unwrap();
    std::fs::write(
        outside.join("workflows/sec/workflow.yaml"),
        "instructions: Go.\nstates:\n  start:\n    triggers: { manual: }\n    transitions:\n      - { to: topsecret-marker-state, description: go }\n  topsecret-marker-state:\n    title: TOPSECRET-TITLE-MARKER\n    instructions: End.\n",
    )
    .unwrap();
    std::fs::write(outside.join("workflows/sec/tests/c.test.yaml"), CASE).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("sub")).unwrap();
    (tmp, ws, outside)
}

/// `file://` + `path` verbatim (no encoding: the spellings under test are kept as sent).
fn raw_uri(path: &str) -> String {
    format!("file://{path}")
}

impl Server {
    /// Opens `uri` with [`CASE`]; returns its diagnostics, completion and hover at the
    /// state name, as JSON text.
    fn probe(&mut self, uri: &str) -> (Value, String, String) {
        self.open(uri, CASE);
        let d = self.diagnostics(uri, 1)["params"]["diagnostics"].clone();
        let at = json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": 20}});
        let completion = self.call("textDocument/completion", at.clone()).to_string();
        let hover = self.call("textDocument/hover", at).to_string();
        (d, completion, hover)
    }
}

fn codes(d: &Value) -> Vec<String> {
    d.as_array()
        .unwrap()
        .iter()
        .map(|x| x["code"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Treated like a document outside every workspace folder: `WFX309` ("not read") and
/// nothing of the decoy shown.
fn assert_confined(what: &str, d: &Value, completion: &str, hover: &str) {
    assert_nothing_shown(what, d, completion, hover);
    assert!(
        codes(d).contains(&"WFX309".to_owned()),
        "{what}: no WFX309: {d}"
    );
    assert!(
        d.to_string()
            .contains("outside the editor's workspace folders; not read"),
        "{what}: {d}"
    );
}

/// Neither the decoy's state name nor its title shows in any answer.
fn assert_nothing_shown(what: &str, d: &Value, completion: &str, hover: &str) {
    for m in MARKERS {
        for (name, text) in [
            ("diagnostics", d.to_string()),
            ("completion", completion.to_owned()),
            ("hover", hover.to_owned()),
        ] {
            assert!(!text.contains(m), "{what}: {name} shows {m}: {text}");
        }
    }
}

#[test]
fn a_document_uri_climbing_out_of_the_workspace_reads_nothing_outside() {
    let (_tmp, ws, outside) = layout();
    let ws_s = ws.to_str().unwrap();
    let (mut s, _) = Server::start(&ws);

    // The direct outside path: the promise as it stood.
    let direct = uri(&outside.join("workflows/sec/tests/c.test.yaml"));
    let (d, c, h) = s.probe(&direct);
    assert_confined("direct", &d, &c, &h);

    // The same file through `..` from inside the workspace, spelt four ways (each URI is
    // a distinct document for the client).
    let climbs = [
        format!("{ws_s}/workflows/hv/tests/../../../../outside/workflows/sec/tests/c.test.yaml"),
        format!(
            "{ws_s}/workflows/hv/tests/%2e%2e/%2E%2E/.%2e/%2e./outside/workflows/sec/tests/c.test.yaml"
        ),
        format!(
            "{ws_s}/workflows/hv/tests/..%2f..%2F..%2f../outside/workflows/sec/tests/c.test.yaml"
        ),
        format!(
            "{ws_s}/workflows/hv/tests//..//..//..//..//outside//workflows/sec/./tests/c.test.yaml"
        ),
    ];
    for path in &climbs {
        let u = raw_uri(path);
        let (d, c, h) = s.probe(&u);
        assert_confined(&u, &d, &c, &h);
    }

    // Through a folder link inside the workspace that leaves it (`ws/sub -> outside`): the
    // confined layer resolves the link, so the case is the link's `WFX010` alone.
    let linked = uri(&ws.join("sub/workflows/sec/tests/c.test.yaml"));
    let (d, c, h) = s.probe(&linked);
    assert_nothing_shown("linked", &d, &c, &h);
    assert_eq!(codes(&d), ["WFX010"], "{d}");

    // The control (the test can fail): a `..` that stays inside is checked against its
    // workflow as usual — the state is unknown there, and nothing says "not read".
    let inside = raw_uri(&format!(
        "{ws_s}/workflows/hv/tests/../../hv/tests/%2e/c.test.yaml"
    ));
    let (d, c, _) = s.probe(&inside);
    assert!(!codes(&d).contains(&"WFX309".to_owned()), "{d}");
    assert!(codes(&d).contains(&"WFX303".to_owned()), "{d}");
    assert!(c.contains("\"done\""), "{c}");
}

#[test]
fn a_workspace_folder_given_with_dots_is_normalised() {
    let (_tmp, ws, _outside) = layout();
    let dotted = format!("{}/workflows/hv/../%2e%2e/", ws.to_str().unwrap());
    let mut s = Server::spawn();
    let mut params = initialize_params(Path::new("/unused"), &["utf-16"]);
    params["rootUri"] = json!(raw_uri(&dotted));
    params["workspaceFolders"] = json!([{"uri": raw_uri(&dotted), "name": "ws"}]);
    let id = s.request("initialize", params);
    s.response(id);
    s.notify("initialized", json!({}));
    // A case inside the (dotted) folder is checked against its workflow on disk.
    let case = uri(&ws.join("workflows/hv/tests/c.test.yaml"));
    let (d, c, _) = s.probe(&case);
    assert!(!codes(&d).contains(&"WFX309".to_owned()), "{d}");
    assert!(codes(&d).contains(&"WFX303".to_owned()), "{d}");
    assert!(c.contains("\"done\""), "{c}");
}
