"""Lowering of the named-axis collectives inside ``shard_map`` (and ``pmap``).

There the axis names are the axes of the current mesh (see
:mod:`.sharding`), and the collectives become XLA's, across the devices:

* ``psum pmax pmin`` are ``stablehlo.all_reduce`` over *groups* of devices:
  the devices that differ only in their positions along the named axes
  (logical ids are positions in the mesh, row-major); ``pmean`` is the sum
  divided by the group size;
* ``all_gather`` is ``stablehlo.all_gather`` over the same groups (its
  untiled form gathers along a new axis of size 1 first);
* ``axis_index`` is computed from ``stablehlo.partition_id``: the position
  along the named axes (row-major over the names as given);
* ``ppermute`` is ``stablehlo.collective_permute`` (each group's pairs);
  ``psum_scatter`` is ``stablehlo.reduce_scatter``; ``all_to_all`` is
  ``stablehlo.all_to_all`` (its untiled form moves the split axis first and
  adds the new axis of size 1 at ``concat_axis`` around a tiled one).

The order of the devices in a group is row-major over the names as given, so
that member ``i`` of a gather is the device whose ``axis_index`` is ``i``.
Outside ``shard_map`` there is no mesh: a collective's meaning then comes
from ``vmap``, which rewrites it away; one left over is not supported here
(eagerly, core says its axis is unbound).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.primitives.collectives import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    axis_names,
    pmax_p,
    pmean_p,
    pmin_p,
    ppermute_p,
    psum_p,
    psum_scatter_p,
    pvary_p,
)
from plait_core.sharding import Mesh
from plait_dispatch.lowering import ops
from plait_dispatch.lowering.context import RuleContext, lowering_rules
from plait_dispatch.lowering.module import Value
from plait_dispatch.lowering.rules.sharding import current_mesh

REASON = (
    "named-axis collectives need a mapped axis: inside vmap they are rewritten away, inside shard_map "
    "and pmap they act across devices; elsewhere their axis is not bound"
)

_channels = itertools.count(1)


def _mesh(what: str) -> Mesh:
    mesh = current_mesh()
    if mesh is None:
        raise NotImplementedError(f"{what}: {REASON}")
    return mesh


def _groups(mesh: Mesh, names: Sequence[Hashable], what: str) -> np.ndarray:
    """Rows of logical device ids that form one group over ``names``."""
    for n in names:
        if n not in mesh.axis_names:
            raise NotImplementedError(
                f"{what} over the axis {n!r}: not an axis of the shard_map's mesh {mesh.axis_names}; {REASON}"
            )
    positions = np.arange(mesh.size, dtype=np.int64).reshape(mesh.axis_sizes)
    idx = [mesh.axis_names.index(n) for n in names]
    rest = [i for i in range(len(mesh.axis_names)) if i not in idx]
    size = math.prod(mesh.axis_sizes[i] for i in idx)
    return np.transpose(positions, rest + idx).reshape(-1, size)


def _collective_attrs(groups: np.ndarray) -> dict[str, str]:
    rows = ", ".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in groups)
    return {
        "channel_handle": f"#stablehlo.channel_handle<handle = {next(_channels)}, type = 1>",
        "replica_groups": f"dense<[{rows}]> : tensor<{groups.shape[0]}x{groups.shape[1]}xi64>",
        "use_global_device_ids": "unit",
    }


def _all_reduce(ctx: RuleContext, x: Value, names: Sequence[Hashable], op: str, what: str) -> Value:
    groups = _groups(_mesh(what), names, what)
    w = ops.widened(ctx, x) if op == "stablehlo.add" else x
    if w.dtype == ops.BOOL:
        op = {"stablehlo.maximum": "stablehlo.or", "stablehlo.minimum": "stablehlo.and"}.get(op, op)
    region = ctx.region([ops.scalar(w.dtype)] * 2)
    region.ret([ops.binary(region, op, region.args[0], region.args[1])])
    (r,) = ctx.op("stablehlo.all_reduce", [w], [w.aval], _collective_attrs(groups), [region])
    return ops.convert(ctx, r, x.dtype)


def _reduction_rule(op: str, what: str) -> Any:
    def rule(ctx: RuleContext, x: Value, *, axes: tuple[Hashable, ...]) -> list[Value]:
        return [_all_reduce(ctx, x, axes, op, what)]

    return rule


lowering_rules[psum_p] = _reduction_rule("stablehlo.add", "psum")
lowering_rules[pmax_p] = _reduction_rule("stablehlo.maximum", "pmax")
lowering_rules[pmin_p] = _reduction_rule("stablehlo.minimum", "pmin")


def _pmean_rule(ctx: RuleContext, x: Value, *, axes: tuple[Hashable, ...]) -> list[Value]:
    out = ctx.avals_out[0]
    xf = ops.convert(ctx, x, out.dtype)
    total = _all_reduce(ctx, xf, axes, "stablehlo.add", "pmean")
    size = _groups(_mesh("pmean"), axes, "pmean").shape[1]
    return [ops.binary(ctx, "stablehlo.divide", total, ops.full(ctx, size, out.dtype, total.shape))]


lowering_rules[pmean_p] = _pmean_rule
# pvary only changes the type (the value becomes varying over mesh axes): nothing to emit.
lowering_rules[pvary_p] = lambda ctx, x, *, axes: [x]


def _all_gather_rule(ctx: RuleContext, x: Value, *, axis_name: Any, axis: int, tiled: bool) -> list[Value]:
    names = axis_names(axis_name)
    groups = _groups(_mesh("all_gather"), names, "all_gather")
    if not tiled:
        x = ops.reshape(ctx, x, [*x.shape[:axis], 1, *x.shape[axis:]])
    attrs = _collective_attrs(groups)
    attrs["all_gather_dim"] = f"{axis} : i64"
    return [ctx.op1("stablehlo.all_gather", [x], ctx.avals_out[0], attrs)]


lowering_rules[all_gather_p] = _all_gather_rule


def _axis_index_rule(ctx: RuleContext, *, axis_name: Any) -> list[Value]:
    names = axis_names(axis_name)
    mesh = _mesh("axis_index")
    _groups(mesh, names, "axis_index")
    pid = ctx.op1("stablehlo.partition_id", [], ops.scalar(np.dtype(np.uint32)))
    pid = ops.convert(ctx, pid, dtypes.int32)
    sizes = mesh.axis_sizes
    index: Value | None = None
    for n in names:
        a = mesh.axis_names.index(n)
        stride = math.prod(sizes[a + 1 :])
        along = ops.binary(ctx, "stablehlo.divide", pid, ops.full(ctx, stride, dtypes.int32))
        along = ops.binary(ctx, "stablehlo.remainder", along, ops.full(ctx, sizes[a], dtypes.int32))
        if index is None:
            index = along
        else:
            scaled = ops.binary(ctx, "stablehlo.multiply", index, ops.full(ctx, sizes[a], dtypes.int32))
            index = ops.binary(ctx, "stablehlo.add", scaled, along)
    assert index is not None
    return [index]


lowering_rules[axis_index_p] = _axis_index_rule


def _ppermute_rule(ctx: RuleContext, x: Value, *, axis_name: Any, perm: tuple[tuple[int, int], ...]) -> list[Value]:
    groups = _groups(_mesh("ppermute"), axis_names(axis_name), "ppermute")
    pairs = [(int(g[a]), int(g[b])) for g in groups for a, b in perm]
    if not pairs:
        return [ops.full(ctx, 0, x.dtype, x.shape)]
    text = ", ".join(f"[{a}, {b}]" for a, b in pairs)
    attrs = {
        "channel_handle": f"#stablehlo.channel_handle<handle = {next(_channels)}, type = 1>",
        "source_target_pairs": f"dense<[{text}]> : tensor<{len(pairs)}x2xi64>",
    }
    return [ctx.op1("stablehlo.collective_permute", [x], x.aval, attrs)]


lowering_rules[ppermute_p] = _ppermute_rule


def _psum_scatter_rule(ctx: RuleContext, x: Value, *, axis_name: Any, scatter_dimension: int, tiled: bool) -> list[Value]:
    groups = _groups(_mesh("psum_scatter"), axis_names(axis_name), "psum_scatter")
    n = groups.shape[1]
    w = ops.widened(ctx, x)
    shape = list(w.shape)
    shape[scatter_dimension] //= n
    region = ctx.region([ops.scalar(w.dtype)] * 2)
    region.ret([ops.binary(region, "stablehlo.add", region.args[0], region.args[1])])
    attrs = _collective_attrs(groups)
    attrs["scatter_dimension"] = f"{scatter_dimension} : i64"
    (r,) = ctx.op("stablehlo.reduce_scatter", [w], [ops.like(w, shape=shape)], attrs, [region])
    if not tiled:
        r = ops.reshape(ctx, r, [*shape[:scatter_dimension], *shape[scatter_dimension + 1 :]])
    return [ops.convert(ctx, r, x.dtype)]


lowering_rules[psum_scatter_p] = _psum_scatter_rule


def _all_to_all_rule(
    ctx: RuleContext, x: Value, *, axis_name: Any, split_axis: int, concat_axis: int, tiled: bool
) -> list[Value]:
    groups = _groups(_mesh("all_to_all"), axis_names(axis_name), "all_to_all")
    n = groups.shape[1]
    split, concat = split_axis, concat_axis
    if not tiled:
        # (n, out dims with a 1 at concat): split the leading axis, concatenate at the 1.
        rest = [k for k in range(len(x.shape)) if k != split]
        moved = ops.transpose(ctx, x, [split, *rest])
        out_shape = [x.shape[k] for k in rest]
        out_shape.insert(concat, 1)
        x = ops.reshape(ctx, moved, [n, *out_shape])
        split, concat = 0, concat + 1
    shape = list(x.shape)
    shape[split] //= n
    shape[concat] *= n
    attrs = _collective_attrs(groups)
    del attrs["use_global_device_ids"]
    attrs.update({
        "split_dimension": f"{split} : i64",
        "concat_dimension": f"{concat} : i64",
        "split_count": f"{n} : i64",
    })
    r = ctx.op1("stablehlo.all_to_all", [x], ops.like(x, shape=shape), attrs)
    if not tiled:
        r = ops.reshape(ctx, r, shape[1:])
    return [r]


lowering_rules[all_to_all_p] = _all_to_all_rule
