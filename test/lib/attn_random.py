#!/usr/bin/python3
"""Differential testing: random attention problems and random unfused
graphs, compiled and run on the CPU, against the float64 numpy reference.

Two kinds of cases, both from one seeded generator:

* problems: one ``attn.attention`` with random batch dims, heads (grouped
  query ratios), Lq/Lk (1, primes, around the tile sizes), Dqk != Dv,
  f32/f16/bf16, bool or float masks and biases with random broadcasts,
  causal alignments and fully masked rows; random inputs, or (for 40% of
  the problems) ramp inputs, whose rows each have one dominant key at an
  edge of their window. Each is checked by
  ``attn_check.py`` (same program generator, same reference, same
  tolerances) under the fused pipeline with random tile sizes and under the
  unfused one (``fused=false``).
* graphs: an unfused attention in linalg on tensors, in the forms
  ``--attn-raise`` accepts (generic or batch_matmul contractions, scalings
  before or after the contraction, additive bias, boolean mask, causal
  ``linalg.index`` compares, decomposed or named softmax), and for 35%
  of the generic ones a mask of index arithmetic (mask_grammar.py: random
  trees of arith ops over the query and key indices, half of them a
  disguised diagonal), evaluated for the reference under MLIR's semantics. Each must raise
  to exactly one ``attn.attention``; the raised program is then lowered,
  run and compared with the reference computed from the graph's own inputs.

* gpu problems (``--gpu N``): problems of the same generator with lengths
  around the GPU kernels' blocks and the head dims they take, bottom-right
  causal diagonals near a block's end, more of them with no mask or bias
  (the kernels' own causal and tail path), each for a
  random kernel of ``--attn-to-gpu`` (mma.sync, wgmma, wgmma with TMA,
  warp specialized with or without the intra-warpgroup overlap and
  pingpong), random tiles and rescaling thresholds, run by the kernel's CPU
  emulation (``--attn-gpu-emulation-pipeline``): the per-block program with
  the tensor-core fragment layouts, barriers and TMA boxes modelled.

A failing case is shrunk (dims toward 1, fewer batch dims and heads, no
mask/bias/causal, f32) while it keeps failing, and the minimal reproducer
is printed: the problem's ``attn_check.py`` command line or the graph's MLIR
with the commands that fail on it.

    /usr/bin/python3 test/lib/attn_random.py --attn-opt build/bin/attn-opt \\
        --seed 1 --problems 20 --graphs 10 --gpu 5

Exit status: 0 when every case agrees, 1 when one does not (after the
reproducers are printed), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import shlex
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_check  # noqa: E402
import gpu_variants  # noqa: E402
import attn_reference as ref  # noqa: E402
import mask_grammar  # noqa: E402
import tosa_graphs  # noqa: E402
from gen_raise_tests import (amap, contract, dense, elementwise,  # noqa: E402
                             fill, softmax_generic, softmax_named, transpose,
                             ty)

# Lengths: 1, primes, powers of two and their neighbours (the default tiles
# are 64 query rows by 32 keys). Query tiles that are not powers of two run
# on vectors of the next power of two.
LENGTHS = [1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 32, 33, 37, 64]
HEAD_DIMS = [1, 2, 3, 4, 5, 8, 16, 24, 32, 40, 64]
TILES_Q = [1, 2, 3, 4, 8, 16, 24, 32, 64]
TILES_KV = [1, 2, 5, 8, 16, 32, 64]
# Tiles of a static number of rows up to row-major-rows use the row-major
# kernel (0: never; 64: every static tile of the q-tiles above).
ROW_MAJOR_ROWS = [0, 4, 16, 64]
# Run-time row counts with a row-major kernel of their own (tiles whose rows
# are known only at run time); None: the default (1, 2, 4, 8); 100: none.
DYNAMIC_ROW_CASES = [None, None, "1", "3", "1,2,3,4,5,6,7,8", "5,16", "100"]
# Cap on B*Hq*max(Lq, Lk)*max(Dqk, Dv) (and on the score matrix), so that
# one case compiles and runs in about a second.
MAX_ELEMS = 40_000


@dataclass
class Tools:
    attn_opt: str
    mlir_runner: str
    shared_libs: str


@dataclass
class Outcome:
    ok: bool
    kind: str  # "pass", "mismatch", "tool", "not-raised"
    text: str
    # The case that ran, where the check ran another than it was given (a
    # GPU problem whose tiles do not fit runs with the default ones).
    ran: Optional[dict] = None


# ---------------------------------------------------------------------------
# attn.attention problems
# ---------------------------------------------------------------------------


def score_shape(p: dict) -> list[int]:
    return p["batch"] + [p["hq"], p["lq"], p["lk"]]


def bcast_shape(p: dict, full: list[bool]) -> list[int]:
    """The shape of a mask/bias that is full along dims where full[d]."""
    return [s if f else 1 for s, f in zip(score_shape(p), full)]


def random_problem(rng: np.random.Generator) -> dict:
    while True:
        p: dict = {}
        p["dtype"] = str(rng.choice(["f32", "f32", "f16", "bf16"]))
        p["batch"] = [int(rng.choice([1, 2, 3]))
                      for _ in range(int(rng.choice([0, 0, 1, 1, 2])))]
        p["hkv"] = int(rng.choice([1, 1, 2, 3]))
        p["hq"] = p["hkv"] * int(rng.choice([1, 1, 2, 3, 4]))
        p["lq"] = int(rng.choice(LENGTHS))
        p["lk"] = int(rng.choice(LENGTHS))
        p["dqk"] = int(rng.choice(HEAD_DIMS))
        p["dv"] = (p["dqk"] if rng.random() < 0.3
                   else int(rng.choice(HEAD_DIMS)))
        rank = len(score_shape(p))
        p["mask"] = None
        r = rng.random()
        if r < 0.35:
            p["mask"] = {"kind": "bool", "dtype": "i1",
                         "full": [bool(x) for x in rng.random(rank) < 0.6]}
        elif r < 0.6:
            p["mask"] = {"kind": "float",
                         "dtype": str(rng.choice(ref.FLOAT_DTYPES)),
                         "full": [bool(x) for x in rng.random(rank) < 0.6]}
        p["bias"] = None
        if rng.random() < 0.35:
            p["bias"] = {"dtype": str(rng.choice(ref.FLOAT_DTYPES)),
                         "full": [bool(x) for x in rng.random(rank) < 0.6]}
        p["causal"] = [None, None, "top_left", "bottom_right"][
            int(rng.integers(4))]
        p["fully_masked_rows"] = 0
        m = p["mask"]
        if (m and m["kind"] == "bool" and m["full"][-2] and p["lq"] > 1
                and rng.random() < 0.4):
            p["fully_masked_rows"] = int(rng.integers(1, min(3, p["lq"]) + 1))
        p["scale"] = (None if rng.random() < 0.7
                      else float(rng.choice([0.01, 0.5, 1.0, 2.0])))
        p["magnitude"] = (1.0 if p["dtype"] != "f32" or rng.random() < 0.8
                          else 3.0)
        p["inputs"] = random_inputs(rng)
        p["seed"] = int(rng.integers(1 << 30))
        # Lengths known only at run time (attn_check --dynamic-lq/-lk), as
        # in compilers that build one function for every sequence length.
        # Drawn from the problem's own seed: the stream of the other draws
        # (and the kernels the fixed-seed tests cover) stays as it was.
        own = np.random.default_rng(p["seed"]).random(6)
        p["dynamic_lq"], p["dynamic_lk"] = (bool(own[0] < DYNAMIC_SHARE),
                                            bool(own[1] < DYNAMIC_SHARE))
        # The op on memrefs of dynamic strides (attn_check --on-memrefs),
        # as a compiler that bufferized first would give it.
        p["on_memrefs"] = bool(own[2] < MEMREF_SHARE)
        # Batch and head dims known only at run time (attn_check
        # --dynamic-heads), as a frontend with dynamic shapes gives them:
        # Hq / Hkv is then a run-time value. Not with memrefs (attn_check
        # puts those in a function of their own).
        p["dynamic_heads"] = bool(
            not p["on_memrefs"]
            and np.random.default_rng(p["seed"]).random(11)[10]
            < DYNAMIC_HEADS_SHARE)
        # Bias rows at the lowest float, HF's finfo.min padding (attn_check
        # --lowest-bias-rows): visible keys that naive base-2 kernels hide.
        p["lowest_bias_rows"] = 0
        if bias_padding_allowed(p) and own[3] < LOWEST_BIAS_SHARE:
            p["lowest_bias_rows"] = 1 + int(own[4] * min(3, p["lq"]))
        # Half of them -1e9 padding (where allowed, see padding_fill_valid).
        p["bias_fill"] = (-1e9 if own[5] < 0.5 and padding_fill_valid(
            p, -1e9) else None)
        draw_causal_shift(p)
        if problem_size(p) <= MAX_ELEMS and problem_valid(p):
            return p


#: The share of causal problems with a causal_offset or causal_period.
CAUSAL_SHIFT_SHARE = 0.3


def draw_causal_shift(p: dict) -> None:
    """The op's causal_period and causal_offset (attn_check --causal-period,
    --causal-offset) for CAUSAL_SHIFT_SHARE of the causal problems, from the
    problem's own seed (see random_problem) and its lengths as they are: a
    period of up to Lq queries with an offset of up to two periods, or
    (top_left only) an offset that moves the diagonal by up to Lk keys."""
    p["causal_period"] = p["causal_offset"] = None
    own = np.random.default_rng(p["seed"]).random(10)[6:]
    if not p["causal"] or own[0] >= CAUSAL_SHIFT_SHARE:
        return
    if own[1] < 0.5 or p["causal"] != "top_left":
        p["causal_period"] = 1 + int(own[2] * p["lq"])
        p["causal_offset"] = int(own[3] * 2 * p["causal_period"])
    else:
        p["causal_offset"] = int(own[3] * (p["lk"] + 1))


#: The share of problems with Lq (and, independently, Lk) dynamic.
DYNAMIC_SHARE = 0.15
#: The share of CPU problems with the batch and head dims dynamic.
DYNAMIC_HEADS_SHARE = 0.15
#: The share of CPU problems whose op is on memrefs.
MEMREF_SHARE = 0.15
#: The share of problems with a bias of full Lq dim that have rows of
#: lowest floats. Not f16 biases: their lowest (-65504) added to a score in
#: f32, as the op does, leaves the score 8 fractional bits, past the f32
#: and f16 tolerances of the float64 reference.
LOWEST_BIAS_SHARE = 0.4
LOWEST_BIAS_DTYPES = ("f32", "bf16")

#: The share of problems with attn_check's ramp inputs, whose rows each
#: have one dominant key at an edge of their window (the last or the first
#: visible key): a single key wrongly shown or hidden there, say one past a
#: causal diagonal or a tile's tail, moves the row's output by O(1) instead
#: of by one weight among dozens, which f16's and bf16's tolerances miss.
RAMP_SHARE = 0.4


def random_inputs(rng: np.random.Generator) -> str:
    # Drawn in every mode, so that --self-check draws the same problems; the
    # self-check's wrong scale barely moves a ramp's dominant key, so it keeps
    # random inputs.
    ramp = rng.random() < RAMP_SHARE
    return "ramp" if ramp and SELF_CHECK_SCALE == 1.0 else "random"


def problem_size(p: dict) -> int:
    batch = int(np.prod(p["batch"])) if p["batch"] else 1
    return batch * p["hq"] * max(p["lq"], p["lk"]) * max(
        p["dqk"], p["dv"], p["lq"], p["lk"])


def shape_text(shape: list[int]) -> str:
    return "x".join(map(str, shape))


#: Harness self-check (--self-check): the reference uses a wrong scale, so
#: that every case with a visible choice between keys must fail and shrink.
SELF_CHECK_SCALE = 1.0


def problem_args(p: dict) -> list[str]:
    """The attn_check.py options that describe the problem."""
    args = [] if SELF_CHECK_SCALE == 1.0 else [
        "--reference-scale-multiplier", repr(SELF_CHECK_SCALE)]
    args += ["--dtype", p["dtype"], f"--batch={shape_text(p['batch'])}",
            "--hq", str(p["hq"]), "--hkv", str(p["hkv"]),
            "--lq", str(p["lq"]), "--lk", str(p["lk"]),
            "--dqk", str(p["dqk"]), "--dv", str(p["dv"]),
            "--seed", str(p["seed"]), "--magnitude", str(p["magnitude"])]
    if p.get("inputs", "random") != "random":
        args += ["--inputs", p["inputs"]]
    if p["mask"]:
        m = p["mask"]
        spec = f"{m['kind']}:{shape_text(bcast_shape(p, m['full']))}"
        if m["kind"] == "float":
            spec += f":{m['dtype']}"
        args += ["--mask", spec]
    if p["bias"]:
        b = p["bias"]
        args += ["--bias",
                 f"{shape_text(bcast_shape(p, b['full']))}:{b['dtype']}"]
    if p["causal"]:
        args += ["--causal", p["causal"]]
    if p.get("causal_period") is not None:
        args += ["--causal-period", str(p["causal_period"])]
    if p.get("causal_offset") is not None:
        args += ["--causal-offset", str(p["causal_offset"])]
    if p["fully_masked_rows"]:
        args += ["--fully-masked-rows", str(p["fully_masked_rows"])]
    if p.get("lowest_bias_rows"):
        args += ["--lowest-bias-rows", str(p["lowest_bias_rows"])]
        if p.get("bias_fill") is not None:
            args += [f"--bias-fill={p['bias_fill']!r}",
                     "--reference-scores", "f32"]
    if p["scale"] is not None:
        args += ["--scale", repr(p["scale"])]
    if p.get("dynamic_lq"):
        args.append("--dynamic-lq")
    if p.get("dynamic_lk"):
        args.append("--dynamic-lk")
    if p.get("on_memrefs"):
        args.append("--on-memrefs")
    if p.get("dynamic_heads"):
        args.append("--dynamic-heads")
    return args


def check_problem(p: dict, tools: Tools, pipeline: str,
                  args: Optional[list[str]] = None) -> Outcome:
    argv = ["--attn-opt", tools.attn_opt, "--mlir-runner", tools.mlir_runner,
            "--shared-libs", tools.shared_libs, f"--pipeline={pipeline}"]
    argv += problem_args(p) if args is None else args
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = attn_check.main(argv)
    text = out.getvalue() + err.getvalue()
    kind = {0: "pass", 1: "mismatch"}.get(status, "tool")
    return Outcome(status == 0, kind, text)


def problem_repro(p: dict, pipeline: str) -> str:
    cmd = ["/usr/bin/python3", "test/lib/attn_check.py",
           "--attn-opt", "build/bin/attn-opt",
           "--mlir-runner", "/usr/lib/llvm-22/bin/mlir-runner"]
    # The pipeline's own quotes are single quotes (pipelines_for).
    return (f"{shlex.join(cmd)} --pipeline=\"{pipeline}\" "
            f"{shlex.join(problem_args(p))}")


def problem_candidates(p: dict) -> list[dict]:
    """Simpler variants of ``p``, the most drastic first."""
    out = []

    def variant(**changes) -> None:
        q = copy.deepcopy(p)
        q.update(changes)
        if q != p:
            out.append(q)

    variant(bias=None, lowest_bias_rows=0)
    variant(mask=None, fully_masked_rows=0)
    variant(causal=None, causal_period=None, causal_offset=None)
    variant(causal_period=None, causal_offset=None)
    if p.get("causal_period") is not None:
        variant(causal_offset=None)
    variant(fully_masked_rows=0)
    variant(lowest_bias_rows=0)
    variant(bias_fill=None)
    variant(scale=None)
    variant(on_memrefs=False)
    variant(dynamic_heads=False)
    variant(magnitude=1.0)
    variant(dtype="f32")
    if p["batch"]:
        q = copy.deepcopy(p)
        q["batch"] = p["batch"][1:]
        for key in ("mask", "bias"):
            if q[key]:
                q[key]["full"] = q[key]["full"][1:]
        out.append(q)
        for i, b in enumerate(p["batch"]):
            if b > 1:
                q = copy.deepcopy(p)
                q["batch"][i] = 1
                out.append(q)
    if p["hq"] > p["hkv"]:
        variant(hq=p["hkv"])
    if p["hkv"] > 1:
        variant(hkv=1, hq=p["hq"] // p["hkv"])
    for key in ("lq", "lk", "dqk", "dv"):
        for smaller in (1, p[key] // 2, p[key] - 1):
            if 1 <= smaller < p[key]:
                variant(**{key: smaller})
    for key in ("mask", "bias"):
        if p[key]:
            for d, f in enumerate(p[key]["full"]):
                if f:
                    q = copy.deepcopy(p)
                    q[key]["full"][d] = False
                    out.append(q)
    # fully_masked_rows needs a bool mask with a full Lq dim and <= Lq rows,
    # lowest_bias_rows such a bias.
    return [q for q in out if problem_valid(q)]


def bias_padding_allowed(p: dict) -> bool:
    """Whether the problem's bias can take padding rows: it has a full Lq
    dim and a dtype of LOWEST_BIAS_DTYPES."""
    b = p["bias"]
    return bool(b and b["full"][-2] and b["dtype"] in LOWEST_BIAS_DTYPES)


def padding_fill_valid(p: dict, fill: float) -> bool:
    """Whether a padding of ``fill`` (not the lowest float) suits the
    problem. Next to -1e9, f32 keeps only multiples of 64 of a score in
    base e, as the op (and the reference, whose scores are then rounded to
    f32) computes, and multiples of 128 in base 2, as the kernels do.
    -1e9 (and its bf16 rounding) times log2(e) lies 18-19 above a multiple
    of 128, so both round every key of a padded row to the padding itself
    only if its scaled score is within +-31 (base e). So: random inputs of
    magnitude 1, whose scaled scores have a standard deviation of
    scale * sqrt(Dqk), here at most 4 (31 is 7.75 of them)."""
    scale = p["scale"] if p["scale"] is not None else 1 / np.sqrt(p["dqk"])
    return (fill == -1e9 and p.get("inputs", "random") == "random"
            and p["magnitude"] == 1.0 and abs(scale) * np.sqrt(p["dqk"]) <= 4)


def problem_valid(p: dict) -> bool:
    try:
        ref.check_causal(p["causal"], p.get("causal_offset") or 0,
                         p.get("causal_period"))
    except ValueError:
        return False
    n = p["fully_masked_rows"]
    if n:
        m = p["mask"]
        if not (m and m["kind"] == "bool" and m["full"][-2] and n <= p["lq"]):
            return False
    n = p.get("lowest_bias_rows", 0)
    if n:
        if not (bias_padding_allowed(p) and n <= p["lq"]):
            return False
        fill = p.get("bias_fill")
        if fill is not None and not padding_fill_valid(p, fill):
            return False
    if p.get("inputs") == "ramp" and p["dqk"] < 2:
        return False
    return p["hq"] % p["hkv"] == 0


# ---------------------------------------------------------------------------
# Unfused graphs for --attn-raise
# ---------------------------------------------------------------------------


def random_graph(rng: np.random.Generator) -> dict:
    while True:
        g: dict = {}
        g["form"] = str(rng.choice(["generic4", "generic4", "bmm3"]))
        g["b"] = int(rng.choice([1, 2]))
        g["h"] = int(rng.choice([1, 2, 3]))
        g["lq"] = int(rng.choice(LENGTHS))
        g["lk"] = int(rng.choice(LENGTHS))
        g["d"] = int(rng.choice(HEAD_DIMS))
        g["dv"] = int(rng.choice(HEAD_DIMS))
        g["scale_form"] = str(rng.choice(
            ["generic", "divf", "prescale_q", "prescale_qk"]))
        g["scale"] = float(np.float32(1.0 / np.sqrt(g["d"])))
        g["softmax"] = str(rng.choice(["generic", "named", "recip"]))
        generic = g["form"] == "generic4"
        # Masks, biases and causal compares are elementwise generics on the
        # 4-D scores.
        g["bias"] = generic and rng.random() < 0.3
        g["mask"] = generic and rng.random() < 0.3
        g["causal"] = (str(rng.choice(["top_left", "bottom_right"]))
                       if generic and rng.random() < 0.4 else None)
        g["seed"] = int(rng.integers(1 << 30))
        # A mask of index arithmetic for 35% of the generic graphs, drawn
        # from the graph's own seed: the other draws stay as they were.
        own = np.random.default_rng([g["seed"], 7])
        g["mask_expr"] = (mask_grammar.random_mask(own)
                          if generic and own.random() < 0.35 else None)
        size = g["b"] * g["h"] * max(g["lq"], g["lk"]) * max(
            g["d"], g["dv"], g["lq"], g["lk"])
        if size <= MAX_ELEMS:
            return g


def graph_candidates(g: dict) -> list[dict]:
    out = []

    def variant(**changes) -> None:
        q = dict(g)
        q.update(changes)
        if q != g:
            out.append(q)

    variant(bias=False)
    variant(mask=False)
    variant(causal=None)
    variant(mask_expr=None)
    variant(softmax="generic")
    variant(scale_form="generic")
    variant(form="generic4")
    for key in ("b", "h", "lq", "lk", "d", "dv"):
        for smaller in (1, g[key] // 2, g[key] - 1):
            if 1 <= smaller < g[key]:
                variant(**{key: smaller})
    for q in out:
        q["scale"] = float(np.float32(1.0 / np.sqrt(q["d"])))
    return out


def emit_graph(g: dict, name: str = "graph", with_main: bool = True
               ) -> tuple[str, np.ndarray, np.ndarray]:
    """Returns (program, expected output, rows with no visible key): @graph is the unfused attention,
    @main runs it on embedded random inputs and prints the result. Without
    main, only the function (named ``name``)."""
    rng = np.random.default_rng(g["seed"])
    b, h, lq, lk, d, dv = g["b"], g["h"], g["lq"], g["lk"], g["d"], g["dv"]
    bh = b * h

    def randn(shape):
        return rng.standard_normal(shape).astype(np.float32)

    four = g["form"] == "generic4"
    lead = [b, h] if four else [bh]
    q, k, v = randn(lead + [lq, d]), randn(lead + [lk, d]), randn(lead + [lk, dv])
    args = [("q", q, "f32"), ("k", k, "f32"), ("v", v, "f32")]
    bias = mask = None
    if g["bias"]:
        bias = randn([lq, lk])
        args.append(("bias", bias, "f32"))
    if g["mask"]:
        mask = rng.random([lq, lk]) < 0.8
        args.append(("mask", mask, "i1"))

    scale = g["scale"]
    body = ""
    qs, ks = "q", "k"
    if g["scale_form"] == "prescale_q":
        body += (f"  %qs_c = arith.constant dense<{scale!r}> : "
                 f"{ty(q.shape)}\n  %qs = arith.mulf %q, %qs_c : {ty(q.shape)}\n")
        qs = "qs"
    elif g["scale_form"] == "prescale_qk":
        root = float(np.float32(np.sqrt(scale)))
        scale = float(np.float32(root) * np.float32(root))
        body += (f"  %qs_c = arith.constant dense<{root!r}> : {ty(q.shape)}\n"
                 f"  %qs = arith.mulf %q, %qs_c : {ty(q.shape)}\n"
                 f"  %ks_c = arith.constant dense<{root!r}> : {ty(k.shape)}\n"
                 f"  %ks = arith.mulf %k, %ks_c : {ty(k.shape)}\n")
        qs, ks = "qs", "ks"

    sshape = lead + [lq, lk]
    if four:
        body += contract("s", qs, ty(q.shape), ks, ty(k.shape), sshape,
                         amap(5, ["a", "b", "c", "e"]),
                         amap(5, ["a", "b", "d", "e"]),
                         amap(5, ["a", "b", "c", "d"]), 5)
    else:
        body += transpose("kt", ks, list(k.shape), [0, 2, 1])
        body += fill("s_acc", sshape, "0.0")
        body += (f"  %s = linalg.batch_matmul ins(%{qs}, %kt : {ty(q.shape)}, "
                 f"{ty([bh, d, lk])}) outs(%s_acc : {ty(sshape)}) -> "
                 f"{ty(sshape)}\n")
    x = "s"
    if g["scale_form"] == "generic":
        body += elementwise("ss", [("s", ty(sshape), None)], sshape,
                            f"    %c = arith.constant {scale!r} : f32\n"
                            "    %r = arith.mulf %in0, %c : f32\n"
                            "    linalg.yield %r : f32\n")
        x = "ss"
    elif g["scale_form"] == "divf":
        inv = float(np.float32(1.0) / np.float32(scale))
        scale = float(np.float32(1.0) / np.float32(inv))
        body += (f"  %ss_c = arith.constant dense<{inv!r}> : {ty(sshape)}\n"
                 f"  %ss = arith.divf %s, %ss_c : {ty(sshape)}\n")
        x = "ss"
    mask_expr = g.get("mask_expr")
    if four and (bias is not None or mask is not None or g["causal"]
                 or mask_expr):
        ins = [(x, ty(sshape), None)]
        lines = ["    %ninf = arith.constant 0xFF800000 : f32\n"]
        cur = "%in0"
        if bias is not None:
            ins.append(("bias", ty([lq, lk]), amap(4, ["c", "d"])))
            lines.append(f"    %xb = arith.addf {cur}, %in{len(ins) - 1} : f32\n")
            cur = "%xb"
        if mask is not None:
            ins.append(("mask", ty([lq, lk], "i1"), amap(4, ["c", "d"])))
            lines.append(f"    %xm = arith.select %in{len(ins) - 1}, {cur}, "
                         "%ninf : f32\n")
            cur = "%xm"
        if g["causal"]:
            lines.append("    %i = linalg.index 2 : index\n"
                         "    %j = linalg.index 3 : index\n")
            if g["causal"] == "top_left":
                lines.append("    %vis = arith.cmpi ule, %j, %i : index\n")
            else:
                # j <= i + (Lk - Lq), written as j + Lq <= i + Lk.
                lines.append(f"    %lq = arith.constant {lq} : index\n"
                             f"    %lk = arith.constant {lk} : index\n"
                             "    %jl = arith.addi %j, %lq : index\n"
                             "    %ik = arith.addi %i, %lk : index\n"
                             "    %vis = arith.cmpi ule, %jl, %ik : index\n")
            lines.append(f"    %xc = arith.select %vis, {cur}, %ninf : f32\n")
            cur = "%xc"
        if mask_expr:
            expr_lines: list = []
            vis = mask_grammar.emit(mask_expr, expr_lines, {})
            lines += expr_lines
            lines.append(f"    %xg = arith.select {vis}, {cur}, %ninf : f32\n")
            cur = "%xg"
        lines.append(f"    linalg.yield {cur} : f32\n")
        body += elementwise("x", ins, sshape, "".join(lines))
        x = "x"
    if g["softmax"] == "named":
        body += softmax_named("p", x, sshape)
    else:
        body += softmax_generic("p", x, sshape, max_sub=True,
                                recip=g["softmax"] == "recip")
    oshape = lead + [lq, dv]
    if four:
        body += contract("o", "p", ty(sshape), "v", ty(v.shape), oshape,
                         amap(5, ["a", "b", "c", "e"]),
                         amap(5, ["a", "b", "e", "d"]),
                         amap(5, ["a", "b", "c", "d"]), 5)
    else:
        body += fill("o_acc", oshape, "0.0")
        body += (f"  %o = linalg.batch_matmul ins(%p, %v : {ty(sshape)}, "
                 f"{ty(v.shape)}) outs(%o_acc : {ty(oshape)}) -> "
                 f"{ty(oshape)}\n")
    body += f"  return %o : {ty(oshape)}\n"

    sig = ", ".join(f"%{n}: {ty(a.shape, e)}" for n, a, e in args)
    func = f"func.func @{name}({sig}) -> {ty(oshape)} {{\n{body}}}\n"
    if not with_main:
        return func, None, None
    text = ["func.func private @printMemrefF32(tensor<*xf32>)", "", func,
            "func.func @main() {"]
    for n, a, e in args:
        payload = (dense(a, "i1") if e == "i1"
                   else f"{ref.hex_literal(a, 'f32')} : {ty(a.shape)}")
        text.append(f"  %{n} = arith.constant {payload}")
    types = ", ".join(ty(a.shape, e) for _, a, e in args)
    names = ", ".join(f"%{n}" for n, _, _ in args)
    text += [f"  %r = call @{name}({names}) : ({types}) -> {ty(oshape)}",
             f"  %u = tensor.cast %r : {ty(oshape)} to tensor<*xf32>",
             "  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()",
             "  return", "}", ""]

    # The reference: 4-D [B, H, L, D] (one batch dim for bmm3).
    visible = mask
    if four and mask_expr:
        table = mask_grammar.visible(mask_expr, lq, lk)
        visible = table if mask is None else mask & table
    kw = dict(scale=scale * SELF_CHECK_SCALE, mask=visible,
              bias=None if bias is None else bias.astype(np.float64),
              causal=g["causal"])
    q64, k64, v64 = (a.astype(np.float64) for a in (q, k, v))
    expected = ref.attention(q64, k64, v64, **kw)
    hidden = ref.hidden_rows(ref.scores(q64, k64, **kw))
    return "\n".join(text), expected, hidden


def check_graph(g: dict, tools: Tools, pipeline: str) -> Outcome:
    program, expected, hidden = emit_graph(g)
    try:
        raised = run_tool([tools.attn_opt, "--attn-raise", "--canonicalize"],
                          program)
        count = raised.count("attn.attention")
        if count != 1:
            return Outcome(False, "not-raised",
                           f"--attn-raise produced {count} attn.attention "
                           "ops, expected 1")
        lowered = run_tool([tools.attn_opt, *shlex.split(pipeline)], raised)
        printed = run_main(tools, lowered)
    except attn_check.ToolError as e:
        return Outcome(False, "tool", str(e))
    return compare_printed(printed, expected, hidden, "f32",
                           lambda values: values.reshape(expected.shape))


def run_main(tools: Tools, program: str) -> str:
    """What @main of the lowered `program` prints."""
    return run_tool(attn_check.runner_command(tools.mlir_runner,
                                              tools.shared_libs), program)


def compare_printed(printed: str, expected: np.ndarray, hidden: np.ndarray,
                    dtype: str, arrange: Callable[[np.ndarray], np.ndarray]
                    ) -> Outcome:
    """Compares the memref `printed` by @main, laid out as `expected` by
    `arrange`, with the reference, at `dtype`'s tolerances."""
    try:
        _, values = attn_check.parse_printed_memref(printed)
    except ValueError as e:
        return Outcome(False, "mismatch", f"cannot parse the output: {e}")
    if values.size != expected.size:
        return Outcome(False, "mismatch", f"{values.size} values printed, "
                       f"expected {expected.size}")
    atol, rtol = attn_check.TOLERANCES[dtype]
    cmp = attn_check.compare(arrange(values), expected, hidden, atol, rtol)
    text = (f"max_abs_err={cmp.max_abs:.3e} worst/tol={cmp.worst_ratio:.3g}"
            + "".join(f"\n  {m}" for m in cmp.messages))
    return Outcome(cmp.ok, "pass" if cmp.ok else "mismatch", text)


def graph_repro(g: dict, pipeline: str, path: str) -> str:
    return (f"build/bin/attn-opt {path} --attn-raise --canonicalize | "
            f"build/bin/attn-opt {pipeline} | mlir-runner -e main "
            "-entry-point-result=void -shared-libs=...")


def check_tosa_graph(g: dict, tools: Tools, pipeline: str) -> Outcome:
    """Raises the TOSA graph, lowers what is left of TOSA, then runs it
    under ``pipeline`` and compares it with the graph's float64 reference."""
    program, reference, unpermute = tosa_graphs.emit_tosa_graph(
        g, SELF_CHECK_SCALE)
    try:
        raised = run_tool([tools.attn_opt, "--attn-raise", "--canonicalize"],
                          program)
        count = raised.count("attn.attention")
        if count != 1 or "tosa.matmul" in raised:
            return Outcome(False, "not-raised",
                           f"--attn-raise produced {count} attn.attention "
                           "ops, expected 1 and no tosa.matmul")
        linalg = run_tool([tools.attn_opt, tosa_graphs.TOSA_TO_LINALG],
                          raised)
        lowered = run_tool([tools.attn_opt, *shlex.split(pipeline)], linalg)
        printed = run_main(tools, lowered)
    except attn_check.ToolError as e:
        return Outcome(False, "tool", str(e))
    # Where the op took over q's and k's scaling, it no longer rounds the
    # scaled operands (a documented difference: the raised op is the more
    # precise).
    expected, hidden = reference("attn.folded_scale" in raised)
    return compare_printed(printed, expected, hidden, g["dtype"], unpermute)


def tosa_graph_repro(pipeline: str, path: str) -> str:
    return (f"build/bin/attn-opt {path} --attn-raise --canonicalize | "
            f"build/bin/attn-opt '{tosa_graphs.TOSA_TO_LINALG}' | "
            f"build/bin/attn-opt {pipeline} | mlir-runner -e main "
            "-entry-point-result=void -shared-libs=...")


def run_tool(cmd: list[str], stdin: str) -> str:
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True,
                          timeout=attn_check.TOOL_TIMEOUT_S)
    if proc.returncode != 0:
        raise attn_check.ToolError(
            f"exit status {proc.returncode}: {shlex.join(cmd)}\n"
            f"{proc.stderr[-3000:]}")
    return proc.stdout


# ---------------------------------------------------------------------------
# GPU kernels, run by their CPU emulation (--gpu)
# ---------------------------------------------------------------------------

# Around the GPU kernels' block sizes (64, 128 or 192 query rows; 16 to 256
# keys per step): partial blocks, one-row and one-key tails.
GPU_LENGTHS = [1, 2, 7, 16, 31, 63, 64, 65, 97, 128, 129, 177, 200, 257]
GPU_MAX_LENGTH = 300
# The emulation's cost is mostly LLVM compiling the block program; this caps
# the run itself: B * Hq * Lq * Lk.
GPU_MAX_SCORES = 120_000


def random_gpu_kernel(rng: np.random.Generator, dtype: str) -> dict:
    """A kernel configuration: which kernel of --attn-to-gpu (mma.sync,
    wgmma, wgmma with TMA, warp specialized), its tiles (None: the pass's
    defaults) and its loop options."""
    kind = "mma" if dtype == "f32" else str(
        rng.choice(["mma", "wgmma", "tma", "ws", "ws"]))
    k: dict = {"kind": kind, "block_q": None, "block_kv": None,
               "overlap": True, "pingpong": False, "rescale": None}
    if rng.random() < 0.6:
        k["block_q"] = int(rng.choice([64, 128, 192] if kind == "ws"
                                      else [64, 128]))
    if rng.random() < 0.6:
        step = 8 if dtype == "f32" else 16
        most = 256 if kind == "ws" else 128
        k["block_kv"] = step * int(rng.integers(1, most // step + 1))
    if kind == "ws":
        k["overlap"] = bool(rng.random() < 0.7)
        k["pingpong"] = bool(rng.random() < 0.3)
    if rng.random() < 0.25:
        k["rescale"] = float(rng.choice([-1.0, 0.0, 4.0]))
    return k


def gpu_pipeline(p: dict) -> str:
    """The emulation pipeline of p's kernel, its options spelled as the
    device check's variants spell theirs."""
    k = p["kernel"]
    opts = gpu_variants.Variant(
        p["dtype"], p["dqk"], p["dv"], block_q=k["block_q"] or 0,
        block_kv=k["block_kv"] or 0, wgmma=k["kind"] != "mma",
        tma=k["kind"] == "tma", ws=k["kind"] == "ws", overlap=k["overlap"],
        pingpong=k["pingpong"],
        rescale=8.0 if k["rescale"] is None else k["rescale"],
        split_kv=k.get("split_kv", 1),
        pack_gqa=k.get("pack_gqa", False), tf32=k.get("tf32", False)).tiles
    return (f"--attn-gpu-emulation-pipeline='{opts}'" if opts
            else "--attn-gpu-emulation-pipeline")


def gpu_problem_valid(p: dict) -> bool:
    """Whether --attn-to-gpu takes the problem with its kernel (the pass's
    own checks; shared memory aside, see check_gpu_problem)."""
    k = p["kernel"]
    step = 16 if k["kind"] == "mma" else 64
    if any(d % step or d > 256 for d in (p["dqk"], p["dv"])):
        return False
    if p["dtype"] == "f32" and k["kind"] != "mma":
        return False
    # TMA boxes: at most 5 dims, so at most 2 batch dims.
    if k["kind"] in ("tma", "ws") and len(p["batch"]) > 2:
        return False
    if k["pingpong"] and (k["block_q"] or 128) < 128:
        return False
    return problem_valid(p) and gpu_scores(p) <= GPU_MAX_SCORES


def gpu_scores(p: dict) -> int:
    batch = int(np.prod(p["batch"])) if p["batch"] else 1
    return batch * p["hq"] * p["lq"] * p["lk"]


def random_gpu_problem(rng: np.random.Generator) -> dict:
    """A problem for a random GPU kernel: the CPU generator's masks, biases,
    causal alignments and head groups, with lengths around the kernels'
    blocks and head dims the kernel takes."""
    while True:
        p = random_problem(rng)
        # The GPU pipelines take the op on memrefs of contiguous rows (and
        # dynamic head counts, drawn as for the CPU).
        p["on_memrefs"] = False
        # f32 takes the one TF32 kernel: mostly f16 and bf16.
        p["dtype"] = str(rng.choice(["f16", "bf16", "bf16", "f32"]))
        p["magnitude"] = 1.0 if rng.random() < 0.8 else 3.0
        # Half of the lengths at random: a causal diagonal's offset Lk - Lq
        # then falls anywhere in a block.
        p["lq"], p["lk"] = (
            int(rng.choice(GPU_LENGTHS)) if rng.random() < 0.5
            else int(rng.integers(1, GPU_MAX_LENGTH + 1)) for _ in range(2))
        if rng.random() < 0.4:
            # No score operands: the kernels' own path through the causal
            # diagonal and the tails (block skipping, one uniform branch
            # for the blocks to mask), the one the device check times.
            p["mask"] = p["bias"] = None
            p["fully_masked_rows"] = p["lowest_bias_rows"] = 0
        p["kernel"] = random_gpu_kernel(rng, p["dtype"])
        p["inputs"] = random_inputs(rng)
        if p["causal"] == "bottom_right" and rng.random() < 0.6:
            # A diagonal offset Lk - Lq within two keys of a block's end:
            # where a block starts or stops crossing the diagonal. Relative
            # to the kernel's real block-kv, so a default one is pinned to
            # one of the values the pass picks for this kernel kind.
            k = p["kernel"]
            if not k["block_kv"]:
                k["block_kv"] = int(rng.choice(
                    [16, 32] if p["dtype"] == "f32" else
                    [64, 128, 176] if k["kind"] == "ws" else [32, 64, 128]))
            # Lq gives way (not Lk) where Lk would pass the length cap:
            # clamping Lk would move the diagonal away from the block's end.
            ends = [m * k["block_kv"] for m in range(3)
                    if m * k["block_kv"] + 2 < GPU_MAX_LENGTH]
            offset = int(rng.choice(ends)) + int(rng.integers(-2, 3))
            p["lq"] = max(min(p["lq"], GPU_MAX_LENGTH - offset), 1 - offset, 1)
            p["lk"] = p["lq"] + offset
        step = 16 if p["kernel"]["kind"] == "mma" else 64
        dims = [d for d in range(step, 129, step)]
        p["dqk"] = int(rng.choice(dims))
        p["dv"] = p["dqk"] if rng.random() < 0.5 else int(rng.choice(dims))
        for key in ("fully_masked_rows", "lowest_bias_rows"):
            p[key] = min(p[key], p["lq"])
        if p["bias_fill"] is not None and not padding_fill_valid(
                p, p["bias_fill"]):
            p["bias_fill"] = None
        draw_causal_shift(p)
        if gpu_problem_valid(p):
            p["kernel"]["split_kv"] = random_split_kv(p)
            p["kernel"]["pack_gqa"] = random_pack_gqa(p)
            if p["kernel"]["pack_gqa"]:
                # --attn-pack-gqa leaves an op with a causal offset or
                # period alone.
                p["causal_period"] = p["causal_offset"] = None
            # f32: plain TF32 (tf32=1) for 30% of the kernels, the default
            # 3xTF32 for the others. From the problem's own seed, last:
            # the stream and the draws made from the problem (the fixed
            # seeds' problems) stay as they were.
            p["kernel"]["tf32"] = bool(
                p["dtype"] == "f32"
                and np.random.default_rng([p["seed"], 11]).random() < 0.3)
            return p


def problem_key(p: dict) -> str:
    """p as text for the draws made from the problem itself, without the
    fields added after those draws were (dynamic lengths): adding a field
    keeps each seed's draws."""
    stable = {k: v for k, v in p.items()
              if k not in ("dynamic_lq", "dynamic_lk", "on_memrefs",
                           "dynamic_heads",
                           "lowest_bias_rows", "bias_fill", "causal_period",
                           "causal_offset")}
    return json.dumps(stable, sort_keys=True, default=str)


def random_split_kv(p: dict) -> int:
    """Split-KV for 40% of the kernels: chosen at run time (0, which here
    splits: the emulated grids are small) or forced, up to more splits than
    K/V steps. Drawn from the problem itself rather than the seed's stream,
    so that each seed keeps the problems it had before split-KV (and the
    warp-specialized ones, before it took split-KV too)."""
    rng = np.random.default_rng(zlib.crc32(problem_key(p).encode()))
    if rng.random() >= 0.4:
        return 1
    return int(rng.choice([0, 0, 2, 3, 5, 16]))


def random_pack_gqa(p: dict) -> bool:
    """GQA packing (--attn-pack-gqa) for half of the grouped-query problems,
    drawn from the problem itself like random_split_kv. Most problems are
    not packable as drawn (long query tiles, masks broadcast over only one
    of the heads and rows), so three in four packed ones are made packable
    in place: few query rows (causal ones too: packed rows are a causal
    period of Lq queries), and masks and biases full or broadcast over
    both."""
    if p["hq"] == p["hkv"]:
        return False
    rng = np.random.default_rng(
        zlib.crc32(("pack-gqa" + problem_key(p)).encode()))
    if rng.random() >= 0.5:
        return False
    if rng.random() < 0.75:
        q = copy.deepcopy(p)
        q["lq"] = int(rng.choice([1, 1, 1, 2, 3, 7, 17]))
        heads = len(q["batch"])
        for key in ("mask", "bias"):
            if q[key]:
                q[key]["full"][heads + 1] = q[key]["full"][heads]
        m = q["mask"]
        if not (m and m["kind"] == "bool" and m["full"][heads + 1]):
            q["fully_masked_rows"] = 0
        q["fully_masked_rows"] = min(q["fully_masked_rows"], q["lq"])
        if not bias_padding_allowed(q):
            q["lowest_bias_rows"] = 0
        q["lowest_bias_rows"] = min(q["lowest_bias_rows"], q["lq"])
        if gpu_problem_valid(q):
            p.update(q)
    return True


def gpu_problem_args(p: dict) -> list[str]:
    args = problem_args(p)
    if p["dtype"] == "f32" and p["kernel"].get("tf32"):
        # The TF32 kernel rounds q, k and v to 10 mantissa bits, whose error
        # grows with the logits: the reference takes the rounded operands.
        # P is rounded too, as f16's is: f16's tolerance. (The default
        # 3xTF32 kernel is held to f32's.)
        atol, rtol = attn_check.TOLERANCES["f16"]
        args += ["--reference-operands", "tf32",
                 "--atol", repr(atol), "--rtol", repr(rtol)]
    return args


def check_gpu_problem(p: dict, tools: Tools) -> Outcome:
    out = check_problem(p, tools, gpu_pipeline(p), gpu_problem_args(p))
    # Tiles asked for that do not fit in shared memory are refused with a
    # located error, not run: the same problem runs with the default tiles,
    # which the pass shrinks to fit.
    k = p["kernel"]
    if (out.kind == "tool" and "bytes of shared memory" in out.text
            and (k["block_q"] or k["block_kv"])):
        q = copy.deepcopy(p)
        q["kernel"]["block_q"] = q["kernel"]["block_kv"] = None
        out = check_gpu_problem(q, tools)
        out.ran = out.ran or q
    return out


def gpu_problem_candidates(p: dict) -> list[dict]:
    """Simpler variants of a GPU problem: the CPU ones with head dims kept
    to the kernel's multiples, then simpler kernels."""
    out = [q for q in problem_candidates(p)
           if q["dqk"] == p["dqk"] and q["dv"] == p["dv"]]
    k = p["kernel"]
    step = 16 if k["kind"] == "mma" else 64
    for key in ("dqk", "dv"):
        for smaller in (step, p[key] - step):
            if step <= smaller < p[key]:
                q = copy.deepcopy(p)
                q[key] = smaller
                out.append(q)

    def kernel(**changes) -> None:
        q = copy.deepcopy(p)
        q["kernel"].update(changes)
        if q != p:
            out.append(q)

    kernel(split_kv=1)
    kernel(pack_gqa=False)
    kernel(pingpong=False)
    kernel(overlap=True)
    kernel(rescale=None)
    kernel(block_q=None)
    kernel(block_kv=None)
    return [q for q in out if gpu_problem_valid(q)]


def gpu_problem_repro(p: dict) -> str:
    cmd = ["/usr/bin/python3", "test/lib/attn_check.py",
           "--attn-opt", "build/bin/attn-opt",
           "--mlir-runner", "/usr/lib/llvm-22/bin/mlir-runner"]
    return (f"{shlex.join(cmd)} --pipeline=\"{gpu_pipeline(p)}\" "
            f"{shlex.join(gpu_problem_args(p))}")


# ---------------------------------------------------------------------------
# Shrinking and the driver
# ---------------------------------------------------------------------------


def shrink(case: dict, check: Callable[[dict], Outcome],
           candidates: Callable[[dict], list[dict]], kind: str,
           budget_s: float) -> tuple[dict, Outcome, int]:
    """Greedy: takes the first simpler variant that fails the same way, until
    none does (or the time budget is spent). Returns the minimal case, its
    outcome and the number of checks run. A case is kept as it ran (see
    Outcome.ran), so that its reproducer runs what failed."""
    outcome = check(case)
    best = outcome.ran or case
    steps = 1
    deadline = time.monotonic() + budget_s
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for cand in candidates(best):
            if time.monotonic() >= deadline:
                break
            res = check(cand)
            steps += 1
            if not res.ok and res.kind == kind:
                best, outcome, progress = res.ran or cand, res, True
                break
    return best, outcome, steps


def pipelines_for(rng: np.random.Generator, threads_libs: Optional[str]
                  ) -> list[tuple[str, Optional[str]]]:
    """(pipeline, shared libs override) pairs a case runs under: the fused
    path with random tiles and the unfused path; sometimes OpenMP, with a
    random schedule."""
    qt, kt = int(rng.choice(TILES_Q)), int(rng.choice(TILES_KV))
    rows = int(rng.choice(ROW_MAJOR_ROWS))
    fused_opts = f"q-tile={qt} kv-tile={kt} row-major-rows={rows}"
    # From the options rather than the stream, so that each seed keeps the
    # cases it drew before this option.
    cases = np.random.default_rng(zlib.crc32(fused_opts.encode())).choice(
        len(DYNAMIC_ROW_CASES))
    if DYNAMIC_ROW_CASES[cases]:
        fused_opts += f" dynamic-row-cases={DYNAMIC_ROW_CASES[cases]}"
    # Quoted: the value is split like a shell command line.
    out = [(f"--attn-cpu-pipeline='{fused_opts}'", None),
           ("--attn-cpu-pipeline=fused=false", None)]
    if threads_libs and rng.random() < 0.2:
        schedule = str(rng.choice(["dynamic", "static", "guided"]))
        out[0] = (f"--attn-cpu-pipeline='{fused_opts} threads=true "
                  f"schedule={schedule}'", threads_libs)
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attn-opt", required=True)
    ap.add_argument("--mlir-runner", default="/usr/lib/llvm-22/bin/mlir-runner")
    ap.add_argument("--shared-libs", default=attn_check.DEFAULT_SHARED_LIBS)
    ap.add_argument("--openmp-shared-libs",
                    help="runtime libraries with libomp: also try threads=true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--problems", type=int, default=10,
                    help="random attn.attention problems")
    ap.add_argument("--graphs", type=int, default=5,
                    help="random unfused graphs for --attn-raise")
    ap.add_argument("--tosa", type=int, default=0,
                    help="random unfused graphs in TOSA for --attn-raise")
    ap.add_argument("--gpu", type=int, default=0,
                    help="random problems for random GPU kernels, run by "
                         "the CPU emulation")
    ap.add_argument("--time-budget", type=float, default=0,
                    help="stop starting new cases after this many seconds")
    ap.add_argument("--shrink-budget", type=float, default=300,
                    help="seconds spent shrinking one failure")
    ap.add_argument("--out", help="write reproducers (MLIR, commands) here")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--self-check", action="store_true",
                    help="harness self-check: compare against a reference "
                         "with a 1.5x scale; every case must fail and shrink")
    args = ap.parse_args(argv)
    global SELF_CHECK_SCALE
    SELF_CHECK_SCALE = 1.5 if args.self_check else 1.0

    rng = np.random.default_rng(args.seed)
    start = time.monotonic()
    counts = {"problems": 0, "graphs": 0, "tosa": 0, "gpu": 0, "runs": 0,
              "failures": 0}
    failures = []

    def report(tag: str, case: dict, pipeline: str, out: Outcome,
               check: Callable, candidates: Callable,
               program: Optional[Callable]) -> None:
        counts["failures"] += 1
        print(f"FAIL {tag} [{out.kind}] {pipeline}\n  {case}\n"
              f"  {out.text.strip()[:2000]}")
        small, res, steps = shrink(case, check, candidates, out.kind,
                                   args.shrink_budget)
        print(f"  shrunk in {steps} checks to: {small}")
        if "kernel" in small:
            # The kernel is part of the case: the pipeline shrinks with it.
            cmd = gpu_problem_repro(small)
            print(f"  reproducer: {cmd}")
            if args.out:
                os.makedirs(args.out, exist_ok=True)
                with open(os.path.join(args.out, f"repro-{tag}.sh"), "w") as f:
                    f.write(cmd + "\n")
        elif program:
            path = f"repro-{tag}.mlir"
            if args.out:
                os.makedirs(args.out, exist_ok=True)
                path = os.path.join(args.out, path)
            text, cmd = program(small, pipeline, path)
            if args.out:
                with open(path, "w") as f:
                    f.write(text)
            print(f"  reproducer: {cmd}")
            if not args.out:
                print(text)
        else:
            cmd = problem_repro(small, pipeline)
            print(f"  reproducer: {cmd}")
            print("  (add --emit for the MLIR program)")
            if args.out:
                os.makedirs(args.out, exist_ok=True)
                with open(os.path.join(args.out, f"repro-{tag}.sh"), "w") as f:
                    f.write(cmd + "\n")
        print(f"  minimal failure: {res.text.strip()[:2000]}")
        failures.append((tag, small))

    def budget_left() -> bool:
        return not args.time_budget or (time.monotonic() - start
                                        < args.time_budget)

    def run_case(tag: str, case: dict, check: Callable,
                 candidates: Callable, program: Optional[Callable] = None,
                 pipelines: Optional[list] = None) -> None:
        """Checks `case` under `pipelines` (default: a random set); the
        first failure is reported and shrunk. A graph's `program(case,
        pipeline, path)` gives its MLIR and the reproducer's commands."""
        if pipelines is None:
            pipelines = pipelines_for(rng, args.openmp_shared_libs)
        for pipeline, libs in pipelines:
            tools = Tools(args.attn_opt, args.mlir_runner,
                          libs or args.shared_libs)
            out = check(case, tools, pipeline)
            counts["runs"] += 1
            if program and args.verbose:
                print(f"{tag}: {case} {pipeline}: {out.text}")
            elif not program and (args.verbose or not out.ok):
                print(f"{tag}: {out.text.strip()}"
                      + (f" [{pipeline}]" if args.verbose else ""))
            if not out.ok:
                report(tag.replace(" ", ""), case, pipeline, out,
                       lambda c, t=tools, pl=pipeline: check(c, t, pl),
                       candidates, program)
                break

    def graph_program(c: dict, pipeline: str, path: str) -> tuple[str, str]:
        return emit_graph(c)[0], graph_repro(c, pipeline, path)

    def tosa_program(c: dict, pipeline: str, path: str) -> tuple[str, str]:
        return (tosa_graphs.emit_tosa_graph(c, SELF_CHECK_SCALE)[0],
                tosa_graph_repro(pipeline, path))

    n_problem = n_graph = n_gpu = n_tosa = 0
    while budget_left() and (n_problem < args.problems or
                             n_graph < args.graphs or n_gpu < args.gpu or
                             n_tosa < args.tosa):
        # Interleaved so that a time-bounded run covers both kinds.
        if n_problem < args.problems:
            p = random_problem(rng)
            n_problem += 1
            counts["problems"] += 1
            run_case(f"problem {n_problem}", p, check_problem,
                     problem_candidates)
        if n_graph < args.graphs and budget_left():
            g = random_graph(rng)
            n_graph += 1
            counts["graphs"] += 1
            run_case(f"graph {n_graph}", g, check_graph, graph_candidates,
                     graph_program)
        if n_gpu < args.gpu and budget_left():
            p = random_gpu_problem(rng)
            n_gpu += 1
            counts["gpu"] += 1
            run_case(f"gpu {n_gpu}", p,
                     lambda c, t, _pl: check_gpu_problem(c, t),
                     gpu_problem_candidates, None,
                     [(gpu_pipeline(p), None)])
        # Drawn last, so that a run without TOSA graphs keeps each seed's
        # other cases.
        if n_tosa < args.tosa and budget_left():
            g = tosa_graphs.random_tosa_graph(rng)
            n_tosa += 1
            counts["tosa"] += 1
            run_case(f"tosa {n_tosa}", g, check_tosa_graph,
                     tosa_graphs.tosa_graph_candidates, tosa_program)
    elapsed = time.monotonic() - start
    print(f"attn_random: seed {args.seed}: {counts['problems']} problems, "
          f"{counts['graphs']} graphs, {counts['tosa']} tosa graphs, "
          f"{counts['gpu']} gpu problems, "
          f"{counts['runs']} runs, {counts['failures']} failures in "
          f"{elapsed:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
