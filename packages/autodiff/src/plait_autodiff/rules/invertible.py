"""Rules of ``invertible_call`` and ``custom_ivjp_call``.

The JVP of ``invertible_call`` binds the call itself for the primal outputs
and ``invertible_lin`` for the tangents: a linear primitive whose operands
are only the values the backward pass may keep (the call's constants, its
outputs, and those of its arguments that the outputs do not determine) and
the input tangents.  Under partial evaluation the call runs now and
``invertible_lin`` is staged with those residuals, so reverse mode stores no
intermediate of the body; ``invertible_lin``'s transpose rebuilds them from
the outputs (:func:`~plait_autodiff.invertible.reconstruct`).

An argument is kept only when the outputs do not determine it (a weight
passed as an argument, a multiplier, an integer step count, an input no
inversion reaches), whether or not it is differentiated: a kept activation
would let the backward pass recompute the whole body forwards from it, every
intermediate live at once (:func:`kept_operands`).  The gradients of kept
arguments flow like those of constants.  The backward program is staged
when the JVP is taken, so an error names the equation at the ``grad`` call.

``custom_ivjp_call`` differentiates as its function does; inside an
invertible body its ``ivjp`` rule rebuilds its inputs and their cotangents.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from plait_autodiff.invertible import InvertibilityError, fallback_enabled, reconstruct
from plait_autodiff.invertible_check import check_drift, drift
from plait_autodiff.invertible_plan import PlanError, plan_kept
from plait_autodiff.jaxpr_util import eval_jaxpr
from plait_autodiff.jvp import jvp_flat
from plait_autodiff.registries import jvp_rules, transpose_rules
from plait_autodiff.tangents import Zero, instantiate, to_tangent_type
from plait_autodiff.transpose import backward_pass
from plait_core import ClosedJaxpr, Tracer, dtypes
from plait_core.config import config
from plait_core.dce import dce_closed_jaxpr
from plait_core.invertible import DriftCheck, register_invertible_analysis
from plait_core.primitives.ad_helpers import invertible_lin_p
from plait_core.primitives.calls import custom_ivjp_call_p, invertible_call_p
from plait_core.staging import trace_to_jaxpr

__all__ = ["invertible_lin_p"]

def _split_operands(args: Sequence[Any], jaxpr: ClosedJaxpr, known: tuple[bool, ...]) -> tuple[list[Any], list[Any], list[Any]]:
    nk, ny = sum(known), len(jaxpr.out_avals)
    return list(args[:nk]), list(args[nk : nk + ny]), list(args[nk + ny :])


def _inputs(known_vals: Sequence[Any], known: tuple[bool, ...]) -> list[Any]:
    it = iter(known_vals)
    return [next(it) if k else None for k in known]


def _invertible_lin_impl(
    *args: Any, jaxpr: ClosedJaxpr, name: str, known: tuple[bool, ...], nonzeros: tuple[bool, ...]
) -> list[Any]:
    # Forward evaluation (the linearized function applied to tangents):
    # rebuild the inputs, then differentiate the body forwards.
    known_vals, ys, tangents = _split_operands(args, jaxpr, known)
    xs, _ = reconstruct(jaxpr, _inputs(known_vals, known), ys, None, name)
    it = iter(tangents)
    ts = [next(it) if z else Zero(to_tangent_type(a)) for z, a in zip(nonzeros, jaxpr.in_avals)]
    _, out_ts = jvp_flat(lambda *v: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *v), xs, ts)
    return [instantiate(t) for t in out_ts]


# Forward evaluation needs forward-mode differentiation, so autodiff installs it.
invertible_lin_p.def_impl(_invertible_lin_impl)


# ---------------------------------------------------------------------------
# The backward program, staged (and so checked) once per body and flags

_backward_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, ClosedJaxpr]] = weakref.WeakKeyDictionary()


def backward_jaxpr(jaxpr: ClosedJaxpr, name: str, known: tuple[bool, ...], nonzeros: tuple[bool, ...]) -> ClosedJaxpr:
    """The invertible backward pass of ``jaxpr``: ``(*known inputs, *outputs,
    *output cotangents) -> cotangents of the nonzero inputs``.  Raises
    :class:`InvertibilityError` naming the first equation it cannot invert."""
    key = (known, nonzeros, config.x64_enabled)
    per_jaxpr = _backward_cache.get(jaxpr)
    if per_jaxpr is not None and key in per_jaxpr:
        return per_jaxpr[key]
    in_avals = jaxpr.in_avals
    known_avals = [a for a, k in zip(in_avals, known) if k]
    out_avals = jaxpr.out_avals
    ct_avals = [to_tangent_type(a) for a in out_avals]

    def backward(*vals: Any) -> list[Any]:
        nk, ny = len(known_avals), len(out_avals)
        known_vals, ys, cts = vals[:nk], vals[nk : nk + ny], vals[nk + ny :]
        _, cts_in = reconstruct(jaxpr, _inputs(known_vals, known), ys, list(cts), name)
        assert cts_in is not None
        return [instantiate(c) for c, z in zip(cts_in, nonzeros) if z]

    staged, _ = dce_closed_jaxpr(trace_to_jaxpr(backward, [*known_avals, *out_avals, *ct_avals]))
    if not any(isinstance(c, Tracer) for c in staged.consts):
        _backward_cache.setdefault(jaxpr, {})[key] = staged
    return staged


def _invertible_lin_transpose(
    cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, name: str, known: tuple[bool, ...], nonzeros: tuple[bool, ...]
) -> list[Any]:
    known_vals, ys, _tangents = _split_operands(args, jaxpr, known)
    bwd = backward_jaxpr(jaxpr, name, known, nonzeros)
    cts_in = eval_jaxpr(bwd.jaxpr, bwd.consts, *known_vals, *ys, *[instantiate(c) for c in cts])
    return [None] * (len(known_vals) + len(ys)) + list(cts_in)


transpose_rules[invertible_lin_p] = _invertible_lin_transpose
jvp_rules.not_supported(
    invertible_lin_p,
    "invertible_lin only appears in linearized programs, which are transposed, not differentiated again",
)


# ---------------------------------------------------------------------------
# invertible_call


_kept_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, tuple[bool, ...]]] = weakref.WeakKeyDictionary()


def describe_kept(known: Sequence[bool], num_consts: int) -> str:
    """``known`` flags of an ``invertible_call``'s operands, in words."""
    kept = [i - num_consts for i, k in enumerate(known) if k and i >= num_consts]
    args = f"arguments {kept}" if kept else "no argument"
    return f"it kept its {num_consts} constants and {args} (flat positions)"


def kept_operands(jaxpr: ClosedJaxpr, name: str, num_consts: int, nonzeros: tuple[bool, ...]) -> tuple[bool, ...]:
    """Which operands of an ``invertible_call`` its backward pass keeps (the
    ``known`` flags of ``invertible_lin``): every constant, and the arguments
    the outputs do not determine (:func:`~plait_autodiff.invertible_plan.plan_kept`),
    differentiated or not.  The backward program is staged here, so a failure
    is an :class:`InvertibilityError` at the ``grad`` call naming the equation
    and what was kept."""
    key = (num_consts, nonzeros, config.x64_enabled)
    per_jaxpr = _kept_cache.get(jaxpr)
    if per_jaxpr is not None and key in per_jaxpr:
        return per_jaxpr[key]
    consts = tuple(i < num_consts for i in range(len(nonzeros)))
    try:
        known = plan_kept(jaxpr.jaxpr, consts, nonzeros)
    except PlanError as e:
        raise InvertibilityError(f"cannot invert the invertible function {name}: {e}, and no argument kept would help") from None
    try:
        backward_jaxpr(jaxpr, name, known, nonzeros)
    except InvertibilityError as e:
        raise InvertibilityError(f"{e}; {describe_kept(known, num_consts)}") from None
    _kept_cache.setdefault(jaxpr, {})[key] = known
    return known


def _invertible_call_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    jaxpr: ClosedJaxpr,
    name: str,
    num_consts: int,
    check: DriftCheck | None,
) -> tuple[list[Any], list[Any]]:
    nz = tuple(type(t) is not Zero for t in tangents)
    try:
        known = kept_operands(jaxpr, name, num_consts, nz)
    except InvertibilityError:
        if not fallback_enabled():
            raise
        return _ordinary_jvp(jaxpr, primals, tangents)
    if check is not None:
        check_drift(jaxpr, name, known, primals, num_consts, check)
    ans = invertible_call_p.bind(*primals, jaxpr=jaxpr, name=name, num_consts=num_consts, check=check)
    known_vals = [p for p, k in zip(primals, known) if k]
    given = [t for t in tangents if type(t) is not Zero]
    out = invertible_lin_p.bind(*known_vals, *ans, *given, jaxpr=jaxpr, name=name, known=known, nonzeros=nz)
    return list(ans), list(out)


def _ordinary_jvp(jaxpr: ClosedJaxpr, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    return jvp_flat(lambda *v: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *v), primals, tangents)


jvp_rules[invertible_call_p] = _invertible_call_jvp


# ---------------------------------------------------------------------------
# What core's Invertible.residuals and .drift ask


def _every_float_argument(jaxpr: ClosedJaxpr, num_consts: int) -> tuple[bool, ...]:
    return tuple(i >= num_consts and dtypes.is_inexact(a.dtype) for i, a in enumerate(jaxpr.in_avals))


def _kept_analysis(jaxpr: ClosedJaxpr, num_consts: int, name: str) -> tuple[bool, ...]:
    return kept_operands(jaxpr, name, num_consts, _every_float_argument(jaxpr, num_consts))


def _drift_analysis(jaxpr: ClosedJaxpr, num_consts: int, name: str, *operands: Any) -> tuple[list[Any], dict[str, Any]]:
    known = _kept_analysis(jaxpr, num_consts, name)
    per_operand, per_block = drift(jaxpr, name, known, operands)
    return per_operand[num_consts:], per_block


register_invertible_analysis("kept", _kept_analysis)
register_invertible_analysis("drift", _drift_analysis)


def _inline_transpose(param: str) -> Any:
    def rule(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
        closed: ClosedJaxpr = params[param]
        return backward_pass(closed.jaxpr, closed.consts, args, cts)

    return rule


transpose_rules[invertible_call_p] = _inline_transpose("jaxpr")


# ---------------------------------------------------------------------------
# custom_ivjp_call: an ordinary function outside invertible bodies


def _custom_ivjp_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[list[Any], list[Any]]:
    return _ordinary_jvp(params["call_jaxpr"], primals, tangents)


jvp_rules[custom_ivjp_call_p] = _custom_ivjp_call_jvp
transpose_rules[custom_ivjp_call_p] = _inline_transpose("call_jaxpr")
