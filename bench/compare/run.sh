#!/usr/bin/env bash
# Side-by-side benchmarks of wfx-lsp against yaml-language-server, ajv-cli and
# check-jsonschema, plus the runner and a soak run (issue 8; results in docs/performance.md).
# One command: `bash bench/compare/run.sh [parts…] [--edits N] [--yls-edits N] …`
# (parts: lsp check runner soak; default all; see `python3 bench/compare/compare.py -h`).
# Tools come from the registries only, into target/bench-tools: npm (yaml-language-server,
# ajv-cli, ajv-formats) and PyPI (check-jsonschema, in a venv). Needs node, npm, python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
TOOLS=target/bench-tools
mkdir -p "$TOOLS/npm"
if [ ! -x "$TOOLS/npm/node_modules/.bin/ajv" ] || [ ! -f "$TOOLS/npm/node_modules/yaml-language-server/bin/yaml-language-server" ]; then
  (cd "$TOOLS/npm" && { [ -f package.json ] || npm init -y >/dev/null; } \
    && npm install --no-audit --no-fund yaml-language-server ajv-cli ajv-formats)
fi
if [ ! -x "$TOOLS/venv/bin/check-jsonschema" ]; then
  python3 -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/pip" install -q check-jsonschema
fi
cargo build --release --locked -p wfx-lsp --bin wfx-lsp
cargo build --release --locked -p wfx-bench --example parse_only
{
  echo "machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "versions: $(target/release/wfx-lsp --version 2>/dev/null || echo wfx-lsp), node $(node --version)," \
    "yaml-language-server $(node -p "require('./$TOOLS/npm/node_modules/yaml-language-server/package.json').version")," \
    "ajv-cli $(node -p "require('./$TOOLS/npm/node_modules/ajv-cli/package.json').version")," \
    "ajv $(node -p "require('./$TOOLS/npm/node_modules/ajv/package.json').version")," \
    "check-jsonschema $("$TOOLS/venv/bin/check-jsonschema" --version | awk '{print $NF}'), $(python3 --version)"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee target/bench-tools/env.txt
exec python3 bench/compare/compare.py "$@"
