#!/usr/bin/env python3
"""Static instruction mix of one K/V step of each kernel, from its PTX.

Usage: ptx_loop_stats.py PTX_DIR (the ptx/ folder of `make gpu-artifacts`)

The K/V loop is the PTX region from the label that the loop's back edge
branches to through that back edge (the first backward branch whose region
holds mma.sync or wgmma). Prints, per kernel, the tensor-core instructions
of one step ("tc") and one warp's share of their work in m16n8k16 mma.sync
units ("mma"; a wgmma m64nNk16 is N/8 of them per warp), the shared-memory
fragment loads (ldmatrix, or ld.shared on the TF32 path) per mma, cp.async
chunks, barriers, ex2 and shuffles, and the other instructions (wgmma
descriptors and P's stores included) per mma unit. The counts include the
masking branch, which only blocks that cross Lk or the diagonal run, so
"other" is an upper bound. A static count, not a timing.
"""

from __future__ import annotations

import os
import re
import sys

LABEL = re.compile(r"^(\$L__\w+):")
BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$L__\w+);")


def instructions(lines):
    """The opcode of each instruction line (no labels, braces, comments)."""
    for line in lines:
        text = line.split("//")[0].strip()
        if not text or text.endswith(":") or text[0] in "{}.%" \
                or text.startswith(("$", ")")):
            continue
        if text.startswith("@"):
            text = text.split(None, 1)[1] if " " in text else ""
        op = text.split()[0].rstrip(";") if text else ""
        if op and re.match(r"^[a-z]", op):
            yield op


def loop_region(lines):
    labels = {}
    for i, line in enumerate(lines):
        m = LABEL.match(line.strip())
        if m:
            labels[m.group(1)] = i
    for i, line in enumerate(lines):
        m = BRANCH.search(line)
        if not m or m.group(1) not in labels or labels[m.group(1)] > i:
            continue
        region = lines[labels[m.group(1)]:i + 1]
        if any("mma.sync" in x or "wgmma.mma_async" in x for x in region):
            return region
    return []


def stats(path):
    region = loop_region(open(path).read().splitlines())
    ops = list(instructions(region))
    count = lambda p: sum(op.startswith(p) for op in ops)  # noqa: E731
    wgmma = [op for op in ops if op.startswith("wgmma.mma_async")]
    tc = count("mma.sync") + len(wgmma)
    # m16n8k16 units per warp (the PTX is one warp's program): a wgmma
    # .m64nNk16 does 64 N 16 multiply-adds for the 4 warps of its group.
    mma = count("mma.sync") + sum(
        int(re.search(r"\.m64n(\d+)k16", op).group(1)) // 8 for op in wgmma)
    frag = count("ldmatrix") + count("ld.shared")
    return {"tc": tc, "mma": mma, "frag": frag,
            "cp.async": count("cp.async.cg"),
            "bar": count("bar.sync"), "ex2": sum("ex2" in x for x in region),
            "shfl": count("shfl"), "total": len(ops)}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = sys.argv[1]
    print(f"{'kernel':34} {'tc':>4} {'mma':>5} {'frag':>5} {'frag/mma':>8} "
          f"{'cp.async':>8} {'bar':>4} {'ex2':>4} {'shfl':>5} "
          f"{'other/mma':>9}")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".ptx"):
            continue
        s = stats(os.path.join(folder, name))
        kernel = name.split(".")[0].removeprefix("attn_").removesuffix(
            "_kernel")
        if not s["mma"]:
            print(f"{kernel:34} (no K/V loop found)")
            continue
        other = s["total"] - s["tc"]
        print(f"{kernel:34} {s['tc']:>4} {s['mma']:>5} {s['frag']:>5} "
              f"{s['frag'] / s['mma']:>8.2f} {s['cp.async']:>8} "
              f"{s['bar']:>4} {s['ex2']:>4} {s['shfl']:>5} "
              f"{other / s['mma']:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
