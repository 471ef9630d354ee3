//! The session folder of one simulated session (FORMAT §B.8, §E.7, §E.10): a fresh
//! temporary directory, deleted when the session ends, with `skills/` and `AGENTS.md`
//! mounted read-only from the workspace (read through `FileAccess`, never copied).
//!
//! Paths are session-relative. A leading `/` means the session root (the agent's virtual
//! filesystem), `.` segments drop, `..` pops and may never climb above the root, and no
//! operation follows a symlink inside the session folder: nothing outside the folder (or,
//! for mounts, outside the workspace's `skills/` and `AGENTS.md`) is ever read or written.
//!
//! Every host operation goes through the one confined layer, [`crate::disk::DiskFiles`],
//! rooted at the session folder ("confinement"; writes are temp-and-rename, "safe writes"),
//! with the stricter rule above on top: no symbolic link inside the folder is crossed at all.
//!
//! Must not: decide governance (that is `governance`), or touch host paths other than the
//! session's own temporary directory.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use wfx_schemas::files::{FileAccess, FileError, join};

use crate::disk::DiskFiles;

/// Where a session path lies: the format crate's one classification (FORMAT §B.8).
pub use wfx_schemas::rules::case_cross::Zone;

/// Normalizes a session path: strips a leading `/`, drops empty and `.` segments, applies
/// `..`. `Err(())` when `..` climbs above the root or the path holds a NUL.
#[allow(clippy::result_unit_err)]
pub fn normalize(path: &str) -> Result<String, ()> {
    if path.contains('\0') {
        return Err(());
    }
    let mut segs: Vec<&str> = Vec::new();
    for s in path.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                segs.pop().ok_or(())?;
            }
            s => segs.push(s),
        }
    }
    Ok(segs.join("/"))
}

/// Classifies a session path (FORMAT §B.8): the format crate's `classify_seed_path`.
pub use wfx_schemas::rules::case_cross::classify_seed_path as classify;

/// A failed file operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FsError {
    /// No such file or folder.
    NotFound(String),
    /// The path climbs above the session root.
    Escapes(String),
    /// The path crosses a symlink inside the session folder.
    Symlink(String),
    /// A write to a read-only zone (mounts, runtime areas).
    ReadOnly(String, Zone),
    /// The write would take the session folder past its cap (the path, the cap in bytes;
    /// [`MAX_SESSION_DISK_BYTES`]).
    Full(String, u64),
    /// The write would create more than [`MAX_SESSION_ENTRIES`] files and folders (the
    /// path, the bound).
    TooManyEntries(String, u64),
    /// Anything else.
    Io(String),
}

impl std::fmt::Display for FsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FsError::NotFound(p) => write!(f, "no such file or folder: {p}"),
            FsError::Escapes(p) => write!(f, "`{p}` is outside the session folder"),
            FsError::Symlink(p) => write!(
                f,
                "`{p}` crosses a symbolic link, which the session folder does not follow"
            ),
            FsError::ReadOnly(p, z) => write!(f, "`{p}` is in the read-only `{}` zone", z.name()),
            FsError::Full(p, cap) => write!(
                f,
                "cannot write `{p}`: the session folder would exceed its cap of {cap} bytes \
                 (its files and run variables together; a runner limit)"
            ),
            FsError::TooManyEntries(p, max) => write!(
                f,
                "cannot write `{p}`: the session folder would hold more than {max} files and \
                 folders (a runner limit)"
            ),
            FsError::Io(m) => f.write_str(m),
        }
    }
}

/// The session error of a confined-layer error on `norm` during `what` (read, write, …).
fn fs_error(norm: &str, what: &str, e: FileError) -> FsError {
    match e {
        FileError::NotFound => FsError::NotFound(norm.to_owned()),
        FileError::OutsideWorkspace => FsError::Escapes(norm.to_owned()),
        e @ (FileError::Other(_) | FileError::TooLarge { .. } | FileError::HardLink { .. }) => {
            FsError::Io(format!("cannot {what} `{norm}`: {e}"))
        }
    }
}

/// One entry of a listing.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    /// Session path.
    pub path: String,
    /// True for a folder.
    pub is_dir: bool,
}

/// Most bytes one session folder may hold: 64 MiB (67,108,864 bytes), counted over the
/// files the session wrote (seeds, tool writes, artifacts) and its run variables
/// ([`SessionFs::hold`]; issue 24). Bounded work: a write that would pass it fails with
/// [`FsError::Full`], which the agent sees as a failed tool call; so does a variable
/// change (`archmax_set_variables` is refused whole).
pub const MAX_SESSION_DISK_BYTES: u64 = 64 * 1024 * 1024;

/// Most files and folders one session may create (each write counts the file if new and
/// every folder it has to create): [`MAX_SESSION_DISK_BYTES`] counts bytes only, so without
/// this, folders and empty files were free (break-it finding: 43,000 folders, 167 MB of a
/// 64 MiB cap, and minutes to remove them). Bounded work: a write past it fails like a write
/// past the byte cap ([`FsError::TooManyEntries`]).
pub const MAX_SESSION_ENTRIES: u64 = 16_384;

/// The host paths of every session folder alive in this process, so that a signal handler
/// can remove them before the process exits ([`remove_live_sessions`]).
static LIVE: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// The session folders alive in this process right now, sorted (for tests and the signal
/// handler).
pub fn live_sessions() -> Vec<PathBuf> {
    LIVE.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .cloned()
        .collect()
}

/// Removes every live session folder from disk and forgets them; returns how many were
/// removed. Safe writes: for a process about to exit on SIGTERM/SIGINT (the `wfx-lsp`
/// binary's handler), so that a killed run leaves no session folder behind. Each folder is
/// tried twice (a write racing the first removal may recreate a file). SIGKILL cannot be
/// caught, so a process killed that way can leave its folders (`wfx-session-*` in the
/// system temp dir).
pub fn remove_live_sessions() -> usize {
    remove_live_sessions_where(|_| true)
}

/// [`remove_live_sessions`] for the folders `pick` selects (tests pick their own).
fn remove_live_sessions_where(pick: impl Fn(&Path) -> bool) -> usize {
    let dirs: Vec<PathBuf> = {
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        let picked: Vec<PathBuf> = live.iter().filter(|d| pick(d)).cloned().collect();
        for d in &picked {
            live.remove(d);
        }
        picked
    };
    let mut removed = 0;
    for d in &dirs {
        let _ = std::fs::remove_dir_all(d);
        if d.exists() {
            let _ = std::fs::remove_dir_all(d);
        }
        if !d.exists() {
            removed += 1;
        }
    }
    removed
}

/// The files of one session. Dropping it removes its folder, also while a panic unwinds
/// and when a run is abandoned on a timeout or a cancellation.
pub struct SessionFs<'w> {
    dir: tempfile::TempDir,
    /// The confined layer over `dir`.
    disk: DiskFiles,
    workspace: &'w dyn FileAccess,
    root: String,
    /// Bytes the session's files hold now (see [`MAX_SESSION_DISK_BYTES`]).
    used: std::cell::Cell<u64>,
    /// Bytes the session holds beside its files under the same bound: its run variables
    /// ([`SessionFs::hold`]).
    held: std::cell::Cell<u64>,
    /// Files and folders the session created (see [`MAX_SESSION_ENTRIES`]).
    entries: std::cell::Cell<u64>,
}

impl Drop for SessionFs<'_> {
    fn drop(&mut self) {
        LIVE.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(self.dir.path());
        // The `TempDir` field removes the folder itself right after this.
    }
}

impl std::fmt::Debug for SessionFs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionFs")
            .field("dir", &self.dir.path())
            .field("root", &self.root)
            .finish()
    }
}

impl<'w> SessionFs<'w> {
    /// A fresh empty session folder under the system temp dir; `workspace` and `root`
    /// (workspace-relative folder holding `skills/` and `AGENTS.md`) back the mounts.
    pub fn new(workspace: &'w dyn FileAccess, root: &str) -> Result<Self, FsError> {
        let dir = tempfile::Builder::new()
            .prefix("wfx-session-")
            .tempdir()
            .map_err(|e| FsError::Io(format!("cannot create the session folder: {e}")))?;
        LIVE.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(dir.path().to_path_buf());
        Ok(Self {
            disk: DiskFiles::new(dir.path()),
            dir,
            workspace,
            root: root.to_owned(),
            used: std::cell::Cell::new(0),
            held: std::cell::Cell::new(0),
            entries: std::cell::Cell::new(0),
        })
    }

    /// The host path of the session folder (for tests and diagnostics only).
    pub fn host_dir(&self) -> &Path {
        self.dir.path()
    }

    fn host_path(&self, norm: &str) -> Result<PathBuf, FsError> {
        let mut p = self.dir.path().to_path_buf();
        for seg in norm.split('/').filter(|s| !s.is_empty()) {
            p.push(seg);
            if let Ok(meta) = std::fs::symlink_metadata(&p)
                && meta.file_type().is_symlink()
            {
                return Err(FsError::Symlink(norm.to_owned()));
            }
        }
        Ok(p)
    }

    fn norm(path: &str) -> Result<String, FsError> {
        normalize(path).map_err(|()| FsError::Escapes(path.to_owned()))
    }

    /// Reads a file as text.
    pub fn read(&self, path: &str) -> Result<String, FsError> {
        let norm = Self::norm(path)?;
        if classify(&norm) == Zone::Authored {
            return self
                .workspace
                .read_text(&join(&self.root, &norm))
                .map_err(|_| FsError::NotFound(norm.clone()));
        }
        let host = self.host_path(&norm)?;
        if host.is_dir() {
            return Err(FsError::Io(format!("`{norm}` is a folder")));
        }
        let bytes = self
            .disk
            .read(&norm)
            .map_err(|e| fs_error(&norm, "read", e))?;
        String::from_utf8(bytes).map_err(|e| FsError::Io(format!("cannot read `{norm}`: {e}")))
    }

    /// True when `path` is an existing file.
    pub fn exists(&self, path: &str) -> bool {
        self.read(path).is_ok()
    }

    /// Writes a file, creating folders. Refuses mounts and runtime zones.
    pub fn write(&self, path: &str, content: &str) -> Result<(), FsError> {
        let norm = Self::norm(path)?;
        match classify(&norm) {
            Zone::Run | Zone::RunOpen => {}
            z => return Err(FsError::ReadOnly(norm, z)),
        }
        let host = self.host_path(&norm)?;
        let old = std::fs::symlink_metadata(&host).map_or(0, |m| m.len());
        let after = self
            .used
            .get()
            .saturating_sub(old)
            .saturating_add(content.len() as u64);
        if after.saturating_add(self.held.get()) > MAX_SESSION_DISK_BYTES {
            return Err(FsError::Full(norm, MAX_SESSION_DISK_BYTES));
        }
        // New entries: the file if it does not exist, and every missing folder above it
        // (each `lstat`; the path's depth is bounded by its length).
        let mut new_entries = u64::from(std::fs::symlink_metadata(&host).is_err());
        let mut up = host.parent();
        while let Some(dir) = up {
            if dir == self.dir.path() || std::fs::symlink_metadata(dir).is_ok() {
                break;
            }
            new_entries += 1;
            up = dir.parent();
        }
        let entries = self.entries.get().saturating_add(new_entries);
        if entries > MAX_SESSION_ENTRIES {
            return Err(FsError::TooManyEntries(norm, MAX_SESSION_ENTRIES));
        }
        if let Some(parent) = host.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| FsError::Io(format!("cannot create folders for `{norm}`: {e}")))?;
            // Re-check: a folder created above must not be a link either.
            self.host_path(&norm)?;
        }
        self.disk
            .write(&norm, content.as_bytes())
            .map_err(|e| fs_error(&norm, "write", e))?;
        self.used.set(after);
        self.entries.set(entries);
        Ok(())
    }

    /// Bytes the session's files hold now (at most [`MAX_SESSION_DISK_BYTES`]).
    pub fn used_bytes(&self) -> u64 {
        self.used.get()
    }

    /// Holds `bytes` beside the files under [`MAX_SESSION_DISK_BYTES`]: the session's run
    /// variables (`crate::variables::Variables::bytes`; the reference keeps them in the
    /// session folder as `variables.json`, FORMAT §E.10), replacing what was held before.
    /// `Err` with the bytes the files hold when files and `bytes` together would pass the
    /// bound; nothing changes then. Later writes count what is held.
    pub fn hold(&self, bytes: u64) -> Result<(), u64> {
        let files = self.used.get();
        if files.saturating_add(bytes) > MAX_SESSION_DISK_BYTES {
            return Err(files);
        }
        self.held.set(bytes);
        Ok(())
    }

    /// Bytes held beside the files ([`SessionFs::hold`]).
    pub fn held_bytes(&self) -> u64 {
        self.held.get()
    }

    /// Removes a file.
    pub fn remove(&self, path: &str) -> Result<(), FsError> {
        let norm = Self::norm(path)?;
        match classify(&norm) {
            Zone::Run | Zone::RunOpen => {}
            z => return Err(FsError::ReadOnly(norm, z)),
        }
        let host = self.host_path(&norm)?;
        let size = std::fs::symlink_metadata(&host).map_or(0, |m| m.len());
        self.disk
            .remove_file(&norm)
            .map_err(|e| fs_error(&norm, "remove", e))?;
        self.used.set(self.used.get().saturating_sub(size));
        Ok(())
    }

    /// Lists a folder: session entries plus, at the root, the mounts. Sorted by path.
    pub fn list(&self, path: &str) -> Result<Vec<Entry>, FsError> {
        let norm = Self::norm(path)?;
        let mut out = Vec::new();
        if classify(&norm) == Zone::Authored {
            let entries = self
                .workspace
                .list(&join(&self.root, &norm))
                .map_err(|_| FsError::NotFound(norm.clone()))?;
            for e in entries {
                out.push(Entry {
                    path: join(&norm, &e.name),
                    is_dir: e.is_dir,
                });
            }
            return Ok(out);
        }
        if norm.is_empty() {
            if self.workspace.list(&join(&self.root, "skills")).is_ok() {
                out.push(Entry {
                    path: "skills".into(),
                    is_dir: true,
                });
            }
            if self.workspace.is_file(&join(&self.root, "AGENTS.md")) {
                out.push(Entry {
                    path: "AGENTS.md".into(),
                    is_dir: false,
                });
            }
        }
        self.host_path(&norm)?;
        match self.disk.list(&norm) {
            Ok(entries) => {
                for e in entries {
                    out.push(Entry {
                        path: join(&norm, &e.name),
                        is_dir: e.is_dir,
                    });
                }
            }
            Err(_) if norm.is_empty() => {}
            Err(_) => return Err(FsError::NotFound(norm)),
        }
        out.sort();
        Ok(out)
    }

    /// Every file below `path`, recursively, sorted (mounts included when they lie below).
    pub fn walk(&self, path: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut todo = vec![path.to_owned()];
        let mut guard = 0;
        while let Some(d) = todo.pop() {
            guard += 1;
            if guard > 10_000 {
                break;
            }
            for e in self.list(&d).unwrap_or_default() {
                if e.is_dir {
                    todo.push(e.path);
                } else {
                    out.push(e.path);
                }
            }
        }
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wfx_schemas::files::MemFiles;

    fn ws() -> MemFiles {
        MemFiles::new()
            .with("skills/a/SKILL.md", "# a")
            .with("AGENTS.md", "persona")
    }

    #[test]
    fn writes_past_the_disk_cap_fail_and_removals_free_room() {
        let w = ws();
        let fs = SessionFs::new(&w, "").unwrap();
        let half = "a".repeat((MAX_SESSION_DISK_BYTES / 2) as usize);
        fs.write("scratchpad/a", &half).unwrap();
        // Overwriting a file counts its new size, not both.
        fs.write("scratchpad/a", &half).unwrap();
        fs.write("scratchpad/b", &half).unwrap();
        assert_eq!(fs.used_bytes(), MAX_SESSION_DISK_BYTES);
        let err = fs.write("scratchpad/c", "x").unwrap_err();
        assert_eq!(
            err,
            FsError::Full("scratchpad/c".into(), MAX_SESSION_DISK_BYTES)
        );
        assert!(err.to_string().contains("cap of 67108864 bytes"), "{err}");
        assert!(!fs.exists("scratchpad/c"));
        fs.remove("scratchpad/a").unwrap();
        fs.write("scratchpad/c", "x").unwrap();
    }

    #[test]
    fn held_variables_and_files_share_the_cap() {
        let w = ws();
        let fs = SessionFs::new(&w, "").unwrap();
        let half = MAX_SESSION_DISK_BYTES / 2;
        fs.write("scratchpad/a", &"a".repeat(half as usize))
            .unwrap();
        // Variables fit beside the files up to the cap, not past it.
        assert_eq!(fs.hold(half + 1), Err(half));
        assert_eq!(fs.held_bytes(), 0, "a refused hold changes nothing");
        fs.hold(half).unwrap();
        // Then the files have no room left.
        let err = fs.write("scratchpad/b", "x").unwrap_err();
        assert_eq!(
            err,
            FsError::Full("scratchpad/b".into(), MAX_SESSION_DISK_BYTES)
        );
        assert!(err.to_string().contains("run variables"), "{err}");
        // Holding less frees it again.
        fs.hold(0).unwrap();
        fs.write("scratchpad/b", "x").unwrap();
    }

    #[test]
    fn folders_and_empty_files_count_against_the_entry_bound() {
        // Break-it finding: folders and empty files cost nothing against the byte cap.
        let w = ws();
        let fs = SessionFs::new(&w, "").unwrap();
        let deep = "d/".repeat(1000);
        let mut i = 0;
        let err = loop {
            match fs.write(&format!("scratchpad/{i}/{deep}f"), "") {
                Ok(()) => i += 1,
                Err(e) => break e,
            }
            assert!(i < 100, "no bound was hit");
        };
        assert!(
            matches!(err, FsError::TooManyEntries(_, MAX_SESSION_ENTRIES)),
            "{err}"
        );
        // 1,002 entries per write (the file, `i/` and 1,000 `d/`): 16 writes fit.
        assert_eq!(i, 16);
        assert_eq!(fs.used_bytes(), 0);
        // Rewriting an existing file creates nothing and still works.
        fs.write(&format!("scratchpad/0/{deep}f"), "x").unwrap();
    }

    #[test]
    fn live_session_folders_are_registered_until_dropped_and_can_be_removed() {
        let w = ws();
        let fs = SessionFs::new(&w, "").unwrap();
        let dir = fs.host_dir().to_path_buf();
        assert!(live_sessions().contains(&dir));
        drop(fs);
        assert!(!live_sessions().contains(&dir));
        assert!(!dir.exists());
        // What a signal handler does: the folders go, though their owners live on.
        let fs = SessionFs::new(&w, "").unwrap();
        fs.write("scratchpad/x", "y").unwrap();
        let dir = fs.host_dir().to_path_buf();
        // (Only this test's folder: other tests of this binary run sessions in parallel.)
        assert_eq!(remove_live_sessions_where(|d| d == dir), 1);
        assert!(!dir.exists());
        assert!(!live_sessions().contains(&dir));
        drop(fs);
    }

    #[test]
    fn a_panic_inside_a_session_removes_its_folder() {
        let w = ws();
        let seen = std::sync::Mutex::new(None);
        let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let fs = SessionFs::new(&w, "").unwrap();
            fs.write("scratchpad/x", "y").unwrap();
            *seen.lock().unwrap() = Some(fs.host_dir().to_path_buf());
            panic!("a bug inside a case");
        }));
        assert!(got.is_err());
        let dir = seen.lock().unwrap().clone().unwrap();
        assert!(!dir.exists());
        assert!(!live_sessions().contains(&dir));
    }

    #[test]
    fn zones_follow_format_b8() {
        assert_eq!(classify("../x"), Zone::Escapes);
        assert_eq!(classify("a/../../x"), Zone::Escapes);
        assert_eq!(classify(""), Zone::Root);
        assert_eq!(classify("/"), Zone::Root);
        assert_eq!(classify("."), Zone::Root);
        assert_eq!(classify("skills/a/x"), Zone::Authored);
        assert_eq!(classify("AGENTS.md"), Zone::Authored);
        assert_eq!(classify("checkpoints/x"), Zone::RunInternal);
        assert_eq!(classify("_specs/x"), Zone::RunInternal);
        assert_eq!(classify("conversation_history/x"), Zone::RunOffload);
        assert_eq!(classify("scratchpad/x"), Zone::RunOpen);
        assert_eq!(classify("trigger.json"), Zone::Run);
        assert_eq!(classify("x/../scratchpad/y"), Zone::RunOpen);
    }

    #[test]
    fn mounts_are_read_only_and_read_through_the_workspace() {
        let w = ws();
        let fs = SessionFs::new(&w, "").unwrap();
        assert_eq!(fs.read("skills/a/SKILL.md").unwrap(), "# a");
        assert_eq!(fs.read("/AGENTS.md").unwrap(), "persona");
        assert_eq!(
            fs.write("skills/a/SKILL.md", "x"),
            Err(FsError::ReadOnly(
                "skills/a/SKILL.md".into(),
                Zone::Authored
            ))
        );
        assert_eq!(
            fs.write("artifacts/x", "x"),
            Err(FsError::ReadOnly("artifacts/x".into(), Zone::RunInternal))
        );
        fs.write("scratchpad/n.txt", "hi").unwrap();
        assert_eq!(
            fs.list("").unwrap(),
            vec![
                Entry {
                    path: "AGENTS.md".into(),
                    is_dir: false
                },
                Entry {
                    path: "scratchpad".into(),
                    is_dir: true
                },
                Entry {
                    path: "skills".into(),
                    is_dir: true
                },
            ]
        );
        assert_eq!(
            fs.walk(""),
            vec!["AGENTS.md", "scratchpad/n.txt", "skills/a/SKILL.md"]
        );
    }

    #[test]
    fn dot_dot_never_leaves_the_session_folder() {
        let w = ws();
        let fs = SessionFs::new(&w, "").unwrap();
        assert!(matches!(
            fs.read("../../etc/passwd"),
            Err(FsError::Escapes(_))
        ));
        assert!(matches!(
            fs.write("scratchpad/../../escape.txt", "x"),
            Err(FsError::Escapes(_))
        ));
        let outside = fs.host_dir().parent().unwrap().join("escape.txt");
        assert!(!outside.exists());
    }

    #[test]
    fn absolute_paths_are_rooted_in_the_session_folder() {
        let w = ws();
        let fs = SessionFs::new(&w, "").unwrap();
        // `/etc/hostname` is the session's own `etc/hostname`, which does not exist.
        assert!(matches!(
            fs.read("/etc/hostname"),
            Err(FsError::NotFound(_))
        ));
        let probe = format!("/tmp/wfx-abs-probe-{}.txt", std::process::id());
        fs.write(&probe, "x").unwrap();
        assert!(!Path::new(&probe).exists());
        assert!(fs.host_dir().join(probe.trim_start_matches('/')).exists());
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_inside_the_session_folder_are_not_followed() {
        let w = ws();
        let fs = SessionFs::new(&w, "").unwrap();
        let target = tempfile::tempdir().unwrap();
        std::fs::write(target.path().join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(target.path(), fs.host_dir().join("link")).unwrap();
        assert_eq!(
            fs.read("link/secret.txt"),
            Err(FsError::Symlink("link/secret.txt".into()))
        );
        assert_eq!(
            fs.write("link/new.txt", "x"),
            Err(FsError::Symlink("link/new.txt".into()))
        );
        assert!(!target.path().join("new.txt").exists());
    }

    #[test]
    fn the_folder_is_deleted_with_the_session() {
        let w = ws();
        let fs = SessionFs::new(&w, "").unwrap();
        let dir = fs.host_dir().to_path_buf();
        assert!(dir.exists());
        drop(fs);
        assert!(!dir.exists());
    }
}
