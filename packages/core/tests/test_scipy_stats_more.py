"""The distributions of ``plait.scipy.stats`` added with issue 14, against
closed forms computed with NumPy and ``math.lgamma`` in float64."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from plait_core.config import enable_x64
from plait_core.scipy import stats

X = np.array([-1.5, 0.0, 0.3, 1.0, 2.5, 7.0])
Q = np.array([0.0, 0.2, 0.5, 0.9, 1.0])
lgamma = np.vectorize(math.lgamma)


def close(got: Any, want: Any) -> None:
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)


@pytest.fixture(autouse=True)
def _x64() -> Any:
    with enable_x64():
        yield


def test_expon() -> None:
    z = (X - 0.5) / 2.0
    close(stats.expon.logpdf(X, 0.5, 2.0), np.where(z < 0, -np.inf, -z - np.log(2.0)))
    close(stats.expon.pdf(X, 0.5, 2.0), np.where(z < 0, 0, np.exp(-z) / 2))
    close(stats.expon.cdf(X, 0.5, 2.0), np.where(z < 0, 0, 1 - np.exp(-z)))
    close(stats.expon.sf(X, 0.5, 2.0), np.where(z < 0, 1, np.exp(-z)))
    close(stats.expon.logsf(X, 0.5, 2.0), np.where(z < 0, 0, -z))
    with np.errstate(divide="ignore"):
        close(stats.expon.ppf(Q, 0.5, 2.0), 0.5 - 2.0 * np.log1p(-Q))
    assert np.isnan(np.asarray(stats.expon.ppf(np.array([1.5]))))[0]


def test_laplace_logistic_cauchy() -> None:
    z = (X - 0.5) / 2.0
    close(stats.laplace.logpdf(X, 0.5, 2.0), -np.abs(z) - np.log(4.0))
    close(stats.laplace.cdf(X, 0.5, 2.0), np.where(z < 0, 0.5 * np.exp(z), 1 - 0.5 * np.exp(-z)))
    close(stats.logistic.pdf(X, 0.5, 2.0), np.exp(-z) / (2.0 * (1 + np.exp(-z)) ** 2))
    close(stats.logistic.cdf(X, 0.5, 2.0), 1 / (1 + np.exp(-z)))
    close(stats.logistic.sf(X, 0.5, 2.0), 1 / (1 + np.exp(z)))
    q = Q[1:-1]
    close(stats.logistic.ppf(q, 0.5, 2.0), 0.5 + 2.0 * np.log(q / (1 - q)))
    close(stats.logistic.isf(q, 0.5, 2.0), 0.5 - 2.0 * np.log(q / (1 - q)))
    close(stats.logistic.logpdf(np.array([-800.0, 800.0]), 0.0, 1.0), [-800.0, -800.0])
    close(stats.cauchy.pdf(X, 0.5, 2.0), 1 / (np.pi * 2.0 * (1 + z * z)))
    close(stats.cauchy.cdf(X, 0.5, 2.0), 0.5 + np.arctan(z) / np.pi)
    close(stats.cauchy.logsf(X, 0.5, 2.0), np.log(0.5 - np.arctan(z) / np.pi))
    close(stats.cauchy.ppf(q, 0.5, 2.0), 0.5 + 2.0 * np.tan(np.pi * (q - 0.5)))
    close(stats.cauchy.isf(q, 0.5, 2.0), 0.5 + 2.0 * np.tan(np.pi * (0.5 - q)))


def test_t_gamma_chi2_beta() -> None:
    z = (X - 0.5) / 2.0
    df = 3.5
    want = lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * np.log(np.pi * df) - np.log(2.0) - (df + 1) / 2 * np.log1p(z * z / df)
    close(stats.t.logpdf(X, df, 0.5, 2.0), want)
    for a in (0.5, 1.0, 2.5):
        y = X / 1.5
        with np.errstate(divide="ignore", invalid="ignore"):
            want = np.where(y < 0, -np.inf, (a - 1) * np.log(np.where(y > 0, y, 1)) - y - lgamma(a) - np.log(1.5))
        want = np.where(y == 0, {0.5: np.inf, 1.0: -lgamma(1.0) - np.log(1.5), 2.5: -np.inf}[a], want)
        close(stats.gamma.logpdf(X, a, 0.0, 1.5), want)
        close(stats.chi2.logpdf(X, 2 * a, 0.0, 0.75), want)
    close(stats.chi2.pdf(np.array([0.0]), 2.0), [0.5])
    b_x = np.array([-0.1, 0.0, 0.2, 0.5, 1.0, 1.3])
    inside = b_x[2:4]
    for a, b in ((2.0, 3.5), (1.0, 1.0)):
        log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
        want = (a - 1) * np.log(inside) + (b - 1) * np.log1p(-inside) - log_beta
        got = np.asarray(stats.beta.logpdf(b_x, a, b))
        close(got[2:4], want)
        assert got[0] == -np.inf and got[-1] == -np.inf
    close(stats.beta.pdf(np.array([0.0, 1.0]), 1.0, 1.0), [1.0, 1.0])


def test_poisson() -> None:
    k = np.array([-1.0, 0.0, 1.0, 2.5, 3.0, 10.0])
    mu = 2.5
    want = np.where((k >= 0) & (k == np.floor(k)), k * np.log(mu) - mu - lgamma(np.maximum(k, 0) + 1), -np.inf)
    close(stats.poisson.logpmf(k, mu), want)
    close(stats.poisson.pmf(k + 1.0, mu, 1.0), np.exp(want))
    close(stats.poisson.pmf(np.array([0.0]), 0.0), [1.0])


def test_multivariate_normal() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3))
    cov = a @ a.T + np.eye(3)
    mean = rng.standard_normal(3)
    x = rng.standard_normal((5, 3))
    d = x - mean
    want = -0.5 * np.einsum("bi,ij,bj->b", d, np.linalg.inv(cov), d) - 0.5 * np.log(np.linalg.det(2 * np.pi * cov))
    close(stats.multivariate_normal.logpdf(x, mean, cov), want)
    close(stats.multivariate_normal.pdf(x[0], mean, cov), np.exp(want[0]))
    covs = np.stack([cov, 2 * cov])
    batched = np.asarray(stats.multivariate_normal.logpdf(x[:, None, :], mean, covs))
    assert batched.shape == (5, 2)
    close(batched[:, 0], want)
    close(stats.multivariate_normal.logpdf(np.array([0.3, 1.0]), 0.5, 2.0), stats.norm.logpdf(np.array([0.3, 1.0]), 0.5, np.sqrt(2.0)))
    with pytest.raises(ValueError, match=r"multivariate_normal.logpdf got incompatible shapes: x \(5, 3\), mean \(3,\), cov \(2, 2\)"):
        stats.multivariate_normal.logpdf(x, mean, np.eye(2))
    with pytest.raises(NotImplementedError, match="allow_singular is not supported"):
        stats.multivariate_normal.logpdf(x, mean, cov, allow_singular=True)  # type: ignore[arg-type]


def test_incomplete_gamma_and_beta_closed_forms() -> None:
    from plait_core.scipy import special

    x = np.array([0.0, 0.1, 0.9, 2.0, 5.0, 30.0, np.inf])
    for n in (1, 2, 5):
        terms = sum(np.where(np.isinf(x), 0, x) ** k / math.factorial(k) for k in range(n))
        want = np.where(np.isinf(x), 1.0, 1 - np.exp(-np.where(np.isinf(x), 0, x)) * terms)
        close(special.gammainc(float(n), x), want)
        close(special.gammaincc(float(n), x), 1 - want)
    close(special.gammainc(0.5, x), [math.erf(math.sqrt(v)) if np.isfinite(v) else 1.0 for v in x])
    t = np.linspace(0, 7, 200001)
    integrand = t**9 * np.exp(-t)
    quad = float(np.sum((integrand[1:] + integrand[:-1]) / 2) * (t[1] - t[0])) / math.gamma(10)
    np.testing.assert_allclose(np.asarray(special.gammainc(10.0, 7.0)), quad, rtol=1e-8)
    p = np.array([0.0, 0.05, 0.3, 0.5, 0.8, 0.999, 1.0])
    close(special.betainc(2.0, 3.0, p), sum(math.comb(4, j) * p**j * (1 - p) ** (4 - j) for j in range(2, 5)))
    close(special.betainc(1.0, 1.0, p), p)
    close(special.betainc(0.5, 0.5, p), 2 / np.pi * np.arcsin(np.sqrt(p)))
    close(special.betainc(30.0, 2.5, p), 1 - np.asarray(special.betainc(2.5, 30.0, 1 - p)))
    assert np.isnan(np.asarray(special.gammainc(-1.0, 1.0))) and np.isnan(np.asarray(special.gammainc(1.0, -0.5)))
    assert np.isnan(np.asarray(special.betainc(1.0, 1.0, 1.5)))


def test_distribution_functions() -> None:
    z = np.array([-1.0, 0.0, 0.3, 1.0, 2.5, 7.0])
    y = np.maximum(z, 0) / 1.5
    close(stats.gamma.cdf(z, 2.0, 0.0, 1.5), 1 - np.exp(-y) * (1 + y))
    close(stats.gamma.sf(z, 2.0, 0.0, 1.5), np.exp(-y) * (1 + y))
    close(stats.gamma.logsf(z, 1.0, 0.0, 1.5), -y)
    close(stats.chi2.cdf(z, 2.0), 1 - np.exp(-np.maximum(z, 0) / 2))
    close(stats.chi2.logcdf(np.array([4.0]), 2.0), np.log(1 - np.exp(-2.0)))
    close(stats.chi2.sf(np.array([4.0]), 2.0), np.exp(-2.0))
    p = np.array([-0.5, 0.0, 0.25, 0.5, 1.0, 2.0])
    q = np.clip(p, 0, 1)
    close(stats.beta.cdf(p, 2.0, 1.0), q**2)
    close(stats.beta.sf(p, 2.0, 1.0), 1 - q**2)
    close(stats.beta.logcdf(np.array([0.5]), 2.0, 1.0), [np.log(0.25)])
    close(stats.beta.logsf(np.array([0.5]), 2.0, 1.0), [np.log(0.75)])
    k = np.array([-1.0, 0.0, 1.0, 2.5, 3.0, 10.0])
    pmf = [math.exp(-2.5) * 2.5**j / math.factorial(j) for j in range(11)]
    close(stats.poisson.cdf(k, 2.5), [0.0 if v < 0 else sum(pmf[: int(v) + 1]) for v in k])


def test_uniform_bernoulli_norm_remaining_functions() -> None:
    x = np.array([-1.0, 0.0, 0.3, 1.0, 1.5, 3.0])
    close(stats.uniform.cdf(x, 0.5, 2.0), np.clip((x - 0.5) / 2.0, 0, 1))
    q = np.array([-0.1, 0.0, 0.3, 1.0, 1.2])
    got = np.asarray(stats.uniform.ppf(q, 0.5, 2.0))
    close(got[1:4], 0.5 + 2.0 * q[1:4])
    assert np.isnan(got[0]) and np.isnan(got[-1])
    close(stats.bernoulli.cdf(x, 0.3), [0.0, 0.7, 0.7, 1.0, 1.0, 1.0])
    ppf = np.asarray(stats.bernoulli.ppf(np.array([-0.1, 0.0, 0.3, 0.7, 0.8, 1.0, 1.2]), 0.3))
    close(ppf[1:-1], [0.0, 0.0, 0.0, 1.0, 1.0])
    assert np.isnan(ppf[0]) and np.isnan(ppf[-1])
    close(stats.norm.isf(np.array([0.1, 0.5, 0.9]), 1.0, 2.0), np.asarray(stats.norm.ppf(np.array([0.9, 0.5, 0.1]), 1.0, 2.0)))
    close(stats.norm.logsf(x, 1.0, 2.0), np.log(np.asarray(stats.norm.cdf(-x, -1.0, 2.0))))
