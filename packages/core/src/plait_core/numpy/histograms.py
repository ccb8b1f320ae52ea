"""Counting into bins: ``bincount``, ``digitize``, ``histogram_bin_edges``,
``histogram``.

A bin's count is a ``scatter_add`` of ones (or weights) at each value's bin
index; indices outside the bins are dropped by the scatter.  The number of
bins shapes the result, so it must be static: ``bincount`` needs ``length=``
under a transformation (eagerly it is read from the data), and
``histogram`` needs ``bins`` as an int or as concrete edges.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval, to_numpy
from plait_core.dims import Dim, definitely_equal_shapes
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    _dim_as_value,
    as_array,
    concrete_int,
    convert,
    dtype_of,
    promote_dtypes_inexact,
    shape_str,
)
from plait_core.numpy.creation import linspace
from plait_core.numpy.math import divide
from plait_core.numpy.reductions import max as max_
from plait_core.numpy.reductions import min as min_
from plait_core.numpy.reductions import sum as sum_
from plait_core.numpy.shape import ravel
from plait_core.numpy.signal import diff
from plait_core.numpy.sorting import searchsorted
from plait_core.trace import Tracer, concrete_or_error


def _add_at(length: Dim, positions: Array, updates: Array) -> Array:
    """``zeros(length).at[positions].add(updates)``, positions outside dropped."""
    dnums = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
    zeros = lax.broadcast_in_dim(convert(0, dtype_of(updates)), (length,), ())
    return lax.scatter_add(zeros, lax.expand_dims(positions, (1,)), updates, dnums, mode="drop")


def bincount(x: ArrayLike, weights: ArrayLike | None = None, minlength: int = 0, *,
             length: int | None = None) -> Array:
    """How often each non-negative integer occurs in the 1-D integer array
    ``x`` (with ``weights``: the sum of their weights), as ``numpy.bincount``.

    The result has ``length`` entries when it is given (a static int; values
    past it are dropped), else ``max(minlength, x.max() + 1)``, which needs a
    concrete ``x``: under ``jit`` or ``vmap`` pass ``length=``.  As in JAX,
    negative values count into bin 0 (NumPy raises).  Counts have the default
    integer dtype; weighted sums have the weights' dtype."""
    name = "bincount"
    xv = as_array(x, name, "x")
    aval = get_aval(xv)
    if not (dtypes.is_int(aval.dtype) or aval.dtype == np.dtype(bool)):
        raise TypeError(f"{name}: x must have an integer dtype, got {aval.dtype.name}")
    if aval.ndim != 1:
        raise ValueError(f"{name}: x must be 1-D, got shape {shape_str(aval.shape)}")
    minlength = concrete_int(minlength, f"{name}: minlength")
    if minlength < 0:
        raise ValueError(f"{name}: minlength must be non-negative, got {minlength}")
    if length is None:
        value = concrete_or_error(
            xv, "bincount without length= (the number of bins depends on the data; pass a static length= "
                "to use bincount under jit, vmap or other transformations)")
        arr = np.asarray(to_numpy(value))
        n = builtins.max(minlength, builtins.int(arr.max()) + 1 if arr.size else 0)
    else:
        n = concrete_int(length, f"{name}: length")
        if n < 0:
            raise ValueError(f"{name}: length must be non-negative, got {n}")
    idt = dtypes.default_int_dtype()
    positions = _lenient.max(convert(xv, idt), lax.broadcast_in_dim(np.zeros((), idt), tuple(aval.shape), ()))
    if weights is None:
        updates = lax.broadcast_in_dim(np.ones((), idt), tuple(aval.shape), ())
    else:
        updates = as_array(weights, name, "weights")
        if not definitely_equal_shapes(tuple(get_aval(updates).shape), tuple(aval.shape)):
            raise ValueError(f"{name}: weights must have the shape of x {shape_str(aval.shape)}, got "
                             f"{shape_str(get_aval(updates).shape)}")
        if dtype_of(updates) == np.dtype(bool):
            updates = convert(updates, idt)
    return _add_at(n, positions, updates)


_SEARCH_METHODS = (None, "scan", "scan_unrolled", "sort", "compare_all")


def digitize(x: ArrayLike, bins: ArrayLike, right: builtins.bool = False, *, method: str | None = None) -> Array:
    """The index of the bin of each value of ``x``, for the monotonic 1-D
    ``bins`` (increasing or decreasing): ``i`` with ``bins[i-1] <= x < bins[i]``
    for increasing bins (``<``/``<=`` swapped with ``right``), as
    ``numpy.digitize``.  ``method`` is accepted for JAX compatibility (every
    method computes the same)."""
    name = "digitize"
    if method not in _SEARCH_METHODS:
        raise ValueError(f"{name}: method must be one of {', '.join(map(repr, _SEARCH_METHODS[1:]))} or None, "
                         f"got {method!r}")
    xv, bv = as_array(x, name, "x"), as_array(bins, name, "bins")
    if get_aval(bv).ndim != 1:
        raise ValueError(f"{name}: bins must be 1-D, got shape {shape_str(get_aval(bv).shape)}")
    n = get_aval(bv).shape[0]
    idt = dtypes.default_int_dtype()
    if type(n) is builtins.int and n == 0:
        return lax.broadcast_in_dim(np.zeros((), idt), tuple(get_aval(xv).shape), ())
    side = "left" if right else "right"
    rising = searchsorted(bv, xv, side=side)
    shape = tuple(get_aval(rising).shape)
    falling = _lenient.sub(lax.broadcast_in_dim(convert(_dim_as_value(n), idt), shape, ()),
                      searchsorted(lax.rev(bv, (0,)), xv, side=side))
    first = lax.index_in_dim(bv, 0, 0, False)
    last = lax.reshape(lax.slice_in_dim(bv, n - 1, n, axis=0), ())
    increasing = lax.broadcast_in_dim(_lenient.ge(last, first), shape, ())
    return _lenient.select(increasing, rising, falling)


def _range_pair(range: Any, name: str) -> tuple[Any, Any]:
    if not isinstance(range, (tuple, list)) or len(range) != 2:
        raise ValueError(f"{name}: range must be a pair (low, high), got {range!r}")
    lo, hi = range
    if not isinstance(lo, Tracer) and not isinstance(hi, Tracer):
        lo_v, hi_v = np.asarray(to_numpy(lo)), np.asarray(to_numpy(hi))
        if lo_v.ndim or hi_v.ndim:
            raise ValueError(f"{name}: range must be a pair of scalars, got {range!r}")
        if not lo_v <= hi_v:
            raise ValueError(f"{name}: range must have low <= high, got {range!r}")
    return lo, hi


def histogram_bin_edges(a: ArrayLike, bins: ArrayLike = 10, range: Sequence[ArrayLike] | None = None,
                        weights: ArrayLike | None = None) -> Array:
    """The edges of the bins :func:`histogram` uses: ``bins + 1`` evenly spaced
    edges over ``range`` (default: from ``a``'s minimum to its maximum,
    widened by 0.5 on both sides when they are equal) for an int ``bins``, or
    ``bins`` itself when it is a 1-D array of edges.  ``weights`` is unused."""
    del weights
    name = "histogram_bin_edges"
    x = as_array(a, name, "a")
    if not isinstance(bins, (builtins.int, np.integer)) or isinstance(bins, (builtins.bool, np.bool_)):
        edges = as_array(bins, name, "bins")
        if get_aval(edges).ndim != 1:
            raise ValueError(f"{name}: bins must be an int or a 1-D array of edges, got shape "
                             f"{shape_str(get_aval(edges).shape)}")
        if not isinstance(edges, Tracer) and np.any(np.diff(np.asarray(to_numpy(edges), np.float64)) < 0):
            raise ValueError(f"{name}: the bin edges must increase monotonically")
        return edges
    count = builtins.int(bins)
    if count < 1:
        raise ValueError(f"{name}: bins must be a positive int, got {count}")
    (x,) = promote_dtypes_inexact(name, x)
    dt = dtype_of(x)
    if range is None:
        if any(type(d) is builtins.int and d == 0 for d in get_aval(x).shape):
            lo: Array = convert(0, dt)
            hi: Array = convert(1, dt)
        else:
            lo, hi = min_(x), max_(x)
    else:
        lo_r, hi_r = _range_pair(range, name)
        lo, hi = convert(as_array(lo_r, name, "range"), dt), convert(as_array(hi_r, name, "range"), dt)
    same = _lenient.eq(lo, hi)
    half = convert(0.5, dt)
    lo = _lenient.select(same, _lenient.sub(lo, half), lo)
    hi = _lenient.select(same, _lenient.add(hi, half), hi)
    return linspace(lo, hi, count + 1, dtype=dt)


def histogram(a: ArrayLike, bins: ArrayLike = 10, range: Sequence[ArrayLike] | None = None,
              weights: ArrayLike | None = None, density: builtins.bool | None = None) -> tuple[Array, Array]:
    """The histogram of the flattened ``a``: ``(counts, edges)``, as
    ``numpy.histogram``.

    ``bins``: a number of equal-width bins over ``range`` (see
    :func:`histogram_bin_edges`) or a 1-D array of increasing edges.  Every
    bin is half-open ``[edge_i, edge_{i+1})`` except the last, which includes
    its right edge; values outside the edges (and NaNs) are not counted.
    ``weights`` (shaped like ``a``) weight each value; ``density`` divides by
    the total and the bin widths, so the histogram integrates to 1.  Counts
    are floating point, as in JAX."""
    name = "histogram"
    x = ravel(as_array(a, name, "a"))
    edges = histogram_bin_edges(x, bins, range)
    (x,) = promote_dtypes_inexact(name, x)
    m = get_aval(edges).shape[0]
    if type(m) is builtins.int and m < 2:
        raise ValueError(f"{name}: bins needs at least two edges, got {m}")
    idt = dtypes.default_int_dtype()
    shape = tuple(get_aval(x).shape)
    where = searchsorted(edges, x, side="right")
    last_edge = lax.reshape(lax.slice_in_dim(edges, m - 1, m, axis=0), ())
    on_last = _lenient.eq(x, lax.broadcast_in_dim(convert(last_edge, dtype_of(x)), shape, ()))
    where = _lenient.select(on_last, lax.broadcast_in_dim(convert(_dim_as_value(m) - 1, idt), shape, ()), where)
    if weights is None:
        updates = lax.broadcast_in_dim(convert(1, dtypes.default_float_dtype()), shape, ())
    else:
        wv = as_array(weights, name, "weights")
        a_shape = tuple(get_aval(as_array(a, name, "a")).shape)
        if not definitely_equal_shapes(tuple(get_aval(wv).shape), a_shape):
            raise ValueError(f"{name}: weights must have the shape of a {shape_str(a_shape)}, "
                             f"got {shape_str(get_aval(wv).shape)}")
        (updates,) = promote_dtypes_inexact(name, ravel(wv))
    # Bin i's values land at i + 1; position 0 holds those below the first edge.
    counts = lax.slice_in_dim(_add_at(m, where, updates), 1, m, axis=0)
    if density:
        counts = divide(divide(counts, diff(edges)), sum_(counts))
    return counts, edges

