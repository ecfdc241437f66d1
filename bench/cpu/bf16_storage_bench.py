#!/usr/bin/python3
"""bf16 attention on the CPU with and without --attn-llvm-bf16-as-i16.

For each shape it lowers one bf16 program with --attn-cpu-pipeline once and
keeps two outputs: the pipeline's result, and the module just before its
last pass (--mlir-print-ir-before=attn-llvm-bf16-as-i16), where bf16 is
still LLVM's `bfloat`. Both run with mlir-runner -O2 in the same run; each
prints the time of every call (rtclock around it) and the sum of its last
output, which must agree. On a host with AVX-512 BF16 the two should time
the same; without it (AVX2) LLVM converts each bf16 value the first one
moves through soft-float calls.

    /usr/bin/python3 bench/cpu/bf16_storage_bench.py --build build \\
        --shapes "1,4,512,512,128;1,8,1,4096,128;1,4,512,512,64,causal"
"""

import argparse
import os
import statistics
import subprocess
import tempfile

from mlir_bench import mlir_fill, run_lowered, timing_module


def program(b, h, lq, lk, d, reps, causal):
    """Times `reps` calls of a bf16 @attention on f32 fills truncated to
    bf16; prints the last output's sum."""
    tq, tk = f"tensor<{b}x{h}x{lq}x{d}xf32>", f"tensor<{b}x{h}x{lk}x{d}xf32>"
    fills = "".join(mlir_fill(n, m, t) for n, m, t in
                    (("q", 7, tq), ("k", 5, tk), ("v", 3, tk)))
    attrs = f"scale = {d ** -0.5:.9e}" + (" causal = top_left" if causal else "")
    return timing_module(tq, tk, attrs, fills, reps, storage="bf16")


def run(path, reps):
    """(call times, printed sum) of the lowered program at `path`."""
    out = run_lowered(path).stdout.split()
    return [float(x) for x in out[:reps]], out[reps]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--shapes", default="1,4,512,512,128;1,8,1,4096,128;"
                    "1,4,512,512,64,causal",
                    help="'B,H,Lq,Lk,D[,causal];...'")
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    opt = os.path.join(args.build, "bin", "attn-opt")
    print(f"{'B,H,Lq,Lk,D':>22} {'bfloat ms':>10} {'i16 ms':>10} "
          f"{'ratio':>6}  (medians of {args.reps} calls, -O2)")
    with tempfile.TemporaryDirectory() as work:
        for spec in args.shapes.split(";"):
            fields = spec.split(",")
            causal = fields[-1] == "causal"
            b, h, lq, lk, d = map(int, fields[:5])
            src = os.path.join(work, "p.mlir")
            new, old = src + ".i16.mlir", src + ".bfloat.mlir"
            with open(src, "w") as f:
                f.write(program(b, h, lq, lk, d, args.reps, causal))
            with open(old, "w") as before:
                subprocess.run(
                    [opt, src, "--attn-cpu-pipeline", "-o", new,
                     "--mlir-print-ir-before=attn-llvm-bf16-as-i16"],
                    check=True, stderr=before)
            t_old, sum_old = run(old, args.reps)
            t_new, sum_new = run(new, args.reps)
            if sum_old != sum_new:
                raise SystemExit(f"{spec}: the outputs differ "
                                 f"({sum_old} and {sum_new})")
            m_old, m_new = statistics.median(t_old), statistics.median(t_new)
            print(f"{spec:>22} {m_old * 1e3:10.3f} {m_new * 1e3:10.3f} "
                  f"{m_old / m_new:6.2f}")


if __name__ == "__main__":
    main()
