//! `FileAccess` over a folder on disk, for the CLI and the language server's fallback.
//! Paths are workspace-relative with `/`; an absolute path, a `..` segment, or a symlink
//! resolving outside the root is refused as not found, so nothing outside the workspace is
//! ever read through it.

use std::path::{Path, PathBuf};

use wfx_schemas::files::{DirEntry, FileAccess, FileError};

/// True when the folder symlink `link`, found in the root-relative folder `dir` of the
/// workspace at `root`, leads back to `dir`, to one of the folders `dir` was reached
/// through, or to the root or above it: listing it would walk in a cycle (`tests/loop -> .`
/// repeats every case 40 times, two such links 2^40 times), so both `DiskFiles` (this
/// one and the server's) leave it out of `list`. A link whose target cannot be resolved
/// counts as a cycle.
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

/// A workspace folder on disk.
#[derive(Clone, Debug)]
pub struct DiskFiles {
    root: PathBuf,
    canonical: Option<PathBuf>,
}

impl DiskFiles {
    /// Files below `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let canonical = root.canonicalize().ok();
        Self { root, canonical }
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn resolve(&self, path: &str) -> Result<PathBuf, FileError> {
        if path.starts_with('/') || path.split('/').any(|s| s == "..") || path.contains('\0') {
            return Err(FileError::NotFound);
        }
        let mut p = self.root.clone();
        for seg in path.split('/').filter(|s| !s.is_empty() && *s != ".") {
            p.push(seg);
        }
        if let (Ok(real), Some(root)) = (p.canonicalize(), &self.canonical)
            && !real.starts_with(root)
        {
            return Err(FileError::NotFound);
        }
        Ok(p)
    }
}

impl FileAccess for DiskFiles {
    fn read(&self, path: &str) -> Result<Vec<u8>, FileError> {
        let p = self.resolve(path)?;
        if p.is_dir() {
            return Err(FileError::Other(format!("`{path}` is a folder")));
        }
        std::fs::read(&p).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => FileError::NotFound,
            _ => FileError::Other(e.to_string()),
        })
    }

    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FileError> {
        let p = self.resolve(dir)?;
        let rd = std::fs::read_dir(&p).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => FileError::NotFound,
            _ => FileError::Other(e.to_string()),
        })?;
        let mut out: Vec<DirEntry> = rd
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_owned();
                let is_dir = std::fs::metadata(e.path())
                    .map(|m| m.is_dir())
                    .unwrap_or(false);
                let cycle = is_dir
                    && e.file_type().is_ok_and(|t| t.is_symlink())
                    && folder_link_cycles(&self.root, dir, &e.path());
                (!cycle).then_some(DirEntry { name, is_dir })
            })
            .collect();
        out.sort();
        Ok(out)
    }

    fn is_file(&self, path: &str) -> bool {
        self.resolve(path).is_ok_and(|p| p.is_file())
    }
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
        std::fs::create_dir_all(&tests).unwrap();
        std::fs::write(tests.join("c.test.yaml"), "title: c\n").unwrap();
        // Followed, this one link repeats the case at every depth the OS resolves (about
        // 40); more such links would multiply (the server's DiskFiles test has more kinds).
        symlink(".", tests.join("self")).unwrap();
        let fs = DiskFiles::new(tmp.path());
        assert_eq!(
            wfx_schemas::files::walk(&fs, "workflows/a/tests"),
            ["workflows/a/tests/c.test.yaml"]
        );
    }

    #[test]
    fn refuses_paths_outside_the_root() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("ws");
        std::fs::create_dir_all(root.join("workflows")).unwrap();
        std::fs::write(outer.path().join("secret.txt"), "s").unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        let fs = DiskFiles::new(&root);
        assert_eq!(fs.read("a.txt").unwrap(), b"a");
        assert_eq!(fs.read("../secret.txt"), Err(FileError::NotFound));
        assert_eq!(
            fs.read(outer.path().join("secret.txt").to_str().unwrap()),
            Err(FileError::NotFound)
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outer.path().join("secret.txt"), root.join("link.txt"))
                .unwrap();
            assert_eq!(fs.read("link.txt"), Err(FileError::NotFound));
        }
        assert_eq!(
            fs.list("")
                .unwrap()
                .iter()
                .map(|e| e.name.as_str())
                .collect::<Vec<_>>(),
            {
                let mut v = vec!["a.txt", "workflows"];
                if cfg!(unix) {
                    v.insert(1, "link.txt");
                }
                v
            }
        );
    }
}
