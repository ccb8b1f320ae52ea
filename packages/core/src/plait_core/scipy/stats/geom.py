"""The geometric distribution: the number of trials up to the first success,
``k >= 1`` (``jax.scipy.stats.geom``)."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array
from plait_core.scipy.stats._discrete import support


def logpmf(k: Array, p: Array, loc: Array = 0) -> Array:
    """``(k - 1) log(1 - p) + log p`` at integers ``k - loc >= 1``, ``-inf`` elsewhere."""
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    valid, ks = support(k - loc, 1)
    return pnp.where(valid, special.xlog1py(ks - 1, -p) + pnp.log(p), -np.inf)


def pmf(k: Array, p: Array, loc: Array = 0) -> Array:
    """The probability of ``k``."""
    return pnp.exp(logpmf(k, p, loc))


__all__ = ["logpmf", "pmf"]
