"""The Poisson distribution with mean ``mu`` on ``k = x - loc``
(``jax.scipy.stats.poisson``).  ``entropy`` is not provided: it is an
infinite series JAX sums to a data-dependent length."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array


def logpmf(k: Array, mu: Array, loc: Array = 0) -> Array:
    """``k log(mu) - mu - lgamma(k + 1)`` at non-negative integers ``k``, ``-inf`` elsewhere."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    k = k - loc
    valid = (k >= 0) & (k == pnp.floor(k))
    safe = pnp.where(valid, k, 0)
    return pnp.where(valid, special.xlogy(safe, mu) - mu - special.gammaln(safe + 1), -np.inf)


def pmf(k: Array, mu: Array, loc: Array = 0) -> Array:
    """The probability of ``k``."""
    return pnp.exp(logpmf(k, mu, loc))


def cdf(k: Array, mu: Array, loc: Array = 0) -> Array:
    """``P(K <= k) = Q(floor(k) + 1, mu)`` (0 below ``loc``)."""
    k, mu, loc = promote_args_inexact("poisson.cdf", k, mu, loc)
    k = k - loc
    return pnp.where(k < 0, 0, special.gammaincc(pnp.floor(pnp.maximum(k, 0)) + 1, mu))


__all__ = ["cdf", "logpmf", "pmf"]
