"""Small typed helpers the masking rules are written with.

They bind core's primitives directly (with the parent trace current, as
every rule runs), so the rules control dtypes and weak types exactly instead
of going through the promoting ``lax`` wrappers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import get_aval
from plait_core.primitives import elementwise as ew
from plait_core.primitives import structural as st

DType = np.dtype[Any]


# ---------------------------------------------------------------------------
# Identities of the reductions, per dtype


def lowest(dtype: DType) -> Any:
    """The identity of ``max``: ``-inf``, the smallest integer, or ``False``."""
    if dtypes.is_bool(dtype):
        return False
    if dtypes.is_int(dtype):
        return dtypes.iinfo(dtype).min
    return -np.inf


def highest(dtype: DType) -> Any:
    """The identity of ``min``: ``inf``, the largest integer, or ``True``."""
    if dtypes.is_bool(dtype):
        return True
    if dtypes.is_int(dtype):
        return dtypes.iinfo(dtype).max
    return np.inf


def all_ones(dtype: DType) -> Any:
    """The identity of bitwise ``and``: every bit set (``True`` for booleans)."""
    if dtypes.is_bool(dtype):
        return True
    return ~np.zeros((), dtype)


# ---------------------------------------------------------------------------
# Values


def as_dtype(value: Any, dtype: DType, weak_type: bool = False) -> Any:
    """``value`` (a constant or a value of the current trace) as ``dtype`` with
    the given weak type; unchanged when it already is."""
    if isinstance(value, (bool, int, float, complex, np.generic, np.ndarray)):
        value = np.asarray(value, dtype)
        if not weak_type:
            return value
    aval = get_aval(value)
    if aval.dtype == dtype and aval.weak_type == weak_type:
        return value
    return ew.convert_element_type_p.bind(value, new_dtype=dtype, weak_type=weak_type)


def full(value: Any, shape: Sequence[int], dtype: DType, weak_type: bool = False) -> Any:
    """An array of ``shape`` filled with the scalar ``value``."""
    s = as_dtype(value, dtype, weak_type)
    return st.broadcast_in_dim_p.bind(s, shape=tuple(shape), broadcast_dimensions=())


def iota(shape: Sequence[int], dimension: int, dtype: DType | None = None) -> Any:
    """Indices along ``dimension`` of an array of ``shape`` (default int dtype)."""
    dt = dtypes.default_int_dtype() if dtype is None else dtype
    return st.iota_p.bind(dtype=dt, shape=tuple(shape), dimension=dimension)


def broadcast_along(v: Any, shape: Sequence[int], axes: Sequence[int]) -> Any:
    """``v`` (whose dimensions are ``axes`` of ``shape``) broadcast to ``shape``."""
    if tuple(get_aval(v).shape) == tuple(shape):
        return v
    return st.broadcast_in_dim_p.bind(v, shape=tuple(shape), broadcast_dimensions=tuple(axes))


def select(pred: Any, on_false: Any, on_true: Any) -> Any:
    """``on_true`` where ``pred`` holds, else ``on_false`` (equal dtypes and shapes)."""
    return ew.select_n_p.bind(pred, on_false, on_true)


def logical_and(a: Any, b: Any) -> Any:
    return ew.and_p.bind(a, b)


def logical_or(a: Any, b: Any) -> Any:
    return ew.or_p.bind(a, b)


def lt(a: Any, b: Any) -> Any:
    return ew.lt_p.bind(a, b)


def clamp(lo: Any, x: Any, hi: Any) -> Any:
    """``min(max(x, lo), hi)`` elementwise (operands of one dtype)."""
    return ew.min_p.bind(ew.max_p.bind(x, lo), hi)


# ---------------------------------------------------------------------------
# Moving data along one axis


def pad_high(x: Any, axis: int, amount: int, value: Any = 0) -> Any:
    """``x`` grown by ``amount`` elements of ``value`` at the end of ``axis``."""
    if amount == 0:
        return x
    aval = get_aval(x)
    config = tuple((0, amount if a == axis else 0, 0) for a in range(aval.ndim))
    return st.pad_p.bind(x, as_dtype(value, aval.dtype, aval.weak_type), padding_config=config)


def slice_axis(x: Any, axis: int, start: int, limit: int, stride: int = 1) -> Any:
    """``x[start:limit:stride]`` along ``axis`` (static bounds)."""
    shape = tuple(get_aval(x).shape)
    starts = tuple(start if a == axis else 0 for a in range(len(shape)))
    limits = tuple(limit if a == axis else d for a, d in enumerate(shape))
    strides = None if stride == 1 else tuple(stride if a == axis else 1 for a in range(len(shape)))
    if starts == (0,) * len(shape) and limits == shape and strides is None:
        return x
    return st.slice_p.bind(x, start_indices=starts, limit_indices=limits, strides=strides)


def window(x: Any, axis: int, start: Any, size: int) -> Any:
    """The ``size`` elements of ``x`` from the (traced) ``start`` along ``axis``.

    ``x`` is first grown by ``size`` at the end, so no clamping moves the
    window for any ``start`` in ``[0, x.shape[axis]]``; elements read past
    the end of ``x`` are zeros."""
    aval = get_aval(x)
    grown = pad_high(x, axis, size)
    dt = dtypes.default_int_dtype()
    zero = np.zeros((), dt)
    starts = [as_dtype(start, dt) if a == axis else zero for a in range(aval.ndim)]
    sizes = tuple(size if a == axis else d for a, d in enumerate(aval.shape))
    return st.dynamic_slice_p.bind(grown, *starts, slice_sizes=sizes)
