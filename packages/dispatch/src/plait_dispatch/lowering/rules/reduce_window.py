"""Lowering of the windows family to ``stablehlo.reduce_window`` and
``stablehlo.select_and_scatter``.

* ``reduce_window_sum/max/min`` reduce from the identity (16-bit float sums
  in float32, as core computes them); the generic ``reduce_window`` inlines
  its computation's jaxpr as the body.
* ``select_and_gather_add`` is a two-operand ``reduce_window`` over
  ``(operand, tangent)`` pairs whose body keeps the pair with the larger
  (``'ge'``) or smaller (``'le'``) operand entry.
* ``select_and_scatter_add`` is ``stablehlo.select_and_scatter`` with a
  ``GE``/``LE`` selection and an adding scatter.
"""

from __future__ import annotations

from typing import Any

from plait_core import ClosedJaxpr
from plait_core.primitives import reduce_window as rw
from plait_dispatch.lowering import ops
from plait_dispatch.lowering.context import RuleContext, lower_closed_jaxpr, lowering_rules
from plait_dispatch.lowering.module import Value, i64_array


def _window_attrs(params: dict[str, Any]) -> dict[str, str]:
    pads = params["padding"]
    rank = len(pads)
    text = ", ".join(f"[{lo}, {hi}]" for lo, hi in pads)
    attrs = {
        "window_dimensions": i64_array(params["window_dimensions"]),
        "window_strides": i64_array(params["window_strides"]),
        "padding": f"dense<[{text}]> : tensor<{rank}x2xi64>" if rank else "dense<> : tensor<0x2xi64>",
    }
    if "base_dilation" in params:
        attrs["base_dilations"] = i64_array(params["base_dilation"])
        attrs["window_dilations"] = i64_array(params["window_dilation"])
    return attrs


def reduce_window_values(
    ctx: RuleContext, operands: list[Value], inits: list[Value], combine: ops.Combiner, params: dict[str, Any]
) -> list[Value]:
    """``stablehlo.reduce_window`` of ``operands`` from ``inits``, ``combine`` as its body."""
    n = len(operands)
    region = ctx.region([ops.scalar(x.dtype) for x in operands] * 2)
    region.ret(combine(region, region.args[:n], region.args[n:]))
    shape = rw.window_shape("reduce_window", operands[0].shape, params)
    results = [ops.like(x, shape=[int(d) for d in shape]) for x in operands]
    return ctx.op("stablehlo.reduce_window", [*operands, *inits], results, _window_attrs(params), [region])


def _monoid_rule(kind: str, op: str) -> Any:
    def rule(ctx: RuleContext, x: Value, **params: Any) -> list[Value]:
        w = ops.widened(ctx, x) if kind == "sum" else x
        init = ops.full(ctx, rw.identity(kind, w.dtype), w.dtype)
        (out,) = reduce_window_values(ctx, [w], [init], lambda r, a, b: [ops.binary(r, op, a[0], b[0])], params)
        return [ops.convert(ctx, out, x.dtype)]

    return rule


lowering_rules[rw.reduce_window_sum_p] = _monoid_rule("sum", "stablehlo.add")
lowering_rules[rw.reduce_window_max_p] = _monoid_rule("max", "stablehlo.maximum")
lowering_rules[rw.reduce_window_min_p] = _monoid_rule("min", "stablehlo.minimum")


@lowering_rules.register(rw.reduce_window_p)
def _generic(ctx: RuleContext, *args: Value, jaxpr: ClosedJaxpr, **params: Any) -> list[Value]:
    n = len(args) // 2
    operands, inits = list(args[:n]), list(args[n:])
    return reduce_window_values(ctx, operands, inits, lambda r, a, b: lower_closed_jaxpr(r, jaxpr, [*a, *b]), params)


_DIRECTION = {"ge": "GE", "le": "LE"}


@lowering_rules.register(rw.select_and_gather_add_p)
def _select_and_gather_add(ctx: RuleContext, tangent: Value, operand: Value, *, select: str, **params: Any) -> list[Value]:
    kind = "max" if select == "ge" else "min"
    inits = [ops.full(ctx, rw.identity(kind, operand.dtype), operand.dtype), ops.full(ctx, 0, tangent.dtype)]

    def combine(r: RuleContext, acc: list[Value], cur: list[Value]) -> list[Value]:
        keep = ops.compare(r, acc[0], cur[0], _DIRECTION[select])
        return [ops.select(r, keep, acc[0], cur[0]), ops.select(r, keep, acc[1], cur[1])]

    _, out = reduce_window_values(ctx, [operand, tangent], inits, combine, params)
    return [out]


@lowering_rules.register(rw.select_and_scatter_add_p)
def _select_and_scatter_add(ctx: RuleContext, source: Value, operand: Value, *, select: str, **params: Any) -> list[Value]:
    pick = ctx.region([ops.scalar(operand.dtype)] * 2)
    a, b = pick.args
    pick.ret([ops.compare(pick, a, b, _DIRECTION[select])])
    add = ctx.region([ops.scalar(source.dtype)] * 2)
    x, y = add.args
    add.ret([ops.binary(add, "stablehlo.add", x, y)])
    init = ops.full(ctx, 0, source.dtype)
    out = ctx.op1(
        "stablehlo.select_and_scatter",
        [operand, source, init],
        ops.like(source, shape=operand.shape),
        _window_attrs(params),
        [pick, add],
    )
    return [out]
