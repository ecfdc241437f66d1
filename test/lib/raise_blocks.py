#!/usr/bin/python3
"""Scaling check for --attn-raise.

    raise_blocks.py generate N            # a module with N attention blocks
    raise_blocks.py bias-chain N          # one attention whose scores get
                                          # a bias added N times
    raise_blocks.py bias-tree N           # ... the sum of N products of a
                                          # bias, added in a balanced tree
    raise_blocks.py scalar-chain N        # ... N scalar adds of the bias
                                          # in one linalg.generic body
    raise_blocks.py check-time FILE LIMIT # --mlir-timing output: AttnRaise
                                          # must take less than LIMIT seconds

Each block is a causal multi-head attention in linalg (a generic
contraction, a masked and scaled decomposed softmax, another contraction),
chained so that block i + 1 reads the output of block i, and every other
block uses a constant triangular mask instead of an index compare.
"""

import re
import sys

B, H, L, D = 1, 8, 128, 64
T4 = f"tensor<{B}x{H}x{L}x{D}xf32>"
S4 = f"tensor<{B}x{H}x{L}x{L}xf32>"
R3 = f"tensor<{B}x{H}x{L}xf32>"


def block(n, x, tri):
    p = f"b{n}_"
    mask = (f"    %{p}i = linalg.index 2 : index\n"
            f"    %{p}j = linalg.index 3 : index\n"
            f"    %{p}vis = arith.cmpi ule, %{p}j, %{p}i : index\n"
            f"    %{p}r = arith.select %{p}vis, %{p}sc, %ninf : f32\n")
    ins, maps, args = "", "", ""
    if tri:
        ins = ", %tri"
        maps = ", affine_map<(b, h, i, j) -> (i, j)>"
        args = f", %{p}t: f32"
        mask = f"    %{p}r = arith.addf %{p}sc, %{p}t : f32\n"
    return f"""  %{p}s = linalg.generic {{indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}} ins(%{x}, %{x} : {T4}, {T4}) outs(%fs : {S4}) {{
  ^bb0(%{p}a: f32, %{p}b: f32, %{p}c: f32):
    %{p}m = arith.mulf %{p}a, %{p}b : f32
    %{p}y = arith.addf %{p}c, %{p}m : f32
    linalg.yield %{p}y : f32
  }} -> {S4}
  %{p}x = linalg.generic {{indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>{maps}, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%{p}s{ins} : {S4}{", tensor<%dx%dxf32>" % (L, L) if tri else ""}) outs(%es : {S4}) {{
  ^bb0(%{p}v: f32{args}, %{p}o: f32):
    %{p}sc = arith.mulf %{p}v, %scale : f32
{mask}    linalg.yield %{p}r : f32
  }} -> {S4}
  %{p}max = linalg.generic {{indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}} ins(%{p}x : {S4}) outs(%fm : {R3}) {{
  ^bb0(%{p}e1: f32, %{p}e2: f32):
    %{p}mx = arith.maximumf %{p}e1, %{p}e2 : f32
    linalg.yield %{p}mx : f32
  }} -> {R3}
  %{p}e = linalg.generic {{indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%{p}x, %{p}max : {S4}, {R3}) outs(%es : {S4}) {{
  ^bb0(%{p}f1: f32, %{p}f2: f32, %{p}f3: f32):
    %{p}d = arith.subf %{p}f1, %{p}f2 : f32
    %{p}ex = math.exp %{p}d : f32
    linalg.yield %{p}ex : f32
  }} -> {S4}
  %{p}sum = linalg.generic {{indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}} ins(%{p}e : {S4}) outs(%fz : {R3}) {{
  ^bb0(%{p}g1: f32, %{p}g2: f32):
    %{p}sm = arith.addf %{p}g1, %{p}g2 : f32
    linalg.yield %{p}sm : f32
  }} -> {R3}
  %{p}p = linalg.generic {{indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%{p}e, %{p}sum : {S4}, {R3}) outs(%es : {S4}) {{
  ^bb0(%{p}h1: f32, %{p}h2: f32, %{p}h3: f32):
    %{p}q = arith.divf %{p}h1, %{p}h2 : f32
    linalg.yield %{p}q : f32
  }} -> {S4}
  %{p}out = linalg.generic {{indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}} ins(%{p}p, %{x} : {S4}, {T4}) outs(%fo : {T4}) {{
  ^bb0(%{p}k1: f32, %{p}k2: f32, %{p}k3: f32):
    %{p}pm = arith.mulf %{p}k1, %{p}k2 : f32
    %{p}pa = arith.addf %{p}k3, %{p}pm : f32
    linalg.yield %{p}pa : f32
  }} -> {T4}
"""


def generate(n):
    tri = "[" + ", ".join(
        "[" + ", ".join("0.0" if j <= i else "0xFF800000" for j in range(L)) + "]"
        for i in range(L)) + "]"
    out = [f"func.func @blocks(%x0: {T4}) -> {T4} {{",
           "  %zero = arith.constant 0.0 : f32",
           "  %ninf = arith.constant 0xFF800000 : f32",
           "  %scale = arith.constant 0.125 : f32",
           f"  %tri = arith.constant dense<{tri}> : tensor<{L}x{L}xf32>",
           f"  %es = tensor.empty() : {S4}",
           f"  %fs = linalg.fill ins(%zero : f32) outs(%es : {S4}) -> {S4}",
           f"  %er = tensor.empty() : {R3}",
           f"  %fm = linalg.fill ins(%ninf : f32) outs(%er : {R3}) -> {R3}",
           f"  %fz = linalg.fill ins(%zero : f32) outs(%er : {R3}) -> {R3}",
           f"  %eo = tensor.empty() : {T4}",
           f"  %fo = linalg.fill ins(%zero : f32) outs(%eo : {T4}) -> {T4}"]
    x = "x0"
    for i in range(n):
        out.append(block(i, x, tri=i % 2 == 1).rstrip("\n"))
        x = f"b{i}_out"
    out.append(f"  return %{x} : {T4}")
    out.append("}")
    print("\n".join(out))


QT, KT = "tensor<8x16x64xf32>", "tensor<8x32x64xf32>"
ST = "tensor<8x16x32xf32>"


def scored_attention(name, steps, last):
    """Batched attention whose scores %x0 become %`last` through `steps`
    (lines that may read the runtime bias %b) before the softmax."""
    out = [f"func.func @{name}(%q: {QT}, %k: {KT}, %v: {KT}, %b: {ST}) -> {QT} {{",
           "  %zero = arith.constant 0.0 : f32",
           "  %ekt = tensor.empty() : tensor<8x64x32xf32>",
           f"  %kt = linalg.transpose ins(%k : {KT}) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]",
           f"  %es = tensor.empty() : {ST}",
           f"  %fs = linalg.fill ins(%zero : f32) outs(%es : {ST}) -> {ST}",
           f"  %x0 = linalg.batch_matmul ins(%q, %kt : {QT}, tensor<8x64x32xf32>) outs(%fs : {ST}) -> {ST}"]
    out += steps
    out += [f"  %p = linalg.softmax dimension(2) ins(%{last} : {ST}) outs(%es : {ST}) -> {ST}",
            f"  %eo = tensor.empty() : {QT}",
            f"  %fo = linalg.fill ins(%zero : f32) outs(%eo : {QT}) -> {QT}",
            f"  %o = linalg.batch_matmul ins(%p, %v : {ST}, {KT}) outs(%fo : {QT}) -> {QT}",
            f"  return %o : {QT}",
            "}"]
    print("\n".join(out))


def bias_chain(n):
    """The bias added n times, one arith.addf on tensors each: values
    nested n deep."""
    scored_attention("bias_chain", [
        f"  %x{i} = arith.addf %x{i - 1}, %b : {ST}" for i in range(1, n + 1)],
        f"x{n}")


def bias_tree(n):
    """n products b * b (distinct values) summed in a balanced tree, then
    added to the scores: about 2n values, nested only log2(n) deep."""
    steps = [f"  %t{i} = arith.mulf %b, %b : {ST}" for i in range(n)]
    level, count = "t", n
    depth = 0
    while count > 1:
        depth += 1
        nxt = f"l{depth}_"
        for i in range(count // 2):
            steps.append(f"  %{nxt}{i} = arith.addf %{level}{2 * i}, "
                         f"%{level}{2 * i + 1} : {ST}")
        if count % 2:
            steps.append(f"  %{nxt}{count // 2} = arith.addf "
                         f"%{level}{count - 1}, %b : {ST}")
        level, count = nxt, (count + 1) // 2
    steps.append(f"  %x1 = arith.addf %x0, %{level}0 : {ST}")
    scored_attention("bias_tree", steps, "x1")


def scalar_chain(n):
    """The bias added n times inside one linalg.generic body: scalar ops
    nested n deep."""
    body = [f"    %y{i} = arith.addf %y{i - 1}, %c : f32" for i in range(1, n + 1)]
    scored_attention("scalar_chain", [
        "  %x1 = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, "
        "affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], "
        "iterator_types = [\"parallel\", \"parallel\", \"parallel\"]} "
        f"ins(%x0, %b : {ST}, {ST}) outs(%es : {ST}) {{",
        "  ^bb0(%y0: f32, %c: f32, %unused: f32):", *body,
        f"    linalg.yield %y{n} : f32", f"  }} -> {ST}"], "x1")


def check_time(path, limit):
    text = open(path).read()
    m = re.search(r"^\s*([0-9.]+)\s+\(\s*[0-9.]+%\)\s+AttnRaise\s*$", text,
                  re.MULTILINE)
    if not m:
        sys.stderr.write("error: no AttnRaise line in the timing report\n" + text)
        return 1
    seconds = float(m.group(1))
    print(f"AttnRaise took {seconds:.4f} s (limit {limit} s)")
    return 0 if seconds < limit else 1


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        generate(int(sys.argv[2]))
    elif sys.argv[1] == "bias-chain":
        bias_chain(int(sys.argv[2]))
    elif sys.argv[1] == "bias-tree":
        bias_tree(int(sys.argv[2]))
    elif sys.argv[1] == "scalar-chain":
        scalar_chain(int(sys.argv[2]))
    else:
        sys.exit(check_time(sys.argv[2], float(sys.argv[3])))
