//! Case document rules (FORMAT §B.0–§B.8): the document shape, the 8 strict top-level keys,
//! the `title` and `description` budgets, `skip`, `trigger`, `variables`, `workspace` (with
//! `from:` normalization), `mocks`, and every step: the single-key shape, unknown steps, each
//! action and assertion form of the §B.2 table with strict nested keys, and JavaScript regex
//! tokens. Fail-closed: anything the reference's schema would refuse is an error here, with
//! the range of the key or value at fault.
//!
//! This module looks at one document only; it never reads other files (that is
//! `rules::case_cross`) and never picks a severity (the registry does).
//!
//! Choices where FORMAT is silent or UNCONFIRMED:
//! - "assertion has no preceding action" (§B.2) is reported **always**, not only when the
//!   rest of the document parses: like our `title` and `description` checks, it is an
//!   independent fact the user wants to see in the same pass. A step counts as an action by
//!   its key, whatever its value.
//! - A mock without `result` is accepted (its payload is `null`), as the reference appears to.
//! - A missing required key is reported on an empty range at the start of the mapping that
//!   lacks it (top level) or on the step key (inside a step).
//! - Integers (`count`) accept a YAML float with no fraction (`2.0`), as JavaScript does.

use crate::diagnostics::{self, Code, Diagnostic};
use crate::jsregex;
use crate::model::case::{ACTIONS, ASSERTIONS, TOP_LEVEL_KEYS, is_action, is_assertion};
use crate::text::{TextRange, collapsed_utf16_len};
use crate::yaml::{Entry, Node, Value};

/// Most UTF-16 code units a collapsed `title` may hold (FORMAT §B.1).
pub const TITLE_MAX: usize = 60;

/// Most UTF-16 code units a collapsed `description` may hold (FORMAT §B.1).
pub const DESCRIPTION_MAX: usize = 200;

/// Every FORMAT §B rule on one case document root. `file` is the workspace-relative path;
/// ranges are byte offsets into the text `root` was parsed from. Emits `WFX101`–`WFX125`.
pub fn check_document(file: &str, root: &Node) -> Vec<Diagnostic> {
    let mut cx = Cx {
        file,
        out: Vec::new(),
    };
    cx.document(root);
    cx.out
}

/// True when `name` matches the run-variable pattern `^[a-z][a-z0-9_]*$` (FORMAT §A.3,
/// `VARIABLE_NAME_PATTERN`).
pub fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Why a `from:` fixture path is refused (FORMAT §B.8 `normalizeFixturePath`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixturePathError {
    /// A `..` segment (`WFX114`).
    Escapes,
    /// A leading `/`, or nothing left once `""` and `.` segments are dropped (`WFX115`).
    NotRelative,
}

/// Normalizes a `from:` path the way the reference does (FORMAT §B.8): split on `/`, drop
/// empty and `.` segments; a `..` segment escapes (checked first), a leading `/` or an empty
/// result is not tests/-relative. Returns the tests/-relative path joined with `/`.
pub fn normalize_fixture_path(from: &str) -> Result<String, FixturePathError> {
    let segs: Vec<&str> = from
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    if segs.contains(&"..") {
        return Err(FixturePathError::Escapes);
    }
    if from.starts_with('/') || segs.is_empty() {
        return Err(FixturePathError::NotRelative);
    }
    Ok(segs.join("/"))
}

/// Optimal-string-alignment edit distance in characters: insertions, deletions,
/// substitutions and adjacent transpositions each cost 1 (`sned` → `send` is 1).
pub fn edit_distance(a: &str, b: &str) -> usize {
    const FAR: usize = usize::MAX / 4;
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let at = |v: &[usize], j: usize| v.get(j).copied().unwrap_or(FAR);
    let mut prev2: Vec<usize> = vec![FAR; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur.clear();
        cur.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let mut d = (at(&prev, j + 1) + 1)
                .min(at(&cur, j) + 1)
                .min(at(&prev, j) + cost);
            if i > 0 && j > 0 && a.get(i - 1) == Some(cb) && b.get(j - 1) == Some(ca) {
                d = d.min(at(&prev2, j - 1) + 1);
            }
            cur.push(d);
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    at(&prev, b.len())
}

/// Units of work the near-miss searches ([`nearest`], [`did_you_mean`] and the workflow
/// rules' key suggestions) may spend on one file while [`SuggestBudget`] is armed: a
/// candidate costs [`SUGGEST_CANDIDATE_COST`] plus the product of the two lengths in
/// characters when their edit distance is computed. About 20 ms of work; a file past it gets
/// its diagnostics without suggestions or their fixes (bounded work, docs/security.md §3:
/// 1,000 unknown `reachedState` names against 40,000 states would otherwise compare each
/// with every state).
pub const MAX_SUGGEST_WORK: usize = 20_000_000;

/// What looking at one candidate costs [`MAX_SUGGEST_WORK`] before any distance is computed
/// (lower-casing, counting characters).
pub const SUGGEST_CANDIDATE_COST: usize = 64;

thread_local! {
    /// The armed budget of the file being checked on this thread; `None` when unarmed.
    static SUGGEST_LEFT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Arms [`MAX_SUGGEST_WORK`] for the near-miss searches on this thread until dropped (then
/// the previous state returns). `check` arms one per file, so a file's output does not
/// depend on other files or on threads; the editor arms one per completion and code-action
/// request (`wfx_lsp::ide`). Unarmed searches are unbudgeted.
#[derive(Debug)]
pub struct SuggestBudget {
    prev: Option<usize>,
}

impl SuggestBudget {
    /// Arms a fresh budget.
    pub fn arm() -> Self {
        let prev = SUGGEST_LEFT.with(|c| c.replace(Some(MAX_SUGGEST_WORK)));
        Self { prev }
    }
}

impl Drop for SuggestBudget {
    fn drop(&mut self) {
        SUGGEST_LEFT.with(|c| c.set(self.prev));
    }
}

/// Charges `units` to the armed budget; `false` (and the budget spent) when it cannot pay,
/// so every later search of the file gives up at once. Always `true` when unarmed. The
/// editor's own near-miss searches (code actions) charge it too, under a budget their
/// request arms.
pub fn suggest_charge(units: usize) -> bool {
    SUGGEST_LEFT.with(|c| match c.get() {
        None => true,
        Some(left) if left >= units => {
            c.set(Some(left - units));
            true
        }
        Some(_) => {
            c.set(Some(0));
            false
        }
    })
}

/// The candidate closest to `word` (case-insensitive edit distance), first in candidate
/// order on ties; `None` when there are no candidates, or when the armed
/// [`SuggestBudget`] runs out (no half-searched answer).
pub fn nearest<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<(&'c str, usize)> {
    let lower = word.to_lowercase();
    let lw = lower.chars().count().max(1);
    let mut best: Option<(&str, usize)> = None;
    for c in candidates {
        let lc = c.to_lowercase();
        let cost = lw.saturating_mul(lc.chars().count().max(1));
        if !suggest_charge(SUGGEST_CANDIDATE_COST.saturating_add(cost)) {
            return None;
        }
        let d = edit_distance(&lower, &lc);
        if best.is_none_or(|(_, bd)| d < bd) {
            best = Some((c, d));
        }
    }
    best
}

/// A did-you-mean suggestion: the nearest candidate when its case-insensitive edit distance
/// is at most a third of `word`'s length in characters (at least 1), and it is not `word`
/// itself.
pub fn did_you_mean<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let limit = (word.chars().count() / 3).max(1);
    // The distance (of the lower-cased texts) is at least their length difference:
    // hopeless candidates are skipped before the quadratic comparison (a megabyte-long
    // word against every known name).
    let len = word.to_lowercase().chars().count();
    let mut near = Vec::new();
    for c in candidates {
        if !suggest_charge(SUGGEST_CANDIDATE_COST) {
            return None;
        }
        if len.abs_diff(c.to_lowercase().chars().count()) <= limit {
            near.push(c);
        }
    }
    nearest(word, near)
        .filter(|(c, d)| *d <= limit && *c != word)
        .map(|(c, _)| c)
}

/// `s` written as a YAML scalar for a quick fix: plain when it is a safe identifier-like
/// word (a letter or `_` first, then letters, digits, `_`, `-`, `.`; not a YAML keyword),
/// otherwise double-quoted with JSON escapes (valid YAML).
pub fn yaml_scalar(s: &str) -> String {
    let safe = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        );
    if safe {
        s.to_owned()
    } else {
        serde_json::Value::String(s.to_owned()).to_string()
    }
}

/// The range to report a value at: the value's own range, or the key's when the value is
/// empty (`key:` with nothing after it).
fn value_range(key: &Node, value: &Node) -> TextRange {
    if value.range.is_empty() {
        key.range
    } else {
        value.range
    }
}

/// A short description of a value for messages: its type, or "an empty string".
fn got(node: &Node) -> String {
    match &node.value {
        Value::Str(s, _) if s.is_empty() => "an empty string".into(),
        Value::Str(..) => "a string".into(),
        Value::Null => "nothing (null)".into(),
        Value::Bool(b) => format!("`{b}`"),
        Value::Int(_) | Value::Float(_) => "a number".into(),
        Value::Seq(_) => "a list".into(),
        Value::Map(_) => "a mapping".into(),
    }
}

fn is_true(node: &Node) -> bool {
    node.value == Value::Bool(true)
}

fn non_empty_str(node: &Node) -> bool {
    node.as_str().is_some_and(|s| !s.is_empty())
}

fn as_count(node: &Node) -> Option<f64> {
    match &node.value {
        Value::Int(i) if *i >= 0 => Some(*i as f64),
        Value::Float(f) if f.is_finite() && *f >= 0.0 && f.fract() == 0.0 => Some(*f),
        _ => None,
    }
}

fn key_text(e: &Entry) -> Option<String> {
    e.key.scalar_text().map(std::borrow::Cow::into_owned)
}

fn list(items: &[&str]) -> String {
    items.join(", ")
}

/// One pass over one document.
struct Cx<'f> {
    file: &'f str,
    out: Vec<Diagnostic>,
}

impl Cx<'_> {
    fn push(&mut self, code: Code, range: TextRange, message: impl Into<String>) {
        if diagnostics::is_full(&self.out) {
            diagnostics::count_left_out(&mut self.out, self.file, range, code.severity, 1);
            return;
        }
        let d = Diagnostic::new(code, self.file, range, message);
        diagnostics::push_bounded(&mut self.out, d);
    }

    fn document(&mut self, root: &Node) {
        let Some(entries) = root.as_map() else {
            self.push(
                &diagnostics::CASE_NOT_A_MAPPING,
                root.range,
                format!(
                    "a case is a YAML mapping (title, description, steps, …); got {}",
                    if root.is_null() {
                        "an empty document".to_owned()
                    } else {
                        got(root)
                    }
                ),
            );
            return;
        };
        let start = TextRange::empty(root.range.start);
        for e in entries {
            self.top_level_key(e, root);
        }
        self.title(root, start);
        self.description(root, start);
        if let Some(e) = root.get("skip")
            && !non_empty_str(&e.value)
        {
            self.push(
                &diagnostics::CASE_INVALID_SKIP,
                value_range(&e.key, &e.value),
                format!(
                    "`skip` takes a reason string of at least one character; got {}",
                    got(&e.value)
                ),
            );
        }
        if let Some(e) = root.get("trigger") {
            self.trigger(e);
        }
        if let Some(e) = root.get("variables") {
            self.variables(e);
        }
        if let Some(e) = root.get("workspace") {
            self.workspace(e);
        }
        if let Some(e) = root.get("mocks") {
            self.mocks(e);
        }
        if let Some(e) = root.get("steps") {
            self.steps(e);
        }
    }

    /// An unknown top-level key, with the reference's removed keys explained.
    fn top_level_key(&mut self, e: &Entry, root: &Node) {
        let Some(key) = key_text(e) else { return };
        if TOP_LEVEL_KEYS.contains(&key.as_str()) {
            return;
        }
        let code = &diagnostics::CASE_UNKNOWN_KEY;
        match key.as_str() {
            "version" => self.push(
                code,
                e.key.range,
                "unknown key `version`: case files carry no version (only workflow.yaml has `runtime.version`); remove it",
            ),
            "judge" => self.push(
                code,
                e.key.range,
                "unknown key `judge`: grading is a step (`- grade: { closedQA, atLeast }`) and the grading model is `tests.judge` in workflow.yaml; remove it",
            ),
            "name" if root.get("title").is_none() => {
                let d = Diagnostic::new(code, self.file, e.key.range, "unknown key `name`; the case label is `title`")
                    .with_fix("rename `name` to `title`", e.key.range, "title");
                diagnostics::push_bounded(&mut self.out, d);
            }
            _ => self.unknown_key(e, root, TOP_LEVEL_KEYS, None),
        }
    }

    /// Reports an unknown key of a strict mapping `map` whose known keys are `known`;
    /// `inside` names the mapping for messages (`None` at the top level).
    fn unknown_key(&mut self, e: &Entry, map: &Node, known: &[&str], inside: Option<&str>) {
        let code = &diagnostics::CASE_UNKNOWN_KEY;
        if diagnostics::is_full(&self.out) {
            // Past the bound a problem is counted, not worded (no near-miss search).
            diagnostics::count_left_out(&mut self.out, self.file, e.key.range, code.severity, 1);
            return;
        }
        let Some(key) = key_text(e) else { return };
        let place = inside.map(|i| format!(" in `{i}`")).unwrap_or_default();
        match did_you_mean(&key, known.iter().copied()) {
            Some(s) => {
                let mut d = Diagnostic::new(
                    code,
                    self.file,
                    e.key.range,
                    format!("unknown key `{key}`{place}; did you mean `{s}`?"),
                );
                if map.get(s).is_none() {
                    d = d.with_fix(format!("rename `{key}` to `{s}`"), e.key.range, s);
                }
                diagnostics::push_bounded(&mut self.out, d);
            }
            None => self.push(
                code,
                e.key.range,
                format!("unknown key `{key}`{place} (known: {})", list(known)),
            ),
        }
    }

    /// Reports every unknown key of the strict mapping `map`.
    fn strict(&mut self, map: &Node, known: &[&str], inside: &str) {
        for e in map.as_map().unwrap_or_default() {
            if key_text(e).is_some_and(|k| !known.contains(&k.as_str())) {
                if inside == "trigger" && e.key.as_str() == Some("args") {
                    self.push(
                        &diagnostics::CASE_UNKNOWN_KEY,
                        e.key.range,
                        "unknown key `args` in `trigger`: a trigger carries only an `id`; put the run's inputs in the top-level `variables`",
                    );
                    continue;
                }
                self.unknown_key(e, map, known, Some(inside));
            }
        }
    }

    fn title(&mut self, root: &Node, start: TextRange) {
        let code = &diagnostics::CASE_TITLE_REQUIRED;
        let Some(e) = root.get("title") else {
            self.push(code, start, "`title` is required: a short one-line label for the case (e.g. `Unknown requester is rejected at entry`)");
            return;
        };
        let Some(s) = e.value.as_str() else {
            self.push(
                code,
                value_range(&e.key, &e.value),
                format!(
                    "`title` takes a string, a short one-line label for the case; got {}",
                    got(&e.value)
                ),
            );
            return;
        };
        if trim_js(s).is_empty() {
            self.push(
                code,
                value_range(&e.key, &e.value),
                "`title` is blank; write a short one-line label for the case",
            );
            return;
        }
        if trim_js(s).contains('\n') {
            self.push(
                &diagnostics::CASE_TITLE_MULTILINE,
                e.value.range,
                "`title` spans several lines; keep it to one line and put the detail in `description` (a `>-` folded scalar also works)",
            );
            return;
        }
        let n = collapsed_utf16_len(s);
        if n > TITLE_MAX {
            self.push(
                &diagnostics::CASE_TITLE_TOO_LONG,
                e.value.range,
                format!("`title` is {n} characters long (UTF-16 code units, whitespace collapsed); the limit is {TITLE_MAX} — keep it a label and put the detail in `description`"),
            );
        }
    }

    fn description(&mut self, root: &Node, start: TextRange) {
        let code = &diagnostics::CASE_DESCRIPTION_REQUIRED;
        let Some(e) = root.get("description") else {
            self.push(code, start, "`description` is required: one or two sentences stating the scenario driven and what is asserted");
            return;
        };
        let Some(s) = e.value.as_str() else {
            self.push(
                code,
                value_range(&e.key, &e.value),
                format!(
                    "`description` takes a string, one or two sentences about the case; got {}",
                    got(&e.value)
                ),
            );
            return;
        };
        let n = collapsed_utf16_len(s);
        if n == 0 {
            self.push(
                code,
                value_range(&e.key, &e.value),
                "`description` is blank; state the scenario driven and what is asserted",
            );
        } else if n > DESCRIPTION_MAX {
            self.push(
                &diagnostics::CASE_DESCRIPTION_TOO_LONG,
                e.value.range,
                format!("`description` is {n} characters long (UTF-16 code units, whitespace collapsed); the limit is {DESCRIPTION_MAX} — keep it to one or two sentences and move longer rationale to a YAML comment"),
            );
        }
    }

    fn trigger(&mut self, e: &Entry) {
        let code = &diagnostics::CASE_INVALID_TRIGGER;
        if e.value.as_map().is_none() {
            let hint = e
                .value
                .as_str()
                .map(|s| format!(" (write `trigger: {{ id: {} }}`)", yaml_scalar(s)))
                .unwrap_or_default();
            self.push(
                code,
                value_range(&e.key, &e.value),
                format!(
                    "`trigger` takes a mapping `{{ id: <trigger id> }}`; got {}{hint}",
                    got(&e.value)
                ),
            );
            return;
        }
        self.strict(&e.value, &["id"], "trigger");
        match e.value.get("id") {
            None => self.push(
                code,
                e.key.range,
                "`trigger` needs an `id`: the trigger the case starts under (e.g. `manual`)",
            ),
            Some(id) if !non_empty_str(&id.value) => self.push(
                code,
                value_range(&id.key, &id.value),
                format!(
                    "`trigger.id` takes a non-empty trigger id string; got {}",
                    got(&id.value)
                ),
            ),
            Some(_) => {}
        }
    }

    fn variables(&mut self, e: &Entry) {
        let Some(map) = e.value.as_map() else {
            self.push(
                &diagnostics::CASE_INVALID_VARIABLES,
                value_range(&e.key, &e.value),
                format!(
                    "`variables` takes a mapping of run-variable names to values; got {}",
                    got(&e.value)
                ),
            );
            return;
        };
        self.variable_names(map);
    }

    /// `WFX111` on every key of `map` that is not a run-variable name.
    fn variable_names(&mut self, map: &[Entry]) {
        for v in map {
            let Some(name) = key_text(v) else { continue };
            if !is_variable_name(&name) {
                self.push(
                    &diagnostics::CASE_VARIABLE_NAME,
                    v.key.range,
                    format!("`{name}` is not a valid run-variable name; use lowercase letters, digits and underscores, starting with a letter (e.g. `order_id`)"),
                );
            }
        }
    }

    fn workspace(&mut self, e: &Entry) {
        let Some(map) = e.value.as_map() else {
            self.push(
                &diagnostics::CASE_INVALID_WORKSPACE,
                value_range(&e.key, &e.value),
                format!("`workspace` takes a mapping of session paths to content or `{{ from: <file> }}`; got {}", got(&e.value)),
            );
            return;
        };
        for seed in map {
            if key_text(seed).is_some_and(|k| k.is_empty()) {
                self.push(
                    &diagnostics::CASE_INVALID_WORKSPACE,
                    seed.key.range,
                    "workspace paths must be non-empty",
                );
            }
            let Some([only]) = seed.value.as_map() else {
                continue;
            };
            if only.key.as_str() != Some("from") {
                continue;
            }
            let Some(from) = only.value.as_str().filter(|s| !s.is_empty()) else {
                self.push(
                    &diagnostics::CASE_INVALID_FROM,
                    value_range(&only.key, &only.value),
                    format!(
                        "`from` takes a tests/-relative file path string; got {}",
                        got(&only.value)
                    ),
                );
                continue;
            };
            match normalize_fixture_path(from) {
                Ok(_) => {}
                Err(FixturePathError::Escapes) => self.push(
                    &diagnostics::CASE_FROM_ESCAPES,
                    only.value.range,
                    format!("`from: {from}` escapes the tests folder; fixture paths are relative to `tests/` and may not use `..`"),
                ),
                Err(FixturePathError::NotRelative) => self.push(
                    &diagnostics::CASE_FROM_NOT_RELATIVE,
                    only.value.range,
                    format!("`from: {from}` must be a tests/-relative file path (no leading `/`, not empty)"),
                ),
            }
        }
    }

    fn mocks(&mut self, e: &Entry) {
        let code = &diagnostics::CASE_INVALID_MOCKS;
        let Some(items) = e.value.as_seq() else {
            self.push(
                code,
                value_range(&e.key, &e.value),
                format!(
                    "`mocks` must be a list of `{{ tool, whenInput?, result }}`; got {}",
                    got(&e.value)
                ),
            );
            return;
        };
        for (i, m) in items.iter().enumerate() {
            if m.as_map().is_none() {
                self.push(
                    code,
                    m.range,
                    format!(
                        "`mocks[{i}]` must be a mapping `{{ tool, whenInput?, result }}`; got {}",
                        got(m)
                    ),
                );
                continue;
            }
            self.strict(m, &["tool", "whenInput", "result"], &format!("mocks[{i}]"));
            match m.get("tool") {
                None => self.push(
                    code,
                    TextRange::empty(m.range.start),
                    format!("`mocks[{i}]` needs `tool`: the tool name the mock answers"),
                ),
                Some(t) if !non_empty_str(&t.value) => self.push(
                    code,
                    value_range(&t.key, &t.value),
                    format!("`tool` takes a non-empty tool name; got {}", got(&t.value)),
                ),
                Some(_) => {}
            }
            if let Some(w) = m.get("whenInput") {
                if w.value.as_map().is_some() {
                    self.regexes_deep(&w.value);
                } else {
                    self.push(
                        code,
                        value_range(&w.key, &w.value),
                        format!(
                            "`whenInput` takes a mapping of tool arguments to match; got {}",
                            got(&w.value)
                        ),
                    );
                }
            }
        }
    }

    /// `WFX117` on `node` when it is a `/…/flags` string that does not compile.
    fn regex(&mut self, node: &Node) {
        let Some(s) = node.as_str() else { return };
        if let Some(Err(why)) = jsregex::compile_token(s) {
            self.push(
                &diagnostics::CASE_MALFORMED_REGEX,
                node.range,
                format!("malformed regex `{s}`: {why}"),
            );
        }
    }

    /// [`Self::regex`] on every string value at any depth (keys are names, not matchers).
    fn regexes_deep(&mut self, node: &Node) {
        match &node.value {
            Value::Str(..) => self.regex(node),
            Value::Seq(items) => items.iter().for_each(|n| self.regexes_deep(n)),
            Value::Map(entries) => entries.iter().for_each(|e| self.regexes_deep(&e.value)),
            _ => {}
        }
    }

    fn steps(&mut self, e: &Entry) {
        let Some(items) = e.value.as_seq() else {
            self.push(
                &diagnostics::CASE_INVALID_STEPS,
                value_range(&e.key, &e.value),
                format!(
                    "`steps` must be a list of single-key mappings (e.g. `- send: \"hi\"`); got {}",
                    got(&e.value)
                ),
            );
            return;
        };
        let mut seen_action = false;
        for item in items {
            let Some(step) = self.step(item) else {
                continue;
            };
            let (key, node) = (step.key.as_str().unwrap_or_default(), &step.key);
            if is_action(key) {
                seen_action = true;
            } else if is_assertion(key) && !seen_action {
                self.push(
                    &diagnostics::CASE_ASSERTION_BEFORE_ACTION,
                    node.range,
                    format!("assertion `{key}` has no preceding action — put a `send`, `decide` or `deliver` step before it"),
                );
            }
        }
    }

    /// Checks one step item; returns its single entry when it has one.
    fn step<'n>(&mut self, item: &'n Node) -> Option<&'n Entry> {
        let code = &diagnostics::CASE_STEP_SHAPE;
        let Some(entries) = item.as_map() else {
            self.push(
                code,
                item.range,
                format!("a step is a single-key mapping — an action (`send`, `decide`, `deliver`) or an assertion, e.g. `- send: \"hi\"` then `- reachedState: done`; got {}", got(item)),
            );
            return None;
        };
        let step = match entries {
            [] => {
                self.push(code, item.range, "a step declares exactly one key (an action or an assertion); this one has none");
                return None;
            }
            [only] => only,
            [first, rest @ ..] => {
                let keys: Vec<String> = entries.iter().filter_map(key_text).collect();
                for extra in rest {
                    self.push(
                        code,
                        extra.key.range,
                        format!("a step declares exactly one key, got {}; start each step with its own `-`", keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")),
                    );
                }
                first
            }
        };
        let key = key_text(step)?;
        if is_action(&key) {
            self.action(&key, step);
        } else if is_assertion(&key) {
            self.assertion(&key, step);
        } else {
            self.unknown_step(&key, step);
            return None;
        }
        Some(step)
    }

    fn unknown_step(&mut self, key: &str, step: &Entry) {
        let code = &diagnostics::CASE_UNKNOWN_STEP;
        if key == "judge" {
            let d = Diagnostic::new(code, self.file, step.key.range, "unknown step `judge`; it was renamed to `grade` (`- grade: { closedQA, atLeast }`)")
                .with_fix("rename `judge` to `grade`", step.key.range, "grade");
            diagnostics::push_bounded(&mut self.out, d);
            return;
        }
        match did_you_mean(key, ACTIONS.iter().chain(ASSERTIONS).copied()) {
            Some(s) => {
                let d = Diagnostic::new(
                    code,
                    self.file,
                    step.key.range,
                    format!("unknown step `{key}`; did you mean `{s}`?"),
                )
                .with_fix(format!("replace `{key}` with `{s}`"), step.key.range, s);
                diagnostics::push_bounded(&mut self.out, d);
            }
            None => self.push(
                code,
                step.key.range,
                format!(
                    "unknown step `{key}` (actions: {}; assertions: {})",
                    list(ACTIONS),
                    list(ASSERTIONS)
                ),
            ),
        }
    }

    /// Requires the mapping form for a step; reports and returns `false` otherwise.
    fn step_map(&mut self, code: Code, key: &str, step: &Entry, shape: &str) -> bool {
        if step.value.as_map().is_some() {
            return true;
        }
        self.push(
            code,
            value_range(&step.key, &step.value),
            format!("`{key}` takes a mapping {shape}; got {}", got(&step.value)),
        );
        false
    }

    /// A required non-empty string field `field` of the step mapping.
    fn required_str(&mut self, code: Code, key: &str, step: &Entry, field: &str, what: &str) {
        match step.value.get(field) {
            None => self.push(
                code,
                step.key.range,
                format!("`{key}` needs `{field}`: {what}"),
            ),
            Some(f) if !non_empty_str(&f.value) => self.push(
                code,
                value_range(&f.key, &f.value),
                format!(
                    "`{key}.{field}` takes a non-empty string ({what}); got {}",
                    got(&f.value)
                ),
            ),
            Some(_) => {}
        }
    }

    /// An optional field that, when present, must be a string (possibly empty).
    fn optional_str(&mut self, code: Code, key: &str, step: &Entry, field: &str) {
        if let Some(f) = step.value.get(field)
            && f.value.as_str().is_none()
        {
            self.push(
                code,
                value_range(&f.key, &f.value),
                format!("`{key}.{field}` takes a string; got {}", got(&f.value)),
            );
        }
    }

    fn action(&mut self, key: &str, step: &Entry) {
        let code = &diagnostics::CASE_INVALID_ACTION;
        match key {
            "send" => {
                if !non_empty_str(&step.value) {
                    self.push(
                        code,
                        value_range(&step.key, &step.value),
                        format!(
                            "`send` takes a user message string (at least one character); got {}",
                            got(&step.value)
                        ),
                    );
                }
            }
            "decide" => {
                if self.step_map(code, key, step, "`{ to: <state>, comment?: <text> }`") {
                    self.strict(&step.value, &["to", "comment"], key);
                    self.required_str(code, key, step, "to", "the state the decision routes to");
                    self.optional_str(code, key, step, "comment");
                }
            }
            _ => {
                if self.step_map(
                    code,
                    key,
                    step,
                    "`{ trigger: <id>, variables?: { <name>: <value> } }`",
                ) {
                    self.strict(&step.value, &["trigger", "variables"], key);
                    self.required_str(
                        code,
                        key,
                        step,
                        "trigger",
                        "the trigger id delivered to the waiting session",
                    );
                    if let Some(v) = step.value.get("variables") {
                        match v.value.as_map() {
                            Some(map) => self.variable_names(map),
                            None => self.push(code, value_range(&v.key, &v.value), format!("`deliver.variables` takes a mapping of run-variable names to values; got {}", got(&v.value))),
                        }
                    }
                }
            }
        }
    }

    fn assertion(&mut self, key: &str, step: &Entry) {
        let code = &diagnostics::CASE_INVALID_ASSERTION;
        let v = &step.value;
        let at = value_range(&step.key, v);
        match key {
            "succeeded" | "usedNoTools" | "noTraversal" => {
                if !is_true(v) {
                    self.push(
                        code,
                        at,
                        format!("`{key}` takes the literal `true`; got {}", got(v)),
                    );
                }
            }
            "reachedState" | "triggerArrival" => {
                if !non_empty_str(v) {
                    let what = if key == "reachedState" {
                        "a state slug"
                    } else {
                        "a trigger id"
                    };
                    self.push(
                        code,
                        at,
                        format!("`{key}` takes {what} string; got {}", got(v)),
                    );
                }
            }
            "parked" => self.parked(v, at),
            "raised" => self.raised(step, at),
            "reply" => self.reply(step),
            "calledTool" | "notCalledTool" | "blockedTool" => {
                if self.step_map(code, key, step, "`{ name: <tool>, input?: { … } }`") {
                    self.strict(v, &["name", "input"], key);
                    self.required_str(code, key, step, "name", "the tool name");
                    if let Some(i) = v.get("input") {
                        if i.value.as_map().is_some() {
                            self.regexes_deep(&i.value);
                        } else {
                            self.push(
                                code,
                                value_range(&i.key, &i.value),
                                format!(
                                    "`{key}.input` takes a mapping of arguments to match; got {}",
                                    got(&i.value)
                                ),
                            );
                        }
                    }
                }
            }
            "ranWorkflow" => {
                if self.step_map(
                    code,
                    key,
                    step,
                    "`{ workflow: <slug>, status?: ok | error, count?: <n> }`",
                ) {
                    self.strict(v, &["workflow", "status", "count"], key);
                    self.required_str(code, key, step, "workflow", "the child workflow's slug");
                    if let Some(s) = v.get("status")
                        && !matches!(s.value.as_str(), Some("ok" | "error"))
                    {
                        self.push(
                            code,
                            value_range(&s.key, &s.value),
                            format!(
                                "`ranWorkflow.status` is `ok` or `error`; got {}",
                                shown(&s.value)
                            ),
                        );
                    }
                    self.count(key, v.get("count"));
                }
            }
            "trail" => {
                if self.step_map(code, key, step, "`{ to?, kind?, reason?, count: <n> }`") {
                    self.strict(v, &["to", "kind", "reason", "count"], key);
                    for f in ["to", "kind", "reason"] {
                        self.optional_str(code, key, step, f);
                    }
                    match v.get("count") {
                        None => self.push(code, step.key.range, "`trail` needs `count`: how many matching trail steps are expected (0 or more)"),
                        c => self.count(key, c),
                    }
                    if ["to", "kind", "reason"].iter().all(|f| v.get(f).is_none()) {
                        self.push(&diagnostics::CASE_EMPTY_MATCHER, step.key.range, "`trail` declares none of `to`, `kind`, `reason`; declare at least one to match trail steps against");
                    }
                }
            }
            "variables" => self.variables_assertion(step),
            _ => {
                if self.step_map(
                    code,
                    key,
                    step,
                    "`{ closedQA: <criterion>, atLeast: <0..1> }`",
                ) {
                    self.strict(v, &["closedQA", "atLeast"], key);
                    self.required_str(
                        code,
                        key,
                        step,
                        "closedQA",
                        "the criterion the grader judges the run against",
                    );
                    match v.get("atLeast") {
                        None => self.push(
                            code,
                            step.key.range,
                            "`grade` needs `atLeast`: the passing score, a number from 0 to 1",
                        ),
                        Some(a) => {
                            let ok = match a.value.value {
                                Value::Int(i) => (0..=1).contains(&i),
                                Value::Float(f) => (0.0..=1.0).contains(&f),
                                _ => false,
                            };
                            if !ok {
                                self.push(
                                    code,
                                    value_range(&a.key, &a.value),
                                    format!(
                                        "`grade.atLeast` takes a number from 0 to 1; got {}",
                                        shown(&a.value)
                                    ),
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// `count`: an integer ≥ 0 when present.
    fn count(&mut self, key: &str, c: Option<&Entry>) {
        if let Some(c) = c
            && as_count(&c.value).is_none()
        {
            self.push(
                &diagnostics::CASE_INVALID_ASSERTION,
                value_range(&c.key, &c.value),
                format!(
                    "`{key}.count` takes a whole number, 0 or more; got {}",
                    shown(&c.value)
                ),
            );
        }
    }

    fn parked(&mut self, v: &Node, at: TextRange) {
        let code = &diagnostics::CASE_INVALID_ASSERTION;
        let forms =
            "`true`, `decision` or `input` to pin the channel, or a mapping `{ channel?, state? }`";
        match &v.value {
            Value::Bool(true) => {}
            Value::Str(s, _) if s == "decision" || s == "input" => {}
            Value::Map(entries) => {
                self.strict(v, &["channel", "state"], "parked");
                for e in entries {
                    match e.key.as_str() {
                        Some("channel")
                            if !matches!(e.value.as_str(), Some("decision" | "input")) =>
                        {
                            self.push(
                                code,
                                value_range(&e.key, &e.value),
                                format!(
                                    "`parked.channel` is `decision` or `input`; got {}",
                                    shown(&e.value)
                                ),
                            )
                        }
                        Some("state") if !non_empty_str(&e.value) => self.push(
                            code,
                            value_range(&e.key, &e.value),
                            format!("`parked.state` takes a state slug; got {}", got(&e.value)),
                        ),
                        _ => {}
                    }
                }
            }
            _ => self.push(
                code,
                at,
                format!("`parked` takes {forms}; got {}", shown(v)),
            ),
        }
    }

    fn raised(&mut self, step: &Entry, at: TextRange) {
        let code = &diagnostics::CASE_INVALID_ASSERTION;
        let v = &step.value;
        match &v.value {
            Value::Bool(true) => {}
            Value::Str(s, _) if !s.trim().is_empty() => {}
            Value::Map(_) => {
                self.strict(v, &["code", "reason"], "raised");
                for f in ["code", "reason"] {
                    if let Some(e) = v.get(f) {
                        if non_empty_str(&e.value) {
                            if f == "reason" {
                                self.regex(&e.value);
                            }
                        } else {
                            self.push(code, value_range(&e.key, &e.value), format!("`raised.{f}` takes a non-empty string; got {}", got(&e.value)));
                        }
                    }
                }
                if v.get("code").is_none() && v.get("reason").is_none() {
                    self.push(&diagnostics::CASE_EMPTY_MATCHER, step.key.range, "`raised` declares neither `code` nor `reason`; declare at least one, or write `raised: true`");
                }
            }
            _ => self.push(
                code,
                at,
                format!("`raised` takes `true`, the expected code, or a mapping `{{ code?, reason? }}`; got {}", shown(v)),
            ),
        }
    }

    fn reply(&mut self, step: &Entry) {
        let code = &diagnostics::CASE_INVALID_ASSERTION;
        if !self.step_map(
            code,
            "reply",
            step,
            "`{ includes?, excludes? }` of strings or string lists",
        ) {
            return;
        }
        let v = &step.value;
        self.strict(v, &["includes", "excludes"], "reply");
        for f in ["includes", "excludes"] {
            let Some(e) = v.get(f) else { continue };
            match &e.value.value {
                Value::Str(..) => self.regex(&e.value),
                Value::Seq(items) => {
                    for (i, t) in items.iter().enumerate() {
                        if t.as_str().is_some() {
                            self.regex(t);
                        } else {
                            self.push(code, t.range, format!("`reply.{f}[{i}]` takes a string (literal text or `/regex/flags`); got {}", got(t)));
                        }
                    }
                }
                _ => self.push(
                    code,
                    value_range(&e.key, &e.value),
                    format!(
                        "`reply.{f}` takes a string or a list of strings; got {}",
                        got(&e.value)
                    ),
                ),
            }
        }
        if v.get("includes").is_none() && v.get("excludes").is_none() {
            self.push(
                &diagnostics::CASE_EMPTY_MATCHER,
                step.key.range,
                "`reply` declares neither `includes` nor `excludes`; declare at least one",
            );
        }
    }

    fn variables_assertion(&mut self, step: &Entry) {
        let code = &diagnostics::CASE_INVALID_ASSERTION;
        if !self.step_map(
            code,
            "variables",
            step,
            "`{ expect: { <name>: <value> }, path?, locked? }`",
        ) {
            return;
        }
        let v = &step.value;
        self.strict(v, &["expect", "path", "locked"], "variables");
        let expect = match v.get("expect") {
            None => {
                self.push(
                    code,
                    step.key.range,
                    "`variables` needs `expect`: a mapping of variable names to expected values",
                );
                None
            }
            Some(e) => match e.value.as_map() {
                Some(m) => Some(m),
                None => {
                    self.push(code, value_range(&e.key, &e.value), format!("`variables.expect` takes a mapping of variable names to expected values; got {}", got(&e.value)));
                    None
                }
            },
        };
        for (field, want) in [
            ("path", "a dotted path string"),
            ("locked", "`true` or `false`"),
        ] {
            let Some(e) = v.get(field) else { continue };
            let Some(map) = e.value.as_map() else {
                self.push(
                    code,
                    value_range(&e.key, &e.value),
                    format!(
                        "`variables.{field}` takes a mapping of variable names to {want}; got {}",
                        got(&e.value)
                    ),
                );
                continue;
            };
            for p in map {
                let fits = if field == "path" {
                    p.value.as_str().is_some()
                } else {
                    matches!(p.value.value, Value::Bool(_))
                };
                if !fits {
                    self.push(
                        code,
                        value_range(&p.key, &p.value),
                        format!(
                            "`variables.{field}` values are {want}; got {}",
                            got(&p.value)
                        ),
                    );
                }
                let (Some(expect), Some(name)) = (expect, key_text(p)) else {
                    continue;
                };
                if !expect
                    .iter()
                    .any(|x| key_text(x).as_deref() == Some(name.as_str()))
                {
                    let expected: Vec<String> = expect.iter().filter_map(key_text).collect();
                    let mut d = Diagnostic::new(
                        &diagnostics::CASE_IGNORED_VARIABLE_OPTION,
                        self.file,
                        p.key.range,
                        format!(
                            "`variables.{field}` names `{name}`, which `expect` does not list, so it is ignored"
                        ),
                    );
                    if let Some(s) = did_you_mean(&name, expected.iter().map(String::as_str)) {
                        d.message.push_str(&format!("; did you mean `{s}`?"));
                        if !map.iter().any(|x| key_text(x).as_deref() == Some(s)) {
                            d = d.with_fix(
                                format!("rename `{name}` to `{s}`"),
                                p.key.range,
                                yaml_scalar(s),
                            );
                        }
                    }
                    diagnostics::push_bounded(&mut self.out, d);
                }
            }
        }
    }
}

/// A value for messages: scalars as written (`` `maybe` ``), collections by type.
fn shown(node: &Node) -> String {
    match &node.value {
        Value::Str(s, _) if s.is_empty() => "an empty string".into(),
        Value::Seq(_) | Value::Map(_) | Value::Null => got(node),
        _ => node
            .scalar_text()
            .map(|s| format!("`{s}`"))
            .unwrap_or_else(|| got(node)),
    }
}

/// JavaScript's `String.prototype.trim`: strips JS whitespace (which includes line breaks).
fn trim_js(s: &str) -> &str {
    s.trim_matches(crate::text::is_js_whitespace)
}
