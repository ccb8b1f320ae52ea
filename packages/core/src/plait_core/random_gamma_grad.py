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
from plait_core.lax import _lenient
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
        r_new = _lenient.add(r, one)
        d_term_new = _lenient.sub(_lenient.mul(d_term, _lenient.div(x, r_new)), _lenient.div(_lenient.mul(term, x), _lenient.mul(r_new, r_new)))
        d_total_new = _lenient.add(d_total, d_term_new)
        term_new = _lenient.mul(term, _lenient.div(x, r_new))
        total_new = _lenient.add(total, term_new)
        going = _lenient.bitwise_and(live, _lenient.gt(lax.abs(_lenient.div(d_term_new, d_total_new)), _full(a, eps)))
        return (
            going,
            _lenient.select(live, r_new, r),
            _lenient.select(live, term_new, term),
            _lenient.select(live, total_new, total),
            _lenient.select(live, d_term_new, d_term),
            _lenient.select(live, d_total_new, d_total),
        )

    init = (active, a, one, one, _full(a, 0.0), _full(a, 0.0))
    _, _, _, total, _, d_total = while_loop(lambda s: _any(s[0]), body, init)
    dlog = _lenient.sub(lax.log(x), lax.digamma(_lenient.add(a, one)))
    return _lenient.div(_lenient.mul(lax.neg(_lenient.add(d_total, _lenient.mul(total, dlog))), x), a)


def _continued_fraction(x: Array, a: Array, active: Array, eps: float) -> Array:
    """``x (F (log x - digamma(a)) + dF/da)``, ``F`` the continued fraction of ``Q e**x x**-a Gamma(a)``."""
    one, zero = _full(a, 1.0), _full(a, 0.0)
    big = _full(a, 1.0 / eps)
    small = _full(a, eps)

    def body(state: tuple[Array, ...]) -> tuple[Array, ...]:
        (live, ans, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans) = state
        c = _lenient.add(c, np.asarray(1, a.dtype))
        cb = lax.broadcast_in_dim(c, tuple(a.shape), ())
        y_new = _lenient.add(y, one)
        z_new = _lenient.add(z, _full(a, 2.0))
        yc = _lenient.mul(y_new, cb)
        pk = _lenient.sub(_lenient.mul(pkm1, z_new), _lenient.mul(pkm2, yc))
        qk = _lenient.sub(_lenient.mul(qkm1, z_new), _lenient.mul(qkm2, yc))
        nonzero = _lenient.ne(qk, zero)
        ans_new = _lenient.select(nonzero, _lenient.div(pk, qk), ans)
        dpk = _lenient.add(_lenient.sub(_lenient.sub(_lenient.mul(dpkm1, z_new), pkm1), _lenient.mul(dpkm2, yc)), _lenient.mul(pkm2, cb))
        dqk = _lenient.add(_lenient.sub(_lenient.sub(_lenient.mul(dqkm1, z_new), qkm1), _lenient.mul(dqkm2, yc)), _lenient.mul(qkm2, cb))
        dans_new = _lenient.select(nonzero, _lenient.div(_lenient.sub(dpk, _lenient.mul(ans_new, dqk)), qk), dans)
        change = _lenient.select(nonzero, lax.abs(_lenient.sub(dans_new, dans)), one)
        rescale = _lenient.gt(lax.abs(pk), big)

        def scaled(v: Array) -> Array:
            return _lenient.select(rescale, _lenient.mul(v, small), v)

        new = (
            ans_new, y_new, z_new, scaled(pk), scaled(qk), scaled(pkm1), scaled(qkm1),
            scaled(dpkm1), scaled(dqkm1), scaled(dpk), scaled(dqk), dans_new,
        )
        old = (ans, y, z, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans)
        kept = tuple(_lenient.select(live, n, o) for n, o in zip(new, old))
        going = _lenient.bitwise_and(live, _lenient.gt(change, small))
        return (going, kept[0], kept[1], kept[2], c, *kept[3:])

    y = _lenient.sub(one, a)
    z = _lenient.add(_lenient.add(x, y), one)
    pkm1 = _lenient.add(x, one)
    qkm1 = _lenient.mul(z, x)
    ans = _lenient.div(pkm1, qkm1)
    dqkm1 = lax.neg(x)
    dans = _lenient.div(lax.neg(_lenient.mul(ans, dqkm1)), qkm1)
    init = (active, ans, y, z, np.asarray(0, a.dtype), pkm1, qkm1, one, x, zero, zero, zero, dqkm1, dans)
    limit = np.asarray(2000, a.dtype)
    out = while_loop(lambda s: _lenient.bitwise_and(_lenient.lt(s[4], limit), _any(s[0])), body, init)
    ans, dans = out[1], out[13]
    dlog = _lenient.sub(lax.log(x), lax.digamma(a))
    return _lenient.mul(_lenient.add(dans, _lenient.mul(ans, dlog)), x)


def sample_derivative(a: Array, x: Array) -> Array:
    """``dx/da`` for Gamma(a, 1) samples ``x`` (same shape and float dtype as
    ``a``); 0 where ``x == 0``, NaN where ``a <= 0``, ``x < 0`` or either is NaN."""
    eps = float(dtypes.finfo(a.dtype).eps)
    nan = _lenient.bitwise_or(_lenient.ne(a, a), _lenient.ne(x, x))
    x_zero = _lenient.eq(x, _full(x, 0.0))
    domain = _lenient.bitwise_or(_lenient.lt(x, _full(x, 0.0)), _lenient.le(a, _full(a, 0.0)))
    use_fraction = _lenient.bitwise_and(_lenient.gt(x, _full(x, 1.0)), _lenient.gt(x, a))
    log_ax = _lenient.sub(_lenient.sub(_lenient.mul(a, lax.log(x)), x), lax.lgamma(a))
    underflow = _lenient.lt(log_ax, _full(a, -np.log(float(dtypes.finfo(a.dtype).max))))
    enabled = lax.bitwise_not(_lenient.bitwise_or(_lenient.bitwise_or(x_zero, domain), _lenient.bitwise_or(underflow, nan)))
    out = _lenient.select(
        use_fraction,
        _continued_fraction(x, a, _lenient.bitwise_and(enabled, use_fraction), eps),
        _series(x, a, _lenient.bitwise_and(enabled, lax.bitwise_not(use_fraction)), eps),
    )
    out = _lenient.select(x_zero, _full(out, 0.0), out)
    return _lenient.select(_lenient.bitwise_or(domain, nan), _full(out, np.nan), out)
