//! Property: random incremental edits applied through the server's document store
//! (`Document::apply_changes`, positions in each encoding) end in the same text — and the
//! same published diagnostics — as opening the final text fresh.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code fails loudly"
)]

mod support;

use std::sync::OnceLock;

use proptest::prelude::*;
use tower_lsp_server::ls_types as lsp;
use wfx_lsp::lsp::document::{Document, Located};
use wfx_lsp::lsp::overlay::Overlay;
use wfx_lsp::lsp::server::{Session, document_diagnostics};
use wfx_schemas::text::{LineIndex, PositionEncoding};

const REL: &str = "workflows/order-lookup/tests/prop.test.yaml";
const START: &str = "title: Edits\ndescription: Random edits → 注文 😀.\nsteps:\n  - send: \"hi\"\r\n  - reply:\n      includes: [\"/a/i\"]\n";

fn workspace() -> &'static tempfile::TempDir {
    static WS: OnceLock<tempfile::TempDir> = OnceLock::new();
    WS.get_or_init(support::corpus_copy)
}

/// One edit: where (as fractions of the current text), how much to delete, what to insert.
#[derive(Clone, Debug)]
struct Edit {
    at: f64,
    delete: usize,
    insert: String,
}

fn edit() -> impl Strategy<Value = Edit> {
    let piece = prop::sample::select(vec![
        "", "a", "send", ":", " ", "\n", "\r\n", "  - ", "→", "😀", "注", "[", "\"", "-",
    ]);
    (0.0..=1.0f64, 0usize..6, prop::collection::vec(piece, 0..4)).prop_map(|(at, delete, parts)| {
        Edit {
            at,
            delete,
            insert: parts.concat(),
        }
    })
}

fn encoding() -> impl Strategy<Value = PositionEncoding> {
    prop::sample::select(vec![
        PositionEncoding::Utf8,
        PositionEncoding::Utf16,
        PositionEncoding::Utf32,
    ])
}

/// A char-boundary offset near `frac` of `text`, never between `\r` and `\n`.
fn offset_at(text: &str, frac: f64) -> usize {
    let mut o = ((text.len() as f64) * frac) as usize;
    while o > 0 && !text.is_char_boundary(o) {
        o -= 1;
    }
    if o > 0 && text.as_bytes()[o - 1] == b'\r' && text.as_bytes().get(o) == Some(&b'\n') {
        o -= 1;
    }
    o
}

/// The offset `chars` characters after `start`, extended past the `\n` of a split `\r\n`.
fn end_at(text: &str, start: usize, chars: usize) -> usize {
    let mut end = text[start..]
        .char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| start + i);
    if end > 0 && text.as_bytes()[end - 1] == b'\r' && text.as_bytes().get(end) == Some(&b'\n') {
        end += 1;
    }
    end
}

fn lsp_pos(idx: &LineIndex, o: usize, enc: PositionEncoding) -> lsp::Position {
    let p = idx.position(o as u32, enc);
    lsp::Position {
        line: p.line,
        character: p.character,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn incremental_edits_match_a_fresh_open(batches in prop::collection::vec((prop::collection::vec(edit(), 1..4), encoding()), 1..12)) {
        let mut doc = Document::new(START, 1, None);
        let mut reference = START.to_owned();
        let mut version = 1;
        for (edits, enc) in &batches {
            // One didChange with several content changes, each relative to the previous.
            let mut changes = Vec::new();
            for e in edits {
                let idx = LineIndex::new(&reference);
                let start = offset_at(&reference, e.at);
                let end = end_at(&reference, start, e.delete);
                changes.push(lsp::TextDocumentContentChangeEvent {
                    range: Some(lsp::Range { start: lsp_pos(&idx, start, *enc), end: lsp_pos(&idx, end, *enc) }),
                    range_length: None,
                    text: e.insert.clone(),
                });
                reference.replace_range(start..end, &e.insert);
            }
            version += 1;
            doc.apply_changes(&changes, version, *enc);
            prop_assert_eq!(doc.text(), reference.as_str());
        }
        // Same diagnostics (positions included) as a fresh document with the final text.
        let ws = workspace();
        let loc = Located { root: ws.path().to_path_buf(), rel: REL.to_owned() };
        let fresh = Document::new(&reference, version, Some(loc.clone()));
        let fs = Overlay::new(ws.path(), Default::default());
        let session = Session { related_information: true, ..Session::default() };
        let edited = document_diagnostics(&fs, &loc, &doc.snapshot(), &session);
        let opened = document_diagnostics(&fs, &loc, &fresh.snapshot(), &session);
        prop_assert_eq!(edited, opened);
    }
}
