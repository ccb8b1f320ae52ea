"""What lowering rules see, the rule registry, and the interpreter that
lowers a jaxpr's equations one rule at a time.

A rule is ``rule(ctx, *args, **params) -> list[Value]``: ``args`` are the SSA
values of the equation's inputs (literals already made constants), ``params``
the equation's params, and the result one value per output of the equation,
of exactly the output's dtype and shape (checked).  ``ctx`` emits operations
into the current block (``ctx.op``, ``ctx.op1``, ``ctx.constant``), makes
regions (``ctx.region``) and knows the module being built (for private
functions) and the equation's input and output abstract values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from plait_core import ClosedJaxpr, Primitive, RuleRegistry, ShapedArray
from plait_core.jaxpr import Jaxpr, Literal, Var
from plait_dispatch.lowering.module import Block, LoweringError, ModuleBuilder, Value, concrete_shape

LoweringRule = Callable[..., Sequence[Value]]
"""``rule(ctx: RuleContext, *args: Value, **params) -> list[Value]``."""

lowering_rules: RuleRegistry[LoweringRule] = RuleRegistry("dispatch (StableHLO lowering)")
"""plait-dispatch's StableHLO lowering rule for each primitive of core's catalog."""


class RuleContext:
    """The context of one rule application: where operations go (``block``),
    the module being built, and the equation's input and output types."""

    __slots__ = ("avals_in", "avals_out", "block", "module", "primitive")

    def __init__(
        self,
        module: ModuleBuilder,
        block: Block,
        primitive: Primitive | None = None,
        avals_in: Sequence[ShapedArray] = (),
        avals_out: Sequence[ShapedArray] = (),
    ) -> None:
        self.module = module
        self.block = block
        self.primitive = primitive
        self.avals_in = list(avals_in)
        self.avals_out = list(avals_out)

    @property
    def platform(self) -> str:
        """The platform the module is lowered for (``"cpu"``)."""
        return self.module.platform

    def op(
        self,
        name: str,
        operands: Sequence[Value],
        results: Sequence[ShapedArray],
        attrs: Mapping[str, str] | None = None,
        regions: Sequence[RuleContext] = (),
    ) -> list[Value]:
        """Append the operation ``name`` (e.g. ``"stablehlo.add"``) with the given
        result types, attributes (name -> MLIR attribute text) and regions
        (made with :meth:`region`); returns its results."""
        return self.block.op(name, operands, results, attrs, [r.block for r in regions])

    def op1(
        self,
        name: str,
        operands: Sequence[Value],
        result: ShapedArray,
        attrs: Mapping[str, str] | None = None,
        regions: Sequence[RuleContext] = (),
    ) -> Value:
        """:meth:`op` for an operation with one result."""
        return self.op(name, operands, [result], attrs, regions)[0]

    def constant(self, value: Any, dtype: Any, shape: Sequence[int] = ()) -> Value:
        """A constant of ``dtype`` and ``shape`` (a scalar ``value`` is broadcast)."""
        return self.block.constant(value, ShapedArray(tuple(shape), np.dtype(dtype)))

    def region(self, arg_avals: Sequence[ShapedArray] = ()) -> RuleContext:
        """A context emitting into a new region whose block arguments have
        ``arg_avals`` (see :attr:`args`); finish it with :meth:`ret`."""
        return RuleContext(self.module, self.block.region(arg_avals), self.primitive, self.avals_in, self.avals_out)

    @property
    def args(self) -> list[Value]:
        """The block arguments of a region made by :meth:`region`."""
        return self.block.args

    def ret(self, values: Sequence[Value]) -> None:
        """Terminate a region with ``stablehlo.return``."""
        self.block.ret(values)


def lower_jaxpr_into(ctx: RuleContext, jaxpr: Jaxpr, consts: Sequence[Value], args: Sequence[Value]) -> list[Value]:
    """Emit ``jaxpr``'s equations into ``ctx``'s block, its constvars bound to
    ``consts`` and its invars to ``args``; returns the values of its outvars."""
    env: dict[Var, Value] = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(a: Var | Literal) -> Value:
        if type(a) is Literal:
            return ctx.block.constant(a.val, a.aval)
        return env[a]  # type: ignore[index]

    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        rule = lowering_rules[prim]
        ins = [read(a) for a in eqn.invars]
        rctx = RuleContext(ctx.module, ctx.block, prim, [a.aval for a in eqn.invars], [v.aval for v in eqn.outvars])
        outs = rule(rctx, *ins, **eqn.params)
        _check_outputs(prim, outs, eqn.outvars)
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    return [read(a) for a in jaxpr.outvars]


def _check_outputs(prim: Primitive, outs: Sequence[Value], outvars: Sequence[Var]) -> None:
    if len(outs) != len(outvars):
        raise LoweringError(f"the lowering rule of {prim.name} returned {len(outs)} values for {len(outvars)} outputs")
    for k, (o, v) in enumerate(zip(outs, outvars)):
        if o.aval.dtype != v.aval.dtype or concrete_shape(o.aval) != concrete_shape(v.aval):
            raise LoweringError(
                f"the lowering rule of {prim.name} returned {o.aval.str_short()} for output {k}, "
                f"which has type {v.aval.str_short()}"
            )


def lower_closed_jaxpr(ctx: RuleContext, closed: ClosedJaxpr, args: Sequence[Value]) -> list[Value]:
    """Inline ``closed`` into ``ctx``'s block (its constants become constants of the block)."""
    j = closed.jaxpr
    consts = [ctx.block.constant(np.asarray(c), v.aval) for v, c in zip(j.constvars, closed.consts)]
    return lower_jaxpr_into(ctx, j, consts, args)
