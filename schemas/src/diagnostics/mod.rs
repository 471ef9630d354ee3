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
mod codes_cassette;
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
pub use codes_cassette::*;
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

use std::collections::BTreeMap;

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
    v.extend_from_slice(codes_cassette::CODES);
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
    /// For a `WFX009` made while checking ([`push_bounded`]): how many further problems of
    /// this file it stands for (counted, never built); 0 for every other diagnostic.
    /// (`u32`, so a `Diagnostic` stays 120 bytes.)
    pub left_out: u32,
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
            left_out: 0,
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

/// Most diagnostics one rule pass keeps for one file ([`push_bounded`]); twice
/// [`MAX_PER_FILE`], so what is shown never depends on which pass hit the bound first
/// unless the file has far more problems than are shown anyway.
pub const MAX_COLLECTED: usize = 2 * MAX_PER_FILE;

/// Pushes `d` while `out` holds fewer than [`MAX_COLLECTED`] diagnostics; past that, `d`
/// is only counted, in one `WFX009` marker at the end of `out` (its [`Diagnostic::left_out`],
/// with the worst severity seen), so a file with millions of problems costs a counter, not
/// millions of messages (bounded work and memory, docs/security.md §3). Callers that can
/// skip building a message check [`is_full`] first. [`cap_per_file`] folds the markers
/// into its own `WFX009`.
pub fn push_bounded(out: &mut Vec<Diagnostic>, d: Diagnostic) {
    if out.len() < MAX_COLLECTED {
        out.push(d);
        return;
    }
    count_left_out(out, &d.file, d.range, d.severity, 1);
}

/// True when `out` holds [`MAX_COLLECTED`] diagnostics: a further [`push_bounded`] only
/// counts, so the caller may call [`count_left_out`] instead of building a message.
pub fn is_full(out: &[Diagnostic]) -> bool {
    out.len() >= MAX_COLLECTED
}

/// Counts `n` problems of `file` (at `range`, as severe as `severity`) that are not built:
/// adds them to the `WFX009` marker at the end of `out`, or appends one.
pub fn count_left_out(
    out: &mut Vec<Diagnostic>,
    file: &str,
    range: TextRange,
    severity: Severity,
    n: usize,
) {
    if n == 0 {
        return;
    }
    let n = u32::try_from(n).unwrap_or(u32::MAX);
    if let Some(last) = out.last_mut()
        && last.left_out > 0
        && last.file == file
    {
        last.left_out = last.left_out.saturating_add(n);
        last.severity = last.severity.min(severity);
        return;
    }
    let mut m = Diagnostic::new(
        &TOO_MANY_PROBLEMS,
        file,
        range,
        format!(
            "more problems in this file than are checked in detail (each rule pass keeps {MAX_COLLECTED}); the rest are counted"
        ),
    );
    m.severity = severity;
    m.left_out = n;
    out.push(m);
}

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
            let message = if first.code.code == TOO_MANY_PROBLEMS.code {
                format!(
                    "{n} more problems in this file are not reported (at most {MAX_PER_FILE} per file)"
                )
            } else {
                format!(
                    "{n} more problems in this file are not reported (at most {MAX_PER_FILE} per file); the first is: {}",
                    first.message
                )
            };
            let mut d =
                Diagnostic::new(&TOO_MANY_PROBLEMS, first.file.clone(), first.range, message);
            d.severity = worst;
            out.push(d);
        }
    }
    // Markers of problems counted but never built (`push_bounded`): their counts join
    // this file's `WFX009`.
    let mut counted: BTreeMap<String, (usize, Severity, TextRange)> = BTreeMap::new();
    diags.retain(|d| {
        if d.left_out == 0 {
            return true;
        }
        let e = counted
            .entry(d.file.clone())
            .or_insert((0, d.severity, d.range));
        e.0 += d.left_out as usize;
        e.1 = e.1.min(d.severity);
        false
    });
    sort_diagnostics(diags);
    if diags.len() <= MAX_PER_FILE && counted.is_empty() {
        return;
    }
    let all = std::mem::take(diags);
    let mut left: Option<(Diagnostic, usize, Severity)> = None;
    let mut kept = 0usize;
    let mut take_counted = |file: &str, left: &mut Option<(Diagnostic, usize, Severity)>| {
        if let Some((n, sev, range)) = counted.remove(file) {
            match left {
                Some((_, m, worst)) => {
                    *m += n;
                    *worst = (*worst).min(sev);
                }
                None => {
                    let first = Diagnostic::new(
                        &TOO_MANY_PROBLEMS,
                        file,
                        range,
                        "counted while checking, not built",
                    );
                    *left = Some((first, n, sev));
                }
            }
        }
    };
    for d in all {
        if diags.last().is_none_or(|last| last.file != d.file)
            && left
                .as_ref()
                .is_none_or(|(first, _, _)| first.file != d.file)
        {
            if let Some((first, _, _)) = &left {
                let file = first.file.clone();
                take_counted(&file, &mut left);
            } else if let Some(last) = diags.last() {
                let file = last.file.clone();
                take_counted(&file, &mut left);
            }
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
    if let Some((first, _, _)) = &left {
        let file = first.file.clone();
        take_counted(&file, &mut left);
    } else if let Some(last) = diags.last() {
        let file = last.file.clone();
        take_counted(&file, &mut left);
    }
    flush(diags, &mut left);
    // Markers of files with no built diagnostic left (cannot happen with `push_bounded`,
    // which builds `MAX_COLLECTED` first; kept for completeness).
    for (file, (n, sev, range)) in std::mem::take(&mut counted) {
        let mut l = Some((
            Diagnostic::new(
                &TOO_MANY_PROBLEMS,
                file,
                range,
                "counted while checking, not built",
            ),
            n,
            sev,
        ));
        flush(diags, &mut l);
    }
    sort_diagnostics(diags);
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
/// (`#wfx104`), severity, summary and explanation (no FORMAT sections: users do not have that
/// file; the keys are explained in `docs/reference.md`, issue 16). The server's
/// `codeDescription.href` and SARIF's `helpUri` point at these anchors.
pub fn render_markdown() -> String {
    let mut out = String::from(
        "# Diagnostics\n\n<!-- Generated from schemas/src/diagnostics/ by `UPDATE_EXPECT=1 cargo test -p wfx-schemas --test generated_docs`; do not edit. -->\n\n",
    );
    out.push_str("Codes are stable: `WFX0xx` YAML and stream, `WFX1xx` case documents, `WFX2xx` workflow.yaml, `WFX3xx` cross-file (a case against its workflow, fixtures and other cases), `WFX4xx` agent scripts (`WFX45x` cassettes), `WFX5xx` hook and skill scripts, `WFX9xx` internal. The keys they refer to are described in the [key reference](reference.md).\n\n");
    out.push_str("| code | name | severity | summary |\n|---|---|---|---|\n");
    for c in all_codes() {
        out.push_str(&format!(
            "| [{}](#{}) | `{}` | {} | {}{} |\n",
            c.code,
            c.code.to_lowercase(),
            c.slug,
            c.severity.as_str(),
            c.summary,
            if c.retired { " (retired)" } else { "" }
        ));
    }
    for c in all_codes() {
        out.push_str(&format!(
            "\n## {}\n\n`{}` · {}\n\n**{}**\n\n{}\n",
            c.code,
            c.slug,
            c.severity.as_str(),
            c.summary,
            c.explanation
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// issue 16: the user page cites the project's docs, not FORMAT.md.
    #[test]
    fn the_diagnostics_page_does_not_cite_format_md() {
        let page = render_markdown();
        assert!(!page.contains("FORMAT"), "docs/diagnostics.md cites FORMAT");
        assert!(page.contains("(reference.md)"));
    }

    #[test]
    fn bounded_pushes_are_counted_and_folded_into_the_cap() {
        // Bounded memory: past MAX_COLLECTED a pass keeps one marker that counts, and the
        // cap's WFX009 still names the exact number left out, as severe as the worst.
        let mut v = Vec::new();
        for i in 0..(MAX_COLLECTED + 5000) {
            let mut d = Diagnostic::new(
                &TOO_MANY_PROBLEMS,
                "f",
                TextRange::new(u32::try_from(i).unwrap(), u32::try_from(i).unwrap() + 1),
                format!("p{i}"),
            );
            d.severity = if i == MAX_COLLECTED + 10 {
                Severity::Error
            } else {
                Severity::Warning
            };
            push_bounded(&mut v, d);
        }
        assert_eq!(v.len(), MAX_COLLECTED + 1);
        assert_eq!(v.last().unwrap().left_out, 5000);
        assert_eq!(v.last().unwrap().severity, Severity::Error);
        assert!(is_full(&v));
        cap_per_file(&mut v);
        assert_eq!(v.len(), MAX_PER_FILE + 1);
        let last = v.last().unwrap();
        assert_eq!(last.code.code, "WFX009");
        assert_eq!(last.severity, Severity::Error);
        let n = MAX_COLLECTED - MAX_PER_FILE + 5000;
        assert!(
            last.message.starts_with(&format!("{n} more problems")),
            "{}",
            last.message
        );
        assert!(v.iter().all(|d| d.left_out == 0));
    }

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
