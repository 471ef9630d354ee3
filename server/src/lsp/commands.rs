//! `workspace/executeCommand` commands and the code lenses that invoke them.
//!
//! RUNNER HOOK: running cases from the editor (`wfx.runCase`, `wfx.runAllCases`, code
//! lenses above cases) belongs to the runner integration, which lands later. Until then the
//! server announces no command, and the list below stays empty on purpose; the handler in
//! `server.rs` answers an unknown command with `InvalidParams`.

/// Commands the server executes (announced in `executeCommandProvider`). Empty until the
/// runner integration lands.
pub const COMMANDS: &[&str] = &[];
