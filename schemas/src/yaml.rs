//! The YAML span tree: saphyr-parser events become our own [`Node`] tree with byte ranges.
//!
//! This is the only module that names saphyr. Its markers are character indices; they are
//! converted here, once, to byte offsets by walking the text in step with the events, so
//! no `Marker` leaves this module. Scalars are resolved with the YAML 1.2 core schema (the
//! reference's `yaml` package default). The builder is iterative and bounded: nesting
//! deeper than [`MAX_DEPTH`] and copies for anchors and aliases beyond [`MAX_ALIAS_NODES`]
//! nodes or [`MAX_ALIAS_BYTES`] bytes are reported as issues instead of recursing or
//! allocating without limit. It never panics.

use std::borrow::Cow;
use std::collections::BTreeMap;

use saphyr_parser::{Event, Parser, ScalarStyle as SaphyrStyle, Span, Tag};

use crate::text::TextRange;

/// Deepest nesting of collections the tree keeps; deeper content becomes `null` and a
/// [`YamlIssueKind::TooDeep`] issue.
pub const MAX_DEPTH: usize = 256;

/// Most nodes the builder may copy in one stream for anchors (the anchored node is kept
/// for its aliases) and alias expansions (each alias is a copy of its anchor's node)
/// before it stops ([`YamlIssueKind::AliasExpansion`]): our own backstop against "billion
/// laughs" alias bombs, above what [`MAX_ALIAS_COUNT`] lets through in any real file.
/// Charged before the copy is made, like [`MAX_ALIAS_BYTES`].
pub const MAX_ALIAS_NODES: usize = 200_000;

/// Most bytes of string scalars (values and keys, as resolved) the builder may copy in one
/// stream for anchors and alias expansions (8 MiB, [`MAX_BYTES`]: copies may at most
/// double what the largest file holds, as the passes after the parse copy the tree again
/// several times, 82 MB for 16 MiB of copies in `check`); the next copy is
/// refused with [`YamlIssueKind::AliasExpansion`] before it is made and the alias becomes
/// `null`. [`MAX_ALIAS_COUNT`] counts uses, not size: one 7.9 MB scalar aliased 99 times
/// is within the reference's count and would be 790 MB of tree, more in the passes that
/// walk it. Bounded memory (docs/security.md, alias bombs).
pub const MAX_ALIAS_BYTES: usize = MAX_BYTES;

/// The reference library's `maxAliasCount` (`yaml` 2.9.1 default, FORMAT "The YAML
/// library"): an alias whose anchor's use count times the anchor's alias weight exceeds
/// this refuses the document ([`YamlIssueKind::AliasExpansion`]), counted as the library
/// counts (see [`parse`]). Bounded work: the promise against alias bombs.
pub const MAX_ALIAS_COUNT: usize = 100;

/// Longest text [`parse`] reads (8 MiB); longer text yields one
/// [`YamlIssueKind::TooLarge`] issue so that no file can stall an editor or `check`.
pub const MAX_BYTES: usize = 8 * 1024 * 1024;

/// Most nodes (scalars, aliases, sequences and mappings, keys included) one stream may
/// hold. Past it parsing stops with one `TooLarge` issue (`WFX008`) and nothing of the file
/// is checked: bounded work and memory whatever the shape of an 8 MiB file (a 7.9 MB
/// `steps: [a, a, …]` is 2.6 million nodes). A real case or workflow holds a few thousand.
pub const MAX_NODES: usize = 500_000;

/// Most issues [`parse`] keeps; past it they are only counted
/// ([`Parsed::issues_left_out`]), so 1.6 million duplicate keys cost a counter, not 1.6
/// million messages (bounded memory).
pub const MAX_ISSUES: usize = 2_000;

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

    /// The key a JavaScript object gets for this node in the reference's loader (`yaml`
    /// 2.9.1 `stringifyKey`): `""` for null, JavaScript's `String(number)` for numbers
    /// (`Infinity`, `1e+21`), the scalar text otherwise; collections (refused as keys,
    /// `WFX005`) give `""`.
    pub fn js_key(&self) -> String {
        match &self.value {
            Value::Null => String::new(),
            Value::Float(f) => js_number(*f),
            _ => self.scalar_text().map(Cow::into_owned).unwrap_or_default(),
        }
    }

    /// The node as JSON, the way the reference's YAML loader hands it to JavaScript:
    /// mappings keep key order, keys become [`Node::js_key`], non-finite floats become
    /// `null` (JSON has no `Infinity`).
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
                    m.insert(e.key.js_key(), e.value.to_json());
                }
                serde_json::Value::Object(m)
            }
        }
    }
}

/// JavaScript's `String(number)`.
fn js_number(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if f == 0.0 {
        "0".into()
    } else if (1e-7..1e21).contains(&f.abs()) {
        f.to_string()
    } else {
        let e = format!("{f:e}");
        match e.split_once('e') {
            Some((m, x)) if !x.starts_with('-') => format!("{m}e+{x}"),
            _ => e,
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
    /// Aliases used more than the reference's library allows ([`MAX_ALIAS_COUNT`]), or
    /// copies for anchors and aliases stopped at [`MAX_ALIAS_NODES`] or [`MAX_ALIAS_BYTES`].
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
    /// Issues found past [`MAX_ISSUES`]: counted, not kept (duplicate and complex keys).
    pub issues_left_out: usize,
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

/// What the reference library's `getAliasCount` needs of a collection: whether it holds a
/// scalar anywhere (weight 1), and the anchors of the aliases inside it (not through
/// aliases). `refs` stays empty, so unallocated, in files without aliases.
#[derive(Default)]
struct Weight {
    scalar: bool,
    refs: Vec<usize>,
}

/// An anchored node and the library's bookkeeping for it (`anchors` in its `toJS` context):
/// how often it was aliased, and its alias weight, fixed at its first use; `size`, what one
/// copy of `node` costs, measured once when the anchor is defined.
struct Anchored {
    node: Node,
    weight: Weight,
    count: usize,
    alias_count: Option<usize>,
    size: Size,
}

/// The size of a subtree: its nodes, and the bytes of its string scalars (keys included).
#[derive(Clone, Copy, Default)]
struct Size {
    nodes: usize,
    bytes: usize,
}

/// What the builder has copied in one stream for anchors and aliases, against
/// [`MAX_ALIAS_NODES`] and [`MAX_ALIAS_BYTES`]. Once a copy is refused, `spent` stays set:
/// no later anchor is kept or measured (so measuring costs at most the bounds), later
/// aliases become `null`, and the document already holds the issue.
#[derive(Default)]
struct Copies {
    copied: Size,
    spent: bool,
}

impl Copies {
    /// Charges one copy of `size` before it is made; `Err(message)` (nothing charged, and
    /// `spent` set) when it would pass either bound.
    fn charge(&mut self, size: Size) -> Result<(), String> {
        let nodes = self.copied.nodes.saturating_add(size.nodes);
        let bytes = self.copied.bytes.saturating_add(size.bytes);
        if self.spent || nodes > MAX_ALIAS_NODES || bytes > MAX_ALIAS_BYTES {
            self.spent = true;
            return Err(format!(
                "anchors and aliases copy more than {MAX_ALIAS_NODES} nodes or {} MiB of text; expansion stopped here (an alias bomb?)",
                MAX_ALIAS_BYTES / (1024 * 1024)
            ));
        }
        self.copied = Size { nodes, bytes };
        Ok(())
    }

    /// Keeps a copy of `node`, anchored as `id`, for its aliases (`weight`: the library's
    /// bookkeeping of its content), once charged. `Err(message)` when the copy is refused;
    /// `Ok` without keeping it when an earlier copy was refused (already reported).
    fn anchor(
        &mut self,
        anchors: &mut BTreeMap<usize, Anchored>,
        id: usize,
        node: &Node,
        weight: Weight,
    ) -> Result<(), String> {
        if self.spent {
            return Ok(());
        }
        let size = size_of(node);
        self.charge(size)?;
        anchors.insert(
            id,
            Anchored {
                node: node.clone(),
                weight,
                count: 1,
                alias_count: None,
                size,
            },
        );
        Ok(())
    }
}

/// Reports a copy refused by an alias bound, once per stream (`reported`).
fn report_alias_bound(out: &mut Parsed, reported: &mut bool, range: TextRange, message: String) {
    if !*reported {
        out.issues.push(YamlIssue {
            kind: YamlIssueKind::AliasExpansion,
            range,
            message,
            related: None,
        });
        *reported = true;
    }
}

enum Frame {
    Seq {
        items: Vec<Node>,
        start: u32,
        anchor: usize,
        weight: Weight,
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
        weight: Weight,
    },
}

impl Frame {
    fn weight(&mut self) -> &mut Weight {
        match self {
            Frame::Seq { weight, .. } | Frame::Map { weight, .. } => weight,
        }
    }
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
    // Each parity check below finds nothing without the bytes its hint stands for: one
    // pass over the text decides which of them can run (docs/performance.md).
    let hints = Hints::of(text);
    let some = |run: bool, check: fn(&str) -> Option<YamlIssue>| {
        if run { check(text) } else { None }
    };
    if let Some(issue) = some(hints.cr_or_ef, stray_break_or_bom)
        .or_else(|| some(hints.line_dot, leading_document_end))
        .or_else(|| some(hints.line_dot, repeated_document_end))
        .or_else(|| some(hints.tab, final_tab_line_after_empty_node))
        .or_else(|| some(hints.tab, tab_line_after_empty_value))
    {
        out.issues.push(issue);
        return out;
    }
    let schema = if hints.line_percent {
        prologue(text)
    } else {
        Ok(Schema::Core)
    };
    let schema = match schema {
        Ok(schema) => schema,
        Err(issue) => {
            out.issues.push(issue);
            return out;
        }
    };
    // Text handed to saphyr: `text` with the few patches below, each keeping every
    // character's byte and character offset.
    let mut scan: Cow<'_, str> = Cow::Borrowed(text);
    for _ in 0..MAX_PATCHES {
        match parse_once(text, &scan, schema) {
            Ok(mut parsed) => {
                if hints.tab
                    && !parsed.has_syntax_error()
                    && let Some(issue) = tab_indentation(text, &parsed)
                {
                    parsed.issues.push(issue);
                }
                return parsed;
            }
            Err(patch) => {
                if !patch.apply(scan.to_mut()) {
                    return patch.parsed;
                }
            }
        }
    }
    match parse_once(text, &scan, schema) {
        Ok(parsed) | Err(Patch { parsed, .. }) => parsed,
    }
}

/// Which bytes the text holds, from one pass, so [`parse`] skips the parity checks that
/// cannot find anything: each flag is true whenever the text holds what it names (it may
/// be true without a finding, never false with one).
#[derive(Debug, PartialEq, Eq)]
struct Hints {
    /// A `\r`, or a `0xEF` byte (the first byte of U+FEFF's UTF-8): [`stray_break_or_bom`].
    cr_or_ef: bool,
    /// A tab: [`final_tab_line_after_empty_node`], [`tab_line_after_empty_value`],
    /// [`tab_indentation`].
    tab: bool,
    /// A line starting with `.` (the text's first or one after `\n`):
    /// [`leading_document_end`], [`repeated_document_end`] (both need a `...` at column 0).
    line_dot: bool,
    /// A line starting with `%`: [`prologue`] (a directive).
    line_percent: bool,
}

impl Hints {
    fn of(text: &str) -> Self {
        let b = text.as_bytes();
        // Branch-free folds over the bytes (and over each byte with the next), which the
        // compiler vectorises: no early exit, since most texts hold none of these.
        let (cr_or_ef, tab) = b.iter().fold((false, false), |(c, t), &x| {
            (c | (x == b'\r') | (x == 0xEF), t | (x == b'\t'))
        });
        let (dot, percent) = b.iter().zip(b.get(1..).unwrap_or_default()).fold(
            (false, false),
            |(d, p), (&x, &y)| {
                let nl = x == b'\n';
                (d | (nl & (y == b'.')), p | (nl & (y == b'%')))
            },
        );
        Hints {
            cr_or_ef,
            tab,
            line_dot: dot || b.first() == Some(&b'.'),
            line_percent: percent || b.first() == Some(&b'%'),
        }
    }
}

/// Most times [`parse`] patches saphyr's input and parses again (bounded work: a file
/// needing more keeps saphyr's syntax error; docs/yaml-parity.md).
const MAX_PATCHES: usize = 32;

/// A change to saphyr's input where saphyr is stricter than the reference's library
/// (`yaml` 2.9.1), keeping byte and character offsets: `parsed` is the result without it.
struct Patch {
    /// Byte range to overwrite with spaces (ASCII only).
    range: std::ops::Range<usize>,
    parsed: Parsed,
}

impl Patch {
    /// False when the range cannot be patched (not ASCII, or already blank).
    fn apply(&self, scan: &mut String) -> bool {
        match scan.get(self.range.clone()) {
            Some(part) if part.is_ascii() && part.bytes().any(|c| c != b' ') => {
                let spaces = " ".repeat(part.len());
                scan.replace_range(self.range.clone(), &spaces);
                true
            }
            _ => false,
        }
    }
}

/// Where saphyr refuses what the library accepts, the patch that makes saphyr agree:
/// - a tab right after a `:` value indicator (`key:\tvalue`): the library takes any blank
///   as separation; the tab becomes a space;
/// - a directive line in the prologue saphyr cannot read (a second `%YAML`, `% FOO`, a
///   malformed `%TAG`): the library only warns; the line becomes blank (the YAML version
///   is read by [`prologue`] from the original text);
/// - tabs in the leading blanks of a line inside a flow collection (`key: [\n\t a]`): the
///   library allows them there; the blanks become spaces (`in_flow`: a flow collection is
///   open where saphyr stopped);
/// - a closing bracket at the parent's column after a quoted scalar (`key: ["s"\n]`,
///   saphyr's "invalid indentation"): the line breaks and blanks before it become spaces,
///   unless a comment ends the line before;
/// - a comment line less indented than a block scalar's explicit indentation indicator
///   before any content (`k: |4\n\n  # c`): the library ends the scalar there; the comment
///   becomes spaces ([`blank_block_scalar`] then gives the library's value).
fn patch_for(scan: &str, at: usize, info: &str, in_flow: bool) -> Option<std::ops::Range<usize>> {
    let b = scan.as_bytes();
    if in_flow
        && (info == "while scanning a plain scalar, found a tab"
            || info == "tabs disallowed within this context (block indentation)")
    {
        // The leading blanks of the line holding `at`, tabs included.
        let start = scan
            .get(..at.min(scan.len()))?
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let lead =
            scan.get(start..)?.len() - scan.get(start..)?.trim_start_matches([' ', '\t']).len();
        let lead = &scan[start..start + lead];
        return lead.contains('\t').then(|| start..start + lead.len());
    }
    if info == "wrongly indented line in block scalar" && b.get(at) == Some(&b'#') {
        // A comment line less indented than an explicit indentation indicator, before any
        // content (`k: |4\n\n  # c`): the library ends the scalar there; blanked, the line
        // is one more blank line of it ([`blank_block_scalar`] gives the library's value).
        let line_start = scan.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
        let end = scan
            .get(at..)?
            .find(['\n', '\r'])
            .map_or(scan.len(), |i| at + i);
        let explicit = block_header(scan, at)
            .is_some_and(|(header, _)| header.bytes().any(|c| c.is_ascii_digit()));
        return (explicit && scan[line_start..at].bytes().all(|c| c == b' ')).then_some(at..end);
    }
    if in_flow && info == "invalid indentation" && matches!(b.get(at), Some(b']' | b'}')) {
        // The line breaks and blanks before the closing bracket, when no comment ends the
        // line before it.
        let before = scan.get(..at)?;
        let content = before.trim_end_matches([' ', '\t', '\r', '\n']);
        let line_start = content.rfind('\n').map_or(0, |i| i + 1);
        let gap = content.len()..at;
        return (!content[line_start..].contains('#') && scan[gap.clone()].contains('\n'))
            .then_some(gap);
    }
    if info == "':' must be followed by a valid YAML whitespace" {
        let colon = scan.get(..at.min(scan.len()))?.rfind(':')?;
        let tab = colon + 1 + scan.get(colon + 1..)?.find('\t')?;
        return (tab < at.max(colon + 2) && b.get(tab) == Some(&b'\t')).then_some(tab..tab + 1);
    }
    if info.contains("directive") || info.contains("while scanning TAG") {
        let start = scan
            .get(..at.min(scan.len()))?
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let end = scan
            .get(start..)?
            .find('\n')
            .map_or(scan.len(), |i| start + i);
        let line = scan.get(start..end)?;
        let prologue = scan.get(..start)?.lines().all(|l| {
            let l = l.trim_start_matches([' ', '\t']);
            l.is_empty() || l == "\r" || l.starts_with(['#', '%'])
        });
        return (line.starts_with('%') && line.is_ascii() && prologue)
            .then(|| start..end - usize::from(line.ends_with('\r')));
    }
    None
}

/// A `...` document-end marker before any content: the library reads an empty document
/// there, so anything after it is a second document ("Source contains multiple documents").
fn leading_document_end(text: &str) -> Option<YamlIssue> {
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n');
    for line in lines.by_ref() {
        let body = line.trim_end_matches(['\n', '\r']);
        let trimmed = body.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            offset += line.len();
            continue;
        }
        let marker =
            body.starts_with("...") && matches!(body.as_bytes().get(3), None | Some(b' ' | b'\t'));
        if !marker
            || body.get(3..).is_some_and(|r| {
                let r = r.trim_start_matches([' ', '\t']);
                !r.is_empty() && !r.starts_with('#')
            })
        {
            return None;
        }
        break;
    }
    let rest_has_content = lines.any(|l| {
        let t = l
            .trim_start_matches([' ', '\t'])
            .trim_end_matches(['\n', '\r']);
        let end_marker = t
            .strip_prefix("...")
            .is_some_and(|r| r.trim_start().is_empty());
        !(t.is_empty() || t.starts_with('#') || end_marker)
    });
    rest_has_content.then(|| YamlIssue {
        kind: YamlIssueKind::Syntax,
        range: TextRange::new(
            u32::try_from(offset).unwrap_or(u32::MAX),
            u32::try_from(offset + 3).unwrap_or(u32::MAX),
        ),
        message: "invalid YAML: this `...` ends an empty first document, so what follows is a second document (a file holds exactly one); remove the `...`".into(),
        related: None,
    })
}

/// Whether `line` (no line break) is a `...` document-end marker, maybe with a comment.
fn is_document_end(line: &str) -> bool {
    line.strip_prefix("...").is_some_and(|r| {
        let r = r.trim_end_matches('\r');
        r.is_empty()
            || (r.starts_with([' ', '\t']) && {
                let r = r.trim_start_matches([' ', '\t']);
                r.is_empty() || r.starts_with('#')
            })
    })
}

/// A `...` document-end marker after another with only blank and comment lines between:
/// the library reads an empty document between them, a second document in the file
/// ("Source contains multiple documents"); saphyr reads none. Refused at the second
/// marker. One pass over the lines, only for text holding `...`.
fn repeated_document_end(text: &str) -> Option<YamlIssue> {
    if !(text.starts_with("...") || text.contains("\n...")) {
        return None;
    }
    let mut offset = 0;
    let mut after_end = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if is_document_end(body) {
            if after_end {
                return Some(syntax_issue(
                    text,
                    offset,
                    "invalid YAML: a second `...` right after a `...` ends an empty second document (a file holds exactly one); remove one `...`",
                ));
            }
            after_end = true;
        } else {
            let t = body.trim_start_matches([' ', '\t']);
            if !(t.is_empty() || t.starts_with('#')) {
                after_end = false;
            }
        }
        offset += line.len();
    }
    None
}

/// A last line (no line break after it) of blanks holding a tab, right after a line that
/// leaves a node empty (`k:`, `- `, `---`, maybe with a comment): the library reads the tab
/// as the indentation of that node ("Tabs are not allowed as indentation", at the line's
/// start); saphyr ignores the line. Refused at the first tab. Constant work.
fn final_tab_line_after_empty_node(text: &str) -> Option<YamlIssue> {
    let start = text.rfind('\n')? + 1;
    let last = &text[start..];
    if last.is_empty() || !last.bytes().all(|b| b == b' ' || b == b'\t') || !last.contains('\t') {
        return None;
    }
    let prev_start = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
    let prev = text[prev_start..start - 1].trim_end_matches('\r');
    // Without a trailing comment (a `#` after a blank, outside quotes is close enough here:
    // the line must end in an indicator, which a quoted scalar does not).
    let code = prev
        .char_indices()
        .find(|&(i, c)| c == '#' && (i == 0 || prev[..i].ends_with([' ', '\t'])))
        .map_or(prev, |(i, _)| &prev[..i])
        .trim_end_matches([' ', '\t']);
    let empty = code.ends_with(':')
        || code.trim_start_matches([' ', '\t']) == "-"
        || code.ends_with(" -")
        || code == "---";
    let tab = start + last.find('\t')?;
    empty.then(|| {
        syntax_issue(
            text,
            tab,
            "invalid YAML: a tab in the indentation of this last line (the value above is empty); the reference's YAML library does not allow tabs as indentation, remove the line or its tabs",
        )
    })
}

/// A line of blanks starting with a tab (no more spaces before the tab than the key's
/// column) right after a key with an empty value (`k:`, `k: &a`, `k: # c`), when the next
/// line with content (blank and comment lines skipped) is another key of the same mapping,
/// at the key's column, or a `---`: the library reads the tab as the indentation of the
/// empty value ("Tabs are not allowed as indentation", at the line's start); saphyr ignores
/// the line. With more content indented past the key, a list item at its column, the end
/// of the mapping, `...`, or a blank line between, the library accepts it (`k:\n\t\n- a`).
/// Refused at the tab. One pass over the lines, only for text holding a tab.
fn tab_line_after_empty_value(text: &str) -> Option<YamlIssue> {
    if !text.contains('\t') {
        return None;
    }
    let lines: Vec<(usize, &str)> = text
        .split_inclusive('\n')
        .scan(0, |offset, line| {
            let at = *offset;
            *offset += line.len();
            Some((at, line.trim_end_matches(['\n', '\r'])))
        })
        .collect();
    for (i, &(at, line)) in lines.iter().enumerate().skip(1) {
        if !line.contains('\t') || !line.bytes().all(|c| c == b' ' || c == b'\t') {
            continue;
        }
        let spaces = line.bytes().take_while(|&c| c == b' ').count();
        let prev = lines[i - 1].1;
        // The key's column: after any `- ` indicators.
        let mut key_col = prev.bytes().take_while(|&c| c == b' ').count();
        while prev[key_col..].starts_with("- ") {
            key_col += 2 + prev[key_col + 2..]
                .bytes()
                .take_while(|&c| c == b' ')
                .count();
        }
        let code = prev
            .char_indices()
            .find(|&(j, c)| c == '#' && prev[..j].ends_with([' ', '\t']))
            .map_or(prev, |(j, _)| &prev[..j]);
        let mut code = code.trim_end_matches([' ', '\t']);
        // Properties of the empty value (`&a`, `!!str`).
        while let Some((head, last)) = code.rsplit_once([' ', '\t'])
            && last.starts_with(['&', '!'])
        {
            code = head.trim_end_matches([' ', '\t']);
        }
        let is_key = code.ends_with(':')
            && code.len() > key_col + 1
            && !code[key_col..].starts_with(['#', '-', '[', '{', '"', '\'']);
        if !is_key || spaces > key_col {
            continue;
        }
        let next = lines[i + 1..].iter().map(|l| l.1).find(|l| {
            let t = l.trim_start_matches([' ', '\t']);
            !t.is_empty() && !t.starts_with('#')
        });
        let blank_between = lines
            .get(i + 1)
            .is_some_and(|l| l.1.trim_start_matches([' ', '\t']).is_empty());
        let refused = match next {
            Some(n) if !blank_between => {
                let col = n.bytes().take_while(|&c| c == b' ').count();
                let rest = &n[col..];
                (n.starts_with("---") && matches!(n.as_bytes().get(3), None | Some(b' ' | b'\t')))
                    || (col == key_col
                        && !rest.starts_with("- ")
                        && rest != "-"
                        && !rest.starts_with("..."))
            }
            _ => false,
        };
        if refused {
            let tab = at + line.find('\t')?;
            return Some(syntax_issue(
                text,
                tab,
                "invalid YAML: a tab in the indentation of this blank line after an empty value; the reference's YAML library does not allow tabs as indentation, remove the tab",
            ));
        }
    }
    None
}

/// One saphyr pass over `scan` (same offsets as `text`); a [`Patch`] when saphyr stopped
/// where the library would not.
fn parse_once(text: &str, scan: &str, schema: Schema) -> Result<Parsed, Patch> {
    let mut out = Parsed::default();
    let mut offsets = OffsetMap::new(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: BTreeMap<usize, Anchored> = BTreeMap::new();
    let mut copies = Copies::default();
    let mut alias_reported = false;
    // Depth beyond MAX_DEPTH: count of collections being skipped.
    let mut skip_depth = 0usize;
    let mut doc_start = 0u32;
    let mut doc_root: Option<Node> = None;
    let mut last_end = 0u32;
    let has_tab = text.contains('\t');
    let mut nodes = 0usize;
    let parser = Parser::new_from_str(scan);
    for item in parser {
        let (event, span) = match item {
            Ok(pair) => pair,
            Err(e) => {
                let mut at = offsets.byte(e.marker().index());
                if e.info() == "while scanning a plain scalar, found a tab" {
                    // saphyr points at the scalar; the offending tab is in the indentation
                    // of a later line (where the reference's library reports it).
                    at = indentation_tab_after(text, at).unwrap_or(at);
                }
                let end = next_char_end(text, at);
                out.issues.push(YamlIssue {
                    kind: YamlIssueKind::Syntax,
                    range: TextRange::new(at, end),
                    message: syntax_message(e.info()),
                    related: None,
                });
                let in_flow = stack.iter().any(|f| {
                    let start = match f {
                        Frame::Seq { start, .. } | Frame::Map { start, .. } => *start as usize,
                    };
                    matches!(text.as_bytes().get(start), Some(b'[' | b'{'))
                });
                return match patch_for(scan, at as usize, e.info(), in_flow) {
                    Some(range) => Err(Patch { range, parsed: out }),
                    None => Ok(out),
                };
            }
        };
        let range = offsets.range(&span);
        if matches!(
            event,
            Event::Scalar(..)
                | Event::Alias(_)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
        ) {
            nodes += 1;
            if nodes > MAX_NODES {
                return Ok(too_many_nodes(text, range));
            }
        }
        if skip_depth > 0 {
            match event {
                Event::SequenceStart(..) | Event::MappingStart(..) => skip_depth += 1,
                Event::SequenceEnd | Event::MappingEnd => {
                    skip_depth -= 1;
                    if skip_depth == 0 {
                        let node = Node::new(Value::Null, range);
                        push_node(&mut stack, &mut doc_root, node, &mut out);
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
                if let Some(top) = stack.last_mut() {
                    top.weight().refs.push(id);
                }
                // `Err(Some(why))`: an expansion refused by a bound, reported once per
                // document; `Err(None)`: an unknown anchor (reported by the parser).
                let expanded = match use_alias(&mut anchors, id) {
                    AliasUse::Unknown => Err(None),
                    AliasUse::TooMany(count, weight) => Err(Some(format!(
                        "this alias brings its anchor to {count} uses (the definition included) of content weighing {weight}: more than the {MAX_ALIAS_COUNT} alias expansions the reference's YAML library allows (an alias bomb?)"
                    ))),
                    // Charged before the copy is made.
                    AliasUse::Ok(target, size) => copies.charge(size).map_err(Some).map(|()| {
                        let mut n = target.clone();
                        n.range = range;
                        n
                    }),
                };
                let node = match expanded {
                    Ok(n) => n,
                    Err(why) => {
                        if let Some(message) = why {
                            report_alias_bound(&mut out, &mut alias_reported, range, message);
                        }
                        Node::new(Value::Null, range)
                    }
                };
                last_end = last_end.max(range.end);
                push_node(&mut stack, &mut doc_root, node, &mut out);
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
                let blank = match style {
                    SaphyrStyle::Literal | SaphyrStyle::Folded
                        if !value.is_empty() && value.bytes().all(|c| c == b' ' || c == b'\n') =>
                    {
                        blank_block_scalar(text, range.start as usize)
                    }
                    _ => None,
                };
                let value = blank.map_or(value, Into::into);
                if has_tab
                    && matches!(style, SaphyrStyle::Literal | SaphyrStyle::Folded)
                    && let Some(issue) = tab_in_block_scalar(text, range.start as usize)
                {
                    out.issues.push(issue);
                    return Ok(out);
                }
                let node = Node::new(resolve_scalar(&value, style, tag.as_deref(), schema), range);
                last_end = last_end.max(range.end);
                if let Some(top) = stack.last_mut() {
                    top.weight().scalar = true;
                }
                if anchor > 0 {
                    let weight = Weight {
                        scalar: true,
                        refs: Vec::new(),
                    };
                    if let Err(message) = copies.anchor(&mut anchors, anchor, &node, weight) {
                        report_alias_bound(&mut out, &mut alias_reported, range, message);
                    }
                }
                push_node(&mut stack, &mut doc_root, node, &mut out);
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
                if has_tab
                    && let Some(issue) = tab_before_block_collection(text, range.start, is_seq)
                {
                    out.issues.push(issue);
                    return Ok(out);
                }
                stack.push(if is_seq {
                    Frame::Seq {
                        items: Vec::new(),
                        start: range.start,
                        anchor,
                        weight: Weight::default(),
                    }
                } else {
                    Frame::Map {
                        entries: Vec::new(),
                        pending_key: None,
                        seen: BTreeMap::new(),
                        start: range.start,
                        anchor,
                        weight: Weight::default(),
                    }
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(frame) = stack.pop() else { continue };
                let (value, start, anchor, child_end, weight) = match frame {
                    Frame::Seq {
                        items,
                        start,
                        anchor,
                        weight,
                    } => {
                        let end = items.last().map(|n| n.range.end);
                        (Value::Seq(items), start, anchor, end, weight)
                    }
                    Frame::Map {
                        entries,
                        pending_key,
                        start,
                        anchor,
                        weight,
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
                        if schema == Schema::Yaml11 && entries.iter().any(is_merge_key) {
                            match merge_keys(entries) {
                                Ok(merged) => entries = merged,
                                Err(at) => {
                                    out.issues.push(YamlIssue {
                                        kind: YamlIssueKind::Syntax,
                                        range: at,
                                        message: "invalid YAML: in a `%YAML 1.1` document `<<` merges mappings into this one, so its value must be a mapping, an alias of one, or a list of these".into(),
                                        related: None,
                                    });
                                    return Ok(out);
                                }
                            }
                            // `<<` may repeat: each is a merge, not a duplicate key.
                            out.issues.retain(|i| {
                                i.kind != YamlIssueKind::DuplicateKey
                                    || text.get(i.range.as_usize()) != Some("<<")
                                    || i.range.start < start
                            });
                        }
                        (Value::Map(entries), start, anchor, end, weight)
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
                if matches!(opener, Some('[' | '{'))
                    && text
                        .get(start as usize..end as usize)
                        .is_some_and(|t| t.contains('\n'))
                    && let Some(indent_next) = block_indent_next(text, &stack)
                    && let Some(issue) = flow_under_indented(text, start, end, indent_next)
                {
                    out.issues.push(issue);
                    return Ok(out);
                }
                let node = Node::new(value, TextRange::new(start, end));
                last_end = last_end.max(end);
                if anchor > 0 {
                    let kept = Weight {
                        scalar: weight.scalar,
                        refs: weight.refs.clone(),
                    };
                    if let Err(message) = copies.anchor(&mut anchors, anchor, &node, kept) {
                        let at = TextRange::new(start, next_char_end(text, start));
                        report_alias_bound(&mut out, &mut alias_reported, at, message);
                    }
                }
                if let Some(top) = stack.last_mut() {
                    let w = top.weight();
                    w.scalar |= weight.scalar;
                    w.refs.extend(weight.refs);
                }
                push_node(&mut stack, &mut doc_root, node, &mut out);
            }
        }
    }
    Ok(out)
}

/// A plain `<<` key: a merge key in a `%YAML 1.1` document.
fn is_merge_key(e: &Entry) -> bool {
    matches!(&e.key.value, Value::Str(k, ScalarStyle::Plain) if k == "<<")
}

/// The entries of a `%YAML 1.1` mapping with its `<<` merge keys applied as `yaml` 2.9.1
/// applies them (`merge.ts`): at the merge key's place, each key of the merged mapping (or
/// of each mapping of a merged list, in order) that the mapping does not hold yet is added;
/// a later key of the mapping itself then replaces the merged value in place. Merged
/// entries keep their ranges (inside the merged mapping). `Err` with the range of a merge
/// value that is not a mapping or a list of mappings ("Merge sources must be maps or map
/// aliases"). Bounded by the entries of the mapping and of its sources.
fn merge_keys(entries: Vec<Entry>) -> Result<Vec<Entry>, TextRange> {
    let mut out: Vec<Entry> = Vec::with_capacity(entries.len());
    let mut index: BTreeMap<String, (usize, bool)> = BTreeMap::new();
    for entry in entries {
        if is_merge_key(&entry) {
            let sources: Vec<&Node> = match &entry.value.value {
                Value::Map(_) => vec![&entry.value],
                Value::Seq(items) => items.iter().collect(),
                _ => return Err(entry.value.range),
            };
            for source in sources {
                let Value::Map(from) = &source.value else {
                    return Err(source.range);
                };
                for e in from {
                    let key = e.key.js_key();
                    if let std::collections::btree_map::Entry::Vacant(slot) = index.entry(key) {
                        slot.insert((out.len(), true));
                        out.push(e.clone());
                    }
                }
            }
            continue;
        }
        let key = entry.key.js_key();
        match index.get(&key) {
            Some(&(at, true)) => {
                index.insert(key, (at, false));
                out[at] = entry;
            }
            Some(_) => out.push(entry),
            None => {
                index.insert(key, (out.len(), false));
                out.push(entry);
            }
        }
    }
    Ok(out)
}

/// The header token (`|`, `>2-`…) of the block scalar whose content starts at `start`
/// (saphyr's start, inside its first line), found on the last line before `start` that is
/// not blank, and the text after that line. `None` when that line does not end in a block
/// scalar header. Bounded by the lines between.
fn block_header(text: &str, start: usize) -> Option<(&str, &str)> {
    let before = text.get(..start)?;
    let mut line_end = before.rfind('\n')?;
    let header_line = loop {
        let line_start = before[..line_end].rfind('\n').map_or(0, |i| i + 1);
        let line = before[line_start..line_end].trim_end_matches('\r');
        if !line.bytes().all(|c| c == b' ') {
            break line;
        }
        line_end = line_start.checked_sub(1)?;
    };
    let code = header_line
        .char_indices()
        .find(|&(i, c)| c == '#' && header_line[..i].ends_with([' ', '\t']))
        .map_or(header_line, |(i, _)| &header_line[..i]);
    let header = code
        .trim_end_matches([' ', '\t'])
        .rsplit([' ', '\t'])
        .next()?;
    (header.starts_with(['|', '>'])
        && header[1..]
            .bytes()
            .all(|c| matches!(c, b'+' | b'-' | b'0'..=b'9')))
    .then(|| (header, text.get(line_end + 1..).unwrap_or("")))
}

/// `yaml` 2.9.1 refuses a blank line holding a tab after a block scalar's first content
/// line when fewer spaces than the content's indentation precede the tab ("Block scalar
/// lines must not be less indented than their first line", at the tab); saphyr reads it as
/// an empty line. `start` is saphyr's start of the scalar. Bounded by the scalar's lines.
fn tab_in_block_scalar(text: &str, start: usize) -> Option<YamlIssue> {
    let (_, body) = block_header(text, start)?;
    let body_start = text.len() - body.len();
    let mut indent = None;
    let mut offset = body_start;
    for line in body.split_inclusive('\n') {
        let l = line.trim_end_matches(['\n', '\r']);
        let spaces = l.bytes().take_while(|&c| c == b' ').count();
        let blank = l.bytes().all(|c| c == b' ' || c == b'\t');
        match indent {
            None if !blank => indent = Some(spaces),
            Some(n) if blank && spaces < n && l.contains('\t') => {
                return Some(syntax_issue(
                    text,
                    offset + spaces,
                    "invalid YAML: a tab in a blank line of this block scalar, less indented than its first line; the reference's YAML library refuses it, remove the tab",
                ));
            }
            Some(n) if !blank && spaces < n => return None,
            _ => {}
        }
        offset += line.len();
    }
    None
}

/// The value `yaml` 2.9.1 gives a block scalar with an explicit indentation indicator
/// (`|2`, `>4+`) whose lines all hold spaces only, starting at `start` (its header): every
/// such line is an empty line, whatever its indentation, so the value is `""`, or one line
/// feed per line with the keep indicator (`+`); saphyr keeps the spaces past the indicated
/// indentation as content. `start` is saphyr's start of the scalar (inside its first
/// line); the header is on the last line before it that is not blank. `None` for any other
/// block scalar (saphyr agrees there). Bounded by the scalar's lines.
fn blank_block_scalar(text: &str, start: usize) -> Option<String> {
    let (header, body) = block_header(text, start)?;
    if !header.bytes().any(|c| c.is_ascii_digit()) {
        return None;
    }
    if !header.contains('+') {
        return Some(String::new());
    }
    let lines = body
        .split_inclusive('\n')
        .take_while(|l| {
            l.ends_with('\n') && l.trim_end_matches(['\n', '\r']).bytes().all(|c| c == b' ')
        })
        .count();
    Some("\n".repeat(lines))
}

/// What an alias resolves to, counted as the reference's library counts it.
enum AliasUse<'a> {
    /// No complete anchor of that id (an alias inside its own anchor): `null`.
    Unknown,
    /// Use `.0` of an anchor of weight `.1`: over [`MAX_ALIAS_COUNT`].
    TooMany(usize, usize),
    /// Within the limit: the anchored node and what one copy of it costs.
    Ok(&'a Node, Size),
}

/// One use of anchor `id`, as `yaml` 2.9.1 `Alias.resolve` counts it: the anchor's use
/// count (1 for its definition) goes up by one; its weight (`getAliasCount`: 1 for content holding a scalar, for
/// each alias inside it the use count times the weight of that alias's anchor, the maximum
/// of these, 0 for an empty collection) is fixed at the first use; count × weight over
/// [`MAX_ALIAS_COUNT`] refuses the document.
fn use_alias(anchors: &mut BTreeMap<usize, Anchored>, id: usize) -> AliasUse<'_> {
    let Some(target) = anchors.get(&id) else {
        return AliasUse::Unknown;
    };
    let weight = target.alias_count.unwrap_or_else(|| {
        target
            .weight
            .refs
            .iter()
            .filter_map(|r| anchors.get(r))
            .map(|a| a.count.saturating_mul(a.alias_count.unwrap_or(0)))
            .fold(usize::from(target.weight.scalar), usize::max)
    });
    let Some(target) = anchors.get_mut(&id) else {
        return AliasUse::Unknown;
    };
    target.alias_count = Some(weight);
    target.count += 1;
    if target.count.saturating_mul(weight) > MAX_ALIAS_COUNT {
        AliasUse::TooMany(target.count, weight)
    } else {
        AliasUse::Ok(&target.node, target.size)
    }
}

fn syntax_issue(text: &str, at: usize, message: &str) -> YamlIssue {
    let at = u32::try_from(at).unwrap_or(u32::MAX);
    YamlIssue {
        kind: YamlIssueKind::Syntax,
        range: TextRange::new(at, next_char_end(text, at)),
        message: message.into(),
        related: None,
    }
}

/// A carriage return not followed by a line feed, or a byte-order mark inside the text (the
/// first one is stripped before parsing, `text::decode`). The reference's library reads
/// neither as a line break or a marker but as content (a lone CR joins two lines into one),
/// so these files either fail there or load with invisible characters in keys and values;
/// they are refused here (docs/yaml-parity.md, `lone-cr` and `inner-bom`). One pass over
/// the bytes.
fn stray_break_or_bom(text: &str) -> Option<YamlIssue> {
    if !text.contains('\r') && !text.contains('\u{feff}') {
        return None;
    }
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(i) = b.get(from..)?.iter().position(|&c| c == b'\r' || c == 0xEF) {
        let at = from + i;
        match b[at] {
            b'\r' if b.get(at + 1) != Some(&b'\n') => {
                return Some(syntax_issue(
                    text,
                    at,
                    "invalid YAML: a carriage return (CR) without a line feed is not a line break for the reference's YAML library; use LF or CRLF line endings",
                ));
            }
            0xEF if b.get(at + 1..at + 3) == Some(&[0xBB, 0xBF][..]) => {
                return Some(syntax_issue(
                    text,
                    at,
                    "invalid YAML: a byte order mark (U+FEFF) inside the file; the reference's YAML library reads it as an invisible character of a key or value; remove it",
                ));
            }
            _ => {}
        }
        from = at + 1;
    }
    None
}

/// `yaml` 2.9.1 refuses a tab between a block indicator (`-`, `?`, `:`) and a block
/// collection that starts on the same line (`-\ta: 1`): "Tabs are not allowed as
/// indentation", at the tab. `start` is the collection's first byte (saphyr starts an
/// indentless sequence at its first item, which is not the case here).
fn tab_before_block_collection(text: &str, start: u32, is_seq: bool) -> Option<YamlIssue> {
    let start = start as usize;
    match text.as_bytes().get(start) {
        Some(b'[' | b'{') => return None,
        Some(b'-') => {}
        _ if is_seq => return None,
        _ => {}
    }
    let line_start = text.get(..start)?.rfind('\n').map_or(0, |i| i + 1);
    let before = text.get(line_start..start)?;
    let trimmed = before.trim_end_matches([' ', '\t']);
    if !trimmed.ends_with(['-', '?', ':']) {
        return None;
    }
    let tab = before[trimmed.len()..].find('\t')?;
    Some(syntax_issue(
        text,
        line_start + trimmed.len() + tab,
        "invalid YAML: a tab before a nested block collection counts as indentation, and tabs are not allowed as indentation; use spaces",
    ))
}

/// The reference lexer's `indentNext` for a flow collection whose parent is a block
/// collection: one more than the parent's column (its keys', or its `-`'s). `None` when the
/// parent is itself a flow collection; 0 at the root (no constraint).
fn block_indent_next(text: &str, stack: &[Frame]) -> Option<usize> {
    let Some(parent) = stack.last() else {
        return Some(0);
    };
    let start = match parent {
        Frame::Seq { start, .. } | Frame::Map { start, .. } => *start as usize,
    };
    if matches!(text.as_bytes().get(start), Some(b'[' | b'{')) {
        return None;
    }
    let line_start = text.get(..start)?.rfind('\n').map_or(0, |i| i + 1);
    Some(text.get(line_start..start)?.chars().count() + 1)
}

/// `yaml` 2.9.1's lexer rule for a flow collection inside a block collection: every line of
/// it after the first must be indented (in spaces) at least `indent_next`, except comment
/// lines, and except the closing bracket of the outermost collection, which may sit one
/// column less (at the parent's column). Otherwise: "Flow sequence in block collection must
/// be sufficiently indented and end with a ]", at the line's first character. Quoted
/// scalars are skipped. Bounded by the collection's length.
fn flow_under_indented(text: &str, start: u32, end: u32, indent_next: usize) -> Option<YamlIssue> {
    let body = text.get(start as usize..end as usize)?;
    if !body.contains('\n') {
        return None;
    }
    let b = body.as_bytes();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            if c == b'\\' && q == b'"' {
                i += 2;
                continue;
            }
            if c == b'\n' {
                // A quoted scalar's continuation line obeys the same rule (`x: {'g\n':2}`:
                // "Missing closing 'quote" in the library).
                let line = &b[i + 1..];
                let indent = line.iter().take_while(|&&x| x == b' ').count();
                let first = line
                    .iter()
                    .position(|&x| !matches!(x, b' ' | b'\t' | b'\r'))
                    .and_then(|p| line.get(p).copied());
                if indent < indent_next && first.is_some_and(|x| x != b'\n') {
                    return Some(syntax_issue(
                        text,
                        start as usize + i + 1 + indent,
                        &format!(
                            "invalid YAML: a quoted scalar inside a flow collection in a block collection must continue on lines indented more than its parent ({indent_next} spaces or more here)"
                        ),
                    ));
                }
            }
            if c == q {
                if q == b'\'' && b.get(i + 1) == Some(&b'\'') {
                    i += 2;
                    continue;
                }
                quote = None;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' | b'\'' => quote = Some(c),
            b'#' if i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'\r') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\n' => {
                // The next line with content.
                let mut j = i + 1;
                let mut indent = 0;
                let mut k = j;
                while k < b.len() {
                    match b[k] {
                        b' ' if k == j + indent => indent += 1,
                        b' ' | b'\t' | b'\r' => {}
                        b'\n' => {
                            j = k + 1;
                            indent = 0;
                        }
                        _ => break,
                    }
                    k += 1;
                }
                let first = b.get(k).copied();
                let marker = indent == 0
                    && (body[k..].starts_with("---") || body[k..].starts_with("..."))
                    && matches!(b.get(k + 3), None | Some(b' ' | b'\t' | b'\r' | b'\n'));
                let closing = indent + 1 == indent_next && k + 1 == b.len();
                if first.is_some()
                    && first != Some(b'#')
                    && ((indent < indent_next && !closing) || marker)
                {
                    let what = if b[0] == b'[' {
                        "Flow sequence"
                    } else {
                        "Flow mapping"
                    };
                    return Some(syntax_issue(
                        text,
                        start as usize + k,
                        &format!(
                            "invalid YAML: {what} in a block collection must be indented more than its parent ({indent_next} spaces or more here), except its closing bracket"
                        ),
                    ));
                }
                i = k;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `yaml` 2.9.1 refuses a tab in the leading whitespace of a line of block context
/// ("Tabs are not allowed as indentation", at the tab) when the line starts a block
/// collection or a key of one (`\tk: v`, `   \tkey:` under a key), or continues a plain
/// scalar with no more spaces before the tab than its parent collection's column
/// (`k: a\n\tb`); saphyr lets some of these through. Lines inside flow collections and
/// block scalars follow their own rules and are skipped. Bounded: one pass over the lines
/// and one over the tree, only for text with such lines.
fn tab_indentation(text: &str, parsed: &Parsed) -> Option<YamlIssue> {
    if !text.contains('\t') {
        return None;
    }
    // (first tab, spaces before it, first content byte)
    let mut candidates = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let lead = line.len() - line.trim_start_matches([' ', '\t']).len();
        let rest = line[lead..].trim_end_matches(['\n', '\r']);
        if let Some(tab) = line[..lead].find('\t')
            && !rest.is_empty()
            && !rest.starts_with('#')
        {
            candidates.push((offset + tab, tab, offset + lead, offset));
        }
        offset += line.len();
    }
    if candidates.is_empty() {
        return None;
    }
    let column = |at: u32| {
        let at = at as usize;
        let line_start = text
            .get(..at)
            .and_then(|t| t.rfind('\n'))
            .map_or(0, |i| i + 1);
        text.get(line_start..at).map_or(0, |t| t.chars().count())
    };
    let opener = |n: &Node| text.as_bytes().get(n.range.start as usize).copied();
    let mut block_starts: Vec<u32> = Vec::new();
    // Line starts of scalars that are a document's root (`\t--- &x a`, `---\n\ta`).
    let mut root_lines: Vec<usize> = Vec::new();
    // (start, end, parent column or -1)
    let mut scalars: Vec<(u32, u32, i64)> = Vec::new();
    let mut todo: Vec<(&Node, i64)> = parsed.documents.iter().map(|d| (d, -1)).collect();
    while let Some((n, parent)) = todo.pop() {
        match &n.value {
            Value::Seq(items) if opener(n) != Some(b'[') => {
                block_starts.push(n.range.start);
                let col = i64::try_from(column(n.range.start)).unwrap_or(i64::MAX);
                todo.extend(items.iter().map(|i| (i, col)));
            }
            Value::Map(entries) if opener(n) != Some(b'{') => {
                block_starts.push(n.range.start);
                let col = i64::try_from(column(n.range.start)).unwrap_or(i64::MAX);
                for e in entries {
                    block_starts.push(e.key.range.start);
                    todo.push((&e.value, col));
                }
            }
            Value::Seq(_)
            | Value::Map(_)
            | Value::Str(_, ScalarStyle::Literal | ScalarStyle::Folded) => {}
            _ => {
                if parent == -1 {
                    let at = n.range.start as usize;
                    root_lines.push(
                        text.get(..at)
                            .and_then(|t| t.rfind('\n'))
                            .map_or(0, |i| i + 1),
                    );
                }
                scalars.push((n.range.start, n.range.end, parent));
            }
        }
    }
    block_starts.sort_unstable();
    root_lines.sort_unstable();
    scalars.sort_unstable();
    for (tab, spaces, content, line) in candidates {
        let p = u32::try_from(content).unwrap_or(u32::MAX);
        let i = scalars.partition_point(|r| r.0 <= p);
        let inside = i > 0 && scalars[i - 1].0 < p && p < scalars[i - 1].1;
        let continues = inside && i64::try_from(spaces).unwrap_or(i64::MAX) <= scalars[i - 1].2;
        let starts_block = block_starts.binary_search(&p).is_ok()
            || (!inside
                && text[content..].starts_with(['-', '?'])
                && matches!(
                    text.as_bytes().get(content + 1),
                    Some(b' ' | b'\t' | b'\n' | b'\r')
                ));
        let root_scalar = root_lines.binary_search(&line).is_ok();
        if starts_block || continues || root_scalar {
            return Some(syntax_issue(
                text,
                tab,
                "invalid YAML: a tab in the indentation of this line; the reference's YAML library does not allow tabs as indentation, use spaces",
            ));
        }
    }
    None
}

/// The first tab in the leading whitespace of a line after the one holding `from`.
fn indentation_tab_after(text: &str, from: u32) -> Option<u32> {
    let from = from as usize;
    let mut line_start = from + text.get(from..)?.find('\n')? + 1;
    while let Some(line) = text.get(line_start..) {
        let line = line.split_inclusive('\n').next()?;
        let lead = line.len() - line.trim_start_matches([' ', '\t']).len();
        if let Some(tab) = line[..lead].find('\t') {
            return u32::try_from(line_start + tab).ok();
        }
        line_start += line.len();
    }
    None
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

/// The parse of a stream cut at [`MAX_NODES`]: no tree, one `TooLarge` issue at the node
/// past the bound.
fn too_many_nodes(text: &str, at: TextRange) -> Parsed {
    let end = next_char_end(text, at.start);
    Parsed {
        issues: vec![YamlIssue {
            kind: YamlIssueKind::TooLarge,
            range: TextRange::new(at.start, end.max(at.start)),
            message: format!(
                "the file holds more than {MAX_NODES} YAML nodes; it is not checked (a case or workflow holds a few thousand)"
            ),
            related: None,
        }],
        ..Parsed::default()
    }
}

/// The nodes of `node`'s subtree and the bytes of its string scalars (keys included).
/// Iterative, so a deep tree cannot overflow the stack.
fn size_of(node: &Node) -> Size {
    let mut size = Size::default();
    let mut todo = vec![node];
    while let Some(n) = todo.pop() {
        size.nodes += 1;
        match &n.value {
            Value::Str(s, _) => size.bytes += s.len(),
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
    size
}

/// Keeps `issue` while fewer than [`MAX_ISSUES`] are kept, else counts it.
fn add_issue(out: &mut Parsed, issue: YamlIssue) {
    if out.issues.len() < MAX_ISSUES {
        out.issues.push(issue);
    } else {
        out.issues_left_out += 1;
    }
}

fn push_node(stack: &mut [Frame], root: &mut Option<Node>, node: Node, out: &mut Parsed) {
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
                    add_issue(
                        out,
                        YamlIssue {
                            kind: YamlIssueKind::ComplexKey,
                            range: node.range,
                            message: "a mapping key must be a scalar, not a list or a mapping"
                                .into(),
                            related: None,
                        },
                    );
                } else if let Some(text) = node.scalar_text() {
                    match seen.get(&*text) {
                        Some(first) => {
                            // Only a kept issue pays for its message.
                            if out.issues.len() < MAX_ISSUES {
                                add_issue(
                                    out,
                                    YamlIssue {
                                        kind: YamlIssueKind::DuplicateKey,
                                        range: node.range,
                                        message: format!(
                                            "duplicate key `{text}`; the first occurrence is kept"
                                        ),
                                        related: Some(*first),
                                    },
                                );
                            } else {
                                out.issues_left_out += 1;
                            }
                        }
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

/// The tag schema a document's plain scalars resolve with (FORMAT "The YAML library"):
/// the YAML 1.2 core schema unless the document says `%YAML 1.1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Schema {
    Core,
    Yaml11,
}

/// The schema of the first document, read from its prologue as the reference's library
/// (`yaml` 2.9.1 `Directives.add`) reads it: `Yaml11` after `%YAML 1.1`. Only blank,
/// comment and directive lines may precede the content; later documents do not matter (a
/// second document is refused anyway, `WFX007`). The directives the library refuses are
/// refused here too, at their line: a `%YAML` without exactly one part or with a version not
/// of the form `<digits>.<digits>`, and a `%TAG` without exactly two parts.
fn prologue(text: &str) -> Result<Schema, YamlIssue> {
    if !text.starts_with('%') && !text.contains("\n%") {
        return Ok(Schema::Core);
    }
    let mut schema = Schema::Core;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let at = offset;
        offset += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let trimmed = body.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if !body.starts_with('%') {
            break;
        }
        // The library's `dirEnd`: a comment starts at a `#` after a blank.
        let end = body
            .match_indices('#')
            .find(|(i, _)| matches!(body.as_bytes().get(i.wrapping_sub(1)), Some(b' ' | b'\t')))
            .map_or(body.len(), |(i, _)| i);
        let mut parts = body[..end].split([' ', '\t']).filter(|p| !p.is_empty());
        let name = parts.next().unwrap_or("%");
        let rest: Vec<&str> = parts.collect();
        let refuse = |message: &str| YamlIssue {
            kind: YamlIssueKind::Syntax,
            range: TextRange::new(
                u32::try_from(at).unwrap_or(u32::MAX),
                u32::try_from(at + name.len()).unwrap_or(u32::MAX),
            ),
            message: message.into(),
            related: None,
        };
        match name {
            "%YAML" => {
                let [version] = rest[..] else {
                    return Err(refuse(
                        "invalid YAML: a %YAML directive takes exactly one part, the version (`%YAML 1.2`)",
                    ));
                };
                match version {
                    "1.1" => schema = Schema::Yaml11,
                    "1.2" => schema = Schema::Core,
                    v => {
                        let valid = v.split_once('.').is_some_and(|(a, b)| {
                            !a.is_empty()
                                && !b.is_empty()
                                && a.bytes().all(|c| c.is_ascii_digit())
                                && b.bytes().all(|c| c.is_ascii_digit())
                        });
                        if !valid {
                            return Err(refuse(&format!(
                                "invalid YAML: `{v}` is not a YAML version (`%YAML 1.2`)"
                            )));
                        }
                    }
                }
            }
            "%TAG" if rest.len() != 2 => {
                return Err(refuse(
                    "invalid YAML: a %TAG directive takes exactly two parts, a handle and a prefix",
                ));
            }
            _ => {}
        }
    }
    Ok(schema)
}

/// Resolves a scalar with `schema`; quoted and block scalars are strings.
fn resolve_scalar(value: &str, style: SaphyrStyle, tag: Option<&Tag>, schema: Schema) -> Value {
    let our_style = match style {
        SaphyrStyle::Plain => ScalarStyle::Plain,
        SaphyrStyle::SingleQuoted => ScalarStyle::SingleQuoted,
        SaphyrStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
        SaphyrStyle::Literal => ScalarStyle::Literal,
        SaphyrStyle::Folded => ScalarStyle::Folded,
    };
    let plain = |v: &str| match schema {
        Schema::Core => resolve_plain(v, our_style),
        Schema::Yaml11 => resolve_plain_11(v, our_style),
    };
    if let Some(tag) = tag {
        let name = if tag.handle == "tag:yaml.org,2002:" || tag.handle == "!!" {
            tag.suffix.as_str()
        } else if let Some(name) = tag.suffix.strip_prefix("tag:yaml.org,2002:") {
            name
        } else {
            // A local or non-specific tag (`!foo 1`, `! 1`): unresolved, a string.
            return Value::Str(value.to_owned(), our_style);
        };
        match name {
            "str" => return Value::Str(value.to_owned(), our_style),
            "null" => return Value::Null,
            "bool" | "int" | "float" => return plain(value),
            "binary" | "timestamp" | "omap" | "pairs" | "set" | "map" | "seq" | "merge"
            | "value" => {}
            // An unknown `!!` tag: the library warns ("Unresolved tag") and keeps the
            // scalar as a string (`k: !!str1` is `""`).
            _ => return Value::Str(value.to_owned(), our_style),
        }
    }
    if our_style != ScalarStyle::Plain {
        return Value::Str(value.to_owned(), our_style);
    }
    plain(value)
}

/// Resolves a plain scalar with the reference library's YAML 1.1 schema (`yaml` 2.9.1
/// `schema/yaml-1.1`, its tags tried in its order): `y`/`yes`/`on`… booleans, `0b`, `0…`
/// octal, `_` separators, sexagesimal `1:30`, `.` floats. Numbers take JavaScript's
/// `parseInt`/`parseFloat` values (an empty digit string is NaN). Timestamps stay strings
/// (docs/yaml-parity.md, `yaml11-timestamp`).
fn resolve_plain_11(v: &str, style: ScalarStyle) -> Value {
    match v {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "Y" | "y" | "Yes" | "yes" | "YES" | "True" | "true" | "TRUE" | "On" | "on" | "ON" => {
            return Value::Bool(true);
        }
        "N" | "n" | "No" | "no" | "NO" | "False" | "false" | "FALSE" | "Off" | "off" | "OFF" => {
            return Value::Bool(false);
        }
        _ => {}
    }
    let (negative, body) = match v.as_bytes().first() {
        Some(b'-') => (true, &v[1..]),
        Some(b'+') => (false, &v[1..]),
        _ => (false, v),
    };
    let signed = |x: Value| match x {
        Value::Int(i) if negative => Value::Int(-i),
        Value::Float(f) if negative => Value::Float(-f),
        x => x,
    };
    let all = |s: &str, ok: fn(u8) -> bool| s.bytes().all(|b| b == b'_' || ok(b));
    let first_digit = body.as_bytes().first().is_some_and(u8::is_ascii_digit);
    if let Some(bin) = body.strip_prefix("0b")
        && !bin.is_empty()
        && all(bin, |b| b == b'0' || b == b'1')
    {
        return signed(js_parse_int(bin, 2));
    }
    if let Some(oct) = body.strip_prefix('0')
        && !oct.is_empty()
        && all(oct, |b| (b'0'..=b'7').contains(&b))
    {
        return signed(js_parse_int(oct, 8));
    }
    if first_digit && all(body, |b| b.is_ascii_digit()) {
        return signed(js_parse_int(body, 10));
    }
    if let Some(hex) = body.strip_prefix("0x")
        && !hex.is_empty()
        && all(hex, |b| b.is_ascii_hexdigit())
    {
        return signed(js_parse_int(hex, 16));
    }
    match v {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Value::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Value::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Value::Float(f64::NAN),
        _ => {}
    }
    if is_float_11(body) {
        let f = js_parse_float(&body.replace('_', ""));
        return Value::Float(if negative { -f } else { f });
    }
    if first_digit && let Some(n) = sexagesimal(body) {
        return signed(n);
    }
    Value::Str(v.to_owned(), style)
}

/// The 1.1 float forms without the sign: `([0-9][0-9_]*)?(\.[0-9_]*)?[eE][-+]?[0-9]+` and
/// `([0-9][0-9_]*)?\.[0-9_]*`.
fn is_float_11(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if b.first().is_some_and(u8::is_ascii_digit) {
        i = b
            .iter()
            .take_while(|c| c.is_ascii_digit() || **c == b'_')
            .count();
    }
    let dot = b.get(i) == Some(&b'.');
    if dot {
        i += 1;
        i += b.get(i..).map_or(0, |r| {
            r.iter()
                .take_while(|c| c.is_ascii_digit() || **c == b'_')
                .count()
        });
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        let exp = b
            .get(i..)
            .map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
        return exp > 0 && i + exp == b.len();
    }
    dot && i == b.len()
}

/// `[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?` (the sign stripped) as base-60, the
/// library's `intTime`/`floatTime`; `None` if `s` is not of that form.
fn sexagesimal(s: &str) -> Option<Value> {
    let (whole, frac) = match s.find('.') {
        Some(d) => (&s[..d], Some(&s[d + 1..])),
        None => (s, None),
    };
    let mut parts = whole.split(':');
    let head = parts.next()?;
    if head.is_empty() || !head.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        return None;
    }
    let mut n = js_parse_float(&head.replace('_', ""));
    let mut any = false;
    for p in parts {
        let b = p.as_bytes();
        let ok = match b {
            [d] => d.is_ascii_digit(),
            [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
            _ => false,
        };
        if !ok {
            return None;
        }
        any = true;
        n = n * 60.0 + js_parse_float(p);
    }
    if !any {
        return None;
    }
    match frac {
        None if n.abs() < 9_007_199_254_740_992.0 => Some(Value::Int(n as i64)),
        None => Some(Value::Float(n)),
        Some(f) if f.bytes().all(|b| b.is_ascii_digit() || b == b'_') => {
            // The last part carries the fraction: `Number("30.5")`.
            let frac = js_parse_float(&format!("0.{}", f.replace('_', "")));
            Some(Value::Float(n + frac))
        }
        Some(_) => None,
    }
}

/// JavaScript `parseInt(digits with "_" removed, radix)`: an `i64` when it fits, else the
/// nearest `f64`; NaN for no digits.
fn js_parse_int(digits: &str, radix: u32) -> Value {
    let clean: Cow<'_, str> = if digits.contains('_') {
        Cow::Owned(digits.replace('_', ""))
    } else {
        Cow::Borrowed(digits)
    };
    if clean.is_empty() {
        return Value::Float(f64::NAN);
    }
    match i64::from_str_radix(&clean, radix) {
        Ok(i) => Value::Int(i),
        Err(_) if radix == 10 => Value::Float(js_parse_float(&clean)),
        Err(_) => Value::Float(clean.chars().fold(0.0, |acc, c| {
            acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
        })),
    }
}

/// JavaScript `parseFloat` of a string already known to be a number form: NaN when there
/// is no digit (`.`, `e5`).
fn js_parse_float(s: &str) -> f64 {
    let s = s.strip_suffix('.').unwrap_or(s);
    if !s.bytes().any(|b| b.is_ascii_digit()) {
        return f64::NAN;
    }
    let fixed;
    let s = if s.starts_with(['e', 'E']) || s.starts_with(".e") || s.starts_with(".E") {
        return f64::NAN;
    } else if let Some(rest) = s.strip_prefix('.') {
        fixed = format!("0.{rest}");
        fixed.as_str()
    } else {
        s
    };
    s.parse::<f64>().unwrap_or(f64::NAN)
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

/// `i`, or, for digits beyond `i64`, JavaScript's `parseInt` value of `raw` (`0x…`/`0o…`).
fn int_or_float(i: Option<i64>, raw: &str) -> Value {
    match i {
        Some(i) => Value::Int(i),
        None => match raw.get(..2) {
            Some("0x") => js_parse_int(&raw[2..], 16),
            Some("0o") => js_parse_int(&raw[2..], 8),
            _ => Value::Str(raw.to_owned(), ScalarStyle::Plain),
        },
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
    /// Every hint is set whenever the text holds what the parity check it gates looks for,
    /// at the start, the end and across any position (a missed hint would drop a
    /// diagnostic, docs/yaml-parity.md).
    #[test]
    fn hints_see_every_byte_they_stand_for() {
        let naive = |t: &str| super::Hints {
            cr_or_ef: t.contains('\r') || t.as_bytes().contains(&0xEF),
            tab: t.contains('\t'),
            line_dot: t.starts_with('.') || t.contains("\n."),
            line_percent: t.starts_with('%') || t.contains("\n%"),
        };
        for filler in [0usize, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100] {
            let pad = "a: b\n".repeat(filler / 5) + &"x".repeat(filler % 5);
            for needle in [
                "\r",
                "\u{feff}",
                "\t",
                "\n...",
                "\n%YAML 1.2",
                "\n.",
                "\n%",
                "\n",
            ] {
                for t in [
                    format!("{pad}{needle}"),
                    format!("{needle}{pad}"),
                    format!("{pad}{needle}{pad}"),
                    needle.trim_start_matches('\n').to_owned(),
                    pad.clone(),
                ] {
                    assert_eq!(super::Hints::of(&t), naive(&t), "{t:?}");
                }
            }
        }
        let h = super::Hints::of("...\n%x\r\t");
        assert!(h.cr_or_ef && h.tab && h.line_dot && h.line_percent);
        let h = super::Hints::of("a: b\n  c: .d%\n");
        assert!(!(h.cr_or_ef || h.tab || h.line_dot || h.line_percent));
    }

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
    fn a_key_after_a_multi_line_block_scalar_starts_at_its_first_character() {
        for header in ["|", ">", "|-", "|+", ">2", "|\n"] {
            for (text, key) in [
                (format!("a: {header}\n  one\n  two\nbee: x\n"), "bee"),
                (
                    format!("s:\n  a:\n    t: {header}\n      one\n      two\n  bee:\n    t: x\n"),
                    "bee",
                ),
                (format!("a: {header}\n  one\n\n  two\n\nbee: x\n"), "bee"),
            ] {
                let p = parse(&text);
                let Some(root) = p.documents.first() else {
                    continue; // `>2` / a blank header line may be refused; not this test's point
                };
                let map = if text.starts_with("s:") {
                    root.get_value("s").unwrap()
                } else {
                    root
                };
                let entry = map.get(key).unwrap_or_else(|| panic!("{text:?}"));
                assert_eq!(slice(&text, entry.key.range), key, "{text:?}");
                // The block scalar before it ends before the key (nothing of the key is in it).
                for e in map.as_map().unwrap() {
                    assert!(
                        e.value.range.end <= entry.key.range.start
                            || e.key.range.start >= entry.key.range.start,
                        "{text:?}: {:?} overlaps the key",
                        slice(&text, e.value.range)
                    );
                    assert!(
                        !slice(&text, e.value.range).ends_with('b'),
                        "{text:?}: {:?}",
                        slice(&text, e.value.range)
                    );
                }
            }
        }
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
    fn more_nodes_than_the_bound_are_not_parsed() {
        // Bounded work and memory whatever the shape: 2.6 million items fit in 8 MiB.
        let at_bound = format!("[{}]", vec!["a"; MAX_NODES - 1].join(", "));
        let p = parse(&at_bound);
        assert!(!p.has_syntax_error(), "{:?}", p.issues.first());
        assert_eq!(
            p.documents[0].as_seq().map(<[Node]>::len),
            Some(MAX_NODES - 1)
        );
        let over = format!("[{}]", vec!["a"; MAX_NODES].join(", "));
        let p = parse(&over);
        assert!(p.documents.is_empty());
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].kind, YamlIssueKind::TooLarge);
        // On the first node past the bound.
        let at = u32::try_from(over.len() - 2).unwrap();
        assert_eq!(p.issues[0].range, TextRange::new(at, at + 1));
    }

    #[test]
    fn duplicate_keys_past_the_issue_bound_are_counted() {
        let text = "a: 1\n".repeat(MAX_ISSUES + 501);
        let p = parse(&text);
        assert_eq!(p.issues.len(), MAX_ISSUES);
        assert_eq!(p.issues_left_out, 500);
        assert!(!p.has_syntax_error());
    }

    #[test]
    fn text_over_the_size_limit_is_not_parsed() {
        // Long steps: the size limit is reached long before the node limit.
        let mut text = String::from("title: big\nsteps:\n");
        let line = format!("  - send: hello there {}\n", "z".repeat(200));
        while text.len() <= MAX_BYTES {
            text.push_str(&line);
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

    fn syntax_at(text: &str) -> Option<(u32, u32)> {
        parse(text)
            .issues
            .iter()
            .find(|i| i.kind == YamlIssueKind::Syntax)
            .map(|i| (i.range.start, i.range.end))
    }

    #[test]
    fn a_tab_after_a_colon_separates_like_a_space() {
        let p = parse("reachedState:\tdone\nnext:\t\tx\n");
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        let r = &p.documents[0];
        assert_eq!(r.get_value("reachedState").unwrap().as_str(), Some("done"));
        assert_eq!(r.get_value("next").unwrap().range, TextRange::new(26, 27));
        // A tab inside a quoted value is content and stays.
        let p = parse("k: \"a:\tb\"\n");
        assert_eq!(
            p.documents[0].get_value("k").unwrap().as_str(),
            Some("a:\tb")
        );
    }

    #[test]
    fn yaml_1_1_documents_resolve_with_the_1_1_schema() {
        let p = parse(
            "%YAML 1.1\n---\na: yes\nb: off\nc: 017\nd: 0b101\ne: 1_000\nf: 1:30\ng: .\nh: '017'\n",
        );
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        let r = &p.documents[0];
        assert_eq!(r.get_value("a").unwrap().value, Value::Bool(true));
        assert_eq!(r.get_value("b").unwrap().value, Value::Bool(false));
        assert_eq!(r.get_value("c").unwrap().value, Value::Int(15));
        assert_eq!(r.get_value("d").unwrap().value, Value::Int(5));
        assert_eq!(r.get_value("e").unwrap().value, Value::Int(1000));
        assert_eq!(r.get_value("f").unwrap().value, Value::Int(90));
        assert!(matches!(r.get_value("g").unwrap().value, Value::Float(f) if f.is_nan()));
        assert_eq!(r.get_value("h").unwrap().as_str(), Some("017"));
        // Without the directive the core schema holds.
        let p = parse("a: yes\nc: 017\n");
        assert_eq!(p.documents[0].get_value("a").unwrap().as_str(), Some("yes"));
        assert_eq!(p.documents[0].get_value("c").unwrap().value, Value::Int(17));
    }

    #[test]
    fn aliases_are_counted_as_the_library_counts() {
        let uses = |n: usize| format!("a: &a [x]\nb: [{}]\n", vec!["*a"; n].join(","));
        assert!(parse(&uses(99)).issues.is_empty());
        let p = parse(&uses(100));
        let issue = &p.issues[0];
        assert_eq!(issue.kind, YamlIssueKind::AliasExpansion);
        // The 100th alias (the 101st use, counting the definition).
        let at = 14 + 99 * 3;
        assert_eq!(issue.range, TextRange::new(at, at + 2));
        // An empty collection weighs nothing.
        let empty = format!("a: &a []\nb: [{}]\n", vec!["*a"; 150].join(","));
        assert!(parse(&empty).issues.is_empty());
        // Weights multiply along a chain: 4 × 4 × 4 uses of 4 scalars is too many.
        let chain =
            "a0: &a0 [x, x, x, x]\na1: &a1 [*a0, *a0, *a0, *a0]\na2: &a2 [*a1, *a1, *a1, *a1]\n";
        assert!(parse(chain).issues.is_empty());
        let chain = format!("{chain}a3: &a3 [*a2, *a2, *a2, *a2]\n");
        assert_eq!(parse(&chain).issues[0].kind, YamlIssueKind::AliasExpansion);
    }

    #[test]
    fn tabs_as_indentation_are_refused_at_the_tab() {
        assert_eq!(syntax_at("-\ta: 1\n"), Some((1, 2)));
        assert_eq!(syntax_at("steps:\n  - \tsend: hi\n"), Some((11, 12)));
        assert_eq!(syntax_at("\tk: v\n"), Some((0, 1)));
        assert_eq!(syntax_at("k: a\n\tb\n"), Some((5, 6)));
        assert_eq!(syntax_at("k:\n \t j: 1\n"), Some((4, 5)));
        assert_eq!(syntax_at("list:\n- \ta\n"), None);
        assert_eq!(syntax_at("k: a\n  \tb\n"), None);
        assert_eq!(syntax_at("\t[\t\t't']\n"), None);
    }

    #[test]
    fn flow_lines_must_be_indented_past_the_parent() {
        assert_eq!(syntax_at("key: [a,\nb]\n"), Some((9, 10)));
        assert_eq!(syntax_at("j: {k: v # c\n, l: w}\n"), Some((13, 14)));
        assert_eq!(
            syntax_at("outer:\n  - [\n    {p: q},\n  {p: q}\n    ]\n"),
            Some((27, 28))
        );
        // The closing bracket alone may sit at the parent's column; comments anywhere.
        assert_eq!(syntax_at("key: [a,\n  b\n]\n"), None);
        assert_eq!(syntax_at("key: [a,\n# c\n  b]\n"), None);
        assert_eq!(syntax_at("[a,\nb]\n"), None);
    }

    #[test]
    fn stray_carriage_returns_and_inner_boms_are_refused() {
        assert_eq!(syntax_at("a: 1\rb: 2\n"), Some((4, 5)));
        assert_eq!(syntax_at("a: 1\r\nb: 2\r\n"), None);
        assert_eq!(syntax_at("a: 1\n\u{feff}b: 2\n"), Some((5, 8)));
        assert_eq!(syntax_at("\u{feff}a: 1\n"), Some((0, 3)));
    }

    #[test]
    fn directives_follow_the_library() {
        let p = parse("%YAML 1.1\n%YAML 1.1\n---\nk: yes\n");
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(
            p.documents[0].get_value("k").unwrap().value,
            Value::Bool(true)
        );
        assert!(parse("% FOO bar\n---\nk: n\n").issues.is_empty());
        assert_eq!(syntax_at("%YAML 1.x\n---\nk: v\n"), Some((0, 5)));
        assert_eq!(syntax_at("%YAML 1.1 1.2\n---\nk: v\n"), Some((0, 5)));
        assert_eq!(syntax_at("%TAG !e!\n---\nk: v\n"), Some((0, 4)));
        assert_eq!(syntax_at("...\n---\na: 1\n"), Some((0, 3)));
        assert_eq!(syntax_at("# c\n...\n"), None);
    }

    #[test]
    fn keys_in_json_follow_javascript() {
        let p = parse("~: a\n.inf: b\n1.0: c\n1e21: d\nk: 0xFFFFFFFFFFFFFFFFF\n");
        let j = p.documents[0].to_json();
        assert_eq!(j[""], "a");
        assert_eq!(j["Infinity"], "b");
        assert_eq!(j["1"], "c");
        assert_eq!(j["1e+21"], "d");
        assert_eq!(j["k"].as_f64(), Some(295_147_905_179_352_830_000.0));
    }

    #[test]
    fn unknown_tags_keep_the_scalar_as_a_string() {
        let p = parse(
            "k: !!str1\nl: !!foo 1\nm: !!int 2\nn: !foo 1\no: ! 1\np: !<tag:yaml.org,2002:int> 3\nq: !foo\n",
        );
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        let r = &p.documents[0];
        assert_eq!(r.get_value("k").unwrap().as_str(), Some(""));
        assert_eq!(r.get_value("l").unwrap().as_str(), Some("1"));
        assert_eq!(r.get_value("m").unwrap().value, Value::Int(2));
        assert_eq!(r.get_value("n").unwrap().as_str(), Some("1"));
        assert_eq!(r.get_value("o").unwrap().as_str(), Some("1"));
        assert_eq!(r.get_value("p").unwrap().value, Value::Int(3));
        assert_eq!(r.get_value("q").unwrap().as_str(), Some(""));
    }

    #[test]
    fn a_repeated_document_end_is_a_second_document() {
        assert_eq!(syntax_at("a: 1\n...\n...\n"), Some((9, 10)));
        assert_eq!(syntax_at("...\n# c\n...\n"), Some((8, 9)));
        assert_eq!(syntax_at("a: 1\n...\n"), None);
        assert_eq!(syntax_at("a: 1\n...\n---\nb: 2\n...\n"), None);
    }

    #[test]
    fn a_last_tab_line_after_an_empty_node_is_refused() {
        assert_eq!(syntax_at("k: #v\n\t\t\t"), Some((6, 7)));
        assert_eq!(syntax_at("list:\n- a\n- \n \t"), Some((14, 15)));
        assert_eq!(syntax_at("---\n\t"), Some((4, 5)));
        // After a value, or with a line break after it, the library reads it as blank.
        assert_eq!(syntax_at("k: v\n\t"), None);
        assert_eq!(syntax_at("k:\n\t\n"), None);
    }

    #[test]
    fn a_tab_line_after_an_empty_value_before_a_sibling_is_refused() {
        assert_eq!(syntax_at("k:\n\t\nl: 1\n"), Some((3, 4)));
        assert_eq!(syntax_at("k: #v\n\t\nl: 1\n"), Some((6, 7)));
        assert_eq!(syntax_at("a:\n  k:\n\t\n  l: 1\n"), Some((8, 9)));
        assert_eq!(syntax_at("k: &a\n\t \n# c\nl: 1\n"), Some((6, 7)));
        assert_eq!(syntax_at("- k:\n\t\n  l: 1\n"), Some((5, 6)));
        assert_eq!(syntax_at("k:\n\t\n---\n"), Some((3, 4)));
        // The library accepts these.
        for text in [
            "a:\n  k:\n\t\nb: 1\n",
            "k:\n \t\nl: 1\n",
            "k:\n\n\t\nl: 1\n",
            "k:\n\t\n- a\n",
            "- \n\t\n- a\n",
            "? a\n\t\n: b\n",
            "k:\n\t\n...\n",
            "k:\n\t\n  a: 1\n",
            "k: v\n\t\nl: 1\n",
        ] {
            assert_eq!(syntax_at(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_tab_indented_root_scalar_is_refused() {
        assert_eq!(syntax_at("\t--- &x a\n#c\n"), Some((0, 1)));
        assert_eq!(syntax_at("---\n \ta\n"), Some((5, 6)));
        assert_eq!(syntax_at("\tk:v\n\t"), Some((0, 1)));
        assert_eq!(syntax_at("--- \ta\n"), None);
        assert_eq!(syntax_at("\t[a]\n"), None);
    }

    #[test]
    fn quoted_lines_in_flow_collections_follow_the_indentation_rule() {
        let text = "x: {\"f\":1, 'g\n':2}\n";
        assert_eq!(syntax_at(text), Some((14, 15)));
        let p = parse("x: {'g\n  ':2}\n");
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(
            p.documents[0].to_json(),
            serde_json::json!({"x": {"g ": 2}})
        );
        // At the root there is no parent to indent past.
        assert_eq!(syntax_at("{'g\n':2}\n"), None);
    }

    #[test]
    fn tabs_and_closing_brackets_in_flow_collections_are_accepted() {
        for (text, json) in [
            ("key: [\n  \t a\n\t]\n", serde_json::json!({"key": ["a"]})),
            ("key: [\t't'\n\t \t ]\n", serde_json::json!({"key": ["t"]})),
            ("key: [\n \t\"s\",\n]\n", serde_json::json!({"key": ["s"]})),
            (
                "outer:\n  key: [\"s\"\n  ]\n",
                serde_json::json!({"outer": {"key": ["s"]}}),
            ),
        ] {
            let p = parse(text);
            assert!(p.issues.is_empty(), "{text:?}: {:?}", p.issues);
            assert_eq!(p.documents[0].to_json(), json, "{text:?}");
        }
        let p = parse("outer:\n  key: [\"s\"\n  ]\n");
        let key = p.documents[0]
            .get_value("outer")
            .unwrap()
            .get_value("key")
            .unwrap();
        assert_eq!((key.range.start, key.range.end), (14, 22));
        // A comment before the bracket keeps saphyr's refusal rather than a wrong patch.
        assert!(
            syntax_at("k: [\"s\" # c\n]\n").is_some()
                || parse("k: [\"s\" # c\n]\n").issues.is_empty()
        );
    }

    #[test]
    fn merge_keys_merge_in_yaml_1_1_documents() {
        let text = "%YAML 1.1\n---\nbase: &b {x: 1, z: 2}\nm:\n  a: 0\n  <<: *b\n  x: 9\n";
        let p = parse(text);
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(
            p.documents[0].to_json(),
            serde_json::json!({"base": {"x": 1, "z": 2}, "m": {"a": 0, "x": 9, "z": 2}})
        );
        let m = p.documents[0].get_value("m").unwrap();
        let keys: Vec<String> = m.as_map().unwrap().iter().map(|e| e.key.js_key()).collect();
        assert_eq!(keys, ["a", "x", "z"]);
        // The merged `z` keeps its range in the anchored mapping.
        let z = m.get_value("z").unwrap();
        assert_eq!(&text[z.range.as_usize()], "2");
        let p = parse("%YAML 1.1\n---\nm:\n  <<: [{a: 1}, {a: 2, b: 3}]\n  <<: {c: 4}\n");
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(
            p.documents[0].to_json(),
            serde_json::json!({"m": {"a": 1, "b": 3, "c": 4}})
        );
        // A merge of a scalar is refused at the value; a quoted `<<` is a key.
        let text = "%YAML 1.1\n---\nm:\n  <<: b\n";
        assert_eq!(syntax_at(text), Some((23, 24)));
        let p = parse("%YAML 1.1\n---\nm:\n  '<<': {a: 1}\n");
        assert_eq!(
            p.documents[0].to_json(),
            serde_json::json!({"m": {"<<": {"a": 1}}})
        );
        // The core schema has no merge keys (FORMAT "The YAML library").
        let p = parse("m:\n  <<: {a: 1}\n");
        assert_eq!(
            p.documents[0].to_json(),
            serde_json::json!({"m": {"<<": {"a": 1}}})
        );
    }

    #[test]
    fn blank_block_scalars_with_an_indentation_indicator_are_empty() {
        for (text, want) in [
            ("k: |2- # c\n      \n      \n", ""),
            ("k: >2\n      \n", ""),
            ("k: |2+\n      \n\n", "\n\n"),
            // A comment less indented than the indicator ends the scalar (saphyr refused it).
            ("k: |4\n\n  # comment\nl: 1\n", ""),
            // Content keeps its more-indented blank lines, as the library does.
            ("k: |2\n  a\n      \n", "a\n    \n"),
        ] {
            let p = parse(text);
            assert!(p.issues.is_empty(), "{text:?}: {:?}", p.issues);
            assert_eq!(
                p.documents[0].get_value("k").unwrap().as_str(),
                Some(want),
                "{text:?}"
            );
        }
        // Without an indicator, a comment after more-indented blank lines stays refused.
        assert!(syntax_at("k: |\n       \n  # comment\n").is_some());
    }

    #[test]
    fn a_tab_in_a_blank_line_of_a_block_scalar_is_refused() {
        assert_eq!(syntax_at("k: |\n    more\n\n\n\t"), Some((16, 17)));
        assert_eq!(syntax_at("k: |\n  a\n \t\n"), Some((10, 11)));
        assert_eq!(syntax_at("k: |\n  a\n  \t\n"), None);
        assert_eq!(syntax_at("k: |\n  a\nl:\t1\n"), None);
    }
}
