//! Cassettes in the runner (issue 15; docs/cassettes.md): the atomic write of a recorded
//! cassette through the confined file layer. The format itself (types, parsing, the path
//! rule, redaction) is `wfx_schemas::cassette`, so `check` and the editor read the same
//! types.
//!
//! Must not: write anywhere but the workspace through [`DiskFiles`], follow a link planted
//! at the cassette's name, or write a cassette whose secrets were not redacted.

use wfx_schemas::cassette::{Cassette, Secrets, to_json};
use wfx_schemas::files::FileError;

use crate::disk::{DiskFiles, replace_file};

/// Writes `cassette` at the workspace-relative `path` (normally
/// [`wfx_schemas::cassette::cassette_path`] of the case) with every value of `secrets`
/// redacted, and returns the number of values replaced.
///
/// The folder is resolved through the confined layer ([`DiskFiles::resolve`]: a folder
/// leaving the workspace is `OutsideWorkspace`, nothing is written); the bytes go to a
/// temporary file in that folder which is then renamed over the name
/// ([`replace_file`]), so a reader never sees half a cassette, a failed write leaves the
/// old file as it was, and a symbolic link planted at the name is replaced, never followed.
/// Errors: the file layer's, `NotFound` when the folder does not exist, or `Other` with
/// the OS's reason.
pub fn save(
    fs: &DiskFiles,
    path: &str,
    cassette: &Cassette,
    secrets: &Secrets,
) -> Result<usize, FileError> {
    let (dir, name) = match path.rsplit_once('/') {
        Some((d, n)) => (d, n),
        None => ("", path),
    };
    if name.is_empty() || name == "." || name == ".." {
        return Err(FileError::Other(format!("`{path}` is not a file path")));
    }
    let os_dir = fs.resolve(dir)?;
    let (text, n) = to_json(cassette, secrets);
    replace_file(&os_dir, name, text.as_bytes()).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => FileError::NotFound,
        _ => FileError::Other(format!("cannot write `{path}`: {e}")),
    })?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wfx_schemas::cassette::{InputDigests, RecordedClock, VERSION, load};

    fn tiny() -> Cassette {
        Cassette {
            version: VERSION,
            recorded_with: "wfx-lsp test".into(),
            recorded_at: "2026-01-01T00:00:00Z".into(),
            clock: RecordedClock {
                start_ms: 0,
                step_ms: 1,
                zone: "UTC".into(),
            },
            model: "planted-secret-value-1234".into(),
            endpoint: "127.0.0.1".into(),
            case: "a".into(),
            inputs: InputDigests {
                case: String::new(),
                workflow: String::new(),
            },
            prompts: Default::default(),
            toolsets: Default::default(),
            interactions: Vec::new(),
        }
    }

    #[test]
    fn saves_atomically_redacted_and_never_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        std::fs::create_dir_all(root.join("w/tests")).unwrap();
        let fs = DiskFiles::new(&root);
        let secrets = Secrets::from_env([(
            "ARCHMAX_API_KEY".to_owned(),
            "planted-secret-value-1234".to_owned(),
        )]);
        let n = save(&fs, "w/tests/a.cassette.json", &tiny(), &secrets).unwrap();
        assert_eq!(n, 1);
        let text = std::fs::read_to_string(root.join("w/tests/a.cassette.json")).unwrap();
        assert!(!text.contains("planted-secret"), "{text}");
        assert!(text.contains("<ENV:ARCHMAX_API_KEY>"));
        let back = load(&fs, "w/tests/a.cassette.json").unwrap().unwrap();
        assert_eq!(back.model, "<ENV:ARCHMAX_API_KEY>");
        // No temporary file is left behind.
        let names: Vec<String> = std::fs::read_dir(root.join("w/tests"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.cassette.json"]);

        #[cfg(unix)]
        {
            // A link planted at the name is replaced, its target untouched.
            let outside = tmp.path().join("outside.txt");
            std::fs::write(&outside, "keep").unwrap();
            std::os::unix::fs::symlink(&outside, root.join("w/tests/b.cassette.json")).unwrap();
            save(&fs, "w/tests/b.cassette.json", &tiny(), &secrets).unwrap();
            assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
            let meta = std::fs::symlink_metadata(root.join("w/tests/b.cassette.json")).unwrap();
            assert!(meta.is_file());
            // A folder link leaving the workspace is refused and nothing is written there.
            std::os::unix::fs::symlink(tmp.path(), root.join("w/out")).unwrap();
            assert_eq!(
                save(&fs, "w/out/c.cassette.json", &tiny(), &secrets),
                Err(FileError::OutsideWorkspace)
            );
            assert!(!tmp.path().join("c.cassette.json").exists());
        }
        assert_eq!(
            save(&fs, "../x.cassette.json", &tiny(), &secrets),
            Err(FileError::OutsideWorkspace)
        );
        assert_eq!(
            save(&fs, "w/missing/a.cassette.json", &tiny(), &secrets),
            Err(FileError::NotFound)
        );
    }
}
