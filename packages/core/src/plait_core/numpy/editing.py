"""Functions of ``jax.numpy`` that cut, insert, select and rearrange: ``delete``,
``insert``, ``compress``, ``extract``, ``choose``, ``place``, ``put``,
``put_along_axis``, ``resize``, ``rollaxis``, ``unstack``, ``block``,
``apply_over_axes`` and ``trim_zeros``.

Positions that decide an output's shape (``delete``'s and ``insert``'s ``obj``,
``compress``'s condition without ``size``, ``trim_zeros``'s data) must be concrete,
as in JAX; values may be traced.  JAX arrays are immutable, so the ``inplace``
functions need ``inplace=False``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core.abstract import get_aval
from plait_core.numpy import creation as _creation
from plait_core.numpy import logic as _logic
from plait_core.numpy import selection as _selection
from plait_core.numpy._util import ArrayLike, as_array, canonicalize_axis, convert, dtype_of
from plait_core.numpy.shape import (
    broadcast_arrays,
    broadcast_to,
    concatenate,
    expand_dims,
    moveaxis,
    ndim,
    ravel,
    reshape,
    stack,
    tile,
)
from plait_core.numpy.updates import scatter_update
from plait_core.trace import concrete_or_error

Array = Any


def _static_index(obj: Any, name: str) -> Any:
    if isinstance(obj, (list, tuple)):
        raise TypeError(f"{name}: obj must be an int, a slice or an array, got a {type(obj).__name__}")
    if isinstance(obj, slice):
        return obj
    return np.asarray(concrete_or_error(obj, f"the obj argument of {name}"))


def delete(arr: ArrayLike, obj: ArrayLike | slice, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Array:
    """``arr`` without the entries at ``obj`` (an int, slice or concrete index array;
    booleans select what to delete) along ``axis`` (of the flattened array if None)."""
    del assume_unique_indices
    x = as_array(arr, "delete")
    if axis is None:
        x, axis = ravel(x), 0
    axis = canonicalize_axis(axis, x.ndim, "delete")
    n = int(x.shape[axis])
    index = _static_index(obj, "delete")
    keep = np.delete(np.arange(n), index)
    return _selection.take(x, _creation.asarray(keep, np.int32), axis=axis)


def insert(arr: ArrayLike, obj: ArrayLike | slice, values: ArrayLike, axis: int | None = None) -> Array:
    """``arr`` with ``values`` inserted before the positions ``obj`` (an int puts all
    of ``values`` there; an index array inserts one slice per index) along ``axis``."""
    x = as_array(arr, "insert")
    if axis is None:
        x, axis = ravel(x), 0
    axis = canonicalize_axis(axis, x.ndim, "insert")
    n = int(x.shape[axis])
    index = _static_index(obj, "insert")
    if isinstance(index, slice):
        index = np.arange(*index.indices(n))
    moved = moveaxis(x, axis, 0)
    rest = tuple(moved.shape[1:])
    v = _creation.asarray(values, dtype_of(x))
    if index.ndim == 0:
        # NumPy: values get rank >= arr's by leading 1s; their first axis counts the inserted slices.
        vm = reshape(v, (1,) * (x.ndim - v.ndim) + tuple(v.shape)) if v.ndim < x.ndim else v
        count = int(vm.shape[0])
        vm = broadcast_to(vm, (count, *rest))
        positions = np.full(count, int(index) + n if int(index) < 0 else int(index))
    else:
        positions = np.where(index < 0, index + n, index).ravel()
        count = positions.shape[0]
        vm = moveaxis(v, axis, 0) if v.ndim == x.ndim else v
        vm = broadcast_to(vm, (count, *rest))
    if np.any((positions < 0) | (positions > n)):
        raise IndexError(f"insert: index {obj!r} is out of bounds for axis {axis} with size {n}")
    order = np.insert(np.arange(n), positions, n + np.arange(count))
    combined = concatenate([moved, vm], axis=0)
    out = moveaxis(_selection.take(combined, _creation.asarray(order, np.int32), axis=0), 0, axis)
    return convert(out, dtype_of(x), get_aval(x).weak_type)  # arr's weak type, as in JAX


def compress(condition: ArrayLike, a: ArrayLike, axis: int | None = None, *, size: int | None = None,
             fill_value: ArrayLike = 0, out: None = None) -> Array:
    """The slices of ``a`` along ``axis`` where the 1-D ``condition`` is true (a
    shorter condition counts as false beyond its end).  Without ``size`` the
    condition must be concrete; with ``size`` the result has that length, padded
    with ``fill_value``."""
    if out is not None:
        raise NotImplementedError("compress: the out argument is not supported (JAX arrays are immutable)")
    cond = as_array(condition, "compress", "condition")
    if cond.ndim != 1:
        raise ValueError(f"compress: condition must be 1-dimensional, got shape {cond.shape}")
    x = as_array(a, "compress")
    if axis is None:
        x, axis = ravel(x), 0
    axis = canonicalize_axis(axis, x.ndim, "compress")
    n = int(x.shape[axis])
    c = cond.astype(bool)
    if size is not None and not 0 < size <= n:
        raise ValueError(f"compress: size must be positive and at most the axis length {n}, got {size}")
    if c.shape[0] > n:
        if size is None and bool(np.any(np.asarray(concrete_or_error(c, "compress's condition"))[n:])):
            raise IndexError(f"compress: condition has true entries beyond the axis length {n}")
        c = c[:n]
    elif c.shape[0] < n:
        c = concatenate([c, _creation.zeros(n - c.shape[0], bool)])
    (idx,) = _selection.nonzero(c, size=size, fill_value=n)
    return _selection.take(x, idx, axis=axis, mode="fill", fill_value=fill_value)


def extract(condition: ArrayLike, arr: ArrayLike, *, size: int | None = None, fill_value: ArrayLike = 0) -> Array:
    """The entries of ``arr`` where ``condition`` is true, flattened (see :func:`compress`)."""
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)


def choose(a: ArrayLike, choices: Sequence[ArrayLike], out: None = None, mode: str = "raise") -> Array:
    """``choices[a[i]][i]`` elementwise (all broadcast together).  ``mode``:
    ``'raise'`` (indices must be concrete and in range), ``'wrap'`` or ``'clip'``."""
    if out is not None:
        raise NotImplementedError("choose: the out argument is not supported (JAX arrays are immutable)")
    idx = as_array(a, "choose")
    n = len(choices)
    if mode == "raise":
        concrete = np.asarray(concrete_or_error(idx, "choose's index array with mode='raise' (use 'clip' or 'wrap')"))
        if np.any((concrete < 0) | (concrete >= n)):
            raise ValueError(f"choose: invalid entry in the index array (must be in [0, {n}))")
    elif mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = _logic.clip(idx, 0, n - 1)
    else:
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    arrays = broadcast_arrays(idx, *[_creation.asarray(c) for c in choices])
    stacked = stack(arrays[1:])
    return _selection.take_along_axis(stacked, arrays[0][None].astype(np.int32), axis=0)[0]


def _immutable(name: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(f"{name}: JAX arrays are immutable; pass inplace=False to get the updated array")


def place(arr: ArrayLike, mask: ArrayLike, vals: ArrayLike, *, inplace: bool = True) -> Array:
    """``arr`` with the entries where (concrete) ``mask`` is true replaced, in order,
    by ``vals`` (repeated cyclically)."""
    _immutable("place", inplace)
    x = as_array(arr, "place")
    m = np.asarray(concrete_or_error(ravel(mask), "place's mask")).astype(bool)
    (idx,) = np.nonzero(m)
    if idx.size == 0:
        return x
    v = ravel(_creation.asarray(vals, dtype_of(x)))
    if v.shape[0] == 0:
        raise ValueError("place: cannot fill from an empty vals array")
    flat = scatter_update(ravel(x), _creation.asarray(idx, np.int32), resize(v, (idx.size,)), "set")
    return reshape(flat, x.shape)


def put(a: ArrayLike, ind: ArrayLike, v: ArrayLike, mode: str | None = None, *, inplace: bool = True) -> Array:
    """``a`` with the flat positions ``ind`` set to ``v`` (repeated cyclically).
    ``mode``: None (out-of-bounds writes are dropped), ``'clip'`` or ``'wrap'``."""
    _immutable("put", inplace)
    x = as_array(a, "put")
    i = ravel(as_array(ind, "put", "ind"))
    size = int(np.prod(x.shape))
    if mode == "clip":
        i = _logic.clip(i, 0, size - 1)
    elif mode == "wrap":
        i = i % size
    elif mode not in (None, "fill", "drop"):
        raise ValueError(f"put: mode must be None, 'clip' or 'wrap', got {mode!r}")
    vals = ravel(_creation.asarray(v, dtype_of(x)))
    if i.shape[0] == 0:
        return x
    vals = resize(vals, (i.shape[0],))
    flat = scatter_update(ravel(x), i, vals, "set", mode="drop")
    return reshape(flat, x.shape)


def put_along_axis(arr: ArrayLike, indices: ArrayLike, values: ArrayLike, axis: int | None,
                   inplace: bool = True, *, mode: str | None = None) -> Array:
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (the inverse
    of ``take_along_axis``; other dimensions broadcast)."""
    _immutable("put_along_axis", inplace)
    x = as_array(arr, "put_along_axis")
    idx = as_array(indices, "put_along_axis", "indices")
    if axis is None:
        return reshape(put_along_axis(ravel(x), ravel(idx), ravel(values), 0, False, mode=mode),
                           x.shape)
    axis = canonicalize_axis(axis, x.ndim, "put_along_axis")
    if idx.ndim != x.ndim:
        raise ValueError(f"put_along_axis: indices must have the rank of arr ({x.ndim}), got {idx.ndim}")
    shape = tuple(x.shape[d] if d != axis else idx.shape[d] for d in range(x.ndim))
    shape = tuple(np.broadcast_shapes(shape, tuple(idx.shape)))
    full_idx = []
    for d in range(x.ndim):
        if d == axis:
            full_idx.append(broadcast_to(idx, shape))
        else:
            r = [1] * x.ndim
            r[d] = shape[d]
            full_idx.append(broadcast_to(reshape(_creation.arange(shape[d]), tuple(r)), shape))
    return scatter_update(x, tuple(full_idx), broadcast_to(_creation.asarray(values, dtype_of(x)), shape), "set",
                          mode=mode if mode is not None else "drop")


def resize(a: ArrayLike, new_shape: int | Sequence[int]) -> Array:
    """An array of ``new_shape`` filled with the entries of ``a``, repeated cyclically."""
    x = ravel(as_array(a, "resize"))
    shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"resize: all dimensions must be non-negative, got {shape}")
    total = int(np.prod(shape))
    size = int(x.shape[0])
    if size == 0 or total == 0:
        return _creation.zeros(shape, dtype_of(x))
    reps = -(-total // size)
    return reshape(tile(x, reps)[:total], shape)


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Array:
    """Move ``axis`` so that it lies before position ``start`` (NumPy's older
    ``moveaxis``)."""
    x = as_array(a, "rollaxis")
    nd = x.ndim
    axis = canonicalize_axis(axis, nd, "rollaxis")
    if not -nd <= start <= nd:
        raise ValueError(f"rollaxis: start must be in [{-nd}, {nd}], got {start}")
    if start < 0:
        start += nd
    if axis < start:
        start -= 1
    return moveaxis(x, axis, start)


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis``, as a tuple (the inverse of ``stack``)."""
    arr = as_array(x, "unstack")
    if arr.ndim == 0:
        raise ValueError("unstack: the input must be at least 1-d")
    axis = canonicalize_axis(axis, arr.ndim, "unstack")
    return tuple(_selection.take(arr, i, axis=axis) for i in range(int(arr.shape[axis])))


def _block_depth(x: Any, name: str) -> int:
    if isinstance(x, list):
        if not x:
            raise ValueError(f"{name}: lists cannot be empty")
        depths = {_block_depth(e, name) for e in x}
        if len(depths) != 1:
            raise ValueError(f"{name}: list depths are mismatched")
        return 1 + depths.pop()
    if isinstance(x, tuple):
        raise TypeError(f"{name}: tuples are not allowed, use lists")
    return 0


def _max_ndim(x: Any) -> int:
    return max(_max_ndim(e) for e in x) if isinstance(x, list) else ndim(x)


def block(arrays: Any) -> Array:
    """Assemble an array from nested lists of blocks: the innermost lists are
    concatenated along the last axis, the next ones along the second-to-last, ...
    Blocks are first given rank ``max(depth, largest block rank)``."""
    depth = _block_depth(arrays, "block")
    rank = max(depth, _max_ndim(arrays))

    def go(x: Any, level: int) -> Array:
        if isinstance(x, list):
            parts = [go(e, level + 1) for e in x]
            return concatenate(parts, axis=level - depth)
        arr = _creation.asarray(x)
        return reshape(arr, (1,) * (rank - arr.ndim) + tuple(arr.shape))

    return go(arrays, 0) if depth else _creation.asarray(arrays)


def apply_over_axes(func: Callable[[Any, int], Any], a: ArrayLike, axes: Sequence[int]) -> Array:
    """Apply ``func(a, axis)`` for each of ``axes`` in turn, keeping the rank (a
    result one rank smaller gets the axis back with length 1)."""
    x = as_array(a, "apply_over_axes")
    for ax in axes:
        ax = canonicalize_axis(ax, x.ndim, "apply_over_axes")
        r = _creation.asarray(func(x, ax))
        if r.ndim == x.ndim - 1:
            r = expand_dims(r, ax)
        elif r.ndim != x.ndim:
            raise ValueError("apply_over_axes: func must return an array of the same rank or one less")
        x = r
    return x


def trim_zeros(filt: ArrayLike, trim: str = "fb", axis: int | Sequence[int] | None = None) -> Array:
    """``filt`` without its leading (``'f'``) and/or trailing (``'b'``) zeros along
    ``axis`` (all axes by default; the data must be concrete)."""
    x = as_array(filt, "trim_zeros")
    if x.ndim == 0:
        raise ValueError("trim_zeros: the input must be at least 1-d")
    nz = np.asarray(concrete_or_error(x, "trim_zeros's input")) != 0
    axes = range(x.ndim) if axis is None else [canonicalize_axis(a, x.ndim, "trim_zeros")
                                                 for a in ((axis,) if isinstance(axis, int) else axis)]
    index: list[slice] = [slice(None)] * x.ndim
    trim = trim.lower()
    for ax in axes:
        other = tuple(d for d in range(x.ndim) if d != ax)
        along = nz.any(axis=other) if other else nz
        hits = np.nonzero(along)[0]
        if hits.size == 0:
            index[ax] = slice(0, 0)
            continue
        start = int(hits[0]) if "f" in trim else 0
        stop = int(hits[-1]) + 1 if "b" in trim else along.shape[0]
        index[ax] = slice(start, stop)
    return x[tuple(index)]


__all__ = [
    "apply_over_axes", "block", "choose", "compress", "delete", "extract", "insert", "place", "put",
    "put_along_axis", "resize", "rollaxis", "trim_zeros", "unstack",
]
