"""The generalised normal distribution with shape ``beta``, density
``beta / (2 Gamma(1/beta)) exp(-|x|**beta)`` (``jax.scipy.stats.gennorm``)."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array


def logpdf(x: Array, beta: Array) -> Array:
    """``log(beta) - log 2 - log Gamma(1/beta) - |x|**beta``."""
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return pnp.log(beta) - np.log(2.0) - special.gammaln(1 / beta) - pnp.abs(x) ** beta


def pdf(x: Array, beta: Array) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, beta))


def cdf(x: Array, beta: Array) -> Array:
    """``1/2 + sign(x) P(1/beta, |x|**beta) / 2``."""
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    return 0.5 + 0.5 * pnp.sign(x) * special.gammainc(1 / beta, pnp.abs(x) ** beta)


__all__ = ["cdf", "logpdf", "pdf"]
