//! The editor's unsaved buffers as an overlay on the workspace (`wfx-lsp test
//! --buffers-stdin`, issue 16): the Test Explorer runs what the user sees, like the run lens
//! does through the server's own overlay.
//!
//! Input: one JSON object on stdin mapping workspace-root-relative paths (`/`-separated,
//! below `workflows/`) to the buffer's full text, e.g.
//! `{"workflows/pay/tests/a.test.yaml": "title: …"}`. Bounded: at most
//! [`MAX_BUFFERS_BYTES`] bytes of stdin and [`MAX_BUFFERS`] entries; a path that is
//! absolute, has `..`, lies outside `workflows/`, or resolves outside the workspace through a
//! symbolic link is refused (the whole run, exit 2) — the overlay never shadows a file the
//! confined layer would not read. Reads of other paths go to [`DiskFiles`] unchanged
//! (docs/security.md, "inputs").

use std::collections::BTreeMap;
use std::io::Read;

use wfx_schemas::files::{DirEntry, FileAccess, FileError};

use crate::disk::DiskFiles;

/// Most bytes read from stdin for `--buffers-stdin` (16 MiB); more is an error.
pub const MAX_BUFFERS_BYTES: u64 = 16 * 1024 * 1024;

/// Most buffers in one `--buffers-stdin` map; more is an error.
pub const MAX_BUFFERS: usize = 1_000;

/// Reads the `--buffers-stdin` map from `r`: a JSON object of path → text, at most
/// [`MAX_BUFFERS_BYTES`] bytes and [`MAX_BUFFERS`] entries. Errors name the bound or the
/// JSON error (never the buffers' text).
pub fn read_buffers(r: &mut dyn Read) -> Result<BTreeMap<String, String>, String> {
    let mut bytes = Vec::new();
    r.take(MAX_BUFFERS_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("--buffers-stdin: cannot read stdin: {e}"))?;
    if bytes.len() as u64 > MAX_BUFFERS_BYTES {
        return Err(format!(
            "--buffers-stdin: more than {} MiB of buffers",
            MAX_BUFFERS_BYTES / (1024 * 1024)
        ));
    }
    let map: BTreeMap<String, String> = serde_json::from_slice(&bytes)
        .map_err(|e| format!("--buffers-stdin: expected a JSON object of path → text ({e})"))?;
    if map.len() > MAX_BUFFERS {
        return Err(format!(
            "--buffers-stdin: {} buffers, more than {MAX_BUFFERS}",
            map.len()
        ));
    }
    Ok(map)
}

fn norm(path: &str) -> String {
    path.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// The workspace on disk with some files replaced by buffer texts (and buffers of files not
/// yet saved added to their folder's listing).
#[derive(Clone, Debug)]
pub struct BufferOverlay {
    disk: DiskFiles,
    open: BTreeMap<String, String>,
}

impl BufferOverlay {
    /// `buffers` over `disk`. Errors (a message naming the path, escaped by the caller): a
    /// path that is absolute, contains `..` or a backslash, is not below `workflows/`, or
    /// resolves outside the workspace ([`DiskFiles::resolve`]).
    pub fn new(disk: DiskFiles, buffers: BTreeMap<String, String>) -> Result<Self, String> {
        let mut open = BTreeMap::new();
        for (path, text) in buffers {
            let n = norm(&path);
            let refused = path.contains('\\')
                || !n.starts_with("workflows/")
                || matches!(disk.resolve(&path), Err(FileError::OutsideWorkspace));
            if refused {
                return Err(format!(
                    "--buffers-stdin: `{path}` is not a workspace-relative path below workflows/ \
                     inside the workspace"
                ));
            }
            open.insert(n, text);
        }
        Ok(Self { disk, open })
    }

    /// Paths (normalised) the overlay replaces.
    pub fn buffer_paths(&self) -> impl Iterator<Item = &str> {
        self.open.keys().map(String::as_str)
    }
}

impl FileAccess for BufferOverlay {
    fn read(&self, path: &str) -> Result<Vec<u8>, FileError> {
        match self.open.get(&norm(path)) {
            Some(t) => Ok(t.as_bytes().to_vec()),
            None => self.disk.read(path),
        }
    }

    fn read_text(&self, path: &str) -> Result<String, FileError> {
        match self.open.get(&norm(path)) {
            Some(t) => Ok(t.clone()),
            None => self.disk.read_text(path),
        }
    }

    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FileError> {
        let dir = norm(dir);
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let disk = self.disk.list(&dir);
        let mut entries: BTreeMap<String, bool> = BTreeMap::new();
        if let Ok(list) = &disk {
            for e in list {
                entries.insert(e.name.clone(), e.is_dir);
            }
        }
        let mut added = false;
        for path in self.open.keys() {
            if let Some(rest) = path.strip_prefix(&prefix) {
                added = true;
                match rest.split_once('/') {
                    Some((d, _)) => entries.entry(d.to_owned()).or_insert(true),
                    None => entries.entry(rest.to_owned()).or_insert(false),
                };
            }
        }
        if !added {
            return disk;
        }
        Ok(entries
            .into_iter()
            .map(|(name, is_dir)| DirEntry { name, is_dir })
            .collect())
    }

    fn is_file(&self, path: &str) -> bool {
        self.open.contains_key(&norm(path)) || self.disk.is_file(path)
    }

    fn dir_identity(&self, dir: &str) -> Option<String> {
        self.disk.dir_identity(dir)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn reads_a_map_and_refuses_what_is_not_one() {
        let m = read_buffers(&mut &br#"{"workflows/a/tests/x.test.yaml":"t"}"#[..]).unwrap();
        assert_eq!(m["workflows/a/tests/x.test.yaml"], "t");
        assert!(
            read_buffers(&mut &b"[1]"[..])
                .unwrap_err()
                .contains("JSON object")
        );
        assert!(read_buffers(&mut &b"{\"a\": 1}"[..]).is_err());
    }

    #[test]
    fn the_size_and_count_bounds_are_errors() {
        let big = vec![b' '; usize::try_from(MAX_BUFFERS_BYTES).unwrap() + 1];
        assert!(read_buffers(&mut &big[..]).unwrap_err().contains("MiB"));
        let many: BTreeMap<String, String> = (0..=MAX_BUFFERS)
            .map(|i| (format!("workflows/a/{i}"), String::new()))
            .collect();
        let json = serde_json::to_vec(&many).unwrap();
        assert!(
            read_buffers(&mut &json[..])
                .unwrap_err()
                .contains("more than 1000")
        );
    }

    #[test]
    fn paths_outside_workflows_or_the_workspace_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for bad in [
            "/etc/passwd",
            "../x",
            "workflows/../.env",
            ".env",
            "workflows\\a",
        ] {
            let m = BTreeMap::from([(bad.to_owned(), "x".to_owned())]);
            assert!(
                BufferOverlay::new(DiskFiles::new(dir.path()), m).is_err(),
                "{bad}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_buffer_behind_a_link_out_of_the_workspace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("workflows")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("workflows/out")).unwrap();
        let m = BTreeMap::from([("workflows/out/x.test.yaml".to_owned(), "x".to_owned())]);
        assert!(BufferOverlay::new(DiskFiles::new(dir.path()), m).is_err());
    }

    #[test]
    fn buffers_replace_and_add_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("workflows/a/tests")).unwrap();
        std::fs::write(dir.path().join("workflows/a/tests/x.test.yaml"), "disk").unwrap();
        let m = BTreeMap::from([
            (
                "workflows/a/tests/x.test.yaml".to_owned(),
                "buffer".to_owned(),
            ),
            (
                "workflows/a/tests/new.test.yaml".to_owned(),
                "new".to_owned(),
            ),
        ]);
        let o = BufferOverlay::new(DiskFiles::new(dir.path()), m).unwrap();
        assert_eq!(
            o.read_text("workflows/a/tests/x.test.yaml").unwrap(),
            "buffer"
        );
        assert_eq!(
            o.read_text("./workflows/a/tests/new.test.yaml").unwrap(),
            "new"
        );
        let names: Vec<String> = o
            .list("workflows/a/tests")
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["new.test.yaml", "x.test.yaml"]);
        assert!(o.is_file("workflows/a/tests/new.test.yaml"));
    }
}
