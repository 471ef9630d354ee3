//! Workspace-wide diagnostics: the diagnostics of files that are not open in the editor
//! (every `workflow.yaml`, case file and agent script of every workspace folder), pushed with
//! `textDocument/publishDiagnostics` (no version), so that the Problems panel / quickfix
//! list shows the closed cases a hand edit of `workflow.yaml` breaks before `check` runs.
//!
//! Each closed file is checked by the same [`super::server::document_diagnostics`] as an
//! open document, over an [`Overlay`] that holds the open buffers, so a closed case sees the
//! unsaved `workflow.yaml` and shows exactly what it would show if opened. Open documents
//! are left to their own push (versioned); [`Published`] remembers what was pushed for
//! closed files and yields only the differences (new, changed, and cleared files), so a pass
//! over 10,000 unchanged cases sends nothing.
//!
//! Push, not pull (`workspace/diagnostic`): every client we test (VS Code, Neovim 0.12,
//! Vim, Emacs) shows pushed diagnostics for files it has not opened, and a push needs no
//! client capability. `wfx.diagnostics.openFilesOnly` turns the feature off (docs/editors.md).
//!
//! Bounded work: the file list is the workspace index (`workspace::discover_workflows` /
//! `discover_cases`, both bounded), and passes are coalesced by the caller (one pass in
//! flight, at most one queued); a pass still running when a newer one is queued stops at
//! its next file and pushes nothing. Files are checked on one thread per core (at most
//! [`MAX_THREADS`]), like `wfx-lsp check` (docs/performance.md, "Workspace-wide
//! diagnostics").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use tower_lsp_server::ls_types as lsp;
use wfx_schemas::files::FileAccess;
use wfx_schemas::workspace::{self, FileKind};

use super::document::{Located, Snapshot};
use super::overlay::Overlay;
use super::paths;
use super::server::{Session, document_diagnostics};

/// Files one worker takes at a time from the shared queue of a pass.
pub const CHUNK: usize = 64;

/// Most worker threads of one pass (fewer on a machine with fewer cores).
pub const MAX_THREADS: usize = 8;

/// One closed file of a pass: the index of its root in the pass's overlays, and its path.
type Job = (usize, String);

/// One closed file's diagnostics: its URI string, URI and diagnostics.
type Found = (String, (lsp::Uri, Vec<lsp::Diagnostic>));

/// Diagnostics of the closed files among `files` ((root, root-relative path) pairs: the
/// workspace index of workflows and cases) and of the agent scripts of those workflows,
/// keyed by URI string; files in `open` (URI strings) are skipped, and so are files without
/// diagnostics. `overlay(root)` gives the file view of a root (open buffers over disk).
/// A file that cannot be read as UTF-8 text is skipped (the open-document view and
/// `wfx-lsp check` report it). Positions are in the session's encoding.
///
/// The files are checked on up to [`MAX_THREADS`] threads (one per core, like `wfx-lsp
/// check`), each taking [`CHUNK`] files at a time; `cancelled` is polled between files,
/// and a pass it stops returns `None` (a newer edit queued a fresh pass: the stale result
/// is never pushed). The result does not depend on the thread count (a sorted map).
pub fn closed_diagnostics(
    files: &[(PathBuf, String)],
    open: &std::collections::BTreeSet<String>,
    overlay: &(dyn Fn(&Path) -> Overlay + Sync),
    s: &Session,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Option<BTreeMap<String, (lsp::Uri, Vec<lsp::Diagnostic>)>> {
    let mut by_root: BTreeMap<&PathBuf, Vec<String>> = BTreeMap::new();
    for (root, rel) in files {
        by_root.entry(root).or_default().push(rel.clone());
    }
    let mut roots: Vec<(PathBuf, Overlay)> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut stops: Vec<Found> = Vec::new();
    for (root, mut rels) in by_root {
        let fs = overlay(root);
        // The agent scripts of each workflow (the index holds workflows and cases only),
        // and where its discovery stopped at a bound (WFX012 on that folder).
        let mut scripts = Vec::new();
        // One walk budget per root (docs/security.md, F2).
        let budget = wfx_schemas::files::WalkBudget::for_pass();
        for rel in &rels {
            if let FileKind::Workflow(d) = workspace::classify(rel) {
                let found = workspace::discover_test_files_within(&fs, &d, &budget);
                scripts.extend(found.agent_scripts);
                if let Some(stop) = &found.stop
                    && let Some(f) = walk_stop_found(root, stop, s)
                {
                    stops.push(f);
                }
            }
        }
        rels.extend(scripts);
        rels.sort();
        rels.dedup();
        jobs.extend(rels.into_iter().map(|rel| (roots.len(), rel)));
        roots.push(((*root).clone(), fs));
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .clamp(1, MAX_THREADS)
        .min(jobs.len().div_ceil(CHUNK).max(1));
    let next = AtomicUsize::new(0);
    let work = || -> Option<Vec<Found>> {
        let mut out = Vec::new();
        loop {
            let from = next.fetch_add(CHUNK, Ordering::Relaxed);
            if from >= jobs.len() {
                return Some(out);
            }
            for (r, rel) in &jobs[from..(from + CHUNK).min(jobs.len())] {
                if cancelled() {
                    return None;
                }
                let (root, fs) = &roots[*r];
                if let Some(found) = check_closed(root, fs, rel, open, s) {
                    out.push(found);
                }
            }
        }
    };
    let parts: Vec<Option<Vec<_>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut parts = vec![work()];
        for h in handles {
            // A panicking worker (document_diagnostics catches the checker's own panics)
            // loses the pass; the next one retries.
            parts.push(h.join().unwrap_or_else(|_| {
                tracing::error!("a workspace diagnostics worker panicked");
                None
            }));
        }
        parts
    });
    let mut out: BTreeMap<String, (lsp::Uri, Vec<lsp::Diagnostic>)> = stops.into_iter().collect();
    for part in parts {
        out.extend(part?);
    }
    Some(out)
}

/// The `WFX012` of a discovery walk stopped at a bound, published on the folder's URI (a
/// folder is never an open document), at its start.
fn walk_stop_found(root: &Path, stop: &wfx_schemas::files::WalkStop, s: &Session) -> Option<Found> {
    let uri = paths::uri_of(root, &stop.dir)?;
    let d = wfx_schemas::check::walk_stop_diagnostic(stop);
    let index = wfx_schemas::text::LineIndex::new("");
    let diag =
        super::convert::diagnostic(&d, &index, s.encoding, 0, s.related_information, &|_, _| {
            None
        });
    Some((uri.as_str().to_owned(), (uri, vec![diag])))
}

/// The diagnostics of one closed file (`None`: open, unreadable, or no diagnostics).
fn check_closed(
    root: &Path,
    fs: &Overlay,
    rel: &str,
    open: &std::collections::BTreeSet<String>,
    s: &Session,
) -> Option<Found> {
    let uri = paths::uri_of(root, rel)?;
    if open.contains(uri.as_str()) {
        return None;
    }
    // A link leaving the workspace is reported as such (WFX010) and never read; a file
    // over its kind's bound (`check::max_bytes_of`) is skipped unread (`check` reports it as WFX008).
    let text = if fs.leaves_workspace(rel) {
        String::new()
    } else {
        let kind = wfx_schemas::workspace::classify(rel);
        match fs.read_text_max(rel, wfx_schemas::check::max_bytes_of(&kind)) {
            Ok(t) => t,
            Err(e) => {
                tracing::debug!("workspace diagnostics: skipping {rel}: {e}");
                return None;
            }
        }
    };
    let loc = Located {
        root: root.to_path_buf(),
        rel: rel.to_owned(),
    };
    let snap = Snapshot::detached(text, Some(loc.clone()));
    let diags = document_diagnostics(fs, &loc, &snap, s);
    (!diags.is_empty()).then(|| (uri.as_str().to_owned(), (uri, diags)))
}

/// What was last pushed for closed files, by URI string.
#[derive(Debug, Default)]
pub struct Published {
    map: BTreeMap<String, (lsp::Uri, Vec<lsp::Diagnostic>)>,
}

impl Published {
    /// The pushes that turn the last state into `next`: files whose diagnostics are new or
    /// changed, and an empty list for files that had some and now have none. Files now
    /// open (`open`, URI strings) are forgotten without a push: their own versioned push
    /// owns them. Sorted by URI (never hash order).
    pub fn update(
        &mut self,
        next: BTreeMap<String, (lsp::Uri, Vec<lsp::Diagnostic>)>,
        open: &std::collections::BTreeSet<String>,
    ) -> Vec<(lsp::Uri, Vec<lsp::Diagnostic>)> {
        let mut out = Vec::new();
        for (key, (uri, _)) in &self.map {
            if !next.contains_key(key) && !open.contains(key) {
                out.push((uri.clone(), Vec::new()));
            }
        }
        for (key, (uri, diags)) in &next {
            if self.map.get(key).is_none_or(|(_, old)| old != diags) {
                out.push((uri.clone(), diags.clone()));
            }
        }
        out.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        self.map = next;
        out
    }

    /// Forgets `uri` (it was opened, or closed and cleared): the next pass pushes it again
    /// if it has diagnostics.
    pub fn forget(&mut self, uri: &str) {
        self.map.remove(uri);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(msg: &str) -> lsp::Diagnostic {
        lsp::Diagnostic {
            message: msg.into(),
            ..Default::default()
        }
    }

    fn entry(path: &str, msgs: &[&str]) -> (String, (lsp::Uri, Vec<lsp::Diagnostic>)) {
        let uri: lsp::Uri = format!("file:///w/{path}").parse().unwrap();
        (
            uri.as_str().to_owned(),
            (uri, msgs.iter().map(|m| d(m)).collect()),
        )
    }

    #[test]
    fn only_differences_are_pushed_and_vanished_files_are_cleared() {
        let mut p = Published::default();
        let none = std::collections::BTreeSet::new();
        let first: BTreeMap<_, _> = [entry("b", &["x"]), entry("a", &["y"])].into();
        let pushed = p.update(first.clone(), &none);
        let names: Vec<&str> = pushed.iter().map(|(u, _)| u.as_str()).collect();
        assert_eq!(names, ["file:///w/a", "file:///w/b"]);
        // Unchanged: nothing.
        assert!(p.update(first, &none).is_empty());
        // `a` fixed, `b` changed, `c` new.
        let next: BTreeMap<_, _> = [entry("b", &["z"]), entry("c", &["w"])].into();
        let pushed = p.update(next, &none);
        let got: Vec<(&str, usize)> = pushed.iter().map(|(u, v)| (u.as_str(), v.len())).collect();
        assert_eq!(
            got,
            [("file:///w/a", 0), ("file:///w/b", 1), ("file:///w/c", 1)]
        );
        // `c` opened (its own push owns it): not cleared by the closed-file pass.
        let open: std::collections::BTreeSet<String> = ["file:///w/c".to_owned()].into();
        let next: BTreeMap<_, _> = [entry("b", &["z"])].into();
        assert!(p.update(next, &open).is_empty());
    }
}
