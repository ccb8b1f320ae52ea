"""Rule shapes shared by several families."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import Primitive, ShapedArray
from plait_masking.env import MaskEnv
from plait_masking.registry import MaskingRule, masking_rules


def passthrough(prim: Primitive) -> MaskingRule:
    """The rule of a primitive whose result at every position depends only on
    its operands at positions the logical part keeps (elementwise operations,
    transpose, ...): apply it to the padded data as it is."""

    def rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
        return prim.bind(*vals, **params)

    rule.__name__ = f"{prim.name}_masking_rule"
    return rule


def register_passthrough(*prims: Primitive) -> None:
    """Give each primitive the :func:`passthrough` rule."""
    for p in prims:
        masking_rules[p] = passthrough(p)
