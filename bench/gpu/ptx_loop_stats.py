#!/usr/bin/env python3
"""Static instruction mix of one interior K/V step of each kernel, from PTX.

Usage: ptx_loop_stats.py PTX_DIR (the ptx/ folder of `make gpu-artifacts`)

The K/V loop's header is the label that the loop's back edge branches to
(the first backward branch whose region holds mma.sync or wgmma). One
interior step is the cheapest path through the loop's basic blocks from
the header back to it: the step of a block that needs no masking and whose
successor is prefetched without per-row predicates, which is what all but
the last and the diagonal blocks run. Prints, per kernel, the tensor-core
instructions of that step ("tc") and one warp's share of their work in
m16n8k16 mma.sync units ("mma"; a wgmma m64nNk16 is N/8 of them per warp),
the shared-memory fragment loads (ldmatrix, or ld.shared on the TF32 path)
per mma, cp.async chunks, barriers, ex2 and shuffles, and the other
instructions (wgmma descriptors included) per mma unit. A static count, not
a timing.
"""

from __future__ import annotations

import heapq
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


def loop_header(lines):
    """The label of the K/V loop's header, or None."""
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
            return m.group(1)
    return None


def basic_blocks(lines):
    """The basic blocks, in program order: (body lines, successors), with
    successors as block indices."""
    blocks, labels = [], {}
    body, falls = [], True
    for line in lines:
        text = line.split("//")[0].strip()
        m = LABEL.match(text)
        if m:
            blocks.append((body, falls))
            body, falls = [], True
            labels[m.group(1)] = len(blocks)
            continue
        body.append(line)
        branch = BRANCH.search(text)
        if branch or text.startswith(("ret;", "exit;")):
            # A predicated branch falls through; bra, ret and exit do not.
            blocks.append((body, bool(branch) and text.startswith("@")))
            body, falls = [], True
    blocks.append((body, False))
    graph = []
    for i, (body, falls) in enumerate(blocks):
        succ = []
        branch = BRANCH.search(body[-1].split("//")[0]) if body else None
        if branch and branch.group(1) in labels:
            succ.append(labels[branch.group(1)])
        if falls and i + 1 < len(blocks):
            succ.append(i + 1)
        graph.append((body, succ))
    return graph, labels


def loop_region(lines):
    """The lines of the cheapest path from the loop header back to it: one
    interior K/V step."""
    header = loop_header(lines)
    if header is None:
        return []
    graph, labels = basic_blocks(lines)
    cost = [len(list(instructions(body))) for body, _ in graph]
    start = labels[header]
    best = {start: cost[start]}
    queue = [(cost[start], start, (start,))]
    while queue:
        c, node, path = heapq.heappop(queue)
        for nxt in graph[node][1]:
            if nxt == start:
                return [x for i in path for x in graph[i][0]]
            if best.get(nxt, c + cost[nxt] + 1) <= c + cost[nxt]:
                continue
            best[nxt] = c + cost[nxt]
            heapq.heappush(queue, (c + cost[nxt], nxt, path + (nxt,)))
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
