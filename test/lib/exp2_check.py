#!/usr/bin/python3
"""Checks --attn-approximate-exp2 against numpy's float64 exp2.

Builds a program that applies f32 ``math.exp2`` to a table of inputs as
scalars and as ``vector<4x16xf32>`` (the fused CPU kernel's shape), lowers it
with ``--attn-approximate-exp2`` and the upstream conversions, runs it with
``mlir-runner`` and compares the results' bits with ``exp2`` computed in
float64 here. The inputs: a grid over [-140, 140] in steps of 1/128, random
values, values a few ulp either side of every integer and half-integer from
-128 to 128 (where the rounding to ``n`` changes), and the special values.

Requirements, per input x (r the result, e the float64 exp2):

* x NaN: r is NaN; x < -127 (-inf included): r is +0 exactly; x >= 128
  (+inf included): r is +inf;
* e a normal f32 (x in [-126, 128)): |r - e| at most ``--max-ulp`` units in
  the last place of e (2^(floor(log2 e) - 23)), 1 by default;
* x in [-127, -126) (subnormal results): |r - e| at most 2^-149 (one
  subnormal step);
* x an integer in [-126, 127]: r = 2^x exactly (exp2(0) = 1 is what lets
  the kernels skip a rescaling by exp2(m - m) when a row max stays).

Prints the largest error in ulp; exit status 0 when every input meets its
requirement, 1 otherwise, 2 when a tool fails.

Run with ``/usr/bin/python3``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attn_check import (ToolError, add_runner_arguments,  # noqa: E402
                        lower_and_run)

COLUMNS = 16
ROWS_PER_VECTOR = 4


def inputs(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    grid = np.arange(-140 * 128, 140 * 128 + 1) / 128.0
    uniform = rng.uniform(-135.0, 135.0, 20000)
    small = rng.uniform(-1.0, 1.0, 2000) * 10.0 ** rng.uniform(-30, 0, 2000)
    edges = []
    for k in range(-128 * 2, 128 * 2 + 1):
        x = np.float32(k / 2.0)
        edges.append(x)
        up = down = x
        for _ in range(3):
            up = np.nextafter(up, np.float32(np.inf))
            down = np.nextafter(down, np.float32(-np.inf))
            edges.extend([up, down])
    specials = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-45, -1e-45,
                -126.0, -126.5, -127.0, -127.25, -128.0, -149.0, -150.0,
                127.0, 127.5, 127.99, 128.0, 128.5, 1e30, -1e30,
                np.finfo(np.float32).max, -np.finfo(np.float32).max]
    x = np.concatenate([grid, uniform, small, np.array(edges, np.float64),
                        np.array(specials, np.float64)]).astype(np.float32)
    block = COLUMNS * ROWS_PER_VECTOR
    pad = (-len(x)) % block
    return np.concatenate([x, np.zeros(pad, np.float32)])


def program(x: np.ndarray) -> str:
    rows = len(x) // COLUMNS
    t = f"memref<{rows}x{COLUMNS}xf32>"
    ti = f"memref<{rows}x{COLUMNS}xi32>"
    vt = f"vector<{ROWS_PER_VECTOR}x{COLUMNS}xf32>"
    vi = f"vector<{ROWS_PER_VECTOR}x{COLUMNS}xi32>"
    blob = "0x" + x.astype("<f4").tobytes().hex().upper()
    return f"""
memref.global "private" constant @inputs : {t} = dense<"{blob}">
func.func private @printMemrefI32(memref<*xi32>)

func.func @main() {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cv = arith.constant {ROWS_PER_VECTOR} : index
  %cc = arith.constant {COLUMNS} : index
  %rows = arith.constant {rows} : index
  %pad = arith.constant 0.0 : f32
  %in = memref.get_global @inputs : {t}
  %vec = memref.alloc() : {ti}
  %sca = memref.alloc() : {ti}
  scf.for %i = %c0 to %rows step %cv {{
    %x = vector.transfer_read %in[%i, %c0], %pad {{in_bounds = [true, true]}} : {t}, {vt}
    %y = math.exp2 %x : {vt}
    %b = arith.bitcast %y : {vt} to {vi}
    vector.transfer_write %b, %vec[%i, %c0] {{in_bounds = [true, true]}} : {vi}, {ti}
  }}
  scf.for %i = %c0 to %rows step %c1 {{
    scf.for %j = %c0 to %cc step %c1 {{
      %x = memref.load %in[%i, %j] : {t}
      %y = math.exp2 %x : f32
      %b = arith.bitcast %y : f32 to i32
      memref.store %b, %sca[%i, %j] : {ti}
    }}
  }}
  %v = memref.cast %vec : {ti} to memref<*xi32>
  %s = memref.cast %sca : {ti} to memref<*xi32>
  call @printMemrefI32(%v) : (memref<*xi32>) -> ()
  call @printMemrefI32(%s) : (memref<*xi32>) -> ()
  memref.dealloc %vec : {ti}
  memref.dealloc %sca : {ti}
  return
}}
"""


def parse(stdout: str, count: int) -> list[np.ndarray]:
    results = []
    for part in stdout.split("Unranked Memref")[1:]:
        data = part.split("data =", 1)[1]
        ints = np.array([int(v) for v in re.findall(r"-?\d+", data)],
                        np.int64)
        if len(ints) != count:
            raise ValueError(f"expected {count} values, got {len(ints)}")
        results.append((ints & 0xFFFFFFFF).astype(np.uint32).view(np.float32))
    return results


def check(name: str, x: np.ndarray, r: np.ndarray, max_ulp: float) -> int:
    x64 = x.astype(np.float64)
    with np.errstate(over="ignore"):
        e = np.exp2(x64)
    r64 = r.astype(np.float64)
    failures = []
    nan = np.isnan(x)
    zero = x < -127
    inf = x >= 128
    sub = (x >= -127) & (x < -126)
    normal = ~(nan | zero | inf | sub)
    failures += [(i, "not NaN") for i in np.flatnonzero(nan & ~np.isnan(r))]
    failures += [(i, "not +0") for i in np.flatnonzero(
        zero & ~((r == 0) & ~np.signbit(r)))]
    failures += [(i, "not +inf") for i in np.flatnonzero(inf & (r != np.inf))]
    sub_err = np.abs(r64[sub] - e[sub]) / 2.0 ** -149
    failures += [(i, f"{err:.2f} subnormal steps") for i, err in
                 zip(np.flatnonzero(sub), sub_err) if not err <= 1.0]
    ulp = 2.0 ** (np.floor(np.log2(e[normal])) - 23)
    ulp_err = np.abs(r64[normal] - e[normal]) / ulp
    failures += [(i, f"{err:.2f} ulp") for i, err in
                 zip(np.flatnonzero(normal), ulp_err) if not err <= max_ulp]
    exact = normal & (x == np.round(x))
    failures += [(i, "not exact") for i in np.flatnonzero(exact & (r64 != e))]
    worst = float(np.max(ulp_err))
    mean = float(np.mean(ulp_err))
    print(f"{name}: {len(x)} inputs ({int(normal.sum())} normal results, "
          f"{int(sub.sum())} subnormal, {int(zero.sum())} zero, "
          f"{int(inf.sum())} inf, {int(nan.sum())} NaN, {int(exact.sum())} "
          f"integers): max error "
          f"{worst:.3f} ulp, mean {mean:.3f} ulp; {len(failures)} failures")
    for i, what in failures[:20]:
        print(f"  FAIL x = {x[i]!r} ({x[i].view(np.uint32):#010x}): "
              f"got {r[i]!r}, exp2 = {e[i]!r}: {what}")
    return len(failures)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_runner_arguments(parser)
    parser.add_argument("--max-ulp", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    x = inputs(args.seed)
    try:
        lowered, printed = lower_and_run(
            args.attn_opt,
            ["--attn-approximate-exp2", "--convert-vector-to-scf=full-unroll",
             "--lower-affine", "--convert-scf-to-cf",
             "--convert-vector-to-llvm", "--convert-to-llvm",
             "--reconcile-unrealized-casts"],
            program(x), args.mlir_runner, args.shared_libs)
    except ToolError as e:
        print(str(e)[:2000], file=sys.stderr)
        return 2
    if "exp2" in lowered:
        print("the lowered program still calls exp2", file=sys.stderr)
        return 2
    try:
        vector, scalar = parse(printed, len(x))
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    failures = check("vector<4x16xf32>", x, vector, args.max_ulp)
    failures += check("f32", x, scalar, args.max_ulp)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
