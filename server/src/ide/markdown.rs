//! Workspace text in hover Markdown (report escaping, docs/security.md): a title, a summary,
//! a description, a slug or a pattern comes from a file someone else may have written, and
//! an editor renders hover Markdown, fetching any image it names (a tracking pixel when a
//! user hovers) and following links. Every such string goes through [`text`] or [`code`];
//! only the fixed wording around them is Markdown.

/// Prose from the workspace as inert Markdown: each line through the reports' escaper
/// ([`wfx_runner::report::md`]: no raw HTML, and the punctuation that could open a link,
/// an image, a code span, emphasis or a heading backslash-escaped), lines joined by line
/// breaks, so a multi-line summary keeps its lines and paragraphs and nothing in it is
/// syntax.
pub(crate) fn text(s: &str) -> String {
    s.lines()
        .map(wfx_runner::report::md)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A name, slug or pattern from the workspace as an inline code span showing it exactly:
/// one line (controls and line breaks as visible escapes, [`wfx_schemas::inert::inert`]),
/// fenced by one backtick more than its longest run of backticks (CommonMark), padded with
/// a space where the content would otherwise touch the fence. Nothing inside a code span is
/// Markdown or HTML.
pub(crate) fn code(s: &str) -> String {
    let s = wfx_schemas::inert::inert(s);
    if s.is_empty() {
        return "` `".into();
    }
    let (mut longest, mut run) = (0, 0);
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = s.starts_with('`')
        || s.ends_with('`')
        || (s.starts_with(' ') && s.ends_with(' ') && !s.trim().is_empty());
    if pad {
        format!("{fence} {s} {fence}")
    } else {
        format!("{fence}{s}{fence}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_keeps_lines_and_makes_every_construct_inert() {
        assert_eq!(text("plain words"), "plain words");
        assert_eq!(
            text("![x](https://example.invalid/p.png)"),
            r"\!\[x\]\(https://example.invalid/p.png\)"
        );
        assert_eq!(
            text("<img src=https://example.invalid/p.png>"),
            "&lt;img src=https://example.invalid/p.png&gt;"
        );
        assert_eq!(text("one\n\n# two\r\nthree"), "one\n\n\\# two\nthree");
        assert_eq!(
            text("[ref]: https://example.invalid"),
            r"\[ref\]: https://example.invalid"
        );
    }

    #[test]
    fn code_spans_show_their_content_and_cannot_be_closed_from_inside() {
        assert_eq!(code("intake"), "`intake`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`![x](u)`"), "`` `![x](u)` ``");
        assert_eq!(code("a\n\n![x](u)"), r"`a\n\n![x](u)`");
        assert_eq!(code(" x "), "`  x  `");
        assert_eq!(code(""), "` `");
    }
}
