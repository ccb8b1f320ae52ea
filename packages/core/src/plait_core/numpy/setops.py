"""Set operations: ``unique``, ``isin``, ``union1d``, ``intersect1d``,
``setdiff1d``, ``setxor1d``.

``unique`` sorts the flattened input (stably, with the original positions
alongside), marks where a new value starts, numbers the groups with a running
sum, and scatters each group's first entry to its number.  The number of
distinct values is data-dependent, so without ``size`` the input must be
concrete (it is counted first); with a static ``size`` the result has exactly
that length, truncated or padded with ``fill_value``, and the function works
under ``jit`` and ``vmap`` as JAX's does.

The two-array operations share one mechanism: sort the candidate values,
keep the first entry of each run of equal values for which the operation's
membership test holds, and compact the kept values to the front (again of a
data-dependent length, so ``size=`` under transformations).  Membership is
``isin``, which compares every pair of entries: simple and differentiable,
with cost proportional to the product of the sizes.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval, to_numpy
from plait_core.dims import Dim
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    _dim_as_value,
    as_array,
    concrete_int,
    convert,
    dtype_of,
    promote_dtypes,
)
from plait_core.numpy.shape import concatenate, ravel
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
    flat = ravel(x)
    total: Dim = get_aval(flat).shape[0]
    if type(total) is builtins.int and total == 0 and length > 0 and fill_value is None:
        raise ValueError(f"{name}: the input is empty, so padding it to size={length} needs a fill_value")
    values, *extras = _unique_sorted(flat, total, length, fill_value, equal_nan, return_index, return_inverse,
                                     return_counts)
    if return_inverse:  # shaped like the input, as in NumPy 2 and JAX
        at = builtins.int(return_index)
        extras[at] = lax.reshape(extras[at], tuple(get_aval(x).shape))
    if dtypes.is_complex(dtype_of(values)):  # as JAX's (its complex sort keys drop the weak type)
        values = convert(values, dtype_of(values))
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
    starts = _group_starts(ordered, total, equal_nan)
    group = _lenient.sub(lax.cumsum(convert(starts, idt), 0), one)
    # Only a group's first entry is written, so no two writes meet (NumPy keeps
    # the first too, e.g. -0.0 before 0.0); groups past size are dropped.
    target = _lenient.select_n(starts, _filled_like(group, np.asarray(length, idt)), group)
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


def _group_starts(ordered: Array, total: Dim, equal_nan: builtins.bool) -> Array:
    """Where a run of equal values starts in the sorted 1-D ``ordered`` (NaNs one
    run with ``equal_nan``)."""
    dt = dtype_of(ordered)
    idt = dtypes.default_int_dtype()
    # Each entry against its predecessor; the first one has none and starts a group.
    if _nonempty(total):
        previous = lax.pad(lax.slice(ordered, (0,), (total - 1,)), np.zeros((), dt), ((1, 0, 0),))
    else:
        previous = ordered
    starts = _lenient.ne(ordered, previous)
    if dtypes.is_inexact(dt) and equal_nan:
        both_nan = _lenient.bitwise_and(_lenient.ne(ordered, ordered), _lenient.ne(previous, previous))
        starts = _lenient.bitwise_and(starts, lax.bitwise_not(both_nan))
    return _lenient.bitwise_or(starts, _lenient.eq(lax.iota(idt, total), _filled_like(ordered, np.zeros((), idt))))


def _nonempty(total: Dim) -> builtins.bool:
    """Whether the axis has an entry: a symbolic length counts as at least 1."""
    return type(total) is not builtins.int or total > 0


def _filled_like(x: Array, value: Array) -> Array:
    return lax.broadcast_in_dim(value, tuple(get_aval(x).shape), ())


# ---------------------------------------------------------------------------
# Membership and the two-array set operations

_ISIN_METHODS = ("auto", "compare_all", "binary_search", "sort")


def isin(element: ArrayLike, test_elements: ArrayLike, assume_unique: builtins.bool = False,
         invert: builtins.bool = False, *, method: str = "auto") -> Array:
    """For each entry of ``element``, whether it occurs in ``test_elements``
    (any shape; NaN occurs nowhere); negated with ``invert``.  The result has
    ``element``'s shape.  ``assume_unique`` and ``method`` (one of JAX's
    ``"auto"``, ``"compare_all"``, ``"binary_search"``, ``"sort"``) are
    accepted for compatibility: every entry is compared with every test
    element."""
    del assume_unique
    name = "isin"
    if method not in _ISIN_METHODS:
        raise ValueError(f"{name}: method must be one of {', '.join(map(repr, _ISIN_METHODS))}, got {method!r}")
    e, t = promote_dtypes(name, as_array(element, name, "element"), as_array(test_elements, name, "test_elements"))
    flat = ravel(t)
    eshape = tuple(get_aval(e).shape)
    k = len(eshape)
    grid = (*eshape, get_aval(flat).shape[0])
    equal = _lenient.eq(lax.broadcast_in_dim(e, grid, tuple(range(k))), lax.broadcast_in_dim(flat, grid, (k,)))
    found = lax.reduce_or(equal, (k,))
    return lax.bitwise_not(found) if invert else found


def _flat(x: ArrayLike, name: str, argname: str) -> Array:
    return ravel(as_array(x, name, argname))


def _select_distinct(name: str, candidates: Array, keep_rule: Any, size: int | None, fill_value: Any,
                     fill_zero: builtins.bool) -> tuple[Array, Array, Array, int]:
    """The distinct ``candidates`` (1-D) that ``keep_rule(ordered, perm)`` keeps,
    sorted and compacted to the front of an array of ``size`` entries.

    Returns the values, the positions in ``candidates`` of their first
    occurrences (stable sort), a mask of the real entries, and the length."""
    idt = dtypes.default_int_dtype()
    total: Dim = get_aval(candidates).shape[0]
    ordered, perm = lax.sort((candidates, lax.iota(idt, total)), dimension=0, is_stable=True, num_keys=1)
    keep = _lenient.bitwise_and(_group_starts(ordered, total, True), keep_rule(ordered, perm))
    if size is None:
        value = concrete_or_error(
            keep, f"{name} without size= (the number of values depends on the data; pass a static size= and "
                  "optionally fill_value= to use it under jit, vmap or other transformations)")
        length = builtins.int(np.count_nonzero(np.asarray(to_numpy(value))))
    else:
        length = concrete_int(size, f"{name}: size")
        if length < 0:
            raise ValueError(f"{name}: size must be non-negative, got {length}")
    kept = convert(keep, idt)
    count = lax.reduce_sum(kept, (0,))
    target = _lenient.select(keep, _lenient.sub(lax.cumsum(kept, 0), _filled_like(kept, np.ones((), idt))),
                        _filled_like(kept, np.asarray(length, idt)))
    dt = dtype_of(candidates)
    values = _scatter("set", _filled(length, np.zeros((), dt)), target, ordered)
    first = _scatter("set", _filled(length, np.zeros((), idt)), target, perm)
    real = _lenient.lt(lax.iota(idt, length), _filled(length, count))
    if fill_value is not None:
        fill = convert(as_array(fill_value, name, "fill_value"), dt)
        if get_aval(fill).ndim != 0:
            raise ValueError(f"{name}: fill_value must be a scalar, got an array of shape {get_aval(fill).shape}")
    elif fill_zero or length == 0:
        fill = np.zeros((), dt)
    else:  # JAX's default: the smallest value of the result (0 if it is empty)
        smallest = lax.index_in_dim(values, 0, 0, False)
        fill = _lenient.select(_lenient.gt(count, np.zeros((), idt)), smallest, np.zeros((), dt))
    values = _lenient.select(real, values, _filled(length, fill))
    return values, first, real, length


def _check_1d_size(size: int | None, fill_value: Any, name: str) -> None:
    if size is None and fill_value is not None:
        raise ValueError(f"{name}: fill_value is only used with size=")


def union1d(ar1: ArrayLike, ar2: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Array:
    """The sorted distinct values found in either array (both flattened).

    The length depends on the data: eagerly it is counted; under ``jit`` or
    ``vmap`` pass a static ``size`` (results truncated, or padded with
    ``fill_value``, by default the smallest value)."""
    name = "union1d"
    _check_1d_size(size, fill_value, name)
    both = concatenate([_flat(ar1, name, "ar1"), _flat(ar2, name, "ar2")])
    values, _, _, _ = _select_distinct(name, both, lambda o, p: _filled_like(o, np.ones((), bool)), size,
                                       fill_value, False)
    return values


def setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: builtins.bool = False, *, size: int | None = None,
              fill_value: ArrayLike | None = None) -> Array:
    """The sorted distinct values of ``ar1`` that are not in ``ar2``; ``size`` and
    ``fill_value`` (default 0, as JAX) as for :func:`union1d`."""
    del assume_unique
    name = "setdiff1d"
    _check_1d_size(size, fill_value, name)
    a, b = promote_dtypes(name, _flat(ar1, name, "ar1"), _flat(ar2, name, "ar2"))
    values, _, _, _ = _select_distinct(name, a, lambda o, p: isin(o, b, invert=True), size, fill_value, True)
    return values


def setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: builtins.bool = False, *, size: int | None = None,
             fill_value: ArrayLike | None = None) -> Array:
    """The sorted distinct values found in exactly one of the arrays; ``size``
    and ``fill_value`` as for :func:`union1d`.  NaNs count once (NumPy lists
    one per array)."""
    del assume_unique
    name = "setxor1d"
    _check_1d_size(size, fill_value, name)
    a, b = promote_dtypes(name, _flat(ar1, name, "ar1"), _flat(ar2, name, "ar2"))
    n1 = get_aval(a).shape[0]
    idt = dtypes.default_int_dtype()

    def rule(ordered: Array, perm: Array) -> Array:
        from_a = _lenient.lt(perm, _filled_like(perm, convert(_as_value(n1), idt)))
        in_a = _lenient.bitwise_or(from_a, isin(ordered, a))
        in_b = _lenient.bitwise_or(lax.bitwise_not(from_a), isin(ordered, b))
        return _lenient.bitwise_xor(in_a, in_b)

    values, _, _, _ = _select_distinct(name, lax.concatenate([a, b], 0), rule, size, fill_value, False)
    return values


def intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: builtins.bool = False,
                return_indices: builtins.bool = False, *, size: int | None = None,
                fill_value: ArrayLike | None = None) -> Any:
    """The sorted distinct values found in both arrays (flattened); ``size`` and
    ``fill_value`` as for :func:`union1d`.

    With ``return_indices``, also the positions of each value's first
    occurrence in the flattened ``ar1`` and ``ar2`` (padding entries hold the
    arrays' sizes, as JAX)."""
    del assume_unique
    name = "intersect1d"
    _check_1d_size(size, fill_value, name)
    a, b = promote_dtypes(name, _flat(ar1, name, "ar1"), _flat(ar2, name, "ar2"))
    n1, n2 = get_aval(a).shape[0], get_aval(b).shape[0]
    values, first, real, length = _select_distinct(
        name, lax.concatenate([a, b], 0), lambda o, p: _lenient.bitwise_and(isin(o, a), isin(o, b)), size,
        fill_value, False)
    if not return_indices:
        return values
    idt = dtypes.default_int_dtype()
    # A kept value occurs in ar1, whose entries come first in the stable sort.
    ind1 = _lenient.select(real, first, _filled(length, convert(_as_value(n1), idt)))
    grid = (length, n2)
    hits = _lenient.eq(lax.broadcast_in_dim(values, grid, (0,)), lax.broadcast_in_dim(b, grid, (1,)))
    if _nonempty(n2):
        ind2 = lax.argmax(convert(hits, idt), 1, idt)
    else:
        ind2 = _filled(length, np.zeros((), idt))
    ind2 = _lenient.select(real, ind2, _filled(length, convert(_as_value(n2), idt)))
    return values, ind1, ind2


def _as_value(d: Dim) -> Any:
    return _dim_as_value(d)
