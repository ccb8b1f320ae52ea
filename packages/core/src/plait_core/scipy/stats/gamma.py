"""The gamma distribution with shape ``a``: density ``z**(a-1) exp(-z) / Gamma(a)``
for ``z = (x - loc) / scale >= 0`` (``jax.scipy.stats.gamma``).  The
distribution functions are not provided: they need the regularised
incomplete gamma function, which ``plait.scipy.special`` does not have."""

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


__all__ = ["logpdf", "pdf"]
