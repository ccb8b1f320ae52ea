"""``lax`` functions of the structural family: JAX's names and signatures over
the structural primitives (``broadcast_in_dim``, ``reshape``, ``pad``,
``gather``, ``scatter_add``, ...).

The wrappers normalise their arguments (lists become tuples, negative axes
are wrapped where JAX wraps them, Python scalars take the operand's dtype)
and skip operations that would do nothing (a reshape to the same shape, the
identity transpose), returning the operand itself as JAX does.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray, get_aval
from plait_core.dims import Dim, SymbolicDim, canonicalize_shape, definitely_equal, shape_size, simplify
from plait_core.primitive import primitive_by_name
from plait_core.primitives.elementwise import convert_element_type_p
from plait_core.primitives.shapes import dimension_as_value
from plait_core.primitives.structural import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    broadcast_in_dim_p,
    concatenate_p,
    dynamic_slice_p,
    dynamic_update_slice_p,
    expand_dims_p,
    gather_p,
    iota_p,
    pad_p,
    reshape_p,
    rev_p,
    scatter_add_p,
    scatter_max_p,
    scatter_min_p,
    scatter_mul_p,
    scatter_p,
    slice_p,
    squeeze_p,
    transpose_p,
)
from plait_core.trace import Tracer, dim_or_concrete

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "broadcast",
    "broadcast_in_dim",
    "broadcasted_iota",
    "collapse",
    "concatenate",
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "expand_dims",
    "full",
    "gather",
    "index_in_dim",
    "iota",
    "pad",
    "reshape",
    "rev",
    "scatter",
    "scatter_add",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "slice",
    "slice_in_dim",
    "squeeze",
    "transpose",
]

_PY_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


# ---------------------------------------------------------------------------
# Argument normalisation


def _aval(x: Any, fn: str, arg: str) -> ShapedArray:
    return get_aval(x, f"argument {arg} of lax.{fn}")


def _is_array(x: Any) -> bool:
    """Arrays and tracers are returned as they are when an operation is trivial;
    Python scalars are still bound, so the result is an array."""
    return not isinstance(x, _PY_SCALARS)


def _ints(fn: str, arg: str, value: Any) -> tuple[int, ...]:
    try:
        return tuple(operator.index(v) for v in value)
    except TypeError:
        raise TypeError(f"lax.{fn}: {arg} must be a sequence of integers, got {value!r}") from None


def _int(fn: str, arg: str, value: Any) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"lax.{fn}: {arg} must be an integer, got {value!r}") from None


def _dim(fn: str, arg: str, value: Any) -> Dim:
    if isinstance(value, SymbolicDim):
        return simplify(value)
    return _int(fn, arg, value)


def _dims(fn: str, arg: str, value: Any) -> tuple[Dim, ...]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"lax.{fn}: {arg} must be a sequence of dimensions, got {value!r}")
    return tuple(_dim(fn, arg, v) for v in value)


def _axis(fn: str, arg: str, axis: Any, ndim: int) -> int:
    a = _int(fn, arg, axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"lax.{fn}: {arg}={a} is out of range for an operand of rank {ndim}")
    return a + ndim if a < 0 else a


def _as_dtype(fn: str, arg: str, x: Any, dtype: np.dtype[Any]) -> Any:
    """Python scalars take ``dtype``; other values are passed on unchanged."""
    if isinstance(x, _PY_SCALARS):
        return np.asarray(x, dtype=dtype)
    _aval(x, fn, arg)
    return x


def _size(fn: str, arg: str, d: Any) -> Any:
    """One entry of a shape argument with a traced size resolved: the dimension
    the tracer's trace offers for it (inside ``vmap`` over sizes, a ragged size
    bound to the batched values), else its concrete value as an int; a
    concretization error naming ``fn`` and ``arg`` when it has neither."""
    what = f"lax.{fn}: a dimension of {arg}"
    d = dim_or_concrete(d, what)
    if isinstance(d, SymbolicDim):
        return d
    value = np.asarray(d)
    if value.shape != () or not dtypes.is_int(value.dtype):
        raise TypeError(f"{what} must be an integer scalar, got {value.dtype.name}{list(value.shape)}")
    return int(value)


def _shape(fn: str, arg: str, shape: Any) -> tuple[Dim, ...]:
    """A shape argument as a canonical shape, its traced sizes resolved as
    :func:`plait_core.numpy.ones` resolves them (see :func:`_size`)."""
    if isinstance(shape, Tracer):
        shape = (_size(fn, arg, shape),)
    elif isinstance(shape, (tuple, list)) and any(isinstance(d, Tracer) for d in shape):
        shape = tuple(_size(fn, arg, d) if isinstance(d, Tracer) else d for d in shape)
    return canonicalize_shape(shape, f"lax.{fn} {arg}")


# ---------------------------------------------------------------------------
# Broadcasting and reshaping


def broadcast_in_dim(operand: Any, shape: Sequence[Dim], broadcast_dimensions: Sequence[int]) -> Any:
    """Broadcast ``operand`` to ``shape``: operand dimension ``i`` becomes result
    dimension ``broadcast_dimensions[i]`` (strictly increasing) and must have size
    1 or the size of that result dimension; the other result dimensions are new.
    A size of ``shape`` may be a traced integer inside ``vmap`` over sizes."""
    aval = _aval(operand, "broadcast_in_dim", "operand")
    shape_t = _shape("broadcast_in_dim", "shape", shape)
    bdims = _ints("broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions)
    if (_is_array(operand) and bdims == tuple(range(aval.ndim))
            and definitely_equal_shape(aval.shape, shape_t)):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape_t, broadcast_dimensions=bdims)


def definitely_equal_shape(a: Sequence[Dim], b: Sequence[Dim]) -> bool:
    """Same rank and provably equal dimensions."""
    return len(a) == len(b) and all(definitely_equal(x, y) for x, y in zip(a, b))


def broadcast(operand: Any, sizes: Sequence[Dim]) -> Any:
    """Add leading dimensions of ``sizes`` to ``operand`` (result shape ``sizes + operand.shape``)."""
    aval = _aval(operand, "broadcast", "operand")
    sizes_t = _shape("broadcast", "sizes", sizes)
    n = len(sizes_t)
    return broadcast_in_dim(operand, sizes_t + aval.shape, tuple(range(n, n + aval.ndim)))


def reshape(operand: Any, new_sizes: Sequence[Dim], dimensions: Sequence[int] | None = None) -> Any:
    """Reshape ``operand`` to ``new_sizes`` (same number of elements, row-major order).
    With ``dimensions``, the operand is first transposed by that permutation."""
    aval = _aval(operand, "reshape", "operand")
    sizes = _shape("reshape", "new_sizes", new_sizes)
    dims = None if dimensions is None else _ints("reshape", "dimensions", dimensions)
    if dims == tuple(range(aval.ndim)):
        dims = None
    if _is_array(operand) and dims is None and definitely_equal_shape(aval.shape, sizes):
        return operand
    return reshape_p.bind(operand, new_sizes=sizes, dimensions=dims)


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """Remove the size-1 ``dimensions`` (negative values count from the end)."""
    aval = _aval(array, "squeeze", "array")
    dims = tuple(sorted(_axis("squeeze", "dimensions", d, aval.ndim) for d in dimensions))
    if not dims and _is_array(array):
        return array
    return squeeze_p.bind(array, dimensions=dims)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """Insert size-1 dimensions at the positions ``dimensions`` of the result
    (negative values count from the end of the result)."""
    aval = _aval(array, "expand_dims", "array")
    out_rank = aval.ndim + len(dimensions)
    dims = tuple(sorted(_axis("expand_dims", "dimensions", d, out_rank) for d in dimensions))
    if not dims and _is_array(array):
        return array
    return expand_dims_p.bind(array, dimensions=dims)


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merge dimensions ``start_dimension`` up to (not including) ``stop_dimension``
    (default: the last) into one."""
    aval = _aval(operand, "collapse", "operand")
    nd = aval.ndim
    start = _axis("collapse", "start_dimension", start_dimension, nd) if nd else 0
    stop = nd if stop_dimension is None else _int("collapse", "stop_dimension", stop_dimension)
    if stop < 0:
        stop += nd
    if not start <= stop <= nd:
        raise ValueError(f"lax.collapse: cannot collapse dimensions {start_dimension}:{stop_dimension} of "
                         f"an operand of rank {nd}")
    merged = shape_size(aval.shape[start:stop])
    return reshape(operand, aval.shape[:start] + (merged,) + aval.shape[stop:])


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """Permute the dimensions: result dimension ``i`` is operand dimension ``permutation[i]``."""
    aval = _aval(operand, "transpose", "operand")
    perm = _ints("transpose", "permutation", permutation)
    if perm == tuple(range(aval.ndim)) and _is_array(operand):
        return operand
    return transpose_p.bind(operand, permutation=perm)


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """Reverse the order of elements along each of ``dimensions``."""
    aval = _aval(operand, "rev", "operand")
    dims = tuple(_axis("rev", "dimensions", d, aval.ndim) for d in dimensions)
    if not dims and _is_array(operand):
        return operand
    return rev_p.bind(operand, dimensions=dims)


# ---------------------------------------------------------------------------
# Padding, concatenation, slicing


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pad each dimension with ``(low, high, interior)`` copies of the scalar
    ``padding_value``: ``interior`` between neighbouring elements, ``low``/``high``
    at the ends.  Negative ``low``/``high`` remove elements from that end."""
    aval = _aval(operand, "pad", "operand")
    value = _as_dtype("pad", "padding_value", padding_value, aval.dtype)
    try:
        config = tuple(_ints("pad", "padding_config", cfg) for cfg in padding_config)
    except TypeError:
        raise TypeError(f"lax.pad: padding_config must be a sequence of (low, high, interior) triples, "
                        f"got {padding_config!r}") from None
    return pad_p.bind(operand, value, padding_config=config)


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Join ``operands`` (same dtype and rank, equal sizes except along
    ``dimension``) along ``dimension``."""
    ops = list(operands)
    if not ops:
        raise ValueError("lax.concatenate: needs at least one operand")
    avals = [_aval(x, "concatenate", f"operands[{i}]") for i, x in enumerate(ops)]
    dim = _int("concatenate", "dimension", dimension)
    if dim < 0 and avals[0].ndim:
        dim += avals[0].ndim
    if len(ops) == 1 and _is_array(ops[0]):
        if not 0 <= dim < avals[0].ndim:
            raise ValueError(f"lax.concatenate: dimension={dimension} is out of range for operands "
                             f"{avals[0].str_short()}")
        return ops[0]
    return concatenate_p.bind(*ops, dimension=dim)


def slice(
    operand: Any,
    start_indices: Sequence[Dim],
    limit_indices: Sequence[Dim],
    strides: Sequence[int] | None = None,
) -> Any:
    """The elements ``start <= i < limit`` in steps of ``strides`` (default 1) of
    every dimension.  Bounds must satisfy ``0 <= start <= limit <= size``."""
    aval = _aval(operand, "slice", "operand")
    starts = _dims("slice", "start_indices", start_indices)
    limits = _dims("slice", "limit_indices", limit_indices)
    steps = None if strides is None else _ints("slice", "strides", strides)
    if steps is not None and all(s == 1 for s in steps):
        steps = None
    if (_is_array(operand) and steps is None and len(starts) == aval.ndim
            and all(definitely_equal(s, 0) for s in starts)
            and definitely_equal_shape(limits, aval.shape)):
        return operand
    return slice_p.bind(operand, start_indices=starts, limit_indices=limits, strides=steps)


def slice_in_dim(
    operand: Any, start_index: Dim | None, limit_index: Dim | None, stride: int = 1, axis: int = 0
) -> Any:
    """:func:`slice` along one ``axis``; ``None`` bounds mean the ends and negative
    bounds count from the end."""
    aval = _aval(operand, "slice_in_dim", "operand")
    ax = _axis("slice_in_dim", "axis", axis, aval.ndim)
    size = aval.shape[ax]
    start: Dim = 0 if start_index is None else _dim("slice_in_dim", "start_index", start_index)
    limit: Dim = size if limit_index is None else _dim("slice_in_dim", "limit_index", limit_index)
    if type(start) is int and start < 0:
        start = start + size
    if type(limit) is int and limit < 0:
        limit = limit + size
    starts: list[Dim] = [0] * aval.ndim
    limits = list(aval.shape)
    strides = [1] * aval.ndim
    starts[ax], limits[ax], strides[ax] = start, limit, _int("slice_in_dim", "stride", stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """The entry ``index`` (negative counts from the end) along ``axis``; that
    dimension is kept with size 1 when ``keepdims``."""
    aval = _aval(operand, "index_in_dim", "operand")
    ax = _axis("index_in_dim", "axis", axis, aval.ndim)
    i = _int("index_in_dim", "index", index)
    size = aval.shape[ax]
    wrapped = i + size if i < 0 else i
    if not (_ge0(wrapped) and _lt(wrapped, size)):
        raise IndexError(f"lax.index_in_dim: index {i} is out of bounds for axis {ax} of size {size}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, ax)
    return out if keepdims else squeeze(out, (ax,))


def _ge0(a: Dim) -> bool:
    try:
        return bool(a >= 0)
    except TypeError:
        return False


def _lt(a: Dim, b: Dim) -> bool:
    try:
        return bool(a < b)
    except TypeError:
        return False


# ---------------------------------------------------------------------------
# Dynamic slicing


def _index_list(fn: str, start_indices: Any) -> list[Any]:
    """Start indices as one scalar per dimension (a 1-D index array is split)."""
    if isinstance(start_indices, (Tracer, np.ndarray)) or (
        not isinstance(start_indices, (list, tuple)) and hasattr(start_indices, "shape")
    ):
        aval = _aval(start_indices, fn, "start_indices")
        if aval.ndim != 1:
            raise ValueError(f"lax.{fn}: start_indices must be a sequence of scalars or a 1-D array, "
                             f"got {aval.str_short()}")
        n = aval.shape[0]
        if type(n) is not int:
            raise ValueError(f"lax.{fn}: start_indices {aval.str_short()} has a symbolic length")
        if isinstance(start_indices, np.ndarray):
            return list(start_indices)
        return [reshape(slice(start_indices, (k,), (k + 1,)), ()) for k in range(n)]
    if isinstance(start_indices, (str, bytes)) or not hasattr(start_indices, "__iter__"):
        raise TypeError(f"lax.{fn}: start_indices must be a sequence of scalars or a 1-D array, "
                        f"got {start_indices!r}")
    return list(start_indices)


_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1


def _start_indices(fn: str, operand_shape: Sequence[Dim], start_indices: Any, allow_negative: bool) -> list[Any]:
    """Normalise start indices: integer scalars of one dtype, negative ones wrapped
    (``i + size``) when ``allow_negative`` as JAX does; XLA then clamps them."""
    # A symbolic dimension as a start (x.shape[0] - 2 under mask or a pile) is its value.
    idx = [dimension_as_value(i) if isinstance(i, SymbolicDim) else i for i in _index_list(fn, start_indices)]
    if len(idx) != len(operand_shape):
        raise ValueError(f"lax.{fn}: an operand of rank {len(operand_shape)} needs {len(operand_shape)} start "
                         f"indices, got {len(idx)}")
    concrete: dict[int, int] = {}
    traced_dtypes = []
    for k, i in enumerate(idx):
        if isinstance(i, Tracer) or not isinstance(i, (*_PY_SCALARS, np.generic, np.ndarray)):
            aval = _aval(i, fn, f"start_indices[{k}]")
            if not dtypes.is_int(aval.dtype) or aval.shape != ():
                raise TypeError(f"lax.{fn}: start index {k} must be an integer scalar, got {aval.str_short()}")
            traced_dtypes.append(aval.dtype)
            continue
        value = np.asarray(i)
        if isinstance(i, builtins.bool) or value.shape != () or not dtypes.is_int(value.dtype):
            raise TypeError(f"lax.{fn}: start index {k} must be an integer scalar, got {i!r}")
        concrete[k] = int(value)
    index_dtype = traced_dtypes[0] if traced_dtypes else dtypes.default_int_dtype()
    info = np.iinfo(index_dtype)
    lo, hi = max(int(info.min), _I32_MIN), min(int(info.max), _I32_MAX)
    out = []
    for k, (i, d) in enumerate(zip(idx, operand_shape)):
        if k in concrete:
            v = concrete[k]
            if allow_negative and v < 0 and type(d) is not int:
                # Counting from the end of a symbolic dimension: its size is a value.
                add = primitive_by_name("add")
                out.append(add.bind(np.asarray(v, index_dtype), _size_value(d, index_dtype)))
                continue
            if allow_negative and v < 0:
                v = v + int(d)
            out.append(np.asarray(min(max(v, lo), hi), index_dtype))
        else:
            out.append(_wrap_negative(fn, i, d, k) if allow_negative else i)
    return out


def _size_value(d: Dim, dt: Any) -> Any:
    """The size ``d`` as an index value of dtype ``dt`` (a symbolic size becomes
    ``dim_as_value``, which the interpreter binding its names evaluates)."""
    if type(d) is int:
        return np.asarray(d, dt)
    convert = primitive_by_name("convert_element_type")
    return convert.bind(dimension_as_value(d), new_dtype=np.dtype(dt), weak_type=False)


def _wrap_negative(fn: str, i: Any, d: Dim, k: int) -> Any:
    """``i + d if i < 0 else i`` for a traced index (elementwise primitives)."""
    dt = get_aval(i).dtype
    if dtypes.is_unsigned_int(dt):
        return i
    lt, add, select_n = (primitive_by_name(n) for n in ("lt", "add", "select_n"))
    is_negative = lt.bind(i, np.zeros((), dt))
    return select_n.bind(is_negative, i, add.bind(i, _size_value(d, dt)))


def dynamic_slice(
    operand: Any, start_indices: Any, slice_sizes: Sequence[Dim], *, allow_negative_indices: bool = True
) -> Any:
    """The window of ``slice_sizes`` starting at the (possibly traced) ``start_indices``.
    Negative indices count from the end (unless ``allow_negative_indices=False``);
    then each start is clamped so the window lies inside the operand."""
    aval = _aval(operand, "dynamic_slice", "operand")
    idx = _start_indices("dynamic_slice", aval.shape, start_indices, allow_negative_indices)
    sizes = _dims("dynamic_slice", "slice_sizes", slice_sizes)
    return dynamic_slice_p.bind(operand, *idx, slice_sizes=sizes)


def dynamic_slice_in_dim(
    operand: Any, start_index: Any, slice_size: int, axis: int = 0, *, allow_negative_indices: bool = True
) -> Any:
    """:func:`dynamic_slice` of ``slice_size`` elements along one ``axis``."""
    aval = _aval(operand, "dynamic_slice_in_dim", "operand")
    ax = _axis("dynamic_slice_in_dim", "axis", axis, aval.ndim)
    starts: list[Any] = [0] * aval.ndim
    sizes = list(aval.shape)
    starts[ax], sizes[ax] = start_index, _dim("dynamic_slice_in_dim", "slice_size", slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(
    operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *, allow_negative_indices: bool = True
) -> Any:
    """The entry at the (possibly traced) ``index`` along ``axis`` (clamped into range)."""
    aval = _aval(operand, "dynamic_index_in_dim", "operand")
    ax = _axis("dynamic_index_in_dim", "axis", axis, aval.ndim)
    out = dynamic_slice_in_dim(operand, index, 1, ax, allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (ax,))


def dynamic_update_slice(
    operand: Any, update: Any, start_indices: Any, *, allow_negative_indices: bool = True
) -> Any:
    """``operand`` with the window at ``start_indices`` replaced by ``update``
    (same rank and dtype).  Starts are wrapped and clamped as in :func:`dynamic_slice`."""
    aval = _aval(operand, "dynamic_update_slice", "operand")
    upd = _as_dtype("dynamic_update_slice", "update", update, aval.dtype)
    idx = _start_indices("dynamic_update_slice", aval.shape, start_indices, allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, upd, *idx)


def dynamic_update_slice_in_dim(
    operand: Any, update: Any, start_index: Any, axis: int, *, allow_negative_indices: bool = True
) -> Any:
    """:func:`dynamic_update_slice` along one ``axis`` (other starts are 0)."""
    aval = _aval(operand, "dynamic_update_slice_in_dim", "operand")
    ax = _axis("dynamic_update_slice_in_dim", "axis", axis, aval.ndim)
    starts: list[Any] = [0] * aval.ndim
    starts[ax] = start_index
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(
    operand: Any, update: Any, index: Any, axis: int, *, allow_negative_indices: bool = True
) -> Any:
    """Replace the entry at ``index`` along ``axis``; ``update`` may omit that axis."""
    aval = _aval(operand, "dynamic_update_index_in_dim", "operand")
    ax = _axis("dynamic_update_index_in_dim", "axis", axis, aval.ndim)
    upd = _as_dtype("dynamic_update_index_in_dim", "update", update, aval.dtype)
    if get_aval(upd).ndim == aval.ndim - 1:
        upd = expand_dims(upd, (ax,))
    return dynamic_update_slice_in_dim(operand, upd, index, ax, allow_negative_indices=allow_negative_indices)


# ---------------------------------------------------------------------------
# gather / scatter


def _dnums(fn: str, dn: Any, cls: type[Any]) -> Any:
    if not isinstance(dn, cls):
        raise TypeError(f"lax.{fn}: dimension_numbers must be a {cls.__name__}, got {dn!r}")
    return cls(*(_ints(fn, f"dimension_numbers.{f}", getattr(dn, f)) for f in cls._fields))


def _fill_value(fill_value: Any) -> Any:
    if fill_value is None:
        return None
    if isinstance(fill_value, np.generic) or (isinstance(fill_value, np.ndarray) and fill_value.shape == ()):
        return fill_value.item()
    if isinstance(fill_value, _PY_SCALARS):
        return fill_value
    raise TypeError(f"lax.gather: fill_value must be a Python or NumPy scalar, got {fill_value!r}")


def gather(
    operand: Any,
    start_indices: Any,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[Dim],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: str | GatherScatterMode | None = None,
    fill_value: Any = None,
) -> Any:
    """XLA's gather: for each index vector (the last dimension of ``start_indices``)
    take the window of ``slice_sizes`` it starts (see
    :mod:`plait_core.primitives.indexing_prims`).  ``mode`` is ``"fill"`` (the
    default: windows not entirely in bounds read ``fill_value``, by default NaN,
    the most negative integer, the largest unsigned integer or True),
    ``"clip"`` or ``"promise_in_bounds"``."""
    _aval(operand, "gather", "operand")
    _aval(start_indices, "gather", "start_indices")
    return gather_p.bind(
        operand,
        start_indices,
        dimension_numbers=_dnums("gather", dimension_numbers, GatherDimensionNumbers),
        slice_sizes=_dims("gather", "slice_sizes", slice_sizes),
        indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices),
        mode=GatherScatterMode.from_any(mode),
        fill_value=_fill_value(fill_value),
    )


def _scatter(
    fn: str,
    prim: Any,
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: ScatterDimensionNumbers,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: str | GatherScatterMode | None,
) -> Any:
    aval = _aval(operand, fn, "operand")
    _aval(scatter_indices, fn, "scatter_indices")
    upd = _as_dtype(fn, "updates", updates, aval.dtype)
    return prim.bind(
        operand,
        scatter_indices,
        upd,
        dimension_numbers=_dnums(fn, dimension_numbers, ScatterDimensionNumbers),
        indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices),
        mode=GatherScatterMode.from_any(mode),
    )


def scatter(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Any:
    """XLA's scatter: write each window of ``updates`` into ``operand`` at the start
    its index vector gives (the last written wins where windows overlap).
    ``mode="fill"``/``"drop"`` (default) drops windows not entirely in bounds,
    ``"clip"`` clamps their starts."""
    return _scatter("scatter", scatter_p, operand, scatter_indices, updates, dimension_numbers,
                    indices_are_sorted, unique_indices, mode)


def scatter_add(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Any:
    """Like :func:`scatter`, but adds the updates (repeated indices accumulate)."""
    return _scatter("scatter_add", scatter_add_p, operand, scatter_indices, updates, dimension_numbers,
                    indices_are_sorted, unique_indices, mode)


def scatter_mul(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Any:
    """Like :func:`scatter`, but multiplies by the updates."""
    return _scatter("scatter_mul", scatter_mul_p, operand, scatter_indices, updates, dimension_numbers,
                    indices_are_sorted, unique_indices, mode)


def scatter_min(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Any:
    """Like :func:`scatter`, but keeps the minimum of the operand and the updates."""
    return _scatter("scatter_min", scatter_min_p, operand, scatter_indices, updates, dimension_numbers,
                    indices_are_sorted, unique_indices, mode)


def scatter_max(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Any:
    """Like :func:`scatter`, but keeps the maximum of the operand and the updates."""
    return _scatter("scatter_max", scatter_max_p, operand, scatter_indices, updates, dimension_numbers,
                    indices_are_sorted, unique_indices, mode)


# ---------------------------------------------------------------------------
# iota


def broadcasted_iota(dtype: Any, shape: Sequence[Dim], dimension: int) -> Any:
    """An array of ``shape`` whose entries count ``0, 1, ...`` along ``dimension``
    (a size may be symbolic, or a traced integer inside ``vmap`` over sizes)."""
    dt = dtypes.canonicalize_dtype(dtype)
    shape_t = _shape("broadcasted_iota", "shape", shape)
    dim = _axis("broadcasted_iota", "dimension", dimension, len(shape_t)) if shape_t else _int(
        "broadcasted_iota", "dimension", dimension)
    return iota_p.bind(dtype=dt, shape=shape_t, dimension=dim)


def iota(dtype: Any, size: Dim) -> Any:
    """``[0, 1, ..., size - 1]`` as a 1-D array of ``dtype`` (``size`` may be
    symbolic, or a traced integer inside ``vmap`` over sizes)."""
    dt = dtypes.canonicalize_dtype(dtype)
    return iota_p.bind(dtype=dt, shape=_shape("iota", "size", (size,)), dimension=0)


def full(shape: Sequence[Dim], fill_value: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` whose every entry is the scalar ``fill_value``,
    of ``dtype`` (by default ``fill_value``'s dtype; a Python scalar stays
    weakly typed).  A size may be symbolic, or a traced integer inside
    ``vmap`` over sizes (the result is then ragged)."""
    shape_t = _shape("full", "shape", shape)
    if isinstance(fill_value, _PY_SCALARS):
        dt = dtypes.python_scalar_dtype(fill_value) if dtype is None else dtypes.canonicalize_dtype(dtype)
        weak = dtype is None and type(fill_value) is not builtins.bool
        value: Any = np.asarray(fill_value, dt)
    else:
        aval = _aval(fill_value, "full", "fill_value")
        if aval.shape != ():
            raise TypeError(f"lax.full: fill_value must be a scalar, got {aval.str_short()}")
        dt = aval.dtype if dtype is None else dtypes.canonicalize_dtype(dtype)
        weak = aval.weak_type and dtype is None
        value = fill_value
    value = convert_element_type_p.bind(value, new_dtype=dt, weak_type=weak)
    return broadcast_in_dim(value, shape_t, ())
