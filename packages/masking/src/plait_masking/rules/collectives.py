"""Named-axis collectives inside ``mask`` (under an enclosing ``vmap``).

``psum pmax pmin pmean`` combine the members of the named axis elementwise,
so the logical part of the result only reads the members' logical parts:
they pass through (as elementwise operations do).  ``axis_index`` has no
operand.  ``all_gather`` stacks members along a new axis, which passes
through too; its tiled form concatenates them along an existing axis, where
each member's padding would land between the members' logical parts, so it
is refused on an axis of symbolic size.  ``ppermute`` moves whole members:
it passes through.  ``psum_scatter`` and ``all_to_all`` split an axis into
blocks per member, which is refused on an axis of symbolic size (padding
would land inside the blocks).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import ShapedArray
from plait_core.primitives.collectives import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pmax_p,
    pmean_p,
    pmin_p,
    ppermute_p,
    psum_p,
    psum_scatter_p,
    pvary_p,
)
from plait_masking.env import MaskEnv, is_ragged
from plait_masking.registry import masking_rules
from plait_masking.rules._common import register_passthrough

register_passthrough(psum_p, pmax_p, pmin_p, pmean_p, axis_index_p, ppermute_p, pvary_p)


def _all_gather_rule(
    env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, axis_name: Any, axis: int, tiled: bool
) -> Any:
    (x,), (aval,) = vals, avals
    if tiled and is_ragged(aval.shape[axis]):
        raise NotImplementedError(
            f"mask: all_gather(tiled=True) along axis {axis} of symbolic size {aval.shape[axis]} "
            f"({aval.str_short()}) is not supported: each member's padding would sit between the "
            "members' logical parts; gather untiled (tiled=False) and reshape instead"
        )
    return all_gather_p.bind(x, axis_name=axis_name, axis=axis, tiled=tiled)


masking_rules[all_gather_p] = _all_gather_rule


def _blocked_rule(prim: Any, dims: tuple[str, ...]) -> Any:
    def rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
        (x,), (aval,) = vals, avals
        for name in dims:
            if is_ragged(aval.shape[params[name]]):
                raise NotImplementedError(
                    f"mask: {prim.name} with {name}={params[name]} of symbolic size {aval.shape[params[name]]} "
                    f"({aval.str_short()}) is not supported: the blocks sent to each member would mix data and "
                    "padding"
                )
        return prim.bind(x, **params)

    return rule


masking_rules[psum_scatter_p] = _blocked_rule(psum_scatter_p, ("scatter_dimension",))
masking_rules[all_to_all_p] = _blocked_rule(all_to_all_p, ("split_axis", "concat_axis"))
