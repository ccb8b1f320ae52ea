"""The padded rule of ``bijective_gather``.

When no index array is padded and the operand is padded only along window
dimensions taken whole (the features of a pile's rows under ``mask``), the
padding travels with the windows on both sides, so the primitive is bound on
the padded data with padded window sizes: it stays a bijection and keeps its
gather transpose.  Otherwise the result is computed as what it is, a
``gather`` (through its padded rule, which clamps against the logical bounds)
whose invalid positions are zeroed when ``masked``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import ops
from plait_core.abstract import ShapedArray
from plait_core.dims import definitely_equal
from plait_core.padded.env import PaddedEnv
from plait_core.padded.registry import padded_rules
from plait_core.primitives import structural as st
from plait_core.primitives.bijective_gather import batch_dims_of, bijective_gather_p, gather_params

__all__: list[str] = []


def _windows_whole(env: PaddedEnv, aval: ShapedArray, dn: Any, sizes: Sequence[Any]) -> bool:
    """Whether every padded axis of ``aval`` is a window dimension taken whole."""
    return all(
        not env.is_padded(d) or (i not in dn.start_index_map and definitely_equal(sizes[i], d))
        for i, d in enumerate(aval.shape)
    )


def _bijective_gather(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
    operand, indices, valid = vals[:3]
    index_avals = avals[1:]
    out_aval = bijective_gather_p.abstract_eval(*avals, **params)
    passes = not any(env.is_padded(d) for a in index_avals for d in a.shape) and _windows_whole(
        env, avals[0], params["dimension_numbers"], params["slice_sizes"]
    ) and _windows_whole(env, out_aval, params["inverse_dimension_numbers"], params["inverse_slice_sizes"])
    if passes:
        padded = dict(params, slice_sizes=env.padded_shape(params["slice_sizes"]),
                      inverse_slice_sizes=env.padded_shape(params["inverse_slice_sizes"]))  # fmt: skip
        return bijective_gather_p.bind(*vals, **padded)
    out = padded_rules[st.gather_p](env, [operand, indices], list(avals[:2]), **gather_params(params))
    if not params["masked"]:
        return out
    shape = tuple(ops.aval(out).shape)
    keep = ops.broadcast_along(valid, shape, batch_dims_of(params, len(shape)))
    return ops.select(keep, out, ops.full(shape, 0, out_aval.dtype, out_aval.weak_type))


padded_rules.define(_bijective_gather, bijective_gather_p, per_axis=True)
