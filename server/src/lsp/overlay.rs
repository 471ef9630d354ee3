//! The server's [`FileAccess`]: open documents first (their unsaved text), then the disk
//! below one root folder, so cross-file rules see what the user sees. Built per check
//! from a snapshot of the open texts; it holds no lock.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use wfx_schemas::files::{DirEntry, FileAccess, FileError};

use wfx_runner::disk::DiskFiles;

/// Open texts over the disk, rooted at one folder.
#[derive(Clone, Debug)]
pub struct Overlay {
    /// The workspace folder on disk; `None` for a document outside every workspace folder
    /// (then only open buffers are seen, and nothing is read from disk: confinement).
    disk: Option<DiskFiles>,
    open: BTreeMap<String, Arc<str>>,
}

/// What a buffers-only [`Overlay`] answers for a file that is not an open buffer.
fn not_read() -> FileError {
    FileError::Other("outside the editor's workspace folders; not read".to_owned())
}

fn norm(path: &str) -> String {
    path.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect::<Vec<_>>()
        .join("/")
}

impl Overlay {
    /// `open` maps root-relative paths to buffer texts.
    pub fn new(root: &Path, open: BTreeMap<String, Arc<str>>) -> Self {
        Self {
            disk: Some(DiskFiles::new(root)),
            open,
        }
    }

    /// An overlay of open buffers only, for a document the client opened outside every
    /// workspace folder: no disk read, no listing (the promise "confinement": the server
    /// reads only inside its workspace folders). Cross-file rules then find nothing to
    /// read and say so; the document's own rules run on its buffer.
    pub fn buffers_only(open: BTreeMap<String, Arc<str>>) -> Self {
        Self { disk: None, open }
    }
}

impl Overlay {
    /// True when `path` on disk leaves the workspace (a symbolic link resolving outside the
    /// root, or a `..`/absolute path): an open buffer of such a file is reported as the link
    /// (`WFX010`) and not analysed ("confinement"). Costs an `lstat`, never a read.
    pub fn leaves_workspace(&self, path: &str) -> bool {
        self.disk
            .as_ref()
            .is_some_and(|d| matches!(d.resolve(path), Err(FileError::OutsideWorkspace)))
    }
}

impl FileAccess for Overlay {
    fn read(&self, path: &str) -> Result<Vec<u8>, FileError> {
        match self.open.get(&norm(path)) {
            Some(t) => Ok(t.as_bytes().to_vec()),
            None => self.disk.as_ref().ok_or_else(not_read)?.read(path),
        }
    }

    fn read_max(&self, path: &str, max_bytes: u64) -> Result<Vec<u8>, FileError> {
        match self.open.get(&norm(path)) {
            Some(t) if t.len() as u64 > max_bytes => Err(FileError::TooLarge {
                bytes: t.len() as u64,
                limit: max_bytes,
            }),
            Some(t) => Ok(t.as_bytes().to_vec()),
            None => self
                .disk
                .as_ref()
                .ok_or_else(not_read)?
                .read_max(path, max_bytes),
        }
    }

    fn read_text_max(&self, path: &str, max_bytes: u64) -> Result<String, FileError> {
        match self.open.get(&norm(path)) {
            Some(t) if t.len() as u64 > max_bytes => Err(FileError::TooLarge {
                bytes: t.len() as u64,
                limit: max_bytes,
            }),
            Some(t) => Ok(t.to_string()),
            None => {
                let bytes = self
                    .disk
                    .as_ref()
                    .ok_or_else(not_read)?
                    .read_max(path, max_bytes)?;
                wfx_schemas::text::decode(&bytes)
                    .map_err(|at| FileError::Other(format!("not valid UTF-8 at byte {at}")))
            }
        }
    }

    fn read_text(&self, path: &str) -> Result<String, FileError> {
        match self.open.get(&norm(path)) {
            Some(t) => Ok(t.to_string()),
            None => {
                let bytes = self.disk.as_ref().ok_or_else(not_read)?.read(path)?;
                wfx_schemas::text::decode(&bytes)
                    .map_err(|at| FileError::Other(format!("not valid UTF-8 at byte {at}")))
            }
        }
    }

    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FileError> {
        let dir = norm(dir);
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut entries: BTreeMap<String, bool> = BTreeMap::new();
        let disk = match &self.disk {
            Some(d) => d.list(&dir),
            None => Err(not_read()),
        };
        if let Ok(list) = &disk {
            for e in list {
                entries.insert(e.name.clone(), e.is_dir);
            }
        }
        // Open buffers not (yet) on disk still belong to their folder.
        for path in self.open.keys() {
            if let Some(rest) = path.strip_prefix(&prefix) {
                match rest.split_once('/') {
                    Some((d, _)) => entries.entry(d.to_owned()).or_insert(true),
                    None => entries.entry(rest.to_owned()).or_insert(false),
                };
            }
        }
        if entries.is_empty() {
            return disk;
        }
        Ok(entries
            .into_iter()
            .map(|(name, is_dir)| DirEntry { name, is_dir })
            .collect())
    }

    fn is_file(&self, path: &str) -> bool {
        self.open.contains_key(&norm(path)) || self.disk.as_ref().is_some_and(|d| d.is_file(path))
    }

    fn dir_identity(&self, dir: &str) -> Option<String> {
        self.disk.as_ref()?.dir_identity(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_buffers_shadow_the_disk() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("workflows/a")).unwrap();
        std::fs::write(tmp.path().join("workflows/a/workflow.yaml"), "disk").unwrap();
        let mut open = BTreeMap::new();
        open.insert("workflows/a/workflow.yaml".to_owned(), Arc::from("buffer"));
        open.insert(
            "workflows/a/tests/new.test.yaml".to_owned(),
            Arc::from("unsaved"),
        );
        let o = Overlay::new(tmp.path(), open);
        assert_eq!(o.read_text("workflows/a/workflow.yaml").unwrap(), "buffer");
        assert_eq!(
            o.read_text("./workflows/a/tests/new.test.yaml").unwrap(),
            "unsaved"
        );
        let names: Vec<String> = o
            .list("workflows/a")
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, vec!["tests", "workflow.yaml"]);
        assert_eq!(o.read("nope"), Err(FileError::NotFound));
    }
}
