"""Selecting elements by index arrays: ``take``, ``take_along_axis``, ``nonzero``,
``argwhere`` and ``flatnonzero`` (``unravel_index`` and ``ravel_multi_index`` are
:mod:`plait_core.numpy.flat_index`).

``take`` and ``take_along_axis`` lower to ``lax.gather`` through
:func:`plait_core.numpy.indexing.getitem`.  Out-of-bounds indices follow
``mode``: ``"fill"`` (the default, as in JAX: the result is ``fill_value``),
``"clip"``, ``"wrap"`` or ``"raise"`` (concrete indices only).  ``nonzero``
needs a concrete input unless ``size`` fixes the length of its result.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.dims import Dim, dim_as_int
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    _dim_as_value,
    as_array,
    broadcast_shapes,
    broadcast_to_shape,
    canonicalize_axis,
    concrete_int,
    convert,
    dtype_of,
    is_python_scalar,
    shape_str,
)
from plait_core.numpy.creation import asarray, zeros
from plait_core.numpy.indexing import _FULL, _index_dtype, _stack_last, getitem
from plait_core.numpy.math import remainder
from plait_core.numpy.reductions import cumsum
from plait_core.numpy.shape import ravel
from plait_core.trace import concrete_or_error

# ---------------------------------------------------------------------------
# take, take_along_axis


def _take_mode(mode: Any, name: str) -> str:
    mode = "fill" if mode is None else mode
    if mode not in ("fill", "clip", "wrap", "raise", "drop", "promise_in_bounds"):
        raise ValueError(f"{name}: unknown mode {mode!r}; expected 'fill', 'clip', 'wrap' or 'raise'")
    return "fill" if mode == "drop" else str(mode)


def _prepare_take_indices(indices: Array, size: Dim, mode: str, name: str) -> tuple[Array, str]:
    if mode == "raise":
        value = concrete_or_error(indices, f"{name} with mode='raise'")
        arr = np.asarray(value)
        n = dim_as_int(size, f"{name} with mode='raise' (the axis length)")
        if arr.size and (arr.min() < -n or arr.max() >= n):
            bad = arr[(arr < -n) | (arr >= n)].flat[0]
            raise IndexError(f"{name}: index {bad} is out of bounds for an axis of size {n}")
        return arr, "promise_in_bounds"
    if mode == "wrap":
        return remainder(indices, _dim_as_value(size)), "promise_in_bounds"
    return indices, mode


def _statically_empty(shape: Sequence[Dim]) -> builtins.bool:
    return builtins.any(type(d) is int and d == 0 for d in shape)


def take(a: ArrayLike, indices: ArrayLike, axis: int | None = None, out: None = None,
         mode: str | None = None, unique_indices: builtins.bool = False,
         indices_are_sorted: builtins.bool = False, fill_value: Any = None) -> Array:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array when
    ``axis`` is None).  ``mode``: ``"fill"`` (default, as JAX: out-of-bounds gives
    ``fill_value``), ``"clip"``, ``"wrap"`` or ``"raise"`` (concrete indices only).
    Non-empty ``indices`` into an empty axis are an ``IndexError``, as in JAX."""
    if out is not None:
        raise TypeError("take: the out argument is not supported (plait arrays are immutable)")
    x = as_array(a, "take")
    idx = as_array(indices, "take", "indices")
    if not dtypes.is_int(dtype_of(idx)):
        raise TypeError(f"take: indices must be integers, got {dtype_of(idx).name}")
    if axis is None:
        x = ravel(x)
        ax = 0
    else:
        ax = canonicalize_axis(axis, get_aval(x).ndim, "take")
    size = get_aval(x).shape[ax]
    if type(size) is int and size == 0 and not _statically_empty(get_aval(idx).shape):
        raise IndexError(f"take: cannot take a non-empty selection from an empty axis (axis {ax} of "
                         f"shape {shape_str(tuple(get_aval(x).shape))})")
    m = _take_mode(mode, "take")
    idx, m = _prepare_take_indices(idx, size, m, "take")
    key: tuple[Any, ...] = (*(_FULL,) * ax, idx)
    if get_aval(idx).ndim == 0:
        one = np.asarray(idx).reshape(1) if isinstance(idx, np.ndarray) else lax.expand_dims(idx, (0,))
        key = (*(_FULL,) * ax, one)
        res = getitem(x, key, mode=m, fill_value=fill_value, unique_indices=unique_indices,
                      indices_are_sorted=indices_are_sorted)
        return lax.squeeze(res, (ax,))
    return getitem(x, key, mode=m, fill_value=fill_value, unique_indices=unique_indices,
                   indices_are_sorted=indices_are_sorted)


def take_along_axis(arr: ArrayLike, indices: ArrayLike, axis: int | None, mode: str | None = None,
                    fill_value: Any = None) -> Array:
    """``arr`` gathered along ``axis`` by ``indices`` of the same rank (other
    dimensions broadcast), as ``numpy.take_along_axis``.  Out-of-bounds indices
    follow ``mode`` as in :func:`take`."""
    x = as_array(arr, "take_along_axis")
    idx = as_array(indices, "take_along_axis", "indices")
    if not dtypes.is_int(dtype_of(idx)):
        raise TypeError(f"take_along_axis: indices must be integers, got {dtype_of(idx).name}")
    if axis is None:
        x = ravel(x)
        if get_aval(idx).ndim != 1:
            raise ValueError("take_along_axis: with axis=None the indices must be 1-D")
        ax = 0
    else:
        ax = canonicalize_axis(axis, get_aval(x).ndim, "take_along_axis")
    xshape = tuple(get_aval(x).shape)
    ishape = tuple(get_aval(idx).shape)
    if len(xshape) != len(ishape):
        raise ValueError(f"take_along_axis: indices and arr must have the same number of dimensions; "
                         f"got shapes {shape_str(ishape)} and {shape_str(xshape)}")
    out_shape = list(broadcast_shapes("take_along_axis", xshape[:ax] + (1,) + xshape[ax + 1:],
                                      ishape[:ax] + (1,) + ishape[ax + 1:]))
    out_shape[ax] = ishape[ax]
    if _statically_empty(xshape[ax:ax + 1]):
        # As JAX: nothing to read from an empty axis; the result is zeros of its shape.
        aval = get_aval(x)
        return lax.broadcast_in_dim(lax._convert_element_type(0, aval.dtype, aval.weak_type), tuple(out_shape), ())
    m = _take_mode(mode, "take_along_axis")
    idx, m = _prepare_take_indices(idx, xshape[ax], m, "take_along_axis")
    idx = broadcast_to_shape(idx, tuple(out_shape), "take_along_axis")
    bx_shape = list(out_shape)
    bx_shape[ax] = xshape[ax]
    x = broadcast_to_shape(x, tuple(bx_shape), "take_along_axis")
    key: list[Any] = []
    for d in range(len(out_shape)):
        if d == ax:
            key.append(idx)
        else:
            key.append(lax.broadcasted_iota(_index_dtype(), tuple(out_shape), d))
    return getitem(x, tuple(key), mode=m, fill_value=fill_value)


# ---------------------------------------------------------------------------
# nonzero and friends


def nonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> tuple[Array, ...]:
    """The indices of the non-zero elements, one array per dimension.

    Without ``size`` the input must be concrete (the result's length depends on
    its values).  With ``size`` the result has exactly that length: truncated, or
    padded with ``fill_value`` (default 0); this works on traced values too."""
    x = as_array(a, "nonzero")
    aval = get_aval(x)
    if aval.ndim == 0:
        raise ValueError("nonzero: calling nonzero on a 0-d array is not allowed; use atleast_1d first")
    idt = _index_dtype()
    if size is None:
        value = concrete_or_error(x, "nonzero without size= (the result's shape depends on the values; "
                                  "pass size=)")
        return tuple(_materialize_indices(c.astype(idt)) for c in np.nonzero(np.asarray(value)))
    size = concrete_int(size, "nonzero: size")
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * aval.ndim
    flat = ravel(x)
    mask = _lenient.ne(flat, convert(0, dtype_of(flat))) if not dtypes.is_bool(dtype_of(flat)) else flat
    position = _lenient.sub(cumsum(mask), convert(1, dtypes.default_int_dtype()))
    target = _lenient.select_n(mask, lax.broadcast_in_dim(convert(size, dtype_of(position)), position.shape, ()),
                          position)
    target = lax.expand_dims(convert(target, idt), (1,))
    total = get_aval(flat).shape[0]
    coords = []
    dnums = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
    remaining = lax.iota(idt, total)
    strides = []
    s: Dim = 1
    for d in reversed(aval.shape):
        strides.append(s)
        s = s * d
    strides.reverse()
    for k, d in enumerate(aval.shape):
        coord = _lenient.div(remaining, convert(_dim_as_value(strides[k]), idt))
        coord = _lenient.rem(coord, convert(_dim_as_value(d), idt))
        fill = 0 if fills[k] is None else fills[k]
        # A Python fill joins as a strongly typed index, so the result is not weak.
        fill_arr = np.asarray(fill, idt) if is_python_scalar(fill) else convert(fill, idt)
        base = lax.broadcast_in_dim(fill_arr, (size,), ())
        coords.append(lax.scatter(base, target, coord, dnums, mode="drop"))
    return tuple(coords)


def _materialize_indices(value: np.ndarray) -> Array:
    return asarray(value)


def flatnonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The indices of the non-zero elements of the flattened array."""
    x = as_array(a, "flatnonzero")
    flat = np.ravel(x) if isinstance(x, np.ndarray) else ravel(x)
    return nonzero(flat, size=size, fill_value=fill_value)[0]


def argwhere(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The indices of the non-zero elements as an ``(N, ndim)`` array."""
    x = as_array(a, "argwhere")
    if get_aval(x).ndim == 0:
        value = np.asarray(concrete_or_error(x, "argwhere of a 0-d array"))
        n = (1 if value else 0) if size is None else size
        return zeros((n, 0), _index_dtype())
    cols = nonzero(x, size=size, fill_value=fill_value)
    return _stack_last(list(cols))
