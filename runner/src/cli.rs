//! The `wfx-lsp test` command, without clap: options in, exit code out, output to any
//! `Write` (FORMAT §C.4). The binary's clap layer fills [`TestOptions`] and calls [`run_cli`].

use std::io::Write;
use std::path::{Path, PathBuf};

/// Options of `wfx-lsp test [WORKFLOW|PATH] [FILTER] [--json] [--reporter junit|markdown]...
/// [--out DIR] [--skip-grades] [--bail]`.
#[derive(Clone, Debug, Default)]
pub struct TestOptions {
    /// A workflow slug, a workflow folder, a workspace root or a case file.
    pub target: Option<String>,
    /// Substring filter on the workspace-relative case path.
    pub filter: Option<String>,
    /// Print the RunTestsResult JSON on stdout.
    pub json: bool,
    /// Extra reporters (`junit`, `markdown`, `html`).
    pub reporters: Vec<String>,
    /// Where reporters write.
    pub out_dir: Option<PathBuf>,
    /// Report `grade` as not-executed.
    pub skip_grades: bool,
    /// Stop after the first failing case.
    pub bail: bool,
    /// More narration.
    pub verbose: bool,
}

/// Runs the command in `cwd`; returns the process exit code (0 pass, 1 failures or no
/// match, 2 usage or IO error).
pub fn run_cli(_opts: &TestOptions, _cwd: &Path, _stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let _ = writeln!(stderr, "error: the runner is not built yet");
    2
}
