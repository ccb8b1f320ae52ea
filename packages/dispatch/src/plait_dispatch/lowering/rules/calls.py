"""Lowering of the calls family.

``closed_call`` (what ``jit`` binds) becomes a private function called with
``func.call``; the function is made once per called jaxpr object and module,
so a jaxpr called many times is lowered once.  The custom-rule calls
(``custom_jvp_call``, ``custom_vjp_call``, ``custom_vmap_call``,
``custom_ivjp_call``), ``checkpoint`` and ``invertible_call`` mean their
primal jaxpr when run, and are lowered the same way (their rules matter only
to the transformations, which have already been applied to the jaxpr being
lowered).
"""

from __future__ import annotations

from typing import Any

from plait_core import Primitive
from plait_core.primitives.calls import CALL_PRIMITIVES, called_jaxpr
from plait_dispatch.lowering.context import RuleContext, lower_closed_jaxpr, lowering_rules
from plait_dispatch.lowering.module import Function, Value


def _call_rule(prim: Primitive) -> Any:
    def rule(ctx: RuleContext, *args: Value, **params: Any) -> list[Value]:
        closed = called_jaxpr(prim, params)
        module = ctx.module
        symbol = module.calls.get(closed)
        if symbol is None:
            name = params.get("name")
            symbol = module.fresh_symbol(name if isinstance(name, str) and name else prim.name)
            module.calls[closed] = symbol
            fn = Function(symbol, closed.in_avals, public=False)
            outs = lower_closed_jaxpr(RuleContext(module, fn.body), closed, fn.args)
            module.functions.append(fn.finish(outs))
        return ctx.op("func.call", args, closed.out_avals, {"callee": f"@{symbol}"})

    return rule


for _prim in CALL_PRIMITIVES:
    lowering_rules[_prim] = _call_rule(_prim)
