"""Functions of functions: ``piecewise`` and ``apply_along_axis``.

Without ``vmap`` in core, both call the user's functions a static number of
times: ``piecewise`` calls each one once on the whole array and selects,
``apply_along_axis`` once per 1-D slice (so the staged program grows with
the number of slices).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import lax
from plait_core.abstract import get_aval
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    as_array,
    broadcast_to_shape,
    canonicalize_axis,
    convert,
    dtype_of,
    full_like_value,
    shape_str,
)
from plait_core.numpy.shape import moveaxis, stack


def _conditions(condlist: Any, x: Array, name: str) -> list[Array]:
    shape = tuple(get_aval(x).shape)
    if isinstance(condlist, (list, tuple)):
        conds = [as_array(c, name, f"condlist[{i}]") for i, c in enumerate(condlist)]
    else:
        arr = as_array(condlist, name, "condlist")
        if get_aval(arr).ndim == len(shape):
            conds = [arr]
        else:
            conds = [lax.index_in_dim(arr, i, 0, False) for i in range(get_aval(arr).shape[0])]
    out = []
    for i, c in enumerate(conds):
        if dtype_of(c) != np.dtype(bool):
            raise TypeError(f"{name}: condlist[{i}] must be boolean, got {dtype_of(c).name}")
        out.append(broadcast_to_shape(c, shape, name))
    return out


def piecewise(x: ArrayLike, condlist: Array | Sequence[ArrayLike], funclist: list[Any], *args: Any,
              **kw: Any) -> Array:
    """``funclist[i]`` where ``condlist[i]`` holds (a later true condition wins),
    as ``numpy.piecewise``; an extra last entry of ``funclist`` applies where
    no condition holds, elsewhere the result is 0.  Entries are scalars or
    functions called as ``f(x, *args, **kw)``; results take ``x``'s dtype.

    Each function is called once on the whole ``x`` (NumPy passes only the
    selected entries, JAX one entry at a time), so functions must work
    elementwise; their values outside their condition are discarded."""
    name = "piecewise"
    xv = as_array(x, name, "x")
    conds = _conditions(condlist, xv, name)
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"{name}: with {n} conditions funclist must have {n} or {n + 1} entries, "
                         f"got {len(funclist)}")
    if len(funclist) == n + 1:
        anything = conds[0] if conds else full_like_value(xv, False, np.dtype(bool))
        for c in conds[1:]:
            anything = _lenient.bitwise_or(anything, c)
        conds.append(lax.bitwise_not(anything) if conds else full_like_value(xv, True, np.dtype(bool)))
    shape = tuple(get_aval(xv).shape)
    dt, weak = dtype_of(xv), get_aval(xv).weak_type
    out = full_like_value(xv, 0)
    for cond, f in zip(conds, funclist):
        value = f(xv, *args, **kw) if callable(f) else f
        value = broadcast_to_shape(convert(as_array(value, name, "funclist"), dt, weak), shape, name)
        out = _lenient.select(cond, value, out)
    return convert(out, dt)  # never weak, as in JAX


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: ArrayLike, *args: Any, **kwargs: Any) -> Array:
    """``func1d(v, *args, **kwargs)`` for every 1-D slice ``v`` of ``arr`` along
    ``axis``; the axes of its (common-shaped) results replace ``axis``, as
    ``numpy.apply_along_axis``.  ``func1d`` is called once per slice, so the
    other axes must have constant lengths (none 0)."""
    name = "apply_along_axis"
    x = as_array(arr, name, "arr")
    nd = get_aval(x).ndim
    if nd == 0:
        raise ValueError(f"{name}: arr must be at least 1-D, got a scalar")
    ax = canonicalize_axis(axis, nd, name)
    moved = moveaxis(x, ax, -1)
    others = tuple(get_aval(moved).shape[:-1])
    count = 1
    for d in others:
        if type(d) is not int:
            raise ValueError(f"{name}: the axes other than {ax} must have constant lengths, got "
                             f"{shape_str(get_aval(x).shape)}")
        count *= d
    if count == 0:
        raise ValueError(f"{name}: cannot apply along axis {ax} when another axis has length 0 "
                         f"(shape {shape_str(get_aval(x).shape)})")
    rows = lax.reshape(moved, (count, get_aval(moved).shape[-1]))
    results = [as_array(func1d(lax.index_in_dim(rows, i, 0, False), *args, **kwargs), name, "func1d's result")
               for i in range(count)]
    rshape = tuple(get_aval(results[0]).shape)
    for r in results[1:]:
        if tuple(get_aval(r).shape) != rshape:
            raise ValueError(f"{name}: func1d must return the same shape for every slice, got "
                             f"{shape_str(rshape)} and {shape_str(get_aval(r).shape)}")
    out = lax.reshape(stack(results), (*others, *rshape))
    # The result's own axes go where ``axis`` was.
    k = len(rshape)
    perm = (*range(ax), *range(len(others), len(others) + k), *range(ax, len(others)))
    return lax.transpose(out, perm)
