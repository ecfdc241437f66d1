#!/usr/bin/python3
"""Scaling check for --attn-raise.

    raise_blocks.py generate N            # a module with N attention blocks
    raise_blocks.py bias-chain N          # one attention whose scores get
                                          # a bias added N times
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


def bias_chain(n):
    """Batched attention whose scores get one runtime bias added n times,
    one arith.addf on tensors each: about n values for --attn-raise to
    analyze."""
    qt, kt, vt = "tensor<8x16x64xf32>", "tensor<8x32x64xf32>", "tensor<8x32x64xf32>"
    st = "tensor<8x16x32xf32>"
    out = [f"func.func @bias_chain(%q: {qt}, %k: {kt}, %v: {vt}, %b: {st}) -> {qt} {{",
           "  %zero = arith.constant 0.0 : f32",
           "  %ekt = tensor.empty() : tensor<8x64x32xf32>",
           f"  %kt = linalg.transpose ins(%k : {kt}) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]",
           f"  %es = tensor.empty() : {st}",
           f"  %fs = linalg.fill ins(%zero : f32) outs(%es : {st}) -> {st}",
           f"  %x0 = linalg.batch_matmul ins(%q, %kt : {qt}, tensor<8x64x32xf32>) outs(%fs : {st}) -> {st}"]
    for i in range(1, n + 1):
        out.append(f"  %x{i} = arith.addf %x{i - 1}, %b : {st}")
    out += [f"  %p = linalg.softmax dimension(2) ins(%x{n} : {st}) outs(%es : {st}) -> {st}",
            f"  %eo = tensor.empty() : {qt}",
            f"  %fo = linalg.fill ins(%zero : f32) outs(%eo : {qt}) -> {qt}",
            f"  %o = linalg.batch_matmul ins(%p, %v : {st}, {vt}) outs(%fo : {qt}) -> {qt}",
            f"  return %o : {qt}",
            "}"]
    print("\n".join(out))


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
    else:
        sys.exit(check_time(sys.argv[2], float(sys.argv[3])))
