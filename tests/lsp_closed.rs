//! Workspace-wide diagnostics and `wfx.diagnostics.openFilesOnly` (issue 16, docs/editors.md
//! "Workspace-wide diagnostics"): a closed case with an error gets its diagnostics pushed
//! without being opened; turning the setting on clears them, turning it off brings them back.
//! The diagnostics are the checker's own (the case's cross-file rules, `schemas::rules::
//! case_cross`: a `reachedState` naming no state of the workflow), so a closed case shows
//! what `wfx-lsp check` reports for it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::inprocess::Client;
use support::*;

/// The next push for `u` (no version: a closed file) whose diagnostics satisfy `pred`.
async fn closed_push(c: &mut Client, u: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let m = c
        .wait_for(what, |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == u
                && pred(&m["params"]["diagnostics"])
        })
        .await;
    m["params"].clone()
}

fn names_the_state(d: &Value) -> bool {
    d.as_array().is_some_and(|a| {
        a.iter()
            .any(|x| x["message"].to_string().contains("nowhere-state"))
    })
}

#[tokio::test]
async fn open_files_only_clears_closed_cases_and_turning_it_off_brings_them_back() {
    let ws = corpus_copy();
    let stray = plant_stray(ws.path());
    let u = uri(&stray);
    let mut c = Client::connect(Duration::from_secs(60), true);
    c.request("initialize", initialize_params(ws.path(), &[]))
        .await;
    c.notify("initialized", json!({})).await;
    // The closed case is never opened, yet its error arrives.
    let p = closed_push(&mut c, &u, "closed-case diagnostics", names_the_state).await;
    assert!(p.get("version").is_none_or(Value::is_null), "{p}");
    let set = |on: bool| json!({"settings": {"wfx": {"diagnostics": {"openFilesOnly": on}}}});
    c.notify("workspace/didChangeConfiguration", set(true))
        .await;
    closed_push(&mut c, &u, "the closed case cleared", |d| {
        d.as_array().is_some_and(Vec::is_empty)
    })
    .await;
    c.notify("workspace/didChangeConfiguration", set(false))
        .await;
    closed_push(
        &mut c,
        &u,
        "the closed case reported again",
        names_the_state,
    )
    .await;
    c.shutdown().await;
}

/// `stray.test.yaml` in `order-lookup/tests` of `ws`, naming a state the workflow lacks.
fn plant_stray(ws: &std::path::Path) -> std::path::PathBuf {
    let stray = ws.join("workflows/order-lookup/tests/stray.test.yaml");
    std::fs::write(
        &stray,
        "title: Stray\ndescription: Names a state the workflow lacks.\nsteps:\n  - send: hi\n  - reachedState: nowhere-state\n",
    )
    .unwrap();
    stray
}

fn folders(added: &[&std::path::Path], removed: &[&std::path::Path]) -> Value {
    let f = |ps: &[&std::path::Path]| -> Vec<Value> {
        ps.iter()
            .map(|p| json!({"uri": uri(p), "name": p.file_name().unwrap().to_string_lossy()}))
            .collect()
    };
    json!({"event": {"added": f(added), "removed": f(removed)}})
}

fn labels(items: &Value) -> Vec<String> {
    let items = items.get("items").unwrap_or(items);
    items
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| i["label"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn workspace_folders_added_later_are_indexed_and_removed_ones_dropped() {
    // Issue 16: `workspace/didChangeWorkspaceFolders`. The server announces change
    // notifications; a folder added after `initialize` gets its closed files' diagnostics
    // and its workflows in completion; removing it clears those diagnostics.
    let first = corpus_copy();
    let second = corpus_copy();
    let stray = plant_stray(second.path());
    let u = uri(&stray);
    let mut c = Client::connect(Duration::from_secs(60), true);
    let init = c
        .request("initialize", initialize_params(first.path(), &[]))
        .await;
    assert_eq!(
        init["capabilities"]["workspace"]["workspaceFolders"],
        json!({"supported": true, "changeNotifications": true}),
        "{init}"
    );
    c.notify("initialized", json!({})).await;
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        folders(&[second.path()], &[]),
    )
    .await;
    closed_push(
        &mut c,
        &u,
        "the added folder's closed case",
        names_the_state,
    )
    .await;
    // A case of the added folder completes the states of its (closed) workflow.
    let case = second
        .path()
        .join("workflows/order-lookup/tests/complete.test.yaml");
    let text = "title: Complete\ndescription: States from the workflow.\nsteps:\n  - send: hi\n  - reachedState: \n";
    c.open(&case, text, 1).await;
    let at = json!({"textDocument": {"uri": uri(&case)}, "position": {"line": 4, "character": 18}});
    let got = labels(&c.request("textDocument/completion", at).await);
    assert!(got.contains(&"refund-request".to_owned()), "{got:?}");
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        folders(&[], &[second.path()]),
    )
    .await;
    closed_push(&mut c, &u, "the removed folder's case cleared", |d| {
        d.as_array().is_some_and(Vec::is_empty)
    })
    .await;
    c.shutdown().await;
}

#[tokio::test]
async fn a_deleted_or_renamed_workflow_folder_moves_its_diagnostics() {
    // Issue 16: folder deletes and renames under `workflows/`. Clients report a renamed
    // folder as one delete and one create of the folder itself, so the server watches the
    // folders (registered dynamically when the client supports it) and re-indexes.
    let ws = corpus_copy();
    let stray = plant_stray(ws.path());
    let old = uri(&stray);
    let mut params = initialize_params(ws.path(), &[]);
    params["capabilities"]["workspace"] =
        json!({"didChangeWatchedFiles": {"dynamicRegistration": true}});
    let mut c = Client::connect(Duration::from_secs(60), true);
    c.request("initialize", params).await;
    c.notify("initialized", json!({})).await;
    // The registration and the first pass's push, in whichever order they come.
    let reg = std::cell::RefCell::new(Value::Null);
    let pushed = std::cell::Cell::new(false);
    c.wait_for("the watcher registration and the closed case", |m| {
        if m["method"] == "client/registerCapability" {
            *reg.borrow_mut() = m.clone();
        }
        if m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == old.as_str()
            && names_the_state(&m["params"]["diagnostics"])
        {
            pushed.set(true);
        }
        !reg.borrow().is_null() && pushed.get()
    })
    .await;
    let reg = reg.into_inner();
    let globs: Vec<&str> = reg["params"]["registrations"][0]["registerOptions"]["watchers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["globPattern"].as_str())
        .collect();
    for g in ["**/workflows", "**/workflows/*", "**/workflows/*/tests"] {
        assert!(globs.contains(&g), "{g} not watched: {globs:?}");
    }
    let from = ws.path().join("workflows/order-lookup");
    let to = ws.path().join("workflows/order-lookup-2");
    std::fs::rename(&from, &to).unwrap();
    let moved = uri(&to.join("tests/stray.test.yaml"));
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&from), "type": 3}, {"uri": uri(&to), "type": 1}]}),
    )
    .await;
    // One pass: the old path's clear and the new path's report, in URI order.
    let left = std::cell::RefCell::new(vec![old.clone(), moved.clone()]);
    c.wait_for("the old path cleared and the new one reported", |m| {
        let p = &m["params"];
        if m["method"] == "textDocument/publishDiagnostics" {
            let d = &p["diagnostics"];
            let ok = if p["uri"] == old.as_str() {
                d.as_array().is_some_and(Vec::is_empty)
            } else {
                p["uri"] == moved.as_str() && names_the_state(d)
            };
            if ok {
                left.borrow_mut().retain(|u| p["uri"] != u.as_str());
            }
        }
        left.borrow().is_empty()
    })
    .await;
    // Deleting the workflow folder drops its entries.
    std::fs::remove_dir_all(&to).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&to), "type": 3}]}),
    )
    .await;
    closed_push(&mut c, &moved, "the deleted folder's case cleared", |d| {
        d.as_array().is_some_and(Vec::is_empty)
    })
    .await;
    c.shutdown().await;
}

/// Finding 15 in the editor: the workspace pass reports a discovery walk stopped at its
/// depth bound as `WFX012` on the first folder left unlisted (the same diagnostic as
/// `wfx-lsp check`), with no open document involved.
#[tokio::test]
async fn a_discovery_walk_stopped_by_depth_is_reported_on_the_folder() {
    let ws = corpus_copy();
    let tests = ws.path().join("workflows/order-lookup/tests");
    let deep = tests.join(vec!["n"; 40].join("/"));
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("lost.test.yaml"), "title: Lost\n").unwrap();
    let stopped = tests.join(vec!["n"; 33].join("/"));
    let u = uri(&stopped);
    let mut c = Client::connect(Duration::from_secs(60), true);
    c.request("initialize", initialize_params(ws.path(), &[]))
        .await;
    c.notify("initialized", json!({})).await;
    let p = closed_push(&mut c, &u, "WFX012 on the folder", |d| {
        d.as_array().is_some_and(|a| {
            a.len() == 1
                && a[0]["code"] == "WFX012"
                && a[0]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("more than 32 folders deep"))
        })
    })
    .await;
    assert!(p.get("version").is_none_or(Value::is_null), "{p}");
    c.shutdown().await;
}

/// F2 in the editor (docs/security.md): the workspace pass walks the `tests/` of every
/// workflow within one budget per root (`files::MAX_PASS_WALK_ENTRIES`), so a folder linked
/// from 4 workflows is not listed 4 times: the 4th workflow's `tests/` gets `WFX012`.
#[cfg(unix)]
#[tokio::test]
async fn walks_of_a_folder_shared_by_many_workflows_share_one_budget() {
    let ws = shared_folder_workspace(4, 99_990);
    let u = uri(&ws.path().join("workflows/w4/tests"));
    let mut c = Client::connect(Duration::from_secs(120), true);
    c.request("initialize", initialize_params(ws.path(), &[]))
        .await;
    c.notify("initialized", json!({})).await;
    closed_push(&mut c, &u, "WFX012 on w4's tests folder", |d| {
        d.as_array().is_some_and(|a| {
            a.len() == 1
                && a[0]["code"] == "WFX012"
                && a[0]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("200000 entries together"))
        })
    })
    .await;
    c.shutdown().await;
}
