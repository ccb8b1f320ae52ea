"""The padded rule of ``reshape``.

Reshaping the padded data keeps every logical element in its logical place
when the logical layout is a prefix of the padded one: each group of merged
or split axes has a padded size only in its leading axis (``(n, 3) ->
(3*n,)``, ``(n, 6) -> (n, 2, 3)``).  Any other reshape gathers every element
from its logical position: the row-major index of a padded output position
at the logical sizes, taken apart at the operand's logical sizes (positions
past the logical end read anything).  Each padded size is taken by its own
value, so an ``n x m`` value reshapes too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from plait_core import dtypes, ops
from plait_core.abstract import ShapedArray
from plait_core.dims import Dim, definitely_equal
from plait_core.padded.env import PaddedEnv
from plait_core.padded.registry import padded_rules
from plait_core.primitives import elementwise as ew
from plait_core.primitives import structural as st
from plait_core.primitives.indexing_prims import GatherDimensionNumbers, GatherScatterMode

__all__: list[str] = []


def _groups(ins: Sequence[Dim], outs: Sequence[Dim]) -> list[tuple[range, range]] | None:
    """Split both shapes into consecutive groups of equal size, as small as the
    dimensions show (``None`` if no split is found)."""
    cin = [math.prod(ins[:k]) for k in range(len(ins) + 1)]
    cout = [math.prod(outs[:k]) for k in range(len(outs) + 1)]
    groups: list[tuple[range, range]] = []
    a = b = 0
    while a < len(ins) or b < len(outs):
        found = next(
            ((a2, b2) for a2 in range(a, len(ins) + 1) for b2 in range(b, len(outs) + 1)
             if (a2, b2) != (a, b) and definitely_equal(cin[a2], cout[b2])),
            None,
        )  # fmt: skip
        if found is None:
            return None
        groups.append((range(a, found[0]), range(b, found[1])))
        a, b = found
    return groups


def _prefix_layout(env: PaddedEnv, ins: Sequence[Dim], outs: Sequence[Dim]) -> bool:
    """Whether reshaping the padded data keeps every logical element in its
    logical place: in each group only the leading dimensions may be padded."""
    groups = _groups(ins, outs)
    if groups is None:
        return False
    return not any(
        any(env.is_padded(ins[k]) for k in list(gin)[1:]) or any(env.is_padded(outs[k]) for k in list(gout)[1:])
        for gin, gout in groups
    )


def _reshape_by_gather(env: PaddedEnv, x: Any, ins: Sequence[Dim], outs: Sequence[Dim]) -> Any:
    dt = dtypes.default_int_dtype()
    out_shape = env.padded_shape(outs)
    flat: Any = ops.full(out_shape, 0, dt)
    for t in range(len(outs)):
        if out_shape[t] > 1:
            flat = ops.add(flat, ops.mul(ops.iota(dt, out_shape, t), env.size(math.prod(outs[t + 1 :]), dt)))
    parts = []
    for u, d in enumerate(ins):
        coord = ops.div(flat, env.size(math.prod(ins[u + 1 :]), dt))
        if u:
            coord = ew.rem_p.bind(coord, env.size(d, dt))
        parts.append(ops.broadcast_in_dim(coord, (*out_shape, 1), tuple(range(len(out_shape)))))
    indices = ops.concatenate(parts, len(out_shape))
    rank = len(ins)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=tuple(range(rank)),
                                start_index_map=tuple(range(rank)))  # fmt: skip
    return st.gather_p.bind(
        x, indices, dimension_numbers=dn, slice_sizes=(1,) * rank, indices_are_sorted=False,
        unique_indices=False, mode=GatherScatterMode.CLIP, fill_value=None,
    )  # fmt: skip


def _reshape(
    env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, new_sizes: Any, dimensions: Any
) -> Any:
    (x,), (aval,) = vals, avals
    ins = tuple(aval.shape)
    if dimensions is not None:
        x = ops.transpose(x, dimensions)
        ins = tuple(ins[p] for p in dimensions)
    if _prefix_layout(env, ins, new_sizes):
        return st.reshape_p.bind(x, new_sizes=env.padded_shape(new_sizes), dimensions=None)
    return _reshape_by_gather(env, x, ins, new_sizes)


padded_rules.define(_reshape, st.reshape_p, per_axis=True)
