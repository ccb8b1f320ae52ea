"""NaN-ignoring reductions beyond ``nansum``/``nanmean``/...: ``nanargmax``,
``nanargmin``, ``nancumsum``, ``nancumprod``, ``nanvar``, ``nanstd``, ``nanmedian``;
and the array API's ``unique_all``/``unique_counts``/``unique_inverse``/``unique_values``.
Semantics as JAX 0.10.2 (an all-NaN slice gives ``-1`` for the arg-reductions,
NaN for the statistics)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from plait_core import dtypes
from plait_core.numpy import creation as _creation
from plait_core.numpy import logic as _logic
from plait_core.numpy import math as _math
from plait_core.numpy import reductions as _reductions
from plait_core.numpy import setops as _setops
from plait_core.numpy import statistics as _statistics
from plait_core.numpy._util import ArrayLike, as_array, dtype_of
from plait_core.numpy.shape import reshape, shape

Array = Any


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"{name}: the out argument is not supported (JAX arrays are immutable)")


def _nan_arg(name: str, fn: Any, fill: float, a: ArrayLike, axis: int | None, out: None,
             keepdims: bool | None) -> Array:
    _no_out(name, out)
    x = as_array(a, name)
    if not dtypes.is_inexact(dtype_of(x)):
        return fn(x, axis=axis, keepdims=bool(keepdims))
    nan = _math.isnan(x)
    r = fn(_logic.where(nan, fill, x), axis=axis, keepdims=bool(keepdims))
    return _logic.where(_reductions.all(nan, axis=axis, keepdims=bool(keepdims)), -1, r)


def nanargmax(a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None) -> Array:
    """The index of the largest non-NaN value (``-1`` where every value is NaN)."""
    return _nan_arg("nanargmax", _reductions.argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None) -> Array:
    """The index of the smallest non-NaN value (``-1`` where every value is NaN)."""
    return _nan_arg("nanargmin", _reductions.argmin, np.inf, a, axis, out, keepdims)


def _replace_nan(name: str, a: ArrayLike, value: float) -> Array:
    x = as_array(a, name)
    return _logic.where(_math.isnan(x), value, x) if dtypes.is_inexact(dtype_of(x)) else x


def nancumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Array:
    """:func:`cumsum` with NaN counted as zero."""
    _no_out("nancumsum", out)
    return _reductions.cumsum(_replace_nan("nancumsum", a, 0), axis=axis, dtype=dtype)


def nancumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Array:
    """:func:`cumprod` with NaN counted as one."""
    _no_out("nancumprod", out)
    return _reductions.cumprod(_replace_nan("nancumprod", a, 1), axis=axis, dtype=dtype)


def nanvar(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: ArrayLike | None = None, mean: ArrayLike | None = None) -> Array:
    """:func:`var` over the non-NaN values (NaN where there are none)."""
    _no_out("nanvar", out)
    if mean is not None:
        raise NotImplementedError("nanvar: mean= is not supported; the mean is computed from the data")
    x = as_array(a, "nanvar")
    keep = ~_math.isnan(x) if dtypes.is_inexact(dtype_of(x)) else _creation.ones(shape(x), bool)
    if where is not None:
        keep = keep & _creation.asarray(where)
    return _reductions.var(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=keep)


def nanstd(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: ArrayLike | None = None, mean: ArrayLike | None = None) -> Array:
    """``sqrt(nanvar(...))``."""
    return _math.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, mean))


def nanmedian(a: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
              overwrite_input: bool = False, keepdims: bool = False) -> Array:
    """The median of the non-NaN values over ``axis`` (NaN where there are none)."""
    del overwrite_input
    _no_out("nanmedian", out)
    return _statistics.nanquantile(a, 0.5, axis=axis, keepdims=keepdims)


class UniqueAllResult(NamedTuple):
    """``unique_all``'s result."""

    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result."""

    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result."""

    values: Array
    inverse_indices: Array


def unique_all(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> UniqueAllResult:
    """Sorted distinct values with first indices, inverse indices (shaped like ``x``)
    and counts; NaNs are not merged (array API)."""
    v, i, inv, c = _setops.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False,
                              size=size, fill_value=fill_value)
    return UniqueAllResult(v, i, reshape(inv, shape(x)), c)


def unique_counts(x: ArrayLike, /, *, size: int | None = None,
                  fill_value: ArrayLike | None = None) -> UniqueCountsResult:
    """Sorted distinct values and how often each occurs."""
    v, c = _setops.unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueCountsResult(v, c)


def unique_inverse(x: ArrayLike, /, *, size: int | None = None,
                   fill_value: ArrayLike | None = None) -> UniqueInverseResult:
    """Sorted distinct values and, for each entry of ``x`` (same shape), its value's index."""
    v, inv = _setops.unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueInverseResult(v, reshape(inv, shape(x)))


def unique_values(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Array:
    """Sorted distinct values."""
    return _setops.unique(x, equal_nan=False, size=size, fill_value=fill_value)


__all__ = [
    "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmedian", "nanstd", "nanvar", "unique_all",
    "unique_counts", "unique_inverse", "unique_values",
]
