"""Summary statistics of ``jax.scipy.stats``: ``sem`` (standard error of the
mean), ``mode`` (most frequent value and its count) and ``rankdata`` (ranks with
the ``average``, ``min``, ``max``, ``dense`` and ``ordinal`` tie methods).

``mode`` and ``rankdata`` compare every pair of entries along the axis (no
data-dependent shapes, so they work under every transformation; quadratic in
the axis length).  ``nan_policy='propagate'`` is supported everywhere, ``'omit'``
by ``sem``; the others raise as in JAX."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from plait_core import numpy as pnp

Array = Any


def _policy(name: str, nan_policy: str, allowed: tuple[str, ...]) -> None:
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"{name}: nan_policy must be 'propagate', 'omit' or 'raise', got {nan_policy!r}")
    if nan_policy not in allowed:
        raise NotImplementedError(f"{name}: nan_policy={nan_policy!r} is not supported (as in JAX)")


def sem(a: Array, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Array:
    """The standard error of the mean, ``std(a, ddof) / sqrt(n)`` over ``axis`` (the
    flattened array if None); ``nan_policy='omit'`` ignores NaNs."""
    _policy("sem", nan_policy, ("propagate", "omit"))
    x = pnp.asarray(a)
    if axis is None:
        x, axis = pnp.ravel(x), 0
    if nan_policy == "omit":
        count = pnp.sum(~pnp.isnan(x), axis=axis, keepdims=keepdims)
        return pnp.nanstd(x, axis=axis, ddof=ddof, keepdims=keepdims) / pnp.sqrt(count)
    return pnp.std(x, axis=axis, ddof=ddof, keepdims=keepdims) / np.sqrt(x.shape[axis])


class ModeResult(NamedTuple):
    """``mode``'s result: the most frequent value and how often it occurs."""

    mode: Array
    count: Array


def mode(a: Array, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False) -> ModeResult:
    """The most frequent value along ``axis`` (the smallest of equally frequent ones)
    and its count; NaNs count as one value that sorts last."""
    _policy("mode", nan_policy, ("propagate",))
    x = pnp.asarray(a)
    if axis is None:
        x, axis = pnp.ravel(x), 0
        keep_shape = None
    else:
        keep_shape = axis % max(x.ndim, 1)
    moved = pnp.moveaxis(x, axis, -1)
    inexact = bool(pnp.issubdtype(moved.dtype, pnp.inexact))
    nan = pnp.isnan(moved) if inexact else pnp.zeros(moved.shape, bool)
    same = (moved[..., :, None] == moved[..., None, :]) | (nan[..., :, None] & nan[..., None, :])
    counts = pnp.sum(same, axis=-1).astype(np.int32)
    best = pnp.max(counts, axis=-1, keepdims=True)
    candidates = counts == best
    # The smallest most frequent value; NaN (if it is one) only when no number ties with it.
    top = np.inf if inexact else pnp.iinfo(moved.dtype).max
    plain = candidates & ~nan
    smallest = pnp.argmin(pnp.where(plain, moved, top), axis=-1)
    pick = pnp.where(pnp.any(plain, axis=-1), smallest, pnp.argmax(candidates, axis=-1))
    value = pnp.take_along_axis(moved, pick[..., None], axis=-1)[..., 0]
    count = best[..., 0]
    if keepdims:
        if keep_shape is None:
            return ModeResult(pnp.reshape(value, (1,) * pnp.ndim(a)), pnp.reshape(count, (1,) * pnp.ndim(a)))
        return ModeResult(pnp.expand_dims(value, keep_shape), pnp.expand_dims(count, keep_shape))
    return ModeResult(value, count)


_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(a: Array, method: str = "average", *, axis: int | None = None, nan_policy: str = "propagate") -> Array:
    """Ranks (from 1) of the entries of ``a`` along ``axis`` (of the flattened array if
    None), ties by ``method``: ``'average'`` (mean rank), ``'min'``, ``'max'``,
    ``'dense'`` (consecutive ranks of distinct values) or ``'ordinal'`` (order of
    appearance).  A slice holding NaN ranks as NaN."""
    _policy("rankdata", nan_policy, ("propagate",))
    if method not in _METHODS:
        raise ValueError(f"rankdata: unknown method {method!r}; expected one of {_METHODS}")
    x = pnp.asarray(a)
    if axis is None:
        return pnp.reshape(rankdata(pnp.ravel(x), method, axis=0), (-1,))
    moved = pnp.moveaxis(x, axis, -1)
    xi, xj = moved[..., :, None], moved[..., None, :]
    less = pnp.sum(xj < xi, axis=-1)
    equal = pnp.sum(xj == xi, axis=-1)
    n = moved.shape[-1]
    if method == "ordinal":
        earlier = pnp.tril(pnp.ones((n, n), bool), -1)
        ranks = (less + pnp.sum((xj == xi) & earlier, axis=-1) + 1).astype(np.int32)
    elif method == "min":
        ranks = less + 1
    elif method == "max":
        ranks = less + equal
    elif method == "dense":
        # Distinct values below x_i: entries below it that are the first of their value.
        first = ~pnp.any((moved[..., :, None] == moved[..., None, :]) & pnp.tril(pnp.ones((n, n), bool), -1),
                         axis=-1)
        ranks = pnp.sum((xj < xi) & first[..., None, :], axis=-1) + 1
    else:
        ranks = less + (equal + 1) / 2
    out = ranks.astype(np.float32)
    if pnp.issubdtype(moved.dtype, pnp.inexact):
        out = pnp.where(pnp.any(pnp.isnan(moved), axis=-1, keepdims=True), np.nan, out)
    return pnp.moveaxis(out, -1, axis)


__all__ = ["ModeResult", "mode", "rankdata", "sem"]
