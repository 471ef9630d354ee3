#!/usr/bin/env bash
# VS Code part (c): UI smoke test of the PACKAGED extension. `npm run package` (vsce) -> code-server
# --install-extension -> ui-smoke.js drives the workbench in headless Chromium -> stop code-server's whole
# process group. Screenshots go to target/e2e-artifacts/ui (SHOTS_DIR).
# Env: VSIX (skip packaging, use this file), CS_PORT (18080), SHOTS_DIR, EXPECT_*, see ../lib/common.sh.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../lib/common.sh"
e2e_init
e2e_workspace || { e2e_finish 2; exit 2; }
# a passing case with a warning (WFX125: `locked` names a variable `expect` does not list) for the run screenshot
t=$WORKSPACE_DIR/workflows/order-lookup/tests
sed -e 's/^title: Refund approved after human review$/title: Refund approved, run from the editor/' \
    -e 's/^  - parked: true$/  - parked: true\n  - variables:\n      expect: {}\n      locked: { compnay: true }/' \
    "$t/refund-approved.test.yaml" > "$t/annotated.test.yaml"
cp "$t/refund-approved.agent.yaml" "$t/annotated.agent.yaml"
EXT_DEV=${EXT_DEV:-$REPO/editors/vscode}
if [ -z "${VSIX:-}" ]; then
  [ -d "$EXT_DEV/node_modules/@vscode/vsce" ] || { echo "editors/vscode/node_modules missing: run editors/e2e/install.sh ext" >&2; e2e_finish 2; exit 2; }
  export VSIX=$E2E_SCRATCH/wfx-lsp.vsix
  # vsce would ask on stdin about a missing repository/LICENSE: stdin is /dev/null
  (cd "$EXT_DEV" && npm run -s package -- --out "$VSIX" < /dev/null) || { e2e_finish 2; exit 2; }
fi
export SHOTS_DIR=${SHOTS_DIR:-$REPO/target/e2e-artifacts/ui}
mkdir -p "$SHOTS_DIR" && rm -f "$SHOTS_DIR"/*.png   # no stale screenshots from an earlier run
. "$HERE/env.sh" || { e2e_finish 2; exit 2; }
trap 'e2e_stop_group "$E2E_SCRATCH/code-server.pid"' EXIT
"$HERE/start-code-server.sh" || { e2e_finish 2; exit 2; }
timeout "${E2E_TIMEOUT:-180}" node "$HERE/ui-smoke.js" > "$E2E_SCRATCH/ui-smoke.log" 2>&1
rc=$?
grep -E '^(PASS|FAIL) ' "$E2E_SCRATCH/ui-smoke.log"
e2e_stop_group "$E2E_SCRATCH/code-server.pid"
trap - EXIT
if [ "$rc" -ne 0 ]; then
  cat "$E2E_SCRATCH/ui-smoke.log" >&2
  echo "--- code-server.log (tail)" >&2; tail -n 30 "$E2E_SCRATCH/code-server.log" >&2
fi
echo "screenshots: $SHOTS_DIR"
e2e_finish "$rc"
