"""A float64 numpy reference for attn.attention (the op's documented
semantics), for the Python tests."""

import numpy as np


def reference_attention(q, k, v, mask=None, bias=None, scale=1.0, causal=None):
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    group = q.shape[-3] // k.shape[-3]  # query heads per key/value head
    k = np.repeat(k, group, axis=-3)
    v = np.repeat(v, group, axis=-3)
    s = scale * np.einsum("...id,...jd->...ij", q, k)
    if bias is not None:
        s = s + np.asarray(bias, dtype=np.float64)
    visible = np.ones(s.shape, dtype=bool)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype == np.bool_:
            visible &= np.broadcast_to(mask, s.shape)
        else:
            s = s + mask.astype(np.float64)
    if causal is not None:
        lq, lk = s.shape[-2:]
        offset = 0 if causal == "top_left" else lk - lq
        visible &= np.arange(lk)[None, :] <= np.arange(lq)[:, None] + offset
    s = np.where(visible, s, -np.inf)
    row_max = s.max(axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    e = np.where(visible, np.exp(s - row_max), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    p = np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
    return np.einsum("...ij,...jd->...id", p, v)
