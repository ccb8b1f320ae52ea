"""Padded rules of the windows family (``reduce_window*``,
``select_and_gather_add``, ``select_and_scatter_add``).

Axes of static size are windowed as they are: the padding of a padded axis
sits in windows of its own as long as that axis is only a *batch* axis of
the windows (a window of one element, stride 1, no padding or base
dilation), so the windows run on the padded data.  A real window along a
padded axis is refused: the windows near the logical end would read the
padding instead of the window padding, and the number of windows of a
strided or padded axis is not a polynomial in the size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core.abstract import ShapedArray
from plait_core.padded.env import PaddedEnv
from plait_core.padded.registry import padded_rules
from plait_core.padded.structural import padded_params
from plait_core.primitive import Primitive
from plait_core.primitives import reduce_window as rw

__all__: list[str] = []


def _on_padded_data(prim: Primitive) -> Any:
    def rule(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
        return prim.bind(*vals, **padded_params(env, params))

    rule.__name__ = f"{prim.name}_padded_rule"
    return rule


def _windows_check(prim: Primitive, operand_index: int) -> Any:
    def check(env: PaddedEnv, avals: Sequence[ShapedArray], params: dict[str, Any]) -> None:
        shape = avals[operand_index].shape
        base = params.get("base_dilation", (1,) * len(shape))
        for axis, d in enumerate(shape):
            w, s, pad = params["window_dimensions"][axis], params["window_strides"][axis], tuple(params["padding"][axis])
            if env.is_padded(d) and not (w == 1 and s == 1 and pad == (0, 0) and base[axis] == 1):
                raise env.unsupported(prim, avals, (
                    f"has a window of {w} (stride {s}, padding {pad}) along the {env.noun} axis {axis} of size {d}; "
                    "windows may only span axes of static size"
                ))  # fmt: skip

    return check


for _p in (rw.reduce_window_sum_p, rw.reduce_window_max_p, rw.reduce_window_min_p, rw.reduce_window_p):
    padded_rules.define(_on_padded_data(_p), _p, per_axis=True, passthrough=True, check=_windows_check(_p, 0))
# The operand (argument 1) decides the windows of the select-and-* helpers.
for _p in (rw.select_and_gather_add_p, rw.select_and_scatter_add_p):
    padded_rules.define(_on_padded_data(_p), _p, per_axis=True, passthrough=True, check=_windows_check(_p, 1))
