//! Static checks of sandbox scripts (codes `WFX501`–`WFX503`): hook scripts a workflow names
//! (FORMAT §A.6, §D.2) and skill scripts under `<root>/skills/*/scripts/` (FORMAT §E.7) are
//! parsed by QuickJS as ES modules (strict mode) without evaluating a single statement, and
//! their imports are checked against `@archmax-ai/harness/*`.
//!
//! No execution: nothing here runs JavaScript. The body sits in an async-function wrapper
//! only so that top-level `return` parses; a body that closes the wrapper
//! (`}); for (;;) {} (async function () {`) is parsed like any other text, never run. The scripts are prepared exactly as the runner prepares them
//! (imports blanked, a hook's `export default` rewritten, offsets kept), so a script that
//! passes here parses at run time too.

use std::collections::{BTreeMap, BTreeSet};

use wfx_schemas::check::{MAX_SCRIPT_BYTES, load_workflow};
use wfx_schemas::diagnostics::{self, Diagnostic, sort_diagnostics};
use wfx_schemas::files::{FileAccess, FileError, human_bytes};
use wfx_schemas::model::workflow::HookKind;
use wfx_schemas::text::TextRange;
use wfx_schemas::workspace::WorkflowDir;

use super::engine::{compile_only, position_to_offset};
use super::source::{self, foreign_imports};

/// Wrapper that compiles a body as an async function without calling it.
const CHECK_PREFIX: &str = "(async function () {";
/// The file name QuickJS reports positions under.
const CHECK_FILE: &str = "wfx-check.js";

/// Parses `source` without running any of it (as ES module code, so in strict mode); `None`
/// when it parses, else the byte offset in `source` where QuickJS stopped and its message
/// (e.g. `expecting ';'`).
///
/// `is_module` selects hook preparation: `export default` becomes the hook registration.
/// Every import statement is blanked either way (foreign ones are [`foreign_imports`]'
/// business), and the body may use top-level `await` and `return` (FORMAT §A.6, §E.7).
pub fn check_syntax(source: &str, is_module: bool) -> Option<(u32, String)> {
    if let Some(hit) = syntax_cache_get(source, is_module) {
        return hit;
    }
    let got = check_syntax_uncached(source, is_module);
    syntax_cache_put(source, is_module, got.clone());
    got
}

/// The most source text (bytes) the syntax-check cache keeps: 32 MiB (32 scripts at the
/// 1 MiB script bound). Past it the cache is emptied and starts again.
pub const MAX_SYNTAX_CACHE_BYTES: usize = 32 * 1024 * 1024;

/// Results of [`check_syntax`] by (kind, full source text): a script whose text did not
/// change is not parsed again (the server checks every hook script on each keystroke in
/// `workflow.yaml`; bounded work). Keyed by the whole text, so a hit is exact, never a
/// hash collision.
type SyntaxCache = std::collections::HashMap<(bool, String), Option<(u32, String)>>;

static SYNTAX_CACHE: std::sync::Mutex<Option<(SyntaxCache, usize)>> = std::sync::Mutex::new(None);

/// How many times QuickJS's compile-only parse ran in this process (cache misses of
/// [`check_syntax`]); for tests and benchmarks.
pub static SYNTAX_PARSES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn syntax_cache_get(source: &str, is_module: bool) -> Option<Option<(u32, String)>> {
    let guard = SYNTAX_CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (map, _) = guard.as_ref()?;
    map.get(&(is_module, source.to_owned())).cloned()
}

fn syntax_cache_put(source: &str, is_module: bool, got: Option<(u32, String)>) {
    if source.len() > MAX_SYNTAX_CACHE_BYTES {
        return;
    }
    let mut guard = SYNTAX_CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (map, bytes) = guard.get_or_insert_with(Default::default);
    if *bytes + source.len() > MAX_SYNTAX_CACHE_BYTES {
        map.clear();
        *bytes = 0;
    }
    if map.insert((is_module, source.to_owned()), got).is_none() {
        *bytes += source.len();
    }
}

fn check_syntax_uncached(source: &str, is_module: bool) -> Option<(u32, String)> {
    SYNTAX_PARSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let body = source::prepare(source, is_module);
    let code = format!("{CHECK_PREFIX}{body}\n}})");
    let (message, at) = compile_only(&code, CHECK_FILE)?;
    let offset = match at {
        Some((line, col)) => position_to_offset(&body, line, col, CHECK_PREFIX.len()),
        None => 0,
    };
    Some((offset, message))
}

/// The diagnostics of every hook script `dir`'s `workflow.yaml` names and every skill script
/// of the workspace (see [`check_hook_scripts`], [`check_skill_scripts`]), sorted. Skill
/// scripts are shared by the workspace's workflows: a caller checking several workflows
/// should call [`check_hook_scripts`] per workflow and [`check_skill_scripts`] once.
pub fn check_scripts(fs: &dyn FileAccess, dir: &WorkflowDir) -> Vec<Diagnostic> {
    let mut out = check_hook_scripts(fs, dir);
    out.extend(check_skill_scripts(fs, &dir.root));
    sort_diagnostics(&mut out);
    out
}

/// `WFX503` (syntax) for each hook script named by a
/// `script:` hook of `dir`'s `workflow.yaml` whose path is well-formed (`hooks/….js|mjs`, no
/// `..`) and whose file exists; each related to the first hook naming it. Sorted.
pub fn check_hook_scripts(fs: &dyn FileAccess, dir: &WorkflowDir) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(info) = load_workflow(fs, dir) else {
        return out;
    };
    let Some(model) = info.model.as_ref() else {
        return out;
    };
    // Script path → the first hook site naming it.
    let mut scripts: BTreeMap<String, TextRange> = BTreeMap::new();
    for state in &model.states {
        for hook in state.before.iter().chain(&state.after) {
            if let HookKind::Script(p) = &hook.kind
                && is_hook_path(&p.value)
            {
                scripts.entry(join(&dir.dir(), &p.value)).or_insert(p.range);
            }
        }
    }
    for (path, site) in scripts {
        // Over the bound: `WFX504` on the hook's `script:` (the workflow's cross-file rules).
        let Ok(text) = fs.read_text_max(&path, MAX_SCRIPT_BYTES) else {
            continue;
        };
        let related = |d: Diagnostic| d.with_related(&info.path, site, "the hook is declared here");
        // Foreign imports of hook scripts are reported on `workflow.yaml` by the format
        // crate's workflow rules (FORMAT §D.2); only the syntax check needs the engine.
        if let Some(d) = syntax_diagnostic(&path, &text, true) {
            out.push(related(d));
        }
    }
    sort_diagnostics(&mut out);
    out
}

/// `WFX502` (foreign import) and `WFX503` (syntax) for every `.js`, `.mjs` or `.cjs` file
/// under `<root>/skills/<skill>/scripts/` (recursively). Sorted.
pub fn check_skill_scripts(fs: &dyn FileAccess, root: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let skills_dir = join(root, "skills");
    let Ok(skills) = fs.list(&skills_dir) else {
        return out;
    };
    let mut files = BTreeSet::new();
    // One bounded walk per skill within one budget for all of them: each real folder is
    // listed once (a folder linked K times per level was walked K^8 times, break-it pass
    // 4, F5), at most 32 levels deep, and a walk stopped at a bound is `WFX012`.
    let budget = wfx_schemas::files::WalkBudget::for_pass();
    for skill in skills.iter().filter(|e| e.is_dir) {
        let walk = wfx_schemas::files::walk_within(
            fs,
            &join(&skills_dir, &format!("{}/scripts", skill.name)),
            &budget,
        );
        if let Some(stop) = &walk.stop {
            out.push(wfx_schemas::check::walk_stop_diagnostic(stop));
        }
        files.extend(walk.files.into_iter().filter(|p| is_script_name(p)));
    }
    for path in files {
        let text = match fs.read_text_max(&path, MAX_SCRIPT_BYTES) {
            Ok(text) => text,
            Err(FileError::TooLarge { bytes, limit }) => {
                out.push(Diagnostic::new(
                    &diagnostics::SCRIPT_TOO_LARGE,
                    &path,
                    TextRange::empty(0),
                    format!(
                        "the script is {bytes} bytes, over the {} bound of a script; it was not read",
                        human_bytes(limit)
                    ),
                ));
                continue;
            }
            Err(_) => continue,
        };
        for (range, spec) in foreign_imports(&text) {
            out.push(Diagnostic::new(
                &diagnostics::SCRIPT_FOREIGN_IMPORT,
                &path,
                range,
                format!(
                    "imports from `{spec}`, which the sandbox drops; skill scripts may import \
                     only `@archmax-ai/harness/*` type carriers"
                ),
            ));
        }
        out.extend(syntax_diagnostic(&path, &text, false));
    }
    sort_diagnostics(&mut out);
    out
}

/// `WFX503` at the character where QuickJS stopped parsing (empty at a line end).
fn syntax_diagnostic(path: &str, text: &str, is_hook: bool) -> Option<Diagnostic> {
    let (offset, message) = check_syntax(text, is_hook)?;
    let len = text
        .get(offset as usize..)
        .and_then(|rest| rest.chars().next())
        .filter(|c| *c != '\n' && *c != '\r')
        .map_or(0, char::len_utf8);
    Some(Diagnostic::new(
        &diagnostics::SCRIPT_SYNTAX,
        path,
        TextRange::new(offset, offset + len as u32),
        format!("the script does not parse as JavaScript: {message}"),
    ))
}

/// A skill script's file name: `.js`, `.mjs` or `.cjs`.
fn is_script_name(path: &str) -> bool {
    [".js", ".mjs", ".cjs"]
        .iter()
        .any(|ext| path.ends_with(ext))
}

/// A `script:` path the runner executes: `hooks/<file>.js|mjs`, no `..` segment (FORMAT §A.6).
fn is_hook_path(path: &str) -> bool {
    path.strip_prefix("hooks/")
        .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
        && (path.ends_with(".js") || path.ends_with(".mjs"))
        && !path.split('/').any(|seg| seg == "..")
}

/// `a/b` from `a` and `b`; `b` alone when `a` is empty.
fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}/{b}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_checks_are_cached_by_content() {
        let src = "export default () => ok(); // cache test 7f3a\n";
        assert_eq!(syntax_cache_get(src, true), None);
        let first = check_syntax(src, true);
        assert_eq!(first, None);
        assert_eq!(syntax_cache_get(src, true), Some(None));
        // The kind is part of the key, and so is every byte of the text.
        assert_eq!(syntax_cache_get(src, false), None);
        let edited = "export default () => ok(; // cache test 7f3a\n";
        assert_eq!(syntax_cache_get(edited, true), None);
        let err = check_syntax(edited, true);
        assert!(err.is_some());
        assert_eq!(syntax_cache_get(edited, true), Some(err));
    }

    #[test]
    fn hook_paths() {
        assert!(is_hook_path("hooks/a.js"));
        assert!(is_hook_path("hooks/x/b.mjs"));
        assert!(!is_hook_path("hooks/../a.js"));
        assert!(!is_hook_path("scripts/a.js"));
        assert!(!is_hook_path("hooks/a.ts"));
    }
}
