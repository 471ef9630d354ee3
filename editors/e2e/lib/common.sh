# Sourced by the e2e scripts (bash). Adapted from the editor-e2e recipes.
#
# Environment (all optional):
#   WFX_LSP        the built server binary (default <repo>/target/debug/wfx-lsp)
#   LSP_CMD        server command line, split on whitespace (default "$WFX_LSP"). A shim named wfx-lsp that
#                  execs it is put first on PATH, so every client runs `wfx-lsp` exactly as a user's would.
#   CORPUS         example workspace to copy (default <repo>/tests/corpus/customer-support, else
#                  shared/examples/customer-support next to the repository)
#   E2E_TOOLS      install dir of install.sh (default <repo>/target/e2e-tools)
#   E2E_SCRATCH    dir for HOME/XDG/TMPDIR, logs, pid files, the scratch workspace (default: a new mktemp dir,
#                  removed after a passing run unless E2E_KEEP=1)
#   EXPECT_*       what the checks look for; "-" skips a check (see run.sh --help)

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(cd "$E2E_DIR/../.." && pwd)
export E2E_DIR REPO
export E2E_TOOLS=${E2E_TOOLS:-$REPO/target/e2e-tools}

e2e_init() {
  if [ -z "${E2E_SCRATCH:-}" ]; then
    E2E_SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/wfx-e2e.XXXXXX")
    E2E_OWN_SCRATCH=1
  else
    mkdir -p "$E2E_SCRATCH"
    E2E_SCRATCH=$(cd "$E2E_SCRATCH" && pwd)
    E2E_OWN_SCRATCH=${E2E_OWN_SCRATCH:-0}
  fi
  export E2E_SCRATCH E2E_OWN_SCRATCH
  mkdir -p "$E2E_SCRATCH/tmp" "$E2E_SCRATCH/bin"
  export WFX_LSP=${WFX_LSP:-$REPO/target/debug/wfx-lsp}
  export LSP_CMD=${LSP_CMD:-$WFX_LSP}
  # the shim: clients run plain `wfx-lsp` from PATH
  printf '#!/bin/sh\nexec %s "$@"\n' "$LSP_CMD" > "$E2E_SCRATCH/bin/wfx-lsp"
  chmod +x "$E2E_SCRATCH/bin/wfx-lsp"
  case ":$PATH:" in *":$E2E_SCRATCH/bin:"*) ;; *) export PATH=$E2E_SCRATCH/bin:$PATH ;; esac
  export WFX_SHIM=$E2E_SCRATCH/bin/wfx-lsp
}

# Fresh scratch copy of the corpus at $1 (default $E2E_SCRATCH/ws) plus the files the checks need:
#   workflows/order-lookup/tests/broken.test.yaml   a misspelled step `- sned: hi` on line 5 (0-based 4), col 4
#   other.yaml, workflows/order-lookup/notes.yaml    unrelated YAML the server must not attach to
#   workflows/pay/                                   runner/tests/fixtures/evidence's workflow: one failing case per
#                                                    refusal class (issue 16), for the evidence hover checks
e2e_workspace() {
  local ws=${1:-$E2E_SCRATCH/ws} corpus=${CORPUS:-} c
  if [ -z "$corpus" ]; then  # the repo's copy first, then shared/ next to the clone
    for c in "$REPO/tests/corpus/customer-support" "$REPO/../shared/examples/customer-support"; do
      [ -d "$c/workflows" ] && { corpus=$c; break; }
    done
  fi
  if [ ! -d "$corpus/workflows" ]; then
    echo "corpus not found: $corpus (set CORPUS)" >&2
    return 1
  fi
  rm -rf "$ws"
  mkdir -p "$ws"
  cp -R "$corpus/." "$ws/"
  chmod -R u+w "$ws"
  cat > "$ws/workflows/order-lookup/tests/broken.test.yaml" <<'YAML'
title: Broken case for the editor e2e tests
description: A step key is misspelled on purpose.
steps:
  - send: "Hi, I'm support@acmecorp.com. Where is order ORD-1001?"
  - sned: hi
YAML
  if [ -d "$REPO/runner/tests/fixtures/evidence/workflows/pay" ]; then
    cp -R "$REPO/runner/tests/fixtures/evidence/workflows/pay" "$ws/workflows/pay"
    chmod -R u+w "$ws/workflows/pay"
  fi
  printf 'name: unrelated\nitems:\n  - sned: hi\n' > "$ws/other.yaml"
  printf 'notes: not a workflow file\nversion: 3\n' > "$ws/workflows/order-lookup/notes.yaml"
  export WORKSPACE_DIR=$ws
}

# Stop a process group whose leader pid is in file $1 (started with setsid). TERM, then KILL after 5 s.
e2e_stop_group() {
  local pidfile=$1 pg i
  [ -f "$pidfile" ] || return 0
  pg=$(cat "$pidfile")
  kill -TERM -- "-$pg" 2>/dev/null || { rm -f "$pidfile"; return 0; }
  for i in $(seq 1 50); do
    kill -0 -- "-$pg" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$pg" 2>/dev/null || true
  rm -f "$pidfile"
}

# Poll a URL until it answers (curl), at most $2 seconds (default 30).
e2e_wait_http() {
  local url=$1 secs=${2:-30} i
  for i in $(seq 1 $((secs * 4))); do
    curl -sf -o /dev/null "$url" && return 0
    sleep 0.25
  done
  return 1
}

# Remove our own scratch dir after a passing run; otherwise say where it is.
e2e_finish() {
  local rc=$1
  if [ "$rc" = 0 ] && [ "${E2E_OWN_SCRATCH:-0}" = 1 ] && [ "${E2E_KEEP:-0}" != 1 ]; then
    rm -rf "$E2E_SCRATCH"
  else
    echo "scratch dir kept: $E2E_SCRATCH" >&2
  fi
  return "$rc"
}
