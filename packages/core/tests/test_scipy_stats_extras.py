"""plait_core.scipy.stats' gumbel_r/gumbel_l, pareto, geom, binom, nbinom,
betabinom, vonmises, wrapcauchy, gennorm, truncnorm, dirichlet and multinomial
against SciPy float64 values recorded by ``tools/record_special_values.py``, and
their edge values and errors as JAX 0.10.2."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_core.scipy import stats

TABLE = json.loads((Path(__file__).parent / "data" / "special_values.json").read_text())
CASES = TABLE["stats"]


def _arg(name: str, i: int, a: Any) -> Any:
    if name.startswith("multinomial") and i < 2:
        return pnp.asarray(np.asarray(a, np.int32))
    if name.startswith("dirichlet") or isinstance(a, list):
        return pnp.asarray(np.asarray(a, np.float32))
    return a


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_against_scipy(case: list[Any]) -> None:
    name, args, want = case
    dist, fn = name.split(".")
    got = getattr(getattr(stats, dist), fn)(*[_arg(name, i, a) for i, a in enumerate(args)])
    np.testing.assert_allclose(np.ravel(np.asarray(got, np.float64)), want, rtol=3e-5, atol=5e-6, err_msg=name)


def test_support_and_edges() -> None:
    inf = math.inf
    np.testing.assert_array_equal(np.asarray(stats.geom.logpmf(pnp.array([0.0, 1.5]), 0.3)), [-inf, -inf])
    np.testing.assert_array_equal(np.asarray(stats.binom.logpmf(pnp.array([-1.0, 6.0]), 5.0, 0.3)), [-inf, -inf])
    np.testing.assert_array_equal(np.asarray(stats.pareto.logpdf(pnp.array([0.5]), 3.0)), [-inf])
    np.testing.assert_array_equal(np.asarray(stats.pareto.cdf(pnp.array([0.5]), 3.0)), [0.0])
    assert not np.signbit(np.asarray(stats.pareto.cdf(pnp.array([0.5]), 3.0)))[0]
    np.testing.assert_array_equal(np.asarray(stats.wrapcauchy.logpdf(pnp.array([-1.0, 7.0]), 0.5)), [-inf, -inf])
    assert np.isnan(np.asarray(stats.wrapcauchy.logpdf(1.0, 1.5)))
    np.testing.assert_array_equal(np.asarray(stats.truncnorm.logpdf(pnp.array([-3.0, 2.0]), -1.0, 1.0)), [-inf, -inf])
    np.testing.assert_array_equal(np.asarray(stats.truncnorm.cdf(pnp.array([-3.0, 2.0]), -1.0, 1.0)), [0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(stats.dirichlet.logpdf(pnp.array([0.2, 0.3, 0.6]), pnp.array([1.0, 2.0, 3.0]))),
                                  -inf)
    short = stats.dirichlet.logpdf(pnp.array([0.2, 0.3]), pnp.array([1.0, 2.0, 3.0]))
    full = stats.dirichlet.logpdf(pnp.array([0.2, 0.3, 0.5]), pnp.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(np.asarray(short), np.asarray(full), rtol=1e-6)
    assert np.asarray(stats.multinomial.logpmf(pnp.array([1, 1, 0]), 3, pnp.array([0.2, 0.5, 0.3]))) == -inf
    with pytest.raises(ValueError, match="x and n must be of integer type"):
        stats.multinomial.logpmf(pnp.array([1.0, 2.0]), 3.0, pnp.array([0.5, 0.5]))
    with pytest.raises(ValueError, match=r"dirichlet\.logpdf: x has 2 coordinates"):
        stats.dirichlet.logpdf(pnp.ones((2,)), pnp.ones((4,)))


def _ranks(values: list[float], method: str) -> list[float]:
    out = []
    distinct = sorted(set(values))
    for i, v in enumerate(values):
        less = sum(w < v for w in values)
        equal = sum(w == v for w in values)
        out.append({"min": less + 1, "max": less + equal, "average": less + (equal + 1) / 2,
                    "dense": distinct.index(v) + 1,
                    "ordinal": less + sum(w == v for w in values[:i]) + 1}[method])
    return out


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata(method: str) -> None:
    data = [3.0, 1.0, 2.0, 2.0, 5.0, 1.0]
    got = stats.rankdata(pnp.asarray(np.asarray(data, np.float32)), method)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), _ranks(data, method))
    table = np.array([[3.0, 1.0, 5.0], [2.0, 2.0, 0.0]], np.float32)
    by_row = np.asarray(stats.rankdata(pnp.asarray(table), method, axis=1))
    np.testing.assert_array_equal(by_row, [_ranks(list(r), method) for r in table.tolist()])
    assert np.isnan(np.asarray(stats.rankdata(pnp.array([3.0, np.nan, 2.0]), method))).all()
    with pytest.raises(NotImplementedError, match="nan_policy='omit' is not supported"):
        stats.rankdata(pnp.ones(2), method, nan_policy="omit")


def test_mode_and_sem() -> None:
    m = stats.mode(pnp.array([[3, 1, 2, 2], [5, 5, 1, 1]]), axis=1)
    np.testing.assert_array_equal(np.asarray(m.mode), [2, 1])
    np.testing.assert_array_equal(np.asarray(m.count), [2, 2])
    nan_mode = stats.mode(pnp.array([1.0, np.nan, np.nan]))
    assert np.isnan(np.asarray(nan_mode.mode)) and int(nan_mode.count) == 2
    kept = stats.mode(pnp.array([[1, 2], [1, 3]]), axis=0, keepdims=True)
    np.testing.assert_array_equal(np.asarray(kept.mode), [[1, 2]])
    x = np.array([[3.0, 1.0, 2.0, 2.0], [5.0, 5.0, 1.0, np.nan]])
    np.testing.assert_allclose(np.asarray(stats.sem(pnp.asarray(x), axis=1))[0], np.std(x[0], ddof=1) / 2, rtol=1e-6)
    assert np.isnan(np.asarray(stats.sem(pnp.asarray(x), axis=1))[1])
    omit = np.asarray(stats.sem(pnp.asarray(x), axis=1, nan_policy="omit"))[1]
    np.testing.assert_allclose(omit, np.std(x[1, :3], ddof=1) / np.sqrt(3), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="nan_policy='raise' is not supported"):
        stats.sem(pnp.ones(3), nan_policy="raise")


def test_gaussian_kde() -> None:
    data = np.array([0.0, 1.0, 1.5, 3.0])
    kde = stats.gaussian_kde(pnp.asarray(data, pnp.float32))
    var = np.cov(data) * len(data) ** (-2 / 5)  # Scott's factor n**(-1/(d+4)), squared
    np.testing.assert_allclose(np.asarray(kde.covariance), [[var]], rtol=1e-5)
    pts = np.array([0.0, 1.0, 2.0])
    want = np.mean(np.exp(-0.5 * (pts[:, None] - data[None]) ** 2 / var), axis=1) / np.sqrt(2 * np.pi * var)
    np.testing.assert_allclose(np.asarray(kde.evaluate(pnp.asarray(pts, pnp.float32))), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(kde.logpdf(pnp.asarray(pts, pnp.float32))), np.log(want), rtol=1e-5)
    mass = np.mean([math.erf((1 - x) / math.sqrt(2 * var)) - math.erf((0 - x) / math.sqrt(2 * var)) for x in data]) / 2
    np.testing.assert_allclose(float(kde.integrate_box_1d(0.0, 1.0)), mass, rtol=1e-5)
    gauss = np.mean(np.exp(-0.5 * (1 - data) ** 2 / (var + 2)) / np.sqrt(2 * np.pi * (var + 2)))
    np.testing.assert_allclose(float(kde.integrate_gaussian(pnp.array([1.0]), pnp.array([[2.0]]))), gauss, rtol=1e-5)
    # As in JAX: boxes beyond one dimension and changing the bandwidth are not supported.
    with pytest.raises(NotImplementedError, match=r"gaussian_kde\.integrate_box: only 1D box integrations"):
        kde.integrate_box(pnp.array([0.0]), pnp.array([1.0]))
    with pytest.raises(NotImplementedError, match=r"gaussian_kde\.set_bandwidth: dynamically changing"):
        kde.set_bandwidth("silverman")
    two = stats.gaussian_kde(pnp.array([[0.0, 1.0, 1.5, 3.0], [1.0, 0.0, 2.0, 2.0]]), bw_method="silverman",
                             weights=pnp.array([1.0, 2.0, 1.0, 1.0]))
    w = np.array([1.0, 2.0, 1.0, 1.0]) / 5
    neff = 1 / np.sum(w ** 2)
    np.testing.assert_allclose(float(two.neff), neff, rtol=1e-6)
    factor = (neff * 4 / 4) ** (-1 / 6)
    cov = np.cov(np.array([[0.0, 1.0, 1.5, 3.0], [1.0, 0.0, 2.0, 2.0]]), aweights=w) * factor ** 2
    np.testing.assert_allclose(np.asarray(two.covariance), cov, rtol=1e-5)
    draws = two.resample(np.array([0, 1], np.uint32), (5,))
    assert draws.shape == (2, 5)
    with pytest.raises(NotImplementedError, match="changing the bandwidth method is not supported"):
        kde.set_bandwidth(0.3)
    with pytest.raises(ValueError, match="points have dimension 3, the dataset has 2"):
        two.evaluate(pnp.ones((3, 2)))
