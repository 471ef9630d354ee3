#!/usr/bin/env bash
# Browser check of the offline HTML report (issue 7 item 4): loads <report.html> in Debian's
# headless chromium with all network requests aborted, fails on any console error or failed
# request, and saves a full-page screenshot.
#   runner/tests/browser/check-report.sh <report.html> [<screenshot.png>]   (default target/report-screenshot.png)
#   runner/tests/browser/check-report.sh --example   (writes the example suite's report to target/report.html first)
#   runner/tests/browser/check-report.sh --evidence  (the evidence fixture's report, one failing case per refusal
#     class, to target/report-evidence.html with its .expect.json: for each case, a click on the state's label in
#     the graph must show the block with the reason, and the transcript must show it too; issue 16)
# A <report.html>.expect.json beside any report ([{id, reason, state}]) turns on that evidence check.
# Needs: node (>= 18), npm, /usr/bin/chromium (apt-get install -y --no-install-recommends chromium).
# playwright-core (pinned by package.json / package-lock.json here) is installed once into
# target/e2e-tools with `npm ci`.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
TOOLS=${PLAYWRIGHT_DIR:-$ROOT/target/e2e-tools/report-check}

if [ "${1:-}" = "--example" ]; then
  # The example suite's report, written by the Rust structure test itself.
  mkdir -p "$ROOT/target"
  (cd "$ROOT" && WFX_REPORT_HTML_OUT="$ROOT/target/report.html" cargo test -q -p wfx-runner --test report_html \
    example_suite_report_has_every_case_with_its_graph_and_nothing_external >/dev/null)
  set -- "$ROOT/target/report.html" "${2:-$ROOT/target/report-screenshot.png}"
fi
if [ "${1:-}" = "--evidence" ]; then
  mkdir -p "$ROOT/target"
  rm -f "$ROOT/target/report-evidence.html" "$ROOT/target/report-evidence.html.expect.json"
  (cd "$ROOT" && WFX_REPORT_HTML_OUT="$ROOT/target/report-evidence.html" cargo test -q -p wfx-runner --test evidence \
    the_html_report_shows_each_reason_by_state_and_in_the_transcript >/dev/null)
  set -- "$ROOT/target/report-evidence.html" "${2:-$ROOT/target/report-evidence-screenshot.png}"
fi
REPORT=${1:?usage: check-report.sh <report.html> [<screenshot.png>] | --example | --evidence}
SHOT=${2:-$ROOT/target/report-screenshot.png}

if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "chromium not found at ${CHROMIUM:-/usr/bin/chromium}: apt-get install -y --no-install-recommends chromium" >&2
  exit 1
fi
if [ ! -f "$TOOLS/node_modules/playwright-core/package.json" ] || ! cmp -s "$HERE/package-lock.json" "$TOOLS/package-lock.json"; then
  mkdir -p "$TOOLS"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$TOOLS/"
  (cd "$TOOLS" && npm ci --no-audit --no-fund --loglevel=error)
fi
PLAYWRIGHT_DIR="$TOOLS" node "$HERE/check-report.js" "$REPORT" "$SHOT"
