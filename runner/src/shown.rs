//! Paths as the user sees them: a workspace root as seen from the current folder, so a
//! path printed in a command the user is told to run (`wfx-lsp scaffold …`,
//! `wfx-lsp test …`) works when pasted in the folder the command was started in, and
//! `check`'s reports name files the same way (docs/cli.md, "Paths in output").
//!
//! Must not: read a file or resolve a link other than the current folder itself; pure over
//! path text otherwise.

use std::path::{Component, Path, PathBuf};

/// `path` joined on `cwd` (absolute, canonical), with `.` dropped and `..` popping the
/// previous name, on the text: no link is resolved.
pub fn lexical_absolute(cwd: &Path, path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in cwd.join(path).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// `to` as seen from `from` (both absolute, canonical), `/`-terminated, `""` when equal:
/// `ws/`, `../../`; an absolute path when they share nothing but `/`.
pub fn relative_prefix(to: &Path, from: &Path) -> String {
    let t: Vec<_> = to.components().collect();
    let f: Vec<_> = from.components().collect();
    let common = t.iter().zip(&f).take_while(|(a, b)| a == b).count();
    if common <= 1 {
        let s = to.to_string_lossy().replace('\\', "/");
        return if s.ends_with('/') { s } else { format!("{s}/") };
    }
    let mut out = String::new();
    for _ in common..f.len() {
        out.push_str("../");
    }
    for c in t.iter().skip(common) {
        out.push_str(&c.as_os_str().to_string_lossy());
        out.push('/');
    }
    out
}

/// The prefix that turns a path relative to the workspace `root` into one relative to
/// `cwd` (`""`, `"ws/"`, `"../../"`, or an absolute `"/…/"`). `root` may be relative to
/// `cwd` or absolute, and may hold `.` and `..` (applied to the text); `cwd` is
/// canonicalised (kept as given when that fails).
pub fn root_prefix(root: &Path, cwd: &Path) -> String {
    let cwd_abs = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    relative_prefix(&lexical_absolute(&cwd_abs, root), &cwd_abs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_climb_descend_or_stay_absolute() {
        let p = |to: &str, from: &str| relative_prefix(Path::new(to), Path::new(from));
        assert_eq!(p("/a/ws", "/a/ws"), "");
        assert_eq!(p("/a/ws", "/a"), "ws/");
        assert_eq!(p("/a/ws", "/a/ws/workflows/x"), "../../");
        assert_eq!(p("/a/ws", "/b/c"), "/a/ws/");
        assert_eq!(
            lexical_absolute(Path::new("/a/b"), Path::new("../ws/./w")),
            Path::new("/a/ws/w")
        );
    }
}
