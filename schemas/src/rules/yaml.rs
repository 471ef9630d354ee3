//! Stream-level rules shared by every file kind: syntax errors, duplicate keys, depth and
//! alias limits, complex keys, and "one document per file" (FORMAT §A.0, §B.0).

use crate::diagnostics::{self, Diagnostic};
use crate::text::TextRange;
use crate::yaml::{Parsed, YamlIssueKind};

/// Diagnostics for the YAML issues of `parsed`, plus one for every document after the
/// first (the reference's loader reads exactly one document).
pub fn check(file: &str, parsed: &Parsed) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for issue in &parsed.issues {
        let code = match issue.kind {
            YamlIssueKind::Syntax => &diagnostics::YAML_SYNTAX,
            YamlIssueKind::DuplicateKey => &diagnostics::DUPLICATE_KEY,
            YamlIssueKind::TooDeep => &diagnostics::YAML_TOO_DEEP,
            YamlIssueKind::AliasExpansion => &diagnostics::ALIAS_BOMB,
            YamlIssueKind::ComplexKey => &diagnostics::COMPLEX_KEY,
            YamlIssueKind::TooLarge => &diagnostics::FILE_TOO_LARGE,
        };
        let mut d = Diagnostic::new(code, file, issue.range, issue.message.clone());
        if let Some(first) = issue.related {
            d = d.with_related(file, first, "first occurrence");
        }
        out.push(d);
    }
    if parsed.issues_left_out > 0 {
        let at = parsed
            .issues
            .last()
            .map_or(TextRange::empty(0), |i| i.range);
        diagnostics::count_left_out(
            &mut out,
            file,
            at,
            diagnostics::Severity::Error,
            parsed.issues_left_out,
        );
    }
    if let Some(second) = parsed.document_ranges.get(1) {
        out.push(Diagnostic::new(
            &diagnostics::MULTIPLE_DOCUMENTS,
            file,
            *second,
            "a file holds exactly one YAML document; remove the `---` and everything after it, or move it to its own file",
        ));
    }
    out
}
