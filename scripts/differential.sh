#!/usr/bin/env bash
# Longer differential runs (docs/reliability.md): random attn.attention
# problems and unfused graphs (linalg and TOSA), fused and unfused
# pipelines, and random problems for random GPU kernels run by their
# emulation, against the float64 numpy reference; failures are shrunk and
# their reproducers written to BUILD/differential/SEED/.
#
#   scripts/differential.sh [BUILD] [COUNT] [SEED] [-- attn_random.py flags]
#
# COUNT problems, COUNT/2 linalg graphs, COUNT/4 TOSA graphs and COUNT/4
# GPU problems (default 200; a GPU problem takes about ten times a CPU
# one), seed default: the time.
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
  --tosa $(( count / 4 )) --gpu $(( count / 4 )) \
  --out "$build/differential/$seed" "$@"
