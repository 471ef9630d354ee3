#!/usr/bin/env bash
# Start the plain VS Code server that ships inside the code-server npm package (lib/vscode/out/server-main.js)
# with --enable-smoke-test-driver, in its own process group on 127.0.0.1:$VSSERVER_PORT, no connection token.
# Only with that flag does the built workbench honour ?payload=[["extensionDevelopmentPath",..],["extensionTestsPath",..]]
# (code-server's own CLI rejects the flag as "Unknown option").
# Env: E2E_SCRATCH (share it with the caller), VSSERVER_PORT (default 18081), NODE24_DIR, CODE_SERVER_DIR,
#      LSP_CMD and EXPECT_* (inherited by the extension host, so the test suite can read them),
#      MACHINE_SETTINGS (JSON for the remote machine settings), WFX_E2E_UNTRUSTED=1 (keep workspace trust on).
# Stop: kill -- -$(cat "$E2E_SCRATCH/vscode-server.pid")
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../lib/common.sh"
[ -n "${E2E_SCRATCH:-}" ] || { echo "E2E_SCRATCH is not set (start from run.sh)" >&2; exit 2; }
e2e_init
. "$HERE/env.sh"
VSSERVER_PORT=${VSSERVER_PORT:-18081}
D=$E2E_SCRATCH/vscode-server
mkdir -p "$D/data" "$D/extensions" # extensions dir stays empty: the extension under test comes from the payload
# Remote ("Machine") settings: they apply in untrusted workspaces too, unlike the workspace's wfx.server.path
if [ -n "${MACHINE_SETTINGS:-}" ]; then
  mkdir -p "$D/data/user/Machine"
  printf '%s\n' "$MACHINE_SETTINGS" > "$D/data/user/Machine/settings.json"
fi
TRUST=(--disable-workspace-trust)
[ "${WFX_E2E_UNTRUSTED:-0}" = 1 ] && TRUST=()   # the workspace opens untrusted (restricted mode)
cd "$VSCODE_SERVER_DIR"
# Node 24 (first on PATH via env.sh): the native modules were built for its ABI.
setsid node out/server-main.js --host 127.0.0.1 --port "$VSSERVER_PORT" --without-connection-token \
  --accept-server-license-terms --enable-smoke-test-driver --disable-telemetry "${TRUST[@]}" \
  --server-data-dir "$D/data" --user-data-dir "$D/data/user" --extensions-dir "$D/extensions" \
  >> "$E2E_SCRATCH/vscode-server.log" 2>&1 < /dev/null &
echo $! > "$E2E_SCRATCH/vscode-server.pid"
if ! e2e_wait_http "http://127.0.0.1:$VSSERVER_PORT/" 30; then
  echo "VS Code server did not start:" >&2
  tail -n 40 "$E2E_SCRATCH/vscode-server.log" >&2
  e2e_stop_group "$E2E_SCRATCH/vscode-server.pid"
  exit 1
fi
echo "VS Code server up on http://127.0.0.1:$VSSERVER_PORT (scratch $E2E_SCRATCH)" >&2
