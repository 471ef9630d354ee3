//! `workspace/executeCommand` commands (announced in `executeCommandProvider`); the code
//! lenses that invoke them and the run machinery live in `runs` and `server`.
//!
//! * `wfx.runCase [uri]`: runs one case document in the background;
//! * `wfx.runAllCases [uri]`: runs every case of the workflow of a `workflow.yaml` (or case);
//! * `wfx.cancelRun [uri]`: cancels the run started for that URI (answers whether one ran);
//! * `wfx.showTranscript [uri]`: answers `{title, markdown}`, the full transcript of the
//!   case's last run in this session (issue 16), or `null`; the client shows it read-only;
//! * `wfx.recordCase [uri]`: records the case (or every case of the workflow of a
//!   `workflow.yaml`) with the live model in the background, only while `wfx.run.allowLive`
//!   is true (refused otherwise); cancelled like a run (`super::record`).

/// Commands the server executes.
pub const COMMANDS: &[&str] = &[
    super::runs::RUN_CASE,
    super::runs::RUN_ALL_CASES,
    super::runs::CANCEL_RUN,
    super::runs::SHOW_TRANSCRIPT,
    super::record::RECORD_CASE,
];
