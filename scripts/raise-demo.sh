#!/usr/bin/env bash
# --attn-raise on the shipped unfused graphs: for each example, the raised
# attn.attention, then the example run on the CPU with and without raising
# (raise -> lower -> run) and the outputs compared.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
opt=$build/bin/attn-opt
llvm=/usr/lib/llvm-22
libs=$llvm/lib/libmlir_runner_utils.so,$llvm/lib/libmlir_c_runner_utils.so
tosa_to_linalg='builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor))'

for example in raise-bert-encoder raise-gpt-causal-gqa raise-tflite-tosa; do
  file=$src/examples/$example.mlir
  lower_first=()
  [ "$example" = raise-tflite-tosa ] && lower_first=(--lower-first="$tosa_to_linalg")
  echo "== $example: attn-opt --attn-raise --canonicalize"
  "$opt" "$file" --attn-raise --canonicalize | grep -E "attn.attention" | sed 's/^ */   /'
  echo "   raised vs. unfused on the CPU:"
  /usr/bin/python3 "$src/test/lib/raise_compare.py" "$file" --attn-opt "$opt" \
    --mlir-runner "$llvm/bin/mlir-runner" --shared-libs "$libs" \
    --expect-raised 1 "${lower_first[@]}" | sed 's/^/   /'
  echo
done
