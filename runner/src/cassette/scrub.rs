//! `wfx-lsp scrub [PATH…]` (issue 15; docs/cassettes.md "Scrubbing"): re-applies the
//! format's redaction ([`Secrets`], by value) to cassettes already on disk, in place, through
//! the atomic and confined [`save`]. Used after a key was added to the environment or to
//! `.env` since a cassette was recorded, or on a cassette recorded by another tool.
//!
//! Key-shaped strings that are no variable's value (`wfx_schemas::cassette::key_shaped`)
//! are left as they are, like the writer leaves them, and reported by count and kind.
//!
//! Must not: print a redacted value or a key-shaped string (only counts are reported, and a parse error is
//! redacted before it is shown), write a cassette that does not parse, write outside the
//! workspace, or rewrite a cassette in which nothing was replaced.

use std::io::Write;
use std::path::Path;

use wfx_schemas::cassette::{MAX_BYTES, Secrets, is_cassette_name, load};
use wfx_schemas::files::{FileAccess, walk};
use wfx_schemas::inert::inert;

use super::save;
use crate::disk::DiskFiles;

/// The most cassettes one `scrub` run processes; more is an error (exit 2) naming the bound.
pub const MAX_CASSETTES: usize = 10_000;

/// What scrubbing one cassette did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scrubbed {
    /// Parsed; `replaced` values were replaced by their placeholders (`0`: the file was not
    /// rewritten). `key_shaped` holds the kind of every key-shaped string left in the
    /// scrubbed text (`wfx_schemas::cassette::key_shaped`, at most
    /// `wfx_schemas::cassette::MAX_KEY_SHAPED`): no variable holds them, so redaction by
    /// value cannot replace them; the kinds are reported, never the strings.
    Replaced {
        /// Values replaced.
        replaced: usize,
        /// Kinds of the key-shaped strings left, in text order (e.g. `sk- key`).
        key_shaped: Vec<&'static str>,
    },
    /// Not scrubbed: the reason (already redacted), e.g. a parse error or a missing file.
    Failed(String),
}

/// Scrubs the cassette at the workspace-relative `path` with `secrets`: loads it through
/// the confined layer (`wfx_schemas::cassette::load`, so an invalid cassette is refused and
/// left as it was) and, when any value of `secrets` occurs in it, writes it back with
/// [`save`] (temporary file + rename; a link at the name is replaced, never followed).
pub fn scrub_one(fs: &DiskFiles, path: &str, secrets: &Secrets) -> Scrubbed {
    if !is_cassette_name(path) {
        return Scrubbed::Failed("not a cassette (`*.cassette.json`)".into());
    }
    let c = match load(fs, path) {
        Ok(Some(c)) => c,
        Ok(None) => return Scrubbed::Failed("no such file".into()),
        Err(e) => return Scrubbed::Failed(secrets.redact(&e.to_string()).0),
    };
    let (text, n) = wfx_schemas::cassette::to_json(&c, secrets);
    let left = if n == 0 {
        // Nothing is rewritten: warn about what the file holds as it is.
        fs.read_text_max(path, MAX_BYTES as u64).unwrap_or(text)
    } else {
        text
    };
    let key_shaped: Vec<&'static str> = wfx_schemas::cassette::key_shaped(&left)
        .into_iter()
        .map(|k| k.kind)
        .collect();
    if n == 0 {
        return Scrubbed::Replaced {
            replaced: 0,
            key_shaped,
        };
    }
    match save(fs, path, &c, secrets) {
        Ok(replaced) => Scrubbed::Replaced {
            replaced,
            key_shaped,
        },
        Err(e) => Scrubbed::Failed(secrets.redact(&e.to_string()).0),
    }
}

/// The secrets of a workspace: the key-like variables of the process environment and of
/// `<root>/.env` (read through the confined layer), as `wfx-lsp test` uses when it records.
pub fn workspace_secrets(fs: &DiskFiles) -> Secrets {
    let mut vars: Vec<(String, String)> = std::env::vars().collect();
    if let Ok(t) = fs.read_text(".env") {
        vars.extend(crate::model::config::parse_dotenv(&t));
    }
    Secrets::from_env(vars)
}

/// `wfx-lsp scrub`: the workspace is `cwd`, which must hold `workflows/` (else an error,
/// exit 2); `paths` are cassettes relative to it (none: every `*.cassette.json` below
/// `workflows/`). Prints `<path>: <n> value(s) replaced` per cassette on stdout,
/// `Error: <path>: <reason>` on stderr for one that cannot be scrubbed (the others are
/// still processed), and a tally on stderr counting only the cassettes scrubbed
/// (`scrubbed 1 cassette(s): 2 value(s) replaced; 1 failed`). Returns the exit code: 0, or
/// 2 when any cassette failed, there was no workspace, more than [`MAX_CASSETTES`], or the
/// secret values are over the redaction set's bounds (`Secrets::MAX_VALUES`,
/// `Secrets::MAX_BYTES`: nothing is read or written, `Error:` names the bounds).
pub fn run_cli(
    paths: &[String],
    cwd: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    // The workspace is where `.env` and `workflows/` are: started anywhere else (inside
    // `workflows/`, an empty folder), nothing can be scrubbed with the right secrets.
    if !cwd.join("workflows").is_dir() {
        let _ = writeln!(
            stderr,
            "Error: no workflows/ folder in {}; run scrub from the workspace root",
            inert(&cwd.display().to_string())
        );
        return 2;
    }
    let fs = DiskFiles::new(cwd);
    let secrets = workspace_secrets(&fs);
    // A set too large to redact whole is refused before any cassette is read: a partial
    // scrub would look done (docs/cassettes.md, "Scrubbing").
    if let Some(over) = secrets.overflow() {
        let _ = writeln!(stderr, "Error: {over}");
        return 2;
    }
    let list: Vec<String> = if paths.is_empty() {
        walk(&fs, "workflows")
            .into_iter()
            .filter(|p| is_cassette_name(p))
            .collect()
    } else {
        paths
            .iter()
            .map(|p| p.trim_start_matches("./").replace('\\', "/"))
            .collect()
    };
    if list.len() > MAX_CASSETTES {
        let _ = writeln!(
            stderr,
            "Error: {} cassettes, more than the {MAX_CASSETTES} one run scrubs; pass paths",
            list.len()
        );
        return 2;
    }
    let mut code = 0;
    let mut total = 0usize;
    let mut scrubbed = 0usize;
    for p in &list {
        match scrub_one(&fs, p, &secrets) {
            Scrubbed::Replaced {
                replaced,
                key_shaped,
            } => {
                total += replaced;
                scrubbed += 1;
                let _ = writeln!(stdout, "{}: {replaced} value(s) replaced", inert(p));
                if !key_shaped.is_empty() {
                    let mut kinds = key_shaped.clone();
                    kinds.sort_unstable();
                    kinds.dedup();
                    let _ = writeln!(
                        stderr,
                        "warning: {}: {} key-shaped string(s) left ({}); set the variable holding each and scrub again, or remove it (`wfx-lsp check` points at them, WFX453)",
                        inert(p),
                        key_shaped.len(),
                        kinds.join(", ")
                    );
                }
            }
            Scrubbed::Failed(m) => {
                code = 2;
                let _ = writeln!(stderr, "Error: {}: {}", inert(p), inert(&m));
            }
        }
    }
    let _ = writeln!(
        stderr,
        "scrubbed {scrubbed} cassette(s): {total} value(s) replaced{}",
        match list.len() - scrubbed {
            0 => String::new(),
            n => format!("; {n} failed"),
        }
    );
    code
}
