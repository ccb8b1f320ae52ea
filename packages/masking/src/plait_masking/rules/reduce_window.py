"""The windows family (``reduce_window*``, ``select_and_gather_add``,
``select_and_scatter_add``).

Axes of static size are windowed as they are: the padding of other axes
sits in windows of its own.  An axis of symbolic size may only be a batch
axis of the windows (a window of one element, stride 1, no padding or base
dilation).  A real window along it is not supported: the windows near the
logical end would read the padding instead of the window padding, and the
number of windows of a strided or padded axis is not a polynomial in the
size, so the result's logical shape could not be tracked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import Primitive, ShapedArray
from plait_core.primitives import reduce_window as rw
from plait_masking.env import MaskEnv, is_ragged
from plait_masking.registry import masking_rules


def _windows_rule(prim: Primitive, operand_index: int) -> Any:
    def rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
        shape = avals[operand_index].shape
        rank = len(shape)
        base = params.get("base_dilation", (1,) * rank)
        for axis, d in enumerate(shape):
            trivial = (
                params["window_dimensions"][axis] == 1
                and params["window_strides"][axis] == 1
                and tuple(params["padding"][axis]) == (0, 0)
                and base[axis] == 1
            )
            if is_ragged(d) and not trivial:
                raise NotImplementedError(
                    f"mask: {prim.name} over an operand of shape {avals[operand_index].str_short()} is not supported: "
                    f"axis {axis} has the symbolic size {d} and a window of {params['window_dimensions'][axis]} "
                    f"(stride {params['window_strides'][axis]}, padding {tuple(params['padding'][axis])}); windows "
                    "may only span axes of static size (a symbolic axis can only be a batch axis of the windows)"
                )
        return prim.bind(*vals, **params)

    return rule


for _p in (rw.reduce_window_sum_p, rw.reduce_window_max_p, rw.reduce_window_min_p, rw.reduce_window_p):
    masking_rules[_p] = _windows_rule(_p, 0)
# The operand (argument 1) decides the windows of the select-and-* helpers.
masking_rules[rw.select_and_gather_add_p] = _windows_rule(rw.select_and_gather_add_p, 1)
masking_rules[rw.select_and_scatter_add_p] = _windows_rule(rw.select_and_scatter_add_p, 1)
