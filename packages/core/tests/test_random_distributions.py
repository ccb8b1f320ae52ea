"""plait_core.random distributions: moments, Kolmogorov-Smirnov checks against
CDFs written with math/NumPy, determinism, shapes, errors, staging."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import random

N = 40_000
KS_LIMIT = 1.95 / math.sqrt(N)  # KS critical value at level ~0.001


def _draw(x: Any) -> np.ndarray:
    return np.asarray(x, np.float64)


def _check_moments(x: np.ndarray, mean: float, var: float, mu4: float | None = None) -> None:
    """Sample mean and variance within 5 standard errors (``mu4`` the 4th central moment)."""
    n = x.size
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / n), (x.mean(), mean)
    if mu4 is not None:
        assert abs(x.var() - var) < 5 * math.sqrt((mu4 - var**2) / n) + 1e-12, (x.var(), var)


def _ks(x: np.ndarray, cdf: Callable[[np.ndarray], np.ndarray]) -> float:
    s = np.sort(x.ravel())
    f = cdf(s)
    n = s.size
    return float(max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n)))


_erf = np.vectorize(math.erf)


def _gamma_int_cdf(a: int) -> Callable[[np.ndarray], np.ndarray]:
    def cdf(x: np.ndarray) -> np.ndarray:
        terms = sum(x**k / math.factorial(k) for k in range(a))
        return np.asarray(1 - np.exp(-x) * terms)

    return cdf


CONTINUOUS = [
    (random.laplace, lambda x: np.where(x < 0, 0.5 * np.exp(x), 1 - 0.5 * np.exp(-x)), 0.0, 2.0, 24.0),
    (random.logistic, lambda x: 1 / (1 + np.exp(-x)), 0.0, math.pi**2 / 3, 7 * math.pi**4 / 15),
    (random.cauchy, lambda x: 0.5 + np.arctan(x) / math.pi, None, None, None),
    (
        random.maxwell,
        lambda x: _erf(x / math.sqrt(2)) - math.sqrt(2 / math.pi) * x * np.exp(-(x**2) / 2),
        2 * math.sqrt(2 / math.pi),
        3 - 8 / math.pi,
        None,
    ),
]


@pytest.mark.parametrize("fun,cdf,mean,var,mu4", CONTINUOUS, ids=lambda v: getattr(v, "__name__", ""))
def test_continuous_closed_forms(fun: Any, cdf: Any, mean: Any, var: Any, mu4: Any) -> None:
    x = _draw(fun(random.PRNGKey(1), (N,)))
    assert _ks(x, cdf) < KS_LIMIT
    if mean is not None:
        _check_moments(x, mean, var, mu4)


def test_rademacher_values_and_balance() -> None:
    x = np.asarray(random.rademacher(random.PRNGKey(2), (N,)))
    assert x.dtype == np.int32 and set(np.unique(x).tolist()) == {-1, 1}
    _check_moments(x.astype(np.float64), 0.0, 1.0)
    assert np.asarray(random.rademacher(random.PRNGKey(2), (3,), np.int8)).dtype == np.int8


@pytest.mark.parametrize("a", [0.5, 1, 3, 40.0])
def test_gamma_moments_and_cdf(a: float) -> None:
    x = _draw(random.gamma(random.PRNGKey(3), a, (N,)))
    assert (x >= 0).all()
    _check_moments(x, a, a, 3 * a**2 + 6 * a)
    if a == 0.5:  # Gamma(1/2) = chi-square(1) / 2
        assert _ks(x, lambda v: _erf(np.sqrt(v))) < KS_LIMIT
    elif float(a).is_integer():
        assert _ks(x, _gamma_int_cdf(int(a))) < KS_LIMIT


def test_gamma_small_shape_is_positive_and_has_right_mean() -> None:
    x = _draw(random.gamma(random.PRNGKey(4), 0.1, (N,)))
    assert (x >= 0).all() and np.isfinite(x).all()
    _check_moments(x, 0.1, 0.1)


def test_gamma_broadcasts_array_parameter_and_special_values() -> None:
    a = np.array([0.7, 2.0, 9.0], np.float32)
    x = _draw(random.gamma(random.PRNGKey(5), a, (N // 4, 3)))
    assert x.shape == (N // 4, 3)
    for j, aj in enumerate(a):
        _check_moments(x[:, j], float(aj), float(aj))
    special = np.asarray(random.gamma(random.PRNGKey(5), np.array([-1.0, np.nan, np.inf, 0.0], np.float32)))
    assert np.isnan(special[:2]).all() and special[2] == np.inf and special[3] == 0


def test_beta_dirichlet_chisquare_t() -> None:
    key = random.PRNGKey(6)
    b = _draw(random.beta(key, 2.0, 3.0, (N,)))
    _check_moments(b, 0.4, 0.04)
    u = _draw(random.beta(key, 1.0, 1.0, (N,)))
    assert _ks(u, lambda v: v) < KS_LIMIT
    alpha = np.array([1.0, 2.0, 3.0], np.float32)
    d = _draw(random.dirichlet(key, alpha, (N,)))
    assert d.shape == (N, 3)
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-5)
    for j in range(3):  # marginals are Beta(alpha_j, sum - alpha_j)
        m = alpha[j] / 6
        _check_moments(d[:, j], m, m * (1 - m) / 7)
    c = _draw(random.chisquare(key, 4.0, (N,)))
    assert _ks(c, lambda v: _gamma_int_cdf(2)(v / 2)) < KS_LIMIT
    tt = _draw(random.t(key, 1.0, (N,)))  # t(1) is Cauchy
    assert _ks(tt, lambda v: 0.5 + np.arctan(v) / math.pi) < KS_LIMIT
    t5 = _draw(random.t(key, 5.0, (N,)))
    _check_moments(t5, 0.0, 5 / 3)


def _poisson_cdf(lam: float, kmax: int) -> np.ndarray:
    log_pmf = [k * math.log(lam) - lam - math.lgamma(k + 1) for k in range(kmax + 1)] if lam > 0 else [0.0]
    return np.cumsum(np.exp(log_pmf))


@pytest.mark.parametrize("lam", [0.0, 0.7, 4.0, 9.5, 10.0, 30.0, 500.0])
def test_poisson_moments_and_cdf(lam: float) -> None:
    x = np.asarray(random.poisson(random.PRNGKey(7), lam, (N,)))
    assert x.dtype == np.int32 and (x >= 0).all()
    if lam == 0:
        assert (x == 0).all()
        return
    _check_moments(x.astype(np.float64), lam, lam, lam * (1 + 3 * lam))
    cdf = _poisson_cdf(lam, int(x.max()))
    ecdf = np.searchsorted(np.sort(x), np.arange(x.max() + 1), side="right") / N
    assert np.max(np.abs(ecdf - cdf)) < KS_LIMIT


def test_poisson_broadcast_and_invalid_means() -> None:
    lam = np.array([2.0, 50.0], np.float32)
    x = np.asarray(random.poisson(random.PRNGKey(8), lam, (N // 2, 2)))
    for j in range(2):
        _check_moments(x[:, j].astype(np.float64), float(lam[j]), float(lam[j]))
    bad = np.asarray(random.poisson(random.PRNGKey(8), np.array([-1.0, np.nan, np.inf, 0.0], np.float32)))
    # As JAX: -1 for negative and NaN means; an infinite mean saturates.
    np.testing.assert_array_equal(bad, [-1, -1, np.iinfo(np.int32).max, 0])
    assert np.asarray(random.poisson(random.PRNGKey(8), 3.0, (4,), np.int16)).dtype == np.int16


SAMPLERS: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("laplace", random.laplace, ()),
    ("logistic", random.logistic, ()),
    ("cauchy", random.cauchy, ()),
    ("maxwell", random.maxwell, ()),
    ("rademacher", random.rademacher, ()),
    ("gamma", random.gamma, (np.float32(1.5),)),
    ("beta", random.beta, (np.float32(2.0), np.float32(0.5))),
    ("chisquare", random.chisquare, (np.float32(3.0),)),
    ("t", random.t, (np.float32(4.0),)),
    ("poisson", random.poisson, (np.float32(12.0),)),
]


@pytest.mark.parametrize("name,fun,params", SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_determinism_shapes_and_staging(name: str, fun: Any, params: tuple[Any, ...]) -> None:
    key = random.PRNGKey(9)
    a = np.asarray(fun(key, *params, (2, 3)))
    np.testing.assert_array_equal(a, np.asarray(fun(key, *params, (2, 3))))
    assert a.shape == (2, 3)
    assert not np.array_equal(a, np.asarray(fun(random.PRNGKey(10), *params, (2, 3)))) or name == "rademacher"
    closed = pc.make_jaxpr(lambda k, *p: fun(k, *p, (2, 3)))(key, *params)
    staged = pc.eval_jaxpr(closed.jaxpr, closed.consts, key, *params)[0]
    np.testing.assert_array_equal(np.asarray(staged), a)


@pytest.mark.parametrize("fun", [random.laplace, random.gamma, random.dirichlet], ids=lambda f: f.__name__)
def test_float_dtypes(fun: Any) -> None:
    params: tuple[Any, ...] = {"gamma": (2.0,), "dirichlet": (np.ones(2, np.float32),)}.get(fun.__name__, ())
    x = fun(random.PRNGKey(0), *params, (3,), np.float16)
    assert np.asarray(x).dtype == np.float16
    with pytest.raises(ValueError, match=f"random.{fun.__name__}: dtype argument must be a float dtype"):
        fun(random.PRNGKey(0), *params, (3,), np.int32)


def test_default_shapes_follow_parameters() -> None:
    key = random.PRNGKey(11)
    assert np.asarray(random.gamma(key, np.ones((2, 3), np.float32))).shape == (2, 3)
    assert np.asarray(random.beta(key, np.ones((4, 1), np.float32), np.ones(3, np.float32))).shape == (4, 3)
    assert np.asarray(random.dirichlet(key, np.ones((2, 5), np.float32))).shape == (2, 5)
    assert np.asarray(random.dirichlet(key, np.ones((2, 5), np.float32), (3, 2))).shape == (3, 2, 5)
    assert np.asarray(random.poisson(key, np.ones(4, np.float32))).shape == (4,)


def test_bad_arguments() -> None:
    key = random.PRNGKey(0)
    with pytest.raises(ValueError, match=r"random\.gamma: .*\(2,\), \(3,\) do not broadcast together"):
        random.gamma(key, np.ones(3, np.float32), (2,))
    with pytest.raises(ValueError, match=r"random\.beta: shapes .* do not broadcast together"):
        random.beta(key, np.ones(3, np.float32), np.ones(2, np.float32))
    with pytest.raises(ValueError, match=r"random\.dirichlet: alpha must have at least one dimension"):
        random.dirichlet(key, 1.0)
    with pytest.raises(TypeError, match=r"random\.poisson: dtype must be an integer dtype"):
        random.poisson(key, 1.0, (2,), np.float32)
    with pytest.raises(TypeError, match=r"random\.chisquare: invalid PRNG key data"):
        random.chisquare(np.zeros(3, np.uint32), 1.0)
