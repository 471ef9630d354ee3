//! [`FileAccess`] on the real file system, rooted at one folder: what `check` and the server
//! read through when no open buffer shadows a file. It only reads; writing (`check --fix`)
//! goes through [`DiskFiles::write`], used by the CLI alone.
//!
//! Paths are relative to the root and `/`-separated, as everywhere in `wfx-schemas`; `..`
//! segments are passed to the OS as written (the CLI keeps `../x` arguments as given).

use std::path::{Path, PathBuf};

use wfx_schemas::files::{DirEntry, FileAccess, FileError};

/// Files larger than this (bytes) are refused with [`FileError::Other`] rather than read,
/// so no single file can exhaust memory. 64 MiB.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The file system below `root`.
#[derive(Clone, Debug)]
pub struct DiskFiles {
    root: PathBuf,
}

impl DiskFiles {
    /// Files below `root` (a folder; it need not exist).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The OS path of a root-relative `/`-separated path (`""` and `.` are the root).
    pub fn os_path(&self, path: &str) -> PathBuf {
        let mut p = self.root.clone();
        for seg in path.split('/').filter(|s| !s.is_empty() && *s != ".") {
            p.push(seg);
        }
        p
    }

    /// Replaces a file's contents. Errors are the OS's, as text.
    pub fn write(&self, path: &str, bytes: &[u8]) -> Result<(), String> {
        std::fs::write(self.os_path(path), bytes).map_err(|e| e.to_string())
    }
}

fn io_error(e: &std::io::Error) -> FileError {
    if e.kind() == std::io::ErrorKind::NotFound {
        FileError::NotFound
    } else {
        FileError::Other(e.to_string())
    }
}

impl FileAccess for DiskFiles {
    fn read(&self, path: &str) -> Result<Vec<u8>, FileError> {
        let p = self.os_path(path);
        let meta = std::fs::metadata(&p).map_err(|e| io_error(&e))?;
        if meta.is_dir() {
            return Err(FileError::Other("it is a folder".into()));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(FileError::Other(format!(
                "the file is larger than {} MiB",
                MAX_FILE_BYTES / (1024 * 1024)
            )));
        }
        std::fs::read(&p).map_err(|e| io_error(&e))
    }

    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FileError> {
        let rd = std::fs::read_dir(self.os_path(dir)).map_err(|e| io_error(&e))?;
        let mut out = Vec::new();
        for entry in rd.flatten() {
            // Names that are not UTF-8 cannot be workspace paths; skip them.
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let is_dir = std::fs::metadata(entry.path())
                .map(|m| m.is_dir())
                .unwrap_or(false);
            if is_dir
                && entry.file_type().is_ok_and(|t| t.is_symlink())
                && wfx_runner::disk::folder_link_cycles(&self.root, dir, &entry.path())
            {
                continue;
            }
            out.push(DirEntry { name, is_dir });
        }
        out.sort();
        Ok(out)
    }

    fn is_file(&self, path: &str) -> bool {
        std::fs::metadata(self.os_path(path))
            .map(|m| m.is_file())
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
