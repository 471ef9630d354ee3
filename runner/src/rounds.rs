//! What the rounds of `wfx-lsp test --repeat N` share (docs/cli.md, "`--repeat N`: pass
//! rates"; issue 15, item 7).
//!
//! Each round plays every case with the agent the selection rule ([`crate::select`]) picked
//! from the workspace **as it was before round 1 wrote anything**: a cassette that round 1
//! records (or re-records) is not replayed by rounds 2..N, which play the model live and
//! write no cassette. Otherwise `--live --repeat 4` would call the model once and replay
//! that answer three times, and report a pass rate of 100% for a flaky case.

use std::collections::BTreeSet;
use std::sync::Mutex;

use wfx_schemas::files::{DirEntry, FileAccess, FileError};

/// The workspace-relative paths of the cassettes this command wrote. `Sync` (a mutex), so
/// the save hook of any round can add to it.
#[derive(Debug, Default)]
pub struct Written(Mutex<BTreeSet<String>>);

impl Written {
    /// Notes that `path` (workspace-relative, `/`-separated) was written.
    pub fn add(&self, path: &str) {
        if let Ok(mut set) = self.0.lock() {
            set.insert(path.to_owned());
        }
    }

    /// True when `path` was written by this command.
    pub fn contains(&self, path: &str) -> bool {
        self.0.lock().is_ok_and(|set| set.contains(path))
    }

    /// How many distinct paths were written.
    pub fn len(&self) -> usize {
        self.0.lock().map_or(0, |set| set.len())
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `inner` with the files in `hidden` absent: reads of them are [`FileError::NotFound`] and
/// listings leave them out. Every other access goes to `inner` unchanged (same bounds, same
/// confinement).
pub struct Hiding<'a> {
    /// The workspace as the rounds read it.
    pub inner: &'a dyn FileAccess,
    /// The paths to hide.
    pub hidden: &'a Written,
}

impl Hiding<'_> {
    fn hides(&self, path: &str) -> bool {
        self.hidden.contains(path.trim_start_matches("./"))
    }
}

impl FileAccess for Hiding<'_> {
    fn read(&self, path: &str) -> Result<Vec<u8>, FileError> {
        if self.hides(path) {
            return Err(FileError::NotFound);
        }
        self.inner.read(path)
    }

    fn read_max(&self, path: &str, max_bytes: u64) -> Result<Vec<u8>, FileError> {
        if self.hides(path) {
            return Err(FileError::NotFound);
        }
        self.inner.read_max(path, max_bytes)
    }

    fn read_text(&self, path: &str) -> Result<String, FileError> {
        if self.hides(path) {
            return Err(FileError::NotFound);
        }
        self.inner.read_text(path)
    }

    fn read_text_max(&self, path: &str, max_bytes: u64) -> Result<String, FileError> {
        if self.hides(path) {
            return Err(FileError::NotFound);
        }
        self.inner.read_text_max(path, max_bytes)
    }

    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FileError> {
        let entries = self.inner.list(dir)?;
        let dir = dir.trim_start_matches("./").trim_end_matches('/');
        Ok(entries
            .into_iter()
            .filter(|e| {
                let path = if dir.is_empty() || dir == "." {
                    e.name.clone()
                } else {
                    format!("{dir}/{}", e.name)
                };
                e.is_dir || !self.hidden.contains(&path)
            })
            .collect())
    }

    fn is_file(&self, path: &str) -> bool {
        !self.hides(path) && self.inner.is_file(path)
    }

    fn dir_identity(&self, dir: &str) -> Option<String> {
        self.inner.dir_identity(dir)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;
    use wfx_schemas::files::MemFiles;

    #[test]
    fn a_written_cassette_is_absent_and_everything_else_reads_through() {
        let fs = MemFiles::new()
            .with("workflows/w/tests/a.test.yaml", "t")
            .with("workflows/w/tests/a.cassette.json", "{}")
            .with("workflows/w/tests/b.cassette.json", "{}");
        let written = Written::default();
        written.add("workflows/w/tests/a.cassette.json");
        let h = Hiding {
            inner: &fs,
            hidden: &written,
        };
        assert!(matches!(
            h.read_max("workflows/w/tests/a.cassette.json", 0),
            Err(FileError::NotFound)
        ));
        assert!(matches!(
            h.read("./workflows/w/tests/a.cassette.json"),
            Err(FileError::NotFound)
        ));
        assert!(!h.is_file("workflows/w/tests/a.cassette.json"));
        assert!(h.is_file("workflows/w/tests/b.cassette.json"));
        assert_eq!(h.read_text("workflows/w/tests/a.test.yaml").unwrap(), "t");
        let names: Vec<String> = h
            .list("workflows/w/tests")
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["a.test.yaml", "b.cassette.json"]);
        // The selection rule sees no cassette for `a`.
        assert_ne!(
            crate::select::select_agent(&h, "workflows/w/tests/a.test.yaml", true).label(),
            "cassette"
        );
    }
}
