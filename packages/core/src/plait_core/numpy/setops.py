"""Set operations: ``unique``.

``unique`` sorts the flattened input (stably, with the original positions
alongside), marks where a new value starts, numbers the groups with a running
sum, and scatters each group's first entry to its number.  The number of
distinct values is data-dependent, so without ``size`` the input must be
concrete (it is counted first); with a static ``size`` the result has exactly
that length, truncated or padded with ``fill_value``, and the function works
under ``jit`` and ``vmap`` as JAX's does.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval, to_numpy
from plait_core.dims import Dim
from plait_core.numpy._util import Array, ArrayLike, as_array, concrete_int, convert, dtype_of
from plait_core.trace import concrete_or_error


def _dnums() -> Any:
    return lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))


def _scatter(kind: str, operand: Array, positions: Array, updates: Array) -> Array:
    """``operand.at[positions].set/add(updates)``, positions past the end dropped."""
    fn = lax.scatter if kind == "set" else lax.scatter_add
    return fn(operand, lax.expand_dims(positions, (1,)), updates, _dnums(), mode="drop")


def _filled(size: int, value: Array) -> Array:
    return lax.broadcast_in_dim(value, (size,), ())


def _count_distinct(value: Any, equal_nan: builtins.bool) -> int:
    arr = np.asarray(to_numpy(value)).ravel()
    if arr.dtype.kind == "f" and arr.dtype.itemsize < 4:  # bfloat16 and friends: exactly in float32
        arr = arr.astype(np.float32)
    return builtins.int(np.unique(arr, equal_nan=equal_nan).size)


def unique(ar: ArrayLike, return_index: builtins.bool = False, return_inverse: builtins.bool = False,
           return_counts: builtins.bool = False, axis: int | None = None, *, equal_nan: builtins.bool = True,
           size: int | None = None, fill_value: ArrayLike | None = None, sorted: builtins.bool = True) -> Any:
    """The sorted distinct values of the flattened ``ar``, as ``numpy.unique``.

    ``return_index``: the position in the flattened ``ar`` of each value's first
    occurrence; ``return_inverse``: for every entry of ``ar`` (same shape) the
    position of its value in the result; ``return_counts``: how often each
    value occurs.  With any of them a tuple is returned, in that order.
    ``equal_nan`` counts all NaNs as one value.  NaNs sort last.

    ``size`` (a static int) fixes the result's length: extra values are dropped
    (inverse entries keep their group numbers, which may then be ``>= size``),
    missing ones are padded with ``fill_value`` (default: the smallest value),
    their index with the smallest value's index and their count with 0.  Without
    ``size`` the input must be concrete: under ``jit`` or ``vmap`` pass ``size=``.
    Only ``axis=None`` is supported; ``sorted`` is accepted for JAX
    compatibility (the result is always sorted)."""
    name = "unique"
    if axis is not None:
        raise NotImplementedError(f"{name}: axis={axis!r} is not supported; only axis=None (the distinct "
                                  "entries of the flattened array) is")
    x = as_array(ar, name)
    if size is None:
        value = concrete_or_error(
            x, "unique without size= (the number of distinct values depends on the data; pass a static size= "
               "and optionally fill_value= to use unique under jit, vmap or other transformations)")
        length = _count_distinct(value, equal_nan)
    else:
        length = concrete_int(size, f"{name}: size")
        if length < 0:
            raise ValueError(f"{name}: size must be non-negative, got {length}")
    from plait_core.numpy.shape import ravel

    flat = ravel(x)
    total: Dim = get_aval(flat).shape[0]
    if type(total) is builtins.int and total == 0 and length > 0 and fill_value is None:
        raise ValueError(f"{name}: the input is empty, so padding it to size={length} needs a fill_value")
    values, *extras = _unique_sorted(flat, total, length, fill_value, equal_nan, return_index, return_inverse,
                                     return_counts)
    if return_inverse:  # shaped like the input, as in NumPy 2 and JAX
        at = builtins.int(return_index)
        extras[at] = lax.reshape(extras[at], tuple(get_aval(x).shape))
    return (values, *extras) if extras else values


def _unique_sorted(flat: Array, total: Dim, length: int, fill_value: Any, equal_nan: builtins.bool,
                   want_index: builtins.bool, want_inverse: builtins.bool, want_counts: builtins.bool) -> list[Array]:
    """Distinct values of the 1-D ``flat``, then those of its first positions,
    inverse and counts that are wanted."""
    idt = dtypes.default_int_dtype()
    dt = dtype_of(flat)
    zero, one = np.zeros((), idt), np.ones((), idt)
    positions = lax.iota(idt, total)
    ordered, perm = lax.sort((flat, positions), dimension=0, is_stable=True, num_keys=1)
    # Each entry against its predecessor; the first one has none and starts a group.
    if _nonempty(total):
        previous = lax.pad(lax.slice(ordered, (0,), (total - 1,)), np.zeros((), dt), ((1, 0, 0),))
    else:
        previous = ordered
    starts = lax.ne(ordered, previous)
    if dtypes.is_inexact(dt) and equal_nan:
        both_nan = lax.bitwise_and(lax.ne(ordered, ordered), lax.ne(previous, previous))
        starts = lax.bitwise_and(starts, lax.bitwise_not(both_nan))
    starts = lax.bitwise_or(starts, lax.eq(positions, zero))
    group = lax.sub(lax.cumsum(convert(starts, idt), 0), one)
    # Only a group's first entry is written, so no two writes meet (NumPy keeps
    # the first too, e.g. -0.0 before 0.0); groups past size are dropped.
    target = lax.select_n(starts, _filled_like(group, np.asarray(length, idt)), group)
    if _nonempty(total):
        smallest, smallest_at = lax.index_in_dim(ordered, 0, 0, False), lax.index_in_dim(perm, 0, 0, False)
    else:
        smallest, smallest_at = np.zeros((), dt), zero
    if fill_value is None:
        fill = smallest
    else:
        fill = lax._convert_element_type(as_array(fill_value, "unique", "fill_value"), dt, get_aval(flat).weak_type)
        if get_aval(fill).ndim != 0:
            raise ValueError(f"unique: fill_value must be a scalar, got an array of shape {get_aval(fill).shape}")
    out = [_scatter("set", _filled(length, fill), target, ordered)]
    if want_index:
        out.append(_scatter("set", _filled(length, smallest_at), target, perm))
    if want_inverse:
        out.append(_scatter("set", _filled_like(group, zero), perm, group))
    if want_counts:
        out.append(_scatter("add", _filled(length, zero), group, _filled_like(group, one)))
    return out


def _nonempty(total: Dim) -> builtins.bool:
    """Whether the axis has an entry: a symbolic length counts as at least 1."""
    return type(total) is not builtins.int or total > 0


def _filled_like(x: Array, value: Array) -> Array:
    return lax.broadcast_in_dim(value, tuple(get_aval(x).shape), ())
