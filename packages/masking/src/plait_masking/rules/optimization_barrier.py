"""``optimization_barrier`` under ``mask``: the identity on the padded values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import ShapedArray
from plait_core.primitives.optimization_barrier import optimization_barrier_p
from plait_masking.env import MaskEnv
from plait_masking.registry import masking_rules


def _rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray]) -> list[Any]:
    return list(optimization_barrier_p.bind(*vals))


masking_rules[optimization_barrier_p] = _rule
