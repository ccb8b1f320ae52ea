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


__all__ = ["logpdf", "pdf"]
