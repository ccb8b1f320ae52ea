"""The normal distribution with mean ``loc`` and standard deviation ``scale``
(``jax.scipy.stats.norm``).  All arguments broadcast together; integer inputs
are computed in the default float dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy import special

Array = Any

_LOG_SQRT_2PI = float(0.5 * np.log(2 * np.pi))
_SQRT2 = float(np.sqrt(2.0))


def logpdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log`` of the density ``exp(-z**2 / 2) / (scale * sqrt(2 pi))``, ``z = (x - loc) / scale``."""
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -0.5 * z * z - _LOG_SQRT_2PI - pnp.log(scale)


def pdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, loc, scale))


def cdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``P(X <= x)``, as ``erfc(-z / sqrt 2) / 2``, so the left tail keeps its relative precision."""
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    return 0.5 * special.erfc(-(x - loc) / (scale * _SQRT2))


def logcdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log P(X <= x)``.  Computed as ``log(cdf)``: ``-inf`` once the cdf underflows
    (``z < -13`` in float32), where JAX uses an asymptotic series."""
    return pnp.log(cdf(x, loc, scale))


def sf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The survival function ``P(X > x) = 1 - cdf``, computed as ``erfc(z / sqrt 2) / 2``."""
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return 0.5 * special.erfc((x - loc) / (scale * _SQRT2))


def ppf(q: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The quantile function (inverse of :func:`cdf`): ``-inf`` at 0, ``inf`` at 1,
    NaN outside ``[0, 1]``.  Computed as ``loc + scale * sqrt 2 * erfinv(2q - 1)``,
    so quantiles of ``q`` below the dtype's epsilon lose precision."""
    q, loc, scale = promote_args_inexact("norm.ppf", q, loc, scale)
    return loc + scale * _SQRT2 * special.erfinv(2 * q - 1)


def logsf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log P(X > x)``, as ``log(sf)``."""
    return pnp.log(sf(x, loc, scale))


def isf(q: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The inverse survival function: ``loc + scale * sqrt 2 * erfinv(1 - 2q)``."""
    q, loc, scale = promote_args_inexact("norm.isf", q, loc, scale)
    return loc + scale * _SQRT2 * special.erfinv(1 - 2 * q)


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
