#!/usr/bin/python3
"""CPU attention on threads: the fused pipeline on one thread against
threads=true (OpenMP) with the tiles shared out statically (one contiguous
range per thread) and dynamically (--attn-omp-schedule, the default), on
the same shapes in one run.

Causal tiles differ in cost (a tile's visible keys grow with its rows), so
a static split leaves the thread with the last tiles most of the work when
there are few tiles per thread (few heads). Each program fills q, k, v
deterministically, calls attention --reps times and prints each call's
time (rtclock around the call: wall time, JIT compilation and set-up
excluded), then the sum of the last output; the three configurations'
sums must agree (a guard, not the project's test: the threaded path's
numerics are tested in test/Integration/CPU/threads.test).

    /usr/bin/python3 bench/cpu/threads_bench.py --build build --threads 2
"""

import argparse
import os
import re
import statistics
import sys
import tempfile

import numpy as np

from mlir_bench import (OPENMP_LIB, add_opt_level_argument, lower_and_run,
                        mlir_fill, timing_module)


def mlir_program(h, L, D, causal, reps):
    t = f"tensor<1x{h}x{L}x{D}xf32>"
    fills = "".join(mlir_fill(n, m, t) for n, m in (("q", 7), ("k", 5), ("v", 3)))
    attrs = f"scale = {1.0 / np.sqrt(D):.9e}" + (" causal = top_left" if causal else "")
    return timing_module(t, t, attrs, fills, reps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--heads", default="1,4")
    ap.add_argument("--lengths", default="1024,2048,4096")
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--options", default="",
                    help="more --attn-cpu-pipeline options, e.g. q-tile=32")
    add_opt_level_argument(ap)
    args = ap.parse_args()

    opt = os.path.join(args.build, "bin", "attn-opt")
    extra = f" {args.options}" if args.options else ""
    m = re.search(r"q-tile=(\d+)", args.options)
    q_tile = int(m.group(1)) if m else 64
    omp_env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    configs = [
        ("1 thread", f"threads=false{extra}", (), None),
        ("static", f"threads=true schedule=static{extra}", (OPENMP_LIB,), omp_env),
        ("dynamic", f"threads=true schedule=dynamic{extra}", (OPENMP_LIB,), omp_env),
    ]
    print(f"{args.threads} threads; median of {args.reps} calls (ms)\n")
    print("| H | L | D | causal | q-tiles | 1 thread | static | dynamic "
          "| static speedup | dynamic speedup | dynamic/static |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for h in map(int, args.heads.split(",")):
            for D in map(int, args.dims.split(",")):
                for causal in (False, True):
                    for L in map(int, args.lengths.split(",")):
                        src = os.path.join(work, f"t-{h}-{L}-{D}-{int(causal)}.mlir")
                        with open(src, "w") as f:
                            f.write(mlir_program(h, L, D, causal, args.reps))
                        ms, sums = {}, []
                        for name, options, libs, env in configs:
                            out = lower_and_run(opt, f"--attn-cpu-pipeline={options}",
                                                src, libs=libs, env=env,
                                                opt_level=args.opt_level).stdout.split()
                            ms[name] = 1e3 * statistics.median(
                                float(x) for x in out[:args.reps])
                            sums.append(float(out[args.reps]))
                        if max(sums) - min(sums) > 1e-3 * max(1.0, abs(sums[0])):
                            sys.exit(f"outputs differ between configurations: {sums}")
                        one = ms["1 thread"]
                        tiles = h * -(-L // q_tile)
                        print(f"| {h} | {L} | {D} | {'yes' if causal else 'no'} "
                              f"| {tiles} | {one:.1f} | {ms['static']:.1f} "
                              f"| {ms['dynamic']:.1f} | {one / ms['static']:.2f} "
                              f"| {one / ms['dynamic']:.2f} "
                              f"| {ms['static'] / ms['dynamic']:.2f} |")
                        sys.stdout.flush()


if __name__ == "__main__":
    main()
