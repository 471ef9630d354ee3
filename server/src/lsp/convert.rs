//! Every conversion between wfx's byte offsets / plain IDE data and LSP types, in one file
//! (rust-analyzer's `to_proto`/`from_proto` in one). Positions go through
//! [`LineIndex`] with the session's negotiated [`PositionEncoding`]; nothing else in the
//! server builds an LSP `Position`. Out-of-range positions clamp (the line index clamps a
//! column to its line's end and a line to the text's end), they never fail.

use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types as lsp;
use wfx_schemas::diagnostics::{Diagnostic, Fix, Severity, TextEdit};
use wfx_schemas::text::{LineIndex, Position, PositionEncoding, TextRange};

use crate::cli::render::code_doc_url;
use crate::ide;

/// `PositionEncodingKind` for an encoding.
pub fn encoding_kind(enc: PositionEncoding) -> lsp::PositionEncodingKind {
    match enc {
        PositionEncoding::Utf8 => lsp::PositionEncodingKind::UTF8,
        PositionEncoding::Utf16 => lsp::PositionEncodingKind::UTF16,
        PositionEncoding::Utf32 => lsp::PositionEncodingKind::UTF32,
    }
}

/// Picks the encoding from the client's `general.positionEncodings`: UTF-8 if offered,
/// then UTF-32, otherwise UTF-16 (also when the client says nothing).
pub fn negotiate_encoding(caps: &lsp::ClientCapabilities) -> PositionEncoding {
    let offered = caps
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref());
    let has = |k: &lsp::PositionEncodingKind| offered.is_some_and(|v| v.contains(k));
    if has(&lsp::PositionEncodingKind::UTF8) {
        PositionEncoding::Utf8
    } else if has(&lsp::PositionEncodingKind::UTF32) {
        PositionEncoding::Utf32
    } else {
        PositionEncoding::Utf16
    }
}

/// Byte offset → LSP position.
pub fn position(index: &LineIndex, offset: u32, enc: PositionEncoding) -> lsp::Position {
    let p = index.position(offset, enc);
    lsp::Position {
        line: p.line,
        character: p.character,
    }
}

/// LSP position → byte offset (clamped into the text, onto a char boundary).
pub fn offset(index: &LineIndex, pos: lsp::Position, enc: PositionEncoding) -> u32 {
    index.offset(
        Position {
            line: pos.line,
            character: pos.character,
        },
        enc,
    )
}

/// Byte range → LSP range.
pub fn range(index: &LineIndex, r: TextRange, enc: PositionEncoding) -> lsp::Range {
    lsp::Range {
        start: position(index, r.start, enc),
        end: position(index, r.end, enc),
    }
}

/// LSP range → byte range (a reversed range is ordered).
pub fn text_range(index: &LineIndex, r: lsp::Range, enc: PositionEncoding) -> TextRange {
    let a = offset(index, r.start, enc);
    let b = offset(index, r.end, enc);
    TextRange::new(a.min(b), a.max(b))
}

/// LSP severity.
pub fn severity(s: Severity) -> lsp::DiagnosticSeverity {
    match s {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Information => lsp::DiagnosticSeverity::INFORMATION,
        Severity::Hint => lsp::DiagnosticSeverity::HINT,
    }
}

fn core_severity(s: Option<lsp::DiagnosticSeverity>) -> Severity {
    match s {
        Some(lsp::DiagnosticSeverity::WARNING) => Severity::Warning,
        Some(lsp::DiagnosticSeverity::INFORMATION) => Severity::Information,
        Some(lsp::DiagnosticSeverity::HINT) => Severity::Hint,
        _ => Severity::Error,
    }
}

/// One edit of a fix as carried in `Diagnostic.data`: byte offsets into the text of
/// `version` of the file named.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditData {
    /// Workspace-relative path.
    pub file: String,
    /// First byte replaced.
    pub start: u32,
    /// One past the last byte replaced.
    pub end: u32,
    /// Replacement.
    pub new_text: String,
}

/// A fix as carried in `Diagnostic.data`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixData {
    /// Title.
    pub title: String,
    /// Edits.
    pub edits: Vec<EditData>,
}

/// What the server stores in `Diagnostic.data`: the document version the offsets refer
/// to, the workspace-relative path of the document and the fixes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticData {
    /// Document version of the checked text.
    pub version: i32,
    /// Workspace-relative path of the document.
    pub file: String,
    /// Byte range of the diagnostic in that version.
    pub start: u32,
    /// End of that range.
    pub end: u32,
    /// Quick fixes.
    pub fixes: Vec<FixData>,
}

impl DiagnosticData {
    /// The fixes as core data.
    pub fn core_fixes(&self) -> Vec<Fix> {
        self.fixes
            .iter()
            .map(|f| Fix {
                title: f.title.clone(),
                edits: f
                    .edits
                    .iter()
                    .map(|e| TextEdit {
                        file: e.file.clone(),
                        range: TextRange::new(e.start, e.end),
                        new_text: e.new_text.clone(),
                    })
                    .collect(),
            })
            .collect()
    }
}

/// Reads `Diagnostic.data` back; `None` for diagnostics of other sources or older shapes.
pub fn diagnostic_data(d: &lsp::Diagnostic) -> Option<DiagnosticData> {
    serde_json::from_value(d.data.clone()?).ok()
}

/// Resolves a related site (another file's path and byte range) to an LSP location.
pub type Locate<'a> = dyn Fn(&str, TextRange) -> Option<lsp::Location> + 'a;

/// Core diagnostic → LSP diagnostic: code, `source: wfx`, `codeDescription` (the docs
/// anchor), related information when `related_support` (else folded into the message as
/// `(file:line:col: message)`), and the fixes in `data`.
pub fn diagnostic(
    d: &Diagnostic,
    index: &LineIndex,
    enc: PositionEncoding,
    version: i32,
    related_support: bool,
    locate: &Locate<'_>,
) -> lsp::Diagnostic {
    let mut message = d.message.clone();
    let mut related = Vec::new();
    for r in &d.related {
        match locate(&r.file, r.range) {
            Some(location) if related_support => related.push(lsp::DiagnosticRelatedInformation {
                location,
                message: r.message.clone(),
            }),
            Some(location) => {
                let p = location.range.start;
                message.push_str(&format!(
                    "\n{}:{}:{}: {}",
                    r.file,
                    p.line + 1,
                    p.character + 1,
                    r.message
                ));
            }
            None => message.push_str(&format!("\n{}: {}", r.file, r.message)),
        }
    }
    let data = DiagnosticData {
        version,
        file: d.file.clone(),
        start: d.range.start,
        end: d.range.end,
        fixes: d
            .fixes
            .iter()
            .map(|f| FixData {
                title: f.title.clone(),
                edits: f
                    .edits
                    .iter()
                    .map(|e| EditData {
                        file: e.file.clone(),
                        start: e.range.start,
                        end: e.range.end,
                        new_text: e.new_text.clone(),
                    })
                    .collect(),
            })
            .collect(),
    };
    lsp::Diagnostic {
        range: range(index, d.range, enc),
        severity: Some(severity(d.severity)),
        code: Some(lsp::NumberOrString::String(d.code.code.to_owned())),
        code_description: code_doc_url(d.code.code)
            .parse()
            .ok()
            .map(|href| lsp::CodeDescription { href }),
        source: Some("wfx".to_owned()),
        message,
        related_information: if related_support && !related.is_empty() {
            Some(related)
        } else {
            None
        },
        tags: None,
        data: serde_json::to_value(&data).ok(),
    }
}

/// LSP diagnostic (sent back in a code-action context) → core diagnostic of `file`, for
/// [`ide::code_actions`]. `None` for other sources' diagnostics and unknown codes.
pub fn core_diagnostic(
    d: &lsp::Diagnostic,
    file: &str,
    index: &LineIndex,
    enc: PositionEncoding,
    version: i32,
) -> Option<Diagnostic> {
    if d.source.as_deref() != Some("wfx") {
        return None;
    }
    let code = match &d.code {
        Some(lsp::NumberOrString::String(s)) => wfx_schemas::diagnostics::code_by_name(s)?,
        _ => return None,
    };
    let data = diagnostic_data(d).filter(|x| x.version == version);
    let range = match &data {
        Some(x) => TextRange::new(x.start, x.end),
        None => text_range(index, d.range, enc),
    };
    let mut core = Diagnostic::new(code, file, range, d.message.clone());
    core.severity = core_severity(d.severity);
    core.fixes = data.map(|x| x.core_fixes()).unwrap_or_default();
    Some(core)
}

/// Removes snippet syntax: `${1:x}` → `x`, `$1`/`$0` → nothing, `\$` → `$`; for clients
/// without snippet support.
pub fn strip_snippet(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '$' => match chars.peek() {
                Some(d) if d.is_ascii_digit() => {
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                    }
                }
                Some('{') => {
                    chars.next();
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                    }
                    if chars.peek() == Some(&':') {
                        chars.next();
                    }
                    // Copy the placeholder up to its closing brace (nesting counted).
                    let mut depth = 1;
                    for n in chars.by_ref() {
                        match n {
                            '{' => depth += 1,
                            '}' => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        out.push(n);
                    }
                }
                _ => out.push('$'),
            },
            c => out.push(c),
        }
    }
    out
}

fn completion_kind(k: ide::CompletionKind) -> lsp::CompletionItemKind {
    use ide::CompletionKind as K;
    match k {
        K::Key => lsp::CompletionItemKind::PROPERTY,
        K::State => lsp::CompletionItemKind::ENUM_MEMBER,
        K::Trigger => lsp::CompletionItemKind::EVENT,
        K::Value => lsp::CompletionItemKind::VALUE,
        K::Tool => lsp::CompletionItemKind::FUNCTION,
        K::Variable => lsp::CompletionItemKind::VARIABLE,
        K::File => lsp::CompletionItemKind::FILE,
        K::Workflow => lsp::CompletionItemKind::MODULE,
        K::Skill => lsp::CompletionItemKind::MODULE,
    }
}

/// IDE completion item → LSP item; snippets are stripped when the client lacks support.
pub fn completion_item(
    item: &ide::CompletionItem,
    index: &LineIndex,
    enc: PositionEncoding,
    snippets: bool,
) -> lsp::CompletionItem {
    let snippet = item.is_snippet && snippets;
    let new_text = if item.is_snippet && !snippets {
        strip_snippet(&item.insert_text)
    } else {
        item.insert_text.clone()
    };
    lsp::CompletionItem {
        label: item.label.clone(),
        kind: Some(completion_kind(item.kind)),
        detail: item.detail.clone(),
        documentation: item.documentation.as_ref().map(|m| {
            lsp::Documentation::MarkupContent(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: m.clone(),
            })
        }),
        sort_text: Some(item.sort_text.clone()),
        insert_text_format: Some(if snippet {
            lsp::InsertTextFormat::SNIPPET
        } else {
            lsp::InsertTextFormat::PLAIN_TEXT
        }),
        text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit {
            range: range(index, item.replace, enc),
            new_text,
        })),
        ..Default::default()
    }
}

/// IDE hover → LSP hover (markdown).
pub fn hover(h: &ide::Hover, index: &LineIndex, enc: PositionEncoding) -> lsp::Hover {
    lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: h.markdown.clone(),
        }),
        range: Some(range(index, h.range, enc)),
    }
}

/// IDE inlay hint → LSP inlay hint.
pub fn inlay_hint(h: &ide::InlayHint, index: &LineIndex, enc: PositionEncoding) -> lsp::InlayHint {
    lsp::InlayHint {
        position: position(index, h.offset, enc),
        label: lsp::InlayHintLabel::String(h.label.clone()),
        kind: None,
        text_edits: None,
        tooltip: h.tooltip.clone().map(lsp::InlayHintTooltip::String),
        padding_left: Some(true),
        padding_right: None,
        data: None,
    }
}

/// IDE symbol tree → LSP document symbols (a node with children is a `STRUCT`, a leaf a
/// `FIELD`).
#[allow(deprecated, reason = "DocumentSymbol.deprecated must still be filled")]
pub fn document_symbol(
    s: &ide::Symbol,
    index: &LineIndex,
    enc: PositionEncoding,
) -> lsp::DocumentSymbol {
    let children: Vec<lsp::DocumentSymbol> = s
        .children
        .iter()
        .map(|c| document_symbol(c, index, enc))
        .collect();
    let sel = TextRange::new(
        s.selection.start.max(s.range.start),
        s.selection.end.min(s.range.end.max(s.selection.start)),
    );
    lsp::DocumentSymbol {
        name: if s.name.is_empty() {
            "(empty)".to_owned()
        } else {
            s.name.clone()
        },
        detail: s.detail.clone(),
        kind: if children.is_empty() {
            lsp::SymbolKind::FIELD
        } else {
            lsp::SymbolKind::STRUCT
        },
        tags: None,
        deprecated: None,
        range: range(index, s.range, enc),
        selection_range: range(index, sel, enc),
        children: if children.is_empty() {
            None
        } else {
            Some(children)
        },
    }
}

/// Flattens a symbol tree into `SymbolInformation` (for flat clients and workspace
/// symbols); `container` is the parent's name.
#[allow(
    deprecated,
    reason = "SymbolInformation.deprecated must still be filled"
)]
pub fn flat_symbols(
    symbols: &[ide::Symbol],
    uri: &lsp::Uri,
    index: &LineIndex,
    enc: PositionEncoding,
    container: Option<&str>,
    out: &mut Vec<lsp::SymbolInformation>,
) {
    for s in symbols {
        out.push(lsp::SymbolInformation {
            name: s.name.clone(),
            kind: if s.children.is_empty() {
                lsp::SymbolKind::FIELD
            } else {
                lsp::SymbolKind::STRUCT
            },
            tags: None,
            deprecated: None,
            location: lsp::Location {
                uri: uri.clone(),
                range: range(index, s.range, enc),
            },
            container_name: container.map(str::to_owned),
        });
        flat_symbols(&s.children, uri, index, enc, Some(&s.name), out);
    }
}

/// Byte ranges of multi-line nodes → folding ranges (one-line ranges are dropped; the
/// fold ends on the range's last line, or the line before when the range ends at a line
/// start).
pub fn folding_ranges(ranges: &[TextRange], index: &LineIndex) -> Vec<lsp::FoldingRange> {
    let mut out: Vec<lsp::FoldingRange> = ranges
        .iter()
        .filter_map(|r| {
            let start_line = index.line_of(r.start);
            let mut end_line = index.line_of(r.end);
            if end_line > start_line && index.line_start(end_line) == r.end {
                end_line -= 1;
            }
            (end_line > start_line).then_some(lsp::FoldingRange {
                start_line,
                start_character: None,
                end_line,
                end_character: None,
                kind: None,
                collapsed_text: None,
            })
        })
        .collect();
    out.sort_by_key(|f| (f.start_line, f.end_line));
    out.dedup_by_key(|f| (f.start_line, f.end_line));
    out
}

/// The only semantic token type we emit: `regexp` (index 0 of the legend).
pub fn semantic_legend() -> lsp::SemanticTokensLegend {
    lsp::SemanticTokensLegend {
        token_types: vec![lsp::SemanticTokenType::REGEXP],
        token_modifiers: Vec::new(),
    }
}

/// Encodes token ranges as LSP's relative 5-tuples, in the negotiated encoding. A range
/// spanning lines is split per line; overlapping or unsorted input is sorted and the
/// overlap dropped.
pub fn semantic_tokens(
    ranges: &[TextRange],
    index: &LineIndex,
    enc: PositionEncoding,
) -> Vec<lsp::SemanticToken> {
    let mut pieces: Vec<(u32, u32, u32)> = Vec::new(); // (line, start col, length)
    let mut sorted = ranges.to_vec();
    sorted.sort();
    for r in sorted {
        let (l0, l1) = (index.line_of(r.start), index.line_of(r.end));
        for line in l0..=l1 {
            let a = if line == l0 {
                r.start
            } else {
                index.line_start(line)
            };
            let b = if line == l1 {
                r.end
            } else {
                index.line_end(line)
            };
            let (pa, pb) = (index.position(a, enc), index.position(b, enc));
            if pb.character > pa.character {
                pieces.push((line, pa.character, pb.character - pa.character));
            }
        }
    }
    let mut out = Vec::with_capacity(pieces.len());
    let (mut prev_line, mut prev_start, mut prev_end) = (0u32, 0u32, 0u32);
    for (line, start, len) in pieces {
        if line == prev_line && start < prev_end && !out.is_empty() {
            continue;
        }
        let delta_line = line - prev_line;
        let delta_start = if delta_line == 0 {
            start - prev_start
        } else {
            start
        };
        out.push(lsp::SemanticToken {
            delta_line,
            delta_start,
            length: len,
            token_type: 0,
            token_modifiers_bitset: 0,
        });
        prev_line = line;
        prev_start = start;
        prev_end = start + len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_strip_to_plain_text() {
        assert_eq!(strip_snippet("send: ${1:hello}$0"), "send: hello");
        assert_eq!(strip_snippet("a: $1\nb: ${2}"), "a: \nb: ");
        assert_eq!(strip_snippet("cost: \\$5 and ${1:{x}}"), "cost: $5 and {x}");
        assert_eq!(strip_snippet("plain $"), "plain $");
    }

    #[test]
    fn positions_follow_the_encoding_and_clamp() {
        let text = "a: 😀x\nb\n";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap() as u32;
        assert_eq!(
            position(&idx, x, PositionEncoding::Utf16),
            lsp::Position {
                line: 0,
                character: 5
            }
        );
        assert_eq!(
            position(&idx, x, PositionEncoding::Utf8),
            lsp::Position {
                line: 0,
                character: 7
            }
        );
        assert_eq!(
            position(&idx, x, PositionEncoding::Utf32),
            lsp::Position {
                line: 0,
                character: 4
            }
        );
        assert_eq!(
            offset(
                &idx,
                lsp::Position {
                    line: 0,
                    character: 99
                },
                PositionEncoding::Utf16
            ),
            8
        );
        assert_eq!(
            offset(
                &idx,
                lsp::Position {
                    line: 99,
                    character: 0
                },
                PositionEncoding::Utf16
            ),
            text.len() as u32
        );
        // Inside the surrogate pair clamps to the emoji's start.
        assert_eq!(
            offset(
                &idx,
                lsp::Position {
                    line: 0,
                    character: 4
                },
                PositionEncoding::Utf16
            ),
            3
        );
    }

    #[test]
    fn semantic_tokens_are_relative_and_split_per_line() {
        let text = "a: /x/\nb: /yy/i\n";
        let idx = LineIndex::new(text);
        let toks = semantic_tokens(
            &[TextRange::new(10, 15), TextRange::new(3, 6)],
            &idx,
            PositionEncoding::Utf16,
        );
        let flat: Vec<(u32, u32, u32)> = toks
            .iter()
            .map(|t| (t.delta_line, t.delta_start, t.length))
            .collect();
        assert_eq!(flat, vec![(0, 3, 3), (1, 3, 5)]);
    }

    #[test]
    fn encoding_negotiation_prefers_utf8_then_utf32() {
        let caps = |kinds: Vec<lsp::PositionEncodingKind>| lsp::ClientCapabilities {
            general: Some(lsp::GeneralClientCapabilities {
                position_encodings: Some(kinds),
                ..Default::default()
            }),
            ..Default::default()
        };
        use lsp::PositionEncodingKind as K;
        assert_eq!(
            negotiate_encoding(&caps(vec![K::UTF16, K::UTF8])),
            PositionEncoding::Utf8
        );
        assert_eq!(
            negotiate_encoding(&caps(vec![K::UTF16, K::UTF32])),
            PositionEncoding::Utf32
        );
        assert_eq!(
            negotiate_encoding(&caps(vec![K::UTF16])),
            PositionEncoding::Utf16
        );
        assert_eq!(
            negotiate_encoding(&lsp::ClientCapabilities::default()),
            PositionEncoding::Utf16
        );
    }
}
