"""Lowering of the complex-number primitives.

``real``, ``imag`` and ``complex`` are one StableHLO operation each
(``complex`` broadcasts a rank-0 operand first); ``conj`` has none, so it is
``complex(real(x), -imag(x))``.
"""

from __future__ import annotations

from plait_core.primitives import complex_numbers as cx
from plait_dispatch.lowering import ops
from plait_dispatch.lowering.context import RuleContext, lowering_rules
from plait_dispatch.lowering.module import Value, concrete_shape


@lowering_rules.register(cx.real_p)
def _real(ctx: RuleContext, x: Value) -> list[Value]:
    return [ops.unary(ctx, "stablehlo.real", x, ctx.avals_out[0].dtype)]


@lowering_rules.register(cx.imag_p)
def _imag(ctx: RuleContext, x: Value) -> list[Value]:
    return [ops.unary(ctx, "stablehlo.imag", x, ctx.avals_out[0].dtype)]


@lowering_rules.register(cx.complex_p)
def _complex(ctx: RuleContext, x: Value, y: Value) -> list[Value]:
    shape = concrete_shape(ctx.avals_out[0])
    a, b = ops.broadcast_to(ctx, x, shape), ops.broadcast_to(ctx, y, shape)
    return [ops.binary(ctx, "stablehlo.complex", a, b, ctx.avals_out[0].dtype)]


@lowering_rules.register(cx.conj_p)
def _conj(ctx: RuleContext, x: Value) -> list[Value]:
    part = cx.real_dtype(x.dtype)
    re = ops.unary(ctx, "stablehlo.real", x, part)
    im = ops.unary(ctx, "stablehlo.negate", ops.unary(ctx, "stablehlo.imag", x, part))
    return [ops.binary(ctx, "stablehlo.complex", re, im, x.dtype)]
