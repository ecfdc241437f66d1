#!/usr/bin/python3
"""Generates test/Integration/CPU/raise-*.mlir.

Each generated file holds unfused attention graphs in the forms --attn-raise
accepts (one function per form) and a @main that calls each of them on
random inputs, embedded as constants, and prints the results. The lit RUN
line runs raise_compare.py, which executes the file with and without
--attn-raise and compares the printed outputs.

    /usr/bin/python3 test/lib/gen_raise_tests.py test/Integration/CPU

Deterministic: the same seed gives the same files.
"""

from __future__ import annotations

import os
import sys

import numpy as np

B, H, LQ, LK, D, DV = 2, 2, 8, 12, 8, 4
HQ, HKV = 4, 2
NEG_INF = "0xFF800000"
NEG_INF_F16 = "0xFC00"

rng = np.random.RandomState(1234)


def ty(shape, elt="f32"):
    return "tensor<" + "x".join(str(s) for s in shape) + f"x{elt}>"


def fmt_value(x, elt):
    if elt == "i1":
        return "true" if x else "false"
    if elt.startswith("i"):
        return str(int(x))
    if np.isneginf(x):
        return {"f32": NEG_INF, "f16": NEG_INF_F16, "bf16": "0xFF80"}[elt]
    text = f"{float(x):.6g}"
    if "e" in text and "." not in text:
        return text.replace("e", ".0e")
    return text if any(c in text for c in ".en") else text + ".0"


def dense(arr, elt):
    def rec(a):
        if a.ndim == 0:
            return fmt_value(a.item(), elt)
        return "[" + ", ".join(rec(x) for x in a) + "]"
    return f"dense<{rec(np.asarray(arr))}> : {ty(arr.shape, elt)}"


def ids(n, names="abcdefgh"):
    return ", ".join(names[:n])


def amap(n, results):
    return f"affine_map<({ids(n)}) -> ({', '.join(results)})>"


class Func:
    """One kernel: its text and the random inputs main passes to it."""

    def __init__(self, name, args, result, body, ir=()):
        self.name, self.args, self.result, self.body = name, args, result, body
        # FileCheck lines (prefix IR) on the raised function.
        self.ir = list(ir)

    def text(self):
        sig = ", ".join(f"%{n}: {t}" for n, t, _ in self.args)
        return (f"func.func @{self.name}({sig}) -> {self.result} {{\n"
                f"{self.body}}}\n")


# ---------------------------------------------------------------------------
# Building blocks (text snippets)
# ---------------------------------------------------------------------------

def fill(name, shape, value, elt="f32"):
    return (f"  %{name}_e = tensor.empty() : {ty(shape, elt)}\n"
            f"  %{name}_c = arith.constant {value} : {elt}\n"
            f"  %{name} = linalg.fill ins(%{name}_c : {elt}) outs(%{name}_e : "
            f"{ty(shape, elt)}) -> {ty(shape, elt)}\n")


def contract(name, a, at, b, bt, out_shape, amap_, bmap_, omap_, n,
             out_elt="f32", ext=""):
    """A linalg.generic contraction; `ext` upcasts the operands."""
    iters = ", ".join(['"parallel"'] * (n - 1) + ['"reduction"'])
    in_elt = at.split("x")[-1].rstrip(">")
    s = fill(f"{name}_acc", out_shape, "0.0", out_elt)
    if ext:
        body = (f"    %xa = arith.extf %a : {in_elt} to {out_elt}\n"
                f"    %yb = arith.extf %b : {in_elt} to {out_elt}\n"
                f"    %m = arith.mulf %xa, %yb : {out_elt}\n")
    else:
        body = f"    %m = arith.mulf %a, %b : {out_elt}\n"
    s += (f"  %{name} = linalg.generic {{indexing_maps = [{amap_}, {bmap_}, "
          f"{omap_}], iterator_types = [{iters}]}} ins(%{a}, %{b} : {at}, {bt}) "
          f"outs(%{name}_acc : {ty(out_shape, out_elt)}) {{\n"
          f"  ^bb0(%a: {in_elt}, %b: {in_elt}, %c: {out_elt}):\n{body}"
          f"    %r = arith.addf %c, %m : {out_elt}\n"
          f"    linalg.yield %r : {out_elt}\n"
          f"  }} -> {ty(out_shape, out_elt)}\n")
    return s


def elementwise(name, ins, out_shape, body, maps=None, out_elt="f32",
                sizes=""):
    """A parallel linalg.generic; `ins` is a list of (value, type, map);
    `sizes`: the dynamic sizes of its init."""
    n = len(out_shape)
    ident = amap(n, list(ids(n).split(", ")))
    maps_ = [m if m else ident for _, _, m in ins] + [ident]
    iters = ", ".join(['"parallel"'] * n)
    args = ", ".join(f"%in{i}: {t.split('x')[-1].rstrip('>')}"
                     for i, (_, t, _) in enumerate(ins))
    ins_ = ", ".join(f"%{v}" for v, _, _ in ins)
    ins_t = ", ".join(t for _, t, _ in ins)
    return (f"  %{name}_e = tensor.empty({sizes}) : {ty(out_shape, out_elt)}\n"
            f"  %{name} = linalg.generic {{indexing_maps = [{', '.join(maps_)}],"
            f" iterator_types = [{iters}]}} ins({ins_} : {ins_t}) "
            f"outs(%{name}_e : {ty(out_shape, out_elt)}) {{\n"
            f"  ^bb0({args}{', ' if args else ''}%out: {out_elt}):\n{body}"
            f"  }} -> {ty(out_shape, out_elt)}\n")


def softmax_generic(name, x, shape, max_sub=True, recip=False):
    """Decomposed softmax along the last dim with linalg.generic."""
    n = len(shape)
    row = shape[:-1]
    full = ids(n).split(", ")
    rmap = amap(n, full[:-1])
    ident = amap(n, full)
    iters_red = ", ".join(['"parallel"'] * (n - 1) + ['"reduction"'])
    s = ""
    if max_sub:
        s += fill(f"{name}_mi", row, NEG_INF)
        s += (f"  %{name}_max = linalg.generic {{indexing_maps = [{ident}, {rmap}],"
              f" iterator_types = [{iters_red}]}} ins(%{x} : {ty(shape)}) "
              f"outs(%{name}_mi : {ty(row)}) {{\n"
              f"  ^bb0(%a: f32, %o: f32):\n"
              f"    %m = arith.maximumf %a, %o : f32\n"
              f"    linalg.yield %m : f32\n"
              f"  }} -> {ty(row)}\n")
        s += elementwise(f"{name}_exp", [(x, ty(shape), None),
                                         (f"{name}_max", ty(row), rmap)], shape,
                         "    %d = arith.subf %in0, %in1 : f32\n"
                         "    %e = math.exp %d : f32\n"
                         "    linalg.yield %e : f32\n")
    else:
        s += elementwise(f"{name}_exp", [(x, ty(shape), None)], shape,
                         "    %e = math.exp %in0 : f32\n"
                         "    linalg.yield %e : f32\n")
    s += fill(f"{name}_si", row, "0.0")
    s += (f"  %{name}_sum = linalg.generic {{indexing_maps = [{ident}, {rmap}],"
          f" iterator_types = [{iters_red}]}} ins(%{name}_exp : {ty(shape)}) "
          f"outs(%{name}_si : {ty(row)}) {{\n"
          f"  ^bb0(%a: f32, %o: f32):\n"
          f"    %m = arith.addf %a, %o : f32\n"
          f"    linalg.yield %m : f32\n"
          f"  }} -> {ty(row)}\n")
    if recip:
        s += elementwise(f"{name}_rcp", [(f"{name}_sum", ty(row), None)], row,
                         "    %one = arith.constant 1.0 : f32\n"
                         "    %r = arith.divf %one, %in0 : f32\n"
                         "    linalg.yield %r : f32\n")
        s += elementwise(name, [(f"{name}_exp", ty(shape), None),
                                (f"{name}_rcp", ty(row), rmap)], shape,
                         "    %r = arith.mulf %in0, %in1 : f32\n"
                         "    linalg.yield %r : f32\n")
    else:
        s += elementwise(name, [(f"{name}_exp", ty(shape), None),
                                (f"{name}_sum", ty(row), rmap)], shape,
                         "    %r = arith.divf %in0, %in1 : f32\n"
                         "    linalg.yield %r : f32\n")
    return s


def qk_generic4(name, q, k, b=B, h=H, lq=LQ, lk=LK, d=D, elt="f32",
                out_elt="f32", ext=""):
    return contract(name, q, ty((b, h, lq, d), elt), k, ty((b, h, lk, d), elt),
                    (b, h, lq, lk), amap(5, ["a", "b", "c", "e"]),
                    amap(5, ["a", "b", "d", "e"]), amap(5, ["a", "b", "c", "d"]),
                    5, out_elt, ext)


def pv_generic4(name, p, v, b=B, h=H, lq=LQ, lk=LK, dv=DV, elt="f32",
                out_elt="f32", ext=""):
    return contract(name, p, ty((b, h, lq, lk), elt), v, ty((b, h, lk, dv), elt),
                    (b, h, lq, dv), amap(5, ["a", "b", "c", "e"]),
                    amap(5, ["a", "b", "e", "d"]), amap(5, ["a", "b", "c", "d"]),
                    5, out_elt, ext)


def scale_tensor(name, x, shape, c, op="mulf", elt="f32"):
    return (f"  %{name}_c = arith.constant dense<{c}> : {ty(shape, elt)}\n"
            f"  %{name} = arith.{op} %{x}, %{name}_c : {ty(shape, elt)}\n")


def softmax_named(name, x, shape):
    return (f"  %{name}_e = tensor.empty() : {ty(shape)}\n"
            f"  %{name} = linalg.softmax dimension({len(shape) - 1}) "
            f"ins(%{x} : {ty(shape)}) outs(%{name}_e : {ty(shape)}) -> "
            f"{ty(shape)}\n")


def transpose(name, x, shape, perm, elt="f32"):
    out = [shape[p] for p in perm]
    return (f"  %{name}_e = tensor.empty() : {ty(out, elt)}\n"
            f"  %{name} = linalg.transpose ins(%{x} : {ty(shape, elt)}) "
            f"outs(%{name}_e : {ty(out, elt)}) permutation = "
            f"[{', '.join(map(str, perm))}]\n")


def named_mm(op, name, a, at, b, bt, out_shape, maps=None):
    s = fill(f"{name}_acc", out_shape, "0.0")
    m = f" indexing_maps = [{', '.join(maps)}]" if maps else ""
    return s + (f"  %{name} = linalg.{op}{m} ins(%{a}, %{b} : {at}, {bt}) "
                f"outs(%{name}_acc : {ty(out_shape)}) -> {ty(out_shape)}\n")


# ---------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------

def randn(shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def k_generic4():
    body = qk_generic4("s", "q", "k")
    body += elementwise("ss", [("s", ty((B, H, LQ, LK)), None)], (B, H, LQ, LK),
                        "    %c = arith.constant 0.353553385 : f32\n"
                        "    %r = arith.mulf %in0, %c : f32\n"
                        "    linalg.yield %r : f32\n")
    body += softmax_generic("p", "ss", (B, H, LQ, LK))
    body += pv_generic4("o", "p", "v")
    body += f"  return %o : {ty((B, H, LQ, DV))}\n"
    return Func("generic_4d_decomposed", [
        ("q", ty((B, H, LQ, D)), randn((B, H, LQ, D))),
        ("k", ty((B, H, LK, D)), randn((B, H, LK, D))),
        ("v", ty((B, H, LK, DV)), randn((B, H, LK, DV)))],
        ty((B, H, LQ, DV)), body)


def k_bmm_softmax():
    bh = B * H
    body = transpose("kt", "k", (bh, LK, D), (0, 2, 1))
    body += named_mm("batch_matmul", "s", "q", ty((bh, LQ, D)), "kt",
                     ty((bh, D, LK)), (bh, LQ, LK))
    body += scale_tensor("ss", "s", (bh, LQ, LK), "2.82842708", "divf")
    body += softmax_named("p", "ss", (bh, LQ, LK))
    body += named_mm("batch_matmul", "o", "p", ty((bh, LQ, LK)), "v",
                     ty((bh, LK, DV)), (bh, LQ, DV))
    body += f"  return %o : {ty((bh, LQ, DV))}\n"
    return Func("batch_matmul_linalg_softmax", [
        ("q", ty((bh, LQ, D)), randn((bh, LQ, D))),
        ("k", ty((bh, LK, D)), randn((bh, LK, D))),
        ("v", ty((bh, LK, DV)), randn((bh, LK, DV)))],
        ty((bh, LQ, DV)), body)


def k_matmul_recip():
    body = (f"  %qs_c = arith.constant dense<0.353553385> : {ty((LQ, D))}\n"
            f"  %qs_e = tensor.empty() : {ty((LQ, D))}\n"
            f"  %qs = linalg.mul ins(%q, %qs_c : {ty((LQ, D))}, {ty((LQ, D))}) "
            f"outs(%qs_e : {ty((LQ, D))}) -> {ty((LQ, D))}\n")
    body += transpose("kt", "k", (LK, D), (1, 0))
    body += named_mm("matmul", "s", "qs", ty((LQ, D)), "kt", ty((D, LK)),
                     (LQ, LK))
    body += softmax_generic("p", "s", (LQ, LK), max_sub=False, recip=True)
    body += named_mm("matmul", "o", "p", ty((LQ, LK)), "v", ty((LK, DV)),
                     (LQ, DV))
    body += f"  return %o : {ty((LQ, DV))}\n"
    return Func("matmul_no_max_reciprocal", [
        ("q", ty((LQ, D)), randn((LQ, D))),
        ("k", ty((LK, D)), randn((LK, D))),
        ("v", ty((LK, DV)), randn((LK, DV)))], ty((LQ, DV)), body)


def k_bmm_maps_reduce():
    bh = B * H
    shp = (bh, LQ, LK)
    row = (bh, LQ)
    body = scale_tensor("qs", "q", (bh, LQ, D), "0.594603539")
    body += scale_tensor("ks", "k", (bh, LK, D), "0.594603539")
    maps = [amap(4, ["a", "b", "d"]), amap(4, ["a", "c", "d"]),
            amap(4, ["a", "b", "c"])]
    body += named_mm("batch_matmul", "s", "qs", ty((bh, LQ, D)), "ks",
                     ty((bh, LK, D)), shp, maps)
    body += fill("mi", row, NEG_INF)
    body += (f"  %max = linalg.reduce ins(%s : {ty(shp)}) outs(%mi : {ty(row)})"
             f" dimensions = [2]\n"
             f"    (%in: f32, %init: f32) {{\n"
             f"      %m = arith.maximumf %in, %init : f32\n"
             f"      linalg.yield %m : f32\n    }}\n")
    body += (f"  %maxb_e = tensor.empty() : {ty(shp)}\n"
             f"  %maxb = linalg.broadcast ins(%max : {ty(row)}) "
             f"outs(%maxb_e : {ty(shp)}) dimensions = [2]\n")
    body += (f"  %d_e = tensor.empty() : {ty(shp)}\n"
             f"  %d = linalg.sub ins(%s, %maxb : {ty(shp)}, {ty(shp)}) "
             f"outs(%d_e : {ty(shp)}) -> {ty(shp)}\n"
             f"  %x = linalg.exp ins(%d : {ty(shp)}) outs(%d_e : {ty(shp)}) "
             f"-> {ty(shp)}\n")
    body += fill("si", row, "0.0")
    body += (f"  %sum = linalg.reduce ins(%x : {ty(shp)}) outs(%si : {ty(row)})"
             f" dimensions = [2]\n"
             f"    (%in: f32, %init: f32) {{\n"
             f"      %m = arith.addf %in, %init : f32\n"
             f"      linalg.yield %m : f32\n    }}\n")
    body += (f"  %sumb = linalg.broadcast ins(%sum : {ty(row)}) "
             f"outs(%maxb_e : {ty(shp)}) dimensions = [2]\n"
             f"  %p = linalg.div ins(%x, %sumb : {ty(shp)}, {ty(shp)}) "
             f"outs(%d_e : {ty(shp)}) -> {ty(shp)}\n")
    body += named_mm("batch_matmul", "o", "p", ty(shp), "v", ty((bh, LK, DV)),
                     (bh, LQ, DV))
    body += f"  return %o : {ty((bh, LQ, DV))}\n"
    return Func("batch_matmul_maps_named_softmax", [
        ("q", ty((bh, LQ, D)), randn((bh, LQ, D))),
        ("k", ty((bh, LK, D)), randn((bh, LK, D))),
        ("v", ty((bh, LK, DV)), randn((bh, LK, DV)))],
        ty((bh, LQ, DV)), body)


def k_collapsed_bmm():
    bh = B * H
    s4 = (B, H, LQ, LK)
    body = (f"  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : "
            f"{ty((B, H, LQ, D))} into {ty((bh, LQ, D))}\n")
    body += transpose("kt4", "k", (B, H, LK, D), (0, 1, 3, 2))
    body += (f"  %kt3 = tensor.collapse_shape %kt4 [[0, 1], [2], [3]] : "
             f"{ty((B, H, D, LK))} into {ty((bh, D, LK))}\n")
    body += named_mm("batch_matmul", "s3", "q3", ty((bh, LQ, D)), "kt3",
                     ty((bh, D, LK)), (bh, LQ, LK))
    body += (f"  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] "
             f"output_shape [{B}, {H}, {LQ}, {LK}] : {ty((bh, LQ, LK))} into "
             f"{ty(s4)}\n")
    body += scale_tensor("ss", "s", s4, "0.353553385")
    body += softmax_generic("p", "ss", s4)
    body += (f"  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : "
             f"{ty(s4)} into {ty((bh, LQ, LK))}\n"
             f"  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : "
             f"{ty((B, H, LK, DV))} into {ty((bh, LK, DV))}\n")
    body += named_mm("batch_matmul", "o3", "p3", ty((bh, LQ, LK)), "v3",
                     ty((bh, LK, DV)), (bh, LQ, DV))
    body += (f"  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] "
             f"output_shape [{B}, {H}, {LQ}, {DV}] : {ty((bh, LQ, DV))} into "
             f"{ty((B, H, LQ, DV))}\n")
    body += f"  return %o : {ty((B, H, LQ, DV))}\n"
    return Func("collapsed_heads_around_bmm", [
        ("q", ty((B, H, LQ, D)), randn((B, H, LQ, D))),
        ("k", ty((B, H, LK, D)), randn((B, H, LK, D))),
        ("v", ty((B, H, LK, DV)), randn((B, H, LK, DV)))],
        ty((B, H, LQ, DV)), body)


# ---------------------------------------------------------------------------
# Masks
# ---------------------------------------------------------------------------

S4 = (B, H, LQ, LK)
ID4 = amap(4, ["a", "b", "c", "d"])


def qkv_args(lq=LQ, lk=LK, elt="f32"):
    return [("q", ty((B, H, lq, D), elt), randn((B, H, lq, D))),
            ("k", ty((B, H, lk, D), elt), randn((B, H, lk, D))),
            ("v", ty((B, H, lk, DV), elt), randn((B, H, lk, DV)))]


def padding(lk=LK, pad=(3, 5)):
    """Key-padding flags per batch: the last keys are padding."""
    m = np.ones((B, lk), dtype=bool)
    for b, n in enumerate(pad):
        m[b, lk - n:] = False
    return m


def padded_scores(shape, lines):
    """%x from the scores %s (%in0) and a [B, Lk] key-padding mask (%in1):
    `lines` compute %r, with %ninf and the scale %c defined before them."""
    return elementwise("x", [("s", ty(shape), None),
                             ("mask", ty((B, LK), "i1"), amap(4, ["a", "d"]))],
                       shape,
                       f"    %ninf = arith.constant {NEG_INF} : f32\n"
                       "    %c = arith.constant 0.353553385 : f32\n" + lines)


def masked_kernel(name, mask_steps, args, softmax="generic", lq=LQ, lk=LK):
    """q.k^T, then `mask_steps` (producing %x from %s), softmax, p.v."""
    body = qk_generic4("s", "q", "k", lq=lq, lk=lk)
    body += mask_steps
    shape = (B, H, lq, lk)
    body += (softmax_generic("p", "x", shape) if softmax == "generic"
             else softmax_named("p", "x", shape))
    body += pv_generic4("o", "p", "v", lq=lq, lk=lk)
    body += f"  return %o : {ty((B, H, lq, DV))}\n"
    return Func(name, qkv_args(lq, lk) + args, ty((B, H, lq, DV)), body)


def k_additive_f16_bias():
    steps = (f"  %mb_e = tensor.empty() : {ty(S4, 'f16')}\n"
             f"  %mb = linalg.broadcast ins(%mask : {ty((B, LK), 'f16')}) "
             f"outs(%mb_e : {ty(S4, 'f16')}) dimensions = [1, 2]\n")
    steps += elementwise("x", [("s", ty(S4), None), ("mb", ty(S4, "f16"), None)],
                         S4, "    %c = arith.constant 0.353553385 : f32\n"
                             "    %a = arith.mulf %in0, %c : f32\n"
                             "    %b = arith.extf %in1 : f16 to f32\n"
                             "    %r = arith.addf %a, %b : f32\n"
                             "    linalg.yield %r : f32\n")
    return masked_kernel("additive_f16_bias_broadcast", steps,
                         [("mask", ty((B, LK), "f16"), randn((B, LK)))],
                         softmax="named")


def padding_select_kernel(name, extra="", kept="%a"):
    """Scores scaled by 1/sqrt(8) into %a (then `extra`, which leaves the
    value to keep in `kept`), and a boolean key-padding mask through
    arith.select against -inf."""
    steps = elementwise("x", [("s", ty(S4), None),
                              ("mask", ty((B, 1, 1, LK), "i1"),
                               amap(4, ["a", "0", "0", "d"]))], S4,
                        "    %c = arith.constant 0.353553385 : f32\n"
                        f"    %ninf = arith.constant {NEG_INF} : f32\n"
                        "    %a = arith.mulf %in0, %c : f32\n"
                        + extra +
                        f"    %r = arith.select %in1, {kept}, %ninf : f32\n"
                        "    linalg.yield %r : f32\n")
    return masked_kernel(name, steps,
                         [("mask", ty((B, 1, 1, LK), "i1"),
                           padding().reshape(B, 1, 1, LK))])


def k_bool_select():
    return padding_select_kernel("bool_mask_select_neg_inf")


def k_negated_scores_then_mask():
    """Negated scores (a negative scale), then a boolean padding mask: the
    mask fill must stay -inf, not be negated with the scale."""
    return padding_select_kernel("negated_scores_then_mask",
                                 "    %n = arith.negf %a : f32\n", "%n")


def k_masked_fill_eq0():
    steps = elementwise("x", [("s", ty(S4), None),
                              ("mask", ty((B, LK), "i32"), amap(4, ["a", "d"]))],
                        S4,
                        "    %zero = arith.constant 0 : i32\n"
                        "    %fill = arith.constant -1.0e+09 : f32\n"
                        "    %c = arith.constant 0.353553385 : f32\n"
                        "    %hide = arith.cmpi eq, %in1, %zero : i32\n"
                        "    %a = arith.select %hide, %fill, %in0 : f32\n"
                        "    %r = arith.mulf %a, %c : f32\n"
                        "    linalg.yield %r : f32\n")
    return masked_kernel("masked_fill_eq0_then_scale", steps,
                         [("mask", ty((B, LK), "i32"),
                           padding().astype(np.int32))])


def k_one_minus_mask():
    steps = elementwise("am", [("mask", ty((B, LK), "i1"), None)], (B, LK),
                        "    %one = arith.constant 1.0 : f32\n"
                        "    %big = arith.constant -10000.0 : f32\n"
                        "    %f = arith.uitofp %in0 : i1 to f32\n"
                        "    %d = arith.subf %one, %f : f32\n"
                        "    %r = arith.mulf %d, %big : f32\n"
                        "    linalg.yield %r : f32\n")
    steps += elementwise("x", [("s", ty(S4), None),
                               ("am", ty((B, LK)), amap(4, ["a", "d"]))], S4,
                         "    %c = arith.constant 8.0 : f32\n"
                         "    %a = arith.divf %in0, %c : f32\n"
                         "    %r = arith.addf %a, %in1 : f32\n"
                         "    linalg.yield %r : f32\n")
    return masked_kernel("one_minus_mask_times_neg_10000", steps,
                         [("mask", ty((B, LK), "i1"), padding())])


def k_causal_iota_bottom_right():
    steps = elementwise("x", [("s", ty(S4), None)], S4,
                        f"    %ninf = arith.constant {NEG_INF} : f32\n"
                        f"    %off = arith.constant {LK - LQ} : index\n"
                        "    %c = arith.constant 0.353553385 : f32\n"
                        "    %i = linalg.index 2 : index\n"
                        "    %j = linalg.index 3 : index\n"
                        "    %lim = arith.addi %i, %off : index\n"
                        "    %vis = arith.cmpi sle, %j, %lim : index\n"
                        "    %a = arith.mulf %in0, %c : f32\n"
                        "    %r = arith.select %vis, %a, %ninf : f32\n"
                        "    linalg.yield %r : f32\n")
    return masked_kernel("causal_iota_bottom_right", steps, [],
                         softmax="named")


def k_causal_offset_diagonal():
    """j <= i + 2: neither alignment; top_left with causal_offset."""
    steps = elementwise("x", [("s", ty(S4), None)], S4,
                        f"    %ninf = arith.constant {NEG_INF} : f32\n"
                        "    %c = arith.constant 0.353553385 : f32\n"
                        "    %i = linalg.index 2 : index\n"
                        "    %j = linalg.index 3 : index\n"
                        "    %ii = arith.index_cast %i : index to i32\n"
                        "    %ji = arith.index_cast %j : index to i32\n"
                        "    %d = arith.subi %ji, %ii : i32\n"
                        "    %two = arith.constant 2 : i32\n"
                        "    %hide = arith.cmpi sgt, %d, %two : i32\n"
                        "    %a = arith.mulf %in0, %c : f32\n"
                        "    %r = arith.select %hide, %ninf, %a : f32\n"
                        "    linalg.yield %r : f32\n")
    return masked_kernel("causal_shifted_diagonal", steps, [])


def constant_term_kernel(name, table_name, table, consts="", term=""):
    """Scores scaled by 1/sqrt(8) into %a plus a term read from the [Lq, Lk]
    constant `table` (%in1): the table itself, or what `term` computes from
    it into %t (with `consts` defined before %a)."""
    steps = f"  %{table_name} = arith.constant {dense(table, 'f32')}\n"
    steps += elementwise("x", [("s", ty(S4), None),
                               (table_name, ty((LQ, LK)),
                                amap(4, ["c", "d"]))], S4,
                         "    %c = arith.constant 0.353553385 : f32\n"
                         + consts +
                         "    %a = arith.mulf %in0, %c : f32\n"
                         + term +
                         f"    %r = arith.addf %a, {'%t' if term else '%in1'}"
                         " : f32\n"
                         "    linalg.yield %r : f32\n")
    return masked_kernel(name, steps, [])


def k_causal_constant_top_left():
    tri = np.where(np.arange(LK)[None, :] <= np.arange(LQ)[:, None], 0.0,
                   -np.inf).astype(np.float32)
    return constant_term_kernel("causal_constant_triangle_top_left", "tri",
                                tri)


def k_causal_buffer_penalty():
    """A causal buffer of ones and zeros turned into a penalty,
    (1 - tril) * -10000, as BERT-era code builds its extended attention
    mask: evaluated point by point, it is a top-left causal mask."""
    tril = (np.arange(LK)[None, :] <= np.arange(LQ)[:, None]).astype(np.float32)
    return constant_term_kernel(
        "causal_buffer_penalty", "tril", tril,
        consts="    %one = arith.constant 1.0 : f32\n"
               "    %big = arith.constant -10000.0 : f32\n",
        term="    %inv = arith.subf %one, %in1 : f32\n"
             "    %t = arith.mulf %inv, %big : f32\n")


def own_masked_kernel(name, seed, steps, args=(), ir=()):
    """masked_kernel with q, k and v from its own random state, so that
    adding it leaves the other kernels' inputs as they were; `args`: more
    inputs (name, type, data)."""
    own = np.random.RandomState(seed)
    state = rng.get_state()
    f = masked_kernel(name, steps, list(args))
    rng.set_state(state)
    f.args = [(n, t, own.standard_normal(a.shape).astype(np.float32)
               if n in ("q", "k", "v") else a) for n, t, a in f.args]
    f.ir = list(ir)
    return f


def k_sliding_window_padding():
    """Sliding-window attention (Mistral, Gemma's local layers): causal
    and the last W = 3 keys, with a key-padding mask. The causal part
    becomes the attribute; the window and the padding one mask, computed
    from the indices and the input."""
    steps = padded_scores(S4,
                          "    %w = arith.constant 3 : index\n"
                          "    %i = linalg.index 2 : index\n"
                          "    %j = linalg.index 3 : index\n"
                          "    %causal = arith.cmpi ule, %j, %i : index\n"
                          "    %jw = arith.addi %j, %w : index\n"
                          "    %inwin = arith.cmpi ugt, %jw, %i : index\n"
                          "    %v0 = arith.andi %causal, %inwin : i1\n"
                          "    %vis = arith.andi %v0, %in1 : i1\n"
                          "    %a = arith.mulf %in0, %c : f32\n"
                          "    %r = arith.select %vis, %a, %ninf : f32\n"
                          "    linalg.yield %r : f32\n")
    return own_masked_kernel(
        "sliding_window_padding", 79, steps,
        [("mask", ty((B, LK), "i1"), padding(pad=(3, 5)))],
        ir=["// IR-LABEL: func @sliding_window_padding(",
            "// IR: attn.attention ins({{[^)]*}}) mask(%{{.*}} : "
            f"{ty((B, 1, LQ, LK), 'i1')}) outs({{{{[^)]*}}}}) "
            "scale = 0.353553385 causal = top_left ->"])


def k_alibi_padding_bias():
    """ALiBi (BLOOM, MPT): a per-head slope times the key's distance,
    added before the scale (so the op's bias carries it scaled), plus an
    additive padding mask after it, and causal: one bias of two terms."""
    slopes = np.array([0.5, 0.25], dtype=np.float32).reshape(1, H, 1, 1)
    steps = f"  %slopes = arith.constant {dense(slopes, 'f32')}\n"
    steps += elementwise("x", [("s", ty(S4), None),
                               ("slopes", ty((1, H, 1, 1)),
                                amap(4, ["0", "b", "0", "0"])),
                               ("pad", ty((B, LK)), amap(4, ["a", "d"]))],
                         S4,
                         f"    %ninf = arith.constant {NEG_INF} : f32\n"
                         "    %c = arith.constant 0.353553385 : f32\n"
                         "    %i = linalg.index 2 : index\n"
                         "    %j = linalg.index 3 : index\n"
                         "    %ii = arith.index_castui %i : index to i32\n"
                         "    %ji = arith.index_castui %j : index to i32\n"
                         "    %fi = arith.uitofp %ii : i32 to f32\n"
                         "    %fj = arith.uitofp %ji : i32 to f32\n"
                         "    %dist = arith.subf %fj, %fi : f32\n"
                         "    %alibi = arith.mulf %in1, %dist : f32\n"
                         "    %b = arith.addf %in0, %alibi : f32\n"
                         "    %sc = arith.mulf %b, %c : f32\n"
                         "    %t = arith.addf %sc, %in2 : f32\n"
                         "    %causal = arith.cmpi ule, %j, %i : index\n"
                         "    %r = arith.select %causal, %t, %ninf : f32\n"
                         "    linalg.yield %r : f32\n")
    pad = np.where(padding(pad=(2, 4)), 0.0, -1e9).astype(np.float32)
    return own_masked_kernel(
        "alibi_padding_bias", 80, steps, [("pad", ty((B, LK)), pad)],
        ir=["// IR-LABEL: func @alibi_padding_bias(",
            "// IR: attn.attention ins({{[^)]*}}) bias(%{{.*}} : "
            f"{ty((B, H, LQ, LK))}) outs({{{{[^)]*}}}}) "
            "scale = 0.353553385 causal = top_left ->"])


def k_sitofp_true_is_minus_one():
    """sitofp reads i1 true as -1: sitofp(j > i) < 0 holds for the future
    keys, which the select hides: a top-left causal mask. (Read as 1, the
    test would hold nowhere and every key would look visible.)"""
    steps = elementwise("x", [("s", ty(S4), None)], S4,
                        f"    %ninf = arith.constant {NEG_INF} : f32\n"
                        "    %c = arith.constant 0.353553385 : f32\n"
                        "    %zero = arith.constant 0.0 : f32\n"
                        "    %i = linalg.index 2 : index\n"
                        "    %j = linalg.index 3 : index\n"
                        "    %future = arith.cmpi ugt, %j, %i : index\n"
                        "    %f = arith.sitofp %future : i1 to f32\n"
                        "    %hide = arith.cmpf olt, %f, %zero : f32\n"
                        "    %a = arith.mulf %in0, %c : f32\n"
                        "    %r = arith.select %hide, %ninf, %a : f32\n"
                        "    linalg.yield %r : f32\n")
    return own_masked_kernel("sitofp_true_is_minus_one", 77, steps)


def k_i1_add_wraps():
    """addi on i1 wraps (it is xor): (j > i) + true is j <= i, a top-left
    causal mask (evaluated without the wrap, every key would look
    visible)."""
    steps = elementwise("x", [("s", ty(S4), None)], S4,
                        f"    %ninf = arith.constant {NEG_INF} : f32\n"
                        "    %c = arith.constant 0.353553385 : f32\n"
                        "    %true = arith.constant true\n"
                        "    %i = linalg.index 2 : index\n"
                        "    %j = linalg.index 3 : index\n"
                        "    %future = arith.cmpi ugt, %j, %i : index\n"
                        "    %vis = arith.addi %future, %true : i1\n"
                        "    %a = arith.mulf %in0, %c : f32\n"
                        "    %r = arith.select %vis, %a, %ninf : f32\n"
                        "    linalg.yield %r : f32\n")
    return own_masked_kernel("i1_add_wraps", 78, steps)


def k_gpt2_style():
    fmin = "-3.40282347e+38"
    steps = elementwise("pad", [("mask", ty((B, LK), "i1"), None)], (B, LK),
                        "    %one = arith.constant 1.0 : f32\n"
                        f"    %fmin = arith.constant {fmin} : f32\n"
                        "    %f = arith.uitofp %in0 : i1 to f32\n"
                        "    %d = arith.subf %one, %f : f32\n"
                        "    %r = arith.mulf %d, %fmin : f32\n"
                        "    linalg.yield %r : f32\n")
    steps += elementwise("x", [("s", ty(S4), None),
                               ("pad", ty((B, LK)), amap(4, ["a", "d"]))], S4,
                         f"    %fmin = arith.constant {fmin} : f32\n"
                         "    %c = arith.constant 0.353553385 : f32\n"
                         "    %i = linalg.index 2 : index\n"
                         "    %j = linalg.index 3 : index\n"
                         "    %vis = arith.cmpi ule, %j, %i : index\n"
                         "    %a = arith.mulf %in0, %c : f32\n"
                         "    %w = arith.select %vis, %a, %fmin : f32\n"
                         "    %r = arith.addf %w, %in1 : f32\n"
                         "    linalg.yield %r : f32\n")
    return masked_kernel("gpt2_causal_finfo_min_plus_padding", steps,
                         [("mask", ty((B, LK), "i1"), padding(pad=(2, 3)))])


# ---------------------------------------------------------------------------
# Layouts
# ---------------------------------------------------------------------------

def k_blhd():
    body = transpose("qt", "q", (B, LQ, H, D), (0, 2, 1, 3))
    body += transpose("kt", "k", (B, LK, H, D), (0, 2, 1, 3))
    body += transpose("vt", "v", (B, LK, H, DV), (0, 2, 1, 3))
    body += qk_generic4("s", "qt", "kt")
    body += scale_tensor("x", "s", S4, "0.353553385")
    body += softmax_named("p", "x", S4)
    body += pv_generic4("o4", "p", "vt")
    body += transpose("o", "o4", (B, H, LQ, DV), (0, 2, 1, 3))
    body += f"  return %o : {ty((B, LQ, H, DV))}\n"
    return Func("blhd_permuted_to_bhld", [
        ("q", ty((B, LQ, H, D)), randn((B, LQ, H, D))),
        ("k", ty((B, LK, H, D)), randn((B, LK, H, D))),
        ("v", ty((B, LK, H, DV)), randn((B, LK, H, DV)))],
        ty((B, LQ, H, DV)), body)


def repeat_interleave(name, x, d):
    g = HQ // HKV
    src = (B, HKV, LK, d)
    mid = (B, HKV, g, LK, d)
    return (f"  %{name}_e = tensor.empty() : {ty(mid)}\n"
            f"  %{name}_b = linalg.broadcast ins(%{x} : {ty(src)}) "
            f"outs(%{name}_e : {ty(mid)}) dimensions = [2]\n"
            f"  %{name} = tensor.collapse_shape %{name}_b [[0], [1, 2], [3], [4]]"
            f" : {ty(mid)} into {ty((B, HQ, LK, d))}\n")


def k_gqa():
    s4 = (B, HQ, LQ, LK)
    body = repeat_interleave("kr", "k", D)
    body += repeat_interleave("vr", "v", DV)
    body += qk_generic4("s", "q", "kr", h=HQ)
    body += scale_tensor("x", "s", s4, "0.353553385")
    body += softmax_generic("p", "x", s4)
    body += pv_generic4("o", "p", "vr", h=HQ)
    body += f"  return %o : {ty((B, HQ, LQ, DV))}\n"
    return Func("gqa_repeat_interleave_kv", [
        ("q", ty((B, HQ, LQ, D)), randn((B, HQ, LQ, D))),
        ("k", ty((B, HKV, LK, D)), randn((B, HKV, LK, D))),
        ("v", ty((B, HKV, LK, DV)), randn((B, HKV, LK, DV)))],
        ty((B, HQ, LQ, DV)), body)


def k_mqa():
    s4 = (B, HQ, LQ, LK)
    body = ""
    for name, x, d in (("kr", "k", D), ("vr", "v", DV)):
        body += (f"  %{name}_e = tensor.empty() : {ty((B, HQ, LK, d))}\n"
                 f"  %{name} = linalg.broadcast ins(%{x} : {ty((B, LK, d))}) "
                 f"outs(%{name}_e : {ty((B, HQ, LK, d))}) dimensions = [1]\n")
    body += qk_generic4("s", "q", "kr", h=HQ)
    body += scale_tensor("x", "s", s4, "0.353553385")
    body += softmax_named("p", "x", s4)
    body += pv_generic4("o", "p", "vr", h=HQ)
    body += f"  return %o : {ty((B, HQ, LQ, DV))}\n"
    return Func("mqa_broadcast_kv", [
        ("q", ty((B, HQ, LQ, D)), randn((B, HQ, LQ, D))),
        ("k", ty((B, LK, D)), randn((B, LK, D))),
        ("v", ty((B, LK, DV)), randn((B, LK, DV)))],
        ty((B, HQ, LQ, DV)), body)


def k_pretransposed_k():
    body = contract("s", "q", ty((B, H, LQ, D)), "kt", ty((B, H, D, LK)),
                    S4, amap(5, ["a", "b", "c", "e"]),
                    amap(5, ["a", "b", "e", "d"]), amap(5, ["a", "b", "c", "d"]),
                    5)
    body += scale_tensor("x", "s", S4, "0.353553385")
    body += softmax_generic("p", "x", S4)
    body += pv_generic4("o", "p", "v")
    body += f"  return %o : {ty((B, H, LQ, DV))}\n"
    return Func("k_already_transposed", [
        ("q", ty((B, H, LQ, D)), randn((B, H, LQ, D))),
        ("kt", ty((B, H, D, LK)), randn((B, H, D, LK))),
        ("v", ty((B, H, LK, DV)), randn((B, H, LK, DV)))],
        ty((B, H, LQ, DV)), body)


def k_torch_bmm_gqa():
    g = HQ // HKV
    bh = B * HQ
    body = (f"  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : "
            f"{ty((B, HQ, LQ, D))} into {ty((bh, LQ, D))}\n")
    for name, x, d in (("k3", "k", D), ("v3", "v", DV)):
        src, unit, mid = (B, HKV, LK, d), (B, HKV, 1, LK, d), (B, HKV, g, LK, d)
        body += (f"  %{name}_x = tensor.expand_shape %{x} [[0], [1, 2], [3], [4]]"
                 f" output_shape [{B}, {HKV}, 1, {LK}, {d}] : {ty(src)} into "
                 f"{ty(unit)}\n")
        body += elementwise(f"{name}_b", [(f"{name}_x", ty(unit),
                                           amap(5, ["a", "b", "0", "d", "e"]))],
                            mid, "    linalg.yield %in0 : f32\n")
        body += (f"  %{name} = tensor.collapse_shape %{name}_b "
                 f"[[0, 1, 2], [3], [4]] : {ty(mid)} into {ty((bh, LK, d))}\n")
    body += transpose("kt", "k3", (bh, LK, D), (0, 2, 1))
    body += named_mm("batch_matmul", "s", "q3", ty((bh, LQ, D)), "kt",
                     ty((bh, D, LK)), (bh, LQ, LK))
    body += scale_tensor("x", "s", (bh, LQ, LK), "0.353553385")
    body += softmax_named("p", "x", (bh, LQ, LK))
    body += named_mm("batch_matmul", "o3", "p", ty((bh, LQ, LK)), "v3",
                     ty((bh, LK, DV)), (bh, LQ, DV))
    body += (f"  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] "
             f"output_shape [{B}, {HQ}, {LQ}, {DV}] : {ty((bh, LQ, DV))} into "
             f"{ty((B, HQ, LQ, DV))}\n")
    body += f"  return %o : {ty((B, HQ, LQ, DV))}\n"
    return Func("gqa_expand_broadcast_collapse_3d_bmm", [
        ("q", ty((B, HQ, LQ, D)), randn((B, HQ, LQ, D))),
        ("k", ty((B, HKV, LK, D)), randn((B, HKV, LK, D))),
        ("v", ty((B, HKV, LK, DV)), randn((B, HKV, LK, DV)))],
        ty((B, HQ, LQ, DV)), body)


def k_dynamic_shapes():
    """Batch and both lengths dynamic (torch-mlir's dynamic sequence
    lengths): the sizes come from tensor.dim; a causal mask from the
    iteration indices, whatever the lengths."""
    own = np.random.RandomState(20261206)
    dq, dv = ty(("?", "?", D)), ty(("?", "?", DV))
    s3 = ty(("?", "?", "?"))
    body = (
        "  %c0 = arith.constant 0 : index\n"
        "  %c1 = arith.constant 1 : index\n"
        "  %zero = arith.constant 0.0 : f32\n"
        f"  %b = tensor.dim %q, %c0 : {dq}\n"
        f"  %lq = tensor.dim %q, %c1 : {dq}\n"
        f"  %lk = tensor.dim %k, %c1 : {dq}\n"
        f"  %kt_e = tensor.empty(%b, %lk) : {ty(('?', D, '?'))}\n"
        f"  %kt = linalg.transpose ins(%k : {dq}) outs(%kt_e : "
        f"{ty(('?', D, '?'))}) permutation = [0, 2, 1]\n"
        f"  %s_e = tensor.empty(%b, %lq, %lk) : {s3}\n"
        f"  %s_acc = linalg.fill ins(%zero : f32) outs(%s_e : {s3}) -> {s3}\n"
        f"  %s = linalg.batch_matmul ins(%q, %kt : {dq}, {ty(('?', D, '?'))})"
        f" outs(%s_acc : {s3}) -> {s3}\n")
    body += elementwise("x", [("s", s3, None)], ("?", "?", "?"),
                        f"    %ninf = arith.constant {NEG_INF} : f32\n"
                        "    %c = arith.constant 0.353553385 : f32\n"
                        "    %i = linalg.index 1 : index\n"
                        "    %j = linalg.index 2 : index\n"
                        "    %vis = arith.cmpi ule, %j, %i : index\n"
                        "    %a = arith.mulf %in0, %c : f32\n"
                        "    %r = arith.select %vis, %a, %ninf : f32\n"
                        "    linalg.yield %r : f32\n",
                        sizes="%b, %lq, %lk")
    body += (f"  %p = linalg.softmax dimension(2) ins(%x : {s3}) outs(%s_e : "
             f"{s3}) -> {s3}\n"
             f"  %o_e = tensor.empty(%b, %lq) : {dv}\n"
             f"  %o_acc = linalg.fill ins(%zero : f32) outs(%o_e : {dv}) -> "
             f"{dv}\n"
             f"  %o = linalg.batch_matmul ins(%p, %v : {s3}, {dv}) outs(%o_acc :"
             f" {dv}) -> {dv}\n"
             f"  return %o : {dv}\n")
    bh = B * H
    return Func("dynamic_shapes", [
        ("q", dq, own.standard_normal((bh, LQ, D)).astype(np.float32)),
        ("k", dq, own.standard_normal((bh, LK, D)).astype(np.float32)),
        ("v", dv, own.standard_normal((bh, LK, DV)).astype(np.float32))],
        dv, body,
        ir=["// IR-LABEL: func.func @dynamic_shapes",
            "// IR-NOT: linalg.batch_matmul",
            f"// IR: attn.attention ins(%arg0, %arg1, %arg2 : {dq}, {dq}, "
            f"{dv}) outs(%{{{{.*}}}} : {dv}) scale = 0.353553385 causal = "
            f"top_left -> {dv}",
            "// IR-NOT: linalg.softmax"])


def k_mixed_static_dynamic():
    """q's batch dynamic, k's and v's static, the result static (sizes a
    frontend knows for some operands only): the raised op's result has q's
    dynamic batch and is cast to the graph's static type; a reshape
    between the two would need a cast first."""
    own = np.random.RandomState(20261207)
    bh = B * H
    dq = ty(("?", LQ, D))
    s3 = ty((bh, LQ, LK))
    body = transpose("kt", "k", (bh, LK, D), (0, 2, 1))
    body += fill("s_acc", (bh, LQ, LK), "0.0")
    body += (f"  %s = linalg.batch_matmul ins(%q, %kt : {dq}, "
             f"{ty((bh, D, LK))}) outs(%s_acc : {s3}) -> {s3}\n")
    body += scale_tensor("ss", "s", (bh, LQ, LK), "2.82842708", "divf")
    body += softmax_named("p", "ss", (bh, LQ, LK))
    body += named_mm("batch_matmul", "o", "p", s3, "v", ty((bh, LK, DV)),
                     (bh, LQ, DV))
    body += f"  return %o : {ty((bh, LQ, DV))}\n"
    return Func("mixed_static_dynamic", [
        ("q", dq, own.standard_normal((bh, LQ, D)).astype(np.float32)),
        ("k", ty((bh, LK, D)),
         own.standard_normal((bh, LK, D)).astype(np.float32)),
        ("v", ty((bh, LK, DV)),
         own.standard_normal((bh, LK, DV)).astype(np.float32))],
        ty((bh, LQ, DV)), body,
        ir=["// IR-LABEL: func.func @mixed_static_dynamic",
            f"// IR: %[[R:.*]] = attn.attention ins(%arg0, %arg1, %arg2 : "
            f"{dq}, {ty((bh, LK, D))}, {ty((bh, LK, DV))}) outs(%{{{{.*}}}} :"
            f" {ty(('?', LQ, DV))}) scale = 0.353553385 -> "
            f"{ty(('?', LQ, DV))}",
            f"// IR: %[[C:.*]] = tensor.cast %[[R]] : {ty(('?', LQ, DV))} to "
            f"{ty((bh, LQ, DV))}",
            "// IR: return %[[C]]"])


def k_everything():
    """BLHD inputs, GQA by broadcast + collapse, heads folded into 3-D batch
    matmuls, a padding mask and a causal index compare in 4-D, the scale
    after the masking, the result back in BLHD."""
    g = HQ // HKV
    bh = B * HQ
    s4 = (B, HQ, LQ, LK)
    body = transpose("qt", "q", (B, LQ, HQ, D), (0, 2, 1, 3))
    body += (f"  %q3 = tensor.collapse_shape %qt [[0, 1], [2], [3]] : "
             f"{ty((B, HQ, LQ, D))} into {ty((bh, LQ, D))}\n")
    for name, x, d, perm in (("k", "k", D, (0, 2, 3, 1)),
                             ("v", "v", DV, (0, 2, 1, 3))):
        body += transpose(f"{name}t", x, (B, LK, HKV, d), (0, 2, 1, 3))
        mid = (B, HKV, g, LK, d)
        body += (f"  %{name}b_e = tensor.empty() : {ty(mid)}\n"
                 f"  %{name}b = linalg.broadcast ins(%{name}t : "
                 f"{ty((B, HKV, LK, d))}) outs(%{name}b_e : {ty(mid)}) "
                 f"dimensions = [2]\n"
                 f"  %{name}3 = tensor.collapse_shape %{name}b "
                 f"[[0, 1, 2], [3], [4]] : {ty(mid)} into {ty((bh, LK, d))}\n")
    body += transpose("kt3", "k3", (bh, LK, D), (0, 2, 1))
    body += named_mm("batch_matmul", "s3", "q3", ty((bh, LQ, D)), "kt3",
                     ty((bh, D, LK)), (bh, LQ, LK))
    body += (f"  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] "
             f"output_shape [{B}, {HQ}, {LQ}, {LK}] : {ty((bh, LQ, LK))} into "
             f"{ty(s4)}\n")
    body += padded_scores(s4,
                          "    %i = linalg.index 2 : index\n"
                          "    %j = linalg.index 3 : index\n"
                          f"    %off = arith.constant {LK - LQ} : index\n"
                          "    %lim = arith.addi %i, %off : index\n"
                          "    %causal = arith.cmpi ule, %j, %lim : index\n"
                          "    %vis = arith.andi %causal, %in1 : i1\n"
                          "    %w = arith.select %vis, %in0, %ninf : f32\n"
                          "    %r = arith.mulf %w, %c : f32\n"
                          "    linalg.yield %r : f32\n")
    body += softmax_named("p", "x", s4)
    body += (f"  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : "
             f"{ty(s4)} into {ty((bh, LQ, LK))}\n")
    body += named_mm("batch_matmul", "o3", "p3", ty((bh, LQ, LK)), "v3",
                     ty((bh, LK, DV)), (bh, LQ, DV))
    body += (f"  %o4 = tensor.expand_shape %o3 [[0, 1], [2], [3]] "
             f"output_shape [{B}, {HQ}, {LQ}, {DV}] : {ty((bh, LQ, DV))} into "
             f"{ty((B, HQ, LQ, DV))}\n")
    body += transpose("o", "o4", (B, HQ, LQ, DV), (0, 2, 1, 3))
    body += f"  return %o : {ty((B, LQ, HQ, DV))}\n"
    return Func("blhd_gqa_folded_heads_padding_and_causal", [
        ("q", ty((B, LQ, HQ, D)), randn((B, LQ, HQ, D))),
        ("k", ty((B, LK, HKV, D)), randn((B, LK, HKV, D))),
        ("v", ty((B, LK, HKV, DV)), randn((B, LK, HKV, DV))),
        ("mask", ty((B, LK), "i1"), padding(pad=(1, 2)))],
        ty((B, LQ, HQ, DV)), body)


def k_latent_queries():
    """Perceiver-style latent queries (pooling by attention): one learned q
    [H, LQ, D] broadcast over the batch, against each batch's keys, with a
    key-padding mask. The op has no broadcast q, so the raise materializes
    it. Its own random state: the other kernels' inputs stay as they were."""
    own = np.random.RandomState(4321)
    body = (f"  %qb_e = tensor.empty() : {ty((B, H, LQ, D))}\n"
            f"  %qb = linalg.broadcast ins(%q : {ty((H, LQ, D))}) "
            f"outs(%qb_e : {ty((B, H, LQ, D))}) dimensions = [0]\n")
    body += qk_generic4("s", "qb", "k")
    body += padded_scores(S4,
                          "    %a = arith.mulf %in0, %c : f32\n"
                          "    %r = arith.select %in1, %a, %ninf : f32\n"
                          "    linalg.yield %r : f32\n")
    body += softmax_named("p", "x", S4)
    body += pv_generic4("o", "p", "v")
    body += f"  return %o : {ty((B, H, LQ, DV))}\n"
    return Func("latent_queries_broadcast_over_batch", [
        ("q", ty((H, LQ, D)), own.standard_normal((H, LQ, D)).astype(np.float32)),
        ("k", ty((B, H, LK, D)),
         own.standard_normal((B, H, LK, D)).astype(np.float32)),
        ("v", ty((B, H, LK, DV)),
         own.standard_normal((B, H, LK, DV)).astype(np.float32)),
        ("mask", ty((B, LK), "i1"), padding(pad=(4, 0)))],
        ty((B, H, LQ, DV)), body)


# ---------------------------------------------------------------------------
# Mask ops: the evaluator of constant masks, op by op
# ---------------------------------------------------------------------------

# Each case computes, from the indices, a mask that is exactly top-left
# causal (key j visible from query i iff j <= i) under MLIR's semantics of
# its ops, as %vis (true: visible) or %hide (true: hidden). The kernel
# defines %i, %j (index), %ii, %ji (i32), %fi, %fj (f32), %d = fj - fi,
# %future = j > i, %nan, %zf, %one, %true and %false. An evaluator that
# gets an op wrong raises another mask (the outputs differ from the
# unfused graph) or none (the IR check fails).
PRED_F = [  # (predicate, lhs, rhs) with pred(lhs, rhs) <=> j <= i
    ("ole", "%fj", "%fi"), ("ule", "%fj", "%fi"),
    ("olt", "%fj", "%fi1"), ("ult", "%fj", "%fi1"),
    ("oge", "%fi", "%fj"), ("uge", "%fi", "%fj"),
    ("ogt", "%fi1", "%fj"), ("ugt", "%fi1", "%fj")]
PRED_I = [
    ("sle", "%j", "%i"), ("ule", "%j", "%i"),
    ("slt", "%j", "%i1"), ("ult", "%j", "%i1"),
    ("sge", "%i", "%j"), ("uge", "%i", "%j"),
    ("sgt", "%i1", "%j"), ("ugt", "%i1", "%j")]


def mask_op_cases():
    """(name, lines) per case."""
    cases = []
    for p, a, b in PRED_F:
        # Directly on the indices (the causal-predicate matcher), and
        # through a select (the point-by-point evaluator).
        cases.append((f"cmpf_{p}", f"    %vis = arith.cmpf {p}, {a}, {b} : f32\n"))
        cases.append((f"cmpf_{p}_evaluated",
                      f"    %v0 = arith.cmpf {p}, {a}, {b} : f32\n"
                      "    %vis = arith.select %v0, %true, %false : i1\n"))
    for p, a, b in PRED_I:
        cases.append((f"cmpi_{p}", f"    %vis = arith.cmpi {p}, {a}, {b} : index\n"))
        cases.append((f"cmpi_{p}_evaluated",
                      f"    %v0 = arith.cmpi {p}, {a}, {b} : index\n"
                      "    %vis = arith.select %v0, %true, %false : i1\n"))
    cases += [
        ("cmpi_eq", "    %s0 = arith.select %future, %i1, %i : index\n"
                    "    %vis = arith.cmpi eq, %s0, %i : index\n"),
        ("cmpi_ne", "    %s0 = arith.select %future, %i1, %i : index\n"
                    "    %hide = arith.cmpi ne, %s0, %i : index\n"),
        ("cmpf_oeq", "    %m = arith.maxnumf %d, %zf : f32\n"
                     "    %vis = arith.cmpf oeq, %m, %zf : f32\n"),
        ("cmpf_ueq", "    %m = arith.maxnumf %d, %zf : f32\n"
                     "    %vis = arith.cmpf ueq, %m, %zf : f32\n"),
        ("cmpf_one", "    %m = arith.maximumf %d, %zf : f32\n"
                     "    %hide = arith.cmpf one, %m, %zf : f32\n"),
        ("cmpf_une", "    %m = arith.maximumf %d, %zf : f32\n"
                     "    %hide = arith.cmpf une, %m, %zf : f32\n"),
        # 0 / 0 is NaN at the future keys.
        ("cmpf_ord", "    %den = arith.select %future, %zf, %one : f32\n"
                     "    %n = arith.divf %zf, %den : f32\n"
                     "    %vis = arith.cmpf ord, %n, %n : f32\n"),
        ("cmpf_uno", "    %den = arith.select %future, %zf, %one : f32\n"
                     "    %n = arith.divf %zf, %den : f32\n"
                     "    %hide = arith.cmpf uno, %n, %n : f32\n"),
        ("cmpf_true", "    %t0 = arith.cmpf true, %fi, %fj : f32\n"
                      "    %v0 = arith.cmpi sle, %j, %i : index\n"
                      "    %vis = arith.select %t0, %v0, %false : i1\n"),
        ("cmpf_false", "    %f0 = arith.cmpf false, %fi, %fj : f32\n"
                       "    %v0 = arith.cmpi sle, %j, %i : index\n"
                       "    %vis = arith.select %f0, %false, %v0 : i1\n"),
        # NaN at the future keys: maximumf/minimumf return it, maxnumf and
        # minnumf the other operand.
        ("maximumf_nan", "    %u = arith.select %future, %nan, %one : f32\n"
                         "    %m = arith.maximumf %zf, %u : f32\n"
                         "    %vis = arith.cmpf ord, %m, %m : f32\n"),
        ("minimumf_nan", "    %u = arith.select %future, %nan, %one : f32\n"
                         "    %m = arith.minimumf %zf, %u : f32\n"
                         "    %vis = arith.cmpf ord, %m, %m : f32\n"),
        ("maxnumf_nan", "    %u = arith.select %future, %nan, %one : f32\n"
                        "    %m = arith.maxnumf %u, %zf : f32\n"
                        "    %vis = arith.cmpf une, %m, %zf : f32\n"),
        ("minnumf_nan", "    %two = arith.constant 2.0 : f32\n"
                        "    %u = arith.select %future, %nan, %one : f32\n"
                        "    %m = arith.minnumf %u, %two : f32\n"
                        "    %hide = arith.cmpf oeq, %m, %two : f32\n"),
        ("negf", "    %n = arith.negf %d : f32\n"
                 "    %vis = arith.cmpf oge, %n, %zf : f32\n"),
        ("divf", "    %c4 = arith.constant 4.0 : f32\n"
                 "    %qt = arith.divf %d, %c4 : f32\n"
                 "    %vis = arith.cmpf ole, %qt, %zf : f32\n"),
        ("muli", "    %c3 = arith.constant 3 : i32\n"
                 "    %dj = arith.subi %ji, %ii : i32\n"
                 "    %m = arith.muli %dj, %c3 : i32\n"
                 "    %c0 = arith.constant 0 : i32\n"
                 "    %vis = arith.cmpi sle, %m, %c0 : i32\n"),
        ("andi", "    %c6 = arith.constant 6 : i32\n"
                 "    %c4 = arith.constant 4 : i32\n"
                 "    %c2 = arith.constant 2 : i32\n"
                 "    %c0 = arith.constant 0 : i32\n"
                 "    %s0 = arith.select %future, %c6, %c4 : i32\n"
                 "    %a0 = arith.andi %s0, %c2 : i32\n"
                 "    %vis = arith.cmpi eq, %a0, %c0 : i32\n"),
        ("ori", "    %c1 = arith.constant 1 : i32\n"
                "    %c2 = arith.constant 2 : i32\n"
                "    %c0 = arith.constant 0 : i32\n"
                "    %s0 = arith.select %future, %c1, %c0 : i32\n"
                "    %o0 = arith.ori %s0, %c2 : i32\n"
                "    %vis = arith.cmpi eq, %o0, %c2 : i32\n"),
        ("xori", "    %c3 = arith.constant 3 : i32\n"
                 "    %c5 = arith.constant 5 : i32\n"
                 "    %c0 = arith.constant 0 : i32\n"
                 "    %s0 = arith.select %future, %c3, %c5 : i32\n"
                 "    %x0 = arith.xori %s0, %c5 : i32\n"
                 "    %vis = arith.cmpi eq, %x0, %c0 : i32\n"),
        ("andi_i1", "    %v0 = arith.cmpi sle, %j, %i : index\n"
                    "    %v1 = arith.select %v0, %true, %false : i1\n"
                    "    %vis = arith.andi %v1, %true : i1\n"),
        ("ori_i1", "    %v0 = arith.cmpi sgt, %j, %i : index\n"
                   "    %v1 = arith.select %v0, %true, %false : i1\n"
                   "    %hide = arith.ori %v1, %false : i1\n"),
        # Signed conversions read i1 true as -1; unsigned ones as 1.
        ("extsi_i1", "    %e = arith.extsi %future : i1 to i32\n"
                     "    %c0 = arith.constant 0 : i32\n"
                     "    %hide = arith.cmpi slt, %e, %c0 : i32\n"),
        ("extui_i1", "    %e = arith.extui %future : i1 to i32\n"
                     "    %c1 = arith.constant 1 : i32\n"
                     "    %hide = arith.cmpi eq, %e, %c1 : i32\n"),
        ("uitofp_i1", "    %e = arith.uitofp %future : i1 to f32\n"
                      "    %hide = arith.cmpf oeq, %e, %one : f32\n"),
        ("sitofp_i1", "    %e = arith.sitofp %future : i1 to f32\n"
                      "    %m1 = arith.constant -1.0 : f32\n"
                      "    %hide = arith.cmpf oeq, %e, %m1 : f32\n"),
        ("index_cast_i1", "    %e = arith.index_cast %future : i1 to index\n"
                          "    %c0 = arith.constant 0 : index\n"
                          "    %hide = arith.cmpi slt, %e, %c0 : index\n"),
        ("index_castui_i1", "    %e = arith.index_castui %future : i1 to index\n"
                            "    %c1 = arith.constant 1 : index\n"
                            "    %hide = arith.cmpi eq, %e, %c1 : index\n"),
        ("cmpi_slt_i1", "    %v0 = arith.select %future, %true, %false : i1\n"
                        "    %hide = arith.cmpi slt, %v0, %false : i1\n"),
        # Integer results wrap: 127 + 1 is -128 in i8.
        ("addi_i8_wraps", "    %c127 = arith.constant 127 : i8\n"
                          "    %c0 = arith.constant 0 : i8\n"
                          "    %c1 = arith.constant 1 : i8\n"
                          "    %s0 = arith.select %future, %c127, %c0 : i8\n"
                          "    %a0 = arith.addi %s0, %c1 : i8\n"
                          "    %vis = arith.cmpi sgt, %a0, %c0 : i8\n"),
        ("addi_i1_wraps", "    %v0 = arith.cmpi ugt, %j, %i : index\n"
                          "    %vis = arith.addi %v0, %true : i1\n"),
        # Float results round to their type: 1e-9 is 0 in f16, and
        # 0.5 + 1e8 is 1e8 in f32.
        ("truncf_rounds", "    %tiny = arith.constant 1.0e-09 : f32\n"
                          "    %s0 = arith.select %future, %one, %tiny : f32\n"
                          "    %h = arith.truncf %s0 : f32 to f16\n"
                          "    %h0 = arith.constant 0.0 : f16\n"
                          "    %vis = arith.cmpf oeq, %h, %h0 : f16\n"),
        ("addf_rounds", "    %half = arith.constant 0.5 : f32\n"
                        "    %c16 = arith.constant 16.0 : f32\n"
                        "    %big = arith.constant 1.0e+08 : f32\n"
                        "    %s0 = arith.select %future, %c16, %half : f32\n"
                        "    %a0 = arith.addf %s0, %big : f32\n"
                        "    %a1 = arith.subf %a0, %big : f32\n"
                        "    %vis = arith.cmpf oeq, %a1, %zf : f32\n"),
    ]
    return cases


def mask_op_kernel(idx, name, lines):
    # The same inputs for every case (the file holds them once).
    own = np.random.RandomState(5000)
    shape = (B, H, LQ, LK)
    vis = "%vis" if "%vis =" in lines else None
    pick = ("    %r = arith.select %vis, %a, %ninf : f32\n" if vis else
            "    %r = arith.select %hide, %ninf, %a : f32\n")
    steps = elementwise("x", [("s", ty(shape), None)], shape,
                        f"    %ninf = arith.constant {NEG_INF} : f32\n"
                        "    %nan = arith.constant 0x7FC00000 : f32\n"
                        "    %c = arith.constant 0.353553385 : f32\n"
                        "    %zf = arith.constant 0.0 : f32\n"
                        "    %one = arith.constant 1.0 : f32\n"
                        "    %true = arith.constant true\n"
                        "    %false = arith.constant false\n"
                        "    %ic1 = arith.constant 1 : index\n"
                        "    %i = linalg.index 2 : index\n"
                        "    %j = linalg.index 3 : index\n"
                        "    %i1 = arith.addi %i, %ic1 : index\n"
                        "    %ii = arith.index_castui %i : index to i32\n"
                        "    %ji = arith.index_castui %j : index to i32\n"
                        "    %fi = arith.uitofp %ii : i32 to f32\n"
                        "    %fj = arith.uitofp %ji : i32 to f32\n"
                        "    %fi1 = arith.addf %fi, %one : f32\n"
                        "    %d = arith.subf %fj, %fi : f32\n"
                        "    %future = arith.cmpi ugt, %j, %i : index\n"
                        "    %a = arith.mulf %in0, %c : f32\n"
                        + lines + pick +
                        "    linalg.yield %r : f32\n")
    body = qk_generic4("s", "q", "k") + steps
    body += softmax_named("p", "x", shape)
    body += pv_generic4("o", "p", "v")
    body += f"  return %o : {ty((B, H, LQ, DV))}\n"
    fname = f"mask_{name}"
    return Func(fname, [
        ("q", ty((B, H, LQ, D)), own.standard_normal((B, H, LQ, D)).astype(np.float32)),
        ("k", ty((B, H, LK, D)), own.standard_normal((B, H, LK, D)).astype(np.float32)),
        ("v", ty((B, H, LK, DV)), own.standard_normal((B, H, LK, DV)).astype(np.float32))],
        ty((B, H, LQ, DV)), body,
        ir=[f"// IR-LABEL: func @{fname}(",
            "// IR-NOT: linalg.generic",
            "// IR: attn.attention ins({{[^)]*}}) outs({{[^)]*}}) "
            "scale = 0.353553385 causal = top_left ->"])


def mask_op_kernels():
    return [lambda i=i, n=n, l=l: mask_op_kernel(i, n, l)
            for i, (n, l) in enumerate(mask_op_cases())]


# ---------------------------------------------------------------------------
# Reduced precision
# ---------------------------------------------------------------------------

def k_f16_upcast_softmax():
    body = qk_generic4("s", "q", "k", elt="f16", out_elt="f16")
    body += elementwise("x", [("s", ty(S4, "f16"), None)], S4,
                        "    %w = arith.extf %in0 : f16 to f32\n"
                        "    %c = arith.constant 0.353553385 : f32\n"
                        "    %r = arith.mulf %w, %c : f32\n"
                        "    linalg.yield %r : f32\n")
    body += softmax_named("p32", "x", S4)
    body += elementwise("p", [("p32", ty(S4), None)], S4,
                        "    %r = arith.truncf %in0 : f32 to f16\n"
                        "    linalg.yield %r : f16\n", out_elt="f16")
    body += pv_generic4("o", "p", "v", elt="f16", out_elt="f16")
    body += f"  return %o : {ty((B, H, LQ, DV), 'f16')}\n"
    return Func("f16_scores_upcast_around_softmax", qkv_args(elt="f16"),
                ty((B, H, LQ, DV), "f16"), body)


def k_bf16_mixed():
    body = qk_generic4("s", "q", "k", elt="bf16", out_elt="f32", ext=True)
    body += scale_tensor("x", "s", S4, "0.353553385")
    body += softmax_generic("p32", "x", S4)
    body += elementwise("p", [("p32", ty(S4), None)], S4,
                        "    %r = arith.truncf %in0 : f32 to bf16\n"
                        "    linalg.yield %r : bf16\n", out_elt="bf16")
    body += pv_generic4("o", "p", "v", elt="bf16", out_elt="f32", ext=True)
    body += f"  return %o : {ty((B, H, LQ, DV))}\n"
    return Func("bf16_inputs_f32_accumulation", qkv_args(elt="bf16"),
                ty((B, H, LQ, DV)), body)


# ---------------------------------------------------------------------------
# TOSA
# ---------------------------------------------------------------------------

class Tosa:
    """Emits TOSA ops with fresh names."""

    def __init__(self):
        self.n = 0
        self.lines = []

    def fresh(self):
        self.n += 1
        return f"%t{self.n}"

    def op(self, text):
        self.lines.append(f"  {text}\n")

    def reshape(self, x, src, dst, elt="f32"):
        shape, out = self.fresh(), self.fresh()
        self.op(f"{shape} = tosa.const_shape {{values = dense<"
                f"[{', '.join(map(str, dst))}]> : tensor<{len(dst)}xindex>}} : "
                f"() -> !tosa.shape<{len(dst)}>")
        self.op(f"{out} = tosa.reshape {x}, {shape} : ({ty(src, elt)}, "
                f"!tosa.shape<{len(dst)}>) -> {ty(dst, elt)}")
        return out

    def transpose(self, x, src, perm, elt="f32"):
        out = self.fresh()
        dst = [src[p] for p in perm]
        self.op(f"{out} = tosa.transpose {x} {{perms = array<i32: "
                f"{', '.join(map(str, perm))}>}} : ({ty(src, elt)}) -> "
                f"{ty(dst, elt)}")
        return out

    def const(self, value, shape, elt="f32"):
        out = self.fresh()
        self.op(f'{out} = "tosa.const"() <{{values = dense<{value}> : '
                f'{ty(shape, elt)}}}> : () -> {ty(shape, elt)}')
        return out

    def matmul(self, a, at, b, bt, out_shape, in_elt="f32", out_elt="f32"):
        zp = self.const("0.0", (1,), in_elt)
        out = self.fresh()
        self.op(f"{out} = tosa.matmul {a}, {b}, {zp}, {zp} : ({ty(at, in_elt)}, "
                f"{ty(bt, in_elt)}, {ty((1,), in_elt)}, {ty((1,), in_elt)}) -> "
                f"{ty(out_shape, out_elt)}")
        return out

    def binary(self, name, a, at, b, bt, out, elt="f32", extra=""):
        r = self.fresh()
        shift = ""
        shift_t = ""
        if name == "mul":
            s = self.const("0", (1,), "i8")
            shift, shift_t = f", {s}", f", {ty((1,), 'i8')}"
        self.op(f"{r} = tosa.{name} {a}, {b}{shift} : ({ty(at, elt)}, "
                f"{ty(bt, elt)}{shift_t}) -> {ty(out, elt)}")
        return r

    def unary(self, name, x, shape, elt="f32", out_elt=None, attrs=""):
        r = self.fresh()
        out_shape = shape
        self.op(f"{r} = tosa.{name} {x}{attrs} : ({ty(shape, elt)}) -> "
                f"{ty(out_shape, out_elt or elt)}")
        return r

    def reduce(self, name, x, shape, axis):
        r = self.fresh()
        out = list(shape)
        out[axis] = 1
        self.op(f"{r} = tosa.{name} {x} {{axis = {axis} : i32}} : "
                f"({ty(shape)}) -> {ty(out)}")
        return r

    def softmax(self, x, shape):
        axis = len(shape) - 1
        row = list(shape)
        row[axis] = 1
        mx = self.reduce("reduce_max", x, shape, axis)
        d = self.binary("sub", x, shape, mx, row, shape)
        e = self.unary("exp", d, shape)
        sm = self.reduce("reduce_sum", e, shape, axis)
        r = self.unary("reciprocal", sm, row)
        return self.binary("mul", e, shape, r, row, shape)

    def body(self, result, result_type):
        return "".join(self.lines) + f"  return {result} : {result_type}\n"


def k_tosa_tflite():
    """[B, L, H*D] projections split into heads, as a TFLite export has it."""
    d, dv = 4, 2
    bh = B * H
    t = Tosa()
    q4 = t.reshape("%q", (B, LQ, H * d), (B, LQ, H, d))
    qt = t.transpose(q4, (B, LQ, H, d), (0, 2, 1, 3))
    q3 = t.reshape(qt, (B, H, LQ, d), (bh, LQ, d))
    k4 = t.reshape("%k", (B, LK, H * d), (B, LK, H, d))
    kt = t.transpose(k4, (B, LK, H, d), (0, 2, 3, 1))
    k3 = t.reshape(kt, (B, H, d, LK), (bh, d, LK))
    s = t.matmul(q3, (bh, LQ, d), k3, (bh, d, LK), (bh, LQ, LK))
    s4 = t.reshape(s, (bh, LQ, LK), S4)
    c = t.const("0.5", (1, 1, 1, 1))
    ss = t.binary("mul", s4, S4, c, (1, 1, 1, 1), S4)
    x = t.binary("add", ss, S4, "%mask", (B, 1, 1, LK), S4)
    p = t.softmax(x, S4)
    p3 = t.reshape(p, S4, (bh, LQ, LK))
    v4 = t.reshape("%v", (B, LK, H * dv), (B, LK, H, dv))
    vt = t.transpose(v4, (B, LK, H, dv), (0, 2, 1, 3))
    v3 = t.reshape(vt, (B, H, LK, dv), (bh, LK, dv))
    o = t.matmul(p3, (bh, LQ, LK), v3, (bh, LK, dv), (bh, LQ, dv))
    o4 = t.reshape(o, (bh, LQ, dv), (B, H, LQ, dv))
    ot = t.transpose(o4, (B, H, LQ, dv), (0, 2, 1, 3))
    out = t.reshape(ot, (B, LQ, H, dv), (B, LQ, H * dv))
    mask = np.where(padding().reshape(B, 1, 1, LK), 0.0, -1e9).astype(np.float32)
    return Func("tosa_tflite_heads_additive_mask", [
        ("q", ty((B, LQ, H * d)), randn((B, LQ, H * d))),
        ("k", ty((B, LK, H * d)), randn((B, LK, H * d))),
        ("v", ty((B, LK, H * dv)), randn((B, LK, H * dv))),
        ("mask", ty((B, 1, 1, LK)), mask)],
        ty((B, LQ, H * dv)), t.body(out, ty((B, LQ, H * dv))))


def k_tosa_select_tile_gqa():
    g = HQ // HKV
    bh = B * HQ
    s4 = (B, HQ, LQ, LK)
    t = Tosa()
    q3 = t.reshape("%q", (B, HQ, LQ, D), (bh, LQ, D))

    def tiled(x, d):
        x5 = t.reshape(x, (B, HKV, LK, d), (B, HKV, 1, LK, d))
        mult = t.fresh()
        t.op(f"{mult} = tosa.const_shape {{values = dense<[1, 1, {g}, 1, 1]> "
             f": tensor<5xindex>}} : () -> !tosa.shape<5>")
        r = t.fresh()
        t.op(f"{r} = tosa.tile {x5}, {mult} : ({ty((B, HKV, 1, LK, d))}, "
             f"!tosa.shape<5>) -> {ty((B, HKV, g, LK, d))}")
        return t.reshape(r, (B, HKV, g, LK, d), (B, HQ, LK, d))

    k4 = tiled("%k", D)
    kt = t.transpose(k4, (B, HQ, LK, D), (0, 1, 3, 2))
    k3 = t.reshape(kt, (B, HQ, D, LK), (bh, D, LK))
    s = t.matmul(q3, (bh, LQ, D), k3, (bh, D, LK), (bh, LQ, LK))
    sc = t.reshape(s, (bh, LQ, LK), s4)
    tri = np.arange(LK)[None, :] <= np.arange(LQ)[:, None] + (LK - LQ)
    tri_c = t.fresh()
    t.op(f'{tri_c} = "tosa.const"() <{{values = '
         f'{dense(tri.reshape(1, 1, LQ, LK), "i1")}}}> : () -> '
         f'{ty((1, 1, LQ, LK), "i1")}')
    fill = t.const(NEG_INF, (1, 1, 1, 1))
    sel = t.fresh()
    t.op(f"{sel} = tosa.select {tri_c}, {sc}, {fill} : ({ty((1, 1, LQ, LK), 'i1')}"
         f", {ty(s4)}, {ty((1, 1, 1, 1))}) -> {ty(s4)}")
    c = t.const("0.353553385", (1, 1, 1, 1))
    x = t.binary("mul", sel, s4, c, (1, 1, 1, 1), s4)
    p = t.softmax(x, s4)
    p3 = t.reshape(p, s4, (bh, LQ, LK))
    v4 = tiled("%v", DV)
    v3 = t.reshape(v4, (B, HQ, LK, DV), (bh, LK, DV))
    o = t.matmul(p3, (bh, LQ, LK), v3, (bh, LK, DV), (bh, LQ, DV))
    out = t.reshape(o, (bh, LQ, DV), (B, HQ, LQ, DV))
    return Func("tosa_causal_select_tile_gqa", [
        ("q", ty((B, HQ, LQ, D)), randn((B, HQ, LQ, D))),
        ("k", ty((B, HKV, LK, D)), randn((B, HKV, LK, D))),
        ("v", ty((B, HKV, LK, DV)), randn((B, HKV, LK, DV)))],
        ty((B, HQ, LQ, DV)), t.body(out, ty((B, HQ, LQ, DV))))


def k_tosa_tile_repeat_order():
    """K/V tiled along the head dim (torch .repeat): query head h reads kv
    head h % Hkv, so the op's head dim needs a permutation of q."""
    g = HQ // HKV
    bh = B * HQ
    s4 = (B, HQ, LQ, LK)
    t = Tosa()

    def tiled(x, d):
        mult = t.fresh()
        t.op(f"{mult} = tosa.const_shape {{values = dense<[1, {g}, 1, 1]> : "
             f"tensor<4xindex>}} : () -> !tosa.shape<4>")
        r = t.fresh()
        t.op(f"{r} = tosa.tile {x}, {mult} : ({ty((B, HKV, LK, d))}, "
             f"!tosa.shape<4>) -> {ty((B, HQ, LK, d))}")
        return r

    k4 = tiled("%k", D)
    kt = t.transpose(k4, (B, HQ, LK, D), (0, 1, 3, 2))
    k3 = t.reshape(kt, (B, HQ, D, LK), (bh, D, LK))
    q3 = t.reshape("%q", (B, HQ, LQ, D), (bh, LQ, D))
    s = t.matmul(q3, (bh, LQ, D), k3, (bh, D, LK), (bh, LQ, LK))
    sc = t.reshape(s, (bh, LQ, LK), s4)
    c = t.const("0.353553385", (1, 1, 1, 1))
    x = t.binary("mul", sc, s4, c, (1, 1, 1, 1), s4)
    p = t.softmax(x, s4)
    p3 = t.reshape(p, s4, (bh, LQ, LK))
    v3 = t.reshape(tiled("%v", DV), (B, HQ, LK, DV), (bh, LK, DV))
    o = t.matmul(p3, (bh, LQ, LK), v3, (bh, LK, DV), (bh, LQ, DV))
    out = t.reshape(o, (bh, LQ, DV), (B, HQ, LQ, DV))
    return Func("tosa_tile_repeat_order_gqa", [
        ("q", ty((B, HQ, LQ, D)), randn((B, HQ, LQ, D))),
        ("k", ty((B, HKV, LK, D)), randn((B, HKV, LK, D))),
        ("v", ty((B, HKV, LK, DV)), randn((B, HKV, LK, DV)))],
        ty((B, HQ, LQ, DV)), t.body(out, ty((B, HQ, LQ, DV))))


def k_tosa_f16():
    bh = B * H
    shp = (bh, LQ, LK)
    t = Tosa()
    kt = t.transpose("%k", (bh, LK, D), (0, 2, 1), "f16")
    s = t.matmul("%q", (bh, LQ, D), kt, (bh, D, LK), shp, "f16", "f16")
    s32 = t.unary("cast", s, shp, "f16", "f32")
    c = t.const("0.353553385", (1, 1, 1))
    x = t.binary("mul", s32, shp, c, (1, 1, 1), shp)
    p = t.softmax(x, shp)
    p16 = t.unary("cast", p, shp, "f32", "f16")
    o = t.matmul(p16, shp, "%v", (bh, LK, DV), (bh, LQ, DV), "f16", "f16")
    return Func("tosa_f16_cast_around_softmax", [
        ("q", ty((bh, LQ, D), "f16"), randn((bh, LQ, D))),
        ("k", ty((bh, LK, D), "f16"), randn((bh, LK, D))),
        ("v", ty((bh, LK, DV), "f16"), randn((bh, LK, DV)))],
        ty((bh, LQ, DV), "f16"), t.body(o, ty((bh, LQ, DV), "f16")))


TOSA_TO_LINALG = ("'builtin.module(func.func(tosa-to-linalg-named,"
                  "tosa-to-linalg,tosa-to-arith,tosa-to-tensor))'")

# TOSA builds masks from constant tables (it has no iota); each case maps
# a TOSA op to its arith form for the evaluator. As above, each mask is
# top-left causal under the ops' semantics (TOSA's cast of a bool gives 1).
def tosa_mask_op_cases():
    """(name, build) per case: build(t, ss) returns ("vis"|"hide"|"term",
    value) for the select or the additive term."""
    shape = (1, LQ, LK)
    fut = np.arange(LK)[None, None, :] > np.arange(LQ)[None, :, None]

    def table(t, arr, elt):
        c = t.fresh()
        t.op(f'{c} = "tosa.const"() <{{values = {dense(arr, elt)}}}> : () -> '
             f'{ty(shape, elt)}')
        return c

    def simple(name, arr, elt, value, out_elt):
        """tosa.`name` of the table `arr` and the splat `value`."""
        def build(t):
            a = table(t, arr, elt)
            b = t.const(value, (1, 1, 1), elt)
            r = t.fresh()
            t.op(f"{r} = tosa.{name} {a}, {b} : ({ty(shape, elt)}, "
                 f"{ty((1, 1, 1), elt)}) -> {ty(shape, out_elt)}")
            return r
        return build

    def cast_then_scale(arr, elt):
        def build(t):
            a = table(t, arr, elt)
            f = t.fresh()
            t.op(f"{f} = tosa.cast {a} : ({ty(shape, elt)}) -> {ty(shape)}")
            big = t.const("-10000.0", (1, 1, 1))
            return t.binary("mul", f, shape, big, (1, 1, 1), shape)
        return build

    def negate(t):
        a = table(t, np.where(fut, 10000.0, 0.0).astype(np.float32), "f32")
        zp = t.const("0.0", (1,))
        r = t.fresh()
        t.op(f"{r} = tosa.negate {a}, {zp}, {zp} : ({ty(shape)}, "
             f"{ty((1,))}, {ty((1,))}) -> {ty(shape)}")
        return r

    def logical_not(t):
        a = table(t, fut, "i1")
        r = t.fresh()
        t.op(f"{r} = tosa.logical_not {a} : ({ty(shape, 'i1')}) -> "
             f"{ty(shape, 'i1')}")
        return r

    def reciprocal(t):
        a = table(t, fut.astype(np.float32), "f32")
        c = t.const("-1.0e-04", (1, 1, 1))
        r = t.unary("reciprocal", c, (1, 1, 1))
        return t.binary("mul", a, shape, r, (1, 1, 1), shape)

    def sub(t):
        z = t.const("0.0", (1, 1, 1))
        a = table(t, np.where(fut, 10000.0, 0.0).astype(np.float32), "f32")
        return t.binary("sub", z, (1, 1, 1), a, shape, shape)

    pen = np.where(fut, -10000.0, 0.0).astype(np.float32)
    past_f, past_i = (~fut).astype(np.float32), (~fut).astype(np.int32)
    fut_f, fut_i = fut.astype(np.float32), fut.astype(np.int32)
    return [
        ("greater_f32", "vis", simple("greater", past_f, "f32", "0.0", "i1")),
        ("greater_i32", "vis", simple("greater", past_i, "i32", "0", "i1")),
        ("greater_equal_f32", "vis",
         simple("greater_equal", past_f, "f32", "1.0", "i1")),
        ("greater_equal_i32", "vis",
         simple("greater_equal", past_i, "i32", "1", "i1")),
        ("equal_f32", "vis", simple("equal", fut_f, "f32", "0.0", "i1")),
        ("equal_i32", "vis", simple("equal", fut_i, "i32", "0", "i1")),
        ("logical_and", "vis", simple("logical_and", ~fut, "i1", "true", "i1")),
        ("logical_or", "hide", simple("logical_or", fut, "i1", "false", "i1")),
        ("logical_not", "vis", logical_not),
        ("maximum", "term", simple("maximum", pen, "f32", "-20000.0", "f32")),
        ("minimum", "term", simple("minimum", pen, "f32", "0.0", "f32")),
        ("negate", "term", negate),
        ("cast_bool", "term", cast_then_scale(fut, "i1")),
        ("cast_i32", "term", cast_then_scale(fut.astype(np.int32), "i32")),
        ("reciprocal", "term", reciprocal),
        ("sub", "term", sub),
    ]


def tosa_mask_op_kernel(name, kind, build):
    own = np.random.RandomState(6000)
    bh = B * H
    s3 = (bh, LQ, LK)
    t = Tosa()
    kt = t.transpose("%k", (bh, LK, D), (0, 2, 1))
    s = t.matmul("%q", (bh, LQ, D), kt, (bh, D, LK), s3)
    c = t.const("0.353553385", (1, 1, 1))
    ss = t.binary("mul", s, s3, c, (1, 1, 1), s3)
    m = build(t)
    if kind == "term":
        x = t.binary("add", ss, s3, m, (1, LQ, LK), s3)
    else:
        fill = t.const(NEG_INF, (1, 1, 1))
        x = t.fresh()
        a, b = (ss, fill) if kind == "vis" else (fill, ss)
        at, bt = (s3, (1, 1, 1)) if kind == "vis" else ((1, 1, 1), s3)
        t.op(f"{x} = tosa.select {m}, {a}, {b} : ({ty((1, LQ, LK), 'i1')}, "
             f"{ty(at)}, {ty(bt)}) -> {ty(s3)}")
    p = t.softmax(x, s3)
    o = t.matmul(p, s3, "%v", (bh, LK, DV), (bh, LQ, DV))
    fname = f"tosa_mask_{name}"
    return Func(fname, [
        ("q", ty((bh, LQ, D)), own.standard_normal((bh, LQ, D)).astype(np.float32)),
        ("k", ty((bh, LK, D)), own.standard_normal((bh, LK, D)).astype(np.float32)),
        ("v", ty((bh, LK, DV)), own.standard_normal((bh, LK, DV)).astype(np.float32))],
        ty((bh, LQ, DV)), t.body(o, ty((bh, LQ, DV))),
        ir=[f"// IR-LABEL: func @{fname}(",
            "// IR: attn.attention ins({{[^)]*}}) outs({{[^)]*}}) "
            "scale = 0.353553385 causal = top_left ->"])


def tosa_mask_op_kernels():
    return [lambda n=n, k=k, b=b: tosa_mask_op_kernel(n, k, b)
            for n, k, b in tosa_mask_op_cases()]


FAMILIES = {
    "linalg": ("matmuls and softmax forms in linalg on tensors",
               [k_generic4, k_bmm_softmax, k_matmul_recip, k_bmm_maps_reduce,
                k_collapsed_bmm], "--rtol 1e-4 --atol 1e-5"),
    "masks": ("with additive, boolean and causal masks",
              [k_additive_f16_bias, k_bool_select, k_masked_fill_eq0,
               k_one_minus_mask, k_causal_iota_bottom_right,
               k_causal_offset_diagonal, k_causal_constant_top_left,
               k_gpt2_style, k_negated_scores_then_mask,
               k_causal_buffer_penalty, k_sitofp_true_is_minus_one,
               k_i1_add_wraps, k_sliding_window_padding,
               k_alibi_padding_bias],
              "--rtol 1e-4 --atol 1e-5"),
    "layouts": ("with q/k/v layouts, folded heads and GQA/MQA broadcasts",
                [k_blhd, k_gqa, k_mqa, k_pretransposed_k, k_torch_bmm_gqa,
                 k_everything, k_latent_queries, k_dynamic_shapes,
                 k_mixed_static_dynamic],
                "--rtol 1e-4 --atol 1e-5"),
    # The unfused graphs round scores and probabilities to f16/bf16; the op
    # keeps them in f32, so the tolerance is a few ulps of the narrow type.
    "reduced-precision": ("in f16 and bf16 with f32 softmax",
                          [k_f16_upcast_softmax, k_bf16_mixed],
                          "--rtol 1e-2 --atol 1e-2"),
    "tosa": ("in TOSA, lowered with tosa-to-linalg after raising",
             [k_tosa_tflite, k_tosa_select_tile_gqa, k_tosa_tile_repeat_order],
             "--rtol 1e-4 --atol 1e-5 --lower-first=" + TOSA_TO_LINALG),
    "tosa-f16": ("in TOSA with f16 tensors",
                 [k_tosa_f16],
                 "--rtol 1e-2 --atol 1e-2 --lower-first=" + TOSA_TO_LINALG),
    "mask-ops": ("with masks built by one op each, every one top-left "
                 "causal (the\n// second RUN line checks the raised op)",
                 mask_op_kernels(), "--rtol 1e-4 --atol 1e-5"),
    "tosa-mask-ops": ("in TOSA, with masks built by one op each from "
                      "constant tables, every\n// one top-left causal (the "
                      "second RUN line checks the raised op)",
                      tosa_mask_op_kernels(),
                      "--rtol 1e-4 --atol 1e-5 --lower-first=" + TOSA_TO_LINALG),
}


def render(family, description, kernels, tolerance):
    funcs = [k() for k in kernels]
    out = [f"// RUN: %raise-compare %s --expect-raised {len(funcs)} {tolerance}"
           f" | FileCheck %s",
           f"// CHECK: OK: {len(funcs)} raised"]
    if any(f.ir for f in funcs):
        out.append("// RUN: attn-opt %s --attn-raise | FileCheck %s "
                   "--check-prefix=IR")
    out += ["",
           f"// Unfused attention, {description}: each function is one form",
           "// --attn-raise must recognize; @main runs all of them on random",
           "// inputs and raise_compare.py checks that raising changes no",
           "// output. Generated by test/lib/gen_raise_tests.py; do not edit.",
           "",
           "func.func private @printMemrefF32(tensor<*xf32>)",
           ""]
    for f in funcs:
        out += f.ir
        out.append(f.text())
    out.append("func.func @main() {")
    # Kernels given the same inputs share their constants.
    defined = {}
    for n, f in enumerate(funcs):
        names = []
        for an, at, data in f.args:
            elt = at.split("x")[-1].rstrip(">")
            key = (at, np.asarray(data).tobytes())
            if key not in defined:
                defined[key] = f"%{f.name}_{an}"
                if "?" in at:
                    # A dynamic parameter gets the static constant, cast.
                    static = ty(np.shape(data), elt)
                    out.append(f"  {defined[key]}_s = arith.constant "
                               f"{dense(data, elt)}")
                    out.append(f"  {defined[key]} = tensor.cast "
                               f"{defined[key]}_s : {static} to {at}")
                else:
                    out.append(f"  {defined[key]} = arith.constant "
                               f"{dense(data, elt)}")
            names.append(defined[key])
        out.append(f"  %r{n} = call @{f.name}({', '.join(names)}) : "
                   f"({', '.join(t for _, t, _ in f.args)}) -> {f.result}")
        res_elt = f.result.split("x")[-1].rstrip(">")
        val = f"%r{n}"
        if res_elt != "f32":
            f32 = f.result.replace(res_elt + ">", "f32>")
            out.append(f"  %r{n}f = arith.extf %r{n} : {f.result} to {f32}")
            val = f"%r{n}f"
        out.append(f"  %u{n} = tensor.cast {val} : "
                   f"{f.result.replace(res_elt + '>', 'f32>')} to tensor<*xf32>")
        out.append(f"  call @printMemrefF32(%u{n}) : (tensor<*xf32>) -> ()")
    out.append("  return")
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(outdir, exist_ok=True)
    for family, (description, kernels, tolerance) in FAMILIES.items():
        path = os.path.join(outdir, f"raise-{family}.mlir")
        with open(path, "w") as f:
            f.write(render(family, description, kernels, tolerance))
        print(path)


if __name__ == "__main__":
    main()
