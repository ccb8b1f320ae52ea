"""The host-callback primitive under ``mask``.

Operands of static shape pass through: the callback runs as it would
unmasked.  An operand with a symbolic size is not supported: the host
function would receive the padded array, whose values past the logical size
are unspecified and whose shape is not the logical one, so it could not
compute (or print) what the unmasked program would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import ShapedArray
from plait_core.primitives.callbacks import callback_p
from plait_masking.env import MaskEnv, is_ragged
from plait_masking.registry import masking_rules


def _callback_rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
    for k, a in enumerate(avals):
        if any(is_ragged(d) for d in a.shape):
            raise NotImplementedError(
                f"mask: the host callback {params['callback'].name} is not supported on an operand of symbolic "
                f"shape ({a.str_short()}, argument {k}): the host function would see the padded array instead "
                "of the logical one"
            )
    return callback_p.bind(*vals, **params)


masking_rules[callback_p] = _callback_rule
