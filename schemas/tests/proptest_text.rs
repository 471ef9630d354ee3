//! Property tests of the text primitives: [`LineIndex`] round-trips every char boundary of
//! any text in every [`PositionEncoding`], positions are monotone, clamping stays on char
//! boundaries, and [`decode`] agrees with `str::from_utf8` after one leading BOM.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use wfx_schemas::text::{LineIndex, Position, PositionEncoding, decode};

const ENCODINGS: [PositionEncoding; 3] = [
    PositionEncoding::Utf8,
    PositionEncoding::Utf16,
    PositionEncoding::Utf32,
];

/// Text biased towards what breaks line and column arithmetic: every kind of line break,
/// multi-byte and astral characters, BOMs, NULs, U+2028/U+0085 (not LSP line breaks).
fn tricky_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("a".to_owned()),
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("\r".to_owned()),
        Just("\r\n".to_owned()),
        Just("\u{FEFF}".to_owned()),
        Just("\0".to_owned()),
        Just("é".to_owned()),
        Just("e\u{301}".to_owned()),
        Just("注".to_owned()),
        Just("😀".to_owned()),
        Just("\u{2028}".to_owned()),
        Just("\u{85}".to_owned()),
        Just("\u{200B}".to_owned()),
        Just("\t".to_owned()),
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..64).prop_map(|v| v.concat())
}

/// The offset a position of `offset` maps back to: itself, except that the `\n` of a
/// `\r\n` pair belongs to the end of its line (columns never count the `\r`).
fn expected_back(text: &str, offset: usize) -> u32 {
    let b = text.as_bytes();
    if b.get(offset) == Some(&b'\n') && offset > 0 && b.get(offset - 1) == Some(&b'\r') {
        offset as u32 - 1
    } else {
        offset as u32
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_char_boundary_round_trips(text in tricky_text()) {
        let idx = LineIndex::new(&text);
        prop_assert_eq!(idx.len() as usize, text.len());
        let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len())).collect();
        for enc in ENCODINGS {
            let mut prev = Position::default();
            for &o in &boundaries {
                let p = idx.position(o as u32, enc);
                prop_assert!(p >= prev, "positions not monotone at {o} ({enc:?}): {prev:?} then {p:?}");
                prev = p;
                let back = idx.offset(p, enc);
                prop_assert_eq!(back, expected_back(&text, o), "offset {} enc {:?} pos {:?}", o, enc, p);
            }
        }
    }

    #[test]
    fn columns_count_the_encoding_units(text in tricky_text()) {
        let idx = LineIndex::new(&text);
        for (o, _) in text.char_indices() {
            let line_start = idx.line_start(idx.line_of(o as u32)) as usize;
            let before = &text[line_start..o];
            // A `\n` after `\r` sits at the end of its line: skip it.
            if before.contains(['\r', '\n']) {
                continue;
            }
            prop_assert_eq!(idx.position(o as u32, PositionEncoding::Utf8).character as usize, before.len());
            prop_assert_eq!(idx.position(o as u32, PositionEncoding::Utf16).character as usize, before.encode_utf16().count());
            prop_assert_eq!(idx.position(o as u32, PositionEncoding::Utf32).character as usize, before.chars().count());
        }
    }

    #[test]
    fn any_position_maps_to_a_char_boundary(text in tricky_text(), line in 0u32..80, character in 0u32..200) {
        let idx = LineIndex::new(&text);
        for enc in ENCODINGS {
            let o = idx.offset(Position { line, character }, enc);
            prop_assert!(text.is_char_boundary(o as usize), "{enc:?} ({line}, {character}) -> {o}");
        }
        // Any byte offset, even inside a character, maps to a position that maps back to
        // a char boundary at or before it.
        for o in 0..=text.len() as u32 + 2 {
            for enc in ENCODINGS {
                let back = idx.offset(idx.position(o, enc), enc);
                prop_assert!(text.is_char_boundary(back as usize));
                prop_assert!(back <= o.min(text.len() as u32));
            }
        }
    }

    #[test]
    fn line_count_matches_the_lsp_line_breaks(text in tricky_text()) {
        let idx = LineIndex::new(&text);
        let breaks = text.replace("\r\n", "\n").matches(['\n', '\r']).count();
        prop_assert_eq!(idx.line_count() as usize, breaks + 1);
    }

    #[test]
    fn decode_strips_one_bom_and_agrees_with_from_utf8(bytes in prop::collection::vec(any::<u8>(), 0..64), bom in any::<bool>()) {
        let mut input = if bom { b"\xEF\xBB\xBF".to_vec() } else { Vec::new() };
        input.extend_from_slice(&bytes);
        let body = if bom { &bytes[..] } else { input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&input) };
        match (decode(&input), std::str::from_utf8(body)) {
            (Ok(s), Ok(t)) => prop_assert_eq!(s, t),
            (Err(at), Err(e)) => prop_assert_eq!(at as usize, e.valid_up_to()),
            (a, b) => prop_assert!(false, "decode {a:?} vs from_utf8 {b:?}"),
        }
    }
}
