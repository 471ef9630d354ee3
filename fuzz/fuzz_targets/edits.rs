//! Fuzz target: the editor's document model under random `didChange` sequences (issue 8).
//! The first bytes pick the initial text (a corpus case or the input's own lossy text);
//! the rest decode into edits (ranges with positions that may be reversed, past the end
//! of a line or of the file, in UTF-8/UTF-16/UTF-32 units, and inserted texts including
//! CR, LF, multi-byte and astral characters), applied through `Document::apply_changes`
//! exactly as the server does. After every edit: no panic, the text's `LineIndex` agrees
//! with the text, and `check_text` of the new text keeps every diagnostic range inside the
//! text on char boundaries.
//! Run: `cargo +nightly fuzz run edits` from the repository root.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tower_lsp_server::ls_types as lsp;
use wfx_lsp::lsp::document::Document;
use wfx_schemas::files::MemFiles;
use wfx_schemas::text::PositionEncoding;

const WORKFLOW: &str = "states:\n  intake:\n    triggers:\n      manual: {}\n    transitions:\n      done: {}\n  done: {}\n";
const CASE: &str = "title: T\ndescription: d\nsteps:\n  - send: \"héllo 😀\"\n  - reply:\n      includes: [\"a\", \"/b/i\"]\n  - reachedState: done\n";
const PIECES: &[&str] = &[
    "", "x", "\n", "\r\n", "\r", ": ", "  - ", "é", "😀", "\u{feff}", "[", "{", "&a ", "*a", "\"",
    "#", "\t",
];
const PATH: &str = "workflows/a/tests/x.test.yaml";

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let (init, ops) = if head & 1 == 0 {
        (CASE.to_owned(), rest)
    } else {
        let cut = rest.len().min(usize::from(head >> 1));
        (
            String::from_utf8_lossy(&rest[..cut]).into_owned(),
            &rest[cut..],
        )
    };
    let enc = match head >> 6 {
        0 => PositionEncoding::Utf8,
        1 => PositionEncoding::Utf32,
        _ => PositionEncoding::Utf16,
    };
    let mut doc = Document::new(&init, 1, None);
    let fs = MemFiles::new().with("workflows/a/workflow.yaml", WORKFLOW);
    for (i, op) in ops.chunks(6).enumerate() {
        let [sl, sc, el, ec, t, flags] = *op else {
            break;
        };
        let pos = |l: u8, c: u8| {
            lsp::Position::new(
                if flags & 1 == 0 {
                    u32::from(l % 16)
                } else {
                    u32::from(l) * 1000
                },
                if flags & 2 == 0 {
                    u32::from(c % 24)
                } else {
                    u32::from(c) << 24
                },
            )
        };
        let text = if flags & 4 == 0 {
            PIECES[usize::from(t) % PIECES.len()].to_owned()
        } else {
            PIECES[usize::from(t) % PIECES.len()].repeat(usize::from(t % 7))
        };
        let change = lsp::TextDocumentContentChangeEvent {
            range: if flags & 8 == 0 {
                Some(lsp::Range::new(pos(sl, sc), pos(el, ec)))
            } else if t == 0 {
                None
            } else {
                Some(lsp::Range::new(pos(sl, sc), pos(sl, sc)))
            },
            range_length: None,
            text,
        };
        let version = i32::try_from(i).unwrap_or(i32::MAX).saturating_add(2);
        doc.apply_changes(&[change], version, enc);
        let snap = doc.snapshot();
        assert_eq!(&*snap.text, doc.text());
        let text = doc.text();
        let fs = fs.clone().with(PATH, text.as_bytes().to_vec());
        for d in wfx_schemas::check::check_text(&fs, PATH, text) {
            if d.file == PATH {
                assert!(
                    d.range.start <= d.range.end && d.range.end as usize <= text.len(),
                    "{d:?}"
                );
                assert!(
                    text.is_char_boundary(d.range.start as usize)
                        && text.is_char_boundary(d.range.end as usize),
                    "{d:?}"
                );
            }
        }
    }
});
