"""Random unfused attention graphs in TOSA, for the differential tester
(attn_random.py --tosa N).

Each graph is attention as a TOSA frontend (TFLite, torch-mlir) spells it:
``tosa.matmul`` on 3-D operands with reshapes and transposes around it
(q/k/v as [B*H, L, D], [B, H, L, D] or TFLite's [B, L, H*D] projections,
K transposed in the graph or already), K/V heads grouped with
``tosa.tile`` (repeat-interleave or repeat order), a scale by ``tosa.mul``
of the scores, of q, of q and k, or by the reciprocal of a constant, an
additive bias, a boolean mask by ``tosa.select`` (kept or negated with
``tosa.logical_not``) against ``-inf``, -1e9 or the lowest f32, a causal
mask as a constant triangle (selected or added), the softmax as
reduce_max/sub/exp/reduce_sum/reciprocal/mul (or without the max), and
f16/bf16 operands with f32 softmax. ``--attn-raise`` must raise each to
exactly one ``attn.attention``; the rest is lowered with tosa-to-linalg,
run, and compared with the float64 reference of the semantics the graph
has (the reference is not computed by anything under test).
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_reference as ref  # noqa: E402
from gen_raise_tests import Tosa, dense, ty  # noqa: E402

LENGTHS = [1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 32, 33, 37, 64]
HEAD_DIMS = [1, 2, 3, 4, 5, 8, 16, 24, 32, 40, 64]
MAX_ELEMS = 40_000

#: Fills a boolean mask selects for hidden scores: each reaches the softmax
#: at <= -1000, where --attn-raise takes it for -inf.
FILLS = {"-inf": "0xFF800000", "-1e9": "-1.0e+09", "-1e4": "-1.0e+04",
         "lowest": "-3.40282347e+38"}
FILL_VALUES = {"-inf": -np.inf, "-1e9": -1e9, "-1e4": -1e4,
               "lowest": float(np.finfo(np.float32).min)}

#: TOSA lowering of what --attn-raise leaves (reshapes, transposes).
TOSA_TO_LINALG = ("--pass-pipeline=builtin.module(func.func("
                  "tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,"
                  "tosa-to-tensor))")


def _full(rng: np.random.Generator, rank: int) -> list[bool]:
    return [bool(x) for x in rng.random(rank) < 0.6]


def random_tosa_graph(rng: np.random.Generator) -> dict:
    while True:
        g: dict = {}
        g["layout"] = str(rng.choice(["bhld", "bhld", "blhd", "bh3"]))
        g["dtype"] = str(rng.choice(["f32", "f32", "f16", "bf16"]))
        # Narrow matmuls accumulate to f32, or round to their own type and
        # are cast up before the softmax.
        g["acc"] = str(rng.choice(["f32", "narrow"]))
        if g["dtype"] == "f32":
            g["acc"] = "f32"
        g["b"] = int(rng.choice([1, 2]))
        g["hkv"] = int(rng.choice([1, 1, 2, 3]))
        g["h"] = g["hkv"] * (int(rng.choice([1, 1, 2, 3]))
                             if g["layout"] == "bhld" else 1)
        g["tile"] = (str(rng.choice(["interleave", "repeat"]))
                     if g["h"] > g["hkv"] else None)
        g["lq"] = int(rng.choice(LENGTHS))
        g["lk"] = int(rng.choice(LENGTHS))
        g["d"] = int(rng.choice(HEAD_DIMS))
        g["dv"] = int(rng.choice(HEAD_DIMS))
        g["k_pretransposed"] = (g["layout"] != "blhd"
                                and bool(rng.random() < 0.3))
        g["scores_rank"] = (3 if g["layout"] == "bh3" or rng.random() < 0.3
                            else 4)
        g["scale_form"] = str(rng.choice(
            ["scores", "scores", "q", "qk", "recip", "none"]))
        g["scale_value"] = float(rng.choice(
            [1.0 / np.sqrt(g["d"]), 1.0 / np.sqrt(g["d"]), 0.125, 0.5, 2.0]))
        g["scale_last"] = bool(rng.random() < 0.3)
        rank = g["scores_rank"]
        g["bias"] = ({"full": _full(rng, rank)} if rng.random() < 0.3
                     else None)
        g["mask"] = None
        if rng.random() < 0.35:
            g["mask"] = {"full": _full(rng, rank),
                         "fill": str(rng.choice(list(FILLS))),
                         "negated": bool(rng.random() < 0.4),
                         "hidden_rows": int(rng.random() < 0.3),
                         "form": str(rng.choice(["select", "add"]))}
            if g["mask"]["form"] == "add" and g["mask"]["fill"] == "-inf":
                # (1 - m) * -inf is NaN where m is 1: frontends use
                # finite fills here.
                g["mask"]["fill"] = "-1e4"
        g["causal"] = None
        if rng.random() < 0.35:
            g["causal"] = {
                "align": str(rng.choice(["top_left", "bottom_right"])),
                "form": str(rng.choice(["select", "add"])),
                "fill": str(rng.choice(list(FILLS)))}
        g["causal_first"] = bool(rng.random() < 0.5)
        g["softmax"] = str(rng.choice(["max_sub", "max_sub", "no_max"]))
        g["seed"] = int(rng.integers(1 << 30))
        if tosa_graph_valid(g):
            return g


def tosa_graph_valid(g: dict) -> bool:
    if g["h"] % g["hkv"] or (g["h"] > g["hkv"]) != bool(g["tile"]):
        return False
    if g["layout"] != "bhld" and g["h"] != g["hkv"]:
        return False
    if g["layout"] == "bh3" and g["scores_rank"] != 3:
        return False
    m = g["mask"]
    if m and len(m["full"]) != g["scores_rank"]:
        return False
    if g["bias"] and len(g["bias"]["full"]) != g["scores_rank"]:
        return False
    bh = g["b"] * g["h"]
    size = bh * max(g["lq"], g["lk"]) * max(g["d"], g["dv"], g["lq"],
                                            g["lk"])
    return size <= MAX_ELEMS


def tosa_graph_candidates(g: dict) -> list[dict]:
    """Simpler variants of ``g``, the most drastic first."""
    out = []

    def variant(**changes) -> None:
        q = dict(g)
        q.update(changes)
        if q != g:
            out.append(q)

    variant(bias=None)
    variant(mask=None)
    variant(causal=None)
    variant(dtype="f32")
    if g["layout"] != "bh3":
        variant(layout="bh3", scores_rank=3, b=g["b"] * g["hkv"], h=1,
                hkv=1, tile=None, k_pretransposed=False)
    variant(h=g["hkv"], tile=None)
    variant(scale_form="scores")
    variant(scale_last=False)
    variant(softmax="max_sub")
    variant(k_pretransposed=False)
    variant(acc="f32")
    if g["mask"]:
        variant(mask=dict(g["mask"], negated=False, hidden_rows=0,
                          fill="-inf"))
    if g["causal"]:
        variant(causal=dict(g["causal"], form="select", fill="-inf"))
    for key in ("b", "lq", "lk", "d", "dv"):
        for smaller in (1, g[key] // 2, g[key] - 1):
            if 1 <= smaller < g[key]:
                variant(**{key: smaller})
    if g["hkv"] > 1:
        variant(hkv=1, h=g["h"] // g["hkv"],
                tile=g["tile"] if g["h"] > g["hkv"] else None)
    for key in ("mask", "bias"):
        if g[key]:
            for d, f in enumerate(g[key]["full"]):
                if f:
                    full = list(g[key]["full"])
                    full[d] = False
                    variant(**{key: dict(g[key], full=full)})
    return [q for q in out if tosa_graph_valid(q)]


class _Emitter(Tosa):
    """gen_raise_tests.Tosa with the ops the random graphs add."""

    def binary_typed(self, name, a, at, b, bt, out, elt):
        r = self.fresh()
        self.op(f"{r} = tosa.{name} {a}, {b} : ({ty(at, elt)}, "
                f"{ty(bt, elt)}) -> {ty(out, elt)}")
        return r

    def mul(self, a, at, b, bt, out, elt="f32"):
        s = self.const("0", (1,), "i8")
        r = self.fresh()
        self.op(f"{r} = tosa.mul {a}, {b}, {s} : ({ty(at, elt)}, "
                f"{ty(bt, elt)}, {ty((1,), 'i8')}) -> {ty(out, elt)}")
        return r

    def select(self, pred, pt, a, at, b, bt, out):
        r = self.fresh()
        self.op(f"{r} = tosa.select {pred}, {a}, {b} : ({ty(pt, 'i1')}, "
                f"{ty(at)}, {ty(bt)}) -> {ty(out)}")
        return r

    def tile(self, x, src, multiples, elt):
        mult, r = self.fresh(), self.fresh()
        dst = [s * m for s, m in zip(src, multiples)]
        self.op(f"{mult} = tosa.const_shape {{values = dense<"
                f"[{', '.join(map(str, multiples))}]> : "
                f"tensor<{len(src)}xindex>}} : () -> !tosa.shape<{len(src)}>")
        self.op(f"{r} = tosa.tile {x}, {mult} : ({ty(src, elt)}, "
                f"!tosa.shape<{len(src)}>) -> {ty(dst, elt)}")
        return r

    def bool_const(self, arr):
        r = self.fresh()
        self.op(f'{r} = "tosa.const"() <{{values = {dense(arr, "i1")}}}> : '
                f'() -> {ty(arr.shape, "i1")}')
        return r

    def float_const(self, arr):
        r = self.fresh()
        self.op(f'{r} = "tosa.const"() <{{values = {dense(arr, "f32")}}}> : '
                f'() -> {ty(arr.shape)}')
        return r


def _bshape(full: list[bool], shape: list[int]) -> list[int]:
    return [s if f else 1 for s, f in zip(shape, full)]


def _f32(x: float) -> float:
    return float(np.float32(x))


def _rounded(x: float, dtype: str) -> float:
    return float(ref.round_to(np.array([x], np.float64), dtype)[0])


def emit_tosa_graph(g: dict, self_check_scale: float = 1.0,
                    name: str = "graph"):
    """Returns (program, reference, unpermute): @graph is the TOSA graph
    and @main runs it on embedded random inputs and prints its result as
    f32. ``reference(folded)`` is the float64 result in [B, H, Lq, Dv] (or
    [B*H, Lq, Dv]) and its rows with no visible key, of the graph as it is
    (``folded=False``) or with q's and k's scaling moved into the scale,
    unrounded, as --attn-raise may do; ``unpermute`` maps the printed
    result to that layout."""
    rng = np.random.default_rng(g["seed"])
    dt = g["dtype"]
    b, h, hkv, lq, lk, d, dv = (g[k] for k in
                                ("b", "h", "hkv", "lq", "lk", "d", "dv"))
    bh = b * h
    grp = h // hkv

    def randn(shape):
        return ref.round_to(rng.standard_normal(shape).astype(np.float32), dt)

    # The reference operands, [B, H(kv), L, D] (bh3: [B*H, L, D]).
    if g["layout"] == "bh3":
        q_r, k_r, v_r = randn([bh, lq, d]), randn([bh, lk, d]), randn(
            [bh, lk, dv])
    else:
        q_r, k_r, v_r = randn([b, h, lq, d]), randn([b, hkv, lk, d]), randn(
            [b, hkv, lk, dv])
    t = _Emitter()
    args = []

    # q, k and v as the graph takes them.
    if g["layout"] == "blhd":
        q_in = q_r.transpose(0, 2, 1, 3).reshape(b, lq, h * d)
        k_in = k_r.transpose(0, 2, 1, 3).reshape(b, lk, h * d)
        v_in = v_r.transpose(0, 2, 1, 3).reshape(b, lk, h * dv)
    elif g["k_pretransposed"]:
        q_in, k_in, v_in = q_r, np.swapaxes(k_r, -1, -2), v_r
    else:
        q_in, k_in, v_in = q_r, k_r, v_r
    args += [("q", q_in, dt), ("k", k_in, dt), ("v", v_in, dt)]
    qx, kx = "%q", "%k"

    scale = 1.0
    # q and k as they enter the op when --attn-raise folds their scaling
    # into its scale (attn.folded_scale), with that factor: the graph's
    # rounding of the scaled operands to f16/bf16 is then gone.
    q_fold, k_fold, fold = q_r, k_r, 1.0
    if g["scale_form"] == "q":
        c = _f32(g["scale_value"])
        qx = t.mul(qx, q_in.shape, t.const(repr(c), [1] * q_in.ndim, dt),
                   [1] * q_in.ndim, q_in.shape, dt)
        # The graph rounds the product to its type.
        fold = _rounded(c, dt)
        q_r = ref.round_to(q_r.astype(np.float64) * fold, dt)
    elif g["scale_form"] == "qk":
        root = _f32(np.sqrt(g["scale_value"]))
        qx = t.mul(qx, q_in.shape, t.const(repr(root), [1] * q_in.ndim, dt),
                   [1] * q_in.ndim, q_in.shape, dt)
        kx = t.mul(kx, k_in.shape, t.const(repr(root), [1] * k_in.ndim, dt),
                   [1] * k_in.ndim, k_in.shape, dt)
        fold = _rounded(root, dt) ** 2
        q_r = ref.round_to(q_r.astype(np.float64) * _rounded(root, dt), dt)
        k_r = ref.round_to(k_r.astype(np.float64) * _rounded(root, dt), dt)

    def heads_of(x, shape, perm_to_bhld):
        """A [B, L, H*D] projection as [B*H, L, D] (or [B*H, D, L])."""
        bb, ll, hd = shape
        x4 = t.reshape(x, shape, (bb, ll, h, hd // h), dt)
        src = (bb, ll, h, hd // h)
        xt = t.transpose(x4, src, perm_to_bhld, dt)
        dst = [src[p] for p in perm_to_bhld]
        return t.reshape(xt, dst, (bb * h, dst[2], dst[3]), dt)

    def grouped(x, shape):
        """K/V of [B, Hkv, X, Y] as [B, H, X, Y], by tosa.tile."""
        if grp == 1:
            return x
        bb, _, xx, yy = shape
        if g["tile"] == "repeat":
            return t.tile(x, shape, [1, grp, 1, 1], dt)
        x5 = t.reshape(x, shape, (bb, hkv, 1, xx, yy), dt)
        r = t.tile(x5, (bb, hkv, 1, xx, yy), [1, 1, grp, 1, 1], dt)
        return t.reshape(r, (bb, hkv, grp, xx, yy), (bb, h, xx, yy), dt)

    if g["layout"] == "blhd":
        q3 = heads_of(qx, q_in.shape, (0, 2, 1, 3))
        k3 = heads_of(kx, k_in.shape, (0, 2, 3, 1))
        v3 = heads_of("%v", v_in.shape, (0, 2, 1, 3))
    elif g["layout"] == "bhld":
        q3 = t.reshape(qx, q_in.shape, (bh, lq, d), dt)
        kg = grouped(kx, k_in.shape)
        if g["k_pretransposed"]:
            k3 = t.reshape(kg, (b, h, d, lk), (bh, d, lk), dt)
        else:
            kt = t.transpose(kg, (b, h, lk, d), (0, 1, 3, 2), dt)
            k3 = t.reshape(kt, (b, h, d, lk), (bh, d, lk), dt)
        v3 = t.reshape(grouped("%v", v_in.shape), (b, h, lk, dv),
                       (bh, lk, dv), dt)
    else:
        q3, v3 = qx, "%v"
        k3 = kx if g["k_pretransposed"] else t.transpose(
            kx, (bh, lk, d), (0, 2, 1), dt)

    # Scores, then the terms on them in f32.
    narrow = dt != "f32"
    acc = "f32" if not narrow or g["acc"] == "f32" else dt
    s3 = (bh, lq, lk)
    s = t.matmul(q3, (bh, lq, d), k3, (bh, d, lk), s3, dt, acc)
    if acc != "f32":
        s = t.unary("cast", s, s3, acc, "f32")
    sshape = [b, h, lq, lk] if g["scores_rank"] == 4 else list(s3)
    if g["scores_rank"] == 4:
        s = t.reshape(s, s3, sshape)
    ones = [1] * len(sshape)

    bias_r = mask_r = add_mask_r = None
    bias_scale = 1.0

    def scale_scores(x):
        nonlocal scale
        if g["scale_form"] == "scores":
            c = _f32(g["scale_value"])
            scale = c
            return t.mul(x, sshape, t.const(repr(c), ones), ones, sshape)
        if g["scale_form"] == "recip":
            c = _f32(1.0 / g["scale_value"])
            r = t.unary("reciprocal", t.const(repr(c), ones), ones)
            scale = _f32(np.float32(1.0) / np.float32(c))
            return t.mul(x, sshape, r, ones, sshape)
        return x

    if not g["scale_last"]:
        s = scale_scores(s)
    if g["bias"]:
        shape = _bshape(g["bias"]["full"], sshape)
        bias = rng.standard_normal(shape).astype(np.float32)
        args.append(("bias", bias, "f32"))
        s = t.binary_typed("add", s, sshape, "%bias", shape, sshape, "f32")
        bias_r = bias.astype(np.float64)

    def add_mask(x):
        nonlocal mask_r, add_mask_r
        m = g["mask"]
        shape = _bshape(m["full"], sshape)
        mask = rng.random(shape) < 0.8
        if m["hidden_rows"] and shape[-2] > 1 and shape[-1] > 1:
            mask[..., : min(2, shape[-2]), :] = False
        fill = t.const(FILLS[m["fill"]], ones)
        if m.get("form") == "add":
            # HF's extended mask: (1 - m) * fill added to the scores (or
            # m * fill, m marking the hidden keys). A bias, not a mask. A
            # row with every key at the fill is the softmax of s + fill,
            # which f32 rounds to a few ulps of the fill (both the graph
            # and the op; not the float64 reference), so each row keeps
            # its first key (lowest-bias.mlir checks such rows).
            mask[..., 0] = True
            args.append(("mask", ~mask if m["negated"] else mask, "i1"))
            mf = t.unary("cast", "%mask", shape, "i1", "f32")
            if not m["negated"]:
                mf = t.binary_typed("sub", t.const("1.0", ones), ones, mf,
                                    shape, shape, "f32")
            add_mask_r = np.where(mask, 0.0, FILL_VALUES[m["fill"]])
            return t.binary_typed("add", x, sshape,
                                  t.mul(mf, shape, fill, ones, shape),
                                  shape, sshape, "f32")
        args.append(("mask", mask, "i1"))
        mask_r = mask
        if m["negated"]:
            hide = t.unary("logical_not", "%mask", shape, "i1")
            return t.select(hide, shape, fill, ones, x, sshape, sshape)
        return t.select("%mask", shape, x, sshape, fill, ones, sshape)

    def add_causal(x):
        c = g["causal"]
        vis = ref.causal_visible(lq, lk, c["align"]).reshape(
            [1] * (len(sshape) - 2) + [lq, lk])
        if c["form"] == "select":
            tri = t.bool_const(vis)
            fill = t.const(FILLS[c["fill"]], ones)
            return t.select(tri, vis.shape, x, sshape, fill, ones, sshape)
        fill = FILL_VALUES[c["fill"]]
        add = t.float_const(np.where(vis, 0.0, fill).astype(np.float32))
        return t.binary_typed("add", x, sshape, add, vis.shape, sshape, "f32")

    steps = []
    if g["mask"]:
        steps.append(add_mask)
    if g["causal"]:
        steps.insert(0 if g["causal_first"] else len(steps), add_causal)
    for step in steps:
        s = step(s)
    if g["scale_last"]:
        s = scale_scores(s)
        if g["scale_form"] in ("scores", "recip"):
            bias_scale = scale

    # Softmax in f32.
    axis = len(sshape) - 1
    row = list(sshape)
    row[axis] = 1
    x = s
    if g["softmax"] == "max_sub":
        mx = t.reduce("reduce_max", s, sshape, axis)
        x = t.binary_typed("sub", s, sshape, mx, row, sshape, "f32")
    e = t.unary("exp", x, sshape)
    sm = t.reduce("reduce_sum", e, sshape, axis)
    p = t.mul(e, sshape, t.unary("reciprocal", sm, row), row, sshape)
    if g["scores_rank"] == 4:
        p = t.reshape(p, sshape, s3)
    if narrow:
        p = t.unary("cast", p, s3, "f32", dt)
    o = t.matmul(p, s3, v3, (bh, lk, dv), (bh, lq, dv), dt, acc)
    oshape = [bh, lq, dv]
    if g["layout"] == "bhld":
        o = t.reshape(o, oshape, (b, h, lq, dv), acc)
        oshape = [b, h, lq, dv]
    elif g["layout"] == "blhd":
        o4 = t.reshape(o, oshape, (b, h, lq, dv), acc)
        ot = t.transpose(o4, (b, h, lq, dv), (0, 2, 1, 3), acc)
        o = t.reshape(ot, (b, lq, h, dv), (b, lq, h * dv), acc)
        oshape = [b, lq, h * dv]
    func_text = (
        f"func.func @{name}("
        + ", ".join(f"%{n}: {ty(a.shape, e)}" for n, a, e in args)
        + f") -> {ty(oshape, acc)} {{\n" + t.body(o, ty(oshape, acc)) + "}\n")

    text = ["func.func private @printMemrefF32(tensor<*xf32>)", "",
            func_text, "func.func @main() {"]
    for n, a, e in args:
        payload = (dense(a, "i1") if e == "i1"
                   else f"{ref.hex_literal(a, e)} : {ty(a.shape, e)}")
        text.append(f"  %{n} = arith.constant {payload}")
    types = ", ".join(ty(a.shape, e) for _, a, e in args)
    names = ", ".join(f"%{n}" for n, _, _ in args)
    text.append(f"  %r = call @{name}({names}) : ({types}) -> "
                f"{ty(oshape, acc)}")
    res = "%r"
    if acc != "f32":
        text.append(f"  %rf = arith.extf %r : {ty(oshape, acc)} to "
                    f"{ty(oshape)}")
        res = "%rf"
    text += [f"  %u = tensor.cast {res} : {ty(oshape)} to tensor<*xf32>",
             "  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()",
             "  return", "}", ""]

    # The reference, in the heads layout of q_r.
    def to_heads(x):
        if x is None or g["layout"] == "bh3" or g["scores_rank"] == 4:
            return x
        # [B*H or 1, Lq', Lk'] -> [B, H, Lq', Lk'] or [1, 1, Lq', Lk'].
        lead = [b, h] if x.shape[0] == bh and bh > 1 else [1, 1]
        if x.shape[0] == 1 or bh == 1:
            lead = [1, 1]
        return x.reshape(lead + list(x.shape[1:]))

    kv_heads = (np.arange(h) % hkv if g["tile"] == "repeat" else None)
    terms = []
    if bias_r is not None:
        terms.append(bias_r * bias_scale)
    if add_mask_r is not None:
        # Scaled in f32, as the graph does: the lowest f32 times 2 is -inf.
        with np.errstate(over="ignore"):
            terms.append((add_mask_r.astype(np.float32)
                          * np.float32(bias_scale)).astype(np.float64))
    bias_t = None
    for term in terms:
        bias_t = term if bias_t is None else bias_t + term
    kw = dict(scale=scale * self_check_scale, mask=to_heads(mask_r),
              bias=to_heads(bias_t),
              causal=g["causal"]["align"] if g["causal"] else None,
              kv_heads=kv_heads)
    v64 = v_r.astype(np.float64)

    def reference(folded: bool) -> tuple[np.ndarray, np.ndarray]:
        q64, k64 = ((q_fold, k_fold) if folded else (q_r, k_r))
        args = dict(kw, scale=kw["scale"] * (fold if folded else 1.0))
        return (ref.attention(q64, k64, v64, **args),
                ref.hidden_rows(ref.scores(q64, k64, **args)))

    def unpermute(values: np.ndarray) -> np.ndarray:
        if g["layout"] == "blhd":
            return values.reshape(b, lq, h, dv).transpose(0, 2, 1, 3)
        return values.reshape(q_r.shape[:-1] + (dv,))

    return "\n".join(text), reference, unpermute
