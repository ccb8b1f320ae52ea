"""Sorting and searching: ``sort``, ``argsort``, ``searchsorted``.

Sorts are stable and order NaN last, as NumPy's; complex values sort by
their real parts, then their imaginary parts.  ``descending=True`` keeps
equal elements in their original order too.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    _dim_as_value,
    as_array,
    canonicalize_axis,
    convert,
    dtype_of,
    promote_dtypes,
)
from plait_core.numpy.selection import take
from plait_core.numpy.shape import ravel


def _prepare(a: ArrayLike, axis: int | None, order: Any, name: str) -> tuple[Array, int]:
    if order is not None:
        raise ValueError(f"{name}: the order argument (structured arrays) is not supported")
    x = as_array(a, name)
    if axis is None:
        return ravel(x), 0
    return x, canonicalize_axis(axis, get_aval(x).ndim, name)


def sort(a: ArrayLike, axis: int | None = -1, *, kind: str | None = None, order: Any = None,
         stable: builtins.bool = True, descending: builtins.bool = False) -> Array:
    """``a`` sorted along ``axis`` (the flattened array when None); NaN sorts last
    (first with ``descending``)."""
    del kind, stable
    x, ax = _prepare(a, axis, order, "sort")
    if dtypes.is_complex(dtype_of(x)):  # lexicographic: real part, then imaginary part
        out = lax.sort((lax.real(x), lax.imag(x), x), dimension=ax, num_keys=2)[2]
    else:
        out = lax.sort(x, dimension=ax)
    return lax.rev(out, (ax,)) if descending else out


def argsort(a: ArrayLike, axis: int | None = -1, *, kind: str | None = None, order: Any = None,
            stable: builtins.bool = True, descending: builtins.bool = False) -> Array:
    """The indices that sort ``a`` along ``axis`` (stable: equal elements keep their
    order, also with ``descending``)."""
    del kind, stable
    x, ax = _prepare(a, axis, order, "argsort")
    shape = tuple(get_aval(x).shape)
    idt = dtypes.default_int_dtype()
    if descending:
        x = lax.rev(x, (ax,))
    positions = lax.broadcasted_iota(idt, shape, ax)
    if dtypes.is_complex(dtype_of(x)):  # lexicographic: real part, then imaginary part
        perm = lax.sort((lax.real(x), lax.imag(x), positions), dimension=ax, is_stable=True, num_keys=2)[2]
    else:
        _, perm = lax.sort((x, positions), dimension=ax, is_stable=True, num_keys=1)
    if descending:
        last = convert(_dim_as_value(shape[ax]) - 1, idt)
        perm = _lenient.sub(lax.broadcast_in_dim(last, shape, ()), lax.rev(perm, (ax,)))
    return perm


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None, *,
                 method: str = "scan") -> Array:  # fmt: skip
    """Where to insert ``v`` into the sorted 1-D ``a`` to keep it sorted: the count
    of elements ordered before ``v`` (``side="left"``) or not after it
    (``side="right"``), in sort order (NaN after every number).

    ``method`` chooses the algorithm, not the result: ``'scan'`` (a binary
    search in a loop of ``log2(len(a))`` steps), ``'scan_unrolled'`` (the same
    steps unrolled), ``'sort'`` (one sort of ``a`` and ``v`` together) or
    ``'compare_all'`` (compare every pair; fastest for small ``a``, and what
    symbolic sizes under ``mask`` use)."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(
            f"searchsorted: method must be 'scan', 'scan_unrolled', 'sort' or 'compare_all', got {method!r}"
        )
    arr = as_array(a, "searchsorted")
    if get_aval(arr).ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-D, got shape {tuple(get_aval(arr).shape)}")
    if sorter is not None:
        arr = take(arr, sorter, mode="clip")
    arr, vals = promote_dtypes("searchsorted", arr, v)
    index_dtype = dtypes.default_int_dtype()
    shapes = (*get_aval(arr).shape, *get_aval(vals).shape)
    if method == "compare_all" or not builtins.all(type(d) is int for d in shapes):
        # Symbolic sizes (under mask) need no loop count: compare every pair.
        return _searchsorted_compare_all(arr, vals, side, index_dtype)
    if method == "sort":
        return _searchsorted_sort(arr, vals, side, index_dtype)
    return _searchsorted_binary(arr, vals, side, index_dtype, unrolled=method == "scan_unrolled")


def _before(x: Array, y: Array) -> Array:
    """``x`` is ordered before ``y`` in sort order (NaN after every number)."""
    if not dtypes.is_inexact(get_aval(x).dtype):
        return _lenient.lt(x, y)
    x_nan, y_nan = _lenient.ne(x, x), _lenient.ne(y, y)
    return _lenient.bitwise_or(_lenient.lt(x, y), _lenient.bitwise_and(y_nan, lax.bitwise_not(x_nan)))


def _goes_after(element: Array, value: Array, side: str) -> Array:
    """The insertion point of ``value`` is after ``element``."""
    if side == "left":
        return _before(element, value)
    return lax.bitwise_not(_before(value, element))


def _searchsorted_compare_all(arr: Array, vals: Array, side: str, index_dtype: Any) -> Array:
    vshape = tuple(get_aval(vals).shape)
    n = get_aval(arr).shape[0]
    grid = (*vshape, n)
    av = lax.broadcast_in_dim(arr, grid, (len(vshape),))
    vv = lax.broadcast_in_dim(vals, grid, tuple(range(len(vshape))))
    return lax.reduce_sum(convert(_goes_after(av, vv, side), index_dtype), (len(vshape),))


def _searchsorted_binary(arr: Array, vals: Array, side: str, index_dtype: Any, unrolled: bool) -> Array:
    vshape = tuple(int(d) for d in get_aval(vals).shape)
    n = int(get_aval(arr).shape[0])
    low = _full(vshape, 0, index_dtype)
    high = _full(vshape, n, index_dtype)
    if n == 0:
        return low
    steps = builtins.max(1, int(n).bit_length())
    one = _full(vshape, 1, index_dtype)
    last = _full(vshape, n - 1, index_dtype)

    def step(bounds: tuple[Array, Array]) -> tuple[Array, Array]:
        lo, hi = bounds
        mid = _lenient.div(_lenient.add(lo, hi), _full(vshape, 2, index_dtype))
        element = _gather(arr, _lenient.min(mid, last))
        active = _lenient.lt(lo, hi)
        after = _lenient.bitwise_and(active, _goes_after(element, vals, side))
        before = _lenient.bitwise_and(active, lax.bitwise_not(after))
        return _lenient.select(after, _lenient.add(mid, one), lo), _lenient.select(before, mid, hi)

    bounds = (low, high)
    if unrolled:
        for _ in range(steps):
            bounds = step(bounds)
    else:
        bounds = lax.fori_loop(0, steps, lambda _, b: step(b), bounds)
    return bounds[0]


def _gather(arr: Array, index: Array) -> Array:
    """``arr[index]`` elementwise for an array of in-range indices."""
    return take(arr, index, mode="clip")


def _searchsorted_sort(arr: Array, vals: Array, side: str, index_dtype: Any) -> Array:
    vshape = tuple(int(d) for d in get_aval(vals).shape)
    n = int(get_aval(arr).shape[0])
    m = int(np.prod(vshape, dtype=np.int64))
    keys = lax.concatenate([arr, lax.reshape(vals, (m,))], 0)
    # The second key breaks ties: for side='left' a value sorts before the
    # equal elements of ``a``, for 'right' after them.
    a_tie, v_tie = (0, 1) if side == "right" else (1, 0)
    tie = lax.concatenate([_full((n,), a_tie, np.dtype(np.int32)), _full((m,), v_tie, np.dtype(np.int32))], 0)
    _, _, perm = lax.sort((keys, tie, lax.iota(index_dtype, n + m)), dimension=0, is_stable=True, num_keys=2)
    from_a = _lenient.lt(perm, _full((n + m,), n, index_dtype))
    before = lax.cumsum(convert(from_a, index_dtype), 0)
    # Back to the original order (sorting by the permutation inverts it).
    _, counts = lax.sort((perm, before), dimension=0, is_stable=True, num_keys=1)
    return lax.reshape(lax.slice(counts, (n,), (n + m,)), vshape)


def _full(shape: tuple[int, ...], value: Any, dtype: Any) -> Array:
    return lax.broadcast_in_dim(np.asarray(value, dtype), shape, ())
