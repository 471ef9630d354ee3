//! URIs ↔ workspace-relative paths. A document is checked under a root folder: the
//! deepest workspace folder (rootUri / workspaceFolders) that holds it, as long as the
//! relative path is one `wfx_schemas::workspace::classify` recognises; otherwise the
//! folder above its last `workflows/` segment (so files outside the workspace, or a
//! workspace folder opened inside `workflows/`, still get cross-file checks); otherwise
//! its workspace folder or its parent folder (such files get no diagnostics).

use std::path::{Component, Path, PathBuf};

use tower_lsp_server::ls_types::Uri;
use wfx_runner::shown::lexical_absolute;
use wfx_schemas::workspace::{FileKind, classify};

use super::document::Located;

/// `root` joined with the `/`-separated `rel`.
pub fn absolute(loc: &Located) -> PathBuf {
    join(&loc.root, &loc.rel)
}

/// `root` joined with a `/`-separated relative path.
pub fn join(root: &Path, rel: &str) -> PathBuf {
    let mut p = root.to_path_buf();
    for seg in rel.split('/').filter(|s| !s.is_empty() && *s != ".") {
        p.push(seg);
    }
    p
}

/// A relative OS path as `/`-separated text; `None` when a component is not UTF-8 or not
/// a plain name.
pub fn to_rel(p: &Path) -> Option<String> {
    let mut segs = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => segs.push(s.to_str()?.to_owned()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(segs.join("/"))
}

/// The file URI of `root/rel`.
pub fn uri_of(root: &Path, rel: &str) -> Option<Uri> {
    Uri::from_file_path(join(root, rel))
}

/// The normalised absolute path of a `file:` URI: the one way a URI becomes a path (document
/// URIs in every request and notification, workspace folders, `rootUri`), so the
/// confinement check against the workspace folders (docs/security.md §1) and the
/// workflow folder derived from the path both see the file the URI names.
///
/// In order: the scheme must be `file` and the authority empty or `localhost`; the path is
/// percent-decoded (so `%2e%2e` and `..%2f` become `..` and `../`); it must be UTF-8,
/// free of NUL and absolute; then `.` and empty segments are dropped and each `..`
/// removes the segment before it (at `/` it stays at `/`), lexically. Symbolic links are
/// not resolved here: every read goes through the confined layer (`DiskFiles`) rooted at a
/// workspace folder, which resolves them, and a workflow folder reached through a link
/// leaving its workspace folder is treated as outside (`Server::inside_workspace`).
///
/// `None` for any other URI (such a document gets no location, so nothing is checked or
/// read for it). Example: `file:///ws/workflows/a/tests/../../../../out/x.yaml` →
/// `/out/x.yaml`.
pub fn file_path(uri: &Uri) -> Option<PathBuf> {
    if !uri.scheme().as_str().eq_ignore_ascii_case("file") {
        return None;
    }
    #[cfg(not(windows))]
    {
        if let Some(auth) = uri.authority() {
            let host = auth.host();
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return None;
            }
        }
        let decoded = uri.path().decode().to_string().ok()?;
        if decoded.contains('\0') {
            return None;
        }
        normalise(Path::new(decoded.as_ref()))
    }
    #[cfg(windows)]
    {
        // Drive letters and `server:` authorities: the type's own conversion (which
        // percent-decodes), then the same normalisation.
        normalise(&uri.to_file_path()?)
    }
}

/// `p` with `.`, empty and `..` segments resolved lexically (see [`file_path`]; the CLI's
/// [`lexical_absolute`], so a path means the same on both faces); `None` unless `p` is
/// absolute.
fn normalise(p: &Path) -> Option<PathBuf> {
    p.is_absolute().then(|| lexical_absolute(p, Path::new(".")))
}

/// Where a file URI sits (see the module doc); `None` for non-file URIs.
pub fn locate(uri: &Uri, roots: &[PathBuf]) -> Option<Located> {
    let abs = file_path(uri)?;
    locate_path(&abs, roots)
}

/// [`locate`] for an absolute path.
pub fn locate_path(abs: &Path, roots: &[PathBuf]) -> Option<Located> {
    let mut roots: Vec<&PathBuf> = roots.iter().collect();
    roots.sort_by_key(|r| std::cmp::Reverse(r.components().count()));
    let mut fallback = None;
    for root in &roots {
        if let Ok(rel) = abs.strip_prefix(root)
            && let Some(rel) = to_rel(rel)
        {
            if classify(&rel) != FileKind::Other {
                return Some(Located {
                    root: (*root).clone(),
                    rel,
                });
            }
            if fallback.is_none() {
                fallback = Some(Located {
                    root: (*root).clone(),
                    rel,
                });
            }
        }
    }
    // The folder above the last `workflows/` segment.
    let comps: Vec<Component<'_>> = abs.components().collect();
    if let Some(w) = comps.iter().rposition(|c| c.as_os_str() == "workflows") {
        let root: PathBuf = comps.iter().take(w).collect();
        if let Ok(rel) = abs.strip_prefix(&root)
            && let Some(rel) = to_rel(rel)
            && classify(&rel) != FileKind::Other
        {
            return Some(Located { root, rel });
        }
    }
    if fallback.is_some() {
        return fallback;
    }
    let parent = abs.parent()?.to_path_buf();
    let name = abs.file_name()?.to_str()?.to_owned();
    Some(Located {
        root: parent,
        rel: name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_located_under_the_right_root() {
        let roots = vec![PathBuf::from("/ws"), PathBuf::from("/ws/workflows/a")];
        let l = locate_path(Path::new("/ws/workflows/a/tests/x.test.yaml"), &roots).unwrap();
        assert_eq!(
            (l.root.as_path(), l.rel.as_str()),
            (Path::new("/ws"), "workflows/a/tests/x.test.yaml")
        );
        // Outside every workspace folder: the folder above `workflows/`.
        let l = locate_path(Path::new("/elsewhere/p/workflows/b/workflow.yaml"), &roots).unwrap();
        assert_eq!(
            (l.root.as_path(), l.rel.as_str()),
            (Path::new("/elsewhere/p"), "workflows/b/workflow.yaml")
        );
        // Any other YAML: its workspace folder.
        let l = locate_path(Path::new("/ws/config/other.yaml"), &roots).unwrap();
        assert_eq!(
            (l.root.as_path(), l.rel.as_str()),
            (Path::new("/ws"), "config/other.yaml")
        );
        let l = locate_path(Path::new("/tmp/other.yaml"), &[]).unwrap();
        assert_eq!(
            (l.root.as_path(), l.rel.as_str()),
            (Path::new("/tmp"), "other.yaml")
        );
        assert_eq!(absolute(&l), PathBuf::from("/tmp/other.yaml"));
    }

    /// Confinement (docs/security.md §1, attack pass 5 F4): every spelling of `..` in a
    /// URI is decoded and resolved before the path is compared with the workspace folders.
    #[cfg(unix)]
    #[test]
    fn uris_are_decoded_then_normalised() {
        let path = |s: &str| file_path(&s.parse::<Uri>().unwrap());
        let out = Some(PathBuf::from("/out/workflows/s/tests/c.test.yaml"));
        for s in [
            "file:///ws/workflows/a/tests/../../../../out/workflows/s/tests/c.test.yaml",
            "file:///ws/workflows/a/tests/%2e%2e/%2E%2E/%2e./.%2e/out/workflows/s/tests/c.test.yaml",
            "file:///ws/workflows/a/tests/..%2f..%2F../../out/workflows/s/tests/c.test.yaml",
            "file:///ws/workflows/a/tests//..//..//..//..//out//workflows/s/./tests/c.test.yaml",
            "file://localhost/../../out/workflows/s/tests/c.test.yaml",
        ] {
            assert_eq!(path(s), out, "{s}");
        }
        assert_eq!(
            path("file:///ws/a%20b.yaml"),
            Some(PathBuf::from("/ws/a b.yaml"))
        );
        // Not a local file: no path, so nothing is located or read.
        for s in [
            "untitled:workflows/a/workflow.yaml",
            "file://host/ws/a.yaml",
            "file:///ws/%ff.yaml",
            "file:///ws/a%00b.yaml",
            "file:relative/a.yaml",
        ] {
            assert_eq!(path(s), None, "{s}");
        }
        let roots = vec![PathBuf::from("/ws")];
        let l = locate(
            &"file:///ws/workflows/a/tests/%2e%2e/%2e%2e/%2e%2e/%2e%2e/out/workflows/s/tests/c.test.yaml"
                .parse::<Uri>()
                .unwrap(),
            &roots,
        )
        .unwrap();
        assert_eq!(
            (l.root.as_path(), l.rel.as_str()),
            (Path::new("/out"), "workflows/s/tests/c.test.yaml")
        );
    }
}
