#!/usr/bin/python3
"""CPU grouped-query decoding benchmark: the fused CPU pipeline with and
without GQA packing (--attn-cpu-pipeline="pack-gqa=1", --attn-pack-gqa)
vs numpy, on the same shapes in one run.

Decoding: B sequences of Lq query rows (1: one new token) over Lk cached
keys, Hq query heads sharing Hkv key/value heads (groups of g = Hq / Hkv).
Unpacked, each query head's op reads its group's K and V again (g times
per group); packed, the group's g x Lq rows are the rows of one op, which
reads K and V once. The table gives GB/s of K and V read once (2 * B *
Hkv * Lk * D * 4 bytes, f32) next to times: decoding should be bound by
that traffic (docs/performance.md has the tables).

With --dynamic-dims 2 the attention function's batch and head dims are
dynamic, with 3 also Lq and Lk (a frontend with dynamic shapes): the
group and packing's choice are then run-time values.

With --causal the rows are causal too (speculative decoding: Lq > 1
new tokens, bottom-right aligned); packed, they keep their alignment with a
causal period of Lq.

Each MLIR program fills q, k, v deterministically, calls the attention
function --reps times (rtclock around each call: JIT compilation and
set-up excluded) and prints the times, then the sum of the last output,
which is checked against numpy's float64 attention on the same inputs (a
guard that both configurations compute the same thing, not the project's
test: test/Integration has those).

With --bias the op also takes a full f32 bias [B, Hq, Lq, Lk] (a
relative-position bias or an expanded padding mask).

--baseline ATTN_OPT (another build) and --baseline-options OPTIONS (other
pipeline options, e.g. row-major-rows=0) time both configurations again
in the same run and add the ratios.

    /usr/bin/python3 bench/cpu/gqa_decode_bench.py --build build
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

from mlir_bench import (add_opt_level_argument, lower_and_run, mlir_fill,
                        numpy_fill, timing_module)


# The fill multiplier of the bias (q, k, v: 7, 5, 3).
BIAS_FILL = 11


def mlir_program(b, hq, hkv, lq, lk, d, reps, causal, dynamic_dims, bias):
    tq = f"tensor<{b}x{hq}x{lq}x{d}xf32>"
    tk = f"tensor<{b}x{hkv}x{lk}x{d}xf32>"
    tb = f"tensor<{b}x{hq}x{lq}x{lk}xf32>" if bias else None
    scale = 1.0 / np.sqrt(d)
    fills = (mlir_fill("q", 7, tq) + mlir_fill("k", 5, tk)
             + mlir_fill("v", 3, tk)
             + (mlir_fill("bias", BIAS_FILL, tb) if bias else ""))
    attrs = f"scale = {scale:.9e}" + (f" causal = {causal}" if causal else "")
    return timing_module(tq, tk, attrs, fills, reps, dynamic_dims, tb)


def run_mlir(opt, pipeline, shape, reps, causal, dynamic_dims, bias, work,
             tag, opt_level):
    src = os.path.join(work, f"gqa-{tag}.mlir")
    with open(src, "w") as f:
        f.write(mlir_program(*shape, reps, causal, dynamic_dims, bias))
    out = lower_and_run(opt, pipeline, src, opt_level=opt_level).stdout.split()
    return [float(x) for x in out[:reps]], float(out[reps])


def reference(b, hq, hkv, lq, lk, d, causal, bias):
    """float64 attention on the benchmark's inputs, and numpy's float32
    time for one call (unfused, K/V broadcast to the query heads)."""
    q = numpy_fill((b, hq, lq, d), 7)
    k = numpy_fill((b, hkv, lk, d), 5)
    v = numpy_fill((b, hkv, lk, d), 3)
    g = hq // hkv
    i, j = np.arange(lq)[:, None], np.arange(lk)[None, :]
    shift = {None: None, "top_left": 0, "bottom_right": lk - lq}[causal]
    bias_values = numpy_fill((b, hq, lq, lk), BIAS_FILL) if bias else 0.0

    def attend(q, k, v):
        kk = np.repeat(k, g, axis=1)
        vv = np.repeat(v, g, axis=1)
        s = q @ kk.transpose(0, 1, 3, 2) * (1.0 / np.sqrt(d)) + bias_values
        if shift is not None:
            s = np.where(j <= i + shift, s, -np.inf)
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
    ap.add_argument("--q-tile", type=int, default=64,
                    help="the fused pipeline's q-tile (rows per tile)")
    ap.add_argument("--causal", choices=("top_left", "bottom_right"),
                    help="causal rows (bottom_right: speculative decoding)")
    ap.add_argument("--dynamic-dims", type=int, choices=(0, 2, 3),
                    default=0,
                    help="the attention function's first dims known only "
                    "at run time: 2 the batch and head counts, 3 also the "
                    "sequence lengths (packing then decides at run time)")
    ap.add_argument("--fused-options", default="",
                    help="more --attn-cpu-pipeline options for every "
                    "configuration, e.g. 'row-major-rows=0'")
    ap.add_argument("--baseline", metavar="ATTN_OPT",
                    help="also time both configurations with this attn-opt "
                    "(another build), in the same run, and add their times "
                    "and the ratios to the table")
    ap.add_argument("--baseline-options", metavar="OPTIONS",
                    help="the same with these pipeline options instead of "
                    "--fused-options (e.g. 'row-major-rows=0')")
    ap.add_argument("--bias", action="store_true",
                    help="the op also takes a full f32 bias [B, Hq, Lq, Lk] "
                    "(static shapes only)")
    add_opt_level_argument(ap)
    args = ap.parse_args()
    if args.bias and args.dynamic_dims:
        ap.error("--bias needs static shapes (--dynamic-dims 0)")
    opt = os.path.join(args.build, "bin", "attn-opt")
    baseline = args.baseline is not None or args.baseline_options is not None

    def pipeline(pack, extra):
        return (f"--attn-cpu-pipeline=q-tile={args.q_tile} pack-gqa={pack} "
                f"{extra}").strip()

    configs = [("unpacked", opt, pipeline(0, args.fused_options)),
               ("packed", opt, pipeline(1, args.fused_options))]
    header = ("| B | Hq | Hkv | Lq | Lk | D | unpacked ms | packed ms | "
              "numpy ms | unpacked GB/s | packed GB/s | unpacked/packed |")
    if baseline:
        base_opt = args.baseline or opt
        base_options = (args.fused_options if args.baseline_options is None
                        else args.baseline_options)
        configs += [("unpacked-base", base_opt, pipeline(0, base_options)),
                    ("packed-base", base_opt, pipeline(1, base_options))]
        header += (" unpacked base ms | packed base ms | base/now unpacked "
                   "| base/now packed |")
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    failed = False
    with tempfile.TemporaryDirectory() as work:
        for item in args.shapes.split(";"):
            shape = tuple(int(x) for x in item.split(","))
            b, hq, hkv, lq, lk, d = shape
            ref, numpy_s = reference(*shape, args.causal, args.bias)
            gbytes = 2.0 * b * hkv * lk * d * 4 / 1e9
            med = {}
            for name, tool, options in configs:
                times, total = run_mlir(tool, options, shape, args.reps,
                                        args.causal, args.dynamic_dims,
                                        args.bias, work,
                                        f"{item.replace(',', '-')}-{name}",
                                        args.opt_level)
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
                  f"| {med['unpacked'] / med['packed']:.2f} |"
                  + (f" {med['unpacked-base'] * 1e3:.2f} "
                     f"| {med['packed-base'] * 1e3:.2f} "
                     f"| {med['unpacked-base'] / med['unpacked']:.2f} "
                     f"| {med['packed-base'] / med['packed']:.2f} |"
                     if baseline else ""),
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
