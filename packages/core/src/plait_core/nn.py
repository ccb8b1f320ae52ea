"""``plait.nn``: activation functions and friends, built from ``plait.numpy``.

Each function is an ordinary composition of primitives, so every
transformation applies to it.  Numerically sensitive ones (``softplus``,
``log_sigmoid``, ``logsumexp``, ``softmax``) are written in their stable forms.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core import nn_initializers as initializers
from plait_core import numpy as pnp
from plait_core.custom_derivatives import custom_jvp
from plait_core.nn_attention import dot_product_attention
from plait_core.nn_extras import (
    hard_silu,
    identity,
    log1mexp,
    logmeanexp,
    mish,
    soft_sign,
    sparse_plus,
    sparse_sigmoid,
    squareplus,
    tanh,
)
from plait_core.numpy._util import promote_args_inexact, promote_dtypes_inexact

Array = Any
Axis = int | Sequence[int] | None


def relu(x: Array) -> Array:
    """``max(x, 0)``; its derivative is 1 where ``x > 0`` and 0 elsewhere: 0 at
    0 (as in JAX, not the 1/2 of ``maximum``'s tie rule) and at NaN, which
    stays NaN in the value."""
    return _relu(pnp.asarray(x))


@custom_jvp
def _relu(x: Array) -> Array:
    return pnp.where(x <= 0, 0, x)


@_relu.defjvp
def _relu_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    (x,), (t,) = primals, tangents
    if pnp.asarray(t).dtype == dtypes.float0:  # an integer input's tangent
        return _relu(x), t
    return _relu(x), pnp.where(x > 0, t, pnp.zeros_like(t))


def relu6(x: Array) -> Array:
    """``min(max(x, 0), 6)``; its derivative at 0 and at 6 is 0 (as in JAX),
    and NaN stays NaN."""
    x = pnp.asarray(x)
    # 6.0, a weak float: integers give a weak float, as JAX's min(max(x, 0), 6.) does.
    return pnp.where(x <= 0, 0, pnp.where(x >= 6, 6.0, x))


def sigmoid(x: Array) -> Array:
    """The logistic function ``1 / (1 + exp(-x))``."""
    return lax.logistic(pnp.asarray(x))


def log_sigmoid(x: Array) -> Array:
    """``log(sigmoid(x))``, stable for large ``|x|``."""
    return -softplus(-pnp.asarray(x))


def softplus(x: Array) -> Array:
    """``log(1 + exp(x))``, stable for large ``|x|``; computed in floating point
    with JAX's typing of ``logaddexp(x, 0)`` (booleans give a weak float)."""
    x, zero = promote_args_inexact("softplus", x, 0)
    # logaddexp's smooth derivative rule (not max + log1p(exp(-|x|)), whose second
    # derivative at 0 is 0): the derivatives are JAX's at every order.
    return pnp.logaddexp(x, zero)


def silu(x: Array) -> Array:
    """``x * sigmoid(x)`` (a.k.a. swish)."""
    return x * sigmoid(x)


swish = silu


def gelu(x: Array, approximate: bool = True) -> Array:
    """Gaussian error linear unit; the tanh approximation by default, as JAX.
    Computed in ``x``'s inexact dtype (16-bit floats stay 16-bit); the result is
    strongly typed, as JAX's."""
    (x,) = promote_dtypes_inexact("gelu", x)
    dt = pnp.result_type(x)
    if approximate:
        c = np.asarray(np.sqrt(2.0 / np.pi), dt)  # a strong constant of x's dtype
        return 0.5 * x * (1.0 + pnp.tanh(c * (x + 0.044715 * (x * x * x))))
    return 0.5 * x * (1.0 + lax.erf(x / np.asarray(np.sqrt(2.0), dt)))


def elu(x: Array, alpha: float = 1.0) -> Array:
    """``x`` if positive else ``alpha * (exp(x) - 1)``."""
    x = pnp.asarray(x)
    # The inner where (not minimum, whose tie rule halves the derivative) makes
    # the derivative at 0 that of the negative branch, alpha, as in JAX.
    # (0.0, a weak float: integers give a weak float, as in JAX.)
    return pnp.where(x > 0, x, alpha * pnp.expm1(pnp.where(x > 0, 0.0, x)))


def celu(x: Array, alpha: float = 1.0) -> Array:
    """``max(x, 0) + alpha * min(exp(x / alpha) - 1, 0)``."""
    x = pnp.asarray(x)
    # expm1 of min(x, 0), never of a large x: exp(x / alpha) would overflow and
    # make the derivative inf * 0 = NaN for large positive x.
    return pnp.maximum(x, 0) + alpha * pnp.expm1(pnp.minimum(x, 0) / alpha)


def selu(x: Array) -> Array:
    """Scaled ELU with the self-normalising constants."""
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return scale * elu(x, alpha)


def leaky_relu(x: Array, negative_slope: float = 0.01) -> Array:
    """``x`` if non-negative else ``negative_slope * x``."""
    x = pnp.asarray(x)
    return pnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Array) -> Array:
    """``minimum(maximum(x, -1), 1)``: ``clip(x, -1, 1)`` for real ``x``; complex ``x``
    is ordered lexicographically, as in JAX (``clip`` refuses complex numbers)."""
    return pnp.minimum(pnp.maximum(x, -1), 1)


def hard_sigmoid(x: Array) -> Array:
    """``relu6(x + 3) / 6``."""
    return relu6(pnp.asarray(x) + 3.0) / 6.0


def hard_swish(x: Array) -> Array:
    """``x * hard_sigmoid(x)``."""
    return pnp.asarray(x) * hard_sigmoid(x)


def glu(x: Array, axis: int = -1) -> Array:
    """Gated linear unit: the first half of ``x`` along ``axis`` times the sigmoid of the second."""
    a, b = pnp.split(x, 2, axis=axis)
    return a * sigmoid(b)


def logsumexp(a: Array, axis: Axis = None, b: Array | None = None, keepdims: bool = False,
              return_sign: bool = False, where: Array | None = None) -> Array:
    """``log(sum(b * exp(a)))`` over ``axis``, computed stably (the maximum is
    subtracted first); the same function as ``plait.scipy.special.logsumexp``,
    with JAX's signature (``b`` before ``keepdims``).

    ``b`` scales the terms (broadcast against ``a``); ``where`` (a boolean mask
    broadcast against ``a``) keeps only the selected terms (a sum of none is
    ``-inf``).  When the scaled sum can be negative, pass ``return_sign=True``
    to get ``(log|sum|, sign(sum))``; without it a negative sum gives NaN, as in
    JAX."""
    if b is None:
        (a,) = promote_args_inexact("logsumexp", a)
    else:
        a, b = promote_args_inexact("logsumexp", a, b, keep_scalars=False)
    if where is not None:
        where = pnp.broadcast_to(pnp.asarray(where, dtype=bool), a.shape)
        a = pnp.where(where, a, -np.inf)
    # The shift only improves conditioning: no gradient flows through it, and an
    # infinite maximum (all terms masked or -inf) is replaced by 0.
    m = lax.stop_gradient(pnp.max(a, axis=axis, keepdims=True))
    m = pnp.where(pnp.isfinite(m), m, 0)
    e = pnp.exp(a - m)
    if b is not None:
        e = e * b
    if where is not None:
        e = pnp.where(where, e, 0)
    s = pnp.sum(e, axis=axis, keepdims=True)
    sign = pnp.sign(s)
    out = (pnp.log(pnp.abs(s)) if return_sign else pnp.log(s)) + m
    if not keepdims:
        axes = _normalize_axes(axis, a.ndim)
        out = pnp.squeeze(out, axis=axes)
        sign = pnp.squeeze(sign, axis=axes)
    return (out, sign) if return_sign else out


def _normalize_axes(axis: Axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(a + ndim if a < 0 else a for a in axis)


def softmax(x: Array, axis: Axis = -1, where: Array | None = None) -> Array:
    """``exp(x) / sum(exp(x))`` over ``axis``, stable; with ``where`` (a boolean
    mask broadcast against ``x``) only the selected entries take part, and the
    others are 0."""
    x = pnp.asarray(x)
    if where is not None:
        x = pnp.where(where, x, -np.inf)
    m = lax.stop_gradient(pnp.max(x, axis=axis, keepdims=True))
    e = pnp.exp(x - m)
    if where is not None:
        e = pnp.where(where, e, 0)
    return e / pnp.sum(e, axis=axis, keepdims=True)


def log_softmax(x: Array, axis: Axis = -1, where: Array | None = None) -> Array:
    """``x - logsumexp(x)`` over ``axis``, stable; with ``where`` (a boolean mask
    broadcast against ``x``) only the selected entries take part, and the
    others are ``-inf``.  The signature is JAX's: ``log_softmax(x, -1, None)``."""
    x = pnp.asarray(x)
    masked = x if where is None else pnp.where(where, x, -np.inf)
    shifted = masked - lax.stop_gradient(pnp.max(masked, axis=axis, keepdims=True))
    e = pnp.exp(shifted)
    if where is not None:
        e = pnp.where(where, e, 0)
    out = shifted - pnp.log(pnp.sum(e, axis=axis, keepdims=True))
    return out if where is None else pnp.where(where, out, -np.inf)


_STANDARDIZE_ALGORITHMS = ("fast", "stable")


def standardize(x: Array, axis: Axis = -1, mean: Array | None = None, variance: Array | None = None,
                epsilon: Array = 1e-5, where: Array | None = None, *, algorithm: str = "fast") -> Array:
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis``, with JAX's signature.

    ``mean`` and ``variance`` default to those of ``x`` over ``axis`` (only the
    entries selected by ``where``, a boolean mask, when given); pass them to
    normalise with statistics computed elsewhere.  ``algorithm`` is ``"fast"``
    or ``"stable"``; plait computes the variance as ``mean((x - mean)**2)``
    for both (a documented deviation: JAX's ``"fast"`` one-pass
    ``mean(x**2) - mean(x)**2`` cancels catastrophically in low precision)."""
    if algorithm not in _STANDARDIZE_ALGORITHMS:
        raise ValueError(f"standardize: unknown algorithm {algorithm!r}; expected 'fast' or 'stable'")
    x = pnp.asarray(x)
    if mean is None:
        mean = pnp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        variance = pnp.mean(pnp.square(x - mean), axis=axis, keepdims=True, where=where)
    return (x - mean) * lax.rsqrt(variance + epsilon)


def one_hot(x: Array, num_classes: int, dtype: Any = None, axis: int = -1) -> Array:
    """One-hot encoding of integer ``x``: a new axis of length ``num_classes``."""
    x = pnp.asarray(x)
    classes = pnp.arange(num_classes)
    ax = axis if axis >= 0 else x.ndim + 1 + axis
    expanded = pnp.expand_dims(x, ax)
    shape = [1] * (x.ndim + 1)
    shape[ax] = num_classes
    hot = expanded == pnp.reshape(classes, tuple(shape))
    return hot.astype(dtype if dtype is not None else pnp.float32)


__all__ = [
    "relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "silu", "swish", "gelu", "elu", "celu", "selu",
    "leaky_relu", "hard_tanh", "hard_sigmoid", "hard_swish", "glu", "logsumexp", "softmax", "log_softmax",
    "standardize", "one_hot", "initializers", "dot_product_attention",
    "hard_silu", "identity", "log1mexp", "logmeanexp", "mish", "soft_sign", "sparse_plus", "sparse_sigmoid",
    "squareplus", "tanh",
]
