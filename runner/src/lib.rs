//! `wfx-runner`: discovery, the deterministic workflow simulator, the case interpreter and
//! reporters. No LSP types, no async runtime; files through `FileAccess`, time through a
//! `Clock`.

pub mod cli;
pub mod sandbox;
