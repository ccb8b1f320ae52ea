"""The first special functions (``erf``, ``erfc``, ``gammaln``, ``digamma``, ``xlogy``,
``softmax``, ...), those the others of :mod:`plait_core.scipy.special` are built
on. Integer and boolean inputs are computed in the default float dtype; Python
scalars are weakly typed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import lax, nn
from plait_core import numpy as pnp
from plait_core.custom_derivatives import custom_jvp
from plait_core.numpy._util import promote_args_inexact

Array = Any
Axis = int | Sequence[int] | None


def _inexact(name: str, x: Array) -> Array:
    (out,) = promote_args_inexact(name, x)
    return out


def erf(x: Array) -> Array:
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``."""
    return lax.erf(_inexact("erf", x))


# Chebyshev-fitted coefficients of ``log(erfc(z) * exp(z**2) / t)`` in
# ``t = 1 / (1 + z / 2)`` (Numerical Recipes' erfcc); relative error < 1.2e-7.
_ERFC_COEFFS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def _erfc_tail(z: Array) -> Array:
    t = 1.0 / (1.0 + 0.5 * z)
    poly = pnp.zeros_like(z) + _ERFC_COEFFS[-1]
    for c in reversed(_ERFC_COEFFS[:-1]):
        poly = poly * t + c
    return t * pnp.exp(-z * z + poly)


def erfc(x: Array) -> Array:
    """The complementary error function ``1 - erf(x)``.

    For float32 and narrower inputs ``x >= 0.5`` uses a rational approximation
    with relative error below 1.2e-7, so the far right tail (``erfc(5) ~ 1.5e-12``)
    keeps its digits instead of cancelling to 0.  float64 inputs are computed as
    ``1 - erf(x)``: exact to float64's absolute precision, but the right tail
    loses relative precision (and is 0 beyond ``x ~ 6``)."""
    x = _inexact("erfc", x)
    direct = 1.0 - lax.erf(x)
    if x.dtype == np.dtype(np.float64):
        return direct
    # The tail is evaluated at a safe point where unused, so its gradient stays finite.
    z = pnp.where(x >= 0.5, x, 1.0)
    return pnp.where(x >= 0.5, _erfc_tail(z), direct)


def erfinv(x: Array) -> Array:
    """The inverse of :func:`erf`: ``+-inf`` at ``+-1``, NaN outside ``[-1, 1]``."""
    return lax.erf_inv(_inexact("erfinv", x))


def expit(x: Array) -> Array:
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    return lax.logistic(_inexact("expit", x))


def logit(x: Array) -> Array:
    """The inverse of :func:`expit`: ``log(x / (1 - x))``; ``-inf`` at 0, ``inf`` at 1,
    NaN outside ``[0, 1]``."""
    x = _inexact("logit", x)
    return pnp.log(x / (1 - x))


def gammaln(x: Array) -> Array:
    """``log|Gamma(x)|``; ``inf`` at the poles 0, -1, -2, ..."""
    return lax.lgamma(_inexact("gammaln", x))


def digamma(x: Array) -> Array:
    """The digamma function ``d/dx log Gamma(x)``; NaN at the poles 0, -1, -2, ..."""
    return lax.digamma(_inexact("digamma", x))


logsumexp = nn.logsumexp  # the same function, as in JAX (``jax.nn.logsumexp is jax.scipy.special.logsumexp``)


def _xlog_jvp(log_fn: Any, dlog_fn: Any) -> Any:
    """``x * log_fn(y)``, 0 where ``x == 0`` (even where ``log_fn(y)`` is infinite),
    with derivatives ``log_fn(y)`` in ``x`` and ``x * dlog_fn(y)`` in ``y`` (those of
    the plain product, which the masking ``where`` alone would zero at ``x == 0``)."""

    @custom_jvp
    def f(x: Array, y: Array) -> Array:
        # ``y`` is replaced where ``x == 0`` so ``0 * log(0)`` is never formed.
        safe_y = pnp.where(x == 0, pnp.ones_like(y), y)
        return pnp.where(x == 0, pnp.zeros_like(x), x * log_fn(safe_y))

    def jvp(primals: tuple[Array, Array], tangents: tuple[Array, Array]) -> tuple[Array, Array]:
        x, y = primals
        x_dot, y_dot = tangents
        return f(x, y), x_dot * log_fn(y) + y_dot * x * dlog_fn(y)

    f.defjvp(jvp)
    return f


_xlogy = _xlog_jvp(pnp.log, lambda y: 1 / y)
_xlog1py = _xlog_jvp(pnp.log1p, lambda y: 1 / (1 + y))


def xlogy(x: Array, y: Array) -> Array:
    """``x * log(y)``, and 0 where ``x == 0`` whatever ``y`` (so ``xlogy(0, 0) == 0``)."""
    x, y = promote_args_inexact("xlogy", x, y, keep_scalars=False)
    return _xlogy(x, y)


def xlog1py(x: Array, y: Array) -> Array:
    """``x * log1p(y)``, and 0 where ``x == 0`` whatever ``y`` (so ``xlog1py(0, -1) == 0``)."""
    x, y = promote_args_inexact("xlog1py", x, y, keep_scalars=False)
    return _xlog1py(x, y)


def entr(x: Array) -> Array:
    """Elementwise entropy: ``-x * log(x)`` for ``x > 0``, 0 at 0, ``-inf`` for ``x < 0``.

    Unlike JAX (which gives ``inf``), the derivative at ``x == 0`` is 0: the log is
    evaluated at a safe point there so no NaN leaks into gradients."""
    x = _inexact("entr", x)
    safe = pnp.where(x > 0, x, 1)
    return pnp.where(x > 0, -x * pnp.log(safe), pnp.where(x == 0, 0, -np.inf))


def softmax(x: Array, /, *, axis: Axis = None) -> Array:
    """``exp(x) / sum(exp(x))`` over ``axis`` (all axes by default, as in
    ``jax.scipy.special``; ``plait.nn.softmax`` defaults to the last)."""
    return nn.softmax(_inexact("softmax", x), axis=axis)


def log_softmax(x: Array, /, *, axis: Axis = None) -> Array:
    """``x - logsumexp(x)`` over ``axis`` (all axes by default, as in ``jax.scipy.special``)."""
    return nn.log_softmax(_inexact("log_softmax", x), axis=axis)
