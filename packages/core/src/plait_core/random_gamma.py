"""Rejection samplers, as JAX draws them: Gamma (Marsaglia and Tsang, one key
per entry), Poisson (Knuth below 10, Hörmann's PTRS above) and binomial
(inversion, Hörmann's BTRS).

Each runs ``while_loop`` over the whole array until every entry is done; an
entry that is done keeps its value, so each entry sees exactly the draws it
would see alone (as under JAX's ``vmap`` of a per-entry loop)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core import numpy as pnp
from plait_core.custom_derivatives import custom_jvp
from plait_core.lax import _lenient
from plait_core.lax.control_flow import while_loop
from plait_core.prng import split_data
from plait_core.random_floats import const, exponential_floats, normal_floats, split_keys, uniform_floats
from plait_core.random_gamma_grad import sample_derivative

Array = Any


def _any(x: Array) -> Array:
    return lax.reduce_or(x, tuple(range(len(x.shape))))


def _full(like: Array, value: Any, dtype: Any = None) -> Array:
    return lax.broadcast_in_dim(const(value, dtype or like.dtype), tuple(like.shape), ())


# ---------------------------------------------------------------------------
# Gamma


def _gamma_entries(keys: Array, alpha: Array, log_space: bool) -> Array:
    """One Gamma(alpha, 1) draw per entry of the vector ``alpha`` with the
    matching key of ``keys`` (``uint32[n, 2]``); its log when ``log_space``.

    For ``alpha < 1`` it draws Gamma(alpha + 1) and multiplies by
    ``u ** (1 / alpha)`` (in log space when asked, so tiny ``alpha`` does not
    underflow)."""
    dt = alpha.dtype
    zero, one = _full(alpha, 0), _full(alpha, 1)
    boost = _lenient.ge(alpha, one)
    alpha_orig = alpha
    alpha = _lenient.select(boost, alpha, _lenient.add(alpha, one))
    d = _lenient.sub(alpha, const(1.0 / 3.0, dt))
    c = _lenient.div(const(1.0 / 3.0, dt), lax.sqrt(d))

    def rejected(state: tuple[Array, Array, Array, Array]) -> Array:
        _, x2, v, u = state
        squeeze = _lenient.ge(u, _lenient.sub(one, _lenient.mul(const(0.0331, dt), _lenient.mul(x2, x2))))
        bound = _lenient.add(_lenient.mul(x2, const(0.5, dt)), _lenient.mul(d, _lenient.add(_lenient.sub(one, v), lax.log(v))))
        return _lenient.bitwise_and(squeeze, _lenient.ge(lax.log(u), bound))

    def positive_v(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        k, x, v, todo = state
        k_next, sub = split_keys(k)
        x_new = normal_floats(sub, (), dt)
        v_new = _lenient.add(one, _lenient.mul(x_new, c))
        live = _lenient.bitwise_and(todo, _lenient.le(v, zero))
        key_live = lax.broadcast_in_dim(live, tuple(k.shape), (0,))
        return (_lenient.select(key_live, k_next, k), _lenient.select(live, x_new, x), _lenient.select(live, v_new, v), todo)

    def propose(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        k, x2, v, u = state
        todo = rejected(state)
        k_next, x_key, u_key = split_keys(k, 3)
        init = (x_key, zero, _full(alpha, -1), todo)
        _, x, v_new, _ = while_loop(
            lambda s: _any(_lenient.bitwise_and(s[3], _lenient.le(s[2], zero))), positive_v, init
        )
        x2_new = _lenient.mul(x, x)
        v3 = _lenient.mul(_lenient.mul(v_new, v_new), v_new)
        u_new = uniform_floats(u_key, (), dt, 0.0, 1.0)
        key_todo = lax.broadcast_in_dim(todo, tuple(k.shape), (0,))
        return (
            _lenient.select(key_todo, k_next, k),
            _lenient.select(todo, x2_new, x2),
            _lenient.select(todo, v3, v),
            _lenient.select(todo, u_new, u),
        )

    key, sub = split_keys(keys)
    init = (key, zero, one, _full(alpha, 2))
    v = while_loop(lambda s: _any(rejected(s)), propose, init)[2]
    if log_space:
        log_u = lax.neg(exponential_floats(sub, (), dt))
        skip = _lenient.bitwise_or(boost, _lenient.eq(log_u, zero))
        log_boost = _lenient.select(skip, zero, _lenient.mul(log_u, _lenient.div(one, alpha_orig)))
        return _lenient.add(_lenient.add(lax.log(d), lax.log(v)), log_boost)
    u = _lenient.sub(one, uniform_floats(sub, (), dt, 0.0, 1.0))
    scale = _lenient.select(boost, one, _lenient.pow(u, _lenient.div(one, alpha_orig)))
    return _lenient.mul(_lenient.mul(d, v), scale)


def _gamma_impl(data: Array, a: Array, log_space: bool) -> Array:
    shape = tuple(int(s) for s in a.shape)
    n = int(np.prod(shape, dtype=np.int64))
    keys = split_data(data, (n,))
    flat = lax.reshape(a, (n,))
    return lax.reshape(_gamma_entries(keys, flat, log_space), shape)


def _gamma_jvp(data: Array, log_space: bool, primals: tuple[Array], tangents: tuple[Array]) -> Any:
    """The implicit reparameterisation gradient: ``d sample / d a`` at the
    sample's fixed uniform level (for log samples, divided by the sample)."""
    (a,), (a_dot,) = primals, tangents
    out = _gamma_impl(data, a, log_space)
    if log_space:
        x = lax.exp(out)
        x = _lenient.select(_lenient.eq(x, _full(x, 0)), _full(x, float(dtypes.finfo(x.dtype).tiny)), x)
        grad = _lenient.div(sample_derivative(a, x), x)
    else:
        grad = sample_derivative(a, out)
    return out, _lenient.mul(a_dot, grad)


_gamma_draw = custom_jvp(_gamma_impl, nondiff_argnums=(0, 2))
_gamma_draw.defjvp(_gamma_jvp)


def gamma_draw(data: Array, a: Array, log_space: bool) -> Array:
    """Gamma(a, 1) draws (their logs when ``log_space``) of ``a``'s shape and
    dtype from the key data ``uint32[2]``: entry ``i`` (row-major) uses key
    ``i`` of ``split(key, a.size)``."""
    return _gamma_draw(data, a, log_space)


# ---------------------------------------------------------------------------
# Poisson


def _poisson_knuth(data: Array, lam: Array, dt: Any) -> Array:
    """Count unit-rate arrivals before ``lam``: multiply uniforms until their
    product falls below ``exp(-lam)``."""
    shape = tuple(int(s) for s in lam.shape)
    neg_lam = lax.neg(lam)

    def body(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        i, k, rng, log_prod = state
        rng, sub = split_keys(rng)
        k = _lenient.select(_lenient.gt(log_prod, neg_lam), _lenient.add(k, const(1, dt)), k)
        u = uniform_floats(sub, shape, dtypes.float32, 0.0, 1.0)
        return _lenient.add(i, np.int32(1)), k, rng, _lenient.add(log_prod, lax.log(u))

    def cond(state: tuple[Array, Array, Array, Array]) -> Array:
        i, _, _, log_prod = state
        return _lenient.bitwise_and(_any(_lenient.gt(log_prod, neg_lam)), _lenient.lt(i, np.int32(np.iinfo(np.int32).max)))

    init = (np.int32(0), _full(lam, 0, dt), data, _full(lam, 0.0))
    k = while_loop(cond, body, init)[1]
    return _lenient.sub(k, const(1, dt))


def _poisson_rejection(data: Array, lam: Array, dt: Any) -> Array:
    """Hörmann's transformed rejection with squeeze (PTRS), "The transformed
    rejection method for generating Poisson random variables" (1993)."""
    shape = tuple(int(s) for s in lam.shape)
    f = lam.dtype

    def k_(v: float) -> Array:
        return const(v, f)

    log_lam = lax.log(lam)
    b = _lenient.add(k_(0.931), _lenient.mul(k_(2.53), lax.sqrt(lam)))
    a = _lenient.add(k_(-0.059), _lenient.mul(k_(0.02483), b))
    inv_alpha = _lenient.add(k_(1.1239), _lenient.div(k_(1.1328), _lenient.sub(b, k_(3.4))))
    v_r = _lenient.sub(k_(0.9277), _lenient.div(k_(3.6224), _lenient.sub(b, k_(2))))

    def body(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        i, k_out, accepted, rng = state
        rng, sub0, sub1 = split_keys(rng, 3)
        u = _lenient.sub(uniform_floats(sub0, shape, f, 0.0, 1.0), k_(0.5))
        v = uniform_floats(sub1, shape, f, 0.0, 1.0)
        us = _lenient.sub(k_(0.5), lax.abs(u))
        k = lax.floor(_lenient.add(_lenient.add(_lenient.mul(_lenient.add(_lenient.div(_lenient.mul(k_(2), a), us), b), u), lam), k_(0.43)))
        s = lax.log(_lenient.div(_lenient.mul(v, inv_alpha), _lenient.add(_lenient.div(a, _lenient.mul(us, us)), b)))
        t = _lenient.sub(_lenient.add(lax.neg(lam), _lenient.mul(k, log_lam)), lax.lgamma(_lenient.add(k, k_(1))))
        accept1 = _lenient.bitwise_and(_lenient.ge(us, k_(0.07)), _lenient.le(v, v_r))
        reject = _lenient.bitwise_or(_lenient.lt(k, k_(0)), _lenient.bitwise_and(_lenient.lt(us, k_(0.013)), _lenient.gt(v, us)))
        accept = _lenient.bitwise_or(accept1, _lenient.bitwise_and(lax.bitwise_not(reject), _lenient.le(s, t)))
        return _lenient.add(i, np.int32(1)), _lenient.select(accept, k, k_out), _lenient.bitwise_or(accepted, accept), rng

    def cond(state: tuple[Array, Array, Array, Array]) -> Array:
        i, _, accepted, _ = state
        return _lenient.bitwise_and(_any(lax.bitwise_not(accepted)), _lenient.lt(i, np.int32(np.iinfo(np.int32).max)))

    init = (np.int32(0), _full(lam, -1), _full(lam, False, dtypes.bool_), data)
    return lax.convert_element_type(while_loop(cond, body, init)[1], dt)


def poisson_draw(data: Array, lam: Array, dt: Any) -> Array:
    """Poisson counts (dtype ``dt``) for the float32 means ``lam`` from one key:
    Knuth's method where ``lam < 10`` (or NaN), PTRS elsewhere, both drawn for
    the whole array; negative and NaN means give -1."""
    use_knuth = _lenient.bitwise_or(_lenient.ne(lam, lam), _lenient.lt(lam, const(10, lam.dtype)))
    lam_knuth = _lenient.select(use_knuth, lam, _full(lam, 0.0))
    lam_rejection = _lenient.select(use_knuth, _full(lam, 100000.0), lam)
    result = _lenient.select(use_knuth, _poisson_knuth(data, lam_knuth, dt), _poisson_rejection(data, lam_rejection, dt))
    return _lenient.select(_lenient.eq(lam, _full(lam, 0)), _full(result, 0), result)


# ---------------------------------------------------------------------------
# Binomial

_STIRLING_TAIL = (
    0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
    0.0138761288230707, 0.0118967099458917, 0.010411265261972, 0.00925546218271273, 0.00833056343336287,
)


def _stirling_tail(k: Array) -> Array:
    """``log k! - (Stirling's approximation)``: a table for ``k <= 9``, the
    asymptotic series above."""
    f = k.dtype
    small = _lenient.le(k, const(9, f))
    k = _lenient.clamp(const(0, f), k, const(9, f))
    kp1sq = _lenient.mul(_lenient.add(k, const(1, f)), _lenient.add(k, const(1, f)))
    inner = _lenient.sub(const(1.0 / 360, f), _lenient.div(_lenient.div(const(1.0, f), const(1260, f)), kp1sq))
    approx = _lenient.div(_lenient.sub(const(1.0 / 12, f), _lenient.div(inner, kp1sq)), _lenient.add(k, const(1, f)))
    table = np.asarray(_STIRLING_TAIL, f)
    idx = lax.convert_element_type(lax.floor(k), dtypes.int32)
    looked_up = pnp.asarray(table)[idx]
    return _lenient.select(small, looked_up, approx)


def _binomial_inversion(data: Array, count: Array, prob: Array, dt: Any) -> Array:
    """Sum geometric waiting times until they pass ``count``."""
    shape = tuple(int(s) for s in prob.shape)
    f = prob.dtype
    log1mp = lax.log1p(lax.neg(prob))

    def body(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        i, num, total, rng = state
        sub, rng = split_keys(rng)
        num = _lenient.select(_lenient.le(total, count), _lenient.add(num, const(1, f)), num)
        u = uniform_floats(sub, shape, f, 0.0, 1.0)
        geom = lax.ceil(_lenient.div(lax.log(u), log1mp))
        return _lenient.add(i, np.int32(1)), num, _lenient.add(total, geom), rng

    def cond(state: tuple[Array, Array, Array, Array]) -> Array:
        return _any(_lenient.le(state[2], count))

    init = (np.int32(0), _full(prob, 0), _full(prob, 0), data)
    k = while_loop(cond, body, init)[1]
    return lax.convert_element_type(_lenient.sub(k, const(1, f)), dt)


def _btrs(data: Array, count: Array, prob: Array, dt: Any) -> Array:
    """Hörmann's BTRS, "The generation of binomial random variates" (1993)."""
    shape = tuple(int(s) for s in prob.shape)
    f = prob.dtype

    def k_(v: float) -> Array:
        return const(v, f)

    stddev = lax.sqrt(_lenient.mul(_lenient.mul(count, prob), _lenient.sub(k_(1), prob)))
    b = _lenient.add(k_(1.15), _lenient.mul(k_(2.53), stddev))
    a = _lenient.add(_lenient.add(k_(-0.0873), _lenient.mul(k_(0.0248), b)), _lenient.mul(k_(0.01), prob))
    c = _lenient.add(_lenient.mul(count, prob), k_(0.5))
    v_r = _lenient.sub(k_(0.92), _lenient.div(k_(4.2), b))
    r = _lenient.div(prob, _lenient.sub(k_(1), prob))
    alpha = _lenient.mul(_lenient.add(k_(2.83), _lenient.div(k_(5.1), b)), stddev)
    m = lax.floor(_lenient.mul(_lenient.add(count, k_(1)), prob))

    def body(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        i, k_out, accepted, rng = state
        rng, sub0, sub1 = split_keys(rng, 3)
        u = uniform_floats(sub0, shape, f, 0.0, 1.0)
        v = uniform_floats(sub1, shape, f, 0.0, 1.0)
        u = _lenient.sub(u, k_(0.5))
        us = _lenient.sub(k_(0.5), lax.abs(u))
        accept1 = _lenient.bitwise_and(_lenient.ge(us, k_(0.07)), _lenient.le(v, v_r))
        k = lax.floor(_lenient.add(_lenient.mul(_lenient.add(_lenient.div(_lenient.mul(k_(2), a), us), b), u), c))
        reject = _lenient.bitwise_or(_lenient.lt(k, k_(0)), _lenient.gt(k, count))
        v = lax.log(_lenient.div(_lenient.mul(v, alpha), _lenient.add(_lenient.div(a, _lenient.mul(us, us)), b)))
        n1 = _lenient.add(count, k_(1))
        t1 = _lenient.mul(_lenient.add(m, k_(0.5)), lax.log(_lenient.div(_lenient.add(m, k_(1)), _lenient.mul(r, _lenient.add(_lenient.sub(count, m), k_(1))))))
        t2 = _lenient.mul(n1, lax.log(_lenient.div(_lenient.add(_lenient.sub(count, m), k_(1)), _lenient.add(_lenient.sub(count, k), k_(1)))))
        t3 = _lenient.mul(_lenient.add(k, k_(0.5)), lax.log(_lenient.div(_lenient.mul(r, _lenient.add(_lenient.sub(count, k), k_(1))), _lenient.add(k, k_(1)))))
        ub = _lenient.add(_lenient.add(t1, t2), t3)
        ub = _lenient.add(ub, _stirling_tail(m))
        ub = _lenient.add(ub, _stirling_tail(_lenient.sub(count, m)))
        ub = _lenient.sub(ub, _stirling_tail(k))
        ub = _lenient.sub(ub, _stirling_tail(_lenient.sub(count, k)))
        accept = _lenient.bitwise_or(accept1, _lenient.bitwise_and(lax.bitwise_not(reject), _lenient.le(v, ub)))
        return _lenient.add(i, np.int32(1)), _lenient.select(accept, k, k_out), _lenient.bitwise_or(accepted, accept), rng

    def cond(state: tuple[Array, Array, Array, Array]) -> Array:
        return _any(lax.bitwise_not(state[2]))

    init = (np.int32(0), _full(prob, -1), _full(prob, False, dtypes.bool_), data)
    return lax.convert_element_type(while_loop(cond, body, init)[1], dt)


def binomial_draw(data: Array, count: Array, prob: Array, dt: Any) -> Array:
    """Binomial draws (floats of dtype ``dt``) for float ``count`` and ``prob``
    of one shape, from one key: drawn for ``q = min(p, 1 - p)`` and reflected;
    NaN for a negative or NaN count or probability, inf for an infinite count."""
    f = prob.dtype
    p_lt_half = _lenient.lt(prob, const(0.5, f))
    q = _lenient.select(p_lt_half, prob, _lenient.sub(const(1.0, f), prob))
    count_bad = _lenient.bitwise_or(_lenient.ne(count, count), _lenient.lt(count, const(0.0, f)))
    count_inf = _lenient.eq(lax.abs(count), const(np.inf, f))
    q_nan = _lenient.ne(q, q)
    q_neg = _lenient.lt(q, const(0.0, f))
    q = _lenient.select(_lenient.bitwise_or(q_nan, q_neg), _full(q, 0.01), q)
    use_inversion = _lenient.bitwise_or(count_bad, _lenient.le(_lenient.mul(count, q), const(10.0, f)))
    count = lax.floor(count)
    count_inv = _lenient.select(use_inversion, count, _full(count, 0.0))
    count_btrs = _lenient.select(use_inversion, _full(count, 10000.0), count)
    q_btrs = _lenient.select(use_inversion, _full(q, 0.5), q)
    samples = _lenient.select(
        use_inversion, _binomial_inversion(data, count_inv, q, dt), _btrs(data, count_btrs, q_btrs, dt)
    )
    invalid = _lenient.bitwise_or(_lenient.bitwise_or(q_neg, q_nan), count_bad)
    samples = _lenient.select(invalid, _full(samples, np.nan), samples)
    samples = _lenient.select(_lenient.bitwise_and(count_inf, lax.bitwise_not(invalid)), _full(samples, np.inf), samples)
    keep = _lenient.bitwise_or(_lenient.bitwise_or(p_lt_half, count_bad), _lenient.bitwise_or(q_nan, count_inf))
    return _lenient.select(keep, samples, _lenient.sub(lax.convert_element_type(count, dt), samples))
