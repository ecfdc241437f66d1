"""Random masks built from the query and key indices, for the differential
tester's unfused graphs (attn_random.py).

A mask is a tree of arith ops over ``linalg.index`` i (query) and j (key)
and constants, of types index, i32, f32 and i1 (the root). Each tree is
emitted as the ops of a ``linalg.generic`` body and evaluated here with
numpy under MLIR's semantics, independently of ``--attn-raise``'s own
evaluator: i1 true is -1 to the signed conversions and compares and 1 to
the unsigned ones, integers wrap to their width, f32 arithmetic rounds to
f32. Half of the roots are a diagonal ``j <= i + c`` in one of many
disguises, so that the raise's causal matchers see varied forms; the rest
are random trees.

Trees are JSON-able lists ``[op, type, operands...]`` (constants: ``["const",
type, value]``), so that a failing graph's dict can be printed and replayed.
"""

from __future__ import annotations

import numpy as np

INT_PREDS = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt",
             "uge"]
# Not `true` and `false`: MLIR 22's arith canonicalization crashes on
# `cmpf true|false` of an int-to-float conversion and a constant
# (test/Reliability/Inputs/upstream-cmpf-crash/, docs/reliability.md), in
# the unfused graph as in the raised one. raise-mask-ops.mlir tests them.
FLOAT_PREDS = ["oeq", "one", "olt", "ole", "ogt", "oge", "ueq", "une", "ult",
               "ule", "ugt", "uge", "ord", "uno"]
FLOAT_CONSTS = [-2.5, -1.0, 0.0, 0.5, 1.0, 3.0]
WIDTH = {"index": 64, "i32": 32, "i1": 1}


def const(type_: str, value) -> list:
    return ["const", type_, value]


def random_int(rng: np.random.Generator, type_: str, depth: int) -> list:
    """An index or i32 expression."""
    if depth <= 0 or rng.random() < 0.3:
        if type_ == "index":
            leaf = str(rng.choice(["i", "j", "i", "j", "c"]))
            if leaf != "c":
                return [leaf, "index"]
        return const(type_, int(rng.integers(-3, 13)))
    op = str(rng.choice(["addi", "subi", "muli", "select", "cast", "ext"]))
    if op in ("addi", "subi"):
        return [op, type_, random_int(rng, type_, depth - 1),
                random_int(rng, type_, depth - 1)]
    if op == "muli":
        return [op, type_, random_int(rng, type_, depth - 1),
                const(type_, int(rng.integers(-2, 4)))]
    if op == "select":
        return ["select", type_, random_bool(rng, depth - 1),
                random_int(rng, type_, depth - 1),
                random_int(rng, type_, depth - 1)]
    if op == "cast":  # between index and i32
        other = "i32" if type_ == "index" else "index"
        name = str(rng.choice(["index_cast", "index_castui"]))
        inner = random_int(rng, other, depth - 1)
        if name == "index_castui" and type_ == "index":
            name = "index_cast"  # i32 -> index unsigned: no negatives here
        return [name, type_, inner]
    # From i1: extsi/extui to i32, index_cast(ui) to index.
    if type_ == "index":
        name = str(rng.choice(["index_cast", "index_castui"]))
    else:
        name = str(rng.choice(["extsi", "extui"]))
    return [name, type_, random_bool(rng, depth - 1)]


def random_float(rng: np.random.Generator, depth: int) -> list:
    if depth <= 0 or rng.random() < 0.25:
        return const("f32", float(rng.choice(FLOAT_CONSTS)))
    op = str(rng.choice(["sitofp", "uitofp", "sitofp_i1", "uitofp_i1",
                         "addf", "subf", "mulf", "negf", "maximumf",
                         "minimumf"]))
    if op in ("sitofp", "uitofp"):
        return [op, "f32", random_int(rng, "i32", depth - 1)]
    if op in ("sitofp_i1", "uitofp_i1"):
        return [op[:-3], "f32", random_bool(rng, depth - 1)]
    if op == "negf":
        return [op, "f32", random_float(rng, depth - 1)]
    if op == "mulf":
        return [op, "f32", random_float(rng, depth - 1),
                const("f32", float(rng.choice(FLOAT_CONSTS)))]
    return [op, "f32", random_float(rng, depth - 1),
            random_float(rng, depth - 1)]


def random_bool(rng: np.random.Generator, depth: int) -> list:
    if depth <= 0 or rng.random() < 0.2:
        if rng.random() < 0.2:
            return const("i1", bool(rng.random() < 0.5))
        return diagonal(rng)
    op = str(rng.choice(["cmpi", "cmpi32", "cmpf", "andi", "ori", "xori",
                         "select", "addi"]))
    if op == "cmpi":
        return ["cmpi", "i1", str(rng.choice(INT_PREDS)),
                random_int(rng, "index", depth - 1),
                random_int(rng, "index", depth - 1)]
    if op == "cmpi32":
        return ["cmpi", "i1", str(rng.choice(INT_PREDS)),
                random_int(rng, "i32", depth - 1),
                random_int(rng, "i32", depth - 1)]
    if op == "cmpf":
        return ["cmpf", "i1", str(rng.choice(FLOAT_PREDS)),
                random_float(rng, depth - 1), random_float(rng, depth - 1)]
    if op == "select":
        return ["select", "i1", random_bool(rng, depth - 1),
                random_bool(rng, depth - 1), random_bool(rng, depth - 1)]
    return [op, "i1", random_bool(rng, depth - 1),
            random_bool(rng, depth - 1)]


def diagonal(rng: np.random.Generator) -> list:
    """j <= i + c (c in [-2, 3]) in a random disguise."""
    c = int(rng.integers(-2, 4))
    i, j = ["i", "index"], ["j", "index"]
    ic = ["addi", "index", i, const("index", c)]
    form = int(rng.integers(0, 7))
    if form == 0:
        return ["cmpi", "i1", "sle", j, ic]
    if form == 1:
        return ["cmpi", "i1", "sge", ic, j]
    if form == 2:  # j < i + c + 1
        return ["cmpi", "i1", "slt", j,
                ["addi", "index", i, const("index", c + 1)]]
    if form == 3:  # !(j > i + c)
        return ["xori", "i1", ["cmpi", "i1", "sgt", j, ic], const("i1", True)]
    if form == 4:  # j - i <= c
        return ["cmpi", "i1", "sle", ["subi", "index", j, i],
                const("index", c)]
    if form == 5:  # as f32
        fi = ["sitofp", "f32", ["index_cast", "i32", i]]
        fj = ["sitofp", "f32", ["index_cast", "i32", j]]
        return ["cmpf", "i1", str(rng.choice(["ole", "ule"])), fj,
                ["addf", "f32", fi, const("f32", float(c))]]
    # A select of two diagonals on the same condition: still one diagonal.
    return ["select", "i1", const("i1", True), ["cmpi", "i1", "sle", j, ic],
            ["cmpi", "i1", "sle", i, j]]


def random_mask(rng: np.random.Generator) -> list:
    if rng.random() < 0.5:
        root = diagonal(rng)
        if rng.random() < 0.5:
            root = ["andi", "i1", root, random_bool(rng, 2)]
        return root
    return random_bool(rng, 3)


# ---------------------------------------------------------------------------
# Emission
# ---------------------------------------------------------------------------


def emit(tree: list, lines: list, names: dict, prefix: str = "%mk") -> str:
    """Appends the ops of `tree` to `lines` (linalg.generic body lines over
    4-D scores: i is loop 2, j loop 3) and returns its SSA name."""
    op, type_ = tree[0], tree[1]

    def fresh() -> str:
        names["n"] = names.get("n", 0) + 1
        return f"{prefix}{names['n']}"

    def line(text: str) -> None:
        lines.append(f"    {text}\n")

    if op in ("i", "j"):
        key = f"index_{op}"
        if key not in names:
            names[key] = fresh()
            line(f"{names[key]} = linalg.index {2 if op == 'i' else 3} : index")
        return names[key]
    r = fresh()
    if op == "const":
        value = tree[2]
        if type_ == "i1":
            line(f"{r} = arith.constant {'true' if value else 'false'}")
        elif type_ == "f32":
            line(f"{r} = arith.constant {float(value)!r} : f32")
        else:
            line(f"{r} = arith.constant {int(value)} : {type_}")
        return r
    if op in ("cmpi", "cmpf"):
        a = emit(tree[3], lines, names, prefix)
        b = emit(tree[4], lines, names, prefix)
        line(f"{r} = arith.{op} {tree[2]}, {a}, {b} : {tree[3][1]}")
        return r
    operands = [emit(t, lines, names, prefix) for t in tree[2:]]
    if op == "select":
        line(f"{r} = arith.select {operands[0]}, {operands[1]}, "
             f"{operands[2]} : {type_}")
    elif op in ("index_cast", "index_castui", "extsi", "extui", "sitofp",
                "uitofp"):
        line(f"{r} = arith.{op} {operands[0]} : {tree[2][1]} to {type_}")
    else:
        line(f"{r} = arith.{op} {', '.join(operands)} : {type_}")
    return r


# ---------------------------------------------------------------------------
# Evaluation (numpy, MLIR semantics)
# ---------------------------------------------------------------------------


def wrap(x: np.ndarray, type_: str) -> np.ndarray:
    """Signed two's complement of the type's width (i1: 0 or 1)."""
    w = WIDTH[type_]
    x = np.asarray(x, dtype=np.int64)
    if w == 64:
        return x
    if w == 1:
        return x & 1
    m = np.int64(1) << w
    x = x & (m - 1)
    return np.where(x >= m // 2, x - m, x)


def signed(x: np.ndarray, type_: str) -> np.ndarray:
    return -x if type_ == "i1" else x


def unsigned(x: np.ndarray, type_: str) -> np.ndarray:
    """As an unsigned value of the type's width (exact in Python ints)."""
    w = WIDTH[type_]
    return np.asarray(x).astype(object) % (1 << w)


def evaluate(tree: list, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """The values of `tree` at the query indices `i` and key indices `j`
    (broadcast arrays): int64 for integers (i1: 0/1), float32 for f32."""
    op, type_ = tree[0], tree[1]
    if op == "i":
        return np.asarray(i, dtype=np.int64)
    if op == "j":
        return np.asarray(j, dtype=np.int64)
    shape = np.broadcast(i, j).shape
    if op == "const":
        if type_ == "f32":
            return np.full(shape, tree[2], dtype=np.float32)
        return wrap(np.full(shape, int(tree[2]), dtype=np.int64), type_)
    if op in ("cmpi", "cmpf"):
        pred, a_t = tree[2], tree[3]
        a, b = evaluate(a_t, i, j), evaluate(tree[4], i, j)
        a, b = np.broadcast_arrays(a, b)
        if op == "cmpi":
            t = a_t[1]
            if pred[0] == "u":
                a, b = unsigned(a, t), unsigned(b, t)
            elif pred[0] == "s":
                a, b = signed(a, t), signed(b, t)
            cmp = {"eq": a == b, "ne": a != b}.get(pred)
            if cmp is None:
                rel = pred[1:]
                cmp = {"lt": a < b, "le": a <= b, "gt": a > b,
                       "ge": a >= b}[rel]
            return np.asarray(cmp, dtype=bool).astype(np.int64)
        unordered = np.isnan(a) | np.isnan(b)
        if pred == "true":
            cmp = np.ones(a.shape, dtype=bool)
        elif pred == "false":
            cmp = np.zeros(a.shape, dtype=bool)
        elif pred == "ord":
            cmp = ~unordered
        elif pred == "uno":
            cmp = unordered
        else:
            rel = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b,
                   "gt": a > b, "ge": a >= b}[pred[1:]]
            cmp = (rel & ~unordered) if pred[0] == "o" else (rel | unordered)
        return cmp.astype(np.int64)
    xs = [evaluate(t, i, j) for t in tree[2:]]
    xs = np.broadcast_arrays(*xs)
    if op == "select":
        return np.where(xs[0] != 0, xs[1], xs[2])
    src = tree[2][1]
    if op in ("index_cast", "extsi"):
        return wrap(signed(xs[0], src), type_)
    if op in ("index_castui", "extui"):
        if WIDTH[type_] <= WIDTH[src]:  # truncation: the low bits
            return wrap(xs[0], type_)
        return wrap(np.asarray(unsigned(xs[0], src), dtype=np.int64), type_)
    if op == "sitofp":
        return signed(xs[0], src).astype(np.float32)
    if op == "uitofp":
        return np.asarray(unsigned(xs[0], src), dtype=np.float64).astype(
            np.float32)
    if type_ == "f32":
        a = xs[0].astype(np.float32)
        if op == "negf":
            return -a
        b = xs[1].astype(np.float32)
        with np.errstate(all="ignore"):
            return {"addf": lambda: a + b, "subf": lambda: a - b,
                    "mulf": lambda: a * b,
                    "maximumf": lambda: np.maximum(a, b),
                    "minimumf": lambda: np.minimum(a, b)}[op]()
    a, b = xs[0], xs[1]
    value = {"addi": lambda: a + b, "subi": lambda: a - b,
             "muli": lambda: a * b, "andi": lambda: a & b,
             "ori": lambda: a | b, "xori": lambda: a ^ b}[op]()
    return wrap(value, type_)


def visible(tree: list, lq: int, lk: int) -> np.ndarray:
    """The [lq, lk] table of keys the mask leaves visible."""
    i = np.arange(lq, dtype=np.int64)[:, None]
    j = np.arange(lk, dtype=np.int64)[None, :]
    return np.broadcast_to(evaluate(tree, i, j), (lq, lk)) != 0
