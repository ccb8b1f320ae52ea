"""``plait.scipy.linalg`` and ``plait.scipy.stats.multivariate_normal``
through the whole stack: a Gaussian-process log marginal likelihood and its
gradient against a NumPy float64 oracle and finite differences, ``expm``'s
gradient, and jit / vmap against eager."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait
import plait.numpy as pnp
from plait.scipy import linalg as sl
from plait.scipy import stats
from plait_core.config import enable_x64

rng = np.random.default_rng(21)
X = np.sort(rng.uniform(-3, 3, 12))
Y = np.sin(X) + 0.1 * rng.standard_normal(12)


def close(got: Any, want: Any, tol: float = 1e-8) -> None:
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def gp_log_marginal(xp: Any, linalg: Any, params: Any, x: Any, y: Any) -> Any:
    """log p(y | x) for an RBF kernel with log lengthscale, log amplitude and log noise."""
    ell, amp, noise = xp.exp(params[0]), xp.exp(params[1]), xp.exp(params[2])
    d2 = (x[:, None] - x[None, :]) ** 2
    k = amp**2 * xp.exp(-0.5 * d2 / ell**2) + (noise**2 + 1e-9) * xp.eye(x.shape[0])
    lower = linalg.cholesky(k, lower=True)
    alpha = linalg.solve_triangular(lower.T, linalg.solve_triangular(lower, y, lower=True), lower=False)
    return -0.5 * y @ alpha - xp.sum(xp.log(xp.diag(lower))) - 0.5 * x.shape[0] * np.log(2 * np.pi)


def numpy_gp(params: np.ndarray) -> float:
    ell, amp, noise = np.exp(params)
    k = amp**2 * np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / ell**2) + (noise**2 + 1e-9) * np.eye(12)
    return float(-0.5 * Y @ np.linalg.solve(k, Y) - 0.5 * np.linalg.slogdet(k)[1] - 6 * np.log(2 * np.pi))


def test_gp_marginal_likelihood_and_gradient_match_numpy() -> None:
    params = np.array([0.1, -0.2, -1.5])
    with enable_x64():
        f = lambda p: gp_log_marginal(pnp, sl, p, X, Y)  # noqa: E731
        close(f(params), numpy_gp(params), 1e-10)
        g = plait.grad(f)(params)
        eps = 1e-6
        fd = [(numpy_gp(params + eps * e) - numpy_gp(params - eps * e)) / (2 * eps) for e in np.eye(3)]
        close(g, fd, 1e-6)
        close(plait.jit(plait.grad(f))(params), g, 1e-10)
        # The same likelihood with cho_factor / cho_solve.
        def by_cho(p: Any) -> Any:
            ell, amp, noise = pnp.exp(p[0]), pnp.exp(p[1]), pnp.exp(p[2])
            k = amp**2 * pnp.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / ell**2) + (noise**2 + 1e-9) * pnp.eye(12)
            c = sl.cho_factor(k)
            return -0.5 * Y @ sl.cho_solve(c, Y) - pnp.sum(pnp.log(pnp.diag(c[0]))) - 6 * np.log(2 * np.pi)

        close(by_cho(params), numpy_gp(params), 1e-10)
        close(plait.grad(by_cho)(params), fd, 1e-6)


def test_expm_gradient_jit_and_vmap() -> None:
    a = rng.standard_normal((4, 4))
    with enable_x64():
        loss = lambda m: pnp.sum(sl.expm(m, max_squarings=4) ** 2)  # noqa: E731  (few squarings: a small program)
        g = np.asarray(plait.jit(plait.grad(loss))(a))
        fast = plait.jit(loss)
        eps = 1e-6
        for _ in range(2):  # directional derivatives along random directions
            e = rng.standard_normal(a.shape)
            fd = (float(fast(a + eps * e)) - float(fast(a - eps * e))) / (2 * eps)
            close(np.sum(g * e), fd, 1e-5 * max(1.0, abs(fd)))
        stack = np.stack([a * s for s in (0.1, 1.0, 4.0)])
        small = lambda m: sl.expm(m, max_squarings=4)  # noqa: E731
        close(plait.vmap(small)(stack), np.stack([np.asarray(small(m)) for m in stack]), 1e-10)
        close(plait.jit(sl.expm)(a), np.asarray(sl.expm(a)), 1e-12)
    tri = np.triu(rng.standard_normal((3, 4, 4))) + 3 * np.eye(4)
    rhs = rng.standard_normal((3, 4))
    got = plait.vmap(lambda t, v: sl.solve_triangular(t, v))(tri.astype(np.float32), rhs.astype(np.float32))
    close(got, np.stack([np.linalg.solve(t, v) for t, v in zip(tri, rhs)]), 1e-4)


def test_multivariate_normal_gradient_is_the_closed_form() -> None:
    a = rng.standard_normal((3, 3))
    cov = a @ a.T + np.eye(3)
    x, mean = rng.standard_normal(3), rng.standard_normal(3)
    with enable_x64():
        g = plait.grad(lambda m: stats.multivariate_normal.logpdf(x, m, cov))(mean)
        close(g, np.linalg.solve(cov, x - mean), 1e-10)
        close(plait.jit(stats.multivariate_normal.logpdf)(x, mean, cov), stats.multivariate_normal.logpdf(x, mean, cov), 1e-12)
