"""Ragged rules of loops: ``scan`` and ``while`` inside ``vmap`` over piles.

A loop's body (and a ``while``'s predicate) is mapped over the piles the way
a call's jaxpr is (:func:`~plait_batching.ragged_jaxpr.ragged_call_jaxpr`):
staged anew on the padded data, with the lengths among its leading
operands, so ragged consts, carries and scanned slices are ragged values in
the body and its ragged rules apply.  Every carry is carried batched and
padded; a carry's element type is the same on every iteration (the body
may not change a ragged size of its carry: ``scan``'s and ``while``'s type
check refuses it, naming the carry).  Each element then gets exactly what
the loop computes on its true data:

* ``scan`` of a static length scans the mapped body.
* ``scan`` over a ragged length (its scanned inputs, and so its stacked
  outputs, have the ragged size along their leading axis) runs for the
  padded size, and each element's carry changes only on the steps ``i <
  length``: after them it stays the element's result.  A reverse scan runs
  from the last padded index down, so each element's carry starts to change
  at its own last true entry.  Stacked outputs are ragged, with the same
  lengths; what they hold past them is padding.  The padding of the scanned
  inputs is zeroed first, so that the steps past an element's length compute
  from zeros (a gradient through them stays finite as long as the body is
  finite at zero, just as for ``where``).
* ``while`` runs until every element's predicate is false (the predicate
  is per element as soon as any operand is ragged), and an element whose
  predicate is false keeps its carry, as in the ordinary batching rule of a
  ``while`` with a batched predicate.  So a trip count that depends on a
  ragged size (``fori_loop(0, n, ...)`` with ``n`` a ragged length) is a
  trip count per element.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_batching.moves import moveaxis, to_front
from plait_batching.ragged import (
    Operand,
    RaggedEnv,
    check_one_size,
    element_abstract_eval,
    env_of,
    fill_padding,
    operands,
    wrap_results,
)
from plait_batching.ragged_jaxpr import ragged_call_jaxpr, unpack_operands
from plait_batching.registries import ragged_rules
from plait_batching.rules.control_flow import select_per_element, while_until_all_done
from plait_batching.trace import BatchTrace
from plait_core import (
    ClosedJaxpr,
    Primitive,
    ShapedArray,
    eval_jaxpr,
    set_current_trace,
    trace_to_jaxpr,
)
from plait_core.dims import Dim
from plait_core.primitives.control_flow import convert_constvars, scan_p, split_list, while_p
from plait_core.primitives.elementwise import lt_p
from plait_core.primitives.structural import broadcast_in_dim_p, iota_p

__all__: list[str] = []

_I32 = np.dtype(np.int32)





def _carried(trace: BatchTrace, ops: Sequence[Operand]) -> list[Any]:
    """Initial carries as padded data with the batch first (broadcast if unbatched)."""
    return [to_front(o.val, o.bdim, trace.axis.size) for o in ops]


def _prologue(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> tuple[RaggedEnv, list[Operand], list[ShapedArray]]:
    """The env, the operands and the element types of the results (shape
    errors, two ragged sizes and carries whose type changes refused here)."""
    env = env_of(trace)
    ops = operands(trace, prim, args)
    names = check_one_size(env, prim, ops, params)
    return env, ops, element_abstract_eval(env, prim, ops, params, names)


# ---------------------------------------------------------------------------
# scan


def _scanned(env: RaggedEnv, op: Operand, ragged_length: bool) -> Any:
    """A scanned operand with the batch as its second dimension (the scan's
    is first); over a ragged length, its padding along the scan is zeroed."""
    if op.bdim is None:
        return op.val
    val = fill_padding(env, op, (0,), 0) if ragged_length else op.val
    return moveaxis(val, op.bdim, 1)


def _masked_steps(body: ClosedJaxpr, num_consts: int, num_carry: int, size: Dim) -> tuple[ClosedJaxpr, list[Any]]:
    """``body`` (batched, batch first) with two more inputs: the lengths
    (``int32[B]``, a new first const) and the step index (``int32``, a new
    first scanned input).  An element's carry changes only while the index
    is below its length.  Returns the jaxpr and its hoisted constants."""
    consts, carry, xs = split_list(body.in_avals, num_consts, num_carry)
    index_aval = ShapedArray((), _I32)

    def step(lengths: Any, *args: Any) -> list[Any]:
        cs, old, rest = split_list(args, num_consts, num_carry)
        index, *slices = rest
        outs = eval_jaxpr(body.jaxpr, body.consts, *cs, *old, *slices)
        active = lt_p.bind(broadcast_in_dim_p.bind(index, shape=(size,), broadcast_dimensions=()), lengths)
        new = [select_per_element(active, n, o) for n, o in zip(outs[:num_carry], old)]
        return new + list(outs[num_carry:])

    lengths_aval = ShapedArray((size,), _I32)
    return convert_constvars(trace_to_jaxpr(step, [lengths_aval, *consts, *carry, index_aval, *xs]))


def _scan(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    env, ops, out_avals = _prologue(trace, prim, args, params)
    closed: ClosedJaxpr = params["jaxpr"]
    nc, ncarry, length = params["num_consts"], params["num_carry"], params["length"]
    linear: tuple[bool, ...] = params["linear"]
    consts, init, xs = split_list(ops, nc, ncarry)
    ragged_length = env.is_ragged(length)
    size = trace.axis.size
    with set_current_trace(trace.parent_trace):
        c_vals, c_batched = unpack_operands(trace, consts)
        carry = _carried(trace, init)
        x_vals = [_scanned(env, o, ragged_length) for o in xs]
        x_batched = [o.bdim is not None for o in xs]
        body, lead, _ = ragged_call_jaxpr(trace, closed, [*c_batched, *[True] * ncarry, *x_batched])
        const_vals = [*lead, *c_vals]
        const_linear = (False,) * len(lead) + tuple(linear[:nc])
        carry_linear, x_linear = tuple(linear[nc : nc + ncarry]), tuple(linear[nc + ncarry :])
        if ragged_length:
            body, hoisted = _masked_steps(body, len(const_vals), ncarry, size)
            const_vals = [*hoisted, env.lengths(length), *const_vals]
            const_linear = (False,) * (len(hoisted) + 1) + const_linear
            padded = env.padded(length)
            x_vals = [iota_p.bind(dtype=_I32, shape=(padded,), dimension=0), *x_vals]
            x_linear = (False, *x_linear)
        outs = scan_p.bind(
            *const_vals, *carry, *x_vals,
            jaxpr=body, num_consts=len(const_vals), num_carry=ncarry, length=env.padded(length),
            reverse=params["reverse"], unroll=params["unroll"], linear=const_linear + carry_linear + x_linear,
        )  # fmt: skip
    ny = len(outs) - ncarry
    return wrap_results(trace, prim, outs, [0] * ncarry + [1] * ny, out_avals)


ragged_rules[scan_p] = _scan


# ---------------------------------------------------------------------------
# while


def _while(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    _, ops, out_avals = _prologue(trace, prim, args, params)
    cond_jaxpr: ClosedJaxpr = params["cond_jaxpr"]
    body_jaxpr: ClosedJaxpr = params["body_jaxpr"]
    cconsts, bconsts, init = split_list(ops, params["cond_nconsts"], params["body_nconsts"])
    every = [True] * len(init)
    with set_current_trace(trace.parent_trace):
        cc_vals, cc_batched = unpack_operands(trace, cconsts)
        bc_vals, bc_batched = unpack_operands(trace, bconsts)
        carry = _carried(trace, init)
        cond_m, cond_lead, _ = ragged_call_jaxpr(trace, cond_jaxpr, [*cc_batched, *every])
        body_m, body_lead, _ = ragged_call_jaxpr(trace, body_jaxpr, [*bc_batched, *every])
        cc_vals, bc_vals = [*cond_lead, *cc_vals], [*body_lead, *bc_vals]
        outs = while_until_all_done(cond_m, body_m, cc_vals, bc_vals, carry)
    return wrap_results(trace, prim, outs, [0] * len(outs), out_avals)


ragged_rules[while_p] = _while
