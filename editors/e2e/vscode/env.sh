# Sourced by the VS Code scripts after e2e_init (lib/common.sh).
# Puts Node 24 and code-server on PATH and moves HOME, XDG dirs and TMPDIR into $E2E_SCRATCH: otherwise
# vscode-ipc-*.sock, vscode-git-*.sock, node-compile-cache and Chromium's ~/.config/chromium land in /tmp and
# the real HOME.
# Env: NODE24_DIR, CODE_SERVER_DIR (made by install.sh; defaults under $E2E_TOOLS)
export NODE24_DIR=${NODE24_DIR:-$E2E_TOOLS/node24}
export CODE_SERVER_DIR=${CODE_SERVER_DIR:-$E2E_TOOLS/code-server}
N24=$(ls -d "$NODE24_DIR"/node_modules/node/node_modules/node-linux-* 2>/dev/null | head -n 1)
if [ ! -x "$N24/bin/node" ]; then
  echo "Node 24 not found under $NODE24_DIR (run editors/e2e/install.sh or set NODE24_DIR)" >&2
  return 1
fi
if [ ! -d "$CODE_SERVER_DIR/node_modules/code-server" ]; then
  echo "code-server not found under $CODE_SERVER_DIR (run editors/e2e/install.sh or set CODE_SERVER_DIR)" >&2
  return 1
fi
export PATH=$N24/bin:$CODE_SERVER_DIR/node_modules/.bin:$PATH
export VSCODE_SERVER_DIR=$CODE_SERVER_DIR/node_modules/code-server/lib/vscode

export HOME=$E2E_SCRATCH/home
export XDG_CONFIG_HOME=$HOME/.config XDG_DATA_HOME=$HOME/.local/share XDG_CACHE_HOME=$HOME/.cache \
       XDG_STATE_HOME=$HOME/.local/state
export TMPDIR=$E2E_SCRATCH/tmp XDG_RUNTIME_DIR=$E2E_SCRATCH/run NODE_COMPILE_CACHE=$E2E_SCRATCH/tmp/node-compile-cache
mkdir -p "$HOME" "$TMPDIR" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
