"""The wrapped Cauchy distribution on ``[0, 2 pi]`` with shape ``0 < c < 1``
(``jax.scipy.stats.wrapcauchy``)."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy.stats._common import Array


def logpdf(x: Array, c: Array) -> Array:
    """``log(1 - c**2) - log(2 pi) - log(1 + c**2 - 2 c cos x)`` on ``[0, 2 pi]``,
    ``-inf`` outside; NaN for ``c`` outside ``(0, 1)``."""
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    value = pnp.log1p(-c * c) - np.log(2 * np.pi) - pnp.log(1 + c * c - 2 * c * pnp.cos(x))
    value = pnp.where((x >= 0) & (x <= 2 * np.pi), value, -np.inf)
    return pnp.where((c > 0) & (c < 1), value, np.nan)


def pdf(x: Array, c: Array) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, c))


__all__ = ["logpdf", "pdf"]
