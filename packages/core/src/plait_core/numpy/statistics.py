"""Order statistics and covariances: ``quantile``, ``percentile``,
``nanquantile``, ``nanpercentile``, ``cov``, ``corrcoef``.

Quantiles sort the reduced entries (moved to one trailing axis), find each
requested position ``q * (n - 1)`` and gather the neighbouring order
statistics, so they are differentiable wherever ``sort`` and ``gather`` are.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval, to_numpy
from plait_core.dims import Dim, definitely_equal
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    _dim_as_value,
    as_array,
    canonicalize_axes,
    convert,
    dtype_of,
    promote_dtypes_inexact,
    shape_str,
)
from plait_core.numpy.dots import matmul
from plait_core.numpy.math import conjugate, divide, multiply, sqrt, subtract
from plait_core.numpy.reductions import sum as sum_
from plait_core.numpy.selection import take_along_axis
from plait_core.numpy.shape import atleast_2d, diagonal
from plait_core.primitives.elementwise import RoundingMethod
from plait_core.trace import Tracer

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_q(name: str, q: Array, scale: float) -> None:
    """Concrete ``q`` out of range is an error (NumPy's); traced ``q`` is clipped."""
    if isinstance(q, Tracer):
        return
    values = np.asarray(to_numpy(q))
    outside = ~((values >= 0) & (values <= scale))
    if np.any(outside):
        raise ValueError(f"{name}: q must be in the range [0, {builtins.int(scale)}], got {values[outside].ravel()[0]}")


def _quantile(name: str, a: ArrayLike, q: ArrayLike, axis: Any, out: None, method: str,
              keepdims: builtins.bool, weights: ArrayLike | None, scale: float,
              ignore_nan: builtins.bool) -> Array:
    if out is not None:
        raise ValueError(f"{name}: the out argument is not supported (arrays are immutable)")
    if weights is not None:
        raise NotImplementedError(f"{name}: weights are not supported")
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of {', '.join(map(repr, _METHODS))}, got {method!r}")
    x, qv = promote_dtypes_inexact(name, as_array(a, name, "a"), as_array(q, name, "q"))
    if dtypes.is_complex(dtype_of(x)):
        raise ValueError(f"{name} does not accept complex inputs (complex numbers have no natural order)")
    _check_q(name, qv, scale)
    if scale != 1:
        qv = _lenient.div(qv, convert(scale, dtype_of(qv)))
    shape = tuple(get_aval(x).shape)
    axes = canonicalize_axes(axis, len(shape), name)
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    n: Dim = 1
    for ax in axes:
        n = n * shape[ax]
    if type(n) is builtins.int and n == 0:
        raise ValueError(f"{name}: cannot take quantiles over an empty axis (shape {shape_str(shape)}, axis={axis!r})")
    kept_shape = tuple(shape[i] for i in kept)
    rows = lax.reshape(lax.transpose(x, kept + axes), (*kept_shape, n))
    ordered = lax.sort(rows, dimension=len(kept))
    qshape = tuple(get_aval(qv).shape)
    nq: Dim = 1
    for d in qshape:
        nq = nq * d
    grid = (*kept_shape, nq)
    dt = dtype_of(x)
    qgrid = lax.broadcast_in_dim(lax.reshape(qv, (nq,)), grid, (len(kept),))
    nan_rows = lax.reduce_or(_lenient.ne(rows, rows), (len(kept),))
    if ignore_nan:
        count = lax.reduce_sum(convert(_lenient.eq(rows, rows), dt), (len(kept),))
        last = lax.broadcast_in_dim(_lenient.sub(count, convert(1, dt)), grid, tuple(range(len(kept))))
    else:
        last = lax.broadcast_in_dim(convert(n - 1, dt), grid, ())
    pos = _lenient.mul(qgrid, last)
    top = _lenient.max(last, lax.broadcast_in_dim(convert(0, dt), grid, ()))
    zero = lax.broadcast_in_dim(convert(0, dt), grid, ())
    if method == "nearest":  # NumPy's: ties to the even position
        pos = lax.round(pos, RoundingMethod.TO_NEAREST_EVEN)
    low = _lenient.clamp(zero, lax.floor(pos), top)
    high = _lenient.clamp(zero, lax.ceil(pos), top)
    idt = dtypes.default_int_dtype()
    lo_val = take_along_axis(ordered, convert(low, idt), axis=-1)
    hi_val = take_along_axis(ordered, convert(high, idt), axis=-1)
    if method in ("lower", "nearest"):
        result = lo_val
    elif method == "higher":
        result = hi_val
    elif method == "midpoint":
        result = _lenient.mul(_lenient.add(lo_val, hi_val), lax.broadcast_in_dim(convert(0.5, dt), grid, ()))
    else:
        frac = _lenient.sub(_lenient.clamp(zero, pos, top), low)
        result = _lenient.add(lo_val, _lenient.mul(_lenient.sub(hi_val, lo_val), frac))
    if not ignore_nan:  # any NaN makes the whole row's quantiles NaN
        nan_grid = lax.broadcast_in_dim(nan_rows, grid, tuple(range(len(kept))))
        result = _lenient.select(nan_grid, lax.broadcast_in_dim(convert(np.nan, dt), grid, ()), result)
    # q's axes first, then the kept axes (with 1s for the reduced ones under keepdims).
    result = lax.transpose(result, (len(kept), *range(len(kept))))
    if keepdims:
        kept_shape = tuple(1 if i in axes else shape[i] for i in range(len(shape)))
    return lax.reshape(result, (*qshape, *kept_shape))


def quantile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
             overwrite_input: builtins.bool = False, method: str = "linear", keepdims: builtins.bool = False,
             *, weights: ArrayLike | None = None) -> Array:
    """The ``q``-th quantiles (``0 <= q <= 1``, a scalar or an array) of ``a``
    over ``axis`` (None: all entries; an int or a tuple of ints).

    ``method``: ``"linear"`` (interpolate between the neighbouring order
    statistics), ``"lower"``, ``"higher"``, ``"midpoint"`` or ``"nearest"``
    (ties to the even position, as NumPy).  The result has ``q``'s axes first,
    then the axes that are not reduced (kept as 1s with ``keepdims``), and an
    inexact dtype.  A NaN in a reduced slice makes its quantiles NaN.  A
    concrete ``q`` outside ``[0, 1]`` is a ``ValueError``; a traced one is
    clipped to the range.  ``weights`` are not supported."""
    del overwrite_input
    return _quantile("quantile", a, q, axis, out, method, keepdims, weights, 1.0, False)


def percentile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
               overwrite_input: builtins.bool = False, method: str = "linear", keepdims: builtins.bool = False,
               *, weights: ArrayLike | None = None) -> Array:
    """As :func:`quantile` with ``q`` in percent (``0 <= q <= 100``)."""
    del overwrite_input
    return _quantile("percentile", a, q, axis, out, method, keepdims, weights, 100.0, False)


def nanquantile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
                overwrite_input: builtins.bool = False, method: str = "linear", keepdims: builtins.bool = False,
                *, weights: ArrayLike | None = None) -> Array:
    """As :func:`quantile`, ignoring NaNs (a slice of NaNs only gives NaN)."""
    del overwrite_input
    return _quantile("nanquantile", a, q, axis, out, method, keepdims, weights, 1.0, True)


def nanpercentile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
                  overwrite_input: builtins.bool = False, method: str = "linear", keepdims: builtins.bool = False,
                  *, weights: ArrayLike | None = None) -> Array:
    """As :func:`percentile`, ignoring NaNs (a slice of NaNs only gives NaN)."""
    del overwrite_input
    return _quantile("nanpercentile", a, q, axis, out, method, keepdims, weights, 100.0, True)


# ---------------------------------------------------------------------------
# Covariance and correlation


def _observations(v: ArrayLike, rowvar: builtins.bool, name: str, argname: str) -> Array:
    """Variables as rows, observations as columns."""
    x = as_array(v, name, argname)
    if get_aval(x).ndim > 2:
        raise ValueError(f"{name}: {argname} must be 1-D or 2-D, got shape {shape_str(get_aval(x).shape)}")
    x = atleast_2d(x)
    if not rowvar and get_aval(x).shape[0] != 1:
        x = lax.transpose(x, (1, 0))
    return x


def _weights(w: ArrayLike, n: Dim, name: str, argname: str, integer: builtins.bool) -> Array:
    wv = as_array(w, name, argname)
    aval = get_aval(wv)
    if aval.ndim != 1:
        raise ValueError(f"{name}: {argname} must be 1-D, got shape {shape_str(aval.shape)}")
    if not definitely_equal(aval.shape[0], n):
        raise ValueError(f"{name}: {argname} has {aval.shape[0]} entries but there are {n} observations")
    if integer and not (dtypes.is_int(aval.dtype) or aval.dtype == np.dtype(bool)):
        raise TypeError(f"{name}: fweights must be integers, got {aval.dtype.name}")
    if not isinstance(wv, Tracer) and np.any(np.asarray(to_numpy(wv)) < 0):
        raise ValueError(f"{name}: {argname} must be non-negative")
    return wv


def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: builtins.bool = True, bias: builtins.bool = False,
        ddof: int | None = None, fweights: ArrayLike | None = None, aweights: ArrayLike | None = None,
        dtype: Any = None) -> Array:
    """The covariance matrix of the variables in ``m`` (and ``y``): each row is a
    variable and each column an observation (the other way round with
    ``rowvar=False``).  Normalised by ``N - 1`` (``N`` with ``bias``, ``N - ddof``
    with ``ddof``); ``fweights`` (integer repeat counts) and ``aweights``
    (relative importances) weight the observations, as in NumPy.  A single
    variable gives a 0-d result."""
    name = "cov"
    x = _observations(m, rowvar, name, "m")
    if y is not None:
        x = lax.concatenate(promote_dtypes_inexact(name, x, _observations(y, rowvar, name, "y")), 0)
    (x,) = promote_dtypes_inexact(name, x)
    if dtype is not None:
        x = convert(x, dtypes.canonicalize_dtype(np.dtype(dtype)))
    n = get_aval(x).shape[1]
    if ddof is None:
        ddof = 0 if bias else 1
    w: Array | None = None
    if fweights is not None:
        w = convert(_weights(fweights, n, name, "fweights", True), dtype_of(x))
    if aweights is not None:
        aw = convert(_weights(aweights, n, name, "aweights", False), dtype_of(x))
        w = aw if w is None else _lenient.mul(w, aw)
    if w is None:
        avg = divide(sum_(x, axis=1), _dim_as_value(n))
        fact: Array = subtract(_dim_as_value(n), ddof)
    else:
        w_sum = sum_(w)
        avg = divide(sum_(multiply(x, w), axis=1), w_sum)
        if aweights is None:
            fact = subtract(w_sum, ddof)
        else:
            fact = subtract(w_sum, divide(multiply(ddof, sum_(multiply(w, aw))), w_sum))
    centred = subtract(x, lax.expand_dims(avg, (1,)))
    xw = centred if w is None else multiply(centred, w)
    # A non-positive normaliser (too few observations) gives inf/NaN, as NumPy.
    fact = _lenient.max(convert(fact, dtype_of(x)), convert(0, dtype_of(x)))
    c = divide(matmul(xw, conjugate(lax.transpose(centred, (1, 0)))), fact)
    shape = tuple(get_aval(c).shape)
    if shape == (1, 1):
        return lax.reshape(c, ())
    return c


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: builtins.bool = True, dtype: Any = None) -> Array:
    """Pearson correlation coefficients: :func:`cov` normalised by the standard
    deviations, clipped to ``[-1, 1]``.  A single variable gives ``c / c``
    (1, or NaN for a constant)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if get_aval(c).ndim == 0:
        return _lenient.div(c, c)
    std = sqrt(diagonal(c))
    c = divide(divide(c, lax.expand_dims(std, (1,))), lax.expand_dims(std, (0,)))
    one = convert(1, dtype_of(c))
    return _lenient.clamp(lax.neg(one), c, one)
