#!/usr/bin/env bash
# Builds the release binaries and prints wfx-lsp's benchmark figures (see bench/src/main.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p wfx-lsp -p wfx-bench --bins
target/release/wfx-bench target/release/wfx-lsp
