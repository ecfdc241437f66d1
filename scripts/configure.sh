#!/usr/bin/env bash
# Configures the build directory (default: build/) with the toolchain the
# project is measured with: clang-22 + lld, Ninja, libMLIR.so.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
llvm=/usr/lib/llvm-22
if [ -f "$build/build.ninja" ]; then exit 0; fi
cmake -S "$src" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DLLVM_USE_LINKER=lld \
  -DMLIR_DIR=$llvm/lib/cmake/mlir -DLLVM_DIR=$llvm/lib/cmake/llvm \
  -DLLVM_EXTERNAL_LIT=$llvm/bin/lit \
  -DMLIR_LINK_MLIR_DYLIB=ON \
  -DPython3_EXECUTABLE=/usr/bin/python3 \
  "${@:2}"
