#!/usr/bin/env bash
# The one device check, run on the GPU machine (no MLIR there) from a copy
# of the working tree that carries build/gpu-artifacts (`make gpu-artifacts`).
# Usage: bench/gpu/device-check.sh OUT_DIR [--quick]
# Writes OUT_DIR/{table.md,results.json,log.txt}; bounded to 8 minutes.
# The table and results are rewritten after every run: stopped at the
# limit (or killed by the caller's own), they hold what was measured.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
art=${ATTN_GPU_ARTIFACTS:-$here/../../build/gpu-artifacts}
out=${1:?usage: device-check.sh OUT_DIR [--quick]}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu \
  --format=csv >"$out/nvidia-smi.txt" 2>&1 || true
timeout 470 python3 "$art/device_check.py" "$art" "$out" "${@:2}" 2>&1 |
  tee "$out/log.txt"
status=${PIPESTATUS[0]}
rm -rf "$out/work"
exit "$status"
