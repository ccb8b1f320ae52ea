"""``dim_as_value``: a symbolic dimension's value is its logical size."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import ShapedArray, dtypes
from plait_core.primitives.shapes import dim_as_value_p
from plait_masking.env import MaskEnv
from plait_masking.registry import masking_rules


def _dim_as_value_rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, dim: Any) -> Any:
    # The polynomial evaluated at the logical sizes (traced or batched as they are).
    return env.size(dim, dtypes.default_int_dtype())


masking_rules[dim_as_value_p] = _dim_as_value_rule
