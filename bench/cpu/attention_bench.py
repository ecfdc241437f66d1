#!/usr/bin/python3
"""CPU attention benchmark: fused (--attn-tile) vs unfused (--attn-decompose)
vs numpy's unfused float32 attention, on the same shapes in one run.

For every (L, D, causal) it builds one MLIR program per pipeline that fills
q, k, v deterministically, calls the attention function `--reps` times and
prints the time of each call (rtclock around the call, so JIT compilation
and input set-up are excluded). numpy runs in this process on inputs of the
same shape. Peak resident memory is the whole process's (mlir-runner's
including the JIT, or a numpy child process), measured with /usr/bin/time.

Prints a table of medians, GFLOP/s (4 * B * H * Lq * Lk * D flops, halved
for causal), ratios, and peak memory; writes it as CSV and, when matplotlib
is available, a PNG of time and memory against L. With ``--baseline
ATTN_OPT`` it also times the fused pipeline of another build of attn-opt
(an earlier commit) in the same run, as the "baseline" columns.

    /usr/bin/python3 bench/cpu/attention_bench.py --build build --out bench/cpu/results
"""

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

from mlir_bench import (add_opt_level_argument, lower_and_run, mlir_fill,
                        timing_module)


def mlir_program(L, D, causal, reps):
    """A module that times `reps` calls of attention on [1, 1, L, D] f32."""
    t = f"tensor<1x1x{L}x{D}xf32>"
    causal_attr = " causal = top_left" if causal else ""
    scale = 1.0 / np.sqrt(D)
    fills = "".join(mlir_fill(n, m, t) for n, m in (("q", 7), ("k", 5), ("v", 3)))
    return timing_module(t, t, f"scale = {scale:.9e}{causal_attr}", fills,
                         reps)


def run_mlir(opt, pipeline, L, D, causal, reps, workdir, opt_level):
    src = os.path.join(workdir, f"attn-{L}-{D}-{int(causal)}.mlir")
    with open(src, "w") as f:
        f.write(mlir_program(L, D, causal, reps))
    proc = lower_and_run(opt, pipeline, src,
                         ("/usr/bin/time", "-f", "MAXRSS %M"),
                         opt_level=opt_level)
    lines = proc.stdout.split()
    times = [float(x) for x in lines[:reps]]
    rss_kb = int(re.search(r"MAXRSS (\d+)", proc.stderr).group(1))
    return times, rss_kb / 1024.0


NUMPY_CHILD = r"""
import sys, time, numpy as np
L, D, causal, reps = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4])
i = np.arange(L)[:, None]; d = np.arange(D)[None, :]
mk = lambda m: (((i * m + d) % 17) * 0.0588235 - 0.5).astype(np.float32)
q, k, v = mk(7), mk(5), mk(3)
scale = np.float32(1.0 / np.sqrt(D))
hidden = np.triu(np.ones((L, L), dtype=bool), 1) if causal else None
for _ in range(reps):
    t0 = time.perf_counter()
    s = (q @ k.T) * scale
    if hidden is not None:
        s[hidden] = -np.inf
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    o = p @ v
    print(time.perf_counter() - t0)
"""


def run_numpy(L, D, causal, reps):
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "MAXRSS %M", sys.executable, "-c", NUMPY_CHILD,
         str(L), str(D), "1" if causal else "0", str(reps)],
        check=True, capture_output=True, text=True)
    times = [float(x) for x in proc.stdout.split()]
    rss_kb = int(re.search(r"MAXRSS (\d+)", proc.stderr).group(1))
    return times, rss_kb / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="bench/cpu/results")
    ap.add_argument("--lengths", default="512,1024,2048,4096")
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--unfused-max-length", type=int, default=4096,
                    help="skip the (slow) unfused pipeline above this L")
    ap.add_argument("--baseline", metavar="ATTN_OPT",
                    help="also time the fused pipeline of this attn-opt")
    ap.add_argument("--fused-options", default="",
                    help="options of the fused --attn-cpu-pipeline, e.g. "
                    "'q-tile=16 approximate-exp2=false'")
    add_opt_level_argument(ap)
    args = ap.parse_args()

    opt = os.path.join(args.build, "bin", "attn-opt")
    os.makedirs(args.out, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for D in map(int, args.dims.split(",")):
            for causal in (False, True):
                for L in map(int, args.lengths.split(",")):
                    flops = 4.0 * L * L * D * (0.5 if causal else 1.0)
                    row = {"L": L, "D": D, "causal": causal}
                    fused = "--attn-cpu-pipeline"
                    if args.fused_options:
                        fused += f"={args.fused_options}"
                    configs = [("fused", opt, fused),
                               ("unfused", opt,
                                "--attn-cpu-pipeline=fused=false")]
                    if args.baseline:
                        configs.append(("baseline", args.baseline,
                                        "--attn-cpu-pipeline"))
                    for name, tool, pipeline in configs:
                        if name == "unfused" and L > args.unfused_max_length:
                            row[name] = row[name + "_mb"] = float("nan")
                            continue
                        times, mb = run_mlir(tool, pipeline, L, D, causal,
                                             args.reps, work, args.opt_level)
                        row[name], row[name + "_mb"] = statistics.median(times), mb
                    times, mb = run_numpy(L, D, causal, args.reps)
                    row["numpy"], row["numpy_mb"] = statistics.median(times), mb
                    row["gflops"] = flops / row["fused"] / 1e9
                    rows.append(row)
                    print_row(row, header=len(rows) == 1)
                    sys.stdout.flush()

    with open(os.path.join(args.out, "cpu-attention.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    plot(rows, os.path.join(args.out, "cpu-attention.png"))


def print_row(r, header):
    baseline = "baseline" in r
    if header:
        print("| L | D | causal | fused ms | unfused ms | numpy ms | fused GFLOP/s "
              "| unfused/fused | numpy/fused | fused MB | unfused MB | numpy MB |"
              + (" baseline ms | baseline/fused |" if baseline else ""))
        print("|---|---|---|---|---|---|---|---|---|---|---|---|"
              + ("---|---|" if baseline else ""))
    print(f"| {r['L']} | {r['D']} | {'yes' if r['causal'] else 'no'} "
          f"| {r['fused'] * 1e3:.1f} | {r['unfused'] * 1e3:.1f} | {r['numpy'] * 1e3:.1f} "
          f"| {r['gflops']:.2f} | {r['unfused'] / r['fused']:.2f} "
          f"| {r['numpy'] / r['fused']:.2f} | {r['fused_mb']:.0f} "
          f"| {r['unfused_mb']:.0f} | {r['numpy_mb']:.0f} |"
          + (f" {r['baseline'] * 1e3:.1f} | {r['baseline'] / r['fused']:.2f} |"
             if baseline else ""))


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot; apt-get install python3-matplotlib)")
        return
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(12, 4.5))
    for D in sorted({r["D"] for r in rows}):
        for causal in (False, True):
            sel = [r for r in rows if r["D"] == D and r["causal"] == causal]
            Ls = [r["L"] for r in sel]
            tag = f"D={D}{' causal' if causal else ''}"
            keys = [("fused", "-o"), ("unfused", "--s"), ("numpy", ":^")]
            if "baseline" in sel[0]:
                keys.append(("baseline", "-.x"))
            for key, style in keys:
                ax_t.plot(Ls, [r[key] * 1e3 for r in sel], style, label=f"{key} {tag}")
                if not causal:
                    ax_m.plot(Ls, [r[key + "_mb"] for r in sel], style, label=f"{key} {tag}")
    for ax, ylabel in ((ax_t, "median time (ms)"), (ax_m, "peak RSS (MB)")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("L (= Lq = Lk)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    ax_t.legend(fontsize=6, ncol=2)
    ax_m.legend(fontsize=6)
    fig.suptitle("attn.attention on the CPU: fused vs unfused vs numpy (f32, B=H=1)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
