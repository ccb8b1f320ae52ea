"""``repeat``: each element repeated a number of times along an axis. A gather
(``take``) of the source index of every output position, so it sits above both
:mod:`plait_core.numpy.shape` and :mod:`plait_core.numpy.selection`.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.dims import dim_as_int
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    as_array,
    broadcast_to_shape,
    canonicalize_axis,
    concrete_int,
    convert,
)
from plait_core.numpy.reductions import cumsum
from plait_core.numpy.selection import take
from plait_core.numpy.shape import ravel
from plait_core.trace import Tracer

__all__ = ["repeat"]


def repeat(a: ArrayLike, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None) -> Array:
    """Each element of ``a`` repeated ``repeats`` times along ``axis`` (of the flattened
    array when ``axis`` is None).  ``repeats`` is an int or one count per element;
    traced counts need ``total_repeat_length`` (the output length)."""
    x = as_array(a, "repeat")
    if axis is None:
        x = ravel(x)
        ax = 0
    else:
        ax = canonicalize_axis(axis, get_aval(x).ndim, "repeat")
    shp = tuple(get_aval(x).shape)
    if isinstance(repeats, Tracer) and repeats.to_concrete_value() is None:
        return _repeat_traced(x, repeats, ax, total_repeat_length)
    counts = np.asarray(repeats.to_concrete_value() if isinstance(repeats, Tracer) else repeats)
    if not (counts.dtype.kind in "iu" or counts.dtype == bool):
        raise TypeError(f"repeat: repeats must be integers, got {counts.dtype}")
    if counts.size and counts.min() < 0:
        raise ValueError("repeat: repeats may not contain negative values")
    if counts.ndim == 0 or counts.size == 1:
        r = builtins.int(counts.reshape(()))
        expanded = shp[:ax + 1] + (r,) + shp[ax + 1:]
        dims = tuple(range(ax + 1)) + tuple(range(ax + 2, len(shp) + 1))
        b = lax.broadcast_in_dim(x, expanded, dims)
        return lax.reshape(b, shp[:ax] + (shp[ax] * r,) + shp[ax + 1:])
    if counts.ndim != 1:
        raise ValueError(f"repeat: repeats must be a scalar or 1-D, got shape {counts.shape}")
    n = dim_as_int(shp[ax], "repeat with one count per element (the axis length)")
    if counts.shape[0] != n:
        raise ValueError(f"repeat: {counts.shape[0]} repeat counts for an axis of length {n}")
    idx = np.repeat(np.arange(n, dtype=dtypes.default_int_dtype()), counts)
    return take(x, idx, axis=ax, mode="clip")


def _repeat_traced(x: Array, repeats: Array, ax: int, total: int | None) -> Array:
    if total is None:
        raise TypeError("repeat: traced repeat counts need total_repeat_length= (the length of the result "
                        "must be known while tracing)")
    total = concrete_int(total, "repeat: total_repeat_length")
    n = get_aval(x).shape[ax]
    counts = broadcast_to_shape(convert(repeats, dtypes.default_int_dtype()), (n,), "repeat")
    ends = cumsum(counts)
    # A marker at the start of every block after the first; their running count is
    # the source index of each output position.
    idt = dtypes.default_int_dtype()
    markers = lax.broadcast_in_dim(convert(0, idt), (total,), ())
    starts = lax.expand_dims(lax.slice(ends, (0,), (n - 1,)), (1,))
    dnums = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
    ones = lax.broadcast_in_dim(convert(1, idt), (n - 1,), ())
    markers = lax.scatter_add(markers, starts, ones, dnums, mode="drop")
    source = cumsum(markers)
    return take(x, source, axis=ax, mode="clip")
