"""Dead-code elimination on jaxprs.

Primitives are pure, so an equation none of whose outputs is used can go,
unless it has effects (:data:`effect_rules`: a host callback that prints or
writes, or a call whose body holds one).  Higher-order primitives may
register a rule in :data:`dce_rules` that also prunes unused outputs inside
their bodies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from plait_core import jaxpr as _jaxpr
from plait_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, sub_jaxprs
from plait_core.primitive import Primitive, RuleRegistry

#: ``rule(eqn, used_outputs) -> (used_inputs, new_eqn or None)``.
DceRule = Callable[[JaxprEqn, list[bool]], tuple[list[bool], "JaxprEqn | None"]]
dce_rules: RuleRegistry[DceRule] = RuleRegistry("dead-code elimination")

#: ``rule(eqn) -> bool``: whether an equation of this primitive has effects
#: (then it stays even when none of its outputs is used).
effect_rules: dict[Primitive, Callable[[JaxprEqn], bool]] = {}


def has_effects(eqn: JaxprEqn) -> bool:
    """Whether ``eqn``, or an equation of a jaxpr in its params, has effects."""
    rule = effect_rules.get(eqn.primitive)
    if rule is not None and rule(eqn):
        return True
    return any(has_effects(e) for j in sub_jaxprs(eqn) for e in j.eqns)


_jaxpr.effects_query[:] = [has_effects]  # JaxprEqn.effects asks this module


def dce_jaxpr(
    jaxpr: Jaxpr, used_outputs: Sequence[bool] | None = None, prune_inputs: bool = False
) -> tuple[Jaxpr, list[bool]]:
    """Remove equations whose results are not needed for the used outputs.

    Returns the new jaxpr and, per input, whether it is used.  Unused outputs
    are dropped from the jaxpr when ``used_outputs`` is given; unused inputs
    are dropped when ``prune_inputs`` is true.  Unused constvars always go."""
    if used_outputs is None:
        used_outputs = [True] * len(jaxpr.outvars)
    outvars = [v for v, u in zip(jaxpr.outvars, used_outputs) if u]
    live: set[Var] = {v for v in outvars if type(v) is Var}
    new_eqns: list[JaxprEqn] = []
    for eqn in reversed(jaxpr.eqns):
        used_outs = [v in live for v in eqn.outvars]
        if not any(used_outs):
            if not has_effects(eqn):
                continue
            used_outs = [True] * len(eqn.outvars)  # kept whole, for its effects
        rule = dce_rules.get(eqn.primitive)
        if rule is not None:
            used_ins, new_eqn = rule(eqn, used_outs)
            if new_eqn is None:
                continue
            eqn = new_eqn
            for a, u in zip(eqn.invars, used_ins):
                if u and type(a) is Var:
                    live.add(a)
        else:
            for a in eqn.invars:
                if type(a) is Var:
                    live.add(a)
        new_eqns.append(eqn)
    new_eqns.reverse()
    used_inputs = [v in live for v in jaxpr.invars]
    invars = [v for v, u in zip(jaxpr.invars, used_inputs) if u] if prune_inputs else list(jaxpr.invars)
    constvars = [v for v in jaxpr.constvars if v in live]
    return Jaxpr(constvars, invars, outvars, new_eqns), used_inputs


def dce_closed_jaxpr(
    closed: ClosedJaxpr, used_outputs: Sequence[bool] | None = None, prune_inputs: bool = False
) -> tuple[ClosedJaxpr, list[bool]]:
    """:func:`dce_jaxpr` for a closed jaxpr (unused constants are dropped too)."""
    jaxpr, used_inputs = dce_jaxpr(closed.jaxpr, used_outputs, prune_inputs)
    keep = set(jaxpr.constvars)
    consts = [c for v, c in zip(closed.jaxpr.constvars, closed.consts) if v in keep]
    return ClosedJaxpr(jaxpr, consts), used_inputs
