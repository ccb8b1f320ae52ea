"""Lowering of ``optimization_barrier`` to ``stablehlo.optimization_barrier``."""

from __future__ import annotations

from plait_core.primitives.optimization_barrier import optimization_barrier_p
from plait_dispatch.lowering.context import RuleContext, lowering_rules
from plait_dispatch.lowering.module import Value


@lowering_rules.register(optimization_barrier_p)
def _barrier(ctx: RuleContext, *args: Value) -> list[Value]:
    if not args:
        return []
    return ctx.op("stablehlo.optimization_barrier", list(args), [a.aval for a in args])
