"""The Laplace distribution ``exp(-|z|) / 2`` with ``z = (x - loc) / scale``
(``jax.scipy.stats.laplace``)."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.scipy.stats._common import Array, standardised

_LOG2 = float(np.log(2.0))


def logpdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``-|z| - log(2 scale)``."""
    z, scale = standardised("laplace.logpdf", x, loc, scale)
    return -pnp.abs(z) - _LOG2 - pnp.log(scale)


def pdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, loc, scale))


def cdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``exp(z) / 2`` below ``loc``, ``1 - exp(-z) / 2`` above."""
    z, _ = standardised("laplace.cdf", x, loc, scale)
    return pnp.where(z < 0, 0.5 * pnp.exp(pnp.minimum(z, 0)), 1 - 0.5 * pnp.exp(-pnp.maximum(z, 0)))


__all__ = ["cdf", "logpdf", "pdf"]
