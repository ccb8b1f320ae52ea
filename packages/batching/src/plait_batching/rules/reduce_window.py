"""Batching rules of the windows family.

The batch axis goes in front of every array operand and gets a window of
one element (stride 1, no padding or dilation), so each element's windows
are those of the unbatched primitive.  The generic ``reduce_window``'s init
values are scalars of the computation: a batched init value would need a
different computation per element, which is not supported (nor in JAX).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.moves import BDim, to_front
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core.primitives import reduce_window as rw

_GROWN = {
    "window_dimensions": 1,
    "window_strides": 1,
    "padding": (0, 0),
    "base_dilation": 1,
    "window_dilation": 1,
}


def _grown(params: dict[str, Any]) -> dict[str, Any]:
    """The window params with a leading axis of one-element windows."""
    return {k: (_GROWN[k], *v) if k in _GROWN else v for k, v in params.items()}


def _window_rule(prim: Any) -> Any:
    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any) -> tuple[Any, BDim]:
        moved = [to_front(x, d, axis.size) for x, d in zip(args, dims)]
        return prim.bind(*moved, **_grown(params)), 0

    return rule


for _p in (
    rw.reduce_window_sum_p,
    rw.reduce_window_max_p,
    rw.reduce_window_min_p,
    rw.select_and_gather_add_p,
    rw.select_and_scatter_add_p,
):
    batching_rules[_p] = _window_rule(_p)


def _generic_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any
) -> tuple[list[Any], list[BDim]]:
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError(
            "not supported: vmap of lax.reduce_window over its init values (a batched init value would need a "
            "different computation per element); batch the operands only"
        )
    moved = [to_front(x, d, axis.size) for x, d in zip(args[:n], dims[:n])]
    outs = rw.reduce_window_p.bind(*moved, *args[n:], **_grown(params))
    return list(outs), [0] * n


batching_rules[rw.reduce_window_p] = _generic_rule
