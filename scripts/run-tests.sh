#!/usr/bin/env bash
# Runs every test (the lit suites, which include the pytest suites) and ends
# with one summary line: "N passed, M failed[, K skipped]".
set -uo pipefail
build=${1:-build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

/usr/lib/llvm-22/bin/lit -sv --time-tests "$build/test" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

count() { # sums lit's "  <label>: N (..%)" summary lines
  awk -v label="$1" '$0 ~ "^ *"label" *: *[0-9]+" {
      sub("^ *"label" *: *", ""); n += $1 } END { print n + 0 }' "$log"
}
passed=$(( $(count Passed) + $(count "Expectedly Failed") ))
failed=$(( $(count Failed) + $(count "Unexpectedly Passed") + $(count Unresolved) + $(count "Timed Out") ))
skipped=$(( $(count Unsupported) + $(count Skipped) + $(count Excluded) ))

if [ "$passed" -eq 0 ] && [ "$status" -eq 0 ]; then
  echo "error: lit ran no test" >&2
  status=1
fi
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # lit itself failed (configuration error, crash)
fi
summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
exit "$status"
