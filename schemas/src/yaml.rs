//! The YAML span tree: saphyr-parser events become our own [`Node`] tree with byte ranges.
//!
//! This is the only module that names saphyr. Its markers are character indices; they are
//! converted here, once, to byte offsets by walking the text in step with the events, so
//! no `Marker` leaves this module. Scalars are resolved with the YAML 1.2 core schema (the
//! reference's `yaml` package default). The builder is iterative and bounded: nesting
//! deeper than [`MAX_DEPTH`] and alias expansion beyond [`MAX_ALIAS_NODES`] are reported as
//! issues instead of recursing or allocating without limit. It never panics.

use std::borrow::Cow;
use std::collections::BTreeMap;

use saphyr_parser::{Event, Parser, ScalarStyle as SaphyrStyle, Span, Tag};

use crate::text::TextRange;

/// Deepest nesting of collections the tree keeps; deeper content becomes `null` and a
/// [`YamlIssueKind::TooDeep`] issue.
pub const MAX_DEPTH: usize = 256;

/// Most nodes alias expansion may create in one stream before aliases stop expanding
/// ([`YamlIssueKind::AliasExpansion`]); defeats "billion laughs" alias bombs.
pub const MAX_ALIAS_NODES: usize = 10_000;

/// Longest text [`parse`] reads (8 MiB); longer text yields one
/// [`YamlIssueKind::TooLarge`] issue so that no file can stall an editor or `check`.
pub const MAX_BYTES: usize = 8 * 1024 * 1024;

/// How a scalar was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarStyle {
    /// Unquoted.
    Plain,
    /// `'…'`.
    SingleQuoted,
    /// `"…"`.
    DoubleQuoted,
    /// `|` block.
    Literal,
    /// `>` block.
    Folded,
}

/// A resolved YAML value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`, `~`, or an empty value.
    Null,
    /// `true` / `false` (any core-schema spelling).
    Bool(bool),
    /// An integer that fits `i64`.
    Int(i64),
    /// Any other number (including `.inf` and `.nan`).
    Float(f64),
    /// A string scalar, with its style.
    Str(String, ScalarStyle),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, entries in document order (duplicates kept; see [`YamlIssueKind::DuplicateKey`]).
    Map(Vec<Entry>),
}

/// A node with the byte range it was written at.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The resolved value.
    pub value: Value,
    /// Byte range of the node in the text (for a quoted scalar, the quotes included; for an
    /// empty value, an empty range where the value would start).
    pub range: TextRange,
}

/// One `key: value` pair of a mapping.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The key node (usually a string scalar).
    pub key: Node,
    /// The value node.
    pub value: Node,
}

impl Node {
    fn new(value: Value, range: TextRange) -> Self {
        Self { value, range }
    }

    /// The string if this is a string scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s, _) => Some(s),
            _ => None,
        }
    }

    /// The entries if this is a mapping.
    pub fn as_map(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The items if this is a sequence.
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    /// The first entry whose key is the string `key`.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.as_map()?.iter().find(|e| e.key.as_str() == Some(key))
    }

    /// The value of the first entry whose key is the string `key`.
    pub fn get_value(&self, key: &str) -> Option<&Node> {
        self.get(key).map(|e| &e.value)
    }

    /// The scalar's text as a key: strings as written, numbers/bools/null in their canonical
    /// YAML spelling. `None` for collections.
    pub fn scalar_text(&self) -> Option<Cow<'_, str>> {
        match &self.value {
            Value::Str(s, _) => Some(Cow::Borrowed(s)),
            Value::Null => Some(Cow::Borrowed("null")),
            Value::Bool(b) => Some(Cow::Owned(b.to_string())),
            Value::Int(i) => Some(Cow::Owned(i.to_string())),
            Value::Float(f) => Some(Cow::Owned(format_float(*f))),
            Value::Seq(_) | Value::Map(_) => None,
        }
    }

    /// A short name of the value's type for messages: `string`, `number`, `boolean`,
    /// `null`, `list`, `mapping`.
    pub fn type_name(&self) -> &'static str {
        match &self.value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) | Value::Float(_) => "number",
            Value::Str(..) => "string",
            Value::Seq(_) => "list",
            Value::Map(_) => "mapping",
        }
    }

    /// The node as JSON, the way the reference's YAML loader hands it to JavaScript:
    /// mappings keep key order, non-string keys become their scalar text, non-finite
    /// floats become `null` (JSON has no `Infinity`).
    pub fn to_json(&self) -> serde_json::Value {
        match &self.value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Float(f) => {
                serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into)
            }
            Value::Str(s, _) => serde_json::Value::String(s.clone()),
            Value::Seq(items) => items.iter().map(Node::to_json).collect(),
            Value::Map(entries) => {
                let mut m = serde_json::Map::new();
                for e in entries {
                    let k = e.key.scalar_text().map(Cow::into_owned).unwrap_or_default();
                    m.insert(k, e.value.to_json());
                }
                serde_json::Value::Object(m)
            }
        }
    }
}

fn format_float(f: f64) -> String {
    if f.is_nan() {
        ".nan".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        }
    } else {
        f.to_string()
    }
}

/// What went wrong while reading the YAML stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YamlIssueKind {
    /// The text is not YAML; parsing stopped here.
    Syntax,
    /// A mapping repeats a key; the issue sits on the second key, `related` on the first.
    DuplicateKey,
    /// Collections nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// Alias expansion stopped at [`MAX_ALIAS_NODES`].
    AliasExpansion,
    /// A mapping key that is a sequence or a mapping.
    ComplexKey,
    /// The text is longer than [`MAX_BYTES`]; it was not parsed.
    TooLarge,
}

/// A problem found while building the tree.
#[derive(Clone, Debug, PartialEq)]
pub struct YamlIssue {
    /// What kind of problem.
    pub kind: YamlIssueKind,
    /// Where it is (bytes).
    pub range: TextRange,
    /// Message in our words (lower case, no final period).
    pub message: String,
    /// The other site, e.g. the first occurrence of a duplicated key.
    pub related: Option<TextRange>,
}

/// The result of parsing a YAML stream.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    /// One root node per document; an empty stream yields no document.
    pub documents: Vec<Node>,
    /// Byte range of each document (from its first to its last byte, `---` included).
    pub document_ranges: Vec<TextRange>,
    /// Problems, in text order of discovery. On a syntax error `documents` holds what was
    /// complete before it.
    pub issues: Vec<YamlIssue>,
}

impl Parsed {
    /// True when a syntax error stopped the parse, or the text was too large to parse
    /// (either way there is no tree to check).
    pub fn has_syntax_error(&self) -> bool {
        self.issues
            .iter()
            .any(|i| matches!(i.kind, YamlIssueKind::Syntax | YamlIssueKind::TooLarge))
    }
}

/// Converts saphyr's character indices to byte offsets, walking forward or backward from
/// the last converted point so a monotone event stream costs linear time overall.
struct OffsetMap<'t> {
    text: &'t str,
    char_idx: usize,
    byte_idx: usize,
}

impl<'t> OffsetMap<'t> {
    fn new(text: &'t str) -> Self {
        Self {
            text,
            char_idx: 0,
            byte_idx: 0,
        }
    }

    fn byte(&mut self, char_index: usize) -> u32 {
        while self.char_idx < char_index {
            match self
                .text
                .get(self.byte_idx..)
                .and_then(|s| s.chars().next())
            {
                Some(c) => {
                    self.byte_idx += c.len_utf8();
                    self.char_idx += 1;
                }
                None => break,
            }
        }
        while self.char_idx > char_index {
            match self
                .text
                .get(..self.byte_idx)
                .and_then(|s| s.chars().next_back())
            {
                Some(c) => {
                    self.byte_idx -= c.len_utf8();
                    self.char_idx -= 1;
                }
                None => break,
            }
        }
        u32::try_from(self.byte_idx).unwrap_or(u32::MAX)
    }

    fn range(&mut self, span: &Span) -> TextRange {
        let s = self.byte(span.start.index());
        let e = self.byte(span.end.index());
        TextRange::new(s, e)
    }
}

enum Frame {
    Seq {
        items: Vec<Node>,
        start: u32,
        anchor: usize,
    },
    /// `seen`: each scalar key's text → the range of its first occurrence, so duplicate
    /// detection costs a map lookup per key instead of a scan of the entries (100,000 keys
    /// were quadratic).
    Map {
        entries: Vec<Entry>,
        pending_key: Option<Node>,
        seen: BTreeMap<String, TextRange>,
        start: u32,
        anchor: usize,
    },
}

/// Parses a YAML stream into span trees. Never panics; every failure becomes a
/// [`YamlIssue`] with a position.
///
/// Text longer than [`MAX_BYTES`] is not parsed: the result holds one
/// [`YamlIssueKind::TooLarge`] issue on the first line and no document.
pub fn parse(text: &str) -> Parsed {
    let mut out = Parsed::default();
    if text.len() > MAX_BYTES {
        let first_line = text.find('\n').unwrap_or(text.len()).min(MAX_BYTES);
        out.issues.push(YamlIssue {
            kind: YamlIssueKind::TooLarge,
            range: TextRange::new(0, u32::try_from(first_line).unwrap_or(0)),
            message: format!(
                "the file is {:.1} MiB; files over {} MiB are not checked (a case or workflow is a few kilobytes)",
                text.len() as f64 / (1024.0 * 1024.0),
                MAX_BYTES / (1024 * 1024)
            ),
            related: None,
        });
        return out;
    }
    let mut offsets = OffsetMap::new(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: BTreeMap<usize, Node> = BTreeMap::new();
    let mut alias_nodes = 0usize;
    let mut alias_reported = false;
    // Depth beyond MAX_DEPTH: count of collections being skipped.
    let mut skip_depth = 0usize;
    let mut doc_start = 0u32;
    let mut doc_root: Option<Node> = None;
    let mut last_end = 0u32;
    let parser = Parser::new_from_str(text);
    for item in parser {
        let (event, span) = match item {
            Ok(pair) => pair,
            Err(e) => {
                let at = offsets.byte(e.marker().index());
                let end = next_char_end(text, at);
                out.issues.push(YamlIssue {
                    kind: YamlIssueKind::Syntax,
                    range: TextRange::new(at, end),
                    message: syntax_message(e.info()),
                    related: None,
                });
                return out;
            }
        };
        let range = offsets.range(&span);
        if skip_depth > 0 {
            match event {
                Event::SequenceStart(..) | Event::MappingStart(..) => skip_depth += 1,
                Event::SequenceEnd | Event::MappingEnd => {
                    skip_depth -= 1;
                    if skip_depth == 0 {
                        let node = Node::new(Value::Null, range);
                        push_node(&mut stack, &mut doc_root, node, &mut out.issues);
                    }
                }
                _ => {}
            }
            continue;
        }
        match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing => {}
            Event::DocumentStart(_) => {
                doc_start = range.start;
                doc_root = None;
                anchors.clear();
            }
            Event::DocumentEnd => {
                let root = doc_root.take().unwrap_or(Node::new(Value::Null, range));
                last_end = last_end.max(root.range.end).max(range.end);
                out.document_ranges
                    .push(TextRange::new(doc_start, last_end));
                out.documents.push(root);
            }
            Event::Alias(id) => {
                let node = match anchors.get(&id) {
                    Some(target) => {
                        let count = count_nodes(target);
                        if alias_nodes + count > MAX_ALIAS_NODES {
                            if !alias_reported {
                                out.issues.push(YamlIssue {
                                    kind: YamlIssueKind::AliasExpansion,
                                    range,
                                    message: format!(
                                        "aliases expand to more than {MAX_ALIAS_NODES} nodes; expansion stopped here (an alias bomb?)"
                                    ),
                                    related: None,
                                });
                                alias_reported = true;
                            }
                            Node::new(Value::Null, range)
                        } else {
                            alias_nodes += count;
                            let mut n = target.clone();
                            n.range = range;
                            n
                        }
                    }
                    None => Node::new(Value::Null, range),
                };
                last_end = last_end.max(range.end);
                push_node(&mut stack, &mut doc_root, node, &mut out.issues);
            }
            Event::Scalar(value, style, anchor, tag) => {
                // In flow context saphyr ends a quoted scalar's span after the whitespace
                // that follows it (`{ a: "q" }`); a quoted scalar ends at its closing quote.
                let range = match style {
                    SaphyrStyle::DoubleQuoted | SaphyrStyle::SingleQuoted => {
                        trim_end_ws(text, range)
                    }
                    _ => range,
                };
                let node = Node::new(resolve_scalar(&value, style, tag.as_deref()), range);
                last_end = last_end.max(range.end);
                if anchor > 0 {
                    anchors.insert(anchor, node.clone());
                }
                push_node(&mut stack, &mut doc_root, node, &mut out.issues);
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    out.issues.push(YamlIssue {
                        kind: YamlIssueKind::TooDeep,
                        range: TextRange::new(range.start, next_char_end(text, range.start)),
                        message: format!(
                            "collections are nested deeper than {MAX_DEPTH} levels; the deeper content is ignored"
                        ),
                        related: None,
                    });
                    skip_depth = 1;
                    continue;
                }
                let is_seq = matches!(event, Event::SequenceStart(..));
                stack.push(if is_seq {
                    Frame::Seq {
                        items: Vec::new(),
                        start: range.start,
                        anchor,
                    }
                } else {
                    Frame::Map {
                        entries: Vec::new(),
                        pending_key: None,
                        seen: BTreeMap::new(),
                        start: range.start,
                        anchor,
                    }
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(frame) = stack.pop() else { continue };
                let (value, start, anchor, child_end) = match frame {
                    Frame::Seq {
                        items,
                        start,
                        anchor,
                    } => {
                        let end = items.last().map(|n| n.range.end);
                        (Value::Seq(items), start, anchor, end)
                    }
                    Frame::Map {
                        entries,
                        pending_key,
                        start,
                        anchor,
                        ..
                    } => {
                        let mut entries = entries;
                        let mut end = entries
                            .last()
                            .map(|e| e.value.range.end.max(e.key.range.end));
                        if let Some(key) = pending_key {
                            // A key with no value event (should not happen); keep it as null.
                            let k_end = key.range.end;
                            end = Some(k_end);
                            entries.push(Entry {
                                key,
                                value: Node::new(Value::Null, TextRange::empty(k_end)),
                            });
                        }
                        (Value::Map(entries), start, anchor, end)
                    }
                };
                // Flow collections end at their closing bracket; block ones at their last child.
                // saphyr's end span may run on over following whitespace (`{ b: [x] }`).
                let closing = trim_end_ws(text, range);
                let closing_text = text.get(closing.as_usize());
                let mut end = if closing_text.is_some_and(|s| s == "]" || s == "}") {
                    closing.end
                } else {
                    child_end.unwrap_or(range.start).max(start)
                };
                // Inside another flow collection saphyr's end span does not cover the
                // closing bracket; find it after the last child (blanks, commas, comments).
                let opener = text.get(start as usize..).and_then(|s| s.chars().next());
                if !closing_text.is_some_and(|s| s == "]" || s == "}")
                    && matches!(opener, Some('[' | '{'))
                {
                    let want = if opener == Some('[') { ']' } else { '}' };
                    let from = child_end.unwrap_or(start + 1).max(start + 1);
                    let mut in_comment = false;
                    for (i, c) in text.get(from as usize..).unwrap_or("").char_indices() {
                        if in_comment {
                            in_comment = c != '\n';
                            continue;
                        }
                        match c {
                            '#' => in_comment = true,
                            ' ' | '\t' | '\r' | '\n' | ',' => {}
                            c if c == want => {
                                end = from + u32::try_from(i).unwrap_or(0) + 1;
                                break;
                            }
                            _ => break,
                        }
                    }
                }
                let node = Node::new(value, TextRange::new(start, end));
                last_end = last_end.max(end);
                if anchor > 0 {
                    anchors.insert(anchor, node.clone());
                }
                push_node(&mut stack, &mut doc_root, node, &mut out.issues);
            }
        }
    }
    out
}

/// Our wording of a saphyr scan error. saphyr counts flow nesting in a `u8`, so a 256th
/// level of `[`/`{` stops the scan with "recursion limit exceeded"; say what that means.
fn syntax_message(info: &str) -> String {
    if info == "recursion limit exceeded" {
        "invalid YAML: flow collections (`[…]`, `{…}`) are nested deeper than 255 levels".into()
    } else {
        format!("invalid YAML: {info}")
    }
}

/// `range` without trailing whitespace (never shorter than empty).
fn trim_end_ws(text: &str, range: TextRange) -> TextRange {
    match text.get(range.as_usize()) {
        Some(s) => {
            let cut = s.len() - s.trim_end().len();
            TextRange::new(
                range.start,
                range
                    .end
                    .saturating_sub(u32::try_from(cut).unwrap_or(0))
                    .max(range.start),
            )
        }
        None => range,
    }
}

fn next_char_end(text: &str, at: u32) -> u32 {
    let len = text
        .get(at as usize..)
        .and_then(|s| s.chars().next())
        .map_or(0, char::len_utf8);
    at + u32::try_from(len).unwrap_or(0)
}

fn count_nodes(node: &Node) -> usize {
    // Iterative, so a deep tree cannot overflow the stack.
    let mut count = 0usize;
    let mut todo = vec![node];
    while let Some(n) = todo.pop() {
        count += 1;
        match &n.value {
            Value::Seq(items) => todo.extend(items.iter()),
            Value::Map(entries) => {
                for e in entries {
                    todo.push(&e.key);
                    todo.push(&e.value);
                }
            }
            _ => {}
        }
    }
    count
}

fn push_node(
    stack: &mut [Frame],
    root: &mut Option<Node>,
    node: Node,
    issues: &mut Vec<YamlIssue>,
) {
    match stack.last_mut() {
        None => *root = Some(node),
        Some(Frame::Seq { items, .. }) => items.push(node),
        Some(Frame::Map {
            entries,
            pending_key,
            seen,
            ..
        }) => match pending_key.take() {
            None => {
                if matches!(node.value, Value::Seq(_) | Value::Map(_)) {
                    issues.push(YamlIssue {
                        kind: YamlIssueKind::ComplexKey,
                        range: node.range,
                        message: "a mapping key must be a scalar, not a list or a mapping".into(),
                        related: None,
                    });
                } else if let Some(text) = node.scalar_text() {
                    match seen.get(&*text) {
                        Some(first) => issues.push(YamlIssue {
                            kind: YamlIssueKind::DuplicateKey,
                            range: node.range,
                            message: format!(
                                "duplicate key `{text}`; the first occurrence is kept"
                            ),
                            related: Some(*first),
                        }),
                        None => {
                            seen.insert(text.into_owned(), node.range);
                        }
                    }
                }
                *pending_key = Some(node);
            }
            Some(key) => entries.push(Entry { key, value: node }),
        },
    }
}

/// Resolves a scalar with the YAML 1.2 core schema; quoted and block scalars are strings.
fn resolve_scalar(value: &str, style: SaphyrStyle, tag: Option<&Tag>) -> Value {
    let our_style = match style {
        SaphyrStyle::Plain => ScalarStyle::Plain,
        SaphyrStyle::SingleQuoted => ScalarStyle::SingleQuoted,
        SaphyrStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
        SaphyrStyle::Literal => ScalarStyle::Literal,
        SaphyrStyle::Folded => ScalarStyle::Folded,
    };
    if let Some(tag) = tag
        && (tag.handle == "tag:yaml.org,2002:" || tag.handle == "!!")
    {
        match tag.suffix.as_str() {
            "str" => return Value::Str(value.to_owned(), our_style),
            "null" => return Value::Null,
            "bool" | "int" | "float" => return resolve_plain(value, our_style),
            _ => {}
        }
    }
    if our_style != ScalarStyle::Plain {
        return Value::Str(value.to_owned(), our_style);
    }
    resolve_plain(value, our_style)
}

fn resolve_plain(v: &str, style: ScalarStyle) -> Value {
    match v {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Value::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Value::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Value::Float(f64::NAN),
        _ => {}
    }
    if let Some(hex) = v.strip_prefix("0x")
        && !hex.is_empty()
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return int_or_float(i64::from_str_radix(hex, 16).ok(), v);
    }
    if let Some(oct) = v.strip_prefix("0o")
        && !oct.is_empty()
        && oct.bytes().all(|b| (b'0'..=b'7').contains(&b))
    {
        return int_or_float(i64::from_str_radix(oct, 8).ok(), v);
    }
    let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return match v.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => v
                .parse::<f64>()
                .map_or(Value::Str(v.to_owned(), style), Value::Float),
        };
    }
    if is_core_float(digits)
        && let Ok(f) = v.parse::<f64>()
    {
        return Value::Float(f);
    }
    Value::Str(v.to_owned(), style)
}

fn int_or_float(i: Option<i64>, raw: &str) -> Value {
    match i {
        Some(i) => Value::Int(i),
        None => Value::Str(raw.to_owned(), ScalarStyle::Plain),
    }
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?` without the sign.
fn is_core_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let int_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = b
            .get(i..)
            .map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
        i += frac_digits;
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        let exp = b
            .get(i..)
            .map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
        if exp == 0 {
            return false;
        }
        i += exp;
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(text: &str, r: TextRange) -> &str {
        &text[r.as_usize()]
    }

    #[test]
    fn flow_ranges_stop_at_closing_quotes_and_brackets() {
        let t = "a: { b: [x], c: \"q\" , d: 'r' }\nz: { e: [y] , f: {g: h} }\n";
        let p = parse(t);
        let root = &p.documents[0];
        let a = root.get_value("a").unwrap();
        assert_eq!(slice(t, a.get_value("c").unwrap().range), "\"q\"");
        assert_eq!(slice(t, a.get_value("d").unwrap().range), "'r'");
        let z = root.get_value("z").unwrap();
        assert_eq!(slice(t, z.get_value("e").unwrap().range), "[y]");
        assert_eq!(slice(t, z.get_value("f").unwrap().range), "{g: h}");
        assert_eq!(slice(t, z.range), "{ e: [y] , f: {g: h} }");
    }

    #[test]
    fn ranges_of_keys_and_values() {
        let text = "title: Hello\nsteps:\n  - send: \"hi\"\n  - reachedState: done\n";
        let p = parse(text);
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        let root = &p.documents[0];
        let title = root.get("title").unwrap();
        assert_eq!(slice(text, title.key.range), "title");
        assert_eq!(slice(text, title.value.range), "Hello");
        let steps = root.get_value("steps").unwrap().as_seq().unwrap();
        let send = &steps[0].as_map().unwrap()[0];
        assert_eq!(slice(text, send.value.range), "\"hi\"");
        assert_eq!(slice(text, steps[1].range), "reachedState: done");
        assert_eq!(
            slice(text, root.get_value("steps").unwrap().range),
            "- send: \"hi\"\n  - reachedState: done"
        );
    }

    #[test]
    fn scalar_resolution_follows_the_core_schema() {
        let p = parse("a: ~\nb: yes\nc: 0x1F\nd: 1.5e3\ne: '1'\nf: .inf\ng: 007\nh:\n");
        let r = &p.documents[0];
        assert_eq!(r.get_value("a").unwrap().value, Value::Null);
        assert_eq!(r.get_value("b").unwrap().as_str(), Some("yes"));
        assert_eq!(r.get_value("c").unwrap().value, Value::Int(31));
        assert_eq!(r.get_value("d").unwrap().value, Value::Float(1500.0));
        assert_eq!(r.get_value("e").unwrap().as_str(), Some("1"));
        assert_eq!(r.get_value("f").unwrap().value, Value::Float(f64::INFINITY));
        assert_eq!(r.get_value("g").unwrap().value, Value::Int(7));
        assert!(r.get_value("h").unwrap().is_null());
    }

    #[test]
    fn duplicate_keys_report_both_sites() {
        let text = "a: 1\nb: 2\na: 3\n";
        let p = parse(text);
        let dup = &p.issues[0];
        assert_eq!(dup.kind, YamlIssueKind::DuplicateKey);
        assert_eq!(dup.range, TextRange::new(10, 11));
        assert_eq!(dup.related, Some(TextRange::new(0, 1)));
    }

    #[test]
    fn multibyte_text_gets_byte_ranges() {
        let text = "t: \"注文 😀\"\nx: →\n";
        let p = parse(text);
        let r = &p.documents[0];
        assert_eq!(slice(text, r.get_value("t").unwrap().range), "\"注文 😀\"");
        assert_eq!(slice(text, r.get_value("x").unwrap().range), "→");
    }

    #[test]
    fn crlf_and_tabs_in_values() {
        let text = "a: 1\r\nb:\r\n  - x\r\n";
        let p = parse(text);
        assert!(p.issues.is_empty());
        assert_eq!(
            slice(
                text,
                p.documents[0].get_value("b").unwrap().as_seq().unwrap()[0].range
            ),
            "x"
        );
        let tab = parse("a:\n\t- x\n");
        assert!(tab.has_syntax_error());
    }

    #[test]
    fn syntax_error_has_a_position() {
        let text = "a: [1, 2\nb: 3\n";
        let p = parse(text);
        assert!(p.has_syntax_error());
        let e = p.issues.last().unwrap();
        assert!(e.range.start as usize <= text.len());
    }

    #[test]
    fn aliases_resolve_and_bombs_are_bounded() {
        let p = parse("base: &b {x: 1}\nuse: *b\n");
        assert_eq!(
            p.documents[0]
                .get_value("use")
                .unwrap()
                .get_value("x")
                .unwrap()
                .value,
            Value::Int(1)
        );
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for c in 'b'..='j' {
            bomb.push_str(&format!("{c}: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
            prev = c;
        }
        let p = parse(&bomb);
        assert!(
            p.issues
                .iter()
                .any(|i| i.kind == YamlIssueKind::AliasExpansion)
        );
    }

    #[test]
    fn text_over_the_size_limit_is_not_parsed() {
        let mut text = String::from("title: big\nsteps:\n");
        while text.len() <= MAX_BYTES {
            text.push_str("  - send: hello there\n");
        }
        let p = parse(&text);
        assert!(p.documents.is_empty());
        assert!(p.has_syntax_error());
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].kind, YamlIssueKind::TooLarge);
        // It sits on the first line.
        assert_eq!(p.issues[0].range, TextRange::new(0, 10));
        // One byte under the limit parses.
        text.truncate(MAX_BYTES - 200);
        let cut = text.rfind('\n').unwrap() + 1;
        text.truncate(cut);
        let p = parse(&text);
        assert!(p.issues.is_empty(), "{:?}", p.issues.first());
        assert_eq!(p.documents.len(), 1);
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let text = "[".repeat(10_000) + &"]".repeat(10_000);
        let p = parse(&text);
        // saphyr's own recursion limit stops flow nesting with a positioned syntax error.
        assert!(
            p.issues
                .iter()
                .any(|i| i.kind == YamlIssueKind::Syntax && i.range.start > 0)
        );
        let text = "a:\n".to_owned() + &"- ".repeat(300) + "x\n";
        let p = parse(&text);
        assert!(
            p.issues.iter().any(|i| i.kind == YamlIssueKind::TooDeep),
            "{:?}",
            p.issues
        );
        let text = (0..2000)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect::<String>();
        let p = parse(&text);
        assert!(
            p.issues
                .iter()
                .any(|i| i.kind == YamlIssueKind::TooDeep || i.kind == YamlIssueKind::Syntax)
        );
    }

    #[test]
    fn multiple_documents() {
        let p = parse("a: 1\n---\nb: 2\n");
        assert_eq!(p.documents.len(), 2);
        assert_eq!(p.document_ranges.len(), 2);
        assert_eq!(parse("").documents.len(), 0);
        assert_eq!(parse("# only a comment\n").documents.len(), 0);
    }

    #[test]
    fn to_json_keeps_order_and_types() {
        let p = parse("b: 1\na: [true, null, x]\n");
        assert_eq!(
            p.documents[0].to_json().to_string(),
            r#"{"b":1,"a":[true,null,"x"]}"#
        );
    }
}
