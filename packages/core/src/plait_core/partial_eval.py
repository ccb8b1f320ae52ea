"""Partial evaluation: compute what is known now, stage what is not.

The partial-evaluation trace is a staging trace with one twist: a primitive
whose inputs are all *known* (anything that is not one of its tracers) is
evaluated right away on the parent trace, so Python control flow on known
values works; a primitive with an *unknown* input is staged into the jaxpr of
the unknown part, and the known values it reads become that jaxpr's
constvars — the residuals.  ``linearize``, ``vjp`` and ``checkpoint`` are
built on this.

Higher-order primitives may register a rule in :data:`partial_eval_rules` to
split their own bodies (so a ``cond`` with known operands computes its known
half now); without one they are staged whole.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from plait_core.abstract import ShapedArray
from plait_core.axes import axis_frame_size, bound_axis_names
from plait_core.config import config
from plait_core.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from plait_core.primitive import Primitive, RuleRegistry
from plait_core.staging import StagingTrace, StagingTracer
from plait_core.trace import Tracer, set_current_trace, transformation
from plait_core.tree_util import tree_leaves

PartialEvalRule = Callable[["PartialEvalTrace", Sequence[Any], dict[str, Any]], Any]

#: Rules splitting higher-order primitives into known and unknown parts.
partial_eval_rules: RuleRegistry[PartialEvalRule] = RuleRegistry("partial evaluation")


class PartialVal:
    """An input of partial evaluation: a known value, or an unknown of some type."""

    __slots__ = ("aval", "value")

    def __init__(self, value: Any, aval: ShapedArray | None) -> None:
        self.value = value
        self.aval = aval

    @classmethod
    def known(cls, value: Any) -> PartialVal:
        """A value known now."""
        return cls(value, None)

    @classmethod
    def unknown(cls, aval: ShapedArray) -> PartialVal:
        """A value known later, of abstract value ``aval``."""
        return cls(None, aval)

    @property
    def is_known(self) -> bool:
        return self.aval is None

    def __repr__(self) -> str:
        if self.aval is None:
            return f"PartialVal.known({self.value!r})"
        return f"PartialVal.unknown({self.aval!r})"


class PartialEvalTrace(StagingTrace):
    """Evaluates known computations on the parent; stages unknown ones."""

    __slots__ = ()

    def describe(self) -> str:
        return "partial evaluation"

    def is_unknown(self, x: Any) -> bool:
        """True for this trace's own (unknown) tracers."""
        return type(x) is StagingTracer and x._trace is self

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        for x in args:
            if type(x) is StagingTracer and x._trace is self:
                break
        else:
            with set_current_trace(self.parent):  # type: ignore[arg-type]
                return prim.bind(*args, **params)
        rule = partial_eval_rules.get(prim)
        if rule is not None:
            return rule(self, args, params)
        return StagingTrace.process_primitive(self, prim, args, params)

    def process_custom_derivative_call(self, fun: Any, args: tuple[Any, ...]) -> Any:
        """A call on known values only is known: it runs on the parent."""
        parent = self.parent
        if parent is None or any(self.is_unknown(x) for x in tree_leaves(args)):
            return NotImplemented
        with set_current_trace(parent):
            return fun(*args)

    def stage(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        """Stage ``prim`` as unknown, whatever its inputs (for rules)."""
        return StagingTrace.process_primitive(self, prim, args, params)

    def instantiate(self, x: Any) -> StagingTracer:
        """``x`` as an unknown tracer (a known value becomes a residual)."""
        if self.is_unknown(x):
            return x  # type: ignore[no-any-return]
        atom = self.const_atom(x, None)
        return StagingTracer(self, atom.aval, atom)


def trace_to_jaxpr_partial(
    fun: Callable[..., Sequence[Any]],
    pvals: Sequence[PartialVal],
    instantiate: bool | Sequence[bool] = False,
) -> tuple[ClosedJaxpr, list[PartialVal]]:
    """Run ``fun`` (flat) on partially known inputs.

    Returns the closed jaxpr of the unknown part — its invars are the unknown
    inputs, its constants the residuals — and one :class:`PartialVal` per
    output (known outputs carry their values).  ``instantiate`` forces outputs
    to be unknown."""
    trace = PartialEvalTrace()
    with transformation(trace):
        args = [pv.value if pv.is_known else trace.new_arg(pv.aval) for pv in pvals]  # type: ignore[arg-type]
        outs = list(fun(*args))
        inst = [instantiate] * len(outs) if isinstance(instantiate, bool) else list(instantiate)
        out_pvals: list[PartialVal] = []
        unknown_outs = []
        for o, force in zip(outs, inst):
            if trace.is_unknown(o) or force:
                t = trace.instantiate(o)
                unknown_outs.append(t)
                out_pvals.append(PartialVal.unknown(t.aval))
            else:
                out_pvals.append(PartialVal.known(o))
        closed = trace.to_closed_jaxpr(unknown_outs)
    return closed, out_pvals


def partial_eval_jaxpr(
    closed: ClosedJaxpr,
    in_unknowns: Sequence[bool],
    instantiate: bool | Sequence[bool] = False,
) -> tuple[ClosedJaxpr, ClosedJaxpr, list[bool], int]:
    """Split a jaxpr into a known and an unknown part.

    Returns ``(known, unknown, out_unknowns, num_residuals)``: ``known`` takes
    the known inputs and returns the known outputs followed by the residuals;
    ``unknown`` takes the residuals followed by the unknown inputs and returns
    the unknown outputs.  Results are cached per jaxpr (unless its constants
    hold tracers), so that splitting one call again (an eager ``grad`` of a
    ``jit`` function, called in a loop) gives the same jaxprs, which a compiling
    backend finds compiled."""
    inst = instantiate if isinstance(instantiate, bool) else tuple(bool(f) for f in instantiate)
    names = bound_axis_names()
    key = (tuple(bool(u) for u in in_unknowns), inst, config.x64_enabled,
           tuple((n, axis_frame_size(n)) for n in names))
    per = _pe_cache.get(closed)
    hit = None if per is None else per.get(key)
    if hit is not None:
        return hit[0], hit[1], list(hit[2]), hit[3]
    known, unknown, out_unknowns, num_res = _split(closed, in_unknowns, instantiate)
    if not _holds_tracers(closed.consts) and not _holds_tracers(known.consts):
        _pe_cache.setdefault(closed, {})[key] = (known, unknown, tuple(out_unknowns), num_res)
    return known, unknown, out_unknowns, num_res


_pe_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Hashable, tuple[ClosedJaxpr, ClosedJaxpr, tuple[bool, ...], int]]] = (
    weakref.WeakKeyDictionary()
)


def _holds_tracers(values: Sequence[Any]) -> bool:
    return any(isinstance(v, Tracer) for v in values)


def _split(
    closed: ClosedJaxpr,
    in_unknowns: Sequence[bool],
    instantiate: bool | Sequence[bool],
) -> tuple[ClosedJaxpr, ClosedJaxpr, list[bool], int]:
    outer = StagingTrace()
    with transformation(outer):
        known_args = [outer.new_arg(a) for a, u in zip(closed.in_avals, in_unknowns) if not u]
        pe = PartialEvalTrace()
        with transformation(pe):
            it = iter(known_args)
            args = [pe.new_arg(a) if u else next(it) for a, u in zip(closed.in_avals, in_unknowns)]
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
            inst = [instantiate] * len(outs) if isinstance(instantiate, bool) else list(instantiate)
            out_unknowns = [pe.is_unknown(o) or f for o, f in zip(outs, inst)]
            unknown_outs = [pe.instantiate(o) for o, u in zip(outs, out_unknowns) if u]
            unknown_part = pe.to_closed_jaxpr(unknown_outs)
        residuals = unknown_part.consts
        known_outs = [o for o, u in zip(outs, out_unknowns) if not u]
        known = outer.to_closed_jaxpr(known_outs + residuals)
    uj = unknown_part.jaxpr
    unknown = ClosedJaxpr(Jaxpr([], uj.constvars + uj.invars, uj.outvars, uj.eqns), [])
    return known, unknown, out_unknowns, len(residuals)
