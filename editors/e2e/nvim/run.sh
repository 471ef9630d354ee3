#!/usr/bin/env bash
# Neovim part of the e2e suite: headless Neovim with editors/nvim on 'runtimepath' exactly as shipped,
# `vim.lsp.enable('wfx_lsp')`, on a scratch copy of the corpus. See e2e.lua for the checks and EXPECT_*.
# Env: NVIM (default <tools>/venv/bin/nvim, else nvim on PATH), WFX_LSP / LSP_CMD, CORPUS, E2E_SCRATCH, E2E_TIMEOUT
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../lib/common.sh"
e2e_init
e2e_workspace || { e2e_finish 2; exit 2; }

X=$E2E_SCRATCH/nvim
mkdir -p "$X/config" "$X/data" "$X/state" "$X/cache" "$X/run"
chmod 700 "$X/run"
# without these, lsp.log lands in ~/.local/state/nvim and the server socket in /tmp/nvim.<user>/
export XDG_CONFIG_HOME=$X/config XDG_DATA_HOME=$X/data XDG_STATE_HOME=$X/state XDG_CACHE_HOME=$X/cache \
       XDG_RUNTIME_DIR=$X/run TMPDIR=$E2E_SCRATCH/tmp
NVIM=${NVIM:-}
[ -z "$NVIM" ] && { [ -x "$E2E_TOOLS/venv/bin/nvim" ] && NVIM=$E2E_TOOLS/venv/bin/nvim || NVIM=nvim; }
export NVIM_PKG_DIR=${NVIM_PKG_DIR:-$REPO/editors/nvim}

# --clean keeps filetype detection and bundled plugins but skips user config; --cmd runs before plugins load,
# so editors/nvim/plugin/*.lua is sourced like an installed plugin
timeout "${E2E_TIMEOUT:-90}" "$NVIM" --headless --clean --cmd 'lua vim.opt.runtimepath:prepend(vim.env.NVIM_PKG_DIR)' \
  -S "$HERE/e2e.lua" > "$E2E_SCRATCH/nvim-result.json"
rc=$?
cat "$E2E_SCRATCH/nvim-result.json"
if [ $rc -ne 0 ]; then
  echo "nvim exited $rc" >&2
  [ -f "$X/state/nvim/lsp.log" ] && tail -n 40 "$X/state/nvim/lsp.log" >&2
fi
e2e_finish $rc
