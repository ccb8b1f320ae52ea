"""The right-skewed Gumbel distribution, ``cdf = exp(-exp(-z))`` with
``z = (x - loc) / scale`` (``jax.scipy.stats.gumbel_r``)."""

from __future__ import annotations

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy.stats._common import Array, standardised


def logpdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``-z - exp(-z) - log(scale)``."""
    z, scale = standardised("gumbel_r.logpdf", x, loc, scale)
    return -z - pnp.exp(-z) - pnp.log(scale)


def pdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, loc, scale))


def logcdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``-exp(-z)``."""
    z, _ = standardised("gumbel_r.logcdf", x, loc, scale)
    return -pnp.exp(-z)


def cdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``exp(-exp(-z))``."""
    return pnp.exp(logcdf(x, loc, scale))


def sf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``1 - cdf``, as ``-expm1(-exp(-z))`` (accurate in the right tail)."""
    z, _ = standardised("gumbel_r.sf", x, loc, scale)
    return -pnp.expm1(-pnp.exp(-z))


def logsf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log(sf)``."""
    return pnp.log(sf(x, loc, scale))


def ppf(p: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The quantile ``loc - scale log(-log p)``."""
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    return loc - scale * pnp.log(-pnp.log(p))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
