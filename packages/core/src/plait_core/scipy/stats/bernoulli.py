"""The Bernoulli distribution (``jax.scipy.stats.bernoulli``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy import special

Array = Any


def logpmf(k: Array, p: Array, loc: Array = 0) -> Array:
    """``log P(K = k)`` for ``K - loc ~ Bernoulli(p)``: ``log p`` at ``k - loc == 1``,
    ``log(1 - p)`` at 0, ``-inf`` elsewhere (``0 * log 0`` counts as 0, so
    ``logpmf(1, 1) == 0``)."""
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_prob = special.xlogy(x, p) + special.xlog1py(1 - x, -p)
    return pnp.where((x == 0) | (x == 1), log_prob, -np.inf)


def pmf(k: Array, p: Array, loc: Array = 0) -> Array:
    """``P(K = k)``: ``exp`` of :func:`logpmf`."""
    return pnp.exp(logpmf(k, p, loc))


__all__ = ["logpmf", "pmf"]
