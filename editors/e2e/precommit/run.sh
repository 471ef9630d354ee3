#!/usr/bin/env bash
# pre-commit part (d): the hook in <repo>/.pre-commit-hooks.yaml, run by pre-commit in a temp git repository
# holding a scratch copy of the corpus plus a broken case.
#   MODE=system (default): the shipped hook definition (id, files, pass_filenames) turned into a `repo: local`
#     hook with `language: system` and `entry: <built binary> check --whole-workflows`, so no cargo build happens. Also checks that
#     the shipped manifest is valid (`pre-commit validate-manifest`) and still says `language: rust`.
#   MODE=rust: the hook exactly as a user adds it: `repo: <this repository>`, `rev: <HEAD>` (committed state
#     only), `language: rust`, so pre-commit builds the server with `cargo install --path .` from a clone (about
#     5 min on 2 cores; once: the environment is cached in PRE_COMMIT_HOME for the later runs). `pre-commit
#     try-repo` would do the same but clone and build again for every run.
# Checks: the hook fails on the broken case and prints EXPECT_CHECK (default "unknown step"; "-" skips the
# failure check); it passes once the case is fixed; other.yaml does not match the hook's `files`.
# Env: PRE_COMMIT (default <tools>/venv/bin/pre-commit), WFX_LSP / LSP_CMD, CORPUS, E2E_SCRATCH, MODE
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../lib/common.sh"
e2e_init
MODE=${MODE:-system}
PRE_COMMIT=${PRE_COMMIT:-$E2E_TOOLS/venv/bin/pre-commit}
[ -x "$PRE_COMMIT" ] || PRE_COMMIT=$(command -v pre-commit || true)
[ -n "$PRE_COMMIT" ] || { echo "pre-commit not found: run editors/e2e/install.sh python" >&2; e2e_finish 2; exit 2; }
EXPECT_CHECK=${EXPECT_CHECK-unknown step}
PY=$(dirname "$(readlink -f "$PRE_COMMIT")")/python
[ -x "$PY" ] || PY=python3

R=$E2E_SCRATCH/precommit-repo
e2e_workspace "$R" || { e2e_finish 2; exit 2; }
export PRE_COMMIT_HOME=${PRE_COMMIT_HOME:-$E2E_SCRATCH/pre-commit-cache} TMPDIR=$E2E_SCRATCH/tmp
export GIT_CONFIG_GLOBAL=$E2E_SCRATCH/gitconfig GIT_CONFIG_NOSYSTEM=1
git config --file "$GIT_CONFIG_GLOBAL" user.email e2e@example.invalid
git config --file "$GIT_CONFIG_GLOBAL" user.name e2e
git config --file "$GIT_CONFIG_GLOBAL" init.defaultBranch main
git config --file "$GIT_CONFIG_GLOBAL" safe.directory '*'
fail=0
pass() { echo "  PASS precommit.$1"; }
flunk() { echo "  FAIL precommit.$1${2:+: $2}"; fail=1; }

# the shipped manifest
if "$PRE_COMMIT" validate-manifest "$REPO/.pre-commit-hooks.yaml" > "$E2E_SCRATCH/manifest.log" 2>&1 \
   && "$PY" - "$REPO/.pre-commit-hooks.yaml" <<'PY'
import sys, yaml
hooks = {h["id"]: h for h in yaml.safe_load(open(sys.argv[1]))}
h = hooks["wfx-lsp-check"]
assert h["language"] == "rust", h["language"]
assert h["entry"] == "wfx-lsp check --whole-workflows", h["entry"]
assert h.get("pass_filenames", True) is True
import re
rx = re.compile(h["files"])
for p in ["workflows/a/workflow.yaml", "x/workflows/a/tests/b.test.yaml", "workflows/a/tests/s/c.test.yml",
          "workflows/a/tests/fixture.yaml", "workflows/a/hooks/h.js"]:
    assert rx.search(p), p
for p in ["other.yaml", "workflows/a/notes.yaml", "workflows/a/b/workflow.yaml"]:
    assert not rx.search(p), p
PY
then pass manifest; else flunk manifest "$(cat "$E2E_SCRATCH/manifest.log")"; fi

cd "$R" || exit 2
git init -q . && git add -A && git commit -qm corpus || { flunk git-init; e2e_finish 1; exit 1; }
BROKEN=workflows/order-lookup/tests/broken.test.yaml

if [ "$MODE" = system ]; then
  # the shipped hook, with language/entry swapped for the built binary
  "$PY" - "$REPO/.pre-commit-hooks.yaml" "$LSP_CMD" > .pre-commit-config.yaml <<'PY'
import sys, yaml
hook = {h["id"]: h for h in yaml.safe_load(open(sys.argv[1]))}["wfx-lsp-check"]
hook.update(language="system", entry=sys.argv[2] + " " + hook["entry"].removeprefix("wfx-lsp "))
print(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [hook]}]}, sort_keys=False))
PY
  run_hook() { "$PRE_COMMIT" run wfx-lsp-check --color never --files "$@" < /dev/null; }
else
  rev=$(git -C "$REPO" rev-parse HEAD)
  printf 'repos:\n  - repo: %s\n    rev: %s\n    hooks:\n      - id: wfx-lsp-check\n' "$REPO" "$rev" > .pre-commit-config.yaml
  echo "  (MODE=rust: pre-commit builds wfx-lsp $rev with cargo install first; this takes minutes)"
  run_hook() { "$PRE_COMMIT" run wfx-lsp-check --color never --files "$@" < /dev/null; }
fi

SECONDS=0
run_hook "$BROKEN" > "$E2E_SCRATCH/hook-broken.log" 2>&1
rc=$?
echo "  (first hook run: ${SECONDS}s)"
if [ -n "$EXPECT_CHECK" ] && [ "$EXPECT_CHECK" != - ]; then
  if [ $rc -ne 0 ] && grep -qF "$EXPECT_CHECK" "$E2E_SCRATCH/hook-broken.log" && grep -q 'broken.test.yaml' "$E2E_SCRATCH/hook-broken.log"; then
    pass fails_on_broken_case
  else
    flunk fails_on_broken_case "exit $rc; output:"; sed 's/^/      /' "$E2E_SCRATCH/hook-broken.log" | tail -n 30
  fi
else echo "  SKIP precommit.fails_on_broken_case"; fi

sed -i 's/- sned: hi/- reachedState: orders-question/' "$BROKEN"
if run_hook "$BROKEN" > "$E2E_SCRATCH/hook-fixed.log" 2>&1; then pass passes_when_fixed
else flunk passes_when_fixed "output:"; sed 's/^/      /' "$E2E_SCRATCH/hook-fixed.log" | tail -n 30; fi

# a renamed state in workflow.yaml fails the commit through the unchanged cases naming it
SPEC=workflows/order-lookup/workflow.yaml
cp "$SPEC" "$E2E_SCRATCH/workflow.yaml.orig"
sed -i 's/refund-review/refund-audit/g' "$SPEC"
run_hook "$SPEC" > "$E2E_SCRATCH/hook-rename.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q 'refund-approved.test.yaml' "$E2E_SCRATCH/hook-rename.log"; then pass fails_on_state_rename
else flunk fails_on_state_rename "exit $rc; output:"; sed 's/^/      /' "$E2E_SCRATCH/hook-rename.log" | tail -n 30; fi
cp "$E2E_SCRATCH/workflow.yaml.orig" "$SPEC"

# the files regex keeps unrelated YAML away from the hook
if run_hook other.yaml workflows/order-lookup/notes.yaml > "$E2E_SCRATCH/hook-other.log" 2>&1 \
   && grep -q 'no files to check' "$E2E_SCRATCH/hook-other.log"; then pass skips_unrelated_yaml
else flunk skips_unrelated_yaml "output:"; sed 's/^/      /' "$E2E_SCRATCH/hook-other.log" | tail -n 20; fi

cd "$REPO" || true
e2e_finish $fail
