"""Student's t distribution with ``df`` degrees of freedom
(``jax.scipy.stats.t``)."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array, standardised


def logpdf(x: Array, df: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``lgamma((df + 1) / 2) - lgamma(df / 2) - log(pi df) / 2 - log(scale)
    - (df + 1) / 2 * log1p(z**2 / df)``."""
    z, df, scale = standardised("t.logpdf", x, df, loc, scale)
    half = 0.5 * (df + 1)
    norm = special.gammaln(half) - special.gammaln(0.5 * df) - 0.5 * pnp.log(np.pi * df) - pnp.log(scale)
    return norm - half * pnp.log1p(z * z / df)


def pdf(x: Array, df: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, df, loc, scale))


__all__ = ["logpdf", "pdf"]
