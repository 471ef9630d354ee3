//! The cursor's place in a YAML document, derived from the text alone: the indentation and
//! the `key:` / `- ` prefixes of the cursor line and of the lines above it. It needs no parse,
//! so completion works while the document is broken (saphyr has no error recovery), on a
//! partial word, after `key: `, on a new `- ` item and in an empty file. One level of flow
//! collections on the cursor line (`decide: { to: | }`, `allow: [a, |]`) is understood.
//!
//! Limits: multi-line flow collections and keys inside block scalars are not modelled (a
//! cursor inside a block scalar yields no context). Columns here are bytes.

use wfx_schemas::text::TextRange;

/// Whether the cursor sits where a mapping key or a value goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// A key of the mapping at [`Context::path`].
    Key,
    /// The value at [`Context::path`] (its last segment is the key, or `-` for a list item).
    Value,
}

/// The cursor context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Context {
    /// Key slot: the path of the mapping; value slot: the path of the value. `-` is a list item.
    pub path: Vec<String>,
    /// Key or value.
    pub slot: Slot,
    /// The partial word under the cursor (what a completion replaces), in bytes.
    pub word: TextRange,
    /// Key slot: the keys already present in the mapping.
    pub siblings: Vec<String>,
    /// The word follows a `- ` on its line (a new list item).
    pub after_dash: bool,
    /// Column (bytes) of the word start.
    pub word_col: u32,
    /// Leading spaces of the cursor line.
    pub line_indent: u32,
    /// The cursor is inside a quoted scalar.
    pub quoted: bool,
    /// Byte offset where the cursor line starts.
    pub line_start: u32,
    /// For each `-` in `path`, the byte offset of the line holding that dash.
    pub item_lines: Vec<u32>,
    /// The text right after the word starts with `:` (the key is already written).
    pub key_written: bool,
    /// Value slot: the cursor sits right after the key's `:` with nothing between them
    /// (`reachedState:|`), so an inserted value needs a leading space to stay a value
    /// (`reachedState:x` is one plain scalar, not a key and its value).
    pub space_before: bool,
}

#[derive(Clone, Debug)]
enum OpKind {
    Dash,
    /// A key; `scalar` is true when its value on the same line is a scalar or a block
    /// scalar indicator (so the lines below are scalar content, not children).
    Key {
        name: String,
        scalar: bool,
    },
}

#[derive(Clone, Debug)]
struct Opener {
    col: u32,
    kind: OpKind,
}

/// A parsed line: its openers (dashes and a key) and where the key's colon is.
#[derive(Debug, Default)]
struct Shape {
    openers: Vec<Opener>,
    /// Column of the first non-space, non-dash character (content start), if any.
    content: Option<u32>,
    /// Column just past the key's `:`.
    colon_end: Option<u32>,
    /// True for a blank or comment-only line.
    blank: bool,
}

fn to_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// The column of the `:` ending a key that starts at `from`, if the content there is a key.
fn key_at(line: &str, from: usize) -> Option<(String, usize)> {
    let rest = line.get(from..)?;
    let first = rest.chars().next()?;
    if first == '"' || first == '\'' {
        let close = rest.get(1..)?.find(first)? + 1;
        let name = rest.get(1..close)?.to_owned();
        let after = rest.get(close + 1..)?;
        let trimmed = after.trim_start_matches(' ');
        let colon = from + close + 1 + (after.len() - trimmed.len());
        if trimmed.starts_with(':')
            && trimmed
                .get(1..)
                .is_none_or(|r| r.is_empty() || r.starts_with([' ', '\t']))
        {
            return Some((name, colon));
        }
        return None;
    }
    if "{[|>!&*%@`#,?".contains(first) {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes.get(i).copied().unwrap_or(0);
        if b == b'#' && i > 0 && bytes.get(i - 1).is_some_and(|p| *p == b' ' || *p == b'\t') {
            return None;
        }
        if b == b':' {
            let next = bytes.get(i + 1).copied();
            if next.is_none() || next == Some(b' ') || next == Some(b'\t') || next == Some(b'\r') {
                let name = rest.get(..i)?.trim_end().to_owned();
                return (!name.is_empty()).then_some((name, from + i));
            }
        }
        i += 1;
    }
    None
}

fn shape(line: &str) -> Shape {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut out = Shape::default();
    loop {
        while bytes.get(i) == Some(&b' ') {
            i += 1;
        }
        if bytes.get(i) == Some(&b'-') && matches!(bytes.get(i + 1), None | Some(b' ' | b'\t')) {
            out.openers.push(Opener {
                col: to_u32(i),
                kind: OpKind::Dash,
            });
            i += 1;
            continue;
        }
        break;
    }
    match bytes.get(i) {
        None => {
            out.blank = out.openers.is_empty();
            return out;
        }
        Some(b'#') => {
            out.blank = out.openers.is_empty();
            return out;
        }
        Some(_) => out.content = Some(to_u32(i)),
    }
    if out.openers.is_empty() && (line.starts_with("---") || line.starts_with("...")) {
        out.blank = true;
        return out;
    }
    if let Some((name, colon)) = key_at(line, i) {
        let value = line.get(colon + 1..).unwrap_or("").trim();
        let scalar = !value.is_empty()
            && !value.starts_with('#')
            && !value.starts_with(['{', '[', '&', '!']);
        out.openers.push(Opener {
            col: to_u32(i),
            kind: OpKind::Key { name, scalar },
        });
        out.colon_end = Some(to_u32(colon + 1));
    }
    out
}

/// Lines of `text` as (start offset, line without its break).
fn lines_before(text: &str, line_start: usize) -> impl Iterator<Item = (usize, &str)> {
    let head = text.get(..line_start).unwrap_or("");
    let mut end = head.len();
    std::iter::from_fn(move || {
        if end == 0 {
            return None;
        }
        let body_end = end - 1; // skip the '\n'
        let start = head
            .get(..body_end)
            .and_then(|h| h.rfind('\n'))
            .map_or(0, |p| p + 1);
        let line = head.get(start..body_end).unwrap_or("");
        end = start;
        Some((start, line))
    })
}

struct Parents {
    /// Outermost first.
    path: Vec<String>,
    item_lines: Vec<u32>,
    siblings: Vec<String>,
}

/// Walks up from the line starting at `line_start`, looking for the parents of a node at
/// `col` (`is_item`: the node is a list item whose dash sits at `col`). `same_line` are the
/// openers on the cursor line left of the node, outermost first. `None` when the node turns
/// out to sit inside a scalar.
fn parents(
    text: &str,
    line_start: usize,
    same_line: &[Opener],
    col: u32,
    is_item: bool,
) -> Option<Parents> {
    let mut w = Walk {
        limit: col,
        item: is_item,
        rev_path: Vec::new(),
        rev_items: Vec::new(),
        siblings: Vec::new(),
        found: false,
    };
    if !w.visit(same_line, to_u32(line_start))? {
        for (start, line) in lines_before(text, line_start) {
            let sh = shape(line);
            if sh.blank {
                if line.starts_with("---") {
                    break;
                }
                continue;
            }
            if w.visit(&sh.openers, to_u32(start))? {
                break;
            }
        }
    }
    Some(finish(w.rev_path, w.rev_items, w.siblings))
}

struct Walk {
    limit: u32,
    item: bool,
    rev_path: Vec<String>,
    rev_items: Vec<u32>,
    siblings: Vec<String>,
    found: bool,
}

impl Walk {
    /// Takes the parents among one line's openers; `Some(true)` when the top level is
    /// reached, `None` when the node sits inside a scalar.
    fn visit(&mut self, openers: &[Opener], start: u32) -> Option<bool> {
        for o in openers.iter().rev() {
            let is_parent = match o.kind {
                OpKind::Key { .. } => o.col < self.limit || (self.item && o.col == self.limit),
                OpKind::Dash => o.col < self.limit,
            };
            if is_parent {
                match &o.kind {
                    OpKind::Key { name, scalar } => {
                        if *scalar {
                            return None;
                        }
                        self.rev_path.push(name.clone());
                        self.item = false;
                    }
                    OpKind::Dash => {
                        self.rev_path.push("-".into());
                        self.rev_items.push(start);
                        self.item = true;
                    }
                }
                self.limit = o.col;
                self.found = true;
            } else if !self.found
                && !self.item
                && let OpKind::Key { name, .. } = &o.kind
                && o.col == self.limit
            {
                self.siblings.push(name.clone());
            }
        }
        Some(self.limit == 0 && !self.item && self.found)
    }
}

fn finish(mut rev_path: Vec<String>, mut rev_items: Vec<u32>, siblings: Vec<String>) -> Parents {
    rev_path.reverse();
    rev_items.reverse();
    Parents {
        path: rev_path,
        item_lines: rev_items,
        siblings,
    }
}

/// Keys at exactly `col` on the lines after `line_end`, up to the first line that is less
/// indented (the rest of the same mapping).
fn siblings_below(text: &str, line_end: usize, col: u32) -> Vec<String> {
    let mut out = Vec::new();
    let Some(rest) = text.get(line_end..) else {
        return out;
    };
    for line in rest.split('\n').skip(1) {
        let sh = shape(line);
        if sh.blank {
            continue;
        }
        let Some(first) = sh.openers.first().map(|o| o.col).or(sh.content) else {
            continue;
        };
        if first < col {
            break;
        }
        if let Some(Opener {
            col: c,
            kind: OpKind::Key { name, .. },
        }) = sh.openers.first()
            && *c == col
        {
            out.push(name.clone());
        }
    }
    out
}

fn is_word_byte(b: u8) -> bool {
    !matches!(
        b,
        b' ' | b'\t'
            | b'\r'
            | b'\n'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'"'
            | b'\''
            | b':'
            | b'#'
    )
}

/// The cursor context at byte `offset` of `text`; `None` inside a comment, a block scalar or
/// a multi-line plain scalar.
pub(crate) fn context(text: &str, offset: u32) -> Option<Context> {
    let offset = (offset as usize).min(text.len());
    if !text.is_char_boundary(offset) {
        return None;
    }
    let head = text.get(..offset)?;
    let line_start = head.rfind('\n').map_or(0, |p| p + 1);
    let line_end = text
        .get(offset..)
        .and_then(|r| r.find('\n'))
        .map_or(text.len(), |p| offset + p);
    let line = text.get(line_start..line_end)?.trim_end_matches('\r');
    let cur = offset - line_start;
    let sh = shape(line);
    let line_indent = to_u32(line.len() - line.trim_start_matches(' ').len());
    // Is the cursor inside a comment?
    if let Some(hash) = comment_start(line)
        && cur > hash
    {
        return None;
    }
    let dashes: Vec<Opener> = sh
        .openers
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Dash))
        .cloned()
        .collect();
    let key = sh.openers.iter().find_map(|o| match &o.kind {
        OpKind::Key { name, .. } => Some((o.col, name.clone())),
        OpKind::Dash => None,
    });
    let word_end_from = |from: usize| -> usize {
        let bytes = line.as_bytes();
        let mut e = from;
        while bytes.get(e).is_some_and(|b| is_word_byte(*b)) {
            e += 1;
        }
        e
    };
    let base = |start: usize, end: usize| {
        TextRange::new(to_u32(line_start + start), to_u32(line_start + end))
    };
    // The parents of the node the cursor line holds (its key, or the item of its last dash).
    let node_parents = |col: u32| -> Option<(Parents, bool)> {
        match dashes.split_last() {
            Some((last, outer)) => {
                let mut p = parents(text, line_start, outer, last.col, true)?;
                p.path.push("-".into());
                p.item_lines.push(to_u32(line_start));
                p.siblings = siblings_below(text, line_end, col);
                Some((p, true))
            }
            None => {
                let mut p = parents(text, line_start, &[], col, false)?;
                p.siblings.extend(siblings_below(text, line_end, col));
                Some((p, false))
            }
        }
    };
    match (key, sh.colon_end) {
        (Some((kcol, kname)), Some(colon_end)) if cur as u32 >= colon_end => {
            // Value slot of `kname`.
            let (mut p, after_dash) = node_parents(kcol)?;
            p.path.push(kname);
            let vtext = line.get(colon_end as usize..cur)?;
            let mut vstart = colon_end as usize + (vtext.len() - vtext.trim_start().len());
            // Node properties (`&anchor`, `!tag`, `!!str`) before the value stay: the word
            // starts after them. A cursor inside a property completes nothing.
            while let Some(rest) = line.get(vstart..cur)
                && rest.starts_with(['&', '!'])
            {
                let prop = rest.find([' ', '\t'])?;
                let after = rest.get(prop..).unwrap_or("");
                vstart += prop + (after.len() - after.trim_start().len());
            }
            let v = line.get(vstart..cur)?;
            if v.starts_with(['|', '>']) {
                return None;
            }
            let mut cx = Context {
                path: p.path,
                slot: Slot::Value,
                word: base(cur, cur),
                siblings: Vec::new(),
                after_dash,
                word_col: to_u32(vstart),
                line_indent,
                quoted: false,
                line_start: to_u32(line_start),
                item_lines: p.item_lines,
                key_written: false,
                space_before: cur == colon_end as usize,
            };
            if v.starts_with(['{', '[']) {
                flow(&mut cx, line, vstart, cur, line_start);
                return Some(cx);
            }
            let (wstart, quoted) = match v.chars().next() {
                Some(q @ ('"' | '\'')) => (vstart + 1, !v.get(1..).unwrap_or("").contains(q)),
                _ => (vstart, false),
            };
            let wstart = wstart.min(cur);
            cx.quoted = quoted;
            cx.word = base(wstart, word_end_from(cur).max(cur));
            cx.word_col = to_u32(wstart);
            Some(cx)
        }
        _ => {
            // Key slot (or a scalar list item after a dash).
            let content = sh.content.map_or(cur, |c| (c as usize).min(cur));
            let typed = line.get(content..cur).unwrap_or("");
            let start = content + typed.rfind([' ', '"', '\'']).map_or(0, |p| p + 1);
            let end = word_end_from(cur).max(cur);
            let col = to_u32(content);
            let (p, after_dash) = node_parents(col)?;
            let key_written = line
                .get(end..)
                .is_some_and(|r| r.trim_start_matches([' ', '"', '\'']).starts_with(':'));
            Some(Context {
                path: p.path,
                slot: Slot::Key,
                word: base(start, end),
                siblings: p.siblings,
                after_dash,
                word_col: to_u32(content),
                line_indent,
                quoted: false,
                line_start: to_u32(line_start),
                item_lines: p.item_lines,
                key_written,
                space_before: false,
            })
        }
    }
}

/// The byte column of a `#` comment on `line` (outside quotes), if any.
fn comment_start(line: &str) -> Option<usize> {
    let mut quote: Option<u8> = None;
    let bytes = line.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        match (quote, b) {
            (Some(q), c) if *c == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => {
                let prev = if i == 0 {
                    b' '
                } else {
                    bytes.get(i - 1).copied().unwrap_or(b' ')
                };
                if matches!(prev, b' ' | b'[' | b'{' | b',' | b':') {
                    quote = Some(*b);
                }
            }
            (None, b'#')
                if i == 0 || bytes.get(i - 1).is_some_and(|p| *p == b' ' || *p == b'\t') =>
            {
                return Some(i);
            }
            _ => {}
        }
    }
    None
}

/// Refines a value-slot context whose value starts a flow collection on the cursor line.
fn flow(cx: &mut Context, line: &str, vstart: usize, cur: usize, line_start: usize) {
    #[derive(Debug)]
    struct Frame {
        map: bool,
        key: Option<String>,
        entry_start: usize,
        keys: Vec<String>,
        pushed: bool,
    }
    let bytes = line.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut path = cx.path.clone();
    let mut quote: Option<u8> = None;
    let mut i = vstart;
    while i < cur {
        let b = bytes.get(i).copied().unwrap_or(0);
        if let Some(q) = quote {
            if b == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' | b'\'' => quote = Some(b),
            b'{' | b'[' => {
                let pushed = match stack.last() {
                    None => false,
                    Some(f) if f.map => match &f.key {
                        Some(k) => {
                            path.push(k.clone());
                            true
                        }
                        None => false,
                    },
                    Some(_) => {
                        path.push("-".into());
                        true
                    }
                };
                stack.push(Frame {
                    map: b == b'{',
                    key: None,
                    entry_start: i + 1,
                    keys: Vec::new(),
                    pushed,
                });
            }
            b'}' | b']' => {
                if let Some(f) = stack.pop()
                    && f.pushed
                {
                    path.pop();
                }
            }
            b',' => {
                if let Some(f) = stack.last_mut() {
                    f.key = None;
                    f.entry_start = i + 1;
                }
            }
            b':' if matches!(bytes.get(i + 1), None | Some(b' ')) => {
                if let Some(f) = stack.last_mut()
                    && f.map
                    && f.key.is_none()
                {
                    let k = line
                        .get(f.entry_start..i)
                        .unwrap_or("")
                        .trim()
                        .trim_matches(['"', '\''])
                        .to_owned();
                    f.keys.push(k.clone());
                    f.key = Some(k);
                    f.entry_start = i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    let Some(top) = stack.last() else {
        // The collection closed before the cursor: nothing to complete.
        cx.path.push("}".into());
        return;
    };
    let typed = line.get(top.entry_start..cur).unwrap_or("");
    let lead = typed.len() - typed.trim_start().len();
    let mut wstart = top.entry_start + lead;
    if let Some(q @ (b'"' | b'\'')) = bytes.get(wstart).copied() {
        cx.quoted = !line.get(wstart + 1..cur).unwrap_or("").contains(q as char);
        wstart += 1;
    }
    let wstart = wstart.min(cur);
    let mut end = cur;
    while bytes.get(end).is_some_and(|b| is_word_byte(*b)) {
        end += 1;
    }
    cx.word = TextRange::new(to_u32(line_start + wstart), to_u32(line_start + end));
    cx.word_col = to_u32(wstart);
    if top.map {
        match &top.key {
            Some(k) => {
                path.push(k.clone());
                cx.slot = Slot::Value;
            }
            None => {
                cx.slot = Slot::Key;
                cx.siblings = top.keys.clone();
                cx.key_written = line
                    .get(end..)
                    .is_some_and(|r| r.trim_start().starts_with(':'));
            }
        }
    } else {
        path.push("-".into());
        cx.slot = Slot::Value;
    }
    cx.path = path;
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};

    #[track_caller]
    fn check(src: &str, want: Expect) {
        let offset = src.find("$0").expect("cursor");
        let text = src.replacen("$0", "", 1);
        let got = match context(&text, offset as u32) {
            None => "none".to_owned(),
            Some(cx) => format!(
                "{:?} {} word={:?} siblings={:?}{}",
                cx.slot,
                cx.path.join("."),
                text.get(cx.word.as_usize()).unwrap_or("?"),
                cx.siblings,
                if cx.quoted { " quoted" } else { "" }
            ),
        };
        want.assert_eq(&got);
    }

    #[test]
    fn keys_at_every_level() {
        check("$0", expect![[r#"Key  word="" siblings=[]"#]]);
        check(
            "title: x\nde$0\nsteps:\n",
            expect![[r#"Key  word="de" siblings=["title", "steps"]"#]],
        );
        check(
            "steps:\n  - send: hi\n  - $0\n",
            expect![[r#"Key steps.- word="" siblings=[]"#]],
        );
        check(
            "steps:\n- send: hi\n- rea$0\n",
            expect![[r#"Key steps.- word="rea" siblings=[]"#]],
        );
        check(
            "steps:\n  - decide:\n      to: x\n      c$0\n",
            expect![[r#"Key steps.-.decide word="c" siblings=["to"]"#]],
        );
        check(
            "steps:\n  - decide:\n      $0\n",
            expect![[r#"Key steps.-.decide word="" siblings=[]"#]],
        );
        check(
            "mocks:\n  - tool: x\n    $0\n",
            expect![[r#"Key mocks.- word="" siblings=["tool"]"#]],
        );
    }

    #[test]
    fn values_after_a_colon_and_in_flow_collections() {
        check(
            "steps:\n  - reachedState: ref$0\n",
            expect![[r#"Value steps.-.reachedState word="ref" siblings=[]"#]],
        );
        check(
            "trigger:\n  id: $0\n",
            expect![[r#"Value trigger.id word="" siblings=[]"#]],
        );
        check(
            "steps:\n  - decide: { to: re$0 }\n",
            expect![[r#"Value steps.-.decide.to word="re" siblings=[]"#]],
        );
        check(
            "steps:\n  - decide: { to: x, c$0 }\n",
            expect![[r#"Key steps.-.decide word="c" siblings=["to"]"#]],
        );
        check(
            "a:\n  allow: [x, $0]\n",
            expect![[r#"Value a.allow.- word="" siblings=[]"#]],
        );
        check(
            "steps:\n  - send: \"he$0llo\"\n",
            expect![[r#"Value steps.-.send word="hello" siblings=[] quoted"#]],
        );
    }

    #[test]
    fn broken_documents_and_scalars() {
        // A tab and an unclosed quote further down do not matter.
        check(
            "title: \"x\nsteps:\n  - parked:\n      st$0\n\t- bad: [\n",
            expect![[r#"Key steps.-.parked word="st" siblings=[]"#]],
        );
        check("description: >-\n  some text\n  mo$0\n", expect!["none"]);
        check("title: x # com$0\n", expect!["none"]);
        check(
            "states:\n  a:\n    transitions:\n      - to: b\n        type: $0\n",
            expect![[r#"Value states.a.transitions.-.type word="" siblings=[]"#]],
        );
    }
}
