"""The uniform distribution on ``[loc, loc + scale]`` (``jax.scipy.stats.uniform``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact

Array = Any


def logpdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``-log(scale)`` inside ``[loc, loc + scale]`` (ends included), ``-inf`` outside."""
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return pnp.where(inside, -pnp.log(scale), -np.inf)


def pdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``1 / scale`` inside ``[loc, loc + scale]``, 0 outside."""
    return pnp.exp(logpdf(x, loc, scale))


def cdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``(x - loc) / scale`` clipped to ``[0, 1]``."""
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    return pnp.clip((x - loc) / scale, 0, 1)


def ppf(q: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The quantile ``loc + q * scale`` (NaN outside ``[0, 1]``)."""
    q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
    return pnp.where((q < 0) | (q > 1), np.nan, loc + q * scale)


__all__ = ["cdf", "logpdf", "pdf", "ppf"]
