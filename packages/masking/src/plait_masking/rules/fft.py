"""``fft`` under ``mask``: the padded data is transformed as it is.

Only leading (batch) axes may have symbolic sizes: core's shape rule refuses
a transformed axis of symbolic size (the transform of an axis depends on its
length and would mix the padding into every frequency), so by the time this
rule runs every transformed axis has its padded size equal to its logical
one, and each logical row is transformed exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import ShapedArray
from plait_core.primitives.fft import fft_p
from plait_masking.env import MaskEnv
from plait_masking.registry import masking_rules


def _fft_rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
    return fft_p.bind(vals[0], **params)


masking_rules[fft_p] = _fft_rule
