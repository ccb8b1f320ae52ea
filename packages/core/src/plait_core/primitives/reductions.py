"""Primitives of the reductions family: reductions over axes, ``argmax`` /
``argmin``, cumulative scans and the multi-operand ``sort``.

Every reduction takes its axes as a tuple of non-negative ints (the ``lax``
wrappers normalise negative axes) and returns the operand's dtype and weak
type with those axes removed (``reduce_and`` / ``reduce_or`` results are
strongly typed, as in JAX).  NumPy implementations follow XLA: integer sums
wrap around, ``reduce_max`` / ``reduce_min`` propagate NaN, an empty reduction
gives the monoid's identity, and 16-bit floats are accumulated in float32.

(Eager calls are checked by the abstract evaluation before the NumPy code runs:
core's eager backend does that for every primitive.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray
from plait_core.dims import Dim, Shape, definitely_equal, dims_equal
from plait_core.primitive import Primitive

DType = np.dtype[Any]
Compute = Callable[..., Any]

# ---------------------------------------------------------------------------
# Helpers shared by the reductions, linalg and ad_helpers families.




def shape_text(shape: Shape) -> str:
    """A shape as a Python tuple would print, symbolic dims included."""
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def dims_match(a: Dim, b: Dim) -> bool:
    """Whether two dims are equal; raises ``InconclusiveDimensionOperation``
    when that depends on the values of symbolic sizes."""
    return definitely_equal(a, b) or dims_equal(a, b)


def shapes_match(a: Shape, b: Shape) -> bool:
    """Whether two shapes have the same rank and equal dims."""
    return len(a) == len(b) and all(dims_match(x, y) for x, y in zip(a, b))


def check_int_param(prim: str, param: str, value: Any) -> int:
    """``value`` if it is a Python (or NumPy) integer, else a TypeError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{prim}: the parameter {param} must be an int, got {value!r} of type {type(value).__name__}")
    return int(value)


def check_bool_param(prim: str, param: str, value: Any) -> bool:
    """``value`` if it is a bool, else a TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{prim}: the parameter {param} must be a bool, got {value!r} of type {type(value).__name__}")
    return bool(value)


def check_axis(prim: str, aval: ShapedArray, axis: Any, param: str = "axis") -> int:
    """A valid, non-negative axis of ``aval``; ValueError naming the primitive,
    the axis and the operand's shape otherwise."""
    a = check_int_param(prim, param, axis)
    if not 0 <= a < aval.ndim:
        raise ValueError(
            f"{prim}: axis {a} is out of range for an operand of shape {shape_text(aval.shape)} "
            f"(rank {aval.ndim}); axes must be in [0, {aval.ndim})"
        )
    return a


def check_axes(prim: str, aval: ShapedArray, axes: Any) -> tuple[int, ...]:
    """Valid, distinct, non-negative axes of ``aval`` given as a tuple."""
    if not isinstance(axes, tuple):
        raise TypeError(f"{prim}: the parameter axes must be a tuple of ints, got {type(axes).__name__}")
    seen: set[int] = set()
    for axis in axes:
        a = check_axis(prim, aval, axis, "axes")
        if a in seen:
            raise ValueError(f"{prim}: axis {a} appears twice in axes {axes} (operand shape {shape_text(aval.shape)})")
        seen.add(a)
    return axes


def check_dtype(prim: str, aval: ShapedArray, ok: Callable[[DType], bool], kinds: str) -> None:
    """TypeError naming the primitive and the dtype unless ``ok(aval.dtype)``."""
    if not ok(aval.dtype):
        raise TypeError(f"{prim}: the operand must have a {kinds} dtype, got {aval.dtype.name} ({aval.str_short()})")


def _numeric(d: DType) -> bool:
    return dtypes.is_int(d) or dtypes.is_inexact(d)


def _ordered(d: DType) -> bool:
    return dtypes.is_bool(d) or dtypes.is_int(d) or dtypes.is_float(d)


def _logical(d: DType) -> bool:
    return dtypes.is_bool(d) or dtypes.is_int(d)


NUMERIC = (_numeric, "numeric (integer, floating or complex)")
ORDERED = (_ordered, "bool, integer or floating")
LOGICAL = (_logical, "bool or integer")


def widen_half(x: np.ndarray) -> np.ndarray:
    """16-bit floats as float32 (XLA accumulates them at that precision);
    every other array unchanged."""
    return x.astype(np.float32) if x.dtype in (dtypes.bfloat16, dtypes.float16) else x


# ---------------------------------------------------------------------------
# Reductions over axes


def _max_identity(dtype: DType) -> Any:
    return dtypes.lowest(dtype)


def _min_identity(dtype: DType) -> Any:
    return dtypes.highest(dtype)


def _sum(x: np.ndarray, *, axes: tuple[int, ...]) -> Any:
    w = widen_half(x)
    return np.sum(w, axis=axes, dtype=w.dtype)


def _prod(x: np.ndarray, *, axes: tuple[int, ...]) -> Any:
    w = widen_half(x)
    return np.prod(w, axis=axes, dtype=w.dtype)


def _max(x: np.ndarray, *, axes: tuple[int, ...]) -> Any:
    return np.max(widen_half(x), axis=axes, initial=_max_identity(x.dtype))


def _min(x: np.ndarray, *, axes: tuple[int, ...]) -> Any:
    return np.min(widen_half(x), axis=axes, initial=_min_identity(x.dtype))


def _and(x: np.ndarray, *, axes: tuple[int, ...]) -> Any:
    all_ones = ~np.zeros((), x.dtype)
    return np.bitwise_and.reduce(x, axis=axes, initial=all_ones)


def _or(x: np.ndarray, *, axes: tuple[int, ...]) -> Any:
    return np.bitwise_or.reduce(x, axis=axes, initial=np.zeros((), x.dtype))


def _reducer_rule(name: str, kind: tuple[Callable[[DType], bool], str], keep_weak: bool) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
        check_axes(name, x, axes)
        check_dtype(name, x, *kind)
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, keep_weak and x.weak_type)

    return rule


def def_reducer(name: str, compute: Compute, kind: tuple[Callable[[DType], bool], str], *,
                keep_weak: bool = True) -> Primitive:
    """A reduction primitive ``name[axes]`` over the operand's ``axes``; its result
    is weakly typed when the operand is, unless ``keep_weak=False``."""
    prim = Primitive(name, family="reduction")
    prim.def_abstract_eval(_reducer_rule(name, kind, keep_weak))
    prim.def_impl(compute)
    return prim


reduce_sum_p = def_reducer("reduce_sum", _sum, NUMERIC)
reduce_prod_p = def_reducer("reduce_prod", _prod, NUMERIC)
reduce_max_p = def_reducer("reduce_max", _max, ORDERED)
reduce_min_p = def_reducer("reduce_min", _min, ORDERED)
reduce_and_p = def_reducer("reduce_and", _and, LOGICAL, keep_weak=False)
reduce_or_p = def_reducer("reduce_or", _or, LOGICAL, keep_weak=False)


# ---------------------------------------------------------------------------
# argmax / argmin: the index of the first extreme element; NaN counts as the
# extreme for both (as in XLA), which is also what NumPy returns.


def _arg_rule(name: str) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, *, axes: tuple[int, ...], index_dtype: Any) -> ShapedArray:
        check_axes(name, x, axes)
        if len(axes) != 1:
            raise ValueError(f"{name}: axes must name exactly one axis, got {axes}")
        check_dtype(name, x, *ORDERED)
        if not isinstance(index_dtype, np.dtype) or not dtypes.is_int(index_dtype):
            raise TypeError(f"{name}: index_dtype must be an integer dtype, got {index_dtype!r}")
        size = x.shape[axes[0]]
        if type(size) is int and size == 0:
            raise ValueError(
                f"{name}: the reduced axis {axes[0]} of an operand of shape {shape_text(x.shape)} is empty"
            )
        shape = tuple(d for i, d in enumerate(x.shape) if i != axes[0])
        return ShapedArray(shape, index_dtype, False)

    return rule


def _argmax(x: np.ndarray, *, axes: tuple[int, ...], index_dtype: DType) -> Any:
    return np.argmax(widen_half(x), axis=axes[0])


def _argmin(x: np.ndarray, *, axes: tuple[int, ...], index_dtype: DType) -> Any:
    return np.argmin(widen_half(x), axis=axes[0])


argmax_p = Primitive("argmax", family="reduction")
argmax_p.def_abstract_eval(_arg_rule("argmax"))
argmax_p.def_impl(_argmax)
argmin_p = Primitive("argmin", family="reduction")
argmin_p.def_abstract_eval(_arg_rule("argmin"))
argmin_p.def_impl(_argmin)


# ---------------------------------------------------------------------------
# Cumulative reductions along one axis, optionally from the end.


def _cumulative_rule(name: str, kind: tuple[Callable[[DType], bool], str]) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, *, axis: int, reverse: bool) -> ShapedArray:
        check_axis(name, x, axis)
        check_bool_param(name, "reverse", reverse)
        check_dtype(name, x, *kind)
        return x

    return rule


def _scan(accumulate: Callable[[np.ndarray, int], np.ndarray]) -> Compute:
    def compute(x: np.ndarray, *, axis: int, reverse: bool) -> np.ndarray:
        w = widen_half(x)
        if reverse:
            return np.flip(accumulate(np.flip(w, axis), axis), axis)
        return accumulate(w, axis)

    return compute


def def_cumulative(name: str, accumulate: Callable[[np.ndarray, int], np.ndarray], kind: tuple[Callable[[DType], bool], str]) -> Primitive:
    """A scan primitive ``name[axis, reverse]`` (output shaped like the operand)."""
    prim = Primitive(name, family="reduction")
    prim.def_abstract_eval(_cumulative_rule(name, kind))
    prim.def_impl(_scan(accumulate))
    return prim


cumsum_p = def_cumulative("cumsum", lambda x, a: np.cumsum(x, axis=a, dtype=x.dtype), NUMERIC)
cumprod_p = def_cumulative("cumprod", lambda x, a: np.cumprod(x, axis=a, dtype=x.dtype), NUMERIC)
cummax_p = def_cumulative("cummax", lambda x, a: np.maximum.accumulate(x, axis=a), ORDERED)
cummin_p = def_cumulative("cummin", lambda x, a: np.minimum.accumulate(x, axis=a), ORDERED)


# ---------------------------------------------------------------------------
# The identity of each reduction's monoid (``Primitive.identity``): what an
# interpreter computing on padded data fills the padding with, so that it
# changes no result.  ``argmax`` / ``argmin`` take the identity of ``max`` /
# ``min``: the padding follows the true entries and ties go to the first index.
# (A float without infinities takes its most negative or positive finite value.)


def _zero(dtype: DType) -> Any:
    return np.zeros((), dtype)


def _one(dtype: DType) -> Any:
    return np.ones((), dtype)


def _all_ones(dtype: DType) -> Any:
    return ~np.zeros((), dtype)


for _prims, _identity in (
    ((reduce_sum_p, cumsum_p, reduce_or_p), _zero), ((reduce_prod_p, cumprod_p), _one),
    ((reduce_max_p, argmax_p, cummax_p), dtypes.lowest), ((reduce_min_p, argmin_p, cummin_p), dtypes.highest),
    ((reduce_and_p,), _all_ones),
):  # fmt: skip
    for _prim in _prims:
        _prim.identity = _identity


# ---------------------------------------------------------------------------
# sort: operands of one shape sorted together along ``dimension``,
# lexicographically by the first ``num_keys`` of them.  Floats order NaNs
# last and -0.0 equal to 0.0; the sort is always stable.


def _sort_rule(*operands: ShapedArray, dimension: int, is_stable: bool, num_keys: int) -> list[ShapedArray]:
    if not operands:
        raise ValueError("sort: needs at least one operand")
    first = operands[0]
    for i, x in enumerate(operands[1:], 1):
        if not shapes_match(first.shape, x.shape):
            raise ValueError(
                f"sort: all operands must have the same shape, operand 0 has shape "
                f"{shape_text(first.shape)} but operand {i} has shape {shape_text(x.shape)}"
            )
    check_axis("sort", first, dimension, "dimension")
    check_bool_param("sort", "is_stable", is_stable)
    k = check_int_param("sort", "num_keys", num_keys)
    if not 1 <= k <= len(operands):
        raise ValueError(f"sort: num_keys must be between 1 and the number of operands ({len(operands)}), got {k}")
    return list(operands)


def _sort(*operands: np.ndarray, dimension: int, is_stable: bool, num_keys: int) -> list[np.ndarray]:
    moved = [np.moveaxis(x, dimension, -1) for x in operands]
    keys = [widen_half(k) for k in moved[:num_keys]]
    # np.lexsort sorts by its last key first, and is stable.
    order = np.lexsort(keys[::-1], axis=-1)
    return [np.moveaxis(np.take_along_axis(x, order, axis=-1), -1, dimension) for x in moved]


sort_p = Primitive("sort", family="reduction", multiple_results=True)
sort_p.def_abstract_eval(_sort_rule)
sort_p.def_impl(_sort)


__all__ = [
    "argmax_p",
    "argmin_p",
    "cummax_p",
    "cummin_p",
    "cumprod_p",
    "cumsum_p",
    "reduce_and_p",
    "reduce_max_p",
    "reduce_min_p",
    "reduce_or_p",
    "reduce_prod_p",
    "reduce_sum_p",
    "sort_p",
]
