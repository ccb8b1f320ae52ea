"""The derivative of a Gamma(a, 1) sample with respect to ``a`` at a fixed
uniform level (implicit reparameterisation, Figurnov, Mohamed and Mnih, 2018):
``dx/da = -(dP/da) / (dP/dx)`` with ``P(a, x)`` the regularised lower
incomplete gamma function and ``dP/dx = x**(a-1) e**-x / Gamma(a)``.

``dP/da`` is the derivative of the two classical expansions of ``P``, carried
along their recurrences: the power series ``P = x**a e**-x / Gamma(a + 1) *
sum_n x**n / ((a+1)...(a+n))`` where ``x <= 1`` or ``x <= a``, and the
continued fraction of ``Q = 1 - P`` (Legendre's, in the three-term recurrence
form of Numerical Recipes / Cephes) elsewhere.  Both loop until the
derivative's terms fall below float epsilon."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.lax.control_flow import while_loop

Array = Any


def _any(x: Array) -> Array:
    return lax.reduce_or(x, tuple(range(len(x.shape))))


def _full(like: Array, value: Any) -> Array:
    return lax.broadcast_in_dim(np.asarray(value, like.dtype), tuple(like.shape), ())


def _series(x: Array, a: Array, active: Array, eps: float) -> Array:
    """``-(x / a) (S (log x - digamma(a + 1)) + dS/da)``, ``S`` the series sum."""
    one = _full(a, 1.0)

    def body(state: tuple[Array, ...]) -> tuple[Array, ...]:
        live, r, term, total, d_term, d_total = state
        r_new = lax.add(r, one)
        d_term_new = lax.sub(lax.mul(d_term, lax.div(x, r_new)), lax.div(lax.mul(term, x), lax.mul(r_new, r_new)))
        d_total_new = lax.add(d_total, d_term_new)
        term_new = lax.mul(term, lax.div(x, r_new))
        total_new = lax.add(total, term_new)
        going = lax.bitwise_and(live, lax.gt(lax.abs(lax.div(d_term_new, d_total_new)), _full(a, eps)))
        return (
            going,
            lax.select(live, r_new, r),
            lax.select(live, term_new, term),
            lax.select(live, total_new, total),
            lax.select(live, d_term_new, d_term),
            lax.select(live, d_total_new, d_total),
        )

    init = (active, a, one, one, _full(a, 0.0), _full(a, 0.0))
    _, _, _, total, _, d_total = while_loop(lambda s: _any(s[0]), body, init)
    dlog = lax.sub(lax.log(x), lax.digamma(lax.add(a, one)))
    return lax.div(lax.mul(lax.neg(lax.add(d_total, lax.mul(total, dlog))), x), a)


def _continued_fraction(x: Array, a: Array, active: Array, eps: float) -> Array:
    """``x (F (log x - digamma(a)) + dF/da)``, ``F`` the continued fraction of ``Q e**x x**-a Gamma(a)``."""
    one, zero = _full(a, 1.0), _full(a, 0.0)
    big = _full(a, 1.0 / eps)
    small = _full(a, eps)

    def body(state: tuple[Array, ...]) -> tuple[Array, ...]:
        (live, ans, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans) = state
        c = lax.add(c, np.asarray(1, a.dtype))
        cb = lax.broadcast_in_dim(c, tuple(a.shape), ())
        y_new = lax.add(y, one)
        z_new = lax.add(z, _full(a, 2.0))
        yc = lax.mul(y_new, cb)
        pk = lax.sub(lax.mul(pkm1, z_new), lax.mul(pkm2, yc))
        qk = lax.sub(lax.mul(qkm1, z_new), lax.mul(qkm2, yc))
        nonzero = lax.ne(qk, zero)
        ans_new = lax.select(nonzero, lax.div(pk, qk), ans)
        dpk = lax.add(lax.sub(lax.sub(lax.mul(dpkm1, z_new), pkm1), lax.mul(dpkm2, yc)), lax.mul(pkm2, cb))
        dqk = lax.add(lax.sub(lax.sub(lax.mul(dqkm1, z_new), qkm1), lax.mul(dqkm2, yc)), lax.mul(qkm2, cb))
        dans_new = lax.select(nonzero, lax.div(lax.sub(dpk, lax.mul(ans_new, dqk)), qk), dans)
        change = lax.select(nonzero, lax.abs(lax.sub(dans_new, dans)), one)
        rescale = lax.gt(lax.abs(pk), big)

        def scaled(v: Array) -> Array:
            return lax.select(rescale, lax.mul(v, small), v)

        new = (
            ans_new, y_new, z_new, scaled(pk), scaled(qk), scaled(pkm1), scaled(qkm1),
            scaled(dpkm1), scaled(dqkm1), scaled(dpk), scaled(dqk), dans_new,
        )
        old = (ans, y, z, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans)
        kept = tuple(lax.select(live, n, o) for n, o in zip(new, old))
        going = lax.bitwise_and(live, lax.gt(change, small))
        return (going, kept[0], kept[1], kept[2], c, *kept[3:])

    y = lax.sub(one, a)
    z = lax.add(lax.add(x, y), one)
    pkm1 = lax.add(x, one)
    qkm1 = lax.mul(z, x)
    ans = lax.div(pkm1, qkm1)
    dqkm1 = lax.neg(x)
    dans = lax.div(lax.neg(lax.mul(ans, dqkm1)), qkm1)
    init = (active, ans, y, z, np.asarray(0, a.dtype), pkm1, qkm1, one, x, zero, zero, zero, dqkm1, dans)
    limit = np.asarray(2000, a.dtype)
    out = while_loop(lambda s: lax.bitwise_and(lax.lt(s[4], limit), _any(s[0])), body, init)
    ans, dans = out[1], out[13]
    dlog = lax.sub(lax.log(x), lax.digamma(a))
    return lax.mul(lax.add(dans, lax.mul(ans, dlog)), x)


def sample_derivative(a: Array, x: Array) -> Array:
    """``dx/da`` for Gamma(a, 1) samples ``x`` (same shape and float dtype as
    ``a``); 0 where ``x == 0``, NaN where ``a <= 0``, ``x < 0`` or either is NaN."""
    eps = float(dtypes.finfo(a.dtype).eps)
    nan = lax.bitwise_or(lax.ne(a, a), lax.ne(x, x))
    x_zero = lax.eq(x, _full(x, 0.0))
    domain = lax.bitwise_or(lax.lt(x, _full(x, 0.0)), lax.le(a, _full(a, 0.0)))
    use_fraction = lax.bitwise_and(lax.gt(x, _full(x, 1.0)), lax.gt(x, a))
    log_ax = lax.sub(lax.sub(lax.mul(a, lax.log(x)), x), lax.lgamma(a))
    underflow = lax.lt(log_ax, _full(a, -np.log(float(dtypes.finfo(a.dtype).max))))
    enabled = lax.bitwise_not(lax.bitwise_or(lax.bitwise_or(x_zero, domain), lax.bitwise_or(underflow, nan)))
    out = lax.select(
        use_fraction,
        _continued_fraction(x, a, lax.bitwise_and(enabled, use_fraction), eps),
        _series(x, a, lax.bitwise_and(enabled, lax.bitwise_not(use_fraction)), eps),
    )
    out = lax.select(x_zero, _full(out, 0.0), out)
    return lax.select(lax.bitwise_or(domain, nan), _full(out, np.nan), out)
