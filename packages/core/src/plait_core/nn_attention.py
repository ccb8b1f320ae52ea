"""``plait.nn.dot_product_attention``: scaled dot-product attention with
JAX's signature, built from ``plait.numpy`` (so every transformation
applies).

Shapes use JAX's letters: ``B`` batch, ``T`` query length, ``S`` key/value
length, ``N`` query heads, ``K`` key/value heads (``N`` a multiple of ``K``:
grouped-query attention, ``K == 1`` multi-query), ``G = N // K``, ``H`` head
size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core import numpy as pnp

Array = Any

__all__ = ["dot_product_attention"]


def _four_d(name: str, x: Any) -> Any:
    x = pnp.asarray(x)
    if x.ndim > 4:
        raise ValueError(f"dot_product_attention: {name} must have rank at most 4 (B, N, T, S), got shape {x.shape}")
    return pnp.expand_dims(x, tuple(range(4 - x.ndim))) if x.ndim < 4 else x


def _grouped(name: str, x: Any, b: int, n: int, k: int, t: int, s: int) -> Any:
    """A bias or mask broadcast to (B, N, T, S), then split into (B, K, G, T, S)."""
    x = _four_d(name, x)
    try:
        x = pnp.broadcast_to(x, (b, n, t, s))
    except ValueError:
        raise ValueError(
            f"dot_product_attention: {name} of shape {x.shape} does not broadcast to (B, N, T, S) = {(b, n, t, s)}"
        ) from None
    return pnp.reshape(x, (b, k, n // k, t, s))


def _window(local_window_size: Any) -> tuple[int, int] | None:
    if local_window_size is None:
        return None
    if isinstance(local_window_size, int):
        return local_window_size, local_window_size
    left, right = local_window_size
    return int(left), int(right)


def dot_product_attention(
    query: Array,
    key: Array,
    value: Array,
    bias: Array | None = None,
    mask: Array | None = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    query_seq_lengths: Array | None = None,
    key_value_seq_lengths: Array | None = None,
    local_window_size: int | tuple[int, int] | None = None,
    implementation: str | None = None,
    return_residual: bool = False,
) -> Any:
    """``softmax(scale * Q K^T + bias, masked) V`` for each head.

    ``query`` is (B, T, N, H) or (T, N, H); ``key`` and ``value`` are
    (B, S, K, H) or (S, K, H) with ``N`` a multiple of ``K`` (query heads
    share key/value heads in groups).  ``bias`` (added to the logits) and
    ``mask`` (boolean, ``True`` where a query may attend a key) broadcast to
    (B, N, T, S).  ``scale`` defaults to ``1 / sqrt(H)``.  ``is_causal`` lets
    query ``t`` attend keys ``s <= t``; ``local_window_size`` ``(left,
    right)`` (or one int for both) keys ``t - left <= s <= t + right``;
    ``query_seq_lengths`` / ``key_value_seq_lengths`` (one int per batch
    element) mask the padding of each sequence, and outputs past a query's
    length are zero.  Logits are computed and normalised in float32 (or
    wider); the result has ``query``'s shape and ``value``'s dtype.  With
    ``return_residual`` the log-sum-exp of each query's logits, shape (B, T,
    N), comes too.  ``implementation`` may be ``None`` or ``'xla'``."""
    if implementation not in (None, "xla"):
        raise NotImplementedError(
            f"not supported: dot_product_attention(implementation={implementation!r}); plait runs on XLA ('xla')"
        )
    q, k, v = pnp.asarray(query), pnp.asarray(key), pnp.asarray(value)
    unbatched = q.ndim == 3
    if unbatched:
        q, k, v = q[None], k[None], v[None]
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError(
            "dot_product_attention: query, key and value must have rank 3 or 4 ((B,) T|S, N|K, H), got shapes "
            f"{pnp.shape(query)}, {pnp.shape(key)}, {pnp.shape(value)}"
        )
    if k.shape != v.shape:
        raise ValueError(f"dot_product_attention: key {k.shape} and value {v.shape} must have one shape")
    b, t, n, h = q.shape
    _, s, kh, hk = k.shape
    if k.shape[0] != b or hk != h:
        raise ValueError(f"dot_product_attention: query {q.shape} and key {k.shape} differ in batch or head size")
    if n % kh:
        raise ValueError(f"dot_product_attention: the query heads ({n}) must be a multiple of the key/value heads ({kh})")
    g = n // kh
    logits_dtype = pnp.promote_types(q.dtype, np.float32)
    scale = 1.0 / float(np.sqrt(h)) if scale is None else scale
    grouped_q = pnp.reshape(q, (b, t, kh, g, h))
    logits = pnp.einsum("btkgh,bskh->bkgts", grouped_q, k, preferred_element_type=logits_dtype)
    logits = logits * pnp.asarray(scale, logits_dtype)
    if bias is not None:
        logits = (logits + _grouped("bias", bias, b, n, kh, t, s)).astype(logits_dtype)
    keep = None
    if mask is not None:
        m = _grouped("mask", mask, b, n, kh, t, s)
        if m.dtype != np.dtype(bool):
            raise TypeError(f"dot_product_attention: mask must be boolean (True: attend), got {m.dtype}")
        keep = m
    qpos, kpos = pnp.arange(t)[:, None], pnp.arange(s)[None, :]
    structural = []
    if is_causal:
        structural.append(qpos >= kpos)
    window = _window(local_window_size)
    if window is not None:
        structural.append((qpos <= kpos + window[0]) & (qpos >= kpos - window[1]))
    if query_seq_lengths is not None:
        structural.append((pnp.arange(t)[None, :, None] < pnp.asarray(query_seq_lengths)[:, None, None])[:, None, None])
    if key_value_seq_lengths is not None:
        structural.append((pnp.arange(s)[None, None, :] < pnp.asarray(key_value_seq_lengths)[:, None, None])[:, None, None])
    for extra in structural:
        keep = extra if keep is None else keep & extra
    if keep is not None:
        big = min(float(dtypes.finfo(logits_dtype).max), float(np.finfo(np.float32).max))
        logits = pnp.where(keep, logits, pnp.asarray(-0.7 * big, logits_dtype))
    logits32 = logits.astype(pnp.promote_types(logits_dtype, np.float32))
    peak = pnp.max(logits32, axis=-1, keepdims=True)
    weights = pnp.exp(logits32 - peak)
    total = pnp.sum(weights, axis=-1, keepdims=True)
    probs = (weights / total).astype(k.dtype)
    out = pnp.einsum("bkgts,bskh->btkgh", probs, v)
    out = pnp.reshape(out, (b, t, n, h))
    if query_seq_lengths is not None:
        valid = pnp.arange(t)[None, :] < pnp.asarray(query_seq_lengths)[:, None]
        out = out * valid[:, :, None, None].astype(out.dtype)
    if unbatched:
        out = out[0]
    if not return_residual:
        return out
    lse = (pnp.log(total) + peak)[..., 0].astype(k.dtype)  # (B, K, G, T)
    lse = pnp.reshape(pnp.transpose(lse, (0, 3, 1, 2)), (b, t, n))
    return out, (lse[0] if unbatched else lse)
