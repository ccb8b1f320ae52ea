"""Rules of the call primitives.

* ``closed_call`` (what ``jit`` binds) stays a call: its JVP is a call of
  the JVP of its body, its transpose a call of the transposed body (core's
  partial evaluation splits it into a known and an unknown call), so
  compiled code stays compiled under every transformation.
* ``checkpoint`` likewise stays a checkpoint; core's partial evaluation
  applies its policy, so the transposed body recomputes what was not saved.
* ``custom_jvp_call`` runs the user's JVP rule (staged by core's front-end);
  its transpose transposes the primal function.
* ``custom_vjp_call`` runs the forward rule and emits ``custom_lin``, a
  linear primitive whose transpose is the user's backward rule.  Met in a
  linear position it is transposed by its body, or by its backward rule when
  that rule is marked ``transpose_by_bwd`` (``lax.custom_linear_solve``).
* ``custom_vmap_call``: see :mod:`plait_autodiff.rules.custom_vmap` (every
  derivative of it is again a ``custom_vmap_call``, so its batching rule survives).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_autodiff.jaxpr_util import eval_jaxpr, hoist_consts
from plait_autodiff.jvp import differentiating_remat, jvp_jaxpr, remat_depth
from plait_autodiff.registries import jvp_rules, transpose_rules
from plait_autodiff.tangents import Zero, instantiate, to_tangent_type
from plait_autodiff.transpose import backward_pass, is_undefined, transpose_jaxpr
from plait_core import ClosedJaxpr
from plait_core.primitive import Primitive
from plait_core.primitives.ad_helpers import custom_lin_p
from plait_core.primitives.calls import (
    checkpoint_p,
    closed_call_p,
    custom_jvp_call_p,
    custom_vjp_call_p,
    remap_jit_info,
)

__all__ = ["custom_lin_p"]  # re-exported from core for readers of this module


def _nonzero(ts: Sequence[Any]) -> list[bool]:
    return [type(t) is not Zero for t in ts]


def _merge(flags: Sequence[bool], given: Sequence[Any], primals: Sequence[Any]) -> list[Any]:
    it = iter(given)
    return [next(it) if f else Zero.from_primal_value(p) for f, p in zip(flags, primals)]


# ---------------------------------------------------------------------------
# closed_call and checkpoint: the JVP and the transpose stay calls


def _call_jvp(prim: Primitive, jaxpr_param: str) -> Any:
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[list[Any], list[Any]]:
        closed: ClosedJaxpr = params[jaxpr_param]
        nz = _nonzero(tangents)
        if prim is checkpoint_p:
            with differentiating_remat():
                body, out_nz = jvp_jaxpr(closed, nz, False)
        else:
            body, out_nz = jvp_jaxpr(closed, nz, False)
        body, consts = hoist_consts(body)
        given = [t for t in tangents if type(t) is not Zero]
        new_params = dict(params)
        new_params[jaxpr_param] = body
        if "jit_info" in params:
            origin = (None,) * len(consts) + tuple(range(len(primals))) + (None,) * len(given)
            new_params["jit_info"] = remap_jit_info(params["jit_info"], origin)
        outs = prim.bind(*consts, *primals, *given, **new_params)
        n = len(closed.out_avals)
        return outs[:n], _merge(out_nz, outs[n:], outs[:n])

    return rule


def _call_transpose(prim: Primitive, jaxpr_param: str) -> Any:
    def rule(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
        closed: ClosedJaxpr = params[jaxpr_param]
        linear = [is_undefined(x) for x in args]
        ct_nz = _nonzero(cts)
        body, consts = hoist_consts(transpose_jaxpr(closed, linear, ct_nz))
        residuals = [x for x, lin in zip(args, linear) if not lin]
        given = [ct for ct in cts if type(ct) is not Zero]
        new_params = dict(params)
        new_params[jaxpr_param] = body
        if "jit_info" in params:
            origin = (None,) * len(consts) + tuple(i for i, lin in enumerate(linear) if not lin) + (None,) * len(given)
            new_params["jit_info"] = remap_jit_info(params["jit_info"], origin)
            new_params["name"] = f"transpose({params['name']})"
        if "differentiated" in params:
            new_params["differentiated"] = True
        results = iter(prim.bind(*consts, *residuals, *given, **new_params))
        return [next(results) if lin else None for lin in linear]

    return rule


jvp_rules[closed_call_p] = _call_jvp(closed_call_p, "call_jaxpr")
transpose_rules[closed_call_p] = _call_transpose(closed_call_p, "call_jaxpr")
jvp_rules[checkpoint_p] = _call_jvp(checkpoint_p, "jaxpr")
transpose_rules[checkpoint_p] = _call_transpose(checkpoint_p, "jaxpr")


# ---------------------------------------------------------------------------
# custom_jvp_call


def _custom_jvp_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[list[Any], list[Any]]:
    nz = _nonzero(tangents)
    rule = params["jvp_jaxpr_fun"](nz)
    given = [t for t in tangents if type(t) is not Zero]
    outs = eval_jaxpr(rule.jaxpr.jaxpr, rule.jaxpr.consts, *primals, *given)
    n = len(params["call_jaxpr"].out_avals)
    return outs[:n], _merge(rule.out_nonzeros, outs[n:], outs[:n])


jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


def _inline_transpose(jaxpr_param: str) -> Any:
    """Transpose a call by transposing the function it calls, inline."""

    def rule(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
        closed: ClosedJaxpr = params[jaxpr_param]
        return backward_pass(closed.jaxpr, closed.consts, args, cts)

    return rule


transpose_rules[custom_jvp_call_p] = _inline_transpose("call_jaxpr")


# ---------------------------------------------------------------------------
# custom_vjp_call and custom_lin

def _custom_vjp_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[list[Any], Any]:
    nz = _nonzero(tangents)
    fwd = params["fwd_jaxpr_thunk"](nz)
    outs = eval_jaxpr(fwd.jaxpr.jaxpr, fwd.jaxpr.consts, *primals)
    n = len(params["call_jaxpr"].out_avals)
    primal_out, residuals = outs[:n], outs[n:]
    if params["optimize_remat"] and remat_depth():
        # Inside a checkpoint the outputs come from the primal function, so the
        # forward pass does not need fwd at all: only the recomputation for the
        # backward pass (which needs the residuals) evaluates it.
        call = params["call_jaxpr"]
        primal_out = eval_jaxpr(call.jaxpr, call.consts, *primals)
    given = [instantiate(t) for t in tangents if type(t) is not Zero]
    out_avals = tuple(to_tangent_type(a) for a in params["call_jaxpr"].out_avals)
    tangent_out = custom_lin_p.bind(
        *residuals, *given, num_res=len(residuals), bwd=params["bwd"], out_avals=out_avals, in_nonzeros=tuple(nz)
    )
    return primal_out, list(tangent_out)


jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
_inline_custom_vjp_transpose = _inline_transpose("call_jaxpr")


def _custom_vjp_call_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    """Transpose a ``custom_vjp_call`` met in a linear position: by its body, or,
    for a function whose backward rule says it is linear (the attribute
    ``transpose_by_bwd`` set on the rule, as ``lax.custom_linear_solve`` does),
    by that rule with the forward rule run at zero for the linear operands (the
    backward rule of a linear function does not depend on the point)."""
    user_bwd = getattr(params["bwd"], "bwd", None)
    if not getattr(user_bwd, "transpose_by_bwd", False):
        inlined: list[Any] = _inline_custom_vjp_transpose(cts, *args, **params)
        return inlined
    linear = [is_undefined(a) for a in args]
    primals = [np.zeros(a.aval.shape, a.aval.dtype) if lin else a for a, lin in zip(args, linear)]
    fwd = params["fwd_jaxpr_thunk"](linear)
    outs = eval_jaxpr(fwd.jaxpr.jaxpr, fwd.jaxpr.consts, *primals)
    n = len(params["call_jaxpr"].out_avals)
    cts_in = params["bwd"](*outs[n:], *[None if type(ct) is Zero else ct for ct in cts])
    return [
        (Zero(to_tangent_type(a.aval)) if ct is None else ct) if lin else None
        for ct, a, lin in zip(cts_in, args, linear)
    ]


transpose_rules[custom_vjp_call_p] = _custom_vjp_call_transpose


def _custom_lin_transpose(cts: Sequence[Any], *args: Any, num_res: int, bwd: Any, out_avals: Any, in_nonzeros: tuple[bool, ...]) -> list[Any]:
    residuals = args[:num_res]
    cts_out = [None if type(ct) is Zero else ct for ct in cts]
    cts_in = bwd(*residuals, *cts_out)
    picked = [ct for ct, z in zip(cts_in, in_nonzeros) if z]
    return [None] * num_res + [Zero(to_tangent_type(a.aval)) if ct is None else ct for ct, a in zip(picked, args[num_res:])]


transpose_rules[custom_lin_p] = _custom_lin_transpose
jvp_rules.not_supported(
    custom_lin_p,
    "custom_lin only appears in linearized programs, which are transposed, not differentiated again "
    "(higher derivatives differentiate the backward rule instead)",
)
