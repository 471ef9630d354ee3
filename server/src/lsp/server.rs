//! The `LanguageServer` implementation: session state, document notifications, diagnostics
//! publishing and the request handlers, each a thin wrapper that converts positions
//! (through `convert`), calls one pure function of `crate::ide` or `wfx_schemas::check`
//! inside `catch_unwind`, and converts the answer back.
//!
//! Ordering: the service runs with `concurrency_level(1)` (see `lsp::serve`), so messages
//! are handled one at a time in arrival order; on top of that every document mutation is
//! applied synchronously before the handler's first `.await`, and a diagnostics result is
//! published only if the document still has the version it was computed for (checked
//! under a publish lock), so a superseded result is dropped, never shown.
//!
//! Diagnostics of open documents are pushed with their version on every change. Closed
//! `workflow.yaml` and case files get theirs pushed too (without a version) by one
//! background pass at a time (see `closed`), started after `initialized` and again when a
//! document opens or closes, a non-case file changes, watched files change or the settings
//! change; `wfx.diagnostics.openFilesOnly` limits diagnostics to open documents.
//!
//! Split by topic into child modules, each an `impl Server` block or the types it owns:
//! `run` (running cases from the editor and what a run shows), `recording` (recording with
//! the live model), `closed_pass` (the background pass over closed files) and
//! `capabilities` (what the server announces, `wfx/runStatus` and `wfx/graph` shapes,
//! workspace folders, file watchers). The request handlers stay here.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::ls_types::Uri;
use tower_lsp_server::{Client, LanguageServer};
use wfx_schemas::diagnostics::{self as core_diag, TextEdit};
use wfx_schemas::files::FileAccess;
use wfx_schemas::text::{LineIndex, PositionEncoding, TextRange};
use wfx_schemas::workspace::{self, FileKind, WorkflowDir};

use super::convert;
use super::document::{Documents, Located, Snapshot};
use super::overlay::Overlay;
use super::paths;
use super::record;
use super::runs;
use super::settings::Settings;
use crate::ide;
use wfx_runner::disk::DiskFiles;

mod capabilities;
mod closed_pass;
mod recording;
mod run;

use capabilities::capabilities;
pub use capabilities::{
    GraphParams, MAX_WORKSPACE_FOLDERS, RunCounts, RunStatus, RunStatusNotification, WATCH_GLOBS,
    change_roots,
};

/// What the client can do and what was negotiated, fixed at `initialize` (settings change
/// later).
#[derive(Clone, Debug, Default)]
pub struct Session {
    /// The negotiated position encoding.
    pub encoding: PositionEncoding,
    /// Workspace folders (absolute).
    pub roots: Vec<PathBuf>,
    /// `textDocument.publishDiagnostics.relatedInformation`.
    pub related_information: bool,
    /// `textDocument.completion.completionItem.snippetSupport`.
    pub snippets: bool,
    /// `textDocument.documentSymbol.hierarchicalDocumentSymbolSupport`.
    pub hierarchical_symbols: bool,
    /// `workspace.workspaceEdit.documentChanges`.
    pub document_changes: bool,
    /// `workspace.didChangeWatchedFiles.dynamicRegistration`.
    pub watch_registration: bool,
    /// `workspace.configuration`.
    pub configuration: bool,
    /// The `wfx` settings.
    pub settings: Settings,
    /// Parsed `workflow.yaml` files, reused while their text is unchanged, so a keystroke in
    /// a case does not re-parse its workflow.
    pub workflows: Arc<wfx_schemas::check::WorkflowCache>,
    /// `window.workDoneProgress`.
    pub work_done_progress: bool,
    /// `workspace.inlayHint.refreshSupport`.
    pub inlay_hint_refresh: bool,
    /// `workspace.codeLens.refreshSupport`.
    pub code_lens_refresh: bool,
    /// `experimental.wfxRunStatus` (the VS Code client): runs are reported with
    /// `wfx/runStatus` notifications (docs/lsp-extensions.md) instead of work-done progress.
    pub run_status: bool,
}

impl Session {
    fn from_params(p: &lsp::InitializeParams) -> Self {
        let caps = &p.capabilities;
        let td = caps.text_document.as_ref();
        let ws = caps.workspace.as_ref();
        let mut roots: Vec<PathBuf> = p
            .workspace_folders
            .iter()
            .flatten()
            .filter_map(|f| paths::file_path(&f.uri))
            .collect();
        #[allow(
            deprecated,
            reason = "rootUri is still sent by clients without workspace folders"
        )]
        if roots.is_empty()
            && let Some(root) = p.root_uri.as_ref().and_then(paths::file_path)
        {
            roots.push(root);
        }
        if roots.len() > MAX_WORKSPACE_FOLDERS {
            tracing::warn!(
                "{} workspace folders; only the first {MAX_WORKSPACE_FOLDERS} are indexed",
                roots.len()
            );
            roots.truncate(MAX_WORKSPACE_FOLDERS);
        }
        Self {
            encoding: convert::negotiate_encoding(caps),
            roots,
            related_information: td
                .and_then(|t| t.publish_diagnostics.as_ref())
                .and_then(|d| d.related_information)
                .unwrap_or(false),
            snippets: td
                .and_then(|t| t.completion.as_ref())
                .and_then(|c| c.completion_item.as_ref())
                .and_then(|i| i.snippet_support)
                .unwrap_or(false),
            hierarchical_symbols: td
                .and_then(|t| t.document_symbol.as_ref())
                .and_then(|d| d.hierarchical_document_symbol_support)
                .unwrap_or(false),
            document_changes: ws
                .and_then(|w| w.workspace_edit.as_ref())
                .and_then(|e| e.document_changes)
                .unwrap_or(false),
            watch_registration: ws
                .and_then(|w| w.did_change_watched_files.as_ref())
                .and_then(|d| d.dynamic_registration)
                .unwrap_or(false),
            configuration: ws.and_then(|w| w.configuration).unwrap_or(false),
            workflows: Arc::default(),
            work_done_progress: caps
                .window
                .as_ref()
                .and_then(|w| w.work_done_progress)
                .unwrap_or(false),
            inlay_hint_refresh: ws
                .and_then(|w| w.inlay_hint.as_ref())
                .and_then(|i| i.refresh_support)
                .unwrap_or(false),
            code_lens_refresh: ws
                .and_then(|w| w.code_lens.as_ref())
                .and_then(|c| c.refresh_support)
                .unwrap_or(false),
            run_status: caps
                .experimental
                .as_ref()
                .and_then(|e| e.get("wfxRunStatus"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            settings: p
                .initialization_options
                .as_ref()
                .map(Settings::from_json)
                .unwrap_or_default(),
        }
    }
}

/// Shared state behind the service (cheap to clone into spawned tasks).
#[derive(Clone)]
pub struct Server {
    client: Client,
    docs: Arc<Documents>,
    session: Arc<RwLock<Session>>,
    /// Workspace files (root, root-relative path), sorted; `None` until the first
    /// `workspace/symbol` request and after watched files change.
    index: Arc<RwLock<Option<FileIndex>>>,
    publish: Arc<tokio::sync::Mutex<()>>,
    shutdown: Arc<AtomicBool>,
    runs: Runs,
    /// What the closed-file pass last pushed (guarded together with `publish`).
    closed: Arc<std::sync::Mutex<super::closed::Published>>,
    /// Wakes the closed-file pass; `notify_one` keeps one permit, so a burst of edits
    /// queues one pass, not one per edit.
    closed_wake: Arc<tokio::sync::Notify>,
    /// Counts queued closed-file passes; a running pass that sees it move on stops (its
    /// result would be stale) and the queued one starts.
    closed_gen: Arc<std::sync::atomic::AtomicU64>,
}

/// Workflow and case files: (root, root-relative path), sorted.
type FileIndex = Vec<(PathBuf, String)>;

/// The case runs of a session, shared with [`super::serve`] so that runs in flight are
/// stopped when the client shuts down or goes away.
#[derive(Clone, Default)]
pub struct Runs(Arc<std::sync::Mutex<RunState>>);

impl Runs {
    fn lock(&self) -> std::sync::MutexGuard<'_, RunState> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Cancels every run in flight: the bundled runner stops before its next case, an
    /// external runner command is killed (polled every 20 ms).
    pub fn cancel_all(&self) {
        for t in self.lock().tokens.values() {
            t.store(true, Ordering::SeqCst);
        }
    }

    /// Waits up to `timeout` for the runs in flight to end; true when none is left.
    pub fn wait_idle(&self, timeout: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        loop {
            if self.lock().tokens.is_empty() {
                return true;
            }
            if start.elapsed() >= timeout {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Case runs of this session (see `runs`): annotations by case URI, the last path of each
/// case, and the cancel tokens of running runs by the URI they were started for.
#[derive(Default)]
struct RunState {
    annotations: BTreeMap<String, runs::Annotation>,
    paths: BTreeMap<String, wfx_schemas::graph::CasePath>,
    tokens: BTreeMap<String, runs::CancelToken>,
    progress: BTreeMap<String, String>,
    next: u64,
}

/// True when the buffer `text` of the document at `loc` differs from the file on disk (or
/// there is no readable file): only then does opening or closing the buffer change what
/// other documents' checks read through the overlay.
fn shadows_disk(loc: &Located, text: &str) -> bool {
    match DiskFiles::new(&loc.root).read(&loc.rel) {
        Ok(disk) => disk != text.as_bytes(),
        Err(_) => true,
    }
}

/// The text of a caught panic.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// Runs pure analysis; a panic becomes an `InternalError` response plus a log line.
fn guard<T>(what: &str, f: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        tracing::error!("{what} panicked: {}", panic_message(p.as_ref()));
        Error::internal_error()
    })
}

fn request_failed(message: String) -> Error {
    Error {
        code: ErrorCode::ServerError(-32803),
        message: message.into(),
        data: None,
    }
}

/// The workflow folder a path belongs to, if it is one of the workflow's files.
fn workflow_dir(rel: &str) -> Option<WorkflowDir> {
    match workspace::classify(rel) {
        FileKind::Workflow(d)
        | FileKind::Case(d)
        | FileKind::AgentScript(d)
        | FileKind::WorkflowMd(d)
        | FileKind::Cassette(d) => Some(d),
        FileKind::Other => None,
    }
}

/// The workflow folder a path lies in: [`workflow_dir`] for the workflow's own files, else
/// the `workflows/<slug>/` folder of any other file below it (hook scripts, fixtures).
fn containing_workflow_dir(rel: &str) -> Option<WorkflowDir> {
    workflow_dir(rel).or_else(|| {
        let segs: Vec<&str> = rel.split('/').collect();
        let w = segs.iter().position(|s| *s == "workflows")?;
        let slug = segs.get(w + 1).filter(|s| !s.is_empty())?;
        segs.get(w + 2)?;
        Some(WorkflowDir {
            root: segs.get(..w)?.join("/"),
            slug: (*slug).to_owned(),
        })
    })
}

/// A document's analysis context: its snapshot, location, the overlay and the session.
struct Ctx {
    snap: Snapshot,
    loc: Located,
    fs: Overlay,
    s: Session,
}

impl Ctx {
    /// The document as the IDE functions take it: the version's shared parse and the
    /// session's workflow cache.
    fn doc(&self) -> ide::Doc<'_> {
        ide::Doc {
            fs: &self.fs,
            path: &self.loc.rel,
            text: &self.snap.text,
            parsed: self.snap.parsed(),
            workflows: &self.s.workflows,
        }
    }
    fn offset(&self, p: lsp::Position) -> u32 {
        convert::offset(&self.snap.index, p, self.s.encoding)
    }
    fn range(&self, r: TextRange) -> lsp::Range {
        convert::range(&self.snap.index, r, self.s.encoding)
    }
    /// The line index of another file (the current one from the snapshot).
    fn index_of(&self, file: &str) -> Option<Arc<LineIndex>> {
        if file == self.loc.rel {
            return Some(self.snap.index.clone());
        }
        self.fs
            .read_text(file)
            .ok()
            .map(|t| Arc::new(LineIndex::new(&t)))
    }
    fn location(&self, l: &ide::Location) -> Option<lsp::Location> {
        let index = self.index_of(&l.file)?;
        Some(lsp::Location {
            uri: paths::uri_of(&self.loc.root, &l.file)?,
            range: convert::range(&index, l.range, self.s.encoding),
        })
    }
}

/// Runs `check` (a document's diagnostics) only while `snap` is still the document's
/// current text; `None`, having run nothing, once a newer version has arrived (bounded
/// work: a superseded version is never checked).
fn unless_superseded<T>(
    docs: &Documents,
    uri: &Uri,
    snap: &Snapshot,
    check: impl FnOnce() -> T,
) -> Option<T> {
    docs.is_current(uri, snap).then(check)
}

/// Diagnostics of one document, converted; a panic in the check yields one WFX901 at the
/// top of the file.
pub fn document_diagnostics(
    fs: &Overlay,
    loc: &Located,
    snap: &Snapshot,
    s: &Session,
) -> Vec<lsp::Diagnostic> {
    // A document that is a link leaving the workspace gets the link's diagnostic only: its
    // content is not analysed, so nothing of it reaches hovers, symbols or related sites.
    let link = fs.leaves_workspace(&loc.rel);
    let core = if link {
        vec![core_diag::Diagnostic::new(
            &core_diag::LINK_OUTSIDE_WORKSPACE,
            loc.rel.clone(),
            TextRange::empty(0),
            format!(
                "`{}` is a symbolic link that leaves the workspace; it was not read",
                loc.rel
            ),
        )]
    } else {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            let cache = &s.workflows;
            match workspace::classify(&loc.rel) {
                // Markdown: nothing to parse as YAML.
                FileKind::WorkflowMd(_) | FileKind::Other => {
                    wfx_schemas::check::check_text_cached(fs, cache, &loc.rel, &snap.text)
                }
                // Capped below, once the hook script problems have joined.
                _ => {
                    wfx_schemas::check::check_parsed(fs, cache, &loc.rel, &snap.text, snap.parsed())
                }
            }
        }))
        .unwrap_or_else(|p| {
            let msg = panic_message(p.as_ref());
            tracing::error!("checking {} panicked: {msg}", loc.rel);
            vec![core_diag::Diagnostic::new(
                &core_diag::INTERNAL_ERROR,
                loc.rel.clone(),
                TextRange::empty(0),
                format!("the checker failed on this file: {msg}"),
            )]
        })
    };
    // Hook script problems (WFX503) sit on the scripts; in the editor they are published
    // for workflow.yaml, on the hook that names the script, with the script's site as
    // related information (the same `analysis::script_diagnostics` as `wfx-lsp check`).
    let mut core = core;
    if !link && matches!(workspace::classify(&loc.rel), FileKind::Workflow(_)) {
        let scripts = std::panic::catch_unwind(AssertUnwindSafe(|| {
            crate::analysis::script_diagnostics(fs, std::slice::from_ref(&loc.rel))
        }))
        .unwrap_or_default();
        for mut d in scripts {
            let Some(site) = d.related.iter().find(|r| r.file == loc.rel).cloned() else {
                continue;
            };
            d.message = format!("{}: {}", d.file, d.message);
            d.related = vec![core_diag::Related {
                file: d.file.clone(),
                range: d.range,
                message: "the script".into(),
            }];
            d.file = loc.rel.clone();
            d.range = site.range;
            d.fixes.clear();
            core.push(d);
        }
    }
    // At most 1,000 per file plus one WFX009, the script problems included.
    core_diag::cap_per_file(&mut core);
    let coverage_hints = if !link
        && s.settings.coverage_uncovered_decisions
        && matches!(workspace::classify(&loc.rel), FileKind::Workflow(_))
    {
        coverage_hints(fs, loc, snap, s)
    } else {
        Vec::new()
    };
    // Line indexes of the other files that related sites name.
    let mut indexes: BTreeMap<String, Arc<LineIndex>> = BTreeMap::new();
    indexes.insert(loc.rel.clone(), snap.index.clone());
    for d in &core {
        for r in &d.related {
            if !indexes.contains_key(&r.file)
                && let Ok(t) = fs.read_text(&r.file)
            {
                indexes.insert(r.file.clone(), Arc::new(LineIndex::new(&t)));
            }
        }
    }
    let enc = s.encoding;
    let locate = |file: &str, range: TextRange| -> Option<lsp::Location> {
        let index = indexes.get(file)?;
        Some(lsp::Location {
            uri: paths::uri_of(&loc.root, file)?,
            range: convert::range(index, range, enc),
        })
    };
    core.iter()
        .map(|d| {
            convert::diagnostic(
                d,
                &snap.index,
                enc,
                snap.version,
                s.related_information,
                &locate,
            )
        })
        .chain(coverage_hints)
        .collect()
}

/// Hint diagnostics (source `wfx-coverage`, no code: an editor aid, not a rule `check`
/// applies) for the human decision edges of a `workflow.yaml` buffer that no case's `decide`
/// names (`wfx.coverage.uncoveredDecisions`, issue 17). A panic yields none.
fn coverage_hints(
    fs: &Overlay,
    loc: &Located,
    snap: &Snapshot,
    s: &Session,
) -> Vec<lsp::Diagnostic> {
    let doc = ide::Doc {
        fs,
        path: &loc.rel,
        text: &snap.text,
        parsed: snap.parsed(),
        workflows: &s.workflows,
    };
    let uncovered =
        std::panic::catch_unwind(AssertUnwindSafe(|| ide::coverage::coverage_lenses(&doc).1))
            .unwrap_or_default();
    uncovered
        .iter()
        .map(|u| lsp::Diagnostic {
            range: convert::range(&snap.index, u.range, s.encoding),
            severity: Some(lsp::DiagnosticSeverity::HINT),
            source: Some("wfx-coverage".into()),
            message: format!(
                "no case decides `{}` → `{}`: add a case with `decide: {{ to: {} }}` at this checkpoint",
                u.from, u.to, u.to
            ),
            ..Default::default()
        })
        .collect()
}

impl Server {
    /// A server talking to `client`; `shutdown` is set when the client sends `shutdown`;
    /// `runs` holds its case runs.
    pub fn new(client: Client, shutdown: Arc<AtomicBool>, runs: Runs) -> Self {
        Self {
            client,
            docs: Arc::new(Documents::new()),
            session: Arc::new(RwLock::new(Session::default())),
            index: Arc::new(RwLock::new(None)),
            publish: Arc::new(tokio::sync::Mutex::new(())),
            shutdown,
            runs,
            closed: Arc::default(),
            closed_wake: Arc::new(tokio::sync::Notify::new()),
            closed_gen: Arc::default(),
        }
    }

    fn session(&self) -> Session {
        self.session
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The files seen from `root`: the disk under it plus open buffers when `root` lies in
    /// a workspace folder, open buffers only otherwise (a buffer the client opened outside
    /// its workspace folders never makes the server read that folder: confinement).
    fn overlay(&self, root: &Path) -> Overlay {
        if self.inside_workspace(root) {
            Overlay::new(root, self.docs.texts_under(root))
        } else {
            Overlay::buffers_only(self.docs.texts_under(root))
        }
    }

    /// True when `root` (a normalised path, `paths::file_path`) is, or lies below, one of
    /// the session's workspace folders, and is not reached through a symbolic link that
    /// leaves that folder (a workflow folder `<ws>/sub/workflows/x` with `sub -> /elsewhere`
    /// would otherwise root the disk layer outside): confinement, docs/security.md §1.
    fn inside_workspace(&self, root: &Path) -> bool {
        self.session().roots.iter().any(|r| {
            root.starts_with(r)
                && (root == r.as_path() || !wfx_runner::disk::root_escapes_through_link(r, root))
        })
    }

    fn ctx(&self, uri: &Uri) -> Option<Ctx> {
        let snap = self.docs.snapshot(uri)?;
        let loc = snap.located.clone()?;
        let fs = self.overlay(&loc.root);
        Some(Ctx {
            snap,
            loc,
            fs,
            s: self.session(),
        })
    }

    /// Checks one open document and publishes, unless a newer version arrived meanwhile.
    async fn recheck(&self, uri: &Uri) {
        let Some(snap) = self.docs.snapshot(uri) else {
            return;
        };
        let Some(loc) = snap.located.clone() else {
            return;
        };
        if workspace::classify(&loc.rel) == FileKind::Other {
            return;
        }
        let fs = self.overlay(&loc.root);
        let s = self.session();
        let version = snap.version;
        let checked = snap.clone();
        // A version superseded while this task waited for a blocking thread is not checked
        // at all (typing fast in `workflow.yaml` queues one check per keystroke; bounded
        // work): the newer version's own recheck follows.
        let docs = self.docs.clone();
        let current = uri.clone();
        let diags = tokio::task::spawn_blocking(move || {
            unless_superseded(&docs, &current, &snap, || {
                document_diagnostics(&fs, &loc, &snap, &s)
            })
        })
        .await;
        let diags = match diags {
            Ok(None) => {
                tracing::debug!(
                    "skipped checking superseded version {version} of {}",
                    uri.as_str()
                );
                return;
            }
            Ok(Some(mut d)) => {
                d.extend(self.run_diagnostics(uri));
                d
            }
            Err(e) => {
                tracing::error!("the diagnostics task failed: {e}");
                return;
            }
        };
        let _guard = self.publish.lock().await;
        if !self.docs.is_current(uri, &checked) {
            tracing::debug!(
                "dropping diagnostics of superseded version {version} of {}",
                uri.as_str()
            );
            return;
        }
        self.client
            .publish_diagnostics(uri.clone(), diags, Some(version))
            .await;
    }

    /// Rechecks the other open documents whose diagnostics may read `loc`: those of the
    /// same workflow folder (any file in it: `workflow.yaml`, a case, an agent script, a
    /// hook script, a `from:` fixture), and for a file under a workspace's `skills/` every
    /// open `workflow.yaml` of that workspace (its skill rules read the skills, FORMAT §A.7).
    async fn recheck_dependents(&self, uri: &Uri, loc: &Located) {
        let dir = containing_workflow_dir(&loc.rel);
        for (other, other_loc) in self.docs.all() {
            if &other == uri {
                continue;
            }
            let Some(ol) = other_loc.filter(|ol| ol.root == loc.root) else {
                continue;
            };
            let Some(odir) = workflow_dir(&ol.rel) else {
                continue;
            };
            let same_folder = dir.as_ref() == Some(&odir);
            let reads_skill = matches!(workspace::classify(&ol.rel), FileKind::Workflow(_))
                && loc.rel.starts_with(&format!("{}/", odir.skills_dir()));
            if same_folder || reads_skill {
                self.recheck(&other).await;
            }
        }
    }

    async fn recheck_all(&self) {
        for (uri, _) in self.docs.all() {
            self.recheck(&uri).await;
        }
    }

    fn apply_settings(&self, v: &Value) {
        let settings = Settings::from_json(v);
        tracing::info!("settings: {settings:?}");
        self.session
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .settings = settings;
        self.schedule_closed();
    }

    /// Asks the client for the `wfx` section, off the message loop.
    fn pull_configuration(&self) {
        let this = self.clone();
        tokio::spawn(async move {
            let item = lsp::ConfigurationItem {
                scope_uri: None,
                section: Some("wfx".to_owned()),
            };
            match this.client.configuration(vec![item]).await {
                Ok(values) => {
                    if let Some(v) = values.first().filter(|v| !v.is_null()) {
                        this.apply_settings(v);
                    }
                }
                Err(e) => tracing::warn!("workspace/configuration failed: {e}"),
            }
        });
    }

    /// The workflow and case files of every root, walked on first use (the first
    /// `workspace/symbol` request) and again after watched files change; startup does not
    /// wait for a walk of a large workspace.
    async fn indexed_files(&self) -> Vec<(PathBuf, String)> {
        if let Some(found) = self
            .index
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
        {
            return found;
        }
        let roots = self.session().roots;
        let found = tokio::task::spawn_blocking(move || {
            let mut out = Vec::new();
            for root in roots {
                let fs = DiskFiles::new(&root);
                // One walk budget per root (docs/security.md, F2).
                let budget = wfx_schemas::files::WalkBudget::for_pass();
                for wf in workspace::discover_workflows(&fs, "") {
                    out.push((root.clone(), wf.spec_path()));
                    for c in workspace::discover_test_files_within(&fs, &wf, &budget).cases {
                        out.push((root.clone(), c));
                    }
                }
            }
            out.sort();
            out
        })
        .await
        .unwrap_or_default();
        tracing::info!("indexed {} workflow and case files", found.len());
        *self
            .index
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(found.clone());
        found
    }

    /// Forgets the file index (rebuilt by the next [`Self::indexed_files`]).
    fn invalidate_index(&self) {
        *self
            .index
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// "Scaffold an agent script" (issue 15): on a case the selection rule finds no agent
    /// for, a workspace edit that creates `<case>.agent.yaml` with the draft of
    /// [`wfx_runner::scaffold::draft`] (read through the overlay, so unsaved edits count).
    /// Not offered when the client cannot create files through edits, when a script exists,
    /// or when the case cannot be scaffolded (its diagnostics, e.g. `WFX313`, say why).
    /// Nothing is written by the server: the client applies the edit.
    fn scaffold_action(&self, ctx: &Ctx) -> Option<lsp::CodeActionOrCommand> {
        if !matches!(workspace::classify(&ctx.loc.rel), FileKind::Case(_))
            || !ctx.s.document_changes
            || !matches!(
                wfx_runner::select::select_agent(&ctx.fs, &ctx.loc.rel, false),
                wfx_runner::select::AgentSource::NoAgent { .. }
            )
        {
            return None;
        }
        let draft = wfx_runner::scaffold::draft(&ctx.fs, &ctx.loc.rel).ok()?;
        let uri = paths::uri_of(&ctx.loc.root, &draft.path)?;
        let name = draft
            .path
            .rsplit('/')
            .next()
            .unwrap_or(&draft.path)
            .to_owned();
        Some(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: format!("Scaffold an agent script ({name})"),
            kind: Some(lsp::CodeActionKind::REFACTOR),
            edit: Some(lsp::WorkspaceEdit {
                document_changes: Some(lsp::DocumentChanges::Operations(vec![
                    lsp::DocumentChangeOperation::Op(lsp::ResourceOp::Create(lsp::CreateFile {
                        uri: uri.clone(),
                        options: Some(lsp::CreateFileOptions {
                            overwrite: Some(false),
                            ignore_if_exists: Some(true),
                        }),
                        annotation_id: None,
                    })),
                    lsp::DocumentChangeOperation::Edit(lsp::TextDocumentEdit {
                        text_document: lsp::OptionalVersionedTextDocumentIdentifier {
                            uri,
                            version: None,
                        },
                        edits: vec![lsp::OneOf::Left(lsp::TextEdit {
                            range: lsp::Range::default(),
                            new_text: draft.text,
                        })],
                    }),
                ])),
                ..Default::default()
            }),
            ..Default::default()
        }))
    }

    fn workspace_edit(&self, ctx: &Ctx, edits: &[TextEdit]) -> Option<lsp::WorkspaceEdit> {
        let mut by_file: BTreeMap<&str, Vec<&TextEdit>> = BTreeMap::new();
        for e in edits {
            by_file.entry(e.file.as_str()).or_default().push(e);
        }
        let mut doc_edits = Vec::new();
        for (file, edits) in by_file {
            let index = ctx.index_of(file)?;
            let uri = paths::uri_of(&ctx.loc.root, file)?;
            let mut lsp_edits: Vec<lsp::TextEdit> = edits
                .iter()
                .map(|e| lsp::TextEdit {
                    range: convert::range(&index, e.range, ctx.s.encoding),
                    new_text: e.new_text.clone(),
                })
                .collect();
            lsp_edits.sort_by_key(|e| (e.range.start.line, e.range.start.character));
            let version = self.docs.version(&uri);
            doc_edits.push((uri, version, lsp_edits));
        }
        if doc_edits.is_empty() {
            return None;
        }
        if ctx.s.document_changes {
            let changes = doc_edits
                .into_iter()
                .map(|(uri, version, edits)| lsp::TextDocumentEdit {
                    text_document: lsp::OptionalVersionedTextDocumentIdentifier { uri, version },
                    edits: edits.into_iter().map(lsp::OneOf::Left).collect(),
                })
                .collect();
            Some(lsp::WorkspaceEdit {
                document_changes: Some(lsp::DocumentChanges::Edits(changes)),
                ..Default::default()
            })
        } else {
            let changes = doc_edits
                .into_iter()
                .map(|(uri, _, edits)| (uri, edits))
                .collect();
            Some(lsp::WorkspaceEdit {
                changes: Some(changes),
                ..Default::default()
            })
        }
    }
}

impl LanguageServer for Server {
    async fn initialize(&self, params: lsp::InitializeParams) -> Result<lsp::InitializeResult> {
        let session = Session::from_params(&params);
        let enc = session.encoding;
        tracing::info!("initialize: encoding {enc:?}, roots {:?}", session.roots);
        *self
            .session
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = session;
        Ok(lsp::InitializeResult {
            capabilities: capabilities(enc),
            server_info: Some(lsp::ServerInfo {
                name: "wfx-lsp".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: lsp::InitializedParams) {
        // Log lines at their level, as `window/logMessage` (issue 16; `logging`).
        if let Some(mut lines) = super::logging::take_lines() {
            let client = self.client.clone();
            tokio::spawn(async move {
                while let Some((ty, line)) = lines.recv().await {
                    client.log_message(ty, line).await;
                }
            });
        }
        let s = self.session();
        if s.watch_registration {
            let this = self.clone();
            tokio::spawn(async move {
                let watchers = WATCH_GLOBS
                    .iter()
                    .map(|g| lsp::FileSystemWatcher {
                        glob_pattern: lsp::GlobPattern::String((*g).to_owned()),
                        kind: None,
                    })
                    .collect();
                let opts = lsp::DidChangeWatchedFilesRegistrationOptions { watchers };
                let reg = lsp::Registration {
                    id: "wfx-watched-files".into(),
                    method: "workspace/didChangeWatchedFiles".into(),
                    register_options: serde_json::to_value(opts).ok(),
                };
                if let Err(e) = this.client.register_capability(vec![reg]).await {
                    tracing::warn!("registering file watchers failed: {e}");
                }
            });
        }
        if s.configuration {
            self.pull_configuration();
        }
        let this = self.clone();
        tokio::spawn(async move { this.closed_worker().await });
        self.schedule_closed();
    }

    async fn shutdown(&self) -> Result<()> {
        self.shutdown.store(true, Ordering::SeqCst);
        // Nothing may outlive the session: stop runs in flight (and their children).
        self.runs.cancel_all();
        Ok(())
    }

    async fn did_open(&self, params: lsp::DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let loc = paths::locate(&doc.uri, &self.session().roots);
        self.docs
            .open(doc.uri.clone(), &doc.text, doc.version, loc.clone());
        self.recheck(&doc.uri).await;
        self.schedule_closed();
        // Other documents read the buffer instead of the file from now on; that changes
        // their diagnostics only when the two differ (usually they do not: a file was
        // just opened), so opening 200 files does not recheck 200 × 200 times.
        if let Some(loc) = loc
            && (!self.inside_workspace(&loc.root) || shadows_disk(&loc, &doc.text))
        {
            self.recheck_dependents(&doc.uri, &loc).await;
        }
    }

    async fn did_change(&self, params: lsp::DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let enc = self.session().encoding;
        match self.docs.change(
            &uri,
            &params.content_changes,
            params.text_document.version,
            enc,
        ) {
            Some(true) => {}
            // Dropped as stale: the text, its diagnostics and its run annotations stand.
            Some(false) => return,
            None => {
                tracing::warn!(
                    "didChange for a document that is not open: {}",
                    uri.as_str()
                );
                return;
            }
        }
        // Annotations belong to the text they ran on: an edit drops them (see `runs`).
        self.run_state().annotations.remove(uri.as_str());
        self.recheck(&uri).await;
        // No document's diagnostics read a case's text (other cases only ask whether a
        // `from:` file exists, which an edit does not change), so typing in a case
        // rechecks that case alone; an edit to `workflow.yaml`, a hook script or a fixture
        // rechecks the open documents of its workflow, one to a skill every open
        // `workflow.yaml` (see `recheck_dependents`).
        if let Some(loc) = self.docs.snapshot(&uri).and_then(|s| s.located)
            && !matches!(workspace::classify(&loc.rel), FileKind::Case(_))
        {
            self.recheck_dependents(&uri, &loc).await;
            self.schedule_closed();
        }
    }

    async fn did_close(&self, params: lsp::DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let closed = self.docs.close(&uri);
        {
            let _guard = self.publish.lock().await;
            self.client
                .publish_diagnostics(uri.clone(), Vec::new(), None)
                .await;
            // The next closed-file pass pushes its saved text's diagnostics.
            self.closed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .forget(uri.as_str());
        }
        self.schedule_closed();
        // The buffer no longer shadows the disk: files that read it see the saved text
        // (which only matters when the two differed).
        if let Some(doc) = closed
            && let Some(loc) = doc.snapshot().located
            && (!self.inside_workspace(&loc.root) || shadows_disk(&loc, doc.text()))
        {
            self.recheck_dependents(&uri, &loc).await;
        }
    }

    async fn did_change_watched_files(&self, params: lsp::DidChangeWatchedFilesParams) {
        tracing::debug!("{} watched files changed", params.changes.len());
        self.invalidate_index();
        self.recheck_all().await;
        self.schedule_closed();
    }

    async fn did_change_workspace_folders(&self, params: lsp::DidChangeWorkspaceFoldersParams) {
        let added: Vec<PathBuf> = params
            .event
            .added
            .iter()
            .filter_map(|f| paths::file_path(&f.uri))
            .collect();
        let removed: Vec<PathBuf> = params
            .event
            .removed
            .iter()
            .filter_map(|f| paths::file_path(&f.uri))
            .collect();
        let (roots, refused) = {
            let mut s = self
                .session
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let refused = change_roots(&mut s.roots, &added, &removed);
            (s.roots.clone(), refused)
        };
        tracing::info!("workspace folders changed: roots {roots:?}");
        if refused > 0 {
            let msg = format!(
                "wfx-lsp: {refused} workspace folder(s) not indexed: at most {MAX_WORKSPACE_FOLDERS} folders are (docs/editors.md)"
            );
            tracing::warn!("{msg}");
            self.client
                .show_message(lsp::MessageType::WARNING, msg)
                .await;
        }
        // Open documents are checked under the deepest folder that holds them: an added
        // folder takes its documents over, a removed one gives them back.
        self.docs.relocate(|uri| paths::locate(uri, &roots));
        // The index is rebuilt from the new folders; the next closed-file pass reports the
        // added folders' closed files and clears the removed folders' (they are no longer
        // in the index, so `closed::Published` pushes an empty list for each).
        self.invalidate_index();
        self.recheck_all().await;
        self.schedule_closed();
    }

    async fn did_change_configuration(&self, params: lsp::DidChangeConfigurationParams) {
        let empty =
            params.settings.is_null() || params.settings.as_object().is_some_and(|o| o.is_empty());
        if empty && self.session().configuration {
            self.pull_configuration();
        } else {
            self.apply_settings(&params.settings);
        }
    }

    async fn completion(
        &self,
        params: lsp::CompletionParams,
    ) -> Result<Option<lsp::CompletionResponse>> {
        let p = params.text_document_position;
        let Some(ctx) = self.ctx(&p.text_document.uri) else {
            return Ok(None);
        };
        let items = guard("completion", || {
            let at = ctx.offset(p.position);
            ide::completion(&ctx.doc(), at)
                .iter()
                .map(|i| {
                    convert::completion_item(i, &ctx.snap.index, ctx.s.encoding, ctx.s.snippets)
                })
                .collect::<Vec<_>>()
        })?;
        Ok(Some(lsp::CompletionResponse::Array(items)))
    }

    async fn hover(&self, params: lsp::HoverParams) -> Result<Option<lsp::Hover>> {
        let p = params.text_document_position_params;
        let Some(ctx) = self.ctx(&p.text_document.uri) else {
            return Ok(None);
        };
        let run = self.current_annotation(&p.text_document.uri);
        guard("hover", || {
            let at = ctx.offset(p.position);
            let hover = ide::hover(&ctx.doc(), at)
                .map(|h| convert::hover(&h, &ctx.snap.index, ctx.s.encoding));
            // On a failed step of the last run: its evidence (issue 16).
            let evidence = run.as_ref().and_then(|(snap, a)| {
                runs::step_annotations(&snap.text, &a.outcome)
                    .into_iter()
                    .find(|s| {
                        matches!(s.mark, runs::StepMark::Failed(_))
                            && s.range.start <= at
                            && at <= s.range.end
                    })
                    .and_then(|s| {
                        runs::step_evidence_markdown(&a.outcome, s.index).map(|md| {
                            (md, convert::range(&snap.index, s.key_range, ctx.s.encoding))
                        })
                    })
            });
            match (hover, evidence) {
                (h, None) => h,
                (Some(mut h), Some((md, _))) => {
                    if let lsp::HoverContents::Markup(m) = &mut h.contents {
                        m.value.push_str("\n\n---\n\n");
                        m.value.push_str(&md);
                    }
                    Some(h)
                }
                (None, Some((md, range))) => Some(lsp::Hover {
                    contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                        kind: lsp::MarkupKind::Markdown,
                        value: md,
                    }),
                    range: Some(range),
                }),
            }
        })
    }

    async fn goto_definition(
        &self,
        params: lsp::GotoDefinitionParams,
    ) -> Result<Option<lsp::GotoDefinitionResponse>> {
        let p = params.text_document_position_params;
        let Some(ctx) = self.ctx(&p.text_document.uri) else {
            return Ok(None);
        };
        let locs = guard("definition", || {
            let at = ctx.offset(p.position);
            ide::goto_definition(&ctx.doc(), at)
                .iter()
                .filter_map(|l| ctx.location(l))
                .collect::<Vec<_>>()
        })?;
        Ok(if locs.is_empty() {
            None
        } else {
            Some(lsp::GotoDefinitionResponse::Array(locs))
        })
    }

    async fn references(&self, params: lsp::ReferenceParams) -> Result<Option<Vec<lsp::Location>>> {
        let p = params.text_document_position;
        let Some(ctx) = self.ctx(&p.text_document.uri) else {
            return Ok(None);
        };
        let include = params.context.include_declaration;
        let locs = guard("references", || {
            let at = ctx.offset(p.position);
            ide::references(&ctx.doc(), at, include)
                .iter()
                .filter_map(|l| ctx.location(l))
                .collect::<Vec<_>>()
        })?;
        Ok(Some(locs))
    }

    async fn document_highlight(
        &self,
        params: lsp::DocumentHighlightParams,
    ) -> Result<Option<Vec<lsp::DocumentHighlight>>> {
        let p = params.text_document_position_params;
        let Some(ctx) = self.ctx(&p.text_document.uri) else {
            return Ok(None);
        };
        let out = guard("documentHighlight", || {
            ide::document_highlights(&ctx.doc(), ctx.offset(p.position))
                .iter()
                .map(|h| lsp::DocumentHighlight {
                    range: ctx.range(h.range),
                    kind: Some(if h.write {
                        lsp::DocumentHighlightKind::WRITE
                    } else {
                        lsp::DocumentHighlightKind::READ
                    }),
                })
                .collect::<Vec<_>>()
        })?;
        Ok(Some(out))
    }

    async fn prepare_rename(
        &self,
        params: lsp::TextDocumentPositionParams,
    ) -> Result<Option<lsp::PrepareRenameResponse>> {
        let Some(ctx) = self.ctx(&params.text_document.uri) else {
            return Ok(None);
        };
        let r = guard("prepareRename", || {
            ide::prepare_rename(&ctx.doc(), ctx.offset(params.position))
        })?;
        match r {
            Ok(range) => Ok(Some(lsp::PrepareRenameResponse::Range(ctx.range(range)))),
            Err(why) => Err(request_failed(why)),
        }
    }

    async fn rename(&self, params: lsp::RenameParams) -> Result<Option<lsp::WorkspaceEdit>> {
        let p = params.text_document_position;
        let Some(ctx) = self.ctx(&p.text_document.uri) else {
            return Ok(None);
        };
        let r = guard("rename", || {
            ide::rename(&ctx.doc(), ctx.offset(p.position), &params.new_name)
        })?;
        match r {
            Ok(edits) => guard("rename edits", || self.workspace_edit(&ctx, &edits)),
            Err(why) => Err(request_failed(why)),
        }
    }

    async fn inlay_hint(
        &self,
        params: lsp::InlayHintParams,
    ) -> Result<Option<Vec<lsp::InlayHint>>> {
        let Some(ctx) = self.ctx(&params.text_document.uri) else {
            return Ok(None);
        };
        let run = self.current_annotation(&params.text_document.uri);
        let mut hints = if ctx.s.settings.inlay_hints_length_budget {
            guard("inlayHint", || {
                let range = convert::text_range(&ctx.snap.index, params.range, ctx.s.encoding);
                ide::inlay_hints(&ctx.doc(), range)
                    .iter()
                    .map(|h| convert::inlay_hint(h, &ctx.snap.index, ctx.s.encoding))
                    .collect::<Vec<_>>()
            })?
        } else {
            Vec::new()
        };
        if let Some((snap, a)) = run {
            let run_hints = guard("run inlay hints", || {
                runs::step_annotations(&snap.text, &a.outcome)
                    .iter()
                    .map(|st| lsp::InlayHint {
                        position: convert::position(&snap.index, st.hint_at, ctx.s.encoding),
                        label: lsp::InlayHintLabel::String(st.mark.label()),
                        kind: None,
                        text_edits: None,
                        tooltip: None,
                        padding_left: Some(true),
                        padding_right: None,
                        data: None,
                    })
                    .filter(|h| h.position >= params.range.start && h.position <= params.range.end)
                    .collect::<Vec<_>>()
            })?;
            hints.extend(run_hints);
        }
        Ok(Some(hints))
    }

    async fn document_symbol(
        &self,
        params: lsp::DocumentSymbolParams,
    ) -> Result<Option<lsp::DocumentSymbolResponse>> {
        let uri = params.text_document.uri;
        let Some(ctx) = self.ctx(&uri) else {
            return Ok(None);
        };
        guard("documentSymbol", || {
            let symbols = ide::outline(&ctx.doc());
            if ctx.s.hierarchical_symbols {
                Some(lsp::DocumentSymbolResponse::Nested(
                    symbols
                        .iter()
                        .map(|s| convert::document_symbol(s, &ctx.snap.index, ctx.s.encoding))
                        .collect(),
                ))
            } else {
                let mut flat = Vec::new();
                convert::flat_symbols(
                    &symbols,
                    &uri,
                    &ctx.snap.index,
                    ctx.s.encoding,
                    None,
                    &mut flat,
                );
                Some(lsp::DocumentSymbolResponse::Flat(flat))
            }
        })
    }

    async fn folding_range(
        &self,
        params: lsp::FoldingRangeParams,
    ) -> Result<Option<Vec<lsp::FoldingRange>>> {
        let Some(ctx) = self.ctx(&params.text_document.uri) else {
            return Ok(None);
        };
        guard("foldingRange", || {
            Some(convert::folding_ranges(
                &ide::folding_ranges(&ctx.doc()),
                &ctx.snap.index,
            ))
        })
    }

    async fn semantic_tokens_full(
        &self,
        params: lsp::SemanticTokensParams,
    ) -> Result<Option<lsp::SemanticTokensResult>> {
        let Some(ctx) = self.ctx(&params.text_document.uri) else {
            return Ok(None);
        };
        guard("semanticTokens", || {
            let ranges = ide::regex_tokens(&ctx.doc());
            let data = convert::semantic_tokens(&ranges, &ctx.snap.index, ctx.s.encoding);
            Some(lsp::SemanticTokensResult::Tokens(lsp::SemanticTokens {
                result_id: None,
                data,
            }))
        })
    }

    async fn code_action(
        &self,
        params: lsp::CodeActionParams,
    ) -> Result<Option<lsp::CodeActionResponse>> {
        let uri = params.text_document.uri;
        let Some(ctx) = self.ctx(&uri) else {
            return Ok(None);
        };
        let actions = guard("codeAction", || {
            let mut out: Vec<lsp::CodeActionOrCommand> = Vec::new();
            let mut titles = std::collections::BTreeSet::new();
            let mut core = Vec::new();
            for d in &params.context.diagnostics {
                let Some(c) = convert::core_diagnostic(
                    d,
                    &ctx.loc.rel,
                    &ctx.snap.index,
                    ctx.s.encoding,
                    ctx.snap.version,
                ) else {
                    continue;
                };
                for (i, fix) in c.fixes.iter().enumerate() {
                    if !titles.insert(fix.title.clone()) {
                        continue;
                    }
                    if let Some(edit) = self.workspace_edit(&ctx, &fix.edits) {
                        out.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                            title: fix.title.clone(),
                            kind: Some(lsp::CodeActionKind::QUICKFIX),
                            diagnostics: Some(vec![d.clone()]),
                            edit: Some(edit),
                            is_preferred: Some(i == 0),
                            ..Default::default()
                        }));
                    }
                }
                core.push(c);
            }
            let range = convert::text_range(&ctx.snap.index, params.range, ctx.s.encoding);
            for a in ide::code_actions(&ctx.doc(), range, &core) {
                if !titles.insert(a.title.clone()) {
                    continue;
                }
                let Some(edit) = self.workspace_edit(&ctx, &a.edits) else {
                    continue;
                };
                let diagnostics: Vec<lsp::Diagnostic> = params
                    .context
                    .diagnostics
                    .iter()
                    .filter(|d| matches!(&d.code, Some(lsp::NumberOrString::String(c)) if Some(c) == a.fixes_code.as_ref()))
                    .cloned()
                    .collect();
                out.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                    title: a.title.clone(),
                    kind: Some(if a.fixes_code.is_some() {
                        lsp::CodeActionKind::QUICKFIX
                    } else {
                        lsp::CodeActionKind::REFACTOR_REWRITE
                    }),
                    diagnostics: if diagnostics.is_empty() {
                        None
                    } else {
                        Some(diagnostics)
                    },
                    edit: Some(edit),
                    is_preferred: Some(a.preferred),
                    ..Default::default()
                }));
            }
            if let Some(a) = self.scaffold_action(&ctx) {
                out.push(a);
            }
            out
        })?;
        Ok(Some(actions))
    }

    async fn symbol(
        &self,
        params: lsp::WorkspaceSymbolParams,
    ) -> Result<Option<lsp::WorkspaceSymbolResponse>> {
        let query = params.query.to_lowercase();
        let mut files: Vec<(PathBuf, String)> = self.indexed_files().await;
        for (_, loc) in self.docs.all() {
            if let Some(loc) = loc
                && workspace::classify(&loc.rel) != FileKind::Other
            {
                files.push((loc.root, loc.rel));
            }
        }
        files.sort();
        files.dedup();
        let s = self.session();
        let enc = s.encoding;
        let mut overlays: BTreeMap<PathBuf, Overlay> = BTreeMap::new();
        for (root, _) in &files {
            if !overlays.contains_key(root) {
                overlays.insert(root.clone(), self.overlay(root));
            }
        }
        let out = guard("workspace/symbol", || {
            let mut out = Vec::new();
            for (root, rel) in &files {
                let (Some(fs), Some(uri)) = (overlays.get(root), paths::uri_of(root, rel)) else {
                    continue;
                };
                let Ok(text) = fs.read_text(rel) else {
                    continue;
                };
                let index = LineIndex::new(&text);
                let mut flat = Vec::new();
                convert::flat_symbols(
                    &ide::document_symbols(&ide::Doc {
                        fs,
                        path: rel,
                        text: &text,
                        parsed: &wfx_schemas::yaml::parse(&text),
                        workflows: &s.workflows,
                    }),
                    &uri,
                    &index,
                    enc,
                    None,
                    &mut flat,
                );
                out.extend(
                    flat.into_iter()
                        .filter(|s| s.name.to_lowercase().contains(&query)),
                );
                if out.len() >= 1000 {
                    break;
                }
            }
            out.truncate(1000);
            out
        })?;
        Ok(Some(lsp::WorkspaceSymbolResponse::Flat(out)))
    }

    async fn code_lens(&self, params: lsp::CodeLensParams) -> Result<Option<Vec<lsp::CodeLens>>> {
        let uri = params.text_document.uri;
        let Some(ctx) = self.ctx(&uri) else {
            return Ok(None);
        };
        let at = lsp::Range::default();
        let lens = |title: String, command: &str, args: bool| lsp::CodeLens {
            range: at,
            command: Some(lsp::Command {
                title,
                command: command.to_owned(),
                arguments: args.then(|| vec![Value::String(uri.as_str().to_owned())]),
            }),
            data: None,
        };
        let mut out = Vec::new();
        match workspace::classify(&ctx.loc.rel) {
            FileKind::Case(_) => {
                // The agent the selection rule picks, the same rule `wfx-lsp test` uses.
                let source = wfx_runner::select::select_agent(&ctx.fs, &ctx.loc.rel, false);
                out.push(lens(
                    format!("▶ Run case ({})", source.label()),
                    runs::RUN_CASE,
                    true,
                ));
                // Only when live runs are allowed (issue 15 item 8): opening a file never
                // offers to spend money otherwise. An agent script comes before the model in
                // the selection rule, so such a case would not be recorded: no lens.
                if ctx.s.settings.run_allow_live
                    && let Some(title) = record::lens_title(&source)
                {
                    out.push(lens(title.into(), record::RECORD_CASE, true));
                }
                if let Some((snap, a)) = self.current_annotation(&uri) {
                    let title = guard("verdict lens", || {
                        let steps = runs::step_annotations(&snap.text, &a.outcome);
                        runs::verdict_title(&a.outcome, &steps)
                    })?;
                    // The verdict opens the run's transcript (issue 16).
                    out.push(lens(title, runs::SHOW_TRANSCRIPT, true));
                }
            }
            FileKind::Workflow(_) => {
                out.push(lens("▶ Run all cases".into(), runs::RUN_ALL_CASES, true));
                if ctx.s.settings.run_allow_live {
                    out.push(lens(
                        record::RECORD_ALL_TITLE.into(),
                        record::RECORD_CASE,
                        true,
                    ));
                }
                let lenses = guard("coverage lens", || {
                    ide::coverage::coverage_lenses(&ctx.doc()).0
                })?;
                for l in lenses {
                    let mark = self.last_run_mark(&ctx.loc.root, &l.cases);
                    out.push(lsp::CodeLens {
                        range: ctx.range(l.range),
                        command: Some(lsp::Command {
                            title: format!("{}{mark}", l.title),
                            command: String::new(),
                            arguments: None,
                        }),
                        data: None,
                    });
                }
            }
            FileKind::Cassette(_) => {
                // Recorded when, model, calls, tokens; stale per WFX454; replay (issue 15).
                let lenses = guard("cassette lens", || ide::cassette::lenses(&ctx.doc()))?;
                for l in lenses {
                    let arguments = l.run_case.as_deref().and_then(|case| {
                        let case_uri = paths::uri_of(&ctx.loc.root, case)?;
                        Some(vec![Value::String(case_uri.as_str().to_owned())])
                    });
                    out.push(lsp::CodeLens {
                        range: ctx.range(l.range),
                        command: Some(lsp::Command {
                            title: l.title,
                            command: if arguments.is_some() {
                                runs::RUN_CASE.to_owned()
                            } else {
                                String::new()
                            },
                            arguments,
                        }),
                        data: None,
                    });
                }
            }
            _ => {}
        }
        Ok(Some(out))
    }

    async fn execute_command(
        &self,
        params: lsp::ExecuteCommandParams,
    ) -> Result<Option<lsp::LSPAny>> {
        let uri = params
            .arguments
            .first()
            .cloned()
            .and_then(|v| serde_json::from_value::<Uri>(v).ok());
        match (params.command.as_str(), uri) {
            (runs::RUN_CASE, Some(uri)) => self.start_run(&uri, false).map(|()| None),
            (runs::RUN_ALL_CASES, Some(uri)) => self.start_run(&uri, true).map(|()| None),
            (runs::CANCEL_RUN, Some(uri)) => Ok(Some(Value::Bool(self.cancel_run(uri.as_str())))),
            (runs::SHOW_TRANSCRIPT, Some(uri)) => Ok(self.transcript(&uri)),
            (record::RECORD_CASE, Some(uri)) => self
                .start_record(&uri, params.work_done_progress_params.work_done_token)
                .map(|()| None),
            (c, _) if super::commands::COMMANDS.contains(&c) => {
                Err(Error::invalid_params(format!("`{c}` takes a document URI")))
            }
            (c, _) => Err(Error::invalid_params(format!("unknown command `{c}`"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_folders_are_added_once_removed_and_bounded() {
        let p = |s: &str| PathBuf::from(s);
        let mut roots = vec![p("/a"), p("/b")];
        assert_eq!(change_roots(&mut roots, &[p("/c"), p("/a")], &[p("/b")]), 0);
        assert_eq!(roots, [p("/a"), p("/c")]);
        let many: Vec<PathBuf> = (0..MAX_WORKSPACE_FOLDERS)
            .map(|i| p(&format!("/m{i}")))
            .collect();
        assert_eq!(change_roots(&mut roots, &many, &[]), 2);
        assert_eq!(roots.len(), MAX_WORKSPACE_FOLDERS);
    }

    #[test]
    fn a_superseded_version_is_never_checked() {
        let docs = Documents::new();
        let uri: Uri = "file:///ws/workflows/a/workflow.yaml".parse().unwrap();
        docs.open(uri.clone(), "states: {}\n", 1, None);
        let old = docs.snapshot(&uri).unwrap();
        assert_eq!(unless_superseded(&docs, &uri, &old, || 1), Some(1));
        let change = lsp::TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: "states: {a: {}}\n".into(),
        };
        assert_eq!(
            docs.change(&uri, &[change], 2, PositionEncoding::Utf16),
            Some(true)
        );
        let mut ran = false;
        assert_eq!(
            unless_superseded(&docs, &uri, &old, || {
                ran = true;
            }),
            None
        );
        assert!(!ran, "a superseded version was checked");
        let new = docs.snapshot(&uri).unwrap();
        assert_eq!(unless_superseded(&docs, &uri, &new, || 2), Some(2));
    }

    #[test]
    fn a_panicking_handler_becomes_an_internal_error() {
        let r: Result<u32> = guard("test", || panic!("boom"));
        assert_eq!(r.unwrap_err().code, ErrorCode::InternalError);
        assert_eq!(guard("test", || 7).unwrap(), 7);
    }

    #[test]
    fn files_inside_a_workflow_folder_belong_to_it() {
        let d = containing_workflow_dir("ws/workflows/a/hooks/x.js").unwrap();
        assert_eq!((d.root.as_str(), d.slug.as_str()), ("ws", "a"));
        let f = containing_workflow_dir("workflows/a/tests/fixtures/o.json").unwrap();
        assert_eq!((f.root.as_str(), f.slug.as_str()), ("", "a"));
        assert_eq!(
            containing_workflow_dir("ws/workflows/a/workflow.yaml"),
            Some(d)
        );
        assert_eq!(containing_workflow_dir("ws/workflows/a"), None);
        assert_eq!(containing_workflow_dir("ws/skills/s/SKILL.md"), None);
    }

    #[test]
    fn related_workflow_dirs_come_from_the_path() {
        let d = workflow_dir("ws/workflows/a/tests/x.test.yaml").unwrap();
        assert_eq!((d.root.as_str(), d.slug.as_str()), ("ws", "a"));
        assert_eq!(workflow_dir("ws/workflows/a/workflow.yaml"), Some(d));
        assert_eq!(workflow_dir("ws/other.yaml"), None);
    }
}
