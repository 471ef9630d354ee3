//! IDE features as pure functions: analysis and a byte offset in, plain data out. No LSP
//! types here (a tidy test greps for them); `lsp/` converts. Every function reads other
//! files through `FileAccess`, so unsaved buffers (the server's overlay) are seen.
//!
//! A request gets a [`Doc`]: the buffer with its parse (the server parses each version
//! once and shares the tree between diagnostics and requests) and the server's
//! `WorkflowCache` (so `workflow.yaml` is parsed once per distinct text, not per
//! keystroke). Positions come from the tree when the text parses and from the line-based `context` when it does not, so
//! completion and key hover keep working in a broken document. Offsets are bytes.

mod actions;
mod analysis;
mod authoring;
pub mod cassette;
mod completion;
mod context;
pub mod coverage;
mod hover;
mod markdown;
mod navigation;
mod symbols;
#[cfg(test)]
mod tests;

pub use authoring::{AuthoringEdit, SessionInfo, fill_from_session, new_case, sessions_for_case};

use wfx_schemas::check::WorkflowCache;
use wfx_schemas::diagnostics::{Diagnostic, TextEdit};
use wfx_schemas::files::FileAccess;
use wfx_schemas::text::TextRange;
use wfx_schemas::yaml::Parsed;

/// The document an IDE request is about, with what the caller already holds for it.
#[derive(Clone, Copy)]
pub struct Doc<'a> {
    /// Every file of the workspace, open buffers first (workspace-relative paths).
    pub fs: &'a dyn FileAccess,
    /// The document's workspace-relative path.
    pub path: &'a str,
    /// The buffer.
    pub text: &'a str,
    /// `wfx_schemas::yaml::parse(text)`.
    pub parsed: &'a Parsed,
    /// Loaded `workflow.yaml` files, reused while their text is unchanged.
    pub workflows: &'a WorkflowCache,
}

/// What kind of item a completion is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    /// A mapping key (top-level key, step key, nested key).
    Key,
    /// A state slug.
    State,
    /// A trigger id.
    Trigger,
    /// An enum value (`decision`, `ok`, …).
    Value,
    /// A tool name.
    Tool,
    /// A variable name.
    Variable,
    /// A file path.
    File,
    /// A workflow slug.
    Workflow,
    /// A skill slug.
    Skill,
}

/// A completion item.
#[derive(Clone, Debug, PartialEq)]
pub struct CompletionItem {
    /// Shown label.
    pub label: String,
    /// Kind.
    pub kind: CompletionKind,
    /// Short detail (e.g. the entry state of a trigger).
    pub detail: Option<String>,
    /// Markdown documentation.
    pub documentation: Option<String>,
    /// Inserted text; a snippet (`$1`, `${2:x}`) when `is_snippet`.
    pub insert_text: String,
    /// True when `insert_text` is an LSP snippet.
    pub is_snippet: bool,
    /// The range the insertion replaces (the partial word under the cursor).
    pub replace: TextRange,
    /// Sort key (items are presented in this order).
    pub sort_text: String,
}

/// Hover content.
#[derive(Clone, Debug, PartialEq)]
pub struct Hover {
    /// The hovered token's range.
    pub range: TextRange,
    /// Markdown.
    pub markdown: String,
}

/// A place in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// Workspace-relative path.
    pub file: String,
    /// Byte range in that file.
    pub range: TextRange,
}

/// An inlay hint.
#[derive(Clone, Debug, PartialEq)]
pub struct InlayHint {
    /// Byte offset the hint sits at.
    pub offset: u32,
    /// Label (e.g. `34/60`).
    pub label: String,
    /// Optional tooltip.
    pub tooltip: Option<String>,
}

/// A document symbol (nested).
#[derive(Clone, Debug, PartialEq)]
pub struct Symbol {
    /// Name.
    pub name: String,
    /// Detail.
    pub detail: Option<String>,
    /// Whole range.
    pub range: TextRange,
    /// Range of the name.
    pub selection: TextRange,
    /// Children.
    pub children: Vec<Symbol>,
}

/// A code action: a title and edits (possibly in several files).
#[derive(Clone, Debug, PartialEq)]
pub struct CodeAction {
    /// Title.
    pub title: String,
    /// Edits to apply.
    pub edits: Vec<TextEdit>,
    /// True when this is the preferred quick fix.
    pub preferred: bool,
    /// The code of the diagnostic it fixes, if any.
    pub fixes_code: Option<String>,
}

/// What a workspace symbol is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkspaceSymbolKind {
    /// A state of a workflow.
    State,
    /// A trigger declared by a state.
    Trigger,
    /// A case file (named by its case id).
    Case,
}

/// A workspace symbol.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkspaceSymbol {
    /// State slug, trigger id or case id.
    pub name: String,
    /// What it is.
    pub kind: WorkspaceSymbolKind,
    /// The workflow slug (for a trigger, `<workflow>/<state>`).
    pub container: Option<String>,
    /// Where it is declared (a case: its `title` value, or the file start).
    pub location: Location,
}

/// Completion items at byte `offset` in `text` (the buffer of `path`): keys not yet present
/// (docs and snippets from `wfx_schemas::docs`), then values for the position — trigger ids
/// (with entry state and description), state slugs (title, summary), `decide.to` edges,
/// enum values, workflow and skill slugs, tool and variable names, fixture and hook files
/// (FORMAT §A, §B). Works on broken text. Empty for files that are neither a case nor a
/// `workflow.yaml`.
pub fn completion(doc: &Doc<'_>, offset: u32) -> Vec<CompletionItem> {
    // The near-miss budget `check` gives a file (bounded work, docs/security.md).
    let _budget = wfx_schemas::rules::case::SuggestBudget::arm();
    analysis::Analysis::new(doc)
        .map(|an| completion::complete(&an, offset))
        .unwrap_or_default()
}

/// Hover at byte `offset`: a key's doc (what it does, accepted forms, role, whether a
/// failure halts the case, FORMAT section), a state card (title, summary, type, triggers,
/// edges), a trigger card (entry state, session path, requires/returns) or a regex card;
/// on a cassette, the recording's card ([`cassette::hover`]).
pub fn hover(doc: &Doc<'_>, offset: u32) -> Option<Hover> {
    if wfx_schemas::cassette::is_cassette_name(doc.path) {
        return cassette::hover(doc, offset);
    }
    hover::hover(&analysis::Analysis::new(doc)?, offset)
}

/// Declaration(s) of the symbol at byte `offset`: a state slug or trigger id → its key in
/// `workflow.yaml`; `from:` → the fixture under `tests/`; a hook `script:` → the script;
/// `ranWorkflow.workflow` → that workflow's `workflow.yaml` (files at range `0..0`).
pub fn goto_definition(doc: &Doc<'_>, offset: u32) -> Vec<Location> {
    analysis::Analysis::for_navigation(doc)
        .map(|an| navigation::definition(&an, offset))
        .unwrap_or_default()
}

/// References of the state, trigger or tool at `offset`, across `workflow.yaml`, its cases
/// and its agent scripts (an agent script names a state as an `archmax_advance` target and
/// a tool as a `call`; documents that do not parse are skipped). Ranges exclude quotes.
/// A tool has no declaration: its references are every place that names it.
pub fn references(doc: &Doc<'_>, offset: u32, include_declaration: bool) -> Vec<Location> {
    analysis::Analysis::for_navigation(doc)
        .map(|an| navigation::references(&an, offset, include_declaration))
        .unwrap_or_default()
}

/// The range that a rename at `offset` would change (the slug or id, without quotes), or
/// why it cannot be renamed: not a state or trigger, not declared in `workflow.yaml`, the
/// reserved `manual`, a tool (declared by the host), or a document that does not parse.
/// Works from an agent script too.
pub fn prepare_rename(doc: &Doc<'_>, offset: u32) -> Result<TextRange, String> {
    let an = analysis::Analysis::for_navigation(doc).ok_or("nothing to rename here")?;
    navigation::prepare(&an, offset).map(|(_, r)| r)
}

/// Edits renaming the state or trigger at `offset` to `new_name`, in `workflow.yaml`,
/// every case and every agent script of the workflow (`archmax_advance` targets), and for a
/// state every cassette of the workflow (interaction `state`s, recorded `archmax_advance`
/// targets and their results; never recorded prompts, see [`cassette`]), sorted by (file,
/// offset). Errors: what [`prepare_rename`] refuses, a new state name that is not a slug
/// (FORMAT §A.3) or an empty trigger id, a name already declared, a document of the
/// workflow that does not parse, or a cassette that is not valid or over 16 MiB.
pub fn rename(doc: &Doc<'_>, offset: u32, new_name: &str) -> Result<Vec<TextEdit>, String> {
    let an = analysis::Analysis::for_navigation(doc).ok_or("nothing to rename here")?;
    navigation::rename(&an, offset, new_name)
}

/// Inlay hints within `range` (bytes): after a case's `title` and `description` the
/// collapsed length against its budget (`34/60`, UTF-16 code units, FORMAT §B.1); after a
/// `decide.to` the edge type when the decided state is known.
pub fn inlay_hints(doc: &Doc<'_>, range: TextRange) -> Vec<InlayHint> {
    analysis::Analysis::new(doc)
        .map(|an| symbols::inlay_hints(&an, range))
        .unwrap_or_default()
}

/// Document symbols: for a case, its title then each action with the assertions that
/// evaluate against it nested under it; for `workflow.yaml`, each state with its triggers
/// and transitions. Empty when the text does not parse.
pub fn document_symbols(doc: &Doc<'_>) -> Vec<Symbol> {
    symbols::document_symbols(doc.path, doc.parsed)
}

/// The outline of a document (`textDocument/documentSymbol`): for a case, as
/// [`document_symbols`]; for `workflow.yaml`, every top-level key in document order (issue
/// 16), its scalar value as detail and the keys of a mapping value as children, except
/// `states`, whose children are the states of [`document_symbols`] (with their triggers and
/// transitions). Empty when the text does not parse.
pub fn outline(doc: &Doc<'_>) -> Vec<Symbol> {
    symbols::outline(doc.path, doc.parsed)
}

/// A document highlight: one occurrence in the current document of the symbol under the
/// cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Highlight {
    /// Byte range of the occurrence (without quotes).
    pub range: TextRange,
    /// True for the declaration (a state's key or a trigger's id under `states.<slug>.triggers`
    /// in `workflow.yaml`, FORMAT §A.2): an LSP `Write` highlight; uses are `Read`.
    pub write: bool,
}

/// Every occurrence in this document of the state, trigger or tool at byte `offset` (the
/// places [`references`] finds, restricted to this file), the declaration marked `write`.
/// Reads no other file. Empty when nothing is under the cursor or the text does not parse.
pub fn document_highlights(doc: &Doc<'_>, offset: u32) -> Vec<Highlight> {
    analysis::Analysis::for_navigation(doc)
        .map(|an| navigation::highlights(&an, offset))
        .unwrap_or_default()
}

/// Folding ranges (byte ranges of multi-line nodes, from the key); indentation blocks when
/// the text does not parse.
pub fn folding_ranges(doc: &Doc<'_>) -> Vec<TextRange> {
    symbols::folding_ranges(doc.text, doc.parsed)
}

/// Workspace symbols matching `query` (a case-insensitive subsequence): every state and
/// trigger of every workflow under `root`, and every case (by case id).
pub fn workspace_symbols(fs: &dyn FileAccess, root: &str, query: &str) -> Vec<WorkspaceSymbol> {
    symbols::workspace_symbols(fs, root, query)
}

/// Code actions for `range`, given the diagnostics the client sent back: each diagnostic
/// fix, then our own (near-miss key, unknown state/trigger → nearest declared, `- send:`
/// above orphan assertions, missing `title`/`description`, `tests: { judge: {} }` for a
/// `grade` without a judge). Edits are minimal and keep comments.
pub fn code_actions(
    doc: &Doc<'_>,
    range: TextRange,
    diagnostics: &[Diagnostic],
) -> Vec<CodeAction> {
    // The near-miss budget `check` gives a file: its near-miss searches (`nearest`) stop
    // there (bounded work, docs/security.md).
    let _budget = wfx_schemas::rules::case::SuggestBudget::arm();
    analysis::Analysis::new(doc)
        .map(|an| actions::code_actions(&an, range, diagnostics))
        .unwrap_or_default()
}

/// Ranges of `/…/flags` regex strings where a case reads regexes (reply tokens,
/// `raised.reason`, tool `input`, mock `whenInput`; FORMAT §B.2), for semantic tokens.
pub fn regex_tokens(doc: &Doc<'_>) -> Vec<TextRange> {
    symbols::regex_tokens(doc.path, doc.text, doc.parsed)
}
