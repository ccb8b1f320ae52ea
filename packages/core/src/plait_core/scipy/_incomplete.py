"""The regularised incomplete gamma and beta functions (``gammainc``,
``gammaincc``, ``betainc``), for ``plait.scipy.special`` and the
distribution functions of ``plait.scipy.stats``.

Each is evaluated with a fixed number of steps (so it traces, batches and
differentiates in every argument): the power series of ``P(a, x)`` for
``x < a + 1`` and the continued fraction of ``Q(a, x)`` beyond (modified
Lentz); for ``I_x(a, b)`` the continued fraction on the side of
``x < (a + 1) / (a + b + 2)``, using ``I_x(a, b) = 1 - I_{1-x}(b, a)`` on the
other.  Both branches are computed and one is selected, with safe inputs in
the branch not taken, so no NaN leaks into values or gradients.  Arguments
outside the domain give NaN (``a <= 0``, ``x < 0``; for ``betainc`` ``x``
outside ``[0, 1]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import lax
from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy.special_basic import gammaln

Array = Any
ArrayLike = Any

_STEPS = 200


def _tiny(x: Array) -> float:
    return float(np.finfo(np.dtype(x.dtype)).tiny) * 1e3


def _prefactor(a: Array, x: Array) -> Array:
    """``x**a exp(-x) / Gamma(a)``, in logs."""
    return pnp.exp(a * pnp.log(x) - x - gammaln(a))


def _lower_series(a: Array, x: Array) -> Array:
    """``P(a, x)`` by its power series (good for ``x < a + 1``)."""

    def step(n: Any, carry: tuple[Array, Array]) -> tuple[Array, Array]:
        term, total = carry
        term = term * x / (a + n)
        return term, total + term

    first = 1 / a
    _, total = lax.fori_loop(1, _STEPS, step, (first, first))
    return _prefactor(a, x) * total


def _upper_fraction(a: Array, x: Array) -> Array:
    """``Q(a, x)`` by its continued fraction (good for ``x >= a + 1``)."""
    tiny = _tiny(x)
    b = x + 1 - a
    c = pnp.full_like(x, 1 / tiny)
    d = 1 / b
    h = d

    def step(i: Any, carry: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        b, c, d, h = carry
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = pnp.where(pnp.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = pnp.where(pnp.abs(c) < tiny, tiny, c)
        d = 1 / d
        return b, c, d, h * d * c

    *_, h = lax.fori_loop(1, _STEPS, step, (b, c, d, h))
    return _prefactor(a, x) * h


def _gamma_parts(name: str, a: Array, x: Array) -> tuple[Array, Array, Array, Array, Array]:
    """``(x, valid, series, P by its series, Q by its fraction)``."""
    a, x = promote_args_inexact(name, a, x)
    valid = (a > 0) & (x >= 0)
    series = valid & (x < a + 1)
    safe_a = pnp.where(valid, a, 1)
    # Each branch sees inputs where it converges; the other's are replaced by harmless ones.
    xs = pnp.where(series & (x > 0), x, pnp.minimum(safe_a, 0.5))
    xf = pnp.where(valid & ~series & pnp.isfinite(x), x, safe_a + 2)
    return x, valid, series, _lower_series(safe_a, xs), _upper_fraction(safe_a, xf)


def gammainc(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularised lower incomplete gamma function ``P(a, x)``."""
    x_, valid, series, p, q = _gamma_parts("gammainc", a, x)
    out = pnp.where(series, p, 1 - q)
    out = pnp.where(x_ == 0, 0, pnp.where(pnp.isinf(x_), 1, out))
    return pnp.where(valid, out, np.nan)


def gammaincc(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularised upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    x_, valid, series, p, q = _gamma_parts("gammaincc", a, x)
    out = pnp.where(series, 1 - p, q)
    out = pnp.where(x_ == 0, 1, pnp.where(pnp.isinf(x_), 0, out))
    return pnp.where(valid, out, np.nan)


def _beta_fraction(a: Array, b: Array, x: Array) -> Array:
    """``I_x(a, b)`` by its continued fraction (good for ``x < (a + 1) / (a + b + 2)``)."""
    tiny = _tiny(x)
    qab, qap, qam = a + b, a + 1, a - 1
    c = pnp.ones_like(x)
    d = 1 - qab * x / qap
    d = 1 / pnp.where(pnp.abs(d) < tiny, tiny, d)
    h = d

    def half(aa: Array, c: Array, d: Array, h: Array) -> tuple[Array, Array, Array]:
        d = 1 + aa * d
        d = 1 / pnp.where(pnp.abs(d) < tiny, tiny, d)
        c = 1 + aa / c
        c = pnp.where(pnp.abs(c) < tiny, tiny, c)
        return c, d, h * d * c

    def step(m: Any, carry: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        c, d, h = carry
        m2 = 2 * m
        c, d, h = half(m * (b - m) * x / ((qam + m2) * (a + m2)), c, d, h)
        return half(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), c, d, h)

    _, _, h = lax.fori_loop(1, _STEPS, step, (c, d, h))
    log_front = a * pnp.log(x) + b * pnp.log1p(-x) - (gammaln(a) + gammaln(b) - gammaln(a + b))
    return pnp.exp(log_front) * h / a


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """The regularised incomplete beta function ``I_x(a, b)``."""
    a_, b_, x_ = promote_args_inexact("betainc", a, b, x)
    valid = (a_ > 0) & (b_ > 0) & (x_ >= 0) & (x_ <= 1)
    inner = valid & (x_ > 0) & (x_ < 1)
    sa, sb = pnp.where(valid, a_, 1), pnp.where(valid, b_, 1)
    direct = x_ < (sa + 1) / (sa + sb + 2)
    xd = pnp.where(inner & direct, x_, 0.5 * (sa + 1) / (sa + sb + 2))
    xr = pnp.where(inner & ~direct, 1 - x_, 0.5 * (sb + 1) / (sa + sb + 2))
    out = pnp.where(direct, _beta_fraction(sa, sb, xd), 1 - _beta_fraction(sb, sa, xr))
    out = pnp.where(x_ == 0, 0, pnp.where(x_ == 1, 1, out))
    return pnp.where(valid, out, np.nan)


__all__ = ["betainc", "gammainc", "gammaincc"]
