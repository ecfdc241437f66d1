#!/usr/bin/env bash
# Line and region coverage of the project's code by the lit suite
# (docs/reliability.md), from clang's source-based coverage.
#
#   scripts/coverage.sh [BUILD] [TEST_PATH...]
#
# BUILD (default build-coverage) is configured with ATTN_ENABLE_COVERAGE=ON
# and built; the tests (default: all; paths relative to test/, e.g.
# Integration/GPU) run with each process's profile merged into
# BUILD/coverage/profraw. Writes BUILD/coverage/report.txt (per file, printed)
# and an HTML view of every line under BUILD/coverage/html. Fails if a test
# fails, after the report.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-coverage}
shift $(( $# >= 1 ? 1 : 0 ))
llvm=/usr/lib/llvm-22/bin

bash "$src/scripts/configure.sh" "$build" -DATTN_ENABLE_COVERAGE=ON || exit 1
build=$(cd "$build" && pwd)
grep -q '^ATTN_ENABLE_COVERAGE:BOOL=ON' "$build/CMakeCache.txt" || {
  echo "error: $build is not a coverage build (ATTN_ENABLE_COVERAGE)" >&2
  exit 1
}
ninja -C "$build" all mlir-doc || exit 1

out=$build/coverage
rm -rf "$out"
mkdir -p "$out/profraw"
tests=()
for t in "$@"; do tests+=("$build/test/$t"); done
[ ${#tests[@]} -eq 0 ] && tests=("$build/test")
LLVM_PROFILE_FILE="$out/profraw/%4m.profraw" "$llvm/lit" -q "${tests[@]}"
status=$?

"$llvm/llvm-profdata" merge -sparse "$out"/profraw/*.profraw \
  -o "$out/coverage.profdata" || exit 1
objects=("$build/bin/attn-opt")
for lib in libAttnMLIRCAPI.so AttnMLIRPlugin.so libattn_cuda_runtime.so; do
  [ -f "$build/lib/$lib" ] && objects+=(-object "$build/lib/$lib")
done
sources=("$src/lib" "$src/tools" "$src/include")
"$llvm/llvm-cov" report "${objects[@]}" -instr-profile="$out/coverage.profdata" \
  "${sources[@]}" 2>/dev/null | sed "s|$src/||" >"$out/report.txt"
"$llvm/llvm-cov" show "${objects[@]}" -instr-profile="$out/coverage.profdata" \
  -format=html -output-dir="$out/html" "${sources[@]}" 2>/dev/null
cat "$out/report.txt"
echo "coverage of ${*:-all tests}: $out/report.txt, $out/html/index.html"
exit "$status"
