//! Text primitives: byte offsets and ranges, the line index and position encodings.
//!
//! Everything inside wfx speaks byte offsets into the document's `String` ([`TextRange`]).
//! Only the edges (the LSP glue and the CLI renderers) turn offsets into line/column
//! positions, and they do it through [`LineIndex`] so every surface reports the same
//! column. This module must not know about YAML, LSP types or files.
//!
//! Line breaks are `\n`, `\r\n` and `\r`, exactly the three LSP recognises; a column never
//! counts the `\r` of a `\r\n` pair.

use std::fmt;

/// A half-open byte range `[start, end)` into a document's text.
///
/// Offsets are `u32` bytes; documents over 4 GiB are refused before they get here.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TextRange {
    /// First byte of the range.
    pub start: u32,
    /// One past the last byte of the range.
    pub end: u32,
}

impl TextRange {
    /// Builds a range; `end` is raised to `start` if it is smaller.
    pub fn new(start: u32, end: u32) -> Self {
        Self {
            start,
            end: end.max(start),
        }
    }

    /// An empty range at `offset`.
    pub fn empty(offset: u32) -> Self {
        Self {
            start: offset,
            end: offset,
        }
    }

    /// Length in bytes.
    pub fn len(self) -> u32 {
        self.end - self.start
    }

    /// True when the range covers no byte.
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// True when `offset` lies in `[start, end]` (the end is included, which is what a
    /// cursor right after a token expects).
    pub fn contains_inclusive(self, offset: u32) -> bool {
        self.start <= offset && offset <= self.end
    }

    /// The smallest range covering both.
    pub fn cover(self, other: TextRange) -> TextRange {
        TextRange {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The range as a `usize` range for slicing with `str::get`.
    pub fn as_usize(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

impl fmt::Debug for TextRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// How a position's `character` counts: UTF-8 bytes, UTF-16 code units or Unicode scalar
/// values (UTF-32). LSP's default is UTF-16.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub enum PositionEncoding {
    /// Columns in bytes.
    Utf8,
    /// Columns in UTF-16 code units (the LSP default).
    #[default]
    Utf16,
    /// Columns in Unicode scalar values.
    Utf32,
}

/// A zero-based (line, column) position; the column unit depends on a [`PositionEncoding`].
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default, Hash)]
pub struct Position {
    /// Zero-based line.
    pub line: u32,
    /// Zero-based column in the encoding's unit.
    pub character: u32,
}

/// A non-ASCII character inside a line: its byte column and UTF-8 length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WideChar {
    col: u32,
    len: u8,
}

impl WideChar {
    fn utf16_len(self) -> u32 {
        if self.len == 4 { 2 } else { 1 }
    }
}

/// Line starts plus the non-ASCII characters of each line, for offset ↔ position
/// conversion in UTF-8, UTF-16 or UTF-32 in time proportional to the non-ASCII characters
/// of one line (ASCII lines take the fast path).
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    /// Byte offset at which each line starts; `line_starts[0] == 0`.
    line_starts: Vec<u32>,
    /// Byte offset at which each line's content ends (before its line break).
    line_ends: Vec<u32>,
    /// Non-ASCII characters per line, sorted by column; empty for ASCII lines.
    wide: Vec<Vec<WideChar>>,
    /// Total length in bytes.
    len: u32,
}

impl LineIndex {
    /// Indexes `text`. Breaks at `\n`, `\r\n` and `\r` only.
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        let mut line_starts = vec![0u32];
        let mut line_ends = Vec::new();
        let mut wide = vec![Vec::new()];
        let mut line_start = 0usize;
        let mut i = 0usize;
        while i < bytes.len() {
            let b = bytes.get(i).copied().unwrap_or(0);
            match b {
                b'\n' | b'\r' => {
                    line_ends.push(to_u32(i));
                    let next = if b == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                        i + 2
                    } else {
                        i + 1
                    };
                    line_starts.push(to_u32(next));
                    wide.push(Vec::new());
                    line_start = next;
                    i = next;
                }
                b if b < 0x80 => i += 1,
                b => {
                    let char_len = utf8_len(b);
                    if let Some(w) = wide.last_mut() {
                        w.push(WideChar {
                            col: to_u32(i - line_start),
                            len: char_len as u8,
                        });
                    }
                    i += char_len;
                }
            }
        }
        line_ends.push(len);
        Self {
            line_starts,
            line_ends,
            wide,
            len,
        }
    }

    /// Number of lines (a trailing newline opens one more, empty line).
    pub fn line_count(&self) -> u32 {
        to_u32(self.line_starts.len())
    }

    /// Length of the indexed text in bytes.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// True for an empty text.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Byte offset where `line` starts; past the end clamps to the text length.
    pub fn line_start(&self, line: u32) -> u32 {
        self.line_starts
            .get(line as usize)
            .copied()
            .unwrap_or(self.len)
    }

    /// Byte offset where `line`'s content ends (before its break); clamps like
    /// [`Self::line_start`].
    pub fn line_end(&self, line: u32) -> u32 {
        self.line_ends
            .get(line as usize)
            .copied()
            .unwrap_or(self.len)
    }

    /// The zero-based line containing byte `offset` (clamped to the text).
    pub fn line_of(&self, offset: u32) -> u32 {
        let offset = offset.min(self.len);
        let idx = self.line_starts.partition_point(|&s| s <= offset);
        to_u32(idx.saturating_sub(1))
    }

    /// Converts a byte offset to a position in `enc`. An offset past the end clamps to the
    /// end; an offset inside a multi-byte character or inside a `\r\n` pair rounds down.
    pub fn position(&self, offset: u32, enc: PositionEncoding) -> Position {
        let offset = offset.min(self.len);
        let line = self.line_of(offset);
        let start = self.line_start(line);
        let end = self.line_end(line);
        let mut col = offset.min(end) - start;
        let wide = self
            .wide
            .get(line as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        // Round down into a character boundary.
        for w in wide {
            if w.col < col && col < w.col + u32::from(w.len) {
                col = w.col;
            }
        }
        let character = match enc {
            PositionEncoding::Utf8 => col,
            PositionEncoding::Utf16 | PositionEncoding::Utf32 => {
                let mut units = col;
                for w in wide.iter().take_while(|w| w.col < col) {
                    let enc_len = match enc {
                        PositionEncoding::Utf16 => w.utf16_len(),
                        _ => 1,
                    };
                    units = units - u32::from(w.len) + enc_len;
                }
                units
            }
        };
        Position { line, character }
    }

    /// Converts a position in `enc` to a byte offset. A line past the end clamps to the end
    /// of the text, a column past the end of its line clamps to the line's end (before the
    /// break), and a column inside a character (e.g. between the two UTF-16 units of an
    /// emoji) clamps to the start of that character.
    pub fn offset(&self, pos: Position, enc: PositionEncoding) -> u32 {
        if pos.line as usize >= self.line_starts.len() {
            return self.len;
        }
        let start = self.line_start(pos.line);
        let end = self.line_end(pos.line);
        let wide = self
            .wide
            .get(pos.line as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let col = match enc {
            PositionEncoding::Utf8 => {
                let mut col = pos.character;
                for w in wide {
                    if w.col < col && col < w.col + u32::from(w.len) {
                        col = w.col;
                    }
                }
                col
            }
            PositionEncoding::Utf16 | PositionEncoding::Utf32 => {
                // Walk the wide chars, mapping encoded units back to bytes.
                let mut units_left = pos.character;
                let mut byte_col = 0u32;
                let mut result = None;
                for w in wide {
                    let ascii_run = w.col - byte_col;
                    if units_left <= ascii_run {
                        result = Some(byte_col + units_left);
                        break;
                    }
                    units_left -= ascii_run;
                    let enc_len = match enc {
                        PositionEncoding::Utf16 => w.utf16_len(),
                        _ => 1,
                    };
                    if units_left < enc_len {
                        // Inside the character: clamp to its start.
                        result = Some(w.col);
                        break;
                    }
                    units_left -= enc_len;
                    byte_col = w.col + u32::from(w.len);
                }
                result.unwrap_or(byte_col.saturating_add(units_left))
            }
        };
        start.saturating_add(col).min(end)
    }
}

fn to_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// Turns raw file bytes into document text the way every caller must: strips one leading
/// U+FEFF byte-order mark. Fails with the byte offset (after the BOM) of the first invalid
/// UTF-8 sequence.
pub fn decode(bytes: &[u8]) -> Result<String, u32> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_owned()),
        Err(e) => Err(to_u32(e.valid_up_to())),
    }
}

/// [`decode`] taking the bytes by value: without a byte-order mark the buffer becomes the
/// text as it is, without a copy (a `check` of the 10,000-case workspace decodes 14 MB).
/// The same text and the same error offset as [`decode`].
pub fn decode_vec(bytes: Vec<u8>) -> Result<String, u32> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return decode(&bytes);
    }
    String::from_utf8(bytes).map_err(|e| to_u32(e.utf8_error().valid_up_to()))
}

/// Length of `s` in UTF-16 code units once every run of Unicode whitespace is collapsed
/// to one space and the ends are trimmed: the measure the reference applies to `title`
/// and `description` (JS `value.replace(/\s+/g, " ").trim().length`, FORMAT §B.1).
pub fn collapsed_utf16_len(s: &str) -> usize {
    collapse_whitespace(s).encode_utf16().count()
}

/// Collapses every run of JS-`\s` whitespace to one space and trims (FORMAT §B.1).
pub fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_ws = false;
    for c in s.chars() {
        if is_js_whitespace(c) {
            in_ws = true;
        } else {
            if in_ws && !out.is_empty() {
                out.push(' ');
            }
            in_ws = false;
            out.push(c);
        }
    }
    out
}

/// JavaScript's `\s`: Unicode White_Space plus U+FEFF.
pub fn is_js_whitespace(c: char) -> bool {
    c.is_whitespace() || c == '\u{FEFF}'
}

#[cfg(test)]
mod tests {
    use super::*;
    use PositionEncoding::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn table_of_texts_round_trips_in_every_encoding() {
        let texts = [
            "ascii\nline two\n",
            "a → b\n",
            "注文: x\n",
            "t: 😀x\n",
            "a\r\nb\r\n",
            "\u{FEFF}bom\n",
            "last line without newline",
            "mixed\r\nbreaks\rhere\n",
        ];
        for text in texts {
            let idx = LineIndex::new(text);
            for enc in [Utf8, Utf16, Utf32] {
                for (offset, _) in text.char_indices() {
                    let p = idx.position(offset as u32, enc);
                    let back = idx.offset(p, enc);
                    // A `\n` of a `\r\n` pair maps back to the `\r` (columns never count it).
                    let expected = if text.as_bytes().get(offset) == Some(&b'\n')
                        && offset > 0
                        && text.as_bytes().get(offset - 1) == Some(&b'\r')
                    {
                        offset as u32 - 1
                    } else {
                        offset as u32
                    };
                    assert_eq!(
                        back, expected,
                        "{text:?} offset {offset} enc {enc:?} pos {p:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn columns_per_encoding() {
        let text = "t: 😀→注x\n";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap() as u32;
        assert_eq!(idx.position(x, Utf8), pos(0, 3 + 4 + 3 + 3));
        assert_eq!(idx.position(x, Utf16), pos(0, 3 + 2 + 1 + 1));
        assert_eq!(idx.position(x, Utf32), pos(0, 3 + 1 + 1 + 1));
    }

    #[test]
    fn inside_surrogate_pair_clamps_to_char_start() {
        let idx = LineIndex::new("a😀b");
        assert_eq!(idx.offset(pos(0, 2), Utf16), 1);
        assert_eq!(idx.offset(pos(0, 3), Utf16), 5);
        // Inside the UTF-8 bytes of the emoji.
        assert_eq!(idx.offset(pos(0, 3), Utf8), 1);
        assert_eq!(idx.position(3, Utf16), pos(0, 1));
    }

    #[test]
    fn clamping_past_line_and_file_end() {
        let idx = LineIndex::new("ab\r\ncd");
        assert_eq!(idx.offset(pos(0, 99), Utf16), 2);
        assert_eq!(idx.offset(pos(9, 0), Utf16), 6);
        assert_eq!(idx.position(999, Utf16), pos(1, 2));
        assert_eq!(idx.line_count(), 2);
    }

    #[test]
    fn lone_cr_is_a_line_break() {
        let idx = LineIndex::new("a\rb\nc");
        assert_eq!(idx.position(2, Utf16), pos(1, 0));
        assert_eq!(idx.position(4, Utf16), pos(2, 0));
    }

    #[test]
    fn decode_strips_bom_and_reports_invalid_utf8() {
        assert_eq!(decode(b"\xEF\xBB\xBFa: 1").as_deref(), Ok("a: 1"));
        assert_eq!(decode(b"ab\xFFcd"), Err(2));
        assert_eq!(decode(b"\xEF\xBB\xBFab\xFF"), Err(2));
        for bytes in [
            &b"\xEF\xBB\xBFa: 1"[..],
            b"ab\xFFcd",
            b"\xEF\xBB\xBFab\xFF",
            b"a: \xE2\x86\x92",
            b"\xEF\xBB",
            b"",
        ] {
            assert_eq!(decode_vec(bytes.to_vec()), decode(bytes), "{bytes:?}");
        }
        assert_eq!(decode_vec(b"\xEF\xBB\xBFab\xFF".to_vec()), Err(2));
    }

    #[test]
    fn collapsed_length_counts_utf16_units() {
        assert_eq!(collapsed_utf16_len("  a \n\t b  "), 3);
        assert_eq!(collapsed_utf16_len("😀"), 2);
        assert_eq!(collapsed_utf16_len("注文"), 2);
        assert_eq!(collapse_whitespace("x\u{00A0}\u{2003}y"), "x y");
    }
}
