"""Call primitives.

``closed_call`` (what ``jit`` binds), ``checkpoint`` and ``invertible_call``
are bound again around their masked jaxpr, so they stay calls, with the
logical sizes as extra leading operands (constants, for the invertible call).

``custom_jvp_call``, ``custom_vjp_call``, ``custom_ivjp_call`` and
``custom_vmap_call`` mask their primal function, inlined: their custom rules
speak of the logical values and cannot be rewritten for padded ones, so a
transformation applied *outside* ``mask`` sees the primal's operations (and
differentiates or batches them as it would any others), while one applied
inside ``mask`` still uses the custom rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import ShapedArray
from plait_core.primitives.calls import (
    called_jaxpr,
    checkpoint_p,
    closed_call_p,
    custom_ivjp_call_p,
    custom_jvp_call_p,
    custom_vjp_call_p,
    custom_vmap_call_p,
    invertible_call_p,
    remap_jit_info,
)
from plait_masking.env import MaskEnv
from plait_masking.registry import masking_rules
from plait_masking.trace import eval_masked, mask_jaxpr


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
    env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, jaxpr: Any, name: str, num_consts: int
) -> list[Any]:
    body, lead = mask_jaxpr(env, jaxpr)
    return list(invertible_call_p.bind(*lead, *vals, jaxpr=body, name=name, num_consts=len(lead) + num_consts))


masking_rules[closed_call_p] = _closed_call_rule
masking_rules[checkpoint_p] = _checkpoint_rule
masking_rules[invertible_call_p] = _invertible_call_rule


def _primal_rule(prim: Any) -> Any:
    def rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> list[Any]:
        return eval_masked(env, called_jaxpr(prim, params), vals)

    rule.__name__ = f"{prim.name}_masking_rule"
    return rule


for _p in (custom_jvp_call_p, custom_vjp_call_p, custom_ivjp_call_p, custom_vmap_call_p):
    masking_rules[_p] = _primal_rule(_p)
