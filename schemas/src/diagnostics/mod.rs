//! Diagnostics as data: the [`Diagnostic`] type, severities, related sites, fixes, and the
//! code registry.
//!
//! Codes are stable and grouped by range: `WFX0xx` YAML syntax and document shape shared by
//! both formats, `WFX1xx` the case schema (FORMAT §B), `WFX2xx` the workflow (FORMAT §A),
//! `WFX3xx` cross-file (FORMAT §B.10, §D; 301–339 cases, 340–399 workflows), `WFX4xx` the
//! runner's agent scripts, `WFX9xx` internal. Each range has its own
//! registry file; [`all_codes`] chains them. A rule never picks a severity: it comes from the
//! registry. No LSP types and no positions here — ranges are byte offsets.

mod codes_agent;
mod codes_case;
mod codes_cross_case;
mod codes_cross_workflow;
mod codes_internal;
mod codes_script;
mod codes_workflow;
mod codes_yaml;

#[allow(unused_imports, ambiguous_glob_reexports)]
pub use codes_agent::*;
#[allow(unused_imports, ambiguous_glob_reexports)]
pub use codes_case::*;
#[allow(unused_imports, ambiguous_glob_reexports)]
pub use codes_cross_case::*;
#[allow(unused_imports, ambiguous_glob_reexports)]
pub use codes_cross_workflow::*;
#[allow(unused_imports, ambiguous_glob_reexports)]
pub use codes_internal::*;
#[allow(unused_imports, ambiguous_glob_reexports)]
pub use codes_script::*;
#[allow(unused_imports, ambiguous_glob_reexports)]
pub use codes_workflow::*;
#[allow(unused_imports, ambiguous_glob_reexports)]
pub use codes_yaml::*;

use crate::text::TextRange;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Fails `check` (exit 1) and the reference's `validate`.
    Error,
    /// Reported, never fails.
    Warning,
    /// Informational.
    Information,
    /// A hint.
    Hint,
}

impl Severity {
    /// `error`, `warning`, `information` or `hint`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "information",
            Severity::Hint => "hint",
        }
    }
}

/// One entry of the code registry.
#[derive(Debug)]
pub struct CodeInfo {
    /// The stable code, e.g. `WFX104`.
    pub code: &'static str,
    /// A kebab-case slug, e.g. `unknown-step`.
    pub slug: &'static str,
    /// Default severity.
    pub severity: Severity,
    /// One-line summary.
    pub summary: &'static str,
    /// The FORMAT.md section the rule enforces, e.g. `§B.2`; `wfx` for our own checks.
    pub section: &'static str,
    /// Markdown explanation with a failing and a passing example.
    pub explanation: &'static str,
    /// Retired codes stay listed, never reused.
    pub retired: bool,
}

/// A code is a reference into the registry.
pub type Code = &'static CodeInfo;

/// Every registered code, in code order.
pub fn all_codes() -> Vec<Code> {
    let mut v: Vec<Code> = Vec::new();
    v.extend_from_slice(codes_yaml::CODES);
    v.extend_from_slice(codes_case::CODES);
    v.extend_from_slice(codes_workflow::CODES);
    v.extend_from_slice(codes_cross_case::CODES);
    v.extend_from_slice(codes_cross_workflow::CODES);
    v.extend_from_slice(codes_agent::CODES);
    v.extend_from_slice(codes_script::CODES);
    v.extend_from_slice(codes_internal::CODES);
    v.sort_by_key(|c| c.code);
    v
}

/// Looks a code up by its name (`WFX104`).
pub fn code_by_name(name: &str) -> Option<Code> {
    all_codes().into_iter().find(|c| c.code == name)
}

/// Another site that explains a diagnostic (the first of two duplicate keys, the declared
/// triggers in `workflow.yaml`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    /// Workspace-relative path with `/`.
    pub file: String,
    /// Byte range in that file.
    pub range: TextRange,
    /// What is there.
    pub message: String,
}

/// One text replacement in one file, in byte offsets of the text that was checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextEdit {
    /// Workspace-relative path with `/`.
    pub file: String,
    /// Bytes to replace (empty for an insertion).
    pub range: TextRange,
    /// Replacement text.
    pub new_text: String,
}

/// A quick fix: a title and minimal edits that keep comments and formatting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// Shown to the user, e.g. "replace `sned` with `send`".
    pub title: String,
    /// The edits, non-overlapping.
    pub edits: Vec<TextEdit>,
}

/// A finding about one range of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The registry entry.
    pub code: Code,
    /// Severity (from the registry unless a rule documents an override).
    pub severity: Severity,
    /// Workspace-relative path with `/`.
    pub file: String,
    /// Byte range in the file's text (BOM stripped).
    pub range: TextRange,
    /// Our wording: lower case, no final period, names the key as written and what was
    /// expected.
    pub message: String,
    /// Other sites.
    pub related: Vec<Related>,
    /// Quick fixes.
    pub fixes: Vec<Fix>,
}

impl PartialEq for CodeInfo {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
    }
}
impl Eq for CodeInfo {}

impl Diagnostic {
    /// A diagnostic with the registry's severity and no related sites or fixes.
    pub fn new(
        code: Code,
        file: impl Into<String>,
        range: TextRange,
        message: impl Into<String>,
    ) -> Self {
        Self {
            code,
            severity: code.severity,
            file: file.into(),
            range,
            message: message.into(),
            related: Vec::new(),
            fixes: Vec::new(),
        }
    }

    /// Adds a related site.
    #[must_use]
    pub fn with_related(
        mut self,
        file: impl Into<String>,
        range: TextRange,
        message: impl Into<String>,
    ) -> Self {
        self.related.push(Related {
            file: file.into(),
            range,
            message: message.into(),
        });
        self
    }

    /// Adds a one-edit fix in the diagnostic's own file.
    #[must_use]
    pub fn with_fix(
        mut self,
        title: impl Into<String>,
        range: TextRange,
        new_text: impl Into<String>,
    ) -> Self {
        let file = self.file.clone();
        self.fixes.push(Fix {
            title: title.into(),
            edits: vec![TextEdit {
                file,
                range,
                new_text: new_text.into(),
            }],
        });
        self
    }

    /// The sort key every output uses: (file, start, code, end, message).
    pub fn sort_key(&self) -> (&str, u32, &str, u32, &str) {
        (
            &self.file,
            self.range.start,
            self.code.code,
            self.range.end,
            &self.message,
        )
    }
}

/// Sorts by (file, start, code) and removes exact duplicates.
pub fn sort_diagnostics(diags: &mut Vec<Diagnostic>) {
    diags.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    diags.dedup_by(|a, b| a.sort_key() == b.sort_key());
}

/// Most diagnostics reported for one file (see [`cap_per_file`]).
pub const MAX_PER_FILE: usize = 1000;

/// Sorts like [`sort_diagnostics`], then keeps at most [`MAX_PER_FILE`] diagnostics per
/// file: the rest of a file's are replaced by one `WFX009` at the first left-out site,
/// naming how many were left out, as severe as the most severe of them (an error is never
/// hidden behind a warning). Bounds the output (and an editor's memory) for hostile files
/// such as 100,000 unknown keys.
pub fn cap_per_file(diags: &mut Vec<Diagnostic>) {
    /// The left-out diagnostics of the current file: the first one, how many, the worst
    /// severity.
    fn flush(out: &mut Vec<Diagnostic>, left: &mut Option<(Diagnostic, usize, Severity)>) {
        if let Some((first, n, worst)) = left.take() {
            let mut d = Diagnostic::new(
                &TOO_MANY_PROBLEMS,
                first.file.clone(),
                first.range,
                format!(
                    "{n} more problems in this file are not reported (at most {MAX_PER_FILE} per file); the first is: {}",
                    first.message
                ),
            );
            d.severity = worst;
            out.push(d);
        }
    }
    sort_diagnostics(diags);
    if diags.len() <= MAX_PER_FILE {
        return;
    }
    let all = std::mem::take(diags);
    let mut left: Option<(Diagnostic, usize, Severity)> = None;
    let mut kept = 0usize;
    for d in all {
        if diags.last().is_none_or(|last| last.file != d.file)
            && left
                .as_ref()
                .is_none_or(|(first, _, _)| first.file != d.file)
        {
            flush(diags, &mut left);
            kept = 0;
        }
        if kept < MAX_PER_FILE {
            diags.push(d);
            kept += 1;
        } else {
            match &mut left {
                Some((_, n, worst)) => {
                    *n += 1;
                    *worst = (*worst).min(d.severity);
                }
                None => {
                    let sev = d.severity;
                    left = Some((d, 1, sev));
                }
            }
        }
    }
    flush(diags, &mut left);
}

/// Declares a registry entry: `code!(NAME, "WFX000", "slug", Error, "§A.1", "summary", "explanation")`.
#[macro_export]
macro_rules! code {
    ($name:ident, $code:literal, $slug:literal, $sev:ident, $section:literal, $summary:literal, $expl:literal) => {
        #[doc = $summary]
        pub static $name: $crate::diagnostics::CodeInfo = $crate::diagnostics::CodeInfo {
            code: $code,
            slug: $slug,
            severity: $crate::diagnostics::Severity::$sev,
            summary: $summary,
            section: $section,
            explanation: $expl,
            retired: false,
        };
    };
}

/// Renders the registry as `docs/diagnostics.md`: one section per code with its anchor
/// (`#wfx104`), severity, FORMAT section, summary and explanation. The server's
/// `codeDescription.href` and SARIF's `helpUri` point at these anchors.
pub fn render_markdown() -> String {
    let mut out = String::from(
        "# Diagnostics\n\n<!-- Generated from schemas/src/diagnostics/ by `UPDATE_EXPECT=1 cargo test -p wfx-schemas --test generated_docs`; do not edit. -->\n\n",
    );
    out.push_str("Codes are stable: `WFX0xx` YAML and stream, `WFX1xx` case documents (FORMAT §B), `WFX2xx` workflow.yaml (FORMAT §A), `WFX3xx` cross-file (FORMAT §B.10, §D), `WFX4xx` agent scripts, `WFX5xx` hook and skill scripts, `WFX9xx` internal.\n\n");
    out.push_str("| code | name | severity | rule | summary |\n|---|---|---|---|---|\n");
    for c in all_codes() {
        out.push_str(&format!(
            "| [{}](#{}) | `{}` | {} | {} | {}{} |\n",
            c.code,
            c.code.to_lowercase(),
            c.slug,
            c.severity.as_str(),
            c.section,
            c.summary,
            if c.retired { " (retired)" } else { "" }
        ));
    }
    for c in all_codes() {
        out.push_str(&format!(
            "\n## {}\n\n`{}` · {} · FORMAT {}\n\n**{}**\n\n{}\n",
            c.code,
            c.slug,
            c.severity.as_str(),
            c.section,
            c.summary,
            c.explanation
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_per_file_keeps_the_first_and_summarizes_the_rest() {
        let d = |file: &str, at: u32, sev: Severity| {
            let mut d = Diagnostic::new(
                &CASE_UNKNOWN_KEY,
                file,
                TextRange::empty(at),
                format!("p{at}"),
            );
            d.severity = sev;
            d
        };
        let mut v: Vec<Diagnostic> = Vec::new();
        // a.yaml: 1,003 problems, the left-out ones a warning and an error (worst: error).
        for i in 0..MAX_PER_FILE as u32 + 1 {
            v.push(d("a.yaml", i, Severity::Warning));
        }
        v.push(d("a.yaml", 5000, Severity::Error));
        v.push(d("a.yaml", 5001, Severity::Warning));
        // b.yaml: two problems, untouched.
        v.push(d("b.yaml", 1, Severity::Warning));
        v.push(d("b.yaml", 0, Severity::Error));
        v.reverse();
        cap_per_file(&mut v);
        let a: Vec<&Diagnostic> = v.iter().filter(|x| x.file == "a.yaml").collect();
        assert_eq!(a.len(), MAX_PER_FILE + 1);
        let last = a[MAX_PER_FILE];
        assert_eq!(last.code.code, "WFX009");
        assert_eq!(last.severity, Severity::Error);
        assert_eq!(last.range, TextRange::empty(MAX_PER_FILE as u32));
        assert!(
            last.message.starts_with("3 more problems"),
            "{}",
            last.message
        );
        assert!(a[..MAX_PER_FILE].iter().all(|x| x.code.code != "WFX009"));
        let b: Vec<String> = v
            .iter()
            .filter(|x| x.file == "b.yaml")
            .map(|x| x.message.clone())
            .collect();
        assert_eq!(b, ["p0", "p1"]);
        // Under the cap nothing changes but the order.
        let mut small = vec![
            d("c.yaml", 3, Severity::Hint),
            d("c.yaml", 1, Severity::Hint),
        ];
        cap_per_file(&mut small);
        assert_eq!(small.len(), 2);
        assert_eq!(small[0].message, "p1");
    }

    #[test]
    fn codes_are_unique_well_formed_and_in_their_range() {
        let codes = all_codes();
        assert!(codes.len() > 5);
        let mut seen = std::collections::BTreeSet::new();
        for c in &codes {
            assert!(seen.insert(c.code), "duplicate code {}", c.code);
            assert!(c.code.starts_with("WFX") && c.code.len() == 6, "{}", c.code);
            assert!(
                !c.summary.is_empty() && !c.explanation.is_empty(),
                "{}",
                c.code
            );
            assert!(
                c.slug
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch == '-' || ch.is_ascii_digit()),
                "{}",
                c.slug
            );
        }
        let mut slugs = std::collections::BTreeSet::new();
        for c in &codes {
            assert!(slugs.insert(c.slug), "duplicate slug {}", c.slug);
        }
    }
}
