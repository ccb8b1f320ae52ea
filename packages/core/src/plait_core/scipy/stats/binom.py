"""The binomial distribution of ``n`` trials with success probability ``p``
(``jax.scipy.stats.binom``)."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array
from plait_core.scipy.stats._discrete import support


def logpmf(k: Array, n: Array, p: Array, loc: Array = 0) -> Array:
    """``log C(n, k) + k log p + (n - k) log(1 - p)`` at integers ``0 <= k - loc <= n``."""
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    valid, ks = support(k - loc, 0, n)
    comb = special.gammaln(n + 1) - special.gammaln(ks + 1) - special.gammaln(n - ks + 1)
    return pnp.where(valid, comb + special.xlogy(ks, p) + special.xlog1py(n - ks, -p), -np.inf)


def pmf(k: Array, n: Array, p: Array, loc: Array = 0) -> Array:
    """The probability of ``k``."""
    return pnp.exp(logpmf(k, n, p, loc))


__all__ = ["logpmf", "pmf"]
