"""The shapes rules share, factored once.

* :func:`defjvp`: an elementwise primitive's JVP from one derivative
  function per operand (``None`` where the operand does not matter);
* :func:`defjvp_zero`: primitives whose outputs have a zero derivative
  (comparisons, rounding, integer results);
* :func:`deflinear`: primitives linear in some operands (the others are
  indices or other non-differentiable values): the JVP applies the primitive
  to the tangents, the transpose is given;
* :func:`def_transpose`: register a transpose rule on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait_autodiff.registries import jvp_rules, transpose_rules
from plait_autodiff.tangents import Zero, add_tangents, instantiate
from plait_autodiff.transpose import NonlinearError, is_undefined
from plait_core import ops
from plait_core.primitive import Primitive

Deriv = Callable[..., Any]

__all__ = [
    "bcast_like",
    "declare_nonlinear",
    "def_transpose",
    "deflinear",
    "defjvp",
    "defjvp_zero",
    "linear_only_in",
    "zero_outputs",
]


def bcast_like(x: Any, ans: Any) -> Any:
    """A rank-0 operand (or tangent) broadcast to the shape of ``ans``."""
    return ops.broadcast_to(x, ops.aval(ans).shape)


def defjvp(prim: Primitive, *derivs: Deriv | None, broadcast: bool = False) -> None:
    """Define ``prim``'s JVP as a sum of per-operand contributions.

    ``derivs[i](t, ans, *primals, **params)`` is the output tangent due to the
    tangent ``t`` of operand ``i`` (``ans`` is the primal output).  With
    ``broadcast`` rank-0 operands and their tangents are first broadcast to
    the output's shape (for rules that select between operands)."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        ans = prim.bind(*primals, **params)
        if broadcast:
            primals = [bcast_like(x, ans) for x in primals]
            tangents = [t if type(t) is Zero else bcast_like(t, ans) for t in tangents]
        out: Any = Zero.from_primal_value(ans)
        for d, t in zip(derivs, tangents):
            if d is None or type(t) is Zero:
                continue
            out = add_tangents(out, bcast_like(d(t, ans, *primals, **params), ans))
        return ans, out

    jvp_rules[prim] = rule


def zero_outputs(prim: Primitive, ans: Any) -> Any:
    """Symbolic zero tangents for the outputs ``ans`` of ``prim``."""
    if prim.multiple_results:
        return [Zero.from_primal_value(a) for a in ans]
    return Zero.from_primal_value(ans)


def defjvp_zero(prim: Primitive) -> None:
    """``prim``'s outputs do not change with its inputs (almost everywhere)."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        ans = prim.bind(*primals, **params)
        return ans, zero_outputs(prim, ans)

    jvp_rules[prim] = rule


def linear_only_in(prim: Primitive, args: Sequence[Any], linear: Sequence[int]) -> None:
    """A transpose rule's check that only the operands at ``linear`` are linear inputs."""
    for i, x in enumerate(args):
        if is_undefined(x) and i not in linear:
            raise NonlinearError(
                f"cannot transpose {prim.name} with respect to its operand {i}: the result is not linear in it"
            )


def deflinear(
    prim: Primitive, transpose: Callable[..., Sequence[Any]] | None, linear_argnums: Sequence[int] | None = None
) -> None:
    """``prim`` is linear in the operands ``linear_argnums`` (all when ``None``)
    jointly; the others (indices, shapes) are used as they are.

    The JVP binds ``prim`` on the tangents of the linear operands (zeros
    instantiated) and the primals of the others; ``transpose(ct, *args,
    **params)`` maps the output cotangent to one cotangent per operand."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        ans = prim.bind(*primals, **params)
        lin = range(len(primals)) if linear_argnums is None else linear_argnums
        if all(type(tangents[i]) is Zero for i in lin):
            return ans, zero_outputs(prim, ans)
        args = [instantiate(tangents[i]) if i in lin else p for i, p in enumerate(primals)]
        return ans, prim.bind(*args, **params)

    jvp_rules[prim] = rule
    if transpose is not None:
        transpose_rules[prim] = transpose


def def_transpose(prim: Primitive) -> Callable[[Callable[..., Sequence[Any]]], Callable[..., Sequence[Any]]]:
    """Decorator registering a transpose rule for ``prim``."""

    def deco(rule: Callable[..., Sequence[Any]]) -> Callable[..., Sequence[Any]]:
        transpose_rules[prim] = rule
        return rule

    return deco


def declare_nonlinear(*prims: Primitive) -> None:
    """Record that these primitives have no transpose because they are not
    linear (those that have a transpose rule are skipped).  Reverse mode never
    needs one: their JVPs are built from linear primitives, and those are
    what a linearized program contains."""
    for p in prims:
        if p not in transpose_rules:
            transpose_rules.not_supported(
                p,
                f"{p.name} is not linear in its operands; its JVP is built from linear primitives, "
                "which are what reverse mode transposes",
            )
