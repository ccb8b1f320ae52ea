"""Reverse mode: transposing linear jaxprs.

A linear jaxpr (what :func:`~plait_autodiff.api.linearize` produces, or a
linear function staged by ``linear_transpose``) is run backwards: equations
that do not depend on a linear input are evaluated forwards first (they
compute residual-only values), then the linear equations are visited in
reverse order, each primitive's rule in
:data:`~plait_autodiff.registries.transpose_rules` mapping the cotangents of
its outputs to cotangents of its linear inputs.  Cotangents of a variable
read several times are summed with ``add_any``; symbolic zeros
(:class:`~plait_autodiff.tangents.Zero`) skip work.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from plait_autodiff.jaxpr_util import literal_value
from plait_autodiff.registries import transpose_rules
from plait_autodiff.tangents import Zero, add_tangents, instantiate, is_float0, to_tangent_type
from plait_core import ClosedJaxpr, Jaxpr, Tracer, Var
from plait_core.abstract import ShapedArray
from plait_core.config import config
from plait_core.jaxpr import Literal
from plait_core.staging import trace_to_jaxpr

__all__ = [
    "NonlinearError",
    "UndefinedPrimal",
    "backward_pass",
    "is_undefined",
    "transpose_jaxpr",
    "transpose_nonzeros",
]


class UndefinedPrimal:
    """Marks a linear input of a primitive being transposed: its value is not
    known, only its type (``aval``, the primal type)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x: Any) -> bool:
    """True for an :class:`UndefinedPrimal` (a linear input)."""
    return type(x) is UndefinedPrimal


class NonlinearError(TypeError):
    """A function given to reverse mode or ``linear_transpose`` is not linear in
    the inputs being transposed."""


def _not_transposable(prim_name: str, reason: str) -> NonlinearError:
    return NonlinearError(
        f"cannot transpose {prim_name}: {reason}. Transposition needs a function that is linear in its "
        "inputs (linear_transpose), or a linearized function (vjp, grad)"
    )


def backward_pass(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any], cts_out: Sequence[Any]) -> list[Any]:
    """Transpose ``jaxpr`` with respect to its inputs marked :class:`UndefinedPrimal`.

    ``args`` holds a value for each non-linear input and an
    ``UndefinedPrimal`` for each linear one; ``cts_out`` one cotangent (or
    :class:`Zero`) per output.  Returns one cotangent per input: a value or
    a ``Zero`` for linear inputs, ``None`` for the others."""
    env: dict[Var, Any] = {}
    linear: set[Var] = set()
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        if is_undefined(x):
            linear.add(v)
        else:
            env[v] = x

    def read(a: Any) -> Any:
        return literal_value(a) if type(a) is Literal else env[a]

    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(type(a) is Var and a in linear for a in eqn.invars):
            linear_eqns.append(eqn)
            linear.update(eqn.outvars)
            continue
        out = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outvars, out))
        else:
            env[eqn.outvars[0]] = out

    cts: dict[Var, Any] = {}

    def write(v: Any, ct: Any) -> None:
        # A float0 cotangent (of an integer or boolean value) is a zero, as in JAX:
        # no transpose rule meets one as a value.
        if type(v) is not Var or v not in linear or ct is None or type(ct) is Zero or is_float0(v.aval):
            return
        cts[v] = add_tangents(cts[v], ct) if v in cts else ct

    for a, ct in zip(jaxpr.outvars, cts_out):
        write(a, ct)

    for eqn in reversed(linear_eqns):
        outs = [cts.pop(v, None) for v in eqn.outvars]
        if all(ct is None for ct in outs):
            continue
        prim = eqn.primitive
        invals = [
            UndefinedPrimal(a.aval) if type(a) is Var and a in linear else read(a) for a in eqn.invars
        ]
        rule = transpose_rules.get(prim)
        if rule is None:
            reason = transpose_rules.unsupported_reason(prim)
            raise _not_transposable(prim.name, reason or f"{prim.name} is not a linear primitive")
        if prim.multiple_results:
            ct_arg: Any = [Zero(to_tangent_type(v.aval)) if ct is None else ct for v, ct in zip(eqn.outvars, outs)]
        else:
            ct_arg = outs[0]
        cts_in = rule(ct_arg, *invals, **eqn.params)
        for a, ct in zip(eqn.invars, cts_in):
            write(a, ct)

    return [
        (cts.get(v, Zero(to_tangent_type(v.aval))) if is_undefined(x) else None) for v, x in zip(jaxpr.invars, args)
    ]


# ---------------------------------------------------------------------------
# Transposing a closed jaxpr into another (for higher-order primitives)

_transpose_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, tuple[ClosedJaxpr, tuple[bool, ...]]]] = (
    weakref.WeakKeyDictionary()
)


def transpose_jaxpr(
    closed: ClosedJaxpr, linear: Sequence[bool], ct_nonzeros: Sequence[bool]
) -> ClosedJaxpr:
    """The transpose of ``closed`` with respect to its ``linear`` inputs.

    The result takes ``(*non-linear inputs, *cotangents of the outputs
    flagged in ct_nonzeros)`` and returns one cotangent per linear input
    (zeros instantiated).  Cached per jaxpr."""
    return _transpose(closed, linear, ct_nonzeros)[0]


def transpose_nonzeros(closed: ClosedJaxpr, linear: Sequence[bool], ct_nonzeros: Sequence[bool]) -> tuple[bool, ...]:
    """For each linear input of ``closed``, whether :func:`transpose_jaxpr`'s
    cotangent of it may be nonzero (``False``: the zeros it returns there are
    a symbolic zero instantiated, which a rule should pass on as a
    :class:`~plait_autodiff.tangents.Zero`, so that no ``0 * x`` with a
    non-finite ``x`` is computed from it)."""
    return _transpose(closed, linear, ct_nonzeros)[1]


def _transpose(
    closed: ClosedJaxpr, linear: Sequence[bool], ct_nonzeros: Sequence[bool]
) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    lin = tuple(bool(b) for b in linear)
    ctnz = tuple(bool(b) for b in ct_nonzeros)
    key = (lin, ctnz, config.x64_enabled)
    per_jaxpr = _transpose_cache.get(closed)
    if per_jaxpr is not None and key in per_jaxpr:
        return per_jaxpr[key]
    in_avals = closed.in_avals
    res_avals = [a for a, is_lin in zip(in_avals, lin) if not is_lin]
    ct_avals = [to_tangent_type(a) for a, nz in zip(closed.out_avals, ctnz) if nz]
    nonzeros: list[bool] = []

    def fun(*xs: Any) -> list[Any]:
        res, given = iter(xs[: len(res_avals)]), iter(xs[len(res_avals) :])
        args = [UndefinedPrimal(a) if is_lin else next(res) for a, is_lin in zip(in_avals, lin)]
        cts_out = [next(given) if nz else Zero(to_tangent_type(a)) for a, nz in zip(closed.out_avals, ctnz)]
        cts_in = backward_pass(closed.jaxpr, closed.consts, args, cts_out)
        nonzeros[:] = [type(ct) is not Zero for ct, is_lin in zip(cts_in, lin) if is_lin]
        return [instantiate(ct) for ct, is_lin in zip(cts_in, lin) if is_lin]

    result = (trace_to_jaxpr(fun, [*res_avals, *ct_avals]), tuple(nonzeros))
    if not any(isinstance(c, Tracer) for c in [*result[0].consts, *closed.consts]):
        _transpose_cache.setdefault(closed, {})[key] = result
    return result
