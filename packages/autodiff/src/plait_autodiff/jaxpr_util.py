"""Rearranging closed jaxprs for higher-order primitives: reorder inputs and
outputs, add unused inputs, move constants into inputs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import ClosedJaxpr, Jaxpr, Var
from plait_core.abstract import ShapedArray
from plait_core.jaxpr import eval_jaxpr, literal_value
from plait_core.primitives.control_flow import convert_constvars
from plait_core.primitives.elementwise import convert_element_type_p

__all__ = ["eval_jaxpr", "hoist_consts", "literal_value", "reorder", "restage", "with_unused_inputs"]


def reorder(closed: ClosedJaxpr, in_order: Sequence[int] | None = None, out_order: Sequence[int] | None = None) -> ClosedJaxpr:
    """``closed`` taking its inputs as ``[invars[i] for i in in_order]`` and
    returning ``[outvars[i] for i in out_order]``."""
    j = closed.jaxpr
    invars = j.invars if in_order is None else [j.invars[i] for i in in_order]
    outvars = j.outvars if out_order is None else [j.outvars[i] for i in out_order]
    return ClosedJaxpr(Jaxpr(j.constvars, list(invars), list(outvars), j.eqns), closed.consts)


def with_unused_inputs(closed: ClosedJaxpr, avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """``closed`` taking extra trailing inputs of types ``avals`` that it ignores."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, [*j.invars, *(Var(a) for a in avals)], j.outvars, j.eqns), closed.consts)


def hoist_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """A const-free jaxpr taking the constants as leading inputs, and their values."""
    return convert_constvars(closed)


def restage(closed: ClosedJaxpr, in_avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """``closed`` staged again for inputs of types ``in_avals`` (same shapes and
    dtypes, other weak types)."""
    from plait_core.staging import trace_to_jaxpr

    return trace_to_jaxpr(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), list(in_avals))


def strengthen_carries(
    body: ClosedJaxpr, first: int, count: int, init: Sequence[Any]
) -> tuple[ClosedJaxpr, list[Any], list[bool]]:
    """Make a loop's weakly typed carries (inputs ``first .. first + count`` of
    ``body``) strongly typed: the body staged again and the initial values
    converted.  Returns them and which carries were weak (to convert the
    loop's results back).  Loops built by autodiff are partially evaluated
    by core, whose re-staging of bodies may turn weak results strong."""
    avals = body.in_avals
    weak = [a.weak_type for a in avals[first : first + count]]
    if not any(weak):
        return body, list(init), weak
    new_avals = [a.strip_weak_type() if first <= i < first + count else a for i, a in enumerate(avals)]
    new_init = [
        convert_element_type_p.bind(x, new_dtype=a.dtype, weak_type=False) if w else x
        for x, a, w in zip(init, avals[first : first + count], weak)
    ]
    return restage(body, new_avals), new_init, weak


def weaken(values: Sequence[Any], weak: Sequence[bool]) -> list[Any]:
    """Undo :func:`strengthen_carries` on a loop's carried results."""
    from plait_core import get_aval

    out = []
    for x, w in zip(values, weak):
        if w:
            a = get_aval(x)
            x = convert_element_type_p.bind(x, new_dtype=a.dtype, weak_type=True)
        out.append(x)
    return out
