#!/usr/bin/python3
"""Runs one random ``attn.attention`` problem on the CPU and checks it.

The driver generates q/k/v (and optionally a mask and a bias) from the
command-line options, writes an MLIR program whose ``@main`` computes the
attention and prints the result with ``printMemrefF32``, lowers it with
``attn-opt <pipeline>``, runs it with ``mlir-runner``, and compares the
printed numbers with the float64 reference in ``attn_reference.py``.

Exit status: 0 when the output matches, 1 on a mismatch (including any
NaN/inf in the output, a wrong element count, or a nonzero value in a row
that has no visible key), 2 when a tool fails or the options are invalid.

Example::

    /usr/bin/python3 test/lib/attn_check.py --attn-opt build/bin/attn-opt \\
        --mlir-runner /usr/lib/llvm-22/bin/mlir-runner \\
        --dtype f16 --batch 2 --hq 8 --hkv 2 --lq 37 --lk 45 --dqk 64 --dv 32 \\
        --mask bool:2x1x37x45 --causal bottom_right

Run with ``/usr/bin/python3``: only the system interpreter sees Debian's
numpy.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Optional

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_reference as ref  # noqa: E402

DEFAULT_SHARED_LIBS = ",".join([
    "/usr/lib/llvm-22/lib/libmlir_runner_utils.so",
    "/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so",
])

# Tolerances, |out - ref| <= atol + rtol * |ref| elementwise.  The reference
# is exact (float64 from the exactly rounded inputs), so the budget covers
# the implementation's f32 arithmetic, the rounding of the result to its
# element type, and for f32 the printing.  Outputs are convex combinations
# of v ~ N(0, 1), so |out| <= ~4.
#  * f32: printMemrefF32 prints 6 significant digits (relative error up to
#    5e-6) and f32 accumulation over Lk, Dqk <= a few hundred adds ~1e-6;
#    1e-4 leaves a wide margin yet catches any real semantic error.
#  * f16: the result is rounded to f16, half an ulp is 2^-11 ~ 4.9e-4
#    relative; 2e-3 is 4 half-ulps (room for f32 accumulation and a
#    possible f16 rounding of intermediate probabilities).
#  * bf16: half an ulp is 2^-8 ~ 3.9e-3 relative; 1.6e-2 is again 4
#    half-ulps.
TOLERANCES = {"f32": (1e-4, 1e-4), "f16": (2e-3, 2e-3), "bf16": (1.6e-2, 1.6e-2)}

TOOL_TIMEOUT_S = 600

# mlir-runner JIT-compiles each program once, at LLVM's default code
# generation level, and its compile is most of a check's time: the GPU
# emulation's 128-lane vectors make basic blocks that the greedy register
# allocator and the two instruction schedulers take seconds over, and the
# CPU kernels of a dynamic shape are large. These options choose the fast
# register allocator and skip both schedulers, register coalescing and the
# machine-level sinking, CSE and LICM; they move, merge or reassign
# instructions only, so every program computes the same bits
# (docs/reliability.md has the measurements).
RUNNER_CODEGEN_OPTIONS = ["-regalloc=fast", "-enable-misched=false",
                          "-post-RA-scheduler=false",
                          "-join-liveintervals=false", "-disable-machine-sink",
                          "-disable-machine-cse", "-disable-machine-licm"]

# The fast allocator gives values stack slots of their own, and an emulated
# kernel's frame holds hundreds of 128-lane vectors: some (f32, 112 or 128
# keys per block) need more than the usual 8 MiB main-thread stack and
# crashed mlir-runner with SIGSEGV. Its stack is raised to this (a soft
# limit, within the hard one; unused pages cost nothing).
RUNNER_STACK_BYTES = 1 << 30


def runner_stack_limit() -> int:
    """RUNNER_STACK_BYTES, or the hard stack limit where that is lower."""
    hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
    if hard == resource.RLIM_INFINITY:
        return RUNNER_STACK_BYTES
    return min(RUNNER_STACK_BYTES, hard)


def runner_command(mlir_runner: str, shared_libs: str,
                   *inputs: str) -> list[str]:
    """mlir-runner running @main of ``inputs`` (stdin when none), under
    prlimit (util-linux) for its stack."""
    return ["prlimit", f"--stack={runner_stack_limit()}:", "--",
            mlir_runner, *inputs, "-e", "main", "-entry-point-result=void",
            f"-shared-libs={shared_libs}", *RUNNER_CODEGEN_OPTIONS]


class ToolError(Exception):
    """A tool (attn-opt or mlir-runner) failed."""


class UsageError(Exception):
    """The options describe an invalid problem."""


# ---------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------


def parse_shape(text: str) -> list[int]:
    """Parses ``2x3x4`` into [2, 3, 4]; the empty string gives []."""
    text = text.strip()
    if not text:
        return []
    try:
        dims = [int(d) for d in text.split("x")]
    except ValueError:
        raise UsageError(f"bad shape {text!r}, expected e.g. 2x8x1x45") from None
    if any(d <= 0 for d in dims):
        raise UsageError(f"bad shape {text!r}: dims must be positive")
    return dims


@dataclass
class OperandSpec:
    """A mask or bias operand: kind ("bool" or "float"), shape, element type."""

    kind: str
    shape: list[int]
    dtype: str  # "i1", "f32", "f16" or "bf16"


def parse_mask(text: str) -> OperandSpec:
    """Parses ``bool:SHAPE`` or ``float:SHAPE[:f32|f16|bf16]``."""
    parts = text.split(":")
    if parts[0] == "bool" and len(parts) == 2:
        return OperandSpec("bool", parse_shape(parts[1]), "i1")
    if parts[0] == "float" and len(parts) in (2, 3):
        dtype = parts[2] if len(parts) == 3 else "f32"
        if dtype not in ref.FLOAT_DTYPES:
            raise UsageError(f"bad mask element type {dtype!r}")
        return OperandSpec("float", parse_shape(parts[1]), dtype)
    raise UsageError(f"bad --mask {text!r}, expected bool:SHAPE or "
                     "float:SHAPE[:f32|f16|bf16]")


def parse_bias(text: str) -> OperandSpec:
    """Parses ``SHAPE[:f32|f16|bf16]``."""
    parts = text.split(":")
    if len(parts) > 2:
        raise UsageError(f"bad --bias {text!r}, expected SHAPE[:dtype]")
    dtype = parts[1] if len(parts) == 2 else "f32"
    if dtype not in ref.FLOAT_DTYPES:
        raise UsageError(f"bad bias element type {dtype!r}")
    return OperandSpec("float", parse_shape(parts[0]), dtype)


def parse_padding(text: str) -> tuple[int, int]:
    """Parses ``BEFORE:AFTER`` (non-negative integers)."""
    parts = text.split(":")
    try:
        before, after = (int(x) for x in parts)
    except ValueError:
        raise UsageError(f"bad --operand-padding {text!r}, expected "
                         "BEFORE:AFTER") from None
    if before < 0 or after < 0:
        raise UsageError("--operand-padding values must be non-negative")
    return before, after


def build_arg_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    tools = p.add_argument_group("tools")
    tools.add_argument("--attn-opt", default="attn-opt", help="attn-opt binary")
    tools.add_argument("--mlir-runner", default="mlir-runner",
                       help="mlir-runner binary")
    tools.add_argument("--shared-libs", default=DEFAULT_SHARED_LIBS,
                       help="comma-separated runtime libraries for mlir-runner")
    tools.add_argument("--pipeline", default="--attn-cpu-pipeline",
                       help="attn-opt flags, split like a shell command line; "
                            "write --pipeline='--a --b' (with '=') since the "
                            "value starts with '-'")

    prob = p.add_argument_group("problem")
    prob.add_argument("--dtype", choices=ref.FLOAT_DTYPES, default="f32",
                      help="element type of q, k, v and the result")
    prob.add_argument("--batch", default="",
                      help="leading batch dims, e.g. 2x3; empty for none")
    prob.add_argument("--hq", type=int, default=4, help="query heads")
    prob.add_argument("--hkv", type=int, help="key/value heads (default: hq)")
    prob.add_argument("--lq", type=int, default=16, help="query length")
    prob.add_argument("--lk", type=int, default=16, help="key length")
    prob.add_argument("--dqk", type=int, default=32, help="q/k head dim")
    prob.add_argument("--dv", type=int, help="v head dim (default: dqk)")
    prob.add_argument("--scale", type=float,
                      help="softmax scale (default: 1/sqrt(dqk))")
    prob.add_argument("--causal", choices=("top_left", "bottom_right"),
                      help="causal alignment (default: not causal)")
    prob.add_argument("--causal-offset", type=int, metavar="C",
                      help="the op's causal_offset (an index argument of "
                      "the function that holds the op): moves the diagonal, "
                      "or with --causal-period the rows")
    prob.add_argument("--causal-period", type=int, metavar="P",
                      help="the op's causal_period: row i is query "
                      "(i + C) mod P")
    prob.add_argument("--mask", type=parse_mask, metavar="KIND:SHAPE[:DTYPE]",
                      help="bool:SHAPE (~80%% true) or float:SHAPE[:dtype] "
                           "(additive, some -inf); SHAPE broadcasts to "
                           "[B..., Hq, Lq, Lk]")
    prob.add_argument("--bias", type=parse_bias, metavar="SHAPE[:DTYPE]",
                      help="additive float bias, random normal")
    prob.add_argument("--fully-masked-rows", type=int, default=0, metavar="N",
                      help="hide every key from N query rows (needs a bool "
                           "mask with a full Lq dim)")
    prob.add_argument("--lowest-bias-rows", type=int, default=0, metavar="N",
                      help="set the bias to --bias-fill at every key of N "
                           "query rows and at ~20%% of the keys of the others "
                           "(needs a bias with a full Lq dim)")
    prob.add_argument("--bias-fill", type=float, metavar="VALUE",
                      help="the value of --lowest-bias-rows, rounded to the "
                           "bias's dtype (default: its lowest finite value, "
                           "HF's finfo.min padding; -1e9 is another common "
                           "padding, see --reference-scores)")
    prob.add_argument("--operand-padding", type=parse_padding,
                      default=(0, 0), metavar="BEFORE:AFTER",
                      help="store the mask and bias inside wider rows, BEFORE "
                           "and AFTER extra elements (NaN, or true for a "
                           "bool mask) around each row of the last dim, and "
                           "pass a slice: a strided operand, possibly "
                           "misaligned")
    prob.add_argument("--magnitude", type=float, default=1.0,
                      help="standard deviation of the q and k values")
    prob.add_argument("--inputs", choices=("random", "ramp"),
                      default="random",
                      help="ramp: each row's scores rise steeply with the "
                           "key index (every fourth row's fall), so that the "
                           "last (first) visible key dominates the row and "
                           "a key wrongly shown or hidden at the edge of the "
                           "row's window changes its output by O(1); needs "
                           "--dqk >= 2")
    prob.add_argument("--dynamic-lq", action="store_true",
                      help="run the op in a function of its own whose query "
                           "and result have Lq dynamic (tensor<...x?x...>), "
                           "so that what is decided from Lq is decided at "
                           "run time")
    prob.add_argument("--dynamic-lk", action="store_true",
                      help="the same for Lk: the op's function takes k, v "
                           "and the mask and bias dims of length Lk as "
                           "dynamic (a growing KV cache)")
    prob.add_argument("--dynamic-heads", action="store_true",
                      help="the same for the batch and head dims of q, k, "
                           "v and the result (and the mask's and bias's "
                           "that do not broadcast): Hq / Hkv is known only "
                           "at run time")
    prob.add_argument("--on-memrefs", action="store_true",
                      help="run the op on memrefs, in a function of its own "
                           "whose operands (the result too) are memrefs of "
                           "dynamic strides and offset (bufferization."
                           "to_buffer of @main's tensors)")
    prob.add_argument("--seed", type=int, default=0, help="random seed")

    chk = p.add_argument_group("checking")
    chk.add_argument("--atol", type=float,
                     help="absolute tolerance (default: by dtype)")
    chk.add_argument("--rtol", type=float,
                     help="relative tolerance (default: by dtype)")
    chk.add_argument("--reference-operands", choices=("exact", "tf32"),
                     default="exact",
                     help="tf32: the reference takes q, k and v rounded to "
                          "TF32 (cvt.rna.tf32.f32), as the GPU kernel's "
                          "TF32 tensor cores do with f32 inputs")
    chk.add_argument("--reference-scores", choices=("f64", "f32"),
                     default="f64",
                     help="f32: the reference rounds the scores to f32 after "
                          "the scaled product and each added term, as the "
                          "op's f32 arithmetic does (needed where a term "
                          "like -1e9 leaves f32 only part of the score)")
    chk.add_argument("--reference-scale-multiplier", type=float, default=1.0,
                     help="multiply the scale the REFERENCE uses (harness "
                          "self-check: anything but 1 must fail)")
    chk.add_argument("--reference-causal",
                     choices=("same", "none", "top_left", "bottom_right"),
                     default="same",
                     help="causal alignment the REFERENCE uses (harness "
                          "self-check)")
    chk.add_argument("--reference-kv-head-map", choices=("group", "modulo"),
                     default="group",
                     help="query head -> kv head map of the REFERENCE: "
                          "h // (Hq/Hkv) (correct) or h %% Hkv (harness "
                          "self-check)")

    out = p.add_argument_group("output")
    out.add_argument("--keep", metavar="DIR",
                     help="write the program, the lowered program and the "
                          "output/reference arrays to DIR")
    out.add_argument("--emit", action="store_true",
                     help="print the generated MLIR program and exit")
    return p


# ---------------------------------------------------------------------------
# Problem generation
# ---------------------------------------------------------------------------


@dataclass
class Operand:
    """One operand of the program: its name, values (exactly representable
    in ``dtype``, float64 or bool) and element type."""

    name: str
    values: np.ndarray
    dtype: str

    @property
    def type(self) -> str:
        return ref.tensor_type(self.values.shape, self.dtype)


@dataclass
class Problem:
    q: Operand
    k: Operand
    v: Operand
    mask: Optional[Operand]
    bias: Optional[Operand]
    scale: float  # already rounded to f32
    causal: Optional[str]
    out_shape: list[int]
    dtype: str
    # The op's causal_offset and causal_period (None: absent).
    causal_offset: Optional[int] = None
    causal_period: Optional[int] = None
    # Extra elements around each row of the mask and bias (see
    # --operand-padding).
    padding: tuple[int, int] = (0, 0)
    # The op in a function with Lq or Lk dynamic (see --dynamic-lq and
    # --dynamic-lk).
    dynamic_lq: bool = False
    dynamic_lk: bool = False
    # The op on memrefs (see --on-memrefs).
    on_memrefs: bool = False
    # Batch and head dims dynamic (see --dynamic-heads).
    dynamic_heads: bool = False


def check_broadcast(name: str, shape: list[int], score: list[int]) -> None:
    """Raises UsageError unless ``shape`` broadcasts to ``score`` per dim."""
    if len(shape) != len(score):
        raise UsageError(f"{name} shape {shape} must have rank {len(score)} "
                         f"(score shape {score})")
    for d, (s, full) in enumerate(zip(shape, score)):
        if s not in (1, full):
            raise UsageError(f"{name} dim {d} is {s}, must be 1 or {full} "
                             f"(score shape {score})")


#: --inputs ramp: the scaled score step between neighbouring keys, beyond
#: six standard deviations of the other head dims' noise. A row's runner-up
#: key then weighs at most about e^-8 of its dominant one.
RAMP_STEP = 8.0


def add_ramp(q: np.ndarray, k: np.ndarray, scale: float,
             magnitude: float) -> None:
    """Writes a ramp into head dims 0 and 1 of q and k (in place): key j
    holds (j // 16, j % 16) and row i (16 g, g), so q_i . k_j = g j plus
    the noise of the other dims (q and k values of standard deviation
    ``magnitude``). g = G makes the row's last visible key dominate, g = -G
    its first: every fourth row (i % 4 == 3) falls, the others rise, so
    that the rows where tiles start (multiples of 16), whose causal
    diagonals and tails the kernels' per-block logic decides, all rise. A
    falling row would hide a leak past its window's end. The values are
    small integers and powers of two: exact in every dtype. G is the power
    of two that makes the scaled step scale * G at least RAMP_STEP plus six
    of the noise's standard deviations, at most 2^10 (16 G stays within
    f16)."""
    lk, d = k.shape[-2], k.shape[-1]
    j = np.arange(lk, dtype=np.float64)
    k[..., 0] = np.floor(j / 16)
    k[..., 1] = np.mod(j, 16)
    noise = abs(scale) * magnitude**2 * math.sqrt(d - 2)
    step = RAMP_STEP + 6 * noise
    e = 10 if scale == 0 else math.ceil(math.log2(step / abs(scale)))
    g = 2.0 ** min(10, max(0, e))
    lq = q.shape[-2]
    direction = np.where(np.arange(lq) % 4 == 3, -1.0, 1.0)
    q[..., 0] = 16 * g * direction
    q[..., 1] = g * direction


def make_problem(args: argparse.Namespace) -> Problem:
    """Generates the random problem the options describe."""
    rng = np.random.default_rng(args.seed)
    batch = parse_shape(args.batch)
    hq = args.hq
    hkv = args.hkv if args.hkv is not None else hq
    dv = args.dv if args.dv is not None else args.dqk
    lq, lk, dqk = args.lq, args.lk, args.dqk
    for name, val in (("hq", hq), ("hkv", hkv), ("lq", lq), ("lk", lk),
                      ("dqk", dqk), ("dv", dv)):
        if val <= 0:
            raise UsageError(f"--{name} must be positive")
    if hq % hkv:
        raise UsageError(f"--hq {hq} is not a multiple of --hkv {hkv}")
    score = batch + [hq, lq, lk]

    def rand(shape: list[int], std: float, dtype: str) -> np.ndarray:
        # Values are drawn as float32 and then rounded exactly to dtype.
        x = (rng.standard_normal(shape) * std).astype(np.float32)
        return ref.round_to(x, dtype)

    scale = args.scale if args.scale is not None else 1.0 / math.sqrt(dqk)
    scale = float(np.float32(scale))
    if not math.isfinite(scale):
        raise UsageError("--scale must be finite")

    dt = args.dtype
    q = Operand("q", rand(batch + [hq, lq, dqk], args.magnitude, dt), dt)
    k = Operand("k", rand(batch + [hkv, lk, dqk], args.magnitude, dt), dt)
    v = Operand("v", rand(batch + [hkv, lk, dv], 1.0, dt), dt)
    if args.inputs == "ramp":
        if dqk < 2:
            raise UsageError("--inputs ramp needs --dqk >= 2")
        add_ramp(q.values, k.values, scale, args.magnitude)
        q.values[...] = ref.round_to(q.values.astype(np.float32), dt)
        k.values[...] = ref.round_to(k.values.astype(np.float32), dt)

    mask = None
    if args.mask is not None:
        spec = args.mask
        check_broadcast("mask", spec.shape, score)
        if spec.kind == "bool":
            values = rng.random(spec.shape) < 0.8
        else:
            values = rand(spec.shape, 2.0, spec.dtype)
            values[rng.random(spec.shape) < 0.15] = -np.inf
        mask = Operand("m", values, spec.dtype)

    if args.fully_masked_rows:
        n = args.fully_masked_rows
        if mask is None or mask.dtype != "i1" or mask.values.shape[-2] != lq:
            raise UsageError("--fully-masked-rows needs a bool mask whose Lq "
                             "dim is full")
        if not 0 < n <= lq:
            raise UsageError(f"--fully-masked-rows must be in [1, {lq}]")
        rows = rng.choice(lq, size=n, replace=False)
        mask.values[..., rows, :] = False

    bias = None
    if args.bias is not None:
        check_broadcast("bias", args.bias.shape, score)
        bias = Operand("b", rand(args.bias.shape, 1.0, args.bias.dtype),
                       args.bias.dtype)

    if args.lowest_bias_rows:
        n = args.lowest_bias_rows
        if bias is None or len(bias.values.shape) < 2 or \
                bias.values.shape[-2] != lq:
            raise UsageError("--lowest-bias-rows needs a bias whose Lq dim is "
                             "full")
        if not 0 < n <= lq:
            raise UsageError(f"--lowest-bias-rows must be in [1, {lq}]")
        fill = (ref.lowest_finite(bias.dtype) if args.bias_fill is None
                else float(ref.round_to(np.array([args.bias_fill]),
                                        bias.dtype)[0]))
        bias.values[rng.random(bias.values.shape) < 0.2] = fill
        bias.values[..., rng.choice(lq, size=n, replace=False), :] = fill

    offset, period = args.causal_offset, args.causal_period
    try:
        ref.check_causal(args.causal, offset or 0, period)
    except ValueError as e:
        raise UsageError(f"--causal, --causal-offset, --causal-period: {e}"
                         ) from None
    if args.dynamic_heads and args.on_memrefs:
        raise UsageError("--dynamic-heads is for the op on tensors, not "
                         "with --on-memrefs")
    return Problem(q, k, v, mask, bias, scale, args.causal,
                   batch + [hq, lq, dv], dt, offset, period,
                   args.operand_padding, args.dynamic_lq, args.dynamic_lk,
                   args.on_memrefs, args.dynamic_heads)


# ---------------------------------------------------------------------------
# MLIR program
# ---------------------------------------------------------------------------


def format_scale(scale: float) -> str:
    """The scale as an MLIR float literal that parses back to the same f32."""
    return "%.9e" % np.float32(scale)


def emit_program(pb: Problem) -> str:
    """Returns the MLIR program (``func.func @main()``) for the problem."""
    out_ty = ref.tensor_type(pb.out_shape, pb.dtype)
    out32_ty = ref.tensor_type(pb.out_shape, "f32")
    lines = ["func.func private @printMemrefF32(tensor<*xf32>)",
             "func.func @main() {"]
    optional = [o for o in (pb.mask, pb.bias) if o is not None]
    operands = [pb.q, pb.k, pb.v] + optional
    for o in operands:
        before, after = pb.padding if o in optional else (0, 0)
        if not (before or after):
            lines.append(f"  %{o.name} = arith.constant "
                         f"{ref.hex_literal(o.values, o.dtype)} : {o.type}")
            continue
        # Padding that any read would turn into NaN (or a visible key).
        fill = True if o.dtype == "i1" else np.nan
        widths = [(0, 0)] * (o.values.ndim - 1) + [(before, after)]
        wide = np.pad(o.values, widths, constant_values=fill)
        wide_ty = ref.tensor_type(wide.shape, o.dtype)
        zeros = ", ".join(["0"] * (o.values.ndim - 1) + [str(before)])
        sizes = ", ".join(str(n) for n in o.values.shape)
        ones = ", ".join(["1"] * o.values.ndim)
        lines += [
            f"  %{o.name}_wide = arith.constant "
            f"{ref.hex_literal(wide, o.dtype)} : {wide_ty}",
            f"  %{o.name} = tensor.extract_slice %{o.name}_wide[{zeros}] "
            f"[{sizes}] [{ones}] : {wide_ty} to {o.type}",
        ]

    def attention(types: dict[str, str], res_ty: str, init: str = "%init",
                  on_memrefs: bool = False) -> str:
        """The op, on %q, %k, %v (%m, %b) of `types` and `init`: as %r, or,
        on memrefs, without a result (it writes `init`)."""
        op = (f"  {'' if on_memrefs else '%r = '}attn.attention "
              f"ins(%q, %k, %v : {types['q']}, {types['k']}, {types['v']})")
        if pb.mask is not None:
            op += f" mask(%m : {types['m']})"
        if pb.bias is not None:
            op += f" bias(%b : {types['b']})"
        op += f" outs({init} : {res_ty}) scale = {format_scale(pb.scale)}"
        if pb.causal:
            op += f" causal = {pb.causal}"
        for name, _ in causal_indices:
            op += f" {name}(%{name})"
        return op if on_memrefs else op + f" -> {res_ty}"

    # causal_period and causal_offset: constants in @main, arguments of
    # @attention where the op is there (so not known to its lowering).
    causal_indices = [(n, v) for n, v in (("causal_period", pb.causal_period),
                                         ("causal_offset", pb.causal_offset))
                      if v is not None]
    lines += [f"  %{n} = arith.constant {v} : index"
              for n, v in causal_indices]
    index_names = [n for n, _ in causal_indices]
    index_params, index_args, index_types = index_operands(index_names)

    callee = []
    if pb.on_memrefs:
        lines_main, callee = memref_callee(pb, optional, attention,
                                           index_names)
        lines += lines_main
    elif not (pb.dynamic_lq or pb.dynamic_lk or pb.dynamic_heads):
        lines += [f"  %init = tensor.empty() : {out_ty}",
                  attention({o.name: o.type for o in operands}, out_ty)]
    else:
        # The op in @attention, whose operands have Lq, Lk or the batch and
        # head dims dynamic: no pass folds the sizes in from @main's
        # constants.
        seq = len(pb.out_shape) - 2
        heads = tuple(range(seq)) if pb.dynamic_heads else ()

        def with_dynamic(shape, dtype: str, dims: tuple,
                         broadcastable: bool = False) -> str:
            """The tensor type of `shape` with the dims `dims` dynamic (see
            dynamic_dims)."""
            return ref.tensor_type(dynamic_dims(shape, dims, broadcastable),
                                   dtype)
        lq_dims = heads + ((seq,) if pb.dynamic_lq else ())
        lk_dims = heads + ((seq,) if pb.dynamic_lk else ())
        q_ty = with_dynamic(pb.q.values.shape, pb.dtype, lq_dims)
        res_ty = with_dynamic(pb.out_shape, pb.dtype, lq_dims)
        # Each operand's name, its type in @main and in @attention.
        params = [(pb.q.name, pb.q.type, q_ty)] + [
            (o.name, o.type, with_dynamic(o.values.shape, o.dtype, lk_dims))
            for o in (pb.k, pb.v)] + [
            (o.name, o.type, with_dynamic(
                o.values.shape, o.dtype,
                heads + ((o.values.ndim - 1,) if pb.dynamic_lk else ()),
                broadcastable=True))
            for o in optional]
        call_args = []
        for name, ty, dyn_ty in params:
            if ty == dyn_ty:
                call_args.append(f"%{name}")
                continue
            lines.append(f"  %{name}_dyn = tensor.cast %{name} : {ty} to "
                         f"{dyn_ty}")
            call_args.append(f"%{name}_dyn")
        types = {name: dyn_ty for name, _, dyn_ty in params}
        result_name = "%r_dyn" if res_ty != out_ty else "%r"
        lines.append(f"  {result_name} = call @attention("
                     f"{', '.join(call_args)}{index_args}) : "
                     f"({', '.join(types.values())}{index_types}) -> {res_ty}")
        if res_ty != out_ty:
            lines.append(f"  %r = tensor.cast %r_dyn : {res_ty} to {out_ty}")
        # The result's dynamic sizes are q's.
        init, sizes = [], []
        for i in lq_dims:
            init += [f"  %c_dim{i} = arith.constant {i} : index",
                     f"  %dim{i} = tensor.dim %q, %c_dim{i} : {q_ty}"]
            sizes.append(f"%dim{i}")
        init.append(f"  %init = tensor.empty({', '.join(sizes)}) : {res_ty}")
        callee = [
            "func.func @attention("
            + ", ".join(f"%{n}: {t}" for n, t in types.items())
            + f"{index_params}) -> {res_ty} {{", *init,
            attention(types, res_ty),
            f"  return %r : {res_ty}",
            "}"]

    result = "%r"
    if pb.dtype != "f32":
        rank = len(pb.out_shape)
        dims = ", ".join(f"d{i}" for i in range(rank))
        ident = f"affine_map<({dims}) -> ({dims})>"
        iters = ", ".join(['"parallel"'] * rank)
        lines += [
            f"  %e32 = tensor.empty() : {out32_ty}",
            f"  %r32 = linalg.generic {{indexing_maps = [{ident}, {ident}], "
            f"iterator_types = [{iters}]}} ins(%r : {out_ty}) "
            f"outs(%e32 : {out32_ty}) {{",
            f"  ^bb0(%in: {pb.dtype}, %unused: f32):",
            f"    %x = arith.extf %in : {pb.dtype} to f32",
            "    linalg.yield %x : f32",
            f"  }} -> {out32_ty}",
        ]
        result = "%r32"
    lines += [
        f"  %u = tensor.cast {result} : {out32_ty} to tensor<*xf32>",
        "  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()",
        "  return",
        "}",
    ]
    return "\n".join(lines + callee) + "\n"


def dynamic_dims(shape, dims, broadcastable: bool = False) -> list:
    """`shape` with the dims `dims` dynamic ("?"), except, where
    `broadcastable` (a mask or bias), those of size 1: a broadcast dim stays
    1. q, k and v keep no size-1 dim static (Lq = 1 is decoding)."""
    return ["?" if i in dims and not (broadcastable and d == 1) else d
            for i, d in enumerate(shape)]


def index_operands(names: list) -> tuple:
    """The `index` operands `names` (values of @main passed on to
    @attention) as @attention's parameters, the call's arguments and their
    types, each empty or starting with ", " to follow the tensor operands."""
    return ("".join(f", %{n}: index" for n in names),
            "".join(f", %{n}" for n in names),
            ", index" * len(names))


def memref_callee(pb: Problem, optional: list, attention,
                  index_names: list = ()) -> tuple:
    """--on-memrefs: @main's lines that pass its tensors as memrefs to
    @attention (defining %r, the result as a tensor), and the lines of
    @attention, whose op is on memrefs of dynamic strides and offset (Lq
    and Lk dynamic too where asked). `optional`: the mask and bias there
    are; `attention` writes the op; `index_names`: index values of @main
    that @attention takes too."""
    index_params, index_args, index_types = index_operands(index_names)
    seq = len(pb.out_shape) - 2
    lq = (seq,) if pb.dynamic_lq else ()
    lk = (seq,) if pb.dynamic_lk else ()

    def memref(shape, dtype: str, strided: bool = True) -> str:
        dims = "x".join(str(d) for d in shape)
        if not strided:
            return f"memref<{dims}x{dtype}>"
        strides = ", ".join(["?"] * len(shape))
        return f"memref<{dims}x{dtype}, strided<[{strides}], offset: ?>>"

    # Each operand, its dims of run-time size (Lq for q and the result, Lk
    # for k and v, both for a mask or bias) and whether it broadcasts.
    params = [(pb.q, lq, False), (pb.k, lk, False), (pb.v, lk, False)] + [
        (o, tuple(o.values.ndim - 1 for _ in lk)
            + tuple(o.values.ndim - 2 for _ in lq), True) for o in optional]
    lines, args, types = [], [], {}
    for o, dims, broadcastable in params:
        static_ty = memref(o.values.shape, o.dtype)
        ty = memref(dynamic_dims(o.values.shape, dims, broadcastable),
                    o.dtype)
        lines.append(f"  %{o.name}_buf = bufferization.to_buffer %{o.name} "
                     f"read_only : {o.type} to {static_ty}")
        name = f"%{o.name}_buf"
        if ty != static_ty:
            lines.append(f"  %{o.name}_arg = memref.cast %{o.name}_buf : "
                         f"{static_ty} to {ty}")
            name = f"%{o.name}_arg"
        args.append(name)
        types[o.name] = ty
    out_static = memref(pb.out_shape, pb.dtype, strided=False)
    out_ty = memref(dynamic_dims(pb.out_shape, lq), pb.dtype)
    tensor_ty = ref.tensor_type(pb.out_shape, pb.dtype)
    lines += [f"  %out = memref.alloc() : {out_static}",
              f"  %out_arg = memref.cast %out : {out_static} to {out_ty}",
              f"  call @attention({', '.join(args)}, %out_arg{index_args}) : "
              f"({', '.join(types.values())}, {out_ty}{index_types}) -> ()",
              f"  %r = bufferization.to_tensor %out restrict : {out_static} "
              f"to {tensor_ty}"]
    callee = ["func.func @attention("
              + ", ".join(f"%{n}: {t}" for n, t in types.items())
              + f", %out: {out_ty}{index_params}) {{",
              attention(types, out_ty, init="%out", on_memrefs=True),
              "  return", "}"]
    return lines, callee


# ---------------------------------------------------------------------------
# Running and parsing
# ---------------------------------------------------------------------------


def run_tool(cmd: list[str], stdin: Optional[str] = None) -> str:
    """Runs ``cmd`` (with ``stdin`` as its input) and returns its stdout;
    raises ToolError on failure."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              input=stdin, timeout=TOOL_TIMEOUT_S)
    except FileNotFoundError as e:
        raise ToolError(f"cannot run {cmd[0]}: {e}") from None
    except subprocess.TimeoutExpired:
        raise ToolError(f"timed out after {TOOL_TIMEOUT_S}s: "
                        f"{shlex.join(cmd)}") from None
    if proc.returncode != 0:
        raise ToolError(f"exit status {proc.returncode}: {shlex.join(cmd)}\n"
                        f"{proc.stderr}{proc.stdout[-2000:]}")
    return proc.stdout


def add_runner_arguments(parser: argparse.ArgumentParser) -> None:
    """The tool arguments of a script that calls lower_and_run."""
    parser.add_argument("--attn-opt", required=True)
    parser.add_argument("--mlir-runner", required=True)
    parser.add_argument("--shared-libs", default=DEFAULT_SHARED_LIBS)


def lower_and_run(attn_opt: str, passes: list[str], program: str,
                  mlir_runner: str, shared_libs: str) -> tuple[str, str]:
    """Lowers ``program`` (MLIR text) with ``attn-opt passes`` and runs its
    @main with mlir-runner; returns the lowered module and what it printed.
    Raises ToolError on failure."""
    lowered = run_tool([attn_opt, "-", *passes], stdin=program)
    printed = run_tool(runner_command(mlir_runner, shared_libs),
                       stdin=lowered)
    return lowered, printed


_NUMBER = re.compile(
    r"[-+]?(?:nan|inf|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)", re.IGNORECASE)


def parse_printed_memref(text: str) -> tuple[list[int], np.ndarray]:
    """Parses printMemrefF32 output: returns (sizes, flat float64 data)."""
    header, sep, data = text.partition("data =")
    if not sep:
        raise ValueError("no 'data =' in the output")
    sizes_match = re.search(r"sizes = \[([^\]]*)\]", header)
    sizes = ([int(s) for s in sizes_match.group(1).split(",") if s.strip()]
             if sizes_match else [])
    values = [float(tok) for tok in _NUMBER.findall(data)]
    return sizes, np.array(values, dtype=np.float64)


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------


@dataclass
class Comparison:
    ok: bool
    messages: list[str]
    max_abs: float
    max_rel: float
    worst_ratio: float  # max |out - ref| / (atol + rtol |ref|); <= 1 passes


def compare(out: np.ndarray, expected: np.ndarray, hidden: np.ndarray,
            atol: float, rtol: float) -> Comparison:
    """Compares ``out`` and ``expected`` (same shape); ``hidden`` marks the
    [..., Lq] rows that must be exactly zero."""
    msgs: list[str] = []
    ok = True
    finite = np.isfinite(out)
    if not finite.all():
        ok = False
        bad = np.argwhere(~finite)
        msgs.append(f"{(~finite).sum()} non-finite output values, first at "
                    f"index {tuple(bad[0])}: {out[tuple(bad[0])]}")
    err = np.abs(out - expected)
    err = np.where(finite, err, np.inf)
    bound = atol + rtol * np.abs(expected)
    ratio = err / bound
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(expected != 0, err / np.abs(expected), 0.0)
    mismatched = err > bound
    if mismatched.any():
        ok = False
        worst = np.unravel_index(np.argmax(ratio), ratio.shape)
        msgs.append(f"{mismatched.sum()} of {out.size} values out of "
                    f"tolerance; worst at index {tuple(int(i) for i in worst)}:"
                    f" got {out[worst]!r}, expected {expected[worst]!r}")
    if hidden.any():
        nonzero = (out != 0) & hidden[..., None]
        if nonzero.any():
            ok = False
            first = tuple(int(i) for i in np.argwhere(nonzero)[0])
            msgs.append(f"{nonzero.sum()} nonzero values in rows with no "
                        f"visible key (must be exactly 0), first at index "
                        f"{first}: {out[first]!r}")
    # Error statistics over the finite outputs (non-finite ones failed above).
    return Comparison(ok, msgs,
                      float(np.max(np.where(finite, err, 0.0), initial=0.0)),
                      float(np.max(np.where(finite, rel, 0.0), initial=0.0)),
                      float(np.max(ratio, initial=0.0)))


def describe(pb: Problem) -> str:
    """A compact one-line description of the problem."""
    shp = lambda o: "x".join(map(str, o.values.shape))  # noqa: E731
    parts = [pb.dtype, f"q={shp(pb.q)}", f"k={shp(pb.k)}", f"v={shp(pb.v)}"]
    if pb.mask is not None:
        kind = "bool" if pb.mask.dtype == "i1" else f"float:{pb.mask.dtype}"
        parts.append(f"mask={kind}:{shp(pb.mask)}")
    if pb.bias is not None:
        parts.append(f"bias={shp(pb.bias)}:{pb.bias.dtype}")
    if pb.causal:
        parts.append(f"causal={pb.causal}")
    if pb.causal_period is not None:
        parts.append(f"causal_period={pb.causal_period}")
    if pb.causal_offset is not None:
        parts.append(f"causal_offset={pb.causal_offset}")
    parts.append(f"scale={pb.scale:.6g}")
    return " ".join(parts)


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def reference_for(pb: Problem, args: argparse.Namespace
                  ) -> tuple[np.ndarray, np.ndarray, float]:
    """Returns (expected output, hidden-row flags, max |q . k|).

    max |q . k| is the largest unscaled dot product: where it exceeds 65504 a
    score accumulated in f16 would overflow."""
    causal = pb.causal if args.reference_causal == "same" else (
        None if args.reference_causal == "none" else args.reference_causal)
    hq, hkv = pb.q.values.shape[-3], pb.k.values.shape[-3]
    kv_heads = (np.arange(hq) % hkv if args.reference_kv_head_map == "modulo"
                else ref.kv_head_index(hq, hkv))
    kw = dict(scale=pb.scale * args.reference_scale_multiplier,
              mask=pb.mask.values if pb.mask is not None else None,
              bias=pb.bias.values if pb.bias is not None else None,
              causal=causal, kv_heads=kv_heads,
              f32_scores=args.reference_scores == "f32")
    if causal:
        kw.update(causal_offset=pb.causal_offset or 0,
                  causal_period=pb.causal_period)
    q, k, v = pb.q.values, pb.k.values, pb.v.values
    if args.reference_operands == "tf32":
        q, k, v = (ref.round_to(x, "tf32") for x in (q, k, v))
    s = ref.scores(q, k, **kw)
    expected = ref.attention(q, k, v, **kw)
    raw = ref.scores(q, k, scale=1.0)
    max_qk = float(np.abs(raw).max())
    return expected, ref.hidden_rows(s), max_qk


def run(args: argparse.Namespace) -> int:
    pb = make_problem(args)
    program = emit_program(pb)
    if args.emit:
        sys.stdout.write(program)
        return 0

    with tempfile.TemporaryDirectory(prefix="attn-check-") as tmp:
        work = args.keep or tmp
        os.makedirs(work, exist_ok=True)
        src = os.path.join(work, "input.mlir")
        lowered = os.path.join(work, "lowered.mlir")
        with open(src, "w") as f:
            f.write(program)
        run_tool([args.attn_opt, *shlex.split(args.pipeline), src,
                  "-o", lowered])
        printed = run_tool(runner_command(args.mlir_runner, args.shared_libs,
                                          lowered))
        if args.keep:
            with open(os.path.join(work, "output.txt"), "w") as f:
                f.write(printed)

    expected, hidden, max_qk = reference_for(pb, args)
    if args.keep:
        np.save(os.path.join(args.keep, "expected.npy"), expected)

    atol, rtol = TOLERANCES[pb.dtype]
    atol = args.atol if args.atol is not None else atol
    rtol = args.rtol if args.rtol is not None else rtol
    summary = f"{describe(pb)} max|q.k|={max_qk:.4g}"

    try:
        sizes, values = parse_printed_memref(printed)
    except ValueError as e:
        print(f"FAIL: {summary}: cannot parse the output: {e}\n{printed[:2000]}")
        return 1
    if sizes and sizes != pb.out_shape:
        print(f"FAIL: {summary}: printed sizes {sizes}, expected {pb.out_shape}")
        return 1
    if values.size != expected.size:
        print(f"FAIL: {summary}: {values.size} values printed, expected "
              f"{expected.size}")
        return 1
    out = values.reshape(expected.shape)
    if args.keep:
        np.save(os.path.join(args.keep, "output.npy"), out)

    cmp = compare(out, expected, hidden, atol, rtol)
    status = "PASS" if cmp.ok else "FAIL"
    print(f"{status}: {summary} hidden_rows={int(hidden.sum())} "
          f"max_abs_err={cmp.max_abs:.3e} max_rel_err={cmp.max_rel:.3e} "
          f"atol={atol:g} rtol={rtol:g} worst/tol={cmp.worst_ratio:.3g}")
    for m in cmp.messages:
        print(f"  {m}")
    return 0 if cmp.ok else 1


def main(argv: Optional[list[str]] = None) -> int:
    parser = build_arg_parser()
    try:
        args = parser.parse_args(argv)
        return run(args)
    except UsageError as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 2
    except ToolError as e:
        print(f"TOOL FAILURE: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
