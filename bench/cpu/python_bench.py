#!/usr/bin/python3
"""The Python package's CPU attention (attn_mlir.compile_attention) on
numpy arrays: time per call of the compiled kernel, on one thread and on
--threads, against another build's package (--baseline DIR, a
python_packages folder) in the same run.

Each configuration runs in a child process with its package on
PYTHONPATH: f32 inputs of shape (B, H, L, D), a warm-up call, then the
median of --reps calls (time.perf_counter around the call: the call's
argument checks and descriptors included, compilation excluded). The
outputs are compared with numpy's float64 attention (a guard that each
configuration computes attention, not the project's test: that is
test/python).

    /usr/bin/python3 bench/cpu/python_bench.py --package build/python_packages \\
        --baseline /tmp/old/build/python_packages
"""

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, math, statistics, sys, time
import numpy as np
import attn_mlir
shapes, reps, threads = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
out = []
for b, h, L, d, causal in shapes:
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((b, h, L, d)).astype(np.float32) for _ in range(3))
    kwargs = {} if threads == 1 else {"threads": threads}
    kernel = attn_mlir.compile_attention(q.shape, k.shape, v.shape, causal=causal, **kwargs)
    o = kernel(q, k, v)
    s = (q.astype(np.float64) @ k.astype(np.float64).swapaxes(-1, -2)) / math.sqrt(d)
    if causal:
        s[..., np.triu(np.ones((L, L), dtype=bool), 1)] = -np.inf
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)
    err = float(np.abs(o - ref).max())
    if not err < 1e-4:
        sys.exit(f"output differs from the reference by {err}")
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        kernel(q, k, v)
        times.append(time.perf_counter() - t0)
    out.append(statistics.median(times))
print(json.dumps(out))
"""


def run(package, shapes, reps, threads):
    env = dict(os.environ, PYTHONPATH=package, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(shapes), str(reps), str(threads)],
        env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{package}: {proc.stderr}")
    return json.loads(proc.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", default="build/python_packages")
    ap.add_argument("--baseline", help="another build's python_packages")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--shapes", default="1,1,1024,64;1,1,2048,128;1,8,512,64;4,8,256,64",
                    help="B,H,L,D;... (each causal and not)")
    args = ap.parse_args()
    shapes = [tuple(map(int, s.split(","))) + (c,)
              for s in args.shapes.split(";") for c in (None, "top_left")]
    cols = {"1 thread": run(args.package, shapes, args.reps, 1),
            f"{args.threads} threads": run(args.package, shapes, args.reps,
                                           args.threads)}
    if args.baseline:
        cols["baseline"] = run(args.baseline, shapes, args.reps, 1)
    names = list(cols)
    print("| B | H | L | D | causal | " + " | ".join(f"{n} ms" for n in names)
          + (" | baseline / 1 thread" if args.baseline else "")
          + f" | 1 thread / {args.threads} threads |")
    print("|---" * (5 + len(names) + (2 if args.baseline else 1)) + "|")
    for i, (b, h, L, d, causal) in enumerate(shapes):
        ms = [cols[n][i] * 1e3 for n in names]
        row = f"| {b} | {h} | {L} | {d} | {'yes' if causal else 'no'} | "
        row += " | ".join(f"{m:.2f}" for m in ms)
        if args.baseline:
            row += f" | {ms[2] / ms[0]:.1f}"
        row += f" | {ms[0] / ms[1]:.2f} |"
        print(row)


if __name__ == "__main__":
    main()
