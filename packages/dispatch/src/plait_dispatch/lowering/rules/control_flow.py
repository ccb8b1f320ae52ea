"""Lowering of ``cond``, ``while`` and ``scan``.

* ``cond`` is a ``stablehlo.case`` on the index clamped into
  ``[0, len(branches) - 1]`` (``stablehlo.case`` itself would run the *last*
  branch for any out-of-range index, so a negative index would pick the wrong
  one); a single branch is inlined.
* ``while`` is a ``stablehlo.while`` carrying the loop carry; the constants
  of the condition and of the body are captured from the enclosing block.
* ``scan`` is a ``stablehlo.while`` over a block counter, carrying the scan
  carry and the stacked outputs: each iteration runs ``unroll`` steps, step
  ``i`` reading ``xs[i]`` with ``dynamic_slice`` and writing ``ys[i]`` with
  ``dynamic_update_slice`` (``i`` counting down when ``reverse``); the steps
  left over when ``unroll`` does not divide the length run after the loop,
  and a scan of one block needs no loop at all.
"""

from __future__ import annotations

from typing import Any

from plait_core import ClosedJaxpr
from plait_core.primitives.control_flow import cond_p, scan_p, while_p
from plait_dispatch.lowering import ops
from plait_dispatch.lowering.context import RuleContext, lower_closed_jaxpr, lowering_rules
from plait_dispatch.lowering.module import Value, concrete_shape, i64_array


@lowering_rules.register(cond_p)
def _cond(ctx: RuleContext, index: Value, *operands: Value, branches: tuple[ClosedJaxpr, ...]) -> list[Value]:
    if len(branches) == 1:
        return lower_closed_jaxpr(ctx, branches[0], operands)
    lo, hi = ops.full(ctx, 0, index.dtype), ops.full(ctx, len(branches) - 1, index.dtype)
    clamped = ctx.op1("stablehlo.clamp", [lo, index, hi], index.aval)
    regions = []
    for branch in branches:
        region = ctx.region()
        region.ret(lower_closed_jaxpr(region, branch, operands))
        regions.append(region)
    return ctx.op("stablehlo.case", [clamped], ctx.avals_out, regions=regions)


@lowering_rules.register(while_p)
def _while(
    ctx: RuleContext,
    *args: Value,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> list[Value]:
    cond_consts = args[:cond_nconsts]
    body_consts = args[cond_nconsts : cond_nconsts + body_nconsts]
    init = args[cond_nconsts + body_nconsts :]
    if not init:
        return []  # nothing is carried, so nothing the loop does can be observed
    avals = [x.aval for x in init]
    cond = ctx.region(avals)
    cond.ret(lower_closed_jaxpr(cond, cond_jaxpr, [*cond_consts, *cond.args]))
    body = ctx.region(avals)
    body.ret(lower_closed_jaxpr(body, body_jaxpr, [*body_consts, *body.args]))
    return ctx.op("stablehlo.while", list(init), avals, regions=[cond, body])


class _Scan:
    """One scan's body, applied at a step index (an int32 scalar)."""

    def __init__(self, jaxpr: ClosedJaxpr, consts: list[Value], xs: list[Value], num_carry: int, length: int,
                 reverse: bool) -> None:
        self.jaxpr = jaxpr
        self.consts = consts
        self.xs = xs
        self.num_carry = num_carry
        self.length = length
        self.reverse = reverse

    def step(self, ctx: RuleContext, i: Value, carry: list[Value], ys: list[Value]) -> tuple[list[Value], list[Value]]:
        """Run the body at step ``i``; returns the new carry and the updated stacked outputs."""
        pos = i
        if self.reverse:
            last = ops.full(ctx, self.length - 1, ops.I32)
            pos = ops.binary(ctx, "stablehlo.subtract", last, i)
        zero = ops.full(ctx, 0, ops.I32)
        slices = []
        for x in self.xs:
            rest = x.shape[1:]
            starts = [pos] + [zero] * len(rest)
            attrs = {"slice_sizes": i64_array([1, *rest])}
            row = ctx.op1("stablehlo.dynamic_slice", [x, *starts], ops.like(x, shape=[1, *rest]), attrs)
            slices.append(ops.reshape(ctx, row, rest))
        outs = lower_closed_jaxpr(ctx, self.jaxpr, [*self.consts, *carry, *slices])
        new_ys = []
        for acc, y in zip(ys, outs[self.num_carry :]):
            row = ops.reshape(ctx, y, [1, *y.shape])
            starts = [pos] + [zero] * len(y.shape)
            new_ys.append(ctx.op1("stablehlo.dynamic_update_slice", [acc, row, *starts], acc.aval))
        return outs[: self.num_carry], new_ys

    def steps(self, ctx: RuleContext, first: Value | int, count: int, carry: list[Value],
              ys: list[Value]) -> tuple[list[Value], list[Value]]:
        """``count`` consecutive steps starting at ``first`` (a value or a constant)."""
        for j in range(count):
            if isinstance(first, int):
                i = ops.full(ctx, first + j, ops.I32)
            else:
                i = first if j == 0 else ops.binary(ctx, "stablehlo.add", first, ops.full(ctx, j, ops.I32))
            carry, ys = self.step(ctx, i, carry, ys)
        return carry, ys


@lowering_rules.register(scan_p)
def _scan(
    ctx: RuleContext,
    *args: Value,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    length: Any,
    reverse: bool,
    unroll: int,
    linear: tuple[bool, ...],
) -> list[Value]:
    consts = list(args[:num_consts])
    carry = list(args[num_consts : num_consts + num_carry])
    xs = list(args[num_consts + num_carry :])
    n = int(length)
    y_avals = ctx.avals_out[num_carry:]
    ys = [ops.full(ctx, 0, a.dtype, concrete_shape(a)) for a in y_avals]
    if n == 0:
        return carry + ys
    scan = _Scan(jaxpr, consts, xs, num_carry, n, reverse)
    k = max(1, min(int(unroll), n))
    blocks, leftover = divmod(n, k)
    if blocks == 1:
        carry, ys = scan.steps(ctx, 0, k, carry, ys)
    else:
        state = [ops.full(ctx, 0, ops.I32), *carry, *ys]
        avals = [v.aval for v in state]
        cond = ctx.region(avals)
        cond.ret([ops.compare(cond, cond.args[0], ops.full(cond, blocks, ops.I32), "LT")])
        body = ctx.region(avals)
        b, *rest = body.args
        first = b if k == 1 else ops.binary(body, "stablehlo.multiply", b, ops.full(body, k, ops.I32))
        new_carry, new_ys = scan.steps(body, first, k, rest[:num_carry], rest[num_carry:])
        body.ret([ops.binary(body, "stablehlo.add", b, ops.full(body, 1, ops.I32)), *new_carry, *new_ys])
        _, *out = ctx.op("stablehlo.while", state, avals, regions=[cond, body])
        carry, ys = out[:num_carry], out[num_carry:]
    carry, ys = scan.steps(ctx, blocks * k, leftover, carry, ys)
    return carry + ys
