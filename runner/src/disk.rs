//! `FileAccess` over a folder on disk, for the CLI and the language server's fallback.
//! Paths are workspace-relative with `/`; an absolute path, a `..` segment, or a symlink
//! resolving outside the root is refused as not found, so nothing outside the workspace is
//! ever read through it.

use std::path::{Path, PathBuf};

use wfx_schemas::files::{DirEntry, FileAccess, FileError};

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
                Some(DirEntry { name, is_dir })
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
