//! Source preparation for sandbox scripts: finding `import` statements and `export default`
//! at statement starts, blanking imports and rewriting the default export so a hook runs as a
//! script body (FORMAT §A.6, §D.2), and the camelCase names of the `tools` bridge (FORMAT §E.9
//! "From scripts").
//!
//! The scanner is deliberately small: it walks the text once, skipping comments, string,
//! template and regex literals (the last by the usual "what came before the slash" heuristic),
//! and looks for `import` / `export default` only where a line starts, as the reference does.
//! Every edit keeps byte offsets: replaced bytes become spaces (newlines stay), so positions
//! reported by QuickJS for the prepared text are positions in the file.

use wfx_schemas::text::TextRange;

/// The import specifier prefix the sandbox accepts: `@archmax-ai/harness` itself or any
/// `@archmax-ai/harness/<entry>` type carrier (FORMAT §D.2).
pub const HARNESS_SPECIFIER: &str = "@archmax-ai/harness";

/// The global a rewritten `export default <expr>` assigns to (`__wfxHook.d = <expr>`).
pub(crate) const HOOK_SLOT: &str = "__wfxHook";

/// True for `@archmax-ai/harness` and `@archmax-ai/harness/*` (FORMAT §D.2).
pub fn is_harness_specifier(specifier: &str) -> bool {
    specifier == HARNESS_SPECIFIER
        || specifier
            .strip_prefix(HARNESS_SPECIFIER)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// One static `import` statement found at the start of a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportStatement {
    /// The whole statement, from `import` through the closing quote and an optional `;`
    /// (byte offsets).
    pub range: TextRange,
    /// The module specifier as written, without quotes.
    pub specifier: String,
    /// The specifier's bytes inside the quotes.
    pub specifier_range: TextRange,
}

/// What [`scan`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// Static imports, in source order.
    pub imports: Vec<ImportStatement>,
    /// The `export default` keyword pairs at statement starts (from `export` through
    /// `default`), in source order.
    pub export_defaults: Vec<TextRange>,
}

/// Every static import whose specifier is not `@archmax-ai/harness/*`, as (range of the
/// specifier inside its quotes, specifier), in source order (FORMAT §D.2).
pub fn foreign_imports(source: &str) -> Vec<(TextRange, String)> {
    scan(source)
        .imports
        .into_iter()
        .filter(|i| !is_harness_specifier(&i.specifier))
        .map(|i| (i.specifier_range, i.specifier))
        .collect()
}

/// The name a tool has on the `tools` bridge: `-x`/`_x` with `x` a lower-case ASCII letter
/// becomes `X` (`read_file` → `readFile`, `archmax_workflow_enrich-order` →
/// `archmaxWorkflowEnrichOrder`); everything else is kept (FORMAT §E.9).
pub fn camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if (c == '-' || c == '_')
            && let Some(&next) = chars.peek()
            && next.is_ascii_lowercase()
        {
            out.push(next.to_ascii_uppercase());
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// The snake_case wire name of a bridge name written in a script: `archmaxWorkflow<Pascal>`
/// → `archmax_workflow_<kebab>` (`archmaxWorkflowEnrichOrder` →
/// `archmax_workflow_enrich-order`), any other camelCase name → snake_case (`readFile` →
/// `read_file`); the inverse of [`camel_case`] for the names the bridge carries (FORMAT §E.9).
/// Names already in snake_case pass through. The one mapping of script-side tool names: the
/// sandbox's bridge and any other [`crate::script_host::ScriptHost`] use it.
pub fn snake_from_camel(name: &str) -> String {
    let split = |s: &str, sep: char| {
        let mut out = String::with_capacity(s.len() + 4);
        for (i, c) in s.chars().enumerate() {
            if c.is_ascii_uppercase() {
                if i > 0 {
                    out.push(sep);
                }
                out.push(c.to_ascii_lowercase());
            } else {
                out.push(c);
            }
        }
        out
    };
    match name.strip_prefix("archmaxWorkflow") {
        Some(rest) if !rest.is_empty() => format!("archmax_workflow_{}", split(rest, '-')),
        _ => split(name, '_'),
    }
}

/// The identifiers a source uses as `tools.<name>` (outside comments and strings is not
/// checked: an extra name only adds an entry to the bridge object), sorted and unique.
pub fn referenced_tools(source: &str) -> Vec<String> {
    let b = source.as_bytes();
    let mut out = std::collections::BTreeSet::new();
    let mut from = 0usize;
    while let Some(found) = source.get(from..).and_then(|rest| rest.find("tools.")) {
        let at = from + found;
        from = at + "tools.".len();
        if at > 0
            && b.get(at - 1)
                .is_some_and(|&c| is_ident_byte(c) || c == b'.')
        {
            continue;
        }
        let len = b
            .get(from..)
            .map_or(0, |r| r.iter().take_while(|&&c| is_ident_byte(c)).count());
        if let Some(name) = source.get(from..from + len)
            && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        {
            out.insert(name.to_string());
        }
    }
    out.into_iter().collect()
}

/// Prepares a source to run as a script body: every import statement is blanked (an
/// `@archmax-ai/harness/*` import is a type carrier whose names are globals; any other one is
/// reported by [`foreign_imports`]), and when `rewrite_default` is set each `export default`
/// becomes an assignment to the hook slot. Byte offsets are preserved.
pub(crate) fn prepare(source: &str, rewrite_default: bool) -> String {
    let found = scan(source);
    let mut bytes = source.as_bytes().to_vec();
    for import in &found.imports {
        blank(&mut bytes, import.range);
    }
    if rewrite_default {
        let assign = format!("{HOOK_SLOT}.d =");
        for range in &found.export_defaults {
            let (start, end) = (range.start as usize, range.end as usize);
            if let Some(slot) = bytes.get_mut(start..end)
                && slot.len() >= assign.len()
            {
                slot.fill(b' ');
                if let Some(head) = slot.get_mut(..assign.len()) {
                    head.copy_from_slice(assign.as_bytes());
                }
            }
        }
    }
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Replaces every byte of `range` but line breaks with a space.
fn blank(bytes: &mut [u8], range: TextRange) {
    if let Some(slice) = bytes.get_mut(range.start as usize..range.end as usize) {
        for b in slice.iter_mut() {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    }
}

/// Keywords after which a `/` starts a regular expression rather than a division.
const REGEX_AFTER_WORDS: &[&str] = &[
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "yield",
    "await",
    "instanceof",
];

/// Walks `source` once and collects the imports and default exports at line starts.
pub fn scan(source: &str) -> Scan {
    let b = source.as_bytes();
    let mut out = Scan::default();
    let mut i = 0usize;
    let mut line_start = true;
    // The last significant byte of code, and the identifier it ended, for the regex heuristic.
    let mut prev: Option<u8> = None;
    let mut prev_word_start: Option<usize> = None;
    // Brace depths at which an open template literal's `${` was entered.
    let mut templates: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    while let Some(&c) = b.get(i) {
        match c {
            b'\n' => {
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        if line_start {
            line_start = false;
            if let Some(stmt) = import_at(source, i) {
                i = stmt.range.end as usize;
                out.imports.push(stmt);
                prev = Some(b';');
                prev_word_start = None;
                continue;
            }
            if let Some(end) = export_default_at(b, i) {
                out.export_defaults
                    .push(TextRange::new(i as u32, end as u32));
                i = end;
                prev = Some(b'=');
                prev_word_start = None;
                continue;
            }
        }
        let next = b.get(i + 1).copied();
        match c {
            b'/' if next == Some(b'/') => {
                while b.get(i).is_some_and(|&x| x != b'\n') {
                    i += 1;
                }
            }
            b'/' if next == Some(b'*') => {
                i += 2;
                while i < b.len() && !(b.get(i) == Some(&b'*') && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i = (i + 2).min(b.len());
            }
            b'"' | b'\'' => {
                i = skip_string(b, i);
                prev = Some(b'"');
                prev_word_start = None;
            }
            b'`' => {
                let (end, opened) = skip_template(b, i + 1);
                i = end;
                if opened {
                    templates.push(depth);
                    depth += 1;
                    prev = Some(b'{');
                } else {
                    prev = Some(b'"');
                }
                prev_word_start = None;
            }
            b'/' if regex_allowed(source, prev, prev_word_start, i) => {
                i = skip_regex(b, i);
                prev = Some(b'"');
                prev_word_start = None;
            }
            b'{' => {
                depth += 1;
                i += 1;
                prev = Some(c);
                prev_word_start = None;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                if templates.last() == Some(&depth) {
                    templates.pop();
                    let (end, opened) = skip_template(b, i + 1);
                    i = end;
                    if opened {
                        templates.push(depth);
                        depth += 1;
                        prev = Some(b'{');
                    } else {
                        prev = Some(b'"');
                    }
                } else {
                    i += 1;
                    prev = Some(c);
                }
                prev_word_start = None;
            }
            _ if is_ident_byte(c) => {
                let start = i;
                while b.get(i).is_some_and(|&x| is_ident_byte(x)) {
                    i += 1;
                }
                prev = Some(b'a');
                prev_word_start = Some(start);
            }
            _ => {
                i += 1;
                prev = Some(c);
                prev_word_start = None;
            }
        }
    }
    out
}

/// True for bytes of identifiers and numbers (non-ASCII counts as identifier).
fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// Whether a `/` at `at` starts a regex literal, judged by the previous significant token.
fn regex_allowed(
    source: &str,
    prev: Option<u8>,
    prev_word_start: Option<usize>,
    at: usize,
) -> bool {
    match prev {
        None => true,
        Some(b')' | b']' | b'"') => false,
        Some(b'a') => {
            let word = prev_word_start
                .and_then(|s| source.get(s..at))
                .map(str::trim_end)
                .unwrap_or_default();
            REGEX_AFTER_WORDS.contains(&word)
        }
        Some(_) => true,
    }
}

/// Skips a quoted string starting at `at`; returns the offset after its closing quote (or the
/// line end for an unterminated one).
fn skip_string(b: &[u8], at: usize) -> usize {
    let quote = b.get(at).copied().unwrap_or(b'"');
    let mut i = at + 1;
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => i += 2,
            b'\n' => return i,
            _ if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// Skips template text from `at` (just after a backtick or a closing `}`); returns the
/// offset after the closing backtick, or after `${` with `true` when an expression opens.
fn skip_template(b: &[u8], at: usize) -> (usize, bool) {
    let mut i = at;
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => i += 2,
            b'`' => return (i + 1, false),
            b'$' if b.get(i + 1) == Some(&b'{') => return (i + 2, true),
            _ => i += 1,
        }
    }
    (b.len(), false)
}

/// Skips a regex literal starting at `at` (the `/`), flags included.
fn skip_regex(b: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    let mut in_class = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => i += 2,
            b'\n' => return i,
            b'[' => {
                in_class = true;
                i += 1;
            }
            b']' => {
                in_class = false;
                i += 1;
            }
            b'/' if !in_class => {
                i += 1;
                while b.get(i).is_some_and(|&x| x.is_ascii_alphabetic()) {
                    i += 1;
                }
                return i;
            }
            _ => i += 1,
        }
    }
    b.len()
}

/// True when `word` sits at `at` and is followed by something that cannot continue it.
fn keyword_at(b: &[u8], at: usize, word: &str) -> bool {
    b.get(at..at + word.len()) == Some(word.as_bytes())
        && !b.get(at + word.len()).is_some_and(|&c| is_ident_byte(c))
}

/// Parses `import … from "spec";` or `import "spec";` at `at`.
fn import_at(source: &str, at: usize) -> Option<ImportStatement> {
    let b = source.as_bytes();
    if !keyword_at(b, at, "import") {
        return None;
    }
    let mut i = at + "import".len();
    // `import(…)` and `import.meta` are expressions, not statements.
    let after = b
        .get(i..)?
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .map(|n| i + n)?;
    if matches!(b.get(after), Some(b'(' | b'.')) {
        return None;
    }
    i = after;
    let quote_at = if matches!(b.get(i), Some(b'"' | b'\'')) {
        i
    } else {
        // Bindings up to the quote; a `(`, `)` or `;` first means this is no import we read.
        let q = b
            .get(i..)?
            .iter()
            .position(|&c| matches!(c, b'"' | b'\'' | b'(' | b')' | b';'))?
            + i;
        if !matches!(b.get(q), Some(b'"' | b'\'')) {
            return None;
        }
        let head = source.get(i..q)?.trim_end();
        let ends_with_from = head.ends_with("from")
            && head.len() > 4
            && head
                .as_bytes()
                .get(head.len() - 5)
                .is_some_and(|&c| !is_ident_byte(c));
        if !ends_with_from {
            return None;
        }
        q
    };
    let quote = b.get(quote_at).copied()?;
    let spec_start = quote_at + 1;
    let spec_len = b
        .get(spec_start..)?
        .iter()
        .position(|&c| c == quote || c == b'\n')?;
    let spec_end = spec_start + spec_len;
    if b.get(spec_end) != Some(&quote) {
        return None;
    }
    let mut end = spec_end + 1;
    while matches!(b.get(end), Some(b' ' | b'\t')) {
        end += 1;
    }
    if b.get(end) == Some(&b';') {
        end += 1;
    } else {
        // Trailing blanks belong to the line, not the statement.
        end = spec_end + 1;
    }
    Some(ImportStatement {
        range: TextRange::new(at as u32, end as u32),
        specifier: source.get(spec_start..spec_end)?.to_string(),
        specifier_range: TextRange::new(spec_start as u32, spec_end as u32),
    })
}

/// Parses `export default` (blanks or tabs between, and a blank or tab after) at `at`; returns
/// the offset just after `default`.
fn export_default_at(b: &[u8], at: usize) -> Option<usize> {
    if !keyword_at(b, at, "export") {
        return None;
    }
    let mut i = at + "export".len();
    let gap = b
        .get(i..)?
        .iter()
        .take_while(|&&c| c == b' ' || c == b'\t')
        .count();
    if gap == 0 {
        return None;
    }
    i += gap;
    if !keyword_at(b, i, "default") {
        return None;
    }
    i += "default".len();
    matches!(b.get(i), Some(b' ' | b'\t')).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_matches_the_bridge_names() {
        assert_eq!(camel_case("read_file"), "readFile");
        assert_eq!(
            camel_case("archmax_workflow_enrich-order"),
            "archmaxWorkflowEnrichOrder"
        );
        assert_eq!(camel_case("ls"), "ls");
        assert_eq!(camel_case("tool_2x"), "tool_2x");
    }

    #[test]
    fn snake_names_invert_camel_names() {
        for snake in [
            "read_file",
            "archmax_workflow_enrich-order",
            "ls",
            "write_todos",
        ] {
            assert_eq!(snake_from_camel(&camel_case(snake)), snake);
        }
    }

    #[test]
    fn camel_names_map_to_wire_names() {
        assert_eq!(snake_from_camel("readFile"), "read_file");
        assert_eq!(
            snake_from_camel("archmaxWorkflowEnrichOrder"),
            "archmax_workflow_enrich-order"
        );
        assert_eq!(snake_from_camel("read_file"), "read_file");
    }

    #[test]
    fn referenced_tools_are_found() {
        let src = "await tools.readFile({});\nconst x = mytools.nope; tools.archmaxWorkflowEnrichOrder(a); tools.readFile";
        assert_eq!(
            referenced_tools(src),
            ["archmaxWorkflowEnrichOrder", "readFile"]
        );
    }

    #[test]
    fn finds_imports_at_line_starts_only() {
        let src = "import { a } from \"@archmax-ai/harness/hooks\";\n\
                   import x, {\n  y,\n} from 'lodash'\n\
                   import \"side\";\n\
                   const s = \"import z from 'nope'\";\n\
                   // import q from 'comment'\n\
                   const t = `\nimport w from 'tpl'\n`;\n\
                   const u = await import('dyn');\n";
        let found: Vec<String> = scan(src).imports.into_iter().map(|i| i.specifier).collect();
        assert_eq!(found, ["@archmax-ai/harness/hooks", "lodash", "side"]);
        let foreign = foreign_imports(src);
        assert_eq!(foreign.len(), 2);
        let (range, spec) = &foreign[0];
        assert_eq!(&src[range.start as usize..range.end as usize], spec);
    }

    #[test]
    fn regex_with_quotes_does_not_derail_the_scan() {
        let src = "const re = /[\"']/g;\nconst n = a / b / c;\nimport k from \"kk\";\n";
        assert_eq!(foreign_imports(src).len(), 1);
    }

    #[test]
    fn prepare_keeps_offsets_and_rewrites_the_default_export() {
        let src = "import { ok } from \"@archmax-ai/harness\";\nexport default async function hook() {\n  return ok();\n}\n";
        let out = prepare(src, true);
        assert_eq!(out.len(), src.len());
        assert!(out.starts_with(&" ".repeat(40)));
        assert!(
            out.contains("__wfxHook.d =  async function hook()"),
            "{out}"
        );
        assert_eq!(out.find("return"), src.find("return"));
    }

    #[test]
    fn harness_specifiers() {
        assert!(is_harness_specifier("@archmax-ai/harness"));
        assert!(is_harness_specifier("@archmax-ai/harness/hooks"));
        assert!(!is_harness_specifier("@archmax-ai/harnessy"));
        assert!(!is_harness_specifier("lodash"));
    }
}
