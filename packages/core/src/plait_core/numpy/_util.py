"""Shared plumbing of ``plait.numpy``: argument checks, dtype promotion,
NumPy broadcasting on (possibly symbolic) shapes, and axis normalisation.

Every ``plait.numpy`` function funnels its inputs through these helpers, so the
rules (JAX's weak-type promotion, NumPy's broadcasting, Python-style negative
axes) and the wording of errors are the same everywhere.
"""

from __future__ import annotations

import builtins
import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import ShapedArray, get_aval, registered_array_types, to_numpy
from plait_core.abstract import _array_types as _ARRAY_TYPES
from plait_core.config import config
from plait_core.dims import (
    Dim,
    Shape,
    SymbolicDim,
    canonicalize_shape,
    definitely_equal,
    definitely_equal_shapes,
    is_symbolic,
)
from plait_core.primitives import elementwise as lax_ew
from plait_core.primitives.shapes import dimension_as_value
from plait_core.trace import Tracer, concrete_or_error, dim_or_concrete, tracer_types

DType = np.dtype[Any]
Array = Any
"""An array value: a NumPy array eagerly, a tracer under a transformation, or a
registered array type (plait-dispatch's device ``Array``)."""
ArrayLike = Any
"""Anything an array function accepts: arrays, NumPy scalars, Python scalars."""

_PY_SCALARS = frozenset({builtins.bool, builtins.int, builtins.float, builtins.complex})
_BOOL = np.dtype(np.bool_)


# ---------------------------------------------------------------------------
# Argument checks


def is_python_scalar(x: Any) -> bool:
    """True for ``bool``, ``int``, ``float`` and ``complex`` (not NumPy scalars)."""
    return type(x) in _PY_SCALARS


def is_array(x: Any) -> bool:
    """True for values that are arrays in their own right (NumPy arrays and scalars,
    tracers, registered array types); False for Python scalars and containers."""
    return (
        isinstance(x, (np.ndarray, np.generic, Tracer))
        or type(x) in registered_array_types()
        or isinstance(x, registered_array_types())
    )


def aval_of(x: Any, name: str, position: int | str = 0) -> ShapedArray:
    """The abstract value of an argument, or a ``TypeError`` naming the function and
    the argument (lists and tuples get a hint to use ``asarray``)."""
    handler = _ARRAY_TYPES.get(x.__class__)
    if handler is not None:  # a device Array: the commonest case eagerly
        return handler.aval(x)
    if isinstance(x, (list, tuple)):
        raise TypeError(
            f"{name}: argument {position} is a {type(x).__name__}; plait.numpy functions take "
            "arrays and scalars, not Python sequences (convert with plait.numpy.asarray first)"
        )
    try:
        return get_aval(x)
    except TypeError:  # again, to say where (the message is only built when needed)
        return get_aval(x, f"argument {position} of {name}")


def check_arraylike(name: str, *args: Any) -> list[ShapedArray]:
    """Abstract values of ``args``; raises ``TypeError`` for anything not array-like."""
    return [aval_of(x, name, i) for i, x in enumerate(args)]


def shape_of(x: Any) -> Shape:
    """The shape of an array-like value (``()`` for scalars)."""
    return get_aval(x).shape


def ndim_of(x: Any) -> int:
    """The rank of an array-like value."""
    return len(get_aval(x).shape)


def dtype_of(x: Any) -> DType:
    """The canonical dtype of an array-like value."""
    handler = _ARRAY_TYPES.get(x.__class__)
    if handler is not None:  # a device Array: the commonest case eagerly
        return handler.aval(x).dtype
    return get_aval(x).dtype


def concrete_int(x: Any, what: str) -> int:
    """``x`` as a Python int; it must be concrete (``what`` names it in errors)."""
    x = concrete_or_error(x, what)
    if isinstance(x, (builtins.bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, got the boolean {x!r}")
    try:
        return operator.index(x)
    except TypeError:
        if isinstance(x, np.ndarray) and x.shape == () and dtypes.is_int(x.dtype):
            return int(x)
        raise TypeError(f"{what} must be an integer, got {x!r} of type {type(x).__name__}") from None


# ---------------------------------------------------------------------------
# Dtype conversion and promotion


def convert(x: Any, dtype: Any, weak_type: builtins.bool = False) -> Array:
    """``x`` converted to ``dtype`` (no-op when it already has that type)."""
    handler = _ARRAY_TYPES.get(x.__class__)
    if handler is not None:  # a concrete registered array: its type decides
        aval = handler.aval(x)
        if aval.dtype == dtype and aval.weak_type == weak_type:  # (dtype equality accepts what np.dtype does)
            return x
        return lax._convert_element_type(x, np.dtype(dtype), weak_type)
    dt = np.dtype(dtype)
    if is_python_scalar(x):
        # A weak Python scalar already of the target type joins the operation as it
        # is: the primitive sees equal dtypes, and staging writes it as a literal.
        if weak_type and type(x) is not builtins.bool and dtypes.python_scalar_dtype(x) == dt:
            return x
        if not weak_type:
            folded = _host_converted(x, dt)
            if folded is not None:
                return folded
    else:
        aval = get_aval(x)
        if aval.dtype == dt and aval.weak_type == weak_type:
            return x
        if aval.dtype == dt and not isinstance(x, Tracer):
            return x
    return lax._convert_element_type(x, dt, weak_type)


_folded: tuple[dict[tuple[type, Any, DType], np.generic], ...] = ({}, {})
"""By the x64 flag: ``(type, value, dtype)`` of a Python scalar -> the NumPy
scalar it converts to (NumPy scalars are immutable, so one serves every call)."""
_MAX_FOLDED = 1024
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _host_converted(x: Any, dt: DType) -> np.generic | None:
    """A Python scalar converted to the strong dtype ``dt`` on the host: the NumPy
    scalar that staging folds ``convert_element_type`` of the literal to (with
    the primitive's own reference conversion), so eager code and staged code
    compute with the same constant and no device operation makes it.

    ``None`` where ``convert_element_type`` must run to say what is wrong or
    to keep a value out of the cache: complex values, ints outside int32 or
    outside an integer ``dt``, non-finite floats to integers."""
    t = x.__class__
    table = _folded[config.x64_enabled]
    key = (t, x, dt)
    hit = table.get(key)
    if hit is not None:
        return hit
    if t is builtins.complex:
        return None
    if t is builtins.int and not _INT32_MIN <= x <= _INT32_MAX:
        return None
    if dtypes.is_int(dt) and t is not builtins.bool:
        if t is builtins.float and not math.isfinite(x):
            return None
        info = dtypes.iinfo(dt)
        if t is builtins.int and not int(info.min) <= x <= int(info.max):
            return None
    value = lax_ew.convert_element_type_p.impl(to_numpy(x), new_dtype=dt, weak_type=False)
    out = cast(np.generic, np.asarray(value, dt)[()])  # a 0-d array's item: a NumPy scalar
    # Float zeros stay out (0.0 and -0.0 are equal keys with different bits),
    # and so do NaNs (never equal to themselves, so never found again).
    if not (t is builtins.float and (x == 0.0 or x != x)):
        if len(table) >= _MAX_FOLDED:
            table.clear()
        table[key] = out
    return out


def const_like(x: Any, value: Any) -> Array:
    """``value`` as a constant of ``x``'s dtype for computing with ``x``, typed as
    JAX types such constants: weakly typed when ``x`` is a weakly typed scalar
    (a Python scalar or a weak rank-0 array), so that arithmetic on weak
    scalars stays weak, and strongly typed otherwise."""
    aval = get_aval(x)
    dt = aval.dtype
    if aval.weak_type and not aval.shape:
        return convert(value, dt, True)
    folded = _host_converted(value, dt) if is_python_scalar(value) else None
    return folded if folded is not None else lax._convert_element_type(value, dt, False)


def scalar_like(x: Any, value: Any) -> Array:
    """``value`` with ``x``'s dtype and weak type: a constant that leaves the type
    of arithmetic with ``x`` alone (``x - 1`` stays weak when ``x`` is)."""
    aval = get_aval(x)
    return convert(value, aval.dtype, aval.weak_type)


def as_array(x: Any, name: str, position: int | str = 0) -> Array:
    """``x`` as an array value (Python and NumPy scalars become 0-d arrays keeping
    their weak type; an object defining ``__jax_array__`` becomes what it returns);
    lists and other objects raise ``TypeError``."""
    if x.__class__ in _ARRAY_TYPES:
        return x
    if type(x) is SymbolicDim:
        x = dimension_as_value(x)
    elif hasattr(x.__class__, "__jax_array__"):
        # As JAX's jnp functions: an object defining __jax_array__ (a flax.nnx Variable,
        # possibly rebuilt around a traced value) stands for the array it gives.
        x = x.__jax_array__()
    aval = aval_of(x, name, position)
    if isinstance(x, (np.ndarray, Tracer)):
        return x
    if is_python_scalar(x) or isinstance(x, np.generic):
        return lax._convert_element_type(x, aval.dtype, aval.weak_type)
    return x


def result_dtype(name: str, *args: Any) -> tuple[DType, builtins.bool]:
    """JAX's promotion of ``args``: the dtype and whether the result is weak."""
    try:
        return dtypes.result_type_and_weakness(*args)
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None


def to_inexact(dtype: DType) -> DType:
    """``dtype`` if it is floating or complex, else the float it computes in
    (:func:`plait_core.dtypes.to_inexact_dtype`: ``float32`` up to 32-bit integers)."""
    return dtypes.to_inexact_dtype(dtype)


def dims_as_values(args: Sequence[Any]) -> list[Any]:
    """``args`` with symbolic dimensions (``x.shape[0]`` under ``mask``) replaced
    by their values, weakly typed integers like the Python ints they stand for."""
    return [dimension_as_value(a) if type(a) is SymbolicDim else a for a in args]


def promote_dtypes(name: str, *args: Any) -> list[Array]:
    """Convert ``args`` to their common dtype (JAX's lattice, Python scalars weak)."""
    args = tuple(dims_as_values(args))
    check_arraylike(name, *args)
    dt, weak = result_dtype(name, *args)
    return [convert(x, dt, weak) for x in args]


def promote_dtypes_inexact(name: str, *args: Any) -> list[Array]:
    """As :func:`promote_dtypes`, then integers and booleans become the default float."""
    args = tuple(dims_as_values(args))
    check_arraylike(name, *args)
    dt, weak = result_dtype(name, *args)
    dt = to_inexact(dt)
    return [convert(x, dt, weak) for x in args]


def promote_dtypes_numeric(name: str, *args: Any) -> list[Array]:
    """As :func:`promote_dtypes`, then booleans become ``int32`` (arithmetic such
    as ``square`` or ``power`` on booleans computes in integers)."""
    args = tuple(dims_as_values(args))
    check_arraylike(name, *args)
    dt, weak = result_dtype(name, *args)
    dt = dtypes.to_numeric_dtype(dt)
    return [convert(x, dt, weak) for x in args]


# ---------------------------------------------------------------------------
# Broadcasting


def _shape_str(shape: Sequence[Dim]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def broadcast_shapes(name: str, *shapes: Sequence[Dim]) -> Shape:
    """NumPy's broadcast of ``shapes`` (dims may be symbolic); ``ValueError`` naming
    ``name`` and every shape when they are incompatible."""
    if not shapes:
        return ()
    first = tuple(shapes[0])
    if all(definitely_equal_shapes(first, s) for s in shapes[1:]):
        return first
    rank = max(len(s) for s in shapes)
    out: list[Dim] = []
    for i in range(rank):
        result: Dim = 1
        for s in shapes:
            j = len(s) - rank + i
            if j < 0:
                continue
            d = s[j]
            if definitely_equal(d, result) or definitely_equal(d, 1):
                continue
            if definitely_equal(result, 1):
                result = d
                continue
            listed = ", ".join(_shape_str(s) for s in shapes)
            raise ValueError(f"{name}: shapes {listed} cannot be broadcast together "
                             f"(dimension {i - rank} has sizes {result} and {d})")
        out.append(result)
    return tuple(out)


def broadcast_to_shape(x: Any, shape: Sequence[Dim], name: str = "broadcast_to") -> Array:
    """``x`` broadcast to ``shape`` by NumPy's rules (trailing dimensions aligned)."""
    shape = tuple(shape)
    aval = get_aval(x)
    if definitely_equal_shapes(aval.shape, shape) and not is_python_scalar(x):
        return x
    nlead = len(shape) - aval.ndim
    ok = nlead >= 0 and all(
        definitely_equal(d, 1) or definitely_equal(d, shape[nlead + i]) for i, d in enumerate(aval.shape)
    )
    if not ok:
        raise ValueError(f"{name}: cannot broadcast an array of shape {_shape_str(aval.shape)} "
                         f"to the shape {_shape_str(shape)}")
    if is_python_scalar(x):
        x = lax._convert_element_type(x, aval.dtype, aval.weak_type)
    return lax.broadcast_in_dim(x, shape, tuple(range(nlead, len(shape))))


def broadcast_args(name: str, *args: Any, keep_scalars: builtins.bool = False) -> list[Array]:
    """Broadcast ``args`` to their common shape.  With ``keep_scalars``, rank-0
    operands stay rank-0 (elementwise primitives broadcast them themselves)."""
    shapes = [shape_of(x) for x in args]
    shape = broadcast_shapes(name, *shapes)
    return [x if keep_scalars and not s and shape else broadcast_to_shape(x, shape, name)
            for x, s in zip(args, shapes)]


def _array_aval(x: Any) -> ShapedArray | None:
    """The aval of an array value (tracer, NumPy array, registered array type),
    or None for anything else; cheap, for the fast path below."""
    handler = _ARRAY_TYPES.get(x.__class__)
    if handler is not None:
        return handler.aval(x)
    if x.__class__ in tracer_types:
        return x.aval
    if type(x) is np.ndarray:
        return get_aval(x)
    return None


_scalar_joins: dict[tuple[DType, builtins.bool, type, builtins.bool], builtins.bool] = {}


def _yields_to(aval: ShapedArray, scalar: Any) -> builtins.bool:
    """Whether an array of ``aval`` and the Python scalar ``scalar`` promote to
    the array's own type (the scalar is weak, or a bool meeting numbers), so
    that only the scalar needs converting.  Ints outside int32 are left to the
    general path, which says whether they fit."""
    t = scalar.__class__
    if t is builtins.int and not _INT32_MIN <= scalar <= _INT32_MAX:
        return False
    key = (aval.dtype, aval.weak_type, t, config.x64_enabled)
    hit = _scalar_joins.get(key)
    if hit is None:
        try:
            joined = dtypes.result_type_and_weakness(aval, t(0))
        except TypeError:  # no promotion at all: the general path says so, naming the function
            return False
        hit = _scalar_joins[key] = joined == (aval.dtype, aval.weak_type)
    return hit


def _scalar_for(aval: ShapedArray, scalar: Any) -> Any:
    """The Python ``scalar`` promoted to join an array of ``aval`` when it yields
    to it (as it is when it already has the array's dtype: elementwise
    primitives take it so; else converted, on the host where it can be), or
    ``None`` when promotion is the general path's business."""
    if scalar.__class__ is not builtins.bool and dtypes.python_scalar_dtype(scalar) == aval.dtype:
        return scalar
    if not _yields_to(aval, scalar):
        return None
    folded = None if aval.weak_type else _host_converted(scalar, aval.dtype)
    return convert(scalar, aval.dtype, aval.weak_type) if folded is None else folded


def _promoted_pair(a: Any, b: Any, keep_scalars: builtins.bool) -> list[Array] | None:
    """The common pairs of a binary function, promoted without the general
    machinery: two arrays of one dtype, weakness and shape (as they are), or
    an array and a Python scalar that yields to it (the scalar promoted; it
    stays rank-0, so only with ``keep_scalars``).  ``None`` for the rest."""
    handler = _ARRAY_TYPES.get(a.__class__)
    aa = handler.aval(a) if handler is not None else _array_aval(a)
    if aa is not None:
        if b.__class__ in _PY_SCALARS:
            sb = _scalar_for(aa, b) if keep_scalars else None
            return None if sb is None else [a, sb]
        handler = _ARRAY_TYPES.get(b.__class__)
        ab = handler.aval(b) if handler is not None else _array_aval(b)
        # ShapedArray equality is exactly "same dtype, weakness and shape"
        # (symbolic dimensions compared as polynomials, undecidable = unequal);
        # weak booleans promote to strong ones (the general path).
        if ab is not None and (aa is ab or aa == ab) and not (aa.weak_type and aa.dtype == _BOOL):
            return [a, b]
        return None
    if keep_scalars and a.__class__ in _PY_SCALARS:
        ab = _array_aval(b)
        sa = None if ab is None else _scalar_for(ab, a)
        if sa is not None:
            return [sa, b]
    return None


def check_rank_promotion(name: str, args: Sequence[Any]) -> None:
    """JAX's ``numpy_rank_promotion`` option: operands of different non-zero
    ranks broadcast together are an error (``"raise"``: ``ValueError``) or a
    ``UserWarning`` (``"warn"``); rank-0 operands never count.  Nothing
    under the default ``"allow"``."""
    mode = config.numpy_rank_promotion
    if mode == "allow":
        return
    try:
        shapes = [shape_of(x) for x in args]
    except TypeError:  # not all arrays: promotion names the offending operand
        return
    if len({len(s) for s in shapes if len(s)}) < 2:
        return
    listed = " ".join(_shape_str(s) for s in shapes)
    if mode == "raise":
        raise ValueError(f"{name}: operands of shapes {listed} have different ranks, and implicit rank promotion "
                         "is off (numpy_rank_promotion='raise'); add the leading axes explicitly (expand_dims, "
                         "reshape, broadcast_to) or set the option to 'allow'")
    warnings.warn(f"{name}: operands of shapes {listed} are broadcast to a common rank (NumPy's rank promotion); "
                  "set the option numpy_rank_promotion to 'allow' to silence this warning", UserWarning,
                  stacklevel=4)


def promote_args(name: str, *args: Any, keep_scalars: builtins.bool = True) -> list[Array]:
    """Common dtype and common shape: the inputs of a NumPy binary function.
    Rank-0 operands stay rank-0 unless ``keep_scalars=False``.  Operands of
    different ranks follow the option ``numpy_rank_promotion``."""
    if len(args) == 2:
        pair = _promoted_pair(args[0], args[1], keep_scalars)
        if pair is not None:  # equal shapes, or an array and a scalar: no rank promotion
            return pair
    check_rank_promotion(name, args)
    return broadcast_args(name, *promote_dtypes(name, *args), keep_scalars=keep_scalars)


def promote_args_numeric(name: str, *args: Any, keep_scalars: builtins.bool = True) -> list[Array]:
    """As :func:`promote_args`, computing in a numeric dtype (booleans as ``int32``)."""
    check_rank_promotion(name, args)
    return broadcast_args(name, *promote_dtypes_numeric(name, *args), keep_scalars=keep_scalars)


def promote_args_inexact(name: str, *args: Any, keep_scalars: builtins.bool = True) -> list[Array]:
    """As :func:`promote_args`, computing in a floating (or complex) dtype."""
    check_rank_promotion(name, args)
    return broadcast_args(name, *promote_dtypes_inexact(name, *args), keep_scalars=keep_scalars)


# ---------------------------------------------------------------------------
# Axes


def canonicalize_axis(axis: Any, ndim: int, name: str, argname: str = "axis") -> int:
    """A non-negative axis; ``AxisError`` (a ``ValueError``) when out of range,
    ``TypeError`` when not an integer."""
    if isinstance(axis, (builtins.bool, np.bool_)):
        raise TypeError(f"{name}: {argname} must be an integer, got {axis!r}")
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: {argname} must be an integer, got {axis!r} of type "
                        f"{type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(
            f"{name}: {argname} {a} is out of bounds for an array of rank {ndim}")
    return a + ndim if a < 0 else a


_EVERY_AXIS = [tuple(range(n)) for n in range(33)]


def canonicalize_axes(axis: Any, ndim: int, name: str, argname: str = "axis") -> tuple[int, ...]:
    """``None`` (every axis), an int or a sequence of ints, as sorted-as-given
    non-negative axes; repeated axes are a ``ValueError``."""
    if axis is None:
        return _EVERY_AXIS[ndim] if ndim < len(_EVERY_AXIS) else tuple(range(ndim))
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(canonicalize_axis(a, ndim, name, argname) for a in items)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {argname}={axis!r}")
    return out


# ---------------------------------------------------------------------------
# Dimensions as values


def _dim_as_value(d: Dim) -> Any:
    """A dimension as a value usable in arithmetic (``mean`` divides by one).

    Constant dimensions are Python ints (weakly typed).  A symbolic dimension
    becomes the integer scalar ``dim_as_value[dim=d]``, which the interpreter
    binding its names (mask, vmap over piles) evaluates."""
    if is_symbolic(d):
        if getattr(d, "is_constant", False):
            return d.constant_term  # type: ignore[union-attr]
        return dimension_as_value(d)
    return operator.index(d)


def shape_str(shape: Sequence[Dim]) -> str:
    """A shape written as NumPy writes it: ``(3,)``, ``(2, n)``."""
    return _shape_str(shape)


def full_like_value(x: Any, value: Any, dtype: Any = None) -> Array:
    """An array shaped like ``x`` filled with ``value`` (dtype of ``x`` by default)."""
    aval = get_aval(x)
    dt = aval.dtype if dtype is None else np.dtype(dtype)
    weak = aval.weak_type if dtype is None else False
    scalar = lax._convert_element_type(value, dt, weak)
    return lax.broadcast_in_dim(scalar, aval.shape, ())


def slice_axis(x: Any, start: Dim, stop: Dim, axis: int, step: int = 1) -> Array:
    """``x[start:stop:step]`` along ``axis`` (static, non-negative, in-bounds bounds)."""
    shape = get_aval(x).shape
    starts: list[Dim] = [0] * len(shape)
    limits: list[Dim] = list(shape)
    starts[axis] = start
    limits[axis] = stop
    strides = None
    if step != 1:
        strides = [1] * len(shape)
        strides[axis] = step
    return lax.slice(x, tuple(starts), tuple(limits), None if strides is None else tuple(strides))


def shape_arg(shape: Any, name: str) -> Shape:
    """A user-given shape (an int, a dimension or a sequence of them) as a tuple of
    dims; negative sizes are a ``ValueError``, traced sizes a concretization error."""
    entries: Sequence[Any]
    if isinstance(shape, (builtins.int, np.integer, SymbolicDim, Tracer)):
        entries = (shape,)
    elif isinstance(shape, (tuple, list)):
        entries = shape
    elif isinstance(shape, np.ndarray) and shape.ndim <= 1:
        entries = [builtins.int(v) for v in np.atleast_1d(shape)]
    else:
        raise TypeError(f"{name}: a shape must be an int or a sequence of ints, got {shape!r}")
    out: list[Any] = []
    for d in entries:
        if isinstance(d, Tracer):
            d = dim_or_concrete(d, f"{name}: a dimension of the shape")
            if not isinstance(d, SymbolicDim):
                d = concrete_int(d, f"{name}: a dimension of the shape")
        if isinstance(d, (builtins.int, np.integer)) and not isinstance(d, (builtins.bool, np.bool_)) and d < 0:
            raise ValueError(f"{name}: negative dimensions are not allowed, got shape {tuple(entries)!r}")
        out.append(d)
    return canonicalize_shape(tuple(out), name)
