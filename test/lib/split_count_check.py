#!/usr/bin/python3
"""Checks the split-KV count rule's host code against an exact model of it.

``--attn-to-gpu="split-kv=0"`` chooses the number of K/V splits on the host
at run time (``emitSplitCount`` in lib/Dialect/Attn/Transforms/GPU/
SplitKV.cpp). This script defines that host code as functions with the
test-only pass ``--attn-test-split-count``, one per (wave, max splits)
configuration, runs them on the CPU with ``mlir-runner`` over a table of
grids (query blocks x heads x batch) and K/V step counts, and compares each
count with FlashAttention-2's rule computed here in exact rational
arithmetic:

* a grid of at least 80% of a wave runs unsplit (1);
* else, among the split counts ``s`` from 1 to min(max splits, wave, K/V
  steps) that change the steps per split (``s == 1`` or
  ``ceil(n / s) != ceil(n / (s - 1))``), the fewest whose wave efficiency
  ``blocks * s / (wave * ceil(blocks * s / wave))`` is at least 85% of the
  best efficiency among those same eligible counts.

The code under test computes efficiencies in f32; where an eligible count's
efficiency is within 1e-5 (relative) of the 85% threshold, either side of
it is accepted.

The table is checked to exercise the rule: most grids split, and some
answers change if the best efficiency were taken over all counts, eligible
or not (the bug this test was written for).

Exit status: 0 when every count matches, 1 on a mismatch, 2 when a tool
fails.

Run with ``/usr/bin/python3``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attn_check import (ToolError, add_runner_arguments,  # noqa: E402
                        lower_and_run)

# (wave blocks, max splits): H100/H200 (132 SMs) and A100 (108 SMs) with one
# and two resident blocks, a 100-SM part (a wave divisible by 5: the 80%
# edge is exact), one multiprocessor, an odd wave, and a small cap.
CONFIGS = [(132, 128), (264, 128), (108, 128), (216, 128), (200, 128),
           (2, 128), (7, 128), (264, 4)]

# The 85% threshold is compared in f32 by the code under test.
THRESHOLD = Fraction(85, 100)
TIE = Fraction(1, 100000)


def eligible(splits: int, kv_blocks: int) -> bool:
    return splits == 1 or (-(-kv_blocks // splits) !=
                           -(-kv_blocks // (splits - 1)))


def efficiency(blocks: int, splits: int, wave: int) -> Fraction:
    total = blocks * splits
    return Fraction(total, wave * -(-total // wave))


def expected(blocks: int, kv_blocks: int, wave: int, max_splits: int,
             best_over_all: bool = False) -> set[int]:
    """The counts the rule may return (one, or two at an f32 near-tie).

    ``best_over_all`` takes the best efficiency over every count, eligible
    or not: the rule as it was before it matched FlashAttention-2's.
    """
    if 5 * blocks >= 4 * wave:
        return {1}
    most = min(max_splits, wave, max(kv_blocks, 1))
    candidates = [s for s in range(1, most + 1) if eligible(s, kv_blocks)]
    pool = range(1, most + 1) if best_over_all else candidates
    best = max(efficiency(blocks, s, wave) for s in pool)

    def pick(threshold: Fraction) -> int:
        for s in candidates:
            if efficiency(blocks, s, wave) >= threshold * best:
                return s
        return 1

    answers = {pick(THRESHOLD)}
    if any(abs(efficiency(blocks, s, wave) - THRESHOLD * best) <=
           TIE * best for s in candidates):
        answers |= {pick(THRESHOLD * (1 - TIE)), pick(THRESHOLD * (1 + TIE))}
    return answers


def cases(wave: int, rng: random.Random) -> list[tuple[int, int]]:
    """Grids up to past the 80% edge; K/V steps from none to many."""
    edge = -(-4 * wave // 5)
    blocks = sorted({1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 48, 64, 96}
                    | {max(edge - 1, 1), edge, edge + 1, wave}
                    | {rng.randint(1, wave) for _ in range(12)})
    kv = sorted({0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 16, 23, 32, 47, 64,
                 100, 127, 128, 129, 200, 256, 1000, 4096}
                | {rng.randint(1, 300) for _ in range(15)})
    return [(b, k) for b in blocks for k in kv]


def program(table: list[tuple[int, int, list[tuple[int, int]]]]) -> str:
    """One declaration per configuration; @main prints every count."""
    lines = []
    for i, (wave, max_splits, _) in enumerate(table):
        lines.append(
            f"func.func private @count{i}(index, index) -> index attributes "
            f"{{attn.test.wave_blocks = {wave} : i64, "
            f"attn.test.max_splits = {max_splits} : i64}}")
    for i, (_, _, grid) in enumerate(table):
        flat = ", ".join(f"[{b}, {k}]" for b, k in grid)
        lines.append(f"memref.global \"private\" constant @grid{i} : "
                     f"memref<{len(grid)}x2xindex> = dense<[{flat}]>")
    lines.append("func.func @main() {")
    lines.append("  %c0 = arith.constant 0 : index")
    lines.append("  %c1 = arith.constant 1 : index")
    for i, (_, _, grid) in enumerate(table):
        ty = f"memref<{len(grid)}x2xindex>"
        lines += [
            f"  %g{i} = memref.get_global @grid{i} : {ty}",
            f"  %n{i} = arith.constant {len(grid)} : index",
            f"  scf.for %i = %c0 to %n{i} step %c1 {{",
            f"    %b = memref.load %g{i}[%i, %c0] : {ty}",
            f"    %k = memref.load %g{i}[%i, %c1] : {ty}",
            f"    %s = func.call @count{i}(%b, %k) : (index, index) -> index",
            "    vector.print %s : index",
            "  }",
        ]
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_runner_arguments(parser)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    table = [(wave, cap, cases(wave, rng)) for wave, cap in CONFIGS]
    try:
        lowered, printed = lower_and_run(
            args.attn_opt,
            ["--attn-test-split-count", "--arith-expand",
             "--convert-scf-to-cf", "--convert-vector-to-llvm",
             "--convert-to-llvm", "--reconcile-unrealized-casts"],
            program(table), args.mlir_runner, args.shared_libs)
    except ToolError as e:
        print(str(e)[:2000], file=sys.stderr)
        return 2
    counts = [int(line) for line in printed.split()]
    total = sum(len(grid) for _, _, grid in table)
    if len(counts) != total:
        print(f"expected {total} counts, got {len(counts)}", file=sys.stderr)
        return 2

    failures = split = differs = ties = 0
    it = iter(counts)
    for wave, cap, grid in table:
        for blocks, kv in grid:
            got = next(it)
            want = expected(blocks, kv, wave, cap)
            ties += len(want) > 1
            split += got > 1
            differs += expected(blocks, kv, wave, cap, True) != want
            if got not in want:
                failures += 1
                if failures <= 20:
                    print(f"FAIL wave={wave} max_splits={cap} "
                          f"blocks={blocks} kv_blocks={kv}: got {got}, "
                          f"expected {sorted(want)}")
    print(f"{total} grids over {len(CONFIGS)} configurations: {split} split, "
          f"{differs} where the best over ineligible counts would differ, "
          f"{ties} near-ties; {failures} mismatches")
    # A table that never splits, or cannot tell the eligible best from the
    # best over all counts, would prove little.
    if split < total // 3 or differs == 0:
        print("the table does not exercise the rule", file=sys.stderr)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
