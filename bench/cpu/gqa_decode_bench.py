#!/usr/bin/python3
"""CPU grouped-query decoding benchmark: the fused CPU pipeline with and
without GQA packing (--attn-cpu-pipeline="pack-gqa=1", --attn-pack-gqa)
vs numpy, on the same shapes in one run.

Decoding: B sequences of Lq query rows (1: one new token) over Lk cached
keys, Hq query heads sharing Hkv key/value heads (groups of g = Hq / Hkv).
Unpacked, each query head's op reads its group's K and V again (g times
per group); packed, the group's g x Lq rows are the rows of one op, which
reads K and V once. The work is memory-bound, so the table gives GB/s of
K and V read once (2 * B * Hkv * Lk * D * 4 bytes, f32) next to times.

Each MLIR program fills q, k, v deterministically, calls the attention
function --reps times (rtclock around each call: JIT compilation and
set-up excluded) and prints the times, then the sum of the last output,
which is checked against numpy's float64 attention on the same inputs (a
guard that both configurations compute the same thing, not the project's
test: test/Integration has those).

    /usr/bin/python3 bench/cpu/gqa_decode_bench.py --build build
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

LLVM = "/usr/lib/llvm-22"
RUNNER_LIBS = ",".join(
    f"{LLVM}/lib/{lib}"
    for lib in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))

# The fill of element (h, i, d) of q, k and v: small exact values, a
# different pattern per tensor (multiplier m) and per head.
FILL = """
  %e{n} = tensor.empty() : {t}
  %{n} = linalg.generic {{indexing_maps = [affine_map<(a, h, i, d) -> (a, h, i, d)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      outs(%e{n} : {t}) {{
  ^bb0(%unused: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 2 : index
    %d = linalg.index 3 : index
    %c{m} = arith.constant {m} : index
    %three = arith.constant 3 : index
    %c17 = arith.constant 17 : index
    %im = arith.muli %i, %c{m} : index
    %hm = arith.muli %h, %three : index
    %s0 = arith.addi %im, %d : index
    %s = arith.addi %s0, %hm : index
    %r = arith.remui %s, %c17 : index
    %ri = arith.index_cast %r : index to i32
    %rf = arith.sitofp %ri : i32 to f32
    %c = arith.constant 0.0588235 : f32
    %half = arith.constant 0.5 : f32
    %x = arith.mulf %rf, %c : f32
    %y = arith.subf %x, %half : f32
    linalg.yield %y : f32
  }} -> {t}
"""


def fill_np(shape, m):
    _, h, i, d = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
    return (((i * m + d + 3 * h) % 17) * np.float32(0.0588235)
            - np.float32(0.5)).astype(np.float32)


def mlir_program(b, hq, hkv, lq, lk, d, reps):
    tq = f"tensor<{b}x{hq}x{lq}x{d}xf32>"
    tk = f"tensor<{b}x{hkv}x{lk}x{d}xf32>"
    scale = 1.0 / np.sqrt(d)
    fills = (FILL.format(n="q", m=7, t=tq) + FILL.format(n="k", m=5, t=tk)
             + FILL.format(n="v", m=3, t=tk))
    return f"""
func.func private @rtclock() -> f64
func.func private @printF64(f64)
func.func private @printNewline()

func.func @attention(%q: {tq}, %k: {tk}, %v: {tk}) -> {tq} {{
  %init = tensor.empty() : {tq}
  %r = attn.attention ins(%q, %k, %v : {tq}, {tk}, {tk}) outs(%init : {tq})
         scale = {scale:.9e} -> {tq}
  return %r : {tq}
}}

func.func @main() {{
{fills}
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {reps} : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %last = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {{
    %t0 = func.call @rtclock() : () -> f64
    %r = func.call @attention(%q, %k, %v) : ({tq}, {tk}, {tk}) -> {tq}
    %t1 = func.call @rtclock() : () -> f64
    %dt = arith.subf %t1, %t0 : f64
    func.call @printF64(%dt) : (f64) -> ()
    func.call @printNewline() : () -> ()
    %s = linalg.reduce ins(%r : {tq}) outs(%init : tensor<f32>) dimensions = [0, 1, 2, 3]
      (%x: f32, %y: f32) {{
        %z = arith.addf %x, %y : f32
        linalg.yield %z : f32
      }}
    %sum = tensor.extract %s[] : tensor<f32>
    scf.yield %sum : f32
  }}
  %s64 = arith.extf %last : f32 to f64
  func.call @printF64(%s64) : (f64) -> ()
  func.call @printNewline() : () -> ()
  return
}}
"""


def run_mlir(opt, pipeline, shape, reps, work, tag):
    src = os.path.join(work, f"gqa-{tag}.mlir")
    low = src + ".ll.mlir"
    with open(src, "w") as f:
        f.write(mlir_program(*shape, reps))
    subprocess.run([opt, pipeline, src, "-o", low], check=True)
    out = subprocess.run(
        [f"{LLVM}/bin/mlir-runner", low, "-e", "main",
         "-entry-point-result=void", f"-shared-libs={RUNNER_LIBS}"],
        check=True, capture_output=True, text=True).stdout.split()
    return [float(x) for x in out[:reps]], float(out[reps])


def reference(b, hq, hkv, lq, lk, d):
    """float64 attention on the benchmark's inputs, and numpy's float32
    time for one call (unfused, K/V broadcast to the query heads)."""
    q = fill_np((b, hq, lq, d), 7)
    k = fill_np((b, hkv, lk, d), 5)
    v = fill_np((b, hkv, lk, d), 3)
    g = hq // hkv

    def attend(q, k, v):
        kk = np.repeat(k, g, axis=1)
        vv = np.repeat(v, g, axis=1)
        s = q @ kk.transpose(0, 1, 3, 2) * (1.0 / np.sqrt(d))
        s = s - s.max(axis=-1, keepdims=True)
        p = np.exp(s)
        return (p / p.sum(axis=-1, keepdims=True)) @ vv

    ref = attend(q.astype(np.float64), k.astype(np.float64),
                 v.astype(np.float64))
    t0 = time.perf_counter()
    attend(q, k, v)
    return ref, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--shapes", default="1,32,8,1,4096,128;1,32,8,1,16384,128;"
                    "4,32,8,1,4096,128;1,32,4,1,8192,64",
                    help="'B,Hq,Hkv,Lq,Lk,D;...'")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--q-tile", type=int, default=16,
                    help="the fused pipeline's q-tile (rows per tile)")
    args = ap.parse_args()
    opt = os.path.join(args.build, "bin", "attn-opt")
    configs = [("unpacked", f"--attn-cpu-pipeline=q-tile={args.q_tile}"),
               ("packed",
                f"--attn-cpu-pipeline=q-tile={args.q_tile} pack-gqa=1")]
    print("| B | Hq | Hkv | Lq | Lk | D | unpacked ms | packed ms | numpy ms "
          "| unpacked GB/s | packed GB/s | unpacked/packed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    failed = False
    with tempfile.TemporaryDirectory() as work:
        for item in args.shapes.split(";"):
            shape = tuple(int(x) for x in item.split(","))
            b, hq, hkv, lq, lk, d = shape
            ref, numpy_s = reference(*shape)
            gbytes = 2.0 * b * hkv * lk * d * 4 / 1e9
            med = {}
            for name, pipeline in configs:
                times, total = run_mlir(opt, pipeline, shape, args.reps, work,
                                        f"{item.replace(',', '-')}-{name}")
                # The sum of the outputs (each a convex combination of v).
                if abs(total - ref.sum()) > 2e-5 * ref.size:
                    print(f"{name} {shape}: output sum {total} != float64 "
                          f"reference {ref.sum()}", file=sys.stderr)
                    failed = True
                med[name] = statistics.median(times)
            print(f"| {b} | {hq} | {hkv} | {lq} | {lk} | {d} "
                  f"| {med['unpacked'] * 1e3:.2f} | {med['packed'] * 1e3:.2f} "
                  f"| {numpy_s * 1e3:.2f} "
                  f"| {gbytes / med['unpacked']:.1f} "
                  f"| {gbytes / med['packed']:.1f} "
                  f"| {med['unpacked'] / med['packed']:.2f} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
