//! Cross-file rules for a case: the case against its workflow (FORMAT §B.10), `from:`
//! fixtures and seed zones (§B.8), and our own checks of state, decision-edge, workflow and
//! judge references that the reference's `validate` lacks (registry section `wfx`).
//!
//! Inputs are the lenient [`Case`] model (for meaning) and its span tree (for ranges); the
//! workflow comes loaded in [`CaseContext`]. Files are read only through `ctx.fs`. Nothing
//! here re-checks the case's own shape: a malformed piece is skipped, since
//! `rules::case` already reports it.
//!
//! Choices:
//! - When the case's folder has no `workflow.yaml`, the only diagnostic is `WFX309`, on an
//!   empty range at the start of the case file. When `workflow.yaml` exists but cannot be
//!   loaded (a syntax error, not a mapping, over the size limit), the only diagnostic is
//!   `WFX309` (nothing was checked against it); when it declares no state, no cross-file
//!   diagnostic is reported at all: the workflow's own diagnostics say why (FORMAT §D.2
//!   step 4 also skips cases then). When it parses but would not load (shape or refine
//!   errors, `WorkflowInfo::loads`), what derives from its graph (`WFX305`, `WFX313`) is
//!   withheld: with a typo'd `transtions:` key those would only repeat its own error.
//! - These rules run even when the document rules found errors; each one reads only the
//!   well-formed pieces it needs.
//! - A seed path under `workflows/…` is allowed: it is no zone of FORMAT §B.8 (UNCONFIRMED
//!   whether the reference refuses it), so it falls in the `run` zone.

use std::collections::{HashMap, HashSet};

use crate::check::WorkflowInfo;
use crate::diagnostics::{self, Diagnostic};
use crate::files::{FileAccess, join};
use crate::model::case::Case;
use crate::model::workflow::{StateType, Workflow};
use crate::rules::case::{did_you_mean, nearest, normalize_fixture_path, yaml_scalar};
use crate::signature::{self, SigIssue};
use crate::text::TextRange;
use crate::workspace::WorkflowDir;
use crate::yaml::{Entry, Node};

/// What a case's cross-file rules may look at.
pub struct CaseContext<'a> {
    /// Workspace access (an editor overlay puts open buffers first).
    pub fs: &'a dyn FileAccess,
    /// The case's workflow folder.
    pub dir: &'a WorkflowDir,
    /// The loaded `workflow.yaml`, if it exists.
    pub workflow: Option<&'a WorkflowInfo>,
    /// Slugs of every workflow in the workspace, sorted.
    pub workflow_slugs: Vec<String>,
    /// True when the document rules found no error (the reference's document-level checks
    /// run only then).
    pub document_parses: bool,
}

/// Who reads a variable name (`WFX314`'s related site).
#[derive(Clone, Copy)]
enum Reader<'a> {
    /// A `variables` step's `expect`.
    Asserted,
    /// The `requires` of this trigger.
    Trigger(&'a str),
    /// The `requires` of this state.
    State(&'a str),
}

/// The zone a session path falls in when it is seeded (FORMAT §B.8 `classifyWorkspacePath`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// Climbs above the session root.
    Escapes,
    /// Empty, `.` or `/`.
    Root,
    /// Under a read-only authored mount: `skills/…` or the file mount `AGENTS.md`.
    Authored,
    /// `checkpoints`, `artifacts` or `_specs`.
    RunInternal,
    /// `large_tool_results` or `conversation_history`.
    RunOffload,
    /// `scratchpad/…` (seedable).
    RunOpen,
    /// Any other session file (seedable).
    Run,
}

impl Zone {
    /// The reference's zone name (`run-internal`, …).
    pub fn name(self) -> &'static str {
        match self {
            Zone::Escapes => "escapes",
            Zone::Root => "root",
            Zone::Authored => "authored",
            Zone::RunInternal => "run-internal",
            Zone::RunOffload => "run-offload",
            Zone::RunOpen => "run-open",
            Zone::Run => "run",
        }
    }

    /// Only `run` and `run-open` may be seeded.
    pub fn seedable(self) -> bool {
        matches!(self, Zone::Run | Zone::RunOpen)
    }
}

/// Classifies a session-relative path: canonicalized by dropping empty and `.` segments and
/// resolving `..` (a leading `/` names the session root), then matched by its first segment
/// (FORMAT §B.8).
pub fn classify_seed_path(path: &str) -> Zone {
    if path.contains('\0') {
        return Zone::Escapes;
    }
    let mut segs: Vec<&str> = Vec::new();
    for s in path.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                if segs.pop().is_none() {
                    return Zone::Escapes;
                }
            }
            s => segs.push(s),
        }
    }
    match segs.first().copied() {
        None => Zone::Root,
        Some("skills") => Zone::Authored,
        // `AGENTS.md` is a file mount: only the file itself is authored.
        Some("AGENTS.md") if segs.len() == 1 => Zone::Authored,
        Some("checkpoints" | "artifacts" | "_specs") => Zone::RunInternal,
        Some("large_tool_results" | "conversation_history") => Zone::RunOffload,
        Some("scratchpad") => Zone::RunOpen,
        Some(_) => Zone::Run,
    }
}

/// Cross-file rules for one case: `WFX301`–`WFX312`. `file` is the case's
/// workspace-relative path; ranges are byte offsets into the text `case` was read from.
pub fn check_case(ctx: &CaseContext<'_>, file: &str, case: &Case) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(info) = ctx.workflow else {
        // Missing, or present but unreadable (invalid UTF-8, an IO error): either way the
        // case has nothing to run against and its cross-file checks cannot run, which must
        // not pass silently (issue 13: a closed, undecodable workflow.yaml in the editor).
        let spec = ctx.dir.spec_path();
        let why = match ctx.fs.read_text_max(&spec, crate::check::DOC_MAX_BYTES) {
            Ok(_) => None,
            Err(crate::files::FileError::NotFound) => Some(format!(
                "workflow folder `{}` has no `workflow.yaml`, so this case has nothing to run against",
                ctx.dir.dir()
            )),
            Err(crate::files::FileError::OutsideWorkspace) => Some(format!(
                "`{spec}` is a symbolic link leaving the workspace and was not read, so this case has nothing to run against and its cross-file checks did not run"
            )),
            Err(
                e @ (crate::files::FileError::Other(_)
                | crate::files::FileError::TooLarge { .. }
                | crate::files::FileError::HardLink { .. }),
            ) => Some(format!(
                "`{spec}` cannot be read ({e}), so this case has nothing to run against and its cross-file checks did not run"
            )),
        };
        if let Some(message) = why {
            diagnostics::push_bounded(
                &mut out,
                Diagnostic::new(
                    &diagnostics::CASE_WITHOUT_WORKFLOW,
                    file,
                    TextRange::empty(0),
                    message,
                ),
            );
        }
        return out;
    };
    let Some(model) = info.model.as_ref() else {
        // Present but not loadable (a syntax error, not a mapping, over the size limit):
        // `check <case>` must not pass as if the case had been checked against it.
        diagnostics::push_bounded(
            &mut out,
            Diagnostic::new(
                &diagnostics::CASE_WITHOUT_WORKFLOW,
                file,
                TextRange::empty(0),
                format!(
                    "`{}` does not load (see its own diagnostics), so this case has nothing to run against and its cross-file checks did not run",
                    info.path
                ),
            ),
        );
        return out;
    };
    let Some(wf) = Some(model).filter(|w| !w.states.is_empty()) else {
        return out;
    };
    let cx = Cx {
        ctx,
        file,
        info,
        wf,
    };
    cx.trigger(case, &mut out);
    cx.requires(case, &mut out);
    cx.seed_near_miss(case, &mut out);
    cx.mocks_on_resume(case, &mut out);
    cx.workspace(case, &mut out);
    for step in &case.steps {
        let (Some(key), Some(entry)) = (step.key_str(), step_entry(&case.root, step.index)) else {
            continue;
        };
        cx.step(key, entry, &mut out);
    }
    // A path search over a spec that does not load (shape or refine errors) reports the
    // spec's own errors again, as "no agent can pass" (`WorkflowInfo::loads`).
    if ctx.document_parses
        && info.loads()
        && !out
            .iter()
            .any(|d| d.severity == crate::diagnostics::Severity::Error)
    {
        unsatisfiable(info, wf, file, case, &mut out);
    }
    out
}

/// `WFX313` (issue 15; FORMAT §B.2, §B.5, §E.1–§E.5): "no agent can pass this case", from
/// [`crate::satisfy::verdict`] (the verdict of [`crate::satisfy::analyse`] without its
/// plan), on the first step no path gets past (a `decide`'s `to` value, else the step's
/// key). Only when no other error already explains the case. `wf` is `info`'s model, whose
/// graph the workflow's cases share.
fn unsatisfiable(
    info: &WorkflowInfo,
    wf: &Workflow,
    file: &str,
    case: &Case,
    out: &mut Vec<Diagnostic>,
) {
    let found = match info.satisfy_graph() {
        Some(graph) => crate::satisfy::verdict_in(wf, graph, case),
        None => crate::satisfy::verdict(wf, case),
    };
    let crate::satisfy::Verdict::Unsatisfiable { step, reason } = found else {
        return;
    };
    let Some(st) = case.steps.get(step) else {
        return;
    };
    let range = match st.form() {
        Some(crate::model::case::StepForm::Decide { to, .. }) => to.range,
        _ => st.key.as_ref().map_or(st.range, |k| k.range),
    };
    out.push(Diagnostic::new(
        &diagnostics::CASE_UNSATISFIABLE,
        file,
        range,
        format!("no agent can pass this case: {reason}"),
    ));
}

/// The single entry of `steps[index]` in the span tree.
fn step_entry(root: &Node, index: usize) -> Option<&Entry> {
    match root.get_value("steps")?.as_seq()?.get(index)?.as_map()? {
        [only, ..] => Some(only),
        [] => None,
    }
}

struct Cx<'a, 'c> {
    ctx: &'a CaseContext<'c>,
    file: &'a str,
    info: &'a WorkflowInfo,
    wf: &'a Workflow,
}

impl Cx<'_, '_> {
    fn slug(&self) -> &str {
        &self.info.dir.slug
    }

    /// FORMAT §B.10: `trigger.id` is `manual` or declared by some state.
    fn trigger(&self, case: &Case, out: &mut Vec<Diagnostic>) {
        let Some(id) = case.trigger.as_ref().filter(|t| !t.value.is_empty()) else {
            return;
        };
        if id.value == "manual" || self.wf.trigger(&id.value).is_some() {
            return;
        }
        let ids = self.wf.trigger_ids();
        let listing = if ids.is_empty() {
            "no state declares a trigger; only `manual` passes".to_owned()
        } else {
            format!("declared: {}", ids.join(", "))
        };
        let mut msg = format!(
            "trigger `{}` is not declared by any state of workflow `{}` ({listing})",
            id.value,
            self.slug()
        );
        if let Some(s) = did_you_mean(&id.value, ids.iter().map(String::as_str)) {
            msg.push_str(&format!("; did you mean `{s}`?"));
        }
        let mut d = Diagnostic::new(
            &diagnostics::CASE_UNDECLARED_TRIGGER,
            self.file,
            id.range,
            msg,
        );
        for t in self.wf.triggers() {
            d = d.with_related(
                &self.info.path,
                t.id.range,
                format!(
                    "trigger `{}` is declared by state `{}`",
                    t.id.value, t.state
                ),
            );
        }
        if let Some((s, _)) = nearest(&id.value, ids.iter().map(String::as_str)) {
            d = d.with_fix(format!("use trigger `{s}`"), id.range, yaml_scalar(s));
        }
        diagnostics::push_bounded(out, d);
    }

    /// `WFX310`/`WFX311` (FORMAT §A.5, §B.10): the case's `variables`, seeded as a `send`
    /// seeds them ([`signature::start_variables`]), against its trigger's `requires`
    /// ([`signature::unmet`]): the very functions the runner's `send` calls, so this reports
    /// what the first `send` refuses and nothing else. Silent when the case has no `send`
    /// step (nothing is checked then), when its trigger is declared by no state (`WFX301`,
    /// or a run that dies at open), or when seeding itself refuses a variable (the case
    /// rules report the name or the `title`). A missing name is reported on the
    /// `variables` key (the first `send` step's key when there is none); a wrong type on
    /// the variable's value (the first `send` step's key for the harness's own `trigger`).
    fn requires(&self, case: &Case, out: &mut Vec<Diagnostic>) {
        let Some(send) = case
            .steps
            .iter()
            .find(|s| s.key_str() == Some("send"))
            .and_then(|s| s.key.as_ref())
        else {
            return;
        };
        let trigger_id = case.trigger_id();
        let Some(trigger) = self.wf.trigger(trigger_id) else {
            return;
        };
        let plain: Vec<(String, serde_json::Value)> = case
            .variables
            .iter()
            .map(|(k, v)| (k.value.clone(), v.to_json()))
            .collect();
        let Ok(vars) = signature::start_variables(&plain, trigger_id) else {
            return;
        };
        let variables_key = case
            .root
            .as_map()
            .and_then(|m| m.iter().find(|e| e.key.as_str() == Some("variables")))
            .map(|e| e.key.range);
        for (entry, issue) in signature::unmet(&trigger.requires, &vars) {
            let name = &entry.name.value;
            let d = match issue {
                SigIssue::NotSet => Diagnostic::new(
                    &diagnostics::CASE_REQUIRED_VARIABLE_MISSING,
                    self.file,
                    variables_key.unwrap_or(send.range),
                    format!(
                        "trigger `{trigger_id}` requires `{name}`{}, but the case's `variables` do not set it, so the first `send` is refused and the case ends `rejected`",
                        entry
                            .ty
                            .as_deref()
                            .map(|t| format!(" ({t})"))
                            .unwrap_or_default()
                    ),
                ),
                SigIssue::WrongType { expected } => {
                    let value = vars.get(name).map(|v| v.to_string()).unwrap_or_default();
                    let at = case
                        .variables
                        .iter()
                        .rev()
                        .find(|(k, _)| k.value == *name && name != "trigger")
                        .map_or(send.range, |(_, v)| v.range);
                    Diagnostic::new(
                        &diagnostics::CASE_VARIABLE_WRONG_TYPE,
                        self.file,
                        at,
                        format!(
                            "trigger `{trigger_id}` requires `{name}` to be {expected}, but the case sets it to {value}, so the first `send` is refused and the case ends `rejected`"
                        ),
                    )
                }
            };
            diagnostics::push_bounded(
                out,
                d.with_related(
                    &self.info.path,
                    entry.name.range,
                    format!(
                        "`{name}` is required by trigger `{trigger_id}` of state `{}`",
                        trigger.state
                    ),
                ),
            );
        }
    }

    /// `WFX314` (issue 24; FORMAT §B.1 `variables`, §B.4, §E.4): a seeded variable that
    /// nothing reads and whose name is a near miss ([`did_you_mean`], under the file's
    /// [`crate::rules::case::SuggestBudget`]) of a name the case asserts (a `variables`
    /// step's `expect`) or a trigger or state of the workflow `requires`, that is not
    /// seeded itself. "Nothing reads it": no trigger or state requires it, no `variables`
    /// step asserts it, and `workflow.yaml` never names it as a word (which covers every
    /// `${{…}}` reference, `session` path and signature, even under a misspelt key). A
    /// warning on the seed's key, with the assertion or requirement as its related site and
    /// a quick fix renaming the seed. `trigger` and `title` are built-ins, never reported.
    fn seed_near_miss(&self, case: &Case, out: &mut Vec<Diagnostic>) {
        if case.variables.is_empty() {
            return;
        }
        let seeded: HashSet<&str> = case
            .variables
            .iter()
            .map(|(k, _)| k.value.as_str())
            .collect();
        let expects: Vec<(String, TextRange)> = case
            .steps
            .iter()
            .filter(|st| st.key_str() == Some("variables"))
            .filter_map(|st| match st.form() {
                Some(crate::model::case::StepForm::Variables { expect, .. }) => Some(expect),
                _ => None,
            })
            .flatten()
            .map(|(name, _)| (name.value, name.range))
            .collect();
        // Names something reads, each with where (the first site) and who reads it, in the
        // order a suggestion prefers them: the case's assertions, then the workflow's
        // requirements. `known` maps a name to its entry.
        let asserted = expects
            .iter()
            .map(|(name, range)| (name.as_str(), self.file, *range, Reader::Asserted));
        let by_triggers = self.wf.triggers().flat_map(|t| {
            t.requires.iter().map(|e| {
                let by = Reader::Trigger(t.id.value.as_str());
                (
                    e.name.value.as_str(),
                    self.info.path.as_str(),
                    e.name.range,
                    by,
                )
            })
        });
        let by_states = self.wf.states.iter().flat_map(|st| {
            st.requires.iter().map(|r| {
                let by = Reader::State(st.slug.value.as_str());
                (r.value.as_str(), self.info.path.as_str(), r.range, by)
            })
        });
        let mut read: Vec<(&str, &str, TextRange, Reader<'_>)> = Vec::new();
        let mut known: HashMap<&str, usize> = HashMap::new();
        for entry in asserted.chain(by_triggers).chain(by_states) {
            if let std::collections::hash_map::Entry::Vacant(v) = known.entry(entry.0) {
                v.insert(read.len());
                read.push(entry);
            }
        }
        let candidates: Vec<&str> = read
            .iter()
            .map(|(n, ..)| *n)
            .filter(|n| !seeded.contains(n))
            .collect();
        if candidates.is_empty() {
            return;
        }
        // The words of `workflow.yaml`, built only when some seed is a near miss.
        let mut words: Option<HashSet<&str>> = None;
        let mut reported: HashSet<&str> = HashSet::new();
        for (key, _) in &case.variables {
            let name = key.value.as_str();
            if matches!(name, "trigger" | "title") || known.contains_key(name) {
                continue;
            }
            let Some(near) = did_you_mean(name, candidates.iter().copied()) else {
                continue;
            };
            let words = words.get_or_insert_with(|| {
                self.info
                    .text
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty())
                    .collect()
            });
            if words.contains(name) || !reported.insert(name) {
                continue;
            }
            let Some((_, file, range, by)) = known.get(near).and_then(|&i| read.get(i)) else {
                continue;
            };
            let why = match by {
                Reader::Asserted => format!("`{near}` is asserted here"),
                Reader::Trigger(id) => format!("`{near}` is required by trigger `{id}`"),
                Reader::State(slug) => format!("`{near}` is required by state `{slug}`"),
            };
            diagnostics::push_bounded(
                out,
                Diagnostic::new(
                    &diagnostics::CASE_SEED_NEAR_MISS,
                    self.file,
                    key.range,
                    format!(
                        "`{name}` is seeded, but nothing reads it (no trigger or state requires it, no `variables` step asserts it, workflow `{}` never names it); did you mean `{near}`?",
                        self.slug()
                    ),
                )
                .with_related(*file, *range, why)
                .with_fix(format!("rename the seed to `{near}`"), key.range, yaml_scalar(near)),
            );
        }
    }

    /// `WFX312` (FORMAT §B.2 `decide`/`deliver`, §B.9, a `wfx-lsp decision`): a case with
    /// `mocks` and a `decide` or `deliver` step. One information per case, on the first
    /// such step's key (where the reference's behaviour starts to differ from ours), with
    /// the `mocks` key and the later such steps as related sites.
    fn mocks_on_resume(&self, case: &Case, out: &mut Vec<Diagnostic>) {
        let Some(mocks) = case.root.as_map().and_then(|m| {
            m.iter().find(|e| {
                e.key.as_str() == Some("mocks") && e.value.as_seq().is_some_and(|s| !s.is_empty())
            })
        }) else {
            return;
        };
        let mut resumes = case
            .steps
            .iter()
            .filter_map(|s| s.key.as_ref())
            .filter(|k| k.value == "decide" || k.value == "deliver");
        let Some(first) = resumes.next() else {
            return;
        };
        let mut d = Diagnostic::new(
            &diagnostics::CASE_MOCKS_NOT_ON_RESUME,
            self.file,
            first.range,
            format!(
                "`archmax test` passes no mocks to the run this `{}` resumes (nor to any later `decide`/`deliver` run): a call to a mocked tool there reaches the real tool; `wfx-lsp test` applies the mocks to every run",
                first.value
            ),
        )
        .with_related(
            self.file,
            mocks.key.range,
            "the case's mocks, passed by `archmax test` with `send` only".to_owned(),
        );
        for k in resumes {
            d = d.with_related(
                self.file,
                k.range,
                format!("`{}` resumes another run without mocks", k.value),
            );
        }
        diagnostics::push_bounded(out, d);
    }

    /// FORMAT §B.8: seed paths land in seedable zones; `from:` fixtures exist.
    fn workspace(&self, case: &Case, out: &mut Vec<Diagnostic>) {
        let Some(map) = case.root.get_value("workspace").and_then(Node::as_map) else {
            return;
        };
        for seed in map {
            let Some(path) = seed.key.as_str().filter(|p| !p.is_empty()) else {
                continue;
            };
            let zone = classify_seed_path(path);
            if !zone.seedable() {
                let why = match zone {
                    Zone::Escapes => "it climbs above the session root",
                    Zone::Root => "it names the session root itself",
                    Zone::Authored => {
                        "it lies under a read-only authored mount (`skills/…`, `AGENTS.md`)"
                    }
                    Zone::RunInternal => {
                        "it lies in a runtime-owned area (`checkpoints`, `artifacts`, `_specs`)"
                    }
                    _ => {
                        "it lies in a runtime offload area (`large_tool_results`, `conversation_history`)"
                    }
                };
                diagnostics::push_bounded(
                    out,
                    Diagnostic::new(
                        &diagnostics::CASE_UNSEEDABLE_PATH,
                        self.file,
                        seed.key.range,
                        format!(
                            "cannot seed `{path}`: {why}, the `{}` zone; seed agent-visible session files instead (e.g. `trigger.json`, `scratchpad/…`)",
                            zone.name()
                        ),
                    ),
                );
            }
            let Some([only]) = seed.value.as_map() else {
                continue;
            };
            if only.key.as_str() != Some("from") {
                continue;
            }
            let Some(from) = only.value.as_str() else {
                continue;
            };
            let Ok(rel) = normalize_fixture_path(from) else {
                continue;
            };
            let tests = self.ctx.dir.tests_dir();
            let fixture = join(&tests, &rel);
            let exists = self.ctx.fs.is_file(&fixture);
            if !exists && crate::files::leaves_workspace(self.ctx.fs, &fixture) {
                diagnostics::push_bounded(
                    out,
                    Diagnostic::new(
                        &diagnostics::LINK_OUTSIDE_WORKSPACE,
                        self.file,
                        only.value.range,
                        format!(
                            "`{fixture}` is a symbolic link that leaves the workspace; it was not read"
                        ),
                    ),
                );
            } else if !exists {
                diagnostics::push_bounded(
                    out,
                    Diagnostic::new(
                        &diagnostics::CASE_MISSING_FIXTURE,
                        self.file,
                        only.value.range,
                        format!(
                            "workspace entry `{path}` references `from: {from}`, but `{tests}/{rel}` does not exist"
                        ),
                    ),
                );
            }
        }
    }

    fn step(&self, key: &str, step: &Entry, out: &mut Vec<Diagnostic>) {
        let v = &step.value;
        match key {
            "reachedState" => self.state_ref(v, "reachedState", out),
            "parked" => {
                if let Some(s) = v.get_value("state") {
                    self.state_ref(s, "parked.state", out);
                }
            }
            "trail" => {
                if let Some(s) = v.get_value("to") {
                    self.state_ref(s, "trail.to", out);
                }
            }
            "decide" => {
                if let Some(to) = v.get_value("to") {
                    self.decide_to(to, out);
                }
            }
            "ranWorkflow" => {
                if let Some(w) = v.get_value("workflow") {
                    self.workflow_ref(w, out);
                }
            }
            "grade" if !self.wf.has_judge => diagnostics::push_bounded(
                out,
                Diagnostic::new(
                    &diagnostics::CASE_GRADE_WITHOUT_JUDGE,
                    self.file,
                    step.key.range,
                    format!(
                        "`grade` cannot pass: workflow `{}` declares no `tests.judge`, so no grading model is wired (add `tests: {{ judge: {{}} }}` to its workflow.yaml)",
                        self.slug()
                    ),
                ),
            ),
            _ => {}
        }
    }

    fn state_names(&self) -> impl Iterator<Item = &str> {
        self.wf.states.iter().map(|s| s.slug.value.as_str())
    }

    /// `WFX303` when `node` is a non-empty string naming no state.
    fn state_ref(&self, node: &Node, what: &str, out: &mut Vec<Diagnostic>) {
        let Some(name) = node.as_str().filter(|s| !s.is_empty()) else {
            return;
        };
        if self.wf.state(name).is_some() {
            return;
        }
        diagnostics::push_bounded(
            out,
            self.unknown(
                &diagnostics::CASE_UNKNOWN_STATE,
                node,
                format!(
                    "`{what}` names state `{name}`, which workflow `{}` does not declare",
                    self.slug()
                ),
                self.state_names(),
            ),
        );
    }

    /// A did-you-mean diagnostic: `msg`, plus a suggestion and a fix when one is near.
    fn unknown<'n>(
        &self,
        code: diagnostics::Code,
        node: &Node,
        mut msg: String,
        names: impl Iterator<Item = &'n str>,
    ) -> Diagnostic {
        let name = node.as_str().unwrap_or_default();
        let suggestion = did_you_mean(name, names);
        if let Some(s) = suggestion {
            msg.push_str(&format!("; did you mean `{s}`?"));
        }
        let mut d = Diagnostic::new(code, self.file, node.range, msg);
        if let Some(s) = suggestion {
            d = d.with_fix(
                format!("replace `{name}` with `{s}`"),
                node.range,
                yaml_scalar(s),
            );
        }
        d
    }

    /// `WFX304` for an undeclared target, `WFX305` for a target no human state routes to.
    fn decide_to(&self, node: &Node, out: &mut Vec<Diagnostic>) {
        let Some(to) = node.as_str().filter(|s| !s.is_empty()) else {
            return;
        };
        if self.wf.state(to).is_none() {
            diagnostics::push_bounded(
                out,
                self.unknown(
                    &diagnostics::CASE_DECIDE_UNKNOWN_STATE,
                    node,
                    format!(
                        "`decide.to` names state `{to}`, which workflow `{}` does not declare",
                        self.slug()
                    ),
                    self.state_names(),
                ),
            );
            return;
        }
        // Which states route to `to` is the spec's graph: not judged while its own errors
        // may have dropped transitions (`WorkflowInfo::loads`).
        if !self.info.loads() {
            return;
        }
        let humans: Vec<_> = self
            .wf
            .states
            .iter()
            .filter(|s| s.kind == StateType::Human)
            .collect();
        if humans
            .iter()
            .any(|h| h.transitions.iter().any(|t| t.to.value == to))
        {
            return;
        }
        let msg = if humans.is_empty() {
            format!(
                "`decide` cannot route to `{to}`: workflow `{}` has no human state, so no decision park ever happens",
                self.slug()
            )
        } else {
            let mut targets: Vec<&str> = humans
                .iter()
                .flat_map(|h| h.transitions.iter().map(|t| t.to.value.as_str()))
                .collect();
            targets.sort_unstable();
            targets.dedup();
            format!(
                "`decide.to` is `{to}`, but no human state of workflow `{}` has a transition to it (decision targets: {})",
                self.slug(),
                if targets.is_empty() {
                    "none".to_owned()
                } else {
                    targets.join(", ")
                }
            )
        };
        let mut d = Diagnostic::new(
            &diagnostics::CASE_DECIDE_NOT_AN_EDGE,
            self.file,
            node.range,
            msg,
        );
        for h in &humans {
            if h.transitions.is_empty() {
                d = d.with_related(
                    &self.info.path,
                    h.slug.range,
                    format!("human state `{}` has no transitions", h.slug.value),
                );
            }
            for t in &h.transitions {
                d = d.with_related(
                    &self.info.path,
                    t.range,
                    format!(
                        "human state `{}` transitions to `{}`",
                        h.slug.value, t.to.value
                    ),
                );
            }
        }
        diagnostics::push_bounded(out, d);
    }

    /// `WFX306` when `ranWorkflow.workflow` is no workflow folder of the workspace.
    fn workflow_ref(&self, node: &Node, out: &mut Vec<Diagnostic>) {
        let Some(slug) = node.as_str().filter(|s| !s.is_empty()) else {
            return;
        };
        if self.ctx.workflow_slugs.iter().any(|s| s == slug) {
            return;
        }
        diagnostics::push_bounded(out, self.unknown(
            &diagnostics::CASE_UNKNOWN_WORKFLOW,
            node,
            format!(
                "`ranWorkflow.workflow` names `{slug}`, which is no workflow of this workspace (workflows: {})",
                self.ctx.workflow_slugs.join(", ")
            ),
            self.ctx.workflow_slugs.iter().map(String::as_str),
        ));
    }
}
