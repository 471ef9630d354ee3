//! Where files sit in an archmax workspace and what they are (FORMAT §C.1): workflow specs,
//! case documents, agent scripts, `WORKFLOW.md`, and the workspace root that holds
//! `workflows/` and `skills/`.
//!
//! Paths are workspace-relative with `/`. A path may sit below a prefix
//! (`examples/cs/workflows/x/workflow.yaml`): the last `workflows/<slug>/` segment decides.

use crate::files::{FileAccess, join, walk};

/// What a file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// `workflows/<slug>/workflow.yaml`.
    Workflow(WorkflowDir),
    /// `workflows/<slug>/tests/**/*.test.yaml` or `.test.yml`.
    Case(WorkflowDir),
    /// `workflows/<slug>/tests/**/*.agent.yaml` (the runner's scripted agent).
    AgentScript(WorkflowDir),
    /// `workflows/<slug>/WORKFLOW.md`.
    WorkflowMd(WorkflowDir),
    /// `workflows/<slug>/tests/**/*.cassette.json` (a recorded live run, docs/cassettes.md).
    Cassette(WorkflowDir),
    /// Anything else: gets no diagnostics.
    Other,
}

/// A workflow folder.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkflowDir {
    /// The workspace root (the folder holding `workflows/`), `""` for the top.
    pub root: String,
    /// The workflow slug (its directory name).
    pub slug: String,
}

impl WorkflowDir {
    /// `<root>/workflows/<slug>`.
    pub fn dir(&self) -> String {
        join(&self.root, &format!("workflows/{}", self.slug))
    }
    /// `<root>/workflows/<slug>/workflow.yaml`.
    pub fn spec_path(&self) -> String {
        join(&self.dir(), "workflow.yaml")
    }
    /// `<root>/workflows/<slug>/tests`.
    pub fn tests_dir(&self) -> String {
        join(&self.dir(), "tests")
    }
    /// `<root>/skills`.
    pub fn skills_dir(&self) -> String {
        join(&self.root, "skills")
    }
}

/// True when the file name makes it a case (FORMAT §C.1).
pub fn is_case_name(path: &str) -> bool {
    path.ends_with(".test.yaml") || path.ends_with(".test.yml")
}

/// Classifies a workspace-relative path.
pub fn classify(path: &str) -> FileKind {
    let segs: Vec<&str> = path.split('/').collect();
    let Some(w) = segs.iter().rposition(|s| *s == "workflows") else {
        return FileKind::Other;
    };
    let (Some(slug), Some(rest)) = (segs.get(w + 1), segs.get(w + 2..)) else {
        return FileKind::Other;
    };
    if slug.is_empty() {
        return FileKind::Other;
    }
    let dir = WorkflowDir {
        root: segs.get(..w).map(|s| s.join("/")).unwrap_or_default(),
        slug: (*slug).to_owned(),
    };
    match rest {
        ["workflow.yaml"] => FileKind::Workflow(dir),
        ["WORKFLOW.md"] => FileKind::WorkflowMd(dir),
        ["tests", .., name] if is_case_name(name) => FileKind::Case(dir),
        ["tests", .., name] if name.ends_with(".agent.yaml") => FileKind::AgentScript(dir),
        ["tests", .., name] if name.ends_with(".cassette.json") => FileKind::Cassette(dir),
        _ => FileKind::Other,
    }
}

/// The case id: the path relative to the tests folder without `.test.yaml`/`.test.yml`.
pub fn case_id(tests_dir: &str, path: &str) -> String {
    let rel = path
        .strip_prefix(tests_dir)
        .map(|r| r.trim_start_matches('/'))
        .unwrap_or(path);
    rel.strip_suffix(".test.yaml")
        .or_else(|| rel.strip_suffix(".test.yml"))
        .unwrap_or(rel)
        .to_owned()
}

/// The agent script beside a case: `x.test.yaml` → `x.agent.yaml`.
pub fn agent_script_path(case_path: &str) -> String {
    let stem = case_path
        .strip_suffix(".test.yaml")
        .or_else(|| case_path.strip_suffix(".test.yml"))
        .unwrap_or(case_path);
    format!("{stem}.agent.yaml")
}

/// The cassette beside a case: `x.test.yaml` (or `.test.yml`) → `x.cassette.json`
/// (docs/cassettes.md). The name does not end in `.test.yaml`, so the reference's discovery
/// (`**/*.test.yaml`) and ours ([`discover_cases`]) ignore it.
pub fn cassette_path(case_path: &str) -> String {
    let stem = case_path
        .strip_suffix(".test.yaml")
        .or_else(|| case_path.strip_suffix(".test.yml"))
        .unwrap_or(case_path);
    format!("{stem}.cassette.json")
}

/// Every case file of a workflow, sorted in UTF-16 order (FORMAT §C.1).
pub fn discover_cases(fs: &dyn FileAccess, wf: &WorkflowDir) -> Vec<String> {
    walk(fs, &wf.tests_dir())
        .into_iter()
        .filter(|p| is_case_name(p))
        .collect()
}

/// Every agent script of a workflow, sorted.
pub fn discover_agent_scripts(fs: &dyn FileAccess, wf: &WorkflowDir) -> Vec<String> {
    walk(fs, &wf.tests_dir())
        .into_iter()
        .filter(|p| p.ends_with(".agent.yaml"))
        .collect()
}

/// Every cassette of a workflow (`tests/**/*.cassette.json`), sorted as [`walk`] lists.
pub fn discover_cassettes(fs: &dyn FileAccess, wf: &WorkflowDir) -> Vec<String> {
    walk(fs, &wf.tests_dir())
        .into_iter()
        .filter(|p| p.ends_with(".cassette.json"))
        .collect()
}

/// The case files, agent scripts and cassettes of a workflow's `tests/` folder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestFiles {
    /// As [`discover_cases`].
    pub cases: Vec<String>,
    /// As [`discover_agent_scripts`].
    pub agent_scripts: Vec<String>,
    /// As [`discover_cassettes`].
    pub cassettes: Vec<String>,
    /// Where the walk of `tests/` stopped at a bound ([`crate::files::walk_bounded`]):
    /// files below it are in none of the lists. `check` and the editor report it
    /// (`WFX012`), `wfx-lsp test` fails the run.
    pub stop: Option<crate::files::WalkStop>,
}

/// [`discover_cases`], [`discover_agent_scripts`] and [`discover_cassettes`] from one
/// [`walk`] of the tests folder instead of three (a `check` of a workflow folder needs all
/// three; docs/performance.md, "check cost").
pub fn discover_test_files(fs: &dyn FileAccess, wf: &WorkflowDir) -> TestFiles {
    discover_test_files_within(fs, wf, &crate::files::WalkBudget::of(usize::MAX))
}

/// [`discover_test_files`] as one walk of a pass ([`crate::files::walk_within`]): the
/// walks of all workflows of one `check` run or server pass share `budget`
/// (docs/security.md, F2).
pub fn discover_test_files_within(
    fs: &dyn FileAccess,
    wf: &WorkflowDir,
    budget: &crate::files::WalkBudget,
) -> TestFiles {
    let found = crate::files::walk_within(fs, &wf.tests_dir(), budget);
    let mut out = TestFiles {
        stop: found.stop,
        ..TestFiles::default()
    };
    for p in found.files {
        if is_case_name(&p) {
            out.cases.push(p);
        } else if p.ends_with(".agent.yaml") {
            out.agent_scripts.push(p);
        } else if p.ends_with(".cassette.json") {
            out.cassettes.push(p);
        }
    }
    out
}

/// The workflows of the workspace at `root`: every folder under `<root>/workflows/`, sorted.
pub fn discover_workflows(fs: &dyn FileAccess, root: &str) -> Vec<WorkflowDir> {
    let Ok(entries) = fs.list(&join(root, "workflows")) else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter(|e| e.is_dir)
        .map(|e| WorkflowDir {
            root: root.to_owned(),
            slug: e.name,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        let wd = |root: &str, slug: &str| WorkflowDir {
            root: root.into(),
            slug: slug.into(),
        };
        assert_eq!(
            classify("workflows/a/workflow.yaml"),
            FileKind::Workflow(wd("", "a"))
        );
        assert_eq!(
            classify("x/y/workflows/a/tests/s/t.test.yml"),
            FileKind::Case(wd("x/y", "a"))
        );
        assert_eq!(
            classify("workflows/a/tests/t.agent.yaml"),
            FileKind::AgentScript(wd("", "a"))
        );
        assert_eq!(classify("workflows/a/tests/fixture.yaml"), FileKind::Other);
        assert_eq!(classify("workflows/a/other.yaml"), FileKind::Other);
        assert_eq!(classify("other.yaml"), FileKind::Other);
        assert_eq!(
            case_id(
                "workflows/a/tests",
                "workflows/a/tests/sub/dir/case.test.yaml"
            ),
            "sub/dir/case"
        );
        assert_eq!(
            agent_script_path("w/tests/a.test.yml"),
            "w/tests/a.agent.yaml"
        );
    }

    #[test]
    fn one_walk_finds_what_the_three_discoveries_find() {
        let fs = crate::files::MemFiles::new()
            .with("workflows/a/workflow.yaml", "")
            .with("workflows/a/tests/b.test.yaml", "")
            .with("workflows/a/tests/b.agent.yaml", "")
            .with("workflows/a/tests/b.cassette.json", "")
            .with("workflows/a/tests/sub/a.test.yml", "")
            .with("workflows/a/tests/sub/a.cassette.json", "")
            .with("workflows/a/tests/fixture.yaml", "");
        let dir = WorkflowDir {
            root: String::new(),
            slug: "a".into(),
        };
        let all = discover_test_files(&fs, &dir);
        assert_eq!(all.cases, discover_cases(&fs, &dir));
        assert_eq!(all.agent_scripts, discover_agent_scripts(&fs, &dir));
        assert_eq!(all.cassettes, discover_cassettes(&fs, &dir));
        assert_eq!(
            all.cases,
            [
                "workflows/a/tests/b.test.yaml",
                "workflows/a/tests/sub/a.test.yml"
            ]
        );
        assert_eq!(all.cassettes.len(), 2);
    }
}
