"""Orderings beyond ``sort``: ``lexsort``, ``partition``, ``argpartition``.

``lexsort`` is one multi-operand ``lax.sort``.  ``partition`` and
``argpartition`` sort fully: a sorted array is a valid partition for every
``kth`` (NumPy and JAX leave the order inside each side unspecified), and
sorting keeps them differentiable.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.dims import definitely_equal_shapes
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    as_array,
    canonicalize_axis,
    concrete_int,
    dtype_of,
    shape_str,
)
from plait_core.numpy.sorting import argsort, sort


def lexsort(keys: Array | Sequence[ArrayLike], axis: int = -1) -> Array:
    """The indices that sort by several keys along ``axis``: the **last** key
    is the primary one, earlier keys break ties (stably).  ``keys`` is a
    sequence of same-shaped arrays, or an array whose first axis lists them."""
    name = "lexsort"
    if isinstance(keys, (list, tuple)):
        ks = [as_array(k, name, f"keys[{i}]") for i, k in enumerate(keys)]
    else:
        arr = as_array(keys, name, "keys")
        if get_aval(arr).ndim == 0:
            raise TypeError(f"{name}: keys must be a sequence of arrays or an array of at least 1 dimension, "
                            "got a scalar")
        count = get_aval(arr).shape[0]
        if type(count) is not builtins.int:
            raise ValueError(f"{name}: the number of keys must be constant, got {count}")
        ks = [lax.index_in_dim(arr, i, 0, False) for i in range(count)]
    if not ks:
        raise TypeError(f"{name}: needs a sequence of at least one key")
    shape = tuple(get_aval(ks[0]).shape)
    for i, k in enumerate(ks):
        if not definitely_equal_shapes(tuple(get_aval(k).shape), shape):
            raise ValueError(f"{name}: all keys must have the same shape, got {shape_str(shape)} for keys[0] "
                             f"and {shape_str(get_aval(k).shape)} for keys[{i}]")
        if dtypes.is_complex(dtype_of(k)):
            raise TypeError(f"{name} does not accept complex keys (keys[{i}] is {dtype_of(k).name})")
    if not shape:
        raise ValueError(f"{name}: the keys must be at least 1-D, got scalars")
    ax = canonicalize_axis(axis, len(shape), name)
    positions = lax.broadcasted_iota(dtypes.default_int_dtype(), shape, ax)
    out = lax.sort((*reversed(ks), positions), dimension=ax, is_stable=True, num_keys=len(ks))
    result: Array = out[-1]
    return result


def _kth(kth: Any, a: ArrayLike, axis: int, name: str) -> tuple[Array, int]:
    x = as_array(a, name)
    if get_aval(x).ndim == 0:
        raise ValueError(f"{name}: a must be at least 1-D, got a scalar")
    ax = canonicalize_axis(axis, get_aval(x).ndim, name)
    k = concrete_int(kth, f"{name}: kth")
    n = get_aval(x).shape[ax]
    if type(n) is builtins.int and not -n <= k < n:
        raise ValueError(f"{name}: kth={k} is out of bounds for axis {ax} of length {n}")
    return x, ax


def partition(a: ArrayLike, kth: int, axis: int = -1) -> Array:
    """``a`` rearranged along ``axis`` so that position ``kth`` holds the value
    it would have sorted, smaller-or-equal values before it and greater-or-equal
    ones after (here: fully sorted, one valid such arrangement)."""
    x, ax = _kth(kth, a, axis, "partition")
    return sort(x, axis=ax)


def argpartition(a: ArrayLike, kth: int, axis: int = -1) -> Array:
    """The indices that :func:`partition` ``a`` (here: a stable argsort)."""
    x, ax = _kth(kth, a, axis, "argpartition")
    return argsort(x, axis=ax)
