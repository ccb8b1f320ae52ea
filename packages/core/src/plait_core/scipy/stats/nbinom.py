"""The negative binomial distribution: failures before the ``n``-th success
(``jax.scipy.stats.nbinom``)."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array
from plait_core.scipy.stats._discrete import support


def logpmf(k: Array, n: Array, p: Array, loc: Array = 0) -> Array:
    """``log C(k + n - 1, k) + n log p + k log(1 - p)`` at integers ``k - loc >= 0``."""
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    valid, ks = support(k - loc)
    comb = special.gammaln(n + ks) - special.gammaln(ks + 1) - special.gammaln(n)
    return pnp.where(valid, comb + special.xlogy(n, p) + special.xlog1py(ks, -p), -np.inf)


def pmf(k: Array, n: Array, p: Array, loc: Array = 0) -> Array:
    """The probability of ``k``."""
    return pnp.exp(logpmf(k, n, p, loc))


__all__ = ["logpmf", "pmf"]
