//! `check_paths` and `check_workspace` spread files over threads once a run has 64 or more
//! (`check::run_jobs`). This pins that the parallel run reports exactly what checking each
//! file on its own reports, in the same sorted order, and counts the same files — on a
//! workflow with 150 cases, a third of them broken in different ways (FORMAT §B.1, §B.10).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use wfx_schemas::check::{check_file, check_paths, check_workspace};
use wfx_schemas::diagnostics::{Diagnostic, sort_diagnostics};
use wfx_schemas::files::MemFiles;

const WORKFLOW: &str = "instructions: Be brief.
states:
  start:
    title: Start
    summary: The only state.
    triggers:
      manual:
        description: Start by hand.
    instructions: Help.
";

fn workspace(cases: usize) -> (MemFiles, Vec<String>) {
    let mut fs = MemFiles::new().with("workflows/w/workflow.yaml", WORKFLOW.as_bytes().to_vec());
    let mut paths = Vec::new();
    for i in 0..cases {
        let body = match i % 3 {
            0 => format!(
                "title: Case {i}\ndescription: Fine.\nsteps:\n  - send: hi\n  - reachedState: start\n"
            ),
            1 => format!("title: Case {i}\ndescription: A typo.\nsteps:\n  - sned: hi\n"),
            _ => format!(
                "title: Case {i}\ndescription: Unknown state.\nsteps:\n  - send: hi\n  - reachedState: nowhere-{i}\n"
            ),
        };
        let p = format!("workflows/w/tests/c{i:03}.test.yaml");
        fs = fs.with(&p, body.into_bytes());
        paths.push(p);
    }
    (fs, paths)
}

fn one_by_one(fs: &MemFiles, paths: &[String]) -> Vec<Diagnostic> {
    let mut all: Vec<Diagnostic> = std::iter::once("workflows/w/workflow.yaml".to_owned())
        .chain(paths.iter().cloned())
        .flat_map(|p| check_file(fs, &p))
        .collect();
    sort_diagnostics(&mut all);
    all
}

fn render(d: &[Diagnostic]) -> Vec<String> {
    d.iter()
        .map(|d| {
            format!(
                "{} {}..{} {} {}",
                d.file, d.range.start, d.range.end, d.code.code, d.message
            )
        })
        .collect()
}

#[test]
fn a_parallel_run_reports_what_each_file_reports_alone() {
    let (fs, paths) = workspace(150);
    let want = render(&one_by_one(&fs, &paths));
    // 100 broken cases: a typo'd step (WFX120) or an unknown state.
    assert_eq!(want.len(), 100, "{want:#?}");
    let run = check_paths(&fs, &[String::new()]).unwrap();
    let (got, files) = (run.diagnostics, run.files);
    assert_eq!(files, 151);
    assert_eq!(render(&got), want);
    assert_eq!(render(&check_workspace(&fs, "")), want);
    // A folder target (cases checked as single files) agrees too.
    let run = check_paths(&fs, &["workflows/w/tests".to_owned()]).unwrap();
    let (got, files) = (run.diagnostics, run.files);
    assert_eq!(files, 150);
    assert_eq!(render(&got), want);
}

/// Files whose read panics (a stand-in for a checker bug on one file).
struct Panicky(MemFiles);

impl wfx_schemas::files::FileAccess for Panicky {
    fn read(&self, path: &str) -> Result<Vec<u8>, wfx_schemas::files::FileError> {
        assert!(!path.ends_with("c007.test.yaml"), "injected failure");
        self.0.read(path)
    }
    fn list(
        &self,
        dir: &str,
    ) -> Result<Vec<wfx_schemas::files::DirEntry>, wfx_schemas::files::FileError> {
        self.0.list(dir)
    }
    fn is_file(&self, path: &str) -> bool {
        self.0.is_file(path)
    }
}

#[test]
fn a_panic_on_one_file_is_a_wfx901_there_and_the_others_are_still_checked() {
    // Both the parallel run (150 cases) and the single-threaded one (10 cases).
    for cases in [150, 10] {
        let (fs, paths) = workspace(cases);
        let run = check_paths(&Panicky(fs.clone()), &[String::new()]).unwrap();
        let (got, files) = (run.diagnostics, run.files);
        assert_eq!(files, cases + 1);
        let internal: Vec<_> = got.iter().filter(|d| d.code.code == "WFX901").collect();
        assert_eq!(internal.len(), 1, "{cases}: {:#?}", render(&got));
        assert_eq!(internal[0].file, "workflows/w/tests/c007.test.yaml");
        assert!(internal[0].message.contains("injected failure"));
        // Everything else is what the healthy run reports.
        let healthy: Vec<String> = render(&one_by_one(&fs, &paths))
            .into_iter()
            .filter(|l| !l.starts_with("workflows/w/tests/c007.test.yaml"))
            .collect();
        let rest: Vec<String> = render(&got)
            .into_iter()
            .filter(|l| !l.starts_with("workflows/w/tests/c007.test.yaml"))
            .collect();
        assert_eq!(rest, healthy);
    }
}
