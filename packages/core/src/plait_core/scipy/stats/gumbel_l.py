"""The left-skewed Gumbel distribution, ``sf = exp(-exp(z))`` with
``z = (x - loc) / scale`` (``jax.scipy.stats.gumbel_l``)."""

from __future__ import annotations

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy.stats._common import Array, standardised


def logpdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``z - exp(z) - log(scale)``."""
    z, scale = standardised("gumbel_l.logpdf", x, loc, scale)
    return z - pnp.exp(z) - pnp.log(scale)


def pdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, loc, scale))


def cdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``1 - exp(-exp(z))``, as ``-expm1(-exp(z))``."""
    z, _ = standardised("gumbel_l.cdf", x, loc, scale)
    return -pnp.expm1(-pnp.exp(z))


def logcdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log(cdf)``."""
    return pnp.log(cdf(x, loc, scale))


def logsf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``-exp(z)``."""
    z, _ = standardised("gumbel_l.logsf", x, loc, scale)
    return -pnp.exp(z)


def sf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``exp(-exp(z))``."""
    return pnp.exp(logsf(x, loc, scale))


def ppf(p: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The quantile ``loc + scale log(-log(1 - p))``."""
    p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
    return loc + scale * pnp.log(-pnp.log1p(-p))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
