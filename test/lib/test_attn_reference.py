"""Tests for attn_reference.py: the numpy reference and the encoding helpers.

Run with ``/usr/bin/python3 -m pytest test/lib``.  The numpy reference is
checked against a deliberately naive pure-Python loop implementation written
straight from the op's documented semantics, so a vectorization slip (wrong
broadcast, wrong GQA head map, off-by-one causal rule) cannot hide in both.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_reference as ref  # noqa: E402

# ---------------------------------------------------------------------------
# Naive reference
# ---------------------------------------------------------------------------


def _at(arr: np.ndarray, idx: tuple[int, ...]):
    """Reads ``arr`` at ``idx`` with numpy-style broadcasting of size-1 dims."""
    return arr[tuple(0 if n == 1 else i for i, n in zip(idx, arr.shape))]


def naive_attention(q, k, v, scale, mask=None, bias=None, causal=None):
    """Loop implementation of attn.attention, one scalar at a time."""
    *batch, hq, lq, dqk = q.shape
    hkv, lk, dv = v.shape[-3:]
    group = hq // hkv
    out = np.zeros((*batch, hq, lq, dv))
    for b in itertools.product(*(range(n) for n in batch)):
        for h in range(hq):
            hk = h // group
            for i in range(lq):
                s = []
                for j in range(lk):
                    idx = (*b, h, i, j)
                    dot = 0.0
                    for d in range(dqk):
                        dot += float(q[(*b, h, i, d)]) * float(k[(*b, hk, j, d)])
                    x = scale * dot
                    if bias is not None:
                        x += float(_at(bias, idx))
                    visible = True
                    if mask is not None:
                        if mask.dtype == np.bool_:
                            visible = bool(_at(mask, idx))
                        else:
                            x += float(_at(mask, idx))
                    if causal == "top_left" and j > i:
                        visible = False
                    if causal == "bottom_right" and j > i + lk - lq:
                        visible = False
                    s.append(x if visible else -math.inf)
                m = max(s)
                if m == -math.inf:
                    continue  # no visible key: the row stays 0
                e = [math.exp(x - m) for x in s]
                total = sum(e)
                for d in range(dv):
                    out[(*b, h, i, d)] = sum(
                        e[j] / total * float(v[(*b, hk, j, d)]) for j in range(lk))
    return out


# ---------------------------------------------------------------------------
# Reference vs. naive
# ---------------------------------------------------------------------------

CASES = [
    # id, batch, hq, hkv, lq, lk, dqk, dv, causal, mask, bias
    ("mha", [], 2, 2, 3, 4, 5, 5, None, None, None),
    ("gqa", [2], 4, 2, 3, 5, 3, 2, None, None, None),
    ("mqa", [2, 1], 3, 1, 2, 3, 4, 3, None, None, None),
    ("bool_mask", [2], 4, 2, 4, 5, 3, 2, None, ("bool", [2, 1, 4, 5]), None),
    ("float_mask", [], 2, 1, 3, 4, 3, 3, None, ("float", [1, 3, 4]), None),
    ("bias_per_head", [2], 4, 2, 3, 4, 3, 2, None, None, [1, 4, 1, 1]),
    ("bias_per_key", [], 2, 2, 3, 4, 3, 2, None, None, [1, 1, 4]),
    ("bias_full_and_mask", [2], 2, 1, 3, 4, 3, 2, None, ("bool", [1, 1, 3, 4]),
     [2, 2, 3, 4]),
    ("top_left_lq_lt_lk", [], 2, 1, 3, 5, 3, 2, "top_left", None, None),
    ("top_left_lq_gt_lk", [], 2, 1, 5, 3, 3, 2, "top_left", None, None),
    ("bottom_right_lq_lt_lk", [], 2, 1, 3, 5, 3, 2, "bottom_right", None, None),
    ("bottom_right_lq_gt_lk", [2], 2, 1, 5, 3, 3, 2, "bottom_right", None,
     [1, 2, 5, 1]),
    ("causal_and_float_mask", [], 2, 2, 4, 4, 3, 2, "top_left",
     ("float", [2, 4, 4]), None),
]


def _make(case, seed=0):
    _, batch, hq, hkv, lq, lk, dqk, dv, causal, mask_spec, bias_shape = case
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(batch + [hq, lq, dqk])
    k = rng.standard_normal(batch + [hkv, lk, dqk])
    v = rng.standard_normal(batch + [hkv, lk, dv])
    mask = None
    if mask_spec is not None:
        kind, shape = mask_spec
        if kind == "bool":
            mask = rng.random(shape) < 0.7
        else:
            mask = rng.standard_normal(shape)
            mask[rng.random(shape) < 0.3] = -np.inf
    bias = rng.standard_normal(bias_shape) if bias_shape else None
    return q, k, v, mask, bias, causal


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_reference_matches_naive(case):
    q, k, v, mask, bias, causal = _make(case)
    scale = 0.37
    got = ref.attention(q, k, v, scale=scale, mask=mask, bias=bias,
                        causal=causal)
    want = naive_attention(q, k, v, scale, mask=mask, bias=bias, causal=causal)
    assert got.shape == want.shape
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_fully_masked_rows_are_zero():
    q, k, v, _, _, _ = _make(CASES[3])
    mask = np.ones((2, 1, 4, 5), dtype=bool)
    mask[:, :, 1, :] = False  # row 1 sees nothing in every batch and head
    mask[1, 0, 3, :] = False  # row 3 of batch 1 sees nothing
    got = ref.attention(q, k, v, scale=1.0, mask=mask)
    want = naive_attention(q, k, v, 1.0, mask=mask)
    assert np.all(got[:, :, 1, :] == 0)
    assert np.all(got[1, :, 3, :] == 0)
    assert np.any(got[0, :, 3, :] != 0)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    hidden = ref.hidden_rows(ref.scores(q, k, scale=1.0, mask=mask))
    assert hidden.sum() == 2 * 4 + 4


def test_bottom_right_hides_leading_rows_when_lq_gt_lk():
    case = CASES[11]
    q, k, v, _, _, _ = _make(case)
    got = ref.attention(q, k, v, scale=1.0, causal="bottom_right")
    lq, lk = q.shape[-2], k.shape[-2]
    assert np.all(got[..., : lq - lk, :] == 0)
    assert np.all(got[..., lq - lk:, :] != 0)
    # The last query sees every key, as if not causal.
    full = ref.attention(q, k, v, scale=1.0)
    np.testing.assert_allclose(got[..., -1, :], full[..., -1, :], rtol=1e-12)
    # top_left with Lq > Lk hides no row.
    assert not ref.hidden_rows(
        ref.scores(q, k, scale=1.0, causal="top_left")).any()


def test_causal_alignments_coincide_when_square():
    assert np.array_equal(ref.causal_visible(5, 5, "top_left"),
                          ref.causal_visible(5, 5, "bottom_right"))
    assert np.array_equal(ref.causal_visible(2, 4, "bottom_right"),
                          np.array([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=bool))
    assert np.array_equal(ref.causal_visible(2, 4, "top_left"),
                          np.array([[1, 0, 0, 0], [1, 1, 0, 0]], dtype=bool))


def test_causal_offset_and_period():
    # Without a period the offset moves the diagonal (top_left only).
    assert np.array_equal(ref.causal_visible(2, 5, "top_left", offset=2),
                          np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 0]], bool))
    # A tile of rows starting at row i0 is the problem with offset i0.
    full = ref.causal_visible(9, 12, "top_left")
    assert np.array_equal(ref.causal_visible(4, 12, "top_left", offset=5),
                          full[5:9])
    # With period P, row i is query (i + offset) mod P: packed query heads.
    for causal in ("top_left", "bottom_right"):
        one = ref.causal_visible(3, 6, causal)
        packed = ref.causal_visible(9, 6, causal, period=3)
        assert np.array_equal(packed, np.tile(one, (3, 1)))
        shifted = ref.causal_visible(5, 6, causal, offset=4, period=3)
        assert np.array_equal(shifted, packed[4:9])
    for bad in (dict(causal=None, offset=1), dict(causal=None, period=2),
                dict(causal="bottom_right", offset=1),
                dict(causal="top_left", offset=-1),
                dict(causal="top_left", period=0)):
        with pytest.raises(ValueError):
            ref.check_causal(**bad)
        with pytest.raises(ValueError):
            ref.causal_visible(3, 4, **bad)
    ref.check_causal("bottom_right", offset=1, period=2)


def test_large_scores_are_stable():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 2, 64)) * 300
    k = rng.standard_normal((1, 3, 64)) * 300
    v = rng.standard_normal((1, 3, 4))
    got = ref.attention(q, k, v, scale=1.0)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, naive_attention(q, k, v, 1.0), rtol=1e-12)


def test_f32_scores_round_like_the_op_next_to_a_large_term():
    # Next to -1e9 an f32 score keeps only multiples of 64: the scores 10
    # and 40 of a padded row both become -1e9 + {0, 64}, so the row's
    # softmax differs from the float64 one's.
    q = np.array([[[1.0]]])
    k = np.array([[[10.0], [40.0]]])
    bias = np.full((1, 1, 2), -1e9)
    exact = ref.scores(q, k, scale=1.0, bias=bias)
    rounded = ref.scores(q, k, scale=1.0, bias=bias, f32_scores=True)
    np.testing.assert_array_equal(exact, [[[-1e9 + 10, -1e9 + 40]]])
    assert np.array_equal(rounded, ref.round_to(exact, "f32"))
    assert rounded[0, 0, 1] - rounded[0, 0, 0] in (0.0, 64.0)
    # Rounded after each term: two lowest f32 terms add up to -inf (the key
    # is hidden), while float64 keeps the sum finite.
    low = ref.lowest_finite("f32")
    s = ref.scores(q, k, scale=1.0, bias=np.full((1, 1, 2), low),
                   mask=np.full((1, 1, 2), low), f32_scores=True)
    assert np.all(np.isneginf(s))
    assert np.all(np.isfinite(ref.scores(q, k, scale=1.0,
                                         bias=np.full((1, 1, 2), low),
                                         mask=np.full((1, 1, 2), low))))
    v = np.array([[[1.0], [3.0]]])
    assert ref.attention(q, k, v, scale=1.0, bias=np.full((1, 1, 2), low),
                         mask=np.full((1, 1, 2), low),
                         f32_scores=True)[0, 0, 0] == 0.0
    # Small scores are rounded to f32 and nothing else.
    q = np.array([[[0.1, 0.2]]])
    k = np.array([[[0.3, 0.7], [1.1, -0.5]]])
    np.testing.assert_array_equal(
        ref.scores(q, k, scale=0.125, f32_scores=True),
        ref.round_to(ref.scores(q, k, scale=0.125), "f32"))


def test_gqa_head_map():
    assert list(ref.kv_head_index(8, 2)) == [0, 0, 0, 0, 1, 1, 1, 1]
    assert list(ref.kv_head_index(3, 1)) == [0, 0, 0]
    assert list(ref.kv_head_index(4, 4)) == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        ref.kv_head_index(6, 4)


# ---------------------------------------------------------------------------
# Rounding
# ---------------------------------------------------------------------------


def _bits(x: float) -> int:
    return int(np.array(x, dtype=np.float32).view(np.uint32))


def _f32(bits: int) -> float:
    return float(np.array(bits, dtype=np.uint32).view(np.float32))


@pytest.mark.parametrize("f32_bits, bf16", [
    (0x3F800000, 0x3F80),  # 1.0 exact
    (0x3F807FFF, 0x3F80),  # just below the tie: down
    (0x3F808000, 0x3F80),  # tie, kept bit even: down
    (0x3F808001, 0x3F81),  # just above the tie: up
    (0x3F818000, 0x3F82),  # tie, kept bit odd: up to even
    (0xBF818000, 0xBF82),  # same, negative
    (0x7F7FFFFF, 0x7F80),  # f32 max rounds to inf
    (0x7F800000, 0x7F80),  # inf
    (0xFF800000, 0xFF80),  # -inf
    (0x00000001, 0x0000),  # smallest subnormal rounds to 0
    (0x80000000, 0x8000),  # -0
    (0x7FC00000, 0x7FC0),  # NaN
    (0xFFC00001, 0xFFC0),  # NaN with sign and payload
])
def test_bf16_rounding_cases(f32_bits, bf16):
    assert int(ref.bf16_bits(np.array([_f32(f32_bits)], np.float32))[0]) == bf16


def test_bf16_rounding_is_nearest_even_on_random_values():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, size=20000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    x = x[np.isfinite(x) & (np.abs(x) < 3e38)]
    got = ref.bf16_bits(x)
    for xi, g in zip(x[:3000], got[:3000]):
        lo = _bits(float(xi)) >> 16  # truncation
        cands = [lo, lo + 1]
        vals = [_f32((c & 0xFFFF) << 16) for c in cands]
        dist = [abs(val - float(xi)) for val in vals]
        if dist[0] != dist[1]:
            want = cands[int(np.argmin(dist))]
        else:
            want = cands[0] if cands[0] % 2 == 0 else cands[1]
        assert int(g) == want & 0xFFFF, hex(_bits(float(xi)))


def test_round_to_is_idempotent_and_exact():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(1000) * 10).astype(np.float32)
    for dt, eps in (("f32", 0.0), ("f16", 2.0**-11), ("bf16", 2.0**-8)):
        r = ref.round_to(x, dt)
        assert np.array_equal(ref.round_to(r, dt), r)
        np.testing.assert_array_less(np.abs(r - x), eps * np.abs(x) + 1e-30)
    r16 = ref.round_to(x, "f16")
    assert np.array_equal(r16, r16.astype(np.float16).astype(np.float64))
    # f16 ties to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
    assert ref.round_to(np.array([1 + 2**-11]), "f16")[0] == 1.0
    assert ref.round_to(np.array([1 + 3 * 2**-11]), "f16")[0] == 1 + 2**-9
    assert ref.round_to(np.array([70000.0]), "f16")[0] == np.inf


@pytest.mark.parametrize("dtype, bits", [
    ("f32", 0xFF7FFFFF), ("f16", 0xFBFF), ("bf16", 0xFF7F)])
def test_lowest_finite_is_the_most_negative_finite_value(dtype, bits):
    lowest = ref.lowest_finite(dtype)
    # Its encoding, and one rounding step further down is -inf.
    assert ref.raw_bytes(np.array([lowest]), dtype) == \
        bits.to_bytes(len(ref.raw_bytes(np.array([0.0]), dtype)), "little")
    assert ref.round_to(np.array([lowest]), dtype)[0] == lowest
    assert ref.round_to(np.array([lowest * (1 + 2.0**-6)]), dtype)[0] == -np.inf
    with pytest.raises(ValueError):
        ref.lowest_finite("i1")


@pytest.mark.parametrize("f32_bits, tf32", [
    (0x3F800000, 0x3F800000),  # 1.0 exact
    (0x3F800FFF, 0x3F800000),  # just below the tie: down
    (0x3F801000, 0x3F802000),  # tie, kept bit even: away from zero
    (0x3F803000, 0x3F804000),  # tie, kept bit odd: away from zero
    (0xBF801000, 0xBF802000),  # tie, negative: away from zero
    (0x3F801001, 0x3F802000),  # just above the tie: up
    (0x3FFFF000, 0x40000000),  # carry into the exponent
    (0x7F7FF000, 0x7F800000),  # the largest values round to inf
    (0x7F800000, 0x7F800000),  # inf
    (0x80000000, 0x80000000),  # -0
])
def test_tf32_rounding_cases(f32_bits, tf32):
    got = ref.tf32_bits(np.array([_f32(f32_bits)], np.float32))[0]
    assert int(got) == tf32, hex(int(got))


def test_tf32_rounding_is_nearest_on_random_values():
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(5000) * 100).astype(np.float32)
    r = ref.round_to(x, "tf32")
    ulp = 2.0 ** (np.floor(np.log2(np.abs(x.astype(np.float64)))) - 10)
    # Within half a TF32 ulp, on the 10-bit grid, and idempotent.
    assert np.all(np.abs(r - x) <= ulp / 2)
    assert np.all(np.abs(np.round(r / ulp) * ulp - r) == 0)
    assert np.array_equal(ref.round_to(r, "tf32"), r)
    assert np.isnan(ref.round_to(np.array([np.nan]), "tf32")[0])


# ---------------------------------------------------------------------------
# Hex literals
# ---------------------------------------------------------------------------


def test_hex_known_values():
    one = np.array([1.0, -2.0])
    assert ref.hex_literal(one, "f32") == 'dense<"0x0000803F000000C0">'
    assert ref.hex_literal(one, "f16") == 'dense<"0x003C00C0">'
    assert ref.hex_literal(one, "bf16") == 'dense<"0x803F00C0">'
    bits = np.array([True, False, True, True, False, False, False, False, True,
                     True])
    assert ref.hex_literal(bits, "i1") == 'dense<"0x0D03">'
    assert ref.hex_literal(np.ones((2, 2), bool), "i1") == 'dense<"0x0F">'


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i1"])
@pytest.mark.parametrize("shape", [(1,), (7,), (8,), (9,), (2, 3, 5),
                                   (2, 1, 3, 17)])
def test_hex_round_trip(dtype, shape):
    rng = np.random.default_rng(2)
    if dtype == "i1":
        x = rng.random(shape) < 0.5
    else:
        x = ref.round_to(rng.standard_normal(shape).astype(np.float32), dtype)
        x.flat[0] = -np.inf
    back = ref.decode_hex(ref.hex_literal(x, dtype), dtype, shape)
    assert back.shape == x.shape
    assert np.array_equal(back, x)


MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"


@pytest.mark.skipif(not shutil.which(MLIR_OPT), reason="mlir-opt not found")
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i1"])
def test_hex_literals_parse_in_mlir(dtype, tmp_path):
    """mlir-opt reads our hex literals as the intended values."""
    rng = np.random.default_rng(4)
    shape = (2, 3, 5)
    if dtype == "i1":
        x = rng.random(shape) < 0.5
    else:
        x = ref.round_to(rng.standard_normal(shape).astype(np.float32) * 4, dtype)
    ty = ref.tensor_type(shape, dtype)
    src = tmp_path / "c.mlir"
    src.write_text(f"func.func @f() -> {ty} {{\n"
                   f"  %c = arith.constant {ref.hex_literal(x, dtype)} : {ty}\n"
                   f"  return %c : {ty}\n}}\n")
    printed = subprocess.run(
        [MLIR_OPT, str(src), "--mlir-print-elementsattrs-with-hex-if-larger=-1"],
        check=True, capture_output=True, text=True).stdout
    body = re.search(r"dense<(.*?)>\s*:", printed).group(1)
    if dtype == "i1":
        vals = [t == "true" for t in re.findall(r"true|false", body)]
        assert np.array_equal(np.array(vals).reshape(shape), x)
    else:
        vals = [float(t) for t in re.findall(r"[-+]?\d[\d.]*(?:e[-+]?\d+)?", body)]
        # The decimal form is printed to ~7 digits; rounding it back to the
        # element type must give our exact values.
        got = ref.round_to(np.array(vals, np.float32), dtype).reshape(shape)
        assert np.array_equal(got, x)


@pytest.mark.parametrize("dtype,scale,magnitude,causal", [
    ("bf16", None, 1.0, "bottom_right"), ("f16", 0.01, 1.0, "top_left"),
    ("f32", 2.0, 1.0, None), ("bf16", None, 1.0, None),
    ("f16", None, 3.0, "bottom_right"), ("f32", 2.0, 3.0, None)])
def test_ramp_inputs_have_one_dominant_key_per_row(dtype, scale, magnitude,
                                                   causal):
    """attn_check's --inputs ramp: every row's weight sits on its last
    visible key (rising rows) or its first (falling rows), and the values
    are exact in the element type."""
    import attn_check
    argv = ["--dtype", dtype, "--hq", "2", "--lq", "70", "--lk", "300",
            "--dqk", "64", "--inputs", "ramp", "--seed", "3",
            "--magnitude", repr(magnitude)]
    if scale is not None:
        argv += ["--scale", repr(scale)]
    if causal:
        argv += ["--causal", causal]
    args = attn_check.build_arg_parser().parse_args(argv)
    pb = attn_check.make_problem(args)
    for x in (pb.q.values, pb.k.values):
        assert np.array_equal(ref.round_to(x.astype(np.float32), dtype), x)
    s = ref.scores(pb.q.values, pb.k.values, scale=pb.scale, causal=pb.causal,
                   kv_heads=ref.kv_head_index(2, 2))
    p = ref.softmax_rows(s)
    visible = np.isfinite(s)
    first = visible.argmax(-1)
    last = s.shape[-1] - 1 - visible[..., ::-1].argmax(-1)
    rising = pb.q.values[..., 1] > 0
    assert np.array_equal(rising[..., 0, :], np.arange(70) % 4 != 3)
    dominant = np.where(rising, last, first)
    assert np.array_equal(p.argmax(-1), dominant)
    assert p.max(-1).min() > 0.99
