"""The logistic distribution, density ``sigmoid(z) * sigmoid(-z)`` with
``z = (x - loc) / scale`` (``jax.scipy.stats.logistic``)."""

from __future__ import annotations

from plait_core import nn
from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array, standardised


def logpdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``log sigmoid(z) + log sigmoid(-z) - log(scale)``, stable for large ``|z|``."""
    z, scale = standardised("logistic.logpdf", x, loc, scale)
    return nn.log_sigmoid(z) + nn.log_sigmoid(-z) - pnp.log(scale)


def pdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, loc, scale))


def cdf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``sigmoid(z)``."""
    z, _ = standardised("logistic.cdf", x, loc, scale)
    return special.expit(z)


def sf(x: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """``sigmoid(-z)``."""
    z, _ = standardised("logistic.sf", x, loc, scale)
    return special.expit(-z)


def ppf(q: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The quantile ``loc + scale * logit(q)``."""
    q, loc, scale = promote_args_inexact("logistic.ppf", q, loc, scale)
    return loc + scale * special.logit(q)


def isf(q: Array, loc: Array = 0, scale: Array = 1) -> Array:
    """The inverse survival function ``loc - scale * logit(q)``."""
    q, loc, scale = promote_args_inexact("logistic.isf", q, loc, scale)
    return loc - scale * special.logit(q)


__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]
