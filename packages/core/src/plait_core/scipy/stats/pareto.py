"""The Pareto distribution with shape ``b`` on ``z = (x - loc) / scale >= 1``
(``jax.scipy.stats.pareto``)."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy.stats._common import Array, standardised


def logpdf(x: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log b - (b + 1) log z - log scale`` for ``z >= 1``, ``-inf`` below."""
    z, b, scale = standardised("pareto.logpdf", x, b, loc, scale)
    inside = z >= 1
    zs = pnp.where(inside, z, 1)
    return pnp.where(inside, pnp.log(b) - (b + 1) * pnp.log(zs) - pnp.log(scale), -np.inf)


def pdf(x: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, b, loc, scale))


def logsf(x: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``-b log z`` for ``z >= 1``, 0 below."""
    z, b, _ = standardised("pareto.logsf", x, b, loc, scale)
    inside = z >= 1
    return pnp.where(inside, -b * pnp.log(pnp.where(inside, z, 1)), 0)


def sf(x: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``z**-b`` for ``z >= 1``, 1 below."""
    return pnp.exp(logsf(x, b, loc, scale))


def cdf(x: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``1 - z**-b`` for ``z >= 1``, 0 below."""
    return 0.0 - pnp.expm1(logsf(x, b, loc, scale))


def logcdf(x: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log(cdf)`` (``-inf`` below the support)."""
    return pnp.log(cdf(x, b, loc, scale))


def ppf(q: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The quantile ``loc + scale (1 - q)**(-1/b)``."""
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    return loc + scale * pnp.exp(-pnp.log1p(-q) / b)


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
