"""Lowering of the reductions family: reductions over axes, argmax/argmin,
cumulative scans and sort.

* Reductions are ``stablehlo.reduce`` with the monoid's identity as initial
  value (so an empty reduction gives it, as in core); 16-bit floats are summed
  and multiplied in float32 and rounded back, as core does.
* ``argmax``/``argmin`` reduce (value, index) pairs with a comparator that is
  a total order, so XLA may combine in any order: NaN beats every number
  (the first NaN wins, as in NumPy), then the larger (smaller) value, then the
  smaller index.
* ``cumsum``/``cumprod``/``cummax``/``cummin`` are an associative scan
  (Ladner-Fischer style: combine neighbouring pairs, scan the half-length
  result, fix up the even positions; log2(n) levels of slices), which is
  O(n log n) where a ``reduce_window`` would be O(n^2).  Floating-point sums
  are therefore associated differently from NumPy's left-to-right loop.
* ``sort`` is a stable ``stablehlo.sort`` comparing the first ``num_keys``
  operands lexicographically, floats with NaN last (whatever its sign) and
  ``-0.0`` equal to ``0.0``, as core's NumPy implementation orders them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.primitives import reductions as rd
from plait_dispatch.lowering import ops
from plait_dispatch.lowering.context import RuleContext, lowering_rules
from plait_dispatch.lowering.module import Value, i64_array

DType = np.dtype[Any]


# name -> (operation, computes 16-bit floats in float32); the identity is the primitive's own.
_REDUCERS = {
    rd.reduce_sum_p: ("stablehlo.add", True),
    rd.reduce_prod_p: ("stablehlo.multiply", True),
    rd.reduce_max_p: ("stablehlo.maximum", False),
    rd.reduce_min_p: ("stablehlo.minimum", False),
    rd.reduce_and_p: ("stablehlo.and", False),
    rd.reduce_or_p: ("stablehlo.or", False),
}


def _reducer_rule(op: str, identity: Any, widen: bool) -> Any:
    def rule(ctx: RuleContext, x: Value, *, axes: tuple[int, ...]) -> list[Value]:
        w = ops.widened(ctx, x) if widen else x
        init = ops.full(ctx, identity(w.dtype), w.dtype)
        (r,) = ops.reduce(ctx, [w], [init], axes, lambda reg, a, b: [ops.binary(reg, op, a[0], b[0])])
        return [ops.convert(ctx, r, x.dtype)]

    return rule


for _prim, (_op, _widen) in _REDUCERS.items():
    lowering_rules[_prim] = _reducer_rule(_op, _prim.identity, _widen)


# ---------------------------------------------------------------------------
# argmax / argmin


def _arg_rule(direction: str) -> Any:
    init_value = (rd.argmax_p if direction == "GT" else rd.argmin_p).identity
    assert init_value is not None

    def rule(ctx: RuleContext, x: Value, *, axes: tuple[int, ...], index_dtype: Any) -> list[Value]:
        axis = axes[0]
        idx = ops.iota(ctx, index_dtype, x.shape, axis)
        inits = [ops.full(ctx, init_value(x.dtype), x.dtype), ops.full(ctx, 0, index_dtype)]

        def combine(r: RuleContext, acc: list[Value], cur: list[Value]) -> list[Value]:
            (a, ia), (b, ib) = acc, cur
            better = ops.compare(r, a, b, direction)
            same = ops.compare(r, a, b, "EQ")
            if dtypes.is_inexact(x.dtype):
                a_nan, b_nan = ops.is_nan(r, a), ops.is_nan(r, b)
                better = ops.logical(r, "or", better, ops.logical(r, "and", a_nan, ops.logical_not(r, b_nan)))
                same = ops.logical(r, "or", same, ops.logical(r, "and", a_nan, b_nan))
            first = ops.logical(r, "and", same, ops.compare(r, ia, ib, "LT"))
            take_a = ops.logical(r, "or", better, first)
            return [ops.select(r, take_a, a, b), ops.select(r, take_a, ia, ib)]

        _, index = ops.reduce(ctx, [x, idx], inits, [axis], combine)
        return [index]

    return rule


lowering_rules[rd.argmax_p] = _arg_rule("GT")
lowering_rules[rd.argmin_p] = _arg_rule("LT")


# ---------------------------------------------------------------------------
# Cumulative reductions


def _interleave(ctx: RuleContext, evens: Value, odds: Value, axis: int, n: int) -> Value:
    """``out[2k] = evens[k]``, ``out[2k + 1] = odds[k]``, of length ``n`` along ``axis``."""
    m = evens.shape[axis]
    if odds.shape[axis] < m:  # n is odd: one filler element, sliced off below
        filler = ops.full(ctx, 0, odds.dtype)
        high = [0] * len(odds.shape)
        high[axis] = 1
        odds = ctx.op1("stablehlo.pad", [odds, filler], ops.like(evens), {
            "edge_padding_low": i64_array([0] * len(high)),
            "edge_padding_high": i64_array(high),
            "interior_padding": i64_array([0] * len(high)),
        })
    split = list(evens.shape[: axis + 1]) + [1] + list(evens.shape[axis + 1 :])
    pairs = ops.concatenate(ctx, [ops.reshape(ctx, evens, split), ops.reshape(ctx, odds, split)], axis + 1)
    joined = list(evens.shape)
    joined[axis] = 2 * m
    out = ops.reshape(ctx, pairs, joined)
    return out if 2 * m == n else ops.slice_axis(ctx, out, axis, 0, n)


def associative_scan(ctx: RuleContext, op: str, x: Value, axis: int) -> Value:
    """Inclusive prefix combination of ``x`` along ``axis`` with the associative ``op``."""
    n = x.shape[axis]
    if n < 2:
        return x
    half = n // 2
    pairs = ops.binary(
        ctx, op, ops.slice_axis(ctx, x, axis, 0, 2 * half, 2), ops.slice_axis(ctx, x, axis, 1, 2 * half, 2)
    )
    odds = associative_scan(ctx, op, pairs, axis)  # prefixes ending at positions 1, 3, 5, ...
    rest = (n - 1) // 2
    evens = ops.slice_axis(ctx, x, axis, 0, 1)
    if rest:
        tail = ops.binary(ctx, op, ops.slice_axis(ctx, odds, axis, 0, rest), ops.slice_axis(ctx, x, axis, 2, n, 2))
        evens = ops.concatenate(ctx, [evens, tail], axis)
    return _interleave(ctx, evens, odds, axis, n)


_SCAN_IDENTITY = {"stablehlo.add": lambda dt: 0, "stablehlo.multiply": lambda dt: 1,
                  "stablehlo.maximum": dtypes.lowest, "stablehlo.minimum": dtypes.highest}


def _windowed_scan(ctx: RuleContext, op: str, x: Value, axis: int, reverse: bool) -> Value:
    """The prefix combination as one ``reduce_window`` (each output combines
    its whole prefix from the identity, in order), as JAX lowers cumulative
    reductions: for the narrow types, whose every step rounds, the order
    decides the result."""
    from plait_dispatch.lowering.rules.reduce_window import reduce_window_values

    n = x.shape[axis]
    rank = len(x.shape)
    window = [1] * rank
    window[axis] = n
    padding = [(0, 0)] * rank
    padding[axis] = (0, n - 1) if reverse else (n - 1, 0)
    params = {"window_dimensions": tuple(window), "window_strides": (1,) * rank, "padding": tuple(padding),
              "base_dilation": (1,) * rank, "window_dilation": (1,) * rank}
    init = ops.full(ctx, _SCAN_IDENTITY[op](x.dtype), x.dtype)
    (out,) = reduce_window_values(ctx, [x], [init], lambda r, a, b: [ops.binary(r, op, a[0], b[0])], params)
    return out


def _cumulative_rule(op: str, widen: bool) -> Any:
    def rule(ctx: RuleContext, x: Value, *, axis: int, reverse: bool) -> list[Value]:
        if x.dtype in dtypes.NARROW_SET and x.shape[axis] > 1:
            return [_windowed_scan(ctx, op, x, axis, reverse)]
        w = ops.widened(ctx, x) if widen else x
        if reverse:
            w = ctx.op1("stablehlo.reverse", [w], w.aval, {"dimensions": i64_array([axis])})
        y = associative_scan(ctx, op, w, axis)
        if reverse:
            y = ctx.op1("stablehlo.reverse", [y], y.aval, {"dimensions": i64_array([axis])})
        return [ops.convert(ctx, y, x.dtype)]

    return rule


lowering_rules[rd.cumsum_p] = _cumulative_rule("stablehlo.add", True)
lowering_rules[rd.cumprod_p] = _cumulative_rule("stablehlo.multiply", True)
lowering_rules[rd.cummax_p] = _cumulative_rule("stablehlo.maximum", False)
lowering_rules[rd.cummin_p] = _cumulative_rule("stablehlo.minimum", False)


# ---------------------------------------------------------------------------
# sort


def _key_order(r: RuleContext, a: Value, b: Value) -> tuple[Value, Value]:
    """``(a < b, a == b)`` in sort order: NaN after every number and equal to
    every NaN; complex values by real part, then imaginary part."""
    if dtypes.is_complex(a.dtype):
        part = np.real(np.zeros((), a.dtype)).dtype
        lt_re, eq_re = _key_order(r, ops.unary(r, "stablehlo.real", a, part), ops.unary(r, "stablehlo.real", b, part))
        lt_im, eq_im = _key_order(r, ops.unary(r, "stablehlo.imag", a, part), ops.unary(r, "stablehlo.imag", b, part))
        return ops.logical(r, "or", lt_re, ops.logical(r, "and", eq_re, lt_im)), ops.logical(r, "and", eq_re, eq_im)
    lt, eq = ops.compare(r, a, b, "LT"), ops.compare(r, a, b, "EQ")
    if not dtypes.is_inexact(a.dtype):
        return lt, eq
    a_nan, b_nan = ops.is_nan(r, a), ops.is_nan(r, b)
    lt = ops.logical(r, "and", ops.logical_not(r, a_nan), ops.logical(r, "or", b_nan, lt))
    eq = ops.logical(r, "or", eq, ops.logical(r, "and", a_nan, b_nan))
    return lt, eq


_SORT_CONTAINER = {dtypes.int2: dtypes.int8, dtypes.uint2: dtypes.uint8}
"""XLA's CPU sort returns 2-bit integers unsorted (JAX 0.10.2's too): they are
sorted as 8-bit integers and narrowed back (exact both ways)."""


@lowering_rules.register(rd.sort_p)
def _sort(ctx: RuleContext, *operands: Value, dimension: int, is_stable: bool, num_keys: int) -> list[Value]:
    if any(x.dtype in _SORT_CONTAINER for x in operands):
        wide = [ops.convert(ctx, x, _SORT_CONTAINER[x.dtype]) if x.dtype in _SORT_CONTAINER else x for x in operands]
        outs = _sort(ctx, *wide, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
        return [ops.convert(ctx, y, x.dtype) for x, y in zip(operands, outs, strict=True)]
    region = ctx.region([ops.scalar(x.dtype) for x in operands for _ in range(2)])
    args = region.args
    orders = [_key_order(region, args[2 * k], args[2 * k + 1]) for k in range(num_keys)]
    less = orders[-1][0]
    for lt, eq in reversed(orders[:-1]):
        less = ops.logical(region, "or", lt, ops.logical(region, "and", eq, less))
    region.ret([less])
    attrs = {"dimension": f"{dimension} : i64", "is_stable": "true"}
    return ctx.op("stablehlo.sort", list(operands), [x.aval for x in operands], attrs, [region])
