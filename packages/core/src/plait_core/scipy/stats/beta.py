"""The beta distribution with shapes ``a`` and ``b`` on ``z = (x - loc) / scale``
in ``[0, 1]`` (``jax.scipy.stats.beta``).  The distribution functions are
not provided: they need the regularised incomplete beta function, which
``plait.scipy.special`` does not have."""

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


__all__ = ["logpdf", "pdf"]
