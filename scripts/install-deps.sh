#!/usr/bin/env bash
# Installs the Debian packages attn-mlir needs to build and test. Idempotent:
# does nothing when every package is already installed.
#   --bench   also what the benchmarks need (matplotlib for the plots)
# libclang-rt-22-dev: the ASan/UBSan runtimes and libFuzzer (make check-asan).
# util-linux (essential, listed for prlimit): the checks raise mlir-runner's
# stack with it (test/lib/attn_check.py).
set -euo pipefail

PACKAGES=(
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  clang-22 lld-22 ninja-build cmake make
  python3 python3-numpy python3-pytest python3-pyflakes
  libomp-22-dev
  libclang-rt-22-dev
  util-linux
)
if [ "${1:-}" = "--bench" ]; then
  PACKAGES+=(python3-matplotlib time)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
