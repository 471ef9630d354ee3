//! Cross-file rules for a workflow: `workflow.yaml` against its folder and workspace
//! (FORMAT §D.2: slugs, runtime contract, hook scripts, the skills registry, governance
//! probes, sub-workflow targets) and a missing spec (§A.0.1). Emits WFX340–WFX366.
//!
//! Every finding sits in `workflow.yaml` (the file the editor shows); where another file
//! explains it (a `SKILL.md`, a hook script, a nested workflow), that file is a related
//! site. These rules read the span tree leniently and run whether or not the document's
//! shape holds, as the reference's `validate` does; they stop when `states` is missing or
//! empty (§D.2 step 4). All IO goes through [`FileAccess`].
//!
//! Choices where FORMAT is silent or UNCONFIRMED, made the way a user would expect:
//! - the sub-workflow depth bound is 3, `DEFAULT_SUB_WORKFLOW_DEPTH` of the reference's
//!   `src/workflow/sub-workflow.ts` (read after FORMAT was written; FORMAT marks it
//!   UNCONFIRMED and the task brief suggested 8 — the reference's value wins);
//! - the CLI validates without a mount table, so the read-only authored zone (WFX356) is
//!   `skills/**` and `AGENTS.md`, the workspace content the runtime mounts read-only;
//! - skill registry findings (WFX348, WFX349) sit on the root `skills` key (else at the
//!   document start) with the `SKILL.md` as related site;
//! - the hook import scan finds the reference's static `import … from "x"` / `import "x"`
//!   statements and, beyond it, `export … from "x"`, `import("x")` and `require("x")`,
//!   all of which the sandbox refuses too. It is textual: no JavaScript parser.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::Arc;

use crate::check::load_workflow;
use crate::diagnostics::{self as d, Code, Diagnostic};
use crate::files::{FileAccess, FileError, join};
use crate::model::workflow::Workflow;
use crate::rules::workflow::{TOOL_PATH_ARGS, is_hook_script_path, is_slug, is_usable};
use crate::text::TextRange;
use crate::workspace::WorkflowDir;
use crate::yaml::{self, Entry, Node, Value};

/// How many levels of delegation the dispatcher allows (the root workflow does not count).
/// The reference's `DEFAULT_SUB_WORKFLOW_DEPTH` (FORMAT §D.2 step 9, §E.9).
pub const SUB_WORKFLOW_DEPTH: usize = 3;

/// Run-internal areas (`SESSION_INTERNAL_DIRS`) and context-offload areas
/// (`SESSION_OFFLOAD_DIRS`): runtime-owned, never agent-writable (FORMAT §D.2).
pub const RUNTIME_OWNED_DIRS: &[&str] = &[
    "checkpoints",
    "artifacts",
    "_specs",
    "large_tool_results",
    "conversation_history",
];

/// Stops a pathological delegation graph from being walked forever.
const MAX_WALK_STEPS: usize = 2_000;

/// Cross-file rules for one `workflow.yaml` (FORMAT §D.2 steps 1, 3, 5, 7–9). `file` is
/// the spec's workspace-relative path; `wf` its lenient model (its `root` is read for
/// ranges).
pub fn check_workflow(
    fs: &dyn FileAccess,
    dir: &WorkflowDir,
    file: &str,
    wf: &Workflow,
    skills: Option<&SkillCache>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let root = &wf.root;
    out.extend(slug_check(dir, file));
    runtime_contract(file, root, &mut out);
    let Some(states) = root
        .get_value("states")
        .and_then(Node::as_map)
        .filter(|m| !m.is_empty())
    else {
        return out;
    };
    let registry = match skills {
        Some(cache) => cache.get(fs, &dir.skills_dir()),
        None => Arc::new(Registry::load(fs, &dir.skills_dir())),
    };
    check_skills(file, root, states, &registry, &mut out);
    // Built once per pass: a per-state rebuild (or scan) of the state names was quadratic
    // in the number of states (docs/security.md, `check` stays within about 1 s per file).
    let names: Vec<String> = states.iter().map(key_text).collect();
    let gov = Governance {
        root,
        state_slugs: names.iter().map(String::as_str).collect(),
        forbid_always: tool_entries(
            root.get_value("tools")
                .and_then(|t| t.get_value("forbid_always")),
        ),
        registry: &registry,
    };
    for (e, slug) in states.iter().zip(&names) {
        state_slug(file, e, slug, &mut out);
        for phase in ["before", "after"] {
            hooks(fs, dir, file, slug, e.value.get_value(phase), &mut out);
        }
        governance(file, &gov, e, slug, &mut out);
    }
    allow_always(file, root, &mut out);
    sub_workflows(fs, dir, file, root, &mut out);
    out
}

/// FORMAT §D.2 / §A.0.1: the workflow folder has no `workflow.yaml` (WFX340, plus WFX341
/// when the folder name is not a slug). The finding names the missing file, at offset 0.
pub fn missing_workflow(dir: &WorkflowDir) -> Vec<Diagnostic> {
    let file = dir.spec_path();
    let mut out: Vec<Diagnostic> = slug_check(dir, &file).into_iter().collect();
    d::push_bounded(
        &mut out,
        Diagnostic::new(
            &d::WFC_MISSING_WORKFLOW,
            file,
            TextRange::empty(0),
            format!(
                "no `workflow.yaml` found for workflow `{}`; every folder under `workflows/` needs its machine spec",
                dir.slug
            ),
        ),
    );
    out
}

fn key_text(e: &Entry) -> String {
    e.key
        .scalar_text()
        .map(|c| c.into_owned())
        .unwrap_or_default()
}

fn slug_check(dir: &WorkflowDir, file: &str) -> Option<Diagnostic> {
    if is_slug(&dir.slug) {
        return None;
    }
    Some(Diagnostic::new(
        &d::WFC_WORKFLOW_SLUG,
        file,
        TextRange::empty(0),
        format!(
            "workflow slug `{}` is not hyphen-separated kebab-case; rename the `workflows/{}/` folder to lowercase segments joined by single hyphens (e.g. `order-lookup`) and put the label in `title`",
            dir.slug, dir.slug
        ),
    ))
}

/// JavaScript's `String(number)` for the numbers YAML gives us.
fn js_number(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{f:.0}")
    } else {
        f.to_string()
    }
}

fn runtime_contract(file: &str, root: &Node, out: &mut Vec<Diagnostic>) {
    let Some(rt) = root.get_value("runtime").filter(|r| r.as_map().is_some()) else {
        return;
    };
    let engine = rt.get_value("engine");
    let version = rt.get_value("version");
    if engine.is_none() && version.is_none() {
        return;
    }
    let engine_text = engine.and_then(Node::as_str).unwrap_or("archmax-harness");
    let version_text = match version.map(|v| &v.value) {
        None => "1".to_owned(),
        Some(Value::Str(s, _)) => s.clone(),
        Some(Value::Int(i)) => i.to_string(),
        Some(Value::Float(f)) => js_number(*f),
        Some(_) => return,
    };
    if engine_text == "archmax-harness" && matches!(version_text.as_str(), "1" | "2") {
        return;
    }
    let range = match (engine, version) {
        (Some(e), _) if engine_text != "archmax-harness" => e.range,
        (_, Some(v)) => v.range,
        _ => rt.range,
    };
    d::push_bounded(
        out,
        Diagnostic::new(
            &d::WFC_UNSUPPORTED_RUNTIME,
            file,
            range,
            format!(
                "unsupported runtime contract `{engine_text}@{version_text}`; supported: archmax-harness@1, archmax-harness@2"
            ),
        ),
    );
}

fn state_slug(file: &str, e: &Entry, slug: &str, out: &mut Vec<Diagnostic>) {
    let msg = if slug.trim().is_empty() {
        "a state is declared with an empty slug; a state's key is its identity for every transition, trigger and assertion, so give it a kebab-case slug (e.g. `identify-case`) and put the label in `title`".to_owned()
    } else if !is_slug(slug) {
        format!(
            "state slug `{slug}` is not kebab-case: use lowercase letters and digits in segments joined by single hyphens (e.g. `identify-case`), and put the label in `title`"
        )
    } else {
        return;
    };
    d::push_bounded(
        out,
        Diagnostic::new(&d::WFC_STATE_SLUG, file, e.key.range, msg),
    );
}

// ---------------------------------------------------------------------------------------
// Hooks.

fn hook_items(node: Option<&Node>) -> Vec<&Node> {
    match node {
        None => Vec::new(),
        Some(n) => match n.as_seq() {
            Some(items) => items.iter().collect(),
            None => vec![n],
        },
    }
}

fn hooks(
    fs: &dyn FileAccess,
    dir: &WorkflowDir,
    file: &str,
    slug: &str,
    node: Option<&Node>,
    out: &mut Vec<Diagnostic>,
) {
    for h in hook_items(node) {
        let Some(script) = h.get_value("script") else {
            continue;
        };
        let Some(path) = script.as_str().filter(|p| is_hook_script_path(p)) else {
            continue;
        };
        let full = join(&dir.dir(), path);
        match fs.read_text_max(&full, crate::check::MAX_SCRIPT_BYTES) {
            Err(FileError::TooLarge { bytes, limit }) => d::push_bounded(
                out,
                Diagnostic::new(
                    &d::SCRIPT_TOO_LARGE,
                    file,
                    script.range,
                    format!(
                        "hook script of state `{slug}` `{full}` is {bytes} bytes, over the {} bound of a script; it was not read",
                        crate::files::human_bytes(limit)
                    ),
                ),
            ),
            Err(e @ FileError::HardLink { .. }) => d::push_bounded(
                out,
                Diagnostic::new(
                    &d::HARD_LINK,
                    file,
                    script.range,
                    format!("hook script of state `{slug}` `{full}`: {e}"),
                ),
            ),
            Err(crate::files::FileError::OutsideWorkspace) => d::push_bounded(
                out,
                Diagnostic::new(
                    &d::LINK_OUTSIDE_WORKSPACE,
                    file,
                    script.range,
                    format!(
                        "`{full}` is a symbolic link that leaves the workspace; it was not read"
                    ),
                ),
            ),
            Err(_) if !fs.is_file(&full) => d::push_bounded(
                out,
                Diagnostic::new(
                    &d::WFC_HOOK_SCRIPT_MISSING,
                    file,
                    script.range,
                    format!("hook script of state `{slug}` not found: `{full}`"),
                ),
            ),
            Err(_) => {}
            Ok(source) => {
                for (spec, range) in foreign_imports(&source) {
                    d::push_bounded(out,
                        Diagnostic::new(
                            &d::WFC_HOOK_FOREIGN_IMPORT,
                            file,
                            script.range,
                            format!("hook script `{path}` imports from `{spec}`; sandbox scripts may import only from `@archmax-ai/harness/*` type carriers: inline the logic or use the tools bridge"),
                        )
                        .with_related(full.clone(), range, format!("imports `{spec}`")),
                    );
                }
            }
        }
    }
}

fn allowed_specifier(s: &str) -> bool {
    s == "@archmax-ai/harness" || s.starts_with("@archmax-ai/harness/")
}

/// A quoted string at the start of `s` after optional whitespace: (start, end) of its
/// contents, relative to `s`.
fn quoted_at(s: &str) -> Option<(usize, usize)> {
    let ws = s.len() - s.trim_start().len();
    let rest = s.get(ws..)?;
    let q = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = rest.get(1..)?;
    let end = body.find(['"', '\''])?;
    if end == 0 || body.get(end..end + 1) != Some(&q.to_string()) {
        return None;
    }
    Some((ws + 1, ws + 1 + end))
}

/// Import specifiers of `source` that are not `@archmax-ai/harness/*`, with their byte
/// ranges in `source`, in order.
pub fn foreign_imports(source: &str) -> Vec<(String, TextRange)> {
    let mut found: Vec<(usize, usize)> = Vec::new();
    let mut line_start = 0usize;
    for line in source.split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let stmt = line_start + indent;
        let rest = source.get(stmt..).unwrap_or("");
        for kw in ["import", "export"] {
            let Some(after) = rest.strip_prefix(kw) else {
                continue;
            };
            let spaced = after.starts_with(char::is_whitespace);
            let quoted = kw == "import" && after.starts_with(['"', '\'']);
            if !spaced && !quoted {
                continue;
            }
            let base = stmt + kw.len();
            if kw == "import"
                && let Some((a, b)) = quoted_at(after)
            {
                found.push((base + a, base + b));
                continue;
            }
            // `[^"'()]*?from\s+["']…["']`
            for (i, c) in after.char_indices() {
                if matches!(c, '"' | '\'' | '(' | ')') {
                    break;
                }
                let tail = after.get(i..).unwrap_or("");
                if let Some(t) = tail.strip_prefix("from")
                    && t.starts_with(char::is_whitespace)
                {
                    if let Some((a, b)) = quoted_at(t) {
                        let at = base + i + 4;
                        found.push((at + a, at + b));
                    }
                    break;
                }
            }
        }
        line_start += line.len();
    }
    for call in ["require(", "import("] {
        let mut from = 0;
        while let Some(p) = source
            .get(from..)
            .and_then(|r| r.find(call))
            .map(|p| p + from)
        {
            let boundary = p == 0
                || source.get(p - 1..p).is_some_and(|c| {
                    !c.chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '$')
                });
            let base = p + call.len();
            if boundary && let Some((a, b)) = quoted_at(source.get(base..).unwrap_or("")) {
                found.push((base + a, base + b));
            }
            from = base;
        }
    }
    found.sort_unstable();
    found.dedup();
    found
        .into_iter()
        .filter_map(|(a, b)| {
            let spec = source.get(a..b)?;
            if allowed_specifier(spec) {
                return None;
            }
            Some((
                spec.to_owned(),
                TextRange::new(u32::try_from(a).ok()?, u32::try_from(b).ok()?),
            ))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Skills registry.

/// The largest `SKILL.md` read (bytes): 1 MiB. Only its frontmatter matters to the rules; a
/// larger one is refused by its size, before it is read: the bundle counts as not loadable
/// (its `WFX` skill-unloadable diagnostic names the bound; bounded work, docs/security.md).
pub const MAX_SKILL_MD_BYTES: u64 = 1024 * 1024;

/// The skill registries of one check run, by skills folder: each `SKILL.md` is read once per
/// run instead of once per workflow (bounded work). Built by `WorkflowCache::for_run`.
#[derive(Debug, Default)]
pub struct SkillCache {
    registries: std::sync::Mutex<BTreeMap<String, Arc<Registry>>>,
}

impl SkillCache {
    /// The registry of `skills_dir`, loaded on first use. A poisoned lock is recovered.
    fn get(&self, fs: &dyn FileAccess, skills_dir: &str) -> Arc<Registry> {
        let lock = || {
            self.registries
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(r) = lock().get(skills_dir) {
            return r.clone();
        }
        // Loaded outside the lock; two threads racing both load, one result is kept.
        let r = Arc::new(Registry::load(fs, skills_dir));
        lock().entry(skills_dir.to_owned()).or_insert(r).clone()
    }
}

/// A skill bundle found under `<root>/skills/` (FORMAT §D.2 step 5).
#[derive(Clone, Debug)]
struct Skill {
    slug: String,
    skill_file: String,
}

/// A registry finding: the message, its code, and the `SKILL.md` site.
#[derive(Debug)]
struct SkillIssue {
    code: Code,
    message: String,
    file: String,
    range: TextRange,
}

/// The loadable skills by slug, plus the problems found while reading them.
#[derive(Debug)]
struct Registry {
    skills: BTreeMap<String, Skill>,
    issues: Vec<SkillIssue>,
}

impl Registry {
    fn load(fs: &dyn FileAccess, skills_dir: &str) -> Registry {
        let mut skills = BTreeMap::new();
        let mut issues = Vec::new();
        for entry in fs.list(skills_dir).unwrap_or_default() {
            if !entry.is_dir {
                continue;
            }
            let slug = entry.name;
            let skill_file = join(&join(skills_dir, &slug), "SKILL.md");
            let raw = match fs.read_text_max(&skill_file, MAX_SKILL_MD_BYTES) {
                Ok(raw) => raw,
                Err(FileError::TooLarge { bytes, limit }) => {
                    issues.push(SkillIssue {
                        code: &d::WFC_SKILL_UNLOADABLE,
                        message: format!(
                            "skill `{slug}` is skipped: `{skill_file}` is {bytes} bytes, over the {} bound of a `SKILL.md`; it was not read",
                            crate::files::human_bytes(limit)
                        ),
                        file: skill_file.clone(),
                        range: TextRange::empty(0),
                    });
                    continue;
                }
                Err(_) => continue,
            };
            let unloadable = |why: &str, issues: &mut Vec<SkillIssue>| {
                issues.push(SkillIssue {
                    code: &d::WFC_SKILL_UNLOADABLE,
                    message: format!("skill `{slug}` is skipped: `{skill_file}` {why}"),
                    file: skill_file.clone(),
                    range: TextRange::empty(0),
                });
            };
            if raw.trim().is_empty() {
                unloadable("is empty", &mut issues);
                continue;
            }
            let Some((front, front_start)) = frontmatter(&raw) else {
                unloadable("has no YAML frontmatter", &mut issues);
                continue;
            };
            let parsed = yaml::parse(front);
            let Some(meta) = parsed
                .documents
                .first()
                .filter(|n| n.as_map().is_some() && !parsed.has_syntax_error())
            else {
                unloadable("has invalid YAML frontmatter", &mut issues);
                continue;
            };
            let desc_ok = meta
                .get_value("description")
                .and_then(|n| n.scalar_text())
                .is_some_and(|s| !s.trim().is_empty());
            if !desc_ok {
                unloadable("has no `description` in its frontmatter", &mut issues);
                continue;
            }
            let shift = |r: TextRange| TextRange::new(r.start + front_start, r.end + front_start);
            if let Some(name) = meta.get_value("name") {
                let text = name
                    .scalar_text()
                    .map(|c| c.into_owned())
                    .unwrap_or_default();
                if text != slug {
                    issues.push(SkillIssue {
                        code: &d::WFC_SKILL_NAME_MISMATCH,
                        message: format!("skill `{text}` should match its folder name `{slug}`: the folder name is the slug governance uses"),
                        file: skill_file.clone(),
                        range: shift(name.range),
                    });
                }
            }
            if !is_slug(&slug) {
                issues.push(SkillIssue {
                    code: &d::WFC_SKILL_NAME_MISMATCH,
                    message: format!("skill folder `{slug}` is not a kebab-case slug, so no skills list can name it"),
                    file: skill_file.clone(),
                    range: TextRange::empty(0),
                });
            }
            skills.insert(slug.clone(), Skill { slug, skill_file });
        }
        Registry { skills, issues }
    }

    fn known_list(&self) -> String {
        if self.skills.is_empty() {
            "(the workspace provides none)".to_owned()
        } else {
            self.skills.keys().cloned().collect::<Vec<_>>().join(", ")
        }
    }

    /// Bundle prefixes `skills/<slug>`, longest first.
    fn prefixes(&self) -> Vec<(String, &str)> {
        let mut v: Vec<(String, &str)> = self
            .skills
            .values()
            .map(|s| (format!("skills/{}", s.slug), s.slug.as_str()))
            .collect();
        v.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.1.cmp(b.1)));
        v
    }

    /// The skill a path lands inside.
    fn skill_of_path(&self, path: &str) -> Option<&str> {
        let rel = canonical(path);
        let rel = rel.trim_end_matches('/');
        if rel.is_empty() {
            return None;
        }
        self.prefixes()
            .into_iter()
            .find(|(p, _)| rel == p || rel.starts_with(&format!("{p}/")))
            .map(|(_, s)| s)
    }

    /// The skill a pattern can only match inside (its literal prefix up to the last `/`
    /// before the first wildcard lies in one bundle).
    fn skill_of_pattern(&self, pattern: &str) -> Option<&str> {
        self.skill_of_path(up_to_segment(&literal_prefix(pattern)))
    }

    /// Whether a pattern can match anything inside some bundle (or an ancestor of one).
    fn reaches_a_bundle(&self, pattern: &str) -> bool {
        if self.skill_of_pattern(pattern).is_some() {
            return true;
        }
        let lit = literal_prefix(pattern);
        let up_to = up_to_segment(&lit);
        !up_to.is_empty()
            && self
                .prefixes()
                .iter()
                .any(|(p, _)| format!("{p}/").starts_with(up_to))
    }
}

/// The frontmatter of a Markdown file (`---` … `---`) and the byte offset where it starts.
fn frontmatter(raw: &str) -> Option<(&str, u32)> {
    let body = raw.strip_prefix("---")?;
    let body = body
        .strip_prefix("\r\n")
        .or_else(|| body.strip_prefix('\n'))?;
    let start = raw.len() - body.len();
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((body.get(..at)?, u32::try_from(start).ok()?));
        }
        at += line.len();
    }
    None
}

/// A workspace path without leading `./` or `/` and without `.` segments.
fn canonical(path: &str) -> String {
    path.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect::<Vec<_>>()
        .join("/")
        + if path.ends_with('/') && path.len() > 1 {
            "/"
        } else {
            ""
        }
}

/// Everything before the first glob character `* ? [ {`.
fn literal_prefix(pattern: &str) -> String {
    let c = canonical(pattern);
    let end = c.find(['*', '?', '[', '{']).unwrap_or(c.len());
    c.get(..end).unwrap_or("").to_owned()
}

fn up_to_segment(literal: &str) -> &str {
    literal
        .rfind('/')
        .and_then(|i| literal.get(..=i))
        .unwrap_or("")
}

fn check_skills(
    file: &str,
    root: &Node,
    states: &[Entry],
    reg: &Registry,
    out: &mut Vec<Diagnostic>,
) {
    let skills_key = root.get("skills").map(|e| e.key.range);
    for issue in &reg.issues {
        d::push_bounded(
            out,
            Diagnostic::new(
                issue.code,
                file,
                skills_key.unwrap_or(TextRange::empty(root.range.start)),
                issue.message.clone(),
            )
            .with_related(
                issue.file.clone(),
                issue.range,
                "the skill bundle's manifest",
            ),
        );
    }
    let mut lists: Vec<(String, &Node)> = Vec::new();
    if let Some(s) = root.get_value("skills") {
        for k in ["allow_always", "forbid_always"] {
            if let Some(l) = s.get_value(k) {
                lists.push((format!("`skills.{k}`"), l));
            }
        }
    }
    for e in states {
        if let Some(s) = e.value.get_value("skills") {
            for k in ["allow", "forbid"] {
                if let Some(l) = s.get_value(k) {
                    lists.push((format!("state `{}` `skills.{k}`", key_text(e)), l));
                }
            }
        }
    }
    for (where_, l) in lists {
        for item in l.as_seq().unwrap_or(&[]) {
            // A malformed slug is the shape's finding (WFX212), not a registry miss.
            let Some(slug) = item.as_str().filter(|s| is_slug(s)) else {
                continue;
            };
            if !reg.skills.contains_key(slug) {
                let hint = crate::rules::workflow::did_you_mean(
                    slug,
                    &reg.skills.keys().map(String::as_str).collect::<Vec<_>>(),
                );
                let mut diag = Diagnostic::new(
                    &d::WFC_UNKNOWN_SKILL,
                    file,
                    item.range,
                    format!(
                        "{where_} names skill `{slug}`, which no bundle provides; known skills: {}",
                        reg.known_list()
                    ),
                );
                if let Some(h) = hint {
                    diag = diag.with_fix(format!("replace `{slug}` with `{h}`"), item.range, h);
                }
                d::push_bounded(out, diag);
            }
        }
    }
    if root.get("skills").is_none() && !reg.skills.is_empty() {
        let mut diag = Diagnostic::new(
            &d::WFC_NO_ROOT_SKILLS,
            file,
            TextRange::empty(root.range.start),
            format!(
                "this workflow declares no root `skills` block, so nothing here can read a bundle or run its scripts; the workspace provides: {}; add `skills: {{ allow_always: [...] }}`, name skills in a state's `skills.allow`, or write `skills: {{ allow_always: [] }}` to grant none workflow-wide",
                reg.known_list()
            ),
        );
        if let Some(first) = reg.skills.values().next() {
            diag = diag.with_related(
                first.skill_file.clone(),
                TextRange::empty(0),
                "a skill the workspace provides",
            );
        }
        d::push_bounded(out, diag);
    }
}

// ---------------------------------------------------------------------------------------
// Governance probes.

/// One allow or forbid entry: the tool node and the entry.
struct ToolEntry<'n> {
    tool: &'n str,
    tool_node: &'n Node,
    item: &'n Node,
}

impl<'n> ToolEntry<'n> {
    fn guarded(&self) -> bool {
        self.item.get_value("args").is_some() || self.item.get_value("paths").is_some()
    }

    /// Glob strings of `args.<arg>` with their nodes.
    fn arg_globs(&self, arg: &str) -> Vec<(&'n str, &'n Node)> {
        globs(self.item.get_value("args").and_then(|a| a.get_value(arg)))
    }

    /// `file_path` patterns: `args.file_path` plus `paths` (the reference folds `paths`
    /// into `file_path`).
    fn file_path_globs(&self) -> Vec<(&'n str, &'n Node)> {
        let mut v = self.arg_globs("file_path");
        v.extend(globs(self.item.get_value("paths")));
        v
    }
}

fn globs(node: Option<&Node>) -> Vec<(&str, &Node)> {
    match node {
        None => Vec::new(),
        Some(n) => match &n.value {
            Value::Str(s, _) => vec![(s.as_str(), n)],
            Value::Seq(items) => items
                .iter()
                .filter_map(|i| Some((i.as_str()?, i)))
                .collect(),
            _ => Vec::new(),
        },
    }
}

fn tool_entries(node: Option<&Node>) -> Vec<ToolEntry<'_>> {
    node.and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(|item| {
            let t = if item.as_str().is_some() {
                item
            } else {
                item.get_value("tool")?
            };
            Some(ToolEntry {
                tool: t.as_str()?,
                tool_node: t,
                item,
            })
        })
        .collect()
}

fn first_segment(path: &str) -> String {
    canonical(path).split('/').next().unwrap_or("").to_owned()
}

fn str_list(node: Option<&Node>) -> Vec<&str> {
    node.and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(Node::as_str)
        .collect()
}

/// The guard glob matcher (`crate::glob`); a glob over a bound matches nothing here (its
/// own `WFX227` reports it).
pub fn glob_match(pattern: &str, path: &str) -> bool {
    crate::glob::glob_match(pattern, path) == Ok(true)
}

/// What the governance probes of every state share, built once per `workflow.yaml` pass.
struct Governance<'n> {
    root: &'n Node,
    /// Every state's slug (a set: one lookup per `archmax_advance` target).
    state_slugs: BTreeSet<&'n str>,
    /// The root's `tools.forbid_always` entries.
    forbid_always: Vec<ToolEntry<'n>>,
    registry: &'n Registry,
}

fn governance(file: &str, gov: &Governance<'_>, e: &Entry, slug: &str, out: &mut Vec<Diagnostic>) {
    let Governance {
        root,
        state_slugs,
        forbid_always,
        registry: reg,
    } = gov;
    let st = &e.value;
    let tools = st.get_value("tools");
    let allow = tool_entries(tools.and_then(|t| t.get_value("allow")));
    if allow.is_empty() {
        return;
    }
    let forbid_here = tool_entries(tools.and_then(|t| t.get_value("forbid")));
    let edges: BTreeSet<&str> = st
        .get_value("transitions")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(|t| t.get_value("to").and_then(Node::as_str))
        .collect();
    let enabled: BTreeSet<&str> = {
        let rs = root.get_value("skills");
        let ss = st.get_value("skills");
        let mut en: BTreeSet<&str> = str_list(rs.and_then(|s| s.get_value("allow_always")))
            .into_iter()
            .collect();
        en.extend(str_list(ss.and_then(|s| s.get_value("allow"))));
        for f in str_list(rs.and_then(|s| s.get_value("forbid_always")))
            .into_iter()
            .chain(str_list(ss.and_then(|s| s.get_value("forbid"))))
        {
            en.remove(f);
        }
        en
    };
    for a in &allow {
        let tool = a.tool;
        if tool == "task" {
            d::push_bounded(
                out,
                Diagnostic::new(
                    &d::WFC_TASK_NOT_GRANTABLE,
                    file,
                    a.tool_node.range,
                    format!(
                        "state `{slug}` allows `task`, which is not grantable: it is the runtime's own dispatch for grading rubrics, disclosed in no state; to delegate work, allow `archmax_workflow_<slug>` instead"
                    ),
                ),
            );
        }
        if tool == "archmax_advance" {
            for (target, node) in a.arg_globs("to") {
                if target.contains('*') {
                    continue;
                }
                if !state_slugs.contains(target) {
                    d::push_bounded(
                        out,
                        Diagnostic::new(
                            &d::WFC_ADVANCE_UNDEFINED_TARGET,
                            file,
                            node.range,
                            format!(
                                "state `{slug}` allows archmax_advance to undefined state `{target}`"
                            ),
                        ),
                    );
                } else if !edges.contains(target) {
                    let related = st.get("transitions").map_or(e.key.range, |t| t.key.range);
                    d::push_bounded(out,
                        Diagnostic::new(&d::WFC_ADVANCE_WITHOUT_EDGE, file, node.range, format!("state `{slug}` allows archmax_advance to `{target}` but declares no transition to it; the runtime will block the transition"))
                            .with_related(file, related, "the state's transitions"),
                    );
                }
            }
        }
        if tool == "archmax_run" {
            for (p, node) in a.file_path_globs() {
                if !reg.reaches_a_bundle(p) {
                    d::push_bounded(
                        out,
                        Diagnostic::new(
                            &d::WFC_RUN_OUTSIDE_SKILL_BUNDLE,
                            file,
                            node.range,
                            format!(
                                "state `{slug}` allows `archmax_run` on `{p}`, which is outside every skill bundle; `archmax_run` may only execute scripts in a skill bundle (rule `script.skill-only`), so scope it to a skill's scripts (e.g. `skills/<name>/scripts/**`)"
                            ),
                        ),
                    );
                }
            }
        }
        for (p, node) in a.file_path_globs() {
            if first_segment(p) == "workflows" {
                d::push_bounded(
                    out,
                    Diagnostic::new(
                        &d::WFC_AUTHORING_PLANE_PATH,
                        file,
                        node.range,
                        format!(
                            "state `{slug}` allows `{tool}` on `{p}`, which names the authoring plane (`workflows/`: machine specs, rubrics, hook scripts and cases); it is not routed into the agent's workspace, so this path resolves inside the run's own zone"
                        ),
                    ),
                );
            }
        }
        // Mutating path arguments.
        let mutating_args: Vec<&str> = TOOL_PATH_ARGS
            .iter()
            .filter(|(t, _, m)| *t == tool && *m)
            .map(|(_, a, _)| *a)
            .collect();
        if !mutating_args.is_empty() {
            let mut targets: Vec<(&str, &Node)> = if a.item.get_value("paths").is_some() {
                globs(a.item.get_value("paths"))
            } else {
                mutating_args
                    .iter()
                    .flat_map(|arg| a.arg_globs(arg))
                    .collect()
            };
            targets.dedup_by_key(|(_, n)| n.range);
            for (p, node) in targets {
                let top = first_segment(p);
                if RUNTIME_OWNED_DIRS.contains(&top.as_str()) {
                    d::push_bounded(
                        out,
                        Diagnostic::new(
                            &d::WFC_RUNTIME_OWNED_WRITE,
                            file,
                            node.range,
                            format!(
                                "state `{slug}` allows `{tool}` on `{p}`, which targets a runtime-owned run area; the runtime will block it; write under `scratchpad/` instead"
                            ),
                        ),
                    );
                    continue;
                }
                if p.contains('*') {
                    continue;
                }
                let c = canonical(p);
                if top == "skills" || c == "AGENTS.md" {
                    d::push_bounded(
                        out,
                        Diagnostic::new(
                            &d::WFC_AUTHORED_ZONE_WRITE,
                            file,
                            node.range,
                            format!(
                                "state `{slug}` allows `{tool}` on `{p}`, which is in the read-only authored zone; the runtime will block it; write under `scratchpad/` instead"
                            ),
                        ),
                    );
                    continue;
                }
                let denies = |f: &ToolEntry<'_>| {
                    (f.tool == tool || f.tool == "*")
                        && f.file_path_globs()
                            .iter()
                            .chain(
                                mutating_args
                                    .iter()
                                    .flat_map(|arg| f.arg_globs(arg))
                                    .collect::<Vec<_>>()
                                    .iter(),
                            )
                            .any(|(g, _)| glob_match(&canonical(g), &c))
                };
                if forbid_always.iter().any(|f| f.guarded() && denies(f)) {
                    d::push_bounded(
                        out,
                        Diagnostic::new(
                            &d::WFC_FORBID_ALWAYS_DENIES_GRANT,
                            file,
                            node.range,
                            format!(
                                "state `{slug}` allows `{tool}` on `{p}`, which `tools.forbid_always` denies in every state; a denial beats every grant"
                            ),
                        ),
                    );
                } else if forbid_here.iter().any(|f| f.guarded() && denies(f)) {
                    d::push_bounded(
                        out,
                        Diagnostic::new(
                            &d::WFC_ALLOWED_AND_FORBIDDEN,
                            file,
                            node.range,
                            format!(
                                "state `{slug}` allows `{tool}` on `{p}`, which this state's `tools.forbid` denies; a denial beats every grant"
                            ),
                        ),
                    );
                }
            }
        }
        if !reg.skills.is_empty() {
            for (p, node) in a.file_path_globs() {
                if let Some(owner) = reg.skill_of_pattern(p)
                    && !enabled.contains(owner)
                {
                    d::push_bounded(
                        out,
                        Diagnostic::new(
                            &d::WFC_SKILL_NOT_ENABLED_PATH,
                            file,
                            node.range,
                            format!(
                                "state `{slug}` allows `{tool}` on `{p}`, which can only match inside skill `{owner}`, a skill this state does not enable; add `{owner}` to this state's `skills.allow` (or `skills.allow_always`), check no forbid list denies it, or drop the entry"
                            ),
                        ),
                    );
                }
            }
        }
        let outright = |fs: &[ToolEntry<'_>]| {
            fs.iter()
                .find(|f| (f.tool == tool || f.tool == "*") && !f.guarded())
                .map(|f| f.tool_node.range)
        };
        if let Some(r) = outright(forbid_always) {
            d::push_bounded(out,
                Diagnostic::new(&d::WFC_FORBID_ALWAYS_DENIES_GRANT, file, a.tool_node.range, format!("state `{slug}` allows `{tool}`, which `tools.forbid_always` denies in every state; a denial beats every grant, so the runtime blocks it everywhere"))
                    .with_related(file, r, "denied here"),
            );
        } else if let Some(r) = outright(&forbid_here) {
            d::push_bounded(out,
                Diagnostic::new(&d::WFC_ALLOWED_AND_FORBIDDEN, file, a.tool_node.range, format!("state `{slug}` allows `{tool}` and forbids it in the same state; the denial wins, so the runtime blocks every such call"))
                    .with_related(file, r, "forbidden here"),
            );
        }
    }
}

fn allow_always(file: &str, root: &Node, out: &mut Vec<Diagnostic>) {
    for a in tool_entries(
        root.get_value("tools")
            .and_then(|t| t.get_value("allow_always")),
    ) {
        if a.tool == "task" {
            d::push_bounded(
                out,
                Diagnostic::new(
                    &d::WFC_TASK_NOT_GRANTABLE,
                    file,
                    a.tool_node.range,
                    "`tools.allow_always` allows `task`, which is not grantable: it is the runtime's own dispatch for grading rubrics, disclosed in no state; to delegate work, allow `archmax_workflow_<slug>` instead",
                ),
            );
        }
        for (p, node) in a.file_path_globs() {
            if RUNTIME_OWNED_DIRS.contains(&first_segment(p).as_str()) {
                d::push_bounded(
                    out,
                    Diagnostic::new(
                        &d::WFC_RUNTIME_AREA_GRANT,
                        file,
                        node.range,
                        format!(
                            "`tools.allow_always` allows `{}` on `{p}`, which targets a runtime-owned run area; the runtime will block it; write under `scratchpad/` instead",
                            a.tool
                        ),
                    ),
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Sub-workflows (FORMAT §D.2 step 9, §E.9).

/// States reachable from a trigger-declaring state over transitions and `on_error`, in
/// document order.
fn reachable_states(root: &Node) -> Vec<&Entry> {
    let states = root
        .get_value("states")
        .and_then(Node::as_map)
        .unwrap_or(&[]);
    // Each state's name once, and a map name -> index of its first entry (a duplicate key
    // resolves to the first, as a lookup by name does): one lookup per edge, so the walk
    // is O(edges · log states), not a scan of every state per visited state.
    let names: Vec<String> = states.iter().map(key_text).collect();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        index.entry(n.as_str()).or_insert(i);
    }
    let mut seen = vec![false; states.len()];
    let mut todo: Vec<usize> = states
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e.value
                .get_value("triggers")
                .and_then(Node::as_map)
                .is_some_and(|m| !m.is_empty())
        })
        .filter_map(|(i, _)| index.get(names.get(i)?.as_str()).copied())
        .collect();
    while let Some(i) = todo.pop() {
        let (Some(e), Some(flag)) = (states.get(i), seen.get_mut(i)) else {
            continue;
        };
        if std::mem::replace(flag, true) {
            continue;
        }
        for t in e
            .value
            .get_value("transitions")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            if let Some(&j) = t
                .get_value("to")
                .and_then(Node::as_str)
                .and_then(|to| index.get(to))
            {
                todo.push(j);
            }
        }
        if let Some(&j) = e
            .value
            .get_value("on_error")
            .and_then(Node::as_str)
            .and_then(|oe| index.get(oe))
        {
            todo.push(j);
        }
    }
    states
        .iter()
        .zip(&names)
        .filter(|(_, n)| {
            index
                .get(n.as_str())
                .and_then(|&i| seen.get(i))
                .is_some_and(|&b| b)
        })
        .map(|(e, _)| e)
        .collect()
}

/// `(state slug, target slug, range of the entry's tool)` for every
/// `archmax_workflow_<slug>` grant of a reachable state.
fn delegations(root: &Node) -> Vec<(String, String, TextRange)> {
    let mut out = Vec::new();
    for e in reachable_states(root) {
        for t in tool_entries(
            e.value
                .get_value("tools")
                .and_then(|t| t.get_value("allow")),
        ) {
            if let Some(target) = t.tool.strip_prefix("archmax_workflow_") {
                out.push((key_text(e), target.to_owned(), t.tool_node.range));
            }
        }
    }
    out
}

/// What the walk needs of a loaded sibling, derived once per walk and shared by every step
/// that reaches it: a step used to clone the sibling's whole tree and derive its model and
/// delegations again, so `MAX_WALK_STEPS` delegations to one large workflow cost steps ×
/// its size (minutes for 2,000 grants of a 20,000-state workflow).
struct Sibling {
    /// The spec's workspace-relative path.
    path: String,
    /// It declares a `manual` trigger (FORMAT §E.9: a sub-workflow's entry).
    manual: bool,
    /// `disabled: true`.
    disabled: bool,
    /// Its [`delegations`].
    delegations: Rc<[(String, String, TextRange)]>,
}

/// A loaded sibling, or `None` when missing or unusable.
type Loaded = Option<Rc<Sibling>>;

struct Walk<'a> {
    fs: &'a dyn FileAccess,
    root_dir: String,
    file: &'a str,
    cache: BTreeMap<String, Loaded>,
    steps: usize,
    out: Vec<Diagnostic>,
}

impl Walk<'_> {
    fn load(&mut self, slug: &str) -> Loaded {
        if let Some(l) = self.cache.get(slug) {
            return l.clone();
        }
        let dir = WorkflowDir {
            root: self.root_dir.clone(),
            slug: slug.to_owned(),
        };
        let loaded = load_workflow(self.fs, &dir).and_then(|info| {
            let model = info.model?;
            if !is_usable(&model.root) {
                return None;
            }
            let wf = Workflow::from_node(&model.root);
            Some(Rc::new(Sibling {
                path: info.path,
                manual: wf.trigger("manual").is_some(),
                disabled: wf.disabled,
                delegations: delegations(&model.root).into(),
            }))
        });
        self.cache.insert(slug.to_owned(), loaded.clone());
        loaded
    }

    /// Walks the delegations `delegs` of `current` (whose spec is at `path`). `top` is the
    /// entry in the checked file the chain started from.
    fn walk(
        &mut self,
        current: &str,
        delegs: &[(String, String, TextRange)],
        path: &str,
        chain: &mut Vec<String>,
        top: Option<TextRange>,
    ) {
        for (state, target, node_range) in delegs {
            let (state, target, node_range) = (state.as_str(), target.clone(), *node_range);
            self.steps += 1;
            if self.steps > MAX_WALK_STEPS {
                return;
            }
            let nested = top.is_some();
            let range = top.unwrap_or(node_range);
            let entry = format!("archmax_workflow_{target}");
            let where_ = if nested {
                format!("workflow `{current}` (state `{state}`) allows `{entry}`")
            } else {
                format!("state `{state}` allows `{entry}`")
            };
            let emit = |code: Code, msg: String, this: &mut Self| {
                let mut d = Diagnostic::new(code, this.file, range, msg);
                if nested {
                    d = d.with_related(
                        path.to_owned(),
                        node_range,
                        format!("delegation in workflow `{current}`"),
                    );
                }
                d::push_bounded(&mut this.out, d);
            };
            if !is_slug(&target) {
                emit(
                    &d::WFC_SUB_WORKFLOW_SLUG,
                    format!(
                        "{where_}, whose target `{target}` is not kebab-case; a workflow slug is its `workflows/<slug>/` folder name (e.g. `enrich-order`)"
                    ),
                    self,
                );
                continue;
            }
            if chain.contains(&target) {
                let cyc = chain
                    .iter()
                    .map(String::as_str)
                    .chain([target.as_str()])
                    .collect::<Vec<_>>()
                    .join(" → ");
                emit(
                    &d::WFC_SUB_WORKFLOW_CYCLE,
                    format!(
                        "{where_}, which is already running in this chain ({cyc}); the delegation would never terminate"
                    ),
                    self,
                );
                continue;
            }
            let Some(sibling) = self.load(&target) else {
                emit(
                    &d::WFC_SUB_WORKFLOW_MISSING,
                    format!(
                        "{where_}, but `workflows/{target}/workflow.yaml` is missing or has no valid machine spec"
                    ),
                    self,
                );
                continue;
            };
            if !sibling.manual {
                emit(
                    &d::WFC_SUB_WORKFLOW_NO_MANUAL,
                    format!(
                        "{where_}, but `{target}` declares no `manual` trigger, so it has no state to start in; add `triggers: {{ manual: }}` to the state a run should start in"
                    ),
                    self,
                );
                continue;
            }
            if sibling.disabled {
                emit(
                    &d::WFC_SUB_WORKFLOW_DISABLED,
                    format!(
                        "{where_}, but `{target}` is disabled (`disabled: true` in its workflow.yaml), so that call will be refused at runtime; re-enable `{target}` or stop allowing it"
                    ),
                    self,
                );
            }
            chain.push(target.clone());
            let depth = chain.len() - 1;
            if depth > SUB_WORKFLOW_DEPTH {
                let path_text = chain.join(" → ");
                emit(
                    &d::WFC_SUB_WORKFLOW_TOO_DEEP,
                    format!(
                        "{where_}, reaching {depth} levels ({path_text}), past the dispatcher's depth bound of {SUB_WORKFLOW_DEPTH}"
                    ),
                    self,
                );
            } else {
                let nested = Rc::clone(&sibling.delegations);
                self.walk(&target, &nested, &sibling.path, chain, Some(range));
            }
            chain.pop();
        }
    }
}

fn sub_workflows(
    fs: &dyn FileAccess,
    dir: &WorkflowDir,
    file: &str,
    root: &Node,
    out: &mut Vec<Diagnostic>,
) {
    let mut w = Walk {
        fs,
        root_dir: dir.root.clone(),
        file,
        cache: BTreeMap::new(),
        steps: 0,
        out: Vec::new(),
    };
    let mut chain = vec![dir.slug.clone()];
    w.walk(&dir.slug, &delegations(root), file, &mut chain, None);
    out.append(&mut w.out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_picomatch() {
        assert!(glob_match("scratchpad/**", "scratchpad/a/b.json"));
        assert!(glob_match("skills/*/scripts/*.js", "skills/x/scripts/a.js"));
        assert!(!glob_match("skills/*.js", "skills/x/a.js"));
        assert!(glob_match("a/{b,c}/[0-9].txt", "a/c/7.txt"));
        assert!(glob_match("**/x.md", "x.md"));
        assert!(!glob_match("a?c", "a/c"));
    }

    #[test]
    fn import_scan() {
        let src = "import { ok } from \"@archmax-ai/harness/hooks\";\nimport fs from 'node:fs';\n  import \"./side.js\";\nexport * from \"lodash\";\nconst x = require(\"path\");\n// import y from 'z'\n";
        let found: Vec<String> = foreign_imports(src).into_iter().map(|(s, _)| s).collect();
        assert_eq!(found, vec!["node:fs", "./side.js", "lodash", "path"]);
        let (spec, r) = &foreign_imports(src)[0];
        assert_eq!(&src[r.as_usize()], spec);
    }

    #[test]
    fn bundle_patterns() {
        let reg = Registry {
            skills: BTreeMap::from([(
                "order-data".to_owned(),
                Skill {
                    slug: "order-data".into(),
                    skill_file: String::new(),
                },
            )]),
            issues: Vec::new(),
        };
        assert_eq!(
            reg.skill_of_pattern("skills/order-data/**"),
            Some("order-data")
        );
        assert_eq!(reg.skill_of_pattern("skills/**"), None);
        assert!(reg.reaches_a_bundle("skills/*/scripts/**"));
        assert!(!reg.reaches_a_bundle("scripts/**"));
        assert!(!reg.reaches_a_bundle("**"));
    }
}
