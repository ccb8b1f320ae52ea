"""Reductions, ``argmax``/``argmin``, cumulative reductions and ``sort``.

A reduction over an axis of symbolic size first fills that axis's padding
with the monoid's identity, so the padding adds nothing.  ``argmax`` fills
with the smallest value (``argmin`` with the largest): the padding comes
after the logical part, and ties go to the first index.  A cumulative
reduction running forward only reads the prefix, so it passes through;
running in reverse it reads the padding first, which is filled with the
identity.  ``sort`` adds a leading key that is 1 in the padding, so the
padding sorts after every logical element whatever it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import Primitive, ShapedArray, dtypes
from plait_core.primitives import reductions as red
from plait_masking import ops
from plait_masking.env import MaskEnv, is_ragged
from plait_masking.registry import masking_rules

Identity = Callable[[np.dtype[Any]], Any]

_IDENTITIES: dict[Primitive, Identity] = {
    red.reduce_sum_p: lambda dt: 0,
    red.reduce_prod_p: lambda dt: 1,
    red.reduce_max_p: ops.lowest,
    red.reduce_min_p: ops.highest,
    red.reduce_and_p: ops.all_ones,
    red.reduce_or_p: lambda dt: 0,
    red.argmax_p: ops.lowest,
    red.argmin_p: ops.highest,
    red.cumsum_p: lambda dt: 0,
    red.cumprod_p: lambda dt: 1,
    red.cummax_p: ops.lowest,
    red.cummin_p: ops.highest,
}


def _reducer_rule(prim: Primitive, identity: Identity) -> Callable[..., Any]:
    def rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
        (x,), (aval,) = vals, avals
        return prim.bind(env.fill(x, aval, params["axes"], identity(aval.dtype)), **params)

    return rule


def _cumulative_rule(prim: Primitive, identity: Identity) -> Callable[..., Any]:
    def rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, axis: int, reverse: bool) -> Any:
        (x,), (aval,) = vals, avals
        if reverse:
            x = env.fill(x, aval, (axis,), identity(aval.dtype))
        return prim.bind(x, axis=axis, reverse=reverse)

    return rule


for _p in (red.reduce_sum_p, red.reduce_prod_p, red.reduce_max_p, red.reduce_min_p, red.reduce_and_p,
           red.reduce_or_p, red.argmax_p, red.argmin_p):
    masking_rules[_p] = _reducer_rule(_p, _IDENTITIES[_p])
for _p in (red.cumsum_p, red.cumprod_p, red.cummax_p, red.cummin_p):
    masking_rules[_p] = _cumulative_rule(_p, _IDENTITIES[_p])


def _sort_rule(
    env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, dimension: int, is_stable: bool, num_keys: int
) -> list[Any]:
    d = avals[0].shape[dimension]
    if not is_ragged(d):
        return list(red.sort_p.bind(*vals, dimension=dimension, is_stable=is_stable, num_keys=num_keys))
    shape = env.padded_shape(avals[0].shape)
    valid = ops.lt(ops.iota(shape, dimension), env.size(d, dtypes.default_int_dtype()))
    # 0 in the logical part, 1 in the padding: the first key sends the padding to the end.
    key = ops.select(valid, ops.full(1, shape, np.dtype(np.int32)), ops.full(0, shape, np.dtype(np.int32)))
    out = red.sort_p.bind(key, *vals, dimension=dimension, is_stable=is_stable, num_keys=num_keys + 1)
    return list(out[1:])


masking_rules[red.sort_p] = _sort_rule
