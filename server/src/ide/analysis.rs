//! What the IDE features share: which document a path is, the sibling workflow (from the
//! buffer when the document is `workflow.yaml` itself, else through `FileAccess`), tree
//! lookups at an offset, the states and triggers a position names, and the workflow's
//! vocabulary (tool names, variable names, files). No LSP types; byte offsets only.

use std::cell::OnceCell;
use std::sync::Arc;

use wfx_schemas::check::{WorkflowCache, WorkflowInfo};
use wfx_schemas::files::{FileAccess, join, walk};
use wfx_schemas::model::case::Case;
use wfx_schemas::model::workflow::{StateType, Workflow};
use wfx_schemas::text::TextRange;
use wfx_schemas::workspace::{FileKind, WorkflowDir, classify, discover_workflows};
use wfx_schemas::yaml::{self, Entry, Node, Parsed, ScalarStyle, Value};

pub(crate) use wfx_schemas::model::workflow::ESSENTIAL_TOOLS;

pub(crate) use wfx_schemas::model::workflow::CONTROL_TOOLS;

/// Trail step kinds (FORMAT §E.2).
pub(crate) const TRAIL_KINDS: &[&str] = &[
    "trigger",
    "agent",
    "human",
    "sub-workflow",
    "reset",
    "on_error",
];

/// Transition types (FORMAT §A.2).
pub(crate) const TRANSITION_TYPES: &[&str] = &["approve", "reject", "refine", "none"];

/// Signature types (FORMAT §A.5).
pub(crate) const SIG_TYPES: &[&str] = &[
    "string",
    "integer",
    "number",
    "boolean",
    "date",
    "date-time",
    "object",
    "array",
];

/// The document being edited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DocKind {
    /// A case.
    Case,
    /// `workflow.yaml`.
    Workflow,
    /// An agent script (`tests/<name>.agent.yaml`): only navigation, references and
    /// rename see it ([`Analysis::for_navigation`]).
    Agent,
}

/// The request's view of the world: the document, its parse and its workflow.
pub(crate) struct Analysis<'a> {
    pub fs: &'a dyn FileAccess,
    pub path: &'a str,
    pub text: &'a str,
    pub kind: DocKind,
    pub dir: WorkflowDir,
    /// The buffer's parse.
    parsed: &'a Parsed,
    /// The server's (or the caller's) loaded `workflow.yaml` files.
    workflows: &'a WorkflowCache,
    /// The workflow (from the buffer for `workflow.yaml`, else from `fs`), loaded on first
    /// use through `workflows`.
    wf: OnceCell<Option<Arc<WorkflowInfo>>>,
    /// The case model, built on first use.
    case: OnceCell<Option<Case>>,
}

impl<'a> Analysis<'a> {
    /// The analysis of `doc`; `None` for files that are neither a case nor a
    /// `workflow.yaml`.
    pub fn new(doc: &super::Doc<'a>) -> Option<Self> {
        Self::of(doc, false)
    }

    /// [`Analysis::new`], agent scripts included (kind [`DocKind::Agent`]): for go to
    /// definition, references and rename, which see states and tools named there.
    pub fn for_navigation(doc: &super::Doc<'a>) -> Option<Self> {
        Self::of(doc, true)
    }

    fn of(doc: &super::Doc<'a>, agents: bool) -> Option<Self> {
        let (kind, dir) = match classify(doc.path) {
            FileKind::Case(dir) => (DocKind::Case, dir),
            FileKind::Workflow(dir) => (DocKind::Workflow, dir),
            FileKind::AgentScript(dir) if agents => (DocKind::Agent, dir),
            _ => return None,
        };
        Some(Self {
            fs: doc.fs,
            path: doc.path,
            text: doc.text,
            kind,
            dir,
            parsed: doc.parsed,
            workflows: doc.workflows,
            wf: OnceCell::new(),
            case: OnceCell::new(),
        })
    }

    /// The buffer's parse.
    pub fn parsed(&self) -> &Parsed {
        self.parsed
    }

    fn wf(&self) -> Option<&WorkflowInfo> {
        self.wf
            .get_or_init(|| match self.kind {
                // The buffer is the workflow (the overlay serves it to `fs` readers too).
                DocKind::Workflow => {
                    self.workflows
                        .load_text(&self.dir, &self.dir.spec_path(), self.text.to_owned())
                }
                DocKind::Case | DocKind::Agent => self.workflows.load(self.fs, &self.dir),
            })
            .as_deref()
    }

    /// The workflow model, if `workflow.yaml` exists and parses.
    pub fn workflow(&self) -> Option<&Workflow> {
        self.wf().and_then(|w| w.model.as_ref())
    }

    /// The `workflow.yaml` text the model was built from (empty when there is none).
    pub fn workflow_text(&self) -> &str {
        self.wf().map_or("", |w| w.text.as_str())
    }

    /// The document root when the text parsed without a syntax error.
    pub fn root(&self) -> Option<&Node> {
        let parsed = self.parsed();
        if parsed.has_syntax_error() {
            return None;
        }
        parsed.documents.first()
    }

    /// The case model when the document is a case that parsed.
    pub fn case(&self) -> Option<&Case> {
        self.case
            .get_or_init(|| {
                (self.kind == DocKind::Case)
                    .then(|| self.root().map(Case::from_node))
                    .flatten()
            })
            .as_ref()
    }

    /// The workflow's spec path.
    pub fn spec_path(&self) -> String {
        self.dir.spec_path()
    }

    /// True when `slug` is a human state.
    pub fn is_human(&self, slug: &str) -> bool {
        self.workflow()
            .and_then(|w| w.state(slug))
            .is_some_and(|s| s.kind == StateType::Human)
    }

    /// Every tool name worth offering: essentials, controls, `archmax_workflow_<slug>` per
    /// workflow of the workspace, and tools the workflow's states name (FORMAT §E.5, §E.9).
    pub fn tool_names(&self) -> Vec<(String, &'static str)> {
        let mut out: Vec<(String, &'static str)> = Vec::new();
        let mut push = |name: String, why: &'static str| {
            if !out.iter().any(|(n, _)| *n == name) {
                out.push((name, why));
            }
        };
        if let Some(wf) = self.workflow() {
            for e in wf.tools_allow_always.iter().chain(&wf.tools_forbid_always) {
                push(e.tool.value.clone(), "named by the workflow");
            }
            for s in &wf.states {
                for e in s.tools_allow.iter().chain(&s.tools_forbid) {
                    push(e.tool.value.clone(), "named by the workflow");
                }
            }
        }
        for t in ESSENTIAL_TOOLS {
            push((*t).to_owned(), "essential tool");
        }
        for t in CONTROL_TOOLS {
            push((*t).to_owned(), "control tool");
        }
        for w in discover_workflows(self.fs, &self.dir.root) {
            push(format!("archmax_workflow_{}", w.slug), "delegation tool");
        }
        out.retain(|(n, _)| n != "*");
        out
    }

    /// Variable names the workflow mentions (state and trigger `requires`, `returns`,
    /// `${{…}}` references, trigger session paths), then the case's own `variables:`, then
    /// the built-ins `trigger` and `title`. De-duplicated, first mention wins.
    pub fn variable_names(&self) -> Vec<(String, &'static str)> {
        let mut out: Vec<(String, &'static str)> = Vec::new();
        let mut push = |name: &str, why: &'static str| {
            if !name.is_empty() && !out.iter().any(|(n, _)| n == name) {
                out.push((name.to_owned(), why));
            }
        };
        if let Some(wf) = self.workflow() {
            for s in &wf.states {
                for r in &s.requires {
                    push(&r.value, "required by a state");
                }
                for t in &s.triggers {
                    for e in &t.requires {
                        push(&e.name.value, "required by a trigger");
                    }
                    for e in &t.returns {
                        push(&e.name.value, "returned by a trigger");
                    }
                    if let Some(sess) = &t.session {
                        push(
                            sess.split('.').next().unwrap_or(""),
                            "a trigger's session path",
                        );
                    }
                }
            }
        }
        for name in references(self.workflow_text()) {
            push(&name, "referenced as ${{…}}");
        }
        if let Some(case) = self.case() {
            for (k, _) in &case.variables {
                push(&k.value, "seeded by this case");
            }
        }
        push("trigger", "built-in: the trigger id");
        push("title", "built-in: the run's title");
        out
    }

    /// Workflow slugs of the workspace.
    pub fn workflow_slugs(&self) -> Vec<String> {
        discover_workflows(self.fs, &self.dir.root)
            .into_iter()
            .map(|w| w.slug)
            .collect()
    }

    /// Fixture files under `tests/`, relative to it (cases and agent scripts excluded).
    pub fn fixture_files(&self) -> Vec<String> {
        let tests = self.dir.tests_dir();
        walk(self.fs, &tests)
            .into_iter()
            .filter(|p| !wfx_schemas::workspace::is_case_name(p) && !p.ends_with(".agent.yaml"))
            .filter_map(|p| p.strip_prefix(&format!("{tests}/")).map(str::to_owned))
            .collect()
    }

    /// Hook scripts under the workflow's `hooks/`, workflow-relative (`hooks/x.js`).
    pub fn hook_files(&self) -> Vec<String> {
        let dir = self.dir.dir();
        walk(self.fs, &join(&dir, "hooks"))
            .into_iter()
            .filter(|p| p.ends_with(".js") || p.ends_with(".mjs"))
            .filter_map(|p| p.strip_prefix(&format!("{dir}/")).map(str::to_owned))
            .collect()
    }

    /// Skill slugs: the folders under `<root>/skills/`.
    pub fn skill_slugs(&self) -> Vec<String> {
        self.fs
            .list(&self.dir.skills_dir())
            .map(|es| {
                es.into_iter()
                    .filter(|e| e.is_dir)
                    .map(|e| e.name)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Names of `${{name.path}}` references in `text` (escaped `$${{…}}` skipped), in order.
pub(crate) fn references(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(p) = rest.find("${{") {
        let escaped = p > 0 && rest.get(p - 1..p) == Some("$");
        let after = rest.get(p + 3..).unwrap_or("");
        match after.find("}}") {
            Some(end) => {
                let inner = after.get(..end).unwrap_or("");
                if !escaped && !inner.contains('}') {
                    let name = inner.trim().split('.').next().unwrap_or("").trim();
                    if !name.is_empty() && !out.iter().any(|n| n == name) {
                        out.push(name.to_owned());
                    }
                }
                rest = after.get(end + 2..).unwrap_or("");
            }
            None => break,
        }
    }
    out
}

/// What the cursor hit in the tree.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Hit<'t> {
    /// A mapping key.
    Key(&'t Entry),
    /// A scalar value.
    Value(&'t Node),
}

/// The located node: its path (`-` for list items; for a key, the path ends with the key)
/// and the ancestors, outermost first (for a value, its parent collection is the last one).
pub(crate) struct Located<'t> {
    pub path: Vec<String>,
    pub hit: Hit<'t>,
    pub parents: Vec<&'t Node>,
}

impl Located<'_> {
    /// The path as `&str`s.
    pub fn segs(&self) -> Vec<&str> {
        self.path.iter().map(String::as_str).collect()
    }
}

/// The key or scalar at `offset` (a cursor right after a token still hits it).
pub(crate) fn locate(root: &Node, offset: u32) -> Option<Located<'_>> {
    let mut path = Vec::new();
    let mut parents = Vec::new();
    let mut node = root;
    loop {
        match &node.value {
            Value::Map(entries) => {
                parents.push(node);
                let mut next = None;
                // Keys first: a block scalar's range runs to the start of the next line, so
                // at the first character of the key after it (`a: |⏎  x⏎bee:`) the previous
                // value's range also holds the offset (inclusive end); the key wins.
                let key_hit = entries
                    .iter()
                    .find(|e| e.key.range.contains_inclusive(offset));
                for e in key_hit.into_iter().chain(entries) {
                    if e.key.range.contains_inclusive(offset) {
                        path.push(
                            e.key
                                .scalar_text()
                                .map(|s| s.into_owned())
                                .unwrap_or_default(),
                        );
                        return Some(Located {
                            path,
                            hit: Hit::Key(e),
                            parents,
                        });
                    }
                    if e.value.range.contains_inclusive(offset) && !e.value.range.is_empty() {
                        next = Some(e);
                        break;
                    }
                }
                let e = next?;
                path.push(
                    e.key
                        .scalar_text()
                        .map(|s| s.into_owned())
                        .unwrap_or_default(),
                );
                node = &e.value;
            }
            Value::Seq(items) => {
                parents.push(node);
                let item = items
                    .iter()
                    .find(|i| i.range.contains_inclusive(offset) && !i.range.is_empty())?;
                path.push("-".into());
                node = item;
            }
            _ => {
                return Some(Located {
                    path,
                    hit: Hit::Value(node),
                    parents,
                });
            }
        }
    }
}

/// A symbol that can be navigated and renamed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Sym {
    /// A state slug.
    State(String),
    /// A trigger id.
    Trigger(String),
    /// A tool name (named by governance, mocks, tool assertions and agent-script calls;
    /// declared by the host, not in `workflow.yaml`, so it has references but no rename).
    Tool(String),
}

impl Sym {
    pub fn name(&self) -> &str {
        match self {
            Sym::State(s) | Sym::Trigger(s) | Sym::Tool(s) => s,
        }
    }
}

/// Case value paths naming a tool (FORMAT §B.2 tool assertions, §B.9 mocks).
pub(crate) const CASE_TOOL_PATHS: &[&str] = &[
    "mocks.-.tool",
    "steps.-.calledTool|notCalledTool|blockedTool",
    "steps.-.calledTool|notCalledTool|blockedTool.name",
];
/// Workflow value paths naming a tool (FORMAT §A.3 allow/forbid entries, bare or
/// `{ tool, … }`).
pub(crate) const WF_TOOL_PATHS: &[&str] = &[
    "tools.allow_always|forbid_always.-",
    "tools.allow_always|forbid_always.-.tool",
    "states.*.tools.allow|forbid.-",
    "states.*.tools.allow|forbid.-.tool",
];
/// Agent-script value path naming a tool (docs/agent-scripts.md).
pub(crate) const AGENT_TOOL_PATH: &str = "turns.-.-.call.tool";
/// Agent-script value path naming a state when the call is `archmax_advance` (FORMAT §E.5).
pub(crate) const AGENT_ADVANCE_TO_PATH: &str = "turns.-.-.call.input.to";

/// True when `call` (an agent script's `call:` mapping) calls `archmax_advance`.
fn is_advance(call: Option<&&Node>) -> bool {
    call.and_then(|c| c.get_value("tool"))
        .and_then(Node::as_str)
        == Some("archmax_advance")
}

/// Case value paths naming a state (FORMAT §B.2).
pub(crate) const CASE_STATE_PATHS: &[&str] = &[
    "steps.-.reachedState",
    "steps.-.parked.state",
    "steps.-.trail.to",
    "steps.-.decide.to",
];
/// Case value paths naming a trigger id (FORMAT §B.1, §B.2).
pub(crate) const CASE_TRIGGER_PATHS: &[&str] = &[
    "trigger.id",
    "steps.-.deliver.trigger",
    "steps.-.triggerArrival",
];
/// Workflow value paths naming a state (FORMAT §A.2).
pub(crate) const WF_STATE_PATHS: &[&str] = &["states.*.transitions.-.to", "states.*.on_error"];

fn any_matches(patterns: &[&str], path: &[&str]) -> bool {
    patterns
        .iter()
        .any(|p| wfx_schemas::docs::path_matches(p, path))
}

/// True for a trail step mapping with `kind: trigger` (its `reason` is a trigger id).
fn is_trigger_trail(parent: Option<&&Node>) -> bool {
    parent
        .and_then(|p| p.get_value("kind"))
        .and_then(Node::as_str)
        == Some("trigger")
}

/// The state or trigger the located node names, with the node's range.
pub(crate) fn symbol_at(kind: DocKind, loc: &Located<'_>) -> Option<(Sym, TextRange)> {
    let segs = loc.segs();
    match (kind, loc.hit) {
        (DocKind::Case, Hit::Value(n)) => {
            let s = n.as_str()?.to_owned();
            if any_matches(CASE_STATE_PATHS, &segs) {
                Some((Sym::State(s), n.range))
            } else if any_matches(CASE_TOOL_PATHS, &segs) {
                Some((Sym::Tool(s), n.range))
            } else if any_matches(CASE_TRIGGER_PATHS, &segs)
                || (wfx_schemas::docs::path_matches("steps.-.trail.reason", &segs)
                    && is_trigger_trail(loc.parents.last()))
            {
                Some((Sym::Trigger(s), n.range))
            } else {
                None
            }
        }
        (DocKind::Workflow, Hit::Value(n)) => {
            let s = n.as_str()?.to_owned();
            if any_matches(WF_STATE_PATHS, &segs) {
                Some((Sym::State(s), n.range))
            } else if any_matches(WF_TOOL_PATHS, &segs) {
                Some((Sym::Tool(s), n.range))
            } else {
                None
            }
        }
        (DocKind::Agent, Hit::Value(n)) => {
            let s = n.as_str()?.to_owned();
            if wfx_schemas::docs::path_matches(AGENT_TOOL_PATH, &segs) {
                Some((Sym::Tool(s), n.range))
            } else if wfx_schemas::docs::path_matches(AGENT_ADVANCE_TO_PATH, &segs)
                && is_advance(loc.parents.iter().rev().nth(1))
            {
                Some((Sym::State(s), n.range))
            } else {
                None
            }
        }
        (DocKind::Workflow, Hit::Key(e)) => {
            let name = e.key.scalar_text()?.into_owned();
            if wfx_schemas::docs::path_matches("states.*", &segs) {
                Some((Sym::State(name), e.key.range))
            } else if wfx_schemas::docs::path_matches("states.*.triggers.*", &segs) {
                Some((Sym::Trigger(name), e.key.range))
            } else {
                None
            }
        }
        (DocKind::Case | DocKind::Agent, Hit::Key(_)) => None,
    }
}

/// The range of a scalar's content: without quotes when the quoted text is the value as
/// written (no escapes); `None` when the text cannot be edited in place.
pub(crate) fn content_range(text: &str, node: &Node) -> Option<TextRange> {
    let range = tight(text, node.range);
    let raw = text.get(range.as_usize())?;
    let value = node.scalar_text()?;
    match &node.value {
        Value::Str(_, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted) => {
            let inner = raw.get(1..raw.len().checked_sub(1)?)?;
            (inner == value).then(|| TextRange::new(range.start + 1, range.end - 1))
        }
        _ => (raw == value).then_some(range),
    }
}

/// `range` without trailing whitespace (a quoted scalar in a flow collection may carry the
/// blank before the closing bracket).
pub(crate) fn tight(text: &str, range: TextRange) -> TextRange {
    let raw = text.get(range.as_usize()).unwrap_or("");
    TextRange::new(
        range.start,
        range.start + u32::try_from(raw.trim_end().len()).unwrap_or(0),
    )
}

/// Every place `sym` is named in one parsed document of `kind`, as content ranges.
pub(crate) fn occurrences(kind: DocKind, text: &str, root: &Node, sym: &Sym) -> Vec<TextRange> {
    let mut out = Vec::new();
    let mut push = |n: &Node| {
        if n.as_str() == Some(sym.name()) {
            out.push(content_range(text, n).unwrap_or_else(|| tight(text, n.range)));
        }
    };
    match kind {
        DocKind::Case => {
            if let Sym::Trigger(_) = sym
                && let Some(id) = root.get_value("trigger").and_then(|t| t.get_value("id"))
            {
                push(id);
            }
            for step in root
                .get_value("steps")
                .and_then(Node::as_seq)
                .unwrap_or(&[])
            {
                let Some([e]) = step.as_map() else { continue };
                let v = &e.value;
                match (sym, e.key.as_str().unwrap_or("")) {
                    (Sym::State(_), "reachedState") => push(v),
                    (Sym::State(_), "parked") => {
                        v.get_value("state").into_iter().for_each(&mut push)
                    }
                    (Sym::State(_), "trail") => v.get_value("to").into_iter().for_each(&mut push),
                    (Sym::State(_), "decide") => v.get_value("to").into_iter().for_each(&mut push),
                    (Sym::Trigger(_), "triggerArrival") => push(v),
                    (Sym::Trigger(_), "deliver") => {
                        v.get_value("trigger").into_iter().for_each(&mut push)
                    }
                    (Sym::Trigger(_), "trail")
                        if v.get_value("kind").and_then(Node::as_str) == Some("trigger") =>
                    {
                        v.get_value("reason").into_iter().for_each(&mut push)
                    }
                    (Sym::Tool(_), "calledTool" | "notCalledTool" | "blockedTool") => {
                        push(v);
                        v.get_value("name").into_iter().for_each(&mut push);
                    }
                    _ => {}
                }
            }
            if let Sym::Tool(_) = sym {
                for m in root
                    .get_value("mocks")
                    .and_then(Node::as_seq)
                    .unwrap_or(&[])
                {
                    m.get_value("tool").into_iter().for_each(&mut push);
                }
            }
        }
        DocKind::Workflow if matches!(sym, Sym::Tool(_)) => {
            let mut lists: Vec<&Node> = Vec::new();
            if let Some(t) = root.get_value("tools") {
                lists.extend(t.get_value("allow_always"));
                lists.extend(t.get_value("forbid_always"));
            }
            for st in root
                .get_value("states")
                .and_then(Node::as_map)
                .unwrap_or(&[])
            {
                if let Some(t) = st.value.get_value("tools") {
                    lists.extend(t.get_value("allow"));
                    lists.extend(t.get_value("forbid"));
                }
            }
            for item in lists.into_iter().filter_map(Node::as_seq).flatten() {
                push(item);
                item.get_value("tool").into_iter().for_each(&mut push);
            }
        }
        DocKind::Agent => {
            let calls = root
                .get_value("turns")
                .and_then(Node::as_seq)
                .unwrap_or(&[])
                .iter()
                .filter_map(Node::as_seq)
                .flatten()
                .filter_map(|a| a.get_value("call"));
            for call in calls {
                match sym {
                    Sym::Tool(_) => call.get_value("tool").into_iter().for_each(&mut push),
                    Sym::State(_) if is_advance(Some(&call)) => call
                        .get_value("input")
                        .and_then(|i| i.get_value("to"))
                        .into_iter()
                        .for_each(&mut push),
                    _ => {}
                }
            }
        }
        DocKind::Workflow => {
            for st in root
                .get_value("states")
                .and_then(Node::as_map)
                .unwrap_or(&[])
            {
                match sym {
                    Sym::State(_) => {
                        push(&st.key);
                        if let Some(t) = st.value.get_value("transitions").and_then(Node::as_seq) {
                            t.iter()
                                .filter_map(|t| t.get_value("to"))
                                .for_each(&mut push);
                        }
                        st.value
                            .get_value("on_error")
                            .into_iter()
                            .for_each(&mut push);
                    }
                    Sym::Trigger(_) => {
                        for t in st
                            .value
                            .get_value("triggers")
                            .and_then(Node::as_map)
                            .unwrap_or(&[])
                        {
                            push(&t.key);
                        }
                    }
                    Sym::Tool(_) => {}
                }
            }
        }
    }
    out.sort();
    out
}

/// Levenshtein distance on chars (for near-miss suggestions).
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev.get(j).copied().unwrap_or(0) + usize::from(ca != *cb);
            let del = prev.get(j + 1).copied().unwrap_or(0) + 1;
            let ins = cur.get(j).copied().unwrap_or(0) + 1;
            cur.push(sub.min(del).min(ins));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

#[cfg(test)]
thread_local! {
    /// Candidates [`nearest`] examined on this thread (tests count them).
    pub(crate) static NEAREST_EXAMINED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The nearest candidate to `word` within a sensible distance (at most 1 + a third of the
/// longer length, or a case-insensitive match).
///
/// Bounded: each candidate is charged to the near-miss budget `check` uses
/// (`rules::case::suggest_charge`: [`SUGGEST_CANDIDATE_COST`] plus the product of the two
/// lengths in characters), which each code-action and completion request arms
/// (`MAX_SUGGEST_WORK`, 20 million units); once it is spent the search gives up with `None`
/// (no half-searched answer), as `check`'s suggestions do.
///
/// [`SUGGEST_CANDIDATE_COST`]: wfx_schemas::rules::case::SUGGEST_CANDIDATE_COST
pub(crate) fn nearest<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let mut best: Option<(usize, &str)> = None;
    let lw = word.chars().count().max(1);
    for c in candidates {
        #[cfg(test)]
        NEAREST_EXAMINED.with(|n| n.set(n.get() + 1));
        let cost = lw.saturating_mul(c.chars().count().max(1));
        if !wfx_schemas::rules::case::suggest_charge(
            wfx_schemas::rules::case::SUGGEST_CANDIDATE_COST.saturating_add(cost),
        ) {
            return None;
        }
        if c == word {
            continue;
        }
        let d = if c.eq_ignore_ascii_case(word) {
            0
        } else {
            distance(word, c)
        };
        let limit = 1 + word.chars().count().max(c.chars().count()) / 3;
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// A string as a YAML scalar: plain when that reads back as the same string, else
/// double-quoted (JSON escaping is valid YAML).
pub(crate) fn yaml_scalar(s: &str) -> String {
    let plain_ok = !s.is_empty()
        && yaml::parse(&format!("k: {s}\n"))
            .documents
            .first()
            .and_then(|r| r.get_value("k"))
            .and_then(Node::as_str)
            == Some(s)
        && !s.contains('#');
    if plain_ok {
        s.to_owned()
    } else {
        serde_json::Value::String(s.to_owned()).to_string()
    }
}

/// True for a state slug (FORMAT §A.3): `^[a-z0-9]+(-[a-z0-9]+)*$`.
pub(crate) fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// Byte offset of the start of the line containing `offset`.
pub(crate) fn line_start(text: &str, offset: u32) -> u32 {
    text.get(..offset as usize)
        .and_then(|h| h.rfind('\n'))
        .map_or(0, |p| u32::try_from(p + 1).unwrap_or(0))
}

/// State slugs read from the lines of a `workflow.yaml` that does not parse: the keys at
/// the first child indentation under a column-0 `states:` line, in order.
pub(crate) fn line_states(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    let mut child: Option<usize> = None;
    for line in text.lines() {
        let body = line.trim_end();
        let trimmed = body.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = body.len() - trimmed.len();
        if indent == 0 {
            inside = trimmed.starts_with("states:");
            continue;
        }
        if !inside || child.is_some_and(|c| indent != c) {
            continue;
        }
        child = Some(indent);
        if let Some((key, _)) = trimmed.split_once(':') {
            let key = key.trim().trim_matches(['"', '\'']);
            if !key.is_empty() && !key.contains(' ') {
                out.push(key.to_owned());
            }
        }
    }
    out
}
