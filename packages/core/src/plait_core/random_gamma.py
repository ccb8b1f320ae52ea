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
    boost = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, const(1.0 / 3.0, dt))
    c = lax.div(const(1.0 / 3.0, dt), lax.sqrt(d))

    def rejected(state: tuple[Array, Array, Array, Array]) -> Array:
        _, x2, v, u = state
        squeeze = lax.ge(u, lax.sub(one, lax.mul(const(0.0331, dt), lax.mul(x2, x2))))
        bound = lax.add(lax.mul(x2, const(0.5, dt)), lax.mul(d, lax.add(lax.sub(one, v), lax.log(v))))
        return lax.bitwise_and(squeeze, lax.ge(lax.log(u), bound))

    def positive_v(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        k, x, v, todo = state
        k_next, sub = split_keys(k)
        x_new = normal_floats(sub, (), dt)
        v_new = lax.add(one, lax.mul(x_new, c))
        live = lax.bitwise_and(todo, lax.le(v, zero))
        key_live = lax.broadcast_in_dim(live, tuple(k.shape), (0,))
        return (lax.select(key_live, k_next, k), lax.select(live, x_new, x), lax.select(live, v_new, v), todo)

    def propose(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        k, x2, v, u = state
        todo = rejected(state)
        k_next, x_key, u_key = split_keys(k, 3)
        init = (x_key, zero, _full(alpha, -1), todo)
        _, x, v_new, _ = while_loop(
            lambda s: _any(lax.bitwise_and(s[3], lax.le(s[2], zero))), positive_v, init
        )
        x2_new = lax.mul(x, x)
        v3 = lax.mul(lax.mul(v_new, v_new), v_new)
        u_new = uniform_floats(u_key, (), dt, 0.0, 1.0)
        key_todo = lax.broadcast_in_dim(todo, tuple(k.shape), (0,))
        return (
            lax.select(key_todo, k_next, k),
            lax.select(todo, x2_new, x2),
            lax.select(todo, v3, v),
            lax.select(todo, u_new, u),
        )

    key, sub = split_keys(keys)
    init = (key, zero, one, _full(alpha, 2))
    v = while_loop(lambda s: _any(rejected(s)), propose, init)[2]
    if log_space:
        log_u = lax.neg(exponential_floats(sub, (), dt))
        skip = lax.bitwise_or(boost, lax.eq(log_u, zero))
        log_boost = lax.select(skip, zero, lax.mul(log_u, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    u = lax.sub(one, uniform_floats(sub, (), dt, 0.0, 1.0))
    scale = lax.select(boost, one, lax.pow(u, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), scale)


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
        x = lax.select(lax.eq(x, _full(x, 0)), _full(x, float(dtypes.finfo(x.dtype).tiny)), x)
        grad = lax.div(sample_derivative(a, x), x)
    else:
        grad = sample_derivative(a, out)
    return out, lax.mul(a_dot, grad)


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
        k = lax.select(lax.gt(log_prod, neg_lam), lax.add(k, const(1, dt)), k)
        u = uniform_floats(sub, shape, dtypes.float32, 0.0, 1.0)
        return lax.add(i, np.int32(1)), k, rng, lax.add(log_prod, lax.log(u))

    def cond(state: tuple[Array, Array, Array, Array]) -> Array:
        i, _, _, log_prod = state
        return lax.bitwise_and(_any(lax.gt(log_prod, neg_lam)), lax.lt(i, np.int32(np.iinfo(np.int32).max)))

    init = (np.int32(0), _full(lam, 0, dt), data, _full(lam, 0.0))
    k = while_loop(cond, body, init)[1]
    return lax.sub(k, const(1, dt))


def _poisson_rejection(data: Array, lam: Array, dt: Any) -> Array:
    """Hörmann's transformed rejection with squeeze (PTRS), "The transformed
    rejection method for generating Poisson random variables" (1993)."""
    shape = tuple(int(s) for s in lam.shape)
    f = lam.dtype

    def k_(v: float) -> Array:
        return const(v, f)

    log_lam = lax.log(lam)
    b = lax.add(k_(0.931), lax.mul(k_(2.53), lax.sqrt(lam)))
    a = lax.add(k_(-0.059), lax.mul(k_(0.02483), b))
    inv_alpha = lax.add(k_(1.1239), lax.div(k_(1.1328), lax.sub(b, k_(3.4))))
    v_r = lax.sub(k_(0.9277), lax.div(k_(3.6224), lax.sub(b, k_(2))))

    def body(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        i, k_out, accepted, rng = state
        rng, sub0, sub1 = split_keys(rng, 3)
        u = lax.sub(uniform_floats(sub0, shape, f, 0.0, 1.0), k_(0.5))
        v = uniform_floats(sub1, shape, f, 0.0, 1.0)
        us = lax.sub(k_(0.5), lax.abs(u))
        k = lax.floor(lax.add(lax.add(lax.mul(lax.add(lax.div(lax.mul(k_(2), a), us), b), u), lam), k_(0.43)))
        s = lax.log(lax.div(lax.mul(v, inv_alpha), lax.add(lax.div(a, lax.mul(us, us)), b)))
        t = lax.sub(lax.add(lax.neg(lam), lax.mul(k, log_lam)), lax.lgamma(lax.add(k, k_(1))))
        accept1 = lax.bitwise_and(lax.ge(us, k_(0.07)), lax.le(v, v_r))
        reject = lax.bitwise_or(lax.lt(k, k_(0)), lax.bitwise_and(lax.lt(us, k_(0.013)), lax.gt(v, us)))
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(s, t)))
        return lax.add(i, np.int32(1)), lax.select(accept, k, k_out), lax.bitwise_or(accepted, accept), rng

    def cond(state: tuple[Array, Array, Array, Array]) -> Array:
        i, _, accepted, _ = state
        return lax.bitwise_and(_any(lax.bitwise_not(accepted)), lax.lt(i, np.int32(np.iinfo(np.int32).max)))

    init = (np.int32(0), _full(lam, -1), _full(lam, False, dtypes.bool_), data)
    return lax.convert_element_type(while_loop(cond, body, init)[1], dt)


def poisson_draw(data: Array, lam: Array, dt: Any) -> Array:
    """Poisson counts (dtype ``dt``) for the float32 means ``lam`` from one key:
    Knuth's method where ``lam < 10`` (or NaN), PTRS elsewhere, both drawn for
    the whole array; negative and NaN means give -1."""
    use_knuth = lax.bitwise_or(lax.ne(lam, lam), lax.lt(lam, const(10, lam.dtype)))
    lam_knuth = lax.select(use_knuth, lam, _full(lam, 0.0))
    lam_rejection = lax.select(use_knuth, _full(lam, 100000.0), lam)
    result = lax.select(use_knuth, _poisson_knuth(data, lam_knuth, dt), _poisson_rejection(data, lam_rejection, dt))
    return lax.select(lax.eq(lam, _full(lam, 0)), _full(result, 0), result)


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
    small = lax.le(k, const(9, f))
    k = lax.clamp(const(0, f), k, const(9, f))
    kp1sq = lax.mul(lax.add(k, const(1, f)), lax.add(k, const(1, f)))
    inner = lax.sub(const(1.0 / 360, f), lax.div(lax.div(const(1.0, f), const(1260, f)), kp1sq))
    approx = lax.div(lax.sub(const(1.0 / 12, f), lax.div(inner, kp1sq)), lax.add(k, const(1, f)))
    table = np.asarray(_STIRLING_TAIL, f)
    idx = lax.convert_element_type(lax.floor(k), dtypes.int32)
    looked_up = pnp.asarray(table)[idx]
    return lax.select(small, looked_up, approx)


def _binomial_inversion(data: Array, count: Array, prob: Array, dt: Any) -> Array:
    """Sum geometric waiting times until they pass ``count``."""
    shape = tuple(int(s) for s in prob.shape)
    f = prob.dtype
    log1mp = lax.log1p(lax.neg(prob))

    def body(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        i, num, total, rng = state
        sub, rng = split_keys(rng)
        num = lax.select(lax.le(total, count), lax.add(num, const(1, f)), num)
        u = uniform_floats(sub, shape, f, 0.0, 1.0)
        geom = lax.ceil(lax.div(lax.log(u), log1mp))
        return lax.add(i, np.int32(1)), num, lax.add(total, geom), rng

    def cond(state: tuple[Array, Array, Array, Array]) -> Array:
        return _any(lax.le(state[2], count))

    init = (np.int32(0), _full(prob, 0), _full(prob, 0), data)
    k = while_loop(cond, body, init)[1]
    return lax.convert_element_type(lax.sub(k, const(1, f)), dt)


def _btrs(data: Array, count: Array, prob: Array, dt: Any) -> Array:
    """Hörmann's BTRS, "The generation of binomial random variates" (1993)."""
    shape = tuple(int(s) for s in prob.shape)
    f = prob.dtype

    def k_(v: float) -> Array:
        return const(v, f)

    stddev = lax.sqrt(lax.mul(lax.mul(count, prob), lax.sub(k_(1), prob)))
    b = lax.add(k_(1.15), lax.mul(k_(2.53), stddev))
    a = lax.add(lax.add(k_(-0.0873), lax.mul(k_(0.0248), b)), lax.mul(k_(0.01), prob))
    c = lax.add(lax.mul(count, prob), k_(0.5))
    v_r = lax.sub(k_(0.92), lax.div(k_(4.2), b))
    r = lax.div(prob, lax.sub(k_(1), prob))
    alpha = lax.mul(lax.add(k_(2.83), lax.div(k_(5.1), b)), stddev)
    m = lax.floor(lax.mul(lax.add(count, k_(1)), prob))

    def body(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        i, k_out, accepted, rng = state
        rng, sub0, sub1 = split_keys(rng, 3)
        u = uniform_floats(sub0, shape, f, 0.0, 1.0)
        v = uniform_floats(sub1, shape, f, 0.0, 1.0)
        u = lax.sub(u, k_(0.5))
        us = lax.sub(k_(0.5), lax.abs(u))
        accept1 = lax.bitwise_and(lax.ge(us, k_(0.07)), lax.le(v, v_r))
        k = lax.floor(lax.add(lax.mul(lax.add(lax.div(lax.mul(k_(2), a), us), b), u), c))
        reject = lax.bitwise_or(lax.lt(k, k_(0)), lax.gt(k, count))
        v = lax.log(lax.div(lax.mul(v, alpha), lax.add(lax.div(a, lax.mul(us, us)), b)))
        n1 = lax.add(count, k_(1))
        t1 = lax.mul(lax.add(m, k_(0.5)), lax.log(lax.div(lax.add(m, k_(1)), lax.mul(r, lax.add(lax.sub(count, m), k_(1))))))
        t2 = lax.mul(n1, lax.log(lax.div(lax.add(lax.sub(count, m), k_(1)), lax.add(lax.sub(count, k), k_(1)))))
        t3 = lax.mul(lax.add(k, k_(0.5)), lax.log(lax.div(lax.mul(r, lax.add(lax.sub(count, k), k_(1))), lax.add(k, k_(1)))))
        ub = lax.add(lax.add(t1, t2), t3)
        ub = lax.add(ub, _stirling_tail(m))
        ub = lax.add(ub, _stirling_tail(lax.sub(count, m)))
        ub = lax.sub(ub, _stirling_tail(k))
        ub = lax.sub(ub, _stirling_tail(lax.sub(count, k)))
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(v, ub)))
        return lax.add(i, np.int32(1)), lax.select(accept, k, k_out), lax.bitwise_or(accepted, accept), rng

    def cond(state: tuple[Array, Array, Array, Array]) -> Array:
        return _any(lax.bitwise_not(state[2]))

    init = (np.int32(0), _full(prob, -1), _full(prob, False, dtypes.bool_), data)
    return lax.convert_element_type(while_loop(cond, body, init)[1], dt)


def binomial_draw(data: Array, count: Array, prob: Array, dt: Any) -> Array:
    """Binomial draws (floats of dtype ``dt``) for float ``count`` and ``prob``
    of one shape, from one key: drawn for ``q = min(p, 1 - p)`` and reflected;
    NaN for a negative or NaN count or probability, inf for an infinite count."""
    f = prob.dtype
    p_lt_half = lax.lt(prob, const(0.5, f))
    q = lax.select(p_lt_half, prob, lax.sub(const(1.0, f), prob))
    count_bad = lax.bitwise_or(lax.ne(count, count), lax.lt(count, const(0.0, f)))
    count_inf = lax.eq(lax.abs(count), const(np.inf, f))
    q_nan = lax.ne(q, q)
    q_neg = lax.lt(q, const(0.0, f))
    q = lax.select(lax.bitwise_or(q_nan, q_neg), _full(q, 0.01), q)
    use_inversion = lax.bitwise_or(count_bad, lax.le(lax.mul(count, q), const(10.0, f)))
    count = lax.floor(count)
    count_inv = lax.select(use_inversion, count, _full(count, 0.0))
    count_btrs = lax.select(use_inversion, _full(count, 10000.0), count)
    q_btrs = lax.select(use_inversion, _full(q, 0.5), q)
    samples = lax.select(
        use_inversion, _binomial_inversion(data, count_inv, q, dt), _btrs(data, count_btrs, q_btrs, dt)
    )
    invalid = lax.bitwise_or(lax.bitwise_or(q_neg, q_nan), count_bad)
    samples = lax.select(invalid, _full(samples, np.nan), samples)
    samples = lax.select(lax.bitwise_and(count_inf, lax.bitwise_not(invalid)), _full(samples, np.inf), samples)
    keep = lax.bitwise_or(lax.bitwise_or(p_lt_half, count_bad), lax.bitwise_or(q_nan, count_inf))
    return lax.select(keep, samples, lax.sub(lax.convert_element_type(count, dt), samples))
