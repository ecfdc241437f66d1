#!/usr/bin/env bash
# The main job on a shipped example: attention through attn-opt, then
# executed on the CPU with mlir-runner, and compiled to a GPU kernel (PTX, cubin, ptxas -v).
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

echo
echo "== --attn-gpu-pipeline: GQA causal attention (bf16, D=64) as one fused tensor-core kernel for sm_90"
gpu_src=$(mktemp -d)
trap 'rm -rf "$gpu_src"' EXIT
cat >"$gpu_src/gqa.mlir" <<'MLIR'
func.func @gqa(%q: memref<?x8x?x64xbf16>, %k: memref<?x2x?x64xbf16>,
               %v: memref<?x2x?x64xbf16>, %o: memref<?x8x?x64xbf16>) {
  attn.attention ins(%q, %k, %v : memref<?x8x?x64xbf16>, memref<?x2x?x64xbf16>, memref<?x2x?x64xbf16>)
                 outs(%o : memref<?x8x?x64xbf16>) scale = 0.125 causal = bottom_right
  return
}
MLIR
"$opt" "$gpu_src/gqa.mlir" --attn-gpu-pipeline="chip=sm_90 format=isa" -o "$gpu_src/gqa.isa.mlir"
ptx=$(/usr/bin/python3 "$src/test/lib/gpu_binary.py" "$gpu_src/gqa.isa.mlir" "$gpu_src")
echo "   PTX: $(grep -c 'mma.sync.aligned.m16n8k16' "$ptx") mma.sync, $(grep -c 'ldmatrix' "$ptx") ldmatrix, $(grep -c 'cp.async.cg' "$ptx") cp.async"
ptxas=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
if [ -x "$ptxas" ]; then
  "$opt" "$gpu_src/gqa.mlir" --attn-gpu-pipeline="chip=sm_90 format=bin" -o /dev/null &&
    echo "   cubin for sm_90: built"
  "$ptxas" -v --gpu-name sm_90 "$ptx" -o /dev/null 2>&1 | grep -E "registers|spill" | sed 's/^ */   ptxas: /'
else
  echo "   (ptxas not found: install the CUDA toolkit for the cubin and its resource line)"
fi
