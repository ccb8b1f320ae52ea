"""Index helpers of ``jax.numpy``: ``mgrid``, ``ogrid``, ``r_``, ``c_``, ``s_``,
``index_exp``, ``ix_``, ``diag_indices(_from)``, ``tril/triu_indices(_from)``,
``mask_indices`` and ``fill_diagonal``.

Index sets that depend only on static sizes are computed with NumPy on the host
and returned as ``int32`` arrays, as in JAX; grids are built from ``arange`` /
``linspace`` (a complex step ``5j`` means "5 points, end included").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core.numpy import creation as _creation
from plait_core.numpy import dtypes as _np_dtypes
from plait_core.numpy import editing as _editing
from plait_core.numpy import selection as _selection
from plait_core.numpy._util import ArrayLike, as_array, concrete_int, dtype_of
from plait_core.numpy.shape import atleast_1d, concatenate, ravel, reshape, stack
from plait_core.numpy.shape import shape as shape_
from plait_core.numpy.updates import scatter_update

Array = Any

s_ = np.s_
index_exp = np.index_exp


def _slice_values(s: slice) -> Array:
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return _creation.linspace(start, s.stop, int(abs(step)), endpoint=True)
    return _creation.arange(start, s.stop, step)


class _Grid:
    def __init__(self, sparse: bool, name: str) -> None:
        self.sparse = sparse
        self.name = name

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return _slice_values(key)
        if not isinstance(key, tuple) or not all(isinstance(k, slice) for k in key):
            raise TypeError(f"{self.name}[...] takes slices (start:stop:step), got {key!r}")
        axes = [_slice_values(k) for k in key]
        dt = _np_dtypes.result_type(*axes)
        grids = _creation.meshgrid(*[a.astype(dt) for a in axes], indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else stack(grids)

    def __repr__(self) -> str:
        return f"plait.numpy.{self.name}"


mgrid = _Grid(False, "mgrid")
"""``mgrid[0:2, 0:3]``: a dense stack of index grids (``mgrid[0:1:5j]``: 5 points)."""
ogrid = _Grid(True, "ogrid")
"""``ogrid[0:2, 0:3]``: open (broadcastable) index grids."""


class _Concatenator:
    """``r_`` / ``c_``: concatenate slices, scalars and arrays along an axis; a
    leading string ``'axis'`` or ``'axis,ndmin[,trans1d]'`` (or ``'r'``/``'c'``)
    sets the axis, the minimum rank and where 1-D inputs go."""

    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str) -> None:
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key: Any) -> Array:
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        matrix = None
        if items and isinstance(items[0], str):
            directive = items.pop(0)
            if directive in ("r", "c"):
                matrix = directive
            else:
                try:
                    parts = [int(p) for p in directive.split(",")]
                except ValueError:
                    raise ValueError(f"{self.name}: bad directive {directive!r}") from None
                axis = parts[0]
                if len(parts) > 1:
                    ndmin = parts[1]
                if len(parts) > 2:
                    trans1d = parts[2]
        arrays = []
        for item in items:
            if isinstance(item, slice):
                arr = _slice_values(item)
            elif isinstance(item, str):
                raise ValueError(f"{self.name}: a string is only allowed as the first item, got {item!r}")
            else:
                arr = _creation.asarray(item)
            if arr.ndim < ndmin:
                missing = ndmin - arr.ndim
                shape = list(arr.shape)
                t = trans1d if trans1d >= 0 else ndmin + trans1d
                if t < 0 or arr.ndim == 0:
                    arr = reshape(arr, (1,) * missing + tuple(shape))
                else:
                    new = [1] * ndmin
                    start = min(t, ndmin - arr.ndim)
                    new[start:start + arr.ndim] = shape
                    arr = reshape(arr, tuple(new))
            arrays.append(atleast_1d(arr))
        out = concatenate(arrays, axis=axis)
        if matrix == "r":
            return reshape(out, (1, -1)) if out.ndim == 1 else out
        if matrix == "c":
            return reshape(out, (-1, 1)) if out.ndim == 1 else out
        return out


r_ = _Concatenator(0, 1, -1, "r_")
"""``r_[1:4, [7, 8], 0]``: concatenation along the first axis."""
c_ = _Concatenator(-1, 2, 0, "c_")
"""``c_[a, b]``: 1-D inputs become columns, concatenated along the last axis."""


def ix_(*args: ArrayLike) -> tuple[Array, ...]:
    """Open mesh from 1-D integer (or boolean, with concrete values) index arrays:
    the ``k``-th output has shape ``(1, ..., n_k, ..., 1)``."""
    out = []
    for k, a in enumerate(args):
        arr = as_array(a, "ix_", k)
        if arr.ndim != 1:
            raise ValueError(f"ix_: arguments must be 1-dimensional, argument {k} has {arr.ndim} dimensions")
        if dtype_of(arr) == np.bool_:
            arr = _selection.nonzero(arr)[0]
        shape = [1] * len(args)
        shape[k] = arr.shape[0]
        out.append(reshape(arr, tuple(shape)))
    return tuple(out)


def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """``ndim`` copies of ``arange(n)``: the indices of the main diagonal."""
    n = concrete_int(n, "diag_indices: n")
    if n < 0:
        raise ValueError(f"diag_indices: n must be non-negative, got {n}")
    if ndim < 0:
        raise ValueError(f"diag_indices: ndim must be non-negative, got {ndim}")
    return (_creation.arange(n),) * ndim


def diag_indices_from(arr: ArrayLike) -> tuple[Array, ...]:
    """:func:`diag_indices` for an array of rank >= 2 with equal dimensions."""
    shape = shape_(arr)
    if len(shape) < 2:
        raise ValueError("diag_indices_from: the input must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: all dimensions must be equal, got shape {shape}")
    return diag_indices(int(shape[0]), len(shape))


def _indices(fn: Callable[..., Any], n: int, k: int, m: int | None, name: str) -> tuple[Array, Array]:
    rows, cols = fn(concrete_int(n, f"{name}: n"), k, None if m is None else concrete_int(m, f"{name}: m"))
    return _creation.asarray(rows, np.int32), _creation.asarray(cols, np.int32)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the lower triangle (on and below diagonal ``k``)
    of an ``(n, m)`` matrix."""
    return _indices(np.tril_indices, n, k, m, "tril_indices")


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the upper triangle (on and above diagonal ``k``)."""
    return _indices(np.triu_indices, n, k, m, "triu_indices")


def _from(arr: Any, name: str) -> tuple[int, int]:
    shape = arr.shape if hasattr(arr, "shape") else shape_(arr)
    if len(shape) != 2:
        raise ValueError(f"{name}: the input must be 2-d, got shape {tuple(shape)}")
    return int(shape[0]), int(shape[1])


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Array, Array]:
    """:func:`tril_indices` for the shape of a 2-d array."""
    n, m = _from(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Array, Array]:
    """:func:`triu_indices` for the shape of a 2-d array."""
    n, m = _from(arr, "triu_indices_from")
    return triu_indices(n, k, m)


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Array, Array]:
    """Indices where ``mask_func(ones((n, n)), k)`` is non-zero (e.g. ``mask_func=triu``)."""
    mask = mask_func(_creation.ones((n, n), np.int32), k)
    rows, cols = _selection.nonzero(mask, size=size)
    return rows, cols


def fill_diagonal(a: ArrayLike, val: ArrayLike, wrap: bool = False, *, inplace: bool = True) -> Array:
    """``a`` with its main diagonal set to ``val`` (repeated cyclically if shorter).
    JAX arrays are immutable: ``inplace=False`` is required; ``wrap=True`` (NumPy's
    wrapping for tall matrices) is not supported, as in JAX."""
    if inplace:
        raise NotImplementedError("fill_diagonal: JAX arrays are immutable, use inplace=False")
    if wrap:
        raise NotImplementedError("fill_diagonal: wrap=True is not implemented (as in JAX), use wrap=False")
    x = as_array(a, "fill_diagonal")
    if x.ndim < 2:
        raise ValueError("fill_diagonal: the array must be at least 2-d")
    if x.ndim > 2 and len(set(x.shape)) != 1:
        raise ValueError(f"fill_diagonal: all dimensions of an array of rank > 2 must be equal, got {x.shape}")
    n = min(x.shape)
    values = ravel(_creation.asarray(val, dtype_of(x)))
    if values.shape[0] == 0:
        return x
    values = _editing.resize(values, (n,))
    idx = (_creation.arange(n),) * x.ndim
    return scatter_update(x, idx, values, "set")


__all__ = [
    "c_", "diag_indices", "diag_indices_from", "fill_diagonal", "index_exp", "ix_", "mask_indices", "mgrid",
    "ogrid", "r_", "s_", "tril_indices", "tril_indices_from", "triu_indices", "triu_indices_from",
]
