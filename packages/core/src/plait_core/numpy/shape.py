"""Shape manipulation: reshaping, transposing, joining, splitting, repeating,
flipping and rolling arrays, and diagonals.

Dimensions may be symbolic wherever the operation does not need their value
(``reshape``, ``transpose``, ``concatenate``, ``broadcast_to``, ...); operations
that build index tables from sizes (``diagonal``, ``split`` into sections)
need concrete sizes and say so.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.dims import (
    Dim,
    InconclusiveDimensionOperation,
    definitely_equal,
    dim_as_int,
    is_symbolic,
    min_dim,
    shape_size,
)
from plait_core.lax import _lenient
from plait_core.lax.calls import named_call
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    _dim_as_value,
    as_array,
    broadcast_to_shape,
    canonicalize_axes,
    canonicalize_axis,
    concrete_int,
    convert,
    dtype_of,
    promote_dtypes,
    shape_arg,
    shape_str,
)
from plait_core.numpy._util import (
    broadcast_shapes as _broadcast_shapes,
)
from plait_core.numpy.indexing import getitem
from plait_core.numpy.math import maximum, remainder, subtract
from plait_core.numpy.reductions import sum as _sum
from plait_core.trace import Tracer

_FULL = builtins.slice(None)


def shape(a: ArrayLike) -> tuple[Dim, ...]:
    """The shape of ``a`` (dimensions may be symbolic)."""
    return tuple(get_aval(a, "argument 0 of shape").shape)


def ndim(a: ArrayLike) -> int:
    """The number of dimensions of ``a``."""
    return get_aval(a, "argument 0 of ndim").ndim


def size(a: ArrayLike, axis: int | None = None) -> Dim:
    """The number of elements of ``a`` (along ``axis`` if given)."""
    aval = get_aval(a, "argument 0 of size")
    if axis is None:
        return shape_size(aval.shape)
    return aval.shape[canonicalize_axis(axis, aval.ndim, "size")]


# ---------------------------------------------------------------------------
# Reshaping


def _new_shape(newshape: Any, total: Dim, old: Sequence[Dim], name: str) -> tuple[Dim, ...]:
    entries = newshape if isinstance(newshape, (tuple, list)) else (newshape,)
    dims: list[Any] = []
    for d in entries:
        if isinstance(d, Tracer):
            d = concrete_int(d, f"{name}: a dimension of the new shape")
        if isinstance(d, (builtins.int, np.integer)) and not isinstance(d, (builtins.bool, np.bool_)):
            d = builtins.int(d)
            if d < -1:
                raise ValueError(f"{name}: invalid dimension {d} in the new shape {tuple(entries)!r}")
        elif not hasattr(d, "free_names"):
            raise TypeError(f"{name}: the new shape must hold integers, got {d!r}")
        dims.append(d)
    unknown = [i for i, d in enumerate(dims) if type(d) is builtins.int and d == -1]
    if len(unknown) > 1:
        raise ValueError(f"{name}: can only specify one unknown dimension (-1), got {tuple(entries)!r}")
    if unknown:
        known: Dim = 1
        for i, d in enumerate(dims):
            if i != unknown[0]:
                known = known * d
        if definitely_equal(known, 0):
            raise ValueError(f"{name}: cannot infer the unknown dimension of {tuple(entries)!r} "
                             f"for an array of shape {shape_str(old)}")
        try:
            missing = total // known
            exact = definitely_equal(missing * known, total)
        except InconclusiveDimensionOperation:
            exact = False
        if not exact:
            raise ValueError(f"{name}: cannot reshape an array of shape {shape_str(old)} (size {total}) "
                             f"into shape {tuple(entries)!r}")
        dims[unknown[0]] = missing
    if not definitely_equal(shape_size(dims), total):
        raise ValueError(f"{name}: cannot reshape an array of shape {shape_str(old)} (size {total}) "
                         f"into shape {shape_str(dims)} (size {shape_size(dims)})")
    return tuple(dims)


def reshape(a: ArrayLike, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: builtins.bool | None = None) -> Array:
    """``a`` with a new ``shape`` of the same size (one entry may be -1, inferred).
    ``order="F"`` reads and writes in column-major order."""
    del copy
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("reshape: the new shape is required")
    x = as_array(a, "reshape")
    old = tuple(get_aval(x).shape)
    new = _new_shape(shape, shape_size(old), old, "reshape")
    if order in ("C", "A"):
        return lax.reshape(x, new)
    if order == "F":
        rev_old = tuple(range(len(old)))[::-1]
        xt = lax.transpose(x, rev_old)
        out = lax.reshape(xt, new[::-1])
        return lax.transpose(out, tuple(range(len(new)))[::-1])
    raise ValueError(f"reshape: order must be 'C', 'F' or 'A', got {order!r}")


def ravel(a: ArrayLike, order: str = "C") -> Array:
    """``a`` flattened to one dimension."""
    x = as_array(a, "ravel")
    return reshape(x, (shape_size(get_aval(x).shape),), order)


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """``a`` with its axes permuted (reversed by default)."""
    x = as_array(a, "transpose")
    nd = get_aval(x).ndim
    if axes is None:
        perm = tuple(range(nd))[::-1]
    else:
        perm = tuple(canonicalize_axis(ax, nd, "transpose", "axes") for ax in axes)
        if sorted(perm) != list(range(nd)):
            raise ValueError(f"transpose: axes {tuple(axes)!r} are not a permutation of the "
                             f"{nd} axes of an array of shape {shape_str(get_aval(x).shape)}")
    return lax.transpose(x, perm)


permute_dims = transpose


def matrix_transpose(x: ArrayLike, /) -> Array:
    """Swap the last two axes."""
    arr = as_array(x, "matrix_transpose")
    nd = get_aval(arr).ndim
    if nd < 2:
        raise ValueError(f"matrix_transpose: needs at least 2 dimensions, got shape {shape_str(arr.shape)}")
    perm = list(range(nd))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return lax.transpose(arr, tuple(perm))


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Array:
    """``a`` with two axes interchanged."""
    x = as_array(a, "swapaxes")
    nd = get_aval(x).ndim
    i, j = canonicalize_axis(axis1, nd, "swapaxes", "axis1"), canonicalize_axis(axis2, nd, "swapaxes", "axis2")
    perm = list(range(nd))
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(x, tuple(perm))


def moveaxis(a: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    """``a`` with the axes ``source`` moved to the positions ``destination``."""
    x = as_array(a, "moveaxis")
    nd = get_aval(x).ndim
    src = canonicalize_axes(source, nd, "moveaxis", "source")
    dst = canonicalize_axes(destination, nd, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source!r} and destination {destination!r} must have the "
                         "same number of elements")
    rest = [i for i in range(nd) if i not in src]
    perm: list[int] = [-1] * nd
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(rest)
    perm = [next(it) if p == -1 else p for p in perm]
    return lax.transpose(x, tuple(perm))


def expand_dims(a: ArrayLike, axis: int | Sequence[int]) -> Array:
    """``a`` with size-1 axes inserted at the positions ``axis`` of the result."""
    x = as_array(a, "expand_dims")
    out_nd = get_aval(x).ndim + (len(axis) if isinstance(axis, (tuple, list)) else 1)
    axes = canonicalize_axes(axis, out_nd, "expand_dims")
    return lax.expand_dims(x, tuple(sorted(axes)))


def squeeze(a: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """``a`` without the given size-1 axes (all axes of size 1 by default)."""
    x = as_array(a, "squeeze")
    shp = tuple(get_aval(x).shape)
    if axis is None:
        axes = tuple(i for i, d in enumerate(shp) if definitely_equal(d, 1))
    else:
        axes = canonicalize_axes(axis, len(shp), "squeeze")
        for ax in axes:
            if not definitely_equal(shp[ax], 1):
                raise ValueError(f"squeeze: cannot select axis {ax} to squeeze out, which has size "
                                 f"{shp[ax]} (shape {shape_str(shp)}), not one")
    return lax.squeeze(x, axes) if axes else x


# ---------------------------------------------------------------------------
# Broadcasting


def broadcast_to(array: ArrayLike, shape: Any) -> Array:
    """``array`` broadcast to ``shape`` by NumPy's rules; a typed key array
    broadcasts as its keys (the result is a key array of ``shape``)."""
    # Lazy on purpose: plait_core.prng imports plait_core.numpy.
    from plait_core.prng import PRNGKeyArray

    if isinstance(array, PRNGKeyArray):
        return PRNGKeyArray(broadcast_to(array.data, (*shape_arg(shape, "broadcast_to"), 2)))
    x = as_array(array, "broadcast_to")
    return broadcast_to_shape(x, shape_arg(shape, "broadcast_to"), "broadcast_to")


def broadcast_shapes(*shapes: Sequence[Dim] | int) -> tuple[Dim, ...]:
    """The shape ``shapes`` broadcast to (``ValueError`` if incompatible)."""
    norm: list[tuple[Dim, ...]] = [
        (builtins.int(s),) if isinstance(s, (builtins.int, np.integer)) else tuple(s) for s in shapes
    ]
    return _broadcast_shapes("broadcast_shapes", *norm)


def broadcast_arrays(*args: ArrayLike) -> list[Array]:
    """The arguments broadcast to their common shape."""
    arrays = [as_array(a, "broadcast_arrays", i) for i, a in enumerate(args)]
    target = _broadcast_shapes("broadcast_arrays", *[get_aval(a).shape for a in arrays])
    return [broadcast_to_shape(a, target, "broadcast_arrays") for a in arrays]


def atleast_1d(*arys: ArrayLike) -> Any:
    """Each argument with at least one dimension (a list for several arguments)."""
    out = [_at_least(a, 1, "atleast_1d") for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys: ArrayLike) -> Any:
    """Each argument with at least two dimensions (1-D ``(n,)`` becomes ``(1, n)``)."""
    out = [_at_least(a, 2, "atleast_2d") for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys: ArrayLike) -> Any:
    """Each argument with at least three dimensions (``(n,)`` becomes ``(1, n, 1)``,
    ``(m, n)`` becomes ``(m, n, 1)``)."""
    out = [_at_least(a, 3, "atleast_3d") for a in arys]
    return out[0] if len(out) == 1 else out


def _at_least(a: ArrayLike, n: int, name: str) -> Array:
    x = as_array(a, name)
    shp = tuple(get_aval(x).shape)
    nd = len(shp)
    if nd >= n:
        return x
    if n == 3:
        new = {0: (1, 1, 1), 1: (1, *shp, 1), 2: (*shp, 1)}[nd]
    else:
        new = (1,) * (n - nd) + shp
    return lax.reshape(x, new)


# ---------------------------------------------------------------------------
# Joining


def _sequence(arrays: Any, name: str) -> list[Array]:
    if isinstance(arrays, (np.ndarray, Tracer)) or (hasattr(arrays, "shape") and hasattr(arrays, "dtype")):
        n = get_aval(arrays).shape[0] if get_aval(arrays).ndim else None
        if n is None:
            raise ValueError(f"{name}: a 0-d array is not a sequence of arrays")
        return [arrays[i] for i in range(dim_as_int(n, name))]
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(f"{name}: expected a sequence of arrays, got {type(arrays).__name__}")
    return [as_array(a, name, i) for i, a in enumerate(arrays)]


def concatenate(arrays: Sequence[ArrayLike], axis: int | None = 0, dtype: Any = None) -> Array:
    """Join arrays along an existing ``axis`` (flattened first when ``axis`` is None).
    Dtypes are promoted; shapes must match except along ``axis``."""
    xs = _sequence(arrays, "concatenate")
    if not xs:
        raise ValueError("concatenate: need at least one array to concatenate")
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    xs = promote_dtypes("concatenate", *xs)
    if dtype is not None:
        xs = [convert(x, dtypes.canonicalize_dtype(np.dtype(dtype))) for x in xs]
    shapes = [tuple(get_aval(x).shape) for x in xs]
    nd = len(shapes[0])
    if nd == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    ax = canonicalize_axis(axis, nd, "concatenate")
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != nd:
            raise ValueError(f"concatenate: all the input arrays must have the same number of dimensions, "
                             f"but the array at index 0 has {nd} dimension(s) and the array at index {i} "
                             f"has {len(s)} dimension(s)")
        for d in range(nd):
            if d != ax and not definitely_equal(s[d], shapes[0][d]):
                raise ValueError(f"concatenate: all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along dimension {d}, the array at index 0 has "
                                 f"size {shapes[0][d]} and the array at index {i} has size {s[d]}")
    while len(xs) > _CHUNK:
        xs = _join_chunks(xs, _chunk_joiner("concatenate", ax))
    return lax.concatenate(xs, ax) if len(xs) > 1 else xs[0]


concat = concatenate

# Many operands are joined in a tree of calls of at most _CHUNK operands each:
# one XLA concatenate of n operands compiles in time superlinear in n (10,000
# float32[3] arrays: minutes), while chunks of one shape share one compiled
# program, so stacking n small arrays eagerly costs O(n) dispatch.
_CHUNK = 32


@functools.cache
def _chunk_joiner(kind: str, ax: int) -> Callable[..., Array]:
    """A named call joining its operands along ``ax`` (``stack``: along a new axis)."""
    if kind == "stack":
        def join(*xs: Array) -> Array:
            return lax.concatenate([lax.expand_dims(x, (ax,)) for x in xs], ax)
    else:
        def join(*xs: Array) -> Array:
            return lax.concatenate(list(xs), ax)
    return named_call(join, name=f"{kind}_chunk")


def _join_chunks(xs: Sequence[Array], joiner: Callable[..., Array]) -> list[Array]:
    return [joiner(*xs[i:i + _CHUNK]) for i in range(0, len(xs), _CHUNK)]


def stack(arrays: Sequence[ArrayLike], axis: int = 0, dtype: Any = None) -> Array:
    """Join arrays of one shape along a new ``axis``."""
    xs = _sequence(arrays, "stack")
    if not xs:
        raise ValueError("stack: need at least one array to stack")
    shapes = [tuple(get_aval(x).shape) for x in xs]
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != len(shapes[0]) or not builtins.all(definitely_equal(p, q) for p, q in zip(s, shapes[0])):
            raise ValueError(f"stack: all input arrays must have the same shape, but the array at index 0 "
                             f"has shape {shape_str(shapes[0])} and the array at index {i} has shape "
                             f"{shape_str(s)}")
    ax = canonicalize_axis(axis, len(shapes[0]) + 1, "stack")
    if len(xs) > _CHUNK:
        xs = promote_dtypes("stack", *xs)
        if dtype is not None:
            xs = [convert(x, dtypes.canonicalize_dtype(np.dtype(dtype))) for x in xs]
        return concatenate(_join_chunks(xs, _chunk_joiner("stack", ax)), ax)
    return concatenate([lax.expand_dims(x, (ax,)) for x in xs], ax, dtype)


def hstack(tup: Sequence[ArrayLike], dtype: Any = None) -> Array:
    """Join arrays horizontally (along axis 1, or 0 for 1-D arrays)."""
    xs = [_at_least(x, 1, "hstack") for x in _sequence(tup, "hstack")]
    return concatenate(xs, 0 if xs and get_aval(xs[0]).ndim == 1 else 1, dtype)


def vstack(tup: Sequence[ArrayLike], dtype: Any = None) -> Array:
    """Join arrays vertically (along axis 0, after making them at least 2-D)."""
    return concatenate([_at_least(x, 2, "vstack") for x in _sequence(tup, "vstack")], 0, dtype)


row_stack = vstack


def dstack(tup: Sequence[ArrayLike], dtype: Any = None) -> Array:
    """Join arrays along the third axis (after making them at least 3-D)."""
    return concatenate([_at_least(x, 3, "dstack") for x in _sequence(tup, "dstack")], 2, dtype)


def column_stack(tup: Sequence[ArrayLike]) -> Array:
    """Join 1-D arrays as columns (2-D arrays are joined along axis 1)."""
    cols = []
    for x in _sequence(tup, "column_stack"):
        if get_aval(x).ndim < 2:
            x = lax.reshape(x, (shape_size(get_aval(x).shape), 1))
        cols.append(x)
    return concatenate(cols, 1)


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Array:
    """``arr`` with ``values`` appended (both flattened when ``axis`` is None)."""
    return concatenate([as_array(arr, "append"), as_array(values, "append", "values")], axis)


# ---------------------------------------------------------------------------
# Splitting


def _along(x: Array, axis: int, s: builtins.slice) -> Array:
    return getitem(x, (_FULL,) * axis + (s,))


def _split(ary: ArrayLike, indices_or_sections: Any, axis: int, name: str, equal: builtins.bool) -> list[Array]:
    x = as_array(ary, name)
    ax = canonicalize_axis(axis, get_aval(x).ndim, name)
    if isinstance(indices_or_sections, (builtins.int, np.integer)) or (
            isinstance(indices_or_sections, (np.ndarray, Tracer)) and get_aval(indices_or_sections).ndim == 0):
        sections = concrete_int(indices_or_sections, f"{name}: the number of sections")
        if sections <= 0:
            raise ValueError(f"{name}: the number of sections must be larger than 0, got {sections}")
        n = dim_as_int(get_aval(x).shape[ax], f"{name} into sections (the axis length)")
        if equal and n % sections:
            raise ValueError(f"{name}: array split does not result in an equal division: an axis of size {n} "
                             f"into {sections} sections")
        q, r = builtins.divmod(n, sections)
        bounds = [0]
        for i in range(sections):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
        return [_along(x, ax, builtins.slice(bounds[i], bounds[i + 1])) for i in range(sections)]
    points = [concrete_int(v, f"{name}: a split index") for v in indices_or_sections]
    starts: list[int | None] = [None, *points]
    stops: list[int | None] = [*points, None]
    return [_along(x, ax, builtins.slice(s, e)) for s, e in zip(starts, stops)]


def split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """Split into equal sections (``ValueError`` if they would not be equal) or at
    the given indices along ``axis``."""
    return _split(ary, indices_or_sections, axis, "split", True)


def array_split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """As :func:`split`, allowing sections of unequal sizes (the first ones longer)."""
    return _split(ary, indices_or_sections, axis, "array_split", False)


def hsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """Split along axis 1 (axis 0 for 1-D arrays)."""
    x = as_array(ary, "hsplit")
    return split(x, indices_or_sections, 0 if get_aval(x).ndim == 1 else 1)


def vsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """Split along axis 0."""
    return split(ary, indices_or_sections, 0)


def dsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """Split along axis 2."""
    return split(ary, indices_or_sections, 2)


# ---------------------------------------------------------------------------
# Repeating


def tile(A: ArrayLike, reps: Any) -> Array:
    """``A`` repeated ``reps`` times along each axis."""
    x = as_array(A, "tile")
    reps_t = tuple(concrete_int(r, "tile: reps") for r in (reps if isinstance(reps, (tuple, list)) else (reps,)))
    if builtins.any(r < 0 for r in reps_t):
        raise ValueError(f"tile: reps must be non-negative, got {reps_t}")
    shp = tuple(get_aval(x).shape)
    nd = builtins.max(len(shp), len(reps_t))
    shp = (1,) * (nd - len(shp)) + shp
    reps_t = (1,) * (nd - len(reps_t)) + reps_t
    x = lax.reshape(x, shp)
    interleaved: list[Dim] = []
    for r, d in zip(reps_t, shp):
        interleaved += [r, d]
    b = lax.broadcast_in_dim(x, tuple(interleaved), tuple(range(1, 2 * nd, 2)))
    return lax.reshape(b, tuple(r * d for r, d in zip(reps_t, shp)))


# ---------------------------------------------------------------------------
# Flipping and rolling


def flip(m: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """``m`` with the order of elements reversed along ``axis`` (all axes by default)."""
    x = as_array(m, "flip")
    return lax.rev(x, canonicalize_axes(axis, get_aval(x).ndim, "flip"))


def fliplr(m: ArrayLike) -> Array:
    """Reverse the columns (axis 1)."""
    x = as_array(m, "fliplr")
    if get_aval(x).ndim < 2:
        raise ValueError(f"fliplr: the input must have at least 2 dimensions, got shape {shape_str(x.shape)}")
    return lax.rev(x, (1,))


def flipud(m: ArrayLike) -> Array:
    """Reverse the rows (axis 0)."""
    x = as_array(m, "flipud")
    if get_aval(x).ndim < 1:
        raise ValueError("flipud: the input must have at least 1 dimension")
    return lax.rev(x, (0,))


def roll(a: ArrayLike, shift: Any, axis: int | Sequence[int] | None = None) -> Array:
    """Elements shifted by ``shift`` along ``axis`` (of the flattened array when None),
    wrapping around; ``shift`` and ``axis`` may be tuples, and ``shift`` traced."""
    x = as_array(a, "roll")
    if axis is None:
        return lax.reshape(roll(ravel(x), shift, 0), tuple(get_aval(x).shape))
    axes = canonicalize_axes(axis, get_aval(x).ndim, "roll") if isinstance(axis, (tuple, list)) else \
        (canonicalize_axis(axis, get_aval(x).ndim, "roll"),)
    shifts = list(shift) if isinstance(shift, (tuple, list)) else [shift]
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift and axis must have the same length, got {len(shifts)} and {len(axes)}")
    for s, ax in zip(shifts, axes):
        x = _roll_one(x, s, ax)
    return x


def _roll_one(x: Array, shift: Any, ax: int) -> Array:
    n = get_aval(x).shape[ax]
    if type(n) is builtins.int and n == 0:
        return x
    traced_shift = isinstance(shift, Tracer) and shift.to_concrete_value() is None
    if traced_shift or is_symbolic(n):
        # The split point is known only as a value (a traced shift, or an axis of
        # symbolic length: n under mask, a ragged length in vmap over piles): read
        # a window of length n out of x twice over, starting at n - shift mod n.
        if not traced_shift:
            shift = concrete_int(shift, "roll: shift")
        size = _dim_as_value(n)
        # An empty element of a pile has size 0; dividing by 1 instead keeps
        # the remainder defined (the window is empty anyway).
        start = subtract(size, remainder(shift, maximum(size, 1)))
        doubled = lax.concatenate([x, x], ax)
        starts: list[Any] = [0] * get_aval(x).ndim
        starts[ax] = convert(start, dtypes.default_int_dtype())
        return lax.dynamic_slice(doubled, starts, tuple(get_aval(x).shape))
    s = concrete_int(shift, "roll: shift")
    size_i = dim_as_int(n, "roll (the axis length)")
    s %= size_i
    if s == 0:
        return x
    tail = _along(x, ax, builtins.slice(size_i - s, None))
    head = _along(x, ax, builtins.slice(0, size_i - s))
    return lax.concatenate([tail, head], ax)


def rot90(m: ArrayLike, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Array:
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    x = as_array(m, "rot90")
    nd = get_aval(x).ndim
    if len(axes) != 2:
        raise ValueError("rot90: axes must name exactly two axes")
    a0, a1 = canonicalize_axis(axes[0], nd, "rot90", "axes"), canonicalize_axis(axes[1], nd, "rot90", "axes")
    if a0 == a1:
        raise ValueError("rot90: the two axes must be different")
    k = concrete_int(k, "rot90: k") % 4
    if k == 0:
        return x
    if k == 2:
        return lax.rev(x, (a0, a1))
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return lax.transpose(lax.rev(x, (a1,)), tuple(perm))
    return lax.rev(lax.transpose(x, tuple(perm)), (a1,))


# ---------------------------------------------------------------------------
# Diagonals


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The ``offset`` diagonal of the ``(axis1, axis2)`` planes, as the last axis."""
    x = as_array(a, "diagonal")
    nd = get_aval(x).ndim
    if nd < 2:
        raise ValueError(f"diagonal: the input must have at least 2 dimensions, got shape {shape_str(x.shape)}")
    i1 = canonicalize_axis(axis1, nd, "diagonal", "axis1")
    i2 = canonicalize_axis(axis2, nd, "diagonal", "axis2")
    if i1 == i2:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    offset = concrete_int(offset, "diagonal: offset")
    rest = [i for i in range(nd) if i not in (i1, i2)]
    moved = lax.transpose(x, (*rest, i1, i2))
    n, m = get_aval(x).shape[i1], get_aval(x).shape[i2]
    row0, col0 = builtins.max(0, -offset), builtins.max(0, offset)
    idt = dtypes.default_int_dtype()
    if type(n) is builtins.int and type(m) is builtins.int:
        length = builtins.max(0, builtins.min(n - row0, m - col0))
        rows: Any = np.arange(row0, row0 + length, dtype=idt)
        cols: Any = np.arange(col0, col0 + length, dtype=idt)
    else:
        # A symbolic plane (n x n under mask, a ragged square inside vmap over
        # piles): the diagonal's length must be one polynomial for every size.
        try:
            sym_length = min_dim(n - row0, m - col0)
        except InconclusiveDimensionOperation:
            raise TypeError(f"diagonal: the offset {offset} diagonal of a plane of shape {shape_str((n, m))} has "
                            f"length min({n - row0}, {m - col0}), which depends on the sizes; a symbolic "
                            "dimension cannot say which is smaller") from None
        steps = lax.iota(idt, sym_length)
        rows = _lenient.add(steps, np.asarray(row0, idt)) if row0 else steps
        cols = _lenient.add(steps, np.asarray(col0, idt)) if col0 else steps
    out = getitem(moved, (Ellipsis, rows, cols), mode="promise_in_bounds")
    return convert(out, dtype_of(out))  # never weak, as in JAX


def diag(v: ArrayLike, k: int = 0) -> Array:
    """The ``k``-th diagonal of a 2-D array, or a 2-D array with the 1-D ``v`` on its
    ``k``-th diagonal."""
    x = as_array(v, "diag")
    nd = get_aval(x).ndim
    k = concrete_int(k, "diag: k")
    if nd == 2:
        return diagonal(x, k)
    if nd != 1:
        raise ValueError(f"diag: the input must be 1-D or 2-D, got shape {shape_str(x.shape)}")
    length = get_aval(x).shape[0]
    n = length + builtins.abs(k)
    zero = convert(0, dtype_of(x), get_aval(x).weak_type)  # keeps x's weak type, as in JAX
    padded = lax.pad(x, zero, [(builtins.max(-k, 0), builtins.max(k, 0), 0)])
    grid = lax.broadcast_in_dim(padded, (n, n), (0,))
    rows = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    on_diagonal = _lenient.eq(_lenient.add(rows, convert(k, dtypes.int32)), cols)
    return _lenient.select_n(on_diagonal, lax.broadcast_in_dim(zero, (n, n), ()), grid)


def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal."""
    out = diag(ravel(as_array(v, "diagflat")), k)
    return convert(out, dtype_of(out))  # never weak, as in JAX


def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: None = None) -> Array:
    """The sum of the ``offset`` diagonal of the ``(axis1, axis2)`` planes."""
    if out is not None:
        raise TypeError("trace: the out argument is not supported (plait arrays are immutable)")
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
