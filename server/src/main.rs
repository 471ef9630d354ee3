//! `wfx-lsp`: language server (default), `check` and `test`.

fn main() {}
