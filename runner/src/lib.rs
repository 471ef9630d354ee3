//! `wfx-runner`: discovery, the deterministic workflow simulator, the case interpreter and
//! reporters. No LSP types, no async runtime; files through `FileAccess`, time through a
//! [`clock::Clock`], JavaScript through a [`script_host::ScriptHost`], the model through an
//! [`agent::Agent`] (and a [`grade::Judge`] for grades).

pub mod agent;
pub mod buffers;
pub mod cassette;
pub mod cli;
pub mod clock;
pub mod coverage;
pub mod disk;
pub mod evidence;
pub mod file_tools;
pub mod glob;
pub mod governance;
pub mod grade;
pub mod interpret;
pub mod matching;
pub mod model;
pub mod path;
pub mod report;
pub mod report_html;
pub mod rounds;
pub mod sandbox;
pub mod scaffold;
pub mod script_host;
pub mod select;
pub mod session_fs;
pub mod shown;
pub mod sim;
pub mod suite;
pub mod variables;
