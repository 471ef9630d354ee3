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
//! Diagnostics are pushed for open documents only. At `initialized` the server indexes the
//! workspace (every `workflow.yaml` and case path, for workspace symbols) but publishes
//! nothing for closed files: cross-file rules read closed files lazily through the overlay,
//! and the whole-workspace view is `wfx-lsp check`'s job.

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
use super::settings::Settings;
use crate::disk::DiskFiles;
use crate::ide;

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
    /// Workspace files found at `initialized` (root, root-relative path), sorted.
    index: Arc<RwLock<Vec<(PathBuf, String)>>>,
    publish: Arc<tokio::sync::Mutex<()>>,
    shutdown: Arc<AtomicBool>,
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
        | FileKind::WorkflowMd(d) => Some(d),
        FileKind::Other => None,
    }
}

/// A document's analysis context: its snapshot, location, the overlay and the session.
struct Ctx {
    snap: Snapshot,
    loc: Located,
    fs: Overlay,
    s: Session,
}

impl Ctx {
    fn text(&self) -> &str {
        &self.snap.text
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

/// Diagnostics of one document, converted; a panic in the check yields one WFX901 at the
/// top of the file.
pub fn document_diagnostics(
    fs: &Overlay,
    loc: &Located,
    snap: &Snapshot,
    s: &Session,
) -> Vec<lsp::Diagnostic> {
    let core = std::panic::catch_unwind(AssertUnwindSafe(|| {
        wfx_schemas::check::check_text_cached(fs, &s.workflows, &loc.rel, &snap.text)
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
    });
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
        .collect()
}

impl Server {
    /// A server talking to `client`; `shutdown` is set when the client sends `shutdown`.
    pub fn new(client: Client, shutdown: Arc<AtomicBool>) -> Self {
        Self {
            client,
            docs: Arc::new(Documents::new()),
            session: Arc::new(RwLock::new(Session::default())),
            index: Arc::new(RwLock::new(Vec::new())),
            publish: Arc::new(tokio::sync::Mutex::new(())),
            shutdown,
        }
    }

    fn session(&self) -> Session {
        self.session
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn overlay(&self, root: &Path) -> Overlay {
        Overlay::new(root, self.docs.texts_under(root))
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
        let diags =
            tokio::task::spawn_blocking(move || document_diagnostics(&fs, &loc, &snap, &s)).await;
        let diags = match diags {
            Ok(d) => d,
            Err(e) => {
                tracing::error!("the diagnostics task failed: {e}");
                return;
            }
        };
        let _guard = self.publish.lock().await;
        if self.docs.version(uri) != Some(version) {
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

    /// Rechecks the other open documents of the same workflow folder as `loc`.
    async fn recheck_dependents(&self, uri: &Uri, loc: &Located) {
        let Some(dir) = workflow_dir(&loc.rel) else {
            return;
        };
        for (other, other_loc) in self.docs.all() {
            if &other == uri {
                continue;
            }
            if let Some(ol) = other_loc
                && ol.root == loc.root
                && workflow_dir(&ol.rel).as_ref() == Some(&dir)
            {
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

    /// Indexes every `workflow.yaml` and case of every workspace folder (for workspace
    /// symbols).
    async fn index_workspace(&self) {
        let roots = self.session().roots;
        let found = tokio::task::spawn_blocking(move || {
            let mut out = Vec::new();
            for root in roots {
                let fs = DiskFiles::new(&root);
                for wf in workspace::discover_workflows(&fs, "") {
                    out.push((root.clone(), wf.spec_path()));
                    for c in workspace::discover_cases(&fs, &wf) {
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
            .unwrap_or_else(std::sync::PoisonError::into_inner) = found;
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

fn capabilities(enc: PositionEncoding) -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        position_encoding: Some(convert::encoding_kind(enc)),
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                ..Default::default()
            },
        )),
        completion_provider: Some(lsp::CompletionOptions {
            trigger_characters: Some(vec![":".into(), " ".into(), "/".into()]),
            ..Default::default()
        }),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lsp::OneOf::Left(true)),
        references_provider: Some(lsp::OneOf::Left(true)),
        rename_provider: Some(lsp::OneOf::Right(lsp::RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        inlay_hint_provider: Some(lsp::OneOf::Left(true)),
        document_symbol_provider: Some(lsp::OneOf::Left(true)),
        workspace_symbol_provider: Some(lsp::OneOf::Left(true)),
        folding_range_provider: Some(lsp::FoldingRangeProviderCapability::Simple(true)),
        code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
            lsp::CodeActionOptions {
                code_action_kinds: Some(vec![
                    lsp::CodeActionKind::QUICKFIX,
                    lsp::CodeActionKind::REFACTOR_REWRITE,
                ]),
                ..Default::default()
            },
        )),
        semantic_tokens_provider: Some(
            lsp::SemanticTokensServerCapabilities::SemanticTokensOptions(
                lsp::SemanticTokensOptions {
                    legend: convert::semantic_legend(),
                    full: Some(lsp::SemanticTokensFullOptions::Bool(true)),
                    range: Some(false),
                    ..Default::default()
                },
            ),
        ),
        execute_command_provider: if super::commands::COMMANDS.is_empty() {
            None
        } else {
            Some(lsp::ExecuteCommandOptions {
                commands: super::commands::COMMANDS
                    .iter()
                    .map(|c| (*c).to_owned())
                    .collect(),
                ..Default::default()
            })
        },
        ..Default::default()
    }
}

/// Glob patterns registered for `workspace/didChangeWatchedFiles`.
pub const WATCH_GLOBS: &[&str] = &[
    "**/workflows/*/workflow.yaml",
    "**/*.test.yaml",
    "**/*.test.yml",
    "**/*.agent.yaml",
];

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
        self.index_workspace().await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.shutdown.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: lsp::DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let loc = paths::locate(&doc.uri, &self.session().roots);
        self.docs
            .open(doc.uri.clone(), &doc.text, doc.version, loc.clone());
        self.recheck(&doc.uri).await;
        if let Some(loc) = loc {
            self.recheck_dependents(&doc.uri, &loc).await;
        }
    }

    async fn did_change(&self, params: lsp::DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let enc = self.session().encoding;
        if !self.docs.change(
            &uri,
            &params.content_changes,
            params.text_document.version,
            enc,
        ) {
            tracing::warn!(
                "didChange for a document that is not open: {}",
                uri.as_str()
            );
            return;
        }
        self.recheck(&uri).await;
        if let Some(loc) = self.docs.snapshot(&uri).and_then(|s| s.located) {
            self.recheck_dependents(&uri, &loc).await;
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
        }
        // The buffer no longer shadows the disk: files that read it see the saved text.
        if let Some(loc) = closed.and_then(|d| d.snapshot().located) {
            self.recheck_dependents(&uri, &loc).await;
        }
    }

    async fn did_change_watched_files(&self, params: lsp::DidChangeWatchedFilesParams) {
        tracing::debug!("{} watched files changed", params.changes.len());
        self.index_workspace().await;
        self.recheck_all().await;
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
            ide::completion(&ctx.fs, &ctx.loc.rel, ctx.text(), at)
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
        guard("hover", || {
            let at = ctx.offset(p.position);
            ide::hover(&ctx.fs, &ctx.loc.rel, ctx.text(), at)
                .map(|h| convert::hover(&h, &ctx.snap.index, ctx.s.encoding))
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
            ide::goto_definition(&ctx.fs, &ctx.loc.rel, ctx.text(), at)
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
            ide::references(&ctx.fs, &ctx.loc.rel, ctx.text(), at, include)
                .iter()
                .filter_map(|l| ctx.location(l))
                .collect::<Vec<_>>()
        })?;
        Ok(Some(locs))
    }

    async fn prepare_rename(
        &self,
        params: lsp::TextDocumentPositionParams,
    ) -> Result<Option<lsp::PrepareRenameResponse>> {
        let Some(ctx) = self.ctx(&params.text_document.uri) else {
            return Ok(None);
        };
        let r = guard("prepareRename", || {
            ide::prepare_rename(
                &ctx.fs,
                &ctx.loc.rel,
                ctx.text(),
                ctx.offset(params.position),
            )
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
            ide::rename(
                &ctx.fs,
                &ctx.loc.rel,
                ctx.text(),
                ctx.offset(p.position),
                &params.new_name,
            )
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
        if !ctx.s.settings.inlay_hints_length_budget {
            return Ok(Some(Vec::new()));
        }
        let hints = guard("inlayHint", || {
            let range = convert::text_range(&ctx.snap.index, params.range, ctx.s.encoding);
            ide::inlay_hints(&ctx.fs, &ctx.loc.rel, ctx.text(), range)
                .iter()
                .map(|h| convert::inlay_hint(h, &ctx.snap.index, ctx.s.encoding))
                .collect::<Vec<_>>()
        })?;
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
            let symbols = ide::document_symbols(&ctx.loc.rel, ctx.text());
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
                &ide::folding_ranges(ctx.text()),
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
            let ranges = ide::regex_tokens(&ctx.loc.rel, ctx.text());
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
            for a in ide::code_actions(&ctx.fs, &ctx.loc.rel, ctx.text(), range, &core) {
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
            out
        })?;
        Ok(Some(actions))
    }

    async fn symbol(
        &self,
        params: lsp::WorkspaceSymbolParams,
    ) -> Result<Option<lsp::WorkspaceSymbolResponse>> {
        let query = params.query.to_lowercase();
        let mut files: Vec<(PathBuf, String)> = self
            .index
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        for (_, loc) in self.docs.all() {
            if let Some(loc) = loc
                && workspace::classify(&loc.rel) != FileKind::Other
            {
                files.push((loc.root, loc.rel));
            }
        }
        files.sort();
        files.dedup();
        let enc = self.session().encoding;
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
                    &ide::document_symbols(rel, &text),
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

    async fn execute_command(
        &self,
        params: lsp::ExecuteCommandParams,
    ) -> Result<Option<lsp::LSPAny>> {
        Err(Error::invalid_params(format!(
            "unknown command `{}`",
            params.command
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_handler_becomes_an_internal_error() {
        let r: Result<u32> = guard("test", || panic!("boom"));
        assert_eq!(r.unwrap_err().code, ErrorCode::InternalError);
        assert_eq!(guard("test", || 7).unwrap(), 7);
    }

    #[test]
    fn related_workflow_dirs_come_from_the_path() {
        let d = workflow_dir("ws/workflows/a/tests/x.test.yaml").unwrap();
        assert_eq!((d.root.as_str(), d.slug.as_str()), ("ws", "a"));
        assert_eq!(workflow_dir("ws/workflows/a/workflow.yaml"), Some(d));
        assert_eq!(workflow_dir("ws/other.yaml"), None);
    }
}
