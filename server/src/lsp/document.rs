//! Open documents: a ropey buffer for incremental edits plus the derived `String` and
//! [`LineIndex`] of the current version, kept together behind private fields and changed
//! through one method (ruff's `TextDocument`). The [`Documents`] store keys them by URI
//! in a dashmap; every mutation is synchronous (no `.await` while a shard is locked), and
//! readers take a cheap [`Snapshot`] (`Arc` clones) and release the lock at once.
//!
//! Each version carries a lazily built YAML parse shared by every snapshot of that
//! version, so the diagnostics pass and the IDE requests that follow an edit parse the
//! text once between them (a 3,000-line case takes about 3 ms to parse).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use dashmap::DashMap;
use ropey::Rope;
use tower_lsp_server::ls_types as lsp;
use wfx_schemas::text::{LineIndex, PositionEncoding};
use wfx_schemas::yaml::{self, Parsed};

use super::convert;

/// Where a document sits: the workspace root it is checked under and its path relative
/// to that root (`/`-separated, what `wfx_schemas` calls a workspace-relative path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The root folder (absolute).
    pub root: PathBuf,
    /// Path relative to `root`.
    pub rel: String,
}

/// One open document.
#[derive(Clone, Debug)]
pub struct Document {
    rope: Rope,
    text: Arc<str>,
    index: Arc<LineIndex>,
    parsed: Arc<OnceLock<Parsed>>,
    version: i32,
    located: Option<Located>,
}

/// An immutable view of a document at one version.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The text.
    pub text: Arc<str>,
    /// Its line index.
    pub index: Arc<LineIndex>,
    /// The text's YAML parse, made by whichever request needs it first.
    parsed: Arc<OnceLock<Parsed>>,
    /// The client's version of this text.
    pub version: i32,
    /// Where the file sits (`None` for non-file URIs).
    pub located: Option<Located>,
}

impl Document {
    /// A document with `text` at `version`.
    pub fn new(text: &str, version: i32, located: Option<Located>) -> Self {
        Self {
            rope: Rope::from_str(text),
            text: Arc::from(text),
            index: Arc::new(LineIndex::new(text)),
            parsed: Arc::default(),
            version,
            located,
        }
    }

    /// The current text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The current version.
    pub fn version(&self) -> i32 {
        self.version
    }

    /// A snapshot of the current version.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            text: self.text.clone(),
            index: self.index.clone(),
            parsed: self.parsed.clone(),
            version: self.version,
            located: self.located.clone(),
        }
    }

    /// Applies `didChange` content changes in order (each range is relative to the text
    /// left by the previous change, positions in `enc`, clamped), then sets `version`. A
    /// change without a range replaces the whole text.
    pub fn apply_changes(
        &mut self,
        changes: &[lsp::TextDocumentContentChangeEvent],
        version: i32,
        enc: PositionEncoding,
    ) {
        for change in changes {
            match change.range {
                None => self.rope = Rope::from_str(&change.text),
                Some(r) => {
                    let tr = convert::text_range(&self.index, r, enc);
                    let len = self.rope.len_bytes();
                    let (a, b) = ((tr.start as usize).min(len), (tr.end as usize).min(len));
                    let (ca, cb) = (self.rope.byte_to_char(a), self.rope.byte_to_char(b));
                    self.rope.remove(ca..cb);
                    self.rope.insert(ca, &change.text);
                }
            }
            let text = self.rope.to_string();
            self.index = Arc::new(LineIndex::new(&text));
            self.text = Arc::from(text);
        }
        self.parsed = Arc::default();
        self.version = version;
    }
}

impl Snapshot {
    /// A snapshot of a text that is not an open document (a closed file read from disk,
    /// version 0): its line index and a lazy parse, without the rope an editable
    /// [`Document`] keeps (the workspace-wide pass builds 10,000 of these per edit).
    pub fn detached(text: String, located: Option<Located>) -> Self {
        Self {
            index: Arc::new(LineIndex::new(&text)),
            text: Arc::from(text),
            parsed: Arc::default(),
            version: 0,
            located,
        }
    }

    /// The YAML parse of [`Self::text`], built once per version and shared by every
    /// snapshot of it (a concurrent caller waits for the first one's parse).
    pub fn parsed(&self) -> &Parsed {
        self.parsed.get_or_init(|| yaml::parse(&self.text))
    }
}

/// The open documents, keyed by URI.
#[derive(Debug, Default)]
pub struct Documents {
    map: DashMap<lsp::Uri, Document>,
}

impl Documents {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// `didOpen`: stores (or replaces) the document.
    pub fn open(&self, uri: lsp::Uri, text: &str, version: i32, located: Option<Located>) {
        self.map.insert(uri, Document::new(text, version, located));
    }

    /// `didChange`: applies the changes; `None` when the document is not open, `Some(false)`
    /// when the change was dropped as stale, `Some(true)` when applied. A change whose
    /// version does not exceed the document's is stale (LSP versions strictly increase):
    /// it is dropped with a warning rather than applied to text it was not made against.
    pub fn change(
        &self,
        uri: &lsp::Uri,
        changes: &[lsp::TextDocumentContentChangeEvent],
        version: i32,
        enc: PositionEncoding,
    ) -> Option<bool> {
        let mut doc = self.map.get_mut(uri)?;
        if version <= doc.version {
            tracing::warn!(
                "dropping a stale change: version {version} of {} does not exceed {}",
                uri.as_str(),
                doc.version
            );
            return Some(false);
        }
        doc.apply_changes(changes, version, enc);
        Some(true)
    }

    /// `didClose`: forgets the document; returns where it was.
    pub fn close(&self, uri: &lsp::Uri) -> Option<Document> {
        self.map.remove(uri).map(|(_, d)| d)
    }

    /// A snapshot of one document.
    pub fn snapshot(&self, uri: &lsp::Uri) -> Option<Snapshot> {
        self.map.get(uri).map(|d| d.snapshot())
    }

    /// True when `snap` is still the document's current text: same version and the same
    /// text allocation (a close and reopen at an equal version number is a different text).
    pub fn is_current(&self, uri: &lsp::Uri, snap: &Snapshot) -> bool {
        self.map
            .get(uri)
            .is_some_and(|d| d.version == snap.version && Arc::ptr_eq(&d.text, &snap.text))
    }

    /// The current version of a document.
    pub fn version(&self, uri: &lsp::Uri) -> Option<i32> {
        self.map.get(uri).map(|d| d.version)
    }

    /// Every open document's URI and location, sorted by URI.
    pub fn all(&self) -> Vec<(lsp::Uri, Option<Located>)> {
        let mut v: Vec<(lsp::Uri, Option<Located>)> = self
            .map
            .iter()
            .map(|e| (e.key().clone(), e.value().located.clone()))
            .collect();
        v.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        v
    }

    /// Recomputes where every open document sits with `locate` (its URI to a location),
    /// after the workspace folders changed (`workspace/didChangeWorkspaceFolders`): a
    /// document of an added folder is checked under it from now on, one of a removed
    /// folder falls back to its `workflows/` parent (see `paths::locate`).
    pub fn relocate(&self, locate: impl Fn(&lsp::Uri) -> Option<Located>) {
        for mut e in self.map.iter_mut() {
            let loc = locate(e.key());
            e.value_mut().located = loc;
        }
    }

    /// The texts of open documents under `root`, keyed by root-relative path.
    pub fn texts_under(
        &self,
        root: &std::path::Path,
    ) -> std::collections::BTreeMap<String, Arc<str>> {
        let mut out = std::collections::BTreeMap::new();
        for e in self.map.iter() {
            let doc = e.value();
            let Some(loc) = &doc.located else { continue };
            let abs = super::paths::absolute(loc);
            if let Ok(rel) = abs.strip_prefix(root)
                && let Some(rel) = super::paths::to_rel(rel)
            {
                out.insert(rel, doc.text.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(
        l0: u32,
        c0: u32,
        l1: u32,
        c1: u32,
        text: &str,
    ) -> lsp::TextDocumentContentChangeEvent {
        lsp::TextDocumentContentChangeEvent {
            range: Some(lsp::Range {
                start: lsp::Position::new(l0, c0),
                end: lsp::Position::new(l1, c1),
            }),
            range_length: None,
            text: text.into(),
        }
    }

    #[test]
    fn a_snapshot_is_current_only_for_its_own_text() {
        let docs = Documents::new();
        let uri = lsp::Uri::from_file_path("/ws/a.test.yaml").unwrap();
        docs.open(uri.clone(), "title: a\n", 3, None);
        let snap = docs.snapshot(&uri).unwrap();
        assert!(docs.is_current(&uri, &snap));
        // Closed and reopened at the same version number with other text: not current.
        docs.close(&uri);
        docs.open(uri.clone(), "title: b\n", 3, None);
        assert!(!docs.is_current(&uri, &snap));
        // A newer version: not current either; a stale change leaves the snapshot current.
        let snap = docs.snapshot(&uri).unwrap();
        assert_eq!(
            docs.change(&uri, &[change(0, 7, 0, 8, "c")], 2, PositionEncoding::Utf16),
            Some(false)
        );
        assert!(docs.is_current(&uri, &snap));
        assert_eq!(
            docs.change(&uri, &[change(0, 7, 0, 8, "c")], 4, PositionEncoding::Utf16),
            Some(true)
        );
        assert!(!docs.is_current(&uri, &snap));
        assert!(!docs.is_current(&lsp::Uri::from_file_path("/ws/other.yaml").unwrap(), &snap));
    }

    #[test]
    fn incremental_changes_apply_in_sequence_in_the_negotiated_encoding() {
        let mut d = Document::new("t: 😀a\nsteps: []\n", 1, None);
        // UTF-16: the `a` sits at character 5.
        d.apply_changes(
            &[change(0, 5, 0, 6, "b"), change(1, 0, 1, 5, "stop")],
            2,
            PositionEncoding::Utf16,
        );
        assert_eq!(d.text(), "t: 😀b\nstop: []\n");
        // UTF-8: the `b` sits at byte column 7.
        d.apply_changes(&[change(0, 7, 0, 8, "c")], 3, PositionEncoding::Utf8);
        assert_eq!(d.text(), "t: 😀c\nstop: []\n");
        // Past the end clamps.
        d.apply_changes(&[change(9, 0, 9, 9, "x")], 4, PositionEncoding::Utf16);
        assert_eq!(d.text(), "t: 😀c\nstop: []\nx");
        assert_eq!(d.version(), 4);
    }
}
