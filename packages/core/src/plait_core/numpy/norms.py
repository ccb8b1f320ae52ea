"""Vector and matrix norms: ``linalg.norm``, ``linalg.vector_norm`` and
``linalg.matrix_norm`` (re-exported by :mod:`plait_core.numpy.linalg`, so
``plait.numpy.linalg.norm`` works as ``jax.numpy.linalg.norm`` does).

Vector norms take any real ``ord``: ``inf`` and ``-inf`` are the largest and
smallest magnitude, ``0`` counts the non-zero entries, and any other ``p`` is
``sum(|x| ** p) ** (1 / p)``.  Matrix norms take ``'fro'``, ``1``, ``-1``,
``inf`` and ``-inf``, and from the singular values ``'nuc'`` (their sum),
``2`` (the largest) and ``-2`` (the smallest).  Integer and boolean inputs
give results of the default floating dtype.

Gradients never come out NaN where the norm is zero: the square root and the
``1 / p`` power are taken of a stand-in value where their argument is 0, and
``|x| ** p`` (``p > 0``) of one where an entry is 0, and those places are
given their value (0) by a select, so the zero vector has the zero gradient
(a subgradient of every norm there).  This differs on purpose from JAX,
whose ``norm`` differentiates to NaN at the zero vector.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.eager_staging import staged_when_eager
from plait_core.lax import _lenient
from plait_core.lax.factorizations import svd
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    as_array,
    canonicalize_axes,
    convert,
    dtype_of,
    to_inexact,
)
from plait_core.numpy.logic import where
from plait_core.numpy.math import abs as abs_
from plait_core.numpy.math import power, sqrt
from plait_core.numpy.reductions import max as max_
from plait_core.numpy.reductions import min as min_
from plait_core.numpy.reductions import sum as sum_

_VECTOR_ORDS = "any real number, inf, -inf or 0"
_MATRIX_ORDS = "'fro', 'nuc', 1, -1, 2, -2, inf or -inf"


def _inexact(x: ArrayLike, name: str) -> Array:
    """``x`` as an array of a floating dtype (integers and booleans converted)."""
    x = as_array(x, name)
    dt = dtype_of(x)
    if not dtypes.is_inexact(dt):
        x = convert(x, to_inexact(dt))
    return x


def _magnitude(x: Array) -> Array:
    return abs_(x)


def _where_zero(test: Array, when_zero: Any, otherwise: Array) -> Array:
    """``when_zero`` where ``test == 0``, else ``otherwise`` (same dtype)."""
    zero = _lenient.eq(test, convert(0, dtype_of(test)))
    return where(zero, convert(when_zero, dtype_of(otherwise)), otherwise)


def _safe_root(total: Array, p: float) -> Array:
    """``total ** (1 / p)`` for ``total >= 0``, with value and gradient 0 at 0."""
    stand_in = _where_zero(total, 1, total)
    root = sqrt(stand_in) if p == 2 else power(stand_in, convert(1.0 / p, dtype_of(total)))
    return _where_zero(total, 0, root)


def _safe_power(a: Array, p: float) -> Array:
    """``a ** p`` for ``a >= 0`` and ``p > 0``, with gradient 0 where ``a`` is 0."""
    if p == 2:
        return _lenient.mul(a, a)
    stand_in = _where_zero(a, 1, a)
    return _where_zero(a, 0, power(stand_in, convert(p, dtype_of(a))))


def _is_order(value: Any, target: float) -> builtins.bool:
    return not isinstance(value, str) and value is not None and builtins.bool(value == target)


def _order(ord: Any, name: str) -> Any:
    """``ord`` checked to be None, a string, or a real number (a NumPy scalar
    or a concrete 0-d value is taken by its value)."""
    if ord is None or isinstance(ord, str):
        return ord
    if isinstance(ord, (builtins.int, builtins.float)) and not isinstance(ord, builtins.bool):
        return ord
    try:
        value = builtins.float(ord)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: ord must be None, a string or a real number, got {ord!r}"[:300]) from None
    return value


def _vector(x: Array, ord: Any, axes: tuple[int, ...], keepdims: builtins.bool, name: str) -> Array:
    """The ``ord``-norm of the vectors that ``axes`` span."""
    if ord is None or _is_order(ord, 2):
        a = _magnitude(x) if dtypes.is_complex(dtype_of(x)) else x
        return _safe_root(sum_(_lenient.mul(a, a), axis=axes, keepdims=keepdims), 2)
    if isinstance(ord, str):
        raise ValueError(f"{name}: invalid order {ord!r} for a vector norm; use {_VECTOR_ORDS}")
    a = _magnitude(x)
    if _is_order(ord, math.inf):
        return max_(a, axis=axes, keepdims=keepdims, initial=0)
    if _is_order(ord, -math.inf):
        return min_(a, axis=axes, keepdims=keepdims)
    if _is_order(ord, 0):
        nonzero = _lenient.ne(a, convert(0, dtype_of(a)))
        return sum_(convert(nonzero, dtype_of(a)), axis=axes, keepdims=keepdims)
    if _is_order(ord, 1):
        return sum_(a, axis=axes, keepdims=keepdims)
    p = builtins.float(ord)
    if p < 0:
        # A zero entry makes |x| ** p infinite and the norm 0, as in NumPy.
        total = sum_(power(a, convert(p, dtype_of(a))), axis=axes, keepdims=keepdims)
        return power(total, convert(1.0 / p, dtype_of(total)))
    return _safe_root(sum_(_safe_power(a, p), axis=axes, keepdims=keepdims), p)


def _matrix(x: Array, ord: Any, axes: tuple[int, int], keepdims: builtins.bool, name: str) -> Array:
    """The ``ord``-norm of the matrices in the plane of ``axes`` (rows, columns)."""
    rows, cols = axes
    if ord is None or ord == "fro":
        return _vector(x, None, axes, keepdims, name)
    if ord == "nuc" or _is_order(ord, 2) or _is_order(ord, -2):
        return _singular_value_norm(x, ord, axes, keepdims)
    if isinstance(ord, str) or not builtins.any(_is_order(ord, v) for v in (1, -1, math.inf, -math.inf)):
        raise ValueError(f"{name}: invalid order {ord!r} for a matrix norm; use {_MATRIX_ORDS}")
    # 1 / -1: the largest / smallest column sum; inf / -inf: the same over rows.
    summed, across = (rows, cols) if builtins.abs(ord) == 1 else (cols, rows)
    sums = sum_(_magnitude(x), axis=summed, keepdims=True)
    pick = max_ if ord > 0 else min_
    out = pick(sums, axis=across, keepdims=True)
    return out if keepdims else lax.squeeze(out, tuple(sorted(axes)))


def _singular_value_norm(x: Array, ord: Any, axes: tuple[int, int], keepdims: builtins.bool) -> Array:
    """The nuclear (``'nuc'``), spectral (``2``) or smallest-singular-value
    (``-2``) norm of the matrices in the plane of ``axes``."""
    nd = get_aval(x).ndim
    rest = [d for d in range(nd) if d not in axes]
    s = svd(lax.transpose(x, (*rest, *axes)), compute_uv=False)
    pick = sum_ if ord == "nuc" else max_ if ord > 0 else min_
    out = pick(s, axis=-1)
    if not keepdims:
        return out
    return lax.expand_dims(out, tuple(sorted(axes)))


def _check_axes(axis: Any, ndim: int, name: str) -> tuple[int, ...]:
    if isinstance(axis, (tuple, list)):
        return canonicalize_axes(tuple(axis), ndim, name)
    return canonicalize_axes(axis, ndim, name)


@staged_when_eager
def norm(x: ArrayLike, ord: Any = None, axis: Any = None, keepdims: builtins.bool = False) -> Array:
    """The norm of ``x``, as ``numpy.linalg.norm``.

    ``axis=None`` with ``ord=None`` is the 2-norm of all entries (any rank);
    with another ``ord``, ``x`` must be 1-D (a vector norm) or 2-D (a matrix
    norm).  One axis gives vector norms along it (``ord``: any real number,
    ``inf``, ``-inf``, ``0``); two give matrix norms in their plane (``ord``:
    ``None``/``'fro'``, ``1``, ``-1``, ``inf``, ``-inf``, and from the singular
    values ``'nuc'``, ``2``, ``-2``).  With
    ``keepdims`` the reduced axes stay, with size 1.  The gradient at the zero
    vector or matrix is zero (JAX's is NaN)."""
    name = "linalg.norm"
    ord = _order(ord, name)
    arr = _inexact(x, name)
    ndim = get_aval(arr).ndim
    if axis is None:
        if ord is None:
            return _vector(arr, None, tuple(range(ndim)), keepdims, name)
        if ndim == 1:
            return _vector(arr, ord, (0,), keepdims, name)
        if ndim == 2:
            return _matrix(arr, ord, (0, 1), keepdims, name)
        raise ValueError(f"{name}: with axis=None and ord={ord!r} the input must be 1-D or 2-D, "
                         f"got {ndim} dimensions; pass axis= to pick a vector or a matrix")
    axes = _check_axes(axis, ndim, name)
    if len(axes) == 1:
        return _vector(arr, ord, axes, keepdims, name)
    if len(axes) == 2:
        return _matrix(arr, ord, (axes[0], axes[1]), keepdims, name)
    raise ValueError(f"{name}: axis={axis!r} names {len(axes)} axes; pass one axis for a vector norm "
                     "or two for a matrix norm")


@staged_when_eager
def vector_norm(x: ArrayLike, /, *, axis: Any = None, keepdims: builtins.bool = False, ord: Any = 2) -> Array:
    """The vector ``ord``-norm (any real number, ``inf``, ``-inf``, ``0``; None is 2) over
    ``axis``: every axis by default (``x`` taken as one flat vector), or an int
    or tuple of axes (their entries taken as one vector per remaining index)."""
    name = "linalg.vector_norm"
    ord = _order(ord, name)
    arr = _inexact(x, name)
    axes = _check_axes(axis, get_aval(arr).ndim, name)
    return _vector(arr, ord, axes, keepdims, name)


@staged_when_eager
def matrix_norm(x: ArrayLike, /, *, keepdims: builtins.bool = False, ord: Any = "fro") -> Array:
    """The matrix ``ord``-norm (``'fro'``, ``'nuc'``, ``1``, ``-1``, ``2``, ``-2``, ``inf``, ``-inf``) of
    the matrices in the last two axes of ``x`` (at least 2-D)."""
    name = "linalg.matrix_norm"
    ord = _order(ord, name)
    arr = _inexact(x, name)
    ndim = get_aval(arr).ndim
    if ndim < 2:
        raise ValueError(f"{name}: the input must have at least 2 dimensions, got {ndim}")
    return _matrix(arr, ord, (ndim - 2, ndim - 1), keepdims, name)
