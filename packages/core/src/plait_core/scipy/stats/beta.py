"""The beta distribution with shapes ``a`` and ``b`` on ``z = (x - loc) / scale``
in ``[0, 1]`` (``jax.scipy.stats.beta``); the distribution functions are the
regularised incomplete beta function."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array, standardised


def logpdf(x: Array, a: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``(a-1) log z + (b-1) log(1-z) - log B(a, b) - log(scale)`` inside ``[0, 1]``, ``-inf`` outside."""
    z, a, b, scale = standardised("beta.logpdf", x, a, b, loc, scale)
    inside = (z >= 0) & (z <= 1)
    safe = pnp.where(inside, z, 0.5)
    log_beta = special.gammaln(a) + special.gammaln(b) - special.gammaln(a + b)
    out = special.xlogy(a - 1, safe) + special.xlog1py(b - 1, -safe) - log_beta - pnp.log(scale)
    return pnp.where(inside, out, -np.inf)


def pdf(x: Array, a: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x: Array, a: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``I_z(a, b)`` (0 below the support, 1 above)."""
    z, a, b, _ = standardised("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, pnp.clip(z, 0, 1))


def sf(x: Array, a: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``I_{1-z}(b, a) = 1 - I_z(a, b)``."""
    z, a, b, _ = standardised("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, 1 - pnp.clip(z, 0, 1))


def logcdf(x: Array, a: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log`` of :func:`cdf`."""
    return pnp.log(cdf(x, a, b, loc, scale))


def logsf(x: Array, a: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log`` of :func:`sf`."""
    return pnp.log(sf(x, a, b, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
