#!/usr/bin/env bash
# Builds here everything the GPU machine needs for bench/gpu/device-check.sh:
# every kernel variant (test/lib/gpu_variants.py) compiled by
# --attn-gpu-pipeline to host code + an embedded sm_90 cubin (sm_90a for the
# wgmma kernels), linked with
# bench/gpu/driver.c into one executable next to libattn_cuda_runtime.so,
# plus the PTX and ptxas resource lines of each kernel and a manifest.
# Usage: scripts/gpu-artifacts.sh BUILD_DIR [OUT_DIR]
# With ATTN_GPU_EMULATE=1 the same executable is built from the kernels'
# CPU emulation (--attn-gpu-emulation-pipeline) and host memory, so that
# `device_check.py --device cpu` runs the whole check here, without a GPU;
# the emulation is slow to compile, so by default only a few variants
# (ATTN_GPU_VARIANTS, a regex on the names, selects others).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
emulate=${ATTN_GPU_EMULATE:-0}
if [ "$emulate" = 1 ]; then
  out=${2:-$build/gpu-artifacts-emulated}
else
  out=${2:-$build/gpu-artifacts}
fi
llvm=/usr/lib/llvm-22/bin
chip=${ATTN_GPU_CHIP:-sm_90}
rm -rf "$out" && mkdir -p "$out/src" "$out/obj" "$out/ptx"
runtime=$build/lib/libattn_cuda_runtime.so
if [ "$emulate" != 1 ] && [ ! -f "$runtime" ]; then
  echo "error: $runtime not built (no cuda.h?)" >&2
  exit 1
fi

if [ "$emulate" = 1 ]; then
  only=${ATTN_GPU_VARIANTS:-'^(bf16_d64|bf16_d64_q64kv64|f16_d64_mask_bias|f32_d64_causal|f16_d64_dv128_causal_mask)$'}
  opt=-O0
else
  only=${ATTN_GPU_VARIANTS:-}
  opt=-O2
fi
/usr/bin/python3 "$src/test/lib/gpu_variants.py" "$out/src" "$only" >/dev/null
for mlir in "$out"/src/*.mlir; do
  name=$(basename "$mlir" .mlir)
  tiles=$(cat "$out/src/$name.tiles")
  vchip=$chip
  [ -f "$out/src/$name.chip" ] && vchip=$(cat "$out/src/$name.chip")
  if [ "$emulate" = 1 ]; then
    pipeline="--attn-gpu-emulation-pipeline=$tiles"
  else
    pipeline="--attn-gpu-pipeline=chip=$vchip format=bin $tiles"
  fi
  "$build/bin/attn-opt" "$mlir" "$pipeline" -o "$out/obj/$name.llvm.mlir"
  "$llvm/mlir-translate" --mlir-to-llvmir "$out/obj/$name.llvm.mlir" \
    -o "$out/obj/$name.ll"
  clang-22 -c $opt -fPIC -Wno-override-module "$out/obj/$name.ll" \
    -o "$out/obj/$name.o"
  [ "$emulate" = 1 ] && continue
  # The PTX of the same kernel, for the record and for ptxas -v.
  "$build/bin/attn-opt" "$mlir" \
    --attn-gpu-pipeline="chip=$vchip format=isa $tiles" -o "$out/obj/$name.isa.mlir"
  /usr/bin/python3 "$src/test/lib/gpu_binary.py" "$out/obj/$name.isa.mlir" \
    "$out/ptx" >/dev/null
done
cp "$out/src/variants.inc" "$out/obj/variants.inc"

if [ "$emulate" = 1 ]; then
  # compiler-rt's builtins: the emulation's bf16 conversions call
  # __truncsfbf2, which Debian 12's libgcc lacks.
  builtins=$(clang-22 --rtlib=compiler-rt -print-libgcc-file-name)
  clang-22 -O2 -I"$out/obj" "$src/bench/gpu/driver.c" \
    "$src/bench/gpu/host_runtime.c" "$out"/obj/*.o "$builtins" -lm \
    -o "$out/attn-gpu-bench"
  cp "$out/src/variants.json" "$src/bench/gpu/device_check.py" "$out/"
  (cd "$src" && git rev-parse HEAD 2>/dev/null || echo unknown) >"$out/commit.txt"
  echo "emulated gpu artifacts in $out"
  exit 0
fi
cp "$runtime" "$out/"
clang-22 -O2 -I"$out/obj" "$src/bench/gpu/driver.c" "$out"/obj/*.o \
  -L"$out" -lattn_cuda_runtime -Wl,-rpath,'$ORIGIN' -o "$out/attn-gpu-bench"

# Resource lines of every kernel (fails on spills: see ptxas_check.py).
/usr/bin/python3 "$src/test/lib/ptxas_check.py" --attn-opt "$build/bin/attn-opt" \
  --ptxas "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" --chip "$chip" \
  >"$out/ptxas-resources.txt"
# Static instruction mix of each kernel's K/V step.
/usr/bin/python3 "$src/bench/gpu/ptx_loop_stats.py" "$out/ptx" \
  >"$out/ptx-loop-stats.txt"
cp "$out/src/variants.json" "$out/variants.json"
cp "$src/bench/gpu/device_check.py" "$out/"
(cd "$src" && git rev-parse HEAD 2>/dev/null || echo unknown) >"$out/commit.txt"
rm -rf "$out/obj"/*.mlir "$out/obj"/*.ll
du -sh "$out"
echo "gpu artifacts in $out (commit $(cat "$out/commit.txt"))"
