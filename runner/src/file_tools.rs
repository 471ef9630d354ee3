//! The runner's listing and search file tools over the session folder: `ls`, `glob` and
//! `grep` (FORMAT §E.5, the built-in tool names; §B.8 for the session folder).
//!
//! Bounded work (docs/security.md): each answer is built into a [`Capped`] text that stops
//! at the room the session's output cap leaves ([`crate::sim::MAX_SESSION_TOOL_OUTPUT_BYTES`]),
//! so nothing past the cut is ever built (a 60 MB skill file of empty lines once made
//! `grep` build 4.6 GB before the cut). One call visits at most [`MAX_TOOL_WALK_ENTRIES`]
//! files and folders and spends at most [`MAX_TOOL_GLOB_CELLS`] of glob matching work;
//! hitting either ends the answer with a [`LISTING_CUT`] line naming the bound (never a
//! silent cut). The session's output cap then cuts with its own marker.
//!
//! Must not: decide governance (the caller passes which paths are visible), or read
//! anything but through [`SessionFs`].

use wfx_schemas::glob::CompiledGlob;

use crate::session_fs::{FsError, SessionFs};

/// Most files and folders one `glob` or `grep` call visits (both count), and most entries
/// one `ls` looks at: 20,000 (the session's own [`crate::session_fs::MAX_SESSION_ENTRIES`]
/// plus room for the mounted skills). Bounded work: past it the answer ends with a
/// [`LISTING_CUT`] line naming the bound.
pub const MAX_TOOL_WALK_ENTRIES: u64 = 20_000;

/// Most glob matching work one `glob` or `grep` call spends, in dynamic-programme cell
/// updates ([`CompiledGlob::cost`]): 64 Mi (67,108,864), one worst-case match of a glob
/// at its size bound against a path at its length bound. Before it, `glob` was bounded per
/// path only (500 long paths: 129 s). Bounded work: a path whose match would pass it is not
/// matched, and the answer ends with a [`LISTING_CUT`] line naming the bound.
pub const MAX_TOOL_GLOB_CELLS: u64 = 64 * 1024 * 1024;

/// How the line that ends an answer cut by a per-call bound starts; the rest names the
/// bound, e.g. `[listing cut: the call visited the runner's limit of 20000 files and
/// folders]`.
pub const LISTING_CUT: &str = "[listing cut: ";

/// The per-call bounds of the listing tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Files and folders visited ([`MAX_TOOL_WALK_ENTRIES`]).
    pub entries: u64,
    /// Glob matching cells ([`MAX_TOOL_GLOB_CELLS`]).
    pub glob_cells: u64,
}

impl Limits {
    /// The runner's bounds.
    pub const RUNNER: Limits = Limits {
        entries: MAX_TOOL_WALK_ENTRIES,
        glob_cells: MAX_TOOL_GLOB_CELLS,
    };

    fn walk_marker(&self) -> String {
        format!(
            "{LISTING_CUT}the call visited the runner's limit of {} files and folders]",
            self.entries
        )
    }

    fn glob_marker(&self) -> String {
        format!(
            "{LISTING_CUT}the call spent the runner's glob matching budget of {} steps]",
            self.glob_cells
        )
    }
}

/// Text built up to a byte limit: past it, appends are dropped (counted, never built).
#[derive(Debug)]
pub struct Capped {
    text: String,
    limit: usize,
    full: bool,
}

impl Capped {
    /// An empty text that keeps at most `limit + 1` bytes: one byte past the limit, so the
    /// session's cut (`sim::keep_output`) still sees that the answer was longer.
    pub fn new(limit: usize) -> Self {
        Self {
            text: String::new(),
            limit: limit.saturating_add(1),
            full: false,
        }
    }

    /// True once the limit is reached: callers stop producing.
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// Appends `s`, cut at a character boundary at the limit.
    pub fn push(&mut self, s: &str) {
        if self.full {
            return;
        }
        let room = self.limit.saturating_sub(self.text.len());
        if s.len() < room {
            self.text.push_str(s);
            return;
        }
        let mut end = room;
        while end > 0 && !s.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(s.get(..end).unwrap_or_default());
        // Still make the text longer than the limit, whatever the boundary cost.
        while self.text.len() < self.limit {
            self.text.push(' ');
        }
        self.full = true;
    }

    /// Starts a new line (a `\n` unless the text is empty) and appends `s`.
    pub fn line(&mut self, s: &str) {
        if !self.text.is_empty() {
            self.push("\n");
        }
        self.push(s);
    }

    /// The text built.
    pub fn into_string(self) -> String {
        self.text
    }
}

/// What one call did, for tests and the bounds: entries visited, lines scanned, glob cells
/// spent, and which bound ended it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ToolWork {
    /// Files and folders visited (listed or walked).
    pub entries: u64,
    /// File lines `grep` looked at.
    pub lines: u64,
    /// Glob matching cells charged ([`CompiledGlob::cost`]).
    pub glob_cells: u64,
    /// True when the answer reached the output room (the session cut follows).
    pub output_cut: bool,
    /// True when [`MAX_TOOL_WALK_ENTRIES`] ended the call.
    pub walk_cut: bool,
    /// True when [`MAX_TOOL_GLOB_CELLS`] ended the call.
    pub glob_cut: bool,
}

/// An answer and the work it took.
#[derive(Debug)]
pub struct ToolAnswer {
    /// The tool result text (longer than the room when the output cap cut it).
    pub text: String,
    /// The work done.
    pub work: ToolWork,
}

fn finish(mut out: Capped, mut work: ToolWork, limits: &Limits) -> ToolAnswer {
    if work.walk_cut {
        out.line(&limits.walk_marker());
    }
    if work.glob_cut {
        out.line(&limits.glob_marker());
    }
    work.output_cut = out.is_full();
    ToolAnswer {
        text: out.into_string(),
        work,
    }
}

/// Visits files below `base` in sorted order, depth first, calling `each` with each file's
/// session path until it returns `false`. Counts every file and folder listed against
/// `limits.entries` (sets `work.walk_cut` when it stops there).
fn walk(
    fs: &SessionFs<'_>,
    base: &str,
    limits: &Limits,
    work: &mut ToolWork,
    mut each: impl FnMut(&str, &mut ToolWork) -> bool,
) {
    // A stack of listings, each reversed so that `pop` gives sorted order.
    let mut stack = vec![vec![crate::session_fs::Entry {
        path: base.to_owned(),
        is_dir: true,
    }]];
    while let Some(top) = stack.last_mut() {
        let Some(entry) = top.pop() else {
            stack.pop();
            continue;
        };
        if entry.is_dir {
            let mut entries = fs.list(&entry.path).unwrap_or_default();
            let n = entries.len() as u64;
            if work.entries.saturating_add(n) > limits.entries {
                let room = limits.entries.saturating_sub(work.entries);
                entries.truncate(usize::try_from(room).unwrap_or(usize::MAX));
                work.walk_cut = true;
            }
            work.entries = work.entries.saturating_add(entries.len() as u64);
            entries.reverse();
            if work.walk_cut {
                // Visit what was counted, list nothing more.
                for e in entries.into_iter().rev() {
                    if !e.is_dir && !each(&e.path, work) {
                        return;
                    }
                }
                return;
            }
            stack.push(entries);
        } else if !each(&entry.path, work) {
            return;
        }
    }
}

/// Charges one match of `path` to the call's glob budget: `false` (and `work.glob_cut`)
/// when it cannot pay.
fn charge(glob: &CompiledGlob, path: &str, limits: &Limits, work: &mut ToolWork) -> bool {
    let cost = glob.cost(path.chars().count());
    let after = work.glob_cells.saturating_add(cost);
    if after > limits.glob_cells {
        work.glob_cut = true;
        return false;
    }
    work.glob_cells = after;
    true
}

/// `ls`: the entries of folder `path` that `visible` keeps, one a line, folders ending in
/// `/`, built up to `room` bytes.
pub fn ls(
    fs: &SessionFs<'_>,
    path: &str,
    visible: &dyn Fn(&str) -> bool,
    room: usize,
    limits: &Limits,
) -> Result<ToolAnswer, FsError> {
    let entries = fs.list(path)?;
    let mut out = Capped::new(room);
    let mut work = ToolWork::default();
    for e in entries {
        if out.is_full() {
            break;
        }
        if work.entries >= limits.entries {
            work.walk_cut = true;
            break;
        }
        work.entries += 1;
        if !visible(&e.path) {
            continue;
        }
        out.line(&e.path);
        if e.is_dir {
            out.push("/");
        }
    }
    Ok(finish(out, work, limits))
}

/// `glob`: the files below `base` that match `pattern` (joined to `base`) and that
/// `visible` keeps, sorted, one a line, built up to `room` bytes. A glob over a bound lists
/// nothing; a path over the length bound is not listed.
pub fn glob(
    fs: &SessionFs<'_>,
    base: &str,
    pattern: &str,
    visible: &dyn Fn(&str) -> bool,
    room: usize,
    limits: &Limits,
) -> ToolAnswer {
    let mut out = Capped::new(room);
    let mut work = ToolWork::default();
    let Ok(compiled) = CompiledGlob::new(&wfx_schemas::files::join(base, pattern)) else {
        return finish(out, work, limits);
    };
    walk(fs, base, limits, &mut work, |p, work| {
        if !visible(p) {
            return true;
        }
        if !charge(&compiled, p, limits, work) {
            return false;
        }
        if compiled.is_match(p) == Ok(true) {
            out.line(p);
        }
        !out.is_full()
    });
    finish(out, work, limits)
}

/// `grep`: every line containing `pattern` (a plain substring) in the files below `base`
/// that `visible` keeps and whose name matches `filter` (a glob), as `path:line: text`
/// (1-based lines), built up to `room` bytes.
pub fn grep(
    fs: &SessionFs<'_>,
    base: &str,
    pattern: &str,
    filter: Option<&str>,
    visible: &dyn Fn(&str) -> bool,
    room: usize,
    limits: &Limits,
) -> ToolAnswer {
    let mut out = Capped::new(room);
    let mut work = ToolWork::default();
    let filter = match filter.map(CompiledGlob::new) {
        None => None,
        Some(Ok(g)) => Some(g),
        // A filter over a bound matches no file.
        Some(Err(_)) => return finish(out, work, limits),
    };
    walk(fs, base, limits, &mut work, |p, work| {
        if !visible(p) {
            return true;
        }
        if let Some(g) = &filter {
            let name = p.rsplit('/').next().unwrap_or(p);
            if !charge(g, name, limits, work) {
                return false;
            }
            if g.is_match(name) != Ok(true) {
                return true;
            }
        }
        let Ok(text) = fs.read(p) else {
            return true;
        };
        for (i, line) in text.lines().enumerate() {
            work.lines += 1;
            if line.contains(pattern) {
                out.line(p);
                out.push(":");
                out.push(&(i + 1).to_string());
                out.push(": ");
                out.push(line);
                if out.is_full() {
                    return false;
                }
            }
        }
        true
    });
    finish(out, work, limits)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::disk::DiskFiles;
    use crate::sim::{MAX_SESSION_TOOL_OUTPUT_BYTES, OUTPUT_CUT_MARKER, keep_output};

    fn all(_: &str) -> bool {
        true
    }

    const R: &Limits = &Limits::RUNNER;

    /// A workspace in a temporary folder with one skill file of `lines` empty lines.
    fn workspace(lines: usize) -> (tempfile::TempDir, DiskFiles) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("skills/big")).unwrap();
        std::fs::write(dir.path().join("skills/big/SKILL.md"), "\n".repeat(lines)).unwrap();
        let files = DiskFiles::new(dir.path().to_path_buf());
        (dir, files)
    }

    #[test]
    fn grep_over_a_big_file_of_empty_lines_stops_building_at_the_output_cap() {
        // 2,000,000 empty lines: each matches "" and would add ~25 bytes, 50 MB in all.
        let (_dir, w) = workspace(2_000_000);
        let fs = SessionFs::new(&w, "").unwrap();
        let a = grep(
            &fs,
            "skills",
            "",
            None,
            &all,
            MAX_SESSION_TOOL_OUTPUT_BYTES,
            R,
        );
        assert!(a.work.output_cut);
        assert_eq!(a.text.len(), MAX_SESSION_TOOL_OUTPUT_BYTES + 1);
        // Lines stop being scanned at the cut: about 4 MiB / 30 bytes, far below 2,000,000.
        assert!(a.work.lines < 200_000, "{:?}", a.work);
        let kept = keep_output(&mut 0, a.text);
        assert!(kept.ends_with(OUTPUT_CUT_MARKER));
        assert!(kept.starts_with("skills/big/SKILL.md:1: \nskills/big/SKILL.md:2: "));
    }

    #[test]
    fn a_spent_session_cap_builds_nothing() {
        let (_dir, w) = workspace(1000);
        let fs = SessionFs::new(&w, "").unwrap();
        let a = grep(&fs, "", "", None, &all, 0, R);
        assert_eq!(a.text.len(), 1);
        assert_eq!(a.work.lines, 1);
        let mut spent = MAX_SESSION_TOOL_OUTPUT_BYTES;
        assert_eq!(keep_output(&mut spent, a.text), OUTPUT_CUT_MARKER);
        let a = ls(&fs, "", &all, 0, R).unwrap();
        assert!(a.work.output_cut && a.work.entries == 1, "{:?}", a.work);
        let a = glob(&fs, "", "**", &all, 0, R);
        assert!(a.work.output_cut && a.work.glob_cells > 0, "{:?}", a.work);
    }

    #[test]
    fn glob_over_many_long_paths_stops_at_the_call_budget_with_a_marker() {
        let (_dir, w) = workspace(0);
        let fs = SessionFs::new(&w, "").unwrap();
        // 500 files with ~1,000-character paths, and a glob of 50 `**`: each match costs
        // ~50 × 1,000 cells, so a budget of 1 Mi cells covers about twenty.
        let seg = "d".repeat(200);
        let deep = std::iter::repeat_n(seg.as_str(), 5)
            .collect::<Vec<_>>()
            .join("/");
        for i in 0..500 {
            fs.write(&format!("scratchpad/{deep}/f{i:03}"), "").unwrap();
        }
        let small = &Limits {
            entries: MAX_TOOL_WALK_ENTRIES,
            glob_cells: 1024 * 1024,
        };
        let pattern = format!("{}**", "*".repeat(100));
        let a = glob(
            &fs,
            "scratchpad",
            &pattern,
            &all,
            MAX_SESSION_TOOL_OUTPUT_BYTES,
            small,
        );
        assert!(a.work.glob_cut, "{:?}", a.work);
        assert!(a.work.glob_cells <= small.glob_cells);
        assert!(
            a.text.ends_with(
                "[listing cut: the call spent the runner's glob matching budget of 1048576 steps]"
            ),
            "{}",
            a.text
        );
        let listed = a.text.lines().count() - 1;
        assert!((1..50).contains(&listed), "{listed}");
        // The same call within the runner's budget lists all 500.
        let a = glob(
            &fs,
            "scratchpad",
            &pattern,
            &all,
            MAX_SESSION_TOOL_OUTPUT_BYTES,
            R,
        );
        assert!(!a.work.glob_cut && !a.work.walk_cut, "{:?}", a.work);
        assert_eq!(a.text.lines().count(), 500);
        assert!(a.text.lines().next().unwrap().ends_with("/f000"));
        // `grep`'s file-name filter spends the same kind of budget.
        let tiny = &Limits {
            entries: MAX_TOOL_WALK_ENTRIES,
            glob_cells: 10_000,
        };
        let a = grep(&fs, "scratchpad", "x", Some(&pattern), &all, 1000, tiny);
        assert!(
            a.work.glob_cut && a.text.starts_with(LISTING_CUT),
            "{}",
            a.text
        );
    }

    #[test]
    fn a_walk_past_the_entry_bound_ends_with_a_marker() {
        let dir = tempfile::tempdir().unwrap();
        let many = dir.path().join("skills/many");
        std::fs::create_dir_all(&many).unwrap();
        for i in 0..110 {
            std::fs::write(many.join(format!("{i:03}")), "x").unwrap();
        }
        let w = DiskFiles::new(dir.path().to_path_buf());
        let fs = SessionFs::new(&w, "").unwrap();
        let small = &Limits {
            entries: 100,
            glob_cells: MAX_TOOL_GLOB_CELLS,
        };
        let marker = "[listing cut: the call visited the runner's limit of 100 files and folders]";
        let a = grep(&fs, "skills", "zzz", None, &all, 1000, small);
        assert!(a.work.walk_cut, "{:?}", a.work);
        assert_eq!(a.work.entries, 100);
        assert_eq!(a.text, marker);
        let a = glob(
            &fs,
            "skills",
            "**",
            &all,
            MAX_SESSION_TOOL_OUTPUT_BYTES,
            small,
        );
        assert!(a.text.ends_with(marker));
        // `skills/many` itself counts: 99 files listed, then the marker.
        assert_eq!(a.text.lines().count(), 100);
        let a = ls(
            &fs,
            "skills/many",
            &all,
            MAX_SESSION_TOOL_OUTPUT_BYTES,
            small,
        )
        .unwrap();
        assert!(a.text.ends_with(marker));
        // Within the runner's bound nothing is cut.
        let a = glob(&fs, "skills", "**", &all, MAX_SESSION_TOOL_OUTPUT_BYTES, R);
        assert!(!a.text.contains(LISTING_CUT));
        assert_eq!(a.text.lines().count(), 110);
    }

    #[test]
    fn capped_text_cuts_at_a_character_boundary_one_past_the_limit() {
        let mut c = Capped::new(4);
        c.push("ab");
        c.push("ééé");
        assert!(c.is_full());
        let s = c.into_string();
        assert_eq!(s.len(), 5);
        assert!(s.starts_with("abé"));
    }
}
