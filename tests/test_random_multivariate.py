"""``random.multivariate_normal`` draws JAX 0.10.2's numbers (table recorded
by ``tests/data/gen_multivariate_normal.py``), has the right moments, and
checks its arguments."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import plait
import plait.numpy as pnp

TABLE = json.loads((pathlib.Path(__file__).parent / "data" / "jax_multivariate_normal_0.10.2.json").read_text())
A = np.array([[1.0, 0.5, -0.3], [0.2, 1.5, 0.4], [-0.7, 0.1, 0.9]], np.float32)
COV = A @ A.T + np.eye(3, dtype=np.float32)
MEAN = np.array([0.0, 1.0, -2.0], np.float32)


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_draws_match_jax(method: str) -> None:
    got = plait.random.multivariate_normal(plait.random.PRNGKey(3), MEAN, COV, (4,), method=method)
    np.testing.assert_allclose(np.asarray(got), TABLE["cases"][method], rtol=1e-6, atol=1e-6)


def test_batched_mean_and_jit() -> None:
    key = plait.random.PRNGKey(3)
    means = pnp.stack([MEAN, -MEAN])
    got = plait.random.multivariate_normal(key, means, COV)
    np.testing.assert_allclose(np.asarray(got), TABLE["cases"]["batched"], rtol=1e-6, atol=1e-6)
    jitted = plait.jit(lambda k, m: plait.random.multivariate_normal(k, m, COV))(key, means)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(got), rtol=1e-6, atol=1e-6)


def test_moments() -> None:
    draws = np.asarray(plait.random.multivariate_normal(plait.random.PRNGKey(0), MEAN, COV, (20000,)))
    np.testing.assert_allclose(draws.mean(0), MEAN, atol=0.05)
    np.testing.assert_allclose(np.cov(draws.T), COV, atol=0.1)


def test_argument_errors() -> None:
    key = plait.random.PRNGKey(0)
    with pytest.raises(ValueError, match=r"random.multivariate_normal: method must be one of"):
        plait.random.multivariate_normal(key, MEAN, COV, method="qr")
    with pytest.raises(ValueError, match=r"mean must be \(..., n\) and cov \(..., n, n\) with the same n, got shapes \(3,\) and \(2, 2\)"):
        plait.random.multivariate_normal(key, MEAN, np.eye(2))
    with pytest.raises(ValueError, match=r"random.multivariate_normal: shapes \(3,\), \(2,\) cannot be broadcast together"):
        plait.random.multivariate_normal(key, pnp.stack([MEAN, MEAN]), COV, (3,))
    with pytest.raises(ValueError, match=r"random.multivariate_normal: shape \(1,\) must be a broadcast of the batch shapes"):
        plait.random.multivariate_normal(key, pnp.stack([MEAN, MEAN]), COV, (1,))
