#!/usr/bin/env bash
# Editor end-to-end suites for wfx-lsp, in real clients. Install the tools first: editors/e2e/install.sh
#
#   editors/e2e/run.sh [--fake] [PART...] [WFX_LSP_BINARY]
#
# PART: nvim       Neovim (headless) with editors/nvim as shipped                        (~5 s)
#       vscode     editors/vscode's integration tests in the real VS Code extension host  (~30 s)
#       ui         Playwright UI smoke on the packaged VSIX in code-server; screenshots in target/e2e-artifacts/ui (~30 s)
#       precommit  the .pre-commit-hooks.yaml hook as a `language: system` local hook     (~5 s)
#       precommit-rust  the `language: rust` hook from repo + rev HEAD (cargo install, ~5 min; not in `all`)
#       all        nvim vscode ui precommit (the default)
# WFX_LSP_BINARY: the server (default target/debug/wfx-lsp). A missing target/{debug,release}/wfx-lsp is built
#   with cargo first.
# --fake: run against editors/e2e/fake_lsp.py (the recipe's stand-in server) with the expectations switched to
#   what it answers, to check the plumbing before the real server exists.
# Expectations (EXPECT_*, "-" skips a check) are listed in nvim/e2e.lua and vscode/suite.js.
# Prints PASS/FAIL per check and per part; logs in target/e2e-artifacts/logs/. Exit 0 only if every part passed.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
parts=() bin='' fake=0
for a in "$@"; do
  case $a in
    nvim|vscode|ui|precommit|precommit-rust) parts+=("$a") ;;
    all) parts+=(nvim vscode ui precommit) ;;
    --fake) fake=1 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "unknown option $a" >&2; exit 2 ;;
    *) bin=$a ;;
  esac
done
[ ${#parts[@]} -eq 0 ] && parts=(nvim vscode ui precommit)
ART=$REPO/target/e2e-artifacts
mkdir -p "$ART/logs"

if [ $fake = 1 ]; then
  export LSP_CMD="python3 $HERE/fake_lsp.py"
  # what fake_lsp.py answers: one diagnostic "fake error on line 1" at 0:0 from source "fake", completions
  # alpha/beta everywhere, a "Run test" lens, a ": hint" inlay hint; no hover, rename, or `check`/`test` output
  : "${EXPECT_DIAG=fake error}" "${EXPECT_DIAG_POS=0,0}" "${EXPECT_DIAG_SOURCE=fake}"
  : "${EXPECT_COMPLETION=alpha,beta}" "${EXPECT_TRIGGER_COMPLETION=alpha}" "${EXPECT_HOVER=-}" "${EXPECT_RENAME=-}"
  : "${EXPECT_LENS=Run test}" "${EXPECT_WORKFLOW_LENS=Run test}" "${EXPECT_HINT=: hint}" "${EXPECT_RUN=-}" "${EXPECT_CHECK=-}"
  : "${EXPECT_COVERAGE_LENS=-}" "${EXPECT_RUN_REFRESH=-}" "${EXPECT_COMPLETION_EDITS=-}" "${EXPECT_OUTLINE=-}" "${EXPECT_LOG_LEVELS=-}"
  : "${EXPECT_WORKSPACE_FOLDERS=-}" "${EXPECT_AGENT_LENS=-}" "${EXPECT_CASSETTE=-}" "${EXPECT_CLOSED_DIAG=-}"
  export EXPECT_DIAG EXPECT_DIAG_POS EXPECT_DIAG_SOURCE EXPECT_COMPLETION EXPECT_TRIGGER_COMPLETION EXPECT_HOVER \
         EXPECT_RENAME EXPECT_LENS EXPECT_WORKFLOW_LENS EXPECT_HINT EXPECT_RUN EXPECT_CHECK EXPECT_COVERAGE_LENS \
         EXPECT_RUN_REFRESH EXPECT_COMPLETION_EDITS EXPECT_OUTLINE EXPECT_LOG_LEVELS EXPECT_WORKSPACE_FOLDERS \
         EXPECT_AGENT_LENS EXPECT_CASSETTE EXPECT_CLOSED_DIAG
  echo "server: fake_lsp.py (plumbing check; the wfx-specific expectations are switched off)"
else
  bin=${bin:-$REPO/target/debug/wfx-lsp}
  case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
  if [ ! -x "$bin" ]; then
    case $bin in
      "$REPO/target/debug/wfx-lsp") echo "building $bin"; (cd "$REPO" && cargo build --locked --bin wfx-lsp) ;;
      "$REPO/target/release/wfx-lsp") echo "building $bin"; (cd "$REPO" && cargo build --release --locked --bin wfx-lsp) ;;
    esac
  fi
  if [ ! -x "$bin" ]; then echo "FAIL no server binary at $bin" >&2; exit 1; fi
  export WFX_LSP=$bin LSP_CMD=$bin
  echo "server: $bin"
fi

failed=() total=$SECONDS
for p in "${parts[@]}"; do
  case $p in
    nvim) cmd=("$HERE/nvim/run.sh") ;;
    vscode) cmd=("$HERE/vscode/run-ext-tests.sh") ;;
    ui) cmd=("$HERE/vscode/run-ui-smoke.sh") ;;
    precommit) cmd=(env MODE=system "$HERE/precommit/run.sh") ;;
    precommit-rust) cmd=(env MODE=rust E2E_TIMEOUT=1800 "$HERE/precommit/run.sh") ;;
  esac
  log=$ART/logs/$p.log
  echo "== $p"
  t0=$SECONDS
  "${cmd[@]}" > "$log" 2>&1 < /dev/null
  rc=$?
  # the per-check lines, however the client printed them
  grep -oE '(PASS|FAIL|SKIP) (nvim|vscode|ui|precommit)[^ ]*' "$log" | sed 's/:$//; s/^/  /' | awk '!seen[$0]++'
  if [ $rc -eq 0 ]; then
    echo "PASS $p ($((SECONDS - t0)) s)"
  else
    echo "FAIL $p ($((SECONDS - t0)) s, exit $rc; log: $log)"
    tail -n 25 "$log" | sed 's/^/    | /'
    failed+=("$p")
  fi
done
echo "== ${#parts[@]} parts, ${#failed[@]} failed${failed:+: ${failed[*]}} ($((SECONDS - total)) s)"
[ ${#failed[@]} -eq 0 ]
