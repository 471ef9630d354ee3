//! The `wfx-lsp` binary's library: the LSP glue ([`lsp`]), pure IDE features ([`ide`]), the
//! CLI renderers ([`cli`]) and the disk [`FileAccess`](wfx_schemas::files::FileAccess)
//! ([`disk`]). Only this crate knows about LSP types, tokio and clap.

pub mod analysis;
pub mod cli;
pub mod disk;
pub mod ide;
pub mod lsp;
