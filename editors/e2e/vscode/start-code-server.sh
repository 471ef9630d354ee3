#!/usr/bin/env bash
# Start code-server (VS Code workbench + Node extension host) in its own process group on 127.0.0.1:$CS_PORT,
# auth none, and wait for /healthz (about 0.5 s).
#   VSIX=path/to/ext.vsix   install that extension first (code-server accepts only a .vsix, not a folder)
# Env: E2E_SCRATCH (share it with the caller, it holds the pid file), CS_PORT (default 18080), WORKSPACE_DIR,
#      NODE24_DIR, CODE_SERVER_DIR, LSP_CMD and EXPECT_* (inherited by the extension host).
# Stop the WHOLE group (extension host, LSP server, file watcher and helpers outlive a plain kill):
#   kill -- -$(cat "$E2E_SCRATCH/code-server.pid")
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../lib/common.sh"
[ -n "${E2E_SCRATCH:-}" ] || { echo "E2E_SCRATCH is not set (start from run.sh)" >&2; exit 2; }
e2e_init
. "$HERE/env.sh"
CS_PORT=${CS_PORT:-18080}
D=$E2E_SCRATCH/code-server
mkdir -p "$D/data/User" "$D/extensions"
cp "$HERE/settings.json" "$D/data/User/settings.json"
# The packaged extension finds the server through its wfx.server.path setting (the ext tests use a workspace
# setting). The setting is machine-scoped, and code-server is a remote window, so it goes into the remote
# ("Machine") settings: user settings would be ignored for it, as they are for any user of code-server.
mkdir -p "$D/data/Machine"
printf '{\n "wfx.server.path": "%s"\n}\n' "$WFX_SHIM" > "$D/data/Machine/settings.json"
cat > "$D/config.yaml" <<EOF
bind-addr: 127.0.0.1:$CS_PORT
auth: none
cert: false
disable-telemetry: true
disable-update-check: true
EOF
CS_ARGS=(--user-data-dir "$D/data" --extensions-dir "$D/extensions" --config "$D/config.yaml")

if [ -n "${VSIX:-}" ]; then
  code-server "${CS_ARGS[@]}" --install-extension "$VSIX" >> "$E2E_SCRATCH/code-server.log" 2>&1 \
    || { echo "installing $VSIX failed:" >&2; cat "$E2E_SCRATCH/code-server.log" >&2; exit 1; }
fi

setsid code-server "${CS_ARGS[@]}" "$WORKSPACE_DIR" >> "$E2E_SCRATCH/code-server.log" 2>&1 < /dev/null &
echo $! > "$E2E_SCRATCH/code-server.pid"
if ! e2e_wait_http "http://127.0.0.1:$CS_PORT/healthz" 30; then
  echo "code-server did not start:" >&2
  tail -n 40 "$E2E_SCRATCH/code-server.log" >&2
  e2e_stop_group "$E2E_SCRATCH/code-server.pid"
  exit 1
fi
echo "code-server up on http://127.0.0.1:$CS_PORT (scratch $E2E_SCRATCH)" >&2
