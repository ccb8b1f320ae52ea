"""The normal distribution truncated to ``[a, b]`` (in standard units:
``z = (x - loc) / scale``) (``jax.scipy.stats.truncnorm``).  Log-probabilities
are differences of ``log_ndtr`` taken on the side of the tail that keeps them
accurate."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array, standardised


def _log_diff(log_hi: Array, log_lo: Array) -> Array:
    """``log(exp(log_hi) - exp(log_lo))`` for ``log_hi >= log_lo``."""
    return log_hi + pnp.log1p(-pnp.exp(log_lo - log_hi))


def _log_mass(lo: Array, hi: Array) -> Array:
    """``log(Phi(hi) - Phi(lo))``, from the upper tail when ``lo > 0``."""
    upper = _log_diff(special.log_ndtr(-lo), special.log_ndtr(-hi))
    lower = _log_diff(special.log_ndtr(hi), special.log_ndtr(lo))
    return pnp.where(lo > 0, upper, lower)


def logpdf(x: Array, a: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``-z**2/2 - log(sqrt(2 pi) scale) - log(Phi(b) - Phi(a))`` on ``[a, b]``, ``-inf`` outside."""
    z, a, b, scale = standardised("truncnorm.logpdf", x, a, b, loc, scale)
    value = -0.5 * z * z - 0.5 * np.log(2 * np.pi) - pnp.log(scale) - _log_mass(a, b)
    return pnp.where((z >= a) & (z <= b), value, -np.inf)


def pdf(x: Array, a: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x: Array, a: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log((Phi(z) - Phi(a)) / (Phi(b) - Phi(a)))``: ``-inf`` below ``a``, 0 above ``b``."""
    z, a, b, _ = standardised("truncnorm.logcdf", x, a, b, loc, scale)
    zc = pnp.clip(z, a, b)
    value = _log_mass(a, zc) - _log_mass(a, b)
    return pnp.where(z <= a, -np.inf, pnp.where(z >= b, 0.0, value))


def cdf(x: Array, a: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The probability of values at most ``x``."""
    return pnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x: Array, a: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log((Phi(b) - Phi(z)) / (Phi(b) - Phi(a)))``: 0 below ``a``, ``-inf`` above ``b``."""
    z, a, b, _ = standardised("truncnorm.logsf", x, a, b, loc, scale)
    zc = pnp.clip(z, a, b)
    value = _log_mass(zc, b) - _log_mass(a, b)
    return pnp.where(z <= a, 0.0, pnp.where(z >= b, -np.inf, value))


def sf(x: Array, a: Array, b: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The probability of values above ``x``."""
    return pnp.exp(logsf(x, a, b, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
