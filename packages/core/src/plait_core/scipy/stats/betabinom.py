"""The beta-binomial distribution (``jax.scipy.stats.betabinom``)."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array
from plait_core.scipy.stats._discrete import support


def logpmf(k: Array, n: Array, a: Array, b: Array, loc: Array = 0) -> Array:
    """``log C(n, k) + log B(k + a, n - k + b) - log B(a, b)`` at integers ``0 <= k - loc <= n``."""
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    valid, ks = support(k - loc, 0, n)
    comb = special.gammaln(n + 1) - special.gammaln(ks + 1) - special.gammaln(n - ks + 1)
    value = comb + special.betaln(ks + a, n - ks + b) - special.betaln(a, b)
    return pnp.where(valid, value, -np.inf)


def pmf(k: Array, n: Array, a: Array, b: Array, loc: Array = 0) -> Array:
    """The probability of ``k``."""
    return pnp.exp(logpmf(k, n, a, b, loc))


__all__ = ["logpmf", "pmf"]
