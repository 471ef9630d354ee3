//! Cassettes in the editor (issue 15 item 8; the format is docs/cassettes.md): the edits a
//! state rename makes in a cassette, and the hover and code lenses of an open
//! `*.cassette.json` (recorded when, which model, calls, tokens, stale).
//!
//! A rename rewrites only structured data that names the state, never prose: an
//! interaction's `state`, the `to` argument of a recorded `archmax_advance` call (in the
//! model's responses and in the assistant messages of later requests), and the simulator's
//! own result of such a call ([`wfx_runner::sim::advanced_message`]), whose text the replay
//! compares. Recorded system prompts, tool declarations and everything the model or a
//! person wrote keep the old name: a replay after the rename warns of prompt drift (an
//! error with `--strict-cassettes`), which is the truth: the model saw the old name.
//!
//! Must not: read any file but through `Doc::fs`, or work past [`MAX_DEPTH`] levels of
//! JSON nesting or [`wfx_schemas::cassette::MAX_BYTES`] bytes of cassette.

use std::collections::{BTreeMap, BTreeSet};

use wfx_schemas::cassette::{self, Cassette, InteractionRole, RecordedToolCall};
use wfx_schemas::diagnostics::TextEdit;
use wfx_schemas::files::FileAccess;
use wfx_schemas::rules::cassette::{case_of_cassette, stale};
use wfx_schemas::text::TextRange;
use wfx_schemas::workspace::{FileKind, classify};

use super::markdown::{code, text};
use super::{Doc, Hover};

/// Deepest JSON nesting the scanner follows (a cassette nests about 8 levels; tool
/// arguments may nest more). Deeper text is an error, never a stack overflow.
pub const MAX_DEPTH: usize = 128;

/// The tool whose `to` argument names a state (FORMAT §E.5).
const ADVANCE: &str = "archmax_advance";

/// One step of a JSON path: an object key or an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// What a scanned JSON value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A string; its range is the content between the quotes.
    Str,
    /// A number, `true`, `false` or `null`.
    Scalar,
    /// An object or an array, brackets included.
    Container,
}

/// A bounded, span-keeping walk over JSON text: calls `visit(path, kind, range, decoded)`
/// for every value after its children (`decoded` for strings only). Bytes are visited at
/// most once each, nesting stops at [`MAX_DEPTH`]. Errors name the byte offset.
struct Scanner<'a> {
    text: &'a str,
    i: usize,
    path: Vec<Seg>,
}

type Visit<'v> = dyn FnMut(&[Seg], Kind, TextRange, Option<&str>) + 'v;

fn range(start: usize, end: usize) -> TextRange {
    TextRange::new(
        u32::try_from(start).unwrap_or(u32::MAX),
        u32::try_from(end).unwrap_or(u32::MAX),
    )
}

impl<'a> Scanner<'a> {
    fn scan(text: &'a str, visit: &mut Visit<'_>) -> Result<(), String> {
        let mut s = Scanner {
            text,
            i: 0,
            path: Vec::new(),
        };
        s.value(0, visit)
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn fail(&self, what: &str) -> String {
        format!("JSON: {what} at byte {}", self.i)
    }

    /// A string at `self.i` (on its opening quote): its decoded text and content range.
    fn string(&mut self) -> Result<(String, TextRange), String> {
        let open = self.i;
        self.i += 1;
        let bytes = self.text.as_bytes();
        let mut escaped = false;
        loop {
            match bytes.get(self.i) {
                None => return Err(self.fail("unterminated string")),
                Some(b'\\') => {
                    escaped = true;
                    self.i += 2;
                }
                Some(b'"') => break,
                Some(_) => self.i += 1,
            }
        }
        let close = self.i;
        self.i += 1;
        let raw = self.text.get(open..=close).ok_or("JSON: bad string")?;
        let decoded = if escaped {
            serde_json::from_str::<String>(raw).map_err(|e| format!("JSON: {e}"))?
        } else {
            raw.get(1..raw.len() - 1).unwrap_or("").to_owned()
        };
        Ok((decoded, range(open + 1, close)))
    }

    fn value(&mut self, depth: usize, visit: &mut Visit<'_>) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(self.fail(&format!("nested deeper than {MAX_DEPTH} levels")));
        }
        self.ws();
        let start = self.i;
        match self.peek() {
            Some(b'{') => {
                self.i += 1;
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        if self.peek() != Some(b'"') {
                            return Err(self.fail("expected a key"));
                        }
                        let (key, _) = self.string()?;
                        self.ws();
                        if self.peek() != Some(b':') {
                            return Err(self.fail("expected `:`"));
                        }
                        self.i += 1;
                        self.path.push(Seg::Key(key));
                        self.value(depth + 1, visit)?;
                        self.path.pop();
                        self.ws();
                        match self.peek() {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(self.fail("expected `,` or `}`")),
                        }
                    }
                }
                visit(&self.path, Kind::Container, range(start, self.i), None);
            }
            Some(b'[') => {
                self.i += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                } else {
                    let mut n = 0;
                    loop {
                        self.path.push(Seg::Index(n));
                        self.value(depth + 1, visit)?;
                        self.path.pop();
                        n += 1;
                        self.ws();
                        match self.peek() {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(self.fail("expected `,` or `]`")),
                        }
                    }
                }
                visit(&self.path, Kind::Container, range(start, self.i), None);
            }
            Some(b'"') => {
                let (s, r) = self.string()?;
                visit(&self.path, Kind::Str, r, Some(&s));
            }
            Some(_) => {
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.i += 1;
                }
                if self.i == start {
                    return Err(self.fail("expected a value"));
                }
                visit(&self.path, Kind::Scalar, range(start, self.i), None);
            }
            None => return Err(self.fail("expected a value")),
        }
        Ok(())
    }
}

/// A path as written in `want` lists: keys, and indices as decimal text.
fn path_key(path: &[Seg]) -> Vec<String> {
    path.iter()
        .map(|s| match s {
            Seg::Key(k) => k.clone(),
            Seg::Index(n) => n.to_string(),
        })
        .collect()
}

/// The deepest path and the longest key among a set of wanted paths: a scanned path
/// deeper than the one, or with a key longer than the other, equals none of them. Checked
/// before [`path_key`] copies a path, so the copying is bounded by the wanted paths (at most
/// 9 segments of at most 12 bytes), not by the cassette: a 7.9 MB cassette with 240,000
/// strings equal to the old name under 100 nested 40 KB keys cost a rename 69 CPU s when
/// every such path was copied (docs/security.md, F1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct PathShape {
    /// Segments of the deepest wanted path.
    depth: usize,
    /// Bytes of the longest wanted key.
    key_bytes: usize,
}

impl PathShape {
    fn of<'k>(paths: impl Iterator<Item = &'k Vec<String>>) -> PathShape {
        paths.fold(PathShape::default(), |acc, p| PathShape {
            depth: acc.depth.max(p.len()),
            key_bytes: p.iter().map(String::len).fold(acc.key_bytes, usize::max),
        })
    }

    /// Whether `path` may equal a wanted path: O(its depth) with no allocation, and O(1)
    /// for a path deeper than every wanted one.
    fn admits(&self, path: &[Seg]) -> bool {
        path.len() <= self.depth
            && path.iter().all(|s| match s {
                Seg::Key(k) => k.len() <= self.key_bytes,
                Seg::Index(_) => true,
            })
    }
}

fn p(parts: &[&dyn ToString]) -> Vec<String> {
    parts.iter().map(|x| x.to_string()).collect()
}

/// The `archmax_advance` calls among `calls` whose `to` is `state`: (index, id).
fn advances_to<'c>(
    calls: &'c [RecordedToolCall],
    state: &'c str,
) -> impl Iterator<Item = (usize, &'c str)> + 'c {
    calls.iter().enumerate().filter_map(move |(m, c)| {
        (c.name == ADVANCE
            && c.arguments.get("to").and_then(serde_json::Value::as_str) == Some(state))
        .then_some((m, c.id.as_str()))
    })
}

/// The JSON string content (no quotes) that spells `s`.
fn json_content(s: &str) -> String {
    let q = serde_json::to_string(s).unwrap_or_default();
    q.get(1..q.len().saturating_sub(1)).unwrap_or("").to_owned()
}

/// The edits renaming state `old` to `new` in the cassette at `path` (text `text`), in
/// bytes of `text`, in document order: every interaction `state` equal to `old`; the `to`
/// argument of each `archmax_advance` call to `old`, in responses and in request messages;
/// and each tool result answering such a call whose content is exactly
/// [`wfx_runner::sim::advanced_message`]`(old)`. Nothing else (module docs). Errors: the
/// text is not a cassette [`cassette::parse`] accepts (the message says why).
pub(crate) fn rename_state(
    path: &str,
    text: &str,
    old: &str,
    new: &str,
) -> Result<Vec<TextEdit>, String> {
    let c = cassette::parse(text).map_err(|e| e.to_string())?;
    let mut want: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut ids: BTreeSet<&str> = BTreeSet::new();
    let to = |x: &[&dyn ToString]| p(x);
    for (i, it) in c.interactions.iter().enumerate() {
        if it.state.as_deref() == Some(old) {
            want.insert(to(&[&"interactions", &i, &"state"]), new.to_owned());
        }
        for (m, id) in advances_to(&it.response.tool_calls, old) {
            ids.insert(id);
            want.insert(
                to(&[
                    &"interactions",
                    &i,
                    &"response",
                    &"toolCalls",
                    &m,
                    &"arguments",
                    &"to",
                ]),
                new.to_owned(),
            );
        }
        for (k, msg) in it.request.messages.iter().enumerate() {
            for (m, id) in advances_to(&msg.tool_calls, old) {
                ids.insert(id);
                want.insert(
                    to(&[
                        &"interactions",
                        &i,
                        &"request",
                        &"messages",
                        &k,
                        &"toolCalls",
                        &m,
                        &"arguments",
                        &"to",
                    ]),
                    new.to_owned(),
                );
            }
        }
    }
    let old_result = wfx_runner::sim::advanced_message(old);
    for (i, it) in c.interactions.iter().enumerate() {
        for (k, msg) in it.request.messages.iter().enumerate() {
            if msg.role == cassette::MessageRole::Tool
                && msg
                    .tool_call_id
                    .as_deref()
                    .is_some_and(|id| ids.contains(id))
                && msg.content.as_deref() == Some(old_result.as_str())
            {
                want.insert(
                    to(&[&"interactions", &i, &"request", &"messages", &k, &"content"]),
                    wfx_runner::sim::advanced_message(new),
                );
            }
        }
    }
    if want.is_empty() {
        return Ok(Vec::new());
    }
    let mut edits = Vec::new();
    let shape = PathShape::of(want.keys());
    Scanner::scan(text, &mut |at, kind, r, decoded| {
        if kind != Kind::Str
            || !(decoded == Some(old) || decoded == Some(old_result.as_str()))
            || !shape.admits(at)
        {
            return;
        }
        let key = path_key(at);
        if let Some(new_value) = want.get(&key) {
            edits.push(TextEdit {
                file: path.to_owned(),
                range: r,
                new_text: json_content(new_value),
            });
        }
    })?;
    edits.sort_by_key(|e| e.range.start);
    Ok(edits)
}

/// What the hover and lenses of a cassette say about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CassetteInfo {
    /// `recordedAt` (RFC 3339, UTC).
    pub recorded_at: String,
    /// The recording's model id.
    pub model: String,
    /// The endpoint's host (and port).
    pub endpoint: String,
    /// Agent, judge and rubric calls recorded.
    pub calls: (usize, usize, usize),
    /// Prompt, completion and cached tokens recorded, summed.
    pub tokens: (u64, u64, u64),
    /// Why the cassette is stale (`WFX454`'s message: the case or `workflow.yaml` changed
    /// since the recording), or `None` when both digests match.
    pub stale: Option<String>,
    /// The case it belongs to (workspace-relative), when that file exists.
    pub case: Option<String>,
}

/// Reads the cassette at `path` (a `tests/**/*.cassette.json` of a workflow) from its
/// buffer `text`; staleness is [`stale`], the rule behind `WFX454` (docs/cassettes.md).
/// `None` when the text is not a cassette (its diagnostics say why) or the path is not a
/// workflow's cassette.
pub fn info(fs: &dyn FileAccess, path: &str, text: &str) -> Option<CassetteInfo> {
    let FileKind::Cassette(dir) = classify(path) else {
        return None;
    };
    let c = cassette::parse(text).ok()?;
    Some(info_of(fs, &dir, path, &c))
}

fn info_of(
    fs: &dyn FileAccess,
    dir: &wfx_schemas::workspace::WorkflowDir,
    path: &str,
    c: &Cassette,
) -> CassetteInfo {
    let count = |r: InteractionRole| c.interactions.iter().filter(|i| i.role == r).count();
    let u = c.total_usage();
    CassetteInfo {
        recorded_at: c.recorded_at.clone(),
        model: c.model.clone(),
        endpoint: c.endpoint.clone(),
        calls: (
            count(InteractionRole::Agent),
            count(InteractionRole::Judge),
            count(InteractionRole::Rubric),
        ),
        tokens: (u.prompt_tokens, u.completion_tokens, u.cached_tokens),
        stale: stale(fs, dir, path, c),
        case: case_of_cassette(fs, path).filter(|p| fs.is_file(p)),
    }
}

/// `1234567` → `1,234,567`.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, ch) in s.chars().enumerate() {
        if k > 0 && (s.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

impl CassetteInfo {
    /// `7 calls (6 agent, 1 judge)`.
    pub fn calls_text(&self) -> String {
        let (a, j, r) = self.calls;
        let mut parts = vec![format!("{a} agent")];
        if j > 0 {
            parts.push(format!("{j} judge"));
        }
        if r > 0 {
            parts.push(format!("{r} rubric"));
        }
        let n = a + j + r;
        format!(
            "{n} call{} ({})",
            if n == 1 { "" } else { "s" },
            parts.join(", ")
        )
    }

    /// `5,187 tokens`: prompt plus completion tokens.
    pub fn tokens_text(&self) -> String {
        format!(
            "{} tokens",
            thousands(self.tokens.0.saturating_add(self.tokens.1))
        )
    }

    /// The summary lens title: `recorded 2026-12-03T08:52:53Z · m · 7 calls (6 agent, 1
    /// judge) · 5,187 tokens`.
    pub fn lens_title(&self) -> String {
        format!(
            "recorded {} · {} · {} · {}",
            self.recorded_at,
            self.model,
            self.calls_text(),
            self.tokens_text()
        )
    }

    /// The freshness lens title: `⚠ stale: …` or `✔ matches the case and workflow.yaml`.
    pub fn freshness_title(&self) -> String {
        match &self.stale {
            Some(why) => format!(
                "⚠ {}",
                why.strip_prefix("stale cassette: ")
                    .map_or_else(|| why.clone(), |w| format!("stale: {w}"))
            ),
            None => "✔ recorded from the case and workflow.yaml as they are now".into(),
        }
    }

    /// The hover card's Markdown.
    pub fn markdown(&self) -> String {
        let (p, c, cached) = self.tokens;
        let mut md = format!(
            "**cassette** recorded {} with model {} at {}\n\n- {}\n- tokens: {} prompt ({} cached) + {} completion\n",
            code(&self.recorded_at),
            code(&self.model),
            code(&self.endpoint),
            self.calls_text(),
            thousands(p),
            thousands(cached),
            thousands(c),
        );
        match &self.stale {
            Some(why) => md.push_str(&format!("- ⚠ {}\n", text(why))),
            None => md
                .push_str("- up to date: the case and `workflow.yaml` are as they were recorded\n"),
        }
        md.push_str(
            "\nReplayed by `wfx-lsp test` (no network, no key); re-record with `wfx-lsp test --live --record all`.",
        );
        md
    }
}

/// The hover on a cassette at byte `offset`: inside an interaction, that call (seq, role,
/// run, call, step, state, model, tool calls, finish reason, tokens) above the cassette's
/// card ([`CassetteInfo::markdown`]); elsewhere the card alone. The range is the hovered
/// string or scalar, else the interaction, else the whole text. `None` when the text is
/// not a cassette.
pub fn hover(doc: &Doc<'_>, offset: u32) -> Option<Hover> {
    let FileKind::Cassette(dir) = classify(doc.path) else {
        return None;
    };
    let c = cassette::parse(doc.text).ok()?;
    let card = info_of(doc.fs, &dir, doc.path, &c).markdown();
    let mut token: Option<TextRange> = None;
    let mut interaction: Option<(usize, TextRange)> = None;
    // The text parsed, so the scan succeeds; an error would only lose the ranges.
    let _ = Scanner::scan(doc.text, &mut |path, kind, r, _| {
        if !r.contains_inclusive(offset) {
            return;
        }
        match (path, kind) {
            ([Seg::Key(k), Seg::Index(n)], Kind::Container) if k == "interactions" => {
                interaction = Some((*n, r));
            }
            (_, Kind::Str | Kind::Scalar) if token.is_none_or(|t| t.len() > r.len()) => {
                token = Some(r);
            }
            _ => {}
        }
    });
    let mut md = String::new();
    if let Some(it) = interaction.and_then(|(n, _)| c.interactions.get(n)) {
        let role = match it.role {
            InteractionRole::Agent => "agent",
            InteractionRole::Judge => "judge",
            InteractionRole::Rubric => "rubric",
        };
        md.push_str(&format!(
            "**interaction {}** ({role}): run {}, call {}",
            it.seq, it.run, it.call
        ));
        if let Some(s) = it.step {
            md.push_str(&format!(", step {s}"));
        }
        if let Some(s) = &it.state {
            md.push_str(&format!(", state {}", code(s)));
        }
        md.push_str(&format!("\n\n- model {}", code(&it.request.model)));
        if !it.response.tool_calls.is_empty() {
            let names: Vec<String> = it
                .response
                .tool_calls
                .iter()
                .map(|t| code(&t.name))
                .collect();
            md.push_str(&format!("\n- called {}", names.join(", ")));
        }
        if let Some(f) = &it.response.finish_reason {
            md.push_str(&format!("\n- finish reason {}", code(f)));
        }
        if let Some(u) = it.response.usage {
            md.push_str(&format!(
                "\n- tokens: {} prompt + {} completion",
                thousands(u.prompt_tokens),
                thousands(u.completion_tokens)
            ));
        }
        md.push_str("\n\n---\n\n");
    }
    md.push_str(&card);
    let whole = range(0, doc.text.len());
    Some(Hover {
        range: token.or(interaction.map(|(_, r)| r)).unwrap_or(whole),
        markdown: md,
    })
}

/// One code lens on a cassette, at the top of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CassetteLens {
    /// Where it sits (the `recordedAt` key, else the start of the text).
    pub range: TextRange,
    /// The title.
    pub title: String,
    /// For the "▶ Replay case (cassette)" lens: the case to run (workspace-relative).
    pub run_case: Option<String>,
}

/// The lenses of an open cassette: the summary ([`CassetteInfo::lens_title`]), the
/// freshness (stale per `WFX454`, or up to date), and "▶ Replay case (cassette)" when the
/// case exists. Empty when the text is not a cassette.
pub fn lenses(doc: &Doc<'_>) -> Vec<CassetteLens> {
    let Some(i) = info(doc.fs, doc.path, doc.text) else {
        return Vec::new();
    };
    let at = doc
        .text
        .find("\"recordedAt\"")
        .map_or(range(0, 0), |s| range(s, s + "\"recordedAt\"".len()));
    let mut out = vec![
        CassetteLens {
            range: at,
            title: i.lens_title(),
            run_case: None,
        },
        CassetteLens {
            range: at,
            title: i.freshness_title(),
            run_case: None,
        },
    ];
    if let Some(case) = &i.case {
        out.push(CassetteLens {
            range: at,
            title: "▶ Replay case (cassette)".into(),
            run_case: Some(case.clone()),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scanner_reports_string_contents_with_paths_and_escapes() {
        let text = r#"{"a": [1, "x\"y", {"b": "c"}], "d": null}"#;
        let mut got = Vec::new();
        Scanner::scan(text, &mut |path, kind, r, s| {
            got.push(format!(
                "{} {kind:?} {:?} {:?}",
                path_key(path).join("."),
                &text[r.as_usize()],
                s
            ));
        })
        .unwrap();
        assert_eq!(
            got,
            [
                "a.0 Scalar \"1\" None",
                "a.1 Str \"x\\\\\\\"y\" Some(\"x\\\"y\")",
                "a.2.b Str \"c\" Some(\"c\")",
                "a.2 Container \"{\\\"b\\\": \\\"c\\\"}\" None",
                "a Container \"[1, \\\"x\\\\\\\"y\\\", {\\\"b\\\": \\\"c\\\"}]\" None",
                "d Scalar \"null\" None",
                " Container \"{\\\"a\\\": [1, \\\"x\\\\\\\"y\\\", {\\\"b\\\": \\\"c\\\"}], \\\"d\\\": null}\" None",
            ]
        );
    }

    #[test]
    fn scanner_refuses_deep_nesting_and_broken_text() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 2), "]".repeat(MAX_DEPTH + 2));
        let e = Scanner::scan(&deep, &mut |_, _, _, _| {}).unwrap_err();
        assert!(e.contains("nested deeper than 128"), "{e}");
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        Scanner::scan(&ok, &mut |_, _, _, _| {}).unwrap();
        for bad in [r#"{"a" 1}"#, r#"["x"#, "", r#"{"a": 1 "b": 2}"#] {
            assert!(Scanner::scan(bad, &mut |_, _, _, _| {}).is_err(), "{bad}");
        }
    }

    #[test]
    fn path_shape_admits_only_paths_as_deep_and_short_keyed_as_a_wanted_one() {
        let wanted = [p(&[&"interactions", &3, &"state"]), p(&[&"a", &"bb"])];
        let shape = PathShape::of(wanted.iter());
        assert_eq!(
            shape,
            PathShape {
                depth: 3,
                key_bytes: 12
            }
        );
        let key = |k: &str| Seg::Key(k.into());
        assert!(shape.admits(&[key("interactions"), Seg::Index(3), key("state")]));
        assert!(shape.admits(&[key("x")]));
        assert!(
            !shape.admits(&[key("a"), key("b"), key("c"), key("d")]),
            "deeper"
        );
        assert!(!shape.admits(&[key(&"k".repeat(13))]), "a longer key");
        assert!(
            !PathShape::of([].iter()).admits(&[key("a")]),
            "nothing wanted"
        );
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
