"""The Dirichlet distribution on the simplex (``jax.scipy.stats.dirichlet``).
``x`` holds the ``K`` coordinates along its first axis (or ``K - 1`` of them:
the last is ``1 - sum``); points off the simplex have density 0."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_dtypes_inexact
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array


def logpdf(x: Array, alpha: Array) -> Array:
    """``sum((alpha - 1) log x) - sum(log Gamma(alpha)) + log Gamma(sum alpha)`` on the
    simplex, ``-inf`` off it."""
    x, alpha = promote_dtypes_inexact("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"dirichlet.logpdf: alpha must be one-dimensional, got shape {alpha.shape}")
    k = alpha.shape[0]
    if x.shape[0] == k - 1:
        x = pnp.concatenate([x, (1 - pnp.sum(x, axis=0))[None]], axis=0)
    elif x.shape[0] != k:
        raise ValueError(f"dirichlet.logpdf: x has {x.shape[0]} coordinates along its first axis, "
                         f"alpha has {k} (x may have {k} or {k - 1})")
    a = pnp.reshape(alpha, (k,) + (1,) * (x.ndim - 1))
    tol = float(np.finfo(np.dtype(x.dtype)).eps) * 16
    on_simplex = pnp.all(x >= 0, axis=0) & (pnp.abs(pnp.sum(x, axis=0) - 1) < tol * k)
    norm = pnp.sum(special.gammaln(alpha)) - special.gammaln(pnp.sum(alpha))
    value = pnp.sum(special.xlogy(a - 1, pnp.where(x > 0, x, 1)) + pnp.where(x > 0, 0, pnp.where(a == 1, 0, -np.inf)),
                    axis=0) - norm
    return pnp.where(on_simplex, value, -np.inf)


def pdf(x: Array, alpha: Array) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, alpha))


__all__ = ["logpdf", "pdf"]
