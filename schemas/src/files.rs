//! File access for the format crate: a small trait to read a file or list a folder, and an
//! in-memory implementation for tests.
//!
//! Paths are workspace-relative, `/`-separated, without a leading `/` (`workflows/x/workflow.yaml`).
//! The crate does no IO except through [`FileAccess`]; the disk implementation lives with
//! the callers (CLI, server, runner) and an editor overlay puts open documents first.

use std::collections::BTreeMap;

/// Why a read or a listing failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileError {
    /// No such file or folder.
    NotFound,
    /// It exists but could not be read; the message says why.
    Other(String),
    /// The path leaves the workspace: an absolute path, a `..` segment, or a symbolic link
    /// (on the path itself or on a folder above it) that resolves outside the workspace
    /// root. Nothing was read or written ("confinement" promise). Callers report it on the
    /// path as given (the link), never on its target.
    OutsideWorkspace,
    /// The file is larger than the bound the caller read it with (`limit`, bytes): it was
    /// refused by its size, before any of it was read (the disk layer decides by `stat`),
    /// so no file can make a reader hold more than its bound ("bounded work",
    /// docs/security.md). `bytes` is the file's size.
    TooLarge {
        /// The file's size in bytes.
        bytes: u64,
        /// The bound it was read with, in bytes.
        limit: u64,
    },
    /// The file is a regular file with more than one hard link (`links`): a hard link can
    /// make a file outside the workspace appear inside it, and git never creates one, so
    /// in a cloned repository it was planted. Refused, never read ("confinement").
    HardLink {
        /// The file's link count.
        links: u64,
    },
}

/// Formats a byte count for a message: whole MiB when it is a multiple of 1 MiB, else bytes
/// (`8 MiB`, `9000000 bytes`).
pub fn human_bytes(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else {
        format!("{n} bytes")
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::NotFound => f.write_str("no such file or folder"),
            FileError::Other(why) => f.write_str(why),
            FileError::OutsideWorkspace => f.write_str(
                "it leads outside the workspace (a symbolic link, an absolute path or `..`); it was not read",
            ),
            FileError::HardLink { links } => write!(
                f,
                "the file has {links} hard links (one may be outside the workspace; git never creates hard links); it was not read"
            ),
            FileError::TooLarge { bytes, limit } => write!(
                f,
                "the file is {bytes} bytes, over the {} bound; it was not read",
                human_bytes(*limit)
            ),
        }
    }
}

/// One entry of a folder listing.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DirEntry {
    /// The entry's name (no `/`).
    pub name: String,
    /// True for a folder.
    pub is_dir: bool,
}

/// Read-only access to a workspace. `Sync`, so a check run can read files from several
/// threads.
pub trait FileAccess: Sync {
    /// The file's bytes.
    fn read(&self, path: &str) -> Result<Vec<u8>, FileError>;
    /// The file's bytes when it holds at most `max_bytes` bytes, else
    /// [`FileError::TooLarge`]. The disk layer decides by the file's size before reading
    /// any of it; this default reads, then compares. Callers pass the bound of what they
    /// read (`yaml::MAX_BYTES` for a YAML document, `check::MAX_SCRIPT_BYTES` for a script).
    fn read_max(&self, path: &str, max_bytes: u64) -> Result<Vec<u8>, FileError> {
        let bytes = self.read(path)?;
        if bytes.len() as u64 > max_bytes {
            return Err(FileError::TooLarge {
                bytes: bytes.len() as u64,
                limit: max_bytes,
            });
        }
        Ok(bytes)
    }
    /// [`Self::read_text`] with the bound of [`Self::read_max`].
    fn read_text_max(&self, path: &str, max_bytes: u64) -> Result<String, FileError> {
        let bytes = self.read_max(path, max_bytes)?;
        crate::text::decode_vec(bytes)
            .map_err(|at| FileError::Other(format!("not valid UTF-8 at byte {at}")))
    }
    /// The folder's entries, sorted by name. A missing folder is `NotFound`.
    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FileError>;
    /// True when `path` is an existing file.
    fn is_file(&self, path: &str) -> bool {
        self.read(path).is_ok()
    }
    /// A stable identity of the real folder `dir` names (on disk: its path after links are
    /// resolved), or `None` when there is no such notion. [`walk`] lists each identity once,
    /// so folder links inside a workspace cannot multiply the work (two links per level to
    /// the next level would otherwise give 2^depth paths).
    fn dir_identity(&self, _dir: &str) -> Option<String> {
        None
    }
    /// The file as document text (BOM stripped). Invalid UTF-8 is an `Other` error naming
    /// the byte offset.
    fn read_text(&self, path: &str) -> Result<String, FileError> {
        let bytes = self.read(path)?;
        crate::text::decode_vec(bytes)
            .map_err(|at| FileError::Other(format!("not valid UTF-8 at byte {at}")))
    }
}

/// An in-memory workspace: a sorted map from path to contents.
#[derive(Clone, Debug, Default)]
pub struct MemFiles {
    files: BTreeMap<String, Vec<u8>>,
}

impl MemFiles {
    /// An empty workspace.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces a file.
    pub fn insert(&mut self, path: impl Into<String>, contents: impl Into<Vec<u8>>) {
        self.files.insert(path.into(), contents.into());
    }

    /// Builder form of [`Self::insert`].
    #[must_use]
    pub fn with(mut self, path: impl Into<String>, contents: impl Into<Vec<u8>>) -> Self {
        self.insert(path, contents);
        self
    }

    /// Every path, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }
}

impl FileAccess for MemFiles {
    fn read(&self, path: &str) -> Result<Vec<u8>, FileError> {
        self.files.get(path).cloned().ok_or(FileError::NotFound)
    }

    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FileError> {
        let prefix = if dir.is_empty() || dir == "." {
            String::new()
        } else {
            format!("{}/", dir.trim_end_matches('/'))
        };
        let mut out = BTreeMap::new();
        for path in self.files.keys() {
            if let Some(rest) = path.strip_prefix(&prefix) {
                match rest.split_once('/') {
                    Some((d, _)) => out.insert(d.to_owned(), true),
                    None => out.insert(rest.to_owned(), false),
                };
            }
        }
        if out.is_empty() {
            return Err(FileError::NotFound);
        }
        Ok(out
            .into_iter()
            .map(|(name, is_dir)| DirEntry { name, is_dir })
            .collect())
    }

    fn is_file(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }
}

/// True when reading `path` is refused because it leaves the workspace
/// ([`FileError::OutsideWorkspace`]): a file that exists as a name (a symbolic link) but
/// may not be read. Callers use it where a missing file would otherwise be assumed, so the
/// link is reported (`WFX010`) instead of being passed over. Reads nothing outside.
pub fn leaves_workspace(fs: &dyn FileAccess, path: &str) -> bool {
    matches!(fs.read(path), Err(FileError::OutsideWorkspace))
}

/// Joins workspace-relative path segments with `/`, ignoring empty ones.
pub fn join(a: &str, b: &str) -> String {
    match (a.trim_end_matches('/'), b.trim_start_matches('/')) {
        ("", b) => b.to_owned(),
        (a, "") => a.to_owned(),
        (a, b) => format!("{a}/{b}"),
    }
}

/// Deepest folder level [`walk_bounded`] enters below the folder it walks: 32. A folder
/// 33 levels below (`tests/1/2/…/33`) is not listed, so a tree 1,000 folders deep costs 32
/// listings, not 1,000 (break-it finding 15: 176 s). No workflow needs more; the reference
/// has no bound, so a case below it is reported (`WFX012`, and `wfx-lsp test` fails the
/// run), never silently left out.
pub const MAX_WALK_DEPTH: usize = 32;

/// Most folder entries (files and folders, as listed) one [`walk_bounded`] visits: 100,000.
/// Past it the walk lists no further folder (`WFX012` names the first one left unlisted).
/// The largest workspace we measure (10,000 cases in one workflow) lists about 20,000.
pub const MAX_WALK_ENTRIES: usize = 100_000;

/// Most folder entries all the walks of one pass visit together: 200,000 ([`WalkBudget`]).
/// One walk lists each real folder once, but a folder that the `tests/` of many workflows
/// link to is walked once per workflow: 300 workflows linking one folder of 99,000 files
/// cost `check` 16.7 CPU s and the server 66 CPU s (docs/security.md, F2). A pass is one
/// `check` run, or the server's index or workspace-diagnostics pass over one root. The
/// largest workspace we measure visits about 20,000 entries, a tenth of it. Each file found
/// may be a case to check (about 6 KB of `check`'s memory each, measured), so the budget
/// also bounds a pass's memory.
pub const MAX_PASS_WALK_ENTRIES: usize = 200_000;

/// The entries the walks of one pass may still visit (at most [`MAX_PASS_WALK_ENTRIES`]),
/// shared by every [`walk_within`] of the pass. Not `Sync`: a pass walks on one thread.
#[derive(Debug)]
pub struct WalkBudget {
    left: std::cell::Cell<usize>,
}

impl WalkBudget {
    /// A fresh budget of [`MAX_PASS_WALK_ENTRIES`] entries for one pass.
    pub fn for_pass() -> WalkBudget {
        WalkBudget::of(MAX_PASS_WALK_ENTRIES)
    }

    /// A budget of `entries` (tests use small ones).
    pub fn of(entries: usize) -> WalkBudget {
        WalkBudget {
            left: std::cell::Cell::new(entries),
        }
    }

    /// Entries still to visit.
    pub fn left(&self) -> usize {
        self.left.get()
    }

    fn spend(&self, entries: usize) {
        self.left.set(self.left.get().saturating_sub(entries));
    }
}

/// Which bound stopped a walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkBound {
    /// A folder lies deeper than [`MAX_WALK_DEPTH`] below the walked folder.
    Depth,
    /// The walk had visited [`MAX_WALK_ENTRIES`] entries.
    Entries,
    /// The walks of the pass had visited [`MAX_PASS_WALK_ENTRIES`] entries together
    /// ([`WalkBudget`]).
    PassEntries,
}

/// Where a bounded walk stopped: the folders it did not list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalkStop {
    /// The first folder (UTF-16 order) the walk did not list, workspace-relative.
    pub dir: String,
    /// How many folders were found but not listed (their own subfolders uncounted).
    pub unlisted: usize,
    /// The bound that stopped it (the depth bound when both did).
    pub bound: WalkBound,
}

impl std::fmt::Display for WalkStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match self.bound {
            WalkBound::Depth => format!("it lies more than {MAX_WALK_DEPTH} folders deep"),
            WalkBound::Entries => {
                format!("the search had already visited {MAX_WALK_ENTRIES} entries")
            }
            WalkBound::PassEntries => format!(
                "the searches of this workspace had already visited {MAX_PASS_WALK_ENTRIES} entries together (a folder linked from several workflows is searched once for each)"
            ),
        };
        let others = match self.unlisted {
            0 | 1 => String::new(),
            n => format!(" (and {} other folders)", n - 1),
        };
        write!(
            f,
            "discovery stopped at `{}`{others}: {why}; the cases, agent scripts, cassettes and skill scripts below it were not found",
            self.dir
        )
    }
}

/// The result of [`walk_bounded`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    /// Every file found, as [`walk`] lists them.
    pub files: Vec<String>,
    /// Set when a bound left folders unlisted.
    pub stop: Option<WalkStop>,
}

/// Lists every file below `dir` recursively, as workspace-relative paths sorted in UTF-16
/// code-unit order (JS `Array.prototype.sort`, FORMAT §C.1). Listing errors are swallowed:
/// a missing folder yields nothing. Each real folder ([`FileAccess::dir_identity`]) is
/// listed once, through the first path the walk reaches it by (bounded work). Bounded as
/// [`walk_bounded`], whose stop it drops.
pub fn walk(fs: &dyn FileAccess, dir: &str) -> Vec<String> {
    walk_bounded(fs, dir).files
}

/// [`walk`], bounded: folders deeper than [`MAX_WALK_DEPTH`] below `dir`, and every folder
/// left once [`MAX_WALK_ENTRIES`] entries were visited, are not listed; [`Walk::stop`]
/// says where (callers report it: `WFX012` in `check` and the editor, a failed run in
/// `wfx-lsp test`). Work: at most `MAX_WALK_ENTRIES` entries and one listing per folder.
pub fn walk_bounded(fs: &dyn FileAccess, dir: &str) -> Walk {
    walk_within(fs, dir, &WalkBudget::of(usize::MAX))
}

/// [`walk_bounded`] within the `budget` of a pass: it also stops (bound
/// [`WalkBound::PassEntries`]) once the pass's walks together visited
/// [`MAX_PASS_WALK_ENTRIES`] entries, and spends what it visits from `budget`.
pub fn walk_within(fs: &dyn FileAccess, dir: &str, budget: &WalkBudget) -> Walk {
    let mut out = Vec::new();
    let mut todo = vec![(dir.trim_matches('/').to_owned(), 0usize)];
    let mut entries = 0usize;
    let mut seen = std::collections::BTreeSet::new();
    let mut unlisted: Vec<(String, WalkBound)> = Vec::new();
    while let Some((d, depth)) = todo.pop() {
        if depth > MAX_WALK_DEPTH {
            unlisted.push((d, WalkBound::Depth));
            continue;
        }
        if entries >= MAX_WALK_ENTRIES {
            unlisted.push((d, WalkBound::Entries));
            continue;
        }
        if budget.left() == 0 {
            unlisted.push((d, WalkBound::PassEntries));
            continue;
        }
        if let Some(id) = fs.dir_identity(&d)
            && !seen.insert(id)
        {
            continue;
        }
        let Ok(list) = fs.list(&d) else { continue };
        entries += list.len();
        budget.spend(list.len());
        for e in list {
            let p = join(&d, &e.name);
            if e.is_dir {
                todo.push((p, depth + 1));
            } else {
                out.push(p);
            }
        }
    }
    sort_utf16(&mut out);
    let bound = [WalkBound::Depth, WalkBound::Entries, WalkBound::PassEntries]
        .into_iter()
        .find(|b| unlisted.iter().any(|(_, u)| u == b))
        .unwrap_or(WalkBound::Entries);
    let count = unlisted.len();
    let stop = unlisted
        .into_iter()
        .filter(|(_, b)| *b == bound)
        .map(|(d, _)| d)
        .min_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()))
        .map(|dir| WalkStop {
            dir,
            unlisted: count,
            bound,
        });
    Walk { files: out, stop }
}

/// Sorts `paths` in UTF-16 code-unit order (JS `Array.prototype.sort`, FORMAT §C.1).
///
/// UTF-16 order differs from UTF-8 byte order (which is code-point order) only between a
/// character above U+FFFF (a surrogate pair, `0xD800..`) and one in U+E000..U+FFFF. When no
/// path holds a character above U+FFFF (no UTF-8 lead byte `0xF0` or above), the two orders
/// agree and the byte comparison is used: on the 10,000-case workspace it is about 25 times
/// cheaper than comparing `encode_utf16` iterators (docs/performance.md, "check cost").
pub fn sort_utf16(paths: &mut [String]) {
    if paths.iter().all(|p| p.bytes().all(|b| b < 0xF0)) {
        paths.sort_unstable();
    } else {
        paths.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` nested folders `t/d/d/…` (depth 1 is `t/d`), with a file `f` at each level in
    /// `levels`.
    fn nested(levels: &[usize]) -> MemFiles {
        let mut fs = MemFiles::new();
        for &l in levels {
            fs.insert(format!("t/{}f", "d/".repeat(l)), "");
        }
        fs
    }

    #[test]
    fn the_walk_stops_below_its_depth_bound_and_says_where() {
        let fs = nested(&[0, 5, MAX_WALK_DEPTH, MAX_WALK_DEPTH + 1, 1_000]);
        let w = walk_bounded(&fs, "t");
        let depth = |n: usize| format!("t/{}f", "d/".repeat(n));
        assert_eq!(
            w.files,
            vec![depth(MAX_WALK_DEPTH), depth(5), depth(0)],
            "files within the bound are found, none below it"
        );
        let stop = w.stop.unwrap();
        assert_eq!(stop.bound, WalkBound::Depth);
        assert_eq!(
            stop.dir,
            format!(
                "t/{}",
                "d/".repeat(MAX_WALK_DEPTH + 1).trim_end_matches('/')
            )
        );
        assert_eq!(stop.unlisted, 1);
        assert!(
            stop.to_string().contains("more than 32 folders deep"),
            "{stop}"
        );
        // Exactly at the bound: nothing is left out.
        assert_eq!(walk_bounded(&nested(&[MAX_WALK_DEPTH]), "t").stop, None);
    }

    /// A counting file layer: how many folders were listed.
    struct Counting<'a>(&'a MemFiles, std::sync::atomic::AtomicUsize);

    impl FileAccess for Counting<'_> {
        fn read(&self, path: &str) -> Result<Vec<u8>, FileError> {
            self.0.read(path)
        }
        fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FileError> {
            self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.0.list(dir)
        }
    }

    #[test]
    fn the_walk_stops_at_its_entry_bound_and_lists_a_deep_tree_up_to_the_bound_only() {
        let mut fs = MemFiles::new();
        for i in 0..MAX_WALK_ENTRIES {
            fs.insert(format!("t/z/{i}"), "");
        }
        fs.insert("t/b/c/x", "");
        let w = walk_bounded(&fs, "t");
        assert_eq!(w.files.len(), MAX_WALK_ENTRIES);
        let stop = w.stop.unwrap();
        // `z` is listed first (the last entry of `t`), which spends the bound: `b` is not.
        assert_eq!((stop.dir.as_str(), stop.bound), ("t/b", WalkBound::Entries));
        assert!(stop.to_string().contains("100000 entries"), "{stop}");
        // 1,000 levels cost 33 listings (depth 0 to 32), not 1,000.
        let deep = nested(&[1_000]);
        let counting = Counting(&deep, 0.into());
        let w = walk_bounded(&counting, "t");
        assert!(w.files.is_empty());
        assert_eq!(counting.1.into_inner(), MAX_WALK_DEPTH + 1);
    }

    /// docs/security.md, F2: the walks of one pass share one budget, so a folder walked
    /// once per workflow (as a folder linked from many workflows is) stops at the budget,
    /// with `WalkBound::PassEntries`, instead of costing every workflow a full listing.
    #[test]
    fn the_walks_of_a_pass_share_one_entry_budget() {
        let mut fs = MemFiles::new();
        for i in 0..10 {
            fs.insert(format!("shared/{i}"), "");
        }
        let budget = WalkBudget::of(25);
        let counting = Counting(&fs, 0.into());
        let walks: Vec<Walk> = (0..5)
            .map(|_| walk_within(&counting, "shared", &budget))
            .collect();
        // Three walks spend 30 ≥ 25 entries; the fourth and fifth list nothing.
        assert_eq!(counting.1.into_inner(), 3);
        for w in &walks[..3] {
            assert_eq!((w.files.len(), w.stop.as_ref()), (10, None));
        }
        for w in &walks[3..] {
            assert!(w.files.is_empty());
            let stop = w.stop.as_ref().unwrap();
            assert_eq!(
                (stop.dir.as_str(), stop.bound),
                ("shared", WalkBound::PassEntries)
            );
            assert!(
                stop.to_string().contains("200000 entries together"),
                "{stop}"
            );
        }
        assert_eq!(budget.left(), 0);
        // A walk on its own (`walk_bounded`) has no pass budget: it never stops here.
        assert_eq!(walk_bounded(&fs, "shared").files.len(), 10);
        assert_eq!(WalkBudget::for_pass().left(), MAX_PASS_WALK_ENTRIES);
    }

    #[test]
    fn mem_files_list_and_walk() {
        let fs = MemFiles::new()
            .with("workflows/a/workflow.yaml", "states: {}")
            .with("workflows/a/tests/x.test.yaml", "")
            .with("workflows/a/tests/sub/y.test.yaml", "");
        let l = fs.list("workflows/a").unwrap();
        assert_eq!(
            l,
            vec![
                DirEntry {
                    name: "tests".into(),
                    is_dir: true
                },
                DirEntry {
                    name: "workflow.yaml".into(),
                    is_dir: false
                }
            ]
        );
        assert_eq!(
            walk(&fs, "workflows/a/tests"),
            vec![
                "workflows/a/tests/sub/y.test.yaml",
                "workflows/a/tests/x.test.yaml"
            ]
        );
        assert!(walk(&fs, "nope").is_empty());
        assert_eq!(fs.list("missing"), Err(FileError::NotFound));
    }

    /// FORMAT §C.1: UTF-16 order, where an astral character (`😀`, a surrogate pair from
    /// 0xD83D) sorts before U+FF5E `～`, although its UTF-8 bytes (0xF0…) sort after.
    #[test]
    fn walk_sorts_in_utf16_order_with_and_without_astral_names() {
        let fs = MemFiles::new()
            .with("t/\u{ff5e}.test.yaml", "")
            .with("t/\u{1f600}.test.yaml", "")
            .with("t/a.test.yaml", "")
            .with("t/\u{e9}.test.yaml", "");
        assert_eq!(
            walk(&fs, "t"),
            vec![
                "t/a.test.yaml",
                "t/\u{e9}.test.yaml",
                "t/\u{1f600}.test.yaml",
                "t/\u{ff5e}.test.yaml",
            ]
        );
        let mut bmp = vec![
            "b/\u{ff5e}".to_owned(),
            "b/\u{e9}".to_owned(),
            "a".to_owned(),
            "b/z".to_owned(),
            "b".to_owned(),
        ];
        sort_utf16(&mut bmp);
        assert_eq!(bmp, ["a", "b", "b/z", "b/\u{e9}", "b/\u{ff5e}"]);
    }
}
