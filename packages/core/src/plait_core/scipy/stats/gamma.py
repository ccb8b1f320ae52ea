"""The gamma distribution with shape ``a``: density ``z**(a-1) exp(-z) / Gamma(a)``
for ``z = (x - loc) / scale >= 0`` (``jax.scipy.stats.gamma``); the
distribution functions are the regularised incomplete gamma functions."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array, standardised


def logpdf(x: Array, a: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``(a - 1) log z - z - lgamma(a) - log(scale)`` for ``z >= 0``, ``-inf`` below."""
    z, a, scale = standardised("gamma.logpdf", x, a, loc, scale)
    safe = pnp.where(z < 0, 1, z)
    out = special.xlogy(a - 1, safe) - safe - special.gammaln(a) - pnp.log(scale)
    return pnp.where(z < 0, -np.inf, out)


def pdf(x: Array, a: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, a, loc, scale))


def cdf(x: Array, a: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``P(a, z)`` (0 below ``loc``)."""
    z, a, _ = standardised("gamma.cdf", x, a, loc, scale)
    return special.gammainc(a, pnp.maximum(z, 0))


def sf(x: Array, a: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``Q(a, z) = 1 - P(a, z)`` (1 below ``loc``)."""
    z, a, _ = standardised("gamma.sf", x, a, loc, scale)
    return special.gammaincc(a, pnp.maximum(z, 0))


def logcdf(x: Array, a: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log`` of :func:`cdf`."""
    return pnp.log(cdf(x, a, loc, scale))


def logsf(x: Array, a: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log`` of :func:`sf`."""
    return pnp.log(sf(x, a, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
