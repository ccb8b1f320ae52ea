"""Modified Bessel functions of the first kind, orders 0 and 1, plain and
exponentially scaled (``i0``, ``i0e``, ``i1``, ``i1e``), from their power series
(small ``|x|``) and their large-argument asymptotic expansions.

Both branches are ordinary compositions of ``plait.numpy`` operations, each fed
an argument clamped to its own region, so derivatives of every order (and
``vmap``) come from the definitions and never see the other branch's
singularities.  Shared by ``plait.numpy.i0`` and ``plait.scipy.special``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from plait_core.numpy import creation as _creation
from plait_core.numpy import logic as _logic
from plait_core.numpy import math as _math

Array = Any

_SWITCH = 15.0  # below: the series (40 terms); above: the asymptotic expansion (12 terms)
_SERIES_TERMS = 40
_ASYMPTOTIC_TERMS = 12


def _series(x: Array, order: int) -> Array:
    """``sum_k (x/2)**(2k+order) / (k! (k+order)!)`` for ``|x| <= _SWITCH``."""
    q = _math.square(x / 2)
    term = (x / 2) ** order / math.factorial(order) if order else _creation.ones_like(x)
    total = term
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + order))
        total = total + term
    return total


def _asymptotic_scaled(ax: Array, order: int) -> Array:
    """``e**-|x| I_order(|x|)`` for large ``|x|``: ``(2 pi x)**-1/2 sum_k c_k / x**k``
    with ``c_k = (-1)**k prod_{j<=k} (4 order**2 - (2j-1)**2) / (k! 8**k)``."""
    mu = 4 * order * order
    coeff = 1.0
    total = _creation.ones_like(ax)
    inv = 1 / ax
    power = _creation.ones_like(ax)
    for k in range(1, _ASYMPTOTIC_TERMS):
        coeff *= -(mu - (2 * k - 1) ** 2) / (k * 8)
        power = power * inv
        total = total + coeff * power
    return total / _math.sqrt(2 * np.pi * ax)


def _bessel(x: Array, order: int, scaled: bool) -> Array:
    x = _creation.asarray(x)
    ax = _math.abs(x)
    small = ax <= _SWITCH
    xs = _logic.where(small, x, 0)
    series = _series(xs, order)
    if scaled:
        series = series * _math.exp(-_math.abs(xs))
    big = _logic.where(small, _SWITCH + 1, ax)
    asym = _asymptotic_scaled(big, order)
    if not scaled:
        asym = asym * _math.exp(big)
    if order % 2:
        asym = _logic.where(x < 0, -asym, asym)
    return _logic.where(small, series, asym)


def bessel_i0(x: Array) -> Array:
    """``I0(x)``."""
    return _bessel(x, 0, scaled=False)


def bessel_i0e(x: Array) -> Array:
    """``exp(-|x|) I0(x)``."""
    return _bessel(x, 0, scaled=True)


def bessel_i1(x: Array) -> Array:
    """``I1(x)`` (odd in ``x``)."""
    return _bessel(x, 1, scaled=False)


def bessel_i1e(x: Array) -> Array:
    """``exp(-|x|) I1(x)``."""
    return _bessel(x, 1, scaled=True)
