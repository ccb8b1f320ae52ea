"""Batching rules of the sharding family (``shard_map``, ``sharding_constraint``).

The batch dimension is moved to the front and is never split over devices:
specs get a leading ``None``.  ``shard_map``'s body is batched (with the
mesh's axis names bound, so collectives over them pass through to the
devices) and every output carries the batch.  Piles (ragged batches) are not
taken by ``shard_map``: its body runs on fixed-size pieces per device.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.batch_jaxpr import batch_jaxpr
from plait_batching.moves import BDim, front_if_batched
from plait_batching.ragged import padded_rule
from plait_batching.registries import batching_rules, ragged_rules
from plait_batching.trace import AxisData
from plait_core import ClosedJaxpr
from plait_core.primitives.calls import hoist_consts
from plait_core.primitives.sharding import mesh_axis_env, shard_map_p, sharding_constraint_p
from plait_core.sharding import Mesh, NamedSharding, PartitionSpec, Sharding


def _front(spec: PartitionSpec) -> PartitionSpec:
    return PartitionSpec(None, *spec)


def _constraint_rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, sharding: Sharding) -> tuple[Any, BDim]:
    (x,), (d,) = args, dims
    if d is None:
        return sharding_constraint_p.bind(x, sharding=sharding), None
    if not isinstance(sharding, NamedSharding):
        return x, d  # a layout that cannot say where the batch goes: dropped (values are unchanged)
    y = front_if_batched(x, d)
    return sharding_constraint_p.bind(y, sharding=sharding.with_spec(_front(sharding.spec))), 0


def _shard_map_rule(
    axis: AxisData,
    args: Sequence[Any],
    dims: Sequence[BDim],
    /,
    *,
    jaxpr: ClosedJaxpr,
    mesh: Mesh,
    in_specs: tuple[PartitionSpec, ...],
    out_specs: tuple[PartitionSpec, ...],
    check_vma: bool,
) -> tuple[list[Any], list[BDim]]:
    in_b = [d is not None for d in dims]
    with mesh_axis_env(mesh, check_vma):
        batched, _ = batch_jaxpr(jaxpr, axis, in_b, True)
    body, hoisted = hoist_consts(batched)
    ops = [front_if_batched(x, d) for x, d in zip(args, dims)]
    outs = shard_map_p.bind(
        *hoisted,
        *ops,
        jaxpr=body,
        mesh=mesh,
        in_specs=(PartitionSpec(),) * len(hoisted) + tuple(_front(s) if b else s for s, b in zip(in_specs, in_b)),
        out_specs=tuple(_front(s) for s in out_specs),
        check_vma=check_vma,
    )
    return list(outs), [0] * len(outs)


batching_rules[sharding_constraint_p] = _constraint_rule
batching_rules[shard_map_p] = _shard_map_rule
ragged_rules[sharding_constraint_p] = padded_rule()
ragged_rules.not_supported(
    shard_map_p,
    "a shard_map body runs on fixed-size pieces per device, and a pile's elements have different lengths; "
    "pass the padded data (pile.data) to shard_map instead",
)
