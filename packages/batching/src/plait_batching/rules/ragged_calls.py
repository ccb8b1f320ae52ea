"""Ragged rules of collectives, the optimization barrier and host callbacks.

(Calls, custom-rule calls, ``cond``, ``while``, ``scan`` and ``dim_as_value``
are core's padded rules, :mod:`plait_core.padded.calls` and
:mod:`plait_core.padded.control_flow`, run by :mod:`.ragged_padded` with
their jaxprs mapped over the piles by
:func:`~plait_batching.ragged_jaxpr.ragged_call_jaxpr`.)

* Collectives over an enclosing ``vmap``'s axis run on the padded data;
  over this ``vmap``'s own axis they would mix elements of different lengths
  and are refused.
* ``optimization_barrier`` is the identity on the padded data; host
  callbacks are not supported on piles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.ragged import Operand, RaggedEnv, padded_rule, refuse
from plait_batching.registries import ragged_rules
from plait_core import Primitive
from plait_core.primitives import collectives as coll
from plait_core.primitives.callbacks import callback_p
from plait_core.primitives.collectives import axis_names
from plait_core.primitives.optimization_barrier import optimization_barrier_p


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
ragged_rules[coll.pvary_p] = padded_rule()  # the identity on values
ragged_rules.not_supported(coll.axis_index_p, "it has no operands, so it is never ragged")
for _p in (coll.psum_scatter_p, coll.all_to_all_p):
    ragged_rules.not_supported(
        _p, "it splits an axis into one block per member, and over piles the blocks would mix elements' data and "
        "padding; apply it to the padded data (pile.data) instead",
    )


ragged_rules[optimization_barrier_p] = padded_rule()
ragged_rules.not_supported(
    callback_p,
    "a host callback on a ragged value would receive each element's padded data, whose values past the "
    "element's length are unspecified, and could not return ragged results; unpack the pile first",
)
