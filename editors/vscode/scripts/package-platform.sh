#!/usr/bin/env bash
# Platform-specific VSIX with the server inside: copies the binary to server/wfx-lsp and packages for one
# VS Code target (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64, alpine-x64, ...).
#   scripts/package-platform.sh <path/to/wfx-lsp> <target> [--out file.vsix]
# Example: cargo build --release && editors/vscode/scripts/package-platform.sh target/release/wfx-lsp linux-x64
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 <wfx-lsp binary> <vscode target> [vsce args...]" >&2; exit 2; }
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
TARGET=$2
shift 2
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rm -rf server
mkdir -p server
case $TARGET in win32-*) cp "$BIN" server/wfx-lsp.exe ;; *) cp "$BIN" server/wfx-lsp; chmod +x server/wfx-lsp ;; esac
trap 'rm -rf server' EXIT
npx --no-install vsce package --no-dependencies --allow-missing-repository --target "$TARGET" "$@" < /dev/null
