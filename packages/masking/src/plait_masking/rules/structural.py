"""Structural primitives: they move data, so the logical part may move too.

(``broadcast_in_dim``, ``iota``, ``squeeze``, ``expand_dims``, ``transpose``,
``copy``, ``rev`` and ``pad`` are core's padded rules,
:mod:`plait_core.padded.structural`.)

* ``concatenate``: the operands after one of symbolic length are written at
  their logical offset (``dynamic_update_slice``), in order.
* ``slice`` with a constant start slices the padded data; a symbolic start
  takes a window at the logical start.
* ``reshape`` reshapes the padded data when the logical layout is a prefix
  of the padded one (each group of merged or split axes has a symbolic size
  only in its leading axis, as ``(n, 3) -> (3*n,)``), and otherwise gathers
  every element from its logical position.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import ShapedArray, dtypes, ops
from plait_core.dims import Dim, definitely_equal
from plait_core.primitives import elementwise as ew
from plait_core.primitives import structural as st
from plait_core.primitives.indexing_prims import GatherDimensionNumbers, GatherScatterMode
from plait_masking.env import MaskEnv, is_ragged
from plait_masking.registry import masking_rules

_INT = dtypes.default_int_dtype


# ---------------------------------------------------------------------------
# concatenate


def _concatenate_rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, dimension: int) -> Any:
    out = st.concatenate_p.bind(*vals, dimension=dimension)
    sizes = [a.shape[dimension] for a in avals]
    first = next((k for k, s in enumerate(sizes) if is_ragged(s)), len(sizes))
    if first >= len(sizes) - 1:
        return out  # every offset is the same padded or logical
    offset: Dim = sum(sizes[: first + 1], 0)
    zero = np.zeros((), _INT())
    for k in range(first + 1, len(vals)):
        starts = [env.size(offset, _INT()) if a == dimension else zero for a in range(avals[k].ndim)]
        # Written in order, each operand's padding is overwritten by the next operand.
        out = st.dynamic_update_slice_p.bind(out, vals[k], *starts)
        offset = offset + sizes[k]
    return out


masking_rules[st.concatenate_p] = _concatenate_rule


# ---------------------------------------------------------------------------
# slice


def _slice_rule(
    env: MaskEnv,
    vals: Sequence[Any],
    avals: Sequence[ShapedArray],
    *,
    start_indices: Any,
    limit_indices: Any,
    strides: Any,
) -> Any:
    (x,), (aval,) = vals, avals
    steps = (1,) * aval.ndim if strides is None else tuple(strides)
    moving = [a for a, s in enumerate(start_indices) if is_ragged(s)]
    padded = env.padded_shape(aval.shape)
    starts = tuple(0 if a in moving else int(s) for a, s in enumerate(start_indices))
    limits = tuple(padded[a] if a in moving else env.padded_dim(lim) for a, lim in enumerate(limit_indices))
    inner = tuple(1 if a in moving else s for a, s in enumerate(steps))
    if starts != (0,) * aval.ndim or limits != padded or any(s != 1 for s in inner):
        x = st.slice_p.bind(
            x, start_indices=starts, limit_indices=limits, strides=None if all(s == 1 for s in inner) else inner
        )
    if not moving:
        return x
    logical = st.slice_p.abstract_eval(aval, start_indices=start_indices, limit_indices=limit_indices,
                                       strides=strides)
    out_shape = env.padded_shape(logical.shape)
    for a in moving:
        count = out_shape[a]
        span = (count - 1) * steps[a] + 1 if count else 0
        x = ops.window(x, a, env.size(start_indices[a], _INT()), span)
        x = ops.slice_axis(x, a, 0, span, steps[a])
    return x


masking_rules[st.slice_p] = _slice_rule


# ---------------------------------------------------------------------------
# reshape


def _groups(ins: Sequence[Dim], outs: Sequence[Dim]) -> list[tuple[range, range]] | None:
    """Split both shapes into consecutive groups of equal size, as small as the
    dimensions show (``None`` if no split is found)."""
    cin = [math.prod(ins[:k]) for k in range(len(ins) + 1)]
    cout = [math.prod(outs[:k]) for k in range(len(outs) + 1)]
    groups: list[tuple[range, range]] = []
    a = b = 0
    while a < len(ins) or b < len(outs):
        found = None
        for a2 in range(a, len(ins) + 1):
            for b2 in range(b, len(outs) + 1):
                if (a2, b2) != (a, b) and definitely_equal(cin[a2], cout[b2]):
                    found = (a2, b2)
                    break
            if found:
                break
        if found is None:
            return None
        groups.append((range(a, found[0]), range(b, found[1])))
        a, b = found
    return groups


def _prefix_layout(ins: Sequence[Dim], outs: Sequence[Dim]) -> bool:
    """Whether reshaping the padded data keeps every logical element in its
    logical place: in each group only the leading dimensions may be symbolic."""
    groups = _groups(ins, outs)
    if groups is None:
        return False
    for gin, gout in groups:
        if any(is_ragged(ins[k]) for k in list(gin)[1:]) or any(is_ragged(outs[k]) for k in list(gout)[1:]):
            return False
    return True


def _reshape_by_gather(env: MaskEnv, x: Any, ins: Sequence[Dim], outs: Sequence[Dim]) -> Any:
    """Every padded output position reads the operand at the position of its
    logical row-major index (positions past the logical end read anything)."""
    dt = _INT()
    out_shape = env.padded_shape(outs)
    flat: Any = ops.full(out_shape, 0, dt)
    for t in range(len(outs)):
        if out_shape[t] > 1:
            stride = env.size(math.prod(outs[t + 1 :]), dt)
            flat = ew.add_p.bind(flat, ew.mul_p.bind(ops.iota(dt, out_shape, t), stride))
    parts = []
    for u, d in enumerate(ins):
        coord = ew.div_p.bind(flat, env.size(math.prod(ins[u + 1 :]), dt))
        if u:
            coord = ew.rem_p.bind(coord, env.size(d, dt))
        parts.append(st.broadcast_in_dim_p.bind(
            coord, shape=(*out_shape, 1), broadcast_dimensions=tuple(range(len(out_shape)))
        ))
    indices = parts[0] if len(parts) == 1 else st.concatenate_p.bind(*parts, dimension=len(out_shape))
    rank = len(ins)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=tuple(range(rank)),
                                start_index_map=tuple(range(rank)))
    return st.gather_p.bind(
        x, indices, dimension_numbers=dn, slice_sizes=(1,) * rank, indices_are_sorted=False,
        unique_indices=False, mode=GatherScatterMode.CLIP, fill_value=None,
    )


def _reshape_rule(
    env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, new_sizes: Any, dimensions: Any
) -> Any:
    (x,), (aval,) = vals, avals
    ins = tuple(aval.shape)
    if dimensions is not None:
        x = st.transpose_p.bind(x, permutation=tuple(dimensions))
        ins = tuple(ins[p] for p in dimensions)
    if _prefix_layout(ins, new_sizes):
        return st.reshape_p.bind(x, new_sizes=env.padded_shape(new_sizes), dimensions=None)
    return _reshape_by_gather(env, x, ins, new_sizes)


masking_rules[st.reshape_p] = _reshape_rule
