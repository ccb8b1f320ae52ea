"""Polynomial arithmetic on coefficient arrays (highest degree first), as
``jax.numpy``: ``poly``, ``polyadd``, ``polysub``, ``polymul``, ``polydiv``,
``polyder``, ``polyint``, ``polyfit`` and ``roots``.  Degrees are static, so the
programs are unrolled arithmetic (``polyfit`` and ``roots`` use ``linalg``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core.numpy import creation as _creation
from plait_core.numpy import dtypes as _np_dtypes
from plait_core.numpy import editing as _editing
from plait_core.numpy import linalg as _linalg
from plait_core.numpy import math as _math
from plait_core.numpy import polynomial as _polynomial
from plait_core.numpy import reductions as _reductions
from plait_core.numpy import signal as _signal
from plait_core.numpy._util import ArrayLike, as_array, promote_dtypes_inexact, promote_dtypes_numeric
from plait_core.numpy.pad import pad
from plait_core.numpy.shape import broadcast_to, concatenate, stack
from plait_core.numpy.updates import scatter_update
from plait_core.trace import concrete_or_error

Array = Any


def _coeffs(p: ArrayLike, name: str) -> Array:
    a = as_array(p, name)
    if a.ndim != 1:
        raise ValueError(f"{name}: the coefficients must be a 1-D array, got shape {a.shape}")
    return a


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Array:
    """The sum of two polynomials (the shorter is padded at the front)."""
    a1, a2 = promote_dtypes_numeric("polyadd", _coeffs(a1, "polyadd"), _coeffs(a2, "polyadd"))
    n = max(a1.shape[0], a2.shape[0])
    return pad(a1, (n - a1.shape[0], 0)) + pad(a2, (n - a2.shape[0], 0))


def polysub(a1: ArrayLike, a2: ArrayLike) -> Array:
    """The difference of two polynomials."""
    return polyadd(a1, -_creation.asarray(a2))


def polymul(a1: ArrayLike, a2: ArrayLike, *, trim_leading_zeros: bool = False) -> Array:
    """The product of two polynomials (a full convolution of the coefficients);
    ``trim_leading_zeros`` (concrete inputs) drops leading zeros first."""
    a1, a2 = promote_dtypes_numeric("polymul", _coeffs(a1, "polymul"), _coeffs(a2, "polymul"))
    if trim_leading_zeros:
        a1, a2 = _editing.trim_zeros(a1, "f"), _editing.trim_zeros(a2, "f")
    if a1.shape[0] == 0 or a2.shape[0] == 0:
        return _creation.zeros((1,), a1.dtype)
    return _signal.convolve(a1, a2, mode="full")


def polydiv(u: ArrayLike, v: ArrayLike, *, trim_leading_zeros: bool = False) -> tuple[Array, Array]:
    """``(quotient, remainder)`` of polynomial long division of ``u`` by ``v`` (the
    remainder keeps ``u``'s length; ``trim_leading_zeros`` strips its leading zeros,
    which needs concrete values)."""
    u, v = promote_dtypes_inexact("polydiv", _coeffs(u, "polydiv"), _coeffs(v, "polydiv"))
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1 / v[0]
    q = _creation.zeros((max(m - n + 1, 1),), u.dtype)
    r = u
    for k in range(0, m - n + 1):
        d = scale * r[k]
        q = scatter_update(q, k, d, "set")
        r = scatter_update(r, slice(k, k + n + 1), -d * v, "add")
    if trim_leading_zeros:
        r = _editing.trim_zeros(r, "f")
    return q, r


def polyder(p: ArrayLike, m: int = 1) -> Array:
    """The ``m``-th derivative of the polynomial."""
    if m < 0:
        raise ValueError(f"polyder: the order of derivative must be non-negative, got {m}")
    c = _coeffs(p, "polyder")
    for _ in range(m):
        n = c.shape[0] - 1
        if n <= 0:
            return _creation.zeros((0,), c.dtype)
        c = c[:-1] * _creation.arange(n, 0, -1).astype(c.dtype)
    return c


def polyint(p: ArrayLike, m: int = 1, k: ArrayLike | None = None) -> Array:
    """The ``m``-th antiderivative; ``k`` gives the integration constants (a scalar
    or ``m`` values, the first for the first integration), zero by default."""
    if m < 0:
        raise ValueError(f"polyint: the order of integral must be non-negative, got {m}")
    (c,) = promote_dtypes_inexact("polyint", _coeffs(p, "polyint"))
    ks = _creation.zeros((m,), c.dtype) if k is None else broadcast_to(_creation.asarray(k, c.dtype), (m,))
    for i in range(m):
        n = c.shape[0]
        c = concatenate([c / _creation.arange(n, 0, -1).astype(c.dtype), ks[i][None]])
    return c


def poly(seq_of_zeros: ArrayLike) -> Array:
    """Coefficients of the monic polynomial with the given roots (of a square
    matrix: of its characteristic polynomial)."""
    z = as_array(seq_of_zeros, "poly")
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        z = _linalg.eigvals(z)
    elif z.ndim != 1:
        raise ValueError(f"poly: input must be a 1-D array or a square 2-D array, got shape {z.shape}")
    (z,) = promote_dtypes_inexact("poly", z)
    c = _creation.ones((1,), z.dtype)
    for i in range(z.shape[0]):
        c = _signal.convolve(c, stack([_creation.ones((), z.dtype), -z[i]]), mode="full")
    return c


def polyfit(x: ArrayLike, y: ArrayLike, deg: int, rcond: float | None = None, full: bool = False,
            w: ArrayLike | None = None, cov: bool = False) -> Any:
    """Least-squares polynomial fit of degree ``deg`` (coefficients, highest first;
    ``y`` may have a second axis of independent data sets).  ``full=True`` also
    returns the residuals, rank, singular values and ``rcond``."""
    if deg < 0:
        raise ValueError(f"polyfit: expected deg >= 0, got {deg}")
    if cov:
        raise NotImplementedError("polyfit: cov=True is not supported")
    x, y = promote_dtypes_inexact("polyfit", x, y)
    if x.ndim != 1 or y.ndim not in (1, 2) or x.shape[0] != y.shape[0]:
        raise TypeError(f"polyfit: expected x 1-D and y 1-D or 2-D of the same length, got {x.shape}, {y.shape}")
    order = deg + 1
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(np.dtype(x.dtype)).eps)
    lhs = _polynomial.vander(x, order)
    rhs = y
    if w is not None:
        wa = _creation.asarray(w, x.dtype)
        lhs = lhs * wa[:, None]
        rhs = rhs * (wa[:, None] if rhs.ndim == 2 else wa)
    scale = _math.sqrt(_reductions.sum(lhs * lhs, axis=0))
    c, resids, rank, s = _linalg.lstsq(lhs / scale, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, rcond
    return c


def roots(p: ArrayLike, *, strip_zeros: bool = True) -> Array:
    """The roots of the polynomial (eigenvalues of its companion matrix), complex.
    ``strip_zeros`` removes leading zeros (and adds roots at 0 for trailing
    zeros), which needs concrete coefficients."""
    c = _coeffs(p, "roots")
    trailing = 0
    if strip_zeros:
        values = np.asarray(concrete_or_error(c, "roots' coefficients with strip_zeros=True"))
        nz = np.nonzero(values)[0]
        if nz.size == 0:
            return _creation.zeros((0,), _np_dtypes.promote_types(c.dtype, np.complex64))
        trailing = values.shape[0] - 1 - int(nz[-1])
        c = c[int(nz[0]):int(nz[-1]) + 1]
    (c,) = promote_dtypes_inexact("roots", c)
    n = c.shape[0] - 1
    if n < 1:
        found = _creation.zeros((0,), _np_dtypes.promote_types(c.dtype, np.complex64))
    else:
        companion = _creation.zeros((n, n), c.dtype)
        companion = scatter_update(companion, 0, -c[1:] / c[0], "set")
        if n > 1:
            companion = scatter_update(companion, (_creation.arange(1, n), _creation.arange(n - 1)), 1, "set")
        found = _linalg.eigvals(companion)
    if trailing:
        found = concatenate([_creation.zeros((trailing,), found.dtype), found])
    return found


__all__ = ["poly", "polyadd", "polyder", "polydiv", "polyfit", "polyint", "polymul", "polysub", "roots"]
