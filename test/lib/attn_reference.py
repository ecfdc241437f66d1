"""Float64 numpy reference for ``attn.attention`` plus encoding helpers.

This module is the ground truth the CPU integration tests compare against.
It is deliberately independent of the compiler: it implements the op's
documented semantics directly in float64, from inputs that were already
rounded exactly to the element type the MLIR program uses.

Semantics (see ``AttnOps.td``), for every batch/head index and query row i::

    q [B..., Hq, Lq, Dqk]   k [B..., Hkv, Lk, Dqk]   v [B..., Hkv, Lk, Dv]
    query head h reads key/value head h // (Hq // Hkv)

    s[i, j] = scale * (q[i] . k[j]) + bias[i, j]
    s[i, j] += float_mask[i, j]
    s[i, j] = -inf  where a bool mask is False or the causal rule hides j
    p = softmax(s[i, :])  (row maximum subtracted)
    out[i] = p . v        a row with no visible key (all -inf) yields 0

Causal alignments: ``top_left`` shows key j to query i iff ``j <= i``;
``bottom_right`` iff ``j <= i + Lk - Lq``. The op's ``causal_offset`` c
and ``causal_period`` P: see :func:`causal_visible`.

The helpers at the bottom round arrays to f16 / bf16 exactly and encode
arrays as the hex payload of an MLIR ``dense<"0x...">`` literal.  The hex
formats were checked against ``mlir-opt`` (LLVM 22):

* f32 / f16 / bf16: little-endian raw bytes of every element in row-major
  order; bf16 is the upper 16 bits of the (rounded) f32 bit pattern.
* i1: **bit-packed**, eight elements per byte, element 0 in the least
  significant bit of byte 0 (``np.packbits(..., bitorder="little")``).
  One byte per element is rejected ("elements hex data size is invalid").
  A single byte for a tensor of at most 8 elements is read as packed bits,
  except that ``0xFF`` is read as a splat ``true``, which means the same.
"""

from __future__ import annotations

import math
from typing import Literal, Optional

import numpy as np

CausalAlignment = Literal["top_left", "bottom_right"]

#: Element types the op accepts for q/k/v/init, float masks and biases.
FLOAT_DTYPES = ("f32", "f16", "bf16")


# ---------------------------------------------------------------------------
# Reference semantics
# ---------------------------------------------------------------------------


def causal_visible(lq: int, lk: int, causal: Optional[CausalAlignment],
                   offset: int = 0, period: Optional[int] = None
                   ) -> np.ndarray:
    """Returns the [Lq, Lk] boolean matrix of keys the causal rule leaves
    visible.

    ``offset`` and ``period`` are the op's ``causal_offset`` and
    ``causal_period``: without a period, the offset moves the diagonal (key
    j is visible to row i iff j <= i + offset, top_left only); with period
    P, row i is query (i + offset) mod P and the alignment places the
    diagonal for P queries.
    """
    check_causal(causal, offset, period)
    i = np.arange(lq)[:, None]
    j = np.arange(lk)[None, :]
    if causal is None:
        return np.ones((lq, lk), dtype=bool)
    queries = lq if period is None else period
    diagonal = 0 if causal == "top_left" else lk - queries
    if period is None:
        return j <= i + offset + diagonal
    return j <= (i + offset) % period + diagonal


def check_causal(causal: Optional[CausalAlignment], offset: int = 0,
                 period: Optional[int] = None) -> None:
    """Raises ValueError unless the op accepts this causal alignment, offset
    and period (AttnOps.td): both need an alignment, the offset is not
    negative and the period positive, and an offset without a period
    needs top_left."""
    if causal is None:
        if offset or period is not None:
            raise ValueError("a causal offset or period needs a causal "
                             "alignment")
        return
    if causal not in ("top_left", "bottom_right"):
        raise ValueError(f"unknown causal alignment {causal!r}")
    if offset < 0:
        raise ValueError(f"the causal offset must not be negative, got "
                         f"{offset}")
    if period is not None and period <= 0:
        raise ValueError(f"the causal period must be positive, got {period}")
    if period is None and offset and causal != "top_left":
        raise ValueError("a causal offset without a period needs top_left")


def kv_head_index(hq: int, hkv: int) -> np.ndarray:
    """Key/value head read by each query head: ``h // (Hq // Hkv)``."""
    if hkv <= 0 or hq % hkv:
        raise ValueError(f"Hq={hq} is not a positive multiple of Hkv={hkv}")
    return np.arange(hq) // (hq // hkv)


def scores(
    q: np.ndarray,
    k: np.ndarray,
    *,
    scale: float,
    mask: Optional[np.ndarray] = None,
    bias: Optional[np.ndarray] = None,
    causal: Optional[CausalAlignment] = None,
    kv_heads: Optional[np.ndarray] = None,
    f32_scores: bool = False,
    causal_offset: int = 0,
    causal_period: Optional[int] = None,
) -> np.ndarray:
    """Returns the masked float64 score tensor s, [B..., Hq, Lq, Lk].

    ``mask`` is a bool array (False hides a key) or a float array (added to
    the scores); both ``mask`` and ``bias`` broadcast to the score shape.
    ``kv_heads`` overrides the query-head -> kv-head map (used only to build
    deliberately wrong references for the harness self-check).
    ``f32_scores`` rounds the score to f32 after the scaled product and after
    each added term, as the op's f32 arithmetic does: what is left of a score
    next to a term like -1e9 (f32 keeps multiples of 64 there).
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    hq, lq, dqk = q.shape[-3:]
    hkv, lk, dk = k.shape[-3:]
    if q.shape[:-3] != k.shape[:-3] or dqk != dk:
        raise ValueError(f"incompatible q {q.shape} and k {k.shape}")
    if kv_heads is None:
        kv_heads = kv_head_index(hq, hkv)
    k_per_q = np.take(k, kv_heads, axis=-3)  # [B..., Hq, Lk, Dqk]
    f32 = ((lambda x: round_to(x, "f32")) if f32_scores
           else (lambda x: x))
    s = f32(scale * np.einsum("...id,...jd->...ij", q, k_per_q))
    if bias is not None:
        s = f32(s + np.asarray(bias, dtype=np.float64))
    visible = np.broadcast_to(
        causal_visible(lq, lk, causal, causal_offset, causal_period), s.shape)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype == np.bool_:
            visible = visible & mask
        else:
            s = f32(s + mask.astype(np.float64))
    return np.where(visible, s, -np.inf)


def softmax_rows(s: np.ndarray) -> np.ndarray:
    """Max-subtracted softmax along the last axis; an all -inf row gives 0."""
    row_max = s.max(axis=-1, keepdims=True)
    hidden_row = np.isneginf(row_max)
    e = np.exp(s - np.where(hidden_row, 0.0, row_max))  # exp(-inf) == 0
    denom = e.sum(axis=-1, keepdims=True)
    return np.where(hidden_row, 0.0, e / np.where(hidden_row, 1.0, denom))


def attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    scale: float,
    mask: Optional[np.ndarray] = None,
    bias: Optional[np.ndarray] = None,
    causal: Optional[CausalAlignment] = None,
    kv_heads: Optional[np.ndarray] = None,
    f32_scores: bool = False,
    causal_offset: int = 0,
    causal_period: Optional[int] = None,
) -> np.ndarray:
    """Float64 ``attn.attention``: returns out, [B..., Hq, Lq, Dv].

    Inputs are taken at face value (as float64); round them to the element
    type of the program first (see :func:`round_to`).
    """
    s = scores(q, k, scale=scale, mask=mask, bias=bias, causal=causal,
               kv_heads=kv_heads, f32_scores=f32_scores,
               causal_offset=causal_offset, causal_period=causal_period)
    p = softmax_rows(s)
    v = np.asarray(v, dtype=np.float64)
    hq = q.shape[-3]
    if kv_heads is None:
        kv_heads = kv_head_index(hq, v.shape[-3])
    v_per_q = np.take(v, kv_heads, axis=-3)  # [B..., Hq, Lk, Dv]
    return np.einsum("...ij,...jd->...id", p, v_per_q)


def hidden_rows(s: np.ndarray) -> np.ndarray:
    """Boolean [B..., Hq, Lq]: rows of the score tensor with no visible key."""
    return np.all(np.isneginf(s), axis=-1)


# ---------------------------------------------------------------------------
# Exact rounding to the element types
# ---------------------------------------------------------------------------


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """Returns the uint16 bf16 bit patterns of ``x`` rounded to nearest-even.

    The rounding is done on the float32 bit pattern of ``x`` (``x`` is first
    converted to float32), with integer arithmetic: add ``0x7FFF`` plus the
    lowest kept bit, then drop the low 16 bits.  Overflow correctly carries
    into the exponent (giving inf); NaNs become the quiet NaN ``0x7FC0``
    with the sign kept.
    """
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    quiet = (bits >> 16) & 0x8000 | 0x7FC0
    return np.where(nan, quiet, rounded).astype(np.uint16)


def bf16_bits_to_float(bits: np.ndarray) -> np.ndarray:
    """Widens uint16 bf16 bit patterns to float32 (exact)."""
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)


def tf32_bits(x: np.ndarray) -> np.ndarray:
    """Returns the float32 bit patterns of ``x`` rounded to TF32 (10 mantissa
    bits) as PTX's ``cvt.rna.tf32.f32`` does: to nearest, ties away from
    zero, the 13 low bits cleared.

    Sign and magnitude are separate in the pattern, so adding half of the
    last kept bit to the magnitude rounds ties away from zero; a carry goes
    into the exponent (the largest finite values round to inf).  NaNs stay
    NaNs.
    """
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, bits.astype(np.uint32), rounded).astype(np.uint32)


def round_to(x: np.ndarray, dtype: str) -> np.ndarray:
    """Rounds ``x`` to ``dtype`` (f32, f16, bf16, tf32) and returns float64
    values.

    f32 and f16 use numpy's round-to-nearest-even conversions; bf16 rounds
    the float32 value with :func:`bf16_bits`, tf32 with :func:`tf32_bits`
    (the operand rounding of TF32 tensor cores).  The result is exactly
    representable in ``dtype``.
    """
    x = np.asarray(x)
    with np.errstate(over="ignore"):  # overflow to +-inf is the right answer
        if dtype == "f32":
            return x.astype(np.float32).astype(np.float64)
        if dtype == "f16":
            return x.astype(np.float16).astype(np.float64)
        if dtype == "bf16":
            return bf16_bits_to_float(bf16_bits(x)).astype(np.float64)
        if dtype == "tf32":
            return tf32_bits(x).view(np.float32).astype(np.float64)
    raise ValueError(f"unsupported float dtype {dtype!r}")


def lowest_finite(dtype: str) -> float:
    """The lowest finite value of ``dtype`` (``finfo(dtype).min``)."""
    if dtype == "f32":
        return float(-np.finfo(np.float32).max)
    if dtype == "f16":
        return float(-np.finfo(np.float16).max)
    if dtype == "bf16":
        return -(2.0 - 2.0**-7) * 2.0**127
    raise ValueError(f"unsupported float dtype {dtype!r}")


# ---------------------------------------------------------------------------
# MLIR dense hex literals
# ---------------------------------------------------------------------------


def raw_bytes(x: np.ndarray, dtype: str) -> bytes:
    """Returns the raw little-endian storage MLIR uses for ``x`` as ``dtype``.

    ``dtype`` is one of f32, f16, bf16 (values are rounded to nearest-even)
    or i1 (bit-packed, element 0 in the least significant bit of byte 0).
    """
    x = np.ascontiguousarray(x)
    if dtype in ("f32", "f16"):
        with np.errstate(over="ignore"):
            return x.astype("<f4" if dtype == "f32" else "<f2").tobytes()
    if dtype == "bf16":
        return bf16_bits(x).astype("<u2").tobytes()
    if dtype == "i1":
        if x.dtype != np.bool_:
            raise ValueError("i1 data must be a bool array")
        return np.packbits(x.ravel(), bitorder="little").tobytes()
    raise ValueError(f"unsupported element type {dtype!r}")


def hex_literal(x: np.ndarray, dtype: str) -> str:
    """Returns ``dense<"0x...">`` for ``x`` stored as ``dtype``."""
    return f'dense<"0x{raw_bytes(x, dtype).hex().upper()}">'


def decode_hex(hex_payload: str, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """Inverse of :func:`hex_literal` (accepts the payload with or without
    ``dense<"0x`` / ``">``): returns float64 values, or bool for i1."""
    payload = hex_payload.strip()
    if payload.startswith("dense<"):
        payload = payload[len("dense<"):].rstrip(">").strip('"')
    if payload[:2].lower() == "0x":
        payload = payload[2:]
    data = bytes.fromhex(payload)
    count = math.prod(shape)
    if dtype == "i1":
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8),
                             bitorder="little")
        if len(data) != (count + 7) // 8:
            raise ValueError("i1 payload size does not match the shape")
        return bits[:count].astype(bool).reshape(shape)
    if dtype == "f32":
        vals = np.frombuffer(data, dtype="<f4")
    elif dtype == "f16":
        vals = np.frombuffer(data, dtype="<f2")
    elif dtype == "bf16":
        vals = bf16_bits_to_float(np.frombuffer(data, dtype="<u2"))
    else:
        raise ValueError(f"unsupported element type {dtype!r}")
    if vals.size != count:
        raise ValueError(f"payload has {vals.size} elements, shape needs {count}")
    return vals.astype(np.float64).reshape(shape)


def tensor_type(shape: tuple[int, ...] | list[int], dtype: str) -> str:
    """Returns the MLIR type ``tensor<AxBx...xDTYPE>``."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"
