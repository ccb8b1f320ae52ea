"""Lowering of the sharding family: ``shard_map`` and ``sharding_constraint``.

Both appear only in SPMD modules (:mod:`plait_dispatch.spmd` compiles every
program that names a mesh that way), whose device list is the mesh's: a
tiling's positions are XLA's logical device ids there.

* ``sharding_constraint`` is a ``@Sharding`` custom call carrying the
  layout as its ``mhlo.sharding``: XLA's partitioner keeps it.
* ``shard_map`` lays each operand out as its in spec says (``@Sharding``),
  turns it into the device's own piece (``@SPMDFullToShardShape``, after which
  the value is *manual*: the partitioner leaves the body alone, each device
  runs it on its piece), lowers the body inline, and puts the outputs' pieces
  back together as the out specs say (``@SPMDShardToFullShape``).  While the
  body is lowered its mesh is the *current mesh*, which the collectives'
  rules (:mod:`.collectives`) read.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from plait_core import ClosedJaxpr
from plait_core.primitives.sharding import shard_aval, shard_map_p, sharding_constraint_p
from plait_core.sharding import Mesh, NamedSharding, PartitionSpec, Sharding
from plait_dispatch import _jaxlib
from plait_dispatch.cache import spmd_primitives
from plait_dispatch.lowering.context import RuleContext, lower_closed_jaxpr, lowering_rules
from plait_dispatch.lowering.module import LoweringError, Value


class _Meshes(threading.local):
    def __init__(self) -> None:
        self.stack: list[Mesh] = []


_meshes = _Meshes()


def current_mesh() -> Mesh | None:
    """The mesh of the ``shard_map`` body being lowered, if any."""
    return _meshes.stack[-1] if _meshes.stack else None


def _check_module(ctx: RuleContext, devices: tuple[Any, ...], what: str) -> None:
    spmd = ctx.module.spmd
    if spmd is None or tuple(map(id, spmd)) != tuple(map(id, devices)):
        raise LoweringError(
            f"{what} can only be lowered into an SPMD module over its own devices "
            "(plait compiles programs that name a mesh that way)"
        )


def _custom_call(ctx: RuleContext, target: str, x: Value, result: Any, sharding: str) -> Value:
    attrs = {"call_target_name": f'"{target}"', "mhlo.sharding": f'"{sharding}"'}
    return ctx.op1("stablehlo.custom_call", [x], result, attrs)


def _layout_text(sharding: Sharding, ndim: int) -> str:
    return _jaxlib.hlo_sharding_text(sharding._tiling(ndim).assignment)


def _constraint_rule(ctx: RuleContext, x: Value, *, sharding: Sharding) -> list[Value]:
    _check_module(ctx, tuple(sharding._device_assignment), "with_sharding_constraint")
    return [_custom_call(ctx, "Sharding", x, x.aval, _layout_text(sharding, len(x.shape)))]


def _shard_map_rule(
    ctx: RuleContext,
    *args: Value,
    jaxpr: ClosedJaxpr,
    mesh: Mesh,
    in_specs: Sequence[PartitionSpec],
    out_specs: Sequence[PartitionSpec],
    check_vma: bool,
) -> list[Value]:
    if current_mesh() is not None:
        raise LoweringError("shard_map inside the body of another shard_map is not supported")
    _check_module(ctx, mesh._flat_devices, "shard_map")
    manual = _jaxlib.manual_sharding_text()
    pieces = []
    for k, (x, spec) in enumerate(zip(args, in_specs)):
        full = _custom_call(ctx, "Sharding", x, x.aval, _layout_text(NamedSharding(mesh, spec), len(x.shape)))
        local = shard_aval(x.aval, spec, mesh, f"shard_map operand {k}")
        pieces.append(_custom_call(ctx, "SPMDFullToShardShape", full, local, manual))
    _meshes.stack.append(mesh)
    try:
        outs = lower_closed_jaxpr(ctx, jaxpr, pieces)
    finally:
        _meshes.stack.pop()
    results = []
    for y, spec, aval in zip(outs, out_specs, ctx.avals_out):
        m = _custom_call(ctx, "Sharding", y, y.aval, manual)
        results.append(_custom_call(ctx, "SPMDShardToFullShape", m, aval, _layout_text(NamedSharding(mesh, spec), len(aval.shape))))
    return results


lowering_rules[sharding_constraint_p] = _constraint_rule
lowering_rules[shard_map_p] = _shard_map_rule
spmd_primitives.update({shard_map_p, sharding_constraint_p})
