//! `workflow.yaml` rules (FORMAT §A): shape (§A.0–§A.3, §A.5, §A.6), document rules
//! (§A.4, "refine") and lint (§A.7), plus the `WORKFLOW.md` frontmatter rule (§A.0.5).
//!
//! **Pipeline (FORMAT §A.0.3), mirrored exactly.** When any shape error is found, the
//! refine and lint findings are dropped, as the reference's loader does: a document that
//! does not have the right shape is reported only for its shape, and once it does, refine
//! errors and lint findings appear together. We chose parity with `archmax validate` over
//! reporting everything at once because refine and lint rules read the document as if it
//! were well-formed, so on a malformed one they produce cascades (an unknown-key typo in
//! `transitions` would also "remove" every edge of the state) that mislead more than they
//! help, and because CI and the editor must agree with the reference on what fails.
//! Two kinds of findings are *not* gated: the unknown custom hook kind (WFX226), which the
//! reference reports from `validate` rather than from the loader, and the cross-file rules
//! of `rules::workflow_cross` (§D.2), which the reference also runs on a spec with shape
//! errors.
//!
//! Ranges: an unknown key sits on the key, a bad value on the value, a missing key on the
//! key of the mapping that lacks it (or an empty range at the document start for the root).
//! This module reads only the span tree; it does no IO.

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnostics::{self as d, Code, Diagnostic, Severity};
use crate::text::TextRange;
use crate::yaml::{Entry, Node, Value};

/// Top-level keys of `workflow.yaml` (FORMAT §A.1).
pub const ROOT_KEYS: &[&str] = &[
    "title",
    "instructions",
    "disabled",
    "runtime",
    "settings",
    "tools",
    "skills",
    "mounts",
    "tests",
    "extensions",
    "metadata",
    "states",
];

/// Keys of a state (FORMAT §A.2).
pub const STATE_KEYS: &[&str] = &[
    "type",
    "title",
    "instructions",
    "summary",
    "evidence",
    "approvers",
    "triggers",
    "before",
    "after",
    "budget",
    "model",
    "on_error",
    "tools",
    "skills",
    "mounts",
    "requires",
    "metadata",
    "transitions",
];

/// Keys a trigger declaration is read for (FORMAT §A.5); others are lint warnings.
pub const TRIGGER_KEYS: &[&str] = &[
    "session",
    "message",
    "connection",
    "description",
    "requires",
    "returns",
];

/// Signature entry types (FORMAT §A.5).
pub const SIGNATURE_TYPES: &[&str] = &[
    "string",
    "integer",
    "number",
    "boolean",
    "date",
    "date-time",
    "object",
    "array",
];

pub use crate::model::workflow::ESSENTIAL_TOOLS;

/// Built-in hook kinds (FORMAT §A.6; `BUILTIN_HOOK_KINDS` in the reference's
/// `src/lifecycle/runner.ts` is `["script", "rubric"]`).
pub const BUILTIN_HOOK_KINDS: &[&str] = &["script", "rubric"];

/// The path arguments of the built-in tools and how each is used (the reference's
/// `BUILT_IN_TOOL_PATHS`, FORMAT §E.7): `(tool, argument, mutating)`. A `paths:` guard
/// matches the declared arguments; the second spellings (`path` for the file tools) are
/// listed too so a guard on either spelling is read.
pub const TOOL_PATH_ARGS: &[(&str, &str, bool)] = &[
    ("read_file", "file_path", false),
    ("read_file", "path", false),
    ("write_file", "file_path", true),
    ("write_file", "path", true),
    ("edit_file", "file_path", true),
    ("edit_file", "path", true),
    ("ls", "path", false),
    ("glob", "path", false),
    ("grep", "path", false),
    ("archmax_run", "file_path", false),
    ("archmax_run", "path", false),
    ("copy_file", "source", false),
    ("copy_file", "destination", true),
    ("move_file", "source", true),
    ("move_file", "destination", true),
    ("remove_file", "file_path", true),
];

/// True when `s` matches the slug grammar `^[a-z0-9]+(?:-[a-z0-9]+)*$` (FORMAT §A.3).
pub fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// True when `s` matches `VARIABLE_NAME_PATTERN`, `^[a-z][a-z0-9_]*$` (FORMAT §A.3).
pub fn is_variable_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Why a mount name is refused (FORMAT §A.3), or `None` when it is valid.
pub fn mount_name_problem(s: &str) -> Option<&'static str> {
    if s.is_empty() {
        return Some("it is empty");
    }
    if s.trim() != s {
        return Some("it has surrounding whitespace");
    }
    if s.contains(['*', '?', '[', ']', '{', '}']) {
        return Some("it contains a glob character (`* ? [ ] { }`)");
    }
    if s.starts_with('/') || s.ends_with('/') {
        return Some("it starts or ends with `/`");
    }
    if s.split('/')
        .any(|seg| seg.is_empty() || seg == "." || seg == "..")
    {
        return Some("it has an empty, `.` or `..` segment");
    }
    None
}

/// True when `p` is a valid hook script path: `^hooks/[^/].*\.(js|mjs)$` with no `..`
/// segment (FORMAT §A.6).
pub fn is_hook_script_path(p: &str) -> bool {
    let Some(rest) = p.strip_prefix("hooks/") else {
        return false;
    };
    !rest.is_empty()
        && !rest.starts_with('/')
        && !p.contains('\n')
        && (p.ends_with(".js") || p.ends_with(".mjs"))
        && !p.split('/').any(|seg| seg == "..")
}

/// One `${{…}}` reference found in a guard glob (FORMAT §A.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardRef {
    /// The reference as written, `${{…}}` included.
    pub raw: String,
    /// The trimmed inner text split on `.`.
    pub segments: Vec<String>,
}

impl GuardRef {
    /// The variable name (the first segment).
    pub fn name(&self) -> &str {
        self.segments.first().map_or("", String::as_str)
    }

    /// `malformed` (an empty segment) or `invalid-name` (FORMAT §A.3).
    pub fn is_malformed(&self) -> bool {
        self.segments.iter().any(String::is_empty) || !is_variable_name(self.name())
    }
}

/// Scans `s` with the reference's `/(\$?)\$\{\{([^}]*)\}\}/g`; escapes (`$${{…}}`) are
/// skipped. Returns the references in order.
pub fn scan_refs(s: &str) -> Vec<GuardRef> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = s.get(from..).and_then(|r| r.find("${{")).map(|p| p + from) {
        let inner_start = pos + 3;
        let Some(close) = s
            .get(inner_start..)
            .and_then(|r| r.find('}'))
            .map(|p| p + inner_start)
        else {
            break;
        };
        if s.get(close + 1..close + 2) != Some("}") {
            // Every `${{` before `close` would stop at the same `}` (the body is `[^}]*`),
            // so the scan resumes after it: linear in `s`, not quadratic (bounded work).
            from = close + 1;
            continue;
        }
        // `(\$?)` captures a `$` right before `${{`: that is the escape `$${{…}}`.
        let escaped = pos > 0 && s.get(pos - 1..pos) == Some("$");
        if !escaped {
            let inner = s.get(inner_start..close).unwrap_or("");
            out.push(GuardRef {
                raw: s.get(pos..close + 2).unwrap_or("").to_owned(),
                segments: inner.trim().split('.').map(str::to_owned).collect(),
            });
        }
        from = close + 2;
    }
    out
}

/// A guard string found while walking tool entries, for the refine and lint passes.
struct Guard {
    range: TextRange,
    tool: String,
    raw: String,
    name: String,
    malformed: bool,
    /// `State '<s>'` or `tools.allow_always` etc.
    place: String,
}

/// Buckets of findings, so the pipeline of FORMAT §A.0.3 can drop refine and lint.
struct Cx<'a> {
    file: &'a str,
    shape: Vec<Diagnostic>,
    refine: Vec<Diagnostic>,
    lint: Vec<Diagnostic>,
    validate: Vec<Diagnostic>,
    guards: Vec<Guard>,
}

impl<'a> Cx<'a> {
    fn new(file: &'a str) -> Self {
        Self {
            file,
            shape: Vec::new(),
            refine: Vec::new(),
            lint: Vec::new(),
            validate: Vec::new(),
            guards: Vec::new(),
        }
    }

    fn diag(&self, code: Code, range: TextRange, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, self.file, range, msg)
    }

    fn shape(&mut self, code: Code, range: TextRange, msg: impl Into<String>) {
        let d = self.diag(code, range, msg);
        d::push_bounded(&mut self.shape, d);
    }

    fn refine(&mut self, code: Code, range: TextRange, msg: impl Into<String>) {
        let d = self.diag(code, range, msg);
        d::push_bounded(&mut self.refine, d);
    }

    fn lint(&mut self, code: Code, range: TextRange, msg: impl Into<String>) {
        let d = self.diag(code, range, msg);
        d::push_bounded(&mut self.lint, d);
    }
}

/// Where a mapping sits, for the removed-key and near-miss tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    Root,
    State,
    Transition,
    Hook,
    Rubric,
    RootGrants,
    StateGrants,
    Other,
}

/// Every FORMAT §A rule on one `workflow.yaml` root: shape, then (when the shape holds)
/// refine and lint, plus the unknown custom hook kind (WFX226). `file` is the
/// workspace-relative path. Emits WFX201–WFX258.
pub fn check_document(file: &str, root: &Node) -> Vec<Diagnostic> {
    if root.as_map().is_none() {
        let what = match &root.value {
            Value::Null => "empty".to_owned(),
            _ => format!("a {}", root.type_name()),
        };
        return vec![Diagnostic::new(
            &d::WF_NOT_A_MAPPING,
            file,
            if root.is_null() {
                TextRange::empty(root.range.start)
            } else {
                root.range
            },
            format!("the workflow spec must be a YAML mapping of keys; this document is {what}"),
        )];
    }
    let mut cx = Cx::new(file);
    shape_root(&mut cx, root);
    let shape_failed = cx.shape.iter().any(|d| d.severity == Severity::Error);
    let mut out = std::mem::take(&mut cx.shape);
    if !shape_failed {
        refine(&mut cx, root);
        lint(&mut cx, root);
        out.append(&mut cx.refine);
        out.append(&mut cx.lint);
    }
    out.append(&mut cx.validate);
    out
}

/// True when the spec at `root` would load: a mapping with no shape or refine error
/// (FORMAT §A.0.6; lint errors do not count). Used for sub-workflow targets (§D.2 step 9).
pub fn is_usable(root: &Node) -> bool {
    if root.as_map().is_none() {
        return false;
    }
    let mut cx = Cx::new("");
    shape_root(&mut cx, root);
    if cx.shape.iter().any(|d| d.severity == Severity::Error) {
        return false;
    }
    refine(&mut cx, root);
    !cx.refine.iter().any(|d| d.severity == Severity::Error)
}

/// FORMAT §A.0.5: `WORKFLOW.md` is prose only. A file whose first line is `---` and that
/// has a closing `---` (or `...`) line declares YAML frontmatter, an error on the opening
/// fence (WFX260). A lone `---` without a closing fence is a Markdown rule, not
/// frontmatter.
pub fn check_workflow_md(file: &str, text: &str) -> Vec<Diagnostic> {
    let text_start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = text.get(text_start..).unwrap_or("");
    let mut lines = body.split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Vec::new();
    };
    if first.trim_end() != "---" {
        return Vec::new();
    }
    if !lines.any(|l| matches!(l.trim_end(), "---" | "...")) {
        return Vec::new();
    }
    let start = u32::try_from(text_start).unwrap_or(0);
    let len = u32::try_from(first.trim_end().len()).unwrap_or(0);
    vec![Diagnostic::new(
        &d::WF_WORKFLOW_MD_FRONTMATTER,
        file,
        TextRange::new(start, start + len),
        "`WORKFLOW.md` declares YAML frontmatter, but `workflow.yaml` is the machine spec; \
         remove the frontmatter (WORKFLOW.md is prose only)",
    )]
}

// ---------------------------------------------------------------------------------------
// Small helpers.

fn key_text(e: &Entry) -> String {
    e.key
        .scalar_text()
        .map(|c| c.into_owned())
        .unwrap_or_default()
}

/// The value as compact JSON for messages, cut at 60 characters.
fn json(node: &Node) -> String {
    let s = node.to_json().to_string();
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}…")
    } else {
        s
    }
}

/// The range a "missing key" finding sits on: the mapping's first key, else the node.
fn first_key_range(node: &Node) -> TextRange {
    node.as_map()
        .and_then(|m| m.first())
        .map_or(node.range, |e| e.key.range)
}

/// Optimal string alignment distance: insertions, deletions, substitutions and adjacent
/// transpositions each cost 1.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut dp = vec![0usize; (a.len() + 1) * w];
    let at =
        |dp: &[usize], i: usize, j: usize| dp.get(i * w + j).copied().unwrap_or(usize::MAX / 2);
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            let v = if i == 0 {
                j
            } else if j == 0 {
                i
            } else {
                let cost = usize::from(a.get(i - 1) != b.get(j - 1));
                let mut v = (at(&dp, i - 1, j) + 1)
                    .min(at(&dp, i, j - 1) + 1)
                    .min(at(&dp, i - 1, j - 1) + cost);
                if i > 1 && j > 1 && a.get(i - 1) == b.get(j - 2) && a.get(i - 2) == b.get(j - 1) {
                    v = v.min(at(&dp, i - 2, j - 2) + 1);
                }
                v
            };
            if let Some(cell) = dp.get_mut(i * w + j) {
                *cell = v;
            }
        }
    }
    at(&dp, a.len(), b.len())
}

/// The closest known key to `key`: the same letters ignoring case, `_` and `-`, or an edit
/// distance (with transpositions) of at most 1, or 2 for keys of 6 characters or more.
pub fn did_you_mean<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let norm = |s: &str| {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .collect::<String>()
            .to_lowercase()
    };
    use crate::rules::case::{SUGGEST_CANDIDATE_COST, suggest_charge};
    // Bounded work: each candidate is charged to the file's near-miss budget
    // (`rules::case::MAX_SUGGEST_WORK`); once it is spent there is no suggestion.
    if !suggest_charge(SUGGEST_CANDIDATE_COST.saturating_mul(known.len())) {
        return None;
    }
    let nk = norm(key);
    if let Some(k) = known.iter().find(|k| norm(k) == nk) {
        return Some(k);
    }
    let len = key.chars().count();
    let limit = if len >= 6 { 2 } else { 1 };
    // The distance is at least the length difference: skip hopeless candidates before the
    // quadratic comparison (a 7 MiB key would otherwise allocate gigabytes).
    let near: Vec<&str> = known
        .iter()
        .copied()
        .filter(|k| len.abs_diff(k.chars().count()) <= limit)
        .collect();
    let cells: usize = near
        .iter()
        .map(|k| len.max(1).saturating_mul(k.chars().count().max(1)))
        .fold(0, usize::saturating_add);
    if !suggest_charge(cells) {
        return None;
    }
    near.into_iter()
        .map(|k| (edit_distance(key, k), k))
        .filter(|(dist, _)| *dist <= limit)
        .min_by_key(|(dist, _)| *dist)
        .map(|(_, k)| k)
}

/// A key the format removed (FORMAT §D.3): the replacement to name and, when the rename is
/// certain, the new key.
fn removed_key(at: At, key: &str) -> Option<(&'static str, Option<&'static str>)> {
    Some(match (at, key) {
        (At::Root | At::State, "name") => ("`title`", Some("title")),
        (At::Root | At::State, "description") => ("`instructions`", Some("instructions")),
        (At::Root, "policy") => ("`tools.forbid_always`", None),
        (At::State, "policy") => ("`tools.forbid`", None),
        (At::RootGrants, "policy") => ("`forbid_always`", Some("forbid_always")),
        (At::Root, "triggers") => ("a `triggers:` mapping on the state a run starts in", None),
        (At::State, "workflow" | "params" | "for_each" | "result") => (
            "a state that allows `archmax_workflow_<slug>` in `tools.allow`, with the inputs in `requires`",
            None,
        ),
        (At::State, "parallel" | "join") => (
            "fan-out from a skill script calling `archmax_workflow_<slug>` (parallel states were removed)",
            None,
        ),
        (At::Transition, "on") => (
            "the transition's `description`, which is how the agent picks an edge",
            None,
        ),
        (At::Hook | At::Rubric, "max_corrections") => ("`max_iterations`", Some("max_iterations")),
        (At::Hook, "subagent") => ("`rubric`", Some("rubric")),
        _ => return None,
    })
}

/// Near misses that are not edit-distance close: the root and state spellings of the
/// grant lists.
fn alias(at: At, key: &str) -> Option<&'static str> {
    match (at, key) {
        (At::RootGrants, "allow") => Some("allow_always"),
        (At::RootGrants, "forbid") => Some("forbid_always"),
        (At::StateGrants, "allow_always") => Some("allow"),
        (At::StateGrants, "forbid_always") => Some("forbid"),
        _ => None,
    }
}

/// Reports every key of `node` not in `known` (WFX202, or WFX203 for a removed key).
/// `what` names the mapping in messages (e.g. "state `review`").
fn strict(cx: &mut Cx<'_>, node: &Node, known: &[&str], at: At, what: &str) {
    let Some(map) = node.as_map() else { return };
    for e in map {
        let key = key_text(e);
        if known.contains(&key.as_str()) {
            continue;
        }
        let root_skills_allow = at == At::RootGrants && what == "`skills`" && key == "allow";
        if let Some((replacement, rename)) = removed_key(at, &key).or(if root_skills_allow {
            Some(("`allow_always`", Some("allow_always")))
        } else {
            None
        }) {
            let mut diag = cx.diag(
                &d::WF_REMOVED_KEY,
                e.key.range,
                format!("`{key}` was removed from {what}; use {replacement} instead"),
            );
            if let Some(new) = rename {
                diag = diag.with_fix(format!("rename `{key}` to `{new}`"), e.key.range, new);
            }
            d::push_bounded(&mut cx.shape, diag);
            continue;
        }
        let suggestion = alias(at, &key).or_else(|| did_you_mean(&key, known));
        let mut msg = format!("unknown key `{key}` in {what}");
        match suggestion {
            Some(s) => msg.push_str(&format!("; did you mean `{s}`?")),
            None => msg.push_str(&format!("; expected one of {}", list(known))),
        }
        let mut diag = cx.diag(&d::WF_UNKNOWN_KEY, e.key.range, msg);
        if let Some(s) = suggestion {
            diag = diag.with_fix(format!("replace `{key}` with `{s}`"), e.key.range, s);
        }
        d::push_bounded(&mut cx.shape, diag);
    }
}

fn list(items: &[&str]) -> String {
    items
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn wrong_type(cx: &mut Cx<'_>, node: &Node, key: &str, expected: &str) {
    cx.shape(
        &d::WF_WRONG_TYPE,
        node.range,
        format!(
            "`{key}` must be {expected}; got {} `{}`",
            node.type_name(),
            json(node)
        ),
    );
}

fn expect_map<'n>(cx: &mut Cx<'_>, node: &'n Node, key: &str) -> Option<&'n Node> {
    if node.as_map().is_some() {
        Some(node)
    } else {
        wrong_type(cx, node, key, "a mapping");
        None
    }
}

fn expect_str(cx: &mut Cx<'_>, node: &Node, key: &str) {
    if node.as_str().is_none() {
        wrong_type(cx, node, key, "a string");
    }
}

fn expect_nonempty_str(cx: &mut Cx<'_>, node: &Node, key: &str) {
    match node.as_str() {
        None => wrong_type(cx, node, key, "a non-empty string"),
        Some(s) if s.trim().is_empty() => {
            cx.shape(
                &d::WF_EMPTY_STRING,
                node.range,
                format!("`{key}` must be a non-empty string"),
            );
        }
        Some(_) => {}
    }
}

fn expect_bool(cx: &mut Cx<'_>, node: &Node, key: &str) {
    if !matches!(node.value, Value::Bool(_)) {
        wrong_type(cx, node, key, "`true` or `false`");
    }
}

/// An integer `>= min` (`min` is 1 for "positive", 0 for "non-negative").
fn expect_int(cx: &mut Cx<'_>, node: &Node, key: &str, min: i64) {
    let ok = matches!(node.value, Value::Int(i) if i >= min);
    if !ok {
        let expected = if min >= 1 {
            "an integer greater than 0"
        } else {
            "an integer of at least 0"
        };
        let code = if matches!(node.value, Value::Int(_) | Value::Float(_)) {
            &d::WF_INVALID_NUMBER
        } else {
            &d::WF_WRONG_TYPE
        };
        cx.shape(
            code,
            node.range,
            format!("`{key}` must be {expected}; got `{}`", json(node)),
        );
    }
}

fn expect_str_list(cx: &mut Cx<'_>, node: &Node, key: &str) {
    match node.as_seq() {
        None => wrong_type(cx, node, key, "a list of strings"),
        Some(items) => {
            for item in items {
                if item.as_str().is_none() {
                    wrong_type(cx, item, &format!("{key}` entry `"), "a string");
                }
            }
        }
    }
}

fn expect_model(cx: &mut Cx<'_>, node: &Node, key: &str) {
    if node.as_map().is_some() {
        cx.shape(
            &d::WF_WRONG_TYPE,
            node.range,
            format!("`{key}` takes only the model id as a string (e.g. `model: claude-sonnet-4-5`); provider options do not belong here"),
        );
    } else {
        expect_nonempty_str(cx, node, key);
    }
}

// ---------------------------------------------------------------------------------------
// Shape.

fn shape_root(cx: &mut Cx<'_>, root: &Node) {
    strict(cx, root, ROOT_KEYS, At::Root, "the workflow spec");
    let get = |k: &str| root.get_value(k);
    if let Some(v) = get("title") {
        expect_str(cx, v, "title");
    }
    if let Some(v) = get("instructions") {
        expect_nonempty_str(cx, v, "instructions");
    }
    if let Some(v) = get("disabled")
        && !matches!(v.value, Value::Bool(_))
    {
        let tail = if v.is_null() {
            "the runtime reads `null` as enabled, but the schema takes only a boolean"
        } else {
            "which the runtime reads fail-closed as disabled, so this workflow starts no runs"
        };
        cx.shape(
                &d::WF_DISABLED_NOT_BOOLEAN,
                v.range,
                format!("`disabled` must be `true` or `false`; got `{}`, {tail}; write `disabled: true` to mean it, or remove the key", json(v)),
            );
    }
    if let Some(v) = get("runtime").and_then(|v| expect_map(cx, v, "runtime")) {
        strict(cx, v, &["engine", "version"], At::Other, "`runtime`");
        if let Some(e) = v.get_value("engine") {
            expect_str(cx, e, "runtime.engine");
        }
        if let Some(ver) = v.get_value("version")
            && !matches!(ver.value, Value::Str(..) | Value::Int(_) | Value::Float(_))
        {
            wrong_type(cx, ver, "runtime.version", "a string or a number");
        }
    }
    if let Some(v) = get("settings").and_then(|v| expect_map(cx, v, "settings")) {
        shape_settings(cx, v);
    }
    if let Some(v) = get("tools").and_then(|v| expect_map(cx, v, "tools")) {
        strict(
            cx,
            v,
            &["allow_always", "forbid_always"],
            At::RootGrants,
            "`tools`",
        );
        if let Some(l) = v.get_value("allow_always") {
            shape_tool_list(cx, l, true, "tools.allow_always", "tools.allow_always");
        }
        if let Some(l) = v.get_value("forbid_always") {
            shape_tool_list(cx, l, false, "tools.forbid_always", "tools.forbid_always");
        }
    }
    if let Some(v) = get("skills").and_then(|v| expect_map(cx, v, "skills")) {
        strict(
            cx,
            v,
            &["allow_always", "forbid_always"],
            At::RootGrants,
            "`skills`",
        );
        for k in ["allow_always", "forbid_always"] {
            if let Some(l) = v.get_value(k) {
                shape_skill_list(cx, l, &format!("skills.{k}"));
            }
        }
    }
    if let Some(v) = get("mounts").and_then(|v| expect_map(cx, v, "mounts")) {
        strict(
            cx,
            v,
            &["allow_always", "forbid_always"],
            At::RootGrants,
            "`mounts`",
        );
        if let Some(l) = v.get_value("allow_always") {
            shape_mount_grants(cx, l, "mounts.allow_always");
        }
        if let Some(l) = v.get_value("forbid_always") {
            shape_mount_names(cx, l, "mounts.forbid_always");
        }
    }
    if let Some(v) = get("tests").and_then(|v| expect_map(cx, v, "tests")) {
        shape_tests(cx, v);
    }
    if let Some(v) = get("extensions").and_then(|v| expect_map(cx, v, "extensions")) {
        strict(cx, v, &["hooks"], At::Other, "`extensions`");
        if let Some(h) = v.get_value("hooks") {
            expect_str_list(cx, h, "extensions.hooks");
        }
    }
    if let Some(v) = get("metadata") {
        expect_map(cx, v, "metadata");
    }
    let hook_kinds: Vec<String> = get("extensions")
        .and_then(|e| e.get_value("hooks"))
        .and_then(Node::as_seq)
        .map(|s| {
            s.iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    match get("states") {
        None => cx.shape(
            &d::WF_MISSING_STATES,
            TextRange::empty(root.range.start),
            "the workflow spec has no `states`; declare at least one state (e.g. `states: { answer: { triggers: { manual: } } }`)",
        ),
        Some(states) => match states.as_map() {
            None => cx.shape(
                &d::WF_MISSING_STATES,
                if states.is_null() { TextRange::empty(states.range.start) } else { states.range },
                format!("`states` must be a mapping of state slug to state; got {}", states.type_name()),
            ),
            Some(map) => {
                for e in map {
                    let slug = key_text(e);
                    match &e.value.value {
                        Value::Null => {}
                        Value::Map(_) => shape_state(cx, &slug, &e.value, &hook_kinds),
                        _ => wrong_type(cx, &e.value, &format!("states.{slug}"), "a mapping (or empty)"),
                    }
                }
            }
        },
    }
}

fn shape_settings(cx: &mut Cx<'_>, v: &Node) {
    strict(
        cx,
        v,
        &[
            "model",
            "timeoutMs",
            "memoryLimitBytes",
            "maxPtcCalls",
            "maxResultChars",
            "prompt_cache",
        ],
        At::Other,
        "`settings`",
    );
    if let Some(m) = v.get_value("model") {
        expect_model(cx, m, "settings.model");
    }
    for k in ["timeoutMs", "memoryLimitBytes", "maxResultChars"] {
        if let Some(n) = v.get_value(k) {
            expect_int(cx, n, &format!("settings.{k}"), 1);
        }
    }
    // Bounded work: the runner clamps its sandbox budgets to these ceilings.
    for (k, ceiling, unit) in [
        (
            "timeoutMs",
            crate::model::workflow::MAX_SANDBOX_TIMEOUT_MS,
            "ms",
        ),
        (
            "memoryLimitBytes",
            crate::model::workflow::MAX_SANDBOX_MEMORY_LIMIT_BYTES,
            "bytes",
        ),
    ] {
        if let Some(n) = v.get_value(k)
            && let Value::Int(i) = n.value
            && u64::try_from(i).is_ok_and(|i| i > ceiling)
        {
            cx.lint(
                &d::WF_SANDBOX_BUDGET_ABOVE_CEILING,
                n.range,
                format!(
                    "`settings.{k}` is {i} {unit}, above the runner's ceiling of {ceiling} \
                     {unit}; `wfx-lsp test` runs scripts with {ceiling} {unit}"
                ),
            );
        }
    }
    if let Some(n) = v.get_value("maxPtcCalls")
        && !n.is_null()
    {
        expect_int(cx, n, "settings.maxPtcCalls", 0);
    }
    if let Some(p) = v
        .get_value("prompt_cache")
        .and_then(|p| expect_map(cx, p, "settings.prompt_cache"))
    {
        strict(
            cx,
            p,
            &["enabled", "ttl"],
            At::Other,
            "`settings.prompt_cache`",
        );
        if let Some(b) = p.get_value("enabled") {
            expect_bool(cx, b, "settings.prompt_cache.enabled");
        }
        if let Some(t) = p.get_value("ttl") {
            expect_str(cx, t, "settings.prompt_cache.ttl");
        }
    }
}

fn shape_tests(cx: &mut Cx<'_>, v: &Node) {
    strict(
        cx,
        v,
        &["maxConcurrency", "caseTimeoutMs", "judge"],
        At::Other,
        "`tests`",
    );
    for k in ["maxConcurrency", "caseTimeoutMs"] {
        if let Some(n) = v.get_value(k) {
            expect_int(cx, n, &format!("tests.{k}"), 1);
        }
    }
    // Bounded work: the runner clamps a case's time to this ceiling.
    let ceiling = crate::model::workflow::MAX_CASE_TIMEOUT_MS;
    if let Some(n) = v.get_value("caseTimeoutMs")
        && let Value::Int(i) = n.value
        && u64::try_from(i).is_ok_and(|i| i > ceiling)
    {
        cx.lint(
            &d::WF_SANDBOX_BUDGET_ABOVE_CEILING,
            n.range,
            format!(
                "`tests.caseTimeoutMs` is {i} ms, above the runner's ceiling of {ceiling} ms; \
                 `wfx-lsp test` stops a case after {ceiling} ms"
            ),
        );
    }
    if let Some(j) = v
        .get_value("judge")
        .and_then(|j| expect_map(cx, j, "tests.judge"))
    {
        strict(
            cx,
            j,
            &["model", "modelOptions"],
            At::Other,
            "`tests.judge`",
        );
        if let Some(m) = j.get_value("model") {
            expect_str(cx, m, "tests.judge.model");
        }
        if let Some(o) = j
            .get_value("modelOptions")
            .and_then(|o| expect_map(cx, o, "tests.judge.modelOptions"))
        {
            strict(
                cx,
                o,
                &["temperature", "maxTokens"],
                At::Other,
                "`tests.judge.modelOptions`",
            );
            if let Some(t) = o.get_value("temperature") {
                let ok = match t.value {
                    Value::Int(i) => i >= 0,
                    Value::Float(f) => f.is_finite() && f >= 0.0,
                    _ => false,
                };
                if !ok {
                    let code = if matches!(t.value, Value::Int(_) | Value::Float(_)) {
                        &d::WF_INVALID_NUMBER
                    } else {
                        &d::WF_WRONG_TYPE
                    };
                    cx.shape(code, t.range, format!("`tests.judge.modelOptions.temperature` must be a number of at least 0; got `{}`", json(t)));
                }
            }
            if let Some(n) = o.get_value("maxTokens") {
                expect_int(cx, n, "tests.judge.modelOptions.maxTokens", 1);
            }
        }
    }
}

/// An allow or forbid list (FORMAT §A.3). `field` is the dotted path for messages,
/// `place` the `<where>` of guard messages.
fn shape_tool_list(cx: &mut Cx<'_>, node: &Node, allow_side: bool, field: &str, place: &str) {
    let Some(items) = node.as_seq() else {
        wrong_type(
            cx,
            node,
            field,
            "a list of tool names or `{ tool, … }` entries",
        );
        return;
    };
    for item in items {
        let tool_node = match &item.value {
            Value::Str(..) => item,
            Value::Map(_) => {
                strict(
                    cx,
                    item,
                    &["tool", "args", "paths", "connection", "source"],
                    At::Other,
                    &format!("a `{field}` entry"),
                );
                let Some(t) = item.get_value("tool") else {
                    cx.shape(
                        &d::WF_INVALID_TOOL_ENTRY,
                        first_key_range(item),
                        format!("a `{field}` entry must name a tool (`tool: <name>`)"),
                    );
                    continue;
                };
                if t.as_str().is_none() {
                    wrong_type(cx, t, "tool", "a tool name");
                    continue;
                }
                let tool = t.as_str().unwrap_or("").to_owned();
                if let Some(args) = item.get_value("args") {
                    match args.as_map() {
                        None => cx.shape(&d::WF_INVALID_TOOL_ENTRY, args.range, format!("`args` must map argument names to a glob or a list of globs; got {}", args.type_name())),
                        Some(map) => {
                            for e in map {
                                shape_globs(cx, &e.value, &format!("args.{}", key_text(e)), &tool, place);
                            }
                        }
                    }
                }
                if let Some(p) = item.get_value("paths") {
                    shape_globs(cx, p, "paths", &tool, place);
                }
                for k in ["connection", "source"] {
                    if let Some(s) = item.get_value(k) {
                        expect_str(cx, s, k);
                    }
                }
                t
            }
            _ => {
                cx.shape(&d::WF_INVALID_TOOL_ENTRY, item.range, format!("a `{field}` entry must be a tool name or `{{ tool, args?, paths? }}`; got {}", item.type_name()));
                continue;
            }
        };
        if allow_side && tool_node.as_str() == Some("*") {
            cx.refine(
                &d::WF_WILDCARD_GRANT,
                tool_node.range,
                format!("`*` is not a tool name a grant may use: `{field}` names the tools one by one; the every-tool wildcard belongs in a `forbid` or `forbid_always` entry, where it can only deny"),
            );
        }
    }
}

/// A guard value: a glob or a list of globs; records `${{…}}` references.
fn shape_globs(cx: &mut Cx<'_>, node: &Node, key: &str, tool: &str, place: &str) {
    let strings: Vec<&Node> = match &node.value {
        Value::Str(..) => vec![node],
        Value::Seq(items) if items.iter().all(|i| i.as_str().is_some()) => items.iter().collect(),
        _ => {
            cx.shape(
                &d::WF_INVALID_TOOL_ENTRY,
                node.range,
                format!(
                    "`{key}` must be a glob or a list of globs; got `{}`",
                    json(node)
                ),
            );
            return;
        }
    };
    for s in strings {
        if let Err(limit) = crate::glob::check_pattern(s.as_str().unwrap_or("")) {
            cx.shape(
                &d::WF_GLOB_OVER_BOUND,
                s.range,
                format!(
                    "this `{key}` glob of `{tool}` cannot be matched: {limit} (bounded work); at run time every call it guards is blocked"
                ),
            );
        }
        for r in scan_refs(s.as_str().unwrap_or("")) {
            cx.guards.push(Guard {
                range: s.range,
                tool: tool.to_owned(),
                name: r.name().to_owned(),
                malformed: r.is_malformed(),
                raw: r.raw,
                place: place.to_owned(),
            });
        }
    }
}

fn shape_skill_list(cx: &mut Cx<'_>, node: &Node, field: &str) {
    let Some(items) = node.as_seq() else {
        wrong_type(cx, node, field, "a list of skill slugs");
        return;
    };
    for item in items {
        match item.as_str() {
            Some(s) if is_slug(s) => {}
            _ => cx.shape(
                &d::WF_INVALID_SKILL_SLUG,
                item.range,
                format!("`{}` is not a skill slug; entries are bundle folder names in kebab-case (e.g. `order-data`), never paths or globs; scope paths within a skill with a `tools.allow` entry instead", item.scalar_text().map_or_else(|| json(item), |c| c.into_owned())),
            ),
        }
    }
}

fn check_mount_name(cx: &mut Cx<'_>, node: &Node) {
    match node.as_str() {
        Some(s) => {
            if let Some(why) = mount_name_problem(s) {
                cx.shape(
                    &d::WF_INVALID_MOUNT_NAME,
                    node.range,
                    format!("`{s}` is not a valid mount name: {why}"),
                );
            }
        }
        None => cx.shape(
            &d::WF_INVALID_MOUNT_NAME,
            node.range,
            format!("a mount name must be a string; got `{}`", json(node)),
        ),
    }
}

fn shape_mount_grants(cx: &mut Cx<'_>, node: &Node, field: &str) {
    let Some(items) = node.as_seq() else {
        wrong_type(
            cx,
            node,
            field,
            "a list of mount names, each optionally as `{ mount: <name>, access: read | read_write }`",
        );
        return;
    };
    for item in items {
        match &item.value {
            Value::Str(..) => check_mount_name(cx, item),
            Value::Map(_) => {
                strict(cx, item, &["mount", "access"], At::Other, &format!("a `{field}` entry"));
                match item.get_value("mount") {
                    Some(m) => check_mount_name(cx, m),
                    None => cx.shape(&d::WF_INVALID_MOUNT_GRANT, first_key_range(item), "a mount grant needs `mount: <name>`"),
                }
                if let Some(a) = item.get_value("access")
                    && !matches!(a.as_str(), Some("read" | "read_write")) {
                        cx.shape(&d::WF_INVALID_MOUNT_GRANT, a.range, format!("unknown mount access `{}`; expected `read` or `read_write`", a.scalar_text().map_or_else(|| json(a), |c| c.into_owned())));
                    }
            }
            _ => cx.shape(
                &d::WF_INVALID_MOUNT_GRANT,
                item.range,
                format!("a mount grant must be a mount name or `{{ mount: <name>, access: read | read_write }}`; got `{}`", json(item)),
            ),
        }
    }
}

fn shape_mount_names(cx: &mut Cx<'_>, node: &Node, field: &str) {
    let Some(items) = node.as_seq() else {
        wrong_type(cx, node, field, "a list of mount names");
        return;
    };
    for item in items {
        check_mount_name(cx, item);
    }
}

fn shape_state(cx: &mut Cx<'_>, slug: &str, node: &Node, hook_kinds: &[String]) {
    strict(cx, node, STATE_KEYS, At::State, &format!("state `{slug}`"));
    let get = |k: &str| node.get_value(k);
    if let Some(t) = get("type") {
        match t.as_str() {
            Some("agent" | "human") => {}
            Some(v @ ("wait" | "trigger" | "workflow")) => {
                let instead = match v {
                    "wait" => "an agent state that calls `archmax_wait`",
                    "trigger" => "a `triggers:` mapping on the state a run starts in",
                    _ => "a state that allows `archmax_workflow_<slug>` in `tools.allow`",
                };
                cx.shape(
                    &d::WF_UNKNOWN_STATE_TYPE,
                    t.range,
                    format!("state type `{v}` was removed; use {instead}"),
                );
            }
            _ => cx.shape(
                &d::WF_UNKNOWN_STATE_TYPE,
                t.range,
                format!(
                    "unknown state type `{}`; expected `agent` or `human`",
                    t.scalar_text().map_or_else(|| json(t), |c| c.into_owned())
                ),
            ),
        }
    }
    if let Some(v) = get("title") {
        expect_nonempty_str(cx, v, "title");
    }
    for k in ["instructions", "summary"] {
        if let Some(v) = get(k) {
            expect_str(cx, v, k);
        }
    }
    for k in ["evidence", "approvers"] {
        if let Some(v) = get(k) {
            expect_str_list(cx, v, k);
        }
    }
    if let Some(v) = get("triggers") {
        shape_triggers(cx, slug, v);
    }
    for phase in ["before", "after"] {
        if let Some(v) = get(phase) {
            shape_hooks(cx, slug, phase, v, hook_kinds);
        }
    }
    if let Some(b) = get("budget").and_then(|b| expect_map(cx, b, "budget")) {
        strict(
            cx,
            b,
            &["maxTurns", "timeoutMs", "maxParks"],
            At::Other,
            "`budget`",
        );
        for k in ["maxTurns", "timeoutMs", "maxParks"] {
            if let Some(n) = b.get_value(k) {
                expect_int(cx, n, &format!("budget.{k}"), 1);
            }
        }
    }
    if let Some(m) = get("model") {
        expect_model(cx, m, "model");
    }
    if let Some(v) = get("on_error") {
        expect_nonempty_str(cx, v, "on_error");
    }
    let place = format!("State '{slug}'");
    if let Some(t) = get("tools").and_then(|t| expect_map(cx, t, "tools")) {
        strict(cx, t, &["allow", "forbid"], At::StateGrants, "`tools`");
        if let Some(l) = t.get_value("allow") {
            shape_tool_list(cx, l, true, "tools.allow", &place);
        }
        if let Some(l) = t.get_value("forbid") {
            shape_tool_list(cx, l, false, "tools.forbid", &place);
        }
    }
    if let Some(s) = get("skills").and_then(|s| expect_map(cx, s, "skills")) {
        strict(cx, s, &["allow", "forbid"], At::StateGrants, "`skills`");
        for k in ["allow", "forbid"] {
            if let Some(l) = s.get_value(k) {
                shape_skill_list(cx, l, &format!("skills.{k}"));
            }
        }
    }
    if let Some(m) = get("mounts").and_then(|m| expect_map(cx, m, "mounts")) {
        strict(cx, m, &["allow", "forbid"], At::StateGrants, "`mounts`");
        if let Some(l) = m.get_value("allow") {
            shape_mount_grants(cx, l, "mounts.allow");
        }
        if let Some(l) = m.get_value("forbid") {
            shape_mount_names(cx, l, "mounts.forbid");
        }
    }
    if let Some(r) = get("requires") {
        match r.as_seq() {
            None => wrong_type(cx, r, "requires", "a list of run-variable names"),
            Some(items) => {
                for item in items {
                    check_var_name(cx, item);
                }
            }
        }
    }
    if let Some(v) = get("metadata") {
        expect_map(cx, v, "metadata");
    }
    if let Some(t) = get("transitions") {
        match t.as_seq() {
            None => wrong_type(
                cx,
                t,
                "transitions",
                "a list of `{ to, description }` entries",
            ),
            Some(items) => {
                for item in items {
                    shape_transition(cx, item);
                }
            }
        }
    }
}

fn check_var_name(cx: &mut Cx<'_>, item: &Node) {
    match item.as_str() {
        Some(s) if is_variable_name(s) => {}
        _ => cx.shape(
            &d::WF_INVALID_VARIABLE_NAME,
            item.range,
            format!(
                "`{}` is not a valid run-variable name; use lowercase letters, digits and underscores, starting with a letter (e.g. `order_id`)",
                item.scalar_text().map_or_else(|| json(item), |c| c.into_owned())
            ),
        ),
    }
}

fn shape_transition(cx: &mut Cx<'_>, item: &Node) {
    if item.as_map().is_none() {
        wrong_type(
            cx,
            item,
            "transitions` entry `",
            "a mapping `{ to, description }`",
        );
        return;
    }
    strict(
        cx,
        item,
        &["to", "description", "type"],
        At::Transition,
        "a transition",
    );
    match item.get_value("to") {
        None => cx.shape(
            &d::WF_WRONG_TYPE,
            first_key_range(item),
            "a transition needs `to`, the slug of the state it leads to",
        ),
        Some(to) => expect_nonempty_str(cx, to, "to"),
    }
    let desc_ok = item
        .get_value("description")
        .and_then(Node::as_str)
        .is_some_and(|s| !s.trim().is_empty());
    if !desc_ok {
        let range = item
            .get_value("description")
            .map_or_else(|| first_key_range(item), |n| n.range);
        cx.shape(
            &d::WF_MISSING_TRANSITION_DESCRIPTION,
            range,
            "a transition needs a non-empty `description`: it is the only thing the agent is told about this edge; say when to take it (e.g. `Refunds over $50`), not where it goes",
        );
    }
    if let Some(t) = item.get_value("type")
        && !matches!(t.as_str(), Some("approve" | "reject" | "refine" | "none"))
    {
        cx.shape(
            &d::WF_UNKNOWN_TRANSITION_TYPE,
            t.range,
            format!(
                "unknown transition type `{}`; expected `approve`, `reject`, `refine` or `none`",
                t.scalar_text().map_or_else(|| json(t), |c| c.into_owned())
            ),
        );
    }
}

fn session_path_problem(s: &str) -> Option<&'static str> {
    let s = s.trim();
    if s.is_empty() {
        return Some("it is empty");
    }
    if s.contains("${{") {
        return Some("write the bare path, not a `${{…}}` reference (e.g. `conversation_id`)");
    }
    let mut segs = s.split('.');
    if !segs.next().is_some_and(is_variable_name) {
        return Some(
            "its first segment must be a variable name (lowercase letters, digits and underscores, starting with a letter)",
        );
    }
    if segs.any(str::is_empty) {
        return Some("it has an empty segment; check for a doubled or trailing `.`");
    }
    None
}

fn shape_triggers(cx: &mut Cx<'_>, slug: &str, node: &Node) {
    let Some(map) = node.as_map() else {
        cx.shape(
            &d::WF_WRONG_TYPE,
            node.range,
            format!("`triggers` must be a mapping of trigger id to its declaration (e.g. `triggers: {{ manual: }}`); got {}", node.type_name()),
        );
        return;
    };
    for e in map {
        let id = key_text(e);
        if id.trim().is_empty() {
            cx.shape(
                &d::WF_INVALID_TRIGGER_ID,
                e.key.range,
                "a trigger id must be non-empty",
            );
        }
        let decl = &e.value;
        match &decl.value {
            Value::Null => continue,
            Value::Map(entries) => {
                for de in entries {
                    let k = key_text(de);
                    let v = &de.value;
                    match k.as_str() {
                        "session" => match v.as_str() {
                            None => cx.shape(&d::WF_INVALID_SESSION_PATH, v.range, "`session` must be a dotted path string (e.g. `conversation_id` or `triggers.-1.conversationId`)"),
                            Some(s) => {
                                if let Some(why) = session_path_problem(s) {
                                    cx.shape(&d::WF_INVALID_SESSION_PATH, v.range, format!("`session` is not a valid path: {why}"));
                                }
                            }
                        },
                        "message" => match &v.value {
                            Value::Bool(false) => {}
                            Value::Str(s, _) => {
                                if let Some(why) = session_path_problem(s) {
                                    cx.shape(&d::WF_INVALID_SESSION_PATH, v.range, format!("`message` is not a valid path: {why}"));
                                }
                            }
                            _ => cx.shape(&d::WF_INVALID_SESSION_PATH, v.range, "`message` must be a dotted path string (e.g. `triggers.-1.text`), or `false` when firings carry no message"),
                        },
                        "connection" => expect_nonempty_str(cx, v, "connection"),
                        "description" => match v.as_str() {
                            Some(s) if !s.trim().is_empty() => {}
                            _ => cx.shape(&d::WF_EMPTY_STRING, v.range, "a trigger `description` must be a non-empty string saying, for a caller, what calling this entry does"),
                        },
                        "requires" | "returns" => shape_signature(cx, v, &k),
                        "entry" => cx.shape(&d::WF_REFUSED_TRIGGER_KEY, de.key.range, format!("trigger `{id}` declares `entry`, but the state a declaration sits on is its entry state (`{slug}`); move the declaration to the state it should enter")),
                        "name" => cx.shape(&d::WF_REFUSED_TRIGGER_KEY, de.key.range, format!("trigger `{id}` declares `name`, but the key a declaration sits under is the trigger id; rename the key instead")),
                        _ => {
                            let suggestion = did_you_mean(&k, TRIGGER_KEYS);
                            let mut msg = format!("trigger `{id}` declares unknown key `{k}`, which the SDK ignores");
                            match suggestion {
                                Some(s) => msg.push_str(&format!("; did you mean `{s}`?")),
                                None => msg.push_str(&format!("; the keys it reads are {}", list(TRIGGER_KEYS))),
                            }
                            let mut diag = cx.diag(&d::WF_UNKNOWN_TRIGGER_KEY, de.key.range, msg);
                            if let Some(s) = suggestion {
                                diag = diag.with_fix(format!("replace `{k}` with `{s}`"), de.key.range, s);
                            }
                            d::push_bounded(&mut cx.lint, diag);
                        }
                    }
                }
            }
            _ => cx.shape(
                &d::WF_WRONG_TYPE,
                decl.range,
                format!("trigger `{id}` must be empty or a mapping (e.g. `{id}: {{ session: conversation_id }}`); got {}", decl.type_name()),
            ),
        }
    }
}

fn shape_signature(cx: &mut Cx<'_>, node: &Node, key: &str) {
    let Some(items) = node.as_seq() else {
        cx.shape(
            &d::WF_INVALID_SIGNATURE,
            node.range,
            format!("`{key}` must be a list of run-variable names, each a bare name or `{{ name, type?, description? }}` (e.g. `{key}: [order_id, {{ name: due, type: date }}]`)"),
        );
        return;
    };
    let mut seen: BTreeMap<String, TextRange> = BTreeMap::new();
    for item in items {
        let name_node = match &item.value {
            Value::Str(..) => item,
            Value::Map(entries) => {
                let label = item
                    .get_value("name")
                    .and_then(Node::as_str)
                    .unwrap_or("?")
                    .to_owned();
                for e in entries {
                    let k = key_text(e);
                    if !["name", "type", "description"].contains(&k.as_str()) {
                        cx.shape(
                            &d::WF_INVALID_SIGNATURE,
                            e.key.range,
                            format!("entry `{label}` declares `{k}`, which a signature entry does not take: it has `name`, `type` and `description` only"),
                        );
                    }
                }
                if let Some(t) = item.get_value("type")
                    && !t.as_str().is_some_and(|s| SIGNATURE_TYPES.contains(&s))
                {
                    cx.shape(
                            &d::WF_UNKNOWN_SIGNATURE_TYPE,
                            t.range,
                            format!("`type` must be one of string, integer, number, boolean, date, date-time, object or array; got `{}`", json(t)),
                        );
                }
                if let Some(desc) = item.get_value("description") {
                    expect_str(cx, desc, "description");
                }
                match item.get_value("name") {
                    Some(n) => n,
                    None => {
                        cx.shape(
                            &d::WF_INVALID_SIGNATURE,
                            first_key_range(item),
                            "a signature entry needs a `name` naming its variable (e.g. `{ name: order_id, type: string }`)",
                        );
                        continue;
                    }
                }
            }
            _ => {
                cx.shape(&d::WF_INVALID_SIGNATURE, item.range, format!("a `{key}` entry must be a bare name or `{{ name, type?, description? }}`; got `{}`", json(item)));
                continue;
            }
        };
        check_var_name(cx, name_node);
        let Some(name) = name_node.as_str() else {
            continue;
        };
        if let Some(first) = seen.get(name) {
            let diag = cx
                .diag(
                    &d::WF_DUPLICATE_SIGNATURE_NAME,
                    name_node.range,
                    format!("`{name}` is listed more than once in `{key}`"),
                )
                .with_related(cx.file, *first, "first listed here");
            d::push_bounded(&mut cx.shape, diag);
        } else {
            seen.insert(name.to_owned(), name_node.range);
        }
        if key == "returns" {
            let why = match name {
                "trigger" => Some(
                    "`trigger` is the built-in trigger variable, set by the harness and locked, so a run cannot declare it as something it produces",
                ),
                "title" => Some(
                    "`title` is the built-in title variable, set by the harness and locked, so a run cannot declare it as something it produces",
                ),
                "note" => Some(
                    "`note` is reserved in `returns`: a sub-run that finishes without setting all of its returns hands its caller a `note` naming the ones it left unset",
                ),
                _ => None,
            };
            if let Some(why) = why {
                cx.shape(&d::WF_RESERVED_RETURN_NAME, name_node.range, why);
            }
        }
    }
}

fn shape_hooks(cx: &mut Cx<'_>, slug: &str, phase: &str, node: &Node, hook_kinds: &[String]) {
    match node.as_seq() {
        Some(items) => {
            for item in items {
                shape_hook(cx, slug, phase, item, true, hook_kinds);
            }
        }
        None => shape_hook(cx, slug, phase, node, false, hook_kinds),
    }
}

fn shape_hook(
    cx: &mut Cx<'_>,
    slug: &str,
    phase: &str,
    node: &Node,
    in_list: bool,
    hook_kinds: &[String],
) {
    let Some(map) = node.as_map() else {
        let msg = if in_list {
            format!(
                "every `{phase}` entry must be a `{{ script }}` or `{{ rubric }}` hook; got {}",
                node.type_name()
            )
        } else {
            format!(
                "`{phase}` must be a `{{ script }}` or `{{ rubric }}` hook (or a list of them); got {}",
                node.type_name()
            )
        };
        cx.shape(&d::WF_INVALID_HOOK, node.range, msg);
        return;
    };
    let mut kinds: Vec<&Entry> = Vec::new();
    for e in map {
        let k = key_text(e);
        if k == "max_iterations" {
            continue;
        }
        if let Some((replacement, Some(new))) = removed_key(At::Hook, &k) {
            let diag = cx
                .diag(
                    &d::WF_REMOVED_KEY,
                    e.key.range,
                    format!("hook key `{k}` was removed; use {replacement} instead"),
                )
                .with_fix(format!("rename `{k}` to `{new}`"), e.key.range, new);
            d::push_bounded(&mut cx.shape, diag);
            if k == "subagent" {
                return;
            }
            continue;
        }
        kinds.push(e);
    }
    let outer_budget = node.get("max_iterations");
    let kind = match kinds.as_slice() {
        [one] => *one,
        [] => {
            cx.shape(&d::WF_INVALID_HOOK, first_key_range(node), "a hook must be a single-key tagged mapping (`script`, `rubric` or a custom kind) plus an optional `max_iterations`; this one names no kind");
            return;
        }
        [_, second, ..] => {
            cx.shape(
                &d::WF_INVALID_HOOK,
                second.key.range,
                format!("a hook must be a single-key tagged mapping plus an optional `max_iterations`; `{}` is a second kind key", key_text(second)),
            );
            return;
        }
    };
    let kind_name = key_text(kind);
    if let Some(b) = outer_budget {
        if kind_name == "rubric" {
            cx.shape(
                &d::WF_INVALID_HOOK,
                b.key.range,
                "`max_iterations` of a rubric hook goes inside `rubric`, not beside it",
            );
        } else {
            expect_int(cx, &b.value, "max_iterations", 0);
        }
    }
    match kind_name.as_str() {
        "script" => match kind.value.as_str() {
            Some(p) if is_hook_script_path(p) => {}
            _ => cx.shape(
                &d::WF_INVALID_HOOK_SCRIPT_PATH,
                kind.value.range,
                "`script` must be a workflow-relative path inside `hooks/` ending in .js or .mjs, with no `..` segment (e.g. `hooks/check-requester.js`); scripts the agent runs with archmax_run live in a skill bundle instead",
            ),
        },
        "rubric" => {
            let r = &kind.value;
            if r.as_map().is_none() {
                cx.shape(&d::WF_INVALID_HOOK, r.range, "`rubric` must be a mapping `{ instructions, max_iterations?, model? }`");
                return;
            }
            strict(cx, r, &["instructions", "max_iterations", "model", "metadata"], At::Rubric, "`rubric`");
            match r.get_value("instructions") {
                None => cx.shape(&d::WF_WRONG_TYPE, first_key_range(r), "a rubric needs `instructions`, the grading criteria"),
                Some(i) => expect_nonempty_str(cx, i, "instructions"),
            }
            if let Some(b) = r.get_value("max_iterations") {
                expect_int(cx, b, "max_iterations", 0);
            }
            if let Some(m) = r.get_value("model") {
                expect_model(cx, m, "model");
            }
            if let Some(m) = r.get_value("metadata") {
                expect_map(cx, m, "metadata");
            }
        }
        custom => {
            if kind.value.as_str().is_none() {
                cx.shape(
                    &d::WF_INVALID_HOOK,
                    kind.value.range,
                    format!("`{custom}` is not a hook: write `{{ script: hooks/<file>.js }}`, `{{ rubric: {{ instructions: … }} }}`, or `{{ <custom-kind>: <target> }}` with a string target for an executor registered at assembly"),
                );
                return;
            }
            if !hook_kinds.iter().any(|k| k == custom) {
                let d = cx.diag(
                    &d::WF_UNKNOWN_HOOK_KIND,
                    kind.key.range,
                    format!("state `{slug}` `{phase}` hook uses unknown kind `{custom}`; built-in kinds are script and rubric; declare custom kinds under `extensions.hooks` if an executor is registered at runtime"),
                );
                d::push_bounded(&mut cx.validate, d);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Refine (FORMAT §A.4).

fn states_map(root: &Node) -> &[Entry] {
    root.get_value("states")
        .and_then(Node::as_map)
        .unwrap_or(&[])
}

fn hook_items(node: Option<&Node>) -> Vec<&Node> {
    match node {
        None => Vec::new(),
        Some(n) => match n.as_seq() {
            Some(items) => items.iter().collect(),
            None => vec![n],
        },
    }
}

fn refine(cx: &mut Cx<'_>, root: &Node) {
    let Some(states_node) = root.get_value("states") else {
        return;
    };
    let states = states_map(root);
    if states.is_empty() {
        cx.refine(
            &d::WF_MISSING_STATES,
            states_node.range,
            "`states` is empty; declare at least one state",
        );
        return;
    }
    let slugs: BTreeSet<String> = states.iter().map(key_text).collect();
    let mut triggers: BTreeMap<String, Vec<(String, TextRange)>> = BTreeMap::new();
    for e in states {
        let slug = key_text(e);
        let st = &e.value;
        for t in st
            .get_value("transitions")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            if let Some(to) = t.get_value("to") {
                let target = to.as_str().unwrap_or("");
                if !slugs.contains(target) {
                    let hint = did_you_mean(
                        target,
                        &slugs.iter().map(String::as_str).collect::<Vec<_>>(),
                    )
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                    cx.refine(
                        &d::WF_UNDEFINED_TRANSITION_TARGET,
                        to.range,
                        format!("state `{slug}` transitions to undefined state `{target}`{hint}"),
                    );
                }
            }
        }
        if let Some(oe) = st.get_value("on_error") {
            let target = oe.as_str().unwrap_or("");
            if !slugs.contains(target) {
                cx.refine(
                    &d::WF_UNDEFINED_ON_ERROR_TARGET,
                    oe.range,
                    format!("state `{slug}` `on_error` routes to undefined state `{target}`"),
                );
            }
        }
        for h in hook_items(st.get_value("before")) {
            let budget = h
                .get("max_iterations")
                .or_else(|| h.get_value("rubric").and_then(|r| r.get("max_iterations")));
            if let Some(b) = budget {
                cx.refine(
                    &d::WF_BEFORE_HOOK_BUDGET,
                    b.key.range,
                    format!("state `{slug}` `before` hook declares `max_iterations`, but before hooks are ok/veto only (`correct` counts as a veto); the budget applies to `after` hooks"),
                );
            }
        }
        for t in st
            .get_value("triggers")
            .and_then(Node::as_map)
            .unwrap_or(&[])
        {
            triggers
                .entry(key_text(t))
                .or_default()
                .push((slug.clone(), t.key.range));
        }
    }
    for g in std::mem::take(&mut cx.guards) {
        if g.malformed {
            cx.refine(
                &d::WF_MALFORMED_GUARD_REFERENCE,
                g.range,
                format!("{} guards `{}` on `{}`, which is not a valid variable reference; use `${{{{name}}}}` or `${{{{name.path.to.value}}}}`", g.place, g.tool, g.raw),
            );
        } else {
            cx.guards.push(g);
        }
    }
    for (id, sites) in &triggers {
        if let [(first_state, first), rest @ ..] = sites.as_slice() {
            let all: Vec<&str> = sites.iter().map(|(s, _)| s.as_str()).collect();
            for (_, range) in rest {
                let why = if id == "manual" {
                    "a manual start state must be unambiguous"
                } else {
                    "a trigger must name a unique start state"
                };
                let diag = cx
                    .diag(
                        &d::WF_DUPLICATE_TRIGGER,
                        *range,
                        format!(
                            "several states declare trigger `{id}` ({}); {why}",
                            all.join(", ")
                        ),
                    )
                    .with_related(
                        cx.file,
                        *first,
                        format!("also declared by state `{first_state}`"),
                    );
                d::push_bounded(&mut cx.refine, diag);
            }
        }
    }
    if triggers.is_empty() {
        let range = root
            .get("states")
            .map_or(states_node.range, |e| e.key.range);
        cx.refine(&d::WF_NO_START_STATE, range, "the workflow has no start state; declare a `triggers` mapping on at least one state (e.g. `triggers: { manual: }`)");
    }
    if let Some(mc) = root
        .get_value("tests")
        .and_then(|t| t.get_value("maxConcurrency"))
        && matches!(mc.value, Value::Int(i) if i > 1)
    {
        cx.refine(
                &d::WF_MAX_CONCURRENCY_UNSUPPORTED,
                mc.range,
                "`tests.maxConcurrency` above 1 is not supported: cases run one after another; set it to 1 or remove it",
            );
    }
}

// ---------------------------------------------------------------------------------------
// Lint (FORMAT §A.7).

/// A tool entry as the lint reads it.
struct ToolSite<'n> {
    tool: &'n str,
    tool_range: TextRange,
    guarded: bool,
    item: &'n Node,
}

fn tool_sites(node: Option<&Node>) -> Vec<ToolSite<'_>> {
    node.and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(|item| {
            let t = if item.as_str().is_some() {
                item
            } else {
                item.get_value("tool")?
            };
            Some(ToolSite {
                tool: t.as_str()?,
                tool_range: t.range,
                guarded: item.get_value("args").is_some() || item.get_value("paths").is_some(),
                item,
            })
        })
        .collect()
}

fn str_items(node: Option<&Node>) -> Vec<(&str, TextRange)> {
    node.and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(|n| Some((n.as_str()?, n.range)))
        .collect()
}

/// Mount grants: `(name, range, read_only)`.
fn mount_grants(node: Option<&Node>) -> Vec<(&str, TextRange, bool)> {
    node.and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(|n| match n.as_str() {
            Some(s) => Some((s, n.range, false)),
            None => {
                let m = n.get_value("mount")?;
                Some((
                    m.as_str()?,
                    m.range,
                    n.get_value("access").and_then(Node::as_str) == Some("read"),
                ))
            }
        })
        .collect()
}

/// The globs of a guard that name paths of `tool`: `paths` plus path arguments.
fn path_globs<'n>(item: &'n Node, tool: &str, only_mutating: bool) -> Vec<&'n str> {
    let mut out: Vec<&str> = Vec::new();
    let mut push = |n: &'n Node| match &n.value {
        Value::Str(s, _) => out.push(s),
        Value::Seq(items) => out.extend(items.iter().filter_map(Node::as_str)),
        _ => {}
    };
    if let Some(p) = item.get_value("paths") {
        push(p);
    }
    for e in item.get_value("args").and_then(Node::as_map).unwrap_or(&[]) {
        let arg = key_text(e);
        if TOOL_PATH_ARGS
            .iter()
            .any(|(t, a, m)| *t == tool && *a == arg && (*m || !only_mutating))
        {
            push(&e.value);
        }
    }
    out
}

fn is_blank(node: Option<&Node>) -> bool {
    node.and_then(Node::as_str)
        .is_none_or(|s| s.trim().is_empty())
}

fn lint(cx: &mut Cx<'_>, root: &Node) {
    let get = |k: &str| root.get_value(k);
    if get("instructions").is_none() {
        cx.lint(&d::WF_MISSING_INSTRUCTIONS, TextRange::empty(root.range.start), "the workflow has no top-level `instructions`; add the standing direction every run follows");
    }
    if let Some(v) = get("disabled")
        && matches!(v.value, Value::Bool(true))
    {
        cx.lint(
            &d::WF_WORKFLOW_DISABLED,
            v.range,
            "this workflow is disabled: it starts no runs, and delegations to it are refused",
        );
    }
    let tools = get("tools");
    for site in tool_sites(tools.and_then(|t| t.get_value("allow_always"))) {
        if ESSENTIAL_TOOLS.contains(&site.tool) {
            let msg = if site.guarded {
                format!(
                    "`tools.allow_always` constrains essential tool `{}`, but essential tools are always permitted, so the constraint is never enforced; use a `forbid_always` entry to restrict it",
                    site.tool
                )
            } else {
                format!(
                    "`tools.allow_always` lists essential tool `{}`, which is always permitted; the entry is redundant",
                    site.tool
                )
            };
            cx.lint(&d::WF_REDUNDANT_ESSENTIAL_GRANT, site.tool_range, msg);
        }
    }
    let states = states_map(root);
    let any_transitions = states.iter().any(|e| {
        e.value
            .get_value("transitions")
            .and_then(Node::as_seq)
            .is_some_and(|s| !s.is_empty())
    });
    for site in tool_sites(tools.and_then(|t| t.get_value("forbid_always"))) {
        if site.tool == "archmax_advance" && !site.guarded && any_transitions {
            cx.lint(&d::WF_ADVANCE_FORBIDDEN, site.tool_range, "`tools.forbid_always` denies `archmax_advance`, but states declare transitions that can then never be taken");
        }
    }

    // Skills and mounts at the root.
    let skills = get("skills");
    let skills_always = str_items(skills.and_then(|s| s.get_value("allow_always")));
    let skills_forbid_always = str_items(skills.and_then(|s| s.get_value("forbid_always")));
    let mounts = get("mounts");
    let mounts_always = mount_grants(mounts.and_then(|m| m.get_value("allow_always")));
    let mounts_forbid_always = str_items(mounts.and_then(|m| m.get_value("forbid_always")));
    for (slug, range) in &skills_forbid_always {
        let granted = skills_always
            .iter()
            .map(|(s, r)| (*s, *r))
            .chain(states.iter().flat_map(|e| {
                str_items(
                    e.value
                        .get_value("skills")
                        .and_then(|s| s.get_value("allow")),
                )
            }));
        if let Some((_, at)) = granted.into_iter().find(|(s, _)| s == slug) {
            let diag = cx
                .diag(&d::WF_REDUNDANT_FORBID_ALWAYS, *range, format!("skill `{slug}` is forbidden in every state but also granted; `skills.forbid_always` wins, so the grant does nothing"))
                .with_related(cx.file, at, "granted here");
            d::push_bounded(&mut cx.lint, diag);
        }
    }
    for (name, range) in &mounts_forbid_always {
        let granted = mounts_always
            .iter()
            .map(|(s, r, _)| (*s, *r))
            .chain(states.iter().flat_map(|e| {
                mount_grants(
                    e.value
                        .get_value("mounts")
                        .and_then(|s| s.get_value("allow")),
                )
                .into_iter()
                .map(|(s, r, _)| (s, r))
            }));
        if let Some((_, at)) = granted.into_iter().find(|(s, _)| s == name) {
            let diag = cx
                .diag(&d::WF_REDUNDANT_FORBID_ALWAYS, *range, format!("mount `{name}` is forbidden in every state but also granted; `mounts.forbid_always` wins, so the grant does nothing"))
                .with_related(cx.file, at, "granted here");
            d::push_bounded(&mut cx.lint, diag);
        }
    }
    let settings_model = get("settings")
        .and_then(|s| s.get_value("model"))
        .and_then(Node::as_str);

    let mut required: BTreeSet<String> = BTreeSet::from(["trigger".to_owned()]);
    for e in states {
        let st = &e.value;
        required.extend(
            str_items(st.get_value("requires"))
                .into_iter()
                .map(|(s, _)| s.to_owned()),
        );
        for t in st
            .get_value("triggers")
            .and_then(Node::as_map)
            .unwrap_or(&[])
        {
            for item in t
                .value
                .get_value("requires")
                .and_then(Node::as_seq)
                .unwrap_or(&[])
            {
                let n = item
                    .as_str()
                    .or_else(|| item.get_value("name").and_then(Node::as_str));
                required.extend(n.map(str::to_owned));
            }
        }
    }

    for e in states {
        let slug = key_text(e);
        let st = &e.value;
        let sget = |k: &str| st.get_value(k);
        if let (Some(m), Some(sm)) = (sget("model"), settings_model)
            && m.as_str() == Some(sm)
        {
            cx.lint(
                &d::WF_REDUNDANT_STATE_MODEL,
                m.range,
                format!(
                    "state `{slug}` sets `model` to `{sm}`, which `settings.model` already sets"
                ),
            );
        }
        // Skills.
        let sk = sget("skills");
        let allow_node = sk.and_then(|s| s.get_value("allow"));
        let allow = str_items(allow_node);
        let forbid = str_items(sk.and_then(|s| s.get_value("forbid")));
        if !skills_always.is_empty() {
            if let Some(a) = allow_node.filter(|n| n.as_seq().is_some_and(<[Node]>::is_empty)) {
                cx.lint(&d::WF_REDUNDANT_STATE_GRANT, a.range, format!("state `{slug}` declares `skills.allow: []`, which narrows nothing: a state's list adds to `skills.allow_always`; use `skills.forbid` to take a skill away"));
            }
            for (s, r) in &allow {
                if skills_always.iter().any(|(a, _)| a == s) {
                    cx.lint(&d::WF_REDUNDANT_STATE_GRANT, *r, format!("state `{slug}` enables skill `{s}`, which `skills.allow_always` already grants"));
                }
            }
        }
        for (s, r) in &allow {
            if let Some((_, fr)) = forbid.iter().find(|(f, _)| f == s) {
                let diag = cx
                    .diag(
                        &d::WF_ENABLED_AND_FORBIDDEN,
                        *r,
                        format!(
                            "state `{slug}` both enables and forbids skill `{s}`; the forbid wins"
                        ),
                    )
                    .with_related(cx.file, *fr, "forbidden here");
                d::push_bounded(&mut cx.lint, diag);
            }
        }
        for (s, r) in &forbid {
            let granted =
                skills_always.iter().any(|(a, _)| a == s) || allow.iter().any(|(a, _)| a == s);
            let denied = skills_forbid_always.iter().any(|(a, _)| a == s);
            if !granted && !denied {
                cx.lint(&d::WF_POINTLESS_FORBID, *r, format!("state `{slug}` forbids skill `{s}`, which neither `skills.allow_always` nor this state's `skills.allow` grants; the entry does nothing"));
            }
        }
        // Mounts.
        let mo = sget("mounts");
        let mallow_node = mo.and_then(|m| m.get_value("allow"));
        let mallow = mount_grants(mallow_node);
        let mforbid = str_items(mo.and_then(|m| m.get_value("forbid")));
        if !mounts_always.is_empty() {
            if let Some(a) = mallow_node.filter(|n| n.as_seq().is_some_and(<[Node]>::is_empty)) {
                cx.lint(&d::WF_REDUNDANT_STATE_GRANT, a.range, format!("state `{slug}` declares `mounts.allow: []`, which narrows nothing: a state's list adds to `mounts.allow_always`; use `mounts.forbid` to take a mount away"));
            }
            for (m, r, read_only) in &mallow {
                if !read_only && mounts_always.iter().any(|(a, _, _)| a == m) {
                    cx.lint(&d::WF_REDUNDANT_STATE_GRANT, *r, format!("state `{slug}` grants mount `{m}`, which `mounts.allow_always` already grants"));
                }
            }
        }
        for (m, r, _) in &mallow {
            if let Some((_, fr)) = mforbid.iter().find(|(f, _)| f == m) {
                let diag = cx
                    .diag(
                        &d::WF_ENABLED_AND_FORBIDDEN,
                        *r,
                        format!(
                            "state `{slug}` both grants and forbids mount `{m}`; the forbid wins"
                        ),
                    )
                    .with_related(cx.file, *fr, "forbidden here");
                d::push_bounded(&mut cx.lint, diag);
            }
        }
        // Tools: allow and a guarded forbid of the same tool (an unguarded forbid is WFX359).
        let tl = sget("tools");
        let tallow = tool_sites(tl.and_then(|t| t.get_value("allow")));
        let tforbid = tool_sites(tl.and_then(|t| t.get_value("forbid")));
        for a in &tallow {
            let bare = tforbid
                .iter()
                .any(|f| (f.tool == a.tool || f.tool == "*") && !f.guarded);
            if let Some(f) = tforbid.iter().find(|f| f.tool == a.tool && f.guarded)
                && !bare
            {
                let diag = cx
                        .diag(&d::WF_ENABLED_AND_FORBIDDEN, a.tool_range, format!("state `{slug}` both allows and forbids tool `{}`; calls the forbid entry matches are denied", a.tool))
                        .with_related(cx.file, f.tool_range, "forbidden here");
                d::push_bounded(&mut cx.lint, diag);
            }
            // Scratchpad-only guards on mutating built-ins.
            if TOOL_PATH_ARGS.iter().any(|(t, _, m)| *t == a.tool && *m) {
                let globs = path_globs(a.item, a.tool, true);
                if !globs.is_empty()
                    && globs
                        .iter()
                        .all(|g| g.trim_start_matches("./").starts_with("scratchpad/"))
                {
                    cx.lint(&d::WF_SCRATCHPAD_GUARD, a.tool_range, format!("state `{slug}` guards `{}` only to `scratchpad/`, which is always writable; the entry constrains nothing", a.tool));
                }
            }
        }
        // Instructions.
        let is_human = sget("type").and_then(Node::as_str) == Some("human");
        let transitions = sget("transitions").and_then(Node::as_seq).unwrap_or(&[]);
        let instr_range = sget("instructions").map_or(e.key.range, |n| n.range);
        if !is_human && transitions.len() > 1 && is_blank(sget("instructions")) {
            cx.lint(
                &d::WF_MISSING_STATE_INSTRUCTIONS,
                instr_range,
                format!("state `{slug}` has {} outgoing transitions but no `instructions`; add guidance on which to take", transitions.len()),
            );
        }
        if is_human {
            if is_blank(sget("instructions")) {
                cx.lint(&d::WF_HUMAN_STATE_INSTRUCTIONS, instr_range, format!("human state `{slug}` has no `instructions`; they are what the person deciding is shown"));
            }
            if transitions.is_empty() {
                let range = sget("transitions").map_or(e.key.range, |n| n.range);
                cx.lint(
                    &d::WF_HUMAN_STATE_TERMINAL,
                    range,
                    format!("human state `{slug}` has no transitions, so no decision can leave it"),
                );
            }
            let mut seen_types: BTreeMap<&str, TextRange> = BTreeMap::new();
            for t in transitions {
                if let Some(to) = t
                    .get_value("to")
                    .filter(|n| n.as_str() == Some(slug.as_str()))
                {
                    cx.lint(&d::WF_HUMAN_STATE_SELF_LOOP, to.range, format!("human state `{slug}` transitions to itself; a decision must move the run on"));
                }
                if let Some(ty) = t.get_value("type")
                    && let Some(k @ ("approve" | "reject" | "refine")) = ty.as_str()
                {
                    if let Some(first) = seen_types.get(k) {
                        let diag = cx
                            .diag(
                                &d::WF_HUMAN_STATE_DUPLICATE_TYPE,
                                ty.range,
                                format!("human state `{slug}` has more than one `{k}` transition"),
                            )
                            .with_related(cx.file, *first, "first one");
                        d::push_bounded(&mut cx.lint, diag);
                    } else {
                        seen_types.insert(k, ty.range);
                    }
                }
            }
            for phase in ["before", "after"] {
                if let Some(h) = st.get(phase) {
                    cx.lint(&d::WF_HUMAN_STATE_HOOK, h.key.range, format!("human state `{slug}` declares `{phase}` hooks, which never run in a human state"));
                }
            }
        }
        // Duplicate requires.
        let mut seen: BTreeMap<&str, TextRange> = BTreeMap::new();
        for (n, r) in str_items(sget("requires")) {
            if let Some(first) = seen.get(n) {
                let diag = cx
                    .diag(
                        &d::WF_DUPLICATE_REQUIRES,
                        r,
                        format!("state `{slug}` lists `{n}` twice in `requires`"),
                    )
                    .with_related(cx.file, *first, "first listed here");
                d::push_bounded(&mut cx.lint, diag);
            } else {
                seen.insert(n, r);
            }
        }
    }
    for g in std::mem::take(&mut cx.guards) {
        if !required.contains(&g.name) {
            cx.lint(
                &d::WF_UNGUARANTEED_GUARD_REFERENCE,
                g.range,
                format!("{} guards `{}` on `{}`, but no state or trigger requires `{}`; the call is blocked while it is unset", g.place, g.tool, g.raw, g.name),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammars() {
        assert!(
            is_slug("order-lookup")
                && is_slug("a1")
                && !is_slug("a--b")
                && !is_slug("A")
                && !is_slug("-a")
        );
        assert!(
            is_variable_name("order_id") && !is_variable_name("1a") && !is_variable_name("orderId")
        );
        assert_eq!(mount_name_problem("catalogs/eu"), None);
        assert!(mount_name_problem("a/../b").is_some() && mount_name_problem("/a").is_some());
        assert!(is_hook_script_path("hooks/a.js") && is_hook_script_path("hooks/x/b.mjs"));
        assert!(
            !is_hook_script_path("hooks//a.js")
                && !is_hook_script_path("hooks/../a.js")
                && !is_hook_script_path("a.js")
        );
    }

    #[test]
    fn reference_scanner() {
        let r = scan_refs("a/${{ x.y }}/$${{z}}/${{}}/${{a}b}}");
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].segments, vec!["x", "y"]);
        assert!(!r[0].is_malformed());
        assert!(r[1].is_malformed());
        // `${{${{…` with one lone `}` at the end: each start used to rescan to the end
        // (quadratic, minutes for this string); the references after it are still found.
        let hostile = format!(
            "{}}}x/${{{{ a.b }}}}/${{{{${{{{c}}}}",
            "${{".repeat(300_000)
        );
        let r = scan_refs(&hostile);
        let raws: Vec<&str> = r.iter().map(|r| r.raw.as_str()).collect();
        assert_eq!(raws, ["${{ a.b }}", "${{${{c}}"], "{r:?}");
        assert!(r[1].is_malformed());
    }

    #[test]
    fn near_misses() {
        assert_eq!(did_you_mean("transtions", STATE_KEYS), Some("transitions"));
        assert_eq!(did_you_mean("max_turns", &["maxTurns"]), Some("maxTurns"));
        assert_eq!(did_you_mean("zzz", STATE_KEYS), None);
    }
}
