#!/usr/bin/env bash
# The main job on a shipped example: attention through attn-opt, then
# executed on the CPU with mlir-runner.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
opt=$build/bin/attn-opt
llvm=/usr/lib/llvm-22
libs=$llvm/lib/libmlir_runner_utils.so,$llvm/lib/libmlir_c_runner_utils.so
example=$src/examples/gqa-causal-attention.mlir

echo "== $example: the attention op after canonicalization"
echo "   (the frontend's q * 1/sqrt(8) is folded into scale; nothing is scaled twice)"
"$opt" "$example" --canonicalize --attn-check-scale --mlir-print-op-on-diagnostic=false | grep -E "attn.attention" | sed 's/^ */   /'

echo
echo "== attn-opt --attn-cpu-pipeline | mlir-runner"
"$opt" "$example" --attn-cpu-pipeline |
  "$llvm/bin/mlir-runner" -e main -entry-point-result=void -shared-libs="$libs"

echo
echo "== --attn-raise on unfused graphs as frontends emit them"
bash "$src/scripts/raise-demo.sh" "$build"
