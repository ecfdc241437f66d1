#!/usr/bin/python3
"""Prints a module of N functions for the multithreading test: N/2 with an
attn.attention each (random shapes, masks, biases, causal alignments,
f32/f16/bf16, with q scaled by a splat constant that canonicalize folds)
and N/2 unfused linalg graphs that --attn-raise raises. Deterministic.

    many_functions.py N
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "lib"))
import attn_random  # noqa: E402
import attn_reference as ref  # noqa: E402


def attention_func(n: int, p: dict) -> str:
    dt = p["dtype"]
    batch = p["batch"]
    q = ref.tensor_type(batch + [p["hq"], p["lq"], p["dqk"]], dt)
    k = ref.tensor_type(batch + [p["hkv"], p["lk"], p["dqk"]], dt)
    v = ref.tensor_type(batch + [p["hkv"], p["lk"], p["dv"]], dt)
    o = ref.tensor_type(batch + [p["hq"], p["lq"], p["dv"]], dt)
    args = [f"%q: {q}", f"%k: {k}", f"%v: {v}"]
    extra = ""
    if p["mask"]:
        m = p["mask"]
        mt = ref.tensor_type(attn_random.bcast_shape(p, m["full"]), m["dtype"])
        args.append(f"%m: {mt}")
        extra += f" mask(%m : {mt})"
    if p["bias"]:
        b = p["bias"]
        bt = ref.tensor_type(attn_random.bcast_shape(p, b["full"]), b["dtype"])
        args.append(f"%b: {bt}")
        extra += f" bias(%b : {bt})"
    causal = f" causal = {p['causal']}" if p["causal"] else ""
    return (f"func.func @attention_{n}({', '.join(args)}) -> {o} {{\n"
            f"  %c = arith.constant dense<0.5> : {q}\n"
            f"  %qs = arith.mulf %q, %c : {q}\n"
            f"  %init = tensor.empty() : {o}\n"
            f"  %r = attn.attention ins(%qs, %k, %v : {q}, {k}, {v}){extra}"
            f" outs(%init : {o}) scale = 0.25{causal} -> {o}\n"
            f"  return %r : {o}\n}}\n")


def main() -> int:
    n = int(sys.argv[1])
    rng = np.random.default_rng(2024)
    out = []
    for i in range(n):
        if i % 2 == 0:
            out.append(attention_func(i, attn_random.random_problem(rng)))
        else:
            text, _, _ = attn_random.emit_graph(attn_random.random_graph(rng),
                                                name=f"graph_{i}",
                                                with_main=False)
            out.append(text)
    sys.stdout.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
