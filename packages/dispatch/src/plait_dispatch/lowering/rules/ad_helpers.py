"""Lowering of the primitives autodiff relies on: ``stop_gradient`` is the
identity, ``add_any`` an addition (of ``float0`` values: the all-false value
itself), ``zeros_like`` a constant."""

from __future__ import annotations

from plait_core.primitives.ad_helpers import add_any_p, stop_gradient_p, zeros_like_p
from plait_dispatch.lowering import ops
from plait_dispatch.lowering.context import RuleContext, lowering_rules
from plait_dispatch.lowering.module import FLOAT0, Value, concrete_shape


@lowering_rules.register(stop_gradient_p)
def _stop_gradient(ctx: RuleContext, x: Value) -> list[Value]:
    return [x]


@lowering_rules.register(add_any_p)
def _add_any(ctx: RuleContext, x: Value, y: Value) -> list[Value]:
    if ctx.avals_out[0].dtype == FLOAT0:
        return [x]
    return [ops.binary(ctx, "stablehlo.add", x, y)]


@lowering_rules.register(zeros_like_p)
def _zeros_like(ctx: RuleContext, x: Value) -> list[Value]:
    out = ctx.avals_out[0]
    return [ops.full(ctx, 0, out.dtype, concrete_shape(out))]
