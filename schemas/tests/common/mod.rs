//! The fixture mini-language shared by rule tests (STYLE §5).
//!
//! A fixture is one unindented string. `#- <path>` starts a new file. An annotation line
//! `<spaces>#<spaces>^^^ error WFX104: message part` points at the line above it (the
//! nearest non-annotation line): the carets' columns (in characters) give the range, and
//! the optional text after the code must be a substring of the message. A lone `^` also
//! matches an empty range at its column. To point at column 0, drop the `#`: a line that
//! starts with `^` is an annotation too. Annotation lines are removed before analysis.
//! `check_diagnostics` runs `check_workspace` over every file and asserts that the
//! annotations and the diagnostics match one for one.

#![allow(dead_code, clippy::panic, clippy::type_complexity)]

use wfx_schemas::diagnostics::Diagnostic;
use wfx_schemas::files::MemFiles;
use wfx_schemas::text::{LineIndex, PositionEncoding};

/// An expected diagnostic parsed from an annotation.
#[derive(Debug, Clone)]
pub struct Expected {
    pub file: String,
    pub start: u32,
    pub end: u32,
    pub severity: String,
    pub code: String,
    pub message: Option<String>,
}

/// Files with annotation lines removed, plus the annotations.
pub struct Fixture {
    pub files: MemFiles,
    pub texts: Vec<(String, String)>,
    pub expected: Vec<Expected>,
}

fn parse_annotation(line: &str) -> Option<(usize, usize, String, String, Option<String>)> {
    let t = line.trim_start();
    let t = t.strip_prefix('#').unwrap_or(t).trim_start();
    if !t.starts_with('^') {
        return None;
    }
    let caret_col = line.chars().position(|c| c == '^')?;
    let carets = line
        .chars()
        .skip(caret_col)
        .take_while(|c| *c == '^')
        .count();
    let rest = t.trim_start_matches('^').trim_start();
    let (sev, rest) = rest.split_once(' ')?;
    if !["error", "warning", "information", "hint"].contains(&sev) {
        return None;
    }
    let (code, msg) = match rest.split_once(':') {
        Some((c, m)) => (c.trim().to_owned(), Some(m.trim().to_owned())),
        None => (rest.trim().to_owned(), None),
    };
    Some((caret_col, carets, sev.to_owned(), code, msg))
}

/// Parses a fixture.
pub fn fixture(src: &str) -> Fixture {
    let mut files = MemFiles::new();
    let mut texts = Vec::new();
    let mut expected = Vec::new();
    let mut current: Option<(
        String,
        String,
        Vec<(usize, usize, usize, String, String, Option<String>)>,
    )> = None;
    let flush = |cur: Option<(
        String,
        String,
        Vec<(usize, usize, usize, String, String, Option<String>)>,
    )>,
                 files: &mut MemFiles,
                 texts: &mut Vec<(String, String)>,
                 expected: &mut Vec<Expected>| {
        if let Some((path, text, anns)) = cur {
            let idx = LineIndex::new(&text);
            for (line, col, len, sev, code, msg) in anns {
                let start = idx.offset(
                    wfx_schemas::text::Position {
                        line: line as u32,
                        character: col as u32,
                    },
                    PositionEncoding::Utf32,
                );
                let end = idx.offset(
                    wfx_schemas::text::Position {
                        line: line as u32,
                        character: (col + len) as u32,
                    },
                    PositionEncoding::Utf32,
                );
                expected.push(Expected {
                    file: path.clone(),
                    start,
                    end,
                    severity: sev,
                    code,
                    message: msg,
                });
            }
            files.insert(path.clone(), text.clone());
            texts.push((path, text));
        }
    };
    for line in src.lines() {
        if let Some(path) = line.strip_prefix("#- ") {
            flush(current.take(), &mut files, &mut texts, &mut expected);
            current = Some((path.trim().to_owned(), String::new(), Vec::new()));
            continue;
        }
        let Some((_, text, anns)) = current.as_mut() else {
            continue;
        };
        if let Some((col, len, sev, code, msg)) = parse_annotation(line) {
            let line_no = text.lines().count().saturating_sub(1);
            anns.push((line_no, col, len, sev, code, msg));
            continue;
        }
        text.push_str(line);
        text.push('\n');
    }
    flush(current.take(), &mut files, &mut texts, &mut expected);
    Fixture {
        files,
        texts,
        expected,
    }
}

fn render(d: &Diagnostic, texts: &[(String, String)]) -> String {
    let text = texts
        .iter()
        .find(|(p, _)| *p == d.file)
        .map(|(_, t)| t.as_str())
        .unwrap_or("");
    let idx = LineIndex::new(text);
    let p = idx.position(d.range.start, PositionEncoding::Utf32);
    let snippet = text.get(d.range.as_usize()).unwrap_or("<out of bounds>");
    format!(
        "{}:{}:{} {} {}: {} [{:?}]",
        d.file,
        p.line + 1,
        p.character + 1,
        d.severity.as_str(),
        d.code.code,
        d.message,
        snippet
    )
}

/// Runs every rule over the fixture's workspace (root "") and asserts the annotations.
#[track_caller]
pub fn check_diagnostics(src: &str) {
    let fx = fixture(src);
    let diags = wfx_schemas::check::check_workspace(&fx.files, "");
    assert_matches(&fx, &diags);
}

/// Runs `check_file` on one path of the fixture and asserts the annotations of that file.
#[track_caller]
pub fn check_file_diagnostics(src: &str, path: &str) {
    let mut fx = fixture(src);
    fx.expected.retain(|e| e.file == path);
    let diags = wfx_schemas::check::check_file(&fx.files, path);
    assert_matches(&fx, &diags);
}

#[track_caller]
pub fn assert_matches(fx: &Fixture, diags: &[Diagnostic]) {
    let mut unmatched: Vec<&Diagnostic> = diags.iter().collect();
    let mut missing = Vec::new();
    for e in &fx.expected {
        let pos = unmatched.iter().position(|d| {
            d.file == e.file
                && d.code.code == e.code
                && d.severity.as_str() == e.severity
                && (d.range.start == e.start
                    && (d.range.end == e.end || (d.range.is_empty() && e.end == e.start + 1)))
                && e.message
                    .as_ref()
                    .is_none_or(|m| d.message.contains(m.as_str()))
        });
        match pos {
            Some(i) => {
                unmatched.remove(i);
            }
            None => missing.push(e.clone()),
        }
    }
    if !missing.is_empty() || !unmatched.is_empty() {
        let got: Vec<String> = diags.iter().map(|d| render(d, &fx.texts)).collect();
        panic!(
            "diagnostics differ\nmissing (expected, not produced): {missing:#?}\nunexpected (produced, not annotated): {:#?}\nall produced:\n{}",
            unmatched
                .iter()
                .map(|d| render(d, &fx.texts))
                .collect::<Vec<_>>(),
            got.join("\n")
        );
    }
}
