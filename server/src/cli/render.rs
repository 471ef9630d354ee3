//! Renderers of `wfx-lsp check` output: human code frames, JSON, GitHub workflow commands
//! and SARIF 2.1.0. Each takes the sorted diagnostics plus the checked texts and writes to
//! any `Write`; none of them reads files or decides the exit code.
//!
//! Positions all come from [`LineIndex`]: human frames show 1-based lines and 1-based
//! columns in characters (Unicode scalar values, like rustc); JSON shows 0-based lines and
//! UTF-16 characters (LSP's default); GitHub annotations and SARIF show 1-based lines and
//! 1-based UTF-16 columns (SARIF announces it with `run.columnKind = utf16CodeUnits`).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::panic::AssertUnwindSafe;

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use serde_json::{Value, json};
use wfx_schemas::diagnostics::{Diagnostic, Severity, all_codes};
use wfx_schemas::inert::{frame_char, inert, inert_lines};
use wfx_schemas::text::{LineIndex, Position, PositionEncoding, TextRange};

/// Where the diagnostics page lives; `#<code-lowercase>` anchors each code. Shared by SARIF
/// `helpUri` and the server's `codeDescription.href`. The project has no public home yet,
/// so the default is a placeholder host; set `WFX_DOCS_URL` at build time to the real
/// `…/docs/diagnostics.md` URL.
pub const DIAGNOSTICS_DOC_URL: &str = match option_env!("WFX_DOCS_URL") {
    Some(u) => u,
    None => "https://example.invalid/wfx-lsp/blob/main/docs/diagnostics.md",
};

/// The documentation link of one code, e.g. `…/docs/diagnostics.md#wfx104`.
pub fn code_doc_url(code: &str) -> String {
    format!("{DIAGNOSTICS_DOC_URL}#{}", code.to_ascii_lowercase())
}

/// What was checked: diagnostics (sorted, `file` as shown to the user), the text of every
/// file a diagnostic names (BOM stripped; invalid UTF-8 replaced after the first bad byte),
/// and how many files were checked.
#[derive(Debug, Default)]
pub struct Report {
    /// Sorted by (file, start, code).
    pub diagnostics: Vec<Diagnostic>,
    /// Display path → text.
    pub texts: BTreeMap<String, String>,
    /// Number of files checked.
    pub files: usize,
    /// Paths given on the command line that were not checked: (display path, reason).
    /// Never counted in [`Self::files`].
    pub unchecked: Vec<(String, String)>,
}

/// A file's text and its line index, for position conversion.
struct Source<'a> {
    text: &'a str,
    index: LineIndex,
}

impl Report {
    /// Number of error-severity diagnostics.
    pub fn errors(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }

    /// Number of warnings.
    pub fn warnings(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count()
    }

    fn sources(&self) -> BTreeMap<&str, Source<'_>> {
        self.texts
            .iter()
            .map(|(k, t)| {
                (
                    k.as_str(),
                    Source {
                        text: t.as_str(),
                        index: LineIndex::new(t),
                    },
                )
            })
            .collect()
    }
}

fn pos(
    sources: &BTreeMap<&str, Source<'_>>,
    file: &str,
    offset: u32,
    enc: PositionEncoding,
) -> Position {
    match sources.get(file) {
        Some(s) => s.index.position(offset, enc),
        None => Position::default(),
    }
}

/// `N errors, M warnings in F files` (singular where 1), or `no problems in F files`.
pub fn summary_line(report: &Report) -> String {
    let plural = |n: usize, word: &str| {
        if n == 1 {
            format!("{n} {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    let files = plural(report.files, "file");
    let (e, w) = (report.errors(), report.warnings());
    let others = report.diagnostics.len() - e - w;
    if report.diagnostics.is_empty() {
        return format!("no problems in {files}");
    }
    let mut parts = vec![plural(e, "error"), plural(w, "warning")];
    if others > 0 {
        parts.push(plural(others, "note"));
    }
    format!("{} in {files}", parts.join(", "))
}

/// Longest excerpt (bytes) shown in a code frame; longer lines are cut to a window around
/// the diagnostic so a 10 MB one-line file prints a short frame.
const MAX_EXCERPT: u32 = 400;

/// Renders code frames plus a summary line. Inert output: messages, file names, notes and
/// fix titles go through [`inert`]; in the excerpt each unsafe character becomes one
/// visible character ([`frame_char`]) so columns and underlines stay where they were.
pub fn human(report: &Report, color: bool, out: &mut dyn Write) -> io::Result<()> {
    let sources = report.sources();
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    for d in &report.diagnostics {
        let level = match d.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
            Severity::Information => Level::INFO,
            Severity::Hint => Level::HELP,
        };
        let start = pos(&sources, &d.file, d.range.start, PositionEncoding::Utf32);
        let message = inert_lines(&d.message);
        let file = inert(&d.file);
        let mut group = Group::with_title(level.primary_title(message.as_ref()).id(d.code.code));
        // With a path, annotate-snippets prints `--> file:line:col` itself, counting the
        // column in characters from the excerpt's first byte; every excerpt starts at a line
        // start, so that column is LineIndex's UTF-32 column + 1. Where no short excerpt
        // exists (a diagnostic deep inside a very long line) only the location is printed.
        match sources
            .get(d.file.as_str())
            .and_then(|src| excerpt(src, d.range))
        {
            Some((text, first_line, span)) => {
                let (text, span) = frame_safe(text, span);
                group = group.element(
                    Snippet::source(text)
                        .path(file.as_ref())
                        .line_start(first_line as usize + 1)
                        .annotation(AnnotationKind::Primary.span(span.as_usize())),
                );
            }
            None => {
                group = group.element(
                    Origin::path(file.as_ref())
                        .line(start.line as usize + 1)
                        .char_column(start.character as usize + 1),
                );
            }
        }
        for r in &d.related {
            let p = pos(&sources, &r.file, r.range.start, PositionEncoding::Utf32);
            let note = format!(
                "{}:{}:{}: {}",
                inert(&r.file),
                p.line + 1,
                p.character + 1,
                inert_lines(&r.message)
            );
            group = group.element(Level::NOTE.message(note));
        }
        for f in &d.fixes {
            group = group.element(Level::HELP.message(format!(
                "fix available (apply with --fix): {}",
                inert(&f.title)
            )));
        }
        // annotate-snippets slices strings; should it ever panic, print the location alone.
        let rendered = std::panic::catch_unwind(AssertUnwindSafe(|| renderer.render(&[group])))
            .unwrap_or_else(|_| {
                format!(
                    "{}[{}]: {}\n --> {}:{}:{}",
                    d.severity.as_str(),
                    d.code.code,
                    message,
                    file,
                    start.line + 1,
                    start.character + 1
                )
            });
        writeln!(out, "{rendered}\n")?;
    }
    writeln!(out, "{}", summary_line(report))
}

/// The text shown for `range`: from the start of the range's first line to the end of its
/// last line (at most 5 lines), cut at [`MAX_EXCERPT`] bytes past the range's start;
/// returns the excerpt, its zero-based first line and the range inside the excerpt.
/// `None` when the range starts more than [`MAX_EXCERPT`] bytes into its line.
fn excerpt<'a>(src: &Source<'a>, range: TextRange) -> Option<(&'a str, u32, TextRange)> {
    let len = src.index.len();
    let range = TextRange::new(range.start.min(len), range.end.min(len));
    let l0 = src.index.line_of(range.start);
    let l1 = src.index.line_of(range.end).min(l0 + 4);
    let a = src.index.line_start(l0);
    if range.start - a > MAX_EXCERPT {
        return None;
    }
    let b = floor_char(
        src.text,
        src.index
            .line_end(l1)
            .min(range.start.saturating_add(MAX_EXCERPT))
            .max(a),
    );
    let text = src.text.get(a as usize..b as usize)?;
    // Snap onto char boundaries: a WFX006 range counts raw bytes, and the lossy text put a
    // 3-byte U+FFFD where the invalid byte was.
    let start = floor_char(text, range.start.clamp(a, b) - a);
    let mut end = range.end.clamp(a, b) - a;
    while end < b - a && !text.is_char_boundary(end as usize) {
        end += 1;
    }
    Some((text, l0, TextRange::new(start, end)))
}

/// `text` with every unsafe character replaced by one visible one ([`frame_char`]), and
/// `span` moved onto the replaced text.
fn frame_safe(text: &str, span: TextRange) -> (String, TextRange) {
    let mut out = String::with_capacity(text.len());
    let (mut start, mut end) = (None, None);
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if i as u32 >= span.start && start.is_none() {
            start = Some(out.len() as u32);
        }
        if i as u32 >= span.end && end.is_none() {
            end = Some(out.len() as u32);
        }
        // A CRLF line end is laid out by the renderer; a lone CR is shown.
        let crlf = c == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n');
        out.push(if crlf { c } else { frame_char(c).unwrap_or(c) });
    }
    let len = out.len() as u32;
    let start = start.unwrap_or(len);
    (out, TextRange::new(start, end.unwrap_or(len).max(start)))
}

fn floor_char(text: &str, mut at: u32) -> u32 {
    while at > 0 && !text.is_char_boundary(at as usize) {
        at -= 1;
    }
    at
}

fn lsp_pos(p: Position) -> Value {
    json!({"line": p.line, "character": p.character})
}

/// The JSON document (documented in docs/reference.md, "`check --format json`"):
/// `{"diagnostics":[{file, range:{start,end}, severity, code, message, related:[{file,
/// range, message}], fixes:[{title, edits:[{file, range, newText}]}]}], "unchecked":[{path,
/// reason}], "summary":{files, errors, warnings}}`. Positions are 0-based lines and 0-based
/// UTF-16 code-unit columns (LSP's default), ranges end-exclusive; `related` and `fixes` are
/// always present (possibly empty), a fix's edits are non-overlapping and apply to the
/// checked text. Two-space indented, one trailing newline.
pub fn json(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let sources = report.sources();
    let range = |file: &str, r: wfx_schemas::text::TextRange| {
        let s = pos(&sources, file, r.start, PositionEncoding::Utf16);
        let e = pos(&sources, file, r.end, PositionEncoding::Utf16);
        json!({"start": lsp_pos(s), "end": lsp_pos(e)})
    };
    let diags: Vec<Value> = report
        .diagnostics
        .iter()
        .map(|d| {
            let related: Vec<Value> = d
                .related
                .iter()
                .map(|r| json!({"file": r.file, "range": range(&r.file, r.range), "message": r.message}))
                .collect();
            let fixes: Vec<Value> = d
                .fixes
                .iter()
                .map(|f| {
                    let edits: Vec<Value> = f
                        .edits
                        .iter()
                        .map(|e| json!({"file": e.file, "range": range(&e.file, e.range), "newText": e.new_text}))
                        .collect();
                    json!({"title": f.title, "edits": edits})
                })
                .collect();
            json!({
                "file": d.file,
                "range": range(&d.file, d.range),
                "severity": d.severity.as_str(),
                "code": d.code.code,
                "message": d.message,
                "related": related,
                "fixes": fixes,
            })
        })
        .collect();
    let unchecked: Vec<Value> = report
        .unchecked
        .iter()
        .map(|(path, reason)| json!({"path": path, "reason": reason}))
        .collect();
    let doc = json!({
        "diagnostics": diags,
        "unchecked": unchecked,
        "summary": {"files": report.files, "errors": report.errors(), "warnings": report.warnings()},
    });
    let text = serde_json::to_string_pretty(&doc).map_err(io::Error::other)?;
    writeln!(out, "{text}")
}

/// Escapes a workflow-command message: terminal controls made inert ([`inert_lines`]),
/// then GitHub's own escapes (`%`, CR, LF), so a message cannot end its command line and
/// start another (`\n::error …`).
fn gh_data(s: &str) -> String {
    inert_lines(s)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property value (also `:` and `,`, so a file name cannot
/// close the properties with `::`).
fn gh_prop(s: &str) -> String {
    gh_data(&inert(s)).replace(':', "%3A").replace(',', "%2C")
}

/// One `::error file=…,line=…,col=…,endLine=…,endColumn=…,title=WFX104::message` line per
/// diagnostic (`warning` for warnings, `notice` otherwise); 1-based lines, 1-based UTF-16
/// columns. No summary line: GitHub reads every line as a command.
pub fn github(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let sources = report.sources();
    for d in &report.diagnostics {
        let kind = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information | Severity::Hint => "notice",
        };
        let s = pos(&sources, &d.file, d.range.start, PositionEncoding::Utf16);
        let e = pos(&sources, &d.file, d.range.end, PositionEncoding::Utf16);
        writeln!(
            out,
            "::{kind} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            gh_prop(&d.file),
            s.line + 1,
            s.character + 1,
            e.line + 1,
            e.character + 1,
            gh_prop(d.code.code),
            gh_data(&d.message)
        )?;
    }
    Ok(())
}

/// A display path as a SARIF `artifactLocation.uri` (a relative URI reference, RFC 3986):
/// every byte but the unreserved characters and `/` percent-encoded, so a space, `#`, `?`,
/// `%` or a control character in a file name cannot change what the URI points at.
pub fn sarif_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Information | Severity::Hint => "note",
    }
}

fn sarif_region(sources: &BTreeMap<&str, Source<'_>>, file: &str, range: TextRange) -> Value {
    let s = pos(sources, file, range.start, PositionEncoding::Utf16);
    let e = pos(sources, file, range.end, PositionEncoding::Utf16);
    json!({
        "startLine": s.line + 1,
        "startColumn": s.character + 1,
        "endLine": e.line + 1,
        "endColumn": e.character + 1,
    })
}

/// A SARIF 2.1.0 log with one run: the driver lists every registry code as a rule
/// (`helpUri` → the diagnostics page anchor), each result names its rule, level, message
/// and region; related sites become `relatedLocations`. `columnKind` is `utf16CodeUnits`.
/// Paths that named nothing checkable become the run's `invocations[0]`
/// `toolExecutionNotifications` (`"not checked: <reason>"`, an error when no file was
/// checked, else a warning; `executionSuccessful` is false then); without any, the run has no
/// `invocations`.
pub fn sarif(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let sources = report.sources();
    let codes = all_codes();
    let rules: Vec<Value> = codes
        .iter()
        .map(|c| {
            json!({
                "id": c.code,
                "name": c.slug,
                "shortDescription": {"text": c.summary},
                "fullDescription": {"text": c.explanation},
                "helpUri": code_doc_url(c.code),
                "defaultConfiguration": {"level": sarif_level(c.severity)},
                "properties": {"section": c.section},
            })
        })
        .collect();
    let results: Vec<Value> = report
        .diagnostics
        .iter()
        .map(|d| {
            let mut r = json!({
                "ruleId": d.code.code,
                "ruleIndex": codes.iter().position(|c| c.code == d.code.code).unwrap_or(0),
                "level": sarif_level(d.severity),
                "message": {"text": d.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": sarif_uri(&d.file)},
                    "region": sarif_region(&sources, &d.file, d.range),
                }}],
            });
            if !d.related.is_empty()
                && let Some(obj) = r.as_object_mut()
            {
                let rel: Vec<Value> = d
                    .related
                    .iter()
                    .enumerate()
                    .map(|(i, rel)| {
                        json!({
                            "id": i,
                            "message": {"text": rel.message},
                            "physicalLocation": {
                                "artifactLocation": {"uri": sarif_uri(&rel.file)},
                                "region": sarif_region(&sources, &rel.file, rel.range),
                            },
                        })
                    })
                    .collect();
                obj.insert("relatedLocations".into(), Value::Array(rel));
            }
            r
        })
        .collect();
    let mut run = json!({
        "tool": {"driver": {
            "name": "wfx-lsp",
            "version": env!("CARGO_PKG_VERSION"),
            "rules": rules,
        }},
        "columnKind": "utf16CodeUnits",
        "results": results,
    });
    if !report.unchecked.is_empty()
        && let Some(obj) = run.as_object_mut()
    {
        // Paths that named nothing checkable: one notification each, an error when nothing
        // at all was checked (the run then exits 2), else a warning.
        let level = if report.files == 0 {
            "error"
        } else {
            "warning"
        };
        let notes: Vec<Value> = report
            .unchecked
            .iter()
            .map(|(path, reason)| {
                json!({
                    "level": level,
                    "message": {"text": format!("not checked: {reason}")},
                    "locations": [{"physicalLocation": {"artifactLocation": {"uri": sarif_uri(path)}}}],
                })
            })
            .collect();
        obj.insert(
            "invocations".into(),
            json!([{
                "executionSuccessful": report.files > 0,
                "toolExecutionNotifications": notes,
            }]),
        );
    }
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    });
    let text = serde_json::to_string_pretty(&doc).map_err(io::Error::other)?;
    writeln!(out, "{text}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;
    use wfx_schemas::diagnostics::CASE_UNKNOWN_KEY;
    use wfx_schemas::inert::is_unsafe;

    /// A file name with `ESC [2J` and OSC 52, a message with OSC 8 and a newline followed by
    /// a workflow command, and a source line holding ESC, C1 CSI and a bidi override.
    fn hostile() -> Report {
        let file = "workflows/w/tests/a\u{1b}[2J\u{1b}]52;c;aGk=\u{7}, b::c%.test.yaml".to_owned();
        let text = "title: x\n\u{1b}[31mkey\u{9b}1m\u{202e}: 1\nsteps: []\n".to_owned();
        let start = text.find("key").unwrap() as u32;
        let d = Diagnostic::new(
            &CASE_UNKNOWN_KEY,
            file.clone(),
            TextRange::new(start, start + 3),
            "unknown key \u{1b}]8;;http://evil\u{7}key\u{1b}]8;;\u{7}\n::error file=x::pwned",
        )
        .with_related(file.clone(), TextRange::new(0, 5), "see \u{1b}[2J here");
        Report {
            diagnostics: vec![d],
            texts: BTreeMap::from([(file, text)]),
            files: 1,
            unchecked: Vec::new(),
        }
    }

    fn render(f: impl Fn(&Report, &mut dyn Write) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&hostile(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn human_output_is_inert() {
        let out = render(|r, w| human(r, false, w));
        let raw: Vec<char> = out.chars().filter(|&c| is_unsafe(c) && c != '\n').collect();
        assert!(raw.is_empty(), "raw {raw:?} in {out}");
        assert!(
            out.contains("a\\u{1b}[2J\\u{1b}]52;c;aGk=\\u{7}, b::c%.test.yaml"),
            "{out}"
        );
        assert!(
            out.contains("unknown key \\u{1b}]8;;http://evil\\u{7}key"),
            "{out}"
        );
        assert!(out.contains("see \\u{1b}[2J here"), "{out}");
        // The frame shows one picture per control character, so the caret stays under
        // `key` (column 2, after the picture of ESC).
        assert!(out.contains("␛[31mkey\u{fffd}1m\u{fffd}: 1"), "{out}");
        assert!(out.contains(":2:6"), "{out}");
        assert!(!out.lines().any(|l| l.starts_with("::error")), "{out}");
    }

    #[test]
    fn github_commands_cannot_be_injected() {
        let out = render(github);
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(!out.chars().any(is_unsafe_or_cr), "{out:?}");
        let (head, message) = out
            .trim_end()
            .split_once("::")
            .unwrap()
            .1
            .split_once("::")
            .unwrap();
        assert!(
            head.starts_with("error file=workflows/w/tests/a\\u{1b}[2J"),
            "{head}"
        );
        assert!(
            head.contains("%2C b%3A%3Ac%25.test.yaml,line=2,col=6"),
            "{head}"
        );
        // The line break is encoded, and the `::` after it neutralised as well (inert).
        assert!(
            message.contains("%0A\\u{3a}:error file=x::pwned"),
            "{message}"
        );
    }

    fn is_unsafe_or_cr(c: char) -> bool {
        is_unsafe(c) && c != '\n'
    }

    #[test]
    fn sarif_uris_are_percent_encoded() {
        let out = render(sarif);
        let v: Value = serde_json::from_str(&out).unwrap();
        let uri = v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert_eq!(
            uri,
            "workflows/w/tests/a%1B%5B2J%1B%5D52%3Bc%3BaGk%3D%07%2C%20b%3A%3Ac%25.test.yaml"
        );
        assert_eq!(sarif_uri("a/b c#?é"), "a/b%20c%23%3F%C3%A9");
    }
}
