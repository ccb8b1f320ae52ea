"""The von Mises distribution on the circle, density
``exp(kappa cos x) / (2 pi I0(kappa))`` (``jax.scipy.stats.vonmises``)."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy import special
from plait_core.scipy.stats._common import Array


def logpdf(x: Array, kappa: Array) -> Array:
    """``kappa (cos x - 1) - log(2 pi i0e(kappa))`` (stable for large ``kappa``);
    NaN for ``kappa < 0``."""
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    value = kappa * (pnp.cos(x) - 1) - np.log(2 * np.pi) - pnp.log(special.i0e(kappa))
    return pnp.where(kappa < 0, np.nan, value)


def pdf(x: Array, kappa: Array) -> Array:
    """The density at ``x``."""
    return pnp.exp(logpdf(x, kappa))


__all__ = ["logpdf", "pdf"]
