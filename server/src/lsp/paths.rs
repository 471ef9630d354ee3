//! URIs ↔ workspace-relative paths. A document is checked under a root folder: the
//! deepest workspace folder (rootUri / workspaceFolders) that holds it, as long as the
//! relative path is one `wfx_schemas::workspace::classify` recognises; otherwise the
//! folder above its last `workflows/` segment (so files outside the workspace, or a
//! workspace folder opened inside `workflows/`, still get cross-file checks); otherwise
//! its workspace folder or its parent folder (such files get no diagnostics).

use std::path::{Component, Path, PathBuf};

use tower_lsp_server::ls_types::Uri;
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

/// The file path of a `file:` URI.
pub fn file_path(uri: &Uri) -> Option<PathBuf> {
    uri.to_file_path().map(|p| p.into_owned())
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
}
