//! What the server announces and accepts: capabilities, the `wfx/runStatus` and `wfx/graph`
//! message shapes, workspace-folder changes and the file watchers.

#[allow(
    clippy::wildcard_imports,
    reason = "a part of the parent module, split off by topic"
)]
use super::*;

/// `wfx/runStatus` (docs/lsp-extensions.md): a server → client notification about a run
/// started by `wfx.runCase` or `wfx.runAllCases`, sent only to a client announcing
/// `experimental.wfxRunStatus`. One `begin`, one `case` after each case ran, then `end`
/// (after the annotations and `wfx/graph` paths are stored, so a refresh sees the run) or
/// `cancelled`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStatus {
    /// The URI the run was started for (its cancel key: `wfx.cancelRun [uri]`).
    pub uri: String,
    /// `begin`, `case`, `end` or `cancelled`.
    pub phase: String,
    /// Number of cases in the run.
    pub total: usize,
    /// Number of cases finished so far (an external runner reports them all at the end).
    pub done: usize,
    /// With `case`: the URI of the case that just finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    /// The URIs of every case in the run, in run order.
    pub cases: Vec<String>,
    /// With `end` and `cancelled`: the verdict counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<RunCounts>,
    /// With `end` and `cancelled`: the run's summary (`3 case(s) ran`, `cancelled`, or the
    /// runner's error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Verdict counts of a finished run (`notRun` also counts the cases that never produced a
/// verdict: cancelled before their turn, or lost to a runner error).
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunCounts {
    /// Cases whose verdict is `passed`.
    pub passed: usize,
    /// Cases whose verdict is `failed`.
    pub failed: usize,
    /// Cases whose verdict is `skipped`.
    pub skipped: usize,
    /// Cases with the `not-run` verdict (no agent, issue 15) or no verdict at all.
    pub not_run: usize,
}

/// The `wfx/runStatus` notification type.
pub enum RunStatusNotification {}

impl lsp::notification::Notification for RunStatusNotification {
    type Params = RunStatus;
    const METHOD: &'static str = "wfx/runStatus";
}

/// `wfx/graph` params: `{textDocument: {uri}}`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphParams {
    /// A `workflow.yaml` or case document.
    pub text_document: lsp::TextDocumentIdentifier,
}

pub(super) fn capabilities(enc: PositionEncoding) -> lsp::ServerCapabilities {
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
        document_highlight_provider: Some(lsp::OneOf::Left(true)),
        rename_provider: Some(lsp::OneOf::Right(lsp::RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        inlay_hint_provider: Some(lsp::OneOf::Left(true)),
        code_lens_provider: Some(lsp::CodeLensOptions {
            resolve_provider: Some(false),
        }),
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
        workspace: Some(lsp::WorkspaceServerCapabilities {
            workspace_folders: Some(lsp::WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(lsp::OneOf::Left(true)),
            }),
            file_operations: None,
        }),
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
        execute_command_provider: if crate::lsp::commands::COMMANDS.is_empty() {
            None
        } else {
            Some(lsp::ExecuteCommandOptions {
                commands: crate::lsp::commands::COMMANDS
                    .iter()
                    .map(|c| (*c).to_owned())
                    .collect(),
                ..Default::default()
            })
        },
        ..Default::default()
    }
}

/// The most workspace folders the server indexes (`initialize` and
/// `workspace/didChangeWorkspaceFolders` together); folders past it are refused with a
/// warning (`window/showMessage`) and not read (bounded work, docs/editors.md).
pub const MAX_WORKSPACE_FOLDERS: usize = 64;

/// Applies a `workspace/didChangeWorkspaceFolders` event to `roots` (absolute folders):
/// `removed` ones are dropped, `added` ones appended unless already present or past
/// [`MAX_WORKSPACE_FOLDERS`]. Returns how many added folders were refused for the bound.
pub fn change_roots(roots: &mut Vec<PathBuf>, added: &[PathBuf], removed: &[PathBuf]) -> usize {
    roots.retain(|r| !removed.contains(r));
    let mut refused = 0;
    for a in added {
        if roots.contains(a) {
            continue;
        }
        if roots.len() >= MAX_WORKSPACE_FOLDERS {
            refused += 1;
            continue;
        }
        roots.push(a.clone());
    }
    refused
}

/// Glob patterns registered for `workspace/didChangeWatchedFiles`: every file an open
/// document's diagnostics may read (workflows, cases, agent scripts, hook scripts, `from:`
/// fixtures under `tests/`, skills).
///
/// The folder patterns (`**/workflows`, `**/workflows/*`, `**/workflows/*/tests`) match the
/// folders themselves: a client reports a deleted or renamed folder as one event for the
/// folder, not one per file inside, so without them a deleted workflow's cases would keep
/// their diagnostics.
pub const WATCH_GLOBS: &[&str] = &[
    "**/workflows",
    "**/workflows/*",
    "**/workflows/*/tests",
    "**/workflows/*/workflow.yaml",
    "**/*.test.yaml",
    "**/*.test.yml",
    "**/*.agent.yaml",
    "**/workflows/*/hooks/**",
    "**/workflows/*/tests/**",
    "**/skills/*/SKILL.md",
];
