"""Sorting and searching: ``sort``, ``argsort``, ``searchsorted``.

Sorts are stable and order NaN last, as NumPy's.  ``descending=True`` keeps
equal elements in their original order too.
"""

from __future__ import annotations

import builtins
from typing import Any

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
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


def _prepare(a: ArrayLike, axis: int | None, order: Any, name: str) -> tuple[Array, int]:
    if order is not None:
        raise ValueError(f"{name}: the order argument (structured arrays) is not supported")
    x = as_array(a, name)
    if dtypes.is_complex(dtype_of(x)):
        raise TypeError(f"{name} does not accept complex inputs")
    if axis is None:
        from plait_core.numpy.shape import ravel

        return ravel(x), 0
    return x, canonicalize_axis(axis, get_aval(x).ndim, name)


def sort(a: ArrayLike, axis: int | None = -1, *, kind: str | None = None, order: Any = None,
         stable: builtins.bool = True, descending: builtins.bool = False) -> Array:
    """``a`` sorted along ``axis`` (the flattened array when None); NaN sorts last
    (first with ``descending``)."""
    del kind, stable
    x, ax = _prepare(a, axis, order, "sort")
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
    _, perm = lax.sort((x, positions), dimension=ax, is_stable=True, num_keys=1)
    if descending:
        last = convert(_dim_as_value(shape[ax]) - 1, idt)
        perm = lax.sub(lax.broadcast_in_dim(last, shape, ()), lax.rev(perm, (ax,)))
    return perm


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None) -> Array:
    """Where to insert ``v`` into the sorted 1-D ``a`` to keep it sorted: the count
    of elements ``< v`` (``side="left"``) or ``<= v`` (``side="right"``)."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    arr = as_array(a, "searchsorted")
    if get_aval(arr).ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-D, got shape {tuple(get_aval(arr).shape)}")
    if sorter is not None:
        from plait_core.numpy.selection import take

        arr = take(arr, sorter, mode="clip")
    arr, vals = promote_dtypes("searchsorted", arr, v)
    vshape = tuple(get_aval(vals).shape)
    n = get_aval(arr).shape[0]
    grid = (*vshape, n)
    av = lax.broadcast_in_dim(arr, grid, (len(vshape),))
    vv = lax.broadcast_in_dim(vals, grid, tuple(range(len(vshape))))
    before = lax.lt(av, vv) if side == "left" else lax.le(av, vv)
    return lax.reduce_sum(convert(before, dtypes.default_int_dtype()), (len(vshape),))
