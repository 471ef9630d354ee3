//! IDE features as pure functions: analysis and a byte offset in, plain data out. No LSP
//! types here (a tidy test greps for them); `lsp/` converts. Every function reads other
//! files through `FileAccess`, so unsaved buffers (the server's overlay) are seen.

use wfx_schemas::diagnostics::{Diagnostic, TextEdit};
use wfx_schemas::files::FileAccess;
use wfx_schemas::text::TextRange;

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

/// Completion items at `offset` in `text` (the buffer of `path`).
pub fn completion(_fs: &dyn FileAccess, _path: &str, _text: &str, _offset: u32) -> Vec<CompletionItem> {
    Vec::new()
}

/// Hover at `offset`.
pub fn hover(_fs: &dyn FileAccess, _path: &str, _text: &str, _offset: u32) -> Option<Hover> {
    None
}

/// Declaration(s) of the symbol at `offset`.
pub fn goto_definition(_fs: &dyn FileAccess, _path: &str, _text: &str, _offset: u32) -> Vec<Location> {
    Vec::new()
}

/// References of the state or trigger at `offset`, across `workflow.yaml` and its cases.
pub fn references(_fs: &dyn FileAccess, _path: &str, _text: &str, _offset: u32, _include_declaration: bool) -> Vec<Location> {
    Vec::new()
}

/// The range that a rename at `offset` would change, or why it cannot be renamed.
pub fn prepare_rename(_fs: &dyn FileAccess, _path: &str, _text: &str, _offset: u32) -> Result<TextRange, String> {
    Err("nothing to rename here".into())
}

/// Edits renaming the state or trigger at `offset` to `new_name`, in every file.
pub fn rename(_fs: &dyn FileAccess, _path: &str, _text: &str, _offset: u32, _new_name: &str) -> Result<Vec<TextEdit>, String> {
    Err("nothing to rename here".into())
}

/// Inlay hints within `range`.
pub fn inlay_hints(_fs: &dyn FileAccess, _path: &str, _text: &str, _range: TextRange) -> Vec<InlayHint> {
    Vec::new()
}

/// Document symbols.
pub fn document_symbols(_path: &str, _text: &str) -> Vec<Symbol> {
    Vec::new()
}

/// Folding ranges (byte ranges of multi-line nodes).
pub fn folding_ranges(_text: &str) -> Vec<TextRange> {
    Vec::new()
}

/// Code actions for `range`, given the diagnostics the client sent back.
pub fn code_actions(_fs: &dyn FileAccess, _path: &str, _text: &str, _range: TextRange, _diagnostics: &[Diagnostic]) -> Vec<CodeAction> {
    Vec::new()
}

/// Ranges of `/…/flags` regex strings, for semantic tokens.
pub fn regex_tokens(_path: &str, _text: &str) -> Vec<TextRange> {
    Vec::new()
}
