"""Call primitives.

``closed_call`` (what ``jit`` binds), ``checkpoint`` and ``invertible_call``
are bound again around their masked jaxpr, so they stay calls, with the
logical sizes as extra leading operands (constants, for the invertible call).
The custom-rule calls are bound again too, with masked rules: see
:mod:`plait_masking.rules.custom_calls`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import ShapedArray
from plait_core.primitives.calls import (
    checkpoint_p,
    closed_call_p,
    invertible_call_p,
    remap_jit_info,
)
from plait_masking.env import MaskEnv
from plait_masking.registry import masking_rules
from plait_masking.trace import mask_jaxpr


def _closed_call_rule(
    env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, call_jaxpr: Any, name: str, jit_info: Any
) -> list[Any]:
    body, lead = mask_jaxpr(env, call_jaxpr)
    origin = (None,) * len(lead) + tuple(range(len(vals)))
    return list(closed_call_p.bind(*lead, *vals, call_jaxpr=body, name=name, jit_info=remap_jit_info(jit_info, origin)))


def _checkpoint_rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, jaxpr: Any, **params: Any) -> list[Any]:
    body, lead = mask_jaxpr(env, jaxpr)
    return list(checkpoint_p.bind(*lead, *vals, jaxpr=body, **params))


def _invertible_call_rule(
    env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, jaxpr: Any, num_consts: int, **params: Any
) -> list[Any]:
    body, lead = mask_jaxpr(env, jaxpr)
    return list(invertible_call_p.bind(*lead, *vals, jaxpr=body, num_consts=len(lead) + num_consts, **params))


masking_rules[closed_call_p] = _closed_call_rule
masking_rules[checkpoint_p] = _checkpoint_rule
masking_rules[invertible_call_p] = _invertible_call_rule

