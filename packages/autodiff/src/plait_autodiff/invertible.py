"""Invertible reverse mode: rebuild intermediates from outputs instead of storing them.

The backward pass of an ``invertible_call`` has the function's outputs (and
the values it treats as known: its constants and the arguments that are not
differentiated).  :func:`reconstruct` walks the body's equations in reverse
order; for each one whose outputs are known it

1. computes forward whatever of its other inputs can be computed from known
   values (``b = G(y1)`` in ``y2 = x2 + b``), then
2. solves for its one unknown input with the primitive's inverse rule
   (:data:`~plait_autodiff.registries.inverse_rules`: ``x2 = y2 - b``), and
3. in lock-step, maps the cotangents of its outputs to cotangents of its
   inputs (the equation's own VJP).

Calls are inverted recursively and ``custom_ivjp`` functions by their rule.
An equation that cannot be inverted is an :class:`InvertibilityError`
naming it; inside :func:`invertible_fallback` such a function is
differentiated by ordinary reverse mode instead.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from plait_autodiff.jaxpr_util import literal_value
from plait_autodiff.registries import inverse_rules
from plait_autodiff.tangents import Zero, add_tangents, to_tangent_type
from plait_core import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from plait_core.dce import dce_jaxpr
from plait_core.primitives.calls import (
    CALL_PRIMITIVES,
    called_jaxpr,
    custom_ivjp_call_p,
    custom_jvp_call_p,
    custom_vjp_call_p,
)

__all__ = ["CannotInvert", "InvertibilityError", "invertible_fallback", "reconstruct"]


#: Calls whose derivative is a rule of their own, not their body's.
_CUSTOM_DERIVATIVE_CALLS = (custom_jvp_call_p, custom_vjp_call_p)


class InvertibilityError(ValueError):
    """A function marked ``invertible`` has an equation that cannot be inverted."""


class CannotInvert(Exception):
    """Raised by an inverse rule that cannot solve for the unknown input (the reason)."""


class _Fallback(threading.local):
    def __init__(self) -> None:
        self.enabled = False


_fallback = _Fallback()


@contextlib.contextmanager
def invertible_fallback(enabled: bool = True) -> Iterator[None]:
    """Inside this block, differentiating an ``invertible`` function whose
    jaxpr cannot be inverted falls back to ordinary reverse mode (storing
    intermediates) instead of raising :class:`InvertibilityError`."""
    prev = _fallback.enabled
    _fallback.enabled = enabled
    try:
        yield
    finally:
        _fallback.enabled = prev


def fallback_enabled() -> bool:
    """Whether :func:`invertible_fallback` is active."""
    return _fallback.enabled


def _describe_eqn(k: int, eqn: JaxprEqn, name: str) -> str:
    return f"equation {k} of the invertible function {name}, `{eqn!r}`"


class _Reconstruction:
    """The state of one backward walk over a body."""

    def __init__(self, jaxpr: Jaxpr, name: str, want_cts: bool) -> None:
        self.jaxpr, self.name, self.want_cts = jaxpr, name, want_cts
        self.env: dict[Var, Any] = {}
        self.cts: dict[Var, Any] = {}
        self.producer: dict[Var, tuple[int, JaxprEqn]] = {
            v: (k, e) for k, e in enumerate(jaxpr.eqns) for v in e.outvars
        }
        self.failed: dict[int, int] = {}  # eqn index -> number of known values when it failed
        self.done: set[int] = set()

    def known(self, a: Any) -> bool:
        return type(a) is Literal or a in self.env

    def read(self, a: Any) -> Any:
        return literal_value(a) if type(a) is Literal else self.env[a]

    def ensure(self, a: Any, visiting: set[int]) -> bool:
        """Make ``a`` known by computing it forward from known values, if possible."""
        if self.known(a):
            return True
        found = self.producer.get(a)
        if found is None:
            return False
        k, eqn = found
        if k in visiting or self.failed.get(k) == len(self.env):
            return False
        visiting.add(k)
        ok = all(self.ensure(b, visiting) for b in eqn.invars)
        visiting.discard(k)
        if not ok:
            self.failed[k] = len(self.env)
            return False
        out = eqn.primitive.bind(*[self.read(b) for b in eqn.invars], **eqn.params)
        self.env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))
        return True

    def add_ct(self, v: Any, ct: Any) -> None:
        if type(v) is not Var or ct is None or type(ct) is Zero:
            return
        self.cts[v] = add_tangents(self.cts[v], ct) if v in self.cts else ct

    def step(self, k: int, eqn: JaxprEqn) -> None:
        where = _describe_eqn(k, eqn, self.name)
        if not all(self.known(v) or self.ensure(v, set()) for v in eqn.outvars):
            raise InvertibilityError(
                f"cannot invert {where}: its results are not determined by the function's outputs"
            )
        unknown = [i for i, a in enumerate(eqn.invars) if not self.known(a) and not self.ensure(a, set())]
        outs = [self.read(v) for v in eqn.outvars]
        cts_out = [self.cts.pop(v, None) for v in eqn.outvars] if self.want_cts else []
        need_cts = any(c is not None for c in cts_out)
        if not unknown and not need_cts:
            return
        ins: list[Any] = [None if i in unknown else self.read(a) for i, a in enumerate(eqn.invars)]
        if len({eqn.invars[i] for i in unknown}) < len(unknown):
            raise InvertibilityError(
                f"cannot invert {where}: the value to rebuild is used by more than one of its operands"
            )
        if len(unknown) > 1 and not (eqn.primitive in CALL_PRIMITIVES or eqn.primitive is custom_ivjp_call_p):
            raise InvertibilityError(
                f"cannot invert {where}: {len(unknown)} of its operands are unknown (operands {unknown}); "
                "an equation is inverted for one operand, the others must be computable from known values"
            )
        ct_list = [Zero(to_tangent_type(v.aval)) if c is None else c for v, c in zip(eqn.outvars, cts_out)]
        full, cts_in = _invert_eqn(eqn, ins, outs, ct_list if need_cts else None, where)
        for i in unknown:
            self.env[eqn.invars[i]] = full[i]  # type: ignore[index]
        if cts_in is not None:
            for a, c in zip(eqn.invars, cts_in):
                self.add_ct(a, c)


def _invert_eqn(
    eqn: JaxprEqn, ins: list[Any], outs: list[Any], cts: list[Any] | None, where: str
) -> tuple[list[Any], list[Any] | None]:
    """Solve ``eqn`` for its unknown inputs (``None`` in ``ins``) and, when
    ``cts`` are given, map them to input cotangents."""
    prim = eqn.primitive
    if prim is custom_ivjp_call_p:
        xs, dxs = eqn.params["ivjp"](ins, outs, None if cts is None else [None if type(c) is Zero else c for c in cts])
        return list(xs), (None if cts is None else list(dxs))
    if prim in CALL_PRIMITIVES and any(x is None for x in ins):
        body = called_jaxpr(prim, eqn.params)
        name = eqn.params.get("name", prim.name)
        if prim not in _CUSTOM_DERIVATIVE_CALLS:
            return reconstruct(body, ins, outs, cts, name)
        # Rebuild the inputs through the body, but differentiate by the
        # function's own rule (which the body does not know).
        full, _ = reconstruct(body, ins, outs, None, name)
    elif any(x is None for x in ins):
        rule = inverse_rules.get(prim)
        if rule is None:
            raise InvertibilityError(f"cannot invert {where}: {prim.name} has no inverse rule")
        try:
            full = rule([a.aval for a in eqn.invars], outs, ins, **eqn.params)
        except CannotInvert as e:
            raise InvertibilityError(f"cannot invert {where}: {e}") from None
    else:
        full = ins
    if cts is None:
        return full, None
    return full, _eqn_vjp(eqn, full, cts)


def _eqn_vjp(eqn: JaxprEqn, ins: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
    """Cotangents of one equation's inputs, by linearizing it at ``ins``."""
    from plait_autodiff.api import linearize_flat
    from plait_autodiff.transpose import UndefinedPrimal, backward_pass

    prim, params = eqn.primitive, eqn.params
    # Literal operands are constants of the equation: no cotangent for them.
    varying = [i for i, a in enumerate(eqn.invars) if type(a) is Var]

    def f(*xs: Any) -> list[Any]:
        args = list(ins)
        for i, x in zip(varying, xs):
            args[i] = x
        out = prim.bind(*args, **params)
        return list(out) if prim.multiple_results else [out]

    _, linear = linearize_flat(f, [ins[i] for i in varying])
    cts_var = backward_pass(linear.jaxpr, linear.consts, [UndefinedPrimal(a) for a in linear.in_avals], list(cts))
    out: list[Any] = [None] * len(ins)
    for i, c in zip(varying, cts_var):
        out[i] = c
    return out


def reconstruct(
    closed: ClosedJaxpr,
    inputs: Sequence[Any],
    outputs: Sequence[Any],
    cts: Sequence[Any] | None,
    name: str,
    record: dict[Var, Any] | None = None,
) -> tuple[list[Any], list[Any] | None]:
    """Rebuild the unknown inputs (``None`` in ``inputs``) of ``closed`` from its
    ``outputs``, equation by equation in reverse order; with ``cts`` (one per
    output, ``Zero`` allowed) also return one cotangent per input (``Zero``
    where none flows).  ``record``, when given, receives every value of the
    body's top level that the walk knew or rebuilt."""
    jaxpr, _ = dce_jaxpr(closed.jaxpr)
    state = _Reconstruction(jaxpr, name, cts is not None)
    state.env.update(zip(jaxpr.constvars, closed.consts))
    for v, x in zip(jaxpr.invars, inputs):
        if x is not None:
            state.env[v] = x
    for a, y in zip(jaxpr.outvars, outputs):
        if type(a) is Var and a not in state.env:
            state.env[a] = y
    if cts is not None:
        for a, c in zip(jaxpr.outvars, cts):
            state.add_ct(a, c)
    for k in range(len(jaxpr.eqns) - 1, -1, -1):
        state.step(k, jaxpr.eqns[k])
    for i, (v, x) in enumerate(zip(jaxpr.invars, inputs)):
        if x is None and v not in state.env:
            raise InvertibilityError(
                f"cannot invert the invertible function {name}: its input {i} ({v.aval.str_short()}) is not "
                "determined by its outputs and was not kept"
            )
    full = [state.env[v] if x is None else x for v, x in zip(jaxpr.invars, inputs)]
    if record is not None:
        record.update(state.env)
    if cts is None:
        return full, None
    return full, [state.cts.get(v, Zero(to_tangent_type(v.aval))) for v in jaxpr.invars]
