#!/usr/bin/env bash
# Longer differential runs (docs/reliability.md): random attn.attention
# problems and unfused graphs, fused and unfused pipelines, against the
# float64 numpy reference; failures are shrunk and their reproducers written
# to BUILD/differential/SEED/.
#
#   scripts/differential.sh [BUILD] [COUNT] [SEED] [-- attn_random.py flags]
#
# COUNT problems and COUNT/2 graphs (default 200), seed default: the time.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
count=${2:-200}
seed=${3:-$(date +%s)}
shift $(( $# >= 3 ? 3 : $# ))
[ "${1:-}" = "--" ] && shift
llvm=/usr/lib/llvm-22/lib
libs=$llvm/libmlir_runner_utils.so,$llvm/libmlir_c_runner_utils.so
exec /usr/bin/python3 "$src/test/lib/attn_random.py" \
  --attn-opt "$build/bin/attn-opt" \
  --mlir-runner /usr/lib/llvm-22/bin/mlir-runner --shared-libs "$libs" \
  --openmp-shared-libs "$libs,$llvm/libomp.so" \
  --seed "$seed" --problems "$count" --graphs $(( count / 2 )) \
  --out "$build/differential/$seed" "$@"
