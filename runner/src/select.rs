//! The one rule that picks a case's agent (issue 15, item 4), shared by `wfx-lsp test`, the
//! editor's run lenses and commands, and `graph --case`: the cassette beside the case
//! (`<case>.cassette.json`, docs/cassettes.md) when there is one, else the agent script beside the case
//! (`<case>.agent.yaml`, docs/agent-scripts.md), else the live model when live runs are
//! allowed, else **not run: no agent**. A case without an agent is never run and never
//! passes silently: it is reported with [`not_run_message`], counted apart from failures,
//! and fails the run unless `--allow-no-agent` is given (docs/cli.md).
//!
//! Must not: read anything but the workspace through [`FileAccess`].

use wfx_schemas::files::{FileAccess, FileError};
use wfx_schemas::workspace::{agent_script_path, cassette_path};

/// Where a case's agent comes from, in the order the rule tries them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentSource {
    /// The cassette beside the case: its recorded model calls are replayed (or, with
    /// `--live` and `--record new|all`, re-recorded).
    Cassette {
        /// Workspace-relative path of the cassette.
        path: String,
    },
    /// The agent script beside the case.
    AgentScript {
        /// Workspace-relative path of the script.
        path: String,
    },
    /// The live model (only when live runs are allowed).
    Live,
    /// No agent: the case is reported "not run: no agent".
    NoAgent {
        /// Where an agent script would go.
        script_path: String,
    },
}

impl AgentSource {
    /// A short label for lenses and narration: `cassette`, `agent script`, `live model`,
    /// `no agent`.
    pub fn label(&self) -> &'static str {
        match self {
            AgentSource::Cassette { .. } => "cassette",
            AgentSource::AgentScript { .. } => "agent script",
            AgentSource::Live => "live model",
            AgentSource::NoAgent { .. } => "no agent",
        }
    }
}

/// Picks the agent of the case at `case_path` (workspace-relative): its cassette, else its
/// agent script, else the live model when `live` (the `--live` flag, or the editor's
/// setting), else none. A cassette that exists but cannot be read or parsed (a link leaving
/// the workspace, an unknown version) still counts, and so does such an agent script: the
/// run then fails with the reason (never a silent "no agent").
pub fn select_agent(fs: &dyn FileAccess, case_path: &str, live: bool) -> AgentSource {
    let cassette = cassette_path(case_path);
    // A bound of 0 bytes: the disk layer answers from the file's size without reading it.
    if !matches!(fs.read_max(&cassette, 0), Err(FileError::NotFound)) {
        return AgentSource::Cassette { path: cassette };
    }
    let script = agent_script_path(case_path);
    if fs.read_text(&script).is_ok() {
        return AgentSource::AgentScript { path: script };
    }
    if live {
        return AgentSource::Live;
    }
    AgentSource::NoAgent {
        script_path: script,
    }
}

/// The message of a case that was not run for want of an agent, with the hint naming the
/// ways to give it one: "no agent: no agent script `<script>`, no cassette, and live runs
/// are off — write the agent script (`wfx-lsp scaffold <case>` drafts it from the case's
/// steps), record a cassette, or run with `--live`".
pub fn not_run_message(case_path: &str, script_path: &str) -> String {
    format!(
        "no agent: no agent script `{script_path}`, no cassette, and live runs are off — write the agent script (`wfx-lsp scaffold {case_path}` drafts it from the case's steps), record a cassette, or run with `--live`"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use wfx_schemas::files::MemFiles;

    #[test]
    fn cassette_then_script_then_live_then_no_agent() {
        let mut fs = MemFiles::new();
        let case = "workflows/w/tests/a.test.yaml";
        fs.insert(case, "title: t\n");
        assert_eq!(
            select_agent(&fs, case, false),
            AgentSource::NoAgent {
                script_path: "workflows/w/tests/a.agent.yaml".into()
            }
        );
        assert_eq!(select_agent(&fs, case, true), AgentSource::Live);
        fs.insert("workflows/w/tests/a.agent.yaml", "turns: []\n");
        for live in [false, true] {
            assert_eq!(
                select_agent(&fs, case, live),
                AgentSource::AgentScript {
                    path: "workflows/w/tests/a.agent.yaml".into()
                }
            );
        }
        assert_eq!(select_agent(&fs, case, false).label(), "agent script");
        // A cassette comes first, whatever else there is.
        fs.insert("workflows/w/tests/a.cassette.json", "{}");
        for live in [false, true] {
            assert_eq!(
                select_agent(&fs, case, live),
                AgentSource::Cassette {
                    path: "workflows/w/tests/a.cassette.json".into()
                }
            );
        }
        assert_eq!(select_agent(&fs, case, false).label(), "cassette");
    }

    #[test]
    fn the_hint_names_every_way_to_give_a_case_an_agent() {
        let m = not_run_message("w/tests/a.test.yaml", "w/tests/a.agent.yaml");
        for part in [
            "`w/tests/a.agent.yaml`",
            "wfx-lsp scaffold w/tests/a.test.yaml",
            "cassette",
            "--live",
        ] {
            assert!(m.contains(part), "{part}: {m}");
        }
    }
}
