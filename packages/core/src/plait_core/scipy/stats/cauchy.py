"""The Cauchy distribution ``1 / (pi (1 + z**2))`` with ``z = (x - loc) / scale``
(``jax.scipy.stats.cauchy``)."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy.stats._common import Array, standardised

_LOG_PI = float(np.log(np.pi))


def logpdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``-log(pi scale) - log1p(z**2)``."""
    z, scale = standardised("cauchy.logpdf", x, loc, scale)
    return -_LOG_PI - pnp.log(scale) - pnp.log1p(z * z)


def pdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, loc, scale))


def cdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``1/2 + arctan(z) / pi``."""
    z, _ = standardised("cauchy.cdf", x, loc, scale)
    return 0.5 + pnp.arctan(z) / np.pi


def logcdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log`` of :func:`cdf`."""
    return pnp.log(cdf(x, loc, scale))


def sf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``1/2 - arctan(z) / pi``."""
    z, _ = standardised("cauchy.sf", x, loc, scale)
    return 0.5 - pnp.arctan(z) / np.pi


def logsf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log`` of :func:`sf`."""
    return pnp.log(sf(x, loc, scale))


def ppf(q: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The quantile ``loc + scale * tan(pi (q - 1/2))`` (as JAX, no check that
    ``q`` lies in ``[0, 1]``; the ends give large finite values)."""
    q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
    return loc + scale * pnp.tan(np.pi * (q - 0.5))


def isf(q: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The inverse survival function: :func:`ppf` of ``1 - q``."""
    q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
    return ppf(1 - q, loc, scale)


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
