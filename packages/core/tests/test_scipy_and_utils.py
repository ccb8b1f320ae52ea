"""plait.scipy (special, stats), plait.nn.initializers, plait.flatten_util and
plait.numpy.ndarray: values against SciPy / NumPy, eagerly and staged."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import nn, random
from plait_core import numpy as pnp
from plait_core.flatten_util import ravel_pytree
from plait_core.numpy import array_type as pnp_array_type
from plait_core.scipy import special, stats
from plait_core.trace import numpy_backend

scipy_special = pytest.importorskip("scipy.special")
scipy_stats = pytest.importorskip("scipy.stats")


def _staged(fn: Callable[..., Any], *args: Any) -> Any:
    closed = pc.make_jaxpr(fn)(*args)
    pc.check_jaxpr(closed)
    outs = pc.eval_closed_jaxpr(closed, *args)
    return outs[0] if len(outs) == 1 else tuple(outs)


MODES = {"eager": lambda fn, *a: fn(*a), "staged": _staged}

X = np.linspace(-4.0, 6.0, 23).astype(np.float32)
UNIT = np.linspace(0.01, 0.99, 19).astype(np.float32)
POS = np.linspace(0.1, 7.0, 19).astype(np.float32)

UNARY = [
    (special.erf, scipy_special.erf, X),
    (special.erfc, scipy_special.erfc, X),
    (special.erfinv, scipy_special.erfinv, 2 * UNIT - 1),
    (special.expit, scipy_special.expit, X),
    (special.logit, scipy_special.logit, UNIT),
    (special.gammaln, scipy_special.gammaln, POS),
    (special.digamma, scipy_special.digamma, POS),
    (special.entr, scipy_special.entr, np.array([-1.0, 0.0, 0.5, 2.0], np.float32)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("fn", "ref", "x"), UNARY, ids=[u[0].__name__ for u in UNARY])
def test_unary_special_matches_scipy(mode: str, fn: Any, ref: Any, x: np.ndarray) -> None:
    out = np.asarray(MODES[mode](fn, x))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref(x.astype(np.float64)), rtol=2e-5, atol=1e-6)


def test_erfc_keeps_relative_precision_in_the_right_tail() -> None:
    x = np.array([3.0, 5.0, 8.0], np.float32)
    np.testing.assert_allclose(np.asarray(special.erfc(x)), scipy_special.erfc(x.astype(np.float64)), rtol=1e-6)


def test_special_of_integers_is_float() -> None:
    out = special.gammaln(np.array([1, 2, 5], np.int32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), [math.lgamma(v) for v in (1, 2, 5)], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("mode", MODES)
def test_xlogy_and_xlog1py(mode: str) -> None:
    x = np.array([0.0, 0.0, 1.5, 2.0, 0.0], np.float32)
    y = np.array([0.0, 3.0, 0.5, 4.0, np.inf], np.float32)
    np.testing.assert_allclose(np.asarray(MODES[mode](special.xlogy, x, y)), scipy_special.xlogy(x, y), rtol=1e-6)
    y1 = np.array([-1.0, 3.0, 0.5, 4.0, -1.0], np.float32)
    np.testing.assert_allclose(np.asarray(MODES[mode](special.xlog1py, x, y1)),
                               scipy_special.xlog1py(x, y1), rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_matches_scipy(mode: str, axis: Any, keepdims: bool) -> None:
    a = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32) * 30
    b = np.random.default_rng(1).uniform(-1, 1, size=(3, 4)).astype(np.float32)
    out = MODES[mode](lambda a: special.logsumexp(a, axis=axis, keepdims=keepdims), a)
    np.testing.assert_allclose(np.asarray(out), scipy_special.logsumexp(a, axis=axis, keepdims=keepdims), rtol=1e-5)
    val, sign = MODES[mode](lambda a, b: special.logsumexp(a, axis=axis, b=b, keepdims=keepdims,
                                                            return_sign=True), a, b)
    ref_val, ref_sign = scipy_special.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    np.testing.assert_allclose(np.asarray(val), ref_val, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(sign), ref_sign)


def test_logsumexp_where_and_edge_cases() -> None:
    a = np.array([[1.0, 2.0, 50.0], [-np.inf, -np.inf, -np.inf]], np.float32)
    mask = np.array([True, True, False])
    out = np.asarray(special.logsumexp(a, axis=1, where=mask))
    np.testing.assert_allclose(out, [np.log(np.exp(1.0) + np.exp(2.0)), -np.inf], rtol=1e-6)
    # A negative sum without return_sign is NaN, as in JAX.
    assert np.isnan(np.asarray(special.logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -2.0]))))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_defaults_to_all_axes(fn: str) -> None:
    x = np.random.default_rng(2).normal(size=(2, 3)).astype(np.float32)
    ref = getattr(scipy_special, fn)
    np.testing.assert_allclose(np.asarray(getattr(special, fn)(x)), ref(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(getattr(special, fn)(x, axis=0)), ref(x, axis=0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["pdf", "logpdf", "cdf", "logcdf", "sf"])
def test_norm_matches_scipy(mode: str, name: str) -> None:
    loc, scale = np.float32(0.5), np.array([[1.0], [2.5]], np.float32)
    out = MODES[mode](lambda x, s: getattr(stats.norm, name)(x, loc, s), X, scale)
    ref = getattr(scipy_stats.norm, name)(X.astype(np.float64), loc, scale)
    np.testing.assert_allclose(np.asarray(out), ref, rtol=2e-5, atol=1e-7)


def test_norm_ppf_inverts_cdf() -> None:
    q = UNIT
    out = np.asarray(stats.norm.ppf(q, 1.0, 2.0))
    np.testing.assert_allclose(out, scipy_stats.norm.ppf(q.astype(np.float64), 1.0, 2.0), rtol=1e-4, atol=1e-5)
    assert np.asarray(stats.norm.ppf(np.array([0.0, 1.0, 1.5]))).tolist()[:2] == [-np.inf, np.inf]
    assert np.isnan(np.asarray(stats.norm.ppf(1.5)))


@pytest.mark.parametrize("name", ["pdf", "logpdf"])
def test_uniform_matches_scipy(name: str) -> None:
    x = np.array([-1.0, 1.0, 1.5, 3.0, 3.5], np.float32)
    out = np.asarray(getattr(stats.uniform, name)(x, 1.0, 2.0))
    np.testing.assert_allclose(out, getattr(scipy_stats.uniform, name)(x, 1.0, 2.0), rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_bernoulli_logpmf_matches_scipy(mode: str) -> None:
    k = np.array([0, 1, 2, -1, 0, 1, 1], np.float32)
    p = np.array([0.3, 0.3, 0.3, 0.3, 0.0, 1.0, 0.0], np.float32)
    out = np.asarray(MODES[mode](stats.bernoulli.logpmf, k, p))
    np.testing.assert_allclose(out, scipy_stats.bernoulli.logpmf(k, p), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(stats.bernoulli.pmf(k, p)), scipy_stats.bernoulli.pmf(k, p), rtol=1e-6)


def test_special_rejects_non_arrays() -> None:
    with pytest.raises(TypeError, match="erf"):
        special.erf("a")


# ---------------------------------------------------------------------------
# nn.initializers

INIT = nn.initializers
KEY = random.PRNGKey(0)
BIG = (400, 500)


def test_constant_zeros_ones() -> None:
    np.testing.assert_array_equal(np.asarray(INIT.zeros(KEY, (2, 3))), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(INIT.ones(KEY, (2,), pnp.float16)), np.ones(2, np.float16))
    out = INIT.constant(2.5)(KEY, (3,))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), np.full(3, 2.5, np.float32))


def test_uniform_normal_truncated_moments() -> None:
    u = np.asarray(INIT.uniform(0.5)(KEY, BIG))
    assert u.min() >= 0 and u.max() < 0.5
    np.testing.assert_allclose([u.mean(), u.var()], [0.25, 0.25 / 12], rtol=2e-2)
    n = np.asarray(INIT.normal(3.0)(KEY, BIG))
    np.testing.assert_allclose([n.mean(), n.std()], [0.0, 3.0], atol=3e-2, rtol=1e-2)
    t = np.asarray(INIT.truncated_normal(2.0, lower=-1.0, upper=1.0)(KEY, BIG))
    assert np.abs(t).max() <= 2.0
    ref_std = scipy_stats.truncnorm.std(-1.0, 1.0) * 2.0
    np.testing.assert_allclose(t.std(), ref_std, rtol=1e-2)


def _expected_std(scale: float, n: float) -> float:
    return math.sqrt(scale / n)


@pytest.mark.parametrize(("factory", "scale", "mode", "dist"), [
    (INIT.glorot_uniform, 1.0, "fan_avg", "uniform"),
    (INIT.glorot_normal, 1.0, "fan_avg", "truncated_normal"),
    (INIT.lecun_uniform, 1.0, "fan_in", "uniform"),
    (INIT.lecun_normal, 1.0, "fan_in", "truncated_normal"),
    (INIT.he_uniform, 2.0, "fan_in", "uniform"),
    (INIT.he_normal, 2.0, "fan_in", "truncated_normal"),
])
def test_named_variance_scaling_moments(factory: Any, scale: float, mode: str, dist: str) -> None:
    w = np.asarray(factory()(KEY, BIG))
    fan_in, fan_out = BIG
    n = {"fan_in": fan_in, "fan_avg": (fan_in + fan_out) / 2}[mode]
    std = _expected_std(scale, n)
    np.testing.assert_allclose(w.std(), std, rtol=1e-2)
    assert abs(w.mean()) < 3e-2 * std
    if dist == "uniform":
        assert np.abs(w).max() <= math.sqrt(3) * std * (1 + 1e-6)
    else:
        assert np.abs(w).max() <= 2 * std / 0.87962566103423978 * (1 + 1e-6)


def test_aliases() -> None:
    assert INIT.xavier_uniform is INIT.glorot_uniform and INIT.kaiming_uniform is INIT.he_uniform
    assert INIT.xavier_normal is INIT.glorot_normal and INIT.kaiming_normal is INIT.he_normal


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg", "fan_geo_avg"])
def test_variance_scaling_axes_and_modes(mode: str) -> None:
    # A conv kernel laid out (batch, receptive h, receptive w, in, out), with a batch axis.
    shape = (2, 3, 3, 40, 60)
    w = np.asarray(INIT.variance_scaling(3.0, mode, "normal", in_axis=3, out_axis=-1, batch_axis=0)(KEY, shape))
    fan_in, fan_out = 9 * 40, 9 * 60
    n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
         "fan_geo_avg": math.sqrt(fan_in * fan_out)}[mode]
    np.testing.assert_allclose(w.std(), _expected_std(3.0, n), rtol=2e-2)


def test_initializer_dtype() -> None:
    assert INIT.he_normal(dtype=pnp.float16)(KEY, (4, 4)).dtype == np.float16
    assert INIT.normal()(KEY, (4,), pnp.float16).dtype == np.float16


def test_initializer_errors() -> None:
    with pytest.raises(ValueError, match="variance_scaling: invalid mode 'bad'"):
        INIT.variance_scaling(1.0, "bad", "normal")
    with pytest.raises(ValueError, match="variance_scaling: invalid distribution 'bad'"):
        INIT.variance_scaling(1.0, "fan_in", "bad")
    with pytest.raises(ValueError, match=r"variance_scaling: cannot compute the fans of a 1-dimensional shape"):
        INIT.glorot_normal()(KEY, (3,))
    with pytest.raises(ValueError, match="in_axis 5 is out of range for a 2-dimensional shape"):
        INIT.lecun_normal(in_axis=5)(KEY, (3, 4))
    with pytest.raises(TypeError, match=r"nn\.initializers\.normal: dtype must be a floating or complex type, got int32"):
        INIT.normal()(KEY, (3,), pnp.int32)


# ---------------------------------------------------------------------------
# flatten_util


def test_ravel_pytree_round_trip_and_promotion() -> None:
    tree = {"a": np.arange(6, dtype=np.int32).reshape(2, 3), "b": (np.float16(1.5), np.ones(2, np.float16))}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == np.float16 and flat.shape == (9,)
    np.testing.assert_array_equal(np.asarray(flat), np.concatenate([np.arange(6), [1.5, 1, 1]]).astype(np.float16))
    back = unravel(flat * 2)
    assert back["a"].dtype == np.int32 and back["a"].shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(back["a"]), 2 * np.arange(6).reshape(2, 3))
    assert back["b"][0].dtype == np.float16 and back["b"][0].shape == ()
    np.testing.assert_array_equal(np.asarray(back["b"][1]), np.full(2, 2, np.float16))


def test_ravel_pytree_empty_and_staged() -> None:
    flat, unravel = ravel_pytree([])
    assert flat.shape == (0,) and flat.dtype == np.float32 and unravel(flat) == []
    x = np.arange(4, dtype=np.float32)
    out = _staged(lambda v: ravel_pytree((v, {"w": v * 2}))[0], x)
    np.testing.assert_array_equal(np.asarray(out), np.concatenate([x, 2 * x]))


def test_unravel_errors() -> None:
    _, unravel = ravel_pytree({"a": np.ones(3, np.float32)})
    with pytest.raises(ValueError, match=r"unravel: expected a vector of shape \(3,\), got shape \(4,\)"):
        unravel(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="unravel: expected a vector of dtype float32, got int32"):
        unravel(np.ones(3, np.int32))


# ---------------------------------------------------------------------------
# numpy.ndarray


def test_ndarray_isinstance() -> None:
    seen: list[bool] = []

    def f(x: Any) -> Any:
        seen.append(isinstance(x, pnp.ndarray) and isinstance(x * 2, pnp.ndarray))
        return x

    pc.make_jaxpr(f)(np.ones(3, np.float32))
    assert seen == [True]
    assert issubclass(pc.Tracer, pnp.ndarray)
    assert not isinstance([1.0], pnp.ndarray) and not isinstance(1.0, pnp.ndarray)
    # NumPy arrays are plait's eager arrays only while core's NumPy backend is in use.
    assert isinstance(pnp.ones(3), pnp.ndarray)
    assert isinstance(np.ones(3), pnp.ndarray) == (pc.eager_backend() is numpy_backend)
    previous = pc.set_eager_backend(lambda prim, args, params: numpy_backend(prim, args, params))
    try:
        assert not isinstance(np.ones(3), pnp.ndarray)
    finally:
        pc.set_eager_backend(previous)
    with pytest.raises(TypeError, match=r"plait\.Array cannot be instantiated"):
        pnp.ndarray()


def test_ndarray_is_array_and_holds_key_arrays() -> None:
    assert pnp.ndarray is pnp_array_type.Array and pnp.ndarray.__name__ == "Array"
    key = random.key(0)
    assert isinstance(key, pnp.ndarray) and isinstance(random.split(key), pnp.ndarray)
    assert issubclass(type(key), pnp.ndarray) and not issubclass(int, pnp.ndarray)
    assert isinstance(random.PRNGKey(0), pnp.ndarray)
    seen: list[bool] = []
    pc.make_jaxpr(lambda: seen.append(isinstance(random.key(0), pnp.ndarray)))()
    assert seen == [True]
