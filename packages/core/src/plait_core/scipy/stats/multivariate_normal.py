"""The multivariate normal distribution with mean ``mean`` and covariance
``cov`` (``jax.scipy.stats.multivariate_normal``).

``x`` is ``(..., n)``, ``mean`` ``(..., n)`` and ``cov`` ``(..., n, n)``
(batch axes broadcast); a scalar ``mean`` with a scalar or 1-D ``cov`` is the
one-dimensional case.  The density is evaluated through the Cholesky
factor ``L`` of ``cov``: ``-|L⁻¹ (x - mean)|² / 2 - sum(log diag L) - n log(2 pi) / 2``.
"""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.lax import factorizations as _lf
from plait_core.numpy._util import broadcast_shapes, promote_dtypes_inexact, shape_of
from plait_core.scipy.stats._common import Array

_LOG_2PI = float(np.log(2 * np.pi))


def logpdf(x: Array, mean: Array, cov: Array, allow_singular: None = None) -> Array:
    """``log`` of the density at ``x``; NaN where ``cov`` is not positive definite.
    ``allow_singular`` is not supported (as in JAX)."""
    if allow_singular is not None:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular is not supported, as in JAX")
    x, mean, cov = promote_dtypes_inexact("multivariate_normal.logpdf", x, mean, cov)
    xs, ms, cs = shape_of(x), shape_of(mean), shape_of(cov)
    if not ms:
        # One dimension: cov is a variance (a scalar, or a 1-element vector).
        var = pnp.reshape(cov, ()) if cs else cov
        return -0.5 * (x - mean) ** 2 / var - 0.5 * (_LOG_2PI + pnp.log(var))
    n = ms[-1]
    if len(cs) < 2 or cs[-1] != n or cs[-2] != n or (xs and xs[-1] != n):
        raise ValueError(
            f"multivariate_normal.logpdf got incompatible shapes: x {tuple(xs)}, mean {tuple(ms)}, cov {tuple(cs)} "
            "(expected x and mean (..., n), cov (..., n, n))"
        )
    batch = broadcast_shapes("multivariate_normal.logpdf", xs[:-1], ms[:-1], cs[:-2])
    diff = pnp.broadcast_to(x - mean, (*batch, n))
    factor = _lf.cholesky(pnp.broadcast_to(cov, (*batch, n, n)))
    y = _lf.triangular_solve(factor, diff[..., None], left_side=True, lower=True)[..., 0]
    log_det = pnp.sum(pnp.log(pnp.diagonal(factor, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * pnp.sum(y * y, axis=-1) - log_det - 0.5 * int(n) * _LOG_2PI


def pdf(x: Array, mean: Array, cov: Array) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, mean, cov))


__all__ = ["logpdf", "pdf"]
