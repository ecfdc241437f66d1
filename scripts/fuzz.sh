#!/usr/bin/env bash
# Runs the attn-fuzz libFuzzer target for a bounded time (docs/reliability.md).
#
#   scripts/fuzz.sh [SECONDS] [BUILD_DIR] [-- extra libFuzzer flags]
#
# SECONDS defaults to 600, BUILD_DIR to build-asan (configured and built by
# `make fuzz`, i.e. -DATTN_ENABLE_SANITIZERS=ON -DATTN_ENABLE_FUZZER=ON).
# The seed corpus is every `// -----` chunk of the .mlir files under test/,
# examples/ and fuzz/seeds/; the working corpus (seeds plus what the fuzzer
# found interesting) is kept in BUILD_DIR/fuzz/corpus across runs. Crashing
# inputs land in BUILD_DIR/fuzz/artifacts/. libFuzzer runs in fork mode with
# -ignore_crashes=1 (FUZZ_FORK=0: one process that stops at the first
# crash), so that a crash does not end the run; at the end fuzz/triage.py
# reruns every artifact and sorts it into attn-mlir's (a frame in our code)
# and upstream's (frames only in LLVM/MLIR). Each of ours is fixed and
# becomes a regression test under test/Reliability/regressions/. Ends with
# libFuzzer's final stats (executions, coverage) and the triage; the exit
# status is 1 when a crash is attn-mlir's.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
build=$(cd "${2:-$src/build-asan}" && pwd)
shift $(( $# >= 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift

fuzzer=$build/bin/attn-fuzz
if [ ! -x "$fuzzer" ]; then
  echo "fuzz.sh: $fuzzer not found; run 'make fuzz' first" >&2
  exit 2
fi
work=$build/fuzz
mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
/usr/bin/python3 "$src/fuzz/make_corpus.py" "$work/seeds" "$src"

# Leak checking stays on: a leak in a pass is a finding too. -timeout flags
# an input that takes over 20 s (a hang), -rss_limit_mb a runaway allocation.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}
fork=()
if [ "${FUZZ_FORK:-1}" = 1 ]; then fork=(-fork=1 -ignore_crashes=1); fi
start=$(date +%s)
set +e
"$fuzzer" "$work/corpus" "$work/seeds" "${fork[@]}" \
  -dict="$src/fuzz/attn.dict" \
  -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
  -max_len=16384 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$@" 2>&1 | tee "$work/last-run.log" |
  grep -v '^#[0-9]*.*\(NEW\|REDUCE\|pulse\)'
status=${PIPESTATUS[0]}
set -e
echo "fuzz.sh: ran $(( $(date +%s) - start )) s, exit status $status," \
  "$(ls "$work/artifacts" | wc -l) artifacts in $work/artifacts," \
  "full log $work/last-run.log"
triage=0
/usr/bin/python3 "$src/fuzz/triage.py" "$fuzzer" "$work/artifacts" "$src" ||
  triage=$?
[ "$status" = 0 ] && exit "$triage"
exit "$status"
