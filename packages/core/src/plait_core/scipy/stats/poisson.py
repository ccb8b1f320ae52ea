"""The Poisson distribution with mean ``mu`` on ``k = x - loc``
(``jax.scipy.stats.poisson``)."""

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


# Below _ENTROPY_LARGE the entropy is summed over k < _ENTROPY_TERMS (past
# mu + 10 sqrt(mu) + 20 for every such mu: the terms left out are below 1e-20);
# from it on the asymptotic expansion's error is below 1e-9.
_ENTROPY_LARGE = 100.0
_ENTROPY_TERMS = 240


def entropy(mu: Array, loc: Array = 0) -> Array:
    """The Shannon entropy ``-sum_k p(k) log p(k)`` of the Poisson distribution
    (``loc`` shifts the support and leaves it unchanged).

    For ``mu < 100`` the series is summed over ``k < 240`` (a fixed length, so it
    differentiates and batches); from 100 on the asymptotic expansion
    ``log(2 pi e mu)/2 - 1/(12 mu) - 1/(24 mu**2) - 19/(360 mu**3)`` is used.
    0 at ``mu = 0``, ``inf`` at ``inf``, NaN for ``mu < 0`` and NaN."""
    mu, loc = promote_args_inexact("poisson.entropy", mu, loc)
    mu = mu + pnp.zeros_like(loc)
    small = (mu > 0) & (mu < _ENTROPY_LARGE)
    m = pnp.where(small, mu, 1.0)[..., None]
    k = pnp.arange(_ENTROPY_TERMS).astype(mu.dtype)
    logp = special.xlogy(k, m) - m - special.gammaln(k + 1)
    summed = -pnp.sum(pnp.exp(logp) * logp, axis=-1)
    big = pnp.where(mu >= _ENTROPY_LARGE, mu, _ENTROPY_LARGE)
    inv = 1 / big
    asymptotic = 0.5 * pnp.log(2 * np.pi * np.e * big) - inv * (1 / 12 + inv * (1 / 24 + inv * (19 / 360)))
    out = pnp.where(small, summed, asymptotic)
    return pnp.where(mu == 0, 0.0, pnp.where((mu < 0) | pnp.isnan(mu), np.nan, out))


__all__ = ["cdf", "entropy", "logpmf", "pmf"]
