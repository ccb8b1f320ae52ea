"""The exact operations the interpreters' rules compute with.

Each function binds exactly one of core's primitives (or none, when the
operation is a no-op: a reshape to the same shape, a sum over no axes, a
conversion to the type a value already has) on the current trace.  Unlike
``plait_core.lax`` nothing here promotes: operands already have matching
dtypes inside a rule, and a rule controls dtypes and weak types exactly.
Every function works on concrete arrays and tracers alike.

This is the one mini-``lax`` of the rules of every interpreter (autodiff's,
masking's, batching's and core's padded rules, :mod:`plait_core.padded`):
``select(pred, on_true, on_false)`` takes its operands in the order of
``numpy.where`` and ``lax.select``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray, get_aval
from plait_core.dims import Dim, definitely_equal, is_constant_dim
from plait_core.primitives import ad_helpers as ad
from plait_core.primitives import elementwise as ew
from plait_core.primitives import reductions as red
from plait_core.primitives import structural as st
from plait_core.primitives.shapes import dim_as_value_p

DType = np.dtype[Any]

_PYTHON_OR_NUMPY = (bool, int, float, complex, np.generic, np.ndarray)


def aval(x: Any) -> ShapedArray:
    """The abstract value of ``x``."""
    return get_aval(x)


def const(like: Any, value: Any) -> np.ndarray:
    """A scalar constant of the dtype of ``like`` (a value or an abstract value)."""
    dt = like.dtype if isinstance(like, ShapedArray) else aval(like).dtype
    return np.asarray(value, dt)


def same_shape(a: Sequence[Dim], b: Sequence[Dim]) -> bool:
    """Same rank and provably equal dimensions."""
    return len(a) == len(b) and all(definitely_equal(x, y) for x, y in zip(a, b))


# ---------------------------------------------------------------------------
# Elementwise


def neg(x: Any) -> Any:
    return ew.neg_p.bind(x)


def add(x: Any, y: Any) -> Any:
    return ew.add_p.bind(x, y)


def sub(x: Any, y: Any) -> Any:
    return ew.sub_p.bind(x, y)


def mul(x: Any, y: Any) -> Any:
    return ew.mul_p.bind(x, y)


def div(x: Any, y: Any) -> Any:
    return ew.div_p.bind(x, y)


def square(x: Any) -> Any:
    return ew.integer_pow_p.bind(x, y=2)


def integer_pow(x: Any, y: int) -> Any:
    return ew.integer_pow_p.bind(x, y=y)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where ``pred`` else ``on_false`` (``select_n(pred, on_false, on_true)``)."""
    return ew.select_n_p.bind(pred, on_false, on_true)


def convert(x: Any, dtype: DType, weak_type: bool = False) -> Any:
    """``x`` converted to ``dtype`` (no equation when it already has that type)."""
    a = aval(x)
    if a.dtype == dtype and a.weak_type == weak_type:
        return x
    return ew.convert_element_type_p.bind(x, new_dtype=np.dtype(dtype), weak_type=weak_type)


def as_dtype(value: Any, dtype: DType, weak_type: bool = False) -> Any:
    """``value`` (a Python or NumPy constant, or a value of the current trace)
    as ``dtype`` with the given weak type; constants become NumPy arrays (and
    stay constants unless they must be weak)."""
    if isinstance(value, _PYTHON_OR_NUMPY):
        value = np.asarray(value, dtype)
        if not weak_type:
            return value
    return convert(value, dtype, weak_type)


def eq(x: Any, y: Any) -> Any:
    return ew.eq_p.bind(x, y)


def lt(x: Any, y: Any) -> Any:
    return ew.lt_p.bind(x, y)


def le(x: Any, y: Any) -> Any:
    return ew.le_p.bind(x, y)


def ge(x: Any, y: Any) -> Any:
    return ew.ge_p.bind(x, y)


def logical_and(x: Any, y: Any) -> Any:
    return ew.and_p.bind(x, y)


def logical_or(x: Any, y: Any) -> Any:
    return ew.or_p.bind(x, y)


def logical_not(x: Any) -> Any:
    return ew.not_p.bind(x)


def maximum(x: Any, y: Any) -> Any:
    return ew.max_p.bind(x, y)


def clamp(lo: Any, x: Any, hi: Any) -> Any:
    """``x`` limited to ``[lo, hi]`` (all of one dtype; the bounds scalars or of ``x``'s shape)."""
    return ew.clamp_p.bind(lo, x, hi)


def dim_value(d: Dim, dtype: DType) -> Any:
    """The dimension ``d`` as an integer scalar of ``dtype``.

    A constant is a NumPy scalar; a symbolic dimension is ``dim_as_value``,
    whose value the interpreter that binds its sizes supplies (the logical
    size under ``mask``, each element's length inside ``vmap`` over piles)."""
    if is_constant_dim(d):
        return np.asarray(int(d), dtype)
    return convert(dim_as_value_p.bind(dim=d), np.dtype(dtype))


# ---------------------------------------------------------------------------
# Structural


def broadcast_in_dim(x: Any, shape: Sequence[Dim], dims: Sequence[int]) -> Any:
    a = aval(x)
    shape = tuple(shape)
    if tuple(dims) == tuple(range(a.ndim)) and same_shape(a.shape, shape):
        return x
    return st.broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=tuple(dims))


def broadcast_to(x: Any, shape: Sequence[Dim]) -> Any:
    """A rank-0 ``x`` broadcast to ``shape``; any other ``x`` must already have it."""
    a = aval(x)
    if a.ndim == 0 and len(shape):
        return broadcast_in_dim(x, shape, ())
    return x


def broadcast_along(v: Any, shape: Sequence[Dim], axes: Sequence[int]) -> Any:
    """``v`` (whose dimensions are ``axes`` of ``shape``) broadcast to ``shape``."""
    return broadcast_in_dim(v, shape, axes)


def reshape(x: Any, shape: Sequence[Dim]) -> Any:
    if same_shape(aval(x).shape, tuple(shape)):
        return x
    return st.reshape_p.bind(x, new_sizes=tuple(shape), dimensions=None)


def transpose(x: Any, perm: Sequence[int]) -> Any:
    perm = tuple(int(p) for p in perm)
    if perm == tuple(range(len(perm))):
        return x
    return st.transpose_p.bind(x, permutation=perm)


def reduce_sum(x: Any, axes: Sequence[int]) -> Any:
    if not axes:
        return x
    return red.reduce_sum_p.bind(x, axes=tuple(sorted(axes)))


def sum_to_shape(ct: Any, target: ShapedArray) -> Any:
    """Undo the broadcast of a rank-0 operand of an elementwise primitive:
    a cotangent of the result's shape summed to ``target``'s (rank 0) shape."""
    a = aval(ct)
    if target.ndim == 0 and a.ndim:
        return reduce_sum(ct, range(a.ndim))
    return ct


def slice_(x: Any, start: Sequence[Dim], limit: Sequence[Dim], strides: Sequence[int] | None = None) -> Any:
    return st.slice_p.bind(
        x, start_indices=tuple(start), limit_indices=tuple(limit), strides=None if strides is None else tuple(strides)
    )


def pad(x: Any, value: Any, config: Sequence[tuple[int, int, int]]) -> Any:
    if all(c == (0, 0, 0) for c in config):
        return x
    return st.pad_p.bind(x, value, padding_config=tuple(tuple(c) for c in config))


def dynamic_slice(x: Any, starts: Sequence[Any], sizes: Sequence[Dim]) -> Any:
    return st.dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(sizes))


def dynamic_update_slice(x: Any, update: Any, starts: Sequence[Any]) -> Any:
    return st.dynamic_update_slice_p.bind(x, update, *starts)


def concatenate(xs: Sequence[Any], dimension: int) -> Any:
    if len(xs) == 1:
        return xs[0]
    return st.concatenate_p.bind(*xs, dimension=dimension)


def rev(x: Any, dims: Sequence[int]) -> Any:
    if not dims:
        return x
    return st.rev_p.bind(x, dimensions=tuple(dims))


def iota(dtype: DType, shape: Sequence[Dim], dimension: int) -> Any:
    """Indices along ``dimension`` of an array of ``shape``."""
    return st.iota_p.bind(dtype=np.dtype(dtype), shape=tuple(shape), dimension=dimension)


def zeros_like(x: Any) -> Any:
    return ad.zeros_like_p.bind(x)


def full(shape: Sequence[Dim], value: Any, dtype: DType, weak_type: bool = False) -> Any:
    """An array of ``shape`` filled with the scalar ``value`` (a constant, or a
    scalar value of the current trace), of ``dtype`` and the given weak type."""
    scalar = as_dtype(value, np.dtype(dtype), weak_type)
    return broadcast_in_dim(scalar, tuple(shape), ()) if len(shape) else scalar


# ---------------------------------------------------------------------------
# Moving data along one axis


def pad_high(x: Any, axis: int, amount: int, value: Any = 0) -> Any:
    """``x`` grown by ``amount`` elements of ``value`` at the end of ``axis``."""
    if amount == 0:
        return x
    a = aval(x)
    config = tuple((0, amount if k == axis else 0, 0) for k in range(a.ndim))
    return st.pad_p.bind(x, as_dtype(value, a.dtype, a.weak_type), padding_config=config)


def slice_axis(x: Any, axis: int, start: int, limit: int, stride: int = 1) -> Any:
    """``x[start:limit:stride]`` along ``axis`` (static bounds; no equation for the whole axis)."""
    shape = tuple(aval(x).shape)
    starts = tuple(start if k == axis else 0 for k in range(len(shape)))
    limits = tuple(limit if k == axis else d for k, d in enumerate(shape))
    strides = None if stride == 1 else tuple(stride if k == axis else 1 for k in range(len(shape)))
    if starts == (0,) * len(shape) and limits == shape and strides is None:
        return x
    return slice_(x, starts, limits, strides)


def window(x: Any, axis: int, start: Any, size: int) -> Any:
    """The ``size`` elements of ``x`` from the (traced) ``start`` along ``axis``.

    ``x`` is first grown by ``size`` at the end, so no clamping moves the
    window for any ``start`` in ``[0, x.shape[axis]]``; elements read past
    the end of ``x`` are zeros."""
    a = aval(x)
    grown = pad_high(x, axis, size)
    dt = dtypes.default_int_dtype()
    zero = np.zeros((), dt)
    starts = [as_dtype(start, dt) if k == axis else zero for k in range(a.ndim)]
    sizes = tuple(size if k == axis else d for k, d in enumerate(a.shape))
    return dynamic_slice(grown, starts, sizes)
