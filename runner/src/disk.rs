//! The one confined file layer: every file `check`, the language server (its overlay's
//! fallback, its runs and its workspace index), `check --fix`, the runner, the reports and
//! `graph` read or write on disk goes through this module ("confinement" and "safe writes"
//! promises, issue 12).
//!
//! # Confinement ([`DiskFiles`])
//! A [`DiskFiles`] is rooted at one workspace folder (the folder above `workflows/`). Paths
//! are workspace-relative and `/`-separated, as everywhere in `wfx-schemas`.
//! * An absolute path, a `..` segment or a NUL byte is refused with
//!   [`FileError::OutsideWorkspace`]: `..` never climbs, `/` never leaves.
//! * Symbolic links are resolved before anything is read, listed or written: a link (on the
//!   file itself or on any folder above it) that resolves outside the root is refused with
//!   [`FileError::OutsideWorkspace`], never a silent `NotFound`, so callers can report the
//!   link by its path (`WFX010`) without ever reading its target. A link that stays inside
//!   the root works as usual. A dangling link is `NotFound`.
//! * A link that resolves to a hidden file or into a hidden folder of the root (a path
//!   segment starting with `.`: `.env`, `.git/config`) counts as leaving it, and is refused
//!   the same way: a repository can commit such a link, and the untracked file it points
//!   to may hold secrets a CI job wrote there (break-it finding 0). Hidden paths named
//!   directly (the runner reads `.env` for `--live`) are not links and are unaffected.
//! * Listings still name a file link that leaves the root (so discovery finds it and
//!   `check` reports it); reading it is what is refused. [`FileAccess::is_file`] is false
//!   for it.
//! * Files over [`MAX_FILE_BYTES`], or over the smaller bound a caller gives
//!   [`FileAccess::read_max`], are refused by their size before any byte is read
//!   ([`FileError::TooLarge`], "bounded work").
//!
//! Cost: the root is canonicalized once; each distinct folder once per `DiskFiles` (a cache
//! shared by its clones), by one `lstat` from its parent's real path unless it is itself a
//! link (then one `realpath`), so resolving a folder `depth` levels down costs `depth`
//! `lstat`s once, not a `realpath` of the whole path per folder (finding 15: 1,000 nested
//! folders took 176 s); each file costs one `lstat`, plus one `realpath` only when the file
//! is itself a link.
//!
//! # Safe writes
//! Nothing here writes through a symbolic link it did not create: [`DiskFiles::write`]
//! (`check --fix`) resolves the path as above (a link inside the workspace is written at its
//! target, one leaving it is refused), then writes a temporary file in the same folder and
//! renames it over the target. [`replace_file`] and [`append_file`] (reports,
//! `history.jsonl`, `graph --out`) do the same in an output folder, so a link planted at
//! the file's name is replaced, not followed, and its target is neither read nor written;
//! [`output_dir`] refuses an output folder that is, or lies below, a symbolic link.
//!
//! Not covered: a hostile process changing the tree while we run (the checks and the
//! operations are separate system calls); the promise is about what the repository holds.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use wfx_schemas::files::{DirEntry, FileAccess, FileError};

/// Files larger than this (bytes) are refused by their size, before any of it is read, with
/// [`FileError::TooLarge`], so no single file can exhaust memory ("bounded work",
/// docs/security.md). 16 MiB: the largest file any format reads, a cassette; it *is*
/// `cassette::MAX_BYTES`, the bound `check` reads cassettes with too; callers reading a smaller kind pass its own bound to
/// [`FileAccess::read_max`] (a YAML document 8 MiB, a hook or skill script 1 MiB).
pub const MAX_FILE_BYTES: u64 = wfx_schemas::cassette::MAX_BYTES as u64;

/// The largest old file [`append_file`] reads to extend (`history.jsonl`), in bytes: 64 MiB.
/// An output file, not a workspace input, so it has its own, larger bound.
pub const MAX_APPEND_BYTES: u64 = 64 * 1024 * 1024;

/// True when the folder symlink `link`, found in the root-relative folder `dir` of the
/// workspace at `root`, leads back to `dir`, to one of the folders `dir` was reached
/// through, or to the root or above it: listing it would walk in a cycle (`tests/loop -> .`
/// repeats every case 40 times, two such links 2^40 times), so [`DiskFiles::list`] leaves
/// it out. A link whose target cannot be resolved counts as a cycle.
pub fn folder_link_cycles(root: &Path, dir: &str, link: &Path) -> bool {
    let Ok(target) = std::fs::canonicalize(link) else {
        return true;
    };
    let mut p = root.to_path_buf();
    if std::fs::canonicalize(&p).is_ok_and(|r| r.starts_with(&target)) {
        return true;
    }
    for seg in dir.split('/').filter(|s| !s.is_empty() && *s != ".") {
        p.push(seg);
        if std::fs::canonicalize(&p).is_ok_and(|c| c == target) {
            return true;
        }
    }
    false
}

/// `Err` unless `meta` is a regular file (bounded work: a named pipe, socket or device in
/// place of a workspace file would block or never end; it is refused, never read).
fn not_regular(meta: &std::fs::Metadata) -> Result<(), FileError> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(FileError::Other(
            "it is not a regular file (a named pipe, socket or device is never read)".into(),
        ))
    }
}

/// `Err` when the regular file `meta` describes has more than one hard link ("confinement":
/// a hard link can make a file outside the workspace, a key or another user's file on the
/// same file system, appear inside it; git never creates one, so in a clone it was planted).
/// The file is refused, never read.
fn hard_links(meta: &std::fs::Metadata) -> Result<(), FileError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.is_file() && meta.nlink() > 1 {
            return Err(FileError::HardLink {
                links: meta.nlink(),
            });
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    Ok(())
}

/// Opens `p` for reading without blocking on a named pipe that has no writer.
fn open_nonblocking(p: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(rustix::fs::OFlags::NONBLOCK.bits().cast_signed());
    }
    o.open(p)
}

/// True when `root`, a folder named below `cwd`, is reached through a symbolic link that
/// leaves `cwd` (`foo -> /elsewhere`, then `check foo/workflows/x`): the command-line face
/// of "confinement" (docs/security.md). Such a root is refused, never read. A root that is
/// not below `cwd` by name (an absolute path, or one climbing out with `..`) was named
/// explicitly and is taken as given.
pub fn root_escapes_through_link(cwd: &Path, root: &Path) -> bool {
    let Ok(cwd) = std::fs::canonicalize(cwd) else {
        return false;
    };
    let lexical = if root.is_absolute() {
        root.to_path_buf()
    } else {
        cwd.join(root)
    };
    let below = lexical
        .components()
        .all(|c| !matches!(c, Component::ParentDir))
        && lexical.starts_with(&cwd);
    below && std::fs::canonicalize(&lexical).is_ok_and(|real| !real.starts_with(&cwd))
}

/// The message of a root refused by [`root_escapes_through_link`].
pub const ROOT_LINK_REFUSED: &str =
    "reached through a symbolic link that leaves the workspace; it was not read";

/// A workspace folder on disk, confined to its root (see the module docs).
#[derive(Clone, Debug)]
pub struct DiskFiles {
    root: PathBuf,
    /// The root with every link resolved; `None` when the root does not exist (then every
    /// read is `NotFound`).
    canonical: Option<PathBuf>,
    /// Root-relative folder → whether it resolves inside the root. Only successful
    /// resolutions are cached.
    dirs: Arc<Mutex<BTreeMap<String, bool>>>,
    /// Root-relative folder → its path with every link resolved (only successful
    /// resolutions are cached). A folder that is not itself a link resolves to its
    /// parent's real path and its name: one `lstat`, not a `realpath` of the whole path,
    /// whose cost grows with the depth (finding 15).
    reals: Arc<Mutex<BTreeMap<String, PathBuf>>>,
}

/// Whether `real` (a canonical path below the canonical root `root`) has a segment below
/// the root that starts with `.` (`.env`, `.git/config`): the target of a link there is
/// refused (see the module docs).
fn hidden_below(root: &Path, real: &Path) -> bool {
    real.strip_prefix(root).is_ok_and(|rel| {
        rel.components()
            .any(|c| c.as_os_str().as_encoded_bytes().first() == Some(&b'.'))
    })
}

fn io_error(e: &std::io::Error) -> FileError {
    if e.kind() == std::io::ErrorKind::NotFound {
        FileError::NotFound
    } else {
        FileError::Other(e.to_string())
    }
}

impl DiskFiles {
    /// Files below `root` (a folder; it need not exist). Canonicalizes `root` once.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let canonical = std::fs::canonicalize(&root).ok();
        Self {
            root,
            canonical,
            dirs: Arc::default(),
            reals: Arc::default(),
        }
    }

    /// The real path (every link resolved) of the root-relative folder `rel` (segments
    /// without `.`, `..` or empty ones), or `None` when it cannot be resolved. Cached; a
    /// folder that is not a link costs one `lstat` once its parent is known, so a walk
    /// down `depth` levels costs `depth` `lstat`s, not `depth²` path resolutions.
    fn real_dir(&self, rel: &str) -> Option<PathBuf> {
        if rel.is_empty() {
            return self.canonical.clone();
        }
        let cached = self
            .reals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(rel)
            .cloned();
        if cached.is_some() {
            return cached;
        }
        let mut p = self.root.clone();
        p.extend(rel.split('/'));
        let (parent, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        let plain = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir());
        let real = if plain {
            self.real_dir(parent).map(|r| r.join(name))
        } else {
            std::fs::canonicalize(&p).ok()
        }?;
        self.reals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(rel.to_owned(), real.clone());
        Some(real)
    }

    /// The root folder, as given.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the root-relative folder `rel` resolves inside the root, and not through a
    /// link into a hidden folder (missing folders count as inside: nothing can be read
    /// through them).
    fn dir_inside(&self, rel: &str, canonical: &Path) -> bool {
        if rel.is_empty() {
            return true;
        }
        let known = self
            .dirs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(rel)
            .copied();
        if let Some(known) = known {
            return known;
        }
        match self.real_dir(rel) {
            Some(real) => {
                let mut lexical = canonical.to_path_buf();
                lexical.extend(rel.split('/'));
                let inside = real.starts_with(canonical)
                    && (real == lexical || !hidden_below(canonical, &real));
                self.dirs
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(rel.to_owned(), inside);
                inside
            }
            None => true,
        }
    }

    /// The OS path of a root-relative path after the confinement checks; a link inside the
    /// root is returned as the link (the OS follows it). Errors: `OutsideWorkspace` (see
    /// the module docs), `NotFound` for a dangling link.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, FileError> {
        if path.starts_with('/')
            || path.starts_with('\\')
            || path.contains('\0')
            || path.split(['/', '\\']).any(|s| s == "..")
            || Path::new(path).has_root()
        {
            return Err(FileError::OutsideWorkspace);
        }
        let segs: Vec<&str> = path
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .collect();
        let mut p = self.root.clone();
        p.extend(&segs);
        let Some(canonical) = &self.canonical else {
            return Ok(p);
        };
        let Some((_, parents)) = segs.split_last() else {
            return Ok(p);
        };
        if !self.dir_inside(&parents.join("/"), canonical) {
            return Err(FileError::OutsideWorkspace);
        }
        if let Ok(meta) = std::fs::symlink_metadata(&p)
            && meta.file_type().is_symlink()
        {
            let real = std::fs::canonicalize(&p).map_err(|e| io_error(&e))?;
            if !real.starts_with(canonical) || hidden_below(canonical, &real) {
                return Err(FileError::OutsideWorkspace);
            }
        }
        Ok(p)
    }

    /// Removes a file (the link itself, when it is one inside the root; a link leaving the
    /// root is `OutsideWorkspace` and stays). Errors as [`FileAccess::read`].
    pub fn remove_file(&self, path: &str) -> Result<(), FileError> {
        let p = self.resolve(path)?;
        std::fs::remove_file(&p).map_err(|e| io_error(&e))
    }

    /// Replaces a file's contents (`check --fix`), confined like a read: a path leaving the
    /// root is `OutsideWorkspace` and nothing is written; a link inside the root is written
    /// at its target (the link stays); otherwise a temporary file in the same folder is
    /// renamed over the file, keeping its permissions ("safe writes").
    pub fn write(&self, path: &str, bytes: &[u8]) -> Result<(), FileError> {
        let p = self.resolve(path)?;
        let target = match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                std::fs::canonicalize(&p).map_err(|e| io_error(&e))?
            }
            _ => p,
        };
        let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(FileError::Other("not a file path".into()));
        };
        replace_file(dir, &name.to_string_lossy(), bytes).map_err(|e| io_error(&e))
    }
}

impl FileAccess for DiskFiles {
    fn dir_identity(&self, dir: &str) -> Option<String> {
        let p = self.resolve(dir).ok()?;
        if self.canonical.is_none() {
            return std::fs::canonicalize(p)
                .ok()
                .map(|c| c.to_string_lossy().into_owned());
        }
        let rel: Vec<&str> = dir
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .collect();
        self.real_dir(&rel.join("/"))
            .map(|c| c.to_string_lossy().into_owned())
    }

    fn read(&self, path: &str) -> Result<Vec<u8>, FileError> {
        self.read_max(path, MAX_FILE_BYTES)
    }

    /// Refuses a file over `max_bytes` (at most [`MAX_FILE_BYTES`]) by its size, before
    /// reading any of it: [`FileError::TooLarge`].
    fn read_max(&self, path: &str, max_bytes: u64) -> Result<Vec<u8>, FileError> {
        let max_bytes = max_bytes.min(MAX_FILE_BYTES);
        let p = self.resolve(path)?;
        let meta = std::fs::metadata(&p).map_err(|e| io_error(&e))?;
        if meta.is_dir() {
            return Err(FileError::Other("it is a folder".into()));
        }
        not_regular(&meta)?;
        hard_links(&meta)?;
        let too_large = |bytes: u64| FileError::TooLarge {
            bytes,
            limit: max_bytes,
        };
        if meta.len() > max_bytes {
            return Err(too_large(meta.len()));
        }
        // Opened without blocking, then checked again on the open file: a named pipe or a
        // device swapped in after the first look is refused instead of hanging the read.
        let file = open_nonblocking(&p).map_err(|e| io_error(&e))?;
        let meta = file.metadata().map_err(|e| io_error(&e))?;
        not_regular(&meta)?;
        hard_links(&meta)?;
        if meta.len() > max_bytes {
            return Err(too_large(meta.len()));
        }
        let mut out = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, max_bytes.saturating_add(1)),
            &mut out,
        )
        .map_err(|e| io_error(&e))?;
        if out.len() as u64 > max_bytes {
            return Err(too_large(out.len() as u64));
        }
        Ok(out)
    }

    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FileError> {
        let p = self.resolve(dir)?;
        let rd = std::fs::read_dir(&p).map_err(|e| io_error(&e))?;
        let mut out = Vec::new();
        for entry in rd.flatten() {
            // A name that is not UTF-8 is listed as Node lists it (invalid bytes as U+FFFD), so
            // a case hiding behind one is discovered and reported unreadable, never skipped.
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
            let is_dir = if is_link {
                std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir())
            } else {
                entry.file_type().is_ok_and(|t| t.is_dir())
            };
            if is_dir && is_link && folder_link_cycles(&self.root, dir, &entry.path()) {
                continue;
            }
            out.push(DirEntry { name, is_dir });
        }
        out.sort();
        Ok(out)
    }

    fn is_file(&self, path: &str) -> bool {
        self.resolve(path)
            .is_ok_and(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file()))
    }
}

/// Writes `bytes` as the file `name` of the folder `dir` without following a link: a
/// temporary file in `dir` is written, flushed and renamed over `dir/name`, so a symbolic
/// link planted at that name is replaced and its target is neither read nor written. An
/// existing regular file keeps its permissions. Errors are the OS's.
pub fn replace_file(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let target = dir.join(name);
    let mode = std::fs::symlink_metadata(&target)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.permissions());
    let mut tmp = tempfile::Builder::new()
        .prefix(".wfx-write-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if let Some(perm) = mode {
        tmp.as_file().set_permissions(perm)?;
    } else {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // A new file gets the usual 0644 rather than the temporary file's 0600.
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))?;
        }
    }
    tmp.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

/// Appends `bytes` to the file `name` of `dir` without writing through a link: the old
/// content is read only when `dir/name` is a regular file (a link or anything else there is
/// not read, and is replaced), then the whole is written with [`replace_file`]. An old file
/// over [`MAX_APPEND_BYTES`] is an error rather than read.
pub fn append_file(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let target = dir.join(name);
    let mut content = match std::fs::symlink_metadata(&target) {
        Ok(m) if m.is_file() => {
            if m.len() > MAX_APPEND_BYTES {
                return Err(std::io::Error::other(format!(
                    "{} is larger than {} MiB; move it away",
                    target.display(),
                    MAX_APPEND_BYTES / (1024 * 1024)
                )));
            }
            std::fs::read(&target)?
        }
        _ => Vec::new(),
    };
    content.extend_from_slice(bytes);
    replace_file(dir, name, &content)
}

/// Prepares the output folder `out` (as given on the command line, relative to `cwd` or
/// absolute) and returns its path: every existing folder it names below `cwd` (for an
/// absolute `out` outside `cwd`, the folder itself) must be a real folder, not a symbolic
/// link, or the call fails with a message naming the link; missing folders are created.
/// Errors are messages for the user.
pub fn output_dir(cwd: &Path, out: &Path) -> Result<PathBuf, String> {
    let full = cwd.join(out);
    let below: Option<&Path> = if out.is_absolute() {
        out.strip_prefix(cwd).ok()
    } else {
        Some(out)
    };
    let refuse = |p: &Path| -> Result<(), String> {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => Err(format!(
                "{} is a symbolic link; the output folder may not be or lie below a link (remove it or choose another folder)",
                p.display()
            )),
            Ok(m) if !m.is_dir() => Err(format!("{} exists and is not a folder", p.display())),
            _ => Ok(()),
        }
    };
    match below {
        Some(rel) => {
            let mut p = cwd.to_path_buf();
            for c in rel.components() {
                match c {
                    Component::CurDir => continue,
                    c => p.push(c),
                }
                if !matches!(c, Component::ParentDir) {
                    refuse(&p)?;
                }
            }
        }
        None => refuse(&full)?,
    }
    std::fs::create_dir_all(&full).map_err(|e| format!("cannot create {}: {e}", full.display()))?;
    // Re-check: nothing may have turned into a link on the way.
    refuse(&full)?;
    Ok(full)
}

/// Writes the output file `path` (as given, relative to `cwd` or absolute; `graph --out`)
/// without following a link: its folder is checked and created as [`output_dir`] does, and
/// the file is written with [`replace_file`]. Errors are messages for the user.
pub fn write_output_file(cwd: &Path, path: &Path, bytes: &[u8]) -> Result<(), String> {
    let Some(name) = path.file_name() else {
        return Err(format!("{} names no file", path.display()));
    };
    let parent = path.parent().unwrap_or(Path::new(""));
    let dir = output_dir(cwd, parent)?;
    replace_file(&dir, &name.to_string_lossy(), bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn folder_symlink_cycles_are_not_listed() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let tests = tmp.path().join("workflows/a/tests");
        std::fs::create_dir_all(tests.join("x")).unwrap();
        std::fs::create_dir_all(tests.join("y")).unwrap();
        std::fs::create_dir_all(tmp.path().join("shared")).unwrap();
        std::fs::write(tests.join("c.test.yaml"), "title: c\n").unwrap();
        std::fs::write(tmp.path().join("shared/s.test.yaml"), "title: s\n").unwrap();
        // Self, parent, above-the-root and mutual cycles; one honest link.
        symlink(".", tests.join("self")).unwrap();
        symlink("..", tests.join("up")).unwrap();
        symlink("/", tests.join("slash")).unwrap();
        symlink("../y", tests.join("x/to-y")).unwrap();
        symlink("../x", tests.join("y/to-x")).unwrap();
        symlink("../../../shared", tests.join("shared")).unwrap();
        let fs = DiskFiles::new(tmp.path());
        let found = wfx_schemas::files::walk(&fs, "workflows/a/tests");
        assert_eq!(
            found,
            [
                "workflows/a/tests/c.test.yaml",
                "workflows/a/tests/shared/s.test.yaml"
            ]
        );
        // The links' own folders still list (a cycle is cut where it closes).
        let x: Vec<String> = fs
            .list("workflows/a/tests/x")
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(x, ["to-y"]);
    }

    #[test]
    fn reads_lists_and_refuses_folders() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("workflows/a")).unwrap();
        std::fs::write(tmp.path().join("workflows/a/workflow.yaml"), "states: {}\n").unwrap();
        let fs = DiskFiles::new(tmp.path());
        assert_eq!(
            fs.read("workflows/a/workflow.yaml").unwrap(),
            b"states: {}\n"
        );
        assert_eq!(
            fs.list("workflows").unwrap(),
            vec![DirEntry {
                name: "a".into(),
                is_dir: true
            }]
        );
        assert_eq!(fs.read("missing.yaml"), Err(FileError::NotFound));
        assert!(matches!(fs.read("workflows"), Err(FileError::Other(_))));
        assert!(fs.is_file("./workflows/a/workflow.yaml"));
        assert!(!fs.is_file("workflows/a"));
    }

    #[test]
    fn refuses_paths_outside_the_root() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("ws");
        std::fs::create_dir_all(root.join("workflows/a")).unwrap();
        std::fs::write(outer.path().join("secret.txt"), "s").unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        let fs = DiskFiles::new(&root);
        assert_eq!(fs.read("a.txt").unwrap(), b"a");
        assert_eq!(fs.read("../secret.txt"), Err(FileError::OutsideWorkspace));
        assert_eq!(
            fs.read("workflows/a/../../../secret.txt"),
            Err(FileError::OutsideWorkspace)
        );
        assert_eq!(
            fs.read(outer.path().join("secret.txt").to_str().unwrap()),
            Err(FileError::OutsideWorkspace)
        );
        assert_eq!(
            fs.write("../secret.txt", b"x"),
            Err(FileError::OutsideWorkspace)
        );
        assert_eq!(
            std::fs::read(outer.path().join("secret.txt")).unwrap(),
            b"s"
        );
    }

    /// Break-it finding 0: a committed link to an untracked `.env` or into `.git/` must not
    /// be read (its lines would be printed in a code frame); hidden paths named directly
    /// still are.
    #[cfg(unix)]
    #[test]
    fn links_to_hidden_files_and_folders_are_refused() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("workflows/w/tests")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("shared")).unwrap();
        std::fs::write(root.join(".env"), "OPENAI_API_KEY=sk-SECRET").unwrap();
        std::fs::write(root.join(".git/config"), "url = https://u:tok@host/r").unwrap();
        std::fs::write(root.join("shared/ok.yaml"), "title: t\n").unwrap();
        let tests = root.join("workflows/w/tests");
        symlink("../../../.env", tests.join("env.test.yaml")).unwrap();
        symlink("../../../.git/config", tests.join("git.test.yaml")).unwrap();
        symlink("../../../.git", tests.join("gitdir")).unwrap();
        symlink("../../../shared/ok.yaml", tests.join("ok.test.yaml")).unwrap();
        let fs = DiskFiles::new(root);
        for p in [
            "workflows/w/tests/env.test.yaml",
            "workflows/w/tests/git.test.yaml",
            "workflows/w/tests/gitdir/config",
        ] {
            assert_eq!(fs.read(p), Err(FileError::OutsideWorkspace), "{p}");
            assert!(!fs.is_file(p), "{p}");
        }
        assert_eq!(
            fs.list("workflows/w/tests/gitdir"),
            Err(FileError::OutsideWorkspace)
        );
        assert_eq!(
            fs.read("workflows/w/tests/ok.test.yaml").unwrap(),
            b"title: t\n"
        );
        assert_eq!(fs.read(".env").unwrap(), b"OPENAI_API_KEY=sk-SECRET");
        assert_eq!(fs.read(".git/config").unwrap().len(), 26);
    }

    /// Finding 12: a hard link makes a file from outside the root look like a regular file
    /// inside it. A regular file with more than one link is refused unread (`HardLink`),
    /// whatever its other name; the same file with one link again is read.
    #[cfg(unix)]
    #[test]
    fn hard_linked_files_are_refused_unread() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("ws");
        std::fs::create_dir_all(root.join("workflows/a/tests")).unwrap();
        let secret = outer.path().join("secret.txt");
        std::fs::write(&secret, "HARDLINK-SECRET").unwrap();
        let planted = root.join("workflows/a/tests/x.test.yaml");
        std::fs::hard_link(&secret, &planted).unwrap();
        let fs = DiskFiles::new(&root);
        let p = "workflows/a/tests/x.test.yaml";
        assert_eq!(fs.read(p), Err(FileError::HardLink { links: 2 }));
        assert_eq!(fs.read_max(p, 1), Err(FileError::HardLink { links: 2 }));
        let shown = fs.read_text(p).unwrap_err().to_string();
        assert!(
            shown.contains("2 hard links") && !shown.contains("SECRET"),
            "{shown}"
        );
        // Listing and `is_file` read no content and still see it, so `check` reports it:
        // `WFX011` on the file, its content nowhere.
        assert!(fs.is_file(p));
        let got = wfx_schemas::check::check_paths(&fs, &[p.to_owned()]).unwrap();
        assert!(
            got.diagnostics
                .iter()
                .any(|d| d.code.code == "WFX011" && d.file == p),
            "{:?}",
            got.diagnostics
        );
        assert!(!format!("{:?}", got.diagnostics).contains("SECRET"));
        // The other name gone, the file has one link and is an ordinary file again.
        std::fs::remove_file(&secret).unwrap();
        assert_eq!(fs.read(p).unwrap(), b"HARDLINK-SECRET");
    }

    #[cfg(unix)]
    #[test]
    fn links_leaving_the_root_are_refused_and_links_inside_work() {
        use std::os::unix::fs::symlink;
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("ws");
        std::fs::create_dir_all(root.join("workflows/a")).unwrap();
        std::fs::create_dir_all(outer.path().join("elsewhere")).unwrap();
        std::fs::write(outer.path().join("secret.txt"), "s").unwrap();
        std::fs::write(outer.path().join("elsewhere/b.txt"), "b").unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        symlink(outer.path().join("secret.txt"), root.join("link.txt")).unwrap();
        symlink("../secret.txt", root.join("rel-link.txt")).unwrap();
        symlink(outer.path().join("elsewhere"), root.join("dir-link")).unwrap();
        symlink("a.txt", root.join("inside.txt")).unwrap();
        symlink("workflows/a", root.join("inside-dir")).unwrap();
        std::fs::write(root.join("workflows/a/w.txt"), "w").unwrap();
        let fs = DiskFiles::new(&root);
        assert_eq!(fs.read("link.txt"), Err(FileError::OutsideWorkspace));
        assert_eq!(fs.read("rel-link.txt"), Err(FileError::OutsideWorkspace));
        assert_eq!(fs.read("dir-link/b.txt"), Err(FileError::OutsideWorkspace));
        assert_eq!(fs.list("dir-link"), Err(FileError::OutsideWorkspace));
        assert!(!fs.is_file("link.txt"));
        assert_eq!(fs.read("inside.txt").unwrap(), b"a");
        assert_eq!(fs.read("inside-dir/w.txt").unwrap(), b"w");
        // The listing still names the file links, so discovery can report them.
        let names: Vec<String> = fs.list("").unwrap().into_iter().map(|e| e.name).collect();
        assert!(names.contains(&"link.txt".to_owned()), "{names:?}");
        // Writes: refused through a link leaving the root; through a link inside, the
        // target is written and the link stays.
        assert_eq!(fs.write("link.txt", b"x"), Err(FileError::OutsideWorkspace));
        assert_eq!(
            fs.write("dir-link/b.txt", b"x"),
            Err(FileError::OutsideWorkspace)
        );
        assert_eq!(
            std::fs::read(outer.path().join("secret.txt")).unwrap(),
            b"s"
        );
        assert_eq!(
            std::fs::read(outer.path().join("elsewhere/b.txt")).unwrap(),
            b"b"
        );
        fs.write("inside.txt", b"new").unwrap();
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"new");
        assert!(
            std::fs::symlink_metadata(root.join("inside.txt"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[cfg(unix)]
    #[test]
    fn output_writes_replace_planted_links_and_refuse_linked_folders() {
        use std::os::unix::fs::symlink;
        let outer = tempfile::tempdir().unwrap();
        let cwd = outer.path().join("ws");
        std::fs::create_dir_all(cwd.join("out")).unwrap();
        std::fs::write(outer.path().join("rc"), "keep\n").unwrap();
        symlink(outer.path().join("rc"), cwd.join("out/history.jsonl")).unwrap();
        symlink(outer.path().join("rc"), cwd.join("out/report.md")).unwrap();
        let dir = output_dir(&cwd, Path::new("out")).unwrap();
        append_file(&dir, "history.jsonl", b"row\n").unwrap();
        replace_file(&dir, "report.md", b"# r\n").unwrap();
        assert_eq!(std::fs::read(outer.path().join("rc")).unwrap(), b"keep\n");
        assert_eq!(std::fs::read(dir.join("history.jsonl")).unwrap(), b"row\n");
        append_file(&dir, "history.jsonl", b"two\n").unwrap();
        assert_eq!(
            std::fs::read(dir.join("history.jsonl")).unwrap(),
            b"row\ntwo\n"
        );
        // A linked output folder, or one below a link, is refused.
        symlink(outer.path(), cwd.join("linked")).unwrap();
        let e = output_dir(&cwd, Path::new("linked")).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        let e = output_dir(&cwd, Path::new("linked/sub")).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(!outer.path().join("sub").exists());
        let e = write_output_file(&cwd, Path::new("linked/g.svg"), b"x").unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(!outer.path().join("g.svg").exists());
    }
}
