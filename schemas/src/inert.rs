//! Inert text for terminals (security promise "inert output"): the one escaping function
//! every human-readable output goes through (`check`'s human and GitHub formats, `test`'s
//! narration, `graph` errors, error messages on stderr).
//!
//! A file name, a case title, a step's text or a YAML value can carry bytes a terminal
//! acts on: `ESC [2J` clears the screen, OSC 8 makes a link, OSC 52 writes the clipboard,
//! bidi overrides reorder what the reader sees. [`inert`] shows each such character as a
//! visible escape in Rust's notation (`\u{1b}`), so it prints as text and nothing else.
//!
//! Escaped: C0 controls (U+0000–U+001F; `\n`, `\t` and `\r` as `\n`, `\t`, `\r`), DEL
//! (U+007F), C1 controls (U+0080–U+009F, CSI and OSC among them), the bidi controls
//! U+061C, U+200E, U+200F, U+202A–U+202E and U+2066–U+2069, and the line and paragraph
//! separators U+2028, U+2029. Everything else, a backslash included, is kept.
//!
//! GitHub Actions reads a log line that starts with `::` (after leading spaces or tabs) as
//! a workflow command, and `##[` as one of its older commands. Text that could land at the
//! start of a log line (a file name, a case title) therefore has its first `:` of a leading
//! `::` written `\u{3a}`, at its start and after each line break [`inert_lines`] keeps, and
//! the first `#` of every `##[` written `\u{23}`: `::error::x` prints as `\u{3a}:error::x`
//! and starts no command.

use std::borrow::Cow;

/// Whether `c` is escaped by [`inert`] (see the module docs for the list).
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// Whether `rest` (text at the start of a line) begins, after spaces and tabs, with `::`.
fn starts_command(rest: &str) -> bool {
    rest.trim_start_matches([' ', '\t']).starts_with("::")
}

fn escape(s: &str, keep_lines: bool) -> Cow<'_, str> {
    let keep = |c: char| keep_lines && (c == '\n' || c == '\t');
    let command = |s: &str| {
        s.contains("##[") || starts_command(s) || (keep_lines && s.split('\n').any(starts_command))
    };
    if !s.chars().any(|c| is_unsafe(c) && !keep(c)) && !command(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    // At a line start (before any character but spaces and tabs).
    let mut line_start = true;
    for (i, c) in s.char_indices() {
        let rest = s.get(i..).unwrap_or_default();
        if c == ':' && line_start && rest.starts_with("::") {
            out.push_str("\\u{3a}");
            line_start = false;
            continue;
        }
        if c == '#' && rest.starts_with("##[") {
            out.push_str("\\u{23}");
            line_start = false;
            continue;
        }
        if c == '\n' && keep(c) {
            line_start = true;
        } else if !(line_start && (c == ' ' || c == '\t')) {
            line_start = false;
        }
        if !is_unsafe(c) || keep(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => {
                use std::fmt::Write;
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// `s` for one line of terminal output: every unsafe character, line breaks and tabs
/// included, as a visible escape (`ESC` → `\u{1b}`, newline → `\n`). Borrowed when
/// nothing needed escaping.
pub fn inert(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// [`inert`] for multi-line text: `\n` and `\t` stay as they are (`\r` is escaped, so a
/// carriage return cannot overwrite a line).
pub fn inert_lines(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// One visible character standing for unsafe `c` in a code frame, where a column must stay
/// one character wide: C0 and DEL as their control pictures (U+2400–U+241F, U+2421),
/// everything else U+FFFD. `None` when `c` is safe (or `\n`/`\t`, which frames lay out).
pub fn frame_char(c: char) -> Option<char> {
    if !is_unsafe(c) || c == '\n' || c == '\t' {
        return None;
    }
    Some(match c as u32 {
        n @ 0..=0x1f => char::from_u32(0x2400 + n).unwrap_or('\u{fffd}'),
        0x7f => '\u{2421}',
        _ => '\u{fffd}',
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_controls() {
        let hostile = "a\u{1b}[2Jb\u{1b}]8;;http://x\u{7}l\u{1b}]8;;\u{7}\u{1b}]52;c;aGk=\u{7}\u{9b}31m\u{202e}z\u{7f}\r\n\t\\";
        let out = inert(hostile);
        assert_eq!(
            out,
            "a\\u{1b}[2Jb\\u{1b}]8;;http://x\\u{7}l\\u{1b}]8;;\\u{7}\\u{1b}]52;c;aGk=\\u{7}\\u{9b}31m\\u{202e}z\\u{7f}\\r\\n\\t\\"
        );
        assert!(!out.chars().any(is_unsafe));
        assert_eq!(inert_lines("x\u{1b}\r\n\ty"), "x\\u{1b}\\r\n\ty");
        assert!(matches!(inert("plain → 注文 😀"), Cow::Borrowed(_)));
        for c in [
            '\u{2066}', '\u{2069}', '\u{202a}', '\u{200f}', '\u{61c}', '\u{2028}', '\u{85}',
        ] {
            assert!(is_unsafe(c), "{c:?}");
            assert_eq!(inert(&c.to_string()), format!("\\u{{{:x}}}", c as u32));
        }
    }

    #[test]
    fn github_command_prefixes_are_neutralised() {
        // A workflow command at the start of a line, also after indentation, and the
        // older `##[` form anywhere.
        assert_eq!(
            inert("::error file=x::pwned"),
            "\\u{3a}:error file=x::pwned"
        );
        assert_eq!(inert("   ::warning::w"), "   \\u{3a}:warning::w");
        assert_eq!(inert("\t::group::g"), "\\t\\u{3a}:group::g");
        assert_eq!(
            inert("t ##[error]x ##[set-env]"),
            "t \\u{23}#[error]x \\u{23}#[set-env]"
        );
        assert_eq!(
            inert_lines("ok\n  ::add-mask::s\nx::y"),
            "ok\n  \\u{3a}:add-mask::s\nx::y"
        );
        // Not at a line start: left alone (and borrowed).
        assert!(matches!(inert("a::b #[x] # [y]"), Cow::Borrowed(_)));
        assert!(matches!(inert_lines("a\nb::c"), Cow::Borrowed(_)));
        for hostile in ["::error::x", "  ::x", "##[error]x", "a\n::x"] {
            for line in inert_lines(hostile).lines() {
                assert!(!line.trim_start().starts_with("::"), "{line}");
                assert!(!line.contains("##["), "{line}");
            }
        }
    }

    #[test]
    fn frame_chars_keep_one_column() {
        assert_eq!(frame_char('\u{1b}'), Some('␛'));
        assert_eq!(frame_char('\u{0}'), Some('␀'));
        assert_eq!(frame_char('\u{7f}'), Some('␡'));
        assert_eq!(frame_char('\u{9b}'), Some('\u{fffd}'));
        assert_eq!(frame_char('\n'), None);
        assert_eq!(frame_char('a'), None);
    }
}
