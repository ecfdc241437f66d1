"""Tests for mask_grammar.py: its numpy semantics of the arith ops, checked
on values worked out by hand from the ops' definitions, and its trees
emitted as valid MLIR.

Run with ``/usr/bin/python3 -m pytest test/lib``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mask_grammar as mg  # noqa: E402

I, J = ["i", "index"], ["j", "index"]
TRUE = mg.const("i1", True)
FALSE = mg.const("i1", False)


def value(tree):
    """The value of a tree with no index in it."""
    return mg.evaluate(tree, np.zeros((1, 1), np.int64),
                       np.zeros((1, 1), np.int64)).item()


@pytest.mark.parametrize("tree, expected", [
    # i1 true is -1 to signed conversions, 1 to unsigned ones.
    (["sitofp", "f32", TRUE], -1.0),
    (["uitofp", "f32", TRUE], 1.0),
    (["extsi", "i32", TRUE], -1),
    (["extui", "i32", TRUE], 1),
    (["index_cast", "index", TRUE], -1),
    (["index_castui", "index", TRUE], 1),
    (["sitofp", "f32", FALSE], 0.0),
    # Integers wrap to their width.
    (["addi", "i1", TRUE, TRUE], 0),
    (["addi", "i32", mg.const("i32", 2**31 - 1), mg.const("i32", 1)],
     -2**31),
    (["muli", "i32", mg.const("i32", 65536), mg.const("i32", 65536)], 0),
    (["index_cast", "i32", mg.const("index", 2**32 + 5)], 5),
    (["index_castui", "i32", mg.const("index", -1)], -1),
    # uitofp reads a negative i32 as 2^32 + x.
    (["uitofp", "f32", mg.const("i32", -1)], 4294967296.0),
    (["sitofp", "f32", mg.const("i32", -1)], -1.0),
    # Signed compares of i1: true (-1) < false (0); unsigned: 1 > 0.
    (["cmpi", "i1", "slt", TRUE, FALSE], 1),
    (["cmpi", "i1", "ult", TRUE, FALSE], 0),
    # Unsigned compares of a negative index see a huge value.
    (["cmpi", "i1", "ugt", mg.const("index", -1), mg.const("index", 5)], 1),
    (["cmpi", "i1", "sgt", mg.const("index", -1), mg.const("index", 5)], 0),
    # Ordered and unordered predicates around NaN.
    (["cmpf", "i1", "oeq", mg.const("f32", float("nan")),
      mg.const("f32", 1.0)], 0),
    (["cmpf", "i1", "ueq", mg.const("f32", float("nan")),
      mg.const("f32", 1.0)], 1),
    (["cmpf", "i1", "uno", mg.const("f32", 1.0), mg.const("f32", 2.0)], 0),
    (["cmpf", "i1", "one", mg.const("f32", 1.0), mg.const("f32", 2.0)], 1),
    # f32 arithmetic rounds: 1e8 + 0.5 is 1e8.
    (["subf", "f32", ["addf", "f32", mg.const("f32", 1e8),
                      mg.const("f32", 0.5)], mg.const("f32", 1e8)], 0.0),
    (["xori", "i1", TRUE, TRUE], 0),
    (["select", "i32", FALSE, mg.const("i32", 3), mg.const("i32", 4)], 4),
])
def test_semantics(tree, expected):
    assert value(tree) == expected


def test_indices():
    table = mg.visible(["cmpi", "i1", "ule", J, I], 3, 5)
    expected = np.arange(5)[None, :] <= np.arange(3)[:, None]
    assert np.array_equal(table, expected)


@pytest.mark.parametrize("seed", range(40))
def test_diagonals_are_diagonals(seed):
    rng = np.random.default_rng(seed)
    tree = mg.diagonal(rng)
    table = mg.visible(tree, 7, 9)
    i = np.arange(7)[:, None]
    j = np.arange(9)[None, :]
    assert any(np.array_equal(table, j <= i + c) for c in range(-2, 4)), tree


def emit_function(tree) -> str:
    lines: list = []
    root = mg.emit(tree, lines, {})
    return ("#map = affine_map<(a, b, c, d) -> (a, b, c, d)>\n"
            "func.func @f(%x: tensor<1x1x4x6xi1>) -> tensor<1x1x4x6xi1> {\n"
            "  %r = linalg.generic {indexing_maps = [#map], iterator_types = "
            '["parallel", "parallel", "parallel", "parallel"]} '
            "outs(%x : tensor<1x1x4x6xi1>) {\n  ^bb0(%o: i1):\n"
            + "".join(lines) + f"    linalg.yield {root} : i1\n"
            "  } -> tensor<1x1x4x6xi1>\n"
            "  return %r : tensor<1x1x4x6xi1>\n}\n")


MLIR_OPT = shutil.which("mlir-opt") or "/usr/lib/llvm-22/bin/mlir-opt"


@pytest.mark.skipif(not os.path.exists(MLIR_OPT), reason="no mlir-opt")
def test_random_masks_are_valid_mlir():
    rng = np.random.default_rng(0)
    module = "\n".join(emit_function(mg.random_mask(rng)).replace(
        "@f(", f"@f{n}(").replace("#map", f"#map{n}")
        for n in range(60))
    proc = subprocess.run([MLIR_OPT, "--verify-diagnostics"], input=module,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
