//! The `wfx-lsp` binary's library: the LSP glue (`lsp`), pure IDE features ([`ide`]) and the
//! CLI renderers (`cli`). Only this crate knows about LSP types, tokio and clap.

pub mod ide;
