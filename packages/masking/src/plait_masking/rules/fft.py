"""``fft`` under ``mask``: the padded data is transformed as it is when only
leading (batch) axes have symbolic sizes.

A transformed axis of symbolic size is not supported: the transform of an
axis depends on its length and mixes the padding into every frequency, so
the padded result has no logical part to keep.  Core's shape rule already
refuses symbolic ``fft_lengths``; the rule repeats the check for operands
whose transformed axes are symbolic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import ShapedArray
from plait_core.primitives.fft import fft_p
from plait_masking.env import MaskEnv, is_ragged
from plait_masking.registry import masking_rules


def _fft_rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
    (x,), (a,) = vals, avals
    k = len(params["fft_lengths"])
    ragged = [d for d in a.shape[a.ndim - k :] if is_ragged(d)]
    if ragged:
        raise NotImplementedError(
            f"mask: fft of {a.str_short()} over an axis of symbolic size {ragged[0]} is not supported: the "
            "transform mixes the padding into every frequency; only leading (batch) axes may be masked"
        )
    return fft_p.bind(x, **params)


masking_rules[fft_p] = _fft_rule
