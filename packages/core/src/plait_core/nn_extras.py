"""More of ``jax.nn``'s activations: ``identity``, ``tanh``, ``soft_sign``, ``mish``,
``hard_silu``, ``squareplus``, ``sparse_plus``, ``sparse_sigmoid``, ``log1mexp`` and
``logmeanexp``, each a composition of ``plait.numpy`` operations (so every
transformation applies) with JAX 0.10.2's definition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import lax
from plait_core import numpy as pnp

Array = Any
Axis = int | Sequence[int] | None


def identity(x: Array) -> Array:
    """``x`` itself, as an array."""
    return pnp.asarray(x)


def tanh(x: Array) -> Array:
    """The hyperbolic tangent (``plait.numpy.tanh``)."""
    return pnp.tanh(x)


def soft_sign(x: Array) -> Array:
    """``x / (|x| + 1)``."""
    x = pnp.asarray(x)
    return x / (pnp.abs(x) + 1)


def mish(x: Array) -> Array:
    """``x * tanh(softplus(x))``."""
    x = pnp.asarray(x)
    return x * pnp.tanh(pnp.logaddexp(x, 0))


def hard_silu(x: Array) -> Array:
    """``x * relu6(x + 3) / 6`` (a.k.a. hard swish)."""
    x = pnp.asarray(x)
    return x * pnp.clip(x + 3, 0, 6) / 6


def squareplus(x: Array, b: Array = 4) -> Array:
    """``(x + sqrt(x**2 + b)) / 2``, a smooth ReLU whose sharpness ``b`` >= 0 sets."""
    x = pnp.asarray(x)
    return (x + pnp.sqrt(pnp.square(x) + b)) / 2


def sparse_plus(x: Array) -> Array:
    """0 for ``x <= -1``, ``(x + 1)**2 / 4`` for ``-1 < x < 1``, ``x`` for ``x >= 1``."""
    x = pnp.asarray(x)
    return pnp.where(x <= -1, 0, pnp.where(x >= 1, x, pnp.square(x + 1) / 4))


def sparse_sigmoid(x: Array) -> Array:
    """0 for ``x <= -1``, ``(x + 1) / 2`` for ``-1 < x < 1``, 1 for ``x >= 1``
    (the derivative of :func:`sparse_plus`)."""
    x = pnp.asarray(x)
    return pnp.where(x <= -1, 0, pnp.where(x >= 1, 1, (x + 1) / 2))


def log1mexp(x: Array) -> Array:
    """``log(1 - exp(-x))`` for ``x > 0``, accurate for small and large ``x``
    (``log(-expm1(-x))`` below ``log 2``, ``log1p(-exp(-x))`` above)."""
    x = pnp.asarray(x)
    small = x < np.log(2.0)
    return pnp.where(small, pnp.log(-pnp.expm1(-x)), pnp.log1p(-pnp.exp(-x)))


def logmeanexp(x: Array, axis: Axis = None, where: Array | None = None, keepdims: bool = False) -> Array:
    """``log(mean(exp(x)))`` over ``axis``, stable for large ``x``; with ``where``,
    over the selected entries only."""
    x = pnp.asarray(x)
    mask = pnp.ones(x.shape, bool) if where is None else pnp.broadcast_to(pnp.asarray(where), x.shape)
    peak = lax.stop_gradient(pnp.max(x, axis=axis, where=mask, initial=-np.inf, keepdims=True))
    peak = pnp.where(pnp.isfinite(peak), peak, 0)
    total = pnp.sum(pnp.exp(x - peak), axis=axis, where=mask, keepdims=True)
    count = pnp.sum(mask, axis=axis, keepdims=True).astype(total.dtype)
    out = pnp.log(total / count) + peak
    return out if keepdims else pnp.squeeze(out, axis=axis)


__all__ = [
    "hard_silu", "identity", "log1mexp", "logmeanexp", "mish", "soft_sign", "sparse_plus", "sparse_sigmoid",
    "squareplus", "tanh",
]
