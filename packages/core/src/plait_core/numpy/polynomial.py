"""Polynomials by their coefficients: ``polyval`` and ``vander``.

Both unroll a static number of multiply-adds (the degree), so the staged
program grows with the degree and differentiates like any arithmetic.
"""

from __future__ import annotations

import builtins

from plait_core import lax
from plait_core.abstract import get_aval
from plait_core.lax import _lenient
from plait_core.numpy._util import Array, ArrayLike, as_array, concrete_int, promote_dtypes, shape_str
from plait_core.numpy.creation import ones_like, zeros
from plait_core.numpy.math import add, multiply
from plait_core.numpy.shape import broadcast_shapes, stack


def _static(d: object, name: str, what: str) -> int:
    if type(d) is not builtins.int:
        raise ValueError(f"{name}: {what} must have a constant length, got {d}")
    return d


def polyval(p: ArrayLike, x: ArrayLike, *, unroll: int = 16) -> Array:
    """The polynomial with coefficients ``p`` (highest degree first, along
    ``p``'s first axis; further axes broadcast with ``x``) at ``x``, by
    Horner's rule.  ``unroll`` is accepted for JAX compatibility (the loop is
    always unrolled: its length is the static degree)."""
    del unroll
    name = "polyval"
    coeffs, xv = promote_dtypes(name, as_array(p, name, "p"), as_array(x, name, "x"))
    pa = get_aval(coeffs)
    if pa.ndim == 0:
        raise ValueError(f"{name}: p must be at least 1-D (the coefficients), got a scalar")
    n = _static(pa.shape[0], name, "p")
    shape = broadcast_shapes(tuple(pa.shape[1:]), tuple(get_aval(xv).shape))
    y = zeros(shape, pa.dtype)
    for i in range(n):
        y = add(multiply(y, xv), lax.index_in_dim(coeffs, i, 0, False))
    return y


def vander(x: ArrayLike, N: int | None = None, increasing: builtins.bool = False) -> Array:
    """The Vandermonde matrix of the 1-D ``x``: column ``j`` is
    ``x ** (N - 1 - j)`` (``x ** j`` with ``increasing``); ``N`` defaults to
    ``len(x)``."""
    name = "vander"
    xv = as_array(x, name, "x")
    if get_aval(xv).ndim != 1:
        raise ValueError(f"{name}: x must be 1-D, got shape {shape_str(get_aval(xv).shape)}")
    n = _static(get_aval(xv).shape[0], name, "x") if N is None else concrete_int(N, f"{name}: N")
    if n < 0:
        raise ValueError(f"{name}: N must be non-negative, got {n}")
    columns: list[Array] = []
    power = ones_like(xv)
    for _ in range(n):
        columns.append(power)
        power = _lenient.mul(power, xv)
    if not increasing:
        columns.reverse()
    if not columns:
        return zeros((get_aval(xv).shape[0], 0), get_aval(xv).dtype)
    return stack(columns, axis=1)
