"""Ragged rules of calls, control flow, collectives and shapes.

* Calls (``closed_call`` from ``jit``, ``checkpoint``, ``invertible_call``)
  stay calls: their jaxpr is mapped over the piles and staged anew
  (:func:`~plait_batching.ragged_jaxpr.ragged_call_jaxpr`), with the lengths
  as extra leading operands, so compiled code stays compiled and a
  checkpoint still recomputes.  The custom-rule calls are in
  :mod:`plait_batching.rules.ragged_custom_calls`.
* ``cond`` runs every branch and selects the results by the index.  The
  loops (``while``, ``scan``) are in :mod:`plait_batching.rules.ragged_loops`.
* Collectives over an enclosing ``vmap``'s axis run on the padded data;
  over this ``vmap``'s own axis they would mix elements of different lengths
  and are refused.
* ``dim_as_value`` of a ragged size is the lengths, batched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_batching.ragged import Operand, RaggedEnv, env_of, operands, padded_rule, refuse, wrap_results
from plait_batching.ragged_jaxpr import ragged_call_jaxpr, unpack_operands
from plait_batching.registries import ragged_rules
from plait_batching.trace import BatchTrace, BatchTracer
from plait_core import Primitive, dtypes, eval_jaxpr, get_aval, set_current_trace
from plait_core.primitives import collectives as coll
from plait_core.primitives.calls import (
    called_jaxpr,
    checkpoint_p,
    closed_call_p,
    invertible_call_p,
    remap_jit_info,
)
from plait_core.primitives.collectives import axis_names
from plait_core.primitives.control_flow import cond_p
from plait_core.primitives.elementwise import clamp_p, convert_element_type_p, select_n_p
from plait_core.primitives.shapes import dim_as_value_p


def _call_ragged(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Bind the call again around its jaxpr mapped over the piles (the
    lengths, and the mapped jaxpr's constants, as leading operands)."""
    ops = operands(trace, prim, args)
    closed = called_jaxpr(prim, params)
    with set_current_trace(trace.parent_trace):
        vals, batched = unpack_operands(trace, ops)
        body, lead, _ = ragged_call_jaxpr(trace, closed, batched)
        new = dict(params)
        new[_JAXPR_PARAM[prim]] = body
        if "num_consts" in new:
            new["num_consts"] = params["num_consts"] + len(lead)
        if "jit_info" in new:
            new["jit_info"] = remap_jit_info(params["jit_info"], (None,) * len(lead) + tuple(range(len(vals))))
        outs = prim.bind(*lead, *vals, **new)
    return wrap_results(trace, prim, outs, [0] * len(outs), closed.out_avals)


_JAXPR_PARAM = {closed_call_p: "call_jaxpr", checkpoint_p: "jaxpr", invertible_call_p: "jaxpr"}
for _p in _JAXPR_PARAM:
    ragged_rules[_p] = _call_ragged


def _cond(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    index, *ops = args
    branches = params["branches"]
    with set_current_trace(trace):
        outs = [eval_jaxpr(b.jaxpr, b.consts, *ops) for b in branches]
        if len(branches) == 1:
            return outs[0]
        which = clamp_p.bind(np.int32(0), index, np.int32(len(branches) - 1))
        return [select_n_p.bind(which, *cases) for cases in zip(*outs)]


ragged_rules[cond_p] = _cond


def _check_collective(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    name = env.axis.name
    given = params.get("axes", params.get("axis_name"))
    if name is not None and name in axis_names(given):
        raise refuse(
            prim, ops, env,
            f"reduces ragged values over the pile's own axis {name!r}, which would mix elements of different lengths",
        )  # fmt: skip


for _p in (coll.psum_p, coll.pmax_p, coll.pmin_p, coll.pmean_p, coll.all_gather_p, coll.ppermute_p):
    ragged_rules[_p] = padded_rule(_check_collective)
ragged_rules.not_supported(coll.axis_index_p, "it has no operands, so it is never ragged")
for _p in (coll.psum_scatter_p, coll.all_to_all_p):
    ragged_rules.not_supported(
        _p, "it splits an axis into one block per member, and over piles the blocks would mix elements' data and "
        "padding; apply it to the padded data (pile.data) instead",
    )


def _dim_as_value(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    env = env_of(trace)
    dt = dtypes.default_int_dtype()
    with set_current_trace(trace.parent_trace):
        lengths = env.value(params["dim"])
        if get_aval(lengths).dtype != dt:
            lengths = convert_element_type_p.bind(lengths, new_dtype=dt, weak_type=False)
    return BatchTracer(trace, lengths, 0)


ragged_rules[dim_as_value_p] = _dim_as_value
