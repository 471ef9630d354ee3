//! Entry points: files in, sorted diagnostics out.
//!
//! [`check_paths`] is what `wfx-lsp check` calls; [`check_file`] is what the server calls
//! for one document (its overlay `FileAccess` puts unsaved buffers first, so cross-file
//! rules see them). Both run the same pipeline per file: decode → YAML span tree → document
//! rules (FORMAT §A or §B) → cross-file rules (FORMAT §B.10, §D). A syntax error stops the
//! pipeline for that file, as the reference's loader does (FORMAT §A.0, §B.0).
//!
//! Results are complete: the per-file bound (`diagnostics::cap_per_file`, at most 1,000
//! plus one `WFX009`) belongs to what is shown, so the `check` report and the server's
//! publish apply it, while `check --fix` sees every fix.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::diagnostics::{self, Diagnostic, sort_diagnostics};
use crate::files::{FileAccess, FileError, join};
use crate::model::workflow::Workflow;
use crate::rules;
use crate::text::TextRange;
use crate::workspace::{self, FileKind, WorkflowDir};
use crate::yaml::{self, Node, Parsed};

/// A loaded `workflow.yaml`: its text, span tree and model.
#[derive(Clone, Debug)]
pub struct WorkflowInfo {
    /// Which workflow.
    pub dir: WorkflowDir,
    /// Workspace-relative path of `workflow.yaml`.
    pub path: String,
    /// The text (BOM stripped).
    pub text: String,
    /// The span tree.
    pub parsed: Parsed,
    /// The model, when the text parsed to a mapping.
    pub model: Option<Workflow>,
    /// The model's [`crate::satisfy::Graph`], built on first use and shared by the cases.
    graph: std::sync::OnceLock<crate::satisfy::Graph>,
    /// [`Self::loads`], computed on first use.
    loads: std::sync::OnceLock<bool>,
}

impl WorkflowInfo {
    /// The path-search graph of [`Self::model`] (`WFX313`), built once and shared by every
    /// case of the workflow; `None` without a model.
    pub fn satisfy_graph(&self) -> Option<&crate::satisfy::Graph> {
        let model = self.model.as_ref()?;
        Some(self.graph.get_or_init(|| crate::satisfy::Graph::new(model)))
    }

    /// True when the spec loads as the reference's loader loads it (FORMAT §A.0.3, §A.0.6):
    /// a mapping with no shape or refine error ([`rules::workflow::is_usable`], the test
    /// the sub-workflow checks of §D.2 step 9 use; lint findings do not count). While it
    /// does not, the results its cases and agent scripts would derive from its graph
    /// (`WFX305`, `WFX313`, `WFX410`) are withheld: they would be cascades of the spec's
    /// own errors (issue 24: a typo'd `transtions:` key made every case "unpassable").
    /// Computed once per loaded text.
    pub fn loads(&self) -> bool {
        *self.loads.get_or_init(|| {
            self.model
                .as_ref()
                .is_some_and(|m| rules::workflow::is_usable(&m.root))
        })
    }
}

/// Reads and parses `workflow.yaml` of `dir`; `None` when the file is missing or unreadable.
pub fn load_workflow(fs: &dyn FileAccess, dir: &WorkflowDir) -> Option<WorkflowInfo> {
    let path = dir.spec_path();
    let text = fs.read_text_max(&path, DOC_MAX_BYTES).ok()?;
    Some(build_workflow_info(dir, path, text))
}

/// A memo of loaded `workflow.yaml` files keyed by path: an entry is reused while the file's
/// text is unchanged (compared in full, so an edited editor buffer is never served stale).
/// A `check` run builds one so every case of a workflow shares one parse; the server keeps
/// one for its lifetime. Thread-safe; a poisoned lock is recovered, never a panic.
#[derive(Debug, Default)]
pub struct WorkflowCache {
    entries: std::sync::Mutex<BTreeMap<String, Arc<WorkflowInfo>>>,
    /// The skill registries (`skills/*/SKILL.md`) read during one check run, by skills
    /// folder; `None` for a long-lived cache (the server's), which re-reads them per check
    /// so an edited `SKILL.md` is never served stale.
    skills: Option<rules::workflow_cross::SkillCache>,
    /// One check run ([`Self::for_run`]): a loaded `workflow.yaml` is served again without
    /// reading the file (its text cannot change during the run); a long-lived cache reads
    /// and compares the text on every use.
    run: bool,
}

impl WorkflowCache {
    /// A new, empty cache for a long-lived caller (the server): `workflow.yaml` texts are
    /// compared in full on each use; skill registries are not kept.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new, empty cache for one check run (`check_paths`, `check_workspace`, …): it also
    /// keeps each workspace's skill registry, so every `SKILL.md` is read once per run, not
    /// once per workflow (bounded work, docs/security.md). The files must not change during
    /// the run.
    pub fn for_run() -> Self {
        Self {
            entries: std::sync::Mutex::default(),
            skills: Some(rules::workflow_cross::SkillCache::default()),
            run: true,
        }
    }

    /// The loaded `workflow.yaml` of `dir`, parsed at most once per distinct text; `None`
    /// when the file is missing or unreadable. In a check run's cache ([`Self::for_run`]) a
    /// loaded file is read once per run, not once per case (docs/performance.md).
    pub fn load(&self, fs: &dyn FileAccess, dir: &WorkflowDir) -> Option<Arc<WorkflowInfo>> {
        let path = dir.spec_path();
        if self.run
            && let Some(info) = self
                .entries
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(&path)
        {
            return Some(Arc::clone(info));
        }
        let text = fs.read_text_max(&path, DOC_MAX_BYTES).ok()?;
        self.load_text(dir, &path, text)
    }

    /// The `workflow.yaml` of `dir` at `path` built from `text` (an editor buffer), reusing
    /// the entry when the text is unchanged. Always `Some`; the `Option` matches [`Self::load`].
    pub fn load_text(
        &self,
        dir: &WorkflowDir,
        path: &str,
        text: String,
    ) -> Option<Arc<WorkflowInfo>> {
        let mut map = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(info) = map.get(path)
            && info.text == text
        {
            return Some(Arc::clone(info));
        }
        let info = Arc::new(build_workflow_info(dir, path.to_owned(), text));
        map.insert(path.to_owned(), Arc::clone(&info));
        Some(info)
    }
}

fn build_workflow_info(dir: &WorkflowDir, path: String, text: String) -> WorkflowInfo {
    let parsed = yaml::parse(&text);
    let model = match parsed.documents.first() {
        Some(root) if root.as_map().is_some() && !parsed.has_syntax_error() => {
            Some(Workflow::from_node(root))
        }
        _ => None,
    };
    WorkflowInfo {
        dir: dir.clone(),
        path,
        text,
        parsed,
        model,
        graph: std::sync::OnceLock::new(),
        loads: std::sync::OnceLock::new(),
    }
}

/// What one check run shares between files: the file access, the workflow cache and the
/// workspace's workflow slugs per root (listed once per run).
struct Ctx<'a> {
    fs: &'a dyn FileAccess,
    cache: &'a WorkflowCache,
    slugs: std::cell::RefCell<BTreeMap<String, Vec<String>>>,
}

impl<'a> Ctx<'a> {
    fn new(fs: &'a dyn FileAccess, cache: &'a WorkflowCache) -> Self {
        Self {
            fs,
            cache,
            slugs: std::cell::RefCell::new(BTreeMap::new()),
        }
    }

    fn workflow_slugs(&self, root: &str) -> Vec<String> {
        if let Some(s) = self.slugs.borrow().get(root) {
            return s.clone();
        }
        let list: Vec<String> = workspace::discover_workflows(self.fs, root)
            .into_iter()
            .map(|w| w.slug)
            .collect();
        self.slugs
            .borrow_mut()
            .insert(root.to_owned(), list.clone());
        list
    }
}

/// The bound (bytes) a workspace document (a case, `workflow.yaml`, an agent script,
/// `WORKFLOW.md`) is read with: [`crate::yaml::MAX_BYTES`], 8 MiB. A larger file is refused
/// by its size before it is read (`WFX008`), so `check` never holds more of it.
pub const DOC_MAX_BYTES: u64 = crate::yaml::MAX_BYTES as u64;

/// The bound (bytes) a hook or skill script is read with: 1 MiB. A larger script is refused by
/// its size before it is read: `WFX504` in `check` and the editor, a failed hook in a run,
/// so its syntax check (seconds and hundreds of megabytes for a 64 MiB script) never
/// happens (bounded work, docs/security.md).
pub const MAX_SCRIPT_BYTES: u64 = 1024 * 1024;

/// The bound (bytes) `check`, the server and a run read a file of `kind` with: a cassette
/// [`crate::cassette::MAX_BYTES`] (16 MiB, the runner's `disk::MAX_FILE_BYTES` is the same
/// constant), any other document [`DOC_MAX_BYTES`] (8 MiB). One bound per kind, so `check`
/// never refuses (`WFX008`) a cassette that `test` replays (third break-it pass, F7).
pub fn max_bytes_of(kind: &FileKind) -> u64 {
    match kind {
        FileKind::Cassette(_) => crate::cassette::MAX_BYTES as u64,
        _ => DOC_MAX_BYTES,
    }
}

/// Reads a file as text, turning failures into a diagnostic at the top of the file. A file
/// over its kind's bound ([`max_bytes_of`]) is refused by its size before it is read
/// (`WFX008`).
fn read(fs: &dyn FileAccess, path: &str) -> Result<String, Diagnostic> {
    match fs.read_max(path, max_bytes_of(&workspace::classify(path))) {
        Ok(bytes) => crate::text::decode_vec(bytes).map_err(|at| {
            Diagnostic::new(
                &diagnostics::INVALID_UTF8,
                path,
                TextRange::new(at, at + 1),
                format!("the file is not valid UTF-8 (first invalid byte at offset {at})"),
            )
        }),
        Err(FileError::NotFound) => Err(Diagnostic::new(
            &diagnostics::UNREADABLE_FILE,
            path,
            TextRange::empty(0),
            "the file does not exist",
        )),
        Err(FileError::Other(why)) => Err(Diagnostic::new(
            &diagnostics::UNREADABLE_FILE,
            path,
            TextRange::empty(0),
            format!("cannot read the file: {why}"),
        )),
        Err(FileError::OutsideWorkspace) => Err(Diagnostic::new(
            &diagnostics::LINK_OUTSIDE_WORKSPACE,
            path,
            TextRange::empty(0),
            format!("`{path}` is a symbolic link that leaves the workspace; it was not read"),
        )),
        Err(e @ FileError::HardLink { .. }) => Err(Diagnostic::new(
            &diagnostics::HARD_LINK,
            path,
            TextRange::empty(0),
            e.to_string(),
        )),
        Err(FileError::TooLarge { bytes, limit }) => Err(Diagnostic::new(
            &diagnostics::FILE_TOO_LARGE,
            path,
            TextRange::empty(0),
            format!(
                "the file is {bytes} bytes, over the {} bound of a workspace file; it was not read",
                crate::files::human_bytes(limit)
            ),
        )),
    }
}

/// Diagnostics of one file, cross-file rules included. Files that are not a workflow spec,
/// a case, an agent script or `WORKFLOW.md` get none. `path` is workspace-relative.
pub fn check_file(fs: &dyn FileAccess, path: &str) -> Vec<Diagnostic> {
    let cache = WorkflowCache::for_run();
    check_file_in(&Ctx::new(fs, &cache), path)
}

fn check_file_in(ctx: &Ctx<'_>, path: &str) -> Vec<Diagnostic> {
    let fs = ctx.fs;
    let mut out = match workspace::classify(path) {
        FileKind::Other => match read(fs, path) {
            Err(d) => vec![d],
            Ok(_) => Vec::new(),
        },
        _ => check_file_inner(ctx, path),
    };
    out.retain(|d| d.file == path);
    sort_diagnostics(&mut out);
    out
}

/// Diagnostics of one file's given text (an editor buffer), cross-file rules included.
pub fn check_text(fs: &dyn FileAccess, path: &str, text: &str) -> Vec<Diagnostic> {
    check_text_cached(fs, &WorkflowCache::new(), path, text)
}

/// [`check_text`] with a long-lived [`WorkflowCache`] (the server's), so a keystroke in a
/// case does not re-parse its unchanged `workflow.yaml`.
pub fn check_text_cached(
    fs: &dyn FileAccess,
    cache: &WorkflowCache,
    path: &str,
    text: &str,
) -> Vec<Diagnostic> {
    let ctx = Ctx::new(fs, cache);
    let mut out = check_kind(&ctx, path, text, None, &workspace::classify(path));
    out.retain(|d| d.file == path);
    sort_diagnostics(&mut out);
    out
}

fn check_file_inner(ctx: &Ctx<'_>, path: &str) -> Vec<Diagnostic> {
    let kind = workspace::classify(path);
    if kind == FileKind::Other {
        return Vec::new();
    }
    match read(ctx.fs, path) {
        Err(d) => vec![d],
        Ok(text) => check_kind(ctx, path, &text, None, &kind),
    }
}

/// [`check_text_cached`] when the caller already holds the text's parse (`parsed` must be
/// `yaml::parse(text)`): the server parses each document version once and shares the tree
/// between its diagnostics and its IDE requests.
pub fn check_parsed(
    fs: &dyn FileAccess,
    cache: &WorkflowCache,
    path: &str,
    text: &str,
    parsed: &Parsed,
) -> Vec<Diagnostic> {
    check_parsed_in(&Ctx::new(fs, cache), path, text, parsed)
}

fn check_parsed_in(ctx: &Ctx<'_>, path: &str, text: &str, parsed: &Parsed) -> Vec<Diagnostic> {
    let mut out = check_kind(ctx, path, text, Some(parsed), &workspace::classify(path));
    out.retain(|d| d.file == path);
    sort_diagnostics(&mut out);
    out
}

/// Reports YAML-level problems of `parsed` into `out`; returns the document root when the
/// document rules may run (no syntax error; an empty stream reads as `null`).
fn report_parse<'p>(path: &str, parsed: &'p Parsed, out: &mut Vec<Diagnostic>) -> Option<&'p Node> {
    out.extend(rules::yaml::check(path, parsed));
    if parsed.has_syntax_error() {
        return None;
    }
    Some(parsed.documents.first().unwrap_or(&NULL_ROOT))
}

/// The root of an empty stream.
static NULL_ROOT: Node = Node {
    value: yaml::Value::Null,
    range: TextRange { start: 0, end: 0 },
};

fn check_kind(
    ctx: &Ctx<'_>,
    path: &str,
    text: &str,
    parsed: Option<&Parsed>,
    kind: &FileKind,
) -> Vec<Diagnostic> {
    let fs = ctx.fs;
    // One near-miss budget per file (bounded work; `rules::case::MAX_SUGGEST_WORK`).
    let _budget = rules::case::SuggestBudget::arm();
    // And one brace-expansion budget (`glob::MAX_FILE_GLOB_CHARS`).
    let _globs = crate::glob::GlobBudget::arm();
    let mut out = Vec::new();
    let owned;
    let parsed = match (parsed, kind) {
        (Some(p), _) => p,
        (None, FileKind::Other | FileKind::WorkflowMd(_) | FileKind::Cassette(_)) => {
            &Parsed::default()
        }
        (None, _) => {
            owned = yaml::parse(text);
            &owned
        }
    };
    match kind {
        FileKind::Other => {}
        FileKind::WorkflowMd(_) => out.extend(rules::workflow::check_workflow_md(path, text)),
        FileKind::Cassette(dir) => out.extend(rules::cassette::check_document(fs, dir, path, text)),
        FileKind::Workflow(dir) => {
            let root = report_parse(path, parsed, &mut out);
            if let Some(root) = root {
                let doc = rules::workflow::check_document(path, root);
                let usable = !root.is_null() && root.as_map().is_some();
                out.extend(doc);
                if usable {
                    let model = Workflow::from_node(root);
                    out.extend(rules::workflow_cross::check_workflow(
                        fs,
                        dir,
                        path,
                        &model,
                        ctx.cache.skills.as_ref(),
                    ));
                }
            }
        }
        FileKind::Case(dir) => {
            let root = report_parse(path, parsed, &mut out);
            if let Some(root) = root {
                let doc = rules::case::check_document(path, root);
                let parses = doc
                    .iter()
                    .all(|d| d.severity != diagnostics::Severity::Error);
                out.extend(doc);
                if root.as_map().is_some() {
                    let case = crate::model::case::Case::from_node(root);
                    let wf = ctx.cache.load(fs, dir);
                    let case_ctx = rules::case_cross::CaseContext {
                        fs,
                        dir,
                        workflow: wf.as_deref(),
                        workflow_slugs: ctx.workflow_slugs(&dir.root),
                        document_parses: parses,
                    };
                    out.extend(rules::case_cross::check_case(&case_ctx, path, &case));
                }
            }
        }
        FileKind::AgentScript(dir) => {
            let root = report_parse(path, parsed, &mut out);
            if let Some(root) = root {
                let wf = ctx.cache.load(fs, dir);
                let doc = rules::agent::check_document(
                    path,
                    root,
                    wf.as_deref().and_then(|w| w.model.as_ref()),
                );
                // A transition the script's advance misses may be one the spec's own
                // errors dropped (`WorkflowInfo::loads`): withheld until the spec loads.
                let graph_known = wf.as_deref().is_none_or(WorkflowInfo::loads);
                out.extend(doc.into_iter().filter(|d| {
                    graph_known || d.code.code != diagnostics::AGENT_ADVANCE_NOT_AN_EDGE.code
                }));
            }
        }
    }
    out
}

/// Diagnostics of a workflow folder: `workflow.yaml` (or its absence), `WORKFLOW.md`, every
/// case and every agent script (FORMAT §D.2).
pub fn check_workflow_dir(fs: &dyn FileAccess, dir: &WorkflowDir) -> Vec<Diagnostic> {
    let cache = WorkflowCache::for_run();
    check_workflow_dir_in(&Ctx::new(fs, &cache), dir)
}

fn check_workflow_dir_in(ctx: &Ctx<'_>, dir: &WorkflowDir) -> Vec<Diagnostic> {
    let budget = crate::files::WalkBudget::for_pass();
    let mut out = run_jobs(ctx.fs, ctx.cache, &workflow_dir_jobs(ctx.fs, dir, &budget));
    sort_diagnostics(&mut out);
    out
}

/// One unit of a check run.
enum Job {
    /// One file's own diagnostics (those on other files dropped), as `check <file>` reports.
    File(String),
    /// A member of a workflow folder: its diagnostics, other files' sites included.
    Member(String),
    /// The folder has no `workflow.yaml`.
    MissingWorkflow(WorkflowDir),
    /// Discovery stopped at a bound (`WFX012` on the folder).
    WalkStop(crate::files::WalkStop),
}

/// The `WFX012` diagnostic of a discovery walk that stopped at a bound
/// ([`crate::files::walk_bounded`]), on the first folder it left unlisted (the diagnostic's
/// file is that folder's workspace-relative path; range empty at 0).
pub fn walk_stop_diagnostic(stop: &crate::files::WalkStop) -> Diagnostic {
    Diagnostic::new(
        &diagnostics::DISCOVERY_BOUND,
        stop.dir.clone(),
        TextRange::empty(0),
        stop.to_string(),
    )
}

/// The jobs of a workflow folder: `workflow.yaml` (or its absence), `WORKFLOW.md`, every
/// case and every agent script (FORMAT §D.2).
fn workflow_dir_jobs(
    fs: &dyn FileAccess,
    dir: &WorkflowDir,
    budget: &crate::files::WalkBudget,
) -> Vec<Job> {
    let mut jobs = Vec::new();
    let spec = dir.spec_path();
    // A `workflow.yaml` that is a link leaving the workspace is checked (and reported as
    // such, WFX010), not taken for a missing file.
    jobs.push(
        if fs.is_file(&spec) || crate::files::leaves_workspace(fs, &spec) {
            Job::Member(spec)
        } else {
            Job::MissingWorkflow(dir.clone())
        },
    );
    let md = join(&dir.dir(), "WORKFLOW.md");
    if fs.is_file(&md) || crate::files::leaves_workspace(fs, &md) {
        jobs.push(Job::Member(md));
    }
    let tests = workspace::discover_test_files_within(fs, dir, budget);
    if let Some(stop) = &tests.stop {
        jobs.push(Job::WalkStop(stop.clone()));
    }
    for f in tests
        .cases
        .into_iter()
        .chain(tests.agent_scripts)
        .chain(tests.cassettes)
    {
        jobs.push(Job::Member(f));
    }
    jobs
}

/// One job's diagnostics. A panic in the checker (a bug) becomes one `WFX901` on the
/// job's file instead of ending the whole run, so the other files are still reported.
fn run_job(ctx: &Ctx<'_>, job: &Job) -> Vec<Diagnostic> {
    let run = || match job {
        Job::File(f) => check_file_in(ctx, f),
        Job::Member(f) => check_file_inner(ctx, f),
        Job::MissingWorkflow(dir) => rules::workflow_cross::missing_workflow(dir),
        Job::WalkStop(stop) => vec![walk_stop_diagnostic(stop)],
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        let file = match job {
            Job::File(f) | Job::Member(f) => f.clone(),
            Job::MissingWorkflow(dir) => dir.spec_path(),
            Job::WalkStop(stop) => stop.dir.clone(),
        };
        vec![Diagnostic::new(
            &diagnostics::INTERNAL_ERROR,
            file,
            TextRange::empty(0),
            format!("the checker failed on this file: {why}"),
        )]
    })
}

/// Fewest jobs worth spreading over threads.
const PARALLEL_MIN_JOBS: usize = 64;

/// Runs `jobs` sharing `cache`: on up to 8 threads (one per available core) when there
/// are at least [`PARALLEL_MIN_JOBS`], else on the calling thread. Each thread takes the
/// next job from a shared counter; the result is unordered (callers sort). A panic in a
/// job is caught by [`run_job`] (one `WFX901`); should a worker thread still die, its
/// panic is resumed on the calling thread.
fn run_jobs(fs: &dyn FileAccess, cache: &WorkflowCache, jobs: &[Job]) -> Vec<Diagnostic> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(8);
    if threads <= 1 || jobs.len() < PARALLEL_MIN_JOBS {
        let ctx = Ctx::new(fs, cache);
        return jobs.iter().flat_map(|j| run_job(&ctx, j)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let ctx = Ctx::new(fs, cache);
                    let mut out = Vec::new();
                    while let Some(job) =
                        jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        out.extend(run_job(&ctx, job));
                    }
                    out
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// Diagnostics of every workflow under `<root>/workflows/`.
pub fn check_workspace(fs: &dyn FileAccess, root: &str) -> Vec<Diagnostic> {
    let budget = crate::files::WalkBudget::for_pass();
    let jobs: Vec<Job> = workspace::discover_workflows(fs, root)
        .iter()
        .flat_map(|wf| workflow_dir_jobs(fs, wf, &budget))
        .collect();
    let mut out = run_jobs(fs, &WorkflowCache::for_run(), &jobs);
    sort_diagnostics(&mut out);
    out
}

/// What a `check` target resolved to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A folder holding `workflows/`.
    Workspace(String),
    /// A workflow folder.
    Workflow(WorkflowDir),
    /// One file.
    File(String),
    /// A folder that is none of these: every workflow-related file below it.
    Folder(String),
}

/// Resolves a workspace-relative path to a [`Target`].
pub fn resolve_target(fs: &dyn FileAccess, path: &str) -> Option<Target> {
    let path = path.trim_end_matches('/');
    let path = if path == "." { "" } else { path };
    // A path that leaves the workspace (a link) is one file target: checking it reports the
    // link (WFX010) without reading it.
    if !path.is_empty() && (fs.is_file(path) || crate::files::leaves_workspace(fs, path)) {
        return Some(Target::File(path.to_owned()));
    }
    let entries = fs.list(path).ok()?;
    if entries.iter().any(|e| e.is_dir && e.name == "workflows") {
        return Some(Target::Workspace(path.to_owned()));
    }
    if entries
        .iter()
        .any(|e| !e.is_dir && e.name == "workflow.yaml")
        && let FileKind::Workflow(dir) = workspace::classify(&join(path, "workflow.yaml"))
    {
        return Some(Target::Workflow(dir));
    }
    Some(Target::Folder(path.to_owned()))
}

/// A path given to [`check_paths`] that is not checked, and why (issue 13: no fail-open
/// path). `path` is workspace-relative; `reason` is one sentence saying what the path is and
/// which layout `check` expects (FORMAT §A.0, §C.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unchecked {
    /// The path as given (workspace-relative).
    pub path: String,
    /// What it is and what was expected.
    pub reason: String,
}

/// The outcome of [`check_paths`].
#[derive(Clone, Debug, Default)]
pub struct PathsCheck {
    /// Every diagnostic, uncapped, sorted by (file, start, code).
    pub diagnostics: Vec<Diagnostic>,
    /// How many files were checked (each counted once). A path in [`Self::unchecked`] is
    /// never counted.
    pub files: usize,
    /// Paths that named no file `check` knows how to check.
    pub unchecked: Vec<Unchecked>,
}

/// The layout `check` expects, for the messages of [`Unchecked`].
const EXPECTED_LAYOUT: &str = "expected `workflows/<slug>/workflow.yaml`, \
`workflows/<slug>/WORKFLOW.md`, or a case (`*.test.yaml`) or agent script (`*.agent.yaml`) \
below `workflows/<slug>/tests/`";

/// Why a file that [`workspace::classify`] calls `Other` is not checked.
fn unchecked_file_reason(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let what = if workspace::is_case_name(name) {
        "a case file outside the `workflows/<slug>/tests/` layout, which archmax never runs"
    } else if name.ends_with(".agent.yaml") {
        "an agent script outside the `workflows/<slug>/tests/` layout"
    } else if name == "workflow.yaml" {
        "a `workflow.yaml` that is not at `workflows/<slug>/workflow.yaml`"
    } else {
        "not a workflow file, case, agent script or `WORKFLOW.md`"
    };
    format!("{what}; {EXPECTED_LAYOUT}")
}

/// Diagnostics of `check` targets (workspace roots, workflow folders, other folders, files);
/// `Err` names a path that does not exist. A file that is none of the kinds `check` knows,
/// and a folder with none of them below it, are returned in [`PathsCheck::unchecked`] and
/// not counted, so no caller can report "no problems" for them.
pub fn check_paths(fs: &dyn FileAccess, paths: &[String]) -> Result<PathsCheck, String> {
    let cache = WorkflowCache::for_run();
    // One walk budget for the whole run (docs/security.md, F2).
    let budget = crate::files::WalkBudget::for_pass();
    let mut jobs = Vec::new();
    let mut files = std::collections::BTreeSet::new();
    let mut unchecked = Vec::new();
    for p in paths {
        let target = resolve_target(fs, p).ok_or_else(|| format!("no such file or folder: {p}"))?;
        let jobs_before = jobs.len();
        let dirs: Vec<WorkflowDir> = match &target {
            Target::Workspace(root) => workspace::discover_workflows(fs, root),
            Target::Workflow(d) => vec![d.clone()],
            Target::File(f) => {
                // A link leaving the workspace (a file or a folder, whatever its name) is
                // checked, which reports it on the link (WFX010) without reading it.
                if workspace::classify(f) == FileKind::Other
                    && !crate::files::leaves_workspace(fs, f)
                {
                    unchecked.push(Unchecked {
                        path: f.clone(),
                        reason: unchecked_file_reason(f),
                    });
                } else {
                    files.insert(f.clone());
                    jobs.push(Job::File(f.clone()));
                }
                Vec::new()
            }
            Target::Folder(dir) => {
                let found = crate::files::walk_within(fs, dir, &budget);
                if let Some(stop) = found.stop {
                    jobs.push(Job::WalkStop(stop));
                }
                for f in found.files {
                    if workspace::classify(&f) != FileKind::Other {
                        files.insert(f.clone());
                        jobs.push(Job::File(f));
                    }
                }
                Vec::new()
            }
        };
        for d in dirs {
            for job in workflow_dir_jobs(fs, &d, &budget) {
                match &job {
                    Job::Member(f) if !f.ends_with("/WORKFLOW.md") => {
                        files.insert(f.clone());
                    }
                    Job::MissingWorkflow(d) => {
                        files.insert(d.spec_path());
                    }
                    _ => {}
                }
                jobs.push(job);
            }
        }
        if jobs.len() == jobs_before && !matches!(target, Target::File(_)) {
            unchecked.push(Unchecked {
                path: if p.is_empty() {
                    ".".to_owned()
                } else {
                    p.clone()
                },
                reason: format!("a folder with no workflow files below it; {EXPECTED_LAYOUT}"),
            });
        }
    }
    let mut diagnostics = run_jobs(fs, &cache, &jobs);
    sort_diagnostics(&mut diagnostics);
    Ok(PathsCheck {
        diagnostics,
        files: files.len(),
        unchecked,
    })
}
