"""The multinomial distribution of ``n`` draws over categories with
probabilities ``p`` (last axis) (``jax.scipy.stats.multinomial``)."""

from __future__ import annotations

import numpy as np

from plait_core import dtypes
from plait_core import numpy as pnp
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array


def logpmf(x: Array, n: Array, p: Array) -> Array:
    """``log n! + sum(x log p - log x!)`` over the last axis where ``sum(x) == n``,
    ``-inf`` elsewhere.  ``x`` and ``n`` must be integers (as in JAX)."""
    x, n = pnp.asarray(x), pnp.asarray(n)
    if not (dtypes.is_int(np.dtype(x.dtype)) and dtypes.is_int(np.dtype(n.dtype))):
        raise ValueError(f"multinomial.logpmf: x and n must be of integer type; got x.dtype={x.dtype}, "
                         f"n.dtype={n.dtype}")
    p = pnp.asarray(p)
    ft = pnp.result_type(p, pnp.float32)
    xf, nf = x.astype(ft), n.astype(ft)
    value = special.gammaln(nf + 1) + pnp.sum(special.xlogy(xf, p) - special.gammaln(xf + 1), axis=-1)
    return pnp.where(pnp.sum(x, axis=-1) == n, value, -np.inf)


def pmf(x: Array, n: Array, p: Array) -> Array:
    """The probability of the counts ``x``."""
    return pnp.exp(logpmf(x, n, p))


__all__ = ["logpmf", "pmf"]
