"""The chi-squared distribution with ``df`` degrees of freedom: a gamma
distribution of shape ``df / 2`` and scale ``2 scale`` (``jax.scipy.stats.chi2``).
At ``x == loc`` with ``df == 2`` the density is SciPy's ``1 / (2 scale)``
(JAX 0.10.2 gives NaN there)."""

from __future__ import annotations

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy.stats import gamma
from plait_core.scipy.stats._common import Array


def logpdf(x: Array, df: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log`` of the density ``y**(df/2 - 1) exp(-y/2) / (2**(df/2) Gamma(df/2) scale)``."""
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    return gamma.logpdf(x, df / 2, loc, 2 * scale)


def pdf(x: Array, df: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, df, loc, scale))


def cdf(x: Array, df: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``P(df / 2, y / 2)``."""
    x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
    return gamma.cdf(x, df / 2, loc, 2 * scale)


def sf(x: Array, df: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``Q(df / 2, y / 2)``."""
    x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
    return gamma.sf(x, df / 2, loc, 2 * scale)


def logcdf(x: Array, df: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log`` of :func:`cdf`."""
    return pnp.log(cdf(x, df, loc, scale))


def logsf(x: Array, df: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log`` of :func:`sf`."""
    return pnp.log(sf(x, df, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
