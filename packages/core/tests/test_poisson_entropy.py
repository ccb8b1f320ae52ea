"""``scipy.stats.poisson.entropy`` against the series summed in float64 NumPy,
its asymptotic regime, edge values and JAX 0.10.2's values."""

from __future__ import annotations

import math

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_core.config import enable_x64
from plait_core.scipy.stats import poisson


def _series(mu: float) -> float:
    k = np.arange(2000, dtype=np.float64)
    logp = k * math.log(mu) - mu - np.array([math.lgamma(x + 1) for x in k])
    p = np.exp(logp)
    return float(-(p * logp).sum())


@pytest.mark.parametrize("mu", [0.05, 0.5, 1.0, 3.7, 9.99, 10.0, 42.0, 99.5, 100.0, 250.0, 1000.0])
def test_matches_the_series(mu: float) -> None:
    want = _series(mu)
    with enable_x64():
        assert float(poisson.entropy(np.float64(mu))) == pytest.approx(want, rel=1e-9)
    assert float(poisson.entropy(np.float32(mu))) == pytest.approx(want, rel=2e-5)


def test_edges_broadcast_and_dtype() -> None:
    got = np.asarray(poisson.entropy(pnp.array([0.0, -1.0, np.inf, np.nan], np.float32)))
    assert got[0] == 0 and np.isnan(got[1]) and got[2] == np.inf and np.isnan(got[3])
    # JAX 0.10.2: entropy(5.0) = 2.204394, entropy([1, 10, 100]) = [1.3048419, 2.561407, 3.7206903]
    assert float(poisson.entropy(5.0)) == pytest.approx(2.204394, rel=1e-6)
    np.testing.assert_allclose(np.asarray(poisson.entropy(pnp.array([1, 10, 100]))), [1.3048419, 2.561407, 3.7206903],
                               rtol=2e-6)
    out = poisson.entropy(pnp.array([1.0, 2.0]), pnp.array([[0.0], [3.5]]))  # loc broadcasts, changes nothing
    assert out.shape == (2, 2) and out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out[1]), np.asarray(out[0]))
    assert poisson.entropy(3).dtype == np.float32
