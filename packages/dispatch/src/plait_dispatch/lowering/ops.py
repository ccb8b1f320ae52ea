"""Typed builders for the StableHLO operations the rules share.

Each takes the rule context and SSA values and returns the result value;
shapes are concrete tuples of ints.  They keep the rules short and make the
attribute syntax live in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import ShapedArray, dtypes
from plait_dispatch.lowering.context import RuleContext
from plait_dispatch.lowering.module import Value, i64_array

DType = np.dtype[Any]
BOOL: DType = np.dtype(np.bool_)
I32: DType = np.dtype(np.int32)
F32: DType = np.dtype(np.float32)
HALF_FLOATS = frozenset({np.dtype(dtypes.bfloat16), np.dtype(np.float16)})


def aval(shape: Sequence[int], dtype: Any) -> ShapedArray:
    """A (strongly typed) abstract value."""
    return ShapedArray(tuple(shape), np.dtype(dtype))


def like(x: Value, *, shape: Sequence[int] | None = None, dtype: Any = None) -> ShapedArray:
    """``x``'s abstract value with the shape or dtype replaced."""
    return aval(x.shape if shape is None else shape, x.dtype if dtype is None else dtype)


def unary(ctx: RuleContext, name: str, x: Value, dtype: Any = None) -> Value:
    """An elementwise one-operand operation (result dtype ``dtype`` or ``x``'s)."""
    return ctx.op1(name, [x], like(x, dtype=dtype))


def binary(ctx: RuleContext, name: str, a: Value, b: Value, dtype: Any = None) -> Value:
    """An elementwise two-operand operation on operands of one shape."""
    return ctx.op1(name, [a, b], like(a, dtype=dtype))


def compare_type(dtype: DType) -> str:
    """The ``compare_type`` StableHLO wants for operands of ``dtype``."""
    if dtypes.is_inexact(dtype):
        kind = "FLOAT"
    elif dtypes.is_signed_int(dtype):
        kind = "SIGNED"
    else:
        kind = "UNSIGNED"  # unsigned integers and booleans
    return f"#stablehlo<comparison_type {kind}>"


def compare(ctx: RuleContext, a: Value, b: Value, direction: str) -> Value:
    """``a <direction> b`` elementwise (``EQ NE LT LE GT GE``); floats compare
    as IEEE does (every comparison with NaN is false except ``NE``)."""
    attrs = {
        "comparison_direction": f"#stablehlo<comparison_direction {direction}>",
        "compare_type": compare_type(a.dtype),
    }
    return ctx.op1("stablehlo.compare", [a, b], like(a, dtype=BOOL), attrs)


def is_nan(ctx: RuleContext, x: Value) -> Value:
    """``x != x``: true exactly at NaNs."""
    return compare(ctx, x, x, "NE")


def select(ctx: RuleContext, pred: Value, on_true: Value, on_false: Value) -> Value:
    """``pred ? on_true : on_false`` (``pred`` a boolean of their shape, or a scalar)."""
    return ctx.op1("stablehlo.select", [pred, on_true, on_false], on_true.aval)


def logical(ctx: RuleContext, name: str, *xs: Value) -> Value:
    """``and``/``or`` of several boolean values of one shape."""
    out = xs[0]
    for x in xs[1:]:
        out = binary(ctx, f"stablehlo.{name}", out, x)
    return out


def logical_not(ctx: RuleContext, x: Value) -> Value:
    """Boolean negation."""
    return unary(ctx, "stablehlo.not", x)


def convert(ctx: RuleContext, x: Value, dtype: Any) -> Value:
    """``stablehlo.convert`` to ``dtype`` (nothing when it already has it)."""
    dt = np.dtype(dtype)
    return x if x.dtype == dt else unary(ctx, "stablehlo.convert", x, dt)


def full(ctx: RuleContext, value: Any, dtype: Any, shape: Sequence[int] = ()) -> Value:
    """A constant of ``shape`` filled with ``value``."""
    return ctx.constant(value, dtype, shape)


def broadcast_in_dim(ctx: RuleContext, x: Value, shape: Sequence[int], dims: Sequence[int]) -> Value:
    """``stablehlo.broadcast_in_dim``: operand dimension ``i`` becomes result dimension ``dims[i]``."""
    return ctx.op1("stablehlo.broadcast_in_dim", [x], like(x, shape=shape), {"broadcast_dimensions": i64_array(dims)})


def broadcast_to(ctx: RuleContext, x: Value, shape: Sequence[int]) -> Value:
    """``x`` of ``shape``: a rank-0 value is broadcast, any other must already have it."""
    if x.shape == tuple(shape):
        return x
    if x.shape != ():
        raise ValueError(f"cannot broadcast {x.aval.str_short()} to {tuple(shape)}")
    value = ctx.block.scalar_constant(x)
    if value is not None:  # a splat constant of the full shape instead of a broadcast
        return ctx.block.constant(value, like(x, shape=shape))
    return broadcast_in_dim(ctx, x, shape, ())


def reshape(ctx: RuleContext, x: Value, shape: Sequence[int]) -> Value:
    """``stablehlo.reshape`` (nothing when the shape is unchanged)."""
    if x.shape == tuple(shape):
        return x
    return ctx.op1("stablehlo.reshape", [x], like(x, shape=shape))


def transpose(ctx: RuleContext, x: Value, perm: Sequence[int]) -> Value:
    """``stablehlo.transpose``: result dimension ``i`` is operand dimension ``perm[i]``."""
    if list(perm) == list(range(len(perm))):
        return x
    shape = [x.shape[p] for p in perm]
    return ctx.op1("stablehlo.transpose", [x], like(x, shape=shape), {"permutation": i64_array(perm)})


def slice_(
    ctx: RuleContext, x: Value, starts: Sequence[int], limits: Sequence[int], strides: Sequence[int] | None = None
) -> Value:
    """``stablehlo.slice`` (static bounds, positive strides)."""
    steps = list(strides) if strides is not None else [1] * len(starts)
    shape = [max(0, -(-(lim - s) // st)) for s, lim, st in zip(starts, limits, steps)]
    attrs = {"start_indices": i64_array(starts), "limit_indices": i64_array(limits), "strides": i64_array(steps)}
    return ctx.op1("stablehlo.slice", [x], like(x, shape=shape), attrs)


def slice_axis(ctx: RuleContext, x: Value, axis: int, start: int, limit: int, stride: int = 1) -> Value:
    """``x[start:limit:stride]`` along ``axis``."""
    starts = [0] * len(x.shape)
    limits = list(x.shape)
    strides = [1] * len(x.shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice_(ctx, x, starts, limits, strides)


def concatenate(ctx: RuleContext, xs: Sequence[Value], axis: int) -> Value:
    """``stablehlo.concatenate`` along ``axis``."""
    if len(xs) == 1:
        return xs[0]
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return ctx.op1("stablehlo.concatenate", list(xs), like(xs[0], shape=shape), {"dimension": f"{axis} : i64"})


def iota(ctx: RuleContext, dtype: Any, shape: Sequence[int], dimension: int) -> Value:
    """``stablehlo.iota``: counts along ``dimension``."""
    return ctx.op1("stablehlo.iota", [], aval(shape, dtype), {"iota_dimension": f"{dimension} : i64"})


def scalar(dtype: Any) -> ShapedArray:
    """The rank-0 abstract value of ``dtype``."""
    return aval((), dtype)


Combiner = Callable[[RuleContext, list[Value], list[Value]], list[Value]]
"""``combine(region, accumulators, elements) -> new accumulators`` on rank-0 values."""


def reduce(
    ctx: RuleContext, operands: Sequence[Value], inits: Sequence[Value], axes: Sequence[int], combine: Combiner
) -> list[Value]:
    """``stablehlo.reduce`` of ``operands`` over ``axes`` with a body built by ``combine``."""
    n = len(operands)
    region = ctx.region([scalar(x.dtype) for x in operands] * 2)
    region.ret(combine(region, region.args[:n], region.args[n:]))
    shape = [d for i, d in enumerate(operands[0].shape) if i not in axes]
    results = [like(x, shape=shape) for x in operands]
    return ctx.op("stablehlo.reduce", [*operands, *inits], results, {"dimensions": i64_array(axes)}, [region])


def widened(ctx: RuleContext, x: Value) -> Value:
    """``x`` in float32 when it is a 16-bit float (where core computes them), else ``x``."""
    return convert(ctx, x, F32) if x.dtype in HALF_FLOATS else x
