"""The exponential distribution ``exp(-z)`` on ``z = (x - loc) / scale >= 0``
(``jax.scipy.stats.expon``)."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy.stats._common import Array, standardised


def logpdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``-z - log(scale)`` for ``z >= 0``, ``-inf`` below."""
    z, scale = standardised("expon.logpdf", x, loc, scale)
    return pnp.where(z < 0, -np.inf, -z - pnp.log(scale))


def pdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, loc, scale))


def cdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``1 - exp(-z)`` (0 below ``loc``), computed with ``expm1``."""
    z, _ = standardised("expon.cdf", x, loc, scale)
    return pnp.where(z < 0, 0, -pnp.expm1(-z))


def logcdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log(1 - exp(-z))`` (``-inf`` below ``loc``)."""
    return pnp.log(cdf(x, loc, scale))


def sf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``exp(-z)`` (1 below ``loc``)."""
    return pnp.exp(logsf(x, loc, scale))


def logsf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``-z`` (0 below ``loc``)."""
    z, _ = standardised("expon.logsf", x, loc, scale)
    return pnp.where(z < 0, 0, -z)


def ppf(q: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The quantile ``loc - scale * log(1 - q)`` (NaN outside ``[0, 1]``)."""
    q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
    inside = (q >= 0) & (q <= 1)
    return pnp.where(inside, loc - scale * pnp.log1p(-q), np.nan)


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
