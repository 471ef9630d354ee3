#!/usr/bin/env bash
# VS Code part (b): editors/vscode's integration tests (suite.js) in the real extension host of the VS Code
# server shipped inside code-server, driven through Chromium (the offline replacement for @vscode/test-electron).
# The extension is loaded from its folder (extensionDevelopmentPath) after an esbuild build; the server is the
# `wfx-lsp` shim, named by the workspace setting wfx.server.path. Env: see ../lib/common.sh, suite.js (EXPECT_*), ext-tests.js; VSSERVER_PORT (18081).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../lib/common.sh"
e2e_init
e2e_workspace || { e2e_finish 2; exit 2; }
EXT_DEV=${EXT_DEV:-$REPO/editors/vscode}
if [ ! -d "$EXT_DEV/node_modules/vscode-languageclient" ]; then
  echo "editors/vscode/node_modules missing: run editors/e2e/install.sh ext" >&2
  e2e_finish 2; exit 2
fi
(cd "$EXT_DEV" && node esbuild.mjs) || { e2e_finish 2; exit 2; }
export EXT_DEV
# The extension host does not reliably inherit PATH (the server resolves a login-shell environment), so the
# server comes from the workspace's wfx.server.path setting here; the UI smoke sets it in user settings.
mkdir -p "$WORKSPACE_DIR/.vscode"
# Word-based suggestions would answer the completion checks from words elsewhere in the file: off.
printf '{\n  "wfx.server.path": "%s",\n  "editor.inlayHints.enabled": "on",\n  "editor.wordBasedSuggestions": "off"\n}\n' \
  "$WFX_SHIM" > "$WORKSPACE_DIR/.vscode/settings.json"
. "$HERE/env.sh" || { e2e_finish 2; exit 2; }
run_suite() { # label; env for the server and the suite
  local label=$1 rc
  shift
  trap 'e2e_stop_group "$E2E_SCRATCH/vscode-server.pid"' EXIT
  env "$@" "$HERE/start-vscode-server.sh" || return 2
  env "$@" timeout "${E2E_TIMEOUT:-240}" node "$HERE/ext-tests.js" > "$E2E_SCRATCH/ext-tests-$label.log" 2>&1
  rc=$?
  sed -n 's/^\[ext-host [a-z]*\] //p; /EXTENSION TESTS EXIT CODE/p' "$E2E_SCRATCH/ext-tests-$label.log" | grep -v 'authentication provider'
  e2e_stop_group "$E2E_SCRATCH/vscode-server.pid"
  trap - EXIT
  if [ "$rc" -ne 0 ]; then
    echo "--- ext-tests-$label.log (tail)" >&2; tail -n 40 "$E2E_SCRATCH/ext-tests-$label.log" >&2
    echo "--- vscode-server.log (tail)" >&2; tail -n 30 "$E2E_SCRATCH/vscode-server.log" >&2
  fi
  return "$rc"
}
run_suite trusted WFX_E2E_UNTRUSTED=0
rc=$?
# restricted mode: the workspace's wfx.server.path is ignored, so the server comes from the machine settings
if [ "${E2E_SKIP_UNTRUSTED:-0}" != 1 ]; then
  run_suite untrusted WFX_E2E_UNTRUSTED=1 "MACHINE_SETTINGS={\"wfx.server.path\": \"$WFX_SHIM\"}"
  r2=$?
  [ "$rc" -eq 0 ] && rc=$r2
fi
e2e_finish "$rc"
