"""Ragged rules (vmap over piles) of the windows family, the optimization
barrier and the host callback.

Windows run on the padded data when every ragged element axis is only a
batch axis of the windows (a window of one element, stride 1, no padding or
base dilation): each window then lies inside one position of that axis, so
the padding never enters a true element's windows.  A real window along a
ragged axis is refused with the reason (its last windows would read the
padding instead of the window padding).  ``optimization_barrier`` is the
identity on the padded data.  Host callbacks are not supported on piles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.ragged import Operand, RaggedEnv, padded_rule, refuse
from plait_batching.registries import ragged_rules
from plait_core import Primitive
from plait_core.primitives import reduce_window as rw
from plait_core.primitives.callbacks import callback_p
from plait_core.primitives.optimization_barrier import optimization_barrier_p


def _windows_check(operand_index: int) -> Any:
    def check(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
        shape = ops[operand_index].aval.shape
        base = params.get("base_dilation", (1,) * len(shape))
        for axis, d in enumerate(shape):
            trivial = (
                params["window_dimensions"][axis] == 1
                and params["window_strides"][axis] == 1
                and tuple(params["padding"][axis]) == (0, 0)
                and base[axis] == 1
            )
            if env.is_ragged(d) and not trivial:
                raise refuse(
                    prim, ops, env,
                    f"has a window of {params['window_dimensions'][axis]} (stride {params['window_strides'][axis]}, "
                    f"padding {tuple(params['padding'][axis])}) along the ragged axis {axis}; windows may only span "
                    "axes of static size",
                )  # fmt: skip

    return check


for _p in (rw.reduce_window_sum_p, rw.reduce_window_max_p, rw.reduce_window_min_p, rw.reduce_window_p):
    ragged_rules[_p] = padded_rule(_windows_check(0))
for _p in (rw.select_and_gather_add_p, rw.select_and_scatter_add_p):
    ragged_rules[_p] = padded_rule(_windows_check(1))
ragged_rules[optimization_barrier_p] = padded_rule()
ragged_rules.not_supported(
    callback_p,
    "a host callback on a ragged value would receive each element's padded data, whose values past the "
    "element's length are unspecified, and could not return ragged results; unpack the pile first",
)
