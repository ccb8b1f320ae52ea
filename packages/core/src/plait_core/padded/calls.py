"""Padded rules of the call primitives.

A call stays a call on padded data: ``closed_call`` (what ``jit`` binds),
``checkpoint`` and ``invertible_call`` are bound again around their jaxpr
interpreted on padded data (:meth:`~plait_core.padded.env.PaddedEnv.padded_jaxpr`),
with its leading operands (hoisted constants, then the logical sizes) in
front, so compiled code stays compiled and a checkpoint still recomputes.

The custom-rule calls (``custom_jvp_call``, ``custom_vjp_call``,
``custom_ivjp_call``) are bound again the same way, with the user's rules
wrapped (:func:`~plait_core.rebound_rules.rebind_custom_call`) for the
interpreter's :class:`~plait_core.rebound_rules.RuleFrame`
(:meth:`~plait_core.padded.env.PaddedEnv.rule_frame`), so that a
transformation applied outside the interpreter still uses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core.abstract import ShapedArray, get_aval
from plait_core.padded.env import PaddedEnv
from plait_core.padded.registry import padded_rules
from plait_core.primitive import Primitive
from plait_core.primitives.calls import (
    called_jaxpr,
    checkpoint_p,
    closed_call_p,
    invertible_call_p,
    remap_jit_info,
)
from plait_core.rebound_rules import REBOUND_PRIMITIVES, rebind_custom_call

__all__: list[str] = []

#: The param that holds each call's jaxpr.
_JAXPR_PARAM = {closed_call_p: "call_jaxpr", checkpoint_p: "jaxpr", invertible_call_p: "jaxpr"}


def _call(prim: Primitive) -> Any:
    def rule(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> list[Any]:
        name = _JAXPR_PARAM[prim]
        body, lead = env.padded_jaxpr(params[name], [get_aval(v) for v in vals])
        new = {**params, name: body}
        if "num_consts" in new:
            new["num_consts"] = params["num_consts"] + len(lead)
        if "jit_info" in new:
            new["jit_info"] = remap_jit_info(params["jit_info"], (None,) * len(lead) + tuple(range(len(vals))))
        return list(prim.bind(*lead, *vals, **new))

    rule.__name__ = f"{prim.name}_padded_rule"
    return rule


def _custom_call(prim: Primitive) -> Any:
    def rule(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> list[Any]:
        like = [get_aval(v) for v in vals]
        body, lead = env.padded_jaxpr(called_jaxpr(prim, params), like)
        return rebind_custom_call(prim, env.rule_frame(body, lead, like), body, lead, vals, params)

    rule.__name__ = f"{prim.name}_padded_rule"
    return rule


for _p in _JAXPR_PARAM:
    padded_rules.define(_call(_p), _p, per_axis=True, nested=True)
for _p in REBOUND_PRIMITIVES:
    padded_rules.define(_custom_call(_p), _p, per_axis=True, nested=True)
