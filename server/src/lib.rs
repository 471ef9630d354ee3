//! The `wfx-lsp` binary's library: the LSP glue ([`lsp`]), pure IDE features ([`ide`]), the
//! CLI renderers ([`cli`]), the HTTP model client of `test --live` ([`live`]). Every file on disk is read and written through the runner's one
//! confined layer, [`wfx_runner::disk`]. Only this crate knows about LSP types, tokio and clap.

pub mod analysis;
pub mod cli;
pub mod ide;
pub mod live;
pub mod lsp;
