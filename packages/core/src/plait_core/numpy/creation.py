"""Array creation: ``array``, ``zeros``, ``full``, ``arange``, ``linspace``, ``eye``, ...

Shapes may hold symbolic dimensions (``zeros((n, 3))`` under masking): the
arrays are built by broadcasting a scalar with ``lax.broadcast_in_dim`` and
by ``lax.iota``, so they stay symbolic.  Constants made from Python data
(``array([1, 2])``) are NumPy constants under a transformation and arrays of
the eager backend otherwise.  With ``x64`` off, Python ints become ``int32``
(an ``OverflowError`` if they do not fit) and floats ``float32``.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import ShapedArray, get_aval, is_known_value, to_numpy
from plait_core.dims import Dim, Shape, SymbolicDim, canonicalize_shape, is_symbolic
from plait_core.lax import _lenient
from plait_core.numpy._util import (
    Array,
    ArrayLike,
    _dim_as_value,
    as_array,
    broadcast_shapes,
    broadcast_to_shape,
    concrete_int,
    convert,
    dtype_of,
    is_array,
    is_python_scalar,
    result_dtype,
    shape_arg,
    to_inexact,
)
from plait_core.numpy.shape import stack
from plait_core.primitives.elementwise import convert_element_type_p
from plait_core.primitives.shapes import dimension_as_value
from plait_core.primitives.structural import copy_p
from plait_core.trace import Tracer, concrete_or_error, dim_or_concrete, is_eager

DType = np.dtype[Any]


def _dtype_arg(dtype: Any, name: str) -> DType | None:
    if dtype is None:
        return None
    try:
        return dtypes.canonicalize_dtype(np.dtype(dtype))
    except TypeError as e:
        raise TypeError(f"{name}: invalid dtype {dtype!r} ({e})") from None


def _materialize(value: np.ndarray) -> Array:
    """A concrete NumPy value as an array of the current trace: an array of the
    eager backend when evaluating, a constant of the program being staged or
    transformed otherwise (so ``asarray(table)[i]`` indexes with plait's rules
    even when ``i`` is traced)."""
    if is_eager():
        return lax.convert_element_type(value, value.dtype)
    return convert_element_type_p.bind(value, new_dtype=value.dtype, weak_type=False)


def _numpy_constant(obj: Any, name: str) -> np.ndarray:
    try:
        raw = np.asarray(obj)
    except (ValueError, TypeError) as e:
        raise TypeError(f"{name}: cannot convert {type(obj).__name__} to an array ({e})") from None
    extension = raw.dtype.kind == "V" and (dtypes.is_float(raw.dtype) or dtypes.is_int(raw.dtype))  # ml_dtypes'
    if raw.dtype == object or raw.dtype.kind in "US" or (raw.dtype.kind == "V" and not extension):
        raise TypeError(f"{name}: cannot make an array of {raw.dtype} data from {_short(obj)}")
    target = dtypes.canonicalize_dtype(raw.dtype)
    if target != raw.dtype:
        if dtypes.is_int(raw.dtype) and raw.size:
            info = dtypes.iinfo(target)
            lo, hi = raw.min(), raw.max()
            if lo < info.min or hi > info.max:
                raise OverflowError(
                    f"{name}: the value {hi if hi > info.max else lo} does not fit in {target.name} "
                    "(the default integer type while x64 is off); enable x64 or pass dtype="
                )
        raw = raw.astype(target)
    return raw


def _short(obj: Any) -> str:
    r = repr(obj)
    return r if len(r) <= 60 else r[:57] + "..."


def _contains_traced(obj: Any) -> builtins.bool:
    if isinstance(obj, (list, tuple)):
        return builtins.any(_contains_traced(o) for o in obj)
    return is_array(obj) and not isinstance(obj, (np.ndarray, np.generic))


def _array_from_sequence(obj: Sequence[Any], name: str) -> Array:
    """Stack a nested sequence holding traced values or backend arrays."""
    items = [_array_from_sequence(o, name) if isinstance(o, (list, tuple)) else o for o in obj]
    if not items:
        return _numpy_constant(np.zeros((0,)), name)
    for i, it in enumerate(items):
        get_aval(it, f"element {i} of the sequence passed to {name}")
    dt, weak = result_dtype(name, *items)
    shapes = [get_aval(it).shape for it in items]
    first = shapes[0]
    for s in shapes[1:]:
        if tuple(s) != tuple(first):
            raise ValueError(f"{name}: the sequence's elements have different shapes {first} and {s}")
    return stack([convert(it, dt, weak) for it in items], 0)


def array(object: Any, dtype: Any = None, copy: builtins.bool = True, order: str | None = "K",
          ndmin: int = 0) -> Array:
    """An array from ``object``: an array, a scalar, or nested lists/tuples of them
    (traced values included).  ``dtype`` converts; ``ndmin`` prepends size-1 axes.
    With ``copy`` (the default) an array argument is copied: the result is a new
    array, never ``object`` itself."""
    del order
    dt = _dtype_arg(dtype, "array")
    if type(object) is SymbolicDim:  # a size under mask: its value
        object = dimension_as_value(object)
    if isinstance(object, (list, tuple)) and _contains_traced(object):
        x = _array_from_sequence(object, "array")
    elif isinstance(object, (Tracer,)):
        x = object
    elif is_array(object) and not isinstance(object, (np.ndarray, np.generic)):
        # As JAX: a copy is a new array (its own buffer), not the same object; flax.nnx's
        # clone(arrays=True) relies on it.
        x = copy_p.bind(object) if copy and (dt is None or get_aval(object).dtype == dt) else object
    elif is_python_scalar(object):
        d, weak = result_dtype("array", object)
        x = lax._convert_element_type(object, d if dt is None else dt, weak and dt is None)
    else:
        raw = _numpy_constant(object, "array")
        if dt is not None and raw.dtype != dt:
            with np.errstate(all="ignore"):
                raw = raw.astype(dt)
        elif copy and isinstance(object, np.ndarray) and raw is object:
            raw = raw.copy()
        x = _materialize(raw)
    if dt is not None:
        x = convert(x, dt)
    nd = get_aval(x).ndim
    if ndmin > nd:
        x = lax.reshape(x, (1,) * (ndmin - nd) + tuple(get_aval(x).shape))
    return x


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, copy: builtins.bool | None = None) -> Array:
    """``a`` as an array, without copying when it already is one of the right dtype."""
    del order
    if isinstance(a, Tracer) and dtype is None:
        return a
    return array(a, dtype=dtype, copy=builtins.bool(copy))


def copy(a: ArrayLike, order: str | None = None) -> Array:
    """A copy of ``a``."""
    return array(a, copy=True, order=order)


# ---------------------------------------------------------------------------
# Filled arrays


def _full(shape: Any, fill_value: ArrayLike, dtype: Any, name: str) -> Array:
    shp = shape_arg(shape, name)
    dt = _dtype_arg(dtype, name)
    if dt is None:
        dt, weak = result_dtype(name, fill_value)
    else:
        weak = False
    value = convert(as_array(fill_value, name, "fill_value"), dt, weak)
    if get_aval(value).ndim == 0:
        return lax.broadcast_in_dim(value, shp, ())
    return broadcast_to_shape(value, shp, name)


def full(shape: Any, fill_value: ArrayLike, dtype: Any = None) -> Array:
    """An array of ``shape`` filled with ``fill_value`` (which may be an array that
    broadcasts to ``shape``); the dtype defaults to that of ``fill_value``."""
    return _full(shape, fill_value, dtype, "full")


def zeros(shape: Any, dtype: Any = None) -> Array:
    """An array of zeros (default float dtype)."""
    return _full(shape, 0, _dtype_arg(dtype, "zeros") or dtypes.default_float_dtype(), "zeros")


def ones(shape: Any, dtype: Any = None) -> Array:
    """An array of ones (default float dtype)."""
    return _full(shape, 1, _dtype_arg(dtype, "ones") or dtypes.default_float_dtype(), "ones")


def empty(shape: Any, dtype: Any = None) -> Array:
    """An array of the given shape; plait fills it with zeros."""
    return _full(shape, 0, _dtype_arg(dtype, "empty") or dtypes.default_float_dtype(), "empty")


def _like_aval(a: Any, name: str) -> ShapedArray:
    """The type a ``*_like`` function copies: an array's, or, as in JAX, that of
    any object with ``shape`` and ``dtype`` (a ``ShapeDtypeStruct``, say; its
    dtype canonicalised, its weak type ignored)."""
    if not is_known_value(a) and hasattr(a, "shape") and hasattr(a, "dtype"):
        shape = canonicalize_shape(a.shape, name)
        try:
            dt = dtypes.canonicalize_dtype(a.dtype)
        except TypeError as e:
            raise TypeError(f"argument 0 of {name}: {type(a).__name__} with an unsupported dtype ({e})") from None
        return ShapedArray(shape, dt, False)
    return get_aval(a, f"argument 0 of {name}")


def _like(a: ArrayLike, dtype: Any, shape: Any, name: str) -> tuple[Shape, DType, builtins.bool]:
    aval = _like_aval(a, name)
    dt = _dtype_arg(dtype, name)
    shp = aval.shape if shape is None else shape_arg(shape, name)
    if dt is None:
        return shp, aval.dtype, aval.weak_type
    return shp, dt, False


def full_like(a: ArrayLike, fill_value: ArrayLike, dtype: Any = None, shape: Any = None) -> Array:
    """An array shaped like ``a`` (its dtype by default) filled with ``fill_value``.

    ``a`` is an array or, as in JAX, anything with ``shape`` and ``dtype``
    (a ``ShapeDtypeStruct``); ``shape`` and ``dtype`` override its own."""
    shp, dt, weak = _like(a, dtype, shape, "full_like")
    value = convert(as_array(fill_value, "full_like", "fill_value"), dt, weak)
    if get_aval(value).ndim == 0:
        return lax.broadcast_in_dim(value, shp, ())
    return broadcast_to_shape(value, shp, "full_like")


def zeros_like(a: ArrayLike, dtype: Any = None, shape: Any = None) -> Array:
    """Zeros shaped like ``a``, of its dtype unless ``dtype`` is given."""
    return full_like(a, 0, dtype, shape)


def ones_like(a: ArrayLike, dtype: Any = None, shape: Any = None) -> Array:
    """Ones shaped like ``a``, of its dtype unless ``dtype`` is given."""
    return full_like(a, 1, dtype, shape)


def empty_like(a: ArrayLike, dtype: Any = None, shape: Any = None) -> Array:
    """An array shaped like ``a``; plait fills it with zeros."""
    return zeros_like(a, dtype, shape)


# ---------------------------------------------------------------------------
# Ranges


def _is_dim(x: Any) -> builtins.bool:
    return isinstance(x, (builtins.int, np.integer, SymbolicDim)) and not isinstance(x, (builtins.bool, np.bool_))


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Array:
    """Evenly spaced values in ``[start, stop)`` with spacing ``step``, as ``numpy.arange``.

    Bounds must be concrete (Python or NumPy scalars, or concrete 0-d arrays,
    whose dtypes take part in the result's), except that a symbolic dimension
    may be given for ``start``/``stop`` with unit step (``arange(x.shape[0])``
    under masking).  Integers give the default integer dtype, floats the
    default float dtype."""
    dt = _dtype_arg(dtype, "arange")
    if step is None and (isinstance(start, Tracer) or isinstance(stop, Tracer)):
        start = dim_or_concrete(start, "arange: the start argument")
        stop = dim_or_concrete(stop, "arange: the stop argument")
    if is_symbolic(start) or is_symbolic(stop):
        return _symbolic_arange(start, stop, step, dt)
    start = concrete_or_error(start, "arange: the start argument")
    stop = concrete_or_error(stop, "arange: the stop argument")
    step = concrete_or_error(step, "arange: the step argument")
    # Concrete arrays of a backend (``arange(jnp.array(3))``) count by their value and dtype.
    start, stop, step = (
        to_numpy(v) if v is not None and not isinstance(v, (np.ndarray, np.generic)) and is_array(v) else v
        for v in (start, stop, step)
    )
    for nm, v in (("start", start), ("stop", stop), ("step", step)):
        if v is not None and not (is_python_scalar(v) or isinstance(v, (np.ndarray, np.generic))):
            raise TypeError(f"arange: {nm} must be a number, got {type(v).__name__}")
        if isinstance(v, np.ndarray) and v.ndim != 0:
            raise ValueError(f"arange: {nm} must be a scalar, got an array of shape {v.shape}")
    if step is not None and step == 0:
        raise ValueError("arange: step must not be zero")
    if stop is None and step is None and _is_dim(start) and (dt is None or dtypes.is_int(dt)):
        n = builtins.max(operator.index(start), 0)
        return lax.iota(dt or dtypes.default_int_dtype(), n)
    args = [v for v in (start, stop, step) if v is not None]
    if dt is None:
        dt, _ = result_dtype("arange", *args)
        if dtypes.is_bool(dt):
            dt = dtypes.default_int_dtype()
    raw = np.arange(*[np.asarray(v).item() for v in (start, stop, step) if v is not None])
    with np.errstate(all="ignore"):
        return _materialize(raw.astype(dt))


def _symbolic_arange(start: Any, stop: Any, step: Any, dt: DType | None) -> Array:
    if step not in (None, 1):
        raise TypeError("arange: a symbolic size needs unit step")
    lo, hi = (0, start) if stop is None else (start, stop)
    if not (_is_dim(lo) and _is_dim(hi)):
        raise TypeError("arange: with a symbolic size the other bound must be an integer")
    size = hi - lo
    out = lax.iota(dt or dtypes.default_int_dtype(), size)
    if not (type(lo) is builtins.int and lo == 0):
        out = _lenient.add(out, convert(lo, dtype_of(out)))
    return out


def linspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: builtins.bool = True,
             retstep: builtins.bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (included unless
    ``endpoint=False``).  ``start`` and ``stop`` may be arrays; the samples then run
    along ``axis``.  Integer dtypes round towards negative infinity, as NumPy 2."""
    if not is_symbolic(num):  # a symbolic num (x.shape[0] under mask) samples as many points
        num = concrete_int(num, "linspace: num")
        if num < 0:
            raise ValueError(f"linspace: num must be non-negative, got {num}")
    dt = _dtype_arg(dtype, "linspace")
    comp_dt, _ = result_dtype("linspace", start, stop, 1.0)
    comp_dt = to_inexact(comp_dt)
    s = convert(as_array(start, "linspace", "start"), comp_dt)
    e = convert(as_array(stop, "linspace", "stop"), comp_dt)
    bshape = broadcast_shapes("linspace", get_aval(s).shape, get_aval(e).shape)
    s, e = broadcast_to_shape(s, bshape), broadcast_to_shape(e, bshape)
    nd = len(bshape)
    out_shape = (*bshape, num)
    span = _lenient.sub(e, s)
    steps = lax.broadcasted_iota(comp_dt, out_shape, nd)
    sb = lax.broadcast_in_dim(s, out_shape, tuple(range(nd)))
    if is_symbolic(num):
        out, step = _symbolic_samples(sb, e, span, steps, num, endpoint, comp_dt)
    elif ((num - 1) if endpoint else num) > 0:
        div = (num - 1) if endpoint else num
        step = _lenient.div(span, convert(div, comp_dt))
        out = _lenient.add(sb, _lenient.mul(steps, lax.broadcast_in_dim(step, out_shape, tuple(range(nd)))))
        if endpoint and num > 1:
            last = lax.broadcast_in_dim(e, (*bshape, 1), tuple(range(nd)))
            head = lax.slice(out, (0,) * (nd + 1), (*bshape, num - 1))
            out = lax.concatenate([head, last], nd)
    else:
        step = _lenient.mul(span, convert(np.nan, comp_dt))
        out = sb
    axis_ = axis + nd + 1 if axis < 0 else axis
    if not 0 <= axis_ <= nd:
        raise np.exceptions.AxisError(f"linspace: axis {axis} is out of bounds for a result of rank {nd + 1}")
    if axis_ != nd:
        perm = list(range(nd))
        perm.insert(axis_, nd)
        out = lax.transpose(out, tuple(perm))
    out_dt = dt or dtypes.canonicalize_dtype(comp_dt)
    if dtypes.is_int(out_dt):
        out = lax.floor(out)
    out = convert(out, out_dt)
    return (out, step) if retstep else out


def _symbolic_samples(sb: Array, e: Array, span: Array, steps: Array, num: Dim, endpoint: builtins.bool,
                      dt: DType) -> tuple[Array, Array]:
    """:func:`linspace`'s samples for a symbolic ``num``: the divisor is a value
    (``num - 1`` may be 0, where NumPy's single sample is ``start`` and its step NaN)."""
    shape = tuple(get_aval(steps).shape)
    nd = len(shape) - 1
    count = convert(_dim_as_value(num), dt)
    one = convert(1, dt)
    div = _lenient.sub(count, one) if endpoint else count
    positive = _lenient.gt(div, convert(0, dt))
    step = _lenient.div(span, _lenient.max(div, one))
    out = _lenient.add(sb, _lenient.mul(steps, lax.broadcast_in_dim(step, shape, tuple(range(nd)))))
    if endpoint:  # the last sample is exactly stop (when there are two or more)
        last = _lenient.bitwise_and(_lenient.eq(steps, lax.broadcast_in_dim(div, shape, ())),
                               lax.broadcast_in_dim(positive, shape, ()))
        out = _lenient.select_n(last, out, lax.broadcast_in_dim(e, shape, tuple(range(nd))))
    nan = lax.broadcast_in_dim(convert(np.nan, dt), tuple(get_aval(step).shape), ())
    return out, _lenient.select_n(lax.broadcast_in_dim(positive, tuple(get_aval(step).shape), ()), nan, step)


def logspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: builtins.bool = True,
             base: float = 10.0, dtype: Any = None, axis: int = 0) -> Array:
    """``base ** linspace(start, stop, num)``."""
    exponents = linspace(start, stop, num, endpoint, axis=axis)
    dt = dtype_of(exponents)
    out = _lenient.pow(lax.broadcast_in_dim(convert(base, dt), exponents.shape, ()), exponents)
    return convert(out, _dtype_arg(dtype, "logspace") or dt)


# ---------------------------------------------------------------------------
# Matrices


def _tri_mask(n: Dim, m: Dim, k: int, op: str) -> Array:
    rows = lax.broadcasted_iota(dtypes.int32, (n, m), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (n, m), 1)
    shifted = _lenient.add(rows, convert(k, dtypes.int32)) if k else rows
    return _lenient.eq(shifted, cols) if op == "eq" else _lenient.ge(shifted, cols)


def _size_arg(n: Any, name: str) -> Dim:
    if isinstance(n, (tuple, list)):
        raise TypeError(f"{name}: a size must be an integer, got {n!r}")
    return shape_arg(n, name)[0]


def eye(N: Any, M: Any = None, k: int = 0, dtype: Any = None) -> Array:
    """The ``N x M`` matrix with ones on the ``k``-th diagonal and zeros elsewhere."""
    n = _size_arg(N, "eye")
    m = n if M is None else _size_arg(M, "eye")
    k = concrete_int(k, "eye: k")
    dt = _dtype_arg(dtype, "eye") or dtypes.default_float_dtype()
    return convert(_tri_mask(n, m, k, "eq"), dt)


def identity(n: Any, dtype: Any = None) -> Array:
    """The ``n x n`` identity matrix."""
    return eye(n, dtype=dtype)


def tri(N: Any, M: Any = None, k: int = 0, dtype: Any = None) -> Array:
    """The ``N x M`` matrix with ones at and below the ``k``-th diagonal."""
    n = _size_arg(N, "tri")
    m = n if M is None else _size_arg(M, "tri")
    k = concrete_int(k, "tri: k")
    dt = _dtype_arg(dtype, "tri") or dtypes.default_float_dtype()
    return convert(_tri_mask(n, m, k, "ge"), dt)


def _triangle(m: ArrayLike, k: int, name: str, lower: builtins.bool) -> Array:
    x = as_array(m, name)
    shape = tuple(get_aval(x).shape)
    if len(shape) < 2:
        raise ValueError(f"{name}: the input must have at least 2 dimensions, got shape {shape}")
    k = concrete_int(k, f"{name}: k")
    mask = _tri_mask(shape[-2], shape[-1], k if lower else k - 1, "ge")
    if not lower:
        mask = lax.bitwise_not(mask)
    mask = lax.broadcast_in_dim(mask, shape, (len(shape) - 2, len(shape) - 1))
    zero = lax.broadcast_in_dim(convert(0, dtype_of(x), get_aval(x).weak_type), shape, ())  # keeps x's weak type
    return _lenient.select_n(mask, zero, x)


def tril(m: ArrayLike, k: int = 0) -> Array:
    """``m`` with the elements above the ``k``-th diagonal zeroed (last two axes)."""
    return _triangle(m, k, "tril", True)


def triu(m: ArrayLike, k: int = 0) -> Array:
    """``m`` with the elements below the ``k``-th diagonal zeroed (last two axes)."""
    return _triangle(m, k, "triu", False)


def meshgrid(*xi: ArrayLike, copy: builtins.bool = True, sparse: builtins.bool = False,
             indexing: str = "xy") -> list[Array]:
    """Coordinate arrays from 1-D coordinate vectors (``indexing='xy'``: Cartesian,
    the first two outputs swapped; ``'ij'``: matrix indexing).  ``sparse`` returns
    broadcastable arrays with size-1 axes instead of full grids."""
    del copy
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [as_array(x, "meshgrid", i) for i, x in enumerate(xi)]
    for i, a in enumerate(arrays):
        if get_aval(a).ndim != 1:
            raise ValueError(f"meshgrid: argument {i} must be 1-D, got shape {get_aval(a).shape}")
    sizes = [get_aval(a).shape[0] for a in arrays]
    n = len(arrays)
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrays):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        if sparse:
            shape = tuple(sizes[j] if j == pos else 1 for j in range(n))
        else:
            shape = tuple(sizes)
        out.append(lax.broadcast_in_dim(a, shape, (pos,)))
    return out


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: builtins.bool = False) -> Any:
    """An array of index grids, one per dimension (``sparse``: a tuple of broadcastable arrays)."""
    dims = shape_arg(dimensions, "indices")
    dt = _dtype_arg(dtype, "indices") or dtypes.default_int_dtype()
    n = len(dims)
    if sparse:
        return tuple(
            lax.broadcast_in_dim(lax.iota(dt, d), tuple(d if j == i else 1 for j in range(n)), (i,))
            for i, d in enumerate(dims)
        )
    grids = [lax.broadcast_in_dim(lax.broadcasted_iota(dt, dims, i), (1, *dims), tuple(range(1, n + 1)))
             for i in range(n)]
    if not grids:
        return lax.iota(dt, 0)
    return lax.concatenate(grids, 0) if n > 1 else grids[0]
