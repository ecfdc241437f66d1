#!/usr/bin/env python3
"""The device check: correctness of every kernel variant, then timings.

Runs on the GPU machine (torch, no MLIR) from the folder that
``make gpu-artifacts`` built. Usage:

    python3 device_check.py ARTIFACTS_DIR OUT_DIR [--iters 20] [--quick]

1. correctness: for every variant and a few shapes (tails, Lq != Lk), fresh
   random inputs (and, at two shapes, ramp inputs: each row's scores rise
   steeply with the key index, so that a key wrongly shown or hidden at a
   causal diagonal or a tail moves the row's output by O(1): the shapes
   put the bottom-right diagonal one key before a block's last key, and on
   it with a one-key tail), the output poisoned with NaN by the driver
   before the
   run, compared with a float64 torch reference (relative error within the
   dtype's tolerance, no NaN, rows without a visible key exactly 0). The
   kernels that are timed go first; runs left when --check-budget seconds
   are spent are reported as not run, and once a run of one kernel kind
   (mma.sync, wgmma, wgmma with TMA, warp specialized) hangs, the others
   of that kind are skipped, so that the timings always get their share of
   the time;
2. timing: bf16 (B, H, L, D) = (4,16,4096,128), (4,16,4096,64),
   (1,16,16384,128), causal and not: our kernel (median of ITERS
   synchronous calls of the AOT executable, each kernel's GPU time taken
   with CUDA events by the runtime, ATTN_CUDA_KERNEL_TIMES; "call ms" is
   the whole call on the host clock, with the launch and the stream)
   against torch.nn.functional.scaled_dot_product_attention with the flash
   and cuDNN backends (CUDA events, warm-up, median of ITERS), as TFLOP/s
   and ratios. Every built alternative of a benchmarked variant (names with a
   _q<rows>kv<keys> tile suffix, _wgmma for the Hopper kernel, _wgmma_tma
   for it with TMA loads, _wgmma_ws for its warp-specialized form, _eager
   for rescaling at every step, _splitkv for split-KV chosen at run time)
   is timed next to the default kernel; then decoding shapes (Lq = 1,
   (B, Lk, D) = (1, 16384, 128), (8, 4096, 128), (4, 8192, 64), and
   (8, 4096, 128) with 4 key/value heads): the single kernel against
   split-KV, GQA packing (_packgqa) and SDPA, as GB/s of K and V, and the
   split-KV calls' host time also with ATTN_CUDA_MEMORY_POOL=0 ("call ms,
   no pool": cuMemAlloc/cuMemFree for the partials);
3. memcheck, in the time left (--memcheck-until): one variant of each
   kernel kind (the one with the most code paths) once at a shape with
   tails under compute-sanitizer's memcheck, which finds out-of-bounds
   and misaligned accesses that leave the output right. Writes table.md,
   results.json and raw timings to OUT_DIR after every run, so that a
   check stopped by a time limit leaves what it measured (on SIGTERM, the
   table says that it stopped early).
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time

import torch

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
# |out - ref| <= ATOL + RTOL * |ref|: the kernel rounds P to the input type
# before P.V (as FlashAttention does) and the output to it. f32 runs on
# TF32 tensor cores as 3xTF32 (each operand a TF32 pair: about f32's
# accuracy), or with tf32=1 as plain TF32 (10-bit mantissa, like f16).
TOL = {"f16": (4e-3, 4e-3), "bf16": (3e-2, 3e-2), "f32": (1e-4, 1e-4),
       "tf32": (4e-3, 4e-3)}


def tolerance(v):
    return TOL["tf32" if v.get("tf32") else v["dtype"]]


def reference(q, k, v, scale, causal, mask, bias):
    """float64 attention; hidden rows give 0. The scores are rounded to f32
    after the product and after the bias, as the op's f32 arithmetic does
    (next to -1e9 padding, f32 keeps only multiples of 64 of a score)."""
    q, k, v = (t.double() for t in (q, k, v))
    h, hkv = q.shape[1], k.shape[1]
    if hkv != h:
        k = k.repeat_interleave(h // hkv, dim=1)
        v = v.repeat_interleave(h // hkv, dim=1)
    s = (scale * q @ k.transpose(-1, -2)).float().double()
    if bias is not None:
        s = (s + bias.double()).float().double()
    lq, lk = s.shape[-2:]
    visible = torch.ones(lq, lk, dtype=torch.bool, device=s.device)
    i = torch.arange(lq, device=s.device)[:, None]
    j = torch.arange(lk, device=s.device)[None, :]
    if causal == "top_left":
        visible = j <= i
    elif causal == "bottom_right":
        visible = j <= i + (lk - lq)
    visible = visible.expand(s.shape)
    if mask is not None:
        visible = visible & mask
    s = s.masked_fill(~visible, -math.inf)
    hidden = ~visible.any(-1, keepdim=True)
    m = s.amax(-1, keepdim=True).masked_fill(hidden, 0.0)
    p = torch.exp(s - m)
    l = p.sum(-1, keepdim=True)
    out = (p / l.masked_fill(hidden, 1.0)) @ v
    return out.masked_fill(hidden, 0.0)


def write(path, t):
    with open(path, "wb") as f:
        f.write(t.contiguous().cpu().view(torch.uint8).numpy().tobytes())


# Seconds one driver run may take (the largest timed shape takes about a
# second). A kernel that hangs then costs one entry, not the whole check.
DRIVER_TIMEOUT_S = 60
# Correctness runs are small: a run that takes this long has hung (an
# mbarrier wait that never completes, say).
CHECK_TIMEOUT_S = 20


class DriverTimeout(RuntimeError):
    """The driver ran past its time limit: the kernel probably hangs."""


def kernel_kind(v):
    """Variants of one kind share the kernel's synchronization: once one
    hangs, the others of its kind are skipped instead of each costing the
    time limit."""
    return (bool(v.get("wgmma")), bool(v.get("tma")), bool(v.get("ws")),
            bool(v.get("overlap", True)), bool(v.get("pingpong")))


def driver_command(art, name, b, lq, lk, work, iters):
    """The driver's command line: variant `name` at (b, lq, lk) on the
    inputs in `work`: one call whose output it writes, then (iters > 0)
    three warm-up calls and `iters` timed ones."""
    return [os.path.join(art, "attn-gpu-bench"), name, str(b), str(lq),
            str(lk), work, str(iters)]


def run_driver(art, name, b, lq, lk, work, iters=0,
               timeout=DRIVER_TIMEOUT_S, kernel_times=None, env_extra=None):
    """Runs the driver (with `env_extra` added to its environment); with
    `kernel_times` (a path), the runtime writes each kernel's GPU time
    there (ATTN_CUDA_KERNEL_TIMES)."""
    cmd = driver_command(art, name, b, lq, lk, work, iters)
    env = dict(os.environ)
    env.update(env_extra or {})
    if kernel_times:
        env["ATTN_CUDA_KERNEL_TIMES"] = kernel_times
    try:
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise DriverTimeout(f"{' '.join(cmd)} timed out after {timeout} s "
                            "(a hung kernel?)")
    if r.returncode < 0:
        raise RuntimeError(f"{' '.join(cmd)} killed by "
                           f"{signal.Signals(-r.returncode).name}:\n"
                           f"{r.stdout}{r.stderr}")
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")


def add_ramp(q, k):
    """test/lib/attn_check.py's --inputs ramp, in place: key j holds
    (j // 16, j % 16) in head dims 0 and 1, row i (16 g, g), so that
    q_i . k_j = g j plus the other dims' noise. g = G (-G for every fourth
    row, i % 4 == 3), the power of two that makes the scaled step between
    neighbouring keys at least 8 plus six standard deviations of the noise
    (at most 2^10): the last visible key dominates a row (the first for
    the falling rows), and every row where a tile starts rises. Small
    integers and powers of two, exact in every input type."""
    j = torch.arange(k.shape[-2], dtype=torch.float64)
    k[..., 0] = torch.div(j, 16, rounding_mode="floor").to(k.dtype)
    k[..., 1] = torch.remainder(j, 16).to(k.dtype)
    d = q.shape[-1]
    scale = 1.0 / math.sqrt(d)
    step = 8.0 + 6 * scale * math.sqrt(d - 2)
    g = 2.0 ** min(10, max(0, math.ceil(math.log2(step / scale))))
    rows = torch.arange(q.shape[-2])
    sign = torch.where(rows % 4 == 3, -1.0, 1.0).double()
    q[..., 0] = (16 * g * sign).to(q.dtype)
    q[..., 1] = (g * sign).to(q.dtype)


def make_inputs(v, b, lq, lk, gen, ramp=False):
    dt = DTYPES[v["dtype"]]
    h, hkv = v["heads"], v["hkv"]
    q = torch.randn(b, h, lq, v["d"], generator=gen).to(dt)
    k = torch.randn(b, hkv, lk, v["d"], generator=gen).to(dt)
    vv = torch.randn(b, hkv, lk, v["dv"], generator=gen).to(dt)
    if ramp:
        add_ramp(q, k)
    mask = bias = None
    if v["mask"]:
        mask = torch.rand(b, 1, 1, lk, generator=gen) > 0.3
        # With more than one batch, batch 0 sees no key at all (its rows
        # must write 0). Not with one: every output would be 0, and the
        # check would prove nothing.
        if b > 1:
            mask[0, 0, 0, :] = False
    if v["bias"]:
        bias = torch.randn(1, h, lq, lk, generator=gen)
        if not ramp:
            # Padding: HF's finfo.min at 20% of the keys and at every key
            # of some rows, -1e9 at every key of others; such rows give the
            # mean of the visible values (a kernel that takes the lowest
            # float for hidden writes 0; one that scales in the exponent
            # gives NaN next to -1e9). Not with ramp inputs: it would hide
            # the dominant keys they place.
            lowest = torch.finfo(torch.float32).min
            bias[torch.rand(bias.shape, generator=gen) < 0.2] = lowest
            rows = torch.randperm(lq, generator=gen)[:max(2, lq // 8)]
            bias[..., rows[0::2], :] = lowest
            bias[..., rows[1::2], :] = -1e9
    return q, k, vv, mask, bias


def stage_inputs(work, v, b, lq, lk, inputs, seed):
    """Writes fresh inputs of variant `v`'s kind for the driver; returns
    them (q, k, v, mask, bias)."""
    gen = torch.Generator().manual_seed(seed)
    q, k, vv, mask, bias = make_inputs(v, b, lq, lk, gen, inputs == "ramp")
    os.makedirs(work, exist_ok=True)
    write(os.path.join(work, "q.bin"), q)
    write(os.path.join(work, "k.bin"), k)
    write(os.path.join(work, "v.bin"), vv)
    if mask is not None:
        write(os.path.join(work, "mask.bin"), mask.to(torch.uint8))
    if bias is not None:
        write(os.path.join(work, "bias.bin"), bias.float())
    return q, k, vv, mask, bias


def check_variant(art, work, name, v, b, lq, lk, inputs, seed, dev):
    q, k, vv, mask, bias = stage_inputs(work, v, b, lq, lk, inputs, seed)
    # The CPU emulation is slow: no time limit there.
    run_driver(art, name, b, lq, lk, work,
               timeout=CHECK_TIMEOUT_S if dev == "cuda" else None)
    dt = DTYPES[v["dtype"]]
    raw = open(os.path.join(work, "out.bin"), "rb").read()
    out = torch.frombuffer(bytearray(raw), dtype=dt).reshape(
        b, v["heads"], lq, v["dv"]).double()
    ref = reference(q.to(dev), k.to(dev), vv.to(dev),
                    1.0 / math.sqrt(v["d"]), v["causal"],
                    None if mask is None else mask.to(dev),
                    None if bias is None else bias.to(dev)).cpu()
    atol, rtol = tolerance(v)
    nan = int(torch.isnan(out).sum())
    err = (out - ref).abs()
    worst = float((err / (atol + rtol * ref.abs())).max()) if nan == 0 else math.inf
    return {"nan": nan,
            "max_abs_err": float(err.max()) if nan == 0 else math.nan,
            "worst_over_tol": worst, "ok": nan == 0 and worst <= 1.0}


def sanitizer_path():
    """compute-sanitizer, on the PATH or in a CUDA toolkit's bin; None if
    there is none."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    candidates = sorted(glob.glob("/usr/local/cuda*/bin/compute-sanitizer"))
    return candidates[0] if candidates else None


def sanitizer_variants(variants):
    """One variant of each kernel kind (dtype, mma.sync / wgmma / TMA /
    warp specialized / pingpong, split-KV, GQA packing), the one that takes
    the most code paths: a mask, a bias, causal, D = 128."""
    groups = {}
    for name, v in variants.items():
        kind = (v["dtype"], kernel_kind(v), v.get("split_kv", 1) != 1,
                bool(v.get("pack_gqa")))
        groups.setdefault(kind, []).append(name)

    def paths(name):
        v = variants[name]
        return (bool(v["mask"]) + bool(v["bias"]) + bool(v["causal"]),
                v["d"], name)
    return [max(names, key=paths) for _, names in sorted(groups.items())]


def memcheck_variant(sanitizer, art, work, name, v, timeout):
    """Runs variant `name` once at a small shape with tails (a split-KV or
    packing one at a decoding shape) under compute-sanitizer's memcheck:
    out-of-bounds or misaligned accesses of global or shared memory, which
    a wrong output may not show (a predicated tail that reads past the end
    but discards what it read, say)."""
    decoding = v.get("split_kv", 1) != 1 or v.get("pack_gqa")
    b, lq, lk = (2, 3, 2049) if decoding else (1, 130, 257)
    stage_inputs(work, v, b, lq, lk, "random", 23)
    cmd = [sanitizer, "--tool", "memcheck", "--error-exitcode", "3",
           "--print-limit", "10",
           *driver_command(art, name, b, lq, lk, work, 0)]
    row = {"variant": name, "shape": [b, v["heads"], lq, lk]}
    try:
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {**row, "ok": False,
                "error": f"timed out after {timeout} s under memcheck"}
    # Its report: "========= "-prefixed lines, the summary last.
    report = [line.strip("= ") for line in r.stdout.splitlines()
              if line.startswith("=========")]
    summary = [line for line in report if line.startswith("ERROR SUMMARY")]
    errors = [line for line in report if line and not line.startswith(
        ("COMPUTE-SANITIZER", "ERROR SUMMARY"))]
    row["summary"] = summary[-1] if summary else ""
    row["first_error"] = errors[0] if errors else ""
    row["ok"] = r.returncode == 0
    if not row["ok"]:
        row["error"] = (f"exit status {r.returncode}:\n"
                        f"{(r.stdout + r.stderr)[-3000:]}")
    return row


def tiles_label(v):
    """What distinguishes a timed variant from its base kernel."""
    tiles = (f"{v['block_q'] or 'def'}x{v['block_kv'] or 'def'}"
             if v.get("block_q") or v.get("block_kv") else "default")
    if v.get("wgmma"):
        tiles += " wgmma"
    if v.get("tma"):
        tiles += " tma"
    if v.get("ws"):
        tiles += " ws" if v.get("overlap", True) else " ws serial"
    if v.get("pingpong"):
        tiles += " pingpong"
    if v.get("rescale", 8.0) < 0:
        tiles += " eager"
    if v.get("split_kv", 1) != 1:
        tiles += f" split-kv={v['split_kv']}"
    if v.get("pack_gqa"):
        tiles += " pack-gqa"
    return tiles


def kernel_ms_per_call(kernel, iters):
    """The GPU time of each of the last `iters` calls, from the times of
    every launch of the driver's 4 + iters calls (one check call, three
    warm-up calls): one launch per call, or two with split-KV (the partial
    kernel and the merge), whose times add."""
    calls = 4 + iters
    if not kernel or len(kernel) % calls:
        raise RuntimeError(f"{len(kernel)} kernel times for {calls} calls")
    per = len(kernel) // calls
    timed = kernel[-per * iters:]
    return [sum(timed[i:i + per]) for i in range(0, len(timed), per)]


def time_ours(art, name, v, b, lq, lk, work, iters, dev, hung,
              env_extra=None):
    """Times variant `name` on the inputs in `work`: the median kernel time
    per call (ours_ms) and host time per call (call_ms), with raw times;
    or ours_error. `env_extra`: more environment for the driver."""
    row = {}
    if kernel_kind(v) in hung:
        return {"ours_error": "skipped: a kernel of its kind hung"}
    try:
        kernel_path = os.path.join(work, "kernel_ms.txt")
        if os.path.exists(kernel_path):
            os.remove(kernel_path)
        # The emulation is slow: no time limit there either (a limit meant
        # for a GPU once stopped a whole rehearsal's timings).
        run_driver(art, name, b, lq, lk, work, iters,
                   timeout=DRIVER_TIMEOUT_S if dev == "cuda" else None,
                   kernel_times=kernel_path, env_extra=env_extra)
        calls = [float(x) for x in open(
            os.path.join(work, "times_ms.txt")).read().split()]
        row["call_ms"] = statistics.median(calls)
        row["call_raw_ms"] = calls
        if dev == "cpu":
            # The emulation's host runtime times no kernels.
            kernel = calls
        else:
            kernel = kernel_ms_per_call(
                [float(x) for x in open(kernel_path).read().split()], iters)
        row["ours_ms"] = statistics.median(kernel)
        row["ours_raw_ms"] = kernel
    except (RuntimeError, OSError, ValueError) as e:
        if isinstance(e, DriverTimeout):
            hung.add(kernel_kind(v))
        row["ours_error"] = str(e)[-1000:]
    return row


def time_sdpa(q, k, v, causal, backend, iters):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    fn = torch.nn.functional.scaled_dot_product_attention
    be = {"flash": SDPBackend.FLASH_ATTENTION,
          "cudnn": SDPBackend.CUDNN_ATTENTION}[backend]
    # GQA: K and V heads shared by query-head groups, as ours reads them.
    gqa = k.shape[1] != q.shape[1]
    with sdpa_kernel(be):
        for _ in range(3):
            fn(q, k, v, is_causal=causal, enable_gqa=gqa)
        times = []
        for _ in range(iters):
            s, e = torch.cuda.Event(True), torch.cuda.Event(True)
            s.record()
            fn(q, k, v, is_causal=causal, enable_gqa=gqa)
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
    return times


def stage_timing_inputs(v, b, lq, lk, causal, seed, work, dev, iters,
                        sdpa_too=True):
    """Writes random q, k, v of variant `v`'s kind for the driver to time,
    and times SDPA's flash and cuDNN backends on them (unless not
    `sdpa_too`): {backend_ms, backend_raw_ms} or {backend_error} per
    backend."""
    gen = torch.Generator().manual_seed(seed)
    q, k, vv, _, _ = make_inputs(v, b, lq, lk, gen)
    os.makedirs(work, exist_ok=True)
    for n, t in (("q", q), ("k", k), ("v", vv)):
        write(os.path.join(work, n + ".bin"), t)
    sdpa = {}
    if not sdpa_too:
        return sdpa
    qd, kd, vd = (t.to(dev) for t in (q, k, vv))
    for be in ("flash", "cudnn"):
        try:
            ts = time_sdpa(qd, kd, vd, causal, be, iters)
            sdpa[f"{be}_ms"] = statistics.median(ts)
            sdpa[f"{be}_raw_ms"] = ts
        except Exception as e:  # backend unavailable for the shape
            sdpa[f"{be}_error"] = str(e)[-300:]
    return sdpa


def render(results, iters):
    """table.md's text for what `results` holds so far."""
    runs = results["correctness"]
    failed = sum(r["ok"] is False for r in runs)
    not_run = sum(r["ok"] is None for r in runs)

    def f(row, key, fmt="{:.1f}"):
        return fmt.format(row[key]) if key in row else "-"

    def ratio(row, other):
        """Our speed over `other`'s (the same work, so the inverse ratio of
        their times)."""
        if "ours_ms" not in row or f"{other}_ms" not in row:
            return "-"
        return f"{row[f'{other}_ms'] / row['ours_ms']:.2f}"
    lines = [f"Device check {results['date']}, commit {results['commit']}, "
             f"{results['device']}, torch {torch.__version__}, median of "
             f"{iters}.",
             ""]
    if "stopped" in results:
        lines += [f"STOPPED EARLY: {results['stopped']}", ""]
    lines += [f"Correctness: {len(runs) - failed - not_run}"
              f" of {len(runs)} variant/shape runs pass"
              + (f", {not_run} not run (time budget)." if not_run else "."),
              "",
              "| B | H | L | D | causal | tiles | ours ms | call ms | "
              "ours TFLOP/s | flash TFLOP/s | cuDNN TFLOP/s | ours/flash | "
              "ours/cuDNN |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results["timing"]:
        lines.append(
            f"| {r['B']} | {r['H']} | {r['L']} | {r['D']} | {r['causal']} | "
            f"{r['tiles']} | {f(r, 'ours_ms', '{:.3f}')} | "
            f"{f(r, 'call_ms', '{:.3f}')} | {f(r, 'ours_tflops')} | "
            f"{f(r, 'flash_tflops')} | {f(r, 'cudnn_tflops')} | "
            f"{ratio(r, 'flash')} | {ratio(r, 'cudnn')} |")
    if results["decode"]:
        lines += ["",
                  "Decoding (GB/s of K and V read once; the Hkv < H "
                  "variants are bottom-right causal, timed against SDPA "
                  "only with one query):",
                  "",
                  "| B | H | Hkv | Lq | Lk | D | tiles | ours ms | call ms | "
                  "call ms, no pool | ours GB/s | flash GB/s | cuDNN GB/s | "
                  "ours/flash | ours/cuDNN |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
                  "---|"]
    for r in results["decode"]:
        lines.append(
            f"| {r['B']} | {r['H']} | {r['Hkv']} | {r['Lq']} | {r['Lk']} | "
            f"{r['D']} | "
            f"{r['tiles']} | "
            f"{f(r, 'ours_ms', '{:.4f}')} | {f(r, 'call_ms', '{:.4f}')} | "
            f"{f(r, 'call_nopool_ms', '{:.4f}')} | "
            f"{f(r, 'ours_gbps', '{:.0f}')} | {f(r, 'flash_gbps', '{:.0f}')} | "
            f"{f(r, 'cudnn_gbps', '{:.0f}')} | {ratio(r, 'flash')} | "
            f"{ratio(r, 'cudnn')} |")
    if results["memcheck"]:
        clean = sum(bool(r["ok"]) for r in results["memcheck"])
        lines += ["",
                  f"compute-sanitizer memcheck, one variant of each kernel "
                  f"kind: {clean} of {len(results['memcheck'])} clean.",
                  ""]
        for r in results["memcheck"]:
            what = r["summary"] or "clean" if r["ok"] else "; ".join(
                x for x in (r.get("summary"), r.get("first_error"),
                            r["error"].splitlines()[0]) if x)
            lines.append(f"- {r['variant']} {tuple(r['shape'])}: {what}")
    return "\n".join(lines) + "\n"


def save(out, results, iters):
    """Writes table.md and results.json for what is measured so far: after
    every run, so that a check stopped by a time limit, even by SIGKILL,
    leaves its table (each file is replaced whole, never half written)."""
    table = render(results, iters)
    for name, text in (("table.md", table),
                       ("results.json", json.dumps(results, indent=1))):
        path = os.path.join(out, name)
        with open(path + ".tmp", "w") as fh:
            fh.write(text)
        os.replace(path + ".tmp", path)
    return table


def main() -> int:
    began = time.monotonic()
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("artifacts")
    p.add_argument("out")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--quick", action="store_true",
                   help="correctness only at small shapes, one timing shape")
    p.add_argument("--bench", default="",
                   help="timing shapes 'B,L,D;...' instead of the issue's "
                        "(bf16, H from the variants, causal and not)")
    p.add_argument("--decode", default="",
                   help="decoding timing shapes 'B,Lq,Lk,D[,Hkv];...' "
                        "instead of the defaults (Hkv 16: the MHA variants; "
                        "4: the GQA ones)")
    p.add_argument("--check-budget", type=float, default=300.0,
                   help="seconds for the correctness runs on the GPU; the "
                        "runs left when it is spent are reported as not run, "
                        "so that the timings always run (the benchmarked "
                        "kernels are checked first)")
    p.add_argument("--memcheck-until", type=float, default=400.0,
                   help="last: compute-sanitizer memcheck runs of one "
                        "variant per kernel kind, started until this many "
                        "seconds after the check began (0: none)")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                   help="cpu: the emulated artifacts (ATTN_GPU_EMULATE=1 "
                        "scripts/gpu-artifacts.sh) checked without a GPU; "
                        "no timings")
    args = p.parse_args()
    if args.device == "cpu":
        # The emulated kernels, compiled at -O0, take stack frames of
        # megabytes (the warp-specialized split-KV variant's is over 7 MB):
        # the driver inherits the largest stack allowed.
        _, hard = resource.getrlimit(resource.RLIMIT_STACK)
        resource.setrlimit(resource.RLIMIT_STACK, (hard, hard))
    os.makedirs(args.out, exist_ok=True)
    art = os.path.abspath(args.artifacts)
    variants = json.load(open(os.path.join(art, "variants.json")))
    commit = open(os.path.join(art, "commit.txt")).read().strip()
    work = os.path.join(args.out, "work")
    device = (torch.cuda.get_device_name() if args.device == "cuda"
              else "CPU emulation")
    print(f"device: {device}  torch {torch.__version__}  commit {commit}",
          flush=True)

    results = {"commit": commit, "device": device,
               "date": time.strftime("%Y-%m-%d"), "correctness": [],
               "timing": [], "decode": [], "memcheck": []}
    rows, decode_rows = results["timing"], results["decode"]
    # (B, Lq, Lk, inputs). The ramp shapes' bottom-right diagonal offsets:
    # 126, one key before a block's last key for every causal kernel's
    # block-kv (32, 64 or 128: divisors of 128), where a wrong test of the
    # blocks that cross the diagonal shows one key too many; 127, on it,
    # with Lk one key past 256 (a one-key tail, the row's dominant key).
    shapes = [(2, 200, 333, "random"), (1, 129, 64, "random"),
              (1, 1, 1, "random"), (1, 130, 256, "ramp"),
              (1, 130, 257, "ramp")]
    if not args.quick and args.device == "cuda":
        shapes.append((1, 1024, 1024, "random"))
    bench = [(4, 4096, 128), (4, 4096, 64), (1, 16384, 128)]
    if args.quick:
        bench = bench[:1]
    # (B, Lq, Lk, D, Hkv) decoding shapes, bf16, not causal (the GQA
    # variants' bottom-right alignment hides nothing from one query); the
    # last, speculative decoding: 4 new tokens per sequence, bottom-right
    # causal, where packing needs the causal period.
    decode = [(1, 1, 16384, 128, 16), (8, 1, 4096, 128, 16),
              (4, 1, 8192, 64, 16), (8, 1, 4096, 128, 4),
              (8, 4, 4096, 128, 4)]
    if args.quick:
        decode = decode[:1]
    if args.device == "cpu":
        bench = []
        decode = []
    if args.bench:
        bench = [tuple(int(x) for x in item.split(","))
                 for item in args.bench.split(";")]
    if args.decode:
        decode = [tuple(int(x) for x in item.split(",")) + (16,)
                  for item in args.decode.split(";")]
        decode = [d[:5] for d in decode]
    timed = {f"bf16_d{d}" + ("_causal" if causal else "")
             for _, _, d in bench for causal in (False, True)}

    def stop(signum, frame):
        """SIGTERM: device-check.sh's time limit (`timeout`). Writes the
        report of what was measured; the exit kills a running driver."""
        results["stopped"] = (
            f"{signal.Signals(signum).name} after "
            f"{time.monotonic() - started:.0f} s (the time limit); the rows "
            "below are those measured before it")
        print(save(args.out, results, args.iters), flush=True)
        sys.exit(1)

    hung = set()  # kernel kinds with a run that timed out
    started = time.monotonic()
    signal.signal(signal.SIGTERM, stop)
    # The kernels that are timed first: they are the ones to have checked.
    order = sorted(variants, key=lambda n: variants[n].get("base", n) not in timed)
    for name in order:
        v = variants[name]
        # Split-KV kernels (their count chosen at run time) also at decoding
        # shapes, which they split; the ramp rows' last visible key is the
        # last split's.
        extra = ([(4, 1, 5000, "random"), (2, 3, 2049, "ramp")]
                 if v.get("split_kv", 1) != 1 or v.get("pack_gqa") else [])
        for i, (b, lq, lk, inputs) in enumerate(shapes + extra):
            run = {"variant": name, "shape": [b, v["heads"], lq, lk],
                   "inputs": inputs}
            if (args.device == "cuda"
                    and time.monotonic() - started > args.check_budget):
                r = {**run, "ok": None, "error": "not run: the correctness "
                     "time budget (--check-budget) was spent"}
                results["correctness"].append(r)
                save(args.out, results, args.iters)
                print("NOT RUN " + json.dumps(r), flush=True)
                continue
            if kernel_kind(v) in hung:
                r = {**run, "ok": False,
                     "error": "skipped: a kernel of its kind hung before"}
                results["correctness"].append(r)
                save(args.out, results, args.iters)
                print("FAIL " + json.dumps(r), flush=True)
                continue
            try:
                r = {**run, **check_variant(art, work, name, v, b, lq, lk,
                                            inputs, 17 + i, args.device)}
            except RuntimeError as e:
                if isinstance(e, DriverTimeout):
                    hung.add(kernel_kind(v))
                r = {**run, "ok": False, "error": str(e)[-2000:]}
            results["correctness"].append(r)
            save(args.out, results, args.iters)
            print(("PASS " if r["ok"] else "FAIL ") + json.dumps(r), flush=True)

    for b, L, d in bench:
        for causal in (False, True):
            base = f"bf16_d{d}" + ("_causal" if causal else "")
            # The default tiles first, then the tile alternatives.
            names = sorted((n for n, v in variants.items()
                            if v.get("base", n) == base),
                           key=lambda n: (n != base, n))
            if not names:
                rows.append({"B": b, "H": "-", "L": L, "D": d,
                             "causal": causal, "tiles": "-",
                             "ours_error": f"variant {base} not built"})
                save(args.out, results, args.iters)
                print(json.dumps(rows[-1]), flush=True)
                continue
            v = variants[names[0]]
            h = v["heads"]
            flops = 4.0 * b * h * L * L * d * (0.5 if causal else 1.0)
            sdpa = stage_timing_inputs(v, b, L, L, causal, 5, work,
                                       args.device, args.iters)
            for name in names:
                tv = variants[name]
                row = {"B": b, "H": h, "L": L, "D": d, "causal": causal,
                       "variant": name, "tiles": tiles_label(tv)}
                if kernel_kind(tv) in hung:
                    row["ours_error"] = "skipped: a kernel of its kind hung"
                    rows.append(row)
                    save(args.out, results, args.iters)
                    print(json.dumps(row), flush=True)
                    continue
                row.update(time_ours(art, name, tv, b, L, L, work, args.iters,
                                     args.device, hung))
                row.update(sdpa)
                for key in ("ours", "flash", "cudnn"):
                    if f"{key}_ms" in row:
                        row[f"{key}_tflops"] = (
                            flops / (row[f"{key}_ms"] * 1e-3) / 1e12)
                rows.append(row)
                save(args.out, results, args.iters)
                print(json.dumps({k: x for k, x in row.items()
                                  if not k.endswith("raw_ms")}), flush=True)
    # Decoding: one query row per sequence, so few blocks that the
    # single kernel leaves most of the GPU idle; split-KV spreads the keys.
    # Memory-bound: GB/s of K and V read once.
    for b, lq, lk, d, hkv in decode:
        base = f"bf16_d{d}" + (f"_hkv{hkv}_causalbr" if hkv != 16 else "")
        names = sorted((n for n, v in variants.items()
                        if v.get("base", n) == base
                        and (n == base or v.get("split_kv", 1) != 1
                             or v.get("pack_gqa"))),
                       key=lambda n: (n != base, n))
        if not names:
            continue
        v = variants[names[0]]
        h = v["heads"]
        gbytes = 2.0 * b * v["hkv"] * lk * d * 2 / 1e9
        # SDPA's is_causal is top-left aligned: the bottom-right variants
        # with several queries are timed against nothing.
        sdpa = stage_timing_inputs(v, b, lq, lk, False, 6, work, args.device,
                                   args.iters,
                                   sdpa_too=lq == 1 or not v.get("causal"))
        for name in names:
            tv = variants[name]
            row = {"B": b, "H": h, "Hkv": tv["hkv"], "Lq": lq, "Lk": lk,
                   "D": d,
                   "variant": name, "tiles": tiles_label(tv)}
            row.update(time_ours(art, name, tv, b, lq, lk, work, args.iters,
                                 args.device, hung))
            # Split-KV allocates its partials per call: the call's host
            # time again with cuMemAlloc/cuMemFree instead of the runtime's
            # stream-ordered pool (docs/runtime.md) says what the pool saves.
            if tv.get("split_kv", 1) != 1 and "call_ms" in row:
                unpooled = time_ours(art, name, tv, b, lq, lk, work,
                                     args.iters, args.device, hung,
                                     {"ATTN_CUDA_MEMORY_POOL": "0"})
                if "call_ms" in unpooled:
                    row["call_nopool_ms"] = unpooled["call_ms"]
                    row["call_nopool_raw_ms"] = unpooled["call_raw_ms"]
            row.update(sdpa)
            for key in ("ours", "flash", "cudnn"):
                if f"{key}_ms" in row:
                    row[f"{key}_gbps"] = gbytes / (row[f"{key}_ms"] * 1e-3)
            decode_rows.append(row)
            save(args.out, results, args.iters)
            print(json.dumps({k: x for k, x in row.items()
                              if not k.endswith("raw_ms")}), flush=True)
    # Memory errors that leave the output right: last, in the time left,
    # so that they never take the timings' share.
    sanitizer = sanitizer_path() if args.device == "cuda" else None
    if args.device == "cuda" and args.memcheck_until > 0:
        print(f"compute-sanitizer: {sanitizer or 'not found'}", flush=True)
    for name in sanitizer_variants(variants) if sanitizer else []:
        left = args.memcheck_until - (time.monotonic() - began)
        if left <= 0:
            break
        if kernel_kind(variants[name]) in hung:
            continue
        r = memcheck_variant(sanitizer, art, work, name, variants[name],
                             min(60.0, max(left, 10.0)))
        results["memcheck"].append(r)
        save(args.out, results, args.iters)
        print(("MEMCHECK PASS " if r["ok"] else "MEMCHECK FAIL ")
              + json.dumps(r), flush=True)
    table = save(args.out, results, args.iters)
    print(table)
    failed = [r for r in results["correctness"] + results["memcheck"]
              if not r["ok"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
