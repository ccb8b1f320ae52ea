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


def cdf(k: Array, p: Array, loc: Array = 0) -> Array:
    """``P(K <= k)``: 0 below ``loc``, ``1 - p`` up to ``loc + 1``, then 1."""
    k, p, loc = promote_args_inexact("bernoulli.cdf", k, p, loc)
    x = k - loc
    return pnp.where(x < 0, 0, pnp.where(x < 1, 1 - p, 1))


def ppf(q: Array, p: Array) -> Array:
    """The smallest ``k`` with ``cdf(k) >= q``: 0 for ``q <= 1 - p``, else 1 (NaN
    outside ``[0, 1]``)."""
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    return pnp.where((q < 0) | (q > 1), np.nan, pnp.where(q <= 1 - p, 0, 1))


__all__ = ["cdf", "logpmf", "pmf", "ppf"]
