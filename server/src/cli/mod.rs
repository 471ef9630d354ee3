//! The command line's non-protocol commands: `check` (resolve paths, run the one check
//! pipeline of `wfx-schemas`, render, apply `--fix`, map the outcome to an exit code) and
//! the `test` hand-off to `wfx-runner`. Everything writes to the `Write`s it is given, so
//! tests drive it in memory; only `main.rs` passes the real stdout.
//!
//! Path arguments: each argument (`.`, `ws`, `../ws/workflows/a`, an absolute path) is
//! read through a [`DiskFiles`] confined to its workspace root (the folder above its
//! `workflows/`), found from the path as written (`.` and `..` applied to the text, the
//! final name not resolved), and shown relative to the current folder. So an argument that
//! is a symbolic link leaving the workspace is reported as a link (`WFX010`, on the link's
//! path) and never read; its target's folder never becomes a workspace ("confinement").

#![allow(clippy::print_stdout, reason = "the CLI owns stdout")]

pub mod graph;
pub mod render;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

use wfx_schemas::check::check_paths;
use wfx_schemas::diagnostics::{Diagnostic, Related, TextEdit, cap_per_file};
use wfx_schemas::files::FileAccess;
use wfx_schemas::inert::inert;

use render::Report;
use wfx_runner::disk::DiskFiles;
use wfx_runner::shown::{lexical_absolute, relative_prefix};

/// Output formats of `check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Code frames and a summary line.
    #[default]
    Human,
    /// One JSON document (see [`render::json`]).
    Json,
    /// GitHub Actions workflow commands.
    Github,
    /// SARIF 2.1.0.
    Sarif,
}

/// Options of `wfx-lsp check [PATH...] [--format …] [--fix]`.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// Workspace roots, workflow folders or files; empty means `.`.
    pub paths: Vec<String>,
    /// Output format.
    pub format: Format,
    /// Apply the diagnostics' first fixes before reporting.
    pub fix: bool,
    /// Colour the human output.
    pub color: bool,
    /// Each path stands for every file of the workflow it belongs to
    /// (`workflows/<slug>/…` → `workflows/<slug>`): the pre-commit hook's mode, so a change
    /// to `workflow.yaml` or a fixture rechecks the unchanged cases it can break.
    pub whole_workflows: bool,
}

/// Exit code: no error-severity diagnostic (warnings allowed).
pub const EXIT_OK: i32 = 0;
/// Exit code: at least one error-severity diagnostic.
pub const EXIT_FINDINGS: i32 = 1;
/// Exit code: usage or IO error (e.g. a path that does not exist).
pub const EXIT_USAGE: i32 = 2;

/// One group of arguments read through one workspace root.
#[derive(Debug)]
struct Group {
    fs: DiskFiles,
    /// Prepended to workspace-relative paths for display: the root as seen from the
    /// current folder (`""`, `"ws/"`, `"../../"` or an absolute `"/…/"`).
    prefix: String,
    /// Workspace-relative targets (`.` for the root itself).
    paths: Vec<String>,
}

/// Normalises a relative argument: drops `./` prefixes and trailing `/`; `""` → `.`.
fn normalize_relative(arg: &str) -> String {
    let mut s = arg.replace('\\', "/");
    while let Some(rest) = s.strip_prefix("./") {
        s = rest.to_owned();
    }
    while s.contains("//") {
        s = s.replace("//", "/");
    }
    let s = s.trim_end_matches('/');
    if s.is_empty() {
        ".".to_owned()
    } else {
        s.to_owned()
    }
}

/// The workspace root of a canonical path: the parent of its nearest `workflows` ancestor
/// (the path itself counts), else the path itself when it is a folder holding `workflows/`,
/// else the path (a folder) or its parent (a file). Rules such as "which workflow is this
/// case of" need paths relative to that root, whatever folder `check` was started in.
fn workspace_root(path: &Path) -> std::path::PathBuf {
    for anc in path.ancestors() {
        if anc.file_name().is_some_and(|n| n == "workflows")
            && let Some(parent) = anc.parent()
        {
            return parent.to_path_buf();
        }
    }
    if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent()
            .map_or_else(|| path.to_path_buf(), Path::to_path_buf)
    }
}

/// `workflows/<slug>` for a workspace-relative path at or below a workflow folder, else the
/// path unchanged (`check --whole-workflows`).
fn workflow_of(rel: &str) -> String {
    let segs: Vec<&str> = rel.split('/').collect();
    match segs.iter().rposition(|s| *s == "workflows") {
        Some(w) if segs.get(w + 1).is_some_and(|s| !s.is_empty()) => segs[..w + 2].join("/"),
        _ => rel.to_owned(),
    }
}

/// Groups the arguments by workspace root. `Err` names an argument that does not exist.
/// An argument below the current folder whose workspace root is reached through a
/// symbolic link leaving it (`foo -> /elsewhere`, then `check foo/workflows/x`) is not
/// read: it goes to `refused` as (display path, reason) ("confinement", docs/security.md).
/// Absolute paths and paths climbing out with `..` name their folder explicitly and are
/// taken as given.
fn groups(
    paths: &[String],
    cwd: &Path,
    refused: &mut Vec<(String, String)>,
) -> Result<Vec<Group>, String> {
    let paths: Vec<String> = if paths.is_empty() {
        vec![".".to_owned()]
    } else {
        paths.to_vec()
    };
    let cwd_abs = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let mut by_root: BTreeMap<std::path::PathBuf, Vec<String>> = BTreeMap::new();
    for p in paths {
        let given = if p.starts_with('/') {
            p.clone()
        } else {
            normalize_relative(&p)
        };
        // Lexical: the argument's own name is never resolved, so a link stays a link (and
        // is judged by the confined layer of its workspace).
        let abs = lexical_absolute(&cwd_abs, Path::new(&given));
        if std::fs::symlink_metadata(&abs).is_err() {
            return Err(format!("no such file or folder: {given}"));
        }
        let root = workspace_root(&abs);
        if wfx_runner::disk::root_escapes_through_link(&cwd_abs, &root) {
            refused.push((
                given.clone(),
                wfx_runner::disk::ROOT_LINK_REFUSED.to_owned(),
            ));
            continue;
        }
        let rel = abs
            .strip_prefix(&root)
            .map(|r| r.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        let rel = if rel.is_empty() { ".".to_owned() } else { rel };
        by_root.entry(root).or_default().push(rel);
    }
    Ok(by_root
        .into_iter()
        .map(|(root, paths)| Group {
            prefix: relative_prefix(&root, &cwd_abs),
            fs: DiskFiles::new(root),
            paths,
        })
        .collect())
}

fn display(prefix: &str, file: &str) -> String {
    format!("{prefix}{file}")
}

/// The most text (bytes, all files together) a `check` report keeps for its code frames:
/// 64 MiB. Past it a file's diagnostics are shown without a frame ("bounded work": a
/// report on many large files holds at most this much of them).
pub const MAX_FRAME_TEXT_BYTES: u64 = 64 * 1024 * 1024;

/// Text of a file for rendering: BOM stripped, invalid UTF-8 replaced (offsets before the
/// first invalid byte are unchanged, which is where the WFX006 diagnostic points). `None`
/// for a file over `budget` bytes (what is left of [`MAX_FRAME_TEXT_BYTES`]) or over the
/// bound of its kind (`check::max_bytes_of`: 16 MiB a cassette, 8 MiB any other document),
/// which is refused by its size, never read.
fn load_text(fs: &dyn FileAccess, path: &str, budget: u64) -> Option<String> {
    let kind = wfx_schemas::workspace::classify(path);
    let bound = budget.min(wfx_schemas::check::max_bytes_of(&kind));
    let bytes = fs.read_max(path, bound).ok()?;
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// Runs every group; `Err` is a usage/IO message.
fn run_groups(groups: &[Group]) -> Result<Report, String> {
    let mut report = Report::default();
    let mut frame_budget = MAX_FRAME_TEXT_BYTES;
    for g in groups {
        let run = check_paths(&g.fs, &g.paths)?;
        let (mut diags, files) = (run.diagnostics, run.files);
        report
            .unchecked
            .extend(run.unchecked.into_iter().map(|u| match u.path.as_str() {
                "." | "" if !g.prefix.is_empty() => (g.prefix.clone(), u.reason),
                _ => (display(&g.prefix, &u.path), u.reason),
            }));
        // The script checks (WFX502/WFX503), the same function the server calls.
        diags.extend(crate::analysis::script_diagnostics(&g.fs, &g.paths));
        report.files += files;
        let mut wanted = BTreeSet::new();
        for d in &diags {
            wanted.insert(d.file.clone());
            wanted.extend(d.related.iter().map(|r| r.file.clone()));
            wanted.extend(
                d.fixes
                    .iter()
                    .flat_map(|f| f.edits.iter().map(|e| e.file.clone())),
            );
        }
        for f in wanted {
            if let Some(t) = load_text(&g.fs, &f, frame_budget) {
                frame_budget = frame_budget.saturating_sub(t.len() as u64);
                let t = if wfx_schemas::cassette::is_cassette_name(&f) {
                    wfx_schemas::rules::cassette::mask_key_shaped(&t)
                } else {
                    t
                };
                report.texts.insert(display(&g.prefix, &f), t);
            }
        }
        report.diagnostics.extend(diags.into_iter().map(|mut d| {
            d.file = display(&g.prefix, &d.file);
            d.related = d
                .related
                .into_iter()
                .map(|r| Related {
                    file: display(&g.prefix, &r.file),
                    ..r
                })
                .collect();
            for f in &mut d.fixes {
                for e in &mut f.edits {
                    e.file = display(&g.prefix, &e.file);
                }
            }
            d
        }));
    }
    // What is shown is bounded per file (at most 1,000 plus one WFX009); `--fix` works on
    // the complete list (`apply_fixes`).
    cap_per_file(&mut report.diagnostics);
    Ok(report)
}

/// Applies edits to `text`: sorted by range, an edit overlapping an earlier kept one is
/// dropped, out-of-range or non-char-boundary edits are dropped. Returns the new text and
/// how many edits were applied.
pub fn apply_edits(text: &str, edits: &[TextEdit]) -> (String, usize) {
    let mut edits: Vec<&TextEdit> = edits.iter().collect();
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let mut kept: Vec<&TextEdit> = Vec::new();
    let mut last_end = 0u32;
    for e in edits {
        let ok = text.is_char_boundary(e.range.start as usize)
            && text.is_char_boundary(e.range.end as usize);
        if ok && (kept.is_empty() || e.range.start >= last_end) {
            last_end = e.range.end;
            kept.push(e);
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0usize;
    for e in &kept {
        out.push_str(text.get(at..e.range.start as usize).unwrap_or(""));
        out.push_str(&e.new_text);
        at = e.range.end as usize;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    (out, kept.len())
}

/// The first fix of every diagnostic, grouped by the file each edit touches.
pub fn fix_edits(diags: &[Diagnostic]) -> BTreeMap<String, Vec<TextEdit>> {
    let mut by_file: BTreeMap<String, Vec<TextEdit>> = BTreeMap::new();
    for d in diags {
        if let Some(fix) = d.fixes.first() {
            for e in &fix.edits {
                by_file.entry(e.file.clone()).or_default().push(e.clone());
            }
        }
    }
    by_file
}

/// Applies the first fix of every diagnostic of one group, on disk. Returns the number of
/// edits applied; `Err` names a file that could not be written. Every diagnostic counts,
/// not only the first 1,000 of a file that the report shows.
fn apply_fixes(g: &Group) -> Result<usize, String> {
    let diags = check_paths(&g.fs, &g.paths)?.diagnostics;
    let mut applied = 0;
    for (file, edits) in fix_edits(&diags) {
        let Ok(bytes) = g.fs.read(&file) else {
            continue;
        };
        let bom = bytes.starts_with(b"\xEF\xBB\xBF");
        let Ok(text) = wfx_schemas::text::decode(&bytes) else {
            continue;
        };
        let (new_text, n) = apply_edits(&text, &edits);
        if n == 0 || new_text == text {
            continue;
        }
        let mut out = Vec::with_capacity(new_text.len() + 3);
        if bom {
            out.extend_from_slice(b"\xEF\xBB\xBF");
        }
        out.extend_from_slice(new_text.as_bytes());
        // Confined: a file outside the workspace (through a link) is never written.
        g.fs.write(&file, &out)
            .map_err(|e| format!("cannot write {}: {e}", display(&g.prefix, &file)))?;
        applied += n;
    }
    Ok(applied)
}

/// `wfx-lsp check`: returns the exit code ([`EXIT_OK`], [`EXIT_FINDINGS`], [`EXIT_USAGE`]).
/// Results go to `stdout`, errors and the `--fix` tally to `stderr`.
pub fn run_check(
    opts: &CheckOptions,
    cwd: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let mut refused = Vec::new();
    let mut groups = match groups(&opts.paths, cwd, &mut refused) {
        Ok(g) => g,
        Err(e) => {
            let _ = writeln!(stderr, "error: {}", inert(&e.to_string()));
            return EXIT_USAGE;
        }
    };
    if opts.whole_workflows {
        for g in &mut groups {
            let wide: BTreeSet<String> = g.paths.iter().map(|p| workflow_of(p)).collect();
            g.paths = wide.into_iter().collect();
        }
    }
    if opts.fix {
        let mut total = 0;
        for g in &groups {
            match apply_fixes(g) {
                Ok(n) => total += n,
                Err(e) => {
                    let _ = writeln!(stderr, "error: {}", inert(&e.to_string()));
                    return EXIT_USAGE;
                }
            }
        }
        let _ = writeln!(
            stderr,
            "applied {total} fix{}",
            if total == 1 { "" } else { "es" }
        );
    }
    let report = match run_groups(&groups) {
        Ok(mut r) => {
            r.unchecked.extend(refused);
            r
        }
        Err(e) => {
            let _ = writeln!(stderr, "error: {}", inert(&e.to_string()));
            return EXIT_USAGE;
        }
    };
    // No fail-open path (issue 13): a path that named nothing checkable is said, never
    // counted, and with nothing else checked the run is a usage error.
    let level = if report.files == 0 {
        "error"
    } else {
        "warning"
    };
    for (path, reason) in &report.unchecked {
        let _ = writeln!(
            stderr,
            "{level}: not checked: {}: {}",
            inert(path),
            inert(reason)
        );
    }
    if report.files == 0 {
        let _ = writeln!(
            stderr,
            "error: nothing to check: no workflow.yaml, case, agent script or WORKFLOW.md under {}",
            if opts.paths.is_empty() {
                ".".to_owned()
            } else {
                inert(&opts.paths.join(", ")).into_owned()
            }
        );
        // A machine reader still gets its document: no diagnostics, `unchecked` filled.
        if matches!(opts.format, Format::Json | Format::Sarif) {
            let _ = write_report(opts, &report, stdout, stderr);
        }
        return EXIT_USAGE;
    }
    if let Err(code) = write_report(opts, &report, stdout, stderr) {
        return code;
    }
    if report.errors() > 0 {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

/// Renders `report` in `opts.format` on `stdout`; `Err(EXIT_USAGE)` (said on `stderr`)
/// when it cannot be written.
fn write_report(
    opts: &CheckOptions,
    report: &Report,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<(), i32> {
    let written = match opts.format {
        Format::Human => render::human(report, opts.color, stdout),
        Format::Json => render::json(report, stdout),
        Format::Github => render::github(report, stdout),
        Format::Sarif => render::sarif(report, stdout),
    };
    if let Err(e) = written.and_then(|()| stdout.flush()) {
        let _ = writeln!(
            stderr,
            "error: cannot write the output: {}",
            inert(&e.to_string())
        );
        return Err(EXIT_USAGE);
    }
    Ok(())
}

/// A writer for a command's results on stdout: a write or flush that fails because the
/// reader went away (`BrokenPipe`, EPIPE: `wfx-lsp check --format sarif | head -1`) is
/// taken as done, and every later write is dropped, so the command ends quietly with the
/// exit code it would have had, like other Unix tools, instead of reporting an error.
/// Other errors (a full disk) pass through.
#[derive(Debug)]
pub struct QuietPipe<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> QuietPipe<W> {
    /// Wraps `inner` (the process's stdout).
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            closed: false,
        }
    }

    /// Whether the reader went away (a write hit EPIPE).
    pub fn closed(&self) -> bool {
        self.closed
    }
}

impl<W: Write> Write for QuietPipe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            r => r,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r,
        }
    }
}

/// `wfx-lsp test`: hands the options to the runner (FORMAT §C.4).
pub fn run_test(
    opts: &wfx_runner::cli::TestOptions,
    cwd: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    wfx_runner::cli::run_cli(opts, cwd, stdout, stderr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wfx_schemas::text::TextRange;

    fn edit(start: u32, end: u32, t: &str) -> TextEdit {
        TextEdit {
            file: "f".into(),
            range: TextRange::new(start, end),
            new_text: t.into(),
        }
    }

    #[test]
    fn edits_apply_in_order_and_overlaps_are_dropped() {
        let (out, n) = apply_edits(
            "sned: hi\ntitle: x\n",
            &[edit(9, 14, "name"), edit(0, 4, "send"), edit(2, 6, "zz")],
        );
        assert_eq!(out, "send: hi\nname: x\n");
        assert_eq!(n, 2);
        let (out, n) = apply_edits("é", &[edit(1, 2, "x")]);
        assert_eq!((out.as_str(), n), ("é", 0));
    }

    /// A sink that refuses every write as a closed pipe (or as `kind`).
    struct Refusing(std::io::ErrorKind);

    impl Write for Refusing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(self.0.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Err(self.0.into())
        }
    }

    #[test]
    fn a_closed_pipe_is_quiet_and_other_errors_pass() {
        let mut w = QuietPipe::new(Refusing(std::io::ErrorKind::BrokenPipe));
        assert!(!w.closed());
        assert!(writeln!(w, "first").is_ok());
        assert!(w.closed());
        assert!(w.flush().is_ok());
        let mut w = QuietPipe::new(Refusing(std::io::ErrorKind::StorageFull));
        assert!(writeln!(w, "x").is_err());
        assert!(!w.closed());
    }

    #[test]
    fn whole_workflows_widens_each_path_to_its_workflow_folder() {
        assert_eq!(
            workflow_of("workflows/a/tests/x/c.test.yaml"),
            "workflows/a"
        );
        assert_eq!(
            workflow_of("ws/workflows/a/workflow.yaml"),
            "ws/workflows/a"
        );
        assert_eq!(workflow_of("workflows/a"), "workflows/a");
        assert_eq!(workflow_of("workflows"), "workflows");
        assert_eq!(workflow_of("other/file.yaml"), "other/file.yaml");
    }

    #[test]
    fn arguments_are_normalised_and_grouped_by_workspace_root() {
        assert_eq!(normalize_relative("./ws//workflows/"), "ws/workflows");
        assert_eq!(normalize_relative("./"), ".");
        assert_eq!(normalize_relative("../x"), "../x");
        let tmp = std::env::temp_dir().join(format!("wfx-cli-groups-{}", std::process::id()));
        let tests = tmp.join("ws/workflows/a/tests");
        std::fs::create_dir_all(&tests).unwrap();
        std::fs::write(tests.join("c.test.yaml"), "title: x\n").unwrap();
        // From inside a workflow folder, a case still resolves against the workspace root.
        let g = groups(
            &["tests/c.test.yaml".into(), ".".into()],
            &tmp.join("ws/workflows/a"),
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].prefix, "../../");
        assert_eq!(g[0].paths, ["workflows/a/tests/c.test.yaml", "workflows/a"]);
        let g = groups(&["ws".into()], &tmp, &mut Vec::new()).unwrap();
        assert_eq!(
            (g[0].prefix.as_str(), g[0].paths.clone()),
            ("ws/", vec![".".to_owned()])
        );
        assert!(
            groups(&["nope".into()], &tmp, &mut Vec::new())
                .unwrap_err()
                .contains("nope")
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
