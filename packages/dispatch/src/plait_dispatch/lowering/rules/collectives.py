"""Named-axis collectives (``psum pmax pmin pmean all_gather axis_index``)
are not lowered: their meaning comes from a mapped axis, which only ``vmap``
(batching, which rewrites them away) provides; a jaxpr that still contains
one has no mapped axis left to reduce over.  They become lowerable with
``pmap``, which is not supported yet."""

from __future__ import annotations

from plait_core.primitives.collectives import all_gather_p, axis_index_p, pmax_p, pmean_p, pmin_p, psum_p
from plait_dispatch.lowering.context import lowering_rules

REASON = "named-axis collectives need a mapped axis; outside vmap they have no meaning, and pmap is not supported yet"

for _prim in (psum_p, pmax_p, pmin_p, pmean_p, all_gather_p, axis_index_p):
    lowering_rules.not_supported(_prim, REASON)
